//! The node side of pliant on Slurm (`pliant agent --slurm`): it launches
//! nothing. It carries out the controller's orders on the job cgroups Slurm's
//! `task/cgroup` made on this node ([`SlurmJobCgroup`]) and reports back in
//! the manager's protocol ([`AgentOp`], [`AgentReport`]): BIG-C's reclaim of
//! a suspended job's memory to its footprint (§3.2), a graceful shrink of a
//! running one (§3.3, frozen when it swaps, §4.2), and the limit lifted again
//! on resume, all through the node-side executor ([`crate::executor`]), as
//! pliant's own agent does.
//!
//! On this channel a task is a Slurm job: `TaskRef { job: JobId(SLURM_ID), task: 0 }`.
//! The controller names each job it places here with [`AgentOp::Adopt`]
//! (its allocation, the state it should be in), and again after either side
//! restarted, followed by [`AgentOp::Sweep`].

use crate::cgroup::{CgroupError, Layout, MemoryLimit, MemoryStats};
use crate::executor::{Knobs, Rules, TaskMemory};
use crate::mechanism::MechanismError;
use crate::protocol::{AgentOp, AgentReport, Expected};
use crate::slurm_job::SlurmJobCgroup;
use pliant_core::model::TaskRef;
use pliant_core::MechanismKind;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

const MB: u64 = 1 << 20;

/// What this agent does differently from pliant's own
/// ([`crate::agent::RULES`]). The controller resumes a job in Slurm only
/// once the agent has lifted its limit (`scontrol resume` thaws its steps
/// then), so a resumed job's swap may not move for a while: it counts as
/// not touching what is there after 10 s, not 1. A graceful shrink that
/// stalls for 1 s freezes the job (the controller then suspends it in
/// Slurm too), and a write on a frozen job may stall for 60 s: the
/// patience `docs/slurm.md`'s measurements on the Slurm cluster were made with.
pub const RULES: Rules = Rules {
    stall: Duration::from_secs(1),
    patience: Duration::from_secs(60),
    cold: Duration::from_secs(10),
    name: |task| format!("job {}", slurm_id(task)),
};

/// The Slurm job behind a task of this channel.
pub fn slurm_id(task: TaskRef) -> u64 {
    u64::from(task.job.0)
}

/// One Slurm job the controller named to this node.
struct Held {
    cgroup: Option<SlurmJobCgroup>,
    /// Its memory under the executor: its limit as the controller books it
    /// (its allocation, or lower once preempted), lowered, watched, restored.
    memory: TaskMemory,
}

impl Knobs for SlurmJobCgroup {
    fn memory(&self) -> Result<MemoryStats, CgroupError> {
        SlurmJobCgroup::memory(self)
    }

    fn memory_limit(&self) -> MemoryLimit {
        SlurmJobCgroup::memory_limit(self)
    }

    fn freeze(&mut self) -> Result<(), MechanismError> {
        Ok(self.begin_freeze()?)
    }
}

/// The agent's jobs on one Slurm node.
pub struct SlurmNode {
    layout: Layout,
    node: String,
    jobs: BTreeMap<TaskRef, Held>,
    /// Jobs named since the last sweep.
    adopted: BTreeSet<TaskRef>,
}

impl SlurmNode {
    /// The node Slurm knows as `node` (its cgroups are `slurm_<node>/…`).
    pub fn new(layout: Layout, node: &str) -> SlurmNode {
        SlurmNode { layout, node: node.to_string(), jobs: BTreeMap::new(), adopted: BTreeSet::new() }
    }

    /// The jobs held.
    pub fn tasks(&self) -> impl Iterator<Item = TaskRef> + '_ {
        self.jobs.keys().copied()
    }

    fn cgroup(&self, task: TaskRef) -> Option<SlurmJobCgroup> {
        SlurmJobCgroup::find(&self.layout, &self.node, slurm_id(task))
    }

    /// Carries out one order; what followed goes to `out`.
    pub fn apply(&mut self, op: AgentOp, out: &mut Vec<AgentReport>) {
        let task = op.task();
        if let Err(e) = self.try_apply(op, out) {
            match task {
                Some(task) => out.push(AgentReport::Lost { task, reason: e }),
                None => eprintln!("pliant agent: {e}"),
            }
        }
    }

    fn try_apply(&mut self, op: AgentOp, out: &mut Vec<AgentReport>) -> Result<(), String> {
        match op {
            AgentOp::Launch { .. } => Err("a Slurm node's agent launches nothing: Slurm does".into()),
            AgentOp::Adopt { task, resources, expect, owed_mb, .. } => {
                self.adopted.insert(task);
                let cgroup = self.cgroup(task);
                let held = self
                    .jobs
                    .entry(task)
                    .or_insert_with(|| Held { cgroup: None, memory: TaskMemory::new(resources.mem_mb * MB, &RULES) });
                if cgroup.is_some() {
                    held.cgroup = cgroup;
                }
                match expect {
                    Expected::Running | Expected::Checkpointing => {
                        held.memory.rebook(resources.mem_mb * MB);
                        if let Some(cgroup) = &held.cgroup {
                            match cgroup.lift().and_then(|()| cgroup.thaw()) {
                                Ok(()) => {}
                                // The cgroup of the job's run before (a requeued job's, which
                                // Slurm is still removing): not this run's, and not lost. The
                                // new run's is found when an order needs it.
                                Err(CgroupError::Io { source, .. })
                                    if source.kind() == std::io::ErrorKind::NotFound =>
                                {
                                    held.cgroup = None;
                                }
                                Err(e) => return Err(e.to_string()),
                            }
                        }
                        Ok(())
                    }
                    Expected::Restoring(limits) => resume(task, held, limits.mem_mb, out),
                    Expected::Frozen(limits) | Expected::Shrunk(limits) => {
                        // Counted afresh: what is owed (above the limit the job
                        // holds now) is what the controller has not heard of,
                        // whatever an earlier controller was told.
                        held.memory.rebook((limits.mem_mb + owed_mb) * MB);
                        let graceful = matches!(expect, Expected::Shrunk(_));
                        lower(task, held, limits.mem_mb, graceful, out)
                    }
                }
            }
            AgentOp::Preempt { task, mechanism, limits } => {
                let Some(held) = self.jobs.get_mut(&task) else {
                    return Err("not named to this node's agent by the controller".into());
                };
                if held.cgroup.is_none() {
                    held.cgroup = SlurmJobCgroup::find(&self.layout, &self.node, slurm_id(task));
                }
                match mechanism {
                    MechanismKind::Immediate => lower(task, held, limits.mem_mb, false, out),
                    MechanismKind::Graceful => lower(task, held, limits.mem_mb, true, out),
                    MechanismKind::Suspend => {
                        let cgroup = held.cgroup.as_ref().ok_or("its cgroup is not there")?;
                        cgroup.begin_freeze().map_err(|e| e.to_string())
                    }
                    MechanismKind::Kill | MechanismKind::Checkpoint => {
                        Err(format!("{} goes through Slurm, not the node's agent", mechanism.name()))
                    }
                }
            }
            AgentOp::Resume { task, limits } => {
                let Some(held) = self.jobs.get_mut(&task) else {
                    return Err("not named to this node's agent by the controller".into());
                };
                resume(task, held, limits.mem_mb, out)
            }
            AgentOp::Stop { task } => {
                self.jobs.remove(&task);
                Ok(())
            }
            AgentOp::Sweep => {
                let adopted = std::mem::take(&mut self.adopted);
                self.jobs.retain(|task, _| adopted.contains(task));
                Ok(())
            }
        }
    }

    /// Looks at every job: reports the memory its reclaim freed, freezes a
    /// shrunk one that swaps, reports a resumed one whose memory is back,
    /// and forgets the ones whose cgroup Slurm removed (they ended).
    pub fn poll(&mut self, out: &mut Vec<AgentReport>) {
        let mut gone = Vec::new();
        for (&task, held) in &mut self.jobs {
            if held.cgroup.is_none() {
                held.cgroup = SlurmJobCgroup::find(&self.layout, &self.node, slurm_id(task));
            }
            let Some(cgroup) = held.cgroup.as_mut() else { continue };
            if let Err(e) = held.memory.look(task, cgroup, out) {
                if cgroup.memory().is_err() {
                    gone.push(task);
                } else {
                    eprintln!("pliant agent: job {}: {e}", slurm_id(task));
                }
            }
        }
        for task in gone {
            self.jobs.remove(&task);
        }
    }
}

/// Starts lowering the job's limit to `to_mb` (frozen first unless `graceful`).
fn lower(task: TaskRef, held: &mut Held, to_mb: u64, graceful: bool, out: &mut Vec<AgentReport>) -> Result<(), String> {
    let cgroup = held.cgroup.as_mut().ok_or("its cgroup is not there (Slurm has not started it)")?;
    if !graceful {
        cgroup.begin_freeze().map_err(|e| e.to_string())?;
    }
    held.memory.lower(task, cgroup, to_mb * MB, graceful, out).map_err(|e| e.to_string())
}

/// Lifts the job's limit (booked as `limit_mb` from now on) and thaws what
/// the agent froze; it is reported resumed once its memory is back
/// ([`SlurmNode::poll`]).
fn resume(task: TaskRef, held: &mut Held, limit_mb: u64, out: &mut Vec<AgentReport>) -> Result<(), String> {
    let Some(cgroup) = held.cgroup.as_mut() else {
        held.memory.rebook(limit_mb * MB);
        out.push(AgentReport::Resumed { task });
        return Ok(());
    };
    let lift = |cgroup: &mut SlurmJobCgroup| {
        cgroup.lift().and_then(|()| cgroup.thaw())?;
        eprintln!("pliant agent: job {}: limit lifted, thawed", slurm_id(task));
        Ok(())
    };
    held.memory.resume(task, cgroup, limit_mb * MB, lift, out).map_err(|e| e.to_string())
}
