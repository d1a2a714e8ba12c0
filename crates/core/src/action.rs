//! What the core decides, as data: the body carries these out.

use crate::model::{JobId, NodeId, TaskRef};
use crate::Resources;
use serde::Serialize;

/// How resources are taken back from a running task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mechanism {
    /// Kill the task; its progress is lost and it is requeued.
    Kill,
}

impl Mechanism {
    /// The name used in reports and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Mechanism::Kill => "kill",
        }
    }
}

/// A decision of the core.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Start `task` on `node` with `resources`.
    Launch {
        /// The task to start.
        task: TaskRef,
        /// Where to start it.
        node: NodeId,
        /// The allocation it gets.
        resources: Resources,
    },
    /// Preempt a running task by `mechanism`.
    Preempt {
        /// The victim.
        task: TaskRef,
        /// How its resources are taken back.
        mechanism: Mechanism,
    },
    /// The job has failed: stop all its tasks; it will not be scheduled again.
    FailJob {
        /// The failed job.
        job: JobId,
    },
}
