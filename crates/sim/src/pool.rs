//! A Spark pool phase: the stage's tasks wait in a
//! pool that the phase's executors pull from as their cores free up, one task
//! per core; stages run one after another with a barrier between them.
//!
//! Every in-flight task of an executor progresses at the executor's own rate,
//! so a shrunk executor completes proportionally fewer tasks and a frozen one
//! holds its in-flight tasks (the stage cannot end before they do). A killed
//! executor's in-flight tasks go back to the pool, their work lost; under
//! Spark's own semantics (`kill_model=spark`) so does every output it holds,
//! and a stage that reads it fails: see [`PoolExec::lose`].

use pliant_core::Micros;
use pliant_workload::StageTasks;

/// `spark.stage.maxConsecutiveAttempts`'s default: a stage whose attempts
/// fail on fetch failures this many times in a row aborts its job, which
/// fails the application (Spark's configuration reference, "Scheduling").
pub(crate) const STAGE_MAX_ATTEMPTS: u8 = 4;

/// What losing an executor cost its phase.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Lost {
    /// Work to run again, core-µs (one core per stage task).
    pub work: f64,
    /// The application attempt fails: a stage failed its last attempt.
    pub app_failed: bool,
}

/// The true state of one pool phase.
#[derive(Debug, Clone)]
pub(crate) struct PoolExec {
    stages: Vec<StageTasks>,
    /// The stage whose tasks run now (`stages.len()` once all are done).
    stage: usize,
    /// The furthest stage reached: while `stage` is below it, a run
    /// recomputes output lost with an executor that the later stages read.
    target: usize,
    /// Tasks of the stage not yet started (or given back by a kill).
    queued: u32,
    /// Per executor (phase order): work done by each in-flight task, µs at full speed.
    in_flight: Vec<Vec<f64>>,
    /// Per executor: tasks it runs at once (its cores).
    slots: Vec<u32>,
    /// Per executor, per stage: the tasks it completed, whose output (a
    /// shuffle's map output) it holds.
    outputs: Vec<Vec<u32>>,
    /// Per stage: its attempts failed in a row by a fetch failure.
    failed_attempts: Vec<u8>,
}

impl PoolExec {
    /// A pool for executors with `slots` cores each.
    pub fn new(stages: Vec<StageTasks>, slots: Vec<u32>) -> Self {
        let queued = stages[0].count;
        let in_flight = vec![Vec::new(); slots.len()];
        let outputs = vec![vec![0; stages.len()]; slots.len()];
        let failed_attempts = vec![0; stages.len()];
        PoolExec { stages, stage: 0, target: 0, queued, in_flight, slots, outputs, failed_attempts }
    }

    /// Every stage has ended: the executors have nothing left to run.
    pub fn done(&self) -> bool {
        self.stage == self.stages.len()
    }

    fn duration(&self) -> f64 {
        self.stages[self.stage].duration as f64
    }

    /// Tasks of stage `k` whose output no executor holds.
    fn missing(&self, k: usize) -> u32 {
        self.stages[k].count - self.outputs.iter().map(|o| o[k]).sum::<u32>()
    }

    /// Adds `work` (µs at full speed) to each of executor `e`'s in-flight tasks.
    pub fn advance(&mut self, e: usize, work: f64) {
        if work > 0.0 && !self.done() {
            let d = self.duration();
            for w in &mut self.in_flight[e] {
                *w = (*w + work).min(d);
            }
        }
    }

    /// Retires executor `e`'s finished tasks; true when that ended the stage
    /// (the next one, if any, is queued).
    pub fn complete(&mut self, e: usize) -> bool {
        if self.done() {
            return false;
        }
        let d = self.duration();
        let before = self.in_flight[e].len();
        self.in_flight[e].retain(|&w| w < d);
        self.outputs[e][self.stage] += (before - self.in_flight[e].len()) as u32;
        if self.queued == 0 && self.in_flight.iter().all(Vec::is_empty) {
            self.failed_attempts[self.stage] = 0;
            self.next_run();
            return true;
        }
        false
    }

    /// Picks the run after one that ended: the furthest stage reached, once
    /// the output it reads is all there, or else the earliest stage of the
    /// chain of lost output it needs recomputed (a shuffle reads all of its
    /// parent's output); past the furthest stage once that is complete.
    fn next_run(&mut self) {
        let mut k = self.target;
        if self.missing(k) == 0 {
            k += 1;
            self.target = k;
        } else {
            while k > 0 && self.missing(k - 1) > 0 {
                k -= 1;
            }
        }
        self.stage = k;
        self.queued = if k < self.stages.len() { self.missing(k) } else { 0 };
    }

    /// Fills executor `e`'s free cores from the pool.
    pub fn pull(&mut self, e: usize) {
        let free = (self.slots[e] as usize).saturating_sub(self.in_flight[e].len()) as u32;
        let n = free.min(self.queued);
        self.queued -= n;
        self.in_flight[e].extend(std::iter::repeat_n(0.0, n as usize));
    }

    /// Gives executor `e`'s in-flight tasks back to the pool; returns their
    /// lost work in core-µs (one core per task).
    pub fn give_back(&mut self, e: usize) -> f64 {
        let lost: f64 = self.in_flight[e].iter().sum();
        self.queued += self.in_flight[e].len() as u32;
        self.in_flight[e].clear();
        lost
    }

    /// Executor `e` was killed, under Spark on YARN's semantics (BIG-C §2.2:
    /// Spark does not persist intermediate results, so "the killing of one
    /// task could lead to the re-computation of dependent stages"). Its
    /// in-flight tasks go back to the pool, and every output it holds is
    /// gone (without an external shuffle service a map output lives on the
    /// executor that wrote it): the current run's tasks it completed run
    /// again. If the current stage reads output it held, the stage attempt
    /// fails on the fetch: every executor's in-flight tasks are lost, and
    /// the lost output of the chain of stages it needs is recomputed before
    /// the stage runs again. The application attempt fails after
    /// [`STAGE_MAX_ATTEMPTS`] failed attempts of a stage in a row (the
    /// executor-failure limit is the phase's: see `execution`). The other
    /// executors must be settled to now.
    pub fn lose(&mut self, e: usize) -> Lost {
        let mut work = self.give_back(e);
        let mut lost = Lost { work: 0.0, app_failed: false };
        if self.done() {
            lost.work = work;
            return lost;
        }
        for (k, held) in self.outputs[e].iter_mut().enumerate() {
            work += *held as f64 * self.stages[k].duration as f64;
            if k == self.stage {
                self.queued += *held;
            }
            *held = 0;
        }
        if self.stage > 0 && self.missing(self.stage - 1) > 0 {
            self.failed_attempts[self.stage] += 1;
            lost.app_failed = self.failed_attempts[self.stage] >= STAGE_MAX_ATTEMPTS;
            for other in 0..self.in_flight.len() {
                work += self.give_back(other);
            }
            let mut k = self.stage;
            while k > 0 && self.missing(k - 1) > 0 {
                k -= 1;
            }
            self.stage = k;
            self.queued = self.missing(k);
        }
        lost.work = work;
        lost
    }

    /// Work (core-µs) in every output the executors hold: lost with the
    /// application attempt.
    pub fn held_work(&self) -> f64 {
        let per_stage =
            |k: usize| self.outputs.iter().map(|o| o[k]).sum::<u32>() as f64 * self.stages[k].duration as f64;
        (0..self.stages.len()).map(per_stage).sum()
    }

    /// Executor `e` has no stage task in flight.
    pub fn idle(&self, e: usize) -> bool {
        self.in_flight[e].is_empty()
    }

    /// Work (µs at full speed) until executor `e`'s first in-flight task ends.
    pub fn next_left(&self, e: usize) -> Option<f64> {
        let d = self.duration();
        self.in_flight[e].iter().map(|&w| d - w).reduce(f64::min)
    }
}

/// When executor work `left` (µs at full speed) ends at `rate`, from `now`.
pub(crate) fn finish_time(now: Micros, left: f64, rate: f64) -> Micros {
    now + (left.max(0.0) / rate).ceil() as Micros
}

#[cfg(test)]
mod tests {
    use super::*;

    // Two executors of 2 cores, 8 tasks of 10 s: each pulls 2, a kill of the
    // first after 5 s gives 2 back (10 core-s lost); the second, after its
    // first wave, pulls 2 and the 4 others wait.
    #[test]
    fn a_kill_gives_in_flight_tasks_back() {
        let mut p = PoolExec::new(vec![StageTasks { count: 8, duration: 10_000_000 }], vec![2, 2]);
        p.pull(0);
        p.pull(1);
        assert_eq!(p.queued, 4);
        p.advance(0, 5e6);
        p.advance(1, 5e6);
        assert_eq!(p.give_back(0), 10e6);
        assert_eq!(p.queued, 6);
        p.advance(1, 5e6);
        assert!(!p.complete(1));
        p.pull(1);
        assert_eq!((p.queued, p.next_left(1)), (4, Some(10e6)));
        assert_eq!(p.next_left(0), None);
    }

    /// Runs the current run's tasks on every executor until it ends.
    fn run_out(p: &mut PoolExec) {
        let stage = p.stage;
        while !p.done() && p.stage == stage {
            let d = p.duration();
            for e in 0..p.slots.len() {
                p.pull(e);
                p.advance(e, d);
            }
            for e in 0..p.slots.len() {
                p.complete(e);
            }
        }
    }

    // Two executors of 2 cores, 3 stages of 4 tasks of 10 s. Stage 0 ends
    // with 2 outputs on each; 5 s into stage 1 the first is lost: its 2
    // in-flight tasks (10 core-s) and its 2 stage-0 outputs (20 core-s) are
    // gone, stage 1 fails on the fetch, so the second's 2 in-flight tasks
    // (10 core-s) are lost too; the 2 lost stage-0 tasks run again, then
    // all 4 of stage 1.
    #[test]
    fn a_lost_executor_fails_the_stage_that_reads_its_output() {
        let mut p = PoolExec::new(vec![StageTasks { count: 4, duration: 10_000_000 }; 3], vec![2, 2]);
        p.pull(0);
        p.pull(1);
        p.advance(0, 10e6);
        p.advance(1, 10e6);
        assert!(!p.complete(0));
        assert!(p.complete(1));
        assert_eq!((p.stage, p.queued), (1, 4));
        p.pull(0);
        p.pull(1);
        p.advance(0, 5e6);
        p.advance(1, 5e6);
        assert_eq!(p.lose(0), Lost { work: 40e6, app_failed: false });
        assert_eq!((p.stage, p.queued, p.target), (0, 2, 1));
        assert!(p.idle(1));
        p.pull(1);
        p.advance(1, 10e6);
        assert!(p.complete(1));
        assert_eq!((p.stage, p.queued), (1, 4));
        // The lost stage-0 output is all there again: work held is 4 × 10 s.
        assert_eq!(p.held_work(), 40e6);
    }

    // Losing an executor during stage 0 (which reads input, not a shuffle)
    // fails no stage: its finished tasks run again in the same stage.
    #[test]
    fn a_lost_executor_of_the_first_stage_reruns_its_tasks() {
        let mut p = PoolExec::new(vec![StageTasks { count: 8, duration: 10_000_000 }; 2], vec![2, 2]);
        p.pull(0);
        p.advance(0, 10e6);
        assert!(!p.complete(0));
        p.pull(0);
        p.advance(0, 4e6);
        assert_eq!(p.lose(0), Lost { work: 28e6, app_failed: false });
        assert_eq!((p.stage, p.queued), (0, 8));
    }

    // Five executors: stage 1 fails on the fetch four times in a row, each
    // time after the lost output is recomputed; the fourth fails the
    // application attempt.
    #[test]
    fn a_stage_failing_four_attempts_in_a_row_fails_the_application() {
        let mut p = PoolExec::new(vec![StageTasks { count: 10, duration: 10_000_000 }; 2], vec![2; 5]);
        run_out(&mut p);
        let mut failed = Vec::new();
        for e in 0..4 {
            assert_eq!(p.stage, 1);
            failed.push(p.lose(e).app_failed);
            // The stage's attempt failed: the lost stage-0 output runs again.
            assert_eq!((p.stage, p.queued), (0, 2));
            run_out(&mut p);
        }
        assert_eq!(failed, [false, false, false, true]);
        assert_eq!(p.failed_attempts[1], 4);
    }
}
