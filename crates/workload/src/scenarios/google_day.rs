//! `google-day`: one day of the Google 2011 trace as the checkpoint paper's
//! simulation uses it (§2, §3.3.2), generated from a seed. About 15,000 jobs
//! and 600,000 tasks over 24 h at three priority levels, split as in Table 1
//! (free 59.5 % of tasks, middle 36.3 %, production 3.6 %), on a cluster of
//! about 25,000 cores kept near saturation (95 % offered load), so that
//! higher levels must preempt free tasks to run.
//!
//! The shapes not in the paper are assumptions: Poisson arrivals per level,
//! free jobs at a constant rate, middle and production jobs with a daily
//! swing of ±`SWING` around their mean rate (peak at 18:00), hour by hour,
//! so that preemption comes in waves (Fig. 1a); tasks per job uniform with the level's mean; a job's tasks
//! last its base duration ±20 %, bases exponential with the level's mean; 1 or
//! 2 cores and 0.5–4 GB per task (Google tasks are small).

use super::arrivals::{poisson_arrivals, Segment};
use crate::{Cluster, Job, Phase, Task, Workload};
use pliant_core::model::JobClass;
use pliant_core::time::from_secs_f64;
use pliant_core::Resources;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Exp};

/// §3.3.2: a one-day trace.
const HORIZON_S: f64 = 24.0 * 3600.0;
const NODE: Resources = Resources::cores_gb(32, 128);
/// Offered load of all levels together, as a fraction of the cluster.
const OFFERED_LOAD: f64 = 0.95;

/// One priority level's jobs.
struct Level {
    name: &'static str,
    /// Priorities drawn uniformly from this range.
    priorities: (u8, u8),
    /// Jobs per day at scale 1.
    jobs: f64,
    /// Mean tasks per job.
    tasks: f64,
    /// Mean task duration, seconds.
    duration_s: f64,
    class: JobClass,
}

/// §3.3.2: ~15,000 jobs, ~600,000 tasks; Table 1's task shares per level.
/// Production jobs are few and wide (§5.3.3: a production job can preempt
/// every other job of the cluster).
const LEVELS: [Level; 3] = [
    Level { name: "free", priorities: (0, 1), jobs: 6000.0, tasks: 60.0, duration_s: 3000.0, class: JobClass::Long },
    Level { name: "middle", priorities: (2, 8), jobs: 8890.0, tasks: 24.6, duration_s: 1200.0, class: JobClass::Short },
    Level {
        name: "production",
        priorities: (9, 11),
        jobs: 110.0,
        tasks: 200.0,
        duration_s: 3600.0,
        class: JobClass::Short,
    },
];
/// Mean cores per task (1 or 2, equally likely).
const MEAN_CORES: f64 = 1.5;
/// Relative daily swing of the middle and production arrival rates.
const SWING: f64 = 0.5;

/// Hourly arrival-rate segments of `level` averaging `jobs` per day.
fn segments(level: &Level, jobs: f64) -> Vec<Segment> {
    let mean = jobs / HORIZON_S;
    let swing = if level.class == JobClass::Long { 0.0 } else { SWING };
    (0..24)
        .map(|h| {
            let phase = (h as f64 + 0.5 - 12.0) / 24.0 * std::f64::consts::TAU;
            let rate = mean * (1.0 + swing * phase.sin());
            Segment { start_s: h as f64 * 3600.0, end_s: (h + 1) as f64 * 3600.0, rate }
        })
        .collect()
}

fn job(level: &Level, submit: u64, n: usize, rng: &mut ChaCha8Rng) -> Job {
    let max_tasks = (2.0 * level.tasks - 1.0).round() as u32;
    let count = rng.gen_range(1..=max_tasks);
    let base = Exp::new(1.0 / level.duration_s).expect("positive mean").sample(rng).max(1.0);
    let tasks = (0..count)
        .map(|_| {
            let d = from_secs_f64(base * rng.gen_range(0.8..1.2));
            let request = Resources::new(rng.gen_range(1..=2) * 1000, rng.gen_range(1..=8) * 512);
            Task { request, duration: d, estimate: Some(d) }
        })
        .collect();
    Job {
        name: format!("{}-{n}", level.name),
        submit,
        class: level.class,
        priority: rng.gen_range(level.priorities.0..=level.priorities.1),
        phases: vec![Phase::independent(tasks)],
        elastic: None,
    }
}

/// Generates `google-day` from `seed`; `scale` multiplies nodes and job counts.
pub fn generate(seed: u64, scale: f64) -> Workload {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let core_seconds: f64 = LEVELS.iter().map(|l| l.jobs * l.tasks * MEAN_CORES * l.duration_s).sum::<f64>() * scale;
    let cores = core_seconds / (OFFERED_LOAD * HORIZON_S);
    let nodes = ((cores / (NODE.cpu_milli as f64 / 1000.0)).round() as usize).max(1);
    let mut jobs = Vec::new();
    for level in &LEVELS {
        for t in poisson_arrivals(&segments(level, level.jobs * scale), &mut rng) {
            let n = jobs.len();
            jobs.push(job(level, t, n, &mut rng));
        }
    }
    jobs.sort_by_key(|j| j.submit);
    Workload { cluster: Cluster { am: None, nodes: vec![NODE; nodes] }, jobs }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pliant_core::model::PriorityLevel;

    // At scale 1: 15,000 jobs and 6000·60 + 8890·24.6 + 110·200 = 600,694
    // tasks expected (uniform counts: 1..=119, 1..=48, 1..=399); Table 1's
    // shares 59.9 / 36.4 / 3.7 %. Offered core-seconds 1.62e9 + 0.39365e9 +
    // 0.1188e9 = 2.1325e9; at 95 % of a day (82,080 s) that is 25,980 cores:
    // 812 nodes of 32.
    #[test]
    fn counts_and_shares_follow_section_3_3_2() {
        let w = generate(3, 1.0);
        assert_eq!(w.cluster.nodes.len(), 812);
        let jobs = w.jobs.len() as f64;
        assert!((jobs - 15_000.0).abs() < 3.0 * 15_000f64.sqrt(), "{jobs}");
        let mut tasks = [0f64; 3];
        for j in &w.jobs {
            tasks[PriorityLevel::of(j.priority) as usize] += j.tasks().count() as f64;
        }
        let total: f64 = tasks.iter().sum();
        assert!((total - 600_694.0).abs() < 0.03 * 600_694.0, "{total}");
        let shares = tasks.map(|t| t / total);
        assert!((shares[0] - 0.599).abs() < 0.02 && (shares[2] - 0.037).abs() < 0.01, "{shares:?}");
        assert!(w.jobs.windows(2).all(|p| p[0].submit <= p[1].submit));
        // The swing: sin averages 2/π over each half day, so middle jobs
        // arrive (1 + 0.5·0.637) / (1 − 0.5·0.637) = 1.93 times as often from
        // 12:00 to 24:00 as before; free jobs evenly.
        let halves = |lvl: PriorityLevel| {
            let of = |j: &&Job| PriorityLevel::of(j.priority) == lvl;
            let noon = from_secs_f64(HORIZON_S / 2.0);
            let late = w.jobs.iter().filter(of).filter(|j| j.submit >= noon).count() as f64;
            late / w.jobs.iter().filter(of).filter(|j| j.submit < noon).count() as f64
        };
        assert!((halves(PriorityLevel::Middle) - 1.93).abs() < 0.1, "{}", halves(PriorityLevel::Middle));
        assert!((halves(PriorityLevel::Free) - 1.0).abs() < 0.08, "{}", halves(PriorityLevel::Free));
        assert!(w.jobs.iter().all(|j| j.submit < from_secs_f64(HORIZON_S)));
    }
}
