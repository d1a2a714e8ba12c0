//! The workload a run replays: a built-in scenario or a file (native or trace),
//! shared by `pliant simulate` and `pliant sweep`.

use clap::Args;
use pliant_core::model::ElasticityProfile;
use pliant_core::{Resources, SECOND};
use pliant_plugins::PRESETS;
use pliant_trace::{LoadOptions, LoadReport, Target, UseShares, Window};
use pliant_workload::scenarios::{self, LongJobs, ScenarioJobs, DEFAULT_SCENARIO, SCENARIOS};
use pliant_workload::{read_job_line, read_workload, Cluster, FormatError, Job, JobReader, Workload};
use std::fs::File;
use std::io::BufReader;
use std::io::{BufRead, Seek, SeekFrom};
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
    #[arg(long, value_parser = parse_window, requires = "workload")]
    pub(crate) window: Option<Window>,
    /// With a --workload trace: size of its largest machine, which requests are fractions of: CORES,GB
    /// (default 32,128; Alibaba v2017: 64,128).
    #[arg(long, value_parser = parse_node, requires = "workload")]
    pub(crate) node: Option<Resources>,
    /// With a --workload trace: keep runs unfinished in the trace with the part of them it shows
    /// (the default; kept for older command lines).
    #[arg(long, requires = "workload", conflicts_with = "finished_only")]
    pub(crate) truncate: bool,
    /// With a --workload trace: keep only complete, finished runs (drop runs cut by the window's
    /// ends and runs that failed, were killed or lost); the replay then carries less than the trace's load.
    #[arg(long, requires = "workload")]
    pub(crate) finished_only: bool,
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
    /// Long jobs of the synthetic scenarios and bigc-fig2: spark, wordcount or terasort.
    #[arg(long, default_value = "spark", value_parser = ["spark", "wordcount", "terasort"])]
    pub(crate) long_jobs: String,
    /// With a --workload trace: scale each job's task count down so that short and long jobs
    /// ask for these shares of the cluster's CPU over the window, SHORT,LONG (BIG-C §5.5 ran
    /// the Google trace at 0.17,0.75); the whole trace is then loaded in memory.
    #[arg(long, value_name = "SHORT,LONG", value_parser = parse_use_shares, requires = "workload")]
    pub(crate) fit_use: Option<UseShares>,
    /// With a --workload trace: classify jobs as Hawk does — short when its tasks' mean run
    /// time is at most S seconds — instead of by the job's duration and CPU-time.
    #[arg(long, value_name = "S", requires = "workload")]
    pub(crate) short_mean_task_s: Option<f64>,
}

impl WorkloadArgs {
    /// The scenario's name (the default scenario when none is given).
    pub fn scenario_name(&self) -> &str {
        self.scenario.as_deref().unwrap_or(DEFAULT_SCENARIO)
    }

    /// The built-in scenario run, if no workload file is given.
    pub fn scenario_run(&self) -> Option<&str> {
        self.workload.is_none().then(|| self.scenario_name())
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
            let opts = self.load_options(seed)?;
            let (w, report) =
                pliant_trace::load_workload(std::slice::from_ref(path), &opts).map_err(|e| e.to_string())?;
            eprintln!("{report}");
            self.check_dropped(&report)?;
            let w = self.fitted(w)?;
            return Ok((path.display().to_string(), w));
        }
        self.check_scale()?;
        let name = self.scenario_name();
        let long_jobs = LongJobs::from_name(&self.long_jobs).expect("clap checked it");
        let w = scenarios::build(name, seed, self.scale, long_jobs).ok_or_else(|| scenarios::unknown_scenario(name))?;
        Ok((name.to_string(), w))
    }

    /// `w` with its task counts fitted to --fit-use's shares over the window
    /// (or from the first to the last submission), if it is given.
    fn fitted(&self, mut w: Workload) -> Result<Workload, String> {
        let Some(shares) = self.fit_use else { return Ok(w) };
        let span = match self.window {
            Some(win) => win.end - win.start,
            None => {
                let first = w.jobs.iter().map(|j| j.submit).min().unwrap_or(0);
                w.jobs.iter().map(|j| j.submit).max().unwrap_or(0) - first
            }
        };
        let report = pliant_trace::fit_use(&mut w, span, shares).map_err(|e| format!("--fit-use: {e}"))?;
        eprintln!("{report}");
        Ok(w)
    }

    /// How a --workload trace (or a native file shaped by the flags) is read.
    fn load_options(&self, seed: u64) -> Result<LoadOptions, String> {
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
        if let Some(s) = self.short_mean_task_s {
            if !(s > 0.0 && s < 1e12) {
                return Err(format!("--short-mean-task-s must be a positive number of seconds, got {s}"));
            }
            opts.classes.max_short_mean_task = Some((s * SECOND as f64).round() as u64);
        }
        if self.finished_only {
            opts.read.unfinished = pliant_trace::Unfinished::Drop;
        }
        Ok(opts)
    }

    /// Refuses a trace some of whose job records could not be read, unless --skip-bad.
    fn check_dropped(&self, report: &LoadReport) -> Result<(), String> {
        let dropped = report.read.dropped_jobs;
        match (report.read.bad.examples.first(), dropped == 0 || self.skip_bad) {
            (Some(first), false) => Err(format!(
                "{first} ({dropped} job record(s) could not be read and would be left out; --skip-bad runs without them)"
            )),
            _ => Ok(()),
        }
    }

    /// Refuses a scale no scenario takes.
    fn check_scale(&self) -> Result<(), String> {
        if !(self.scale.is_finite() && self.scale > 0.0 && self.scale <= 10_000.0) {
            return Err(format!("--scale must be a number in (0, 10000], got {}", self.scale));
        }
        if self.scenario_name() == "two-job" && self.scale != 1.0 {
            return Err("two-job is fixed (two jobs on one machine): --scale does not apply to it".into());
        }
        Ok(())
    }
}

/// A workload to replay: held whole, or taken job by job by each run.
pub enum Loaded {
    /// Every job in memory (shared by the runs).
    Whole(String, Workload),
    /// Jobs each run takes anew, one by one in submission order.
    Streamed(Streamed),
}

/// A workload each run streams: a run holds only its live jobs.
pub struct Streamed {
    /// The workload's display name.
    pub name: String,
    /// Its cluster.
    pub cluster: Cluster,
    /// How many jobs it has.
    pub jobs: usize,
    source: Source,
}

/// Where a streamed workload's jobs come from.
enum Source {
    /// A synthetic scenario, drawn again for each run.
    Scenario { name: String, seed: u64, scale: f64, long: LongJobs },
    /// A native file, read again for each run, its jobs in the order of
    /// `order`: (submission, byte offset, line) of each, by submission
    /// (stable: the file's order among equal ones, as a whole read sorts them).
    /// The file a trace was imported to, if it was, is held open (nameless) while the runs read it.
    File { path: PathBuf, order: JobPlaces, _imported: Option<Imported> },
}

/// A streamed workload's jobs for one run; a file that stops reading (it
/// changed since it was checked) ends the jobs and keeps the error.
pub struct StreamJobs<'a> {
    jobs: Box<dyn Iterator<Item = Result<Job, FormatError>> + Send + 'a>,
    path: Option<PathBuf>,
    error: Option<String>,
}

impl Iterator for StreamJobs<'_> {
    type Item = Job;
    fn next(&mut self) -> Option<Job> {
        match self.jobs.next()? {
            Ok(job) => Some(job),
            Err(e) => {
                let path = self.path.as_deref().unwrap_or(Path::new("-")).display();
                self.error = Some(format!("{path}:{}: {} (the file changed while it was replayed)", e.line, e.reason));
                None
            }
        }
    }
}

impl StreamJobs<'_> {
    /// Why the jobs ended early, if they did.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }
}

impl Streamed {
    /// The jobs, anew, in submission order.
    pub fn jobs(&self) -> Result<StreamJobs<'_>, String> {
        match &self.source {
            Source::Scenario { name, seed, scale, long } => {
                let (_, jobs) = scenarios::stream(name, *seed, *scale, *long).expect("a scenario that streamed");
                Ok(StreamJobs { jobs: Box::new(jobs.map(Ok)), path: None, error: None })
            }
            Source::File { path, order, .. } => {
                let file = File::open(path).map_err(|e| format!("{}: cannot open: {e}", path.display()))?;
                let (mut input, mut at, mut text) = (BufReader::new(file), 0, String::new());
                let cluster = &self.cluster;
                let jobs = order.iter().map(move |&(_, offset, line)| {
                    let read = |e: std::io::Error| FormatError { line, reason: format!("cannot read: {e}") };
                    if offset != at {
                        input.seek(SeekFrom::Start(offset)).map_err(read)?;
                    }
                    text.clear();
                    at = offset + input.read_line(&mut text).map_err(read)? as u64;
                    let job = read_job_line(&text, line, cluster, 0)?;
                    job.ok_or_else(|| FormatError { line, reason: "no job on this line any more".into() })
                });
                Ok(StreamJobs { jobs: Box::new(jobs), path: Some(path.clone()), error: None })
            }
        }
    }
}

/// Reads a native workload file through past its cluster record (on line
/// `cluster_line`), checking every job against `cluster`, and returns
/// (submission, byte offset, line) of each job by submission (stable).
fn index_jobs(path: &Path, cluster_line: usize, cluster: &Cluster) -> Result<JobPlaces, String> {
    let file = File::open(path).map_err(|e| format!("{}: cannot open: {e}", path.display()))?;
    let (mut input, mut text, mut offset, mut line) = (BufReader::new(file), String::new(), 0u64, 0);
    let mut order = Vec::new();
    loop {
        text.clear();
        let read =
            input.read_line(&mut text).map_err(|e| format!("{}:{}: cannot read: {e}", path.display(), line + 1))?;
        if read == 0 {
            break;
        }
        line += 1;
        if line > cluster_line {
            let job = read_job_line(&text, line, cluster, cluster_line)
                .map_err(|e| format!("{}:{}: {}", path.display(), e.line, e.reason))?;
            if let Some(job) = job {
                order.push((job.submit, offset, line));
            }
        }
        offset += read as u64;
    }
    order.sort_by_key(|&(submit, _, _)| submit);
    Ok(order)
}

/// A native workload file's reader, past its cluster record.
fn open_native(path: &Path) -> Result<JobReader<BufReader<File>>, String> {
    let file = File::open(path).map_err(|e| format!("{}: cannot open: {e}", path.display()))?;
    JobReader::new(BufReader::new(file)).map_err(|e| format!("{}:{}: {}", path.display(), e.line, e.reason))
}

impl WorkloadArgs {
    /// The workload for `seed`, streamed where it can be: a synthetic
    /// scenario (`mixed`, `high-load`, `low-load`, `multi-load`), drawn as
    /// each run reaches its jobs, or a native file replayed as it is (no
    /// window, sample or rescaling), read through once to check it and to
    /// note where each job is (24 bytes a job), then read again by each run
    /// in submission order.
    /// `whole` asks for every job in memory (slowdown runs each alone).
    pub fn load_for_runs(&self, seed: u64, whole: bool) -> Result<Loaded, String> {
        if whole || self.fit_use.is_some() {
            let (name, w) = self.load(seed)?;
            return Ok(Loaded::Whole(name, w));
        }
        if let Some(path) = &self.workload {
            let plain = self.window.is_none() && self.sample == 1.0 && self.nodes.is_none() && self.scale == 1.0;
            let name = path.display().to_string();
            if !(plain && is_native(path)) {
                return self.import_for_runs(path, name, seed);
            }
            let (cluster, order) = index_native(path)?;
            let jobs = order.len();
            let source = Source::File { path: path.clone(), order, _imported: None };
            return Ok(Loaded::Streamed(Streamed { name, cluster, jobs, source }));
        }
        self.check_scale()?;
        let name = self.scenario_name();
        let long = LongJobs::from_name(&self.long_jobs).expect("clap checked it");
        match scenarios::stream(name, seed, self.scale, long) {
            Some((cluster, ScenarioJobs::Drawn(jobs))) => {
                let source = Source::Scenario { name: name.to_string(), seed, scale: self.scale, long };
                Ok(Loaded::Streamed(Streamed { name: name.to_string(), cluster, jobs: jobs.size_hint().0, source }))
            }
            Some((cluster, listed)) => {
                Ok(Loaded::Whole(name.to_string(), Workload { cluster, jobs: listed.collect() }))
            }
            None => Err(scenarios::unknown_scenario(name)),
        }
    }
}

impl WorkloadArgs {
    /// A trace (or a native file shaped by the flags) for the runs to stream:
    /// imported job by job to a native file of its own (as `pliant trace
    /// import`, whose memory the live jobs bound), which each run then reads
    /// in submission order. Where the import cannot be streamed (nothing left
    /// to run, a job that cannot run), the workload is loaded whole, which
    /// says why as it always has.
    fn import_for_runs(&self, path: &PathBuf, name: String, seed: u64) -> Result<Loaded, String> {
        let opts = self.load_options(seed)?;
        let whole = || self.load(seed).map(|(name, w)| Loaded::Whole(name, w));
        let Ok((imported, file)) = Imported::create() else { return whole() };
        let report = pliant_trace::import(std::slice::from_ref(path), &opts, std::io::BufWriter::new(file));
        let indexed = match &report {
            Ok(_) => index_native(&imported.path()).ok().filter(|(_, order)| !order.is_empty()),
            Err(_) => None,
        };
        let (Ok(report), Some((cluster, order))) = (report, indexed) else {
            drop(imported);
            return whole();
        };
        // The import's memory, free now, goes back to the system: the runs'
        // threads take theirs from arenas of their own.
        #[cfg(target_env = "gnu")]
        // SAFETY: malloc_trim only gives back memory that malloc holds free.
        unsafe {
            libc::malloc_trim(0);
        }
        eprintln!("{report}");
        self.check_dropped(&report)?;
        let jobs = order.len();
        let source = Source::File { path: imported.path(), order, _imported: Some(imported) };
        Ok(Loaded::Streamed(Streamed { name, cluster, jobs, source }))
    }
}

/// A native file a trace was imported to for a run. Its name is removed as
/// soon as it is made, so nothing is left behind however the process ends;
/// the runs open it again through `/proc/self/fd` while this holds it open.
struct Imported(File);

impl Imported {
    /// A new, empty, nameless file in the temporary directory, open to write.
    fn create() -> std::io::Result<(Self, File)> {
        static MADE: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("pliant-import-{}-{n}.jsonl", std::process::id()));
        let file = File::create_new(&path)?;
        std::fs::remove_file(&path)?;
        let held = Imported(file.try_clone()?);
        // Opened again by this path, it reads from its own offset.
        std::fs::metadata(held.path())?;
        Ok((held, file))
    }

    /// A path that opens the file again, while it is held.
    fn path(&self) -> PathBuf {
        use std::os::fd::AsRawFd;
        PathBuf::from(format!("/proc/self/fd/{}", self.0.as_raw_fd()))
    }
}

/// Where each job of a native file is: (submission, byte offset, line), by submission.
type JobPlaces = Vec<(u64, u64, usize)>;

/// A native file's cluster and its jobs' places (see [`index_jobs`]).
fn index_native(path: &Path) -> Result<(Cluster, JobPlaces), String> {
    let reader = open_native(path)?;
    let (cluster, cluster_line) = (reader.cluster().clone(), reader.cluster_line());
    drop(reader);
    let order = index_jobs(path, cluster_line, &cluster)?;
    Ok((cluster, order))
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

/// Parses `CORES,GB` (`--node`).
pub fn parse_node(s: &str) -> Result<Resources, String> {
    let (c, g) = s.split_once(',').ok_or("expected CORES,GB, e.g. 32,128")?;
    let cores: f64 = c.trim().parse().map_err(|_| format!("bad core count `{c}`"))?;
    let gb: f64 = g.trim().parse().map_err(|_| format!("bad memory size `{g}`"))?;
    if !(cores > 0.0 && cores < 1e6 && gb > 0.0 && gb < 1e9) {
        return Err("the node needs positive cores and memory".into());
    }
    Ok(Resources::new((cores * 1000.0).round() as u64, (gb * 1024.0).round() as u64))
}

/// Parses `SHORT,LONG` shares of the cluster's CPU, e.g. `0.17,0.75`.
pub fn parse_use_shares(s: &str) -> Result<UseShares, String> {
    let (a, b) = s.split_once(',').ok_or("expected SHORT,LONG fractions of the cluster's CPU, e.g. 0.17,0.75")?;
    let share = |x: &str| -> Result<f64, String> {
        let v: f64 = x.trim().parse().map_err(|_| format!("bad share `{x}`"))?;
        if v > 0.0 && v <= 1.0 {
            Ok(v)
        } else {
            Err(format!("a share must be a fraction in (0, 1], got `{x}`"))
        }
    };
    Ok(UseShares { short: share(a)?, long: share(b)? })
}

/// Parses `START..END` in seconds (`--window`).
pub fn parse_window(s: &str) -> Result<Window, String> {
    let (a, b) = s.split_once("..").ok_or("expected START..END in seconds, e.g. 600..4200")?;
    let secs = |x: &str| -> Result<u64, String> {
        let v: f64 = x.trim().parse().map_err(|_| format!("bad time `{x}`"))?;
        if (0.0..1e12).contains(&v) {
            Ok((v * SECOND as f64).round() as u64)
        } else {
            Err(format!("bad time `{x}`"))
        }
    };
    let w = Window { start: secs(a)?, end: secs(b)? };
    if w.start >= w.end {
        return Err("the window's start must come before its end".into());
    }
    Ok(w)
}
