//! Simulator throughput benchmark: for each preset and scale, events per
//! CPU-second (user + system, the least of `--runs` runs), the same figure
//! over that of a minimal reference event loop (`reference.rs`: first-fit
//! FIFO, std only) on the same workload in the same run, CPU time per event
//! and peak resident memory. The reference's schedule is checked against
//! `fifo`'s (events, makespan and every job's end): the bench fails if they
//! differ. Each preset at each scale runs in a fresh child process, so its
//! peak memory is its own (workload included).
//!
//! `cargo run --release -p pliant-sim --example bench -- 1 10 100 1000`
//! `cargo run --release -p pliant-sim --example bench -- --presets fifo,gp --runs 5 10`
//! `cargo run --release -p pliant-sim --example bench -- --scenario reservation 1`
//! `cargo run --release -p pliant-sim --example bench -- --set kill_model=tasks --presets kill 10`
//! (with `--scenario`, that scenario under its own presets; the reference
//! runs only where every job is one phase.)

mod reference;

use pliant_core::policy::Params;
use pliant_plugins::{preset, PRESETS};
use pliant_sim::{simulate, simulate_stream, ExecModel, SimOptions};
use pliant_workload::scenarios::{self, LongJobs, ScenarioJobs, SCENARIOS};
use pliant_workload::{Job, Workload};
use std::cell::Cell;
use std::process::Command;

/// The preset the reference loop must reproduce.
const REFERENCE_OF: &str = "fifo";

/// CPU time (user + system) this process has used, seconds.
fn cpu_seconds() -> f64 {
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid, writable rusage for getrusage to fill.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    assert_eq!(rc, 0, "getrusage failed");
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

/// This process's peak resident set, MB.
fn peak_rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// Runs `f` `runs` times, each on what `setup` makes (untimed); returns
/// its last result and the least CPU time.
fn least_cpu<S, T>(runs: usize, mut setup: impl FnMut() -> S, mut f: impl FnMut(S) -> T) -> (T, f64) {
    let mut best = f64::INFINITY;
    let mut out = None;
    for _ in 0..runs.max(1) {
        let input = setup();
        let before = cpu_seconds();
        out = Some(f(input));
        best = best.min(cpu_seconds() - before);
    }
    (out.expect("ran at least once"), best)
}

/// A schedule's fingerprint: FNV-1a over every job's end, in submission order.
fn fingerprint(ends: impl Iterator<Item = Option<u64>>) -> u64 {
    ends.fold(0xcbf2_9ce4_8422_2325, |h, e| {
        e.map_or(u64::MAX, |t| t).to_le_bytes().iter().fold(h, |h, &b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3))
    })
}

/// A job as the reference loop takes it, if it can run it (one phase).
fn reference_job(j: Job) -> Option<reference::Job> {
    match j.phases.as_slice() {
        [p] => Some(reference::Job {
            submit: j.submit,
            tasks: p
                .tasks
                .iter()
                .map(|t| reference::Task::new(t.request.cpu_milli, t.request.mem_mb, t.duration))
                .collect(),
            stages: (!p.stages.is_empty())
                .then(|| reference::Stages(p.stages.iter().map(|s| (s.count, s.duration)).collect())),
        }),
        _ => None,
    }
}

/// The child's one line: `events cpu_s rss_mb makespan fingerprint`. The
/// reference loop, and a preset where the scenario draws its jobs as they
/// are taken (the BIG-C scenarios), take the jobs as the run reaches them,
/// so the workload is never held whole and drawing the jobs is timed with
/// the run; otherwise a preset runs on the whole workload, made untimed.
fn child(scenario: &str, scale: f64, name: &str, runs: usize, opts: &SimOptions) {
    let (cluster, jobs) = scenarios::stream(scenario, 1, scale, LongJobs::Spark).expect("built-in scenario");
    if name == "reference" {
        let nodes: Vec<(u64, u64)> = cluster.nodes.iter().map(|n| (n.cpu_milli, n.mem_mb)).collect();
        let multi_phase = Cell::new(false);
        let run = |jobs: ScenarioJobs| {
            let taken = jobs.map_while(|j| {
                let job = reference_job(j);
                multi_phase.set(multi_phase.get() || job.is_none());
                job
            });
            reference::run(&nodes, taken)
        };
        let (o, cpu) = least_cpu(runs, || jobs.clone(), run);
        if multi_phase.get() {
            println!("n/a");
            return;
        }
        println!("{} {cpu} {} {} {}", o.events, peak_rss_mb(), o.makespan, fingerprint(o.ends.into_iter()));
        return;
    }
    let policy = preset(name, &Params::default()).expect("preset");
    let (r, cpu) = if let ScenarioJobs::Drawn(_) = jobs {
        let run = |jobs| simulate_stream(&cluster, jobs, policy.clone(), opts);
        least_cpu(runs, || jobs.clone(), |jobs| run(jobs).expect("simulation"))
    } else {
        let w = Workload { cluster, jobs: jobs.collect() };
        least_cpu(runs, || (), |()| simulate(&w, policy.clone(), opts).expect("simulation"))
    };
    let print = fingerprint(r.jobs.iter().map(|j| j.end));
    println!("{} {cpu} {} {} {print}", r.cost.events, peak_rss_mb(), r.makespan);
}

/// One child's figures.
struct Figures {
    events: u64,
    cpu: f64,
    rss_mb: f64,
    makespan: u64,
    fingerprint: u64,
}

fn run_child(scenario: &str, scale: &str, name: &str, runs: usize, sets: &[String]) -> Option<Figures> {
    let me = std::env::current_exe().expect("own path");
    let out = Command::new(me)
        .args(["--scenario", scenario, "--runs", &runs.to_string(), "--child", scale, name])
        .args(sets.iter().flat_map(|s| ["--set", s]))
        .output()
        .expect("child run");
    assert!(out.status.success(), "{name} at scale {scale} failed: {}", String::from_utf8_lossy(&out.stderr));
    let line = String::from_utf8(out.stdout).expect("utf-8");
    let f: Vec<&str> = line.split_whitespace().collect();
    if f == ["n/a"] {
        return None;
    }
    let num = |i: usize| f[i].parse::<f64>().expect("a figure");
    Some(Figures {
        events: num(0) as u64,
        cpu: num(1),
        rss_mb: num(2),
        makespan: f[3].parse().expect("makespan"),
        fingerprint: f[4].parse().expect("fingerprint"),
    })
}

/// Simulator throughput: per preset and scale, events per CPU-second (user +
/// system, the least of `--runs`), the same over a minimal first-fit FIFO
/// event loop's on the same workload (`x ref`; the bench fails if that
/// loop's schedule differs from fifo's), CPU time per event and each
/// preset's peak memory (every preset at every scale runs in a child process
/// of its own).
#[derive(clap::Parser)]
#[command(name = "bench", after_help = "Example: bench --runs 3 --presets fifo,kill,gp,checkpoint-ssd 10")]
struct Args {
    /// The scenario whose workload (seed 1) is replayed. Other than `mixed`,
    /// its own presets run by default; the reference loop runs only where
    /// every job is one phase.
    #[arg(long, default_value = "mixed", value_parser = scenario_name)]
    scenario: String,
    /// Runs of each preset at each scale; the least CPU time is kept.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    runs: u32,
    /// The presets to run, comma-separated (default: every preset on
    /// `mixed`, the scenario's own on another).
    #[arg(long, value_delimiter = ',', value_parser = preset_name)]
    presets: Option<Vec<String>>,
    /// Runs one preset (or `reference`) at one scale in this process and
    /// prints its figures: `events cpu_s rss_mb makespan fingerprint`.
    #[arg(long, num_args = 2, value_names = ["SCALE", "PRESET"])]
    child: Option<Vec<String>>,
    /// An execution model key for every run, as `simulate --set` takes it
    /// (e.g. `kill_model=tasks`); repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = exec_key)]
    set: Vec<String>,
    /// The scales to run: the scenario's nodes and arrival rates times each.
    #[arg(value_parser = scale, default_values = ["1", "10", "100"])]
    scales: Vec<String>,
}

/// `s` if it is one of the `known` names of a `kind`.
fn one_of<'a>(s: &str, kind: &str, known: impl Iterator<Item = &'a str> + Clone) -> Result<String, String> {
    match known.clone().any(|k| k == s) {
        true => Ok(s.to_string()),
        false => Err(format!("no such {kind}; known: {}", known.collect::<Vec<_>>().join(", "))),
    }
}

/// A built-in scenario's name.
fn scenario_name(s: &str) -> Result<String, String> {
    one_of(s, "scenario", SCENARIOS.iter().map(|i| i.name))
}

/// A preset's name.
fn preset_name(s: &str) -> Result<String, String> {
    one_of(s, "preset", PRESETS.iter().map(|p| p.name))
}

/// `KEY=VALUE` if the execution model takes it.
fn exec_key(s: &str) -> Result<String, String> {
    exec_model(&[s.to_string()]).map(|_| s.to_string())
}

/// The execution model with `sets` (`KEY=VALUE` each) applied.
fn exec_model(sets: &[String]) -> Result<ExecModel, String> {
    let mut exec = ExecModel::default();
    for s in sets {
        let (key, value) = s.split_once('=').ok_or("expected KEY=VALUE")?;
        exec.set_key(key, value).ok_or(format!("no execution model key {key}"))?.map_err(|e| e.to_string())?;
    }
    Ok(exec)
}

/// A scale: a positive number, kept as written (it names the rows).
fn scale(s: &str) -> Result<String, String> {
    match s.parse::<f64>() {
        Ok(x) if x > 0.0 && x.is_finite() => Ok(s.to_string()),
        _ => Err("a scale is a positive number".to_string()),
    }
}

fn main() {
    let args = <Args as clap::Parser>::parse();
    let (scenario, runs) = (args.scenario, args.runs as usize);
    if let Some([scale, name]) = args.child.as_deref() {
        let checked = match name.as_str() {
            "reference" => self::scale(scale),
            _ => self::scale(scale).and_then(|_| preset_name(name)),
        };
        if let Err(e) = checked {
            let message = format!("invalid value '{scale} {name}' for '--child <SCALE> <PRESET>': {e}");
            <Args as clap::CommandFactory>::command().error(clap::error::ErrorKind::InvalidValue, message).exit();
        }
        let opts = SimOptions { exec: exec_model(&args.set).expect("checked when parsed"), ..SimOptions::default() };
        return child(&scenario, scale.parse().expect("checked above"), name, runs, &opts);
    }
    let names = args.presets.unwrap_or_else(|| match scenario.as_str() {
        "mixed" => PRESETS.iter().map(|p| p.name.to_string()).collect(),
        s => SCENARIOS
            .iter()
            .find(|i| i.name == s)
            .expect("checked when parsed")
            .policies
            .iter()
            .map(|p| p.to_string())
            .collect(),
    });
    let scales = args.scales;
    println!("scenario {scenario}, seed 1; CPU = user+sys, least of {runs} run(s); x ref = events/CPU-s over the reference loop's on the same workload");
    println!(
        "{:>6} {:<16} {:>10} {:>9} {:>14} {:>6} {:>9} {:>9}",
        "scale", "preset", "events", "CPU s", "M events/CPU-s", "x ref", "µs/event", "peak MB"
    );
    for scale in &scales {
        let reference = run_child(&scenario, scale, "reference", runs, &args.set);
        let rate = |f: &Figures| f.events as f64 / f.cpu;
        let row = |name: &str, f: &Figures| {
            let ratio = reference.as_ref().map_or("n/a".to_string(), |r| format!("{:.3}", rate(f) / rate(r)));
            println!(
                "{scale:>6} {name:<16} {:>10} {:>9.3} {:>14.3} {ratio:>6} {:>9.3} {:>9.1}",
                f.events,
                f.cpu,
                rate(f) / 1e6,
                f.cpu * 1e6 / f.events as f64,
                f.rss_mb
            );
        };
        if let Some(r) = &reference {
            row("(reference)", r);
        }
        let check = |f: &Figures| {
            if let Some(r) = &reference {
                assert_eq!(
                    (r.events, r.makespan, r.fingerprint),
                    (f.events, f.makespan, f.fingerprint),
                    "the reference loop's schedule differs from {REFERENCE_OF}'s at scale {scale}"
                );
            }
        };
        for name in &names {
            let f = run_child(&scenario, scale, name, runs, &args.set).expect("a preset's figures");
            row(name, &f);
            if name == REFERENCE_OF {
                check(&f);
            }
        }
        if reference.is_some() && !names.iter().any(|n| n == REFERENCE_OF) {
            check(&run_child(&scenario, scale, REFERENCE_OF, 1, &args.set).expect("fifo's figures"));
        }
    }
}
