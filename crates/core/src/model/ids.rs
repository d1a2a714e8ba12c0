//! Dense integer identifiers. Bodies hand out job ids in submission order
//! starting at 0, so the core can keep its state in vectors.

use serde::{Deserialize, Serialize};

/// A job, numbered densely from 0 in the order the body first saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct JobId(pub u32);

/// A node, numbered densely from 0 in the order the cluster lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct NodeId(pub u32);

/// A task: its job and its index among the job's tasks (phases in order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TaskRef {
    /// The job the task belongs to.
    pub job: JobId,
    /// Index of the task in its job, counting through the phases in order.
    pub task: u32,
}

impl std::fmt::Display for TaskRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "job {} task {}", self.job.0, self.task)
    }
}
