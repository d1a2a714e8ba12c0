//! The swap rates a live run showed, read from its journal, and the rates
//! the replay runs with (each with where it came from).
//!
//! The journal is walked as the live body measured its nodes' rates while
//! it ran (`pliant_live::swap_meter`, which says how a reclaim and a
//! restore are timed), for each task and over the run. The replay runs
//! each task at its own rates where it has them, at the run's where it
//! does not: the swap rate of a machine shared with other work moves within
//! a run (docs/live.md), and one victim's reclaim may go at half another's.
//! Apart from those, the replay's planner is given each node's measured
//! rates at the instants the live one was (the journal's `swap_rates`
//! events), so that it prices preemptions as the live planner did.

use pliant_live::protocol::AgentReport;
pub use pliant_live::swap_meter::Shown;
use pliant_live::swap_meter::{SwapHeard, TaskSwaps, Way};
use pliant_manager::events::Event;
use pliant_manager::journal::Step;
use pliant_sim::{NodeSwapRates, TaskSwapRates};
use serde::Serialize;
use std::collections::BTreeMap;

/// What a run's journal shows of both rates, over the run and per task.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct JournalRates {
    /// Swapping out, over the run.
    pub reclaim: Shown,
    /// Reading back after a resume, over the run.
    pub restore: Shown,
    /// The same for each task that swapped, in task order.
    pub tasks: Vec<TaskShown>,
}

/// What the journal shows of one task's rates.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct TaskShown {
    /// Its job.
    pub job: u32,
    /// The task within the job.
    pub task: u32,
    /// Swapping it out.
    pub reclaim: Shown,
    /// Reading it back.
    pub restore: Shown,
}

/// Walks a run's journal for the rates it shows.
pub fn from_journal(steps: &[Step]) -> JournalRates {
    let mut swaps = TaskSwaps::default();
    let mut tasks: BTreeMap<(u32, u32), TaskShown> = BTreeMap::new();
    for step in steps {
        let now = step.now;
        for event in &step.events {
            let Event::Report { report, .. } = event else { continue };
            let heard = match report {
                AgentReport::Reclaimed { freed_mb, .. } => SwapHeard::Reclaimed { freed_mb: *freed_mb },
                AgentReport::Resumed { .. } => SwapHeard::Resumed,
                AgentReport::Exited { .. } | AgentReport::Lost { .. } => SwapHeard::Ended,
                _ => continue,
            };
            let Some(moved) = swaps.heard(now, report.task(), heard) else { continue };
            let (job, task) = (moved.task.job.0, moved.task.task);
            let t = tasks.entry((job, task)).or_insert_with(|| TaskShown { job, task, ..TaskShown::default() });
            match moved.way {
                Way::Reclaim => t.reclaim.add(&moved),
                Way::Restore => t.restore.add(&moved),
            }
        }
        for action in &step.actions {
            swaps.decided(now, action);
        }
    }
    let mut rates = JournalRates::default();
    for t in tasks.into_values() {
        rates.reclaim.merge(&t.reclaim);
        rates.restore.merge(&t.restore);
        rates.tasks.push(t);
    }
    rates
}

/// A rate the replay ran with.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RateUsed {
    /// Seconds per GB.
    pub s_per_gb: f64,
    /// Where it came from: `journal` (the run's own), or what the settings
    /// say (`--config FILE`, `--set`, `default`).
    pub from: String,
    /// What the journal showed of it (whether used or not).
    pub journal: Shown,
}

/// The swap rates the replay ran with.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rates {
    /// `reclaim_s_per_gb`: every task's but those in `tasks` with their own.
    pub reclaim: RateUsed,
    /// `restore_s_per_gb`, likewise.
    pub restore: RateUsed,
    /// Tasks replayed at their own rates, as the journal shows them
    /// (`None`: the one above; empty with `--no-journal-rates`).
    pub tasks: Vec<TaskSwapRates>,
    /// The swap rates the live planner was given per node, from when
    /// ([`given`]); absent where it was given none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<NodeSwapRates>,
}

/// The swap rates a live body gave its core per node, from the step that
/// took each in, in journal order.
pub fn given(steps: &[Step]) -> Vec<NodeSwapRates> {
    let mut given = Vec::new();
    for step in steps {
        for event in &step.events {
            if let Event::SwapRates { node, rates } = *event {
                given.push(NodeSwapRates { at: step.now, node, rates });
            }
        }
    }
    given
}

impl JournalRates {
    /// Each task's own rates, where it moved enough memory to tell.
    pub fn per_task(&self) -> Vec<TaskSwapRates> {
        self.tasks
            .iter()
            .map(|t| TaskSwapRates {
                job: t.job,
                task: t.task,
                reclaim_s_per_gb: t.reclaim.s_per_gb(),
                restore_s_per_gb: t.restore.s_per_gb(),
            })
            .filter(|t| t.reclaim_s_per_gb.is_some() || t.restore_s_per_gb.is_some())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pliant_core::model::{JobId, NodeId, TaskRef};
    use pliant_core::{Action, Micros, Resources};

    const TASK: TaskRef = TaskRef { job: JobId(1), task: 0 };

    fn report(report: AgentReport) -> Event {
        Event::Report { node: 0, report }
    }

    fn reclaimed(freed_mb: u64) -> Event {
        report(AgentReport::Reclaimed { task: TASK, mem_mb: freed_mb + 10, freed_mb, took_ms: 1 })
    }

    fn step(now_s: f64, events: Vec<Event>, actions: &[Action]) -> Step {
        Step { now: (now_s * 1e6) as Micros, events, monitor: false, actions: actions.to_vec() }
    }

    // A task shrunk at 4 s reports 100 MB swapped at 4.5 s and 156 MB at 5 s
    // (256 MB in 1 s: 4 s/GB), is shrunk again at 7 s with nothing more to
    // give, resumed at 20 s and reported running at 21.5 s (256 MB read
    // back in 1.5 s: 6 s/GB).
    #[test]
    fn a_reclaim_runs_from_the_decision_to_its_last_report_and_a_restore_to_the_resumed_report() {
        let shrink = Action::Graceful { task: TASK, to: Resources::new(10, 64) };
        let resume = Action::Resume { task: TASK, resources: Resources::new(1000, 400) };
        let steps = [
            step(4.0, vec![], std::slice::from_ref(&shrink)),
            step(4.5, vec![reclaimed(100)], &[]),
            step(5.0, vec![reclaimed(156)], &[]),
            step(7.0, vec![], &[shrink]),
            step(20.0, vec![], &[resume]),
            step(21.5, vec![report(AgentReport::Resumed { task: TASK })], &[]),
        ];
        let r = from_journal(&steps);
        assert_eq!(r.reclaim, Shown { episodes: 1, mb: 256, seconds: 1.0 });
        assert_eq!(r.reclaim.s_per_gb(), Some(4.0));
        assert_eq!(r.restore, Shown { episodes: 1, mb: 256, seconds: 1.5 });
        assert_eq!(r.restore.s_per_gb(), Some(6.0));
        let own = TaskSwapRates { job: 1, task: 0, reclaim_s_per_gb: Some(4.0), restore_s_per_gb: Some(6.0) };
        assert_eq!(r.per_task(), vec![own]);
    }

    // A kill ends the task's memory: nothing is read back when it runs again,
    // and a run that swapped out less than MIN_MB gives no rate.
    #[test]
    fn a_killed_task_reads_nothing_back_and_a_small_reclaim_gives_no_rate() {
        let immediate = Action::Immediate { task: TASK, footprint: Resources::new(10, 64) };
        let kill = Action::Kill { task: TASK };
        let launch = Action::Launch { task: TASK, node: NodeId(0), resources: Resources::new(1000, 400) };
        let steps = [
            step(1.0, vec![], &[immediate]),
            step(1.5, vec![reclaimed(20)], &[kill]),
            step(3.0, vec![], &[launch]),
            step(4.0, vec![report(AgentReport::Resumed { task: TASK })], &[]),
        ];
        let r = from_journal(&steps);
        assert_eq!(r.reclaim, Shown { episodes: 1, mb: 20, seconds: 0.5 });
        assert_eq!(r.reclaim.s_per_gb(), None);
        assert_eq!(r.restore, Shown::default());
        assert_eq!(r.per_task(), vec![]);
    }

    // A reclaim that stalls: 200 MB in 1 s, nothing for 6 s, then 40 MB
    // (freed once the victim was frozen): the rate is the first second's,
    // 5.12 s/GB; the stall and what followed it are left out.
    #[test]
    fn a_stall_and_what_follows_it_are_not_the_reclaim_rate() {
        let shrink = Action::Graceful { task: TASK, to: Resources::new(10, 64) };
        let steps = [
            step(2.0, vec![], &[shrink]),
            step(2.5, vec![reclaimed(120)], &[]),
            step(3.0, vec![reclaimed(80)], &[]),
            step(9.0, vec![reclaimed(40)], &[]),
        ];
        let r = from_journal(&steps);
        assert_eq!(r.reclaim, Shown { episodes: 1, mb: 200, seconds: 1.0 });
        assert_eq!(r.reclaim.s_per_gb(), Some(5.12));
    }

    // Two victims at their own rates: 256 MB in 0.5 s (2 s/GB) and 256 MB
    // in 1 s (4 s/GB); the run's rate is 3 s/GB.
    #[test]
    fn each_task_has_its_own_rate_and_the_run_the_sum() {
        let shrink = |job| Action::Graceful { task: TaskRef { job: JobId(job), task: 0 }, to: Resources::new(10, 64) };
        let freed = |job, freed_mb| {
            let task = TaskRef { job: JobId(job), task: 0 };
            report(AgentReport::Reclaimed { task, mem_mb: freed_mb, freed_mb, took_ms: 1 })
        };
        let steps = [
            step(1.0, vec![], &[shrink(0), shrink(1)]),
            step(1.5, vec![freed(0, 256), freed(1, 128)], &[]),
            step(2.0, vec![freed(1, 128)], &[]),
        ];
        let r = from_journal(&steps);
        assert_eq!(r.reclaim.s_per_gb(), Some(3.0));
        let own: Vec<_> = r.per_task().iter().map(|t| (t.job, t.reclaim_s_per_gb, t.restore_s_per_gb)).collect();
        assert_eq!(own, vec![(0, Some(2.0), None), (1, Some(4.0), None)]);
    }
}
