//! The built-in plugins' step builder: which plugin fills each step of a
//! policy the registry built, and the mechanism that runs a rule from
//! outside ([`by_rule`]).

use crate::bigc::{Capacity, ContainerPreemption};
use crate::checkpoint::{Checkpoint, Levels};
use crate::plain::{Kill, Suspend};
use crate::pliant::{Cheapest, Cost};
use crate::{ssr, yarn_me};
use pliant_core::policy::steps::{Mechanism, MechanismRule, Planner, StepBuilder, Steps};
use pliant_core::policy::{CheckpointSpec, JobOrder, MechanismSpec, PlannerSpec, Policy, PreemptionSpec};

/// The built-in plugins, which build the steps of every policy a
/// [`Registry`](pliant_core::policy::Registry) built from [`crate::registry`]
/// builds (a registered planner or mechanism through its own plugin, which
/// the policy names).
pub(crate) struct Builtin;

/// The built-in plugins (one for every policy: they keep no state).
pub(crate) static BUILTIN: Builtin = Builtin;

impl StepBuilder for Builtin {
    fn name(&self) -> &'static str {
        "built-in"
    }

    fn steps(&self, policy: &Policy, nodes: usize) -> Steps {
        Steps {
            planner: planner(policy),
            mechanism: mechanism(policy, nodes),
            reservation: ssr::reservation(policy),
            preference: ssr::preference(policy),
            placement_pass: yarn_me::build(policy, nodes),
        }
    }
}

/// The planner `policy` preempts with, if it preempts.
fn planner(policy: &Policy) -> Option<Box<dyn Planner>> {
    let spec = policy.preemption.as_ref()?;
    Some(match spec.planner {
        PlannerSpec::Capacity => Box::new(Capacity {
            preempts: policy.queues.iter().map(|q| q.preempts).collect(),
            compute_dr: spec.compute_dr,
            gp_step: spec.gp_step,
            footprint: spec.footprint,
            // YARN's capacity scheduler kills at random within the job (BIG-C §2.2).
            random_victims: spec.mechanism == MechanismSpec::Kill,
        }),
        PlannerSpec::PriorityLevels => Box::new(Levels {
            priority_order: policy.order == JobOrder::Priority,
            buffers: Default::default(),
            floors: Default::default(),
        }),
        PlannerSpec::Cost => Box::new(Cost {
            preempts: policy.queues.iter().map(|q| q.preempts).collect(),
            rates: spec.rates,
            max_attempts: policy.max_attempts,
            choices: Vec::new(),
        }),
        PlannerSpec::Custom(custom) => custom.0.build(policy),
    })
}

/// The mechanism `policy` preempts with, on a cluster of `nodes` nodes (a
/// policy that does not preempt kills only when a job is aborted: none).
fn mechanism(policy: &Policy, nodes: usize) -> Box<dyn Mechanism> {
    let max_attempts = policy.max_attempts;
    let Some(spec) = &policy.preemption else { return Box::new(Kill { max_attempts }) };
    match spec.mechanism {
        MechanismSpec::Kill => Box::new(Kill { max_attempts }),
        MechanismSpec::Immediate => Box::new(container(spec, false)),
        MechanismSpec::Graceful => Box::new(container(spec, true)),
        MechanismSpec::Suspend => {
            Box::new(Suspend { delayed_resumption: spec.delayed_resumption, offers: Default::default() })
        }
        MechanismSpec::Cheapest => Box::new(cheapest(policy, spec, nodes, None)),
        MechanismSpec::Checkpoint(c) => Box::new(Checkpoint::new(c, max_attempts, nodes)),
        MechanismSpec::Custom(custom) => custom.0.build(policy, nodes),
    }
}

/// The mechanism that takes each victim by the operation `rule` chooses,
/// under `policy`'s preemption parameters (footprint, r⃗_GP, delayed and
/// gradual resumption, checkpoint tier) on a cluster of `nodes` nodes:
/// what a `MechanismPlugin` builds for its rule. Resumption, the body's
/// reports and checkpoint images are handled as under
/// `MechanismSpec::Cheapest`. A policy that does not preempt only kills.
pub fn by_rule(rule: Box<dyn MechanismRule>, policy: &Policy, nodes: usize) -> Box<dyn Mechanism> {
    match &policy.preemption {
        Some(spec) => Box::new(cheapest(policy, spec, nodes, Some(rule))),
        None => Box::new(Kill { max_attempts: policy.max_attempts }),
    }
}

/// BIG-C's container preemption under `spec`: graceful or immediate.
fn container(spec: &PreemptionSpec, graceful: bool) -> ContainerPreemption {
    ContainerPreemption {
        graceful,
        footprint: spec.footprint,
        gp_step: spec.gp_step,
        delayed_resumption: spec.delayed_resumption,
        gradual_resumption: spec.gradual_resumption,
        offers: Default::default(),
        footprints: Default::default(),
    }
}

/// Each victim by its own mechanism: the planner's `Take::by`, or `rule`'s.
fn cheapest(policy: &Policy, spec: &PreemptionSpec, nodes: usize, rule: Option<Box<dyn MechanismRule>>) -> Cheapest {
    let max_attempts = policy.max_attempts;
    Cheapest {
        kill: Kill { max_attempts },
        container: container(spec, true),
        checkpoint: spec.rates.checkpoint.map(|c| {
            let spec = CheckpointSpec { tier: c.tier, adaptive: false, storage: c.storage };
            Checkpoint::new(spec, max_attempts, nodes)
        }),
        rule,
    }
}
