//! What the manager takes in: submissions, cancellations and agents'
//! reports. These are journaled; everything else follows from them.

use crate::elastic::ElasticRequest;
use pliant_core::model::{JobClass, JobId};
use pliant_core::{Micros, SwapRates};
use pliant_live::protocol::AgentReport;
use serde::{Deserialize, Serialize};

/// A job as submitted through the API, once validated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobSpec {
    /// A name for people.
    pub name: String,
    /// `short` or `long`.
    pub queue: JobClass,
    /// CPU per task, millicores.
    pub cpu_milli: u64,
    /// Memory per task, MB.
    pub mem_mb: u64,
    /// Priority 0–11 (higher is more important).
    pub priority: u8,
    /// Number of tasks, each running `command`.
    #[serde(rename = "task_count")]
    pub tasks: u32,
    /// The program and its arguments.
    pub command: Vec<String>,
    /// The job's DAG, if it has phases (their tasks add up to `tasks`);
    /// empty: one phase of `tasks` independent tasks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<PhaseSpec>,
    /// The owner's estimate of each task's run time with its full memory, µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimate_us: Option<Micros>,
    /// Its tasks may run with less memory (under the `elastic` preset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elastic: Option<ElasticRequest>,
}

/// One phase of a submitted DAG job: its tasks run the job's command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhaseSpec {
    /// Its number of tasks.
    pub tasks: u32,
    /// Indices of earlier phases it waits for (a barrier).
    #[serde(default)]
    pub after: Vec<u32>,
    /// Its tasks read their upstream phases' output where it was written
    /// (the native format's `local`).
    #[serde(default)]
    pub local: bool,
}

/// An input to the manager.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// A job was submitted; it gets the next job id.
    Submitted {
        /// The job.
        spec: JobSpec,
        /// The uid its tasks run as on nodes that run each job as a user of
        /// its own (absent from journals of before: given at replay).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        uid: Option<u32>,
    },
    /// A user cancelled a job.
    Cancelled {
        /// The job.
        job: JobId,
    },
    /// A node's agent stopped heartbeating: nothing goes there until it is back.
    NodeLost {
        /// The node.
        node: u32,
    },
    /// A lost node's agent registered again.
    NodeBack {
        /// The node.
        node: u32,
    },
    /// An agent reported on a task.
    Report {
        /// The node it came from.
        node: u32,
        /// What it said.
        report: AgentReport,
    },
    /// The swap rates the manager measured on a node, given to the core
    /// from this step on (`pliant_live::swap_meter`).
    SwapRates {
        /// The node.
        node: u32,
        /// Its rates (`None`: the policy's).
        rates: SwapRates,
    },
}
