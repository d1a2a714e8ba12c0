//! The workload a run replays: a built-in scenario or a file (native or trace),
//! shared by `pliant simulate` and `pliant sweep`.

use clap::Args;
use pliant_core::model::ElasticityProfile;
use pliant_core::policy::PRESETS;
use pliant_trace::{LoadOptions, Target};
use pliant_workload::scenarios::{self, LongJobs, DEFAULT_SCENARIO, SCENARIOS};
use pliant_workload::{read_workload, Workload};
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

/// Which workload to replay and how to shape it.
#[derive(Args)]
pub struct WorkloadArgs {
    /// A built-in scenario (see `pliant scenarios`).
    #[arg(long, conflicts_with = "workload")]
    pub(crate) scenario: Option<String>,
    /// A workload: pliant's native JSON Lines file, or a trace (Google 2011 files or
    /// directory, Alibaba, YARN SLS; the format is detected).
    #[arg(long)]
    pub(crate) workload: Option<PathBuf>,
    /// With --workload: replay only trace time START..END (seconds).
    #[arg(long, value_parser = crate::trace_cmd::parse_window, requires = "workload")]
    pub(crate) window: Option<pliant_trace::Window>,
    /// With a --workload trace: size of its largest machine, which requests are fractions of: CORES,GB.
    #[arg(long, default_value = "32,128", value_parser = crate::trace_cmd::parse_node, requires = "workload")]
    pub(crate) node: pliant_core::Resources,
    /// With a --workload trace: keep tasks unfinished in the trace with the part of their run it shows.
    #[arg(long, requires = "workload")]
    pub(crate) truncate: bool,
    /// With --workload: keep this fraction of the jobs, chosen from --seed.
    #[arg(long, default_value_t = 1.0, requires = "workload")]
    pub(crate) sample: f64,
    /// With --workload: replay on this many nodes, keeping every job (instead of --scale).
    #[arg(long, requires = "workload")]
    pub(crate) nodes: Option<u32>,
    /// With --workload: stop at the first malformed trace row instead of skipping and counting it.
    #[arg(long, requires = "workload")]
    pub(crate) strict: bool,
    /// With --workload: run without the jobs whose trace record is malformed (they are
    /// reported either way; without this flag a dropped job is an error, exit code 2).
    #[arg(long, requires = "workload", conflicts_with = "strict")]
    pub(crate) skip_bad: bool,
    /// With an SLS/DSS --workload: the penalty model of task classes that name none
    /// (DSS's `PENALTY IB` arguments), MODEL:IB with MODEL `step` or `sawtooth`, e.g. `step:1.5`.
    #[arg(long, value_parser = parse_penalty, requires = "workload")]
    pub(crate) penalty: Option<ElasticityProfile>,
    /// Seed for scenario generation, and for the job sample of --sample and --scale on a trace.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Scale factor: a scenario's nodes and arrival rates grow together; a --workload trace
    /// shrinks (0 < X ≤ 1) to round(X × its machines) nodes with the same share of its jobs.
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    pub scale: f64,
    /// Long jobs of the synthetic scenarios: spark, wordcount or terasort.
    #[arg(long, default_value = "spark", value_parser = ["spark", "wordcount", "terasort"])]
    pub(crate) long_jobs: String,
}

impl WorkloadArgs {
    /// The scenario's name (the default scenario when none is given).
    pub fn scenario_name(&self) -> &str {
        self.scenario.as_deref().unwrap_or(DEFAULT_SCENARIO)
    }

    /// The presets compared when none are named: the scenario's, or all for a file.
    pub fn default_policies(&self) -> Vec<&'static str> {
        let name = self.scenario.as_deref().unwrap_or(DEFAULT_SCENARIO);
        match SCENARIOS.iter().find(|s| s.name == name) {
            Some(s) if self.workload.is_none() => s.policies.to_vec(),
            _ => PRESETS.iter().map(|p| p.name).collect(),
        }
    }

    /// Builds or reads the workload for `seed`; returns its display name too.
    pub fn load(&self, seed: u64) -> Result<(String, Workload), String> {
        if let Some(path) = &self.workload {
            let plain = self.window.is_none() && self.sample == 1.0 && self.nodes.is_none() && self.scale == 1.0;
            // A native file is read strictly whatever the flags: its first bad line is an error.
            if plain && is_native(path) {
                let file = File::open(path).map_err(|e| format!("{}: cannot open: {e}", path.display()))?;
                let w = read_workload(BufReader::new(file))
                    .map_err(|e| format!("{}:{}: {}", path.display(), e.line, e.reason))?;
                return Ok((path.display().to_string(), w));
            }
            let target = match (self.nodes, self.scale) {
                (Some(_), x) if x != 1.0 => return Err("give --nodes or --scale for a workload, not both".into()),
                (Some(n), _) => Target::Nodes(n),
                (None, x) if x != 1.0 => Target::Scale(x),
                (None, _) => Target::Source,
            };
            let mut opts = LoadOptions {
                target,
                sample: self.sample,
                seed,
                progress: crate::progress::enabled(),
                ..Default::default()
            };
            opts.read.window = self.window;
            opts.read.strict = self.strict;
            opts.read.node = self.node;
            opts.read.penalty = self.penalty;
            if self.truncate {
                opts.read.unfinished = pliant_trace::Unfinished::Truncate;
            }
            let (w, report) =
                pliant_trace::load_workload(std::slice::from_ref(path), &opts).map_err(|e| e.to_string())?;
            eprintln!("{report}");
            let dropped = report.read.dropped_jobs;
            if let (Some(first), false) = (report.read.bad.examples.first(), dropped == 0 || self.skip_bad) {
                return Err(format!(
                    "{first} ({dropped} job record(s) could not be read and would be left out; --skip-bad runs without them)"
                ));
            }
            return Ok((path.display().to_string(), w));
        }
        if !(self.scale.is_finite() && self.scale > 0.0 && self.scale <= 10_000.0) {
            return Err(format!("--scale must be a number in (0, 10000], got {}", self.scale));
        }
        let name = self.scenario.as_deref().unwrap_or(DEFAULT_SCENARIO);
        if name == "two-job" && self.scale != 1.0 {
            return Err("two-job is fixed (two jobs on one machine): --scale does not apply to it".into());
        }
        let long_jobs = LongJobs::from_name(&self.long_jobs).expect("clap checked it");
        let w = scenarios::build(name, seed, self.scale, long_jobs).ok_or_else(|| {
            let known: Vec<&str> = SCENARIOS.iter().map(|s| s.name).collect();
            format!("unknown scenario `{name}` (known: {})", known.join(", "))
        })?;
        Ok((name.to_string(), w))
    }
}

/// `MODEL:IB`: DSS's STEP or SAWTOOTH penalty with its IB (≥ 1).
fn parse_penalty(s: &str) -> Result<ElasticityProfile, String> {
    let (model, ib) = s.split_once(':').ok_or_else(|| format!("expected MODEL:IB (e.g. step:1.5), got `{s}`"))?;
    let ib: f64 = ib.trim().parse().map_err(|_| format!("bad IB `{ib}`"))?;
    if !(ib.is_finite() && ib >= 1.0) {
        return Err(format!("the IB must be at least 1, got {ib}"));
    }
    match model.trim().to_lowercase().as_str() {
        "step" => Ok(ElasticityProfile::Step { penalty: ib }),
        "sawtooth" => Ok(ElasticityProfile::Sawtooth { penalty: ib }),
        other => Err(format!("the model must be `step` or `sawtooth`, got `{other}`")),
    }
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
