//! The scheduler's bookkeeping: nodes, queues and jobs as the resource manager
//! sees them.

use crate::model::{JobRequest, NodeId, TaskState};
use crate::{Micros, Resources};
use std::collections::{BTreeSet, VecDeque};

/// Orders jobs in a queue: (inverted priority, submission, id); smaller first.
pub(crate) type ServiceKey = (u8, Micros, u32);

/// A node's capacity and what is allocated on it.
#[derive(Debug, Clone)]
pub(crate) struct NodeState {
    pub capacity: Resources,
    pub allocated: Resources,
}

impl NodeState {
    pub fn free(&self) -> Resources {
        self.capacity - self.allocated
    }
}

/// A queue's live usage and its jobs in service order.
#[derive(Debug, Clone)]
pub(crate) struct QueueState {
    pub guaranteed: Resources,
    pub used: Resources,
    /// Jobs that have neither finished nor failed.
    pub active: BTreeSet<ServiceKey>,
    /// Active jobs with runnable pending tasks, per class (indexed by
    /// `JobClass as usize`): the only jobs an allocation pass visits, and a
    /// class held back by head-of-line blocking is skipped as a whole.
    pub waiting: [BTreeSet<ServiceKey>; 2],
}

/// A task as the resource manager tracks it.
#[derive(Debug, Clone)]
pub(crate) struct TaskRuntime {
    pub state: TaskState,
    pub phase: u32,
    pub request: Resources,
    pub estimate: Option<Micros>,
    pub node: NodeId,
    pub allocated: Resources,
    pub attempts: u32,
    pub started: Micros,
}

/// A phase's barrier bookkeeping.
#[derive(Debug, Clone)]
pub(crate) struct PhaseRuntime {
    pub tasks: std::ops::Range<u32>,
    pub unfinished: u32,
    pub upstream_left: u32,
    pub downstream: Vec<u32>,
}

/// How a job stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JobStatus {
    Active,
    Finished,
    Failed,
}

/// A job as the resource manager tracks it.
#[derive(Debug, Clone)]
pub(crate) struct JobState {
    pub req: JobRequest,
    pub queue: usize,
    pub key: ServiceKey,
    pub tasks: Vec<TaskRuntime>,
    pub phases: Vec<PhaseRuntime>,
    /// Runnable pending tasks (their phase's barrier is passed), in order.
    pub pending: VecDeque<u32>,
    pub running: u32,
    pub unfinished: u32,
    pub status: JobStatus,
}

impl JobState {
    pub fn new(req: JobRequest, queue: usize, key: ServiceKey) -> Self {
        let mut tasks = Vec::with_capacity(req.task_count());
        let mut phases: Vec<PhaseRuntime> = Vec::with_capacity(req.phases.len());
        for (i, p) in req.phases.iter().enumerate() {
            let first = tasks.len() as u32;
            phases.push(PhaseRuntime {
                tasks: first..first + p.tasks.len() as u32,
                unfinished: p.tasks.len() as u32,
                upstream_left: p.deps.len() as u32,
                downstream: Vec::new(),
            });
            for t in &p.tasks {
                tasks.push(TaskRuntime {
                    state: TaskState::Pending,
                    phase: i as u32,
                    request: t.resources,
                    estimate: t.estimate,
                    node: NodeId(0),
                    allocated: Resources::ZERO,
                    attempts: 0,
                    started: 0,
                });
            }
        }
        for (i, p) in req.phases.iter().enumerate() {
            for &d in &p.deps {
                phases[d as usize].downstream.push(i as u32);
            }
        }
        let unfinished = tasks.len() as u32;
        let mut job = JobState {
            req,
            queue,
            key,
            tasks,
            phases,
            pending: VecDeque::new(),
            running: 0,
            unfinished,
            status: JobStatus::Active,
        };
        for p in 0..job.phases.len() {
            if job.phases[p].upstream_left == 0 {
                job.release_phase(p as u32);
            }
        }
        job
    }

    /// Makes a phase's tasks runnable once its barrier is passed.
    pub fn release_phase(&mut self, phase: u32) {
        self.pending.extend(self.phases[phase as usize].tasks.clone());
        // An empty phase finishes at once and releases its downstream phases.
        if self.phases[phase as usize].unfinished == 0 {
            self.finish_phase(phase);
        }
    }

    /// Records a finished phase and releases downstream phases whose barrier it was.
    pub fn finish_phase(&mut self, phase: u32) {
        let downstream = self.phases[phase as usize].downstream.clone();
        for d in downstream {
            let p = &mut self.phases[d as usize];
            p.upstream_left -= 1;
            if p.upstream_left == 0 {
                self.release_phase(d);
            }
        }
    }

    /// Estimated remaining run time: per unfinished phase, the longest task's
    /// estimate minus the time it has run so far; phases add up (barriers).
    pub fn estimated_remaining(&self, now: Micros) -> Micros {
        let mut total = 0;
        let mut phase_max = vec![0u64; self.phases.len()];
        for t in &self.tasks {
            let estimate = t.estimate.unwrap_or(0);
            let left = match t.state {
                TaskState::Finished | TaskState::Failed => continue,
                TaskState::Pending => estimate,
                _ => estimate.saturating_sub(now.saturating_sub(t.started)),
            };
            let m = &mut phase_max[t.phase as usize];
            *m = (*m).max(left);
        }
        for m in phase_max {
            total += m;
        }
        total
    }
}
