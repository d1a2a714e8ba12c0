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
mod locality;
mod pool;

pub use engine::{simulate, simulate_counting};

use pliant_core::model::StorageModel;
use pliant_core::{CoreError, Micros, SECOND};

/// The per-node linear power model of DESIGN.md: idle + (peak − idle) × CPU utilisation.
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
    /// Executors pull stage tasks as their cores free up (DESIGN.md "Spark stages").
    Pool,
    /// Its executors move in lockstep, each running for its own duration;
    /// the stage tasks are ignored (the model before pool phases).
    Lockstep,
}

/// The execution model's memory numbers (the simulator's ground truth).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ExecModel {
    /// How Spark pool phases run.
    pub spark_model: SparkModel,
    /// A failed job is resubmitted, from scratch, by its owner the moment it
    /// fails (`JobRecord::retry_end`, the `jct_retry` figure).
    pub resubmit_failed: bool,
    /// Seconds to swap out 1 GB of a container deprived of CPU (BIG-C §5.4: about 3 s).
    pub reclaim_s_per_gb: f64,
    /// Seconds to read 1 GB back on resume: about 1.7× the reclaim time
    /// (measured on this kind of machine: 2.5–2.9 s/GB restore vs 1.5–1.7 s/GB reclaim).
    pub restore_s_per_gb: f64,
    /// Resident working set as a fraction of the requested memory (DESIGN.md: 0.8).
    pub working_set_fraction: f64,
    /// How many times slower a task runs away from the upstream output it
    /// reads (SSR §VI-B: 5×; Fig. 6 measured up to two orders of magnitude).
    pub locality_slowdown: f64,
    /// Each node's disk bandwidth for spills, MB/s, which spilling elastic
    /// tasks share (YARN-ME §2.6; §6.1's nodes have one SATA HDD). The core
    /// books its own `elastic_disk_mb_s` of it from estimates.
    pub node_disk_mb_s: f64,
    /// True checkpoint dump, restore and network rates (set through the
    /// storage keys, which also set the core's estimates; echoed there).
    #[serde(skip)]
    pub storage: StorageModel,
}

impl Default for ExecModel {
    fn default() -> Self {
        ExecModel {
            spark_model: SparkModel::Pool,
            resubmit_failed: true,
            reclaim_s_per_gb: 3.0,
            restore_s_per_gb: 5.1,
            working_set_fraction: 0.8,
            locality_slowdown: 5.0,
            node_disk_mb_s: 150.0,
            storage: StorageModel::default(),
        }
    }
}

/// The execution-model keys settable with `--set`, with their meaning.
pub const EXEC_KEYS: &[(&str, &str)] = &[
    ("spark_model", "pool (default: executors pull stage tasks) or lockstep (a stopped executor stalls all)"),
    ("resubmit_failed", "1 (default): a failed job's owner resubmits it at once, from scratch (jct_retry); 0: never"),
    ("reclaim_s_per_gb", "seconds to swap out 1 GB of a CPU-deprived container (default 3, BIG-C §5.4)"),
    ("restore_s_per_gb", "seconds to read 1 GB back on resume (default 5.1 = 1.7x reclaim, measured)"),
    ("working_set_fraction", "resident working set over requested memory (default 0.8)"),
    ("locality_slowdown", "times slower a task of a `local` phase runs off its upstream nodes (default 5, SSR §VI-B)"),
    ("node_disk_mb_s", "each node's disk bandwidth, MB/s, shared by tasks spilling there (default 150, YARN-ME §2.6)"),
];

impl ExecModel {
    /// Sets `spark_model` or `resubmit_failed`; `None` for another key.
    fn set_choice(&mut self, key: &str, value: &str) -> Option<Result<(), String>> {
        let expected = match key {
            "spark_model" => "pool or lockstep",
            "resubmit_failed" => "1 or 0",
            _ => return None,
        };
        match (key, value) {
            ("spark_model", "pool") => self.spark_model = SparkModel::Pool,
            ("spark_model", "lockstep") => self.spark_model = SparkModel::Lockstep,
            ("resubmit_failed", "1" | "0") => self.resubmit_failed = value == "1",
            _ => return Some(Err(format!("bad value `{value}` for `{key}`: expected {expected}"))),
        }
        Some(Ok(()))
    }

    /// Sets one key of [`EXEC_KEYS`]; `None` for an unknown key.
    pub fn set(&mut self, key: &str, value: &str) -> Option<Result<(), String>> {
        if let Some(result) = self.set_choice(key, value) {
            return Some(result);
        }
        let slot = match key {
            "reclaim_s_per_gb" => &mut self.reclaim_s_per_gb,
            "restore_s_per_gb" => &mut self.restore_s_per_gb,
            "working_set_fraction" => &mut self.working_set_fraction,
            "locality_slowdown" => &mut self.locality_slowdown,
            "node_disk_mb_s" => &mut self.node_disk_mb_s,
            _ => return None,
        };
        Some(match value.parse::<f64>() {
            Ok(x)
                if x.is_finite()
                    && x >= 0.0
                    && (key != "working_set_fraction" || x <= 1.0)
                    && (key != "locality_slowdown" || x >= 1.0)
                    && (key != "node_disk_mb_s" || x > 0.0) =>
            {
                *slot = x;
                Ok(())
            }
            _ => Err(format!("bad value `{value}` for `{key}`: expected a non-negative number")),
        })
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
}

impl Default for SimOptions {
    fn default() -> Self {
        // BIG-C Fig. 8d samples utilisation every 2 s.
        SimOptions {
            sample_interval: 2 * SECOND,
            power: PowerModel { idle_w: 100.0, peak_w: 250.0 },
            exec: ExecModel::default(),
            slowdown: false,
        }
    }
}

/// Why a simulation could not complete.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SimError {
    /// The core refused an observation (a bug in the body or the core).
    #[error("core error: {0}")]
    Core(#[from] CoreError),
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
