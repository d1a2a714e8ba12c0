//! The long jobs of BIG-C's synthetic workloads (§5.1): Spark jobs whose
//! executors pull stage tasks (a pool phase), or MapReduce jobs — map-heavy `wordcount` and reduce-heavy
//! `terasort` — with a barrier between map and reduce.

use crate::{Job, Phase, StageTasks, Task};
use pliant_core::model::JobClass;
use pliant_core::time::from_secs_f64;
use pliant_core::Resources;
use rand::seq::SliceRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// BIG-C §5.1: Spark executors are ⟨8, 16⟩, ⟨8, 32⟩ or ⟨16, 32⟩ (CPU, GB).
const EXECUTORS: [Resources; 3] = [Resources::cores_gb(8, 16), Resources::cores_gb(8, 32), Resources::cores_gb(16, 32)];
/// Spark jobs: 4–8 executors running 200–400 s (HiBench PageRank, Kmeans, Bayes, WordCount).
const SPARK_EXECUTORS: (u32, u32) = (4, 8);
const SPARK_S: (f64, f64) = (200.0, 400.0);
/// Stage tasks per executor core: Spark's tuning guide ("Level of
/// Parallelism") recommends 2–3 tasks per CPU core; we take the low end.
const TASKS_PER_CORE: u32 = 2;
/// Target run time of a stage task on one core, s. A Spark task reads one
/// input split as a MapReduce mapper does (BIG-C §5.1 runs HiBench WordCount
/// both ways on the same inputs), so it runs about as long as a mapper: the
/// mean of this file's wordcount map tasks (20–60 s). The paper gives no
/// Spark task times; this is the repository's own mapper figure.
const STAGE_TASK_S: f64 = 40.0;
/// BIG-C §5.1: map containers ⟨1 CPU, 2 GB⟩, reduce containers ⟨1 CPU, 4 GB⟩.
const MAPPER: Resources = Resources::cores_gb(1, 2);
const REDUCER: Resources = Resources::cores_gb(1, 4);
/// Long jobs are best effort.
const LONG_PRIORITY: u8 = 0;

/// A MapReduce job's shape: task counts and run times of each phase.
struct MapReduce {
    name: &'static str,
    mappers: (u32, u32),
    map_s: (f64, f64),
    reducers: (u32, u32),
    reduce_s: (f64, f64),
}

/// Map-heavy: many small, short mappers and a few short reducers.
const WORDCOUNT: MapReduce =
    MapReduce { name: "wordcount", mappers: (100, 200), map_s: (20.0, 60.0), reducers: (4, 8), reduce_s: (30.0, 60.0) };
/// Reduce-heavy: fewer mappers; long reducers that shuffle and sort (a killed one starts over).
const TERASORT: MapReduce = MapReduce {
    name: "terasort",
    mappers: (40, 80),
    map_s: (15.0, 30.0),
    reducers: (20, 40),
    reduce_s: (200.0, 400.0),
};

/// Which long jobs a synthetic scenario runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LongJobs {
    /// Spark jobs: one coupled phase of large executors.
    Spark,
    /// MapReduce wordcount: map-heavy.
    WordCount,
    /// MapReduce terasort: reduce-heavy.
    TeraSort,
}

fn mean(range: (f64, f64)) -> f64 {
    (range.0 + range.1) / 2.0
}

fn mean_count(range: (u32, u32)) -> f64 {
    (range.0 + range.1) as f64 / 2.0
}

fn cores(r: Resources) -> f64 {
    r.cpu_milli as f64 / 1000.0
}

/// The stages of a Spark job whose executors, `cores` in all, would run
/// `span` with every core busy: waves of TASKS_PER_CORE tasks per core, each
/// task near STAGE_TASK_S, so that the stages add up to the same work and span.
fn spark_stages(span: u64, cores: u32) -> Vec<StageTasks> {
    let per_stage = TASKS_PER_CORE as f64 * STAGE_TASK_S * 1e6;
    let stages = (span as f64 / per_stage).round().max(1.0) as usize;
    let duration = (span as f64 / (stages as f64 * TASKS_PER_CORE as f64)).round().max(1.0) as u64;
    vec![StageTasks { count: TASKS_PER_CORE * cores, duration }; stages]
}

impl LongJobs {
    /// Every kind, with its name for `--long-jobs`.
    pub const ALL: [(&'static str, LongJobs); 3] =
        [("spark", LongJobs::Spark), ("wordcount", LongJobs::WordCount), ("terasort", LongJobs::TeraSort)];

    /// The kind called `name`.
    pub fn from_name(name: &str) -> Option<LongJobs> {
        LongJobs::ALL.iter().find(|(n, _)| *n == name).map(|&(_, k)| k)
    }

    fn mapreduce(self) -> Option<&'static MapReduce> {
        match self {
            LongJobs::Spark => None,
            LongJobs::WordCount => Some(&WORDCOUNT),
            LongJobs::TeraSort => Some(&TERASORT),
        }
    }

    /// Mean CPU core-seconds of one job.
    pub fn mean_core_seconds(self) -> f64 {
        match self.mapreduce() {
            None => {
                let mean_cores = EXECUTORS.iter().map(|&r| cores(r)).sum::<f64>() / EXECUTORS.len() as f64;
                mean_count(SPARK_EXECUTORS) * mean_cores * mean(SPARK_S)
            }
            Some(m) => {
                mean_count(m.mappers) * cores(MAPPER) * mean(m.map_s)
                    + mean_count(m.reducers) * cores(REDUCER) * mean(m.reduce_s)
            }
        }
    }

    /// Mean run time of one job with all its tasks running at once.
    pub fn mean_span_seconds(self) -> f64 {
        match self.mapreduce() {
            None => mean(SPARK_S),
            Some(m) => mean(m.map_s) + mean(m.reduce_s),
        }
    }

    /// A job submitted at `submit`, its run times scaled by `stretch`. A
    /// `part_way` job is already under way when the scenario starts: its
    /// remaining run time is drawn down to a quarter of a full one.
    pub fn job(self, rng: &mut ChaCha8Rng, submit: u64, part_way: bool, stretch: f64, n: usize) -> Job {
        let (name, phases) = match self.mapreduce() {
            None => {
                let low = if part_way { SPARK_S.0 * 0.25 } else { SPARK_S.0 };
                let d = from_secs_f64(rng.gen_range(low..SPARK_S.1) * stretch).max(1);
                let executors = rng.gen_range(SPARK_EXECUTORS.0..=SPARK_EXECUTORS.1);
                let size = *EXECUTORS.choose(rng).expect("non-empty");
                ("spark", vec![spark_phase(size, d, executors)])
            }
            Some(m) => {
                let stretch = if part_way { rng.gen_range(0.25..1.0) * stretch } else { stretch };
                let task = |request, range: (f64, f64), rng: &mut ChaCha8Rng| {
                    let d = from_secs_f64(rng.gen_range(range.0..range.1) * stretch).max(1);
                    Task { request, duration: d, estimate: Some(d) }
                };
                let maps = rng.gen_range(m.mappers.0..=m.mappers.1);
                let map_tasks = (0..maps).map(|_| task(MAPPER, m.map_s, rng)).collect();
                let reduces = rng.gen_range(m.reducers.0..=m.reducers.1);
                let reduce_tasks = (0..reduces).map(|_| task(REDUCER, m.reduce_s, rng)).collect();
                (m.name, mapreduce_phases(map_tasks, reduce_tasks))
            }
        };
        long_job(name, n, submit, phases)
    }

    /// One job of this kind submitted at 0 that alone keeps a cluster of
    /// `nodes` × `node` busy for about `span_s` (BIG-C §2, Fig. 2: "we
    /// configured long jobs to fully utilize a 26-node YARN cluster"). Spark:
    /// ⟨8 CPU, 16 GB⟩ executors (§5.1's smallest) on every core, each running
    /// `span_s`. MapReduce: this kind's mappers and reducers with their usual
    /// run times, their counts multiplied so that its core-seconds fill the
    /// cluster's cores for `span_s` (the paper's 600 GB input and block size
    /// set the counts on a real cluster; this model has no input size).
    pub fn filling(self, rng: &mut ChaCha8Rng, nodes: usize, node: Resources, span_s: f64) -> Job {
        let cluster_cores = nodes as f64 * cores(node);
        let phases = match self.mapreduce() {
            None => {
                let size = EXECUTORS[0];
                let executors = (nodes as u64 * (node.cpu_milli / size.cpu_milli)) as u32;
                vec![spark_phase(size, from_secs_f64(span_s), executors)]
            }
            Some(m) => {
                let times = span_s * cluster_cores / self.mean_core_seconds();
                let count = |range: (u32, u32)| (mean_count(range) * times).round().max(1.0) as usize;
                let mut task = |request, range: (f64, f64)| {
                    let d = from_secs_f64(rng.gen_range(range.0..range.1)).max(1);
                    Task { request, duration: d, estimate: Some(d) }
                };
                let map_tasks = (0..count(m.mappers)).map(|_| task(MAPPER, m.map_s)).collect();
                let reduce_tasks = (0..count(m.reducers)).map(|_| task(REDUCER, m.reduce_s)).collect();
                mapreduce_phases(map_tasks, reduce_tasks)
            }
        };
        long_job(self.mapreduce().map_or("spark", |m| m.name), 0, 0, phases)
    }
}

/// A Spark job's one phase: `executors` coupled executors of `size` running
/// `duration`, their stage tasks pulled from a pool ([`spark_stages`]).
fn spark_phase(size: Resources, duration: u64, executors: u32) -> Phase {
    let t = Task { request: size, duration, estimate: Some(duration) };
    let stages = spark_stages(duration, executors * t.slots());
    Phase { deps: vec![], coupled: true, local: false, tasks: vec![t; executors as usize], stages }
}

/// A MapReduce job's phases: independent mappers, then reducers behind a barrier.
fn mapreduce_phases(map_tasks: Vec<Task>, reduce_tasks: Vec<Task>) -> Vec<Phase> {
    vec![
        Phase::independent(map_tasks),
        Phase { deps: vec![0], coupled: false, local: false, tasks: reduce_tasks, stages: vec![] },
    ]
}

/// Long job number `n` named after its kind, at best-effort priority.
fn long_job(name: &str, n: usize, submit: u64, phases: Vec<Phase>) -> Job {
    Job { name: format!("{name}-{n}"), submit, class: JobClass::Long, priority: LONG_PRIORITY, phases, elastic: None }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    // Hand-worked means: Spark 6 executors × 32/3 cores × 300 s = 19,200 core-s;
    // wordcount 150 × 1 × 40 + 6 × 1 × 45 = 6,270; terasort 60 × 22.5 + 30 × 300 = 10,350.
    #[test]
    fn mean_core_seconds_by_hand() {
        assert!((LongJobs::Spark.mean_core_seconds() - 19_200.0).abs() < 1e-6);
        assert!((LongJobs::WordCount.mean_core_seconds() - 6_270.0).abs() < 1e-6);
        assert!((LongJobs::TeraSort.mean_core_seconds() - 10_350.0).abs() < 1e-6);
    }

    // 300 s over 2 tasks per core of about 40 s: round(300 / 80) = 4 stages of
    // tasks of 300 / 8 = 37.5 s; 48 cores give 96 tasks a stage. 4 × 2 × 37.5 = 300 s.
    #[test]
    fn spark_stages_by_hand() {
        let s = spark_stages(300_000_000, 48);
        assert_eq!(s, vec![StageTasks { count: 96, duration: 37_500_000 }; 4]);
        assert_eq!(spark_stages(10_000_000, 8), vec![StageTasks { count: 16, duration: 5_000_000 }]);
    }

    #[test]
    fn mapreduce_jobs_have_a_reduce_barrier() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let j = LongJobs::TeraSort.job(&mut rng, 0, false, 1.0, 0);
        assert_eq!(j.phases.len(), 2);
        assert_eq!(j.phases[1].deps, vec![0]);
        assert!(j.phases[1].tasks.iter().all(|t| t.request == REDUCER && t.duration >= 200_000_000));
        assert_eq!(LongJobs::from_name("wordcount"), Some(LongJobs::WordCount));
        assert_eq!(LongJobs::from_name("hadoop"), None);
    }
}
