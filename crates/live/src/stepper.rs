//! The live step driver: how a live body — the manager (`pliant-manager`)
//! and the Slurm controller (`pliant-slurm`) — runs the core through the
//! core's [`Driver`], one journaled step at a time, and replays its journal
//! after a restart. Written once here so that both bodies take the same
//! decisions from the same events, as the simulator does.
//!
//! A step at `now`: the timers due go off; the events are taken in (the body
//! drops stale ones, and only those taken are journaled); the resource
//! monitor runs if the step is the monitor's; allocation passes run until
//! one decides nothing; the step is journaled (before anything is carried
//! out: journal-before-act) unless nothing happened; then the body carries
//! out each action. A resource monitor run due by a live step's `now` goes
//! first, as a step of its own at its due instant (at most a period late):
//! its period does not drift with the body's lateness and it does not see
//! what came in after it was due, as in the simulator.
//!
//! The stepper also measures each node's swap rates from the decisions and
//! what the body heard (`swap_meter`); once a node's differ from those the
//! core has, a live step takes them in first as an event of its own (the
//! body's [`LiveBody::swap_rates_event`]), journaled like any other, so a
//! replay gives the core the same figures at the same step.

use crate::swap_meter::{SwapHeard, SwapMeter};
use pliant_core::model::TaskRef;
use pliant_core::policy::{Params, Policy, Profile, Registry};
use pliant_core::{Action, CoreError, Driver, Micros, Pass, SwapRates};
use serde::{Deserialize, Serialize};

/// One scheduling step, as a body journals it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step<E> {
    /// Core time, µs since the body's epoch.
    pub now: Micros,
    /// The events taken in, in order.
    pub events: Vec<E>,
    /// Whether the resource monitor ran.
    pub monitor: bool,
    /// The actions decided (to check a replay against), serialised as
    /// themselves.
    pub actions: Vec<Action>,
}

/// Why a journaled step whose actions are text does not replay: journals
/// written before actions were serialised as data kept their `Debug` text,
/// which this version does not read back.
pub const TEXT_ACTIONS: &str = "its actions are text, as an older pliant journaled them, which this version \
     does not replay: finish that cluster's work with the version that wrote it, or start from a new state directory";

/// Why a live body cannot go on.
#[derive(Debug, thiserror::Error)]
pub enum StepError {
    /// The body's journal failed.
    #[error(transparent)]
    Journal(Box<dyn std::error::Error + Send + Sync>),
    /// The core refused an observation (a bug: events are checked first).
    #[error("core: {0}")]
    Core(#[from] CoreError),
    /// The configuration is unusable.
    #[error("{0}")]
    Config(String),
    /// Replaying the journal gave other actions than it records.
    #[error("journal replay diverged at step {step}: journaled {journaled:?}, replayed {replayed:?}")]
    Diverged {
        /// The step (1-based).
        step: usize,
        /// What the journal says.
        journaled: Vec<Action>,
        /// What the replay decided.
        replayed: Vec<Action>,
    },
}

/// The core under its driver, with what stepping it keeps.
pub struct Stepping {
    /// The core and its timers.
    pub driver: Driver,
    /// The last step's instant: core time never goes back.
    pub last_now: Micros,
    /// True while the journal is replayed: nothing is journaled.
    pub replaying: bool,
    /// Each node's swap rates as measured, and those the core was given.
    pub swap: SwapMeter,
}

impl Stepping {
    /// A driver about to replay its body's journal.
    pub fn new(driver: Driver) -> Stepping {
        let swap = SwapMeter::new(driver.core().node_allocations().count());
        Stepping { driver, last_now: 0, replaying: true, swap }
    }

    /// Follows what the body heard at `now` of `task` (on the node the core
    /// has it on) for the node's swap rates.
    pub fn heard_swap(&mut self, now: Micros, task: TaskRef, heard: SwapHeard) {
        let node = self.driver.core().task(task).and_then(|b| b.node).map_or(usize::MAX, |n| n.0 as usize);
        self.swap.heard(now, task, node, heard);
    }

    /// Gives the core node `node`'s swap rates (a journaled event taken in);
    /// false for a node it does not have.
    pub fn give_swap_rates(&mut self, node: u32, rates: SwapRates) -> bool {
        if node as usize >= self.swap.nodes().len() {
            return false;
        }
        self.driver.set_swap_rates(node as usize, rates);
        self.swap.given(node as usize, rates);
        true
    }
}

/// A live body: what it does at each point of a step. The steps themselves
/// are the provided methods.
pub trait LiveBody {
    /// An input of a step, as journaled.
    type Event;
    /// What carrying a step out leaves for the body to do afterwards (the
    /// manager's operations for agents, the controller's effects on Slurm).
    type Out;

    /// The driver and its step state.
    fn stepping(&mut self) -> &mut Stepping;

    /// The event by which node `node`'s measured swap rates are given to
    /// the core; taking it in calls [`Stepping::give_swap_rates`].
    fn swap_rates_event(node: u32, rates: SwapRates) -> Self::Event;

    /// Applies one event to the core and the body's records; false when it
    /// is stale and is dropped (not journaled).
    fn take_in(&mut self, now: Micros, event: &Self::Event, out: &mut Vec<Self::Out>) -> Result<bool, StepError>;

    /// Makes a step durable before any of its actions is carried out.
    fn journal(&mut self, step: &Step<Self::Event>) -> Result<(), StepError>;

    /// Mirrors one decided action in the body's records and queues what it takes.
    fn carry_out(&mut self, now: Micros, action: &Action, out: &mut Vec<Self::Out>);

    /// Called once a step's passes are settled, before it is journaled.
    fn settled(&mut self) {}

    /// One scheduling step at `now`; returns its actions and what the body
    /// is left to do.
    fn step(
        &mut self,
        now: Micros,
        events: Vec<Self::Event>,
        monitor: bool,
    ) -> Result<(Vec<Action>, Vec<Self::Out>), StepError> {
        // A timer the core asked for (a locality wait or a reservation ending)
        // goes off at the first step at or after it; replay sees the same.
        self.stepping().driver.fire(now);
        self.stepping().last_now = now;
        let mut out = Vec::new();
        let mut taken = Vec::new();
        for event in events {
            if self.take_in(now, &event, &mut out)? {
                taken.push(event);
            }
        }
        let mut actions = Vec::new();
        let s = self.stepping();
        if monitor {
            s.driver.monitor(now, &mut actions);
        }
        // What the actions cause is reported later: the passes go on until
        // one decides nothing.
        while s.driver.pass(now, &mut actions) == Pass::Acted {}
        for action in &actions {
            s.swap.decided(now, action);
        }
        self.settled();
        if !self.stepping().replaying && (monitor || !taken.is_empty() || !actions.is_empty()) {
            self.journal(&Step { now, events: taken, monitor, actions: actions.clone() })?;
        }
        for action in &actions {
            self.carry_out(now, action, &mut out);
        }
        Ok((actions, out))
    }

    /// A step at `now` with a resource monitor run due by then first, as a
    /// step of its own at its due instant (at most a period late). Swap
    /// rates measured since the last step and not yet given to the core
    /// are taken in first (in the monitor's step, if one runs). Returns
    /// what the body is left to do.
    fn live_step(&mut self, now: Micros, mut events: Vec<Self::Event>) -> Result<Vec<Self::Out>, StepError> {
        let s = self.stepping();
        let mut rates: Vec<Self::Event> =
            s.swap.due().into_iter().map(|(node, r)| Self::swap_rates_event(node, r)).collect();
        let mut out = Vec::new();
        if let Some(due) = s.driver.next_monitor().filter(|&due| due <= now) {
            let period = s.driver.core().monitor_interval().unwrap_or(0);
            let at = due.max(now.saturating_sub(period)).max(s.last_now);
            out = self.step(at, std::mem::take(&mut rates), true)?.1;
        }
        rates.append(&mut events);
        out.extend(self.step(now, rates, false)?.1);
        Ok(out)
    }

    /// Replays journaled steps, each checked against the actions it
    /// journaled, then leaves replay: what they left to do is dropped (a
    /// restart squares it with the world).
    fn replay(&mut self, steps: Vec<Step<Self::Event>>) -> Result<(), StepError> {
        self.stepping().replaying = true;
        for (i, step) in steps.into_iter().enumerate() {
            let (replayed, _) = self.step(step.now, step.events, step.monitor)?;
            if replayed != step.actions {
                return Err(StepError::Diverged { step: i + 1, journaled: step.actions, replayed });
            }
        }
        self.stepping().replaying = false;
        Ok(())
    }
}

/// The policy `profile` names, built through `registry` with the `--set`
/// parameters `params`, as a live cluster (and its twin replay) runs it: a preempted container's footprint
/// keeps 1 % of a core through its cgroup's CPU quota, whose floor that is,
/// and the core books none of it — as it books none for immediate
/// preemption's footprint — so a core freed by shrinking a container to its
/// footprint is a whole core, and a 1-CPU need takes one victim, not a
/// second one for the 10 millicores the footprint would keep booked.
pub fn build_policy(registry: &Registry, profile: &Profile, params: &[(String, String)]) -> Result<Policy, String> {
    let mut p = Params::default();
    for (k, v) in params {
        p.set(k, v).map_err(|e| e.to_string())?;
    }
    let mut policy = registry.build(profile, &p)?;
    if let Some(spec) = policy.preemption.as_mut() {
        spec.footprint.cpu_milli = 0;
    }
    Ok(policy)
}

/// The policy a live cluster runs, as its journal keeps it: the resolved
/// profile, which rebuilds the same policy whatever the presets become;
/// journals from before profiles keep a preset's name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum JournaledPolicy {
    /// The resolved profile.
    Profile(Box<Profile>),
    /// A preset, by name.
    Preset(String),
}

impl JournaledPolicy {
    /// The policy's name.
    pub fn name(&self) -> &str {
        match self {
            JournaledPolicy::Profile(p) => &p.name,
            JournaledPolicy::Preset(name) => name,
        }
    }

    /// The profile, through `registry` for a preset's name.
    pub fn profile(&self, registry: &Registry) -> Result<Profile, String> {
        match self {
            JournaledPolicy::Profile(p) => Ok(Profile::clone(p)),
            JournaledPolicy::Preset(name) => registry.preset(name),
        }
    }

    /// The policy, built through `registry` with the `--set` parameters
    /// `params` as [`build_policy`] builds it.
    pub fn build(&self, registry: &Registry, params: &[(String, String)]) -> Result<Policy, String> {
        build_policy(registry, &self.profile(registry)?, params)
    }
}

impl From<&str> for JournaledPolicy {
    fn from(name: &str) -> JournaledPolicy {
        JournaledPolicy::Preset(name.to_string())
    }
}

impl From<Profile> for JournaledPolicy {
    fn from(profile: Profile) -> JournaledPolicy {
        JournaledPolicy::Profile(Box::new(profile))
    }
}

impl std::fmt::Display for JournaledPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_journaled_policy_is_a_profile_or_an_older_journal_s_preset_name() {
        let registry = pliant_plugins::registry();
        let composed = registry.compose("gp-kill", "gp", &[("mechanism", "kill")]).unwrap();
        let kept = JournaledPolicy::from(composed.clone());
        let text = serde_json::to_string(&kept).unwrap();
        assert!(text.starts_with(r#"{"name":"gp-kill","queues":"short-long""#), "{text}");
        let back: JournaledPolicy = serde_json::from_str(&text).unwrap();
        assert_eq!(back.profile(&registry).unwrap(), composed);
        let older: JournaledPolicy = serde_json::from_str(r#""gp""#).unwrap();
        assert_eq!(older, JournaledPolicy::Preset("gp".into()));
        assert_eq!(older.profile(&registry).unwrap(), registry.preset("gp").unwrap());

        let params = [("monitor_interval_s".to_string(), "1".to_string())];
        let policy = back.build(&registry, &params).unwrap();
        assert_eq!(policy.name, "gp-kill");
        assert_eq!(policy.preemption.unwrap().footprint.cpu_milli, 0, "a live footprint books no CPU");

        let foreign = r#"{"name":"mine","queues":"short-long","order":"fifo","head_of_line":"per-class","placement":"first-fit","preemption":{"planner":"capacity","compute_dr":true,"mechanism":"lent-out"},"reservation":"none","sizing":"requested","attempts":"limited"}"#;
        let foreign: JournaledPolicy = serde_json::from_str(foreign).unwrap();
        let err = foreign.build(&registry, &[]).unwrap_err();
        assert!(err.starts_with("policy `mine`: mechanism takes kill,") && err.ends_with("got `lent-out`"), "{err}");
    }
}
