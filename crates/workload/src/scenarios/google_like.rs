//! `google-like`: the Google-trace replay of BIG-C §5.5, generated from a seed.
//! 2,202 jobs over 3.8 hours — 2,020 short and 182 long — where the short jobs
//! alone would use about 17 % of the cluster on average, with spikes up to
//! 95 % (Fig. 8a: e.g. around the 8,000th second), and the long jobs about 75 %.

use super::long_jobs::LongJobs;
use super::short_queries::ShortQueries;
use crate::{Cluster, Workload};
use pliant_core::time::from_secs_f64;
use pliant_core::Resources;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const NODES: f64 = 26.0;
const NODE: Resources = Resources::cores_gb(32, 128);
/// §5.5: the trace ran for 3.8 hours.
const HORIZON_S: f64 = 3.8 * 3600.0;
/// §5.5: 2,020 short and 182 long jobs.
const SHORT_JOBS: f64 = 2020.0;
const LONG_JOBS: f64 = 182.0;
/// §5.5, Fig. 8a: average utilisation of the short jobs alone, and of the long jobs alone.
const SHORT_LOAD: f64 = 0.17;
const LONG_LOAD: f64 = 0.75;
/// Short-job spikes: (start, length) in seconds, each demanding SPIKE_LOAD of the cluster.
const SPIKES: [(f64, f64); 4] = [(2000.0, 150.0), (5000.0, 150.0), (8000.0, 150.0), (11000.0, 150.0)];
const SPIKE_LOAD: f64 = 0.95;
/// Short jobs: Spark-SQL-like queries of 1–16 ⟨4 CPU, 4 GB⟩ tasks of 10–50 s
/// (a mean of 1,020 core-seconds: 2,020 of them make SHORT_LOAD over 3.8 h on 26 nodes).
const QUERIES: ShortQueries = ShortQueries { tasks: (1, 16), task_s: (10.0, 50.0) };

/// Arrival times of `count` jobs drawn independently from a piecewise-constant
/// density given as `(start, end, weight)` stretches, sorted.
fn draw_arrivals(count: usize, stretches: &[(f64, f64, f64)], rng: &mut ChaCha8Rng) -> Vec<u64> {
    let total: f64 = stretches.iter().map(|&(a, b, w)| (b - a) * w).sum();
    let mut out: Vec<u64> = (0..count)
        .map(|_| {
            let mut x = rng.gen_range(0.0..total);
            for &(a, b, w) in stretches {
                let mass = (b - a) * w;
                if x < mass {
                    return from_secs_f64(a + x / w);
                }
                x -= mass;
            }
            from_secs_f64(stretches.last().map_or(0.0, |s| s.1))
        })
        .collect();
    out.sort_unstable();
    out
}

/// The short jobs' load profile: a base between the spikes such that the
/// average over the horizon is SHORT_LOAD.
fn short_profile() -> Vec<(f64, f64, f64)> {
    let spike_time: f64 = SPIKES.iter().map(|s| s.1).sum();
    let base = (SHORT_LOAD * HORIZON_S - SPIKE_LOAD * spike_time) / (HORIZON_S - spike_time);
    let mut out = Vec::new();
    let mut t = 0.0;
    for &(start, len) in &SPIKES {
        out.push((t, start, base));
        out.push((start, start + len, SPIKE_LOAD));
        t = start + len;
    }
    out.push((t, HORIZON_S, base));
    out
}

/// Generates `google-like` from `seed`; `scale` multiplies nodes and job counts.
pub fn generate(seed: u64, scale: f64) -> Workload {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let nodes = ((NODES * scale).round() as usize).max(1);
    let cores = nodes as f64 * NODE.cpu_milli as f64 / 1000.0;
    let mut jobs = Vec::new();
    for t in draw_arrivals((SHORT_JOBS * scale).round() as usize, &short_profile(), &mut rng) {
        let n = jobs.len();
        jobs.push(QUERIES.job(&mut rng, t, n));
    }
    // Long Spark jobs stretched so that LONG_JOBS of them make LONG_LOAD.
    let long = LongJobs::Spark;
    let long_count = (LONG_JOBS * scale).round() as usize;
    let stretch = LONG_LOAD * cores * HORIZON_S / (long_count.max(1) as f64 * long.mean_core_seconds());
    // Jobs running at t = 0: load × cores / mean cores per job (stretch cancels out).
    let running_at_start = (LONG_LOAD * cores * long.mean_span_seconds() / long.mean_core_seconds())
        .round()
        .min(long_count as f64) as usize;
    for _ in 0..running_at_start {
        let n = jobs.len();
        jobs.push(long.job(&mut rng, 0, true, stretch, n));
    }
    let last_submit = HORIZON_S - long.mean_span_seconds() * stretch;
    for t in draw_arrivals(long_count - running_at_start, &[(0.0, last_submit, 1.0)], &mut rng) {
        let n = jobs.len();
        jobs.push(long.job(&mut rng, t, false, stretch, n));
    }
    jobs.sort_by_key(|j| j.submit);
    Workload { cluster: Cluster { am: None, nodes: vec![NODE; nodes] }, jobs }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pliant_core::model::JobClass;

    fn core_seconds(w: &Workload, class: JobClass) -> f64 {
        w.jobs
            .iter()
            .filter(|j| j.class == class)
            .flat_map(|j| j.tasks())
            .map(|t| t.request.cpu_milli as f64 / 1000.0 * t.duration as f64 / 1e6)
            .sum()
    }

    #[test]
    fn counts_and_loads_follow_section_5_5() {
        let w = generate(4, 1.0);
        let short = w.jobs.iter().filter(|j| j.class == JobClass::Short).count();
        let long = w.jobs.iter().filter(|j| j.class == JobClass::Long).count();
        assert_eq!((short, long), (2020, 182));
        let capacity = 26.0 * 32.0 * HORIZON_S;
        let short_load = core_seconds(&w, JobClass::Short) / capacity;
        let long_load = core_seconds(&w, JobClass::Long) / capacity;
        assert!((0.15..0.20).contains(&short_load), "short {short_load}");
        assert!((0.65..0.85).contains(&long_load), "long {long_load}");
        // The spike at 8,000 s: short work submitted in it over its length is near 95 %.
        let in_spike: f64 = w
            .jobs
            .iter()
            .filter(|j| j.class == JobClass::Short && (8000e6..8150e6).contains(&(j.submit as f64)))
            .flat_map(|j| j.tasks())
            .map(|t| 4.0 * t.duration as f64 / 1e6)
            .sum::<f64>()
            / (26.0 * 32.0 * 150.0);
        assert!((0.7..1.2).contains(&in_spike), "spike {in_spike}");
    }
}
