//! `pliant simulate`: build a workload, run each policy on it, report.

use crate::experiment::{write_resolved, RunDescription};
use crate::progress;
use crate::settings::SettingsArgs;
use crate::workload_args::{Loaded, Streamed, WorkloadArgs};
use clap::{Args, ValueEnum};
use pliant_core::policy::{Params, Policy, Profile, Registry};
use pliant_metrics::RunRecord;
use pliant_report::{
    comparison_json, comparison_table, counted, plot_cpu_timeline, plot_jct_cdf, write_jobs_csv, write_preemptions_csv,
};
use pliant_sim::{simulate_counting, simulate_stream_counting, SimOptions};
use pliant_trace::JobKind;
use pliant_workload::Workload;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A table for people.
    Table,
    /// JSON with stable keys (see docs/output.md).
    Json,
}

impl Format {
    /// The format's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Format::Table => "table",
            Format::Json => "json",
        }
    }
}

/// The flags `simulate` and `sweep` share after the workload's: the policies,
/// their settings and the output format.
#[derive(Args)]
pub struct PolicyArgs {
    /// Comma-separated policies: presets (see `pliant policies`), or
    /// `FILE#NAME`, a `[policies.NAME]` of an experiment file; default: the
    /// scenario's (see `pliant scenarios`), or every preset for a --workload.
    #[arg(long, value_delimiter = ',')]
    pub policies: Option<Vec<String>>,
    /// A policy composed from a preset's steps, `NAME=FROM[,STEP=VALUE]...`
    /// (the steps: `pliant policies`); repeatable. It runs after the
    /// --policies (or the default ones) unless they name it.
    #[arg(long = "compose", value_name = "NAME=FROM[,STEP=VALUE]...")]
    pub compose: Vec<String>,
    /// `--set` and `--config`.
    #[command(flatten)]
    pub settings: SettingsArgs,
    /// Policies given as profiles by a program (the Python package's
    /// planners), never on the command line; each runs after the others
    /// unless --policies names it.
    #[arg(skip)]
    pub profiles: Vec<Profile>,
    /// The plugins the policies are built from: the built-in ones and any a
    /// program registered.
    #[arg(skip = pliant_plugins::registry())]
    pub registry: Registry,
    /// Output format on standard output.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

impl PolicyArgs {
    /// Turns each `FILE#NAME` of `--policies` into NAME and a `--compose` of
    /// the profile that file names (every point, from the root `fifo`), so
    /// that the run and its resolved experiment hold it as any composition.
    pub fn take_in_files(&mut self) -> Result<(), String> {
        let Some(names) = self.policies.as_mut() else { return Ok(()) };
        for name in names.iter_mut().filter(|n| n.contains('#')) {
            let profile = crate::policy_spec::resolve("--policies", name, &self.registry)?;
            let points: Vec<String> = profile.points().iter().map(|(k, v)| format!(",{k}={v}")).collect();
            self.compose.push(format!("{}=fifo{}", profile.name, points.concat()));
            *name = profile.name;
        }
        Ok(())
    }
}

/// Arguments of `pliant simulate`.
#[derive(Args)]
pub struct SimulateArgs {
    #[command(flatten)]
    workload: WorkloadArgs,
    #[command(flatten)]
    pub(crate) run: PolicyArgs,
    /// Also write results.json, jobs.csv, preemptions.csv, jct_cdf.svg, cpu_timeline.svg and the
    /// resolved experiment.toml (`pliant run` reruns it) here.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Also run every job alone on the same cluster and report slowdowns
    /// (JCT over JCT alone, SSR §VI) per class in the JSON.
    #[arg(long)]
    slowdown: bool,
    /// Also report the core-hours Spark executors held waiting at a stage
    /// barrier for its slowest executor (`barrier_idle_core_hours` in the JSON).
    #[arg(long)]
    barrier_idle: bool,
}

/// Runs the policies on one workload, in parallel on the available cores, keeping
/// their order, with a progress bar per policy (its jobs ended) on a terminal.
pub fn run_all(workload: &Workload, policies: Vec<Policy>, opts: SimOptions) -> Result<Vec<RunRecord>, String> {
    run_each(workload.jobs.len(), policies, |policy, ended| {
        simulate_counting(workload, policy, &opts, Some(ended)).map_err(|e| e.to_string())
    })
}

/// As [`run_all`], each run taking the streamed workload's jobs anew as it
/// reaches them: it holds only its live jobs, not the workload.
pub fn run_streamed(workload: &Streamed, policies: Vec<Policy>, opts: SimOptions) -> Result<Vec<RunRecord>, String> {
    run_each(workload.jobs, policies, |policy, ended| {
        let mut jobs = workload.jobs()?;
        let run = simulate_stream_counting(&workload.cluster, jobs.by_ref(), policy, &opts, Some(ended));
        match jobs.error() {
            Some(e) => Err(e.to_string()),
            None => run.map_err(|e| e.to_string()),
        }
    })
}

/// Runs `simulate` for every policy, in parallel on the available cores,
/// keeping their order, with a progress bar per policy (its `ended` count of
/// `jobs`) on a terminal.
fn run_each(
    jobs: usize,
    policies: Vec<Policy>,
    simulate: impl Fn(Policy, &AtomicU64) -> Result<RunRecord, String> + Sync,
) -> Result<Vec<RunRecord>, String> {
    let ended: Vec<AtomicU64> = policies.iter().map(|_| AtomicU64::new(0)).collect();
    let (done, finished) = std::sync::mpsc::channel::<()>();
    let stack = progress::stack();
    let width = policies.iter().map(|p| p.name.len()).max().unwrap_or(0);
    let bars: Vec<_> = policies
        .iter()
        .map(|p| {
            let template = format!("{{prefix:{width}}} {{bar:30}} {{pos}}/{{len}} jobs ended, {{elapsed}}");
            stack.add(progress::bar(jobs as u64, &template).with_prefix(p.name.clone()))
        })
        .collect();
    let indexed: Vec<(usize, Policy)> = policies.into_iter().enumerate().collect();
    let results = std::thread::scope(|s| {
        // Redraws every 100 ms; wakes at once when the runs end (the sender is dropped).
        let (bars, ended) = (&bars, &ended);
        s.spawn(move || {
            let tick = std::time::Duration::from_millis(100);
            while finished.recv_timeout(tick) == Err(std::sync::mpsc::RecvTimeoutError::Timeout) {
                for (bar, n) in bars.iter().zip(ended) {
                    bar.set_position(n.load(Ordering::Relaxed));
                }
            }
        });
        let results = parallel_map(indexed, |(i, p)| {
            let run = simulate(p.clone(), &ended[*i]);
            bars[*i].set_position(ended[*i].load(Ordering::Relaxed));
            run.map_err(|e| format!("policy {}: {e}", p.name))
        });
        drop(done);
        results
    });
    for bar in &bars {
        bar.finish_and_clear();
    }
    results.into_iter().collect()
}

/// Applies `f` to every item on as many threads as there are cores, keeping the order.
pub fn parallel_map<T: Sync, R: Send>(items: Vec<T>, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = std::sync::Mutex::new((0..items.len()).map(|_| None).collect::<Vec<Option<R>>>());
    std::thread::scope(|s| {
        for _ in 0..threads.min(items.len()) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                let r = f(item);
                results.lock().expect("no thread panics holding the lock")[i] = Some(r);
            });
        }
    });
    results
        .into_inner()
        .expect("no thread panics holding the lock")
        .into_iter()
        .map(|r| r.expect("every item ran"))
        .collect()
}

/// Resolves policy names (`default` when `names` is `None`) with `params`
/// through `registry`: the compositions of `compose` (`--compose`) and the
/// `profiles` given, then presets; a composition or profile not named runs
/// after the named policies.
pub fn policies_named(
    names: Option<&[String]>,
    default: &[&str],
    compose: &[String],
    profiles: &[Profile],
    registry: &Registry,
    params: &Params,
) -> Result<Vec<Policy>, String> {
    let mut names: Vec<String> = match names {
        Some(list) => list.iter().map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect(),
        None => default.iter().map(|p| p.to_string()).collect(),
    };
    let mut composed = compose
        .iter()
        .map(|c| crate::policy_spec::composition("--compose", c, registry))
        .collect::<Result<Vec<_>, _>>()?;
    composed.extend(profiles.iter().cloned());
    for c in &composed {
        if !names.contains(&c.name) {
            names.push(c.name.clone());
        }
    }
    if names.is_empty() {
        return Err("--policies is empty".into());
    }
    names
        .iter()
        .map(|n| {
            let profile = match composed.iter().find(|c| &c.name == n) {
                Some(c) => c.clone(),
                None => registry.preset(n)?,
            };
            registry.build(&profile, params)
        })
        .collect()
}

/// Writes `simulate`'s results files into `dir`: `json` as results.json,
/// the runs' jobs.csv and preemptions.csv, and their plots titled `title`
/// (the CPU timeline with `window` marked); returns the files' names.
pub fn write_outputs(
    dir: &Path,
    title: &str,
    window: Option<(&str, f64, f64)>,
    json: &str,
    runs: &[RunRecord],
) -> Result<Vec<&'static str>, String> {
    let ctx = |what: &str, e: &dyn std::fmt::Display| format!("{}: {what}: {e}", dir.display());
    std::fs::create_dir_all(dir).map_err(|e| ctx("cannot create", &e))?;
    std::fs::write(dir.join("results.json"), json).map_err(|e| ctx("cannot write results.json", &e))?;
    let csv = File::create(dir.join("jobs.csv")).map_err(|e| ctx("cannot write jobs.csv", &e))?;
    write_jobs_csv(runs, csv).map_err(|e| ctx("cannot write jobs.csv", &e))?;
    let csv = File::create(dir.join("preemptions.csv")).map_err(|e| ctx("cannot write preemptions.csv", &e))?;
    write_preemptions_csv(runs, csv).map_err(|e| ctx("cannot write preemptions.csv", &e))?;
    plot_jct_cdf(runs, title, &dir.join("jct_cdf.svg")).map_err(|e| ctx("cannot plot jct_cdf.svg", &e))?;
    plot_cpu_timeline(runs, title, window, &dir.join("cpu_timeline.svg"))
        .map_err(|e| ctx("cannot plot cpu_timeline.svg", &e))?;
    Ok(vec!["results.json", "jobs.csv", "preemptions.csv", "jct_cdf.svg", "cpu_timeline.svg"])
}

/// The jobs of a trace replay that have no completion time, counted apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Apart {
    /// Long-running services (running from before the trace's window to its end).
    pub services: usize,
    /// Jobs made of the runs the trace shows ending by failing, being killed or lost.
    pub ended: usize,
}

impl std::fmt::Display for Apart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "set apart (they hold room in the cluster columns, but have no completion time, so no JCT column counts them): \
             {} long-running service(s) of the trace, {} job(s) of runs the trace shows failing, killed or lost",
            self.services, self.ended
        )
    }
}

/// Takes the jobs with no completion time ([`JobKind::Service`],
/// [`JobKind::Ended`]) out of every run's job records, so that the class
/// columns count only jobs that complete; the cluster figures keep them.
pub fn set_apart(runs: &mut [RunRecord]) -> Apart {
    let mut apart = Apart::default();
    for (i, run) in runs.iter_mut().enumerate() {
        let mut n = Apart::default();
        run.jobs.retain(|j| match JobKind::of(&j.name).0 {
            JobKind::Batch => true,
            JobKind::Service => {
                n.services += 1;
                false
            }
            JobKind::Ended => {
                n.ended += 1;
                false
            }
        });
        if i == 0 {
            apart = n;
        }
    }
    apart
}

/// A finished `simulate`: the runs and the JSON document the command prints.
pub struct Simulation {
    /// The scenario's name or the workload file.
    pub name: String,
    /// The seed the workload was made or sampled with.
    pub seed: u64,
    /// The scale factor.
    pub scale: f64,
    /// One record per policy, in the order named.
    pub runs: Vec<RunRecord>,
    /// The jobs in the workload.
    pub jobs: usize,
    /// The nodes of its cluster.
    pub nodes: usize,
    /// `results.json`: the comparison document, pretty-printed.
    pub json: String,
    /// The jobs set apart from the class columns (services, ended runs).
    pub apart: Apart,
    /// Whether any policy preempts.
    preempting: bool,
    /// The files written into `--out`, by name.
    pub written: Vec<&'static str>,
}

/// Runs every policy of `args` on its workload and, with `--out`, writes the
/// outputs there; prints nothing.
pub fn simulate(args: &SimulateArgs) -> Result<Simulation, String> {
    if let Some(dir) = &args.out {
        crate::out_dir::check(dir)?;
    }
    let loaded = args.workload.load_for_runs(args.workload.seed, args.slowdown)?;
    let settings = args.run.settings.load()?;
    let defaults = args.workload.default_policies();
    let policies = policies_named(
        args.run.policies.as_deref(),
        &defaults,
        &args.run.compose,
        &args.run.profiles,
        &args.run.registry,
        &settings.params,
    )?;
    let preempting = policies.iter().any(|p| p.preemption.is_some());
    let opts = SimOptions {
        exec: settings.exec.clone(),
        slowdown: args.slowdown,
        barrier_idle: args.barrier_idle,
        ..SimOptions::default()
    };
    let names: Vec<String> = policies.iter().map(|p| p.name.clone()).collect();
    let (name, mut runs, jobs, nodes) = match loaded {
        Loaded::Whole(name, w) => {
            let runs = run_all(&w, policies, opts)?;
            (name, runs, w.jobs.len(), w.cluster.nodes.len())
        }
        Loaded::Streamed(s) => {
            let runs = run_streamed(&s, policies, opts)?;
            (s.name, runs, s.jobs, s.cluster.nodes.len())
        }
    };
    let apart = set_apart(&mut runs);
    let (seed, scale) = (args.workload.seed, args.workload.scale);
    let mut doc =
        serde_json::to_value(comparison_json(&name, seed, scale, &settings, &runs)).map_err(|e| e.to_string())?;
    if apart != Apart::default() {
        doc["set_apart"] = serde_json::json!({ "services": apart.services, "ended": apart.ended });
    }
    let json = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?;
    let mut written = Vec::new();
    if let Some(dir) = &args.out {
        let burst = args.workload.scenario_run().and_then(pliant_workload::scenarios::burst_window);
        let burst = burst.map(|(from, to)| ("short-job burst", from, to));
        written = write_outputs(dir, &format!("{name} (seed {seed}, scale {scale})"), burst, &json, &runs)?;
        let run = RunDescription {
            workload: &args.workload,
            policies: names,
            compose: &args.run.compose,
            profiles: &args.run.profiles,
            settings: &settings,
            format: args.run.format.name(),
            slowdown: Some(args.slowdown),
            barrier_idle: args.barrier_idle.then_some(true),
            sweep: None,
        };
        write_resolved(dir, &run)?;
        written.push(crate::experiment::RESOLVED_NAME);
    }
    Ok(Simulation { name, seed, scale, runs, jobs, nodes, json, apart, preempting, written })
}

/// Runs `pliant simulate`: [`simulate`], then the table or the JSON on
/// standard output.
pub fn run(args: SimulateArgs) -> Result<(), String> {
    let Simulation { name, seed, scale, runs, jobs, nodes, json, apart, preempting, written } = simulate(&args)?;
    match args.run.format {
        Format::Json => println!("{json}"),
        Format::Table => {
            let title =
                format!("{name} (seed {seed}, scale {scale}): {} on {}", counted(jobs, "job"), counted(nodes, "node"));
            print!("{}", comparison_table(&title, &runs));
            if apart != Apart::default() {
                println!("{apart}");
            }
        }
    }
    if preempting && runs.iter().all(|r| r.preemptions.values().all(|&n| n == 0)) {
        let cpu = runs.iter().map(|r| r.cpu_mean).fold(0.0, f64::max) * 100.0;
        eprintln!(
            "note: no policy preempted anything: the workload never ran short of room (mean CPU at most {cpu:.1} %), \
             so the preempting policies match the others; replay it on fewer nodes (--nodes N) to compare them"
        );
    }
    if let Some(dir) = &args.out {
        eprintln!("{}", crate::out_dir::wrote(dir, &written));
    }
    Ok(())
}
