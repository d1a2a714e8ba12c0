//! Job classes: short vs long by a configurable rule, and Google's priority bands.
//!
//! The default rule follows BIG-C §5.5 ("classified … based on job completion
//! time and resource usage", after Hawk): a job is **short** when it ran for at
//! most `max_short_duration` in the trace (submission → last task end) **and**
//! used at most `max_short_core_seconds` of CPU (Σ requested cores × run time);
//! otherwise it is **long**. Defaults: 300 s and 1,000 core-seconds. Both are
//! options (`--short-max-s`, `--short-max-core-s` in the CLI).
//!
//! Hawk's own rule (Delgado et al., ATC '15: a job's class from the mean
//! run time of its tasks against a cutoff) is taken instead when a
//! cutoff is given (`--short-mean-task-s`): a job is short when the mean run
//! time of its tasks is at most the cutoff, however many tasks it has.

use crate::record::TraceJob;
use pliant_core::model::JobClass;
use pliant_core::{Micros, SECOND};

/// The short-vs-long rule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClassRule {
    /// Longest duration (submission → last task end) of a short job.
    pub max_short_duration: Micros,
    /// Most CPU-time (core-seconds at the requested size) of a short job.
    pub max_short_core_seconds: f64,
    /// Hawk's rule in place of the two above: the longest mean task run time of a short job.
    pub max_short_mean_task: Option<Micros>,
}

impl Default for ClassRule {
    fn default() -> Self {
        ClassRule { max_short_duration: 300 * SECOND, max_short_core_seconds: 1000.0, max_short_mean_task: None }
    }
}

impl std::fmt::Display for ClassRule {
    /// What a short job is, in words (`trace stats` prints it).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.max_short_mean_task {
            Some(cutoff) => write!(f, "its tasks' mean run time at most {} s", cutoff as f64 / 1e6),
            None => write!(
                f,
                "at most {} s and {} core-seconds",
                self.max_short_duration as f64 / 1e6,
                self.max_short_core_seconds
            ),
        }
    }
}

impl ClassRule {
    /// The class of `job` under this rule.
    pub fn classify(&self, job: &TraceJob) -> JobClass {
        let short = match self.max_short_mean_task {
            Some(cutoff) => job.task_time() <= cutoff.saturating_mul(job.task_count().max(1) as u64),
            None => job.duration() <= self.max_short_duration && job.core_seconds() <= self.max_short_core_seconds,
        };
        if short {
            JobClass::Short
        } else {
            JobClass::Long
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::task;
    use pliant_core::Resources;
    use pliant_workload::Phase;

    fn job(duration_s: u64, tasks: usize, cores: u64, task_s: u64) -> TraceJob {
        let t = task(Resources::cores_gb(cores, 1), task_s * SECOND);
        TraceJob {
            id: "j".into(),
            submit: 10 * SECOND,
            end: (10 + duration_s) * SECOND,
            priority: 0,
            sched_class: None,
            class: None,
            elastic: None,
            kind: Default::default(),
            phases: vec![Phase::independent(vec![t; tasks])],
        }
    }

    #[test]
    fn short_needs_both_a_short_duration_and_little_cpu() {
        let rule = ClassRule::default();
        // 300 s, 10 tasks × 1 core × 100 s = 1,000 core-s: both limits reached, not passed.
        assert_eq!(rule.classify(&job(300, 10, 1, 100)), JobClass::Short);
        // 301 s: too long.
        assert_eq!(rule.classify(&job(301, 10, 1, 100)), JobClass::Long);
        // 11 tasks: 1,100 core-s, too big.
        assert_eq!(rule.classify(&job(300, 11, 1, 100)), JobClass::Long);
    }

    #[test]
    fn hawks_rule_goes_by_the_mean_task_alone() {
        let rule = ClassRule { max_short_mean_task: Some(100 * SECOND), ..ClassRule::default() };
        // 5,000 tasks of 100 s over an hour: short by its tasks, long by the default rule.
        assert_eq!(rule.classify(&job(3600, 5000, 1, 100)), JobClass::Short);
        assert_eq!(ClassRule::default().classify(&job(3600, 5000, 1, 100)), JobClass::Long);
        assert_eq!(rule.classify(&job(60, 1, 1, 101)), JobClass::Long);
    }
}
