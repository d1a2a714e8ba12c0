//! Evictions per priority band as the checkpoint paper counts them (§2,
//! Table 1), for Google 2011 traces.
//!
//! The paper's criterion (after Cavdar et al., its reference [4]): an EVICT
//! of a task counts as a **preemption** when a task of higher priority is
//! scheduled on the same machine within five seconds after it. Table 1's
//! "Num. of Tasks" (28.4 M + 17.3 M + 1.7 M = 47.4 M, more than the trace's
//! 25 M distinct tasks) counts scheduled tasks, i.e. SCHEDULE events, and
//! "Percent Preempted" is preemptions over those schedules, per band (free
//! 0–1, middle 2–8, production 9–11). Its figures for the whole trace:
//! [`PAPER_SHARES`].
//!
//! The task events are sorted by time, so this is one streaming pass: an
//! eviction waits (at most five seconds of trace time) for a higher-priority
//! schedule on its machine, and a schedule listed before an eviction at the
//! same instant also counts. Memory: the evictions of the last five seconds
//! and one entry per machine.

use pliant_core::model::PriorityLevel;
use pliant_core::{Micros, SECOND};
use std::collections::{HashMap, VecDeque};

/// How soon after an eviction a higher-priority schedule on the same machine
/// makes it a preemption (the paper's five seconds).
pub const WITHIN: Micros = 5 * SECOND;

/// Table 1 of the checkpoint paper: the share of scheduled tasks preempted
/// per band over the whole 29-day trace (free, middle, production).
pub const PAPER_SHARES: [f64; 3] = [0.2026, 0.0055, 0.0102];

/// Evictions per priority band ([`PriorityLevel::ALL`] order).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct EvictionTable {
    /// SCHEDULE events (the paper's "number of tasks": scheduled tasks).
    pub schedules: [u64; 3],
    /// EVICT events.
    pub evictions: [u64; 3],
    /// Evictions followed within [`WITHIN`] by a higher-priority schedule on the same machine.
    pub preemptions: [u64; 3],
    /// Core-seconds of the runs that evictions ended (requested cores × time
    /// since the run's SCHEDULE; runs that began before the trace left out):
    /// the work a kill-based scheduler loses, as the paper's §2 estimates it.
    pub evicted_core_seconds: [f64; 3],
}

impl EvictionTable {
    /// Share of the band's scheduled tasks that were preempted (Table 1's
    /// "Percent Preempted", as a fraction; 0 when nothing was scheduled).
    pub fn preempted_share(&self, band: PriorityLevel) -> f64 {
        let i = band.index();
        if self.schedules[i] == 0 {
            0.0
        } else {
            self.preemptions[i] as f64 / self.schedules[i] as f64
        }
    }
}

/// Counts schedules, evictions and preemptions from task events in time order.
#[derive(Debug, Default)]
pub struct PreemptionCounter {
    table: EvictionTable,
    /// Per machine: evictions (time, priority) still waiting for a higher-priority schedule.
    waiting: HashMap<u64, Vec<(Micros, u8)>>,
    /// When each waiting eviction stops waiting, in time order, with its machine.
    deadlines: VecDeque<(Micros, u64)>,
    /// Per machine: the latest instant something was scheduled there and the
    /// highest priority scheduled at that instant.
    latest: HashMap<u64, (Micros, u8)>,
}

impl PreemptionCounter {
    /// A SCHEDULE event at `ts` on `machine` (if the row names one) with `priority`.
    pub fn schedule(&mut self, ts: Micros, machine: Option<u64>, priority: u8) {
        self.expire(ts);
        self.table.schedules[PriorityLevel::of(priority).index()] += 1;
        let Some(m) = machine else { return };
        if let Some(list) = self.waiting.get_mut(&m) {
            let preemptions = &mut self.table.preemptions;
            list.retain(|&(t, p)| {
                let preempted = p < priority && ts <= t.saturating_add(WITHIN);
                preemptions[PriorityLevel::of(p).index()] += u64::from(preempted);
                !preempted
            });
            if list.is_empty() {
                self.waiting.remove(&m);
            }
        }
        let latest = self.latest.entry(m).or_insert((ts, priority));
        if latest.0 == ts {
            latest.1 = latest.1.max(priority);
        } else {
            *latest = (ts, priority);
        }
    }

    /// An EVICT event at `ts` on `machine` (if the row names one) of a task with `priority`.
    pub fn evict(&mut self, ts: Micros, machine: Option<u64>, priority: u8) {
        self.expire(ts);
        let band = PriorityLevel::of(priority).index();
        self.table.evictions[band] += 1;
        let Some(m) = machine else { return };
        if self.latest.get(&m).is_some_and(|&(t, p)| t == ts && p > priority) {
            self.table.preemptions[band] += 1;
            return;
        }
        self.waiting.entry(m).or_default().push((ts, priority));
        self.deadlines.push_back((ts.saturating_add(WITHIN), m));
    }

    /// The run that an eviction of a task with `priority` ended used `core_seconds`.
    pub fn evicted_run(&mut self, priority: u8, core_seconds: f64) {
        self.table.evicted_core_seconds[PriorityLevel::of(priority).index()] += core_seconds;
    }

    /// Forgets the evictions that can no longer become preemptions at `now`.
    fn expire(&mut self, now: Micros) {
        while let Some(&(deadline, m)) = self.deadlines.front() {
            if deadline >= now {
                break;
            }
            self.deadlines.pop_front();
            if let Some(list) = self.waiting.get_mut(&m) {
                list.retain(|&(t, _)| t.saturating_add(WITHIN) >= now);
                if list.is_empty() {
                    self.waiting.remove(&m);
                }
            }
        }
    }

    /// The counts so far.
    pub fn table(&self) -> EvictionTable {
        self.table
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_higher_priority_schedule_within_five_seconds_makes_a_preemption() {
        let mut c = PreemptionCounter::default();
        c.schedule(0, Some(1), 0);
        c.evict(10 * SECOND, Some(1), 0);
        // Same priority: no. Other machine: no. Priority 9 at +5 s exactly: yes.
        c.schedule(11 * SECOND, Some(1), 0);
        c.schedule(12 * SECOND, Some(2), 9);
        c.schedule(15 * SECOND, Some(1), 9);
        // Too late (+5.000001 s).
        c.evict(20 * SECOND, Some(1), 4);
        c.schedule(25 * SECOND + 1, Some(1), 9);
        let t = c.table();
        assert_eq!(t.schedules, [2, 0, 3]);
        assert_eq!(t.evictions, [1, 1, 0]);
        assert_eq!(t.preemptions, [1, 0, 0]);
        assert_eq!(t.preempted_share(PriorityLevel::Free), 0.5);
    }
}
