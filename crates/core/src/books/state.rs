//! The scheduler's bookkeeping: nodes, queues and jobs as the resource manager
//! sees them.

use super::pending::PendingTasks;
use super::tasks::Tasks;
use crate::action::MechanismKind;
use crate::model::{JobClass, JobId, JobRequest};
use crate::{Micros, Resources, SwapRates};
use smallvec::SmallVec;
use std::collections::BTreeSet;

/// Orders jobs in a queue: (inverted priority, submission, id); smaller first.
pub type ServiceKey = (u8, Micros, u32);

/// A node's capacity and what is allocated on it.
#[derive(Debug, Clone)]
pub struct NodeState {
    /// What the node has.
    pub capacity: Resources,
    /// What is allocated on it (tasks, reservations, promises).
    pub allocated: Resources,
    /// The body reported the node lost: nothing is placed or resumed there.
    pub down: bool,
    /// Mechanisms the node cannot carry out (e.g. graceful preemption without
    /// swap), as its body reported; a planner that chooses per victim
    /// skips them there.
    pub lacks: Vec<MechanismKind>,
    /// Mechanisms the node carries out at rates the core does not know, as
    /// its body reported; a planner that prices mechanisms skips them there.
    pub unpriced: Vec<MechanismKind>,
    /// Its swap rates as its body measured them (none in the simulator).
    pub swap: SwapRates,
}

impl NodeState {
    /// What is free on it: nothing while it is down.
    pub fn free(&self) -> Resources {
        if self.down {
            Resources::ZERO
        } else {
            // A node can hold more than its capacity: tasks started outside the core.
            self.capacity.saturating_sub(&self.allocated)
        }
    }
}

/// A queue's live usage and its jobs in service order.
#[derive(Debug, Clone)]
pub struct QueueState {
    /// Its guaranteed share, as resources.
    pub guaranteed: Resources,
    /// What its tasks hold.
    pub used: Resources,
    /// Jobs that have neither finished nor failed, kept only for a planner
    /// (the policy preempts): nothing else reads them.
    pub active: BTreeSet<ServiceKey>,
    /// Active jobs with runnable pending tasks, one set per class the queue
    /// holds, in its `QueueSpec::classes` order (a job's is
    /// `JobRuntime::class_slot`): the only jobs an allocation pass visits,
    /// and a class held back by head-of-line blocking is skipped as a whole.
    pub waiting: Vec<BTreeSet<ServiceKey>>,
}

/// A phase as the core keeps it: what it was submitted with and its
/// barrier bookkeeping, in one record (its tasks are `JobRuntime::tasks`).
#[derive(Debug, Clone)]
pub struct PhaseRuntime {
    /// Its tasks, by index in its job.
    pub tasks: std::ops::Range<u32>,
    /// Its tasks not finished yet.
    pub unfinished: u32,
    /// Upstream phases (counted once per naming) not finished yet: its barrier.
    pub upstream_left: u32,
    /// Coupled (Spark-like): see `PhaseRequest::coupled`.
    pub coupled: bool,
    /// Its tasks prefer where their upstream phases ran: see `PhaseRequest::local`.
    pub local: bool,
    /// Upstream phases.
    pub deps: Box<[u32]>,
    /// Phases downstream of it.
    pub downstream: Box<[u32]>,
    /// When its barrier cleared (its tasks became runnable).
    pub released: Micros,
}

/// A job as submitted, less its phases (they are `JobRuntime::phases` and
/// `JobRuntime::tasks`): see [`JobRequest`].
#[derive(Debug, Clone)]
pub struct Submitted {
    /// Its id.
    pub id: JobId,
    /// When it was submitted.
    pub submit: Micros,
    /// Its class (which queue it goes to).
    pub class: JobClass,
    /// Its priority (higher first).
    pub priority: u8,
}

/// How a job stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobStatus {
    /// Some task of it has not finished.
    Active,
    /// Every task of it finished.
    Finished,
    /// It failed (a task used up its attempts).
    Failed,
}

/// A job as the resource manager tracks it.
#[derive(Debug, Clone)]
pub struct JobRuntime {
    /// The job as submitted, less its phases.
    pub req: Submitted,
    /// Its queue, by index in the policy.
    pub queue: usize,
    /// Its place in its queue's service order.
    pub key: ServiceKey,
    /// Its tasks.
    pub tasks: Tasks,
    /// Its phases (one kept inline, as most jobs have one).
    pub phases: SmallVec<[PhaseRuntime; 1]>,
    /// Runnable pending tasks (their phase's barrier is passed), in order.
    pub pending: PendingTasks,
    /// Its tasks running (or preempted and holding resources).
    pub running: u32,
    /// Its tasks not finished yet.
    pub unfinished: u32,
    /// How it stands.
    pub status: JobStatus,
    /// It is in its queue's waiting set (`View::sync_waiting`).
    pub waiting: bool,
    /// Its class's place among its queue's classes: which of the queue's
    /// waiting sets it is kept in.
    pub class_slot: u8,
    /// Memory its running tasks hold, MB (the fair scheduler's order).
    pub held_mb: u64,
    /// Estimated run time of its unfinished tasks, summed (shortest remaining job first).
    pub work_left: Micros,
    /// Its tasks killed so far (Spark counts each as an executor failure).
    pub kills: u32,
}

impl JobRuntime {
    /// The books of job `req`, in `queue`, its class at `class_slot`, keyed `key`.
    pub fn new(req: &JobRequest, queue: usize, class_slot: u8, key: ServiceKey) -> Self {
        let JobRequest { id, submit, class, priority, phases: ref requested, .. } = *req;
        let mut phases: SmallVec<[PhaseRuntime; 1]> = SmallVec::with_capacity(requested.len());
        let mut first = 0;
        for (i, p) in requested.iter().enumerate() {
            let n = p.tasks.len() as u32;
            // The phases after it that name it upstream, once per naming (as `upstream_left` counts them).
            let after = requested[i + 1..].iter().zip(i as u32 + 1..);
            let later = after.flat_map(|(q, j)| q.deps.iter().filter(|&&d| d == i as u32).map(move |_| j));
            phases.push(PhaseRuntime {
                tasks: first..first + n,
                unfinished: n,
                upstream_left: p.deps.len() as u32,
                coupled: p.coupled,
                local: p.local,
                deps: p.deps.as_slice().into(),
                downstream: later.collect(),
                released: submit,
            });
            first += n;
        }
        let tasks = Tasks::new(requested);
        let work_left = requested.iter().flat_map(|p| &p.tasks).map(|t| t.estimate.unwrap_or(0)).sum();
        let req = Submitted { id, submit, class, priority };
        let unfinished = tasks.len() as u32;
        let mut job = JobRuntime {
            req,
            queue,
            key,
            tasks,
            phases,
            pending: PendingTasks::default(),
            running: 0,
            unfinished,
            status: JobStatus::Active,
            waiting: false,
            class_slot,
            held_mb: 0,
            work_left,
            kills: 0,
        };
        for p in 0..job.phases.len() {
            if job.phases[p].upstream_left == 0 {
                job.release_phase(p as u32);
            }
        }
        job
    }

    /// Takes task `i`, which stops holding resources, off the memory held;
    /// `finished` also takes its estimate off the work left.
    pub fn unsize(&mut self, i: usize, finished: bool) {
        let t = &self.tasks[i];
        self.held_mb = self.held_mb.saturating_sub(t.allocated.mem_mb);
        if finished {
            self.work_left = self.work_left.saturating_sub(t.estimate.unwrap_or(0));
        }
    }

    /// Makes a phase's tasks runnable once its barrier is passed.
    pub fn release_phase(&mut self, phase: u32) {
        for (first, count, request) in self.tasks.runs(self.phases[phase as usize].tasks.clone()) {
            self.pending.push_back(first, count, request);
        }
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
    /// estimate less the time it has run (suspensions excluded); phases add up
    /// (barriers). A coupled phase advances in lockstep, so its progress is
    /// that of its least advanced task.
    pub fn estimated_remaining(&self, now: Micros) -> Micros {
        let mut total = 0;
        for p in &self.phases {
            if p.unfinished == 0 {
                continue;
            }
            let tasks = &self.tasks;
            let live = || (p.tasks.start as usize..p.tasks.end as usize).filter(|&i| !tasks.state(i).is_terminal());
            let estimate = |i: usize| tasks.estimate(i).unwrap_or(0);
            let longest = live().map(estimate).max().unwrap_or(0);
            let left = if p.coupled {
                longest.saturating_sub(live().map(|i| tasks.ran(i, now)).min().unwrap_or(0))
            } else {
                live().map(|i| estimate(i).saturating_sub(tasks.ran(i, now))).max().unwrap_or(0)
            };
            total += left;
        }
        total
    }
}
