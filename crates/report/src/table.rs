//! The comparison table: a row per policy, short-job and long-job columns.

use crate::grid::{fixed, grid};
use pliant_core::model::JobClass;
use pliant_core::model::PriorityLevel;
use pliant_metrics::{summarise, Attempts, CheckpointCounts, RunRecord, Stats};

/// Renders runs side by side, readable at a glance in a terminal; `-` where
/// nothing was measured (no job of the class, or none finished).
pub fn comparison_table(title: &str, runs: &[RunRecord]) -> String {
    let cols = |c: &[&str]| c.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let mut g = grid(&[
        ("", cols(&["policy"])),
        ("short", cols(&["jobs", "fail", "p50 s", "p95 s", "p99 s", "queue s"])),
        ("long", cols(&["jobs", "fail", "p50 s", "p90 s", "retry90 s", "CoV"])),
        ("cluster", cols(&["cpu %", "waste c·h", "preempt", "events/s"])),
    ]);
    for run in runs {
        let sh = summarise(&run.jobs, JobClass::Short);
        let lo = summarise(&run.jobs, JobClass::Long);
        let stat = |s: &Stats, x: f64| fixed((s.count > 0).then_some(x), 1);
        let preempt: u64 = run.preemptions.values().sum();
        let eps = if run.cost.wall_seconds > 0.0 { run.cost.events as f64 / run.cost.wall_seconds } else { 0.0 };
        g.row(vec![
            run.policy.clone(),
            sh.jobs.to_string(),
            sh.failed.to_string(),
            stat(&sh.jct, sh.jct.p50),
            stat(&sh.jct, sh.jct.p95),
            stat(&sh.jct, sh.jct.p99),
            stat(&sh.queue_delay, sh.queue_delay.mean),
            lo.jobs.to_string(),
            lo.failed.to_string(),
            stat(&lo.jct, lo.jct.p50),
            stat(&lo.jct, lo.jct.p90),
            stat(&lo.jct_retry, lo.jct_retry.p90),
            fixed(lo.cov, 2),
            format!("{:.1}", run.cpu_mean * 100.0),
            format!("{:.2}", run.waste_core_seconds / 3600.0),
            preempt.to_string(),
            format!("{eps:.2e}"),
        ]);
    }
    let mut s = format!("{title}\n");
    s.push_str(&g.render());
    s.push_str(
        "p50/p95/p99/p90: job completion time percentiles of finished jobs; retry90: with each failed job resubmitted by its owner when it failed, timed from first submission to the resubmission's end; queue: mean queueing delay; CoV: spread of long jobs' JCTs (standard deviation over mean); waste: core-hours lost to kills or held while reclaiming, dumping or restoring; -: nothing measured\n",
    );
    s.push_str(&attempts_line(runs));
    if levels_say_more(runs) {
        s.push('\n');
        s.push_str(&crate::level_table(runs));
    }
    s
}

/// A line naming, for each run that killed, how many tasks it killed and
/// started again and how many application attempts it threw away (empty
/// when no run killed).
fn attempts_line(runs: &[RunRecord]) -> String {
    let said: Vec<String> = runs
        .iter()
        .map(|r| (r, Attempts::of(&r.jobs)))
        .filter(|(_, a)| a.any())
        .map(|(r, a)| {
            let again = match a.jobs_reattempted {
                0 => String::new(),
                jobs => format!(
                    ", {} thrown away and run again ({})",
                    counted(a.reattempts, "application attempt"),
                    counted(jobs, "job")
                ),
            };
            format!("{} {} killed, {} started again{again}", r.policy, counted(a.kills, "task"), a.relaunches)
        })
        .collect();
    if said.is_empty() {
        return String::new();
    }
    format!("kills: {}\n", said.join("; "))
}

/// `n thing` or `n things`.
fn counted(n: u64, thing: &str) -> String {
    if n == 1 {
        format!("1 {thing}")
    } else {
        format!("{n} {thing}s")
    }
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
            attempts: 1,
            kills: 0,
            relaunches: 0,
            stalled: 0,
            retry_end: None,
            alone: None,
        }
    }

    fn run(jobs: Vec<JobRecord>) -> RunRecord {
        RunRecord { policy: "kill".into(), jobs, ..RunRecord::default() }
    }

    #[test]
    fn kills_are_named_per_run_that_killed_and_not_otherwise() {
        let quiet = run(vec![job(JobClass::Long, 0)]);
        assert!(!comparison_table("t", std::slice::from_ref(&quiet)).contains("kills:"));
        let spark = JobRecord { attempts: 2, kills: 7, relaunches: 5, ..job(JobClass::Long, 0) };
        let mapreduce = JobRecord { kills: 1, relaunches: 1, ..job(JobClass::Long, 0) };
        let killed = run(vec![spark, mapreduce, job(JobClass::Short, 9)]);
        let line =
            comparison_table("t", &[quiet, killed]).lines().find(|l| l.starts_with("kills:")).unwrap().to_string();
        let said =
            "kills: kill 8 tasks killed, 6 started again, 1 application attempt thrown away and run again (1 job)";
        assert_eq!(line, said);
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

    #[test]
    fn empty_and_all_failed_classes_print_dashes_and_long_names_stay_aligned() {
        let mut failed = job(JobClass::Long, 0);
        failed.failed = true;
        failed.end = None;
        let mut runs = vec![run(vec![job(JobClass::Short, 9), failed])];
        runs.push(RunRecord { policy: "a-policy-name-longer-than-fourteen".into(), ..runs[0].clone() });
        let t = comparison_table("t", &runs);
        let rows: Vec<&str> = t.lines().filter(|l| l.starts_with("kill") || l.starts_with("a-policy")).collect();
        assert_eq!(rows.len(), 2, "{t}");
        let cells: Vec<&str> = rows[0].split_whitespace().collect();
        // policy | 1 0 1.0 1.0 1.0 0.0 | 1 1 - - - - | ...
        assert_eq!(&cells[8..15], ["|", "1", "1", "-", "-", "-", "-"], "{t}");
        let bars = |l: &str| l.match_indices('|').map(|(i, _)| i).collect::<Vec<_>>();
        assert_eq!(bars(rows[0]), bars(rows[1]), "columns aligned:\n{t}");
    }
}
