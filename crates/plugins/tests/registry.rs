//! The registry of the built-in plugins: presets are compositions of their
//! steps, and bad steps and foreign plugins are refused, named.

use pliant_core::policy::{MechanismSpec, Params, PlannerSpec};
use pliant_plugins::registry;

fn same_as(name: &str, from: &str, steps: &[(&str, &str)]) {
    let registry = registry();
    let composed = registry.compose(name, from, steps).unwrap();
    assert_eq!(composed, registry.preset(name).unwrap(), "{from} + {steps:?}");
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
    let registry = registry();
    let err = registry.compose("x", "gp", &[("order", "fifo"), ("mechansim", "kill")]).unwrap_err();
    assert_eq!(err.step, Some(1));
    assert!(err.reason.contains("mechanism"), "{}", err.reason);
    let err = registry.compose("x", "gp", &[("mechanism", "shrink")]).unwrap_err();
    assert_eq!(err.step, Some(0));
    assert!(err.reason.starts_with("mechanism takes kill, immediate"), "{}", err.reason);
    assert_eq!(registry.compose("x", "gq", &[]).unwrap_err().step, None);
}

#[test]
fn preemption_steps_on_a_policy_without_preemption_start_from_the_capacity_monitor() {
    let (registry, params) = (registry(), Params::default());
    let profile = registry.compose("x", "fifo", &[("queues", "short-long"), ("mechanism", "suspend")]).unwrap();
    let spec = registry.build(&profile, &params).unwrap().preemption.unwrap();
    assert_eq!((spec.planner, spec.mechanism, spec.compute_dr), (PlannerSpec::Capacity, MechanismSpec::Suspend, true));
    let none = registry.compose("x", "gp", &[("planner", "none")]).unwrap();
    assert_eq!(registry.build(&none, &params).unwrap().preemption, None);
}

#[test]
fn a_profile_naming_a_plugin_the_registry_lacks_is_refused_naming_it() {
    let registry = registry();
    let mut profile = registry.preset("gp").unwrap();
    profile.preemption.as_mut().unwrap().mechanism = "lent-out".into();
    let err = registry.build(&profile, &Params::default()).unwrap_err();
    assert!(err.starts_with("policy `gp`: mechanism takes kill, immediate"), "{err}");
    assert!(err.ends_with("got `lent-out`"), "{err}");
}
