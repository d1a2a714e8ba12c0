//! YARN-ME §6's synthetic traces (Table 2): 100 single-phase jobs on 100
//! nodes of 16 cores and 10 GB (10,240 MB, DSS's node), one core per task, arrivals uniform in
//! [0, 1000] s; tasks per job, task memory and task duration drawn per job,
//! each between a fixed minimum and a maximum itself drawn per trace from
//! Table 2's sweep range. Values are drawn as DSS's
//! `samples/traces/trace-generator.py` draws them: whole seconds, whole
//! tasks, memory in whole 100 MB units, truncated; the exponential row
//! scales each parameter's draws so that the trace's largest lands on the
//! maximum. Every task is elastic with §6.1's reducer profile at a maximum
//! penalty (or the plain step); mis-estimation (§6.2, Fig. 7) makes the
//! truth differ.

use crate::{Cluster, Job, JobElasticity, Phase, Task, Workload, DSS_AM};
use pliant_core::model::{Elasticity, ElasticityProfile, JobClass};
use pliant_core::{Resources, SECOND};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Exp1};

/// How Table 2's per-job parameters are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spread {
    /// Uniform between min and max (Table 2's "unif" row).
    Uniform,
    /// Exponential from min, the trace's largest draw scaled to max (Table 2's "exp" row).
    Exponential,
}

/// The penalty model every task of a generated trace gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PenaltyModel {
    /// §6.1: the reducer model (§2.3's saw-tooth) at the given maximum penalty.
    Reducer,
    /// Any under-sized allocation costs the full penalty (DSS's STEP).
    Step,
}

impl PenaltyModel {
    /// The profile of this model at maximum penalty `penalty`.
    pub fn profile(self, penalty: f64) -> ElasticityProfile {
        match self {
            PenaltyModel::Reducer => ElasticityProfile::reducer_max_penalty(penalty),
            PenaltyModel::Step => ElasticityProfile::max_penalty(penalty),
        }
    }
}

/// One Table 2 parameter in DSS's integer units: a fixed minimum and the
/// range the maximum is drawn from.
struct Range2 {
    min: u64,
    max_lo: u64,
    max_hi: u64,
}

impl Spread {
    /// Table 2's ranges: tasks per job, task memory (100 MB units, as DSS's
    /// generator takes it), task duration (s).
    fn ranges(self) -> [Range2; 3] {
        match self {
            Spread::Uniform => [
                Range2 { min: 1, max_lo: 200, max_hi: 400 },
                Range2 { min: 10, max_lo: 20, max_hi: 100 },
                Range2 { min: 1, max_lo: 200, max_hi: 500 },
            ],
            Spread::Exponential => [
                Range2 { min: 1, max_lo: 20, max_hi: 220 },
                Range2 { min: 10, max_lo: 20, max_hi: 100 },
                Range2 { min: 50, max_lo: 100, max_hi: 500 },
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
    /// The tasks' estimated (and, without mis-estimation, true) maximum penalty (§6.1: 1.5 or 3).
    pub penalty: f64,
    /// The penalty's shape (§6.1: the reducer model).
    pub model: PenaltyModel,
    /// Fig. 7's mis-estimation; `None`: the estimates are exact.
    pub misestimate: Option<Misestimate>,
}

/// Fig. 7's mis-estimation: per job, each chosen true value (duration, ideal
/// memory, penalty) is the estimate times 1 + a factor drawn uniformly from
/// [`lo`, `hi`] (e.g. [-0.15, 0.15]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Misestimate {
    /// Least factor (above -1).
    pub lo: f64,
    /// Greatest factor.
    pub hi: f64,
    /// Which values are off.
    pub of: Misestimated,
}

/// Which estimates a [`Misestimate`] puts off: all three at once, or one,
/// as Fig. 7a (duration), 7b (ideal memory) and 7c (penalty) do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Misestimated {
    /// Duration, ideal memory and penalty, each by its own draw.
    All,
    /// The task duration only (Fig. 7a).
    Duration,
    /// The ideal memory only (Fig. 7b).
    Memory,
    /// The penalty only (Fig. 7c).
    Penalty,
}

impl Misestimate {
    /// The (duration, ideal memory, penalty) factors of one job. All three
    /// are drawn whichever are kept, so the traces of the per-value sweeps
    /// share their draws with the all-values one.
    fn factors(&self, rng: &mut ChaCha8Rng) -> (f64, f64, f64) {
        let mut draw = || 1.0 + rng.gen_range(self.lo..=self.hi);
        let (d, m, p) = (draw(), draw(), draw());
        match self.of {
            Misestimated::All => (d, m, p),
            Misestimated::Duration => (d, 1.0, 1.0),
            Misestimated::Memory => (1.0, m, 1.0),
            Misestimated::Penalty => (1.0, 1.0, p),
        }
    }
}

impl TraceSpec {
    /// §6's setting: 100 jobs on 100 nodes, the reducer model.
    pub fn table2(spread: Spread, penalty: f64) -> Self {
        TraceSpec { spread, jobs: 100, nodes: 100, penalty, model: PenaltyModel::Reducer, misestimate: None }
    }
}

/// A node of §6.1: 16 cores, 10 GB (10,240 MB, as DSS's runs give it).
pub const NODE: Resources = Resources::new(16_000, 10_240);

/// The largest task memory Table 2 draws: 100 granules of 100 MB.
const MAX_TASK_MB: u64 = 10_000;

/// Memory granularity (§6.1: 100 MB; DSS's generator counts memory in it).
const GRANULE_MB: u64 = 100;

/// DSS's exponential row: `draws` (standard exponential) scaled so that the
/// largest becomes `max`, shifted to start at `min`, truncated to integers.
fn scale_to_max(draws: &[f64], min: u64, max: u64) -> Vec<u64> {
    let top = draws.iter().copied().fold(f64::MIN_POSITIVE, f64::max);
    let k = (max - min) as f64 / top;
    draws.iter().map(|x| (x * k + min as f64) as u64).collect()
}

/// `n` values between `min` and `max` for one parameter, as DSS draws them.
fn draw_all(spread: Spread, n: usize, min: u64, max: u64, rng: &mut ChaCha8Rng) -> Vec<u64> {
    match spread {
        // int(uniform(min, max)): whole values in [min, max).
        Spread::Uniform => (0..n).map(|_| rng.gen_range(min as f64..max as f64) as u64).collect(),
        Spread::Exponential => {
            let draws: Vec<f64> = (0..n).map(|_| Exp1.sample(rng)).collect();
            scale_to_max(&draws, min, max)
        }
    }
}

/// Generates one trace from `seed`.
pub fn generate(spec: &TraceSpec, seed: u64) -> Workload {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let [tasks_r, mem_r, dur_r] = spec.spread.ranges();
    let maxes: Vec<u64> = [&tasks_r, &mem_r, &dur_r].iter().map(|r| rng.gen_range(r.max_lo..=r.max_hi)).collect();
    let n = spec.jobs;
    // Arrivals: whole seconds uniform in [0, 1000) (DSS: int(uniform(0, 1000))).
    let submits: Vec<u64> = (0..n).map(|_| rng.gen_range(0.0..1000.0) as u64).collect();
    let counts = draw_all(spec.spread, n, tasks_r.min, maxes[0], &mut rng);
    let durations = draw_all(spec.spread, n, dur_r.min, maxes[2], &mut rng);
    let mems = draw_all(spec.spread, n, mem_r.min, maxes[1], &mut rng);
    let mut jobs = Vec::with_capacity(n);
    for i in 0..n {
        let mem_mb = (mems[i] * GRANULE_MB).clamp(GRANULE_MB, MAX_TASK_MB);
        let est = durations[i].max(1) * SECOND;
        let (dur_f, mem_f, pen_f) = spec.misestimate.map_or((1.0, 1.0, 1.0), |m| m.factors(&mut rng));
        let duration = ((est as f64 * dur_f).round() as u64).max(1);
        let task = Task { request: Resources::new(1000, mem_mb), duration, estimate: Some(est) };
        jobs.push(Job {
            // DSS's job ids (`job_<draw index>`).
            name: format!("job_{i}"),
            submit: submits[i] * SECOND,
            class: JobClass::Long,
            priority: 0,
            phases: vec![Phase::independent(vec![task; counts[i].max(1) as usize])],
            elastic: Some(JobElasticity {
                estimate: Elasticity { profile: spec.model.profile(spec.penalty), min_mem_mb: None },
                truth: spec.model.profile((spec.penalty * pen_f).max(1.0)),
                true_ideal_scale: mem_f,
            }),
        });
    }
    jobs.sort_by_key(|j| j.submit);
    // DSS, which produced §6's figures, gives every job an ApplicationMaster.
    Workload { cluster: Cluster { am: Some(DSS_AM), nodes: vec![NODE; spec.nodes] }, jobs }
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
                let n = j.phases[0].tasks.len() as u64;
                let task = j.phases[0].tasks[0];
                assert!(n >= t.min && n <= t.max_hi);
                assert!(task.request.mem_mb >= m.min * 100 && task.request.mem_mb <= MAX_TASK_MB);
                assert_eq!(task.request.mem_mb % 100, 0);
                assert_eq!(task.duration % SECOND, 0);
                let s = task.duration / SECOND;
                assert!(s >= d.min && s <= d.max_hi);
                assert_eq!(Some(task.duration), task.estimate);
                assert!(j.submit < 1000 * SECOND && j.submit % SECOND == 0);
                assert_eq!(j.elastic.unwrap().estimate.profile, ElasticityProfile::reducer_max_penalty(1.5));
            }
            assert_eq!(generate(&TraceSpec::table2(spread, 1.5), 3), w);
        }
    }

    #[test]
    fn misestimation_moves_the_truth_within_its_interval() {
        let off = Misestimate { lo: -0.15, hi: 0.15, of: Misestimated::All };
        let spec = TraceSpec { misestimate: Some(off), ..TraceSpec::table2(Spread::Uniform, 3.0) };
        let w = generate(&spec, 5);
        let mut moved = 0;
        for j in &w.jobs {
            let task = j.phases[0].tasks[0];
            let f = task.duration as f64 / task.estimate.unwrap() as f64;
            assert!((0.85 - 1e-6..=1.15 + 1e-6).contains(&f));
            let e = j.elastic.unwrap();
            assert!((0.85..=1.15).contains(&e.true_ideal_scale));
            let ElasticityProfile::Sawtooth { penalty } = e.truth else { panic!() };
            assert!((2.55 - 1e-9..=3.45 + 1e-9).contains(&penalty));
            moved += (f != 1.0) as usize;
        }
        assert!(moved > 90);
    }

    #[test]
    fn one_value_misestimated_keeps_the_others_exact_and_the_draws_shared() {
        let spec = |of| TraceSpec {
            misestimate: Some(Misestimate { lo: -0.15, hi: 0.15, of }),
            ..TraceSpec::table2(Spread::Uniform, 3.0)
        };
        let all = generate(&spec(Misestimated::All), 5);
        let memory = generate(&spec(Misestimated::Memory), 5);
        let penalty = generate(&spec(Misestimated::Penalty), 5);
        for ((a, m), p) in all.jobs.iter().zip(&memory.jobs).zip(&penalty.jobs) {
            let (ae, me, pe) = (a.elastic.unwrap(), m.elastic.unwrap(), p.elastic.unwrap());
            let (mt, pt) = (m.phases[0].tasks[0], p.phases[0].tasks[0]);
            assert_eq!((mt.duration, pt.duration), (mt.estimate.unwrap(), pt.estimate.unwrap()));
            assert_eq!(me.true_ideal_scale, ae.true_ideal_scale);
            assert_eq!(pe.true_ideal_scale, 1.0);
            assert_eq!(me.truth, ElasticityProfile::Sawtooth { penalty: 3.0 });
            assert_eq!(pe.truth, ae.truth);
        }
    }

    #[test]
    fn exponential_row_scales_the_largest_draw_to_the_maximum() {
        // Draws 0.5, 2, 1 between 1 and 101: ×50 (100 / 2) from 1, truncated.
        assert_eq!(scale_to_max(&[0.5, 2.0, 1.0], 1, 101), vec![26, 101, 51]);
        assert_eq!(scale_to_max(&[0.3, 0.7], 50, 120), vec![80, 120]);
        // In a generated trace the largest job of each parameter is at its maximum.
        let w = generate(&TraceSpec::table2(Spread::Exponential, 3.0), 4);
        let most = |f: &dyn Fn(&Job) -> u64| w.jobs.iter().map(f).max().unwrap();
        let most_tasks = most(&|j| j.phases[0].tasks.len() as u64);
        let most_mem = most(&|j| j.phases[0].tasks[0].request.mem_mb);
        let most_dur = most(&|j| j.phases[0].tasks[0].duration / SECOND);
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let maxes: Vec<u64> = Spread::Exponential.ranges().iter().map(|r| rng.gen_range(r.max_lo..=r.max_hi)).collect();
        // (x / top × top need not give back x exactly: truncation may land one below, as in DSS.)
        for (got, max) in [(most_tasks, maxes[0]), (most_mem / 100, maxes[1]), (most_dur, maxes[2])] {
            assert!(got == max || got + 1 == max, "{got} vs {max}");
        }
    }
}
