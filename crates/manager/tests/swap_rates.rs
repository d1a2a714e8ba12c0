//! The manager measures its node's swap rates and its planner prices with
//! them: reports fed by hand on a clock the test sets, so this runs
//! anywhere. Expected values are worked out in the comments.

use pliant_core::model::{JobId, TaskRef};
use pliant_core::{MechanismKind, Micros, Resources, SwapRates, SECOND};
use pliant_live::protocol::{AgentOp, AgentReport};
use pliant_live::scratch::ScratchDir;
use pliant_live::wire::NodeRecord;
use pliant_manager::events::Event;
use pliant_manager::journal::Journal;
use pliant_manager::manager::{ClusterConfig, Manager};
use pliant_manager::submit::SubmitRequest;
use serde_json::json;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// One node ⟨8 CPU, 16 GB⟩ under `pliant`, the monitor every second.
fn config() -> ClusterConfig {
    ClusterConfig {
        policy: "pliant".into(),
        params: vec![("monitor_interval_s".into(), "1".into())],
        nodes: vec![NodeRecord {
            name: "n0".into(),
            capacity: Resources::cores_gb(8, 16),
            mechanisms: MechanismKind::ALL.to_vec(),
            notes: vec![],
        }],
        epoch_unix_us: 0,
    }
}

/// The manager in `dir`, its clock the returned counter (core time).
fn open(dir: &ScratchDir) -> (Manager, Arc<AtomicU64>) {
    let mut m = Manager::open(dir.path(), config(), &pliant_plugins::registry()).unwrap().0;
    let clock = Arc::new(AtomicU64::new(0));
    let read = Arc::clone(&clock);
    m.set_clock(Box::new(move || read.load(Ordering::SeqCst)));
    (m, clock)
}

fn submit(m: &mut Manager, body: serde_json::Value) -> u32 {
    m.submit(serde_json::from_value::<SubmitRequest>(body).unwrap()).unwrap()
}

fn task(job: u32, task: u32) -> TaskRef {
    TaskRef { job: JobId(job), task }
}

/// At `at`: a long job of two ⟨4 CPU, 7 GB⟩ tasks (estimated 1000 s) fills
/// the node but 2 GB; at `at` + 10 s a short task ⟨1 CPU, 4 GB⟩ (5 s)
/// comes, and the monitor's run then (its own step, at its due instant,
/// taken when the clock reads `at` + 10.5 s) takes its deficit ⟨1 CPU, 2 GB⟩
/// from a long task that ran 10 s. Returns the jobs and what the node was
/// told.
fn short_needs_room(m: &mut Manager, clock: &AtomicU64, at: Micros) -> (u32, u32, Vec<AgentOp>) {
    clock.store(at, Ordering::SeqCst);
    let long =
        json!({"queue": "long", "tasks": 2, "cpu_milli": 4000, "mem_mb": 7168, "estimate_s": 1000, "command": ["sh"]});
    let long = submit(m, long);
    assert_eq!(m.take_ops(0).len(), 2, "both long tasks launch");
    clock.store(at + 10 * SECOND, Ordering::SeqCst);
    let short = json!({"queue": "short", "cpu_milli": 1000, "mem_mb": 4096, "estimate_s": 5, "command": ["sh"]});
    let short = submit(m, short);
    clock.store(at + 10 * SECOND + SECOND / 2, Ordering::SeqCst);
    m.advance(vec![]).unwrap();
    (long, short, m.take_ops(0))
}

/// Steps at `at` with `reports` from the node.
fn report(m: &mut Manager, clock: &AtomicU64, at: Micros, reports: Vec<AgentReport>) {
    clock.store(at, Ordering::SeqCst);
    m.advance(reports.into_iter().map(|r| (0, r)).collect()).unwrap();
}

// At the policy's 3 s/GB the 615 MB below the victim's working set swap out
// in 1.8 s: a shrink costs 41.3 core-s, a kill 4 × 10 + 4 × 5 = 60, so the
// first victim is shrunk. Its reclaim goes at 40 MB per 0.8 s (20.48 s/GB):
// once 256 MB have moved the manager gives its core that rate (a journaled
// `swap_rates` event), and the same need again (a second long job, a second
// short task) now costs a shrink 0.6 × 20.48 = 12.3 s of waiting: 12.3 +
// 4 × 17.3 + 12.3 ≈ 94 core-s, dearer than the kill's 60: the victim is
// killed. A restarted manager replays the event and prices as before.
#[test]
fn a_node_measured_slow_to_reclaim_is_no_longer_shrunk() {
    let dir = ScratchDir::new("pliant-manager-swap-rates").unwrap();
    let (mut m, clock) = open(&dir);
    let (long, short, ops) = short_needs_room(&mut m, &clock, 0);
    let [AgentOp::Preempt { task: victim, mechanism: MechanismKind::Graceful, limits }] = ops[..] else {
        panic!("a shrink at the policy's rates: {ops:?}")
    };
    assert_eq!(limits.mem_mb, 5 * 1024);
    let default = m.swap_rates()[0];
    assert_eq!((default.reclaim.from, default.reclaim.s_per_gb, default.restore.s_per_gb), ("default", 3.0, 5.1));

    // 2048 MB owed from the decision at 10 s, 40 MB per 0.8 s: 52 reports,
    // the last of 8 MB.
    let mut at = 10 * SECOND;
    let mut owed = 2048;
    while owed > 0 {
        at += 800_000;
        let mb = owed.min(40);
        owed -= mb;
        let r = AgentReport::Reclaimed { task: victim, mem_mb: mb, freed_mb: mb, took_ms: 800 };
        report(&mut m, &clock, at, vec![r]);
    }
    let shown = m.swap_rates()[0];
    assert_eq!((shown.reclaim.from, shown.reclaim.seen_mb), ("measured", 2048));
    assert!((shown.reclaim.s_per_gb - 20.48).abs() < 0.05, "{shown:?}");
    assert_eq!(shown.restore.from, "default");
    let launched = m.take_ops(0);
    assert!(launched.iter().any(|op| matches!(op, AgentOp::Launch { task: t, .. } if *t == task(short, 0))));
    // The short task ends, the victim comes back; the long job ends.
    let exit = |task| AgentReport::Exited { task, code: Some(0), signal: None, stderr_tail: String::new() };
    report(&mut m, &clock, at + 5 * SECOND, vec![exit(task(short, 0))]);
    report(&mut m, &clock, at + 6 * SECOND, vec![exit(task(long, 0)), exit(task(long, 1))]);
    m.take_ops(0);

    let (_, _, ops) = short_needs_room(&mut m, &clock, at + 10 * SECOND);
    assert!(
        matches!(ops[..], [AgentOp::Preempt { mechanism: MechanismKind::Kill, .. }, AgentOp::Launch { .. }]),
        "the measured rate makes the shrink dearer than the kill: {ops:?}"
    );
    let metrics = pliant_manager::metrics::Snapshot::of(&m).prometheus();
    assert!(
        metrics.contains("pliant_node_reclaim_seconds_per_gigabyte{node=\"n0\",from=\"measured\"} 20.4"),
        "{metrics}"
    );
    assert!(
        metrics.contains("pliant_node_restore_seconds_per_gigabyte{node=\"n0\",from=\"default\"} 5.1\n"),
        "{metrics}"
    );
    drop(m);

    let journal = Journal::open(&dir.path().join("journal.sqlite")).unwrap();
    let given: Vec<(Micros, SwapRates)> = (journal.steps().unwrap().iter())
        .flat_map(|s| s.events.iter().map(move |e| (s.now, e.clone())))
        .filter_map(|(now, e)| match e {
            Event::SwapRates { node: 0, rates } => Some((now, rates)),
            _ => None,
        })
        .collect();
    // 256 MB moved with the 7th report (280 MB in 5.6 s: 20.48 s/GB, at
    // 15.6 s); the rate holds after it, so it is given once, at the next
    // step (the monitor's at 16 s, before the 8th report at 16.4 s).
    let once = SwapRates { reclaim_per_gb: Some(20_480_000), restore_per_gb: None };
    assert_eq!(given, vec![(16 * SECOND, once)]);
    let (again, _) = open(&dir);
    assert_eq!(again.swap_rates()[0], shown, "the replay gives the core the journaled rates");
}
