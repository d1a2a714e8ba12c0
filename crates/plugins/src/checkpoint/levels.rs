//! Preemption by priority level (checkpoint paper §3.1, §3.3.2): when a
//! pending task of a higher level finds no room, running tasks of lower
//! levels on one node give theirs up — killed, or checkpointed (§3.2, §4.1)
//! by the policy's mechanism.
//! A dry run on copies of the nodes, as in Kubernetes' preemption: what is
//! free or already being freed by dumps counts first, then victims are taken
//! on the first node where enough of them run, in victim order.

use pliant_core::books::{ServiceKey, View};
use pliant_core::model::{JobId, PriorityLevel, TaskRef, TaskState};
use pliant_core::policy::steps::Planner;
use pliant_core::policy::steps::{Mechanism, Take};
use pliant_core::{Micros, Resources};
use std::cmp::Reverse;

/// A running task that a higher level may preempt, with its place in victim order.
#[derive(Clone, Copy)]
struct Victim {
    order: (PriorityLevel, u64, Reverse<Micros>, TaskRef),
    resources: Resources,
}

impl Victim {
    fn level(&self) -> PriorityLevel {
        self.order.0
    }
}

/// The running tasks below the top preempting level, grouped by node. A
/// node's group is put in victim order only when a preemptor first takes
/// from it: one monitor pass looks at every node but takes from few.
struct NodeVictims {
    /// Victims, node 0's first; node i's are `victims[start[i]..start[i + 1]]`.
    victims: Vec<Victim>,
    start: Vec<usize>,
    /// Node i's first victim not yet taken (none taken yet: not yet sorted).
    next: Vec<usize>,
    /// Per node, per level l, the resources of the victims below l not yet taken.
    below: Vec<[Resources; 3]>,
}

impl NodeVictims {
    /// Groups `(node, victim)` pairs by node (a counting sort) and sums them per level.
    fn new(nodes: usize, found: Vec<(usize, Victim)>) -> NodeVictims {
        let mut start = vec![0; nodes + 1];
        let mut below = vec![[Resources::ZERO; 3]; nodes];
        for (node, v) in &found {
            start[node + 1] += 1;
            for sum in below[*node].iter_mut().skip(v.level() as usize + 1) {
                *sum += v.resources;
            }
        }
        for i in 0..nodes {
            start[i + 1] += start[i];
        }
        let mut slot = vec![0; found.len()];
        let mut fill = start.clone();
        for (k, (node, _)) in found.iter().enumerate() {
            slot[fill[*node]] = k;
            fill[*node] += 1;
        }
        let victims = slot.iter().map(|&k| found[k].1).collect();
        NodeVictims { victims, next: start[..nodes].to_vec(), start, below }
    }

    /// Takes node `i`'s next victim in victim order.
    fn take(&mut self, i: usize) -> Option<Victim> {
        let end = self.start[i + 1];
        if self.next[i] == self.start[i] {
            self.victims[self.next[i]..end].sort_unstable_by_key(|v| v.order);
        }
        let v = *self.victims[self.next[i]..end].first()?;
        self.next[i] += 1;
        for sum in self.below[i].iter_mut().skip(v.level() as usize + 1) {
            *sum -= v.resources;
        }
        Some(v)
    }
}

/// Where a first-fit scan over the nodes may start, per request size seen in
/// this pass: no node before the start fits a request that large. Room only
/// shrinks during a pass, except on a node that just gave victims up, which
/// pulls every start back to it.
#[derive(Default)]
struct FirstFit {
    starts: Vec<(Resources, usize)>,
}

impl FirstFit {
    /// The first node that may fit `req`.
    fn start(&self, req: Resources) -> usize {
        self.starts.iter().filter(|(r, _)| r.fits_in(&req)).map(|&(_, i)| i).max().unwrap_or(0)
    }

    /// `req` fit no node before `node` (the node count: none at all).
    fn record(&mut self, req: Resources, node: usize) {
        match self.starts.iter_mut().find(|(r, _)| *r == req) {
            Some(entry) => entry.1 = node,
            None => self.starts.push((req, node)),
        }
    }

    /// `node` may have more room than before.
    fn gained(&mut self, node: usize) {
        for entry in &mut self.starts {
            entry.1 = entry.1.min(node);
        }
    }
}

/// Preemption by priority level (checkpoint paper §3.1).
#[derive(Debug, Clone)]
pub(crate) struct Levels {
    /// Jobs wait in priority order (`JobOrder::Priority`): in each waiting
    /// set the free level's jobs come last, so a look for preemptors stops
    /// at the first of them, and the preemptors are read in service order
    /// as the pass reaches them.
    pub priority_order: bool,
    /// A monitor run's lists, buffers kept between runs.
    pub buffers: LevelsBuffers,
    /// The least request of each level, to end a pass once nothing fits.
    pub floors: Floors,
}

/// Per priority level, the least request (resource by resource) of any
/// task of any job of that level: where it fits no node's room, no task of
/// the level does. Requests never change, so jobs are read once, as they come.
#[derive(Debug, Clone)]
pub(crate) struct Floors {
    least: [Resources; 3],
    /// Jobs below this id are read.
    read: usize,
}

impl Default for Floors {
    fn default() -> Self {
        Floors { least: [Resources::new(u64::MAX, u64::MAX); 3], read: 0 }
    }
}

impl Floors {
    /// Reads the jobs that came since the last call.
    fn update(&mut self, view: &View) {
        let jobs = view.jobs();
        for id in self.read..jobs.len() {
            if let Some(job) = jobs.get(id) {
                let least = &mut self.least[PriorityLevel::of(job.req.priority) as usize];
                for request in job.tasks.requests() {
                    *least = least.min(&request);
                }
            }
        }
        self.read = jobs.len();
    }
}

/// What [`Levels::plan`] works in, kept between monitor runs.
#[derive(Debug, Clone, Default)]
pub(crate) struct LevelsBuffers {
    keys: Vec<ServiceKey>,
    avail: Vec<Resources>,
}

impl Planner for Levels {
    fn clone_box(&self) -> Box<dyn Planner> {
        Box::new(self.clone())
    }

    fn plan(&mut self, view: &View, mechanism: &dyn Mechanism, now: Micros) -> Vec<Take> {
        let mut takes = Vec::new();
        self.floors.update(view);
        let LevelsBuffers { keys, avail } = &mut self.buffers;
        let priority_order = self.priority_order;
        // The preemptors in service order, and the highest level among them
        // (`top`): in priority order, the level of the first with a task.
        let mut top = None;
        let mut preemptors: Box<dyn Iterator<Item = ServiceKey>> = if priority_order {
            Box::new(merged_preemptors(view))
        } else {
            top = preemptor_jobs(view, keys);
            Box::new(keys.iter().copied())
        };
        let Some(first) = preemptors.next() else { return takes };
        let n = view.node_count();
        avail.clear();
        avail.extend((0..n).map(|i| view.node_free(i) + mechanism.freeing(i)));
        let mut victims: Option<NodeVictims> = None;
        // First fit in free room, and in free room plus the victims below each level.
        let mut free_fit = FirstFit::default();
        let mut victim_fit: [FirstFit; 3] = Default::default();
        // Requests (with their level) that found no node even with victims: room only
        // shrinks during the pass, so no request as big at a level as low finds one.
        let mut hopeless: Vec<(PriorityLevel, Resources)> = Vec::new();
        // The preemptors' requests in service order, as runs of equal requests of one job.
        for key in std::iter::once(first).chain(preemptors) {
            let job = view.job(key.2 as usize);
            let level = PriorityLevel::of(job.req.priority);
            for (req, tasks) in job.pending.runs() {
                let top = *top.get_or_insert(level);
                let mut left = u64::from(tasks);
                while left > 0 {
                    // A hopeless request ends its run: the rest are as big, at its level.
                    if hopeless.iter().any(|&(l, h)| l >= level && h.fits_in(&req)) {
                        break;
                    }
                    let fit = (free_fit.start(req)..n).find(|&i| req.fits_in(&avail[i]));
                    free_fit.record(req, fit.unwrap_or(n));
                    if let Some(i) = fit {
                        // The run's next tasks go here too while they fit (the
                        // next first fit starts here), all at once.
                        let here = req.copies_in(&avail[i]).min(left);
                        avail[i] -= req.times(here);
                        left -= here;
                        continue;
                    }
                    left -= 1;
                    let victims = victims.get_or_insert_with(|| {
                        NodeVictims::new(n, find_victims(view, mechanism, now, top, priority_order))
                    });
                    let at_level = &mut victim_fit[level as usize];
                    let fit =
                        (at_level.start(req)..n).find(|&i| req.fits_in(&(avail[i] + victims.below[i][level as usize])));
                    at_level.record(req, fit.unwrap_or(n));
                    let Some(i) = fit else {
                        hopeless.push((level, req));
                        // No level's least request fits anywhere: no preemptor left does.
                        let fits_at = |l: usize, fit: &mut FirstFit| {
                            let floor = self.floors.least[l];
                            let at = (fit.start(floor)..n).find(|&i| floor.fits_in(&(avail[i] + victims.below[i][l])));
                            fit.record(floor, at.unwrap_or(n));
                            at.is_some()
                        };
                        let preempting = PriorityLevel::Middle as usize..=top as usize;
                        if !preempting.into_iter().any(|l| fits_at(l, &mut victim_fit[l])) {
                            return takes;
                        }
                        break;
                    };
                    let mut have = avail[i];
                    while !req.fits_in(&have) {
                        let v = victims.take(i).expect("the sum below the level covers the request");
                        debug_assert!(v.level() < level, "victims are ordered by level");
                        have += v.resources;
                        takes.push(Take { task: v.order.3, shrink_to: None, by: None });
                    }
                    avail[i] = have - req;
                    free_fit.gained(i);
                    victim_fit.iter_mut().for_each(|f| f.gained(i));
                }
            }
        }
        takes
    }
}

/// In priority order, the waiting jobs above the free level in service
/// order, read as they are reached: the queues' waiting sets merged, up to
/// the first of the free level (the rest are too).
fn merged_preemptors(view: &View) -> impl Iterator<Item = ServiceKey> + '_ {
    let mut sets: Vec<_> = view.queues().iter().flat_map(|q| q.waiting.iter()).map(|s| s.iter().peekable()).collect();
    std::iter::from_fn(move || {
        let (i, _) =
            sets.iter_mut().enumerate().filter_map(|(i, s)| s.peek().map(|&&k| (i, k))).min_by_key(|&(_, k)| k)?;
        sets[i].next().copied()
    })
    .take_while(|key| PriorityLevel::of(u8::MAX - key.0) != PriorityLevel::Free)
}

/// The waiting jobs with pending tasks above the free level (only they can
/// preempt), in service order, into `keys` (cleared first); returns the
/// highest level among them, if any. Out of priority order (in it, see
/// [`merged_preemptors`]).
fn preemptor_jobs(view: &View, keys: &mut Vec<ServiceKey>) -> Option<PriorityLevel> {
    keys.clear();
    let mut top = None;
    for set in view.queues().iter().flat_map(|q| q.waiting.iter()) {
        for &key in set {
            let job = view.job(key.2 as usize);
            let level = PriorityLevel::of(job.req.priority);
            if level != PriorityLevel::Free && !job.pending.is_empty() {
                keys.push(key);
                top = top.max(Some(level));
            }
        }
    }
    keys.sort_unstable();
    top
}

/// Running tasks below `top` with their nodes. Victim order: lowest level
/// first; then, when the mechanism estimates costs (adaptive checkpointing),
/// the cheapest (§5.2.2: memory over the node's checkpoint bandwidth),
/// otherwise the lowest priority; then the youngest (least work to lose).
/// The order they are found in does not matter (each node's are sorted);
/// under `priority_order` (see [`Levels`]) the active jobs are walked from
/// the lowest priority up, as far as the first at `top`.
fn find_victims(
    view: &View,
    mechanism: &dyn Mechanism,
    now: Micros,
    top: PriorityLevel,
    priority_order: bool,
) -> Vec<(usize, Victim)> {
    let mut found = Vec::new();
    for queue in view.queues() {
        for key in queue.active.iter().rev() {
            let job = view.job(key.2 as usize);
            let level = PriorityLevel::of(job.req.priority);
            if level >= top && priority_order {
                break;
            }
            if job.running == 0 || level >= top {
                continue;
            }
            // `running` counts the tasks that hold resources: none lie past the last.
            let holders = job.tasks.changed().filter(|(_, t)| t.state.holds_resources());
            for (i, t) in holders.take(job.running as usize).filter(|(_, t)| t.state == TaskState::Running) {
                let task = TaskRef { job: JobId(job.req.id.0), task: i };
                let cost = mechanism.victim_cost(view, now, task).unwrap_or(job.req.priority as u64);
                let order = (level, cost, Reverse(t.started), task);
                found.push((t.node.0 as usize, Victim { order, resources: t.allocated }));
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_fit_skips_nodes_too_small_until_one_gains_room() {
        let mut f = FirstFit::default();
        assert_eq!(f.start(Resources::cores_gb(4, 4)), 0);
        f.record(Resources::cores_gb(4, 4), 7);
        assert_eq!(f.start(Resources::cores_gb(8, 4)), 7, "a bigger request fits no earlier node");
        assert_eq!(f.start(Resources::cores_gb(2, 4)), 0, "a smaller one may");
        f.gained(3);
        assert_eq!(f.start(Resources::cores_gb(4, 4)), 3);
    }

    // Node 1 runs a middle task started at 5 s and two free tasks started at 1 s and
    // 2 s; node 0 one free task. Victim order on node 1: free before middle, the
    // younger free one first; the sums below each level shrink as victims are taken.
    #[test]
    fn node_victims_come_in_victim_order_with_their_sums() {
        let victim = |level, started, task, cores| Victim {
            order: (level, 0, Reverse(started), TaskRef { job: JobId(0), task }),
            resources: Resources::cores_gb(cores, cores),
        };
        let (free, middle) = (PriorityLevel::Free, PriorityLevel::Middle);
        let found = vec![
            (1, victim(middle, 5, 0, 4)),
            (0, victim(free, 1, 1, 1)),
            (1, victim(free, 1, 2, 2)),
            (1, victim(free, 2, 3, 3)),
        ];
        let mut v = NodeVictims::new(2, found);
        assert_eq!(v.below[1], [Resources::ZERO, Resources::cores_gb(5, 5), Resources::cores_gb(9, 9)]);
        let taken: Vec<u32> = std::iter::from_fn(|| v.take(1)).map(|v| v.order.3.task).collect();
        assert_eq!(taken, vec![3, 2, 0]);
        assert_eq!(v.below[1], [Resources::ZERO; 3]);
        assert_eq!(v.take(0).map(|v| v.order.3.task), Some(1));
        assert!(v.take(0).is_none());
    }
}
