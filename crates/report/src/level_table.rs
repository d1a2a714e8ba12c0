//! The priority-level table (checkpoint paper §3.3.2, Fig. 3 and 5): mean
//! JCT per level and relative to the kill baseline, waste as core-hours and
//! as a share of capacity, energy, and what checkpointing did.

use crate::json::kill_baseline;
use pliant_core::model::PriorityLevel;
use pliant_metrics::{summarise_level, RunRecord};
use std::fmt::Write;

/// Renders a row per run: levels' mean JCTs, waste, energy, dumps and restores.
pub fn level_table(runs: &[RunRecord]) -> String {
    let means = |r: &RunRecord| PriorityLevel::ALL.map(|l| summarise_level(&r.jobs, l).jct.mean);
    let base = kill_baseline(runs).map(means);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<14} | {:>9} {:>9} {:>9} | {:>5} {:>5} {:>5} | {:>9} {:>7} {:>9} | {:>6} {:>6} {:>6} {:>6} {:>6}",
        "policy",
        "free s",
        "middle s",
        "prod s",
        "free",
        "mid",
        "prod",
        "waste c·h",
        "waste %",
        "energy kWh",
        "dumps",
        "incr",
        "local",
        "remote",
        "a-kill"
    );
    for r in runs {
        let m = means(r);
        let rel = |i: usize| match base {
            Some(b) if b[i] > 0.0 => format!("{:.2}", m[i] / b[i]),
            _ => "-".into(),
        };
        let capacity = r.cluster_cores * r.makespan as f64 / 1e6;
        let pct = if capacity > 0.0 { 100.0 * r.waste_core_seconds / capacity } else { 0.0 };
        let c = &r.checkpoints;
        let _ = writeln!(
            s,
            "{:<14} | {:>9.1} {:>9.1} {:>9.1} | {:>5} {:>5} {:>5} | {:>9.2} {:>7.2} {:>10.2} | {:>6} {:>6} {:>6} {:>6} {:>6}",
            r.policy,
            m[0],
            m[1],
            m[2],
            rel(0),
            rel(1),
            rel(2),
            r.waste_core_seconds / 3600.0,
            pct,
            r.energy_joules / 3.6e6,
            c.full_dumps,
            c.incremental_dumps,
            c.local_restores,
            c.remote_restores,
            c.adaptive_kills
        );
    }
    let _ = writeln!(
        s,
        "levels: mean JCT of free (priority 0-1), middle (2-8), production (9-11) jobs, then relative to {}; \
         waste: core time lost to kills or held while dumping/restoring; dumps: full, incremental; restores: local, remote; \
         a-kill: kills chosen by adaptive Alg. 1",
        kill_baseline(runs).map_or("the kill baseline (not run)", |b| b.policy.as_str())
    );
    s
}
