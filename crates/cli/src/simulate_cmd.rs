//! `pliant simulate`: build a workload, run each policy on it, report.

use crate::settings::Settings;
use clap::{Args, ValueEnum};
use pliant_core::policy::{preset, PRESETS};
use pliant_metrics::RunRecord;
use pliant_report::{comparison_json, comparison_table, plot_cpu_timeline, plot_jct_cdf, write_jobs_csv};
use pliant_sim::{simulate, ExecModel, SimOptions};
use pliant_trace::{LoadOptions, Target};
use pliant_workload::scenarios::{self, LongJobs, DEFAULT_SCENARIO, SCENARIOS};
use pliant_workload::{read_workload, Workload};
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

/// Output format.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A table for people.
    Table,
    /// JSON with stable keys (see README).
    Json,
}

/// Arguments of `pliant simulate`.
#[derive(Args)]
pub struct SimulateArgs {
    /// A built-in scenario (see `pliant scenarios`).
    #[arg(long, conflicts_with = "workload")]
    scenario: Option<String>,
    /// A workload: pliant's native JSON Lines file, or a trace (Google 2011 files or
    /// directory, Alibaba, YARN SLS; the format is detected).
    #[arg(long)]
    workload: Option<PathBuf>,
    /// With --workload: replay only trace time START..END (seconds).
    #[arg(long, value_parser = crate::trace_cmd::parse_window, requires = "workload")]
    window: Option<pliant_trace::Window>,
    /// With a --workload trace: size of its largest machine, which requests are fractions of: CORES,GB.
    #[arg(long, default_value = "32,128", value_parser = crate::trace_cmd::parse_node, requires = "workload")]
    node: pliant_core::Resources,
    /// With a --workload trace: keep tasks unfinished in the trace with the part of their run it shows.
    #[arg(long, requires = "workload")]
    truncate: bool,
    /// With --workload: keep this fraction of the jobs, chosen from --seed.
    #[arg(long, default_value_t = 1.0, requires = "workload")]
    sample: f64,
    /// With --workload: replay on this many nodes, keeping every job (instead of --scale).
    #[arg(long, requires = "workload")]
    nodes: Option<u32>,
    /// With --workload: stop at the first malformed trace row instead of skipping and counting it.
    #[arg(long, requires = "workload")]
    strict: bool,
    /// Comma-separated policy presets (see `pliant policies`); default: all.
    #[arg(long, value_delimiter = ',')]
    policies: Option<Vec<String>>,
    /// Seed for scenario generation, and for the job sample of --sample and --scale on a trace.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Scale factor: a scenario's nodes and arrival rates grow together; a --workload trace
    /// shrinks (0 < X ≤ 1) to round(X × its machines) nodes with the same share of its jobs.
    #[arg(long, default_value_t = 1.0)]
    scale: f64,
    /// Parameter override, KEY=VALUE (repeatable; keys in `pliant policies`).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// A file of `KEY = VALUE` lines (same keys as --set, which wins over it).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Long jobs of the synthetic scenarios: spark, wordcount or terasort.
    #[arg(long, default_value = "spark", value_parser = ["spark", "wordcount", "terasort"])]
    long_jobs: String,
    /// Output format on standard output.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Also write results.json, jobs.csv, jct_cdf.svg and cpu_timeline.svg here.
    #[arg(long)]
    out: Option<PathBuf>,
}

fn load_workload(args: &SimulateArgs) -> Result<(String, Workload), String> {
    if let Some(path) = &args.workload {
        let plain = args.window.is_none() && args.sample == 1.0 && args.nodes.is_none() && args.scale == 1.0;
        // A native file is read strictly whatever the flags: its first bad line is an error.
        if plain && is_native(path) {
            let file = File::open(path).map_err(|e| format!("{}: cannot open: {e}", path.display()))?;
            let w = read_workload(BufReader::new(file))
                .map_err(|e| format!("{}:{}: {}", path.display(), e.line, e.reason))?;
            return Ok((path.display().to_string(), w));
        }
        let target = match (args.nodes, args.scale) {
            (Some(_), x) if x != 1.0 => return Err("give --nodes or --scale for a workload, not both".into()),
            (Some(n), _) => Target::Nodes(n),
            (None, x) if x != 1.0 => Target::Scale(x),
            (None, _) => Target::Source,
        };
        let mut opts =
            LoadOptions { target, sample: args.sample, seed: args.seed, progress: true, ..Default::default() };
        opts.read.window = args.window;
        opts.read.strict = args.strict;
        opts.read.node = args.node;
        if args.truncate {
            opts.read.unfinished = pliant_trace::Unfinished::Truncate;
        }
        let (w, report) = pliant_trace::load_workload(std::slice::from_ref(path), &opts).map_err(|e| e.to_string())?;
        eprintln!("{report}");
        return Ok((path.display().to_string(), w));
    }
    if !(args.scale.is_finite() && args.scale > 0.0 && args.scale <= 10_000.0) {
        return Err(format!("--scale must be a number in (0, 10000], got {}", args.scale));
    }
    let name = args.scenario.as_deref().unwrap_or(DEFAULT_SCENARIO);
    let w =
        scenarios::build(name, args.seed, args.scale, LongJobs::from_name(&args.long_jobs).expect("clap checked it"))
            .ok_or_else(|| {
            let known: Vec<&str> = SCENARIOS.iter().map(|s| s.name).collect();
            format!("unknown scenario `{name}` (known: {})", known.join(", "))
        })?;
    Ok((name.to_string(), w))
}

/// A native workload file starts (after blank and `#` lines) with the cluster record.
fn is_native(path: &Path) -> bool {
    let Ok(file) = File::open(path) else { return path.extension().is_some_and(|e| e == "jsonl") };
    std::io::BufRead::lines(BufReader::new(file))
        .map_while(Result::ok)
        .map(|l| l.trim().to_string())
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .is_some_and(|l| l.starts_with("{\"cluster\""))
        || path.extension().is_some_and(|e| e == "jsonl")
}

/// Runs the policies, in parallel on the available cores, keeping their order.
pub fn run_all(
    workload: &Workload,
    policies: Vec<pliant_core::policy::Policy>,
    exec: &ExecModel,
) -> Result<Vec<RunRecord>, String> {
    let opts = SimOptions { exec: exec.clone(), ..SimOptions::default() };
    let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let mut results: Vec<Option<Result<RunRecord, String>>> = vec![None; policies.len()];
    for (chunk, slots) in policies.chunks(threads).zip(results.chunks_mut(threads)) {
        std::thread::scope(|s| {
            let handles: Vec<_> = chunk
                .iter()
                .map(|p| {
                    let opts = &opts;
                    s.spawn(move || simulate(workload, p.clone(), opts).map_err(|e| format!("policy {}: {e}", p.name)))
                })
                .collect();
            for (slot, h) in slots.iter_mut().zip(handles) {
                *slot = Some(h.join().unwrap_or_else(|_| Err("simulation thread panicked".into())));
            }
        });
    }
    results.into_iter().map(|r| r.expect("every slot filled")).collect()
}

fn write_outputs(dir: &Path, json: &str, runs: &[RunRecord]) -> Result<(), String> {
    let ctx = |what: &str, e: &dyn std::fmt::Display| format!("{}: {what}: {e}", dir.display());
    std::fs::create_dir_all(dir).map_err(|e| ctx("cannot create", &e))?;
    std::fs::write(dir.join("results.json"), json).map_err(|e| ctx("cannot write results.json", &e))?;
    let csv = File::create(dir.join("jobs.csv")).map_err(|e| ctx("cannot write jobs.csv", &e))?;
    write_jobs_csv(runs, csv).map_err(|e| ctx("cannot write jobs.csv", &e))?;
    plot_jct_cdf(runs, &dir.join("jct_cdf.svg")).map_err(|e| ctx("cannot plot jct_cdf.svg", &e))?;
    plot_cpu_timeline(runs, &dir.join("cpu_timeline.svg")).map_err(|e| ctx("cannot plot cpu_timeline.svg", &e))?;
    Ok(())
}

/// Runs `pliant simulate`.
pub fn run(args: SimulateArgs) -> Result<(), String> {
    let (name, workload) = load_workload(&args)?;
    let settings = Settings::load(args.config.as_deref(), &args.set)?;
    let params = &settings.params;
    let names: Vec<String> = match &args.policies {
        Some(list) => list.iter().map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect(),
        None => PRESETS.iter().map(|p| p.name.to_string()).collect(),
    };
    if names.is_empty() {
        return Err("--policies is empty".into());
    }
    let policies = names
        .iter()
        .map(|n| {
            preset(n, params).ok_or_else(|| {
                let known: Vec<&str> = PRESETS.iter().map(|p| p.name).collect();
                format!("unknown policy `{n}` (known: {})", known.join(", "))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let runs = run_all(&workload, policies, &settings.exec)?;
    let doc = comparison_json(&name, args.seed, args.scale, &settings, &runs);
    let json = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?;
    match args.format {
        Format::Json => println!("{json}"),
        Format::Table => {
            let title = format!(
                "{name} (seed {}, scale {}): {} jobs on {} nodes",
                args.seed,
                args.scale,
                workload.jobs.len(),
                workload.cluster.nodes.len()
            );
            print!("{}", comparison_table(&title, &runs));
        }
    }
    if let Some(dir) = &args.out {
        write_outputs(dir, &json, &runs)?;
    }
    Ok(())
}
