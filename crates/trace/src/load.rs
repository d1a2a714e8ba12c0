//! Reading any supported input into pliant's model: format detection, the
//! readers, classes, and the window / sample / scale filters. Three entry
//! points: [`read_trace`] (trace jobs, for statistics), [`load_workload`]
//! (a whole [`Workload`], for `pliant simulate --workload`) and [`import`]
//! (streamed into a native file, for `pliant trace import`).

use crate::classify::ClassRule;
use crate::detect::{detect, Format, Inputs};
use crate::error::{BadRows, TraceError};
use crate::google2011;
use crate::input::Progress;
use crate::machines::MachineReport;
use crate::native::trace_job;
use crate::preemption::EvictionTable;
use crate::record::{JobKind, ReadOptions, TaskOutcomes, TraceJob};
use crate::shrink::{scaled_nodes, Shrink, Verdict};
use crate::timeline::LoadTimeline;
use crate::{alibaba, sls};
use pliant_core::model::JobClass;
use pliant_core::Resources;
use pliant_workload::format::WorkloadWriter;
use pliant_workload::{read_workload, Cluster, Job, Workload, DSS_AM};
use std::fmt;
use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};

/// What a read found, whatever the format.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadReport {
    /// The inputs' format.
    pub format: Format,
    /// Files read.
    pub files: usize,
    /// Rows (or JSON records) read, bad ones included.
    pub rows: u64,
    /// Bad rows skipped (none in strict mode: the first one is an error).
    pub bad: BadRows,
    /// Jobs left out because their record was bad (SLS: each bad record is a
    /// job; the other formats' bad rows are task or job events, and drop tasks).
    pub dropped_jobs: u64,
    /// Distinct jobs in the input.
    pub jobs_in_trace: u64,
    /// How the input's tasks ended up (kept or dropped, and why).
    pub tasks: TaskOutcomes,
    /// Google only: schedules, evictions and preemptions per priority band.
    pub evictions: Option<EvictionTable>,
    /// Google only: task events after their job was complete (ignored).
    pub late_events: u64,
    /// Google only: most jobs the reader held at once (its memory follows this).
    pub peak_live_jobs: u64,
    /// Alibaba only: instances whose task is not in `batch_task` (ignored).
    pub orphan_instances: u64,
    /// Google and Alibaba: the requested load of every run the trace shows, when it ran.
    pub load: Option<LoadTimeline>,
}

/// Reads every job of `inputs`, handing each to `sink` as soon as it is
/// complete (jobs of a native file or of an Alibaba table: after the whole read).
pub fn read_trace(
    inputs: &Inputs,
    opts: &ReadOptions,
    progress: &Progress,
    sink: &mut dyn FnMut(TraceJob) -> Result<(), TraceError>,
) -> Result<ReadReport, TraceError> {
    let mut rep = ReadReport::empty(inputs.format, inputs.main.len() + inputs.companion.len());
    let opts = &ReadOptions { node: Some(opts.node.unwrap_or(inputs.format.default_node())), ..opts.clone() };
    match inputs.format {
        Format::Google2011 => {
            let g = google2011::read(inputs.main.clone(), inputs.companion.clone(), opts, progress, sink)?;
            (rep.rows, rep.bad, rep.jobs_in_trace, rep.tasks) = (g.rows, g.bad, g.jobs, g.tasks);
            rep.evictions = Some(g.evictions);
            rep.late_events = g.late_events;
            rep.peak_live_jobs = g.peak_live_jobs;
            rep.load = Some(g.load);
        }
        Format::Alibaba2018 | Format::Alibaba2017 => {
            let v =
                if inputs.format == Format::Alibaba2018 { alibaba::Version::V2018 } else { alibaba::Version::V2017 };
            let a = alibaba::read(v, &inputs.main, &inputs.companion, opts, progress, sink)?;
            (rep.rows, rep.bad, rep.jobs_in_trace, rep.tasks) = (a.rows, a.bad, a.jobs, a.tasks);
            rep.orphan_instances = a.orphan_instances;
            rep.load = Some(a.load);
        }
        Format::Sls => {
            let s = sls::read(&inputs.main, opts, progress, sink)?;
            (rep.rows, rep.jobs_in_trace, rep.dropped_jobs) = (s.rows, s.jobs, s.bad.count);
            rep.bad = s.bad;
            rep.tasks.finished = s.tasks;
        }
        Format::Native => {
            let w = read_native(&inputs.main[0], progress)?;
            rep.rows = w.jobs.len() as u64 + 1;
            rep.jobs_in_trace = w.jobs.len() as u64;
            for job in w.jobs {
                rep.tasks.finished += job.tasks().count() as u64;
                sink(trace_job(job))?;
            }
        }
    }
    Ok(rep)
}

fn read_native(path: &Path, progress: &Progress) -> Result<Workload, TraceError> {
    let input = crate::input::open(path, progress)?;
    read_workload(BufReader::new(input)).map_err(|source| TraceError::Native { path: path.to_owned(), source })
}

/// Most nodes a replay may ask for (a typo should not exhaust memory).
const MAX_NODES: u32 = 1_000_000;

/// The cluster a load replays on. Its nodes have the trace's node size
/// (`ReadOptions::node`); for a native file, they are picked evenly from the
/// file's own nodes (node i of N is node ⌊i·M/N⌋ of its M).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Target {
    /// The cluster the input was recorded on: Google 2011 12,583 machines,
    /// Alibaba v2018 4,034, v2017 1,300, a native file's own cluster (YARN
    /// SLS traces name none: give `Nodes`).
    #[default]
    Source,
    /// This many nodes; every job kept (`--nodes N`).
    Nodes(u32),
    /// The source cluster shrunk by this factor in (0, 1] (`--scale X`), with
    /// its jobs sampled in the same proportion: see [`crate::shrink`].
    Scale(f64),
}

/// How to turn inputs into a workload. Built by the CLI from its flags.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadOptions {
    /// Node size for normalised requests, window, unfinished tasks, strictness.
    /// The window (`--window START..END`, trace seconds) keeps the jobs
    /// submitted inside it and shifts time so that START becomes 0.
    pub read: ReadOptions,
    /// The cluster to replay on.
    pub target: Target,
    /// Machines the trace was recorded on, if not the format's default.
    pub source_machines: Option<u32>,
    /// Fraction of jobs kept (`--sample`), in (0, 1].
    pub sample: f64,
    /// Seed for the sample (one seed, one sample).
    pub seed: u64,
    /// The short-vs-long rule (native files keep their own classes).
    pub classes: ClassRule,
    /// Draw a progress bar on stderr (only when it is a terminal).
    pub progress: bool,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            read: ReadOptions::default(),
            target: Target::Source,
            source_machines: None,
            sample: 1.0,
            seed: 0,
            classes: ClassRule::default(),
            progress: false,
        }
    }
}

/// What a load did, for a summary on stderr.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadReport {
    /// What the read found.
    pub read: ReadReport,
    /// The target cluster: node count and node size.
    pub nodes: u32,
    /// The size of each node.
    pub node: Resources,
    /// Fraction of jobs sampled (sample × scale).
    pub fraction: f64,
    /// Jobs left out because they were submitted outside the window.
    pub outside_window: u64,
    /// Jobs left out by the sample.
    pub not_sampled: u64,
    /// Jobs in the workload.
    pub jobs: u64,
    /// Tasks in the workload.
    pub tasks: u64,
    /// Short jobs in the workload.
    pub short: u64,
    /// Long-running services in the workload ([`JobKind::Service`]).
    pub services: u64,
    /// Jobs of runs that ended by failing, being killed or lost ([`JobKind::Ended`]).
    pub ended: u64,
    /// The trace's machine table, when one was read (the cluster is then its
    /// machines; otherwise uniform nodes of the node size).
    pub machines: Option<MachineReport>,
}

impl fmt::Display for LoadReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = &self.read;
        writeln!(
            f,
            "read {} file(s) of {}: {} rows, {} bad rows skipped",
            r.files,
            r.format.name(),
            r.rows,
            r.bad.count
        )?;
        for e in &r.bad.examples {
            writeln!(f, "  {e}")?;
        }
        let t = &r.tasks;
        writeln!(
            f,
            "tasks: {} kept ({} truncated, {} ended failed/killed/lost); runs kept apart: {} failed/killed/lost, {} evicted; dropped tasks: {} unfinished in the window, {} started before it, {} failed/killed/lost, {} never ran",
            t.finished + t.truncated + t.ended,
            t.truncated,
            t.ended,
            t.ended_runs,
            t.evicted_runs,
            t.unfinished,
            t.started_before,
            t.abnormal,
            t.never_ran
        )?;
        writeln!(
            f,
            "jobs: {} in the input, {} outside the window, {} not sampled (fraction {:.4})",
            r.jobs_in_trace, self.outside_window, self.not_sampled, self.fraction
        )?;
        let counted = |n: u64, noun: &str| format!("{n} {noun}{}", if n == 1 { "" } else { "s" });
        let nodes = match &self.machines {
            Some(m) => format!(
                "{} of the trace's machine table ({} machines up in the window; {} added, {} removed inside it, \
                 {} without a capacity left out)",
                counted(self.nodes as u64, "node"),
                m.machines,
                m.added,
                m.removed,
                m.no_capacity
            ),
            None if r.format == Format::Native => {
                format!("{} of the file's cluster", counted(self.nodes as u64, "node"))
            }
            None => format!(
                "{} of {} (uniform: the trace gives no machine table)",
                counted(self.nodes as u64, "node"),
                self.node
            ),
        };
        write!(
            f,
            "workload: {} ({} short, {} long, {} services, {} of ended runs), {} on {nodes}",
            counted(self.jobs, "job"),
            self.short,
            self.jobs - self.short - self.services - self.ended,
            self.services,
            self.ended,
            counted(self.tasks, "task"),
        )
    }
}

/// The plan of a load: target cluster and job filters.
struct Plan {
    nodes: u32,
    node: Resources,
    shrink: Shrink,
    cluster: Cluster,
}

/// `own`: the input's own machines (a native file's cluster, or a trace's machine table).
fn plan(inputs: &Inputs, opts: &LoadOptions, own: Option<&Cluster>) -> Result<Plan, TraceError> {
    if !(opts.sample > 0.0 && opts.sample <= 1.0) {
        return Err(TraceError::Options(format!("the sample fraction must be in (0, 1], got {}", opts.sample)));
    }
    if let Some(w) = opts.read.window {
        if w.start >= w.end {
            return Err(TraceError::Options("the window's start must come before its end".into()));
        }
    }
    let source = opts.source_machines.or(own.map(|c| c.nodes.len() as u32)).or(match inputs.format {
        Format::Google2011 => Some(google2011::MACHINES),
        Format::Alibaba2018 => Some(alibaba::MACHINES_2018),
        Format::Alibaba2017 => Some(alibaba::MACHINES_2017),
        Format::Native => None,
        Format::Sls => None,
    });
    let source = || {
        source.ok_or_else(|| {
            TraceError::Options(format!(
                "{} traces do not say how many machines they ran on: give the cluster size (--nodes)",
                inputs.format.name()
            ))
        })
    };
    let (nodes, scale_fraction) = match opts.target {
        Target::Source => (source()?, 1.0),
        Target::Nodes(n) if n == 0 || n > MAX_NODES => {
            return Err(TraceError::Options(format!("the cluster needs 1 to {MAX_NODES} nodes, got {n}")))
        }
        Target::Nodes(n) => (n, 1.0),
        Target::Scale(x) => {
            let machines = source()?;
            let n = scaled_nodes(x, machines).ok_or_else(|| {
                TraceError::Options(format!("--scale for a trace must be a factor in (0, 1], got {x}"))
            })?;
            (n, f64::from(n) / f64::from(machines))
        }
    };
    let (node, cluster) = match own {
        Some(c) => (c.nodes[0], Cluster { am: c.am, nodes: spread(&c.nodes, nodes) }),
        // YARN runs an ApplicationMaster per job: an SLS trace's jobs get DSS's.
        None => {
            let am = (inputs.format == Format::Sls).then_some(DSS_AM);
            let node = opts.read.node.unwrap_or(inputs.format.default_node());
            (node, Cluster { am, nodes: vec![node; nodes as usize] })
        }
    };
    let shrink = Shrink { window: opts.read.window, fraction: opts.sample * scale_fraction, seed: opts.seed };
    Ok(Plan { nodes, node, shrink, cluster })
}

/// `n` nodes picked evenly from `nodes` (node i is ⌊i·M/n⌋ of the M given),
/// so a cluster of mixed node sizes keeps its mix when it shrinks or grows.
fn spread(nodes: &[Resources], n: u32) -> Vec<Resources> {
    let m = nodes.len() as u64;
    (0..u64::from(n)).map(|i| nodes[(i * m / u64::from(n)) as usize]).collect()
}

impl ReadReport {
    /// A report of `files` files of `format` with nothing read yet.
    fn empty(format: Format, files: usize) -> Self {
        ReadReport {
            format,
            files,
            rows: 0,
            bad: BadRows::default(),
            dropped_jobs: 0,
            jobs_in_trace: 0,
            tasks: TaskOutcomes::default(),
            evictions: None,
            late_events: 0,
            peak_live_jobs: 0,
            orphan_instances: 0,
            load: None,
        }
    }
}

fn empty_report(inputs: &Inputs, plan: &Plan) -> LoadReport {
    LoadReport {
        read: ReadReport::empty(inputs.format, 0),
        nodes: plan.nodes,
        node: plan.node,
        fraction: plan.shrink.fraction,
        outside_window: 0,
        not_sampled: 0,
        jobs: 0,
        tasks: 0,
        short: 0,
        services: 0,
        ended: 0,
        machines: None,
    }
}

/// Applies the filters to one job; `Some` when it stays (time rebased).
fn admit(job: Job, plan: &Plan, rep: &mut LoadReport) -> Option<Job> {
    // A trace job's parts (its runs, its ended runs) are sampled together.
    let (kind, id) = JobKind::of(&job.name);
    match plan.shrink.verdict(id, job.submit) {
        Verdict::Window => rep.outside_window += 1,
        Verdict::Sample => rep.not_sampled += 1,
        Verdict::Keep => {
            rep.jobs += 1;
            rep.tasks += job.tasks().count() as u64;
            match kind {
                JobKind::Batch => rep.short += u64::from(job.class == JobClass::Short),
                JobKind::Service => rep.services += 1,
                JobKind::Ended => rep.ended += 1,
            }
            return Some(Job { submit: plan.shrink.rebase(job.submit), ..job });
        }
    }
    None
}

/// A trace job as a workload job, classed by `rule`.
pub fn to_job(t: TraceJob, rule: &ClassRule) -> Job {
    let class = t.class.unwrap_or_else(|| rule.classify(&t));
    Job { name: t.id, submit: t.submit, class, priority: t.priority.min(11), phases: t.phases, elastic: t.elastic }
}

/// What [`each_job`] hands out: the plan once, first, then the jobs.
enum Item<'a> {
    Plan(&'a Plan),
    Job(Job),
}

/// Streams the jobs of `paths` through detection, reading, classes and filters into `out`.
fn each_job(
    paths: &[PathBuf],
    opts: &LoadOptions,
    out: &mut dyn FnMut(Item) -> Result<(), TraceError>,
) -> Result<LoadReport, TraceError> {
    let inputs = detect(paths)?;
    let progress = Progress::new(opts.progress, &inputs.all());
    if inputs.format == Format::Native {
        let w = read_native(&inputs.main[0], &progress)?;
        let plan = plan(&inputs, opts, Some(&w.cluster))?;
        out(Item::Plan(&plan))?;
        let mut rep = empty_report(&inputs, &plan);
        rep.read.files = 1;
        rep.read.rows = w.jobs.len() as u64 + 1;
        rep.read.jobs_in_trace = w.jobs.len() as u64;
        for job in w.jobs {
            rep.read.tasks.finished += job.tasks().count() as u64;
            if let Some(j) = admit(job, &plan, &mut rep) {
                out(Item::Job(j))?;
            }
        }
        progress.finish();
        return Ok(rep);
    }
    let own = own_machines(&inputs, &opts.read, &progress)?;
    let plan = plan(&inputs, opts, own.as_ref().map(|(c, _)| c))?;
    out(Item::Plan(&plan))?;
    let mut rep = empty_report(&inputs, &plan);
    rep.machines = own.map(|(_, m)| m);
    let read =
        read_trace(&inputs, &opts.read, &progress, &mut |t| match admit(to_job(t, &opts.classes), &plan, &mut rep) {
            Some(j) => out(Item::Job(j)),
            None => Ok(()),
        })?;
    progress.finish();
    rep.read = read;
    Ok(rep)
}

/// The cluster of the trace's machine table, if the inputs have one.
pub fn own_machines(
    inputs: &Inputs,
    opts: &ReadOptions,
    progress: &Progress,
) -> Result<Option<(Cluster, MachineReport)>, TraceError> {
    let Some((table, files)) = &inputs.machines else { return Ok(None) };
    let opts = ReadOptions { node: Some(opts.node.unwrap_or(inputs.format.default_node())), ..opts.clone() };
    let (nodes, rep) = crate::machines::read(*table, files, &opts, progress)?;
    if nodes.is_empty() {
        return Err(TraceError::Workload(format!(
            "the machine table ({} file(s)) has no machine up in the window",
            files.len()
        )));
    }
    Ok(Some((Cluster { am: None, nodes }, rep)))
}

/// Loads a workload from `paths` (one native file, or the files/directories
/// of one trace; the format is detected), applying `opts`. Jobs are sorted
/// by submission time; the cluster is `opts.target`. Errors when nothing is
/// left to run.
pub fn load_workload(paths: &[PathBuf], opts: &LoadOptions) -> Result<(Workload, LoadReport), TraceError> {
    let mut jobs = Vec::new();
    let mut cluster = None;
    let rep = each_job(paths, opts, &mut |item| {
        match item {
            Item::Plan(p) => cluster = Some(p.cluster.clone()),
            Item::Job(j) => jobs.push(j),
        }
        Ok(())
    })?;
    if jobs.is_empty() {
        return Err(TraceError::Workload(format!(
            "no job left to run ({} jobs in the input, {} outside the window, {} not sampled)",
            rep.read.jobs_in_trace, rep.outside_window, rep.not_sampled
        )));
    }
    let mut w = Workload { cluster: cluster.unwrap_or(Cluster { am: None, nodes: Vec::new() }), jobs };
    w.validate().map_err(|e| TraceError::Workload(e.to_string()))?;
    Ok((w, rep))
}

/// Converts `paths` into a native workload written to `out`, job by job as
/// the trace completes them (memory bounded by the live jobs for Google
/// traces). Same options as [`load_workload`].
pub fn import<W: Write>(paths: &[PathBuf], opts: &LoadOptions, out: W) -> Result<LoadReport, TraceError> {
    let io = |source| TraceError::Io { path: PathBuf::from("<output>"), source };
    let mut writer: Option<WorkloadWriter<W>> = None;
    let mut out = Some(out);
    let rep = each_job(paths, opts, &mut |item| match (item, writer.as_mut(), out.take()) {
        (Item::Plan(p), None, Some(sink)) => {
            writer = Some(WorkloadWriter::new(sink, &p.cluster).map_err(io)?);
            Ok(())
        }
        (Item::Job(j), Some(w), _) => w.job(&j).map_err(io),
        _ => Err(TraceError::Workload("internal: the cluster record must come first, once".into())),
    })?;
    if let Some(w) = writer {
        w.finish().map_err(io)?;
    }
    Ok(rep)
}
