//! Preemption by priority level (checkpoint paper §3.1, §3.3.2): when a
//! pending task of a higher level finds no room, running tasks of lower
//! levels on one node give theirs up — killed, or checkpointed (§3.2, §4.1).
//! A dry run on copies of the nodes, as in Kubernetes' preemption: what is
//! free or already being freed by dumps counts first, then victims are taken
//! on the first node where enough of them run, in victim order.

use super::state::ServiceKey;
use super::Scheduler;
use crate::action::Action;
use crate::model::{JobId, PriorityLevel, TaskRef, TaskState};
use crate::policy::PreemptionSpec;
use crate::{Micros, Resources};
use std::cmp::Reverse;
use std::collections::VecDeque;

/// A running task that a higher level may preempt, with its place in victim order.
struct Victim {
    order: (PriorityLevel, u64, Reverse<Micros>, TaskRef),
    resources: Resources,
}

impl Victim {
    fn level(&self) -> PriorityLevel {
        self.order.0
    }
}

impl Scheduler {
    pub(super) fn preempt_by_level(&mut self, now: Micros, spec: PreemptionSpec, out: &mut Vec<Action>) {
        let preemptors = self.preemptors();
        let Some(top) = preemptors.iter().map(|p| p.0).max() else { return };
        let n = self.nodes.len();
        let mut avail: Vec<Resources> = (0..n).map(|i| self.nodes[i].free() + self.freeing[i]).collect();
        let mut victims: Option<Vec<VecDeque<Victim>>> = None;
        // Per node, victims' resources below each level (index = level).
        let mut below: Vec<[Resources; 3]> = Vec::new();
        // Requests (with their level) that found no node even with victims: room only
        // shrinks during the pass, so no request as big at a level as low finds one.
        let mut hopeless: Vec<(PriorityLevel, Resources)> = Vec::new();
        for (level, req) in preemptors {
            if hopeless.iter().any(|&(l, h)| l >= level && h.fits_in(&req)) {
                continue;
            }
            if let Some(i) = (0..n).find(|&i| req.fits_in(&avail[i])) {
                avail[i] -= req;
                continue;
            }
            let victims = victims.get_or_insert_with(|| {
                let v = self.victims(now, top, &spec);
                below = v.iter().map(Self::sums_below).collect();
                v
            });
            let Some(i) = (0..n).find(|&i| req.fits_in(&(avail[i] + below[i][level as usize]))) else {
                hopeless.push((level, req));
                continue;
            };
            let mut have = avail[i];
            while !req.fits_in(&have) {
                let v = victims[i].pop_front().expect("the sum below the level covers the request");
                debug_assert!(v.level() < level, "victims are ordered by level");
                have += v.resources;
                for sum in below[i].iter_mut().skip(v.level() as usize + 1) {
                    *sum -= v.resources;
                }
                self.preempt_victim(now, v.order.3, &spec, out);
            }
            avail[i] = have - req;
        }
    }

    /// The requests of pending tasks above the free level (only they can
    /// preempt), in service order.
    fn preemptors(&self) -> Vec<(PriorityLevel, Resources)> {
        let mut keys: Vec<ServiceKey> = self.queues.iter().flat_map(|q| q.waiting.iter().flatten().copied()).collect();
        keys.sort_unstable();
        let mut out = Vec::new();
        for key in keys {
            let job = &self.jobs[key.2 as usize];
            let level = PriorityLevel::of(job.req.priority);
            if level == PriorityLevel::Free {
                continue;
            }
            for &t in &job.pending {
                out.push((level, job.tasks[t as usize].request));
            }
        }
        out
    }

    /// Running tasks below `top`, per node, in victim order: lowest level
    /// first; then, when checkpointing adaptively, the cheapest to dump
    /// (§5.2.2: memory over the node's checkpoint bandwidth), otherwise the
    /// lowest priority; then the youngest (least work to lose).
    fn victims(&self, now: Micros, top: PriorityLevel, spec: &PreemptionSpec) -> Vec<VecDeque<Victim>> {
        let adaptive = spec.checkpoint.filter(|c| c.adaptive);
        let mut per_node: Vec<Vec<Victim>> = (0..self.nodes.len()).map(|_| Vec::new()).collect();
        for key in self.queues.iter().flat_map(|q| q.active.iter()) {
            let job = &self.jobs[key.2 as usize];
            let level = PriorityLevel::of(job.req.priority);
            if job.running == 0 || level >= top {
                continue;
            }
            for (i, t) in job.tasks.iter().enumerate().filter(|(_, t)| t.state == TaskState::Running) {
                let cost = match &adaptive {
                    Some(c) => Self::dump_estimate(t, c) + self.io_queue_time(t.node, now),
                    None => job.req.priority as u64,
                };
                let task = TaskRef { job: JobId(job.req.id.0), task: i as u32 };
                per_node[t.node.0 as usize]
                    .push(Victim { order: (level, cost, Reverse(t.started), task), resources: t.allocated });
            }
        }
        per_node
            .into_iter()
            .map(|mut v| {
                v.sort_unstable_by_key(|v| v.order);
                v.into()
            })
            .collect()
    }

    /// Per level l, the resources of the victims below l.
    fn sums_below(victims: &VecDeque<Victim>) -> [Resources; 3] {
        let mut sums = [Resources::ZERO; 3];
        for v in victims {
            for s in sums.iter_mut().skip(v.level() as usize + 1) {
                *s += v.resources;
            }
        }
        sums
    }

    /// Kills or checkpoints one victim, as the policy says.
    pub(super) fn preempt_victim(&mut self, now: Micros, task: TaskRef, spec: &PreemptionSpec, out: &mut Vec<Action>) {
        match spec.checkpoint {
            Some(c) => self.checkpoint_or_kill(now, task, c, out),
            None => self.kill(task, out),
        }
    }
}
