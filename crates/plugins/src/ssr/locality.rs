//! Delay scheduling (SSR §II-B case 2 and §VI-B, after Zaharia et al.'s
//! delay scheduling): a task of a `local` phase prefers the nodes its
//! upstream phases ran on; it waits up to the locality wait for a slot there
//! (its job sits out allocation passes meanwhile, without holding back
//! others), then takes any slot. The core asks the body to wake it when the
//! wait ends.

use pliant_core::model::{NodeId, TaskRef};
use pliant_core::policy::steps::{Pick, Preference, Reservation, View};
use pliant_core::policy::Policy;
use pliant_core::{Micros, Resources};

/// The placement-preference step of `policy`: delay scheduling with its
/// locality wait.
pub(crate) fn build(policy: &Policy) -> Box<dyn Preference> {
    Box::new(DelayScheduling { wait: policy.locality_wait, ran_on: Vec::new() })
}

/// Delay scheduling's state: where the finished tasks of phases that a
/// `local` phase reads ran.
#[derive(Debug, Clone)]
struct DelayScheduling {
    /// How long a task with a preference waits for a preferred node.
    wait: Micros,
    /// Per job (by id), per phase, the nodes its finished tasks ran on, one
    /// entry per task, kept only for a phase that a `local` phase reads and
    /// while the job lives (boxed: most jobs have none, and a job without
    /// costs 8 bytes here, not a vector's 24).
    #[allow(clippy::box_collection)]
    ran_on: Vec<Option<Box<Vec<Vec<NodeId>>>>>,
}

/// A reserved slot of job `job` on any node, or else the ordinary placement.
fn own_slot_or_any(view: &mut View, reservation: &mut dyn Reservation, job: usize, req: Resources) -> Pick {
    match reservation.take_own(view, job, req, &|_| true) {
        Some(node) => Pick::Take(node),
        None => Pick::Any,
    }
}

impl DelayScheduling {
    /// The nodes task `task` of job `job` prefers, if it has a preference:
    /// the first as many tasks of a `local` phase as its upstream phases had
    /// read their output, on the nodes those ran on (`ran_on`, the job's).
    fn preferred_nodes(view: &View, ran_on: &[Vec<NodeId>], job: usize, task: u32) -> Option<Vec<NodeId>> {
        let j = view.job(job);
        let phase = j.tasks.phase(task as usize) as usize;
        let req = &j.phases[phase];
        if !req.local {
            return None;
        }
        let upstream: u32 = req.deps.iter().map(|&d| j.phases[d as usize].tasks.len() as u32).sum();
        if task - j.phases[phase].tasks.start >= upstream {
            return None;
        }
        let mut nodes = Vec::new();
        for r in req.deps.iter().filter_map(|&d| ran_on.get(d as usize)) {
            nodes.extend_from_slice(r);
        }
        Some(nodes)
    }

    /// [`Preference::pick`] for a job some of whose tasks finished in a
    /// phase a `local` phase reads.
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn pick_local(
        &self,
        ran_on: &[Vec<NodeId>],
        view: &mut View,
        reservation: &mut dyn Reservation,
        now: Micros,
        job: usize,
        task: u32,
        req: Resources,
    ) -> Pick {
        let prefers = Self::preferred_nodes(view, ran_on, job, task);
        let prefer = |n| prefers.as_ref().is_none_or(|p: &Vec<NodeId>| p.contains(&n));
        if let Some(node) = reservation.take_own(view, job, req, &prefer) {
            return Pick::Take(node);
        }
        let Some(prefers) = prefers else { return Pick::Any };
        if let Some(&node) = prefers.iter().find(|n| req.fits_in(&view.node_free(n.0 as usize))) {
            return Pick::Take(node);
        }
        let j = view.job(job);
        let until = j.phases[j.tasks.phase(task as usize) as usize].released + self.wait;
        if now < until {
            view.wake_at(until);
            return Pick::Wait;
        }
        own_slot_or_any(view, reservation, job, req)
    }
}

impl Preference for DelayScheduling {
    fn clone_box(&self) -> Box<dyn Preference> {
        Box::new(self.clone())
    }

    /// Its job's reserved slots first, then (for a task with a preference)
    /// a free slot on a preferred node, waiting for one until the locality
    /// wait has passed. A job none of whose tasks finished in a phase a
    /// `local` phase reads has no preference: its pending tasks' upstream
    /// phases (finished, or their barrier would hold them) had no tasks.
    fn pick(
        &mut self,
        view: &mut View,
        reservation: &mut dyn Reservation,
        now: Micros,
        job: usize,
        task: u32,
        req: Resources,
    ) -> Pick {
        if let Some(ran_on) = self.ran_on.get(job).and_then(Option::as_deref) {
            return self.pick_local(ran_on, view, reservation, now, job, task, req);
        }
        own_slot_or_any(view, reservation, job, req)
    }

    /// Kept for a phase a `local` phase reads.
    fn task_finished(&mut self, view: &View, task: TaskRef, phase: u32, node: NodeId) {
        let j = view.job(task.job.0 as usize);
        let p = phase as usize;
        if !j.phases[p].downstream.iter().any(|&d| j.phases[d as usize].local) {
            return;
        }
        let job = task.job.0 as usize;
        if self.ran_on.len() <= job {
            self.ran_on.resize(job + 1, None);
        }
        let phases = self.ran_on[job].get_or_insert_default();
        if phases.len() <= p {
            phases.resize_with(p + 1, Vec::new);
        }
        phases[p].push(node);
    }

    fn job_ended(&mut self, job: usize) {
        if let Some(phases) = self.ran_on.get_mut(job) {
            *phases = None;
        }
    }
}
