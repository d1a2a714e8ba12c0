//! The per-preemption CSV: every preemption the core chose per victim
//! (`pliant`), with the estimated costs of every mechanism for the same
//! victim and need, so an operator can see why.

use pliant_core::policy::cost::{Estimate, MECHANISMS};
use pliant_core::time::to_secs_f64;
use pliant_metrics::RunRecord;
use std::io::Write;

/// Writes every run's choices as CSV with a header row (only the header when
/// no policy chose per victim).
pub fn write_preemptions_csv(runs: &[RunRecord], out: impl Write) -> csv::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    let mut header: Vec<String> = [
        "policy",
        "time_s",
        "core_job",
        "task",
        "held_cpu",
        "held_mem_mb",
        "need_cpu",
        "need_mem_mb",
        "chosen",
        "takes_cpu",
        "takes_mem_mb",
        "free_after_s",
        "lost_core_s",
        "resume_core_s",
        "wait_core_s",
        "stopped_core_s",
        "io_mb",
    ]
    .map(String::from)
    .to_vec();
    for m in MECHANISMS {
        header.push(format!("{}_cost_core_s", m.name()));
        header.push(format!("{}_free_after_s", m.name()));
    }
    w.write_record(&header)?;
    let cores = |milli: u64| (milli as f64 / 1000.0).to_string();
    let core_s = |core_us: u64| (core_us as f64 / 1e6).to_string();
    for run in runs {
        for c in &run.choices {
            let e: &Estimate = &c.chosen;
            let mut row = vec![
                run.policy.clone(),
                to_secs_f64(c.at).to_string(),
                c.task.job.0.to_string(),
                c.task.task.to_string(),
                cores(c.held.cpu_milli),
                c.held.mem_mb.to_string(),
                cores(c.need.cpu_milli),
                c.need.mem_mb.to_string(),
                e.mechanism.name().to_string(),
                cores(e.takes.cpu_milli),
                e.takes.mem_mb.to_string(),
                to_secs_f64(e.free_after).to_string(),
                core_s(e.lost),
                core_s(e.resume),
                core_s(e.wait),
                core_s(e.stopped),
                e.io_mb.to_string(),
            ];
            for option in &c.options {
                match option {
                    Some(o) => {
                        row.push(core_s(o.cost()));
                        row.push(to_secs_f64(o.free_after).to_string());
                    }
                    None => row.extend([String::new(), String::new()]),
                }
            }
            w.write_record(&row)?;
        }
    }
    w.flush()?;
    Ok(())
}
