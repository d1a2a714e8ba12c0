//! `pliant sweep`: vary one setting over values and compare policies on a few
//! metrics at each value, averaged over seeds (BIG-C Fig. 7; the checkpoint
//! paper's bandwidth sweep).

use crate::experiment::{write_resolved, RunDescription, RESOLVED_NAME};
use crate::simulate::{parallel_map, policies_named, Format, PolicyArgs};
use crate::workload_args::WorkloadArgs;
use clap::Args;
use pliant_report::{
    mean_of_measured, plot_sweep, result_metrics, sweep_table, Sweep, SweepMetric, SweepSeries, SCHEMA_VERSION,
};
use pliant_sim::{simulate, SimOptions};
use std::path::{Path, PathBuf};

/// Arguments of `pliant sweep`.
#[derive(Args)]
pub struct SweepArgs {
    #[command(flatten)]
    workload: WorkloadArgs,
    /// The setting to vary and its values, KEY=V1,V2,... (keys in `pliant policies`).
    #[arg(long, value_name = "KEY=V1,V2,...")]
    vary: String,
    /// Average each point over this many seeds, from --seed upwards.
    #[arg(long, default_value_t = 1)]
    seeds: u64,
    /// Comma-separated metrics: dotted paths into a policy's JSON result
    /// (`pliant simulate --format json`), e.g. classes.long.cov or waste_core_seconds.
    #[arg(
        long = "metric",
        value_delimiter = ',',
        default_value = "classes.short.queue_delay.mean,classes.short.jct.p95,classes.long.jct.p90,classes.long.cov"
    )]
    metrics: Vec<String>,
    #[command(flatten)]
    pub(crate) run: PolicyArgs,
    /// Also write sweep.json, one sweep_<metric>.svg per metric and the resolved
    /// experiment.toml (`pliant run` reruns it) here.
    #[arg(long)]
    out: Option<PathBuf>,
}

/// Splits `KEY=V1,V2,...` into the key and its values.
fn parse_vary(vary: &str) -> Result<(String, Vec<String>), String> {
    let (key, values) = vary.split_once('=').ok_or_else(|| format!("--vary expects KEY=V1,V2,..., got `{vary}`"))?;
    let values: Vec<String> = values.split(',').map(|v| v.trim().to_string()).filter(|v| !v.is_empty()).collect();
    if key.trim().is_empty() || values.is_empty() {
        return Err(format!("--vary expects KEY=V1,V2,..., got `{vary}`"));
    }
    Ok((key.trim().to_string(), values))
}

/// One simulation of the sweep: which seed, which value, which policy.
struct Point {
    seed: usize,
    value: usize,
    policy: usize,
}

/// Runs `pliant sweep`: [`sweep`], then the table or the JSON on standard output.
pub fn run(args: SweepArgs) -> Result<(), String> {
    let (sweep, json) = sweep(&args)?;
    match args.run.format {
        Format::Json => println!("{json}"),
        Format::Table => print!("{}", sweep_table(&sweep)),
    }
    if let Some(dir) = &args.out {
        let files = output_files(&sweep);
        eprintln!("{}", crate::out_dir::wrote(dir, &files.iter().map(String::as_str).collect::<Vec<_>>()));
    }
    Ok(())
}

/// Runs every point of the sweep of `args` and, with `--out`, writes the
/// outputs there; returns the sweep and `sweep.json`'s text, printing nothing.
pub fn sweep(args: &SweepArgs) -> Result<(Sweep, String), String> {
    let (key, values) = parse_vary(&args.vary)?;
    if args.seeds == 0 {
        return Err("--seeds must be at least 1".into());
    }
    if let Some(dir) = &args.out {
        crate::out_dir::check(dir)?;
    }
    let base = args.run.settings.load()?;
    let settings = values
        .iter()
        .map(|v| {
            let mut s = base.clone();
            s.set(&key, v).map(|()| s).map_err(|e| format!("--vary {key}={v}: {e}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let defaults = args.workload.default_policies();
    let policies = settings
        .iter()
        .map(|s| {
            let run = &args.run;
            policies_named(run.policies.as_deref(), &defaults, &run.compose, &run.profiles, &run.registry, &s.params)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let seeds: Vec<u64> = (0..args.seeds).map(|i| args.workload.seed + i).collect();
    let loaded = seeds.iter().map(|&seed| args.workload.load(seed)).collect::<Result<Vec<_>, _>>()?;
    let scenario = loaded[0].0.clone();
    let workloads: Vec<_> = loaded.into_iter().map(|(_, w)| w).collect();

    let points: Vec<Point> = (0..seeds.len())
        .flat_map(|seed| (0..values.len()).map(move |value| (seed, value)))
        .flat_map(|(seed, value)| (0..policies[0].len()).map(move |policy| Point { seed, value, policy }))
        .collect();
    let bar = crate::progress::bar(points.len() as u64, "sweep {bar:30} {pos}/{len} runs, {elapsed}");
    let measure = |p: &Point| -> Result<Vec<Option<f64>>, String> {
        let policy = policies[p.value][p.policy].clone();
        // Slowdowns need every job run alone too: only when a metric asks for them.
        let slowdown = args.metrics.iter().any(|m| m.contains(".slowdown."));
        let barrier_idle = args.metrics.iter().any(|m| m.starts_with("barrier_idle"));
        let opts = SimOptions { exec: settings[p.value].exec.clone(), slowdown, barrier_idle, ..SimOptions::default() };
        let name = policy.name.clone();
        let run = simulate(&workloads[p.seed], policy, &opts).map_err(|e| format!("policy {name}: {e}"))?;
        bar.inc(1);
        result_metrics(&run, &args.metrics)
    };
    // The first point alone, so that a misspelt metric fails before the long part.
    let mut figures = vec![measure(&points[0])?];
    let rest: Vec<&Point> = points[1..].iter().collect();
    figures.extend(parallel_map(rest, |p| measure(p)).into_iter().collect::<Result<Vec<_>, _>>()?);
    bar.finish_and_clear();

    let names: Vec<String> = policies[0].iter().map(|p| p.name.clone()).collect();
    let mut sweep = Sweep { schema_version: SCHEMA_VERSION, scenario, key, values, seeds, metrics: Vec::new() };
    sweep.metrics = args
        .metrics
        .iter()
        .enumerate()
        .map(|(m, metric)| collect_metric(&sweep, m, metric, &names, &points, &figures))
        .collect();
    let json = serde_json::to_string_pretty(&sweep).map_err(|e| e.to_string())?;
    if let Some(dir) = &args.out {
        write_outputs(dir, &json, &sweep)?;
        let run = RunDescription {
            workload: &args.workload,
            policies: names,
            compose: &args.run.compose,
            profiles: &args.run.profiles,
            settings: &base,
            format: args.run.format.name(),
            slowdown: None,
            barrier_idle: None,
            sweep: Some((&sweep.key, &sweep.values, args.seeds, &args.metrics)),
        };
        write_resolved(dir, &run)?;
    }
    Ok((sweep, json))
}

/// Gathers metric `m` of every point into one series per policy, with means over seeds.
fn collect_metric(
    sweep: &Sweep,
    m: usize,
    metric: &str,
    names: &[String],
    points: &[Point],
    figures: &[Vec<Option<f64>>],
) -> SweepMetric {
    let series = names
        .iter()
        .enumerate()
        .map(|(policy, name)| {
            let per_seed: Vec<Vec<Option<f64>>> = (0..sweep.values.len())
                .map(|value| {
                    points
                        .iter()
                        .zip(figures)
                        .filter(|(p, _)| p.policy == policy && p.value == value)
                        .map(|(_, f)| f[m])
                        .collect()
                })
                .collect();
            let mean = per_seed.iter().map(|v| mean_of_measured(v)).collect();
            SweepSeries { policy: name.clone(), mean, per_seed }
        })
        .collect();
    SweepMetric { metric: metric.to_string(), series }
}

/// The file `--out` gets for each metric's plot.
fn plot_file(metric: &SweepMetric) -> String {
    format!("sweep_{}.svg", metric.metric.replace('.', "_"))
}

/// What `--out` holds after a sweep, by name.
fn output_files(sweep: &Sweep) -> Vec<String> {
    let plots = sweep.metrics.iter().map(plot_file);
    std::iter::once("sweep.json".to_string()).chain(plots).chain([RESOLVED_NAME.to_string()]).collect()
}

fn write_outputs(dir: &Path, json: &str, sweep: &Sweep) -> Result<(), String> {
    let ctx = |what: &str, e: &dyn std::fmt::Display| format!("{}: {what}: {e}", dir.display());
    std::fs::create_dir_all(dir).map_err(|e| ctx("cannot create", &e))?;
    std::fs::write(dir.join("sweep.json"), json).map_err(|e| ctx("cannot write sweep.json", &e))?;
    let keys = crate::settings::Settings::keys();
    let about = keys.iter().find(|k| k.key == sweep.key).map(|k| k.about);
    for metric in &sweep.metrics {
        let file = plot_file(metric);
        plot_sweep(sweep, metric, about, &dir.join(&file)).map_err(|e| ctx(&format!("cannot plot {file}"), &e))?;
    }
    Ok(())
}
