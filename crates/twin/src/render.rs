//! The twin report as text for a terminal.

use crate::compare::{Divergence, Preemption};
use crate::rates::RateUsed;
use crate::TwinReport;
use std::fmt::Write;

fn opt(x: Option<f64>, digits: usize) -> String {
    x.map_or_else(|| "-".to_string(), |v| format!("{v:.digits$}"))
}

fn divergence(out: &mut String, what: &str, d: &Option<Divergence>) {
    match d {
        None => writeln!(out, "{what}: the same in both runs").unwrap(),
        Some(d) => writeln!(
            out,
            "{what}: first differ at #{}: live {}, replay {}\n  why: {}",
            d.index + 1,
            d.live.as_deref().unwrap_or("(none)"),
            d.sim.as_deref().unwrap_or("(none)"),
            d.why
        )
        .unwrap(),
    }
}

fn preemptions(out: &mut String, live: &[Preemption], sim: &[Preemption]) {
    let show = |p: Option<&Preemption>| {
        p.map_or_else(String::new, |p| format!("{:>8.2}  {:>3}.{:<3} {:<10}", p.at_s, p.job, p.task, p.mechanism))
    };
    writeln!(out, "   # | live: time s  job.task mechanism  | replay: time s  job.task mechanism").unwrap();
    for i in 0..live.len().max(sim.len()) {
        writeln!(out, "{:>4} | {:<32} | {}", i + 1, show(live.get(i)), show(sim.get(i))).unwrap();
    }
}

fn rate(out: &mut String, what: &str, r: &RateUsed) {
    let j = &r.journal;
    writeln!(
        out,
        "{what} {:.2} s/GB from {} (the journal shows {} {what}s moving {} MB in {:.2} s over the run)",
        r.s_per_gb, r.from, j.episodes, j.mb, j.seconds
    )
    .unwrap();
}

/// The report: a row per job, the preemption sequences side by side, where they part.
pub fn table(r: &TwinReport) -> String {
    let c = &r.comparison;
    let mut out = format!("twin of {} (policy {}): {} jobs\n", r.state_dir, r.policy, c.jobs.len());
    rate(&mut out, "reclaim", &r.rates.reclaim);
    rate(&mut out, "restore", &r.rates.restore);
    let s_per_gb = |x: Option<f64>| x.map_or_else(|| "-".to_string(), |v| format!("{v:.2}"));
    for t in &r.rates.tasks {
        writeln!(
            out,
            "  task {}.{} at its own: reclaim {} s/GB, restore {} s/GB",
            t.job,
            t.task,
            s_per_gb(t.reclaim_s_per_gb),
            s_per_gb(t.restore_s_per_gb)
        )
        .unwrap();
    }
    writeln!(out, "job                  |  JCT s live  replay   error | queue s live replay | preempt live replay")
        .unwrap();
    for j in &c.jobs {
        writeln!(
            out,
            "{:<20} | {:>10} {:>7} {:>7} | {:>11} {:>6} | {:>12} {:>6}",
            j.name.chars().take(20).collect::<String>(),
            opt(j.live_jct_s, 2),
            opt(j.sim_jct_s, 2),
            j.jct_error.map_or_else(|| "-".into(), |e| format!("{:+.1}%", e * 100.0)),
            opt(j.live_queue_s, 2),
            opt(j.sim_queue_s, 2),
            j.live_preemptions,
            j.sim_preemptions
        )
        .unwrap();
    }
    let finished = c.jobs.iter().filter(|j| j.jct_error.is_some()).count();
    writeln!(
        out,
        "worst JCT error {} (over the {finished} jobs that finished in both); work lost to kills: live {:.1} core-s, \
         replay {:.1} core-s",
        c.worst_jct_error.map_or_else(|| "-".into(), |e| format!("{:.1}%", e * 100.0)),
        c.live_lost_work_core_seconds,
        c.sim_lost_work_core_seconds
    )
    .unwrap();
    if !c.unfinished_live.is_empty() {
        let jobs: Vec<String> = c.unfinished_live.iter().map(|(i, name)| format!("{i} ({name})")).collect();
        writeln!(out, "did not finish live (the run stopped first), left out of the JCT error: {}", jobs.join(", "))
            .unwrap();
    }
    out.push('\n');
    preemptions(&mut out, &c.live_preemptions, &c.sim_preemptions);
    divergence(&mut out, &format!("preemptions (times within {:.1} s)", c.tolerance_s), &c.preemption_divergence);
    divergence(&mut out, "placements", &c.placement_divergence);
    out
}
