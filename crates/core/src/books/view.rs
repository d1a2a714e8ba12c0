//! What a plugin may read and book: the scheduler's shared bookkeeping —
//! nodes and their free-space indexes, queues, jobs and their tasks, the
//! preempted set and the memory still being reclaimed, the timers asked for.
//! Plugins (`policy/`) get a [`View`], never the `Scheduler`: they change the
//! books only through these methods, which keep the indexes and the queues'
//! usage in step. Its fields are the scheduler's to set up and read (a
//! sibling module, hence crate-visible), not the plugins'.

use super::state::NodeState;
use super::state::{JobRuntime, JobStatus, QueueState, ServiceKey};
use super::tasks::TaskRuntime;
use crate::error::CoreError;
use crate::model::{NodeId, TaskRef, TaskState};
use crate::node_index::NodeIndex;
use crate::{LiveTable, Micros, Resources};
use std::collections::BTreeSet;

/// The scheduler's shared bookkeeping, as plugins see it.
#[derive(Debug, Clone)]
pub struct View {
    pub(crate) nodes: Vec<NodeState>,
    pub(crate) free_index: NodeIndex,
    /// Per node, the resources preempted tasks there gave up and will take
    /// back on resumption: long work may not be placed into them.
    pub(crate) promised: Vec<Resources>,
    /// Free resources less `promised`, per node: where long tasks may go.
    /// Kept only while some node has something promised (`promising`);
    /// otherwise it would equal `free_index`, which stands in for it.
    pub(crate) long_index: NodeIndex,
    /// How many nodes have something promised.
    pub(crate) promising: usize,
    /// Nodes before this index are only for short jobs.
    pub(crate) first_shared_node: usize,
    pub(crate) total: Resources,
    pub(crate) allocated: Resources,
    pub(crate) queues: Vec<QueueState>,
    /// The jobs by dense id; a finished one is dropped (`Scheduler::retire`).
    pub(crate) jobs: LiveTable<JobRuntime>,
    /// Something changed since the last allocation pass.
    pub(crate) dirty: bool,
    /// Memory that suspended and shrunk tasks have still to give back.
    pub(crate) reclaiming_mb: u64,
    /// Suspended and shrunk tasks awaiting resumption, in service order.
    pub(crate) preempted: BTreeSet<(ServiceKey, u32)>,
    /// Instants the core asked the body to wake it at.
    pub(crate) wakes: BTreeSet<Micros>,
    /// Jobs whose waiting, memory held, work left or next pending task may
    /// have changed since a plugin last took them, if one keeps an order of
    /// jobs up to date with them (the fair scheduler's node pass).
    pub(crate) touched: Option<Touched>,
    /// Nodes whose free resources may have changed since a plugin last
    /// took them, if one keeps track (as `touched`, for nodes).
    pub(crate) refreshed: Option<Touched>,
}

/// A task that holds resources, as [`View::holding`] shows it to a planner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Holding {
    /// The task.
    pub task: TaskRef,
    /// Where it stands (running, shrunk, suspended, dumping...).
    pub state: TaskState,
    /// Its node.
    pub node: NodeId,
    /// What it holds there.
    pub allocated: Resources,
    /// When its current attempt started.
    pub started: Micros,
    /// Run time of its current attempt up to now, suspensions excluded.
    pub ran: Micros,
}

impl Holding {
    /// Task `task` as it stands at `now`, `t` its record.
    pub fn of(task: TaskRef, t: &TaskRuntime, now: Micros) -> Holding {
        Holding { task, state: t.state, node: t.node, allocated: t.allocated, started: t.started, ran: t.ran(now) }
    }
}

/// Jobs (or nodes) touched since they were last taken, each once.
#[derive(Debug, Clone, Default)]
pub(crate) struct Touched {
    jobs: Vec<u32>,
    marked: Vec<bool>,
}

impl Touched {
    fn mark(&mut self, i: usize) {
        if self.marked.len() <= i {
            self.marked.resize(i + 1, false);
        }
        if !std::mem::replace(&mut self.marked[i], true) {
            self.jobs.push(i as u32);
        }
    }

    fn take(&mut self, into: &mut Vec<u32>) {
        for &i in &self.jobs {
            self.marked[i as usize] = false;
        }
        into.append(&mut self.jobs);
    }
}

impl View {
    /// Every live job, by dense id.
    pub fn jobs(&self) -> &LiveTable<JobRuntime> {
        &self.jobs
    }

    /// Job `job`.
    pub fn job(&self, job: usize) -> &JobRuntime {
        &self.jobs[job]
    }

    /// How job `job` stands; a job no longer kept finished.
    pub fn job_status(&self, job: usize) -> JobStatus {
        self.jobs.get(job).map_or(JobStatus::Finished, |j| j.status)
    }

    /// Job `job`, to change its tasks' plugin fields.
    pub fn job_mut(&mut self, job: usize) -> &mut JobRuntime {
        &mut self.jobs[job]
    }

    /// A task.
    pub fn task(&self, task: TaskRef) -> &TaskRuntime {
        &self.jobs[task.job.0 as usize].tasks[task.task as usize]
    }

    /// A task, to change it.
    pub fn task_mut(&mut self, task: TaskRef) -> &mut TaskRuntime {
        &mut self.jobs[task.job.0 as usize].tasks[task.task as usize]
    }

    /// A task the body named, checked to exist.
    pub fn checked_task(&mut self, task: TaskRef) -> Result<&mut TaskRuntime, CoreError> {
        let job = self.checked_job(task)?;
        Ok(&mut job.tasks[task.task as usize])
    }

    /// The job of a task the body named, the task checked to exist.
    pub fn checked_job(&mut self, task: TaskRef) -> Result<&mut JobRuntime, CoreError> {
        if self.jobs.removed(task.job.0 as usize) {
            return Err(CoreError::BadTask { task, what: "of a finished job".into() });
        }
        let job = self
            .jobs
            .get_mut(task.job.0 as usize)
            .ok_or_else(|| CoreError::BadTask { task, what: "unknown job".into() })?;
        if task.task as usize >= job.tasks.len() {
            return Err(CoreError::BadTask { task, what: "unknown task".into() });
        }
        Ok(job)
    }

    /// The queue a task's job is in.
    pub fn queue_of(&self, task: TaskRef) -> usize {
        self.jobs[task.job.0 as usize].queue
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// What node `i` has free (nothing if it is down).
    pub fn node_free(&self, i: usize) -> Resources {
        self.nodes[i].free()
    }

    /// True when node `i` can carry out `mechanism` (see
    /// `Scheduler::restrict_mechanisms`).
    #[inline]
    pub fn node_can(&self, i: usize, mechanism: crate::action::MechanismKind) -> bool {
        !self.nodes[i].lacks.contains(&mechanism)
    }

    /// True when the core knows the rates `mechanism` runs at on node `i`
    /// (see `Scheduler::unpriced_mechanisms`).
    #[inline]
    pub fn node_priced(&self, i: usize, mechanism: crate::action::MechanismKind) -> bool {
        !self.nodes[i].unpriced.contains(&mechanism)
    }

    /// Node `i`'s swap rates as its body measured them (see
    /// `Scheduler::set_swap_rates`).
    pub fn node_swap_rates(&self, i: usize) -> crate::SwapRates {
        self.nodes[i].swap
    }

    /// Node `i`'s capacity.
    pub fn node_capacity(&self, i: usize) -> Resources {
        self.nodes[i].capacity
    }

    /// The first node at `from` or later with `req` free.
    pub fn first_fit(&self, req: Resources, from: usize) -> Option<usize> {
        self.free_index.first_fit(req, from)
    }

    /// Total capacity of the nodes up.
    pub fn total(&self) -> Resources {
        self.total
    }

    /// What is allocated cluster-wide.
    pub fn allocated(&self) -> Resources {
        self.allocated
    }

    /// Each node's free room with the memory its preempted tasks are still
    /// giving back (a down node's tasks count on it too).
    pub fn room_with_reclaims(&self) -> Vec<Resources> {
        let mut room: Vec<Resources> = (0..self.nodes.len()).map(|i| self.node_free(i)).collect();
        for task in self.preempted() {
            let t = self.task(task);
            room[t.node.0 as usize].mem_mb += t.reclaiming_mb;
        }
        room
    }

    /// Memory suspended and shrunk tasks have still to give back, MB.
    pub fn reclaiming_mb(&self) -> u64 {
        self.reclaiming_mb
    }

    /// Number of queues (the policy's, in its order).
    pub fn queue_count(&self) -> usize {
        self.queues.len()
    }

    /// Queue `queue`'s guaranteed share of the nodes up.
    pub fn queue_guaranteed(&self, queue: usize) -> Resources {
        self.queues[queue].guaranteed
    }

    /// What queue `queue`'s tasks hold now.
    pub fn queue_used(&self, queue: usize) -> Resources {
        self.queues[queue].used
    }

    /// The tasks of queue `queue`'s jobs that hold resources, job by job in
    /// service order (kept only when the policy has a planner: for planners).
    pub fn holding(&self, queue: usize, now: Micros) -> impl Iterator<Item = Holding> + '_ {
        self.queues[queue].active.iter().map(|key| &self.jobs[key.2 as usize]).flat_map(move |job| {
            let id = job.req.id;
            job.tasks
                .changed()
                .filter(|(_, t)| t.state.holds_resources())
                .map(move |(i, t)| Holding::of(TaskRef { job: id, task: i }, t, now))
        })
    }

    /// The queues' usage and jobs.
    pub fn queues(&self) -> &[QueueState] {
        &self.queues
    }

    /// Brings a node's entries in both placement indexes up to date.
    pub fn refresh_node(&mut self, node: NodeId) {
        let i = node.0 as usize;
        if let Some(r) = &mut self.refreshed {
            r.mark(i);
        }
        let free = self.nodes[i].free();
        self.free_index.update(i, free);
        if self.promising > 0 {
            self.long_index.update(i, free.saturating_sub(&self.promised[i]));
        }
    }

    /// Frees `res` of `queue`'s on `node`.
    pub fn release(&mut self, node: NodeId, queue: usize, res: Resources) {
        self.nodes[node.0 as usize].allocated -= res;
        self.refresh_node(node);
        self.queues[queue].used -= res;
        self.allocated -= res;
    }

    /// Allocates `res` to `queue` on `node`.
    pub fn reserve(&mut self, node: NodeId, queue: usize, res: Resources) {
        self.nodes[node.0 as usize].allocated += res;
        self.refresh_node(node);
        self.queues[queue].used += res;
        self.allocated += res;
    }

    /// Books `res` on `node` for no queue (kept by the reservation step).
    pub fn book_node(&mut self, node: NodeId, res: Resources) {
        self.nodes[node.0 as usize].allocated += res;
        self.refresh_node(node);
    }

    /// Gives back what [`View::book_node`] booked.
    pub fn unbook_node(&mut self, node: NodeId, res: Resources) {
        self.nodes[node.0 as usize].allocated -= res;
        self.refresh_node(node);
    }

    /// Notes that job `job` may have changed (see `touched`).
    pub fn touch(&mut self, job: usize) {
        if let Some(t) = &mut self.touched {
            t.mark(job);
        }
    }

    /// Moves the jobs touched since the last call into `into`.
    pub fn take_touched(&mut self, into: &mut Vec<u32>) {
        if let Some(t) = &mut self.touched {
            t.take(into);
        }
    }

    /// Moves the nodes refreshed since the last call into `into`.
    pub fn take_refreshed(&mut self, into: &mut Vec<u32>) {
        if let Some(t) = &mut self.refreshed {
            t.take(into);
        }
    }

    /// Whether job `job` is in its queue's waiting set.
    pub fn is_waiting(&self, job: usize) -> bool {
        self.jobs.get(job).is_some_and(|j| j.waiting)
    }

    /// Keeps a job in its queue's waiting set exactly while it is active and
    /// has runnable pending tasks.
    pub fn sync_waiting(&mut self, job: usize) {
        self.touch(job);
        let j = &mut self.jobs[job];
        let wait = j.status == JobStatus::Active && !j.pending.is_empty();
        if wait == std::mem::replace(&mut j.waiting, wait) {
            return;
        }
        let waiting = &mut self.queues[j.queue].waiting[j.class_slot as usize];
        if wait {
            waiting.insert(j.key);
        } else {
            waiting.remove(&j.key);
        }
    }

    /// A task that held resources on its node goes back to the front of its
    /// job's pending tasks, holding nothing; returns what it held.
    pub fn requeue(&mut self, task: TaskRef) -> Resources {
        self.unsize(task, false);
        let job = &mut self.jobs[task.job.0 as usize];
        let t = &mut job.tasks[task.task as usize];
        t.state.transition(TaskState::Pending).expect("tasks holding resources can be requeued");
        let (node, res) = (t.node, std::mem::replace(&mut t.allocated, Resources::ZERO));
        job.running -= 1;
        job.pending.push_front(task.task, job.tasks[task.task as usize].request);
        let queue = job.queue;
        self.release(node, queue, res);
        self.sync_waiting(task.job.0 as usize);
        res
    }

    /// Whether `task` is among the preempted awaiting resumption.
    pub fn is_preempted(&self, task: TaskRef) -> bool {
        let job = &self.jobs[task.job.0 as usize];
        job.tasks.get(task.task as usize).is_some_and(|t| t.preempted)
    }

    /// Puts `task` among the preempted (it gave something up).
    pub fn add_preempted(&mut self, task: TaskRef) {
        let key = self.jobs[task.job.0 as usize].key;
        self.task_mut(task).preempted = true;
        self.preempted.insert((key, task.task));
    }

    /// Takes `task` off the preempted.
    pub fn remove_preempted(&mut self, task: TaskRef) {
        let job = &mut self.jobs[task.job.0 as usize];
        let i = task.task as usize;
        if job.tasks.get(i).is_some_and(|t| t.preempted) {
            job.tasks[i].preempted = false;
            self.preempted.remove(&(job.key, task.task));
        }
    }

    /// The preempted tasks in service order.
    pub fn preempted(&self) -> Vec<TaskRef> {
        let mut tasks = Vec::new();
        self.preempted_into(&mut tasks);
        tasks
    }

    /// The preempted tasks in service order, into `into` (cleared first).
    pub fn preempted_into(&self, into: &mut Vec<TaskRef>) {
        into.clear();
        into.extend(self.preempted.iter().map(|&(key, task)| TaskRef { job: crate::model::JobId(key.2), task }));
    }

    /// Adds to (or, negative, takes from) the memory being reclaimed.
    pub fn add_reclaiming(&mut self, mb: i64) {
        self.reclaiming_mb = self.reclaiming_mb.checked_add_signed(mb).expect("reclaimed no more than was due");
    }

    /// Keeps `promised` equal, per node, to what its preempted tasks gave up
    /// (request − allocation); long work is not placed into it.
    pub fn sync_promise(&mut self, task: TaskRef) {
        let preempted = self.is_preempted(task);
        let t = &mut self.jobs[task.job.0 as usize].tasks[task.task as usize];
        let new = if preempted { t.request.saturating_sub(&t.allocated) } else { Resources::ZERO };
        let old = std::mem::replace(&mut t.promise, new);
        if old == new {
            // Nothing promised changed: both indexes are up to date.
            return;
        }
        let node = t.node;
        let p = &mut self.promised[node.0 as usize];
        let was = p.is_zero();
        *p = p.saturating_sub(&old) + new;
        match (was, p.is_zero()) {
            (true, false) => {
                if self.promising == 0 {
                    // Nothing was promised: `long_index` is `free_index` again.
                    self.long_index.clone_from(&self.free_index);
                }
                self.promising += 1;
            }
            (false, true) => self.promising -= 1,
            _ => {}
        }
        self.refresh_node(node);
    }

    /// Asks the body to wake the core at `at`.
    pub fn wake_at(&mut self, at: Micros) {
        self.wakes.insert(at);
    }

    /// Something changed: the next `schedule` runs an allocation pass.
    pub fn set_dirty(&mut self) {
        self.dirty = true;
    }

    /// Sum of the requests of a queue's runnable pending tasks.
    pub fn pending_demand(&self, queue: usize) -> Resources {
        let mut sum = Resources::ZERO;
        for key in self.queues[queue].waiting.iter().flatten() {
            for (request, tasks) in self.jobs[key.2 as usize].pending.runs() {
                sum += request.times(tasks as u64);
            }
        }
        sum
    }

    /// Takes a task that stops holding resources off its job's memory held;
    /// `finished` also takes its estimate off the job's work left.
    pub fn unsize(&mut self, task: TaskRef, finished: bool) {
        self.touch(task.job.0 as usize);
        self.jobs[task.job.0 as usize].unsize(task.task as usize, finished);
    }

    /// Forgets what a task still owed and its place among the preempted (it
    /// finished, was lost or its job failed).
    pub fn forget_preemption(&mut self, task: TaskRef) {
        let t = &mut self.jobs[task.job.0 as usize].tasks[task.task as usize];
        if t.owes_nothing() {
            // Never preempted, or nothing left of it: nothing else to forget.
            return;
        }
        let owed = std::mem::take(&mut t.reclaiming_mb);
        self.reclaiming_mb -= owed;
        self.remove_preempted(task);
        self.sync_promise(task);
    }
}
