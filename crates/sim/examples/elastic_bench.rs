//! YARN-ME speed benchmark: wall time of `yarn`, `elastic` and `meganode` on
//! one 100-job Table 2 trace of about 20,000 tasks (DSS's elastic scheduler
//! takes ~1,500 CPU-seconds on such a trace; the target here is < 1.5 s).
//!
//! `cargo run --release -p pliant-sim --example elastic_bench`

use pliant_core::policy::{preset, Params};
use pliant_sim::{simulate, SimOptions};
use pliant_workload::scenarios::yarn_me::{generate, Spread, TraceSpec};

fn main() {
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
    for name in ["yarn", "elastic", "meganode"] {
        let policy = preset(name, &Params::default()).expect("preset");
        let started = std::time::Instant::now();
        let r = simulate(&w, policy, &SimOptions::default()).expect("simulation");
        let wall = started.elapsed().as_secs_f64();
        let jcts: Vec<f64> = r.jobs.iter().filter_map(|j| j.end.map(|e| (e - j.submit) as f64 / 1e6)).collect();
        println!(
            "{name:<9} wall {wall:>7.3} s  events {:>8}  avg JCT {:>8.1} s",
            r.cost.events,
            jcts.iter().sum::<f64>() / jcts.len() as f64
        );
    }
}
