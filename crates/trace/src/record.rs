//! What every reader produces: a job in pliant's model plus what the trace
//! said about it that the model has no field for.

use pliant_core::model::{ElasticityProfile, JobClass};
use pliant_core::{Micros, Resources};
use pliant_workload::{JobElasticity, Phase};

/// Options every reader takes.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadOptions {
    /// The machine that normalised requests are fractions of (Google's 1.0,
    /// Alibaba's memory 100 %). `None`: the format's own
    /// ([`crate::Format::default_node`]: ⟨32 CPU, 128 GB⟩, BIG-C's node, or
    /// Alibaba v2017's 64-CPU machine).
    pub node: Option<Resources>,
    /// Only trace time `[start, end)` is read; events after `end` are not.
    pub window: Option<Window>,
    /// What becomes of runs with no complete span inside the window, and of
    /// runs ended by failing, being killed or lost.
    pub unfinished: Unfinished,
    /// Stop at the first bad row instead of skipping and counting it.
    pub strict: bool,
    /// The penalty model of SLS task classes that name none (DSS's `PENALTY IB`
    /// command-line arguments); `None`: such tasks are not elastic.
    pub penalty: Option<ElasticityProfile>,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions { node: None, window: None, unfinished: Unfinished::Truncate, strict: false, penalty: None }
    }
}

impl ReadOptions {
    /// The machine requests are fractions of ([`DEFAULT_NODE`] when unset).
    pub fn node_size(&self) -> Resources {
        self.node.unwrap_or(DEFAULT_NODE)
    }
}

/// ⟨32 CPU, 128 GB⟩: the default size of the largest machine of a trace.
pub const DEFAULT_NODE: Resources = Resources::cores_gb(32, 128);

/// A span of trace time, `[start, end)`, in microseconds of trace time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// First instant kept.
    pub start: Micros,
    /// First instant no longer kept.
    pub end: Micros,
}

impl Window {
    /// True when `t` lies inside the window.
    pub fn contains(&self, t: Micros) -> bool {
        self.start <= t && t < self.end
    }
}

/// Runs that do not finish inside the window (still running at its end, or
/// begun before the trace started) and runs that ended by failing, being
/// killed or lost. Every such run held its machine while it ran, so by
/// default it is kept: a replay then carries the trace's load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Unfinished {
    /// Only complete, finished runs (`--finished-only`); the others are
    /// counted in the report.
    Drop,
    /// Keep them with the part of their run that the window shows (the default).
    #[default]
    Truncate,
}

/// What a trace job stands for, so that a report can keep apart the jobs
/// that have no completion time. The kind travels in the job's name (a
/// suffix, [`JobKind::name`]), so it survives a native file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum JobKind {
    /// An ordinary job: its tasks' finished or cut runs.
    #[default]
    Batch,
    /// A long-running service: a task of it ran from before the window opened
    /// to after it closed. It holds room; it has no job completion time.
    Service,
    /// The runs of a trace job that ended by failing, being killed or lost:
    /// they held room for as long as they ran; they completed nothing.
    Ended,
}

impl JobKind {
    /// The name suffixes of the kinds other than [`JobKind::Batch`].
    const SUFFIXES: [(JobKind, &'static str); 2] = [(JobKind::Service, "@service"), (JobKind::Ended, "@ended")];

    /// The workload name of trace job `id` of this kind.
    pub fn name(self, id: &str) -> String {
        match Self::SUFFIXES.iter().find(|(k, _)| *k == self) {
            Some((_, suffix)) => format!("{id}{suffix}"),
            None => id.to_owned(),
        }
    }

    /// The kind of a workload job named `name`, and its trace job ID.
    pub fn of(name: &str) -> (JobKind, &str) {
        Self::SUFFIXES
            .iter()
            .find_map(|(k, suffix)| name.strip_suffix(suffix).map(|id| (*k, id)))
            .unwrap_or((JobKind::Batch, name))
    }
}

/// One job as read from a trace.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceJob {
    /// The trace's own job identifier.
    pub id: String,
    /// Submission time (trace time).
    pub submit: Micros,
    /// When its last kept task ended (trace time); `end - submit` is the
    /// job's duration in the trace.
    pub end: Micros,
    /// Priority 0–11.
    pub priority: u8,
    /// Google's scheduling class (0–3, latency sensitivity), where the trace has one.
    pub sched_class: Option<u8>,
    /// The job's phases; every task's estimate is its duration.
    pub phases: Vec<Phase>,
    /// The class the trace gives the job, where it has one (a native file; a
    /// DSS trace, whose jobs are all YARN-ME's batch jobs); `None`: the
    /// loader's [`crate::ClassRule`] decides.
    pub class: Option<JobClass>,
    /// Memory elasticity, where the trace gives it (DSS's `c.penalty`, `c.ib`).
    pub elastic: Option<JobElasticity>,
    /// Batch job, service, or runs that ended without finishing.
    pub kind: JobKind,
}

impl TraceJob {
    /// Number of tasks.
    pub fn task_count(&self) -> usize {
        self.phases.iter().map(|p| p.tasks.len()).sum()
    }

    /// Sum of the tasks' run times (task-time).
    pub fn task_time(&self) -> Micros {
        self.phases.iter().flat_map(|p| &p.tasks).map(|t| t.duration).sum()
    }

    /// CPU-time at full allocation: Σ requested CPU × run time, in core-seconds.
    pub fn core_seconds(&self) -> f64 {
        self.phases
            .iter()
            .flat_map(|p| &p.tasks)
            .map(|t| t.request.cpu_milli as f64 / 1000.0 * t.duration as f64 / 1e6)
            .sum()
    }

    /// `end - submit`.
    pub fn duration(&self) -> Micros {
        self.end.saturating_sub(self.submit)
    }
}

/// A task with a request and duration, and its estimate set to its duration
/// (a trace has no owner's estimate; the truth is the best one available).
pub fn task(request: Resources, duration: Micros) -> pliant_workload::Task {
    let duration = duration.max(1);
    pliant_workload::Task { request, duration, estimate: Some(duration) }
}

/// A fraction of a machine's capacity, rounded up, at least 1 (pliant rejects
/// empty requests). Fractions outside 0..=1 are clamped.
pub fn fraction_of(node: Resources, cpu: f64, mem: f64) -> Resources {
    let part = |x: f64, cap: u64| ((x.clamp(0.0, 1.0) * cap as f64).ceil() as u64).clamp(1, cap.max(1));
    Resources::new(part(cpu, node.cpu_milli), part(mem, node.mem_mb))
}

/// How the tasks of a trace ended up, counted by reason.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TaskOutcomes {
    /// Kept with a complete run.
    pub finished: u64,
    /// Kept, with their run cut at the window's end or the trace's start.
    pub truncated: u64,
    /// Kept, with their last run ended by failing, being killed or lost.
    pub ended: u64,
    /// Runs kept that ended by failing, being killed or lost, each a task of
    /// its job's [`JobKind::Ended`] part (a task may have several, and runs
    /// before a finished one count too). Runs, not tasks: not in [`Self::total`].
    pub ended_runs: u64,
    /// Runs kept that ended by an eviction (Google), as [`Self::ended_runs`].
    pub evicted_runs: u64,
    /// Dropped: still running or pending at the end of the window.
    pub unfinished: u64,
    /// Dropped: their last run began before the trace window (timestamp 0 or unseen).
    pub started_before: u64,
    /// Dropped: they ended by failing, being killed or lost, not by finishing
    /// (with `--finished-only`, or when no run of theirs is in the window).
    pub abnormal: u64,
    /// Dropped: never scheduled inside the window.
    pub never_ran: u64,
}

impl TaskOutcomes {
    /// Every task counted.
    pub fn total(&self) -> u64 {
        self.finished
            + self.truncated
            + self.ended
            + self.unfinished
            + self.started_before
            + self.abnormal
            + self.never_ran
    }

    /// Tasks left out of the workload.
    pub fn dropped(&self) -> u64 {
        self.unfinished + self.started_before + self.abnormal + self.never_ran
    }
}
