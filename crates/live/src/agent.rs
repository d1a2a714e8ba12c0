//! The node agent: it holds this node's tasks, each a process tree in its own
//! cgroup under the agent's top cgroup, carries out the manager's operations
//! on them with the mechanisms, and reports what happens.

use crate::capabilities::Capabilities;
use crate::cgroup::{Cgroup, CgroupError, Layout};
use crate::confine::Confinement;
use crate::executor::{Rules, TaskMemory, RESTORE_SETTLE};
use crate::mechanism::{Allocation, CheckpointOutcome, LiveTask, MechanismError};
use crate::process::{describe, CommandSpec};
use crate::protocol::{files, AgentOp, AgentReport, Expected};
use crate::task_dir;
use crate::task_files::tail;
use pliant_core::model::TaskRef;
use pliant_core::MechanismKind;
use pliant_core::Resources;
use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What this agent does differently from the Slurm node's
/// ([`crate::slurm_node`]): it thaws a resumed task itself, so a task whose
/// swap has not gone down within [`RESTORE_SETTLE`] of the resume does not
/// touch what is there. Its limit writes may stall for 10 s, shrinking or
/// frozen: the patience its live tests and `docs/live.md`'s figures were
/// measured with.
pub const RULES: Rules = Rules {
    stall: Duration::from_secs(10),
    patience: Duration::from_secs(10),
    cold: RESTORE_SETTLE,
    name: |task| task.to_string(),
};
/// Bytes of stderr a failure report carries.
const STDERR_TAIL: u64 = 2048;
/// How long a task asked to checkpoint has, unless the agent is told
/// otherwise, to save its state and exit before it is killed and reported lost.
pub const DEFAULT_CHECKPOINT_GRACE: Duration = Duration::from_secs(20);

/// Something went wrong on the node itself (not with one task).
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The cgroup hierarchy could not be used.
    #[error(transparent)]
    Cgroup(#[from] CgroupError),
    /// The machine could not be inspected.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

struct HeldTask {
    live: LiveTask,
    log_dir: PathBuf,
    /// Asked to checkpoint: it must have exited by then.
    checkpoint_by: Option<Instant>,
    /// Its memory under the executor: lowered, watched, restored.
    memory: TaskMemory,
}

impl HeldTask {
    fn new(live: LiveTask, log_dir: PathBuf) -> HeldTask {
        let memory = TaskMemory::new(live.limits().mem_bytes, &RULES);
        HeldTask { live, log_dir, checkpoint_by: None, memory }
    }

    /// Lifts the task's limits to `limits` and thaws it: it is reported
    /// resumed once its swapped-out memory is back ([`Agent::poll`]), as the
    /// simulator reports a resume after its restore.
    fn resume(&mut self, task: TaskRef, limits: Resources, out: &mut Vec<AgentReport>) -> Result<(), MechanismError> {
        let to = allocation(limits);
        self.memory.resume(task, &mut self.live, to.mem_bytes, |live| live.resume_to(to), out)
    }

    /// Asks the task to checkpoint within `grace`, unless it was asked already.
    fn request_checkpoint(&mut self, grace: Duration) -> Result<(), MechanismError> {
        if self.checkpoint_by.is_none() {
            self.checkpoint_by = Some(Instant::now() + grace);
            self.live.request_checkpoint()?;
        }
        Ok(())
    }

    /// Kills what is left of the task and removes its cgroup, once the limit
    /// write under way (which ends with nothing left to reclaim) is over.
    fn remove(mut self) -> Result<(), MechanismError> {
        self.live.cgroup().kill_all()?;
        self.memory.settle();
        self.live.remove()
    }
}

/// One node's agent.
pub struct Agent {
    tasks: BTreeMap<TaskRef, HeldTask>,
    /// Tasks that ended and were reported, kept (their cgroup and exit file)
    /// until the manager has the report: an agent killed before then leaves
    /// the next one an empty cgroup whose exit file says how the task ended.
    /// `None`: a task found ended when taken over (only its cgroup is left).
    ended: BTreeMap<TaskRef, Option<HeldTask>>,
    top: Cgroup,
    caps: Capabilities,
    checkpoint_grace: Duration,
    /// Tasks the manager named in [`AgentOp::Adopt`] since the last
    /// [`AgentOp::Sweep`]: the sweep stops every other task held.
    adopted: BTreeSet<TaskRef>,
    /// The most bytes a task's output file (any file it writes) may hold.
    max_output: Option<u64>,
    /// The user tasks run as and the processes each may hold.
    confinement: Confinement,
    /// Whether the tasks that ended keep their cgroups when the agent is
    /// dropped ([`Agent::keep_ended`]).
    keep_ended: bool,
}

impl Drop for Agent {
    /// Stops every task (frozen ones too) and removes its cgroup; the top
    /// cgroup goes after them, unless the tasks that ended are kept.
    fn drop(&mut self) {
        let keep = self.keep_ended && !self.ended.is_empty();
        if keep {
            for held in std::mem::take(&mut self.ended).into_values().flatten() {
                std::mem::forget(held);
            }
        } else {
            self.forget_ended();
        }
        for (task, held) in std::mem::take(&mut self.tasks) {
            if let Err(e) = self.retire(task, held) {
                eprintln!("pliant agent: {task}: {e}");
            }
        }
        if keep {
            self.top.keep();
        }
    }
}

/// The cgroup name of a task.
fn cgroup_name(task: TaskRef) -> String {
    format!("job{}-task{}", task.job.0, task.task)
}

fn allocation(r: Resources) -> Allocation {
    Allocation { cpu_milli: r.cpu_milli, mem_bytes: r.mem_mb << 20 }
}

impl Agent {
    /// Starts the agent in the top cgroup `name`. With `keep_tasks` a cgroup
    /// left by an earlier agent is taken over with its tasks (the manager
    /// then sends [`AgentOp::Adopt`] and [`AgentOp::Sweep`]); without, it is
    /// removed with everything in it (a killed agent's leftovers). A task
    /// asked to checkpoint has `checkpoint_grace` to save and exit. Returns
    /// the agent and whether a leftover cgroup was found.
    pub fn start(
        layout: &Layout,
        name: &str,
        keep_tasks: bool,
        checkpoint_grace: Duration,
    ) -> Result<(Agent, bool), AgentError> {
        let kept = if keep_tasks { layout.open(name) } else { None };
        let (top, found) = match kept {
            Some(top) => (top, true),
            None => layout.create_fresh(name)?,
        };
        let caps = Capabilities::detect(&top)?;
        let agent = Agent {
            tasks: BTreeMap::new(),
            ended: BTreeMap::new(),
            top,
            caps,
            checkpoint_grace,
            adopted: BTreeSet::new(),
            max_output: None,
            confinement: Confinement::default(),
            keep_ended: false,
        };
        Ok((agent, found))
    }

    /// Caps each file the tasks launched from now on write, their output
    /// first, at `bytes` (`None`: no cap); an output that reaches it ends
    /// with [`OUTPUT_CUT`] once its task has exited.
    pub fn set_max_output(&mut self, bytes: Option<u64>) {
        self.max_output = bytes;
    }

    /// Confines the tasks launched from now on as `confinement` says.
    /// Returns a note for the operator when this node cannot bound a task's
    /// processes (no pids controller), which tasks then run without.
    pub fn confine(&mut self, confinement: Confinement) -> Option<String> {
        let unbounded = confinement.max_pids.is_some() && !self.top.controllers().pids;
        // Root "confines" in nothing: its tasks keep the manager's paths.
        self.confinement = Confinement { user: confinement.user.filter(|u| !u.is_root()), ..confinement };
        unbounded.then(|| "no pids controller here: a task's processes are not bounded".to_string())
    }

    /// Where a task keeps its checkpoints: where the manager says, or, for a
    /// task run as another user, in its own directory, the one place below
    /// the agent's private directories that it can reach.
    fn checkpoint_dir_of(&self, log_dir: &Path, checkpoint_dir: PathBuf) -> PathBuf {
        if self.confinement.as_other_user() {
            log_dir.join(task_dir::CHECKPOINT)
        } else {
            checkpoint_dir
        }
    }

    /// Ends a run for good: what is left of it is killed and its cgroup
    /// removed; then a task run as another user has its directory taken
    /// back ([`task_dir::take_back`]).
    fn retire(&self, task: TaskRef, held: HeldTask) -> Result<(), MechanismError> {
        let log_dir = held.log_dir.clone();
        held.remove()?;
        self.take_back(task, &log_dir);
        Ok(())
    }

    /// Takes back the directory of `task`, whose processes are all gone,
    /// from its user (when tasks run as another user than the agent's).
    fn take_back(&self, task: TaskRef, log_dir: &Path) {
        if self.confinement.as_other_user() {
            if let Err(e) = task_dir::take_back(log_dir) {
                eprintln!("pliant agent: {task}: taking its directory back: {e}");
            }
        }
    }

    /// What this node can do.
    pub fn capabilities(&self) -> &Capabilities {
        &self.caps
    }

    /// The tasks the agent holds.
    pub fn tasks(&self) -> impl Iterator<Item = TaskRef> + '_ {
        self.tasks.keys().copied()
    }

    /// The manager has the reports of the tasks that ended: their cgroups go.
    pub fn forget_ended(&mut self) {
        for (task, held) in std::mem::take(&mut self.ended) {
            let removed = match held {
                Some(held) => self.retire(task, held),
                None => self.top.open_child(&cgroup_name(task)).map_or(Ok(()), |c| c.remove().map_err(Into::into)),
            };
            if let Err(e) = removed {
                eprintln!("pliant agent: {task}: {e}");
            }
        }
    }

    /// Leaves the cgroups and exit files of the tasks that ended, and the
    /// top cgroup that holds them, to the next agent when this one is
    /// dropped (the tasks that run are stopped as ever): the manager may not
    /// have taken their reports (it could not journal them), and the next
    /// agent reports them again from there.
    pub fn keep_ended(&mut self) {
        self.keep_ended = true;
    }

    /// Carries out one operation; appends what followed to `out`, the
    /// reports not yet delivered (a launch drops those of its task).
    pub fn apply(&mut self, op: AgentOp, out: &mut Vec<AgentReport>) {
        let launch = matches!(op, AgentOp::Launch { .. });
        let task = op.task();
        if let Err(e) = self.try_apply(op, out) {
            if let Some(task) = task {
                if launch {
                    // A task that cannot be started fails (requeueing it would loop).
                    let stderr_tail = format!("pliant agent: cannot start the task: {e}");
                    out.push(AgentReport::Exited { task, code: None, signal: None, stderr_tail });
                    return;
                }
                if !self.tasks.contains_key(&task) {
                    out.push(AgentReport::Lost { task, reason: e.to_string() });
                    return;
                }
            }
            eprintln!("pliant agent: {e}");
        }
    }

    fn try_apply(&mut self, op: AgentOp, out: &mut Vec<AgentReport>) -> Result<(), MechanismError> {
        match op {
            AgentOp::Launch { task, argv, resources, log_dir, checkpoint_dir, restore, uid } => {
                own_dir(task, &log_dir, "log directory")?;
                own_dir(task, &checkpoint_dir, "checkpoint directory")?;
                let user = self.confinement.user_for(uid).map_err(refusal)?;
                // The manager holds any earlier run over: a report of it not yet
                // delivered (e.g. its exit, seen when it was taken over) would
                // pass for the new run's.
                out.retain(|r| r.task() != task);
                // A task relaunched after a kill gets a fresh cgroup. A run still
                // held (its kill never arrived) goes through its own handle, which
                // would otherwise remove the new run's cgroup when dropped. Every
                // process of the earlier run is gone before its directory is
                // made ready again.
                if let Some(Some(old)) = self.ended.remove(&task) {
                    old.remove()?;
                }
                if let Some(old) = self.tasks.remove(&task) {
                    old.remove()?;
                }
                if let Some(old) = self.top.open_child(&cgroup_name(task)) {
                    old.remove()?;
                }
                let checkpoint_dir = task_dir::prepare(&log_dir, &checkpoint_dir, restore, user.as_ref())?;
                let spec = CommandSpec {
                    argv,
                    env: vec![
                        ("PLIANT_JOB".into(), task.job.0.to_string()),
                        ("PLIANT_TASK".into(), task.task.to_string()),
                        // Its memory limit: its request, or less if it was sized down.
                        ("PLIANT_MEM_MB".into(), resources.mem_mb.to_string()),
                    ],
                    stdout: files::stdout(&log_dir),
                    stderr: files::stderr(&log_dir),
                    checkpoint_dir: Some(checkpoint_dir),
                    exit_file: Some(files::exit(&log_dir)),
                    // Its own directory, beside its output (see the README's live mode).
                    cwd: Some(log_dir.clone()),
                    max_file_bytes: self.max_output,
                    confinement: Confinement { user, job_uids: None, max_pids: self.confinement.max_pids },
                };
                let live = LiveTask::launch(&self.top, &cgroup_name(task), &spec, allocation(resources))?;
                self.tasks.insert(task, HeldTask::new(live, log_dir));
                if restore {
                    out.push(AgentReport::Resumed { task });
                }
            }
            AgentOp::Preempt { task, mechanism, limits } => self.preempt(task, mechanism, limits, out)?,
            AgentOp::Resume { task, limits } => {
                if let Some(held) = self.tasks.get_mut(&task) {
                    held.resume(task, limits, out)?;
                }
            }
            AgentOp::Stop { task } => {
                if let Some(held) = self.tasks.remove(&task) {
                    self.retire(task, held)?;
                }
            }
            AgentOp::Adopt { task, log_dir, checkpoint_dir, resources, expect, owed_mb } => {
                self.adopted.insert(task);
                let checkpoint_dir = self.checkpoint_dir_of(&log_dir, checkpoint_dir);
                self.adopt(task, Files { log_dir, checkpoint_dir }, resources, expect, owed_mb, out)?
            }
            AgentOp::Sweep => {
                // A task held but not taken over is not the manager's any more
                // (its kill or stop was lost with a crashed manager): it goes.
                let adopted = std::mem::take(&mut self.adopted);
                let orphans: Vec<TaskRef> = self.tasks.keys().filter(|t| !adopted.contains(t)).copied().collect();
                for task in orphans {
                    if let Some(held) = self.tasks.remove(&task) {
                        eprintln!("pliant agent: {task}: not taken over by the manager: stopped");
                        self.retire(task, held)?;
                    }
                }
                let held: Vec<String> = self.tasks.keys().chain(self.ended.keys()).map(|&t| cgroup_name(t)).collect();
                for name in self.top.children()? {
                    if !held.contains(&name) {
                        if let Some(stale) = self.top.open_child(&name) {
                            stale.remove()?;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    fn preempt(
        &mut self,
        task: TaskRef,
        mechanism: MechanismKind,
        limits: Resources,
        out: &mut Vec<AgentReport>,
    ) -> Result<(), MechanismError> {
        let (mechanism, note) = self.caps.effective(mechanism);
        if let Some(note) = note {
            eprintln!("pliant agent: {task}: {note}");
        }
        if mechanism == MechanismKind::Kill {
            if let Some(mut held) = self.tasks.remove(&task) {
                held.live.kill()?;
                self.retire(task, held)?;
            }
            return Ok(());
        }
        let Some(held) = self.tasks.get_mut(&task) else { return Ok(()) };
        if mechanism == MechanismKind::Checkpoint {
            // Reported from `poll` once the task has exited.
            return held.request_checkpoint(self.checkpoint_grace);
        }
        let graceful = match mechanism {
            MechanismKind::Immediate => {
                held.live.park()?;
                false
            }
            MechanismKind::Graceful => {
                held.live.limit_cpu(limits.cpu_milli)?;
                true
            }
            MechanismKind::Suspend => {
                // Suspend in place (asked for, or what immediate and graceful
                // preemption degrade to): frozen, memory kept, nothing reclaimed.
                return held.live.suspend();
            }
            MechanismKind::Checkpoint | MechanismKind::Kill => unreachable!("handled above"),
        };
        // What was never used is free at once; the rest is reported as the
        // usage drops (`poll`), so a task waiting for part of it starts then.
        held.memory.lower(task, &mut held.live, allocation(limits).mem_bytes, graceful, out)
    }

    fn adopt(
        &mut self,
        task: TaskRef,
        Files { log_dir, checkpoint_dir }: Files,
        resources: Resources,
        expect: Expected,
        owed_mb: u64,
        out: &mut Vec<AgentReport>,
    ) -> Result<(), MechanismError> {
        if self.ended.contains_key(&task) {
            // Its end is reported and on its way (the manager restarted before it got it).
            return Ok(());
        }
        if !self.tasks.contains_key(&task) {
            let exit_file = files::exit(&log_dir);
            let adopted = match self.top.open_child(&cgroup_name(task)) {
                Some(cgroup) => {
                    LiveTask::adopt(cgroup, exit_file.clone(), allocation(resources), Some(checkpoint_dir.clone()))?
                }
                // It may have saved and exited, reported to a manager that
                // crashed before it journaled the report: its exit file tells.
                None if expect == Expected::Checkpointing => None,
                None => {
                    out.push(AgentReport::Lost { task, reason: "its cgroup is gone (the agent stopped it)".into() });
                    return Ok(());
                }
            };
            match adopted {
                Some(live) => {
                    self.tasks.insert(task, HeldTask::new(live, log_dir));
                }
                None => {
                    // It ended while nobody watched: report how, from its exit file.
                    let recorded = crate::process::recorded_exit(&exit_file);
                    out.push(match recorded {
                        _ if expect == Expected::Checkpointing => {
                            let status = recorded.unwrap_or_else(|| std::process::ExitStatus::from_raw(libc::SIGKILL));
                            let outcome = CheckpointOutcome::of(Some(status), checkpoint_dir);
                            checkpoint_report(task, outcome, self.checkpoint_grace)
                        }
                        Some(status) => exited(task, status, &log_dir, self.max_output),
                        // No status: an agent died before its command started, or
                        // stopped it and died before removing its cgroup. Not the
                        // task's failure: it runs again.
                        None => AgentReport::Lost { task, reason: "it left no exit status (its agent died)".into() },
                    });
                    self.take_back(task, &log_dir);
                    if let Some(cgroup) = self.top.open_child(&cgroup_name(task)) {
                        // Kept until the report is delivered, as for a task seen
                        // ending; `forget_ended` removes it by name.
                        std::mem::forget(cgroup);
                        self.ended.insert(task, None);
                    }
                    return Ok(());
                }
            }
        }
        let held = self.tasks.get_mut(&task).expect("held or adopted above");
        match expect {
            Expected::Running => {
                held.memory.rebook(resources.mem_mb << 20);
                held.live.resume()?;
            }
            Expected::Restoring(limits) => held.resume(task, limits, out)?,
            Expected::Checkpointing => held.request_checkpoint(self.checkpoint_grace)?,
            Expected::Shrunk(limits) | Expected::Frozen(limits) => {
                let graceful = matches!(expect, Expected::Shrunk(_));
                if graceful {
                    held.live.limit_cpu(limits.cpu_milli)?;
                } else {
                    held.live.park()?;
                }
                // Counted afresh: what is owed (above the limit the task holds
                // now) is what the manager has not heard of, whatever an
                // earlier agent told it.
                held.memory.rebook((limits.mem_mb + owed_mb) << 20);
                held.memory.lower(task, &mut held.live, limits.mem_mb << 20, graceful, out)?;
            }
        }
        Ok(())
    }

    /// Looks at every task: reports the ones that ended (their cgroups go
    /// with [`Agent::forget_ended`], once the manager has the reports) and
    /// freezes shrunk ones that started swapping.
    pub fn poll(&mut self, out: &mut Vec<AgentReport>) {
        let mut ended = Vec::new();
        for (&task, held) in &mut self.tasks {
            if let Some(by) = held.checkpoint_by {
                match checkpoint_ended(held, by) {
                    Ok(Some(report)) => {
                        out.push(checkpoint_report(task, report, self.checkpoint_grace));
                        ended.push(task);
                    }
                    Ok(None) => {}
                    Err(e) => eprintln!("pliant agent: {task}: {e}"),
                }
                continue;
            }
            match held.live.try_wait() {
                Ok(Some(status)) => {
                    if held.memory.end_restore() {
                        // A resumed task reports back before it may finish.
                        out.push(AgentReport::Resumed { task });
                    }
                    out.push(exited(task, status, &held.log_dir, self.max_output));
                    ended.push(task);
                    continue;
                }
                Ok(None) => {}
                Err(e) => eprintln!("pliant agent: {task}: {e}"),
            }
            if let Err(e) = held.memory.look(task, &mut held.live, out) {
                eprintln!("pliant agent: {task}: {e}");
            }
        }
        for task in ended {
            if let Some(held) = self.tasks.remove(&task) {
                self.ended.insert(task, Some(held));
            }
        }
    }
}

/// A launch the agent refuses, saying why.
fn refusal(why: String) -> MechanismError {
    std::io::Error::new(std::io::ErrorKind::InvalidInput, why).into()
}

/// Refuses a directory the manager names for `task` unless it is the
/// task's own: an absolute path without `.` or `..` that ends in
/// `job-J/task-T`. The agent (root) creates it, empties it (a checkpoint
/// directory at a fresh start) and gives it to the task's user, so a
/// manager's message must not point it at another of the node's directories.
fn own_dir(task: TaskRef, dir: &Path, what: &str) -> Result<(), MechanismError> {
    use std::path::Component;
    let tail = Path::new(&format!("job-{}", task.job.0)).join(format!("task-{}", task.task));
    let plain = dir.is_absolute() && dir.components().all(|c| matches!(c, Component::RootDir | Component::Normal(_)));
    if plain && dir.ends_with(&tail) {
        return Ok(());
    }
    let why = format!(
        "refusing the {what} {} the manager gave for {task}: not an absolute path ending in {} without . or ..",
        dir.display(),
        tail.display()
    );
    Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, why).into())
}

/// Where a task's files are.
struct Files {
    log_dir: PathBuf,
    checkpoint_dir: PathBuf,
}

/// How a task asked to checkpoint by `by` ended, once it has exited or its
/// time is up (it is then killed).
fn checkpoint_ended(held: &mut HeldTask, by: Instant) -> Result<Option<CheckpointOutcome>, MechanismError> {
    let status = held.live.try_wait()?;
    if status.is_none() && Instant::now() < by {
        return Ok(None);
    }
    held.live.checkpoint_outcome(status).map(Some)
}

/// What the manager hears of a checkpoint's outcome.
fn checkpoint_report(task: TaskRef, outcome: CheckpointOutcome, grace: Duration) -> AgentReport {
    let reason = match outcome {
        CheckpointOutcome::Saved(_) => return AgentReport::Checkpointed { task },
        CheckpointOutcome::Lost(how) => format!("checkpoint failed: the task ended with {how} after SIGUSR1"),
        CheckpointOutcome::TimedOut => {
            format!(
                "checkpoint failed: the task did not exit within {} s of SIGUSR1 and was killed",
                grace.as_secs_f64()
            )
        }
    };
    AgentReport::Lost { task, reason }
}

/// The line that ends an output cut at its cap.
pub const OUTPUT_CUT: &str = "\n[pliant: this output reached its cap (--max-log-mb); the rest was dropped]\n";

fn exited(task: TaskRef, status: std::process::ExitStatus, log_dir: &Path, cap: Option<u64>) -> AgentReport {
    for file in [files::stdout(log_dir), files::stderr(log_dir)] {
        let full = std::fs::symlink_metadata(&file).is_ok_and(|m| m.is_file() && cap.is_some_and(|c| m.len() >= c));
        if full {
            use std::io::Write;
            let marked = crate::task_files::open_output(&file).and_then(|mut f| f.write_all(OUTPUT_CUT.as_bytes()));
            if let Err(e) = marked {
                eprintln!("pliant agent: {task}: {}: {e}", file.display());
            }
        }
    }
    let stderr_tail = if status.success() { String::new() } else { tail(&files::stderr(log_dir), STDERR_TAIL) };
    if status.code().is_none() && status.signal().is_none() {
        eprintln!("pliant agent: {task}: {}", describe(status));
    }
    AgentReport::Exited { task, code: status.code(), signal: status.signal(), stderr_tail }
}
