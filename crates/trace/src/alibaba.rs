//! Alibaba cluster traces: v2018 `batch_task` (+ optional `batch_instance`)
//! and v2017 `batch_task`.
//!
//! * v2018 `batch_task`: task_name, instance_num, job_name, task_type, status,
//!   start_time, end_time (s), plan_cpu (100 = one core), plan_mem (% of a
//!   machine's memory). The DAG comes from the task names ([`crate::dag`]);
//!   a phase per task, an instance per pliant task. Without `batch_instance`
//!   every instance runs the task's start → end; with it, each Terminated
//!   instance runs its own start → end.
//! * v2017 `batch_task`: create time, end time (s), job_id, task_id,
//!   instance count, status, plan_cpu (100 = one core, as in v2018: the
//!   trace's schema gives CPU in hundredths of a core), plan_mem (fraction of
//!   a machine's memory); independent tasks, each instance running create →
//!   end. v2017 `batch_instance` (start, end, job_id, task_id, machine,
//!   status, …; 12 fields), when given, gives each instance its own run.
//!   v2017 machines have 64 CPUs ([`NODE_2017`]).
//! * A header row (column names) at the top of a file is skipped.
//! * Status `Terminated` finishes; `Running` is unfinished (cut at the
//!   window's end / the last end time seen, or dropped with
//!   [`Unfinished::Drop`]); `Waiting`/`Ready` never ran; a `Failed`,
//!   `Cancelled` or `Interrupted` run that shows a start and an end held its
//!   machine: it is kept as a run of its job's [`JobKind::Ended`] part (dropped
//!   as abnormal with [`Unfinished::Drop`]). A run that began at time 0
//!   started before the trace: a finished one is dropped, a running one is
//!   cut at both ends.
//! * Submission: a job's earliest task start; priority: none in the trace (0).
//!
//! The files are not ordered by job, so the reader holds the task table of
//! every job until the end and hands jobs out in job-name order.

use crate::dag;
use crate::error::{BadRows, RowError, TraceError};
use crate::input::{is_header, Lines, Progress};
use crate::record::{task, JobKind, ReadOptions, TaskOutcomes, TraceJob, Unfinished};
use crate::timeline::LoadTimeline;
use pliant_core::{Micros, Resources, SECOND};
use pliant_workload::Phase;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

/// Machines in the v2018 cluster (for scaling to a smaller cluster).
pub const MACHINES_2018: u32 = 4_034;
/// Machines in the v2017 cluster.
pub const MACHINES_2017: u32 = 1_300;
/// A v2017 machine: 64 CPUs (the trace's `server_event` capacity); its
/// memory is normalised in the trace, so the default node's 128 GB is kept.
pub const NODE_2017: Resources = Resources::cores_gb(64, 128);

/// Which release of the trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// cluster-trace-v2017.
    V2017,
    /// cluster-trace-v2018.
    V2018,
}

/// What an Alibaba read found besides the jobs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AlibabaReport {
    /// Rows read, bad ones included.
    pub rows: u64,
    /// Bad rows skipped.
    pub bad: BadRows,
    /// Distinct jobs.
    pub jobs: u64,
    /// How the instances ended up.
    pub tasks: TaskOutcomes,
    /// `batch_instance` rows whose task is not in `batch_task`.
    pub orphan_instances: u64,
    /// The requested load of every run the trace shows, when it ran (kept or
    /// not; runs still going cut at the horizon).
    pub load: LoadTimeline,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Done,
    Running,
    Waiting,
    Failed,
}

#[derive(Debug)]
struct Row {
    job: String,
    name: String,
    instances: u32,
    status: Status,
    start: Micros,
    end: Micros,
    request: Resources,
}

#[derive(Debug)]
struct AliTask {
    row: Row,
    runs: Vec<(Status, Micros, Micros)>,
}

/// Whether `s` is a task status the Alibaba traces write (any case).
pub(crate) fn is_status(s: &str) -> bool {
    status(s).is_ok()
}

fn status(s: &str) -> Result<Status, String> {
    match s.to_ascii_lowercase().as_str() {
        "terminated" => Ok(Status::Done),
        "running" => Ok(Status::Running),
        "waiting" | "ready" => Ok(Status::Waiting),
        "failed" | "cancelled" | "interrupted" => Ok(Status::Failed),
        _ => Err(format!("unknown status `{s}`")),
    }
}

fn number(f: &[&str], i: usize, name: &str) -> Result<f64, String> {
    if f[i].is_empty() {
        return Ok(0.0);
    }
    match f[i].parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
        _ => Err(format!("field {} ({name}): expected a non-negative number, got `{}`", i + 1, f[i])),
    }
}

fn seconds(f: &[&str], i: usize, name: &str) -> Result<Micros, String> {
    let x = number(f, i, name)?;
    if x > 1e12 {
        return Err(format!("field {} ({name}): {x} s is out of range", i + 1));
    }
    Ok((x * SECOND as f64).round() as Micros)
}

fn fields<'a>(line: &'a str, n: usize, what: &str) -> Result<Vec<&'a str>, String> {
    let f: Vec<&str> = line.split(',').collect();
    if f.len() != n {
        return Err(format!("{} fields in a {what} row, expected {n}", f.len()));
    }
    Ok(f)
}

fn request(node: Resources, milli: f64, mem_fraction: f64) -> Resources {
    let cpu = (milli.ceil() as u64).clamp(1, node.cpu_milli.max(1));
    let mem = ((mem_fraction.clamp(0.0, 1.0) * node.mem_mb as f64).ceil() as u64).clamp(1, node.mem_mb.max(1));
    Resources::new(cpu, mem)
}

fn instances(f: &[&str], i: usize) -> Result<u32, String> {
    match f[i].parse::<u32>() {
        Ok(n) if n <= 1_000_000 => Ok(n),
        _ => Err(format!("field {} (instance count): expected a count up to 1000000, got `{}`", i + 1, f[i])),
    }
}

fn parse_2018(line: &str, node: Resources) -> Result<Row, String> {
    let f = fields(line, 9, "v2018 batch_task")?;
    let (start, end) = (seconds(&f, 5, "start_time")?, seconds(&f, 6, "end_time")?);
    Ok(Row {
        name: f[0].to_owned(),
        instances: instances(&f, 1)?,
        job: f[2].to_owned(),
        status: status(f[4])?,
        start,
        end,
        request: request(node, number(&f, 7, "plan_cpu")? * 10.0, number(&f, 8, "plan_mem")? / 100.0),
    })
}

fn parse_2017(line: &str, node: Resources) -> Result<Row, String> {
    let f = fields(line, 8, "v2017 batch_task")?;
    Ok(Row {
        start: seconds(&f, 0, "create time")?,
        end: seconds(&f, 1, "end time")?,
        job: f[2].to_owned(),
        name: f[3].to_owned(),
        instances: instances(&f, 4)?,
        status: status(f[5])?,
        request: request(node, number(&f, 6, "plan_cpu")? * 10.0, number(&f, 7, "plan_mem")?),
    })
}

/// (job, task, status, start, end) of a `batch_instance` row.
type Instance = (String, String, Status, Micros, Micros);

/// A v2018 `batch_instance` row.
fn parse_instance_2018(line: &str) -> Result<Instance, String> {
    let f = fields(line, 14, "v2018 batch_instance")?;
    Ok((f[2].to_owned(), f[1].to_owned(), status(f[4])?, seconds(&f, 5, "start_time")?, seconds(&f, 6, "end_time")?))
}

/// A v2017 `batch_instance` row.
fn parse_instance_2017(line: &str) -> Result<Instance, String> {
    let f = fields(line, 12, "v2017 batch_instance")?;
    Ok((f[2].to_owned(), f[3].to_owned(), status(f[5])?, seconds(&f, 0, "start time")?, seconds(&f, 1, "end time")?))
}

/// Calls `row` for every non-empty line of `files`, counting rows and bad rows.
fn each_row(
    files: &[PathBuf],
    progress: &Progress,
    strict: bool,
    rep: &mut AlibabaReport,
    mut row: impl FnMut(&str) -> Result<(), String>,
) -> Result<(), TraceError> {
    for path in files {
        let mut lines = Lines::open(path, progress)?;
        let mut first = true;
        while let Some((line, text)) = lines.next_line()? {
            if matches!(text, Ok("")) {
                continue;
            }
            if std::mem::take(&mut first) && text.as_ref().is_ok_and(|t| is_header(t)) {
                continue;
            }
            rep.rows += 1;
            if let Err(reason) = text.and_then(&mut row) {
                rep.bad.record(RowError { file: path.clone(), line, reason }, strict)?;
            }
        }
    }
    Ok(())
}

/// Reads Alibaba `batch_task` files (and, for v2018, `batch_instance` files),
/// then hands every job with a kept task to `sink`.
pub fn read(
    version: Version,
    task_files: &[PathBuf],
    instance_files: &[PathBuf],
    opts: &ReadOptions,
    progress: &Progress,
    sink: &mut dyn FnMut(TraceJob) -> Result<(), TraceError>,
) -> Result<AlibabaReport, TraceError> {
    let mut rep = AlibabaReport::default();
    let mut jobs: BTreeMap<String, Vec<AliTask>> = BTreeMap::new();
    let mut index: HashMap<(String, String), (usize, bool)> = HashMap::new();
    let mut last_end = 0;
    let (parse, parse_instance) = match version {
        Version::V2018 => (
            parse_2018 as fn(&str, Resources) -> Result<Row, String>,
            parse_instance_2018 as fn(&str) -> Result<Instance, String>,
        ),
        Version::V2017 => (parse_2017 as _, parse_instance_2017 as _),
    };
    each_row(task_files, progress, opts.strict, &mut rep, |line| {
        let row = parse(line, opts.node_size())?;
        last_end = last_end.max(row.end);
        let tasks = jobs.entry(row.job.clone()).or_default();
        index.insert((row.job.clone(), row.name.clone()), (tasks.len(), false));
        tasks.push(AliTask { row, runs: Vec::new() });
        Ok(())
    })?;
    let mut orphans = 0;
    each_row(instance_files, progress, opts.strict, &mut rep, |line| {
        let (job, name, st, start, end) = parse_instance(line)?;
        last_end = last_end.max(end);
        let key = (job, name);
        match (index.get_mut(&key), jobs.get_mut(&key.0)) {
            (Some((i, has_runs)), Some(tasks)) => {
                *has_runs = true;
                tasks[*i].runs.push((st, start, end));
            }
            _ => orphans += 1,
        }
        Ok(())
    })?;
    rep.orphan_instances = orphans;
    drop(index);
    let horizon = opts.window.map_or(last_end, |w| w.end);
    for (id, tasks) in jobs {
        rep.jobs += 1;
        for t in &tasks {
            trace_load(t, horizon, &mut rep.load);
        }
        for job in build(id, tasks, version, opts, horizon, &mut rep.tasks) {
            sink(job)?;
        }
    }
    Ok(rep)
}

/// The run kept for one instance (and whether it ended without finishing),
/// or the reason it is dropped (counted in `out`).
fn run(
    status: Status,
    start: Micros,
    end: Micros,
    opts: &ReadOptions,
    horizon: Micros,
    out: &mut TaskOutcomes,
) -> Option<(Micros, Micros, bool)> {
    let truncate = opts.unfinished == Unfinished::Truncate;
    let past_window = opts.window.is_some_and(|w| end > w.end);
    let status = match status {
        Status::Done if past_window && start < horizon => Status::Running,
        Status::Done if past_window => Status::Waiting,
        s => s,
    };
    match status {
        Status::Done if start == 0 => {
            out.started_before += 1;
            None
        }
        Status::Done if end >= start => {
            out.finished += 1;
            Some((start, end, false))
        }
        Status::Failed if truncate && start > 0 && end > start => {
            out.ended += 1;
            out.ended_runs += 1;
            Some((start, end, true))
        }
        Status::Done | Status::Failed => {
            out.abnormal += 1;
            None
        }
        Status::Running if truncate && start < horizon => {
            out.truncated += 1;
            Some((start, horizon, false))
        }
        Status::Running => {
            out.unfinished += 1;
            None
        }
        Status::Waiting => {
            out.never_ran += 1;
            None
        }
    }
}

/// Adds the runs of `t` the trace shows to `load`, at the times they ran.
fn trace_load(t: &AliTask, horizon: Micros, load: &mut LoadTimeline) {
    let mut add = |st: Status, s: Micros, e: Micros, n: u32| match st {
        Status::Done | Status::Failed if s > 0 => load.add(s, e, t.row.request, n),
        Status::Running => load.add(s, horizon, t.row.request, n),
        _ => {}
    };
    if t.runs.is_empty() {
        add(t.row.status, t.row.start, t.row.end, t.row.instances);
    } else {
        for &(st, s, e) in &t.runs {
            add(st, s, e, 1);
        }
    }
}

fn build(
    id: String,
    tasks: Vec<AliTask>,
    version: Version,
    opts: &ReadOptions,
    horizon: Micros,
    out: &mut TaskOutcomes,
) -> Vec<TraceJob> {
    let submit = tasks.iter().map(|t| t.row.start).filter(|&s| s > 0).min().unwrap_or(0);
    let (mut end, mut ended_end) = (submit, submit);
    let mut ended = Vec::new();
    let mut kept_tasks: Vec<Vec<pliant_workload::Task>> = Vec::with_capacity(tasks.len());
    for t in &tasks {
        let runs: Vec<(Status, Micros, Micros)> = if t.runs.is_empty() {
            vec![(t.row.status, t.row.start, t.row.end); t.row.instances as usize]
        } else {
            t.runs.clone()
        };
        let mut kept = Vec::new();
        for (st, s, e) in runs {
            match run(st, s, e, opts, horizon, out) {
                Some((s, e, false)) => {
                    end = end.max(e);
                    kept.push(task(t.row.request, e - s));
                }
                Some((s, e, true)) => {
                    ended_end = ended_end.max(e);
                    ended.push(task(t.row.request, e - s));
                }
                None => {}
            }
        }
        kept_tasks.push(kept);
    }
    let nodes: Vec<Option<(u32, Vec<u32>)>> = match version {
        Version::V2018 => tasks.iter().map(|t| dag::parse_name(&t.row.name)).collect(),
        Version::V2017 => vec![None; tasks.len()],
    };
    let kept: Vec<bool> = kept_tasks.iter().map(|k| !k.is_empty()).collect();
    let phases: Vec<Phase> = dag::order(&nodes, &kept)
        .into_iter()
        .map(|(i, deps)| Phase {
            deps,
            coupled: false,
            local: false,
            tasks: std::mem::take(&mut kept_tasks[i]),
            stages: vec![],
        })
        .collect();
    let job = |kind: JobKind, end, phases| TraceJob {
        id: kind.name(&id),
        submit,
        end,
        priority: 0,
        sched_class: None,
        phases,
        class: None,
        elastic: None,
        kind,
    };
    let mut jobs = Vec::new();
    if !phases.is_empty() {
        jobs.push(job(JobKind::Batch, end, phases));
    }
    if !ended.is_empty() {
        jobs.push(job(JobKind::Ended, ended_end, vec![Phase::independent(ended)]));
    }
    jobs
}
