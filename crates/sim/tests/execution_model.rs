//! The simulator on small workloads whose outcome is worked out by hand, and
//! properties that must hold on any workload.

use pliant_core::model::JobClass;
use pliant_core::policy::{preset, Params, PRESETS};
use pliant_core::{Resources, SECOND};
use pliant_metrics::RunRecord;
use pliant_sim::{simulate, SimOptions};
use pliant_workload::{Cluster, Job, Phase, Task, Workload};
use proptest::prelude::*;

fn task(cores: u64, gb: u64, secs: u64) -> Task {
    Task { request: Resources::cores_gb(cores, gb), duration: secs * SECOND, estimate: Some(secs * SECOND) }
}

fn job(name: &str, class: JobClass, submit_s: u64, coupled: bool, tasks: Vec<Task>) -> Job {
    Job {
        name: name.into(),
        submit: submit_s * SECOND,
        class,
        priority: if class == JobClass::Short { 9 } else { 0 },
        phases: vec![Phase { deps: vec![], coupled, tasks }],
    }
}

fn run(w: &Workload, policy: &str) -> RunRecord {
    simulate(w, preset(policy, &Params::default()).unwrap(), &SimOptions::default()).unwrap()
}

fn secs(t: Option<u64>) -> f64 {
    t.unwrap() as f64 / SECOND as f64
}

/// One node ⟨8 CPU, 8 GB⟩. A long task ⟨8, 8⟩ of 100 s at t = 0; a short task
/// ⟨4, 4⟩ of 20 s at t = 10.
/// - fifo: long runs 0–100, short 100–120: short JCT 110 s, long 100 s, no waste.
/// - kill: the monitor (every 3 s) finds the short job starved at t = 12 and kills
///   the long task after 12 s of work (waste 12 s × 8 cores = 96 core-s). Short runs
///   12–32 (JCT 22 s, queueing 2 s); ⟨4, 4⟩ is left, too small for the long task,
///   which restarts at 32 and ends at 132.
#[test]
fn kill_versus_fifo_by_hand() {
    let w = Workload {
        cluster: Cluster { nodes: vec![Resources::cores_gb(8, 8)] },
        jobs: vec![
            job("long", JobClass::Long, 0, false, vec![task(8, 8, 100)]),
            job("short", JobClass::Short, 10, false, vec![task(4, 4, 20)]),
        ],
    };
    let fifo = run(&w, "fifo");
    assert_eq!((secs(fifo.jobs[0].jct()), secs(fifo.jobs[1].jct())), (100.0, 110.0));
    assert_eq!(fifo.waste_core_seconds, 0.0);

    let kill = run(&w, "kill");
    assert_eq!(secs(kill.jobs[1].jct()), 22.0);
    assert_eq!(secs(kill.jobs[1].queue_delay()), 2.0);
    assert_eq!(secs(kill.jobs[0].jct()), 132.0);
    assert_eq!(kill.waste_core_seconds, 96.0);
    assert_eq!(kill.preemptions.get("kill"), Some(&1));
    assert_eq!(kill.makespan, 132 * SECOND);
}

/// One node ⟨16, 16⟩. A long coupled job of two ⟨8, 8⟩ executors of 100 s; a short
/// ⟨8, 8⟩ task of 20 s at t = 10. Under kill, at t = 12 the younger executor (task 1;
/// both started at 0, ties go to the higher index) is killed: 96 core-s lost, and
/// its coupled sibling stalls at 12 s of progress. Short runs 12–32. Task 1
/// restarts at 32 and the sibling resumes: it ends at 32 + 88 = 120, task 1 at 132.
/// CPU in use integrates to 8×100 + 8×(12+100) + 8×20 = 1856 core-s.
#[test]
fn a_killed_executor_stalls_its_coupled_siblings() {
    let w = Workload {
        cluster: Cluster { nodes: vec![Resources::cores_gb(16, 16)] },
        jobs: vec![
            job("spark", JobClass::Long, 0, true, vec![task(8, 8, 100), task(8, 8, 100)]),
            job("query", JobClass::Short, 10, false, vec![task(8, 8, 20)]),
        ],
    };
    let kill = run(&w, "kill");
    assert_eq!(secs(kill.jobs[0].jct()), 132.0);
    assert_eq!(secs(kill.jobs[1].jct()), 22.0);
    assert_eq!(kill.waste_core_seconds, 96.0);
    let core_seconds = kill.cpu_mean * kill.makespan as f64 / SECOND as f64 * 16.0;
    assert!((core_seconds - 1856.0).abs() < 1e-6, "{core_seconds}");
}

/// A two-phase job on a big node: phase 0 has tasks of 10 s and 20 s, phase 1
/// (after phase 0) one task of 5 s: the barrier makes the JCT 20 + 5 = 25 s.
#[test]
fn barrier_waits_for_the_whole_upstream_phase() {
    let mut j = job("dag", JobClass::Long, 0, false, vec![task(1, 1, 10), task(1, 1, 20)]);
    j.phases.push(Phase { deps: vec![0], coupled: false, tasks: vec![task(1, 1, 5)] });
    let w = Workload { cluster: Cluster { nodes: vec![Resources::cores_gb(8, 8)] }, jobs: vec![j] };
    let r = run(&w, "fifo");
    assert_eq!(secs(r.jobs[0].jct()), 25.0);
    assert_eq!(secs(r.jobs[0].queue_delay()), 0.0);
}

/// Four kills fail a job (max_attempts = 4): a long task on a node that a stream of
/// short tasks keeps reclaiming.
#[test]
fn a_task_killed_max_attempts_times_fails_its_job() {
    let mut jobs = vec![job("long", JobClass::Long, 0, false, vec![task(8, 8, 1000)])];
    for i in 0..40 {
        jobs.push(job(&format!("q{i}"), JobClass::Short, 5 + 25 * i, false, vec![task(4, 4, 20)]));
    }
    let w = Workload { cluster: Cluster { nodes: vec![Resources::cores_gb(8, 8)] }, jobs };
    let r = run(&w, "kill");
    assert!(r.jobs[0].failed);
    assert_eq!(r.jobs[0].preemptions, 4);
    assert!(r.jobs[1..].iter().all(|j| !j.failed && j.end.is_some()));
}

fn strip_wall(mut r: RunRecord) -> RunRecord {
    r.cost.wall_seconds = 0.0;
    r
}

/// Same workload and policy → identical records (wall time aside).
#[test]
fn runs_are_deterministic() {
    let w = pliant_workload::scenarios::build("mixed", 5, 0.3).unwrap();
    for p in PRESETS {
        assert_eq!(strip_wall(run(&w, p.name)), strip_wall(run(&w, p.name)), "{}", p.name);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    /// Conservation: the CPU time integrated over the run equals the work of every
    /// task (each finished task did exactly its work) plus the work lost to kills
    /// (counted as waste). Attempts are unlimited so that every job finishes.
    #[test]
    fn cpu_time_is_work_plus_waste(
        specs in prop::collection::vec((any::<bool>(), 0u64..50, prop::collection::vec((1u64..=8, 1u64..=8, 1u64..=60), 1..5)), 1..10),
        policy in 0..PRESETS.len(),
    ) {
        let jobs: Vec<Job> = specs.iter().enumerate().map(|(i, (short, at, tasks))| {
            let class = if *short { JobClass::Short } else { JobClass::Long };
            job(&i.to_string(), class, *at, !short, tasks.iter().map(|&(c, m, d)| task(c, m, d)).collect())
        }).collect();
        let mut w = Workload { cluster: Cluster { nodes: vec![Resources::cores_gb(8, 8); 2] }, jobs };
        w.validate().unwrap();
        let params = Params { max_attempts: u32::MAX, ..Params::default() };
        let r = simulate(&w, preset(PRESETS[policy].name, &params).unwrap(), &SimOptions::default()).unwrap();
        prop_assert!(r.jobs.iter().all(|j| j.end.is_some()));
        let work: f64 = w.jobs.iter().flat_map(|j| j.tasks()).map(|t| t.request.cpu_milli as f64 / 1000.0 * t.duration as f64 / 1e6).sum();
        let used = r.cpu_mean * r.makespan as f64 / 1e6 * 16.0;
        prop_assert!((used - (work + r.waste_core_seconds)).abs() < 1e-6 * used.max(1.0), "used {} work {} waste {}", used, work, r.waste_core_seconds);
    }
}
