//! The preemption mechanisms on one real task: a process tree in its own
//! cgroup. BIG-C §3.2–3.3 (immediate and graceful preemption), the
//! checkpoint paper §3.2 (suspend-resume; here the cooperative protocol, as
//! CRIU does not run everywhere), and kill.

use crate::cgroup::{Cgroup, CgroupError, MemoryLimit, MemoryStats};
use crate::executor::Knobs;
use crate::process::{describe, recorded_exit, CommandSpec, TaskProcess};
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

    /// The limits this handle set: at launch, after [`LiveTask::immediate`]
    /// or a resume (a memory limit lowered through the executor is its
    /// [`crate::executor::TaskMemory::limit`]).
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
        self.park()?;
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
        let controllers = self.cgroup.controllers();
        if controllers.memory {
            self.cgroup.set_memory_limit(Some(limits.mem_bytes), Duration::ZERO)?;
        }
        self.unfreeze()?;
        if controllers.cpu {
            self.cgroup.set_cpu_quota(Some(limits.cpu_milli))?;
        }
        self.limits = limits;
        Ok(())
    }

    /// The first half of immediate preemption (BIG-C §3.2): CPU to 1 %,
    /// frozen (reclaim from a frozen task is several times faster); the
    /// memory limit follows ([`crate::executor::TaskMemory::lower`]).
    pub fn park(&mut self) -> Result<(), MechanismError> {
        if self.cgroup.controllers().cpu {
            self.cgroup.set_cpu_quota(Some(FOOTPRINT_CPU_MILLI))?;
            self.limits.cpu_milli = FOOTPRINT_CPU_MILLI;
        }
        self.suspend()
    }

    /// The CPU half of a graceful shrink (BIG-C §3.3): the quota down to
    /// `millicores`; the memory limit follows ([`crate::executor::TaskMemory::lower`]).
    pub fn limit_cpu(&mut self, millicores: u64) -> Result<(), MechanismError> {
        self.cgroup.set_cpu_quota(Some(millicores))?;
        self.limits.cpu_milli = millicores;
        Ok(())
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
        let LiveTask { process, cgroup, .. } = self;
        // Kill through the cgroup first: a frozen process cannot die (and be
        // reaped below) until it is thawed, which `kill_all` takes care of.
        cgroup.kill_all()?;
        drop(process);
        Ok(cgroup.remove()?)
    }
}

impl Knobs for LiveTask {
    fn memory(&self) -> Result<MemoryStats, CgroupError> {
        self.cgroup.memory()
    }

    fn memory_limit(&self) -> MemoryLimit {
        self.cgroup.memory_limit()
    }

    /// The freezer when the node has one, else SIGSTOP to the process group.
    fn freeze(&mut self) -> Result<(), MechanismError> {
        if self.cgroup.controllers().freezer {
            Ok(self.cgroup.begin_freeze()?)
        } else {
            self.suspend()
        }
    }
}
