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
    pub fn planner_mut(&mut self) -> Option<&mut (dyn crate::policy::steps::Planner + 'static)> {
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
