//! Benchmark: parse the Google 2011 trace files or directories given once,
//! import them (the native output is discarded), and print rows per second,
//! the most jobs held at once and the peak resident memory (VmHWM).
//!
//! `cargo run --release -p pliant-trace --example bench_google PATH…`

use pliant_trace::{import, LoadOptions};
use std::path::PathBuf;
use std::time::Instant;

fn peak_rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

fn main() {
    let paths: Vec<PathBuf> = std::env::args().skip(1).map(PathBuf::from).collect();
    if paths.is_empty() {
        eprintln!("usage: bench_google PATH… (Google 2011 task_events files or directories holding them, e.g. crates/trace/tests/fixtures/google2011-sample/)");
        std::process::exit(2);
    }
    let start = Instant::now();
    let mut out = std::io::sink();
    let rep = match import(&paths, &LoadOptions::default(), &mut out) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    let secs = start.elapsed().as_secs_f64();
    println!("{rep}");
    println!("rows            {}", rep.read.rows);
    println!("wall            {secs:.3} s");
    println!("rows per second {:.0}", rep.read.rows as f64 / secs);
    println!("peak live jobs  {}", rep.read.peak_live_jobs);
    match peak_rss_mb() {
        Some(mb) => println!("peak RSS        {mb:.1} MB"),
        None => println!("peak RSS        unknown (no /proc/self/status)"),
    }
    // The whole 2011 trace: about 144 M task events in 500 parts.
    println!("estimate for 144 M task events: {:.1} min", 144e6 / (rep.read.rows as f64 / secs) / 60.0);
}
