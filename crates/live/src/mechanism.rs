//! The preemption mechanisms on one real task: a process tree in its own
//! cgroup. BIG-C §3.2–3.3 (immediate and graceful preemption), the
//! checkpoint paper §3.2 (suspend-resume; here the cooperative protocol, as
//! CRIU does not run everywhere), and kill.

use crate::cgroup::{Cgroup, CgroupError, MemoryStats};
use crate::process::{describe, recorded_exit, CommandSpec, TaskProcess};
use crate::reclaim::{Freed, Reclaiming};
use std::io;
use std::path::PathBuf;
use std::process::ExitStatus;
use std::time::{Duration, Instant};

/// BIG-C §3.2: a suspended task keeps 1 % of a core…
pub const FOOTPRINT_CPU_MILLI: u64 = 10;
/// …and 64 MB of memory.
pub const FOOTPRINT_MEM_BYTES: u64 = 64 << 20;
/// Attempts at a memory limit that keeps stalling (each for the given
/// patience) before it is given up on.
pub const LIMIT_ATTEMPTS: u32 = 6;

/// A task's CPU and memory allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Allocation {
    /// CPU in millicores.
    pub cpu_milli: u64,
    /// Memory in bytes.
    pub mem_bytes: u64,
}

/// A mechanism that could not be carried out.
#[derive(Debug, thiserror::Error)]
pub enum MechanismError {
    /// A cgroup operation failed.
    #[error(transparent)]
    Cgroup(#[from] CgroupError),
    /// Starting, signalling or waiting for the process failed.
    #[error("process: {0}")]
    Io(#[from] io::Error),
    /// Cooperative checkpointing needs a checkpoint directory given at launch.
    #[error("the task was started without a checkpoint directory")]
    NoCheckpointDir,
}

/// What memory reclaim did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reclaim {
    /// Counters before.
    pub before: MemoryStats,
    /// Counters after.
    pub after: MemoryStats,
    /// Time the limit write took, retries included.
    pub took: Duration,
}

/// The result of one graceful-preemption step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    /// The task's limits after the step.
    pub limits: Allocation,
    /// True when reclaim stalled and the task had to be frozen to finish the step.
    pub froze: bool,
}

/// What a reclaim under way did since the last look ([`LiveTask::reclaim_progress`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReclaimProgress {
    /// Memory freed since the last look.
    pub freed: Freed,
    /// The task started swapping or the reclaim stalled, and it was frozen
    /// now (graceful preemption): the reclaim finishes from the frozen task.
    pub froze: bool,
    /// The new limit is in force: the reclaim is over.
    pub done: bool,
}

/// A memory reclaim under way on a task.
#[derive(Debug)]
struct Underway {
    write: Reclaiming,
    /// Graceful: the task is frozen (once) as soon as it swaps, or when the
    /// write stalls, before the write is tried again.
    graceful: bool,
    froze: bool,
    /// Bytes of the task in swap when the reclaim began.
    swap_before: u64,
    patience: Duration,
}

/// How a cooperative checkpoint ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckpointOutcome {
    /// The task wrote its state to the directory and exited 0: restart it from there.
    Saved(PathBuf),
    /// The task exited otherwise after the signal: its progress is lost.
    Lost(String),
    /// The task did not exit in time and was killed: its progress is lost.
    TimedOut,
}

impl CheckpointOutcome {
    /// The outcome for a task that saves to `dir`, given its exit status
    /// after the request (`None`: it has not exited and its time is up).
    pub fn of(status: Option<ExitStatus>, dir: PathBuf) -> CheckpointOutcome {
        match status {
            Some(s) if s.success() => CheckpointOutcome::Saved(dir),
            Some(s) => CheckpointOutcome::Lost(describe(s)),
            None => CheckpointOutcome::TimedOut,
        }
    }
}

/// A task running on this node, under the mechanisms.
#[derive(Debug)]
pub struct LiveTask {
    // Field order matters: the process is reaped before its cgroup is removed.
    process: TaskProcess,
    cgroup: Cgroup,
    allocation: Allocation,
    limits: Allocation,
    checkpoint_dir: Option<PathBuf>,
    exit_file: Option<PathBuf>,
    stopped_by_signal: bool,
    baseline: Option<MemoryStats>,
    reclaim: Option<Underway>,
}

impl LiveTask {
    /// Creates the cgroup `name` under `parent`, limits it to `allocation`
    /// and starts `spec` in it.
    pub fn launch(
        parent: &Cgroup,
        name: &str,
        spec: &CommandSpec,
        allocation: Allocation,
    ) -> Result<LiveTask, MechanismError> {
        let cgroup = parent.child(name)?;
        let controllers = cgroup.controllers();
        if controllers.cpu {
            cgroup.set_cpu_quota(Some(allocation.cpu_milli))?;
        }
        if controllers.memory {
            cgroup.set_memory_limit(Some(allocation.mem_bytes), Duration::ZERO)?;
        }
        if let (Some(max), true) = (spec.confinement.max_pids, controllers.pids) {
            cgroup.set_pids_max(Some(max))?;
        }
        let process = TaskProcess::spawn(spec, &cgroup)?;
        Ok(LiveTask {
            process,
            cgroup,
            allocation,
            limits: allocation,
            checkpoint_dir: spec.checkpoint_dir.clone(),
            exit_file: spec.exit_file.clone(),
            stopped_by_signal: false,
            baseline: None,
            reclaim: None,
        })
    }

    /// Takes over a task that an earlier agent started in `cgroup` with
    /// `exit_file` set (see [`CommandSpec::exit_file`]) and `checkpoint_dir`,
    /// and that was given `allocation`. Returns `None` when nothing runs in
    /// the cgroup any more, leaving the cgroup in place (the caller removes
    /// it once the task's end is reported).
    pub fn adopt(
        cgroup: Cgroup,
        exit_file: PathBuf,
        allocation: Allocation,
        checkpoint_dir: Option<PathBuf>,
    ) -> Result<Option<LiveTask>, MechanismError> {
        let pgid = match cgroup.pids()?.first() {
            // SAFETY: getpgid(2) has no memory-safety preconditions.
            Some(&pid) => unsafe { libc::getpgid(pid) },
            None => -1,
        };
        if pgid < 0 {
            // Dropping the handle would remove the cgroup.
            std::mem::forget(cgroup);
            return Ok(None);
        }
        let memory = cgroup.memory().ok();
        let limits = Allocation {
            cpu_milli: cgroup.cpu_quota().ok().flatten().unwrap_or(allocation.cpu_milli),
            mem_bytes: memory.and_then(|m| m.limit).unwrap_or(allocation.mem_bytes),
        };
        Ok(Some(LiveTask {
            process: TaskProcess::adopt(pgid),
            cgroup,
            allocation,
            limits,
            checkpoint_dir,
            exit_file: Some(exit_file),
            stopped_by_signal: false,
            baseline: None,
            reclaim: None,
        }))
    }

    /// The main process id.
    pub fn pid(&self) -> u32 {
        self.process.pid()
    }

    /// The task's cgroup.
    pub fn cgroup(&self) -> &Cgroup {
        &self.cgroup
    }

    /// The limits in force now (lower than the allocation after graceful steps).
    pub fn limits(&self) -> Allocation {
        self.limits
    }

    /// The memory counters of the task's cgroup.
    pub fn memory(&self) -> Result<MemoryStats, MechanismError> {
        Ok(self.cgroup.memory()?)
    }

    /// The exit status, if the task has exited. An adopted task has exited
    /// when its cgroup is empty; its status is the one its exit file records,
    /// or SIGKILL when it left none.
    pub fn try_wait(&mut self) -> Result<Option<ExitStatus>, MechanismError> {
        if !self.process.is_adopted() {
            return Ok(self.process.try_wait()?);
        }
        if !self.cgroup.pids()?.is_empty() {
            return Ok(None);
        }
        let recorded = self.exit_file.as_deref().and_then(recorded_exit);
        Ok(Some(recorded.unwrap_or_else(|| std::os::unix::process::ExitStatusExt::from_raw(libc::SIGKILL))))
    }

    /// True when the task is frozen (by the freezer or SIGSTOP).
    pub fn is_frozen(&self) -> Result<bool, MechanismError> {
        Ok(self.stopped_by_signal || (self.cgroup.controllers().freezer && self.cgroup.is_frozen()?))
    }

    /// Kill: the whole tree (the cgroup, and the process group for good
    /// measure), then reaps the main process.
    pub fn kill(&mut self) -> Result<ExitStatus, MechanismError> {
        self.cgroup.kill_all()?;
        // With nothing left to reclaim, a limit write under way ends.
        if let Some(mut r) = self.reclaim.take() {
            r.write.wait();
        }
        Ok(self.process.kill_group()?)
    }

    /// Suspend in place: freeze, memory kept.
    pub fn suspend(&mut self) -> Result<(), MechanismError> {
        if self.cgroup.controllers().freezer {
            self.cgroup.freeze()?;
        } else {
            self.process.signal_group(libc::SIGSTOP)?;
            self.stopped_by_signal = true;
        }
        Ok(())
    }

    fn unfreeze(&mut self) -> Result<(), MechanismError> {
        if self.stopped_by_signal {
            self.process.signal_group(libc::SIGCONT)?;
            self.stopped_by_signal = false;
        } else if self.cgroup.controllers().freezer {
            self.cgroup.thaw()?;
        }
        Ok(())
    }

    /// Immediate preemption (BIG-C §3.2): CPU to 1 %, freeze (reclaim from a
    /// frozen task is several times faster), then the memory limit down to
    /// `footprint` so the kernel swaps the rest out. Waits up to `patience`
    /// for reclaim; on [`CgroupError::LimitBusy`] the task stays frozen with
    /// its old limit.
    pub fn immediate(&mut self, footprint: u64, patience: Duration) -> Result<Reclaim, MechanismError> {
        if self.cgroup.controllers().cpu {
            self.cgroup.set_cpu_quota(Some(FOOTPRINT_CPU_MILLI))?;
            self.limits.cpu_milli = FOOTPRINT_CPU_MILLI;
        }
        self.suspend()?;
        let before = self.cgroup.memory()?;
        let start = Instant::now();
        self.cgroup.set_memory_limit(Some(footprint), patience)?;
        self.limits.mem_bytes = footprint;
        Ok(Reclaim { before, after: self.cgroup.memory()?, took: start.elapsed() })
    }

    /// Resume after immediate or graceful preemption or suspend: memory back
    /// first, then thaw, then the CPU quota. The swapped-out pages come back
    /// as the task touches them.
    pub fn resume(&mut self) -> Result<(), MechanismError> {
        self.resume_to(self.allocation)
    }

    /// [`LiveTask::resume`] to `limits`, which may be less than the full
    /// allocation (gradual resumption gives a gracefully preempted task its
    /// memory and part of its CPU back).
    pub fn resume_to(&mut self, limits: Allocation) -> Result<(), MechanismError> {
        // A limit write under way would undo the raised limit when it ends.
        if let Some(mut r) = self.reclaim.take() {
            r.write.wait();
        }
        let controllers = self.cgroup.controllers();
        if controllers.memory {
            self.cgroup.set_memory_limit(Some(limits.mem_bytes), Duration::ZERO)?;
        }
        self.unfreeze()?;
        if controllers.cpu {
            self.cgroup.set_cpu_quota(Some(limits.cpu_milli))?;
        }
        self.limits = limits;
        self.baseline = None;
        Ok(())
    }

    /// Immediate preemption without waiting for the reclaim: CPU to 1 %,
    /// frozen; the memory limit goes down to `footprint` on a thread of its
    /// own, retried while it stalls for `patience`
    /// ([`LiveTask::reclaim_progress`] tells what it freed so far).
    pub fn begin_immediate(&mut self, footprint: u64, patience: Duration) -> Result<(), MechanismError> {
        if self.cgroup.controllers().cpu {
            self.cgroup.set_cpu_quota(Some(FOOTPRINT_CPU_MILLI))?;
            self.limits.cpu_milli = FOOTPRINT_CPU_MILLI;
        }
        self.suspend()?;
        self.begin_reclaim(footprint, false, patience)
    }

    /// Graceful preemption to `target` without waiting for the reclaim: the
    /// CPU quota now, the memory limit on a thread of its own; if reclaim
    /// stalls for `patience`, or as soon as the task swaps, the task is
    /// frozen and reclaim goes on from the frozen task
    /// ([`LiveTask::reclaim_progress`]).
    pub fn begin_shrink(&mut self, target: Allocation, patience: Duration) -> Result<(), MechanismError> {
        self.cgroup.set_cpu_quota(Some(target.cpu_milli))?;
        self.limits.cpu_milli = target.cpu_milli;
        self.begin_reclaim(target.mem_bytes, true, patience)
    }

    /// Starts lowering the memory limit to `to`. A reclaim still under way
    /// (a second step before the first ended) is waited for, and the new one
    /// counts on from it.
    fn begin_reclaim(&mut self, to: u64, graceful: bool, patience: Duration) -> Result<(), MechanismError> {
        let memory = self.cgroup.memory()?;
        let usage = memory.usage;
        let limit = self.cgroup.memory_limit();
        let write = match self.reclaim.take() {
            Some(mut earlier) => {
                if let Some(Ok(())) = earlier.write.wait() {
                    self.limits.mem_bytes = earlier.write.target();
                }
                earlier.write.retarget(limit, to, patience);
                earlier.write
            }
            None => Reclaiming::start(limit, self.limits.mem_bytes, to, usage, patience),
        };
        self.baseline = None;
        self.reclaim = Some(Underway { write, graceful, froze: false, swap_before: memory.swap, patience });
        Ok(())
    }

    /// What the reclaim under way freed since the last look (`None`: none
    /// under way). Once the new limit is in force it is over; a write that
    /// stalled is tried again — under graceful preemption first from the
    /// task frozen — up to [`LIMIT_ATTEMPTS`] times, then the error is
    /// returned with the old limit in force.
    pub fn reclaim_progress(&mut self) -> Result<Option<ReclaimProgress>, MechanismError> {
        let Some(mut r) = self.reclaim.take() else { return Ok(None) };
        let memory = self.cgroup.memory()?;
        let usage = memory.usage;
        let mut froze = false;
        match r.write.ended() {
            // BIG-C §4.2: "If memory swapping is detected in a container, CM
            // immediately freezes the container" — a limit that cuts into
            // what the task uses swaps it out, and a task left running then
            // pages back in what the reclaim takes, for as long as the
            // reclaim lasts (minutes on a slow swap device).
            None if r.graceful && !r.froze && memory.swap > r.swap_before => {
                self.begin_freeze()?;
                (r.froze, froze) = (true, true);
            }
            None => {}
            Some(Ok(())) => {
                self.limits.mem_bytes = r.write.target();
                self.baseline = Some(self.cgroup.memory()?);
                let freed = r.write.freed(usage, true);
                return Ok(Some(ReclaimProgress { freed, froze: false, done: true }));
            }
            Some(Err(CgroupError::LimitBusy { .. })) if r.graceful && !r.froze => {
                self.suspend()?;
                (r.froze, froze) = (true, true);
                r.write.retry(self.cgroup.memory_limit(), r.patience);
            }
            Some(Err(CgroupError::LimitBusy { .. })) if r.write.attempts < LIMIT_ATTEMPTS => {
                r.write.retry(self.cgroup.memory_limit(), r.patience);
            }
            Some(Err(e)) => return Err(e.into()),
        }
        let freed = r.write.freed(usage, false);
        self.reclaim = Some(r);
        Ok(Some(ReclaimProgress { freed, froze, done: false }))
    }

    /// One round of graceful preemption (BIG-C §3.3): lower the CPU quota by
    /// `step.cpu_milli` and the memory limit by `step.mem_bytes`, not below
    /// the footprint. If reclaim stalls for `patience`, the task is frozen and
    /// reclaim finishes from the frozen task. Afterwards call
    /// [`LiveTask::freeze_if_swapping`] periodically.
    pub fn graceful_step(&mut self, step: Allocation, patience: Duration) -> Result<Step, MechanismError> {
        let target = Allocation {
            cpu_milli: self.limits.cpu_milli.saturating_sub(step.cpu_milli).max(FOOTPRINT_CPU_MILLI),
            mem_bytes: self.limits.mem_bytes.saturating_sub(step.mem_bytes).max(FOOTPRINT_MEM_BYTES),
        };
        self.shrink_to(target, patience)
    }

    /// Graceful preemption to given limits (the core plans the steps): the
    /// CPU quota and memory limit go to `target`; if reclaim stalls for
    /// `patience`, the task is frozen and reclaim finishes from the frozen task.
    pub fn shrink_to(&mut self, target: Allocation, patience: Duration) -> Result<Step, MechanismError> {
        self.cgroup.set_cpu_quota(Some(target.cpu_milli))?;
        self.limits.cpu_milli = target.cpu_milli;
        let froze = match self.cgroup.set_memory_limit(Some(target.mem_bytes), patience) {
            Ok(()) => false,
            Err(CgroupError::LimitBusy { .. }) => {
                self.suspend()?;
                self.cgroup.set_memory_limit(Some(target.mem_bytes), patience)?;
                true
            }
            Err(e) => return Err(e.into()),
        };
        self.limits.mem_bytes = target.mem_bytes;
        self.baseline = Some(self.cgroup.memory()?);
        Ok(Step { limits: self.limits, froze })
    }

    /// BIG-C §4.2 container monitor: if the task swapped since the last look
    /// (see [`MemoryStats::swapping_since`]), freeze it. Returns true when it
    /// froze the task now.
    pub fn freeze_if_swapping(&mut self) -> Result<bool, MechanismError> {
        let now = self.cgroup.memory()?;
        let swapping = self.baseline.is_some_and(|b| now.swapping_since(&b));
        self.baseline = Some(now);
        if swapping && !self.is_frozen()? {
            self.begin_freeze()?;
            return Ok(true);
        }
        Ok(false)
    }

    /// Freezes the task without waiting for the freezer to finish (a task in
    /// the middle of reclaim freezes once it leaves the kernel).
    fn begin_freeze(&mut self) -> Result<(), MechanismError> {
        if self.cgroup.controllers().freezer {
            self.cgroup.begin_freeze()?;
            Ok(())
        } else {
            self.suspend()
        }
    }

    /// Cooperative checkpoint: SIGUSR1 to the task's process group; the task
    /// writes its state to its checkpoint directory and exits 0 within
    /// `deadline`. Whatever is left in the cgroup is killed afterwards.
    pub fn checkpoint(&mut self, deadline: Duration) -> Result<CheckpointOutcome, MechanismError> {
        self.request_checkpoint()?;
        let status = self.process.wait_timeout(deadline)?;
        self.checkpoint_outcome(status)
    }

    /// The first half of [`LiveTask::checkpoint`], for a caller that waits
    /// by itself: thaws the task and sends SIGUSR1 to its process group.
    pub fn request_checkpoint(&mut self) -> Result<(), MechanismError> {
        if self.checkpoint_dir.is_none() {
            return Err(MechanismError::NoCheckpointDir);
        }
        self.unfreeze()?;
        Ok(self.process.signal_group(libc::SIGUSR1)?)
    }

    /// The second half: how the checkpoint ended given the task's exit
    /// status since the request (`None`: it has not exited and its time is
    /// up). Whatever is left in the cgroup is killed.
    pub fn checkpoint_outcome(&mut self, status: Option<ExitStatus>) -> Result<CheckpointOutcome, MechanismError> {
        let dir = self.checkpoint_dir.clone().ok_or(MechanismError::NoCheckpointDir)?;
        let outcome = CheckpointOutcome::of(status, dir);
        self.kill()?;
        Ok(outcome)
    }

    /// Removes the task's cgroup, killing whatever still runs in it.
    pub fn remove(self) -> Result<(), MechanismError> {
        let LiveTask { process, cgroup, reclaim, .. } = self;
        // Kill through the cgroup first: a frozen process cannot die (and be
        // reaped below) until it is thawed, which `kill_all` takes care of.
        cgroup.kill_all()?;
        if let Some(mut r) = reclaim {
            r.write.wait();
        }
        drop(process);
        Ok(cgroup.remove()?)
    }
}
