//! `pliant trace stats`: what is in a trace. Counts, arrivals over time,
//! percentiles of durations and sizes, the share of short jobs, the share of
//! task-time taken by the longest 10 % of jobs, the requested load over time
//! as a share of the cluster's capacity (the trace's, every run when it ran,
//! next to the replay's, every kept task from its job's submission), the
//! jobs, tasks and runs kept and dropped per reason, and (Google) evictions
//! per priority band.
//!
//! Definitions: a job's duration is submission → last kept task end; its
//! task-time is the sum of its kept tasks' run times. Percentiles are
//! nearest-rank (the value at position ⌈p·n⌉ of the sorted list). The
//! longest 10 % are the ⌈n/10⌉ jobs of largest duration (ties: larger
//! task-time first).

use crate::classify::ClassRule;
use crate::detect::detect;
use crate::detect::Format;
use crate::error::TraceError;
use crate::input::Progress;
use crate::load::{own_machines, read_trace, ReadReport};
use crate::preemption::PAPER_SHARES;
use crate::record::{JobKind, ReadOptions};
use crate::timeline::LoadTimeline;
use pliant_core::model::JobClass;
use pliant_core::model::PriorityLevel;
use pliant_core::{Micros, Resources, SECOND};
use pliant_metrics::percentile;
use std::fmt;
use std::path::PathBuf;

/// Options of a statistics pass.
#[derive(Debug, Clone, PartialEq)]
pub struct StatsOptions {
    /// Reader options (node size, window, unfinished tasks, strictness).
    pub read: ReadOptions,
    /// The short-vs-long rule.
    pub classes: ClassRule,
    /// Width of an arrival-rate bucket (default 10 minutes).
    pub bucket: Micros,
    /// Draw a progress bar on stderr (only when it is a terminal).
    pub progress: bool,
}

impl Default for StatsOptions {
    fn default() -> Self {
        StatsOptions {
            read: ReadOptions::default(),
            classes: ClassRule::default(),
            bucket: 600 * SECOND,
            progress: false,
        }
    }
}

/// Summary of a sample: nearest-rank percentiles, mean and maximum.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Summary {
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Largest value.
    pub max: f64,
    /// Mean.
    pub mean: f64,
}

impl Summary {
    /// Summarises `values` (sorted here).
    pub fn of(mut values: Vec<f64>) -> Summary {
        values.sort_by(f64::total_cmp);
        let mean = if values.is_empty() { 0.0 } else { values.iter().sum::<f64>() / values.len() as f64 };
        Summary {
            p50: percentile(&values, 50.0),
            p90: percentile(&values, 90.0),
            p99: percentile(&values, 99.0),
            max: values.last().copied().unwrap_or(0.0),
            mean,
        }
    }
}

/// The statistics of one trace.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceStats {
    /// What the read found (rows, bad rows, tasks kept and dropped, evictions).
    pub read: ReadReport,
    /// Jobs with at least one kept task.
    pub jobs: u64,
    /// Kept tasks.
    pub tasks: u64,
    /// Width of an arrival bucket.
    pub bucket: Micros,
    /// Jobs submitted in each bucket, from time 0 to the last submission.
    pub arrivals: Vec<u64>,
    /// Job durations, seconds.
    pub job_duration: Summary,
    /// Tasks per job.
    pub tasks_per_job: Summary,
    /// Task run times, seconds.
    pub task_duration: Summary,
    /// Task CPU requests, cores.
    pub task_cpu: Summary,
    /// Task memory requests, MB.
    pub task_mem: Summary,
    /// Short jobs under the rule.
    pub short: u64,
    /// The rule used.
    pub rule: ClassRule,
    /// Share of all task-time used by the longest 10 % of jobs.
    pub top10_task_time: f64,
    /// The replay's requested load: each kept task from its job's submission for its duration.
    pub replay_load: LoadTimeline,
    /// The cluster the load is a share of: its machines, their total
    /// capacity, and whether they come from the trace's machine table.
    pub capacity: (u64, Resources, bool),
    /// The machine requests are fractions of.
    pub node: Resources,
    /// Long-running services among the jobs.
    pub services: u64,
    /// Jobs of runs that ended by failing, being killed or lost.
    pub ended: u64,
}

/// Reads `paths` once and computes their statistics.
pub fn trace_stats(paths: &[PathBuf], opts: &StatsOptions) -> Result<TraceStats, TraceError> {
    let inputs = detect(paths)?;
    let progress = Progress::new(opts.progress, &inputs.all());
    let bucket = opts.bucket.max(1);
    let mut arrivals: Vec<u64> = Vec::new();
    let mut jobs: Vec<(Micros, Micros, f64)> = Vec::new();
    let (mut task_s, mut cpu, mut mem) = (Vec::new(), Vec::new(), Vec::new());
    let mut short = 0;
    let mut replay_load = LoadTimeline::default();
    let (mut services, mut ended) = (0, 0);
    let capacity = match own_machines(&inputs, &opts.read, &progress)? {
        Some((c, _)) => (c.nodes.len() as u64, c.nodes.iter().fold(Resources::new(0, 0), |a, &n| a + n), true),
        None => {
            let (n, node) = (machines(inputs.format), opts.read.node.unwrap_or(inputs.format.default_node()));
            (u64::from(n), Resources::new(node.cpu_milli * u64::from(n), node.mem_mb * u64::from(n)), false)
        }
    };
    let read = read_trace(&inputs, &opts.read, &progress, &mut |j| {
        for t in j.phases.iter().flat_map(|p| &p.tasks) {
            replay_load.add(j.submit, j.submit + t.duration, t.request, 1);
        }
        match j.kind {
            JobKind::Service => services += 1,
            JobKind::Ended => ended += 1,
            JobKind::Batch => {}
        }
        let b = usize::try_from(j.submit / bucket).unwrap_or(usize::MAX).min(1 << 24);
        if arrivals.len() <= b {
            arrivals.resize(b + 1, 0);
        }
        arrivals[b] += 1;
        short += u64::from(j.kind == JobKind::Batch && opts.classes.classify(&j) == JobClass::Short);
        for t in j.phases.iter().flat_map(|p| &p.tasks) {
            task_s.push(t.duration as f64 / 1e6);
            cpu.push(t.request.cpu_milli as f64 / 1000.0);
            mem.push(t.request.mem_mb as f64);
        }
        jobs.push((j.duration(), j.task_time(), j.task_count() as f64));
        Ok(())
    })?;
    progress.finish();
    jobs.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
    let total: u128 = jobs.iter().map(|j| u128::from(j.1)).sum();
    let top: u128 = jobs.iter().take(jobs.len().div_ceil(10)).map(|j| u128::from(j.1)).sum();
    Ok(TraceStats {
        read,
        jobs: jobs.len() as u64,
        tasks: task_s.len() as u64,
        bucket,
        arrivals,
        job_duration: Summary::of(jobs.iter().map(|j| j.0 as f64 / 1e6).collect()),
        tasks_per_job: Summary::of(jobs.iter().map(|j| j.2).collect()),
        task_duration: Summary::of(task_s),
        task_cpu: Summary::of(cpu),
        task_mem: Summary::of(mem),
        short,
        rule: opts.classes,
        top10_task_time: if total == 0 { 0.0 } else { top as f64 / total as f64 },
        replay_load,
        capacity,
        node: opts.read.node.unwrap_or(inputs.format.default_node()),
        services,
        ended,
    })
}

/// Machines a trace of `format` was recorded on (uniform, of the node size:
/// the traces read give no machine table); 0 when the format does not say.
fn machines(format: Format) -> u32 {
    match format {
        Format::Google2011 => crate::google2011::MACHINES,
        Format::Alibaba2018 => crate::alibaba::MACHINES_2018,
        Format::Alibaba2017 => crate::alibaba::MACHINES_2017,
        Format::Native | Format::Sls => 0,
    }
}

impl TraceStats {
    /// The load table: per bucket of the trace's load timeline, requested
    /// CPU and memory as a share of the capacity, the trace's and the replay's.
    fn write_load(&self, f: &mut fmt::Formatter<'_>, trace: &LoadTimeline) -> fmt::Result {
        let (n, total, own) = self.capacity;
        let (cores, mb) = (total.cpu_milli as f64 / 1000.0, total.mem_mb as f64);
        let Some(span) = trace.span else { return Ok(()) };
        let machines = if own {
            format!("the trace's {n} machines ({total})")
        } else {
            format!("{n} uniform machines of {} (the trace gives no machine table)", self.node)
        };
        writeln!(f)?;
        writeln!(f, "requested load, % of {machines}: the trace's runs when")?;
        writeln!(f, "they ran, next to the replay's (each kept task from its job's submission)")?;
        writeln!(f, "  {:>9}  {:>10}{:>10}  {:>10}{:>10}", "from", "trace CPU", "replay", "trace mem", "replay")?;
        let share = |x: f64, cap: f64| if cap > 0.0 { 100.0 * x / cap } else { 0.0 };
        for i in (span.0 / trace.bucket) as usize..=((span.1 - 1) / trace.bucket) as usize {
            let (tc, tm) = trace.mean_at(i, span);
            let (rc, rm) = self.replay_load.mean_at(i, span);
            writeln!(
                f,
                "  {:>7.0} s  {:>9.1}%{:>9.1}%  {:>9.1}%{:>9.1}%",
                (i as u64 * trace.bucket) as f64 / 1e6,
                share(tc, cores),
                share(rc, cores),
                share(tm, mb),
                share(rm, mb)
            )?;
        }
        writeln!(
            f,
            "  {:>9}  {:>9.1}%{:>9.1}%",
            "mean",
            share(trace.mean_cpu(Some(span)), cores),
            share(self.replay_load.mean_cpu(Some(span)), cores)
        )
    }
}

impl TraceStats {
    /// Kept jobs that are neither services nor jobs of ended runs.
    pub fn batch_jobs(&self) -> u64 {
        self.jobs - self.services - self.ended
    }
}

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

impl fmt::Display for TraceStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = &self.read;
        let t = &r.tasks;
        writeln!(
            f,
            "format        {} ({} files, {} rows, {} bad rows skipped)",
            r.format.name(),
            r.files,
            r.rows,
            r.bad.count
        )?;
        for e in &r.bad.examples {
            writeln!(f, "              {e}")?;
        }
        writeln!(
            f,
            "jobs          {} in the trace; {} kept: {} batch, {} services, {} of runs that ended failed/killed/lost \
             (a job's such runs are a job of their own, so a job of the trace can be kept twice)",
            r.jobs_in_trace,
            self.jobs,
            self.batch_jobs(),
            self.services,
            self.ended
        )?;
        writeln!(
            f,
            "tasks         {} in the trace, {} kept: {} finished, {} cut by the window, {} ended failed/killed/lost",
            t.total(),
            t.finished + t.truncated + t.ended,
            t.finished,
            t.truncated,
            t.ended
        )?;
        writeln!(
            f,
            "runs          {} kept that ended failed/killed/lost, {} that ended evicted, as tasks of their own",
            t.ended_runs, t.evicted_runs
        )?;
        writeln!(
            f,
            "dropped tasks {} unfinished in the window, {} started before it, {} failed/killed/lost, {} never ran",
            t.unfinished, t.started_before, t.abnormal, t.never_ran
        )?;
        if r.late_events > 0 {
            writeln!(f, "late events   {} (task events after their job ended; ignored)", r.late_events)?;
        }
        writeln!(
            f,
            "short jobs    {:.1} % ({} of {} batch jobs; short = {})",
            pct(self.short, self.batch_jobs()),
            self.short,
            self.batch_jobs(),
            self.rule
        )?;
        writeln!(
            f,
            "top 10 %      the longest 10 % of jobs use {:.1} % of all task-time",
            100.0 * self.top10_task_time
        )?;
        writeln!(f)?;
        writeln!(f, "{:<22}{:>10}{:>10}{:>10}{:>12}{:>10}", "", "p50", "p90", "p99", "max", "mean")?;
        for (name, s) in [
            ("job duration (s)", self.job_duration),
            ("tasks per job", self.tasks_per_job),
            ("task duration (s)", self.task_duration),
            ("task CPU (cores)", self.task_cpu),
            ("task memory (MB)", self.task_mem),
        ] {
            writeln!(f, "{name:<22}{:>10.2}{:>10.2}{:>10.2}{:>12.2}{:>10.2}", s.p50, s.p90, s.p99, s.max, s.mean)?;
        }
        writeln!(f)?;
        let width = self.bucket as f64 / 1e6;
        writeln!(f, "arrivals (jobs per {width} s of trace time, from the first submission's; per minute)")?;
        let peak = self.arrivals.iter().copied().max().unwrap_or(0).max(1);
        let first = self.arrivals.iter().position(|&n| n > 0).unwrap_or(0);
        for (i, n) in self.arrivals.iter().enumerate().skip(first) {
            let bar = "#".repeat((40 * n).div_ceil(peak) as usize);
            writeln!(f, "  {:>9.0} s {:>8} {:>8.2}/min {bar}", i as f64 * width, n, *n as f64 * 60.0 / width)?;
        }
        if let Some(load) = &r.load {
            self.write_load(f, load)?;
        }
        if let Some(e) = &r.evictions {
            writeln!(f)?;
            writeln!(f, "evictions per priority band (checkpoint paper §2, Table 1: an eviction is a preemption")?;
            writeln!(f, "when a higher-priority task is scheduled on its machine within 5 s; share = preemptions")?;
            writeln!(f, "per scheduled task; the paper's share is for the whole 29-day trace; lost = core-hours")?;
            writeln!(f, "of the runs that evictions ended)")?;
            writeln!(
                f,
                "  {:<20}{:>12}{:>12}{:>12}{:>10}{:>10}{:>14}",
                "band", "scheduled", "evictions", "preempted", "share", "paper", "lost core-h"
            )?;
            for b in PriorityLevel::ALL {
                let i = b.index();
                writeln!(
                    f,
                    "  {:<20}{:>12}{:>12}{:>12}{:>9.2}%{:>9.2}%{:>14.1}",
                    b.label(),
                    e.schedules[i],
                    e.evictions[i],
                    e.preemptions[i],
                    100.0 * e.preempted_share(b),
                    100.0 * PAPER_SHARES[i],
                    e.evicted_core_seconds[i] / 3600.0
                )?;
            }
        }
        Ok(())
    }
}
