//! A task as the core books it, for a live body that shows or acts on it:
//! the body keeps only what the core does not know.

use super::Scheduler;
use crate::model::{NodeId, TaskRef, TaskState};
use crate::Resources;

/// One task in the core's books ([`Scheduler::task`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskBooks {
    /// Where it is in its life.
    pub state: TaskState,
    /// The node it holds resources on, or held them on last; `None` before
    /// it first starts, and for a task of a finished job.
    pub node: Option<NodeId>,
    /// What is booked for it on that node now: its allocation, less what a
    /// preemption freed (zero once it holds nothing).
    pub allocated: Resources,
    /// Memory (MB) it has still to give back, suspended or shrunk.
    pub reclaiming_mb: u64,
}

impl Scheduler {
    /// Task `task` as the core books it; `None` for a task it was never
    /// given. A finished job's books are dropped (`Scheduler::observe`): its
    /// tasks are `Finished`, on no node.
    pub fn task(&self, task: TaskRef) -> Option<TaskBooks> {
        let (job, i) = (task.job.0 as usize, task.task as usize);
        if self.view.jobs.removed(job) {
            let books =
                TaskBooks { state: TaskState::Finished, node: None, allocated: Resources::ZERO, reclaiming_mb: 0 };
            return Some(books);
        }
        let tasks = &self.view.jobs.get(job)?.tasks;
        if i >= tasks.len() {
            return None;
        }
        Some(match tasks.get(i) {
            Some(t) => TaskBooks {
                state: t.state,
                // Every start (a launch, or a restore of a task launched before) counts an attempt.
                node: (t.attempts > 0).then_some(t.node),
                allocated: t.allocated,
                reclaiming_mb: t.reclaiming_mb,
            },
            None => TaskBooks { state: TaskState::Pending, node: None, allocated: Resources::ZERO, reclaiming_mb: 0 },
        })
    }
}
