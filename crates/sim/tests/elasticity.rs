//! Memory elasticity (YARN-ME) end to end, on workloads worked out by hand.

use pliant_core::model::{Elasticity, ElasticityProfile, JobClass};
use pliant_core::policy::Params;
use pliant_core::{Resources, SECOND};
use pliant_metrics::RunRecord;
use pliant_plugins::preset;
use pliant_sim::{simulate, SimOptions};
use pliant_workload::{Cluster, Job, JobElasticity, Phase, Task, Workload};

fn task(gb: u64, secs: u64) -> Task {
    Task { request: Resources::new(1000, gb * 1000), duration: secs * SECOND, estimate: Some(secs * SECOND) }
}

fn job(name: &str, submit_s: u64, tasks: Vec<Task>, elastic: Option<JobElasticity>) -> Job {
    Job {
        name: name.into(),
        submit: submit_s * SECOND,
        class: JobClass::Long,
        priority: 0,
        phases: vec![Phase::independent(tasks)],
        elastic,
    }
}

fn penalty(estimated: f64, truth: f64, true_ideal_scale: f64) -> Option<JobElasticity> {
    Some(JobElasticity {
        estimate: Elasticity { profile: ElasticityProfile::max_penalty(estimated), min_mem_mb: None },
        truth: ElasticityProfile::max_penalty(truth),
        true_ideal_scale,
    })
}

fn run(w: &Workload, policy: &str) -> RunRecord {
    simulate(w, preset(policy, &Params::default()).unwrap(), &SimOptions::default()).unwrap()
}

fn jct(r: &RunRecord, job: usize) -> f64 {
    (r.jobs[job].end.unwrap() - r.jobs[job].submit) as f64 / SECOND as f64
}

/// Fig. 3: one highly utilised node ⟨16 cores, 10 GB⟩; a background task of
/// 8 GB runs 0–100 s; at 1 s a job of three 3 GB, 20 s tasks arrives (2×
/// penalty under-sized).
/// - yarn: 2 GB free, the tasks wait for the background task and run
///   100–120 s: JCT 119 s.
/// - elastic: the timeline says the job ends at 120 s; each task may take
///   300 MB (10 % of 3 GB) and run 40 s, ending at 41 s ≤ 120 s: all three
///   start at once (900 MB ≤ 2 GB), JCT 40 s although each task runs twice as long.
fn fig3() -> Workload {
    Workload {
        cluster: Cluster { am: None, nodes: vec![Resources::new(16_000, 10_000)] },
        jobs: vec![
            job("background", 0, vec![task(8, 100)], None),
            job("three", 1, vec![task(3, 20); 3], penalty(2.0, 2.0, 1.0)),
        ],
    }
}

#[test]
fn fig3_elastic_finishes_the_job_earlier_with_slower_tasks() {
    let w = fig3();
    let yarn = run(&w, "yarn");
    let elastic = run(&w, "elastic");
    assert_eq!(jct(&yarn, 1), 119.0);
    assert_eq!(jct(&elastic, 1), 40.0);
    assert_eq!(jct(&yarn, 0), 100.0);
    assert_eq!(jct(&elastic, 0), 100.0);
}

/// The same job, but a 3× penalty makes each elastic task run 60 s: it would
/// end at 61 s, still before 120 s, so it runs elastically (JCT 60 s); with a
/// 10× penalty (200 s, ending at 201 s > 120 s) it waits like under yarn.
#[test]
fn an_elastic_task_never_becomes_its_jobs_straggler() {
    let mut w = fig3();
    w.jobs[1].elastic = penalty(3.0, 3.0, 1.0);
    assert_eq!(jct(&run(&w, "elastic"), 1), 60.0);
    w.jobs[1].elastic = penalty(10.0, 10.0, 1.0);
    assert_eq!(jct(&run(&w, "elastic"), 1), 119.0);
}

/// Ground truth differs from the estimate: the scheduler decides on a 2×
/// estimate, the tasks really run 3× slower (60 s: JCT 60 s); a true ideal
/// memory 10 % above the request penalises even yarn's full-size tasks (20 s
/// × 2 = 40 s: JCT 139 s).
#[test]
fn the_simulator_runs_the_truth_not_the_estimate() {
    let mut w = fig3();
    w.jobs[1].elastic = penalty(2.0, 3.0, 1.0);
    assert_eq!(jct(&run(&w, "elastic"), 1), 60.0);
    w.jobs[1].elastic = penalty(2.0, 2.0, 1.1);
    assert_eq!(jct(&run(&w, "yarn"), 1), 139.0);
}

/// Meganode pools the nodes: two nodes of 5 GB hold a 6 GB task together,
/// and the job with the least work left goes first.
#[test]
fn meganode_pools_nodes_and_serves_the_shortest_job_first() {
    let w = Workload {
        cluster: Cluster { am: None, nodes: vec![Resources::new(8_000, 5_000); 2] },
        jobs: vec![
            job("blocker", 0, vec![task(10, 10)], None),
            job("long", 1, vec![task(6, 100)], None),
            job("short", 2, vec![task(6, 10)], None),
        ],
    };
    let r = run(&w, "meganode");
    // blocker 0–10 s; then short (10 s of work) before long (100 s).
    assert_eq!((jct(&r, 0), jct(&r, 2), jct(&r, 1)), (10.0, 18.0, 119.0));
}
