//! `reservation`: SSR §VI-B's simulation setting, generated from a seed. A
//! cluster of 1,000 nodes × 4 slots (one slot = one task of ⟨1 core, 4 GB⟩;
//! a node is ⟨4 cores, 16 GB⟩), kept backlogged by a low-priority background
//! of thousands of independent jobs, and high-priority foreground DAG jobs:
//! MLlib-like (10–30 phases of a stable parallelism of 20) and SQL-like
//! (3–8 phases of parallelism changing between 5 and 40). Every foreground phase after the first is
//! `local`: it reads its upstream phase's output where it was written.
//!
//! Foreground task durations are Pareto with shape α = 1.6 (§IV-C: typical
//! production workloads [29]) and a mean of 5 s; the background's are
//! Google-like (a job's tasks last its base duration ±20 %, bases
//! exponential with a mean of 300 s, 1–19 tasks per job), offered at 100 %
//! of the cluster for 30 minutes (foreground jobs arrive in 120–1500 s) so that a backlog always waits. The means,
//! widths and the offered load are assumptions: the paper gives none.

use super::arrivals::{poisson_arrivals, Segment};
use crate::{Cluster, Job, Phase, Task, Workload};
use pliant_core::model::JobClass;
use pliant_core::time::from_secs_f64;
use pliant_core::Resources;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Exp};

/// §VI-B: 1,000 nodes, 4,000 slots.
const NODES: f64 = 1000.0;
/// Slots per node.
pub const SLOTS_PER_NODE: u64 = 4;
/// One slot: the request of every task.
pub const SLOT: Resources = Resources::cores_gb(1, 4);
/// Background arrivals stop after this long.
const HORIZON_S: f64 = 1800.0;
/// Background offered load, as a fraction of the cluster's slots.
const BACKGROUND_LOAD: f64 = 1.0;
/// Background: mean base task duration, and tasks per job (uniform).
const BACKGROUND_TASK_S: f64 = 300.0;
const BACKGROUND_TASKS: (u32, u32) = (1, 19);
/// Foreground jobs of each kind at scale 1, submitted uniformly over this stretch.
const FOREGROUND_JOBS: f64 = 10.0;
const FOREGROUND_SUBMIT_S: (f64, f64) = (120.0, 1500.0);
/// MLlib-like jobs' parallelism.
const MLLIB_WIDTH: u32 = 20;
/// Foreground task durations: Pareto shape α and mean.
pub const ALPHA: f64 = 1.6;
const FOREGROUND_MEAN_S: f64 = 5.0;
/// Priorities: background and foreground.
const LOW: u8 = 0;
const HIGH: u8 = 9;

/// A Pareto draw with shape `alpha` and mean `mean` (t_m = mean (α − 1) / α).
pub fn pareto(rng: &mut impl Rng, alpha: f64, mean: f64) -> f64 {
    let t_m = mean * (alpha - 1.0) / alpha;
    let u: f64 = 1.0 - rng.gen_range(0.0..1.0);
    t_m * u.powf(-1.0 / alpha)
}

/// A foreground DAG job: a chain of phases of the given parallelisms.
fn dag_job(name: String, submit: u64, widths: &[u32], rng: &mut ChaCha8Rng) -> Job {
    let phases = widths
        .iter()
        .enumerate()
        .map(|(i, &w)| Phase {
            deps: if i == 0 { vec![] } else { vec![i as u32 - 1] },
            coupled: false,
            local: i > 0,
            tasks: (0..w)
                .map(|_| {
                    let d = from_secs_f64(pareto(rng, ALPHA, FOREGROUND_MEAN_S).max(0.001));
                    Task { request: SLOT, duration: d, estimate: None }
                })
                .collect(),
            stages: vec![],
        })
        .collect();
    Job { name, submit, class: JobClass::Short, priority: HIGH, phases, elastic: None }
}

/// MLlib-like: 10–30 phases of parallelism 20 throughout (Fig. 5: KMeans
/// at a degree of parallelism of 20).
fn mllib(n: usize, submit: u64, rng: &mut ChaCha8Rng) -> Job {
    let width = MLLIB_WIDTH;
    let widths = vec![width; rng.gen_range(10..=30)];
    dag_job(format!("mllib-{n}"), submit, &widths, rng)
}

/// SQL-like: 3–8 phases, each of its own parallelism of 5–40.
fn sql(n: usize, submit: u64, rng: &mut ChaCha8Rng) -> Job {
    let widths: Vec<u32> = (0..rng.gen_range(3..=8)).map(|_| rng.gen_range(5..=40)).collect();
    dag_job(format!("sql-{n}"), submit, &widths, rng)
}

fn background(n: usize, submit: u64, rng: &mut ChaCha8Rng) -> Job {
    let count = rng.gen_range(BACKGROUND_TASKS.0..=BACKGROUND_TASKS.1);
    let base = Exp::new(1.0 / BACKGROUND_TASK_S).expect("positive mean").sample(rng).max(1.0);
    let tasks = (0..count)
        .map(|_| Task { request: SLOT, duration: from_secs_f64(base * rng.gen_range(0.8..1.2)), estimate: None })
        .collect();
    Job {
        name: format!("bg-{n}"),
        submit,
        class: JobClass::Long,
        priority: LOW,
        phases: vec![Phase::independent(tasks)],
        elastic: None,
    }
}

/// Generates `reservation` from `seed`; `scale` multiplies nodes and job counts.
pub fn generate(seed: u64, scale: f64) -> Workload {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let nodes = ((NODES * scale).round() as usize).max(1);
    let slots = nodes as f64 * SLOTS_PER_NODE as f64;
    let mean_tasks = (BACKGROUND_TASKS.0 + BACKGROUND_TASKS.1) as f64 / 2.0;
    let rate = BACKGROUND_LOAD * slots / (mean_tasks * BACKGROUND_TASK_S);
    let mut jobs = Vec::new();
    // The background is already running when the measurement starts.
    let running = (slots / mean_tasks).round() as usize;
    for _ in 0..running {
        let n = jobs.len();
        jobs.push(background(n, 0, &mut rng));
    }
    for t in poisson_arrivals(&[Segment { start_s: 0.0, end_s: HORIZON_S, rate }], &mut rng) {
        let n = jobs.len();
        jobs.push(background(n, t, &mut rng));
    }
    let count = ((FOREGROUND_JOBS * scale).round() as usize).max(1);
    for i in 0..count {
        for kind in [mllib, sql] {
            let submit = from_secs_f64(rng.gen_range(FOREGROUND_SUBMIT_S.0..FOREGROUND_SUBMIT_S.1));
            jobs.push(kind(i, submit, &mut rng));
        }
    }
    jobs.sort_by_key(|j| j.submit);
    let node = SLOT.times(SLOTS_PER_NODE);
    Workload { cluster: Cluster { am: None, nodes: vec![node; nodes] }, jobs }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_follow_the_setting() {
        let w = generate(3, 0.1);
        assert_eq!(w.cluster.nodes.len(), 100);
        assert_eq!(w.cluster.nodes[0], Resources::cores_gb(4, 16));
        let fg: Vec<&Job> = w.jobs.iter().filter(|j| j.priority == HIGH).collect();
        assert_eq!(fg.len(), 2);
        for j in &fg {
            assert!(j.phases[1..].iter().all(|p| p.local && p.deps.len() == 1));
            assert!(!j.phases[0].local);
        }
        let ml = fg.iter().find(|j| j.name.starts_with("mllib")).unwrap();
        assert!((10..=30).contains(&ml.phases.len()));
        assert!(ml.phases.iter().all(|p| p.tasks.len() == ml.phases[0].tasks.len()));
        let bg = w.jobs.iter().filter(|j| j.priority == LOW).count();
        assert!(bg > 100, "{bg}");
        assert!(w.jobs.iter().flat_map(|j| j.tasks()).all(|t| t.request == SLOT));
    }

    #[test]
    fn pareto_draws_have_the_asked_mean() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        // α = 3 has a finite variance, so 200,000 draws pin the mean well.
        let n = 200_000;
        let mean = (0..n).map(|_| pareto(&mut rng, 3.0, 5.0)).sum::<f64>() / n as f64;
        assert!((mean - 5.0).abs() < 0.05, "{mean}");
        // The shortest possible draw is t_m = mean (α − 1) / α.
        assert!((0..1000).all(|_| pareto(&mut rng, 3.0, 5.0) >= 5.0 * 2.0 / 3.0));
    }
}
