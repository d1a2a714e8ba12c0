//! pliant's own planner: the resource monitor of `capacity.rs` (BIG-C §4.2:
//! starved queues take back from queues over their guarantee, the amount
//! sized by COMPUTEDR, Algorithm 1), but the take is sized by the need per
//! resource rather than by whole victims, and each victim gives it back by
//! the cheapest mechanism (`policy/cost.rs`): a CPU-only need is met by
//! freezing or shrinking CPU, a memory need reclaims only that much, and a
//! kill is chosen only where it is cheapest (a task that has barely run).
//! Victims are looked at in Algorithm 2's order (longest remaining job
//! first, youngest container first), which breaks ties, between nodes too. Each choice is kept
//! with the estimates of the alternatives, for `preemptions.csv`.

use super::capacity::for_each_take;
use super::Planner;
use crate::action::MechanismKind;
use crate::model::{JobId, TaskRef, TaskState};
use crate::policy::cost::{coverage, estimate, Choice, Estimate, Need, Rates, Victim, MECHANISMS};
use crate::policy::mechanism::{Mechanism, Take};
use crate::scheduler::view::View;
use crate::{Micros, Resources};
use std::cmp::Reverse;

/// A task that may give something back, with its place in Algorithm 2's
/// order over the whole queue.
#[derive(Debug, Clone, Copy)]
struct Candidate {
    task: TaskRef,
    victim: Victim,
    /// 0 for the first victim Algorithm 2 would take, and so on.
    rank: usize,
}

/// Whether node `i` can carry out `m` for the cost planner: what its body
/// reported, and a checkpoint only where it has a tier.
fn node_can(view: &View, i: usize, m: MechanismKind) -> bool {
    view.node_can(i, m) && (m != MechanismKind::Checkpoint || view.node_has_tier(i))
}

/// The cost planner.
#[derive(Debug, Clone)]
pub(crate) struct Cost {
    /// Per queue, whether it takes back when under its guarantee.
    pub preempts: Vec<bool>,
    /// The rates its estimates use.
    pub rates: Rates,
    /// Launches of a coupled task after which a kill fails its job.
    pub max_attempts: u32,
    /// Choices made since the body last took them.
    pub choices: Vec<Choice>,
}

impl Planner for Cost {
    fn clone_box(&self) -> Box<dyn Planner> {
        Box::new(self.clone())
    }

    fn plan(&mut self, view: &View, mechanism: &dyn Mechanism, now: Micros) -> Vec<Take> {
        let mut takes = Vec::new();
        // What is free or being reclaimed counts node by node in `take` (free
        // room spread over nodes may fit no waiting task), not in the bound.
        let preempts = std::mem::take(&mut self.preempts);
        for_each_take(
            view,
            &preempts,
            true,
            false,
            |p| p,
            |starved, over, p| self.take(view, mechanism, starved, over, p, now, &mut takes),
        );
        self.preempts = preempts;
        takes
    }

    fn take_choices(&mut self) -> Vec<Choice> {
        std::mem::take(&mut self.choices)
    }
}

impl Cost {
    /// Takes up to `p` from queue `over` for queue `starved`'s waiting tasks,
    /// node by node as they would be placed: each waiting task in service
    /// order that fits nowhere goes to the node where freeing its deficit
    /// (its request less the node's free and incoming room) costs least
    /// ([`Cost::cover`]), among equal costs the node holding the victim
    /// Algorithm 2 would take first (the longest remaining job's youngest
    /// task), then the lowest node; the victims there give back the
    /// cheapest way.
    #[allow(clippy::too_many_arguments)]
    fn take(
        &mut self,
        view: &View,
        mechanism: &dyn Mechanism,
        starved: usize,
        over: usize,
        p: Resources,
        now: Micros,
        out: &mut Vec<Take>,
    ) {
        let n = view.node_count();
        // Free room, plus what dumps under way will free.
        let mut avail: Vec<Resources> = (0..n).map(|i| view.node_free(i) + mechanism.freeing(i)).collect();
        for task in view.preempted() {
            let t = view.task(task);
            avail[t.node.0 as usize].mem_mb += t.reclaiming_mb;
        }
        let mut victims = self.victims(view, over, now);
        let mut keys: Vec<_> = view.queues()[starved].waiting.iter().flatten().copied().collect();
        keys.sort_unstable();
        let mut budget = p;
        let mut taken = Vec::new();
        for key in keys {
            let job = view.job(key.2 as usize);
            let mut order = job.pending.iter();
            for (req, tasks) in job.pending.runs() {
                let mut run = order.by_ref().take(tasks as usize);
                for ti in run.by_ref() {
                    if budget.is_zero() {
                        return;
                    }
                    let run_time = job.tasks.estimate(ti as usize).unwrap_or(0);
                    if let Some(i) = (0..n).find(|&i| req.fits_in(&avail[i])) {
                        avail[i] -= req;
                        continue;
                    }
                    // The cheapest node; among equal costs the one whose first victim
                    // comes first in Algorithm 2's order, then the lowest. A node is
                    // given up once its cost passes the cheapest so far.
                    let mut best: Option<(u64, Option<usize>, usize)> = None;
                    let need = |i: usize| Need {
                        left: req.saturating_sub(&avail[i]),
                        waiting_cpu: req.cpu_milli,
                        run: run_time,
                        io_queue: mechanism.io_queue(i, now),
                    };
                    for (i, on_node) in victims.iter().enumerate() {
                        let can = |m| node_can(view, i, m);
                        let bound = best.map_or(u64::MAX, |b| b.0);
                        let mut first: Option<usize> = None;
                        let rank = |k: usize| on_node[k].rank;
                        let step = |k: usize, _: &Estimate, _: &Need| {
                            first = Some(first.map_or(rank(k), |f| f.min(rank(k))));
                        };
                        let Some(cost) = self.greedy(on_node, need(i), can, bound, &mut taken, step) else {
                            continue;
                        };
                        if best.is_none_or(|b| (cost, first, i) < b) {
                            best = Some((cost, first, i));
                        }
                    }
                    // No node can make room for it: nor for the rest of its run.
                    let Some((_, _, i)) = best else { break };
                    let can = |m| node_can(view, i, m);
                    let deficit = req.saturating_sub(&avail[i]);
                    let plan = self.cover(&victims[i], need(i), can, &mut taken);
                    for (k, chosen, options) in plan.into_iter().rev() {
                        let Candidate { task, victim: v, .. } = victims[i].remove(k);
                        avail[i] += chosen.takes;
                        budget = budget.saturating_sub(&chosen.takes);
                        self.choices.push(Choice { at: now, task, held: v.held, need: deficit, chosen, options });
                        let shrink_to = (chosen.mechanism == MechanismKind::Graceful).then(|| v.held - chosen.takes);
                        out.push(Take { task, shrink_to, by: Some(chosen.mechanism) });
                    }
                    avail[i] = avail[i].saturating_sub(&req);
                }
                // The rest of a run that found no node: skipped.
                run.for_each(drop);
            }
        }
    }

    /// The cheapest way found to free `need` from one node's `victims`, per
    /// victim taken (by index, in increasing order): the estimate chosen and
    /// every mechanism's the node `can` carry out ([`Cost::greedy`] names
    /// which). The node's victims can free it: the node was chosen so.
    #[allow(clippy::type_complexity)]
    fn cover(
        &self,
        victims: &[Candidate],
        need: Need,
        can: impl Fn(MechanismKind) -> bool,
        taken: &mut Vec<usize>,
    ) -> Vec<(usize, Estimate, [Option<Estimate>; MECHANISMS.len()])> {
        let mut plan = Vec::new();
        let step = |k: usize, chosen: &Estimate, need: &Need| {
            let options =
                MECHANISMS.map(|m| can(m).then(|| estimate(m, &victims[k].victim, need, &self.rates)).flatten());
            plan.push((k, *chosen, options));
        };
        self.greedy(victims, need, &can, u64::MAX, taken, step).expect("the chosen node's victims cover it");
        plan.sort_by_key(|(k, ..)| *k);
        plan
    }

    /// The cost of the cheapest way found to free `need` from one node's
    /// `victims`, telling `step` each victim taken (its
    /// index) with the estimate chosen and the need it was chosen for.
    /// Greedy: at each step the (victim, mechanism) with the least cost per
    /// part of the deficit left it covers, then the one taking least beyond
    /// it, then the first in victim order. While memory is missing only
    /// options that free memory count (a shrink by the need takes the CPU
    /// with it); only the mechanisms the node `can` carry out. `None` if the
    /// node's victims cannot free it, or once the cost passes `bound` (costs
    /// only add up). `taken` is scratch room.
    #[allow(clippy::too_many_arguments)]
    fn greedy(
        &self,
        victims: &[Candidate],
        need: Need,
        can: impl Fn(MechanismKind) -> bool,
        bound: u64,
        taken: &mut Vec<usize>,
        mut step: impl FnMut(usize, &Estimate, &Need),
    ) -> Option<u64> {
        taken.clear();
        let mut left = need.left;
        let mut cost = 0u64;
        while !left.is_zero() {
            let need = Need { left, ..need };
            let mut best: Option<(f64, u64, usize, Estimate)> = None;
            for (k, Candidate { victim: v, .. }) in victims.iter().enumerate() {
                if taken.contains(&k) {
                    continue;
                }
                // Only what the victim's node can carry out. Suspend in place
                // frees no memory: not while memory is missing. While only CPU
                // is, it takes the same CPU as a checkpoint, stops it as long
                // and no longer, and costs nothing else: a checkpoint is never
                // cheaper then.
                let useful = |m| match m {
                    MechanismKind::Suspend => left.mem_mb == 0,
                    MechanismKind::Checkpoint => left.mem_mb > 0 || !can(MechanismKind::Suspend),
                    _ => true,
                };
                for m in MECHANISMS.into_iter().filter(|&m| useful(m) && can(m)) {
                    let Some(e) = estimate(m, v, &need, &self.rates) else { continue };
                    if left.mem_mb > 0 && e.takes.mem_mb == 0 {
                        continue;
                    }
                    // What it covers is at most all that is left: an option
                    // costing more than the best's cost per part covered
                    // cannot beat it (its own cost per part is no less).
                    let cost = e.cost() as f64;
                    if best.as_ref().is_some_and(|b| cost > b.0) {
                        continue;
                    }
                    let per_part = cost / coverage(&e, left);
                    let beyond = e.takes.saturating_sub(&left);
                    let beyond = beyond.cpu_milli + beyond.mem_mb;
                    if best.as_ref().is_none_or(|b| (per_part, beyond) < (b.0, b.1)) {
                        best = Some((per_part, beyond, k, e));
                    }
                }
                if best.as_ref().is_some_and(|b| b.0 == 0.0 && b.1 == 0) {
                    break;
                }
            }
            let (_, _, k, chosen) = best?;
            cost += chosen.cost();
            if cost > bound {
                return None;
            }
            left = left.saturating_sub(&chosen.takes);
            taken.push(k);
            step(k, &chosen, &need);
        }
        Some(cost)
    }

    /// Queue `queue`'s tasks that may give something back, per node, in
    /// Algorithm 2's order over the queue (longest remaining job first,
    /// youngest first): running ones, and shrunk ones done reclaiming.
    fn victims(&self, view: &View, queue: usize, now: Micros) -> Vec<Vec<Candidate>> {
        let mut found = Vec::new();
        let mut phase_cpu = Vec::new();
        for key in view.queues()[queue].active.iter() {
            let job = view.job(key.2 as usize);
            if job.running == 0 {
                continue;
            }
            let remaining = job.estimated_remaining(now);
            // Per phase, the CPU its running tasks hold (they meet at its
            // barrier), and the largest part of its request a task of it has
            // stopped (shrunk, frozen or restoring: the barrier waits for it).
            phase_cpu.clear();
            phase_cpu.resize(job.phases.len(), (0, 0));
            for (_, t) in job.tasks.changed() {
                let stopped_ppm = match t.state {
                    TaskState::Running => 0,
                    TaskState::Shrunk => {
                        let request = t.request.cpu_milli.max(1);
                        request.saturating_sub(t.allocated.cpu_milli) * 1_000_000 / request
                    }
                    TaskState::Suspended | TaskState::Restoring => 1_000_000,
                    _ => continue,
                };
                let phase = &mut phase_cpu[t.phase as usize];
                if matches!(t.state, TaskState::Running | TaskState::Shrunk) {
                    phase.0 += t.allocated.cpu_milli;
                }
                phase.1 = phase.1.max(stopped_ppm);
            }
            for (i, t) in job.tasks.changed() {
                let running = t.state == TaskState::Running;
                let shrunk = t.state == TaskState::Shrunk && t.reclaiming_mb == 0;
                if !(running || shrunk) {
                    continue;
                }
                let coupled = job.phases[t.phase as usize].coupled;
                let victim = Victim {
                    held: t.allocated,
                    request: t.request,
                    ran: t.ran(now),
                    killable: !(coupled && t.attempts >= self.max_attempts),
                    running,
                    has_image: t.image.is_some(),
                    siblings_cpu: if coupled { phase_cpu[t.phase as usize].0 - t.allocated.cpu_milli } else { 0 },
                    phase_stopped_ppm: if coupled { phase_cpu[t.phase as usize].1 } else { 0 },
                };
                let task = TaskRef { job: JobId(job.req.id.0), task: i };
                let order = (Reverse(remaining), Reverse(job.req.id), Reverse(t.started), Reverse(task));
                found.push((t.node.0 as usize, order, victim));
            }
        }
        found.sort_unstable_by_key(|(_, order, _)| *order);
        let mut by_node: Vec<Vec<Candidate>> = vec![Vec::new(); view.node_count()];
        for (rank, (node, order, victim)) in found.into_iter().enumerate() {
            by_node[node].push(Candidate { task: order.3 .0, victim, rank });
        }
        by_node
    }
}
