//! Both bodies run the core through the one step driver, so live mode keeps
//! the same deadlines as the simulator: the same small DAG workload goes
//! through the simulator and through the manager, whose clock the test sets
//! (it plays the agent: a task exits 0 when its duration has passed, and the
//! manager is stepped at each exit and at each deadline it names).
//!
//! One node of three slots ⟨1 CPU, 256 MB⟩. H (priority 9): phase 0 of tasks
//! of 10, 20 and 200 s, then phase 1 of three 10 s tasks. L (priority 0): one
//! 50 s task. Both submitted at 0; H's phase 0 takes the three slots.

mod common;

use pliant_core::model::{JobClass, TaskRef};
use pliant_core::policy::Params;
use pliant_core::{Micros, Resources, SECOND};
use pliant_live::protocol::AgentOp;
use pliant_live::scratch::ScratchDir;
use pliant_manager::manager::Manager;
use pliant_manager::submit::SubmitRequest;
use pliant_plugins::preset;
use pliant_sim::{simulate, SimOptions};
use pliant_workload::{Cluster, Job, Phase, Task, Workload};
use serde_json::json;
use std::sync::atomic::Ordering;

const SLOT: Resources = Resources::new(1000, 256);
const NODE: Resources = Resources::new(3000, 768);

/// Task durations in seconds, per job, tasks in phase order.
const DURATIONS: [&[u64]; 2] = [&[10, 20, 200, 10, 10, 10], &[50]];

/// (first start, end) of each job.
type Spans = Vec<(Option<Micros>, Option<Micros>)>;

fn phase(deps: Vec<u32>, secs: &[u64]) -> Phase {
    let tasks = secs.iter().map(|&s| Task { request: SLOT, duration: s * SECOND, estimate: None }).collect();
    Phase { deps, coupled: false, local: false, tasks, stages: vec![] }
}

fn job(name: &str, priority: u8, phases: Vec<Phase>) -> Job {
    Job { name: name.into(), submit: 0, class: JobClass::Long, priority, phases, elastic: None }
}

/// (first start, end) of H and L in the simulator.
fn simulated(policy: &str, params: &Params) -> Spans {
    let h = DURATIONS[0];
    let jobs = vec![
        job("h", 9, vec![phase(vec![], &h[..3]), phase(vec![0], &h[3..])]),
        job("l", 0, vec![phase(vec![], DURATIONS[1])]),
    ];
    let workload = Workload { cluster: Cluster { am: None, nodes: vec![NODE] }, jobs };
    let r = simulate(&workload, preset(policy, params).unwrap(), &SimOptions::default()).unwrap();
    r.jobs.iter().map(|j| (j.first_start, j.end)).collect()
}

/// (first start, end) of H and L in the manager, and the deadline it named
/// after H's second task ended (at 20 s).
fn live(policy: &str, params: &[(&str, &str)]) -> (Spans, Option<Micros>) {
    let dir = ScratchDir::new(&format!("pliant-step-driver-{policy}")).unwrap();
    live_in(dir.path(), policy, params)
}

/// As [`live`], the manager's state in `dir`.
fn live_in(dir: &std::path::Path, policy: &str, params: &[(&str, &str)]) -> (Spans, Option<Micros>) {
    let (mut m, clock) = common::clocked::manager(dir, policy, params, NODE);
    let submit = |m: &mut Manager, body| m.submit(serde_json::from_value::<SubmitRequest>(body).unwrap()).unwrap();
    submit(&mut m, json!({"priority": 9, "command": ["sh"], "phases": [{"tasks": 3}, {"tasks": 3, "after": [0]}]}));
    submit(&mut m, json!({"priority": 0, "command": ["sh"]}));
    let mut running: Vec<(Micros, TaskRef)> = Vec::new();
    let mut named_at_20 = None;
    loop {
        let now = clock.load(Ordering::SeqCst);
        for op in m.take_ops(0) {
            if let AgentOp::Launch { task, .. } = op {
                running.push((now + DURATIONS[task.job.0 as usize][task.task as usize] * SECOND, task));
            }
        }
        if now == 20 * SECOND {
            named_at_20 = m.next_deadline();
        }
        let exit = running.iter().map(|&(end, _)| end).min();
        let Some(next) = [exit, m.next_deadline()].into_iter().flatten().min() else { break };
        clock.store(next, Ordering::SeqCst);
        common::clocked::exit_due(&mut m, &mut running, next);
    }
    let jobs = m.jobs().iter().map(|j| (j.first_start_us, j.end_us)).collect();
    (jobs, named_at_20)
}

fn secs(t: Option<Micros>) -> f64 {
    t.unwrap() as f64 / SECOND as f64
}

/// ssr-deadline (P = 0.9): at 20 s phase 0 has finished 10 and 20 s and runs
/// one task for 20 s: t_m = 10 s, α = 2 / (ln 2 + ln 2) = 1 / ln 2, and
/// D = 10 s · (1 − 0.9^(1/3))^(−ln 2) ≈ 103.13 s after the phase started.
/// Both reserved slots lapse then and L starts on one (ends ≈ 153.13 s); at
/// 200 s phase 1 takes the three slots, H ends at 210 s. The manager asks to
/// be called back at D, and carries out the same decisions at the same µs.
#[test]
fn a_reservation_deadline_expires_at_the_same_instant_live_and_simulated() {
    let (live_jobs, named) = live("ssr-deadline", &[]);
    let sim_jobs = simulated("ssr-deadline", &Params::default());
    assert_eq!(live_jobs, sim_jobs);
    let d = sim_jobs[1].0;
    assert!((secs(d) - 103.13).abs() < 0.01, "deadline {} s", secs(d));
    assert_eq!(named, d);
    assert_eq!(secs(sim_jobs[1].1), secs(d) + 50.0);
    assert_eq!(sim_jobs[0], (Some(0), Some(210 * SECOND)));
}

/// timeout-reserve with a 5 s timeout: the slots freed at 10 and 20 s are
/// kept until 15 and 25 s; L takes the first at 15 s and ends at 65 s. The
/// manager names 25 s as its deadline at 20 s (the slot freed then).
#[test]
fn a_reservation_timeout_lapses_at_the_same_instant_live_and_simulated() {
    let mut params = Params::default();
    params.set("reservation_timeout_s", "5").unwrap();
    let (live_jobs, named) = live("timeout-reserve", &[("reservation_timeout_s", "5")]);
    let sim_jobs = simulated("timeout-reserve", &params);
    assert_eq!(live_jobs, sim_jobs);
    assert_eq!(sim_jobs[1], (Some(15 * SECOND), Some(65 * SECOND)));
    assert_eq!(named, Some(25 * SECOND));
}

/// ssr without a deadline: the slots stay H's until phase 1 takes them at
/// 200 s; L waits for H's end at 210 s. No deadline is named.
#[test]
fn without_a_deadline_the_lower_job_waits_for_the_barrier_in_both_bodies() {
    let (live_jobs, named) = live("ssr", &[]);
    let sim_jobs = simulated("ssr", &Params::default());
    assert_eq!(live_jobs, sim_jobs);
    assert_eq!(sim_jobs, vec![(Some(0), Some(210 * SECOND)), (Some(210 * SECOND), Some(260 * SECOND))]);
    assert_eq!(named, None);
}

/// `pliant twin --policy` replays a run under another policy: the run's own
/// (ssr-deadline) decides as it did, priority (no reservation) starts L at
/// 10 s, on the slot H's first task freed.
#[test]
fn the_twin_replays_a_run_under_the_policy_asked() {
    let dir = ScratchDir::new("pliant-step-driver-twin").unwrap();
    let (jobs, _) = live_in(dir.path(), "ssr-deadline", &[]);
    let twin = |more: &[&str]| -> serde_json::Value {
        let state = dir.path().to_str().unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_pliant"))
            .args([&["twin", state, "--format", "json"][..], more].concat())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    // L's queueing in the replay (it was submitted at 0).
    let start_of_l = |report: &serde_json::Value| report["jobs"][1]["sim_queue_s"].as_f64().unwrap();
    let own = twin(&[]);
    assert_eq!(own["policy"], "ssr-deadline");
    assert!((start_of_l(&own) - secs(jobs[1].0)).abs() < 1e-6, "{own}");
    assert!(start_of_l(&own) > 100.0, "L waits for the reservations to lapse: {own}");
    let other = twin(&["--policy", "priority"]);
    assert_eq!(other["policy"], "priority");
    assert!((start_of_l(&other) - 10.0).abs() < 1e-6, "{other}");
}
