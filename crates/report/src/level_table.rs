//! The priority-level table (checkpoint paper §3.3.2, Fig. 3 and 5): mean
//! JCT per level and relative to the kill baseline, waste as core-hours and
//! as a share of capacity, energy, and what checkpointing did.

use crate::grid::{fixed, grid};
use crate::json::kill_baseline;
use pliant_core::model::PriorityLevel;
use pliant_metrics::{summarise_level, RunRecord};

/// Renders a row per run: levels' mean JCTs, waste, energy, dumps and
/// restores; `-` for a level with no finished job.
pub fn level_table(runs: &[RunRecord]) -> String {
    let means = |r: &RunRecord| {
        PriorityLevel::ALL.map(|l| {
            let s = summarise_level(&r.jobs, l);
            (s.jct.count > 0).then_some(s.jct.mean)
        })
    };
    let base = kill_baseline(runs).map(means);
    let cols = |c: &[&str]| c.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let mut g = grid(&[
        ("", cols(&["policy"])),
        ("mean JCT", cols(&["free s", "middle s", "prod s"])),
        ("vs kill", cols(&["free", "mid", "prod"])),
        ("cost", cols(&["waste c·h", "waste %", "energy kWh"])),
        ("checkpoints", cols(&["dumps", "incr", "local", "remote", "a-kill"])),
    ]);
    for r in runs {
        let m = means(r);
        let rel = |i: usize| match (base.and_then(|b| b[i]), m[i]) {
            (Some(b), Some(x)) if b > 0.0 => format!("{:.2}", x / b),
            _ => "-".into(),
        };
        let capacity = r.cluster_cores * r.makespan as f64 / 1e6;
        let pct = if capacity > 0.0 { 100.0 * r.waste_core_seconds / capacity } else { 0.0 };
        let c = &r.checkpoints;
        g.row(vec![
            r.policy.clone(),
            fixed(m[0], 1),
            fixed(m[1], 1),
            fixed(m[2], 1),
            rel(0),
            rel(1),
            rel(2),
            format!("{:.2}", r.waste_core_seconds / 3600.0),
            format!("{pct:.2}"),
            format!("{:.2}", r.energy_joules / 3.6e6),
            c.full_dumps.to_string(),
            c.incremental_dumps.to_string(),
            c.local_restores.to_string(),
            c.remote_restores.to_string(),
            c.adaptive_kills.to_string(),
        ]);
    }
    let mut s = g.render();
    s.push_str(&format!(
        "levels: mean JCT of free (priority 0-1), middle (2-8), production (9-11) jobs, then relative to {}; \
         waste: core time lost to kills or held while dumping/restoring; dumps: full, incremental; restores: local, remote; \
         a-kill: kills chosen by adaptive Alg. 1\n",
        kill_baseline(runs).map_or("the kill baseline (not run)", |b| b.policy.as_str())
    ));
    s
}
