//! The swap rates a live run showed, read from its journal, and the rates
//! the replay runs with (each with where it came from).
//!
//! - *Reclaim*: from each preemption that lowers a task's memory (a graceful
//!   step or an immediate preemption) to the last reclaim report that
//!   follows it before the task's next action, over the MB those reports say
//!   the task's usage went down by (what was swapped out: the slack above the
//!   resident set is not in it, and the simulator frees that at once), while
//!   memory is moving: the agent reports what came free at every look
//!   (50 ms), so a report that comes [`STALL_US`] or more after the one
//!   before ends a stall (the victim's own use held its pages, or it was
//!   frozen and its reclaim retried), and neither that wait nor what the
//!   report brings counts. The span runs from the manager's decision to its
//!   taking in the report, so the replay frees the memory when the live core
//!   heard it was free.
//! - *Restore*: from each resume of a task that had memory swapped out to
//!   the agent's report that it runs again (made once its swap is back: see
//!   docs/live.md), over the MB swapped out since it last ran.
//!
//! A rate is the sum of the spans over the sum of the MB, in s/GB (as the
//! execution model's `reclaim_s_per_gb` and `restore_s_per_gb`), for each
//! task and over the run; less than [`MIN_MB`] moved gives none. The replay
//! runs each task at its own rates where it has them, at the run's where it
//! does not: the swap rate of a machine shared with other work moves within
//! a run (docs/live.md), and one victim's reclaim may go at half another's.

use crate::decision::{Decision, Kind};
use pliant_core::{MechanismKind, Micros};
use pliant_live::protocol::AgentReport;
use pliant_manager::events::Event;
use pliant_manager::journal::Step;
use pliant_sim::TaskSwapRates;
use serde::Serialize;
use std::collections::BTreeMap;

/// Fewest MB a run must have swapped out (or read back) for its own rate:
/// below that the reports' delays outweigh the transfer.
pub const MIN_MB: u64 = 32;

/// A wait this long between one reclaim report and the next, µs, is a stall,
/// not the reclaim's rate (the agent looks every 50 ms and reports whatever
/// came free).
pub const STALL_US: Micros = 1_000_000;

/// What a run's journal shows of one rate.
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
    fn add(&mut self, from: Micros, to: Micros, mb: u64) {
        self.add_span(to.saturating_sub(from), mb);
    }

    fn add_span(&mut self, span: Micros, mb: u64) {
        if mb > 0 {
            self.episodes += 1;
            self.mb += mb;
            self.seconds += span as f64 / 1e6;
        }
    }

    fn merge(&mut self, other: &Shown) {
        self.episodes += other.episodes;
        self.mb += other.mb;
        self.seconds += other.seconds;
    }

    /// Seconds per GB, if the run moved enough memory to tell.
    pub fn s_per_gb(&self) -> Option<f64> {
        (self.mb >= MIN_MB).then(|| self.seconds / (self.mb as f64 / 1024.0))
    }
}

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

/// A reclaim under way: the MB reported while memory moved and the time
/// that took, and when the last report (or the decision) came.
#[derive(Debug, Clone, Copy)]
struct Reclaiming {
    moving: Micros,
    mb: u64,
    last: Micros,
}

/// One task's memory as the journal is walked.
#[derive(Debug, Clone, Copy, Default)]
struct TaskMemory {
    reclaiming: Option<Reclaiming>,
    /// MB swapped out since it last ran.
    swapped_mb: u64,
    /// A resume under way: since when, and the MB to read back.
    restoring: Option<(Micros, u64)>,
    /// What it showed so far.
    shown: TaskShown,
}

impl TaskMemory {
    fn close_reclaim(&mut self) {
        if let Some(r) = self.reclaiming.take() {
            self.shown.reclaim.add_span(r.moving, r.mb);
        }
    }

    /// The task starts afresh (placed, killed, ended): nothing is swapped out.
    fn reset(&mut self) {
        self.close_reclaim();
        *self = TaskMemory { shown: self.shown, ..TaskMemory::default() };
    }
}

/// Task `job`.`task`'s memory, from its first mention on.
fn memory(tasks: &mut BTreeMap<(u32, u32), TaskMemory>, job: u32, task: u32) -> &mut TaskMemory {
    tasks.entry((job, task)).or_insert_with(|| TaskMemory {
        shown: TaskShown { job, task, ..TaskShown::default() },
        ..TaskMemory::default()
    })
}

/// Walks a run's journal for the rates it shows.
pub fn from_journal(steps: &[Step]) -> JournalRates {
    let mut tasks: BTreeMap<(u32, u32), TaskMemory> = BTreeMap::new();
    for step in steps {
        let now = step.now;
        for event in &step.events {
            let Event::Report { report, .. } = event else { continue };
            let task = report.task();
            let t = memory(&mut tasks, task.job.0, task.task);
            match report {
                AgentReport::Reclaimed { freed_mb, .. } => {
                    t.swapped_mb += freed_mb;
                    if let Some(r) = &mut t.reclaiming {
                        if now - r.last < STALL_US {
                            r.mb += freed_mb;
                            r.moving += now - r.last;
                        }
                        r.last = now;
                    }
                }
                AgentReport::Resumed { .. } => {
                    if let Some((from, mb)) = t.restoring.take() {
                        t.shown.restore.add(from, now, mb);
                    }
                }
                AgentReport::Exited { .. } | AgentReport::Lost { .. } => t.reset(),
                _ => {}
            }
        }
        for action in &step.actions {
            let Some(d) = Decision::from_action(now, action) else { continue };
            let t = memory(&mut tasks, d.job, d.task);
            t.close_reclaim();
            match d.kind {
                Kind::Preempt { mechanism: MechanismKind::Graceful | MechanismKind::Immediate } => {
                    t.reclaiming = Some(Reclaiming { moving: 0, mb: 0, last: now });
                }
                Kind::Resume => {
                    t.restoring = (t.swapped_mb > 0).then_some((now, t.swapped_mb));
                    t.swapped_mb = 0;
                }
                Kind::Place { .. } | Kind::Preempt { .. } => t.reset(),
            }
        }
    }
    let mut rates = JournalRates::default();
    for t in tasks.values_mut() {
        t.close_reclaim();
        let s = t.shown;
        if s.reclaim.episodes + s.restore.episodes > 0 {
            rates.reclaim.merge(&s.reclaim);
            rates.restore.merge(&s.restore);
            rates.tasks.push(s);
        }
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
    use pliant_core::{Action, Resources};

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

    // A reclaim that stalls: 200 MB in 1 s, nothing for 4 s, then 40 MB
    // (freed once the victim was frozen): the rate is the first second's,
    // 5.12 s/GB; the stall and what followed it are left out.
    #[test]
    fn a_stall_and_what_follows_it_are_not_the_reclaim_rate() {
        let shrink = Action::Graceful { task: TASK, to: Resources::new(10, 64) };
        let steps = [
            step(2.0, vec![], &[shrink]),
            step(2.5, vec![reclaimed(120)], &[]),
            step(3.0, vec![reclaimed(80)], &[]),
            step(7.0, vec![reclaimed(40)], &[]),
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
