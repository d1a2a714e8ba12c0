//! A Spark pool phase (DESIGN.md "Spark stages"): the stage's tasks wait in a
//! pool that the phase's executors pull from as their cores free up, one task
//! per core; stages run one after another with a barrier between them.
//!
//! Every in-flight task of an executor progresses at the executor's own rate,
//! so a shrunk executor completes proportionally fewer tasks and a frozen one
//! holds its in-flight tasks (the stage cannot end before they do). A killed
//! executor's in-flight tasks go back to the pool, their work lost.

use pliant_core::Micros;
use pliant_workload::StageTasks;

/// The true state of one pool phase.
#[derive(Debug, Clone)]
pub(crate) struct PoolExec {
    stages: Vec<StageTasks>,
    /// The stage under way (`stages.len()` once all are done).
    stage: usize,
    /// Tasks of the stage not yet started (or given back by a kill).
    queued: u32,
    /// Per executor (phase order): work done by each in-flight task, µs at full speed.
    in_flight: Vec<Vec<f64>>,
    /// Per executor: tasks it runs at once (its cores).
    slots: Vec<u32>,
}

impl PoolExec {
    /// A pool for executors with `slots` cores each.
    pub fn new(stages: Vec<StageTasks>, slots: Vec<u32>) -> Self {
        let queued = stages[0].count;
        let in_flight = vec![Vec::new(); slots.len()];
        PoolExec { stages, stage: 0, queued, in_flight, slots }
    }

    /// Every stage has ended: the executors have nothing left to run.
    pub fn done(&self) -> bool {
        self.stage == self.stages.len()
    }

    fn duration(&self) -> f64 {
        self.stages[self.stage].duration as f64
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
        self.in_flight[e].retain(|&w| w < d);
        if self.queued == 0 && self.in_flight.iter().all(Vec::is_empty) {
            self.stage += 1;
            self.queued = self.stages.get(self.stage).map_or(0, |s| s.count);
            return true;
        }
        false
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
}
