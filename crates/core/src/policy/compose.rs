//! Policies composed from steps: a preset to start from and the steps it
//! replaces, each by name (an experiment file's `[policies.NAME]`, the
//! command line's `--compose`). A preset is itself an entry of the built-in
//! table of compositions (`presets.rs`: its steps from one root), so a
//! composition naming only what a preset already has decides as that preset.

use super::presets::{preemption, single_queue, two_queues};
use super::{
    preset, unknown_preset, CheckpointSpec, HeadOfLine, JobOrder, MechanismSpec, Params, Placement, PlannerSpec,
    Policy, PreemptionSpec, ReservationSpec, Sizing,
};
use crate::model::Tier;
use crate::time::from_secs_f64;

/// Every step a composition may set, with the values it takes.
pub const STEPS: &[(&str, &[&str])] = &[
    ("queues", &["single", "short-long"]),
    ("order", &["fifo", "priority", "fair", "shortest-remaining"]),
    ("head_of_line", &["all", "per-class"]),
    ("placement", &["first-fit", "reserved-for-short", "pooled"]),
    ("planner", &["none", "capacity", "priority-levels", "cost"]),
    ("compute_dr", &["true", "false"]),
    (
        "mechanism",
        &[
            "kill",
            "immediate",
            "graceful",
            "suspend",
            "cheapest",
            "checkpoint-hdd",
            "checkpoint-ssd",
            "checkpoint-nvm",
            "adaptive-hdd",
            "adaptive-ssd",
            "adaptive-nvm",
        ],
    ),
    ("reservation", &["none", "timeout", "speculative", "speculative-deadline", "speculative-stragglers"]),
    ("sizing", &["requested", "elastic"]),
    ("attempts", &["limited", "unlimited"]),
];

/// Why a composition was refused: the step at fault (its index in the
/// steps given), or `None` for the preset it starts from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComposeError {
    /// The index of the step at fault, `None`: the preset.
    pub step: Option<usize>,
    /// What is wrong.
    pub reason: String,
}

/// The policy `name`: preset `from` with `steps` (step, value) applied in
/// order, under `params`.
pub fn compose(name: &str, from: &str, steps: &[(&str, &str)], params: &Params) -> Result<Policy, ComposeError> {
    let mut policy = preset(from, params).ok_or_else(|| ComposeError { step: None, reason: unknown_preset(from) })?;
    policy.name = name.to_string();
    for (i, &(step, value)) in steps.iter().enumerate() {
        set(&mut policy, step, value, params).map_err(|reason| ComposeError { step: Some(i), reason })?;
    }
    Ok(policy)
}

/// Sets one step of `policy`.
pub(super) fn set(policy: &mut Policy, step: &str, value: &str, params: &Params) -> Result<(), String> {
    let Some(&(_, values)) = STEPS.iter().find(|(s, _)| *s == step) else {
        let known: Vec<&str> = STEPS.iter().map(|(s, _)| *s).collect();
        return Err(crate::names::unknown("step", step, &known));
    };
    if !values.contains(&value) {
        return Err(format!("{step} takes {}, got `{value}`", values.join(", ")));
    }
    match step {
        "queues" => policy.queues = if value == "single" { single_queue() } else { two_queues(params.short_share) },
        "order" => {
            policy.order = match value {
                "fifo" => JobOrder::Fifo,
                "priority" => JobOrder::Priority,
                "fair" => JobOrder::Fair,
                _ => JobOrder::ShortestRemaining,
            };
            fair_pass(policy, params);
        }
        "head_of_line" => policy.head_of_line = if value == "all" { HeadOfLine::All } else { HeadOfLine::PerClass },
        "placement" => {
            policy.placement = match value {
                "first-fit" => Placement::FirstFit,
                "pooled" => Placement::Pooled,
                _ => Placement::ReservedForShort { fraction: params.reserve_fraction },
            }
        }
        "planner" if value == "none" => policy.preemption = None,
        "planner" => {
            preempting(policy, params).planner = match value {
                "capacity" => PlannerSpec::Capacity,
                "priority-levels" => PlannerSpec::PriorityLevels,
                _ => PlannerSpec::Cost,
            }
        }
        "compute_dr" => preempting(policy, params).compute_dr = value == "true",
        "mechanism" => preempting(policy, params).mechanism = mechanism(value, params),
        "reservation" => {
            let speculative = |isolation, stragglers| ReservationSpec::Speculative {
                prereserve: params.prereserve,
                isolation,
                stragglers,
            };
            policy.reservation = match value {
                "none" => None,
                "timeout" => Some(ReservationSpec::Timeout { timeout: from_secs_f64(params.reservation_timeout_s) }),
                "speculative" => Some(speculative(None, false)),
                "speculative-deadline" => Some(speculative(Some(params.isolation), false)),
                _ => Some(speculative(None, true)),
            }
        }
        "sizing" => {
            policy.sizing = if value == "requested" { Sizing::Requested } else { Sizing::Elastic(params.elastic()) };
            fair_pass(policy, params);
        }
        _ => policy.max_attempts = if value == "limited" { params.max_attempts } else { u32::MAX },
    }
    Ok(())
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

/// `policy`'s preemption; a policy that does not preempt starts from the
/// capacity monitor with ComputeDR, killing.
fn preempting<'a>(policy: &'a mut Policy, params: &Params) -> &'a mut PreemptionSpec {
    policy.preemption.get_or_insert_with(|| preemption(params, PlannerSpec::Capacity, true, MechanismSpec::Kill))
}

/// The mechanism named `value` (one of [`STEPS`]' `mechanism` values).
fn mechanism(value: &str, params: &Params) -> MechanismSpec {
    let checkpoint =
        |tier, adaptive| MechanismSpec::Checkpoint(CheckpointSpec { tier, adaptive, storage: params.storage });
    match value {
        "kill" => MechanismSpec::Kill,
        "immediate" => MechanismSpec::Immediate,
        "graceful" => MechanismSpec::Graceful,
        "suspend" => MechanismSpec::Suspend,
        "cheapest" => MechanismSpec::Cheapest,
        _ => {
            let (kind, tier) = value.split_once('-').expect("checked against STEPS");
            let tier = match tier {
                "hdd" => Tier::Hdd,
                "ssd" => Tier::Ssd,
                _ => Tier::Nvm,
            };
            checkpoint(tier, kind == "adaptive")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same_as(name: &str, from: &str, steps: &[(&str, &str)]) {
        let params = Params::default();
        let composed = compose(name, from, steps, &params).unwrap();
        assert_eq!(composed, preset(name, &params).unwrap(), "{from} + {steps:?}");
    }

    #[test]
    fn a_preset_is_the_composition_of_its_steps() {
        same_as("gp", "ip", &[("mechanism", "graceful")]);
        same_as("kill", "gp", &[("compute_dr", "false"), ("mechanism", "kill")]);
        same_as("checkpoint-ssd", "priority-kill", &[("mechanism", "checkpoint-ssd")]);
        same_as("adaptive-nvm", "checkpoint-hdd", &[("mechanism", "adaptive-nvm")]);
        same_as("ssr-stragglers", "timeout-reserve", &[("reservation", "speculative-stragglers")]);
        same_as("suspend", "ip", &[("mechanism", "suspend")]);
        same_as("fifo", "fifo", &[]);
        same_as("yarn", "fifo", &[("order", "fair")]);
        same_as("elastic", "yarn", &[("sizing", "elastic")]);
        same_as(
            "meganode",
            "yarn",
            &[("order", "shortest-remaining"), ("placement", "pooled"), ("head_of_line", "per-class")],
        );
        same_as(
            "priority-kill",
            "priority",
            &[("planner", "priority-levels"), ("compute_dr", "false"), ("attempts", "unlimited")],
        );
    }

    #[test]
    fn a_bad_step_or_value_names_its_index() {
        let params = Params::default();
        let err = compose("x", "gp", &[("order", "fifo"), ("mechansim", "kill")], &params).unwrap_err();
        assert_eq!(err.step, Some(1));
        assert!(err.reason.contains("mechanism"), "{}", err.reason);
        let err = compose("x", "gp", &[("mechanism", "shrink")], &params).unwrap_err();
        assert_eq!(err.step, Some(0));
        assert!(err.reason.starts_with("mechanism takes kill, immediate"), "{}", err.reason);
        assert_eq!(compose("x", "gq", &[], &params).unwrap_err().step, None);
    }

    #[test]
    fn preemption_steps_on_a_policy_without_preemption_start_from_the_capacity_monitor() {
        let params = Params::default();
        let p = compose("x", "fifo", &[("queues", "short-long"), ("mechanism", "suspend")], &params).unwrap();
        let spec = p.preemption.unwrap();
        assert_eq!(
            (spec.planner, spec.mechanism, spec.compute_dr),
            (PlannerSpec::Capacity, MechanismSpec::Suspend, true)
        );
        assert_eq!(compose("x", "gp", &[("planner", "none")], &params).unwrap().preemption, None);
    }
}
