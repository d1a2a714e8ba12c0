//! The per-job CSV: one row per job per policy.

use pliant_core::time::to_secs_f64;
use pliant_metrics::RunRecord;
use std::io::Write;

/// Writes every job of every run as CSV with a header row.
pub fn write_jobs_csv(runs: &[RunRecord], out: impl Write) -> csv::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record([
        "policy",
        "job",
        "class",
        "priority",
        "submit_s",
        "first_start_s",
        "end_s",
        "jct_s",
        "queue_delay_s",
        "failed",
        "tasks",
        "preemptions",
        "jct_retry_s",
        "stalled_task_s",
        "attempts",
        "kills",
        "relaunches",
    ])?;
    let opt = |v: Option<u64>| v.map(|t| to_secs_f64(t).to_string()).unwrap_or_default();
    for run in runs {
        for j in &run.jobs {
            w.write_record([
                run.policy.clone(),
                j.name.clone(),
                j.class.name().to_string(),
                j.priority.to_string(),
                to_secs_f64(j.submit).to_string(),
                opt(j.first_start),
                opt(j.end),
                opt(j.jct()),
                opt(j.queue_delay()),
                j.failed.to_string(),
                j.tasks.to_string(),
                j.preemptions.to_string(),
                opt(j.jct_retry()),
                to_secs_f64(j.stalled).to_string(),
                j.attempts.to_string(),
                j.kills.to_string(),
                j.relaunches.to_string(),
            ])?;
        }
    }
    w.flush()?;
    Ok(())
}
