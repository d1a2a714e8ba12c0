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
pub(super) const NODES: f64 = 26.0;
pub(super) const NODE: Resources = Resources::cores_gb(32, 128);
/// BIG-C §5.2: each experiment lasts 900 s.
const HORIZON_S: f64 = 900.0;
/// BIG-C §5.2: long jobs persistently use about 80 % of the cluster.
const LONG_LOAD: f64 = 0.8;
/// BIG-C §5.2: short jobs have a base demand of about 20 %.
const SHORT_BASE: f64 = 0.2;
/// Short queries finish within about a minute (BIG-C §2.1, Fig. 1a): tasks of 5–30 s, 1–8 per query.
pub(super) const QUERIES: ShortQueries = ShortQueries { tasks: (1, 8), task_s: (5.0, 30.0) };

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
    let (cluster, jobs) = stream(shape, long, seed, scale);
    Workload { cluster, jobs: jobs.collect() }
}

/// The cluster of [`generate`] and its jobs in submission order, each made
/// only when asked for: what is held is a time per job, not the jobs.
pub fn stream(shape: &ShortLoad, long: LongJobs, seed: u64, scale: f64) -> (Cluster, SyntheticJobs) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let nodes = ((NODES * scale).round() as usize).max(1);
    let cluster_cores = (nodes as u64 * NODE.cpu_milli) as f64 / 1000.0;

    // Every draw is made in one order, from one generator: short arrivals,
    // short queries, the long jobs under way at t = 0 (enough to fill
    // LONG_LOAD, as if the cluster had been running), long arrivals that
    // keep it there, long jobs. Each kind's jobs are drawn again, as they
    // are taken, from where the generator stood before its first (the draws
    // here are made only to find that place).
    // Short arrivals: rate = load × cores / (mean core-seconds per query).
    let short_core_s = QUERIES.mean_core_seconds();
    let short_times = poisson_arrivals(&shape.segments(cluster_cores / short_core_s), &mut rng);
    let shorts = Kind::at(&rng, 0, short_times);
    for (n, &t) in shorts.times.iter().enumerate() {
        QUERIES.job(&mut rng, t, n);
    }
    let initial = (LONG_LOAD * cluster_cores * long.mean_span_seconds() / long.mean_core_seconds()).round() as usize;
    let under_way = Kind::at(&rng, shorts.times.len(), vec![0; initial]);
    for n in 0..initial {
        long.job(&mut rng, 0, true, 1.0, n);
    }
    let long_rate = LONG_LOAD * cluster_cores / long.mean_core_seconds();
    let long_times = poisson_arrivals(&[Segment { start_s: 0.0, end_s: HORIZON_S, rate: long_rate }], &mut rng);
    let longs = Kind::at(&rng, under_way.first + initial, long_times);
    (Cluster { am: None, nodes: vec![NODE; nodes] }, SyntheticJobs { long, kinds: [shorts, under_way, longs] })
}

/// One kind of job of a synthetic scenario: where the generator stood before
/// its first job was drawn, and its jobs' submission times (in order).
#[derive(Debug, Clone)]
struct Kind {
    rng: ChaCha8Rng,
    /// The number of its first job: the jobs of the kinds drawn before it come first.
    first: usize,
    times: Vec<u64>,
    /// Jobs taken so far.
    taken: usize,
}

impl Kind {
    fn at(rng: &ChaCha8Rng, first: usize, times: Vec<u64>) -> Kind {
        Kind { rng: rng.clone(), first, times, taken: 0 }
    }
}

/// The jobs of a synthetic scenario in submission order, each drawn as it
/// is taken ([`stream`]): short queries, long jobs under way at t = 0, long
/// jobs arriving later.
#[derive(Debug, Clone)]
pub struct SyntheticJobs {
    long: LongJobs,
    kinds: [Kind; 3],
}

impl Iterator for SyntheticJobs {
    type Item = Job;

    fn next(&mut self) -> Option<Job> {
        // The earliest next job; at equal times the kind drawn first (a stable sort's order).
        let (i, t) = (0..3)
            .filter_map(|i| self.kinds[i].times.get(self.kinds[i].taken).map(|&t| (i, t)))
            .min_by_key(|&(i, t)| (t, i))?;
        let k = &mut self.kinds[i];
        let n = k.first + k.taken;
        k.taken += 1;
        Some(match i {
            0 => QUERIES.job(&mut k.rng, t, n),
            1 => self.long.job(&mut k.rng, t, true, 1.0, n),
            _ => self.long.job(&mut k.rng, t, false, 1.0, n),
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.kinds.iter().map(|k| k.times.len() - k.taken).sum();
        (left, Some(left))
    }
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

    /// The jobs drawn all at once, in the generator's order, then sorted by
    /// submission time (stable): what the stream must hand out.
    fn drawn_at_once(shape: &ShortLoad, long: LongJobs, seed: u64, scale: f64) -> Vec<Job> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let cores = (((NODES * scale).round() as u64).max(1) * NODE.cpu_milli) as f64 / 1000.0;
        let mut jobs: Vec<Job> = Vec::new();
        for t in poisson_arrivals(&shape.segments(cores / QUERIES.mean_core_seconds()), &mut rng) {
            jobs.push(QUERIES.job(&mut rng, t, jobs.len()));
        }
        for _ in 0..(LONG_LOAD * cores * long.mean_span_seconds() / long.mean_core_seconds()).round() as usize {
            jobs.push(long.job(&mut rng, 0, true, 1.0, jobs.len()));
        }
        let rate = LONG_LOAD * cores / long.mean_core_seconds();
        for t in poisson_arrivals(&[Segment { start_s: 0.0, end_s: HORIZON_S, rate }], &mut rng) {
            jobs.push(long.job(&mut rng, t, false, 1.0, jobs.len()));
        }
        jobs.sort_by_key(|j| j.submit);
        jobs
    }

    #[test]
    fn the_stream_draws_the_jobs_drawn_at_once() {
        for (shape, seed, scale) in [(ShortLoad::single_burst(0.6), 1, 1.0), (ShortLoad::two_peaks(0.85), 5, 0.3)] {
            for (_, long) in LongJobs::ALL {
                let streamed: Vec<Job> = stream(&shape, long, seed, scale).1.collect();
                assert_eq!(streamed, drawn_at_once(&shape, long, seed, scale), "{long:?}");
            }
        }
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
