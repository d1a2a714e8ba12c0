//! YARN-ME §6's synthetic traces (Table 2): 100 single-phase jobs on 100
//! nodes of 16 cores and 10 GB, one core per task, arrivals uniform in
//! [0, 1000] s; tasks per job, task memory and task duration drawn per job,
//! each between a fixed minimum and a maximum itself drawn per trace from
//! Table 2's sweep range. Every task is elastic with a plain max-penalty
//! profile (§6.1); mis-estimation (§6.2, Fig. 7) makes the truth differ.

use crate::{Cluster, Job, JobElasticity, Phase, Task, Workload};
use pliant_core::model::{Elasticity, ElasticityProfile, JobClass};
use pliant_core::{Resources, SECOND};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Exp};

/// How Table 2's per-job parameters are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spread {
    /// Uniform between min and max (Table 2's "unif" row).
    Uniform,
    /// Exponential from min, cut at max (Table 2's "exp" row).
    Exponential,
}

/// One Table 2 parameter: a fixed minimum and the range the maximum is drawn from.
struct Range2 {
    min: f64,
    max_lo: f64,
    max_hi: f64,
}

impl Spread {
    /// Table 2's ranges: tasks per job, task memory (GB), task duration (s).
    fn ranges(self) -> [Range2; 3] {
        match self {
            Spread::Uniform => [
                Range2 { min: 1.0, max_lo: 200.0, max_hi: 400.0 },
                Range2 { min: 1.0, max_lo: 2.0, max_hi: 10.0 },
                Range2 { min: 1.0, max_lo: 200.0, max_hi: 500.0 },
            ],
            Spread::Exponential => [
                Range2 { min: 1.0, max_lo: 20.0, max_hi: 220.0 },
                Range2 { min: 1.0, max_lo: 2.0, max_hi: 10.0 },
                Range2 { min: 50.0, max_lo: 100.0, max_hi: 500.0 },
            ],
        }
    }
}

/// What a generated trace looks like.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TraceSpec {
    /// How per-job values are drawn.
    pub spread: Spread,
    /// Jobs in the trace (§6: 100).
    pub jobs: usize,
    /// Nodes of the cluster (§6: 100).
    pub nodes: usize,
    /// The tasks' estimated (and, without mis-estimation, true) penalty (§6.1: 1.5 or 3).
    pub penalty: f64,
    /// Per job, the true duration, ideal memory and penalty are each the
    /// estimate times 1 + a factor drawn uniformly from this interval
    /// (Fig. 7: e.g. [-0.15, 0.15]); `None`: the estimates are exact.
    pub misestimate: Option<(f64, f64)>,
}

impl TraceSpec {
    /// §6's setting: 100 jobs on 100 nodes.
    pub fn table2(spread: Spread, penalty: f64) -> Self {
        TraceSpec { spread, jobs: 100, nodes: 100, penalty, misestimate: None }
    }
}

/// A node of §6.1: 16 cores, 10 GB.
pub const NODE: Resources = Resources::new(16_000, 10_000);

/// Memory granularity (§6.1: 100 MB).
const GRANULE_MB: u64 = 100;

/// Draws one value between `min` and `max`.
fn draw(spread: Spread, min: f64, max: f64, rng: &mut ChaCha8Rng) -> f64 {
    match spread {
        Spread::Uniform => rng.gen_range(min..=max),
        Spread::Exponential => {
            // Mean a quarter of the span from the minimum, redrawn past the maximum.
            let exp = Exp::new(4.0 / (max - min).max(f64::MIN_POSITIVE)).expect("positive rate");
            loop {
                let x = min + exp.sample(rng);
                if x <= max {
                    return x;
                }
            }
        }
    }
}

/// Generates one trace from `seed`.
pub fn generate(spec: &TraceSpec, seed: u64) -> Workload {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let [tasks_r, mem_r, dur_r] = spec.spread.ranges();
    let maxes: Vec<f64> = [&tasks_r, &mem_r, &dur_r].iter().map(|r| rng.gen_range(r.max_lo..=r.max_hi)).collect();
    let mut jobs = Vec::with_capacity(spec.jobs);
    for n in 0..spec.jobs {
        let submit = rng.gen_range(0..=1000 * SECOND);
        let tasks = draw(spec.spread, tasks_r.min, maxes[0], &mut rng).round().max(1.0) as usize;
        let mem_mb = ((draw(spec.spread, mem_r.min, maxes[1], &mut rng) * 1000.0 / GRANULE_MB as f64).round() as u64
            * GRANULE_MB)
            .clamp(GRANULE_MB, NODE.mem_mb);
        let est = (draw(spec.spread, dur_r.min, maxes[2], &mut rng).round().max(1.0) as u64) * SECOND;
        let mut off = || spec.misestimate.map_or(1.0, |(lo, hi)| 1.0 + rng.gen_range(lo..=hi));
        let (dur_f, mem_f, pen_f) = (off(), off(), off());
        let duration = ((est as f64 * dur_f).round() as u64).max(1);
        let task = Task { request: Resources::new(1000, mem_mb), duration, estimate: Some(est) };
        jobs.push(Job {
            name: format!("job-{n}"),
            submit,
            class: JobClass::Long,
            priority: 0,
            phases: vec![Phase::independent(vec![task; tasks])],
            elastic: Some(JobElasticity {
                estimate: Elasticity { profile: ElasticityProfile::max_penalty(spec.penalty), min_mem_mb: None },
                truth: ElasticityProfile::max_penalty((spec.penalty * pen_f).max(1.0)),
                true_ideal_scale: mem_f,
            }),
        });
    }
    jobs.sort_by_key(|j| j.submit);
    Workload { cluster: Cluster { nodes: vec![NODE; spec.nodes] }, jobs }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traces_stay_in_table_2s_ranges() {
        for spread in [Spread::Uniform, Spread::Exponential] {
            let w = generate(&TraceSpec::table2(spread, 1.5), 3);
            let [t, m, d] = spread.ranges();
            assert_eq!((w.jobs.len(), w.cluster.nodes.len()), (100, 100));
            for j in &w.jobs {
                let n = j.phases[0].tasks.len() as f64;
                let task = j.phases[0].tasks[0];
                assert!(n >= t.min && n <= t.max_hi);
                assert!(task.request.mem_mb >= (m.min * 1000.0) as u64 && task.request.mem_mb <= 10_000);
                assert_eq!(task.request.mem_mb % 100, 0);
                let s = task.duration / SECOND;
                assert!(s as f64 >= d.min && s as f64 <= d.max_hi);
                assert_eq!(Some(task.duration), task.estimate);
                assert!(j.submit <= 1000 * SECOND);
            }
            assert_eq!(generate(&TraceSpec::table2(spread, 1.5), 3), w);
        }
    }

    #[test]
    fn misestimation_moves_the_truth_within_its_interval() {
        let spec = TraceSpec { misestimate: Some((-0.15, 0.15)), ..TraceSpec::table2(Spread::Uniform, 3.0) };
        let w = generate(&spec, 5);
        let mut moved = 0;
        for j in &w.jobs {
            let task = j.phases[0].tasks[0];
            let f = task.duration as f64 / task.estimate.unwrap() as f64;
            assert!((0.85 - 1e-6..=1.15 + 1e-6).contains(&f));
            let e = j.elastic.unwrap();
            assert!((0.85..=1.15).contains(&e.true_ideal_scale));
            let ElasticityProfile::Step { penalty } = e.truth else { panic!() };
            assert!((2.55 - 1e-9..=3.45 + 1e-9).contains(&penalty));
            moved += (f != 1.0) as usize;
        }
        assert!(moved > 90);
    }
}
