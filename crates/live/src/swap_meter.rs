//! The swap rates a live body sees its nodes' reclaims and restores go at,
//! measured as the twin measures them from a journal (one walk for both:
//! [`TaskSwaps`]), kept per node ([`SwapMeter`]) for the planner to price
//! shrinks with.
//!
//! - *Reclaim*: from each preemption that lowers a task's memory (a graceful
//!   step or an immediate preemption), each reclaim report about it counts
//!   the MB it says the task's usage went down by (what was swapped out:
//!   the slack above the resident set is not in it) and the time since the
//!   report before (or the decision), while memory is moving: the agent
//!   reports what came free at every look (50 ms), so a report that comes
//!   [`STALL_US`] or more after the one before ends a stall (the victim's
//!   own use held its pages, or it was frozen and its reclaim retried), and
//!   neither that wait nor what the report brings counts, nor a wait that
//!   brought nothing after the last MB moved. The span runs from the body's
//!   decision to its taking in the report, so a replay frees the memory
//!   when the live core heard it was free.
//! - *Restore*: from each resume of a task that had memory swapped out to
//!   the agent's report that it runs again (made once its swap is back: see
//!   docs/live.md), over the MB swapped out since it last ran.
//!
//! A rate is the time over the MB, in s/GB (as the execution model's
//! `reclaim_s_per_gb` and `restore_s_per_gb`). A node's rate prices the
//! planner's shrinks there once its reclaims (or restores) have moved
//! [`PRICE_MIN_MB`]; it is given to the core again when it moves by
//! [`CHANGE_PERCENT`] or more.

use pliant_core::model::TaskRef;
use pliant_core::{Action, MechanismKind, Micros, SwapRates};
use serde::Serialize;
use std::collections::BTreeMap;

/// Fewest MB moved for a rate to be told at all: below that the reports'
/// delays outweigh the transfer.
pub const MIN_MB: u64 = 32;

/// Fewest MB a node's reclaims (or restores) must have moved before its
/// own rate prices shrinks there: 256 MB is several reclaims of the
/// victims a live cluster shrinks, so one report's delay does not set it.
pub const PRICE_MIN_MB: u64 = 256;

/// How far, in percent, a node's rate must move from the one the core
/// has before it is given again (and journaled).
pub const CHANGE_PERCENT: u64 = 5;

/// A wait this long between one reclaim report and the next, µs, is a stall,
/// not the reclaim's rate. The agent looks every 50 ms and reports whatever
/// came free, and retries a stalled limit write after 10 s; in between, a
/// slow device frees memory in batches as its writes complete (32 MB every
/// 1.8 s at 20 MB/s), and that pace is the device's rate.
pub const STALL_US: Micros = 5_000_000;

/// Which way memory moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Way {
    /// Swapped out by a reclaim.
    Reclaim,
    /// Read back on a resume.
    Restore,
}

/// Memory a task moved, as one report shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Moved {
    /// The task.
    pub task: TaskRef,
    /// Which way.
    pub way: Way,
    /// How long it took, µs.
    pub span: Micros,
    /// MB moved.
    pub mb: u64,
    /// Whether it is the first part of its reclaim (or its restore).
    pub first: bool,
}

/// What a body heard that moves memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SwapHeard {
    /// A reclaim report: the task's usage went down by `freed_mb`.
    Reclaimed {
        /// MB freed since the last report.
        freed_mb: u64,
    },
    /// The task runs again with its memory.
    Resumed,
    /// It ended or was lost: nothing of it stays swapped out.
    Ended,
}

/// A reclaim under way: the time since the last MB moved, when the last
/// report (or the decision) came, and whether any MB moved yet.
#[derive(Debug, Clone, Copy)]
struct Reclaiming {
    waited: Micros,
    last: Micros,
    moved: bool,
}

/// One task's memory as it is followed.
#[derive(Debug, Clone, Copy, Default)]
struct TaskMemory {
    reclaiming: Option<Reclaiming>,
    /// MB swapped out since it last ran.
    swapped_mb: u64,
    /// A resume under way: since when, and the MB to read back.
    restoring: Option<(Micros, u64)>,
}

/// Each task's reclaims and restores, followed through the decisions about
/// it and the reports on it.
#[derive(Debug, Clone, Default)]
pub struct TaskSwaps {
    tasks: BTreeMap<TaskRef, TaskMemory>,
}

impl TaskSwaps {
    /// Follows a decision taken at `now`.
    pub fn decided(&mut self, now: Micros, action: &Action) {
        let Some(task) = action.task() else { return };
        if let Some(p) = action.preemption() {
            let t = self.tasks.entry(task).or_default();
            if matches!(p.mechanism, MechanismKind::Graceful | MechanismKind::Immediate) {
                t.reclaiming = Some(Reclaiming { waited: 0, last: now, moved: false });
            } else {
                self.tasks.remove(&task);
            }
            return;
        }
        match action {
            Action::Resume { .. } => {
                let t = self.tasks.entry(task).or_default();
                t.reclaiming = None;
                t.restoring = (t.swapped_mb > 0).then_some((now, t.swapped_mb));
                t.swapped_mb = 0;
            }
            // Started afresh (or restored from an image): nothing is swapped out.
            _ => {
                self.tasks.remove(&task);
            }
        }
    }

    /// Follows what was heard of `task` at `now`: the memory it shows moved.
    pub fn heard(&mut self, now: Micros, task: TaskRef, heard: SwapHeard) -> Option<Moved> {
        match heard {
            SwapHeard::Reclaimed { freed_mb } => {
                let t = self.tasks.entry(task).or_default();
                t.swapped_mb += freed_mb;
                let r = t.reclaiming.as_mut()?;
                let since = now.saturating_sub(r.last);
                r.last = now;
                if since >= STALL_US {
                    return None;
                }
                r.waited += since;
                if freed_mb == 0 {
                    return None;
                }
                let moved = Moved { task, way: Way::Reclaim, span: r.waited, mb: freed_mb, first: !r.moved };
                (r.waited, r.moved) = (0, true);
                Some(moved)
            }
            SwapHeard::Resumed => {
                let (from, mb) = self.tasks.get_mut(&task)?.restoring.take()?;
                Some(Moved { task, way: Way::Restore, span: now.saturating_sub(from), mb, first: true })
            }
            SwapHeard::Ended => {
                self.tasks.remove(&task);
                None
            }
        }
    }
}

/// What was seen of one rate: reclaims (or restores), the MB they moved
/// and the time that took.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Shown {
    /// Reclaims (or restores) that moved memory.
    pub episodes: u32,
    /// MB they moved.
    pub mb: u64,
    /// Seconds they took.
    pub seconds: f64,
}

impl Shown {
    /// Adds what one report showed moved.
    pub fn add(&mut self, moved: &Moved) {
        self.episodes += u32::from(moved.first);
        self.mb += moved.mb;
        self.seconds += moved.span as f64 / 1e6;
    }

    /// Adds another's.
    pub fn merge(&mut self, other: &Shown) {
        self.episodes += other.episodes;
        self.mb += other.mb;
        self.seconds += other.seconds;
    }

    /// Seconds per GB, if enough memory moved to tell ([`MIN_MB`]).
    pub fn s_per_gb(&self) -> Option<f64> {
        (self.mb >= MIN_MB).then(|| self.seconds / (self.mb as f64 / 1024.0))
    }

    /// µs per GB, once [`PRICE_MIN_MB`] moved: the figure the planner prices with.
    pub fn price(&self) -> Option<Micros> {
        (self.mb >= PRICE_MIN_MB).then(|| (self.seconds * 1e6 * 1024.0 / self.mb as f64).round() as Micros)
    }
}

/// What a body saw of one node's swap.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct NodeSwap {
    /// Its reclaims.
    pub reclaim: Shown,
    /// Its restores.
    pub restore: Shown,
    /// The rates the core prices its shrinks at (`None`: the policy's).
    pub given: SwapRates,
}

impl NodeSwap {
    /// The rates to give the core, if they differ from those it has: a
    /// figure newly measured enough, or one moved by [`CHANGE_PERCENT`].
    fn due(&self) -> Option<SwapRates> {
        let moved = |now: Option<Micros>, given: Option<Micros>| match (now, given) {
            (Some(n), Some(g)) => n.abs_diff(g) * 100 >= g * CHANGE_PERCENT,
            (n, g) => n.is_some() && g.is_none(),
        };
        let (reclaim, restore) = (self.reclaim.price(), self.restore.price());
        (moved(reclaim, self.given.reclaim_per_gb) || moved(restore, self.given.restore_per_gb)).then(|| SwapRates {
            reclaim_per_gb: reclaim.or(self.given.reclaim_per_gb),
            restore_per_gb: restore.or(self.given.restore_per_gb),
        })
    }
}

/// One rate of a node as a body shows it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RateShown {
    /// Seconds per GB the planner prices with.
    pub s_per_gb: f64,
    /// `measured`: the node's own; `default`: the policy's (too little seen yet).
    pub from: &'static str,
    /// MB seen moving there so far.
    pub seen_mb: u64,
}

/// A node's rates as a body shows them (`pliant status`, the web page, `/metrics`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SwapShown {
    /// Swapping out.
    pub reclaim: RateShown,
    /// Reading back.
    pub restore: RateShown,
}

impl NodeSwap {
    /// Its rates as the planner has them, the policy's `reclaim` and
    /// `restore` (per GB) where it has none of the node's own.
    pub fn shown(&self, reclaim: Micros, restore: Micros) -> SwapShown {
        let one = |given: Option<Micros>, policy: Micros, seen: &Shown| RateShown {
            s_per_gb: given.unwrap_or(policy) as f64 / 1e6,
            from: if given.is_some() { "measured" } else { "default" },
            seen_mb: seen.mb,
        };
        SwapShown {
            reclaim: one(self.given.reclaim_per_gb, reclaim, &self.reclaim),
            restore: one(self.given.restore_per_gb, restore, &self.restore),
        }
    }
}

/// A live body's swap rates per node: what it saw, and what it gave the core.
#[derive(Debug, Clone, Default)]
pub struct SwapMeter {
    tasks: TaskSwaps,
    nodes: Vec<NodeSwap>,
}

impl SwapMeter {
    /// A meter for `nodes` nodes.
    pub fn new(nodes: usize) -> SwapMeter {
        SwapMeter { tasks: TaskSwaps::default(), nodes: vec![NodeSwap::default(); nodes] }
    }

    /// Follows a decision taken at `now`.
    pub fn decided(&mut self, now: Micros, action: &Action) {
        self.tasks.decided(now, action);
    }

    /// Follows what was heard at `now` of `task` on `node`.
    pub fn heard(&mut self, now: Micros, task: TaskRef, node: usize, heard: SwapHeard) {
        let Some(moved) = self.tasks.heard(now, task, heard) else { return };
        if let Some(n) = self.nodes.get_mut(node) {
            match moved.way {
                Way::Reclaim => n.reclaim.add(&moved),
                Way::Restore => n.restore.add(&moved),
            }
        }
    }

    /// The nodes whose rates the core should be given, with them.
    pub fn due(&self) -> Vec<(u32, SwapRates)> {
        (self.nodes.iter().enumerate()).filter_map(|(i, n)| Some((i as u32, n.due()?))).collect()
    }

    /// Notes that the core was given `rates` for `node`.
    pub fn given(&mut self, node: usize, rates: SwapRates) {
        if let Some(n) = self.nodes.get_mut(node) {
            n.given = rates;
        }
    }

    /// What was seen of each node, in node order.
    pub fn nodes(&self) -> &[NodeSwap] {
        &self.nodes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pliant_core::model::JobId;
    use pliant_core::{Resources, SECOND};

    const TASK: TaskRef = TaskRef { job: JobId(1), task: 0 };

    fn shrink() -> Action {
        Action::Graceful { task: TASK, to: Resources::new(10, 64) }
    }

    fn reclaimed(freed_mb: u64) -> SwapHeard {
        SwapHeard::Reclaimed { freed_mb }
    }

    // A reclaim of 100 MB at 0.5 s, nothing at 0.75 s, 156 MB at 1 s, a
    // stall of 6 s then 40 MB: two parts of one reclaim, 256 MB in 1 s; a
    // resume 1.5 s before the task runs again reads the 296 MB back.
    #[test]
    fn a_reclaim_counts_what_moved_until_it_stalls_and_a_restore_what_was_swapped() {
        let mut t = TaskSwaps::default();
        t.decided(10 * SECOND, &shrink());
        let at = |s: f64| 10 * SECOND + (s * 1e6) as Micros;
        let first = t.heard(at(0.5), TASK, reclaimed(100)).unwrap();
        assert_eq!(first, Moved { task: TASK, way: Way::Reclaim, span: SECOND / 2, mb: 100, first: true });
        assert_eq!(t.heard(at(0.75), TASK, reclaimed(0)), None);
        let second = t.heard(at(1.0), TASK, reclaimed(156)).unwrap();
        assert_eq!((second.span, second.mb, second.first), (SECOND / 2, 156, false));
        assert_eq!(t.heard(at(7.0), TASK, reclaimed(40)), None, "after a stall");
        t.decided(at(20.0), &Action::Resume { task: TASK, resources: Resources::new(1000, 400) });
        let back = t.heard(at(21.5), TASK, SwapHeard::Resumed).unwrap();
        assert_eq!((back.way, back.span, back.mb), (Way::Restore, 1_500_000, 296));
        assert_eq!(t.heard(at(22.0), TASK, SwapHeard::Resumed), None, "once");
    }

    // A killed task reads nothing back when it runs again; a task never
    // preempted moves nothing.
    #[test]
    fn a_killed_task_reads_nothing_back() {
        let mut t = TaskSwaps::default();
        t.decided(0, &Action::Immediate { task: TASK, footprint: Resources::new(10, 64) });
        assert!(t.heard(SECOND / 2, TASK, reclaimed(64)).is_some());
        t.decided(SECOND, &Action::Kill { task: TASK });
        t.decided(2 * SECOND, &Action::Resume { task: TASK, resources: Resources::new(1000, 400) });
        assert_eq!(t.heard(3 * SECOND, TASK, SwapHeard::Resumed), None);
        let other = TaskRef { job: JobId(2), task: 0 };
        assert_eq!(t.heard(3 * SECOND, other, reclaimed(64)), None);
    }

    // A node's reclaims at 4 s/GB: 128 MB (under PRICE_MIN_MB) gives the
    // core nothing; 256 MB gives it 4 s/GB, the restore left to the
    // policy; 4.13 s/GB (3.3 % off) is not given again, 5 s/GB is.
    #[test]
    fn a_node_s_rate_is_given_once_enough_moved_and_again_when_it_moves() {
        let mut m = SwapMeter::new(2);
        let reclaim = |m: &mut SwapMeter, at: Micros, mb: u64, span: Micros| {
            m.decided(at, &shrink());
            m.heard(at + span, TASK, 1, reclaimed(mb));
        };
        reclaim(&mut m, 0, 128, SECOND / 2);
        assert_eq!(m.due(), vec![]);
        reclaim(&mut m, 10 * SECOND, 128, SECOND / 2);
        let four = SwapRates { reclaim_per_gb: Some(4 * SECOND), restore_per_gb: None };
        assert_eq!(m.due(), vec![(1, four)]);
        m.given(1, four);
        assert_eq!(m.due(), vec![]);
        reclaim(&mut m, 20 * SECOND, 128, 550_000);
        assert_eq!(m.nodes()[1].reclaim.price(), Some(4_133_333));
        assert_eq!(m.due(), vec![]);
        reclaim(&mut m, 30 * SECOND, 128, 950_000);
        assert_eq!(m.nodes()[1].reclaim.price(), Some(5_000_000));
        assert_eq!(m.due(), vec![(1, SwapRates { reclaim_per_gb: Some(5 * SECOND), ..four })]);
        assert_eq!(m.nodes()[1].reclaim.episodes, 4);
        assert_eq!(m.nodes()[0], NodeSwap::default());
    }
}
