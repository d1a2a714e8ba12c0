//! The manager's record of jobs and tasks, as the API shows them with where
//! each task stands in the core's books. It follows the core's actions and
//! the events the core is told, so it is rebuilt exactly by replaying the journal.

use crate::events::JobSpec;
use pliant_core::model::{JobId, TaskRef, TaskState};
use pliant_core::{Micros, Scheduler};
use pliant_live::mirror::{Shown, Standing, Status, TaskMirror};
use serde::Serialize;
use std::collections::BTreeMap;

/// Where a job stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum JobState {
    /// No task has started yet (or all were requeued).
    Pending,
    /// Some task holds resources on a node.
    Running,
    /// Every task finished.
    Finished,
    /// A task failed (see its exit code) or the job ran out of attempts.
    Failed,
    /// A user cancelled it.
    Cancelled,
}

/// One task.
#[derive(Debug, Clone, Serialize)]
pub struct TaskView {
    /// Index in its job.
    pub index: u32,
    /// What the manager keeps of it beside the core's books: where it
    /// stands is [`TaskView::standing`].
    #[serde(skip)]
    pub mirror: TaskMirror,
    /// How many times it was started.
    pub launches: u32,
    /// When it first started (µs since the manager's epoch).
    pub first_start_us: Option<Micros>,
    /// When its current (or last) attempt started.
    pub start_us: Option<Micros>,
    /// When it finished or failed.
    pub end_us: Option<Micros>,
    /// Its exit code, once it exited by itself.
    pub exit_code: Option<i32>,
    /// The signal that killed it, if one did.
    pub signal: Option<i32>,
    /// The last lines of its stderr, when it failed.
    pub stderr_tail: Option<String>,
    /// Preemptions suffered, by mechanism.
    pub preemptions: BTreeMap<String, u32>,
    /// Each preemption suffered, in order: when, and by which mechanism.
    pub preempted: Vec<Preempted>,
    /// Memory (MB) its limits gave back so far (what the scheduler books as free).
    pub reclaimed_mb: u64,
    /// Memory (MB) its cgroup's usage dropped by when its limits were
    /// lowered: what its node really got back.
    pub freed_mb: u64,
    /// Time the kernel took to reclaim it, summed (ms).
    pub reclaim_ms: u64,
    /// Checkpoints it saved (each one then restored it from its checkpoint directory).
    pub checkpoints: u32,
    /// Why it was last requeued without finishing (a failed checkpoint, a lost agent…).
    pub lost_reason: Option<String>,
}

/// One preemption of a task.
#[derive(Debug, Clone, Serialize)]
pub struct Preempted {
    /// When the manager ordered it (µs since the manager's epoch).
    pub at_us: Micros,
    /// The mechanism (`kill`, `suspend`, `graceful`, `checkpoint`…).
    pub mechanism: String,
}

impl TaskView {
    /// Where it stands, given the core that books it (its job is `job`).
    pub fn standing(&self, job: u32, core: &Scheduler) -> Standing {
        self.mirror.standing(core.task(TaskRef { job: JobId(job), task: self.index }))
    }
}

/// One job; it serialises without its tasks ([`JobShown`] has them).
#[derive(Debug, Clone, Serialize)]
pub struct JobView {
    /// Its id.
    pub id: u32,
    /// What was submitted.
    #[serde(flatten)]
    pub spec: JobSpec,
    /// Where it stands.
    pub state: JobState,
    /// Submission time (µs since the manager's epoch).
    pub submit_us: Micros,
    /// When its first task first started.
    pub first_start_us: Option<Micros>,
    /// When it ended.
    pub end_us: Option<Micros>,
    /// The uid its tasks run as on nodes that run each job as a user of its own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uid: Option<u32>,
    /// Its tasks.
    #[serde(skip)]
    pub tasks: Vec<TaskView>,
}

/// A job as the API shows it: its record and its tasks, each with where it stands.
#[derive(Debug, Clone, Serialize)]
pub struct JobShown {
    /// The job.
    #[serde(flatten)]
    pub job: JobView,
    /// Its tasks.
    pub tasks: Vec<Shown<TaskView>>,
}

impl JobShown {
    /// `job` as it stands in `core`'s books.
    pub fn of(job: &JobView, core: &Scheduler) -> JobShown {
        let shown = |t: &TaskView| Shown { standing: t.standing(job.id, core), record: t.clone() };
        JobShown { tasks: job.tasks.iter().map(shown).collect(), job: JobView { tasks: Vec::new(), ..job.clone() } }
    }
}

impl JobView {
    /// A new job, all tasks pending, its tasks to run as `uid`.
    pub fn new(id: JobId, spec: JobSpec, now: Micros, uid: Option<u32>) -> JobView {
        let tasks = (0..spec.tasks)
            .map(|index| TaskView {
                index,
                mirror: TaskMirror::default(),
                launches: 0,
                first_start_us: None,
                start_us: None,
                end_us: None,
                exit_code: None,
                signal: None,
                stderr_tail: None,
                preemptions: BTreeMap::new(),
                preempted: Vec::new(),
                reclaimed_mb: 0,
                freed_mb: 0,
                reclaim_ms: 0,
                checkpoints: 0,
                lost_reason: None,
            })
            .collect();
        JobView {
            id: id.0,
            spec,
            state: JobState::Pending,
            submit_us: now,
            first_start_us: None,
            end_us: None,
            uid,
            tasks,
        }
    }

    /// True once the job has finished, failed or been cancelled.
    pub fn is_over(&self) -> bool {
        matches!(self.state, JobState::Finished | JobState::Failed | JobState::Cancelled)
    }

    /// Ends the job: every task that has not ended fails, or is cancelled
    /// with it; one that ran keeps the node it ran on (in `core`'s books).
    pub fn end(&mut self, state: JobState, now: Micros, core: &Scheduler) {
        let ended = if state == JobState::Cancelled { Status::CANCELLED } else { Status::of(TaskState::Failed) };
        for t in self.tasks.iter_mut().filter(|t| t.mirror.ended.is_none()) {
            t.mirror.end(ended, core.task(TaskRef { job: JobId(self.id), task: t.index }));
            t.end_us = Some(now);
        }
        self.state = state;
        self.end_us = Some(now);
    }

    /// Recomputes `state` for a job that has not ended, from where its
    /// tasks stand in `core`'s books.
    pub fn refresh(&mut self, now: Micros, core: &Scheduler) {
        if self.is_over() {
            return;
        }
        let standing = |t: &TaskView| t.standing(self.id, core);
        if self.tasks.iter().all(|t| standing(t).state == Status::of(TaskState::Finished)) {
            self.state = JobState::Finished;
            self.end_us = Some(now);
        } else if self.tasks.iter().any(|t| standing(t).holds_resources()) {
            self.state = JobState::Running;
        } else {
            self.state = JobState::Pending;
        }
    }
}
