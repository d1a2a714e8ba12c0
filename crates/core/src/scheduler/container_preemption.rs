//! Container-based preemption in the core (BIG-C §3–§4): suspending and
//! shrinking victims, tracking the memory they give back, and resuming them
//! on their own node after delayed resumption.

use super::Scheduler;
use crate::action::{Action, Mechanism};
use crate::model::{TaskRef, TaskState};
use crate::policy::preemption::resumption_grant;
use crate::policy::PreemptionSpec;
use crate::{CoreError, Micros, Resources};

impl Scheduler {
    /// Immediate preemption (§3.2): CPU and memory down to the footprint. CPU
    /// frees at once; memory frees as the body reports it reclaimed. The
    /// footprint itself is not booked against the node (it is the overcommitted
    /// minimum that keeps the container alive): once the memory above it is
    /// reclaimed, the container's whole allocation counts as free, so that
    /// footprints never fragment a node against the container's own resumption.
    pub(super) fn suspend(&mut self, now: Micros, task: TaskRef, footprint: Resources, out: &mut Vec<Action>) {
        let t = &mut self.jobs[task.job.0 as usize].tasks[task.task as usize];
        t.state.transition(TaskState::Suspended).expect("victims are running");
        t.pause(now);
        t.footprint_mb = footprint.mem_mb.min(t.allocated.mem_mb);
        self.lower_limits(task, Resources::new(0, footprint.mem_mb));
        self.unbook_reclaimed_footprint(task);
        out.push(Action::Suspend { task, footprint });
    }

    /// Graceful preemption (§3.3, Alg. 2 line 7): lower the task's limits to
    /// `to`. A task shrunk down to the footprint is, like a suspended one, not
    /// booked for it.
    pub(super) fn shrink(&mut self, task: TaskRef, to: Resources, footprint: Resources, out: &mut Vec<Action>) {
        let t = &mut self.jobs[task.job.0 as usize].tasks[task.task as usize];
        t.state.transition(TaskState::Shrunk).expect("graceful victims run");
        if to.mem_mb <= footprint.mem_mb {
            t.footprint_mb = to.mem_mb.min(t.allocated.mem_mb);
        }
        self.lower_limits(task, to);
        self.unbook_reclaimed_footprint(task);
        out.push(Action::Shrink { task, to });
    }

    /// Once nothing is left to reclaim, the footprint stops counting against the node.
    fn unbook_reclaimed_footprint(&mut self, task: TaskRef) {
        let job = &mut self.jobs[task.job.0 as usize];
        let t = &mut job.tasks[task.task as usize];
        if t.reclaiming_mb == 0 && t.footprint_mb > 0 {
            let mem = std::mem::take(&mut t.footprint_mb);
            t.allocated.mem_mb -= mem;
            let (node, queue) = (t.node, job.queue);
            self.release(node, queue, Resources::new(0, mem));
            self.sync_promise(task);
        }
    }

    /// Frees CPU above `to` now and books the memory above it as being reclaimed.
    fn lower_limits(&mut self, task: TaskRef, to: Resources) {
        let job = &mut self.jobs[task.job.0 as usize];
        let queue = job.queue;
        let key = job.key;
        let t = &mut job.tasks[task.task as usize];
        let cpu = t.allocated.cpu_milli.saturating_sub(to.cpu_milli);
        t.allocated.cpu_milli -= cpu;
        let mem_target = to.mem_mb.min(t.allocated.mem_mb);
        let newly = (t.allocated.mem_mb - mem_target).saturating_sub(t.reclaiming_mb);
        t.reclaiming_mb += newly;
        t.offers = 0;
        let node = t.node;
        self.reclaiming_mb += newly;
        self.preempted.insert((key, task.task));
        self.release(node, queue, Resources::new(cpu, 0));
        self.sync_promise(task);
    }

    /// Keeps `promised` equal, per node, to what its preempted tasks gave up
    /// (request − allocation); long work is not placed into it.
    pub(super) fn sync_promise(&mut self, task: TaskRef) {
        let job = &mut self.jobs[task.job.0 as usize];
        let preempted = self.preempted.contains(&(job.key, task.task));
        let t = &mut job.tasks[task.task as usize];
        let new = if preempted { t.request.saturating_sub(&t.allocated) } else { Resources::ZERO };
        let old = std::mem::replace(&mut t.promise, new);
        let node = t.node;
        let p = &mut self.promised[node.0 as usize];
        *p = p.saturating_sub(&old) + new;
        self.refresh_node(node);
    }

    /// The node froze a shrunk task that started swapping (Alg. 2 line 8): it
    /// leaves the reclaim set; its CPU counts as free (the 1 % it keeps is the
    /// footprint, not booked).
    pub(super) fn task_swapping(&mut self, now: Micros, task: TaskRef) -> Result<(), CoreError> {
        let job = self.job_mut(task)?;
        let queue = job.queue;
        let t = &mut job.tasks[task.task as usize];
        if t.state != TaskState::Shrunk {
            return Err(CoreError::BadTask { task, what: format!("swapping while {:?}", t.state) });
        }
        t.state.transition(TaskState::Suspended).expect("shrunk tasks can be frozen");
        t.pause(now);
        let cpu = t.allocated.cpu_milli;
        t.allocated.cpu_milli = 0;
        let node = t.node;
        self.release(node, queue, Resources::new(cpu, 0));
        self.sync_promise(task);
        Ok(())
    }

    /// Memory given back by a suspended or shrunk task.
    pub(super) fn memory_reclaimed(&mut self, task: TaskRef, mem_mb: u64) -> Result<(), CoreError> {
        let job = self.job_mut(task)?;
        let queue = job.queue;
        let t = &mut job.tasks[task.task as usize];
        if !matches!(t.state, TaskState::Suspended | TaskState::Shrunk) || mem_mb > t.reclaiming_mb {
            let what = format!("{mem_mb} MB reclaimed while {:?} with {} MB due", t.state, t.reclaiming_mb);
            return Err(CoreError::BadTask { task, what });
        }
        t.reclaiming_mb -= mem_mb;
        // Fully reclaimed: the footprint stops counting too.
        let freed = if t.reclaiming_mb == 0 { mem_mb + std::mem::take(&mut t.footprint_mb) } else { mem_mb };
        t.allocated.mem_mb -= freed;
        let node = t.node;
        self.reclaiming_mb -= mem_mb;
        self.release(node, queue, Resources::new(0, freed));
        self.sync_promise(task);
        Ok(())
    }

    /// At each heartbeat, offers every fully reclaimed preempted task its
    /// node's free resources; it resumes on the offer after D refused ones
    /// (delayed resumption, §4.3 "Practical considerations"): wholly, or under
    /// graceful preemption with part of what it misses ([`resumption_grant`]),
    /// staying shrunk until the rest comes back at a later offer. Tasks are
    /// served in service order, and what an older task waits for on its node
    /// is held for it: a younger task never resumes into room an older one needs —
    /// unless the older one could not fit even once everything but the other
    /// preempted tasks there has left (then holding room for it would only
    /// deadlock them).
    pub(super) fn offer_resumptions(&mut self, spec: PreemptionSpec, out: &mut Vec<Action>) {
        use std::collections::HashMap;
        let gradual = spec.gradual_resumption && spec.mechanism == Mechanism::Graceful;
        let candidates: Vec<_> = self.preempted.iter().copied().collect();
        let mut preempted_hold: HashMap<u32, Resources> = HashMap::new();
        for &(key, ti) in &candidates {
            let t = &self.jobs[key.2 as usize].tasks[ti as usize];
            *preempted_hold.entry(t.node.0).or_default() += t.allocated;
        }
        let mut held_back: HashMap<u32, Resources> = HashMap::new();
        for (key, ti) in candidates {
            let t = &self.jobs[key.2 as usize].tasks[ti as usize];
            if !matches!(t.state, TaskState::Suspended | TaskState::Shrunk) {
                continue;
            }
            let missing = t.request - t.allocated;
            let node = t.node;
            let claimed = held_back.entry(node.0).or_default();
            let others = preempted_hold[&node.0].saturating_sub(&t.allocated);
            let attainable = self.nodes[node.0 as usize].capacity.saturating_sub(&others).saturating_sub(claimed);
            if !missing.fits_in(&attainable) {
                continue;
            }
            if t.reclaiming_mb > 0 {
                // Still giving memory back: it will want its room; hold it.
                *claimed += missing;
                continue;
            }
            let room = self.nodes[node.0 as usize].free().saturating_sub(claimed);
            let grant = resumption_grant(missing, room, spec.gp_step, gradual);
            let t = &mut self.jobs[key.2 as usize].tasks[ti as usize];
            let grant = match grant {
                Some(grant) if t.offers >= spec.delayed_resumption => grant,
                _ => {
                    if grant.is_some() {
                        t.offers += 1;
                    }
                    *claimed += missing;
                    continue;
                }
            };
            t.state.transition(TaskState::Restoring).expect("preempted tasks can restore");
            t.allocated += grant;
            let resources = t.allocated;
            if resources == t.request {
                self.preempted.remove(&(key, ti));
            } else {
                *claimed += missing - grant;
            }
            let queue = self.jobs[key.2 as usize].queue;
            let task = TaskRef { job: crate::model::JobId(key.2), task: ti };
            self.sync_promise(task);
            self.reserve(node, queue, grant);
            out.push(Action::Resume { task, resources });
        }
    }

    /// A resumed task runs again: shrunk, if it got only part of what it
    /// gave up (it is still among the preempted).
    pub(super) fn task_resumed(&mut self, now: Micros, task: TaskRef) -> Result<(), CoreError> {
        let job = self.job_mut(task)?;
        let key = job.key;
        let partly = self.preempted.contains(&(key, task.task));
        let t = &mut self.jobs[task.job.0 as usize].tasks[task.task as usize];
        let to = if partly { TaskState::Shrunk } else { TaskState::Running };
        t.state.transition(to).map_err(|e| CoreError::BadTask { task, what: e.to_string() })?;
        t.running_since.get_or_insert(now);
        Ok(())
    }

    /// Forgets what a task still owed and its place among the preempted (it
    /// finished or its job failed).
    pub(super) fn forget_preemption(&mut self, task: TaskRef) {
        let job = &mut self.jobs[task.job.0 as usize];
        let key = job.key;
        let t = &mut job.tasks[task.task as usize];
        self.reclaiming_mb -= t.reclaiming_mb;
        t.reclaiming_mb = 0;
        t.footprint_mb = 0;
        self.preempted.remove(&(key, task.task));
        self.sync_promise(task);
    }
}
