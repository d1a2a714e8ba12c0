//! Google cluster-data 2011 (`task_events` + optional `job_events`).
//!
//! * A job per job ID, a task per (job ID, task index), tasks in index order,
//!   one phase, independent tasks.
//! * Submission: the job's first SUBMIT (task or job event); one at timestamp
//!   0 (before the window) counts as the window's start.
//! * A task's work is its last run: SCHEDULE → FINISH, or, by default, the
//!   part the window shows of a run still going at either end. A task evicted
//!   and rescheduled is one task whose work is its last run: an evicted run's
//!   work is lost (Google kills on eviction), so the last run is what the
//!   task really needed. Its evicted runs are counted in the report
//!   (schedules, evictions, preemptions and their core-seconds per priority
//!   band, [`crate::preemption`], the checkpoint paper's Table 1).
//! * Runs ended by EVICT, FAIL, KILL or LOST held their machine while they
//!   ran (evicted runs: 0.6 % of part 0's requested core-seconds, 23 % of
//!   parts 15–17's): by default each is replayed as a task of the length it
//!   had, in a job of their own ([`JobKind::Ended`]: they complete nothing,
//!   so reports keep them apart from job completions). A replay thus carries
//!   the trace's load, the trace's own waste included. A task whose last
//!   event is FAIL, KILL or LOST is counted as ended, not finished.
//! * Timestamp 0 marks events before the trace window (which starts at
//!   600 s): a run that "began" at 0 is measured from 600 s, one whose start
//!   is not in the files (a later part) from the first timestamp read; tasks still
//!   running at the end run to the end. A job with a task that ran from
//!   before the window to its end is a long-running service
//!   ([`JobKind::Service`]): it holds room and has no completion time.
//!   [`Unfinished::Drop`] (`--finished-only`) keeps only complete finished
//!   runs instead. Timestamps beyond 2^62 (the documentation's "after the
//!   window") are ignored.
//! * Requests: the latest non-empty CPU and memory request, fractions of
//!   [`ReadOptions::node`], rounded up to at least 1 millicore and 1 MB.
//! * Priority: the highest of the tasks' priorities; scheduling class: the
//!   first one seen for the job.
//!
//! Streaming: both files are sorted by time, so they are merged by time and a
//! job is finished and handed out [`GRACE`] after its terminal job event. Only
//! live jobs are held, and the IDs of the jobs handed out in the last
//! [`REMEMBER`] of trace time. Without `job_events`, every job is held to the end.

use crate::error::{BadRows, RowError, TraceError};
use crate::input::{Lines, Progress};
use crate::preemption::{EvictionTable, PreemptionCounter};
use crate::record::{fraction_of, task, JobKind, ReadOptions, TaskOutcomes, TraceJob, Unfinished};
use crate::timeline::LoadTimeline;
use pliant_core::{Micros, SECOND};
use pliant_workload::Phase;
use std::collections::{HashMap, HashSet, VecDeque};
use std::path::PathBuf;

/// The trace window starts 600 s after timestamp 0 (the trace documentation).
pub const WINDOW_START: Micros = 600 * SECOND;
/// How long after a job's terminal job event its task events are still awaited.
pub const GRACE: Micros = 5 * SECOND;
/// How long after a job is handed out its ID is remembered, so that its late
/// task events are ignored instead of starting a new job. Memory then grows
/// with the jobs of the last hour of trace time, not with the trace's length.
pub const REMEMBER: Micros = 3600 * SECOND;
/// Timestamps above this mean "after the trace window".
const AFTER_END: Micros = 1 << 62;
/// Number of machines in the 2011 cluster (for scaling a trace to a smaller cluster).
pub const MACHINES: u32 = 12_583;

/// What a Google read found besides the jobs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GoogleReport {
    /// Rows read (both kinds of file), bad ones included.
    pub rows: u64,
    /// Bad rows skipped.
    pub bad: BadRows,
    /// Distinct jobs with task events.
    pub jobs: u64,
    /// How the tasks ended up.
    pub tasks: TaskOutcomes,
    /// Schedules, evictions and preemptions per priority band.
    pub evictions: EvictionTable,
    /// Task events for a job already handed out (more than [`GRACE`] after its end).
    pub late_events: u64,
    /// Most jobs held at once (the reader's memory grows with this).
    pub peak_live_jobs: u64,
    /// The requested load of every run the trace shows, when it ran (kept or
    /// not; evicted runs included; runs begun before the window from 600 s,
    /// runs still going to the end of the read).
    pub load: LoadTimeline,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum State {
    Pending,
    Running(Micros),
    Finished { start: Option<Micros>, end: Micros },
    Dead,
}

#[derive(Debug, Clone)]
struct TaskSeen {
    state: State,
    priority: u8,
    scheduled: bool,
    submit: Option<Micros>,
    cpu: f64,
    mem: f64,
    /// Runs (start, end, evicted) that ended by EVICT, FAIL, KILL or LOST.
    ended: Vec<(Micros, Micros, bool)>,
}

#[derive(Debug, Default)]
struct JobSeen {
    submit: Option<Micros>,
    first_seen: Micros,
    sched_class: Option<u8>,
    tasks: HashMap<u32, TaskSeen>,
}

struct TaskEvent {
    ts: Micros,
    job: u64,
    index: u32,
    machine: Option<u64>,
    kind: u8,
    sched_class: u8,
    priority: u8,
    cpu: Option<f64>,
    mem: Option<f64>,
}

struct JobEvent {
    ts: Micros,
    job: u64,
    kind: u8,
    sched_class: u8,
}

fn field<T: std::str::FromStr>(f: &[&str], i: usize, name: &str) -> Result<T, String> {
    f[i].parse().map_err(|_| format!("field {} ({name}): expected a number, got `{}`", i + 1, f[i]))
}

fn optional(f: &[&str], i: usize, name: &str) -> Result<Option<f64>, String> {
    if f[i].is_empty() {
        return Ok(None);
    }
    let x: f64 = field(f, i, name)?;
    if x.is_finite() && x >= 0.0 {
        Ok(Some(x))
    } else {
        Err(format!("field {} ({name}): expected a non-negative number, got `{}`", i + 1, f[i]))
    }
}

fn bounded(f: &[&str], i: usize, name: &str, max: u8) -> Result<u8, String> {
    let x: u8 = field(f, i, name)?;
    if x > max {
        return Err(format!("field {} ({name}): {x} is above {max}", i + 1));
    }
    Ok(x)
}

fn split<'a>(line: &'a str, out: &mut [&'a str], name: &str) -> Result<(), String> {
    let mut n = 0;
    for part in line.split(',') {
        if n == out.len() {
            return Err(format!("more than {} fields in a {name} row", out.len()));
        }
        out[n] = part;
        n += 1;
    }
    if n != out.len() {
        return Err(format!("{n} fields in a {name} row, expected {}", out.len()));
    }
    Ok(())
}

fn parse_task(line: &str) -> Result<TaskEvent, String> {
    let mut f = [""; 13];
    split(line, &mut f, "task_events")?;
    Ok(TaskEvent {
        ts: field(&f, 0, "timestamp")?,
        job: field(&f, 2, "job ID")?,
        index: field(&f, 3, "task index")?,
        machine: if f[4].is_empty() { None } else { Some(field(&f, 4, "machine ID")?) },
        kind: bounded(&f, 5, "event type", 8)?,
        sched_class: bounded(&f, 7, "scheduling class", 3)?,
        priority: bounded(&f, 8, "priority", 11)?,
        cpu: optional(&f, 9, "CPU request")?,
        mem: optional(&f, 10, "memory request")?,
    })
}

fn parse_job(line: &str) -> Result<JobEvent, String> {
    let mut f = [""; 8];
    split(line, &mut f, "job_events")?;
    Ok(JobEvent {
        ts: field(&f, 0, "timestamp")?,
        job: field(&f, 2, "job ID")?,
        kind: bounded(&f, 3, "event type", 8)?,
        sched_class: bounded(&f, 5, "scheduling class", 3)?,
    })
}

/// Several files read one after the other as one stream of parsed rows.
struct Stream<T> {
    files: VecDeque<PathBuf>,
    current: Option<Lines>,
    parse: fn(&str) -> Result<T, String>,
}

impl<T> Stream<T> {
    fn new(files: Vec<PathBuf>, parse: fn(&str) -> Result<T, String>) -> Self {
        Stream { files: files.into(), current: None, parse }
    }

    fn next(&mut self, progress: &Progress, rep: &mut GoogleReport, strict: bool) -> Result<Option<T>, TraceError> {
        loop {
            if self.current.is_none() {
                match self.files.pop_front() {
                    Some(p) => self.current = Some(Lines::open(&p, progress)?),
                    None => return Ok(None),
                }
            }
            let Some(lines) = self.current.as_mut() else { continue };
            let path = lines.path().to_owned();
            match lines.next_line()? {
                None => self.current = None,
                Some((_, Ok(""))) => {}
                Some((line, text)) => {
                    rep.rows += 1;
                    match text.and_then(self.parse) {
                        Ok(row) => return Ok(Some(row)),
                        Err(reason) => rep.bad.record(RowError { file: path, line, reason }, strict)?,
                    }
                }
            }
        }
    }
}

struct Reader<'a> {
    opts: &'a ReadOptions,
    live: HashMap<u64, JobSeen>,
    done: HashSet<u64>,
    /// When each remembered ID in `done` is forgotten, in time order.
    forget: VecDeque<(Micros, u64)>,
    ending: VecDeque<(Micros, u64)>,
    rep: GoogleReport,
    preemptions: PreemptionCounter,
    last_ts: Micros,
    /// The first timestamp read (a later part of the trace starts mid-way).
    first_ts: Option<Micros>,
}

impl Reader<'_> {
    fn job(&mut self, id: u64, ts: Micros) -> &mut JobSeen {
        if !self.live.contains_key(&id) {
            self.rep.peak_live_jobs = self.rep.peak_live_jobs.max(self.live.len() as u64 + 1);
        }
        self.live.entry(id).or_insert_with(|| JobSeen { first_seen: ts, ..JobSeen::default() })
    }

    fn apply_task(&mut self, e: TaskEvent) {
        match e.kind {
            1 => self.preemptions.schedule(e.ts, e.machine, e.priority),
            2 => self.preemptions.evict(e.ts, e.machine, e.priority),
            _ => {}
        }
        if self.done.contains(&e.job) {
            self.rep.late_events += 1;
            return;
        }
        let node = self.opts.node_size();
        let node_cores = node.cpu_milli as f64 / 1000.0;
        let mut evicted_run = None;
        let mut ran = None;
        let job = self.job(e.job, e.ts);
        job.sched_class.get_or_insert(e.sched_class);
        let t = job.tasks.entry(e.index).or_insert(TaskSeen {
            state: State::Pending,
            priority: e.priority,
            scheduled: false,
            submit: None,
            cpu: 0.0,
            mem: 0.0,
            ended: Vec::new(),
        });
        if let Some(c) = e.cpu {
            t.cpu = c;
        }
        if let Some(m) = e.mem {
            t.mem = m;
        }
        if let (2..=6, State::Running(start)) = (e.kind, t.state) {
            ran = Some((from_window(start), e.ts, fraction_of(node, t.cpu, t.mem)));
        }
        match e.kind {
            0 => {
                t.submit.get_or_insert(e.ts);
                t.state = State::Pending;
                let s = job.submit.get_or_insert(e.ts);
                *s = (*s).min(e.ts);
            }
            1 => {
                t.scheduled = true;
                t.state = State::Running(e.ts);
            }
            2 => {
                if let State::Running(start) = t.state {
                    if start > 0 {
                        evicted_run = Some(t.cpu * node_cores * e.ts.saturating_sub(start) as f64 / 1e6);
                    }
                    t.ended.push((start, e.ts, true));
                }
                t.state = State::Pending;
            }
            4 => {
                let start = match t.state {
                    State::Running(s) => Some(s),
                    _ => None,
                };
                t.state = State::Finished { start, end: e.ts };
            }
            3 | 5 | 6 => {
                if let State::Running(start) = t.state {
                    t.ended.push((start, e.ts, false));
                }
                t.state = State::Dead;
            }
            _ => {}
        }
        if let Some((start, end, request)) = ran {
            self.rep.load.add(start, end, request, 1);
        }
        if let Some(core_seconds) = evicted_run {
            self.preemptions.evicted_run(e.priority, core_seconds);
        }
    }

    fn apply_job(&mut self, e: JobEvent) {
        if self.done.contains(&e.job) {
            return;
        }
        let job = self.job(e.job, e.ts);
        job.sched_class.get_or_insert(e.sched_class);
        match e.kind {
            0 => {
                let s = job.submit.get_or_insert(e.ts);
                *s = (*s).min(e.ts);
            }
            3..=6 => self.ending.push_back((e.ts + GRACE, e.job)),
            _ => {}
        }
    }

    /// Hands out the jobs whose grace ran out before `now`.
    fn expire(
        &mut self,
        now: Micros,
        sink: &mut dyn FnMut(TraceJob) -> Result<(), TraceError>,
    ) -> Result<(), TraceError> {
        while let Some(&(at, id)) = self.forget.front() {
            if at >= now {
                break;
            }
            self.forget.pop_front();
            self.done.remove(&id);
        }
        while let Some(&(deadline, id)) = self.ending.front() {
            if deadline >= now {
                break;
            }
            self.ending.pop_front();
            if let Some(job) = self.live.remove(&id) {
                self.done.insert(id);
                self.forget.push_back((deadline + REMEMBER, id));
                self.finish(id, job, deadline - GRACE, sink)?;
            }
        }
        Ok(())
    }

    /// Turns a job's state into its [`TraceJob`]s (the job, a service when a
    /// task of it ran from before the window to `horizon`, and the runs that
    /// ended by failing, being killed or lost); `horizon` is where running tasks are cut.
    fn finish(
        &mut self,
        id: u64,
        job: JobSeen,
        horizon: Micros,
        sink: &mut dyn FnMut(TraceJob) -> Result<(), TraceError>,
    ) -> Result<(), TraceError> {
        if job.tasks.is_empty() {
            return Ok(());
        }
        self.rep.jobs += 1;
        let keep_all = self.opts.unfinished == Unfinished::Truncate;
        let mut indices: Vec<u32> = job.tasks.keys().copied().collect();
        indices.sort_unstable();
        let (mut done, mut ended) = (Part::default(), Part::default());
        let mut service = false;
        // A run whose start the files do not show began before them: it is measured from their start.
        let read_start = from_window(self.first_ts.unwrap_or(0));
        let out = &mut self.rep.tasks;
        for i in indices {
            let t = &job.tasks[&i];
            let request = fraction_of(self.opts.node_size(), t.cpu, t.mem);
            match t.state {
                State::Running(s) => self.rep.load.add(from_window(s), horizon, request, 1),
                State::Finished { start: None | Some(0), end } => {
                    self.rep.load.add(read_start.min(end), end, request, 1)
                }
                _ => {}
            }
            if keep_all {
                for &(s, e, evicted) in &t.ended {
                    if e > from_window(s) {
                        *if evicted { &mut out.evicted_runs } else { &mut out.ended_runs } += 1;
                        ended.push(request, t.priority, from_window(s), e);
                    }
                }
            }
            let run = match t.state {
                State::Finished { start: Some(s), end: e } if s > 0 => {
                    out.finished += 1;
                    Some((s, e))
                }
                State::Finished { end: e, .. } if keep_all => {
                    out.truncated += 1;
                    Some((read_start.min(e), e))
                }
                State::Finished { .. } => {
                    out.started_before += 1;
                    None
                }
                State::Running(s) if keep_all => {
                    out.truncated += 1;
                    service |= s == 0 && horizon > WINDOW_START;
                    Some((from_window(s), horizon.max(from_window(s))))
                }
                State::Running(_) => {
                    out.unfinished += 1;
                    None
                }
                State::Pending if t.scheduled => {
                    out.unfinished += 1;
                    None
                }
                State::Pending => {
                    out.never_ran += 1;
                    None
                }
                State::Dead if keep_all && t.ended.iter().any(|&(s, e, _)| e > from_window(s)) => {
                    out.ended += 1;
                    None
                }
                State::Dead => {
                    out.abnormal += 1;
                    None
                }
            };
            if let Some((s, e)) = run {
                done.push(request, t.priority, s, e);
            }
        }
        // Events at timestamp 0 happened before the window: such a job arrives when it opens.
        // A job whose run began before the files start (a later part) was there then.
        let first_run = done.first.min(ended.first);
        let submit = from_window(job.submit.unwrap_or(job.first_seen)).min(first_run);
        let kind = if service { JobKind::Service } else { JobKind::Batch };
        if !done.tasks.is_empty() {
            sink(done.job(id, kind, submit, job.sched_class))?;
        }
        // Ended runs arrive when the first of them began (no one waits for their completion).
        if !ended.tasks.is_empty() {
            let first = ended.first;
            sink(ended.job(id, JobKind::Ended, first, job.sched_class))?;
        }
        Ok(())
    }
}

/// A run's start, with "before the window" (timestamp 0) read as the window's start.
fn from_window(t: Micros) -> Micros {
    t.max(WINDOW_START)
}

/// The tasks of one part of a job (its finished or cut runs, or its ended runs).
struct Part {
    tasks: Vec<pliant_workload::Task>,
    /// When its earliest run began.
    first: Micros,
    end: Micros,
    priority: u8,
}

impl Default for Part {
    fn default() -> Self {
        Part { tasks: Vec::new(), first: Micros::MAX, end: 0, priority: 0 }
    }
}

impl Part {
    fn push(&mut self, request: pliant_core::Resources, priority: u8, start: Micros, end: Micros) {
        self.first = self.first.min(start);
        self.end = self.end.max(end);
        self.priority = self.priority.max(priority);
        self.tasks.push(task(request, end - start));
    }

    fn job(self, id: u64, kind: JobKind, submit: Micros, sched_class: Option<u8>) -> TraceJob {
        TraceJob {
            id: kind.name(&id.to_string()),
            submit,
            end: self.end.max(submit),
            priority: self.priority,
            sched_class,
            phases: vec![Phase::independent(self.tasks)],
            class: None,
            elastic: None,
            kind,
        }
    }
}

/// Reads `task_files` (required) and `job_files` (optional, sorted like the
/// task files), handing each finished job to `sink` as soon as it is complete.
pub fn read(
    task_files: Vec<PathBuf>,
    job_files: Vec<PathBuf>,
    opts: &ReadOptions,
    progress: &Progress,
    sink: &mut dyn FnMut(TraceJob) -> Result<(), TraceError>,
) -> Result<GoogleReport, TraceError> {
    let mut tasks = Stream::new(task_files, parse_task);
    let mut jobs = Stream::new(job_files, parse_job);
    let mut r = Reader {
        opts,
        live: HashMap::new(),
        done: HashSet::new(),
        forget: VecDeque::new(),
        ending: VecDeque::new(),
        rep: GoogleReport::default(),
        preemptions: PreemptionCounter::default(),
        last_ts: 0,
        first_ts: None,
    };
    let stop = opts.window.map_or(AFTER_END, |w| w.end.min(AFTER_END));
    let mut next_job = jobs.next(progress, &mut r.rep, opts.strict)?;
    while let Some(e) = tasks.next(progress, &mut r.rep, opts.strict)? {
        if e.ts >= stop {
            if e.ts < AFTER_END {
                break;
            }
            continue;
        }
        while let Some(j) = next_job.take_if(|j| j.ts < e.ts) {
            r.expire(j.ts, sink)?;
            r.apply_job(j);
            next_job = jobs.next(progress, &mut r.rep, opts.strict)?;
        }
        r.expire(e.ts, sink)?;
        r.last_ts = r.last_ts.max(e.ts);
        r.first_ts.get_or_insert(e.ts);
        r.apply_task(e);
    }
    while let Some(j) = next_job.take_if(|j| j.ts < stop) {
        r.expire(j.ts, sink)?;
        r.apply_job(j);
        next_job = jobs.next(progress, &mut r.rep, opts.strict)?;
    }
    r.expire(Micros::MAX, sink)?;
    let horizon = opts.window.map_or(r.last_ts, |w| w.end.min(r.last_ts.max(w.start)));
    let mut rest: Vec<(u64, JobSeen)> = r.live.drain().collect();
    rest.sort_unstable_by_key(|(id, _)| *id);
    for (id, job) in rest {
        r.finish(id, job, horizon, sink)?;
    }
    r.rep.evictions = r.preemptions.table();
    Ok(r.rep)
}
