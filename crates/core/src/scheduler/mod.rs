//! The scheduler: it takes observations and answers with actions. The same
//! code decides in the simulator and in live mode.

mod allocate;
mod query;

use crate::action::{Action, MechanismKind};
use crate::books::{JobRuntime, JobStatus, NodeState, QueueState, View};
use crate::error::CoreError;
use crate::model::{JobId, JobRequest, NodeId, TaskRef, TaskState};
use crate::node_index::NodeIndex;
use crate::observation::Observation;
use crate::policy::steps::{Mechanism, PlacementPass, Planner, Preempted, Preference, Reservation, Steps};
use crate::policy::Policy;
use crate::{LiveTable, Micros, Resources, SwapRates};
use smallvec::SmallVec;
use std::collections::BTreeSet;

pub use query::TaskBooks;

/// The scheduling core for one cluster and one policy: the shared books
/// ([`View`]) and the policy's plugins, each with its own state.
#[derive(Debug, Clone)]
pub struct Scheduler {
    policy: Policy,
    view: View,
    /// The resource monitor ran since the last allocation pass and left tasks
    /// preempted: the next pass ends by the mechanism's resumption offers.
    offer_due: bool,
    /// Whom the resource monitor takes from, if the policy preempts.
    planner: Option<Box<dyn Planner>>,
    /// How victims give resources back (kill when the policy does not preempt).
    mechanism: Box<dyn Mechanism>,
    /// The reserve/permit step (nothing reserved unless the policy reserves).
    reservation: Box<dyn Reservation>,
    /// Where the queue-by-queue pass would rather put a task before its
    /// first fit, and whether its job waits for that.
    preference: Box<dyn Preference>,
    /// The policy's own placement pass, if it has one in place of the
    /// queue-by-queue pass (`allocate.rs`).
    placement_pass: Option<Box<dyn PlacementPass>>,
    /// The allocation pass's queues in order with how served each is, a
    /// buffer kept between passes.
    pass_order: Vec<(f64, usize)>,
    /// The allocation pass's request sizes that found no node, a buffer kept between passes.
    pass_no_room: Vec<Resources>,
    /// The allocation pass's walk over one queue's classes, a buffer kept between passes.
    pass_classes: Vec<allocate::ClassWalk>,
}

impl Scheduler {
    /// A scheduler for nodes of the given capacities under `policy`.
    pub fn new(nodes: &[Resources], policy: Policy) -> Result<Self, CoreError> {
        if nodes.is_empty() {
            return Err(CoreError::NoNodes);
        }
        let nodes = policy.placement.nodes(nodes);
        let short_only = policy.placement.short_only(nodes.len());
        let free_index = NodeIndex::new(&nodes);
        let n = nodes.len();
        let nodes: Vec<NodeState> = nodes
            .iter()
            .map(|&capacity| NodeState {
                capacity,
                allocated: Resources::ZERO,
                down: false,
                lacks: Vec::new(),
                unpriced: Vec::new(),
                swap: SwapRates::default(),
            })
            .collect();
        let total = nodes.iter().fold(Resources::ZERO, |acc, n| acc + n.capacity);
        let queues = policy
            .queues
            .iter()
            .map(|spec| QueueState {
                guaranteed: Resources::ZERO,
                used: Resources::ZERO,
                active: Default::default(),
                waiting: spec.classes.iter().map(|_| Default::default()).collect(),
            })
            .collect();
        let mut view = View {
            nodes,
            long_index: free_index.clone(),
            promising: 0,
            promised: vec![Resources::ZERO; n],
            free_index,
            first_shared_node: short_only,
            total,
            allocated: Resources::ZERO,
            queues,
            jobs: LiveTable::default(),
            dirty: false,
            reclaiming_mb: 0,
            preempted: BTreeSet::new(),
            wakes: BTreeSet::new(),
            touched: None,
            refreshed: None,
        };
        let Steps { planner, mechanism, reservation, preference, placement_pass } = policy.plugins.0.steps(&policy, n);
        if placement_pass.is_some() {
            // A pass of its own keeps its order and its nodes up to date
            // with what the books mark.
            view.touched = Some(Default::default());
            view.refreshed = Some(Default::default());
        }
        let mut s = Scheduler {
            planner,
            mechanism,
            reservation,
            preference,
            placement_pass,
            policy,
            view,
            offer_due: false,
            pass_order: Vec::new(),
            pass_no_room: Vec::new(),
            pass_classes: Vec::new(),
        };
        s.share_capacity();
        Ok(s)
    }
    /// The policy this scheduler runs.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Total capacity of the cluster.
    pub fn total(&self) -> Resources {
        self.view.total
    }

    /// How often the body must call [`Scheduler::monitor`], if the policy preempts.
    pub fn monitor_interval(&self) -> Option<Micros> {
        self.policy.monitor_interval()
    }

    /// Takes in a submitted job (as [`Observation::JobSubmitted`], for a body
    /// that makes each request in one buffer).
    pub fn submit(&mut self, req: &JobRequest) -> Result<(), CoreError> {
        let expected = self.view.jobs.len() as u32;
        if req.id.0 != expected {
            return Err(CoreError::JobIdOutOfOrder { got: req.id.0, expected });
        }
        let queue = self.policy.queue_of(req.class);
        let slot = self.policy.queues[queue].classes.iter().position(|&c| c == req.class).expect("its queue");
        let key = self.policy.order.service_key(req);
        if self.planner.is_some() {
            self.view.queues[queue].active.insert(key);
        }
        self.view.jobs.push(JobRuntime::new(req, queue, slot as u8, key));
        if let Some(pass) = &mut self.placement_pass {
            pass.job_submitted(req);
        }
        self.view.sync_waiting(expected as usize);
        self.view.dirty = true;
        Ok(())
    }

    /// Takes in one observation.
    pub fn observe(&mut self, now: Micros, obs: Observation) -> Result<(), CoreError> {
        match obs {
            Observation::JobSubmitted(req) => self.submit(&req)?,
            Observation::TaskFinished(task) => self.task_finished(now, task)?,
            Observation::MemoryReclaimed { task, mem_mb } => {
                self.mechanism.memory_reclaimed(&mut self.view, task, mem_mb)?
            }
            Observation::Swapping(task) => self.mechanism.swapping(&mut self.view, now, task)?,
            Observation::Resumed(task) => self.mechanism.resumed(&mut self.view, now, task)?,
            Observation::Checkpointed(task) => self.mechanism.checkpointed(&mut self.view, now, task)?,
            Observation::TaskLost(task) => self.task_lost(task)?,
            Observation::JobAborted(job) => self.job_aborted(job)?,
            Observation::NodeLost(node) => self.set_down(node, true)?,
            Observation::NodeBack(node) => self.set_down(node, false)?,
            Observation::Started { task, node } => self.started(now, task, node)?,
        }
        self.view.dirty = true;
        Ok(())
    }

    /// Drops an ended job from its queue.
    fn retire(&mut self, job: usize) {
        if let Some(pass) = &mut self.placement_pass {
            pass.job_ended(&mut self.view, job);
        }
        self.preference.job_ended(job);
        self.view.touch(job);
        let j = &mut self.view.jobs[job];
        let q = &mut self.view.queues[j.queue];
        if self.planner.is_some() {
            q.active.remove(&j.key);
        }
        if std::mem::take(&mut j.waiting) {
            q.waiting[j.class_slot as usize].remove(&j.key);
        }
    }

    /// A task stops holding resources: its sizing bookkeeping is undone;
    /// `finished` also takes its estimate off its job's work left.
    fn unsize(&mut self, task: TaskRef, finished: bool) {
        self.view.unsize(task, finished);
        if let Some(pass) = &mut self.placement_pass {
            pass.task_released(&mut self.view, task);
        }
    }

    /// A pending task found running on `node` ([`Observation::Started`]).
    fn started(&mut self, now: Micros, task: TaskRef, node: NodeId) -> Result<(), CoreError> {
        if node.0 as usize >= self.view.nodes.len() {
            return Err(CoreError::UnknownNode(node.0));
        }
        let fresh = self.mechanism.image(task).is_none();
        let job = self.view.checked_job(task)?;
        if job.pending.front() != Some(task.task) || !fresh {
            return Err(CoreError::BadTask {
                task,
                what: "started while not its job's next fresh pending task".into(),
            });
        }
        let size = job.tasks.request(task.task as usize);
        // The launch path books the allocation, the reservation and the
        // mechanism's state; the launch actions it makes are dropped, since the
        // body already runs the task.
        let (id, mut launched) = (task.job.0 as usize, Vec::new());
        let (mechanism, reservation) = (self.mechanism.as_mut(), self.reservation.as_mut());
        allocate::launch(&mut self.view, mechanism, reservation, now, id, task.task, node, size, &mut launched);
        self.view.touch(id);
        self.view.sync_waiting(id);
        Ok(())
    }

    fn task_finished(&mut self, now: Micros, task: TaskRef) -> Result<(), CoreError> {
        // One look-up of the job for what `unsize` and `forget_preemption` do to it.
        let job = self.view.checked_job(task)?;
        let t = &mut job.tasks[task.task as usize];
        if !matches!(t.state, TaskState::Running | TaskState::Shrunk) {
            return Err(CoreError::BadTask { task, what: format!("finished while {:?}", t.state) });
        }
        let (node, res, ran) = (t.node, t.allocated, t.ran(now));
        t.state.transition(TaskState::Finished).expect("checked above");
        let phase = t.phase;
        let owes = !t.owes_nothing();
        job.unsize(task.task as usize, true);
        job.tasks[task.task as usize].allocated = Resources::ZERO;
        self.view.touch(task.job.0 as usize);
        if let Some(pass) = &mut self.placement_pass {
            pass.task_released(&mut self.view, task);
        }
        let job = &mut self.view.jobs[task.job.0 as usize];
        job.running -= 1;
        job.unfinished -= 1;
        job.phases[phase as usize].unfinished -= 1;
        let phase_done = job.phases[phase as usize].unfinished == 0;
        if phase_done {
            job.finish_phase(phase);
            for d in job.phases[phase as usize].downstream.clone() {
                if job.phases[d as usize].upstream_left == 0 {
                    job.phases[d as usize].released = now;
                }
            }
        }
        let queue = job.queue;
        let finished = job.unfinished == 0;
        if finished {
            job.status = JobStatus::Finished;
        }
        self.mechanism.finished(&self.view, task);
        self.preference.task_finished(&self.view, task, phase, node);
        if owes {
            self.view.forget_preemption(task);
        }
        self.view.release(node, queue, res);
        let phase_done = phase_done.then_some(phase);
        self.reservation.task_finished(&mut self.view, now, task, node, res, ran, phase_done);
        if finished {
            self.retire(task.job.0 as usize);
            self.reservation.release_spent(&mut self.view, task.job.0 as usize);
            // A finished job leaves the core: memory follows the live jobs.
            self.view.jobs.remove(task.job.0 as usize);
        } else {
            self.view.sync_waiting(task.job.0 as usize);
        }
        Ok(())
    }

    /// Runs an allocation pass if anything changed; appends its actions to
    /// `out`. After a monitor run it is also a heartbeat: once pending tasks
    /// are placed, preempted tasks are offered their nodes' free resources.
    pub fn schedule(&mut self, now: Micros, out: &mut Vec<Action>) {
        self.reservation.before_pass(&mut self.view, now, out);
        if self.view.dirty {
            self.view.dirty = false;
            self.allocate(now, out);
        }
        if std::mem::take(&mut self.offer_due) && self.planner.is_some() {
            self.mechanism.offer(&mut self.view, out);
        }
    }

    /// Runs the resource monitor (preemption); appends its actions to `out`.
    /// Call [`Scheduler::schedule`] after it: that pass is the heartbeat.
    pub fn monitor(&mut self, now: Micros, out: &mut Vec<Action>) {
        if let Some(pass) = &mut self.placement_pass {
            pass.monitored(&mut self.view);
        }
        if let Some(planner) = &mut self.planner {
            let before = out.len();
            let takes = planner.plan(&self.view, self.mechanism.as_ref(), now);
            for take in takes {
                // A kill can fail a job, whose other victims are then gone already.
                if self.view.job_status(take.task.job.0 as usize) != JobStatus::Active {
                    continue;
                }
                match self.mechanism.preempt(&mut self.view, now, take, out) {
                    Preempted::Kept => {}
                    Preempted::Killed { exhausted } => {
                        if let Some(pass) = &mut self.placement_pass {
                            pass.task_released(&mut self.view, take.task);
                        }
                        if exhausted {
                            self.fail_job(take.task.job, out);
                        }
                    }
                }
            }
            if out.len() > before {
                self.view.dirty = true;
            }
            self.offer_due = !self.view.preempted.is_empty();
        }
    }

    /// The policy's planner, if it preempts: what it reports beyond its
    /// takes (`Planner::take_choices`) a body asks it directly.
    pub fn planner_mut(&mut self) -> Option<&mut (dyn Planner + 'static)> {
        self.planner.as_deref_mut()
    }

    /// The policy's reserve/permit step: what it reports (`Reservation::idle`)
    /// a body asks it directly.
    pub fn reservation(&self) -> &dyn Reservation {
        self.reservation.as_ref()
    }

    /// Fails a job and tells the body to stop it.
    fn fail_job(&mut self, id: JobId, out: &mut Vec<Action>) {
        self.abort_job(id);
        out.push(Action::FailJob { job: id });
    }

    /// A lost task goes back to the front of its job's pending tasks.
    fn task_lost(&mut self, task: TaskRef) -> Result<(), CoreError> {
        let t = self.view.checked_task(task)?;
        if !t.state.holds_resources() {
            return Err(CoreError::BadTask { task, what: format!("lost while {:?}", t.state) });
        }
        if let Some(pass) = &mut self.placement_pass {
            pass.task_released(&mut self.view, task);
        }
        self.view.forget_preemption(task);
        self.mechanism.forget(&mut self.view, task);
        self.view.task_mut(task).running_since = None;
        self.view.requeue(task);
        Ok(())
    }

    /// Takes a node out of placement or puts it back; the body reports the
    /// tasks it held as lost itself.
    /// Queues are guaranteed shares of what the cluster has now: a lost
    /// node's capacity is neither free room nor owed to anyone.
    fn share_capacity(&mut self) {
        for (q, spec) in self.view.queues.iter_mut().zip(&self.policy.queues) {
            q.guaranteed = self.view.total.scale(spec.guaranteed);
        }
    }

    fn set_down(&mut self, node: NodeId, down: bool) -> Result<(), CoreError> {
        let n = self.view.nodes.get_mut(node.0 as usize).ok_or(CoreError::UnknownNode(node.0))?;
        if n.down != down {
            n.down = down;
            if down {
                self.view.total -= n.capacity;
            } else {
                self.view.total += n.capacity;
            }
            self.share_capacity();
        }
        self.view.refresh_node(node);
        Ok(())
    }

    /// The body ended a job (cancelled, or a task failed).
    fn job_aborted(&mut self, id: JobId) -> Result<(), CoreError> {
        let status = ((id.0 as usize) < self.view.jobs.len()).then(|| self.view.job_status(id.0 as usize));
        match status {
            Some(JobStatus::Active) => {
                self.abort_job(id);
                Ok(())
            }
            Some(status) => Err(CoreError::JobOver { job: id.0, status: format!("{status:?}").to_lowercase() }),
            None => Err(CoreError::JobOver { job: id.0, status: "unknown".into() }),
        }
    }

    /// Frees every task a job holds and drops it from its queue.
    fn abort_job(&mut self, id: JobId) {
        let job = &mut self.view.jobs[id.0 as usize];
        let queue = job.queue;
        let mut freed = Vec::new();
        let mut owed = Vec::new();
        let mut dropped = Vec::new();
        for i in 0..job.tasks.len() {
            if job.tasks.state(i).is_terminal() {
                continue;
            }
            dropped.push(TaskRef { job: id, task: i as u32 });
            let t = &mut job.tasks[i];
            if t.state.holds_resources() {
                freed.push((t.node, t.allocated));
                owed.push(TaskRef { job: id, task: i as u32 });
            }
            t.state.transition(TaskState::Failed).expect("non-terminal tasks can fail");
            t.allocated = Resources::ZERO;
        }
        for &task in &dropped {
            self.mechanism.finished(&self.view, task);
        }
        for task in owed {
            self.unsize(task, false);
            self.view.forget_preemption(task);
            self.mechanism.forget(&mut self.view, task);
        }
        let job = &mut self.view.jobs[id.0 as usize];
        job.pending.clear();
        job.running = 0;
        job.status = JobStatus::Failed;
        for (node, res) in freed {
            self.view.release(node, queue, res);
        }
        self.retire(id.0 as usize);
        self.reservation.release_spent(&mut self.view, id.0 as usize);
    }

    /// Node `node` can carry out only the mechanisms in `can` (a live node
    /// without swap cannot shrink or swap out): a planner that chooses the
    /// mechanism per victim (`pliant`) uses only those there. By default a
    /// node can do every mechanism; a node pooled into one (`meganode`) is left so.
    pub fn restrict_mechanisms(&mut self, node: usize, can: &[MechanismKind]) {
        if let Some(n) = self.view.nodes.get_mut(node) {
            n.lacks = MechanismKind::ALL.into_iter().filter(|m| !can.contains(m)).collect();
        }
    }

    /// Node `node` carries out the mechanisms in `unpriced` at rates the
    /// core does not know (a live node's checkpoint is written by the task
    /// itself), so a planner that prices mechanisms (`pliant`) does not
    /// choose them there. By default every mechanism is priced by the
    /// policy's rates on every node, as on the simulator's nodes.
    pub fn unpriced_mechanisms(&mut self, node: usize, unpriced: &[MechanismKind]) {
        if let Some(n) = self.view.nodes.get_mut(node) {
            n.unpriced = unpriced.to_vec();
        }
    }

    /// Node `node`'s swap rates, as its body measured them: a planner that
    /// prices shrinks (`pliant`) uses them there from its next plan on,
    /// the policy's rates where a figure is `None` (as by default).
    pub fn set_swap_rates(&mut self, node: usize, rates: SwapRates) {
        if let Some(n) = self.view.nodes.get_mut(node) {
            n.swap = rates;
        }
    }

    /// Resources allocated on each node, in node order (for invariant checks and status).
    pub fn node_allocations(&self) -> impl Iterator<Item = (Resources, Resources)> + '_ {
        self.view.nodes.iter().map(|n| (n.capacity, n.allocated))
    }

    /// What the first waiting job of each queue and class (what an
    /// allocation pass serves first) asks for its next task: see
    /// [`MemoryWanted::on`].
    pub fn memory_wanted(&self) -> MemoryWanted<'_> {
        let fronts = self
            .view
            .queues()
            .iter()
            .flat_map(|q| q.waiting.iter().filter_map(|set| set.first()))
            .filter_map(|key| self.view.job(key.2 as usize).pending.front_request())
            .collect();
        MemoryWanted { fronts, view: &self.view }
    }

    /// The earliest instant after `now` the core wants a pass at even if the
    /// body observes nothing (a wait for a preferred node ends, a reservation expires);
    /// the body arranges a timer and calls [`Scheduler::wake`] then.
    pub fn wake_at(&mut self, now: Micros) -> Option<Micros> {
        while let Some(&t) = self.view.wakes.first() {
            if t > now {
                return Some(t);
            }
            self.view.wakes.pop_first();
        }
        None
    }

    /// A timer the core asked for ([`Scheduler::wake_at`]) went off: the
    /// next [`Scheduler::schedule`] runs an allocation pass.
    pub fn wake(&mut self, _now: Micros) {
        self.view.dirty = true;
    }
}

/// The next tasks of the first waiting jobs (see [`Scheduler::memory_wanted`]).
pub struct MemoryWanted<'a> {
    fronts: SmallVec<[Resources; 4]>,
    view: &'a View,
}

impl MemoryWanted<'_> {
    /// Whether no job waits.
    pub fn is_empty(&self) -> bool {
        self.fronts.is_empty()
    }

    /// The least memory, MB, that must still come free on node `node` for
    /// one of these tasks whose CPU fits there already to fit; `None` if
    /// none lacks only memory there. A simulator reports a reclaim's
    /// progress when it reaches that (memory comes free continuously; the
    /// core hears of it when a waiting task could use it).
    pub fn on(&self, node: usize) -> Option<u64> {
        if self.fronts.is_empty() {
            return None;
        }
        let free = self.view.node_free(node);
        self.fronts
            .iter()
            .filter(|r| r.cpu_milli <= free.cpu_milli && r.mem_mb > free.mem_mb)
            .map(|r| r.mem_mb - free.mem_mb)
            .min()
    }
}
