//! The comparison table: a row per policy, short-job and long-job columns.

use pliant_core::model::JobClass;
use pliant_core::model::PriorityLevel;
use pliant_metrics::{summarise, CheckpointCounts, RunRecord};
use std::fmt::Write;

/// Renders runs side by side, readable at a glance in a terminal.
pub fn comparison_table(title: &str, runs: &[RunRecord]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{title}");
    let _ = writeln!(
        s,
        "{:<14} | {:>5} {:>4} {:>8} {:>8} {:>8} {:>8} | {:>5} {:>4} {:>8} {:>8} {:>9} {:>5} | {:>5} {:>9} {:>6} {:>9}",
        "", "short", "", "", "", "", "", "long", "", "", "", "", "", "", "", "", ""
    );
    let _ = writeln!(
        s,
        "{:<14} | {:>5} {:>4} {:>8} {:>8} {:>8} {:>8} | {:>5} {:>4} {:>8} {:>8} {:>9} {:>5} | {:>5} {:>9} {:>6} {:>9}",
        "policy",
        "jobs",
        "fail",
        "p50 s",
        "p95 s",
        "p99 s",
        "queue s",
        "jobs",
        "fail",
        "p50 s",
        "p90 s",
        "retry90 s",
        "CoV",
        "cpu %",
        "waste c·h",
        "preempt",
        "events/s"
    );
    for run in runs {
        let sh = summarise(&run.jobs, JobClass::Short);
        let lo = summarise(&run.jobs, JobClass::Long);
        let preempt: u64 = run.preemptions.values().sum();
        let eps = if run.cost.wall_seconds > 0.0 { run.cost.events as f64 / run.cost.wall_seconds } else { 0.0 };
        let _ = writeln!(
            s,
            "{:<14} | {:>5} {:>4} {:>8.1} {:>8.1} {:>8.1} {:>8.1} | {:>5} {:>4} {:>8.1} {:>8.1} {:>9.1} {:>5.2} | {:>5.1} {:>9.2} {:>6} {:>9.2e}",
            run.policy,
            sh.jobs,
            sh.failed,
            sh.jct.p50,
            sh.jct.p95,
            sh.jct.p99,
            sh.queue_delay.mean,
            lo.jobs,
            lo.failed,
            lo.jct.p50,
            lo.jct.p90,
            lo.jct_retry.p90,
            lo.cov,
            run.cpu_mean * 100.0,
            run.waste_core_seconds / 3600.0,
            preempt,
            eps
        );
    }
    let _ = writeln!(
        s,
        "p50/p95/p99/p90: job completion time percentiles of finished jobs; retry90: with each failed job resubmitted by its owner when it failed, timed from first submission to the resubmission's end; queue: mean queueing delay; waste: core-hours lost to kills or held while reclaiming, dumping or restoring"
    );
    if levels_say_more(runs) {
        s.push('\n');
        s.push_str(&crate::level_table(runs));
    }
    s
}

/// The priority-level table adds something when a run checkpointed, or when a
/// level holds jobs of both classes; otherwise (BIG-C's short jobs on top,
/// long jobs at the bottom) its rows repeat the class columns.
fn levels_say_more(runs: &[RunRecord]) -> bool {
    let checkpointed = runs.iter().any(|r| r.checkpoints != CheckpointCounts::default());
    let mixed_level = runs.first().is_some_and(|r| {
        PriorityLevel::ALL.iter().any(|&l| {
            let mut classes = r.jobs.iter().filter(|j| PriorityLevel::of(j.priority) == l).map(|j| j.class);
            classes.next().is_some_and(|first| classes.any(|c| c != first))
        })
    });
    checkpointed || mixed_level
}

#[cfg(test)]
mod tests {
    use super::*;
    use pliant_metrics::JobRecord;

    fn job(class: JobClass, priority: u8) -> JobRecord {
        JobRecord {
            name: "j".into(),
            class,
            priority,
            submit: 0,
            first_start: Some(0),
            end: Some(1_000_000),
            failed: false,
            tasks: 1,
            preemptions: 0,
            stalled: 0,
            retry_end: None,
            alone: None,
        }
    }

    fn run(jobs: Vec<JobRecord>) -> RunRecord {
        RunRecord { policy: "kill".into(), jobs, ..RunRecord::default() }
    }

    #[test]
    fn level_table_only_when_it_says_more_than_the_classes() {
        let split = run(vec![job(JobClass::Short, 9), job(JobClass::Long, 0)]);
        assert!(!comparison_table("t", std::slice::from_ref(&split)).contains("levels:"));
        let mixed = run(vec![job(JobClass::Short, 9), job(JobClass::Long, 9), job(JobClass::Long, 0)]);
        assert!(comparison_table("t", &[mixed]).contains("levels:"));
        let mut dumped = split;
        dumped.checkpoints.full_dumps = 1;
        assert!(comparison_table("t", &[dumped]).contains("levels:"));
    }
}
