//! The scheduler: it takes observations and answers with actions. The same
//! code decides in the simulator and in live mode.

mod allocate;
mod checkpointing;
mod container_preemption;
mod locality;
mod monitor;
mod node_pass;
mod pending;
mod priority_preemption;
mod reservations;
mod snapshot;
mod state;

use crate::action::Action;
use crate::model::{JobId, NodeId, TaskRef, TaskState};
use crate::observation::Observation;
use crate::policy::{self, Placement, Planner, Policy, Sizing};
use crate::{Micros, Resources};
use crate::node_index::NodeIndex;
use state::{IoQueue, JobState, JobStatus, NodeState, QueueState, ServiceKey};
use std::collections::BTreeSet;

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

/// The scheduling core for one cluster and one policy.
#[derive(Debug, Clone)]
pub struct Scheduler {
    policy: Policy,
    nodes: Vec<NodeState>,
    free_index: NodeIndex,
    /// Per node, the resources preempted tasks there gave up and will take
    /// back on resumption: long work may not be placed into them.
    promised: Vec<Resources>,
    /// Free resources less `promised`, per node: where long tasks may go.
    long_index: NodeIndex,
    /// Nodes before this index are only for short jobs.
    first_shared_node: usize,
    total: Resources,
    allocated: Resources,
    queues: Vec<QueueState>,
    jobs: Vec<JobState>,
    /// Something changed since the last allocation pass.
    dirty: bool,
    /// Memory that suspended and shrunk tasks have still to give back.
    reclaiming_mb: u64,
    /// Suspended and shrunk tasks awaiting resumption, in service order.
    preempted: BTreeSet<(ServiceKey, u32)>,
    /// The resource monitor ran since the last allocation pass: the next pass
    /// is a heartbeat, which offers nodes to preempted tasks.
    heartbeat: bool,
    /// Per node, its queue of checkpoint dumps and restores.
    io: Vec<IoQueue>,
    /// Per node, what tasks being dumped there will free when their dumps end.
    freeing: Vec<Resources>,
    /// Slots kept for jobs' downstream phases (the reserve/permit step).
    reservations: reservations::Reservations,
    /// Instants the core asked the body to wake it at.
    wakes: BTreeSet<Micros>,
    /// Per node, the job it is reserved for (node-by-node pass, YARN-ME §3.3).
    reserved: Vec<Option<u32>>,
    /// The timeline generator's last estimates (YARN-ME §3.2).
    timeline: policy::sizing::timeline::Timeline,
    /// A job arrived or a heartbeat passed since the timeline was generated.
    timeline_stale: bool,
    /// Per node, its running tasks' estimated ends and holdings as of the timeline, by end.
    node_ends: Vec<Vec<(Micros, Resources)>>,
    /// What the timeline generator's snapshot of each job may skip.
    snapshot: snapshot::SnapshotCache,
    /// Per node, disk bandwidth booked by elastic tasks' spills, milli-MB/s.
    disk_used: Vec<u64>,
}

impl Scheduler {
    /// A scheduler for nodes of the given capacities under `policy`.
    pub fn new(nodes: &[Resources], policy: Policy) -> Result<Self, CoreError> {
        if nodes.is_empty() {
            return Err(CoreError::NoNodes);
        }
        let pooled = [nodes.iter().fold(Resources::ZERO, |acc, &n| acc + n)];
        let nodes = if policy.placement == Placement::Pooled { &pooled[..] } else { nodes };
        let short_only = match policy.placement {
            Placement::FirstFit | Placement::Pooled => 0,
            Placement::ReservedForShort { fraction } => (nodes.len() as f64 * fraction).round() as usize,
        };
        let free_index = NodeIndex::new(nodes);
        let free_index_len = nodes.len();
        let nodes: Vec<NodeState> =
            nodes.iter().map(|&capacity| NodeState { capacity, allocated: Resources::ZERO, down: false }).collect();
        let total = nodes.iter().fold(Resources::ZERO, |acc, n| acc + n.capacity);
        let queues = policy
            .queues
            .iter()
            .map(|_| QueueState {
                guaranteed: Resources::ZERO,
                used: Resources::ZERO,
                active: Default::default(),
                waiting: Default::default(),
            })
            .collect();
        let mut s = Scheduler {
            policy,
            nodes,
            long_index: free_index.clone(),
            promised: vec![Resources::ZERO; free_index_len],
            free_index,
            first_shared_node: short_only,
            total,
            allocated: Resources::ZERO,
            queues,
            jobs: Vec::new(),
            dirty: false,
            reclaiming_mb: 0,
            preempted: BTreeSet::new(),
            heartbeat: false,
            io: vec![IoQueue::default(); free_index_len],
            freeing: vec![Resources::ZERO; free_index_len],
            reservations: Default::default(),
            wakes: BTreeSet::new(),
            reserved: vec![None; free_index_len],
            timeline: Default::default(),
            timeline_stale: true,
            node_ends: Vec::new(),
            snapshot: Default::default(),
            disk_used: vec![0; free_index_len],
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
        self.total
    }

    /// How often the body must call [`Scheduler::monitor`], if the policy preempts.
    pub fn monitor_interval(&self) -> Option<Micros> {
        match self.policy.sizing {
            Sizing::Elastic(spec) => Some(spec.heartbeat),
            Sizing::Requested => self.policy.preemption.map(|p| p.interval),
        }
    }

    /// Takes in one observation.
    pub fn observe(&mut self, now: Micros, obs: Observation) -> Result<(), CoreError> {
        match obs {
            Observation::JobSubmitted(req) => {
                let expected = self.jobs.len() as u32;
                if req.id.0 != expected {
                    return Err(CoreError::JobIdOutOfOrder { got: req.id.0, expected });
                }
                let queue = self.policy.queue_of(req.class);
                let key = allocate::service_key(self.policy.order, &req);
                self.queues[queue].active.insert(key);
                self.jobs.push(JobState::new(req, queue, key));
                self.timeline_stale = true;
                self.sync_waiting(expected as usize);
            }
            Observation::TaskFinished(task) => self.task_finished(now, task)?,
            Observation::MemoryReclaimed { task, mem_mb } => self.memory_reclaimed(task, mem_mb)?,
            Observation::Swapping(task) => self.task_swapping(now, task)?,
            Observation::Resumed(task) => {
                self.task_resumed(now, task)?;
                self.restore_done(now, task);
            }
            Observation::Checkpointed(task) => self.task_checkpointed(now, task)?,
            Observation::TaskLost(task) => self.task_lost(task)?,
            Observation::JobAborted(job) => self.job_aborted(job)?,
            Observation::NodeLost(node) => self.set_down(node, true)?,
            Observation::NodeBack(node) => self.set_down(node, false)?,
        }
        self.dirty = true;
        Ok(())
    }

    /// Keeps a job in its queue's waiting set exactly while it is active and
    /// has runnable pending tasks.
    fn sync_waiting(&mut self, job: usize) {
        let j = &self.jobs[job];
        let waiting = &mut self.queues[j.queue].waiting[j.req.class as usize];
        if j.status == JobStatus::Active && !j.pending.is_empty() {
            waiting.insert(j.key);
        } else {
            waiting.remove(&j.key);
        }
    }

    /// Drops an ended job from its queue.
    fn retire(&mut self, job: usize) {
        let j = &self.jobs[job];
        self.queues[j.queue].active.remove(&j.key);
        self.queues[j.queue].waiting[j.req.class as usize].remove(&j.key);
    }

    fn task_finished(&mut self, now: Micros, task: TaskRef) -> Result<(), CoreError> {
        let job = self.job_mut(task)?;
        let t = &mut job.tasks[task.task as usize];
        if !matches!(t.state, TaskState::Running | TaskState::Shrunk) {
            return Err(CoreError::BadTask { task, what: format!("finished while {:?}", t.state) });
        }
        let (node, res, ran) = (t.node, t.allocated, t.ran(now));
        t.state.transition(TaskState::Finished).expect("checked above");
        let phase = t.phase;
        self.unsize(task, true);
        let job = &mut self.jobs[task.job.0 as usize];
        job.running -= 1;
        job.unfinished -= 1;
        job.phases[phase as usize].unfinished -= 1;
        job.phases[phase as usize].ran_on.push(node);
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
        self.forget_preemption(task);
        self.jobs[task.job.0 as usize].tasks[task.task as usize].allocated = Resources::ZERO;
        self.release(node, queue, res);
        if phase_done {
            self.phase_released(task.job.0, phase);
        }
        self.reserve_on_finish(now, task, node, res, ran);
        if finished {
            self.retire(task.job.0 as usize);
            self.release_spent_holds(task.job.0 as usize);
        } else {
            self.sync_waiting(task.job.0 as usize);
        }
        Ok(())
    }

    fn job_mut(&mut self, task: TaskRef) -> Result<&mut JobState, CoreError> {
        let job = self
            .jobs
            .get_mut(task.job.0 as usize)
            .ok_or_else(|| CoreError::BadTask { task, what: "unknown job".into() })?;
        if task.task as usize >= job.tasks.len() {
            return Err(CoreError::BadTask { task, what: "unknown task".into() });
        }
        Ok(job)
    }

    /// Brings a node's entries in both placement indexes up to date.
    fn refresh_node(&mut self, node: NodeId) {
        let i = node.0 as usize;
        let free = self.nodes[i].free();
        self.free_index.update(i, free);
        self.long_index.update(i, free.saturating_sub(&self.promised[i]));
    }

    fn release(&mut self, node: NodeId, queue: usize, res: Resources) {
        self.nodes[node.0 as usize].allocated -= res;
        self.refresh_node(node);
        self.queues[queue].used -= res;
        self.allocated -= res;
    }

    fn reserve(&mut self, node: NodeId, queue: usize, res: Resources) {
        self.nodes[node.0 as usize].allocated += res;
        self.refresh_node(node);
        self.queues[queue].used += res;
        self.allocated += res;
    }

    /// Runs an allocation pass if anything changed; appends its actions to
    /// `out`. After a monitor run it is also a heartbeat: once pending tasks
    /// are placed, preempted tasks are offered their nodes' free resources.
    pub fn schedule(&mut self, now: Micros, out: &mut Vec<Action>) {
        self.reservation_step(now, out);
        if self.dirty {
            self.dirty = false;
            self.allocate(now, out);
        }
        if std::mem::take(&mut self.heartbeat) {
            if let Some(spec) = self.policy.preemption {
                self.offer_resumptions(spec, out);
            }
        }
    }

    /// Runs the resource monitor (preemption); appends its actions to `out`.
    /// Call [`Scheduler::schedule`] after it: that pass is the heartbeat.
    pub fn monitor(&mut self, now: Micros, out: &mut Vec<Action>) {
        if let Sizing::Elastic(_) = self.policy.sizing {
            // The heartbeat: the timeline generator runs again (YARN-ME §3.2).
            self.timeline_stale = true;
            self.dirty = true;
        }
        if let Some(spec) = self.policy.preemption {
            let before = out.len();
            match spec.planner {
                Planner::Capacity => self.preempt(now, spec, out),
                Planner::PriorityLevels => self.preempt_by_level(now, spec, out),
            }
            if out.len() > before {
                self.dirty = true;
            }
            self.heartbeat = !self.preempted.is_empty();
        }
    }

    fn kill(&mut self, task: TaskRef, out: &mut Vec<Action>) {
        let max_attempts = self.policy.max_attempts;
        self.unsize(task, false);
        let job = &mut self.jobs[task.job.0 as usize];
        let t = &mut job.tasks[task.task as usize];
        let (node, res) = (t.node, t.allocated);
        t.state.transition(TaskState::Pending).expect("victims are running");
        t.allocated = Resources::ZERO;
        t.image = None;
        // A preempted MapReduce attempt is "killed", not "failed" (YARN's PREEMPTED exit
        // status): only coupled (Spark) tasks use up attempts by being preempted, as the
        // failed Spark jobs of BIG-C §5.2 did.
        let exhausted = t.attempts >= max_attempts && job.req.phases[t.phase as usize].coupled;
        job.running -= 1;
        job.pending.push_front(task.task, job.tasks[task.task as usize].request);
        let queue = job.queue;
        self.release(node, queue, res);
        self.sync_waiting(task.job.0 as usize);
        out.push(Action::Kill { task });
        if exhausted {
            self.fail_job(task.job, out);
        }
    }

    /// Fails a job and tells the body to stop it.
    fn fail_job(&mut self, id: JobId, out: &mut Vec<Action>) {
        self.abort_job(id);
        out.push(Action::FailJob { job: id });
    }

    /// A lost task goes back to the front of its job's pending tasks.
    fn task_lost(&mut self, task: TaskRef) -> Result<(), CoreError> {
        let job = self.job_mut(task)?;
        let t = &job.tasks[task.task as usize];
        if !t.state.holds_resources() {
            return Err(CoreError::BadTask { task, what: format!("lost while {:?}", t.state) });
        }
        // A task lost while dumping has no image: it starts afresh.
        let dumping = matches!(t.io_op, Some(state::IoOp::Dump(_)));
        self.unsize(task, false);
        self.forget_preemption(task);
        self.forget_checkpoint(task);
        let job = &mut self.jobs[task.job.0 as usize];
        let t = &mut job.tasks[task.task as usize];
        if dumping {
            t.image = None;
        }
        let (node, res) = (t.node, t.allocated);
        t.state.transition(TaskState::Pending).expect("tasks holding resources can be requeued");
        t.allocated = Resources::ZERO;
        t.running_since = None;
        job.running -= 1;
        job.pending.push_front(task.task, job.tasks[task.task as usize].request);
        let queue = job.queue;
        self.release(node, queue, res);
        self.sync_waiting(task.job.0 as usize);
        Ok(())
    }

    /// Takes a node out of placement or puts it back; the body reports the
    /// tasks it held as lost itself.
    /// Queues are guaranteed shares of what the cluster has now: a lost
    /// node's capacity is neither free room nor owed to anyone.
    fn share_capacity(&mut self) {
        for (q, spec) in self.queues.iter_mut().zip(&self.policy.queues) {
            q.guaranteed = self.total.scale(spec.guaranteed);
        }
    }

    fn set_down(&mut self, node: NodeId, down: bool) -> Result<(), CoreError> {
        let n = self.nodes.get_mut(node.0 as usize).ok_or(CoreError::UnknownNode(node.0))?;
        if n.down != down {
            n.down = down;
            if down {
                self.total -= n.capacity;
            } else {
                self.total += n.capacity;
            }
            self.share_capacity();
        }
        self.refresh_node(node);
        Ok(())
    }

    /// The body ended a job (cancelled, or a task failed).
    fn job_aborted(&mut self, id: JobId) -> Result<(), CoreError> {
        match self.jobs.get(id.0 as usize).map(|j| j.status) {
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
        let job = &mut self.jobs[id.0 as usize];
        let queue = job.queue;
        let mut freed = Vec::new();
        let mut owed = Vec::new();
        for (i, t) in job.tasks.iter_mut().enumerate().filter(|(_, t)| !t.state.is_terminal()) {
            if t.state.holds_resources() {
                freed.push((t.node, t.allocated));
                owed.push(TaskRef { job: id, task: i as u32 });
            }
            t.state.transition(TaskState::Failed).expect("non-terminal tasks can fail");
            t.allocated = Resources::ZERO;
        }
        for task in owed {
            self.unsize(task, false);
            self.forget_preemption(task);
            self.forget_checkpoint(task);
        }
        let job = &mut self.jobs[id.0 as usize];
        job.pending.clear();
        job.running = 0;
        job.status = JobStatus::Failed;
        for (node, res) in freed {
            self.release(node, queue, res);
        }
        self.retire(id.0 as usize);
        self.release_spent_holds(id.0 as usize);
    }

    /// Resources allocated on each node, in node order (for invariant checks and status).
    pub fn node_allocations(&self) -> impl Iterator<Item = (Resources, Resources)> + '_ {
        self.nodes.iter().map(|n| (n.capacity, n.allocated))
    }
}
