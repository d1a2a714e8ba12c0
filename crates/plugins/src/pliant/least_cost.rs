//! pliant's own planner: the resource monitor of `bigc/capacity.rs` (BIG-C §4.2:
//! starved queues take back from queues over their guarantee, the amount
//! sized by COMPUTEDR, Algorithm 1), but the take is sized by the need per
//! resource rather than by whole victims, and each victim gives it back by
//! the cheapest mechanism (`pliant_core::policy::cost`): a CPU-only need is met by
//! freezing or shrinking CPU, a memory need reclaims only that much, and a
//! kill is chosen only where it is cheapest (a task that has barely run).
//! Victims are looked at in Algorithm 2's order (longest remaining job
//! first, youngest container first), which breaks ties, between nodes too. Each choice is kept
//! with the estimates of the alternatives, for `preemptions.csv`.

use crate::bigc::for_each_take;
use pliant_core::action::MechanismKind;
use pliant_core::books::View;
use pliant_core::model::{JobId, TaskRef, TaskState};
use pliant_core::policy::cost::{
    core_time, coverage, estimate, spark_max_executor_failures, Choice, Estimate, Floor, Need, Rates, Victim,
    MECHANISMS,
};
use pliant_core::policy::steps::Planner;
use pliant_core::policy::steps::{Mechanism, Take};
use pliant_core::{Micros, Resources};
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
/// reported it can do, at rates the core knows.
fn node_can(view: &View, i: usize, m: MechanismKind) -> bool {
    view.node_can(i, m) && view.node_priced(i, m)
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
        // Free room and memory coming back, plus what dumps under way will free.
        let mut avail = view.room_with_reclaims();
        for (i, room) in avail.iter_mut().enumerate() {
            *room += mechanism.freeing(i);
        }
        let mut victims = self.victims(view, mechanism, over, now);
        // Per node, the floor of its victims' costs and the CPU need it is for.
        let mut floors: Vec<Option<(u64, Option<Floor>)>> = vec![None; n];
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
                    let need = |i: usize| Need {
                        left: req.saturating_sub(&avail[i]),
                        waiting_cpu: req.cpu_milli,
                        run: run_time,
                        io_queue: mechanism.io_queue(i, now),
                        swap: view.node_swap_rates(i),
                    };
                    let left_cpu = |i: usize| req.saturating_sub(&avail[i]).cpu_milli;
                    let can = |i: usize, m| node_can(view, i, m);
                    let best = self.cheapest_node(&victims, &mut floors, left_cpu, need, can, run_time, &mut taken);
                    // No node can make room for it: nor for the rest of its run.
                    let Some(i) = best else { break };
                    let can = |m| node_can(view, i, m);
                    let deficit = req.saturating_sub(&avail[i]);
                    let plan = self.cover(&victims[i], need(i), can, &mut taken);
                    for (k, chosen, options) in plan.into_iter().rev() {
                        let Candidate { task, victim: v, .. } = victims[i].remove(k);
                        floors[i] = None;
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

    /// The node where freeing `need(i)` costs least ([`Cost::greedy`] on
    /// its `victims`, only the mechanisms it `can` carry out); among equal
    /// costs the one whose first victim taken comes first in Algorithm 2's
    /// order, then the lowest. `None` if no node's victims can free it.
    /// A node is skipped once its victims' floor for the waiting task's
    /// `run` (kept in `floors` for the CPU need `left_cpu(i)`, `None` where
    /// its victims changed) and its first victim's place cannot beat the
    /// best so far, and given up once its cost passes it: the same node as
    /// trying each in full (test `skipping_by_floors_finds_the_node_every_node_finds`).
    #[allow(clippy::too_many_arguments)]
    fn cheapest_node(
        &self,
        victims: &[Vec<Candidate>],
        floors: &mut [Option<(u64, Option<Floor>)>],
        left_cpu: impl Fn(usize) -> u64,
        need: impl Fn(usize) -> Need,
        can: impl Fn(usize, MechanismKind) -> bool,
        run: Micros,
        taken: &mut Vec<usize>,
    ) -> Option<usize> {
        // (cost, the rank of its first victim taken, node)
        let mut best: Option<(u64, usize, usize)> = None;
        for (i, on_node) in victims.iter().enumerate() {
            // Victims are in rank order: the first is the node's least.
            let Some(least_rank) = on_node.first().map(|c| c.rank) else { continue };
            let cpu = left_cpu(i);
            let floor = match floors[i] {
                Some((for_cpu, floor)) if for_cpu == cpu => floor,
                _ => {
                    let floor = on_node.iter().filter_map(|c| Floor::of(&c.victim, cpu)).reduce(Floor::min);
                    floors[i] = Some((cpu, floor));
                    floor
                }
            };
            // No victim there holds any of the CPU the need lacks: nothing to try.
            let Some(floor) = floor else { continue };
            if best.is_some_and(|b| (floor.at(run), least_rank) > (b.0, b.1)) {
                continue;
            }
            let mut first = usize::MAX;
            let step = |k: usize, _: &Estimate, _: &Need| first = first.min(on_node[k].rank);
            let bound = best.map_or(u64::MAX, |b| b.0);
            let Some(cost) = self.greedy(on_node, need(i), |m| can(i, m), bound, taken, step) else {
                continue;
            };
            if best.is_none_or(|b| (cost, first, i) < b) {
                best = Some((cost, first, i));
            }
        }
        best.map(|b| b.2)
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
    fn victims(&self, view: &View, mechanism: &dyn Mechanism, queue: usize, now: Micros) -> Vec<Vec<Candidate>> {
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
            // Spark's executor-failure limit (`spark_max_executor_failures`):
            // a kill that reaches it fails the application attempt, and YARN
            // relaunches the job from zero; what its tasks ran is lost. (No
            // limit is under 3: a job killed less is not summed.)
            let job_ran: u64 = match job.kills + 1 >= spark_max_executor_failures(0) {
                false => 0,
                true => job
                    .tasks
                    .changed()
                    .filter(|(_, t)| matches!(t.state, TaskState::Running | TaskState::Shrunk))
                    .map(|(_, t)| core_time(t.allocated.cpu_milli, t.ran(now)))
                    .fold(0, u64::saturating_add),
            };
            for (i, t) in job.tasks.changed() {
                let running = t.state == TaskState::Running;
                let shrunk = t.state == TaskState::Shrunk && t.reclaiming_mb == 0;
                if !(running || shrunk) {
                    continue;
                }
                let phase = &job.phases[t.phase as usize];
                let coupled = phase.coupled;
                let relaunches = coupled && job.kills + 1 >= spark_max_executor_failures(phase.tasks.len());
                let own = core_time(t.allocated.cpu_milli, t.ran(now));
                let victim = Victim {
                    held: t.allocated,
                    request: t.request,
                    ran: t.ran(now),
                    killable: !(coupled && t.attempts >= self.max_attempts),
                    relaunch: if relaunches { job_ran.saturating_sub(own) } else { 0 },
                    running,
                    has_image: mechanism.image(TaskRef { job: JobId(job.req.id.0), task: i }).is_some(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use pliant_core::policy::strategies::any_victim;
    use pliant_core::SwapRates;
    use proptest::prelude::*;

    /// The node [`Cost::cheapest_node`] must find, by trying every node's
    /// cover in full: the least (cost, first victim's rank, node).
    fn every_node(
        cost: &Cost,
        victims: &[Vec<Candidate>],
        need: impl Fn(usize) -> Need,
        can: impl Fn(usize, MechanismKind) -> bool,
    ) -> Option<usize> {
        let mut taken = Vec::new();
        let cover = |i: usize| {
            let mut first = usize::MAX;
            let step = |k: usize, _: &Estimate, _: &Need| first = first.min(victims[i][k].rank);
            let cost = cost.greedy(&victims[i], need(i), |m| can(i, m), u64::MAX, &mut taken, step)?;
            Some((cost, first, i))
        };
        (0..victims.len()).filter_map(cover).min().map(|b| b.2)
    }

    /// A cluster: per node its victims, drawn from a few kinds so that
    /// nodes tie, in Algorithm 2's order by a drawn key; its free room; its
    /// dump queue; the mechanisms it can carry out.
    #[allow(clippy::type_complexity)]
    fn any_cluster() -> impl Strategy<Value = (Vec<Vec<Candidate>>, Vec<Resources>, Vec<Micros>, Vec<[bool; 4]>)> {
        let node = (
            prop::collection::vec((0usize..3, any::<u16>()), 0..4),
            (prop::sample::select(vec![0u64, 1000, 4000]), prop::sample::select(vec![0u64, 512, 8192])),
            prop_oneof![Just(0u64), Just(3_000_000)],
            prop_oneof![Just([true; 4]), any::<[bool; 4]>()],
        );
        (prop::collection::vec(any_victim(), 3), prop::collection::vec(node, 1..12)).prop_map(|(kinds, nodes)| {
            let mut order: Vec<(u16, usize, usize)> = Vec::new();
            for (i, (on_node, ..)) in nodes.iter().enumerate() {
                order.extend(on_node.iter().enumerate().map(|(k, &(_, key))| (key, i, k)));
            }
            order.sort_unstable();
            let mut victims: Vec<Vec<Candidate>> = vec![Vec::new(); nodes.len()];
            for (rank, &(_, i, k)) in order.iter().enumerate() {
                let task = TaskRef { job: JobId(i as u32), task: k as u32 };
                victims[i].push(Candidate { task, victim: kinds[nodes[i].0[k].0], rank });
            }
            let avail = nodes.iter().map(|n| Resources::new(n.1 .0, n.1 .1)).collect();
            (victims, avail, nodes.iter().map(|n| n.2).collect(), nodes.iter().map(|n| n.3).collect())
        })
    }

    proptest! {
        // For waiting tasks in turn on one cluster, as `Cost::take` places
        // them (the chosen node's victims taken, their floors dropped),
        // skipping nodes by their victims' floors finds the node that
        // trying every node in full finds, ties included.
        #[test]
        fn skipping_by_floors_finds_the_node_every_node_finds(
            (mut victims, mut avail, io, can_do) in any_cluster(),
            tasks in prop::collection::vec((prop::sample::select(vec![500u64, 2000, 4000, 8000]),
                prop::sample::select(vec![0u64, 1024, 4096]), prop_oneof![Just(0u64), 0u64..60_000_000]), 1..6),
            tier in any::<bool>(),
        ) {
            let rates = Rates { checkpoint: if tier { Rates::default().checkpoint } else { None }, ..Rates::default() };
            let cost = Cost { preempts: Vec::new(), rates, max_attempts: 4, choices: Vec::new() };
            let mut floors = vec![None; victims.len()];
            let mut taken = Vec::new();
            let can = |i: usize, m: MechanismKind| MECHANISMS.iter().zip(can_do[i]).any(|(&k, c)| k == m && c);
            for (cpu, mem, run) in tasks {
                let req = Resources::new(cpu, mem);
                if let Some(i) = (0..avail.len()).find(|&i| req.fits_in(&avail[i])) {
                    avail[i] -= req;
                    continue;
                }
                let need = |i: usize| Need { left: req.saturating_sub(&avail[i]), waiting_cpu: cpu, run, io_queue: io[i], swap: SwapRates::default() };
                let left_cpu = |i: usize| req.saturating_sub(&avail[i]).cpu_milli;
                let found = cost.cheapest_node(&victims, &mut floors, left_cpu, need, can, run, &mut taken);
                prop_assert_eq!(found, every_node(&cost, &victims, need, can));
                let Some(i) = found else { continue };
                for (k, chosen, _) in cost.cover(&victims[i], need(i), |m| can(i, m), &mut taken).into_iter().rev() {
                    victims[i].remove(k);
                    floors[i] = None;
                    avail[i] += chosen.takes;
                }
                avail[i] = avail[i].saturating_sub(&req);
            }
        }
    }
}
