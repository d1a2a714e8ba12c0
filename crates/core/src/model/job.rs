//! A job as submitted: what its owner asks for and estimates.

use crate::{Micros, Resources};
use serde::{Deserialize, Serialize};

use super::{Elasticity, JobId};

/// The two classes the papers schedule differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JobClass {
    /// Latency-critical short jobs (queries, interactive analytics).
    Short,
    /// Best-effort long jobs (batch, iterative analytics).
    Long,
}

impl JobClass {
    /// The lowercase name used in files, queues and reports.
    pub fn name(self) -> &'static str {
        match self {
            JobClass::Short => "short",
            JobClass::Long => "long",
        }
    }
}

/// One task's request: resources and, optionally, the owner's estimate of its
/// run time at full allocation (which may be wrong).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskRequest {
    /// The container size asked for.
    pub resources: Resources,
    /// The owner's estimate of the task's run time at full allocation.
    pub estimate: Option<Micros>,
}

/// A DAG stage: a group of tasks that starts when every task of its upstream
/// phases has finished (a barrier).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseRequest {
    /// Indices of upstream phases; each is smaller than this phase's index.
    pub deps: Vec<u32>,
    /// Coupled (Spark-like) tasks synchronise often: one suspended task stalls the rest.
    pub coupled: bool,
    /// Its tasks read their upstream phases' output on the nodes where it was
    /// written (a Spark shuffle or narrow dependency): the first as many of
    /// its tasks as its upstream phases had prefer those nodes (delay
    /// scheduling) and run slower elsewhere; the rest have no preference.
    #[serde(default)]
    pub local: bool,
    /// The phase's tasks.
    pub tasks: Vec<TaskRequest>,
}

/// A job as the resource manager receives it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobRequest {
    /// Dense id given by the body.
    pub id: JobId,
    /// Submission time.
    pub submit: Micros,
    /// Short or long; picks the queue in two-queue policies.
    pub class: JobClass,
    /// Priority 0–11 as in the Google trace (higher is more important).
    pub priority: u8,
    /// The DAG's phases in topological order.
    pub phases: Vec<PhaseRequest>,
    /// Its tasks' memory elasticity, if they may run under-sized (YARN-ME §3.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elastic: Option<Elasticity>,
}

impl JobRequest {
    /// Number of tasks over all phases.
    pub fn task_count(&self) -> usize {
        self.phases.iter().map(|p| p.tasks.len()).sum()
    }
}
