//! What the core is told: the observations a real resource manager receives.

use crate::model::{JobId, JobRequest, NodeId, TaskRef};

/// An event observed by the body and reported to the core.
#[derive(Debug, Clone, PartialEq)]
pub enum Observation {
    /// A job was submitted; its id must be the next dense id.
    JobSubmitted(JobRequest),
    /// A running task completed its work.
    TaskFinished(TaskRef),
    /// A suspended or shrunk task gave back `mem_mb` of memory (reclaimed so far).
    MemoryReclaimed {
        /// The task.
        task: TaskRef,
        /// Memory freed since the last report, in MB.
        mem_mb: u64,
    },
    /// A shrunk task started swapping and its node froze it (BIG-C §4.2).
    Swapping(TaskRef),
    /// A resumed or restored task has its memory back and runs again.
    Resumed(TaskRef),
    /// A checkpointed task's dump is written: its resources are free.
    Checkpointed(TaskRef),
    /// A task that held resources is gone without finishing (its node was
    /// lost, or its process vanished): it is requeued, like a killed task.
    TaskLost(TaskRef),
    /// The job was cancelled, or one of its tasks failed: it ends as failed
    /// and every task it holds is stopped (the core answers nothing; the body
    /// stops the tasks itself).
    JobAborted(JobId),
    /// The node's agent is gone: nothing is placed there until it is back
    /// (the body reports the tasks it held with [`Observation::TaskLost`]).
    NodeLost(NodeId),
    /// The node's agent is back.
    NodeBack(NodeId),
    /// Its job's next pending task was found running on `node`, started
    /// outside the core (a body taking over work another scheduler
    /// started): it is booked there with its request, as a launch would,
    /// even beyond the node's capacity.
    Started {
        /// The task.
        task: TaskRef,
        /// Where it runs.
        node: NodeId,
    },
}
