//! Delay scheduling (SSR §II-B case 2 and §VI-B, after Zaharia et al.'s
//! delay scheduling): a task of a `local` phase prefers the nodes its
//! upstream phases ran on; it waits up to the locality wait for a slot there
//! (its job sits out allocation passes meanwhile, without holding back
//! others), then takes any slot. The core asks the body to wake it when the
//! wait ends.

use super::Scheduler;
use crate::model::NodeId;
use crate::{Micros, Resources};

/// Where a job's next task may go in this pass.
pub(super) enum SlotChoice {
    /// This node: a reserved slot of the job (already handed over) or a
    /// free slot on a preferred node.
    Take(NodeId),
    /// Nowhere yet: it waits for a preferred node.
    Wait,
    /// Any node with room (the ordinary placement).
    Any,
}

impl Scheduler {
    /// The nodes task `task` of job `job` prefers, if it has a preference:
    /// the first as many tasks of a `local` phase as its upstream phases had
    /// read their output, on the nodes those ran on.
    fn preferred_nodes(&self, job: usize, task: u32) -> Option<Vec<NodeId>> {
        let j = &self.view.jobs[job];
        let phase = j.tasks.phase(task as usize) as usize;
        let req = &j.phases[phase];
        if !req.local {
            return None;
        }
        let upstream: u32 = req.deps.iter().map(|&d| j.phases[d as usize].tasks.len() as u32).sum();
        if task - j.phases[phase].tasks.start >= upstream {
            return None;
        }
        Some(req.deps.iter().flat_map(|&d| j.phases[d as usize].ran_on.iter().copied()).collect())
    }

    /// Picks where the next task of `job` goes: its job's reserved slots
    /// first, then (for a task with a preference) a free slot on a
    /// preferred node, waiting for one until the locality wait has passed.
    pub(super) fn slot_for(&mut self, now: Micros, job: usize, task: u32, req: Resources) -> SlotChoice {
        let prefers = self.preferred_nodes(job, task);
        let prefer = |n| prefers.as_ref().is_none_or(|p: &Vec<NodeId>| p.contains(&n));
        if let Some(node) = self.reservation.take_own(&mut self.view, job, req, &prefer) {
            return SlotChoice::Take(node);
        }
        let Some(prefers) = prefers else { return SlotChoice::Any };
        if let Some(&node) = prefers.iter().find(|n| req.fits_in(&self.view.node_free(n.0 as usize))) {
            return SlotChoice::Take(node);
        }
        let j = &self.view.jobs[job];
        let until = j.phases[j.tasks.phase(task as usize) as usize].released + self.policy.locality_wait;
        if now < until {
            self.view.wake_at(until);
            return SlotChoice::Wait;
        }
        match self.reservation.take_own(&mut self.view, job, req, &|_| true) {
            Some(node) => SlotChoice::Take(node),
            None => SlotChoice::Any,
        }
    }
}
