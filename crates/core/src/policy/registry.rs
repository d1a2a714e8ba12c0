//! The one place a [`Policy`] is built: a [`Registry`] knows every plugin
//! by name — the built-in ones, whose steps its [`StepBuilder`] builds, and
//! the planners and mechanisms registered from outside — resolves a preset
//! or a composition into a [`Profile`], and builds the policy a profile
//! names. Every body (the simulator's commands, the Python package, the
//! manager, the Slurm controller, the twin) builds through one: the plugin
//! crate's (`pliant_plugins::registry`).

use super::cost::Rates;
use super::profile::{Profile, POINTS};
use super::steps::{MechanismPlugin, PlannerPlugin, StepBuilder};
use super::{
    CheckpointSpec, CustomMechanism, CustomPlanner, HeadOfLine, JobOrder, MechanismSpec, Params, Placement,
    PlannerSpec, Plugins, Policy, PreemptionSpec, QueueSpec, ReservationSpec, Sizing,
};
use crate::model::{JobClass, Tier};
use crate::names::unknown;
use crate::time::from_secs_f64;

/// Why a composition was refused: the step at fault (its index in the
/// steps given), or `None` for the preset it starts from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComposeError {
    /// The index of the step at fault, `None`: the preset.
    pub step: Option<usize>,
    /// What is wrong.
    pub reason: String,
}

/// A preset: its name, a line about it and the composition it is.
pub struct PresetInfo {
    /// The name used with `--policies`.
    pub name: &'static str,
    /// What it does.
    pub about: &'static str,
    /// The points (`profile::POINTS`) it fills, in order, with their
    /// plugins, from the root profile (one FIFO queue, first fit, no
    /// preemption: `fifo`).
    pub steps: &'static [(&'static str, &'static str)],
}

/// Plugins by name: the built-in ones and those registered from outside,
/// the presets and the named policies beyond them. Cloning one is cheap.
#[derive(Clone)]
pub struct Registry {
    builtin: &'static dyn StepBuilder,
    presets: &'static [PresetInfo],
    planners: Vec<&'static dyn PlannerPlugin>,
    mechanisms: Vec<&'static dyn MechanismPlugin>,
    policies: Vec<Profile>,
}

impl Registry {
    /// A registry whose built-in plugins `builtin` builds, with `presets`
    /// as its built-in profiles (`pliant_plugins::registry`).
    pub fn new(builtin: &'static dyn StepBuilder, presets: &'static [PresetInfo]) -> Registry {
        Registry { builtin, presets, planners: Vec::new(), mechanisms: Vec::new(), policies: Vec::new() }
    }

    /// The presets, this registry's built-in profiles.
    pub fn presets(&self) -> &'static [PresetInfo] {
        self.presets
    }

    /// Registers a planner from outside the core under its name, which no
    /// planner may have already.
    pub fn add_planner(&mut self, plugin: &'static dyn PlannerPlugin) -> Result<(), String> {
        self.check_free("planner", plugin.name())?;
        self.planners.push(plugin);
        Ok(())
    }

    /// Registers a mechanism from outside the core under its name, which no
    /// mechanism may have already.
    pub fn add_mechanism(&mut self, plugin: &'static dyn MechanismPlugin) -> Result<(), String> {
        self.check_free("mechanism", plugin.name())?;
        self.mechanisms.push(plugin);
        Ok(())
    }

    /// Registers a named policy, which `preset` then finds as it finds a
    /// preset; its plugins must be registered first, and its name be no
    /// preset's or registered policy's.
    pub fn add_policy(&mut self, profile: Profile) -> Result<(), String> {
        if self.policy_names().contains(&profile.name.as_str()) {
            return Err(format!("a policy named `{}` exists already", profile.name));
        }
        for (point, plugin) in profile.points() {
            self.check(point, &plugin).map_err(|e| format!("policy `{}`: {e}", profile.name))?;
        }
        self.policies.push(profile);
        Ok(())
    }

    /// The names of the presets, then of the policies registered.
    pub fn policy_names(&self) -> Vec<&str> {
        self.presets.iter().map(|p| p.name).chain(self.policies.iter().map(|p| p.name.as_str())).collect()
    }

    fn check_free(&self, point: &str, name: &str) -> Result<(), String> {
        match self.plugins(point).contains(&name) {
            true => Err(format!("a {point} named `{name}` is registered already")),
            false => Ok(()),
        }
    }

    /// The plugins `point` takes here: the built-in ones, then those
    /// registered; empty for an unknown point.
    pub fn plugins(&self, point: &str) -> Vec<&'static str> {
        let builtin = POINTS.iter().find(|(p, _)| *p == point).map_or(&[][..], |(_, v)| *v);
        let mut names: Vec<&'static str> = builtin.iter().map(|(name, _)| *name).collect();
        match point {
            "planner" => names.extend(self.planners.iter().map(|p| p.name())),
            "mechanism" => names.extend(self.mechanisms.iter().map(|m| m.name())),
            _ => {}
        }
        names
    }

    /// The profile of preset `name`, or of the policy registered under it;
    /// the error names every one.
    pub fn preset(&self, name: &str) -> Result<Profile, String> {
        if let Some(registered) = self.policies.iter().find(|p| p.name == name) {
            return Ok(registered.clone());
        }
        let Some(info) = self.presets.iter().find(|p| p.name == name) else {
            return Err(unknown("policy", name, &self.policy_names()));
        };
        let mut profile = Profile::root(name);
        for &(point, plugin) in info.steps {
            profile.fill(point, plugin);
        }
        Ok(profile)
    }

    /// The policy `name`: preset `from` with `steps` (point, plugin) filled
    /// in order.
    pub fn compose(&self, name: &str, from: &str, steps: &[(&str, &str)]) -> Result<Profile, ComposeError> {
        let mut profile = self.preset(from).map_err(|reason| ComposeError { step: None, reason })?;
        profile.name = name.to_string();
        for (i, &(point, plugin)) in steps.iter().enumerate() {
            self.fill(&mut profile, point, plugin).map_err(|reason| ComposeError { step: Some(i), reason })?;
        }
        Ok(profile)
    }

    /// Fills `point` of `profile` with `plugin`, if this registry has it
    /// there; the error lists what it has.
    pub fn fill(&self, profile: &mut Profile, point: &str, plugin: &str) -> Result<(), String> {
        self.check(point, plugin)?;
        profile.fill(point, plugin);
        Ok(())
    }

    /// Whether `point` exists and takes `plugin` here; the error lists what does.
    fn check(&self, point: &str, plugin: &str) -> Result<(), String> {
        let known: Vec<&str> = POINTS.iter().map(|(p, _)| *p).collect();
        if !known.contains(&point) {
            return Err(unknown("step", point, &known));
        }
        let plugins = self.plugins(point);
        match plugins.contains(&plugin) {
            true => Ok(()),
            false => Err(format!("{point} takes {}, got `{plugin}`", plugins.join(", "))),
        }
    }

    /// The policy `profile` names, under `params`. A plugin this registry
    /// lacks (a journal written by another binary) is an error naming it.
    pub fn build(&self, profile: &Profile, params: &Params) -> Result<Policy, String> {
        for (point, plugin) in profile.points() {
            self.check(point, &plugin).map_err(|e| format!("policy `{}`: {e}", profile.name))?;
        }
        let mut policy = root(params, self.builtin);
        policy.name = profile.name.clone();
        policy.queues = match profile.queues.as_str() {
            "single" => single_queue(),
            _ => two_queues(params.short_share),
        };
        policy.order = match profile.order.as_str() {
            "fifo" => JobOrder::Fifo,
            "priority" => JobOrder::Priority,
            "fair" => JobOrder::Fair,
            _ => JobOrder::ShortestRemaining,
        };
        policy.head_of_line = if profile.head_of_line == "all" { HeadOfLine::All } else { HeadOfLine::PerClass };
        policy.placement = match profile.placement.as_str() {
            "first-fit" => Placement::FirstFit,
            "pooled" => Placement::Pooled,
            _ => Placement::ReservedForShort { fraction: params.reserve_fraction },
        };
        policy.preemption = profile
            .preemption
            .as_ref()
            .map(|p| preemption(params, self.planner(&p.planner), p.compute_dr, self.mechanism(&p.mechanism, params)));
        let speculative = |isolation, stragglers| ReservationSpec::Speculative {
            prereserve: params.prereserve,
            isolation,
            stragglers,
        };
        policy.reservation = match profile.reservation.as_str() {
            "none" => None,
            "timeout" => Some(ReservationSpec::Timeout { timeout: from_secs_f64(params.reservation_timeout_s) }),
            "speculative" => Some(speculative(None, false)),
            "speculative-deadline" => Some(speculative(Some(params.isolation), false)),
            _ => Some(speculative(None, true)),
        };
        policy.sizing =
            if profile.sizing == "requested" { Sizing::Requested } else { Sizing::Elastic(params.elastic()) };
        policy.max_attempts = if profile.attempts == "limited" { params.max_attempts } else { u32::MAX };
        fair_pass(&mut policy, params);
        Ok(policy)
    }

    /// The planner named `name` (checked).
    fn planner(&self, name: &str) -> PlannerSpec {
        match name {
            "capacity" => PlannerSpec::Capacity,
            "priority-levels" => PlannerSpec::PriorityLevels,
            "cost" => PlannerSpec::Cost,
            _ => {
                let plugin = self.planners.iter().find(|p| p.name() == name).expect("checked");
                PlannerSpec::Custom(CustomPlanner(*plugin))
            }
        }
    }

    /// The mechanism named `name` (checked).
    fn mechanism(&self, name: &str, params: &Params) -> MechanismSpec {
        let checkpoint =
            |tier, adaptive| MechanismSpec::Checkpoint(CheckpointSpec { tier, adaptive, storage: params.storage });
        let tier = |t: &str| match t {
            "hdd" => Tier::Hdd,
            "ssd" => Tier::Ssd,
            _ => Tier::Nvm,
        };
        match name {
            "kill" => MechanismSpec::Kill,
            "immediate" => MechanismSpec::Immediate,
            "graceful" => MechanismSpec::Graceful,
            "suspend" => MechanismSpec::Suspend,
            "cheapest" => MechanismSpec::Cheapest,
            _ => match name.split_once('-') {
                Some(("checkpoint", t)) => checkpoint(tier(t), false),
                Some(("adaptive", t)) => checkpoint(tier(t), true),
                _ => {
                    let plugin = self.mechanisms.iter().find(|m| m.name() == name).expect("checked");
                    MechanismSpec::Custom(CustomMechanism(*plugin))
                }
            },
        }
    }
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let planners: Vec<&str> = self.planners.iter().map(|p| p.name()).collect();
        let mechanisms: Vec<&str> = self.mechanisms.iter().map(|m| m.name()).collect();
        let policies: Vec<&str> = self.policies.iter().map(|p| p.name.as_str()).collect();
        f.debug_struct("Registry")
            .field("planners", &planners)
            .field("mechanisms", &mechanisms)
            .field("policies", &policies)
            .finish()
    }
}

fn single_queue() -> Vec<QueueSpec> {
    vec![QueueSpec {
        name: "default",
        classes: vec![JobClass::Short, JobClass::Long],
        guaranteed: 1.0,
        preempts: false,
    }]
}

fn two_queues(short_share: f64) -> Vec<QueueSpec> {
    vec![
        QueueSpec { name: "short", classes: vec![JobClass::Short], guaranteed: short_share, preempts: true },
        // BIG-C §5.1: the rest "was assigned to the long job queue in a best-effort
        // manner": long jobs never preempt short ones.
        QueueSpec { name: "long", classes: vec![JobClass::Long], guaranteed: 1.0 - short_share, preempts: false },
    ]
}

/// The policy of the root profile (`Profile::root`), with the settings no
/// point fills, its steps built by `builtin`.
fn root(params: &Params, builtin: &'static dyn StepBuilder) -> Policy {
    Policy {
        name: String::new(),
        queues: single_queue(),
        order: JobOrder::Fifo,
        head_of_line: HeadOfLine::All,
        placement: Placement::FirstFit,
        preemption: None,
        max_attempts: params.max_attempts,
        locality_wait: params.locality_wait(),
        reservation: None,
        sizing: Sizing::Requested,
        node_reservations: false,
        backfill: Some(false),
        am: params.yarn.am(),
        per_heartbeat: params.yarn.containers_per_heartbeat,
        node_heartbeat: params.elastic().heartbeat,
        am_start: params.yarn.am_heartbeat_s.map(from_secs_f64),
        plugins: Plugins(builtin),
    }
}

/// The resource monitor's preemption with `planner` and `mechanism`.
fn preemption(params: &Params, planner: PlannerSpec, compute_dr: bool, mechanism: MechanismSpec) -> PreemptionSpec {
    PreemptionSpec {
        planner,
        interval: params.monitor_interval(),
        compute_dr,
        mechanism,
        delayed_resumption: params.delayed_resumption,
        gp_step: params.gp_step(),
        gradual_resumption: params.gradual_resumption,
        footprint: params.footprint(),
        rates: Rates::from_params(params),
    }
}

/// The fair order is YARN's fair scheduler: its node pass reserves nodes
/// (YARN-ME §3.3, the `node_reservations` key, on unless set off) and
/// backfills reserved nodes as the `backfill` key says — under requested
/// sizes off unless set on, under elastic sizing as the workload's model
/// has it unless set. Any other order has neither.
fn fair_pass(policy: &mut Policy, params: &Params) {
    let fair = policy.order == JobOrder::Fair;
    policy.node_reservations = fair && params.yarn.node_reservations.unwrap_or(true);
    policy.backfill = match policy.sizing {
        Sizing::Elastic(_) if fair => params.yarn.backfill,
        _ => Some(fair && params.yarn.backfill.unwrap_or(false)),
    };
}
