//! A mechanism rule written on the public API alone, as a crate outside the
//! core writes one: each victim is taken by the operation it chooses, and
//! only a graceful choice keeps the step the planner sized.
//!
//! The workload: one ⟨32 CPU, 128 GB⟩ node, four long ⟨8, 16⟩ executors
//! holding every core; two short ⟨4, 4⟩ tasks arrive at 1 s, the monitor
//! runs at 3 s, the short tasks finish at 4 s, heartbeats follow to 24 s.

mod common;

use common::one_phase_job;
use pliant_core::model::{JobClass, JobId, TaskRef, TaskRequest};
use pliant_core::policy::steps::{Holding, Mechanism, MechanismPlugin, MechanismRule, View};
use pliant_core::policy::{CustomMechanism, MechanismSpec, Params, Policy};
use pliant_core::{Action, MechanismKind, Micros, Observation, Resources, Scheduler, SECOND};
use pliant_plugins::by_rule;
use pliant_plugins::preset;

/// Takes every victim by one operation.
#[derive(Debug, Clone)]
struct Always {
    kind: MechanismKind,
    shrinks: bool,
}

impl MechanismRule for Always {
    fn clone_box(&self) -> Box<dyn MechanismRule> {
        Box::new(self.clone())
    }

    fn choose(&mut self, _view: &View, _now: Micros, _victim: &Holding) -> MechanismKind {
        self.kind
    }

    fn shrinks(&self) -> bool {
        self.shrinks
    }
}

impl MechanismPlugin for Always {
    fn name(&self) -> &'static str {
        self.kind.name()
    }

    fn build(&self, policy: &Policy, nodes: usize) -> Box<dyn Mechanism> {
        by_rule(Box::new(self.clone()), policy, nodes)
    }
}

static GRACEFUL: Always = Always { kind: MechanismKind::Graceful, shrinks: true };
static IMMEDIATE: Always = Always { kind: MechanismKind::Immediate, shrinks: true };
static SUSPEND: Always = Always { kind: MechanismKind::Suspend, shrinks: false };

/// Preset `from` with `rule` as its mechanism.
fn with_rule(from: &str, rule: &'static Always) -> Policy {
    let mut policy = preset(from, &Params::default()).unwrap();
    policy.preemption.as_mut().unwrap().mechanism = MechanismSpec::Custom(CustomMechanism(rule));
    policy
}

/// Every action `policy` takes on the workload, from the short job's arrival on.
fn actions(policy: Policy) -> Vec<Action> {
    let mut s = Scheduler::new(&[Resources::cores_gb(32, 128)], policy).unwrap();
    let executors = (0..4).map(|_| TaskRequest { resources: Resources::cores_gb(8, 16), estimate: None }).collect();
    let short = (0..2).map(|_| TaskRequest { resources: Resources::cores_gb(4, 4), estimate: None }).collect();
    let mut out = Vec::new();
    s.observe(0, Observation::JobSubmitted(one_phase_job(0, JobClass::Long, executors))).unwrap();
    s.schedule(0, &mut out);
    out.clear();
    let mut short = one_phase_job(1, JobClass::Short, short);
    short.submit = SECOND;
    s.observe(SECOND, Observation::JobSubmitted(short)).unwrap();
    s.monitor(3 * SECOND, &mut out);
    s.schedule(3 * SECOND, &mut out);
    for task in 0..2 {
        s.observe(4 * SECOND, Observation::TaskFinished(TaskRef { job: JobId(1), task })).unwrap();
    }
    for beat in 2..=8 {
        s.monitor(beat * 3 * SECOND, &mut out);
        s.schedule(beat * 3 * SECOND, &mut out);
    }
    out
}

/// The preemptions among `actions`, by the kind each is counted under.
fn preemptions(actions: &[Action]) -> Vec<MechanismKind> {
    actions.iter().filter_map(|a| a.preemption().map(|p| p.mechanism)).collect()
}

#[test]
fn a_rule_choosing_graceful_steps_decides_as_gp() {
    let gp = actions(preset("gp", &Params::default()).unwrap());
    assert!(preemptions(&gp).contains(&MechanismKind::Graceful), "gp shrinks here: {gp:?}");
    assert_eq!(actions(with_rule("gp", &GRACEFUL)), gp);
}

#[test]
fn a_rule_choosing_immediate_suspends_whole_victims_the_planner_sized_steps_for() {
    let taken = preemptions(&actions(with_rule("gp", &IMMEDIATE)));
    assert!(!taken.is_empty());
    assert!(taken.iter().all(|&m| m == MechanismKind::Immediate), "{taken:?}");
}

/// Under `ip`'s planner the youngest executor (task 3) is the victim: `ip`
/// suspends it to its footprint, the rule freezes it in place, and the short
/// tasks start at once either way.
#[test]
fn a_rule_choosing_suspend_freezes_the_victim_ip_would_suspend_to_its_footprint() {
    let executor = TaskRef { job: JobId(0), task: 3 };
    let ip = actions(preset("ip", &Params::default()).unwrap());
    assert!(matches!(ip[0], Action::Immediate { task, .. } if task == executor), "{ip:?}");
    let frozen = actions(with_rule("ip", &SUSPEND));
    assert_eq!(frozen[0], Action::Suspend { task: executor });
    assert_eq!(preemptions(&frozen), [MechanismKind::Suspend]);
    assert!(frozen.contains(&Action::Resume { task: executor, resources: Resources::cores_gb(8, 16) }), "{frozen:?}");
}
