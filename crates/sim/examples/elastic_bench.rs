//! YARN-ME speed benchmark: CPU time of `yarn`, `elastic` and `meganode` on
//! one 100-job Table 2 trace of about 20,000 tasks. DSS's elastic scheduler
//! takes ~1,500 CPU-seconds on such a trace; the target for `elastic` is
//! < 1.5 CPU-seconds (1,000× faster).
//!
//! `cargo run --release -p pliant-sim --example elastic_bench [REPEATS [PRESETS]]`
//! (each preset runs REPEATS times, default 1, and the least CPU time is
//! shown; PRESETS is a comma-separated list, default `yarn,elastic,meganode`).

use pliant_core::policy::Params;
use pliant_plugins::preset;
use pliant_sim::{simulate, SimOptions};
use pliant_workload::scenarios::yarn_me::{generate, Spread, TraceSpec};
use std::time::Instant;

/// DSS's elastic scheduler on such a trace, CPU-seconds (measured once with DSS).
const DSS_CPU_S: f64 = 1500.0;
/// The target for `elastic`, CPU-seconds.
const TARGET_CPU_S: f64 = 1.5;

/// CPU time this thread has used, in seconds (Linux's schedstat, in ns),
/// or `None` where it cannot be read.
fn thread_cpu_s() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: f64 = stat.split_whitespace().next()?.parse().ok()?;
    Some(ns / 1e9)
}

fn main() {
    let repeats: usize = std::env::args().nth(1).map_or(1, |a| a.parse().expect("REPEATS is a count"));
    let presets: Vec<String> =
        std::env::args().nth(2).map_or(vec!["yarn".into(), "elastic".into(), "meganode".into()], |a| {
            a.split(',').map(str::to_string).collect()
        });
    let spec = TraceSpec::table2(Spread::Uniform, 1.5);
    // The first seed whose trace has 19,000–21,000 tasks.
    let (seed, w) = (1..)
        .map(|seed| (seed, generate(&spec, seed)))
        .find(|(_, w)| (19_000..=21_000).contains(&w.jobs.iter().map(|j| j.tasks().count()).sum::<usize>()))
        .expect("some seed gives ~20,000 tasks");
    let tasks: usize = w.jobs.iter().map(|j| j.tasks().count()).sum();
    println!(
        "Table 2 uniform trace, seed {seed}: {} jobs, {tasks} tasks, {} nodes",
        w.jobs.len(),
        w.cluster.nodes.len()
    );
    if thread_cpu_s().is_none() {
        println!("(no /proc/thread-self/schedstat: the CPU column shows wall time)");
    }
    for name in &presets {
        let policy = preset(name, &Params::default()).expect("a preset name");
        let mut best: Option<(f64, f64)> = None;
        let mut last = None;
        for _ in 0..repeats.max(1) {
            let (cpu0, wall0) = (thread_cpu_s(), Instant::now());
            let r = simulate(&w, policy.clone(), &SimOptions::default()).expect("simulation");
            let wall = wall0.elapsed().as_secs_f64();
            let cpu = cpu0.and_then(|c0| thread_cpu_s().map(|c1| c1 - c0)).unwrap_or(wall);
            if best.is_none_or(|(c, _)| cpu < c) {
                best = Some((cpu, wall));
            }
            last = Some(r);
        }
        let ((cpu, wall), r) = (best.expect("ran"), last.expect("ran"));
        let jcts: Vec<f64> = r.jobs.iter().filter_map(|j| j.end.map(|e| (e - j.submit) as f64 / 1e6)).collect();
        println!(
            "{name:<9} CPU {cpu:>6.3} s  wall {wall:>6.3} s  tasks {tasks}  events {:>6}  {:>8.0} events/CPU-s  \
             avg JCT {:>7.1} s",
            r.cost.events,
            r.cost.events as f64 / cpu,
            jcts.iter().sum::<f64>() / jcts.len() as f64
        );
        if name == "elastic" {
            let verdict = if cpu < TARGET_CPU_S { "met" } else { "NOT met" };
            println!(
                "          target < {TARGET_CPU_S} CPU-s: {verdict}; {:.0}x faster than DSS's ~{DSS_CPU_S} CPU-s",
                DSS_CPU_S / cpu
            );
        }
    }
}
