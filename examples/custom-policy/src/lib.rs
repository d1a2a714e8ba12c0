//! A preemption policy written outside pliant, on its public plugin API
//! alone (`docs/writing-a-policy.md` walks through it).
//!
//! The planner, *youngest first*: a queue under its guarantee with tasks
//! waiting takes back what they ask (up to its guarantee, less what is
//! free) from the queues over theirs, the youngest running attempts first.
//! The mechanism rule, *kill young*: a victim whose attempt started less
//! than [`KILL_UNDER`] ago is killed (it loses little work), an older one
//! is suspended to its footprint (where its node can) and resumes on its
//! node later.
//!
//! The node-aware planner, *node fit* ([`node_fit()`]): the fewest running
//! long tasks on one node that make room for the first waiting short task.

mod node_fit;

use pliant_core::model::TaskState;
use pliant_core::policy::steps::{Holding, Mechanism, MechanismPlugin, MechanismRule};
use pliant_core::policy::steps::{Planner, PlannerPlugin, Take, View};
use pliant_core::policy::{Params, Policy, Registry};
use pliant_core::{MechanismKind, Micros, SECOND};
use pliant_metrics::RunRecord;
use pliant_plugins::by_rule;
use pliant_plugins::preset;
use pliant_sim::SimOptions;
use pliant_workload::scenarios::{self, LongJobs};

/// Attempts younger than this are killed, older ones suspended.
pub const KILL_UNDER: Micros = 60 * SECOND;

/// The planner: what it takes from whom.
#[derive(Debug, Clone)]
struct YoungestFirst;

impl Planner for YoungestFirst {
    fn clone_box(&self) -> Box<dyn Planner> {
        Box::new(self.clone())
    }

    fn plan(&mut self, view: &View, _mechanism: &dyn Mechanism, now: Micros) -> Vec<Take> {
        let free = view.total().saturating_sub(&view.allocated());
        let mut takes = Vec::new();
        for starved in 0..view.queue_count() {
            let room = view.queue_guaranteed(starved).saturating_sub(&view.queue_used(starved));
            let mut need = view.pending_demand(starved).min(&room).saturating_sub(&free);
            if need.is_zero() {
                continue;
            }
            // Every running task of a queue over its guarantee, youngest first.
            let over = (0..view.queue_count())
                .filter(|&q| q != starved && !view.queue_used(q).fits_in(&view.queue_guaranteed(q)));
            let mut victims: Vec<_> =
                over.flat_map(|q| view.holding(q, now)).filter(|h| h.state == TaskState::Running).collect();
            victims.sort_by_key(|h| std::cmp::Reverse((h.started, h.task)));
            for victim in victims {
                if need.is_zero() {
                    break;
                }
                takes.push(Take { task: victim.task, shrink_to: None, by: None });
                need = need.saturating_sub(&victim.allocated);
            }
        }
        takes
    }
}

/// The mechanism rule: by which operation each victim is taken.
#[derive(Debug, Clone)]
struct KillYoung;

impl MechanismRule for KillYoung {
    fn clone_box(&self) -> Box<dyn MechanismRule> {
        Box::new(self.clone())
    }

    fn choose(&mut self, view: &View, now: Micros, victim: &Holding) -> MechanismKind {
        let can_suspend = view.node_can(victim.node.0 as usize, MechanismKind::Immediate);
        if now - victim.started < KILL_UNDER || !can_suspend {
            MechanismKind::Kill
        } else {
            MechanismKind::Immediate
        }
    }
}

/// The plugins a policy names: they build the planner and the mechanism for each run.
struct Plugins;

impl PlannerPlugin for Plugins {
    fn name(&self) -> &'static str {
        "youngest-first"
    }

    fn build(&self, _policy: &Policy) -> Box<dyn Planner> {
        Box::new(YoungestFirst)
    }
}

impl MechanismPlugin for Plugins {
    fn name(&self) -> &'static str {
        "kill-young"
    }

    fn build(&self, policy: &Policy, nodes: usize) -> Box<dyn Mechanism> {
        by_rule(Box::new(KillYoung), policy, nodes)
    }
}

static PLUGINS: Plugins = Plugins;
static NODE_FIT: node_fit::NodeFitPlugin = node_fit::NodeFitPlugin;

/// The built-in plugins with this crate's planners (`youngest-first`,
/// `node-fit`) and mechanism rule (`kill-young`) registered by name.
pub fn registry() -> Registry {
    let mut registry = pliant_plugins::registry();
    registry.add_planner(&PLUGINS).expect("a planner name of its own");
    registry.add_planner(&NODE_FIT).expect("a planner name of its own");
    registry.add_mechanism(&PLUGINS).expect("a mechanism name of its own");
    registry
}

/// `pliant`, whole, with this crate's planners, mechanism rule and policies
/// `youngest-first` and `node-fit` registered: every command takes them by
/// name.
pub fn app() -> pliant_cli::App {
    let registry = registry();
    let youngest = registry.compose("youngest-first", "pliant", YOUNGEST_FIRST).expect("registered plugins");
    let node_fit = registry.compose("node-fit", "pliant", NODE_FIT_STEPS).expect("registered plugins");
    let app = pliant_cli::App::new().planner(&PLUGINS).planner(&NODE_FIT).mechanism(&PLUGINS);
    app.policy(youngest).policy(node_fit)
}

/// The steps that make `youngest-first` from `pliant`.
const YOUNGEST_FIRST: &[(&str, &str)] = &[("mechanism", "kill-young"), ("planner", "youngest-first")];

/// The step that makes `node-fit` from `pliant`.
const NODE_FIT_STEPS: &[(&str, &str)] = &[("planner", "node-fit")];

/// Preset `from` with its mechanism replaced by the rule, named `name`.
pub fn kill_young(from: &str, name: &str) -> Policy {
    compose(name, from, &[("mechanism", "kill-young")])
}

/// The policy: `pliant`'s queues and monitor, this planner and this rule.
pub fn youngest_first() -> Policy {
    compose("youngest-first", "pliant", YOUNGEST_FIRST)
}

/// The node-aware policy: `pliant`'s queues, monitor and mechanism, with
/// the planner `node-fit` (whose takes name their mechanism, a kill).
pub fn node_fit() -> Policy {
    compose("node-fit", "pliant", NODE_FIT_STEPS)
}

/// Preset `from` with `steps`, named `name`, built through [`registry`].
fn compose(name: &str, from: &str, steps: &[(&str, &str)]) -> Policy {
    let registry = registry();
    let profile = registry.compose(name, from, steps).expect("a built-in preset and registered plugins");
    registry.build(&profile, &Params::default()).expect("registered plugins")
}

/// Runs `youngest-first`, `gp` and `pliant` on built-in scenario `scenario`
/// (seed `seed`, scale 1), every decision recorded.
pub fn compare(scenario: &str, seed: u64) -> Vec<RunRecord> {
    let presets = ["gp", "pliant"].map(|name| preset(name, &Params::default()).expect("a built-in preset"));
    run(scenario, seed, [youngest_first()].into_iter().chain(presets))
}

/// Runs `policies` on built-in scenario `scenario` (seed `seed`, scale 1),
/// every decision recorded.
pub fn run(scenario: &str, seed: u64, policies: impl IntoIterator<Item = Policy>) -> Vec<RunRecord> {
    let workload = scenarios::build(scenario, seed, 1.0, LongJobs::Spark).expect("a built-in scenario");
    let opts = SimOptions { record_decisions: true, ..SimOptions::default() };
    policies
        .into_iter()
        .map(|policy| pliant_sim::simulate(&workload, policy, &opts).expect("the scenario runs"))
        .collect()
}
