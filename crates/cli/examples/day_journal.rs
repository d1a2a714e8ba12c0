//! Writes the journal of a day of a busy cluster, to time `pliant what-if`
//! on a history of realistic size. A manager on a clock this program sets
//! (no root, no agent: `pliant_testbed::clocked`) runs `fifo` on one node
//! ⟨64 CPU, 256 GB⟩ for 24 h; jobs arrive at random (exponential gaps) at
//! the rate that offers `--load` of its cores; each has one to three
//! 1-CPU, 2 GB tasks, 70 % of them short (10–120 s), the rest long
//! (300–1,800 s). The journal is the one a live cluster writes.
//!
//! ```text
//! cargo run --release -p pliant --example day_journal -- /tmp/day
//! /usr/bin/time -f '%e s, %M KB' target/release/pliant what-if /tmp/day
//! ```

use clap::Parser;
use pliant_core::{Micros, Resources, SECOND};
use pliant_testbed::clocked::{self, Arrival};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Exp};
use serde_json::json;
use std::path::PathBuf;

/// The day's length.
const DAY: Micros = 24 * 3600 * SECOND;
/// The node's cores.
const CORES: u64 = 64;
/// The share of jobs that are short.
const SHORT_SHARE: f64 = 0.7;
/// Task run times, seconds, drawn uniformly: short, long.
const SHORT_S: (u64, u64) = (10, 120);
const LONG_S: (u64, u64) = (300, 1800);

#[derive(Parser)]
#[command(about = "Writes a manager's journal of a day of a busy one-node cluster, for timing `pliant what-if`")]
struct Args {
    /// The state directory to write (must not exist yet).
    dir: PathBuf,
    /// The share of the node's cores the arrivals offer.
    #[arg(long, default_value_t = 0.985)]
    load: f64,
    /// The seed of the arrivals.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

fn mean((low, high): (u64, u64)) -> f64 {
    (low + high) as f64 / 2.0
}

/// The day's jobs, in order of arrival.
fn arrivals(load: f64, seed: u64) -> Vec<Arrival> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // Core-seconds a job brings on average: two tasks of the mean run time.
    let per_job = 2.0 * (SHORT_SHARE * mean(SHORT_S) + (1.0 - SHORT_SHARE) * mean(LONG_S));
    let gaps = Exp::new(load * CORES as f64 / per_job).expect("a positive rate");
    let mut at = 0.0;
    let mut jobs = Vec::new();
    loop {
        at += gaps.sample(&mut rng);
        let at_us = (at * SECOND as f64) as Micros;
        if at_us >= DAY {
            return jobs;
        }
        let short = rng.gen_bool(SHORT_SHARE);
        let (low, high) = if short { SHORT_S } else { LONG_S };
        let work = rng.gen_range(low..=high) * SECOND;
        let queue = if short { "short" } else { "long" };
        let body = json!({
            "name": format!("{queue}-{}", jobs.len()), "queue": queue, "tasks": rng.gen_range(1..=3u32),
            "cpu_milli": 1000, "mem_mb": 2048, "command": ["sh"]
        });
        jobs.push(Arrival { at: at_us, request: serde_json::from_value(body).expect("a valid request"), work });
    }
}

fn main() {
    let args = Args::parse();
    if args.dir.exists() {
        eprintln!("error: {} exists; give a new directory", args.dir.display());
        std::process::exit(2);
    }
    let jobs = arrivals(args.load, args.seed);
    let count = jobs.len();
    let node = Resources::new(CORES * 1000, 256 * 1024);
    let (mut manager, clock) = clocked::manager(&args.dir, "fifo", &[], node);
    let last = clocked::play(&mut manager, &clock, jobs, DAY);
    println!(
        "wrote {}: {count} jobs over 24 h under fifo on ⟨{CORES} CPU, 256 GB⟩, the last step at {:.1} h",
        args.dir.display(),
        last as f64 / 3600.0 / SECOND as f64
    );
}
