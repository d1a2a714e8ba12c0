//! The step driver: one protocol by which a body (the simulator, the live
//! manager) runs the core, so that both take the same decisions at the same
//! instants — the core's timers (locality waits, reservation deadlines) and
//! the resource monitor's period are kept here, not in each body.
//!
//! At each instant `now` a body feeds the driver what happened, in the order
//! it happened: [`Driver::observe`] for each observation, [`Driver::fire`]
//! when a timer is due, [`Driver::monitor`] when [`Driver::monitor_due`].
//! Then it calls [`Driver::pass`] until the instant is settled, carrying out
//! each pass's actions (and observing what they cause at once) before the
//! next. A settled pass names the timer the body must arrange, once per
//! instant; [`Driver::next_deadline`] is the earliest instant the body must
//! call back at even if nothing happens (the simulator queues an event for
//! it, the manager sleeps until it or the next outside event).
//!
//! Pure like the rest of the core: time is given by the body.

use crate::error::CoreError;
use crate::scheduler::Scheduler;
use crate::{Action, Micros, Observation};
use std::collections::BTreeSet;

/// The core with its timers and the monitor's period.
pub struct Driver {
    core: Scheduler,
    /// Timers the body was asked to arrange that have not gone off yet.
    timers: BTreeSet<Micros>,
    /// When the resource monitor runs next, if the policy has one.
    next_monitor: Option<Micros>,
}

/// What an allocation pass ([`Driver::pass`]) came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    /// It decided something: carry it out, then run another pass.
    Acted,
    /// It decided nothing: the instant is settled. `timer` is a new instant
    /// the body must call [`Driver::fire`] at (none if it already was asked).
    Settled {
        /// The new timer, if any.
        timer: Option<Micros>,
    },
}

impl Driver {
    /// Drives `core` from time 0: the monitor first runs one period in.
    pub fn new(core: Scheduler) -> Self {
        let next_monitor = core.monitor_interval();
        Driver { core, timers: BTreeSet::new(), next_monitor }
    }

    /// The core, for queries.
    #[inline]
    pub fn core(&self) -> &Scheduler {
        &self.core
    }

    /// The core's planner, if its policy preempts ([`Scheduler::planner_mut`]):
    /// a body asks it what it reports beyond its takes.
    pub fn planner_mut(&mut self) -> Option<&mut (dyn crate::policy::planner::Planner + 'static)> {
        self.core.planner_mut()
    }

    /// Node `node`'s measured swap rates ([`Scheduler::set_swap_rates`]).
    pub fn set_swap_rates(&mut self, node: usize, rates: crate::SwapRates) {
        self.core.set_swap_rates(node, rates);
    }

    /// Takes in one observation at `now`.
    #[inline]
    pub fn observe(&mut self, now: Micros, obs: Observation) -> Result<(), CoreError> {
        self.core.observe(now, obs)
    }

    /// Takes in a submitted job (as [`Observation::JobSubmitted`], by
    /// reference: see [`Scheduler::submit`]).
    #[inline]
    pub fn submit(&mut self, req: &crate::model::JobRequest) -> Result<(), CoreError> {
        self.core.submit(req)
    }

    /// Whether the resource monitor is due at `now`.
    pub fn monitor_due(&self, now: Micros) -> bool {
        self.next_monitor.is_some_and(|t| now >= t)
    }

    /// When the resource monitor runs next, if the policy has one.
    #[inline]
    pub fn next_monitor(&self) -> Option<Micros> {
        self.next_monitor
    }

    /// Runs the resource monitor at `now` (its actions go to `out`); the next
    /// run is one period later.
    pub fn monitor(&mut self, now: Micros, out: &mut Vec<Action>) {
        self.core.monitor(now, out);
        self.next_monitor = self.core.monitor_interval().map(|interval| now + interval);
    }

    /// The timers due at `now` go off; true if any did (the next pass then
    /// runs an allocation).
    pub fn fire(&mut self, now: Micros) -> bool {
        let mut fired = false;
        while self.timers.first().is_some_and(|&t| t <= now) {
            self.timers.pop_first();
            fired = true;
        }
        if fired {
            self.core.wake(now);
        }
        fired
    }

    /// One allocation pass at `now`, its actions appended to `out`. Once a
    /// pass decides nothing, the instant is settled and the core's next timer
    /// is armed.
    #[inline]
    pub fn pass(&mut self, now: Micros, out: &mut Vec<Action>) -> Pass {
        let before = out.len();
        self.core.schedule(now, out);
        if out.len() > before {
            return Pass::Acted;
        }
        let timer = self.core.wake_at(now).filter(|&at| self.timers.insert(at));
        Pass::Settled { timer }
    }

    /// The earliest timer not gone off yet.
    #[inline]
    pub fn next_timer(&self) -> Option<Micros> {
        self.timers.first().copied()
    }

    /// The earliest instant the body must call back at even if nothing
    /// happens: a timer or the monitor's next run.
    pub fn next_deadline(&self) -> Option<Micros> {
        match (self.next_timer(), self.next_monitor) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{JobClass, JobId, JobRequest, PhaseRequest, TaskRef, TaskRequest};
    use crate::policy::{preset, Params};
    use crate::{Resources, SECOND};

    const SLOT: Resources = Resources::cores_gb(1, 4);

    /// Settles `now`: how many actions its passes took, and the timer the
    /// last one named.
    fn settle(d: &mut Driver, now: Micros) -> (usize, Option<Micros>) {
        let mut out = Vec::new();
        loop {
            if let Pass::Settled { timer } = d.pass(now, &mut out) {
                return (out.len(), timer);
            }
        }
    }

    /// timeout-reserve (60 s) on two slots: H's phase 0 (two tasks) runs,
    /// then one task of phase 1. Task 0 ends at 10 s and its slot is kept for
    /// H until 70 s, which the driver names once, however often 10 s is
    /// settled; the timer goes off at 70 s, not before, and the slot lapses.
    #[test]
    fn a_reservation_timer_is_named_once_and_goes_off_at_its_instant() {
        let policy = preset("timeout-reserve", &Params::default()).unwrap();
        let mut d = Driver::new(Scheduler::new(&[SLOT, SLOT], policy).unwrap());
        assert_eq!(d.next_deadline(), None);
        let phase = |deps: Vec<u32>, n: usize| PhaseRequest {
            deps,
            coupled: false,
            local: false,
            tasks: vec![TaskRequest { resources: SLOT, estimate: None }; n],
        };
        let h = JobRequest {
            id: JobId(0),
            submit: 0,
            class: JobClass::Short,
            priority: 9,
            phases: vec![phase(vec![], 2), phase(vec![0], 1)],
            elastic: None,
        };
        d.observe(0, Observation::JobSubmitted(h)).unwrap();
        assert_eq!(settle(&mut d, 0), (2, None));
        d.observe(10 * SECOND, Observation::TaskFinished(TaskRef { job: JobId(0), task: 0 })).unwrap();
        assert_eq!(settle(&mut d, 10 * SECOND), (0, Some(70 * SECOND)));
        assert_eq!(settle(&mut d, 10 * SECOND), (0, None));
        assert_eq!(d.next_deadline(), Some(70 * SECOND));
        assert!(!d.fire(70 * SECOND - 1));
        assert_eq!(d.core().reservation().idle(), SLOT);
        assert!(d.fire(70 * SECOND));
        assert_eq!(settle(&mut d, 70 * SECOND), (0, None));
        assert_eq!((d.next_deadline(), d.core().reservation().idle()), (None, Resources::ZERO));
    }

    /// ip (monitor every 3 s): the first run is due at 3 s; a run at 3.5 s
    /// makes the next due at 6.5 s, which is then the driver's deadline.
    #[test]
    fn the_monitor_runs_one_period_after_its_last_run() {
        let policy = preset("ip", &Params::default()).unwrap();
        let mut d = Driver::new(Scheduler::new(&[SLOT], policy).unwrap());
        assert_eq!(d.next_deadline(), Some(3 * SECOND));
        assert!(!d.monitor_due(3 * SECOND - 1));
        assert!(d.monitor_due(3 * SECOND));
        d.monitor(3 * SECOND + SECOND / 2, &mut Vec::new());
        assert!(!d.monitor_due(6 * SECOND));
        assert_eq!(d.next_deadline(), Some(6 * SECOND + SECOND / 2));
    }
}
