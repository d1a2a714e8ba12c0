//! What a body records during a run.

use pliant_core::action::Action;
use pliant_core::model::JobClass;
use pliant_core::policy::cost::Choice;
use pliant_core::Micros;
use serde::Serialize;
use std::collections::BTreeMap;

/// One job's life.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobRecord {
    /// The job's name.
    pub name: String,
    /// Short or long.
    pub class: JobClass,
    /// Priority 0–11.
    pub priority: u8,
    /// Submission time.
    pub submit: Micros,
    /// When its first task started, if any did.
    pub first_start: Option<Micros>,
    /// When its last task finished (absent for failed or unfinished jobs).
    pub end: Option<Micros>,
    /// True if the job failed (a task exceeded its attempts).
    pub failed: bool,
    /// Number of its tasks.
    pub tasks: u32,
    /// Times its tasks were preempted (any mechanism, resubmissions included).
    pub preemptions: u32,
    /// Its application attempts that started: more than one when a kill
    /// failed an attempt and YARN relaunched it (`kill_model=spark`), or its
    /// owner resubmitted it after it failed.
    pub attempts: u32,
    /// Times its tasks (containers or executors) were killed, over its attempts.
    pub kills: u32,
    /// Launches of its tasks that had run before in the same attempt: the
    /// killed containers or executors started again.
    pub relaunches: u32,
    /// Task-time its tasks spent preempted without progress (frozen,
    /// suspended, dumping or restoring), summed over tasks, resubmissions included.
    pub stalled: Micros,
    /// For a failed job that its owner resubmitted (from scratch, the moment
    /// it failed): when the last resubmission finished.
    pub retry_end: Option<Micros>,
    /// Its completion time when run alone on the same cluster, if measured.
    pub alone: Option<Micros>,
}

impl JobRecord {
    /// Job completion time: submission to last task finished.
    pub fn jct(&self) -> Option<Micros> {
        self.end.map(|e| e - self.submit)
    }

    /// The owner's view of JCT: first submission to the end of the job, or,
    /// for a failed job, of its resubmission.
    pub fn jct_retry(&self) -> Option<Micros> {
        if self.failed { self.retry_end } else { self.end }.map(|e| e - self.submit)
    }

    /// Slowdown (SSR §VI): its JCT over its JCT alone on the same cluster.
    pub fn slowdown(&self) -> Option<f64> {
        match (self.jct(), self.alone) {
            (Some(jct), Some(alone)) if alone > 0 => Some(jct as f64 / alone as f64),
            _ => None,
        }
    }

    /// Queueing delay: submission to first task started.
    pub fn queue_delay(&self) -> Option<Micros> {
        self.first_start.map(|s| s - self.submit)
    }
}

/// One point of the utilisation timeline.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Sample {
    /// When.
    pub time: Micros,
    /// CPU in use by progressing tasks over total CPU.
    pub cpu: f64,
    /// Memory allocated over total memory.
    pub mem: f64,
}

/// What the run cost the body itself.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct SimCost {
    /// Events processed.
    pub events: u64,
    /// Wall-clock seconds (the only field that differs between identical runs).
    pub wall_seconds: f64,
}

/// What checkpoint-based preemption did in a run (checkpoint paper §4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct CheckpointCounts {
    /// Dumps of a task's whole memory (its first).
    pub full_dumps: u64,
    /// Dumps of only what a task dirtied since its last one.
    pub incremental_dumps: u64,
    /// Restores on the node that wrote the image.
    pub local_restores: u64,
    /// Restores on another node.
    pub remote_restores: u64,
    /// Victims an adaptive policy killed because a checkpoint would not pay (Alg. 1).
    pub adaptive_kills: u64,
}

/// Everything recorded for one policy on one workload.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct RunRecord {
    /// The policy's name.
    pub policy: String,
    /// Per-job records, in submission order.
    pub jobs: Vec<JobRecord>,
    /// Time-weighted mean CPU utilisation (progressing tasks) from 0 to the last event.
    pub cpu_mean: f64,
    /// Time-weighted mean memory allocation.
    pub mem_mean: f64,
    /// Sampled utilisation.
    pub timeline: Vec<Sample>,
    /// Core-seconds lost to kills plus core-seconds held while reclaiming, dumping or restoring.
    pub waste_core_seconds: f64,
    /// The part of the waste that is work lost to kills.
    pub lost_work_core_seconds: f64,
    /// Core-seconds of slots reserved and idle (SSR's utilisation loss).
    pub reserved_core_seconds: f64,
    /// Core-seconds running Spark executors held with no stage task in
    /// flight, waiting at their stage's barrier for its slowest executor
    /// (only when asked for: `SimOptions::barrier_idle`).
    pub barrier_idle_core_seconds: Option<f64>,
    /// Energy in joules (per-node linear power model).
    pub energy_joules: f64,
    /// Preemptions by mechanism name.
    pub preemptions: BTreeMap<String, u64>,
    /// Dumps, restores and adaptive kills.
    pub checkpoints: CheckpointCounts,
    /// Cores in the cluster (capacity = cores × makespan).
    pub cluster_cores: f64,
    /// Time of the last event.
    pub makespan: Micros,
    /// The body's own cost.
    pub cost: SimCost,
    /// Every action the core decided, with its time (only when asked for:
    /// `SimOptions::record_decisions`; the twin compares them with a live run's).
    #[serde(skip)]
    pub decisions: Vec<(Micros, Action)>,
    /// Every preemption the core chose per victim, with the estimated costs
    /// of the alternatives (`pliant`; `preemptions.csv`).
    #[serde(skip)]
    pub choices: Vec<Choice>,
}
