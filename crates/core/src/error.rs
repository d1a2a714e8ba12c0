//! What the core refuses of a body's observations.

use crate::model::TaskRef;

/// A refused observation: the body and the core disagree about the world.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CoreError {
    /// Job ids must be dense and in submission order.
    #[error("job submitted with id {got}, expected {expected}")]
    JobIdOutOfOrder {
        /// The id the body sent.
        got: u32,
        /// The next dense id.
        expected: u32,
    },
    /// The task is unknown or not in a state where this can happen.
    #[error("{task}: {what}")]
    BadTask {
        /// The task.
        task: TaskRef,
        /// What was wrong.
        what: String,
    },
    /// The job is unknown or has already ended.
    #[error("job {job} cannot be aborted: it is {status}")]
    JobOver {
        /// The job.
        job: u32,
        /// Where it stands.
        status: String,
    },
    /// The node does not exist.
    #[error("no node {0}")]
    UnknownNode(u32),
    /// The cluster has no nodes.
    #[error("the cluster has no nodes")]
    NoNodes,
}
