//! The synthetic workloads of BIG-C §5.2: long Spark jobs that keep about
//! 80 % of the cluster busy for 900 s, and short Spark-SQL queries with a base
//! demand of about 20 % and a burst between the 300th and 700th second whose
//! shape (Fig. 5a) names the scenario.

use super::arrivals::{poisson_arrivals, Segment};
use super::long_jobs::LongJobs;
use super::short_queries::ShortQueries;
use crate::{Cluster, Job, Workload};
use pliant_core::Resources;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// BIG-C §5.1: 26 nodes; two 8-core hyper-threaded Xeons (32 threads), ~128 GB.
const NODES: f64 = 26.0;
const NODE: Resources = Resources::cores_gb(32, 128);
/// BIG-C §5.2: each experiment lasts 900 s.
const HORIZON_S: f64 = 900.0;
/// BIG-C §5.2: long jobs persistently use about 80 % of the cluster.
const LONG_LOAD: f64 = 0.8;
/// BIG-C §5.2: short jobs have a base demand of about 20 %.
const SHORT_BASE: f64 = 0.2;
/// Short queries finish within about a minute (BIG-C §2.1, Fig. 1a): tasks of 5–30 s, 1–8 per query.
const QUERIES: ShortQueries = ShortQueries { tasks: (1, 8), task_s: (5.0, 30.0) };

/// The short jobs' total demand over time, as fractions of the cluster.
#[derive(Debug, Clone)]
pub struct ShortLoad {
    /// `(start_s, end_s, load)` stretches; the base load applies elsewhere.
    pub bursts: Vec<(f64, f64, f64)>,
}

impl ShortLoad {
    /// One burst to `peak` between 300 s and 700 s.
    pub fn single_burst(peak: f64) -> Self {
        ShortLoad { bursts: vec![(300.0, 700.0, peak)] }
    }

    /// Two peaks of `peak` (350–450 s, 550–650 s) on a 40 % plateau between 300 s and 700 s.
    pub fn two_peaks(peak: f64) -> Self {
        ShortLoad {
            bursts: vec![
                (300.0, 350.0, 0.4),
                (350.0, 450.0, peak),
                (450.0, 550.0, 0.4),
                (550.0, 650.0, peak),
                (650.0, 700.0, 0.4),
            ],
        }
    }

    fn segments(&self, jobs_per_second_at_full_load: f64) -> Vec<Segment> {
        let mut segs = Vec::new();
        let mut t = 0.0;
        let seg =
            |a: f64, b: f64, load: f64| Segment { start_s: a, end_s: b, rate: load * jobs_per_second_at_full_load };
        for &(a, b, load) in &self.bursts {
            if a > t {
                segs.push(seg(t, a, SHORT_BASE));
            }
            segs.push(seg(a, b, load));
            t = b;
        }
        if t < HORIZON_S {
            segs.push(seg(t, HORIZON_S, SHORT_BASE));
        }
        segs
    }
}

/// Generates the workload for `shape` and `long` jobs from `seed`; `scale`
/// multiplies nodes and arrival rates.
pub fn generate(shape: &ShortLoad, long: LongJobs, seed: u64, scale: f64) -> Workload {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let nodes = ((NODES * scale).round() as usize).max(1);
    let cluster_cores = (nodes as u64 * NODE.cpu_milli) as f64 / 1000.0;

    // Short arrivals: rate = load × cores / (mean core-seconds per query).
    let short_core_s = QUERIES.mean_core_seconds();
    let mut jobs: Vec<Job> = Vec::new();
    for t in poisson_arrivals(&shape.segments(cluster_cores / short_core_s), &mut rng) {
        let n = jobs.len();
        jobs.push(QUERIES.job(&mut rng, t, n));
    }

    // Long jobs: enough at t = 0 to fill LONG_LOAD (part-way through, as if the
    // cluster had been running), then Poisson arrivals that keep it there.
    let initial = (LONG_LOAD * cluster_cores * long.mean_span_seconds() / long.mean_core_seconds()).round() as usize;
    for _ in 0..initial {
        let n = jobs.len();
        jobs.push(long.job(&mut rng, 0, true, 1.0, n));
    }
    let long_rate = LONG_LOAD * cluster_cores / long.mean_core_seconds();
    for t in poisson_arrivals(&[Segment { start_s: 0.0, end_s: HORIZON_S, rate: long_rate }], &mut rng) {
        let n = jobs.len();
        jobs.push(long.job(&mut rng, t, false, 1.0, n));
    }
    jobs.sort_by_key(|j| j.submit);
    Workload { cluster: Cluster { am: None, nodes: vec![NODE; nodes] }, jobs }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pliant_core::model::JobClass;
    use pliant_core::time::from_secs_f64;

    /// Offered core-seconds of a class divided by cluster core-seconds over `window`.
    fn offered(w: &Workload, class: JobClass, window: (f64, f64)) -> f64 {
        let (a, b) = (from_secs_f64(window.0), from_secs_f64(window.1));
        let work: f64 = w
            .jobs
            .iter()
            .filter(|j| j.class == class && j.submit >= a && j.submit < b)
            .flat_map(|j| j.tasks())
            .map(|t| t.request.cpu_milli as f64 / 1000.0 * t.duration as f64 / 1e6)
            .sum();
        work / (w.cluster.total().cpu_milli as f64 / 1000.0 * (window.1 - window.0))
    }

    #[test]
    fn short_load_matches_the_shape() {
        let w = generate(&ShortLoad::single_burst(0.9), LongJobs::Spark, 3, 4.0);
        let base = offered(&w, JobClass::Short, (0.0, 300.0));
        let burst = offered(&w, JobClass::Short, (300.0, 700.0));
        assert!((0.15..0.25).contains(&base), "base {base}");
        assert!((0.8..1.0).contains(&burst), "burst {burst}");
    }

    #[test]
    fn long_jobs_arrive_throughout() {
        for long in [LongJobs::Spark, LongJobs::WordCount, LongJobs::TeraSort] {
            let w = generate(&ShortLoad::single_burst(0.6), long, 3, 4.0);
            let load = offered(&w, JobClass::Long, (1.0, 900.0));
            assert!((0.6..1.0).contains(&load), "{long:?} long load {load}");
            assert!(w.jobs.iter().any(|j| j.class == JobClass::Long && j.submit == 0));
        }
    }
}
