//! Simulator throughput benchmark: events per second and peak memory on the
//! `mixed` scenario at a given scale, for each preset; with `--scenario NAME`
//! first, on that scenario under its own presets.
//!
//! `cargo run --release -p pliant-sim --example bench -- 1 10 100`
//! `cargo run --release -p pliant-sim --example bench -- --scenario reservation 1`
//! (SSR §VI-B: ~2,800 background jobs on 1,000 nodes x 4 slots: about 0.2 s
//! of wall time per preset on one core of the development machine.)
//! Each scale runs in a fresh child process so the peak-memory figure is its own.

use pliant_core::policy::{preset, Params, PRESETS};
use pliant_sim::{simulate, SimOptions};
use pliant_workload::scenarios::{LongJobs, SCENARIOS};
use std::process::Command;

fn peak_rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn run_scale(scenario: &str, scale: f64) {
    let w = pliant_workload::scenarios::build(scenario, 1, scale, LongJobs::Spark).expect("built-in scenario");
    let tasks: usize = w.jobs.iter().map(|j| j.tasks().count()).sum();
    let names: Vec<&str> = match scenario {
        "mixed" => PRESETS.iter().map(|p| p.name).collect(),
        _ => SCENARIOS.iter().find(|s| s.name == scenario).expect("known scenario").policies.to_vec(),
    };
    for name in names {
        let policy = preset(name, &Params::default()).expect("preset");
        let r = simulate(&w, policy, &SimOptions::default()).expect("simulation");
        println!(
            "scale {scale:>5}  nodes {:>5}  jobs {:>6}  tasks {:>7}  {:<9} events {:>9}  wall {:>7.3} s  {:>10.0} events/s",
            w.cluster.nodes.len(),
            w.jobs.len(),
            tasks,
            name,
            r.cost.events,
            r.cost.wall_seconds,
            r.cost.events as f64 / r.cost.wall_seconds
        );
    }
    println!("scale {scale:>5}  peak memory {:.1} MB", peak_rss_mb());
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut scenario = "mixed".to_string();
    if args.first().map(String::as_str) == Some("--scenario") && args.len() > 1 {
        scenario = args.remove(1);
        args.remove(0);
    }
    if let [one] = args.as_slice() {
        if let Some(scale) = one.strip_prefix("--child=") {
            run_scale(&scenario, scale.parse().expect("scale"));
            return;
        }
    }
    let scales = if args.is_empty() { vec!["1".to_string(), "10".into(), "100".into()] } else { args };
    let me = std::env::current_exe().expect("own path");
    for s in scales {
        let status =
            Command::new(&me).args(["--scenario", &scenario, &format!("--child={s}")]).status().expect("child run");
        assert!(status.success(), "scale {s} failed");
    }
}
