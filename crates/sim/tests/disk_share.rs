//! YARN-ME §2.6 in the execution model: under-sized reducers that spill at
//! once share their node's disk, worked out by hand.
//!
//! Every task here: 1 core, 5,000 MB requested, 100 s of work, but its true
//! ideal memory is 10,000 MB (`true_ideal_scale` 2), so under `yarn` (which
//! gives the request) it is under-sized. Reducer model: 7,000 MB of input, a
//! shuffle buffer of 0.7 × 5,000 = 3,500 MB, so it spills ⌊7,000 / 3,500⌋ ×
//! 3,500 = 7,000 MB at its own 100 MB/s (10,000 µs per MB): alone it runs
//! 100 + 70 = 170 s and asks 7,000 / 170 ≈ 41.2 MB/s of the disk on average.

use pliant_core::model::{Elasticity, ElasticityProfile, JobClass};
use pliant_core::policy::Params;
use pliant_core::{Micros, Resources, SECOND};
use pliant_metrics::RunRecord;
use pliant_plugins::preset;
use pliant_sim::{simulate, SimOptions};
use pliant_workload::{Cluster, Job, JobElasticity, Phase, Task, Workload};

fn job(name: &str, submit_s: u64, tasks: usize, truth: ElasticityProfile) -> Job {
    let task = Task { request: Resources::new(1000, 5000), duration: 100 * SECOND, estimate: Some(100 * SECOND) };
    Job {
        name: name.into(),
        submit: submit_s * SECOND,
        class: JobClass::Long,
        priority: 0,
        phases: vec![Phase::independent(vec![task; tasks])],
        elastic: Some(JobElasticity {
            estimate: Elasticity { profile: ElasticityProfile::max_penalty(1.5), min_mem_mb: None },
            truth,
            true_ideal_scale: 2.0,
        }),
    }
}

const REDUCER: ElasticityProfile = ElasticityProfile::Spill { input_mb: 7000.0, us_per_mb: 10_000.0 };

/// Runs `jobs` under `yarn` on one node of 16 cores / 10 GB with a disk of `disk_mb_s`.
fn run(jobs: Vec<Job>, disk_mb_s: f64) -> RunRecord {
    let w = Workload { cluster: Cluster { am: None, nodes: vec![Resources::new(16_000, 10_000)] }, jobs };
    let mut opts = SimOptions::default();
    opts.exec.node_disk_mb_s = disk_mb_s;
    simulate(&w, preset("yarn", &Params::default()).unwrap(), &opts).unwrap()
}

/// Seconds from a job's first task start to its end.
fn ran_s(r: &RunRecord, job: usize) -> f64 {
    let j = &r.jobs[job];
    (j.end.unwrap() - j.first_start.unwrap()) as f64 / SECOND as f64
}

fn end_s(r: &RunRecord, job: usize) -> f64 {
    r.jobs[job].end.unwrap() as f64 / SECOND as f64
}

fn close(got: f64, want: f64) -> bool {
    (got - want).abs() < 1e-3
}

/// Two such tasks at once ask 82.4 MB/s. A 100 MB/s disk keeps up: both
/// run their solo 170 s. A 50 MB/s disk does not: each gets 25 MB/s, so each
/// needs 7,000 / 25 = 280 s (= 2 × 7,000 MB / 50 MB/s), its 100 s of work
/// hidden under the other's spilling.
#[test]
fn two_spilling_tasks_share_the_disk() {
    assert!(close(ran_s(&run(vec![job("pair", 0, 2, REDUCER)], 100.0), 0), 170.0));
    assert!(close(ran_s(&run(vec![job("pair", 0, 2, REDUCER)], 50.0), 0), 280.0));
}

/// A alone from 0 s at its solo pace (100 s of work per 170 s): by 85 s it
/// has done 50 s of work and spilled 3,500 MB. B starts at 85 s; 50 MB/s
/// shared gives each 25 MB/s, so A's last 3,500 MB take 140 s: A ends at
/// 225 s. B has then spilled 3,500 MB (50 s of work) and runs its other
/// half alone at the solo pace, 85 s: it ends at 310 s.
#[test]
fn a_task_slows_only_while_another_spills_beside_it() {
    let r = run(vec![job("a", 0, 1, REDUCER), job("b", 85, 1, REDUCER)], 50.0);
    assert_eq!(r.jobs[1].first_start, Some(85 * SECOND));
    assert!(close(end_s(&r, 0), 225.0), "a ends at {}", end_s(&r, 0));
    assert!(close(end_s(&r, 1), 310.0), "b ends at {}", end_s(&r, 1));
}

/// A step (max-penalty) profile models no spill volume: however small the
/// disk, two under-sized tasks run their 1.5 × 100 = 150 s.
#[test]
fn a_step_profile_does_not_touch_the_disk() {
    let r = run(vec![job("steps", 0, 2, ElasticityProfile::max_penalty(1.5))], 1.0);
    assert!(close(ran_s(&r, 0), 150.0));
}

/// The disk is per node: the same pair on two nodes, one task each
/// (8,000 MB nodes hold one 5,000 MB task), runs 170 s even on 50 MB/s disks.
#[test]
fn nodes_do_not_share_disks() {
    let w = Workload {
        cluster: Cluster { am: None, nodes: vec![Resources::new(16_000, 8_000); 2] },
        jobs: vec![job("pair", 0, 2, REDUCER)],
    };
    let mut opts = SimOptions::default();
    opts.exec.node_disk_mb_s = 50.0;
    let r = simulate(&w, preset("yarn", &Params::default()).unwrap(), &opts).unwrap();
    let end: Micros = r.jobs[0].end.unwrap() - r.jobs[0].first_start.unwrap();
    assert!(close(end as f64 / SECOND as f64, 170.0));
}
