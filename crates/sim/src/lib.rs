//! pliant's simulator: replays a workload on a simulated cluster, with the
//! shared core making every decision and a ground-truth execution model
//! deciding how tasks really behave.
//!
//! Architecture invariant: the simulator never tells the core anything a real
//! resource manager would not know; the execution model is the only place that
//! reads a task's true duration.
#![warn(missing_docs)]

mod alone;
mod checkpoint;
mod copies;
mod disk_share;
mod engine;
mod event_queue;
mod execution;
mod held;
mod locality;
mod pool;
mod records;
mod spares;

pub use engine::{simulate, simulate_counting, simulate_stream, simulate_stream_counting};

use pliant_core::declare_params;
use pliant_core::model::StorageModel;
use pliant_core::parameter::{any, at_least_one, fraction, non_negative, positive, ParamValue};
use pliant_core::{CoreError, Micros, SECOND};

/// The per-node linear power model: idle + (peak − idle) × CPU utilisation.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct PowerModel {
    /// Watts drawn by an idle node.
    pub idle_w: f64,
    /// Watts drawn by a fully busy node.
    pub peak_w: f64,
}

/// How a Spark pool phase (one with stage tasks) runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SparkModel {
    /// Executors pull stage tasks as their cores free up.
    Pool,
    /// Its executors move in lockstep, each running for its own duration;
    /// the stage tasks are ignored (the model before pool phases).
    Lockstep,
}

impl ParamValue for SparkModel {
    const EXPECTED: &'static str = "pool or lockstep";
    fn parse_param(text: &str) -> Option<Self> {
        match text {
            "pool" => Some(SparkModel::Pool),
            "lockstep" => Some(SparkModel::Lockstep),
            _ => None,
        }
    }
    fn show(&self) -> String {
        match self {
            SparkModel::Pool => "`pool`",
            SparkModel::Lockstep => "`lockstep`",
        }
        .to_string()
    }
}

/// What killing a Spark executor (a task of a pool phase) loses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum KillModel {
    /// Spark on YARN's semantics: the executor's map output is lost with it,
    /// a stage reading it fails and earlier stages recompute it, and past
    /// Spark's limits the application attempt fails and YARN relaunches the
    /// job from zero (see `pool` and `engine`).
    Spark,
    /// Only its in-flight stage tasks are lost (the model before `spark`);
    /// the core's `max_attempts` fails a job.
    Tasks,
}

impl ParamValue for KillModel {
    const EXPECTED: &'static str = "spark or tasks";
    fn parse_param(text: &str) -> Option<Self> {
        match text {
            "spark" => Some(KillModel::Spark),
            "tasks" => Some(KillModel::Tasks),
            _ => None,
        }
    }
    fn show(&self) -> String {
        match self {
            KillModel::Spark => "`spark`",
            KillModel::Tasks => "`tasks`",
        }
        .to_string()
    }
}

declare_params! {
    /// The execution model's numbers (the simulator's ground truth).
    #[derive(Debug, Clone, PartialEq, serde::Serialize)]
    pub struct ExecModel {
        /// `pool`: executors pull stage tasks; `lockstep`: a stopped executor stalls all
        spark_model: SparkModel = SparkModel::Pool, any;
        /// what a killed Spark executor loses: `spark`, its map output too (a stage reading it fails, earlier stages recompute it; Spark's stage-attempt and executor-failure limits fail the application attempt, YARN relaunches it from zero, twice at most); `tasks`: only its in-flight tasks, and the core's max_attempts fails a job
        kill_model: KillModel = KillModel::Spark, any;
        /// 1: a failed job's owner resubmits it at once, from scratch (`jct_retry`); 0: never
        resubmit_failed: bool = true, any;
        /// seconds to swap out 1 GB of a CPU-deprived container (BIG-C §5.4)
        reclaim_s_per_gb: f64 = 3.0, non_negative;
        /// seconds to read 1 GB back on resume (1.7 × reclaim, measured on this kind of machine: 2.5–2.9 s/GB restore vs 1.5–1.7 s/GB reclaim)
        restore_s_per_gb: f64 = 5.1, non_negative;
        /// resident working set over requested memory
        working_set_fraction: f64 = 0.8, fraction;
        /// times slower a task of a `local` phase runs off its upstream nodes (SSR §VI-B; Fig. 6 measured up to two orders of magnitude)
        locality_slowdown: f64 = 5.0, at_least_one;
        /// each node's disk bandwidth, MB/s, shared by the tasks spilling there (YARN-ME §2.6; the core books its own `elastic_disk_mb_s` of it)
        node_disk_mb_s: f64 = 150.0, positive;
    }
    extra {
        /// True checkpoint dump, restore and network rates (set through the
        /// storage keys, which also set the core's estimates; echoed there).
        storage: StorageModel = StorageModel::default();
    }
}

/// Knobs of the simulator itself (not of the policy).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SimOptions {
    /// Period of the utilisation timeline.
    pub sample_interval: Micros,
    /// Power model for the energy figure.
    pub power: PowerModel,
    /// The memory side of the execution model.
    pub exec: ExecModel,
    /// Also run every job alone on the same cluster, for its slowdown.
    pub slowdown: bool,
    /// Keep every action the core decides, with its time, in `RunRecord::decisions`.
    pub record_decisions: bool,
    /// No node has a checkpoint tier whose rate the core knows, as on a live
    /// cluster (whose checkpoints are the tasks' own): the core is told so
    /// for every node (`Scheduler::unpriced_mechanisms`), and a planner
    /// that prices checkpoints offers none. The twin replays live runs so.
    pub without_checkpoint_tier: bool,
    /// Per node, in core order, the mechanisms it can carry out, as on a
    /// live cluster whose nodes lack some (no swap): the core is told so
    /// (`Scheduler::restrict_mechanisms`), and a planner that chooses the
    /// mechanism per victim uses only those. Empty: every node can do every
    /// one. The twin replays live runs so.
    pub node_mechanisms: Vec<Vec<pliant_core::MechanismKind>>,
    /// Tasks with swap rates of their own, in place of the execution
    /// model's for them (the twin's: what a live run showed of each task).
    pub task_swap_rates: Vec<TaskSwapRates>,
    /// Swap rates the core is given for a node from an instant on, in time
    /// order (`Scheduler::set_swap_rates`): the figures a live body measured
    /// and journaled, so that the twin's planner prices as the live one did.
    /// Empty: none, the policy's rates everywhere.
    pub node_swap_rates: Vec<NodeSwapRates>,
    /// Report the core-seconds Spark executors held idle at a stage barrier
    /// (`RunRecord::barrier_idle_core_seconds`; a measurement, not a decision).
    pub barrier_idle: bool,
}

/// One task's own swap rates (see `SimOptions::task_swap_rates`).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct TaskSwapRates {
    /// Its job (its index in the workload).
    pub job: u32,
    /// The task within its job.
    pub task: u32,
    /// Seconds to swap out 1 GB of it (`None`: the model's `reclaim_s_per_gb`).
    pub reclaim_s_per_gb: Option<f64>,
    /// Seconds to read 1 GB of it back (`None`: the model's `restore_s_per_gb`).
    pub restore_s_per_gb: Option<f64>,
}

/// A node's swap rates from an instant on (see `SimOptions::node_swap_rates`).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct NodeSwapRates {
    /// From when, µs of simulated time.
    pub at: Micros,
    /// The node, in core order.
    pub node: u32,
    /// Its rates.
    pub rates: pliant_core::SwapRates,
}

impl Default for SimOptions {
    fn default() -> Self {
        // BIG-C Fig. 8d samples utilisation every 2 s.
        SimOptions {
            sample_interval: 2 * SECOND,
            power: PowerModel { idle_w: 100.0, peak_w: 250.0 },
            exec: ExecModel::default(),
            slowdown: false,
            record_decisions: false,
            without_checkpoint_tier: false,
            node_mechanisms: Vec::new(),
            task_swap_rates: Vec::new(),
            node_swap_rates: Vec::new(),
            barrier_idle: false,
        }
    }
}

/// Why a simulation could not complete.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SimError {
    /// The core refused an observation (a bug in the body or the core).
    #[error("core error: {0}")]
    Core(#[from] CoreError),
    /// The run was asked for something it cannot do (the option says what).
    #[error("{0}")]
    Refused(&'static str),
    /// Jobs remain but nothing can move any more: nothing runs and nothing
    /// arrives (for example long jobs under `reserve` with every node
    /// reserved), or for an hour of simulated time no task progressed and the
    /// core decided nothing.
    #[error("{unfinished} jobs can never run under this policy (stuck at t = {at} µs)")]
    Stuck {
        /// Jobs left.
        unfinished: usize,
        /// When the run got stuck.
        at: Micros,
    },
}
