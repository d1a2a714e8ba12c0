//! The tasks waiting to be placed, one by one, as a planner from outside the
//! core reads them: the per-task side of `View::pending_demand`, read from
//! the same books (each queue's waiting jobs and their pending tasks).

use super::state::JobRuntime;
use super::view::View;
use crate::model::{JobClass, JobId, TaskRef};
use crate::Resources;

/// A task waiting to be placed, as [`View::waiting`] shows it to a planner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Waiting {
    /// The task.
    pub task: TaskRef,
    /// Its job's queue (the policy's index).
    pub queue: usize,
    /// Its job's class.
    pub class: JobClass,
    /// Its job's priority (higher is served first).
    pub priority: u8,
    /// What it asks for.
    pub request: Resources,
}

impl View {
    /// The runnable tasks waiting to be placed in queue `queue`: short jobs'
    /// then long jobs', job by job in service order, each job's tasks in the
    /// order they are to be placed. Their requests sum to
    /// [`View::pending_demand`].
    pub fn waiting(&self, queue: usize) -> impl Iterator<Item = Waiting> + '_ {
        self.queues[queue].waiting.iter().flatten().flat_map(move |key| {
            let job = &self.jobs[key.2 as usize];
            job.pending.iter().map(move |task| Waiting::of(job, task))
        })
    }

    /// [`View::waiting`] of every queue, queue by queue in the policy's order.
    pub fn waiting_all(&self) -> impl Iterator<Item = Waiting> + '_ {
        (0..self.queue_count()).flat_map(move |queue| self.waiting(queue))
    }

    /// The class of job `job`; `None` once it has finished (or was never
    /// submitted).
    pub fn job_class(&self, job: JobId) -> Option<JobClass> {
        self.jobs.get(job.0 as usize).map(|j| j.req.class)
    }
}

impl Waiting {
    /// Task `task` of `job`, waiting.
    fn of(job: &JobRuntime, task: u32) -> Waiting {
        Waiting {
            task: TaskRef { job: job.req.id, task },
            queue: job.queue,
            class: job.req.class,
            priority: job.req.priority,
            request: job.tasks.request(task as usize),
        }
    }
}
