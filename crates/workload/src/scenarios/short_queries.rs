//! BIG-C's short jobs (§5.1): Spark-SQL queries of ⟨4 CPU, 4 GB⟩ tasks at
//! production priority. The scenarios differ only in how many tasks a query
//! has and how long they run.

use crate::{Job, Phase, Task};
use pliant_core::model::JobClass;
use pliant_core::time::from_secs_f64;
use pliant_core::Resources;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// BIG-C §5.1: Spark-SQL task containers are ⟨4 CPU, 4 GB⟩.
pub(crate) const SHORT_TASK: Resources = Resources::cores_gb(4, 4);
/// Short queries are latency-critical: production priority.
const SHORT_PRIORITY: u8 = 9;

/// The shape of a scenario's queries.
pub(crate) struct ShortQueries {
    /// Tasks per query, inclusive range.
    pub tasks: (u32, u32),
    /// Task run time in seconds, half-open range.
    pub task_s: (f64, f64),
}

impl ShortQueries {
    /// Mean core-seconds of one query.
    pub fn mean_core_seconds(&self) -> f64 {
        (self.tasks.0 + self.tasks.1) as f64 / 2.0
            * (SHORT_TASK.cpu_milli as f64 / 1000.0)
            * (self.task_s.0 + self.task_s.1)
            / 2.0
    }

    /// Query number `n`, submitted at `submit`.
    pub fn job(&self, rng: &mut ChaCha8Rng, submit: u64, n: usize) -> Job {
        let count = rng.gen_range(self.tasks.0..=self.tasks.1);
        let tasks = (0..count)
            .map(|_| {
                let d = from_secs_f64(rng.gen_range(self.task_s.0..self.task_s.1));
                Task { request: SHORT_TASK, duration: d, estimate: Some(d) }
            })
            .collect();
        Job {
            name: format!("query-{n}"),
            submit,
            class: JobClass::Short,
            priority: SHORT_PRIORITY,
            phases: vec![Phase::independent(tasks)],
            elastic: None,
        }
    }
}
