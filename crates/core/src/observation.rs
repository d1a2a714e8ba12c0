//! What the core is told: the observations a real resource manager receives.

use crate::model::{JobRequest, TaskRef};

/// An event observed by the body and reported to the core.
#[derive(Debug, Clone, PartialEq)]
pub enum Observation {
    /// A job was submitted; its id must be the next dense id.
    JobSubmitted(JobRequest),
    /// A running task completed its work.
    TaskFinished(TaskRef),
}
