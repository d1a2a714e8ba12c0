//! The twin gives its replay's planner the swap rates the live planner was
//! given, at the same instants: a manager in this process under `pliant`
//! (one node ⟨8 CPU, 16 GB⟩, the monitor every second, a clock the test
//! sets; the test plays its agent). A long job of two ⟨4 CPU, 7 GB⟩ tasks
//! and, 10 s later, a short task ⟨1 CPU, 4 GB⟩ (5 s): at the policy's
//! 3 s/GB the long task is shrunk. Its reclaim is reported at 40 MB per
//! 0.8 s (20.48 s/GB), which the manager journals as the node's rate once
//! 256 MB have moved. The same pair again later: the live planner kills
//! instead (crates/manager/tests/swap_rates.rs works the costs out), and so
//! does the replay's, at the journal's figures.

mod common;

use pliant_core::model::TaskRef;
use pliant_core::{Micros, Resources, SECOND};
use pliant_live::protocol::{AgentOp, AgentReport};
use pliant_live::scratch::ScratchDir;
use pliant_manager::manager::Manager;
use pliant_manager::submit::SubmitRequest;
use pliant_sim::ExecModel;
use pliant_twin::{twin, Replay};
use serde_json::json;
use std::sync::atomic::{AtomicU64, Ordering};

fn step(m: &mut Manager, clock: &AtomicU64, at: Micros, reports: Vec<AgentReport>) -> Vec<AgentOp> {
    clock.store(at, Ordering::SeqCst);
    m.advance(reports.into_iter().map(|r| (0, r)).collect()).unwrap();
    m.take_ops(0)
}

/// The long job at `at`, the short task at `at` + 10 s; the monitor's
/// decision at `at` + 10 s, taken in at `at` + 10.5 s. Returns the short
/// task and what the node was told.
fn pair(m: &mut Manager, clock: &AtomicU64, at: Micros) -> (TaskRef, Vec<AgentOp>) {
    let submit = |m: &mut Manager, body| m.submit(serde_json::from_value::<SubmitRequest>(body).unwrap()).unwrap();
    clock.store(at, Ordering::SeqCst);
    submit(
        m,
        json!({"queue": "long", "tasks": 2, "cpu_milli": 4000, "mem_mb": 7168, "estimate_s": 1000, "command": ["sh"]}),
    );
    m.take_ops(0);
    clock.store(at + 10 * SECOND, Ordering::SeqCst);
    let short =
        submit(m, json!({"queue": "short", "cpu_milli": 1000, "mem_mb": 4096, "estimate_s": 5, "command": ["sh"]}));
    (TaskRef { job: pliant_core::model::JobId(short), task: 0 }, step(m, clock, at + 10 * SECOND + SECOND / 2, vec![]))
}

fn exit(task: TaskRef) -> AgentReport {
    AgentReport::Exited { task, code: Some(0), signal: None, stderr_tail: String::new() }
}

#[test]
fn the_replay_prices_with_the_rates_the_live_planner_was_given() {
    let dir = ScratchDir::new("pliant-twin-swap-rates").unwrap();
    let (mut m, clock) =
        common::clocked::manager(dir.path(), "pliant", &[("monitor_interval_s", "1")], Resources::cores_gb(8, 16));
    let (short, ops) = pair(&mut m, &clock, 0);
    let [AgentOp::Preempt { task: victim, .. }] = ops[..] else { panic!("{ops:?}") };
    let mut at = 10 * SECOND;
    for _ in 0..52 {
        at += 800_000;
        step(&mut m, &clock, at, vec![AgentReport::Reclaimed { task: victim, mem_mb: 40, freed_mb: 40, took_ms: 800 }]);
    }
    // The short task runs its 5 s; the victim is given its room back and
    // runs again 10 s later; the long job ends.
    step(&mut m, &clock, at + 5 * SECOND, vec![exit(short)]);
    step(&mut m, &clock, at + 15 * SECOND, vec![AgentReport::Resumed { task: victim }]);
    let long = victim.job;
    let ends = (0..2).map(|t| exit(TaskRef { job: long, task: t })).collect();
    step(&mut m, &clock, at + 20 * SECOND, ends);
    let (short, ops) = pair(&mut m, &clock, at + 30 * SECOND);
    assert!(
        matches!(
            ops[..],
            [AgentOp::Preempt { mechanism: pliant_core::MechanismKind::Kill, .. }, AgentOp::Launch { .. }]
        ),
        "{ops:?}"
    );
    // The short task ends, the killed task starts again; both long tasks
    // run 100 s more, so that the replay's long job holds the node as
    // the live one did.
    let relaunched = step(&mut m, &clock, at + 45 * SECOND, vec![exit(short)]);
    assert!(matches!(relaunched[..], [AgentOp::Launch { .. }]), "{relaunched:?}");
    let long = TaskRef { job: pliant_core::model::JobId(short.job.0 - 1), task: 0 };
    let ends = (0..2).map(|t| exit(TaskRef { task: t, ..long })).collect();
    step(&mut m, &clock, at + 145 * SECOND, ends);
    drop(m);

    let replay = Replay {
        exec: ExecModel::default(),
        reclaim_from: "default".into(),
        restore_from: "default".into(),
        journal_rates: true,
        registry: pliant_plugins::registry(),
        policy: None,
    };
    let report = twin(dir.path(), replay).unwrap();
    assert_eq!(report.rates.nodes.len(), 1, "{:?}", report.rates.nodes);
    let mechanisms = |p: &[pliant_twin::compare::Preemption]| p.iter().map(|p| p.mechanism).collect::<Vec<_>>();
    let c = &report.comparison;
    assert_eq!(mechanisms(&c.live_preemptions), ["graceful", "kill"]);
    assert_eq!(mechanisms(&c.sim_preemptions), ["graceful", "kill"], "{:?}", c.preemption_divergence);
}
