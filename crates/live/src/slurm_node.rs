//! The node side of pliant on Slurm (`pliant agent --slurm`): it launches
//! nothing. It carries out the controller's orders on the job cgroups Slurm's
//! `task/cgroup` made on this node ([`SlurmJobCgroup`]) and reports back in
//! the manager's protocol ([`AgentOp`], [`AgentReport`]): BIG-C's reclaim of
//! a suspended job's memory to its footprint (§3.2), a graceful shrink of a
//! running one (§3.3, frozen when it swaps, §4.2), and the limit lifted again
//! on resume. Memory freed is reported as the kernel frees it ([`Reclaiming`]),
//! a resume once the job's memory has come back from swap.
//!
//! On this channel a task is a Slurm job: `TaskRef { job: JobId(SLURM_ID), task: 0 }`.
//! The controller names each job it places here with [`AgentOp::Adopt`]
//! (its allocation, the state it should be in), and again after either side
//! restarted, followed by [`AgentOp::Sweep`].

use crate::cgroup::{CgroupError, Layout, MemoryStats};
use crate::mechanism::LIMIT_ATTEMPTS;
use crate::protocol::{AgentOp, AgentReport, Expected};
use crate::reclaim::Reclaiming;
use crate::slurm_job::SlurmJobCgroup;
use pliant_core::model::TaskRef;
use pliant_core::MechanismKind;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

const MB: u64 = 1 << 20;
/// How long a memory-limit write may wait while the kernel's reclaim stalls.
const RECLAIM_PATIENCE: Duration = Duration::from_secs(60);
/// How long a graceful shrink of a running job may stall before the job
/// counts as swapping (and is frozen).
const SHRINK_PATIENCE: Duration = Duration::from_secs(1);
/// Swap (bytes) at or below which a resumed job's memory is back.
const BACK: u64 = MB;
/// A resumed job whose swap went down and then stopped going down for this
/// long has read back what it touches.
const RESTORE_SETTLE: Duration = Duration::from_secs(1);
/// A resumed job whose swap never went down for this long does not touch
/// what is there (or Slurm has not resumed it yet): reported resumed.
const RESTORE_COLD: Duration = Duration::from_secs(10);

/// The Slurm job behind a task of this channel.
pub fn slurm_id(task: TaskRef) -> u64 {
    u64::from(task.job.0)
}

/// One Slurm job the controller named to this node.
struct Held {
    /// Its memory limit as the controller books it (its allocation, or
    /// lower once preempted), MB.
    limit_mb: u64,
    cgroup: Option<SlurmJobCgroup>,
    reclaim: Option<Underway>,
    /// Shrunk and running: its counters at the last look, to see it swap.
    watch: Option<MemoryStats>,
    restoring: Option<Restoring>,
}

/// A limit write under way.
struct Underway {
    write: Reclaiming,
    /// Graceful: the job runs meanwhile, and is frozen if reclaim stalls.
    graceful: bool,
    froze: bool,
    start: Instant,
    before_mb: u64,
}

/// A resumed job reading its memory back.
struct Restoring {
    swap: u64,
    since: Instant,
    started: Instant,
    moved: bool,
}

impl Restoring {
    /// True once the swap is back, or has stopped going down (see the constants).
    fn done(&mut self, swap: u64, now: Instant) -> bool {
        if swap < self.swap {
            (self.swap, self.since, self.moved) = (swap, now, true);
        }
        swap <= BACK
            || (self.moved && now.duration_since(self.since) >= RESTORE_SETTLE)
            || now.duration_since(self.started) >= RESTORE_COLD && !self.moved
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
                let held = self.jobs.entry(task).or_insert(Held {
                    limit_mb: resources.mem_mb,
                    cgroup: None,
                    reclaim: None,
                    watch: None,
                    restoring: None,
                });
                if cgroup.is_some() {
                    held.cgroup = cgroup;
                }
                match expect {
                    Expected::Running | Expected::Checkpointing => {
                        held.limit_mb = resources.mem_mb;
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
                    Expected::Restoring(limits) => {
                        held.limit_mb = limits.mem_mb;
                        resume(task, held, out)
                    }
                    Expected::Frozen(limits) | Expected::Shrunk(limits) => {
                        // Counted afresh: what is owed (above the limit the job
                        // holds now) is what the controller has not heard of,
                        // whatever an earlier controller was told.
                        if let Some(mut earlier) = held.reclaim.take() {
                            earlier.write.wait();
                        }
                        held.limit_mb = limits.mem_mb + owed_mb;
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
                held.limit_mb = limits.mem_mb;
                resume(task, held, out)
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
            if let Err(e) = look(task, held, out) {
                if held.cgroup.as_ref().is_some_and(|c| c.memory().is_err()) {
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

/// Starts lowering the job's limit to `to_mb` (frozen first unless
/// `graceful`); a write still under way is waited for and the new one
/// counts on from it.
fn lower(task: TaskRef, held: &mut Held, to_mb: u64, graceful: bool, out: &mut Vec<AgentReport>) -> Result<(), String> {
    let cgroup = held.cgroup.as_ref().ok_or("its cgroup is not there (Slurm has not started it)")?;
    held.watch = None;
    held.restoring = None;
    if !graceful {
        cgroup.begin_freeze().map_err(|e| e.to_string())?;
    }
    let usage = cgroup.memory().map_err(|e| e.to_string())?.usage;
    let patience = if graceful { SHRINK_PATIENCE } else { RECLAIM_PATIENCE };
    let underway = match held.reclaim.take() {
        Some(mut earlier) => {
            earlier.write.wait();
            earlier.write.retarget(cgroup.memory_limit(), to_mb * MB, patience);
            Underway { graceful, froze: earlier.froze || !graceful, ..earlier }
        }
        None => Underway {
            write: Reclaiming::start(cgroup.memory_limit(), held.limit_mb * MB, to_mb * MB, usage, patience),
            graceful,
            froze: !graceful,
            start: Instant::now(),
            before_mb: usage / MB,
        },
    };
    held.reclaim = Some(underway);
    // What the job never used is free at once.
    report_progress(task, held, out).map_err(|e| e.to_string())
}

/// Lifts the job's limit and thaws what the agent froze; it is reported
/// resumed once its memory is back ([`SlurmNode::poll`]).
fn resume(task: TaskRef, held: &mut Held, out: &mut Vec<AgentReport>) -> Result<(), String> {
    if let Some(mut r) = held.reclaim.take() {
        r.write.wait();
    }
    held.watch = None;
    let Some(cgroup) = &held.cgroup else {
        out.push(AgentReport::Resumed { task });
        return Ok(());
    };
    cgroup.lift().and_then(|()| cgroup.thaw()).map_err(|e| e.to_string())?;
    eprintln!("pliant agent: job {}: limit lifted, thawed", slurm_id(task));
    let swap = cgroup.memory().map_err(|e| e.to_string())?.swap;
    let now = Instant::now();
    if swap <= BACK {
        out.push(AgentReport::Resumed { task });
    } else {
        held.restoring = Some(Restoring { swap, since: now, started: now, moved: false });
    }
    Ok(())
}

/// One look at a job (see [`SlurmNode::poll`]).
fn look(task: TaskRef, held: &mut Held, out: &mut Vec<AgentReport>) -> Result<(), CgroupError> {
    report_progress(task, held, out)?;
    let Some(cgroup) = &held.cgroup else { return Ok(()) };
    if let Some(restoring) = &mut held.restoring {
        if restoring.done(cgroup.memory()?.swap, Instant::now()) {
            let took = restoring.started.elapsed().as_millis();
            eprintln!(
                "pliant agent: job {}: its memory is back ({took} ms after its limit was lifted)",
                slurm_id(task)
            );
            held.restoring = None;
            out.push(AgentReport::Resumed { task });
        }
    }
    if let Some(before) = held.watch {
        let now = cgroup.memory()?;
        held.watch = Some(now);
        if now.swapping_since(&before) {
            // BIG-C GP §4.2: a shrunk container that swaps is frozen.
            cgroup.begin_freeze()?;
            held.watch = None;
            eprintln!("pliant agent: job {}: swaps while shrunk: frozen", slurm_id(task));
            out.push(AgentReport::Swapping { task });
        }
    }
    Ok(())
}

/// Reports what the reclaim under way freed since the last look; at its
/// end logs it, and watches a shrunk job that still runs for swapping.
fn report_progress(task: TaskRef, held: &mut Held, out: &mut Vec<AgentReport>) -> Result<(), CgroupError> {
    let (Some(mut r), Some(cgroup)) = (held.reclaim.take(), held.cgroup.as_ref()) else { return Ok(()) };
    let usage = cgroup.memory()?.usage;
    let done = match r.write.ended() {
        None => false,
        Some(Ok(())) => true,
        Some(Err(CgroupError::LimitBusy { .. })) if r.graceful && !r.froze => {
            // Reclaim stalls while the job runs: it swaps; frozen, it gives its memory back.
            cgroup.begin_freeze()?;
            r.froze = true;
            eprintln!("pliant agent: job {}: swaps while it shrinks: frozen", slurm_id(task));
            out.push(AgentReport::Swapping { task });
            r.write.retry(cgroup.memory_limit(), RECLAIM_PATIENCE);
            false
        }
        Some(Err(CgroupError::LimitBusy { .. })) if r.write.attempts < LIMIT_ATTEMPTS => {
            r.write.retry(cgroup.memory_limit(), RECLAIM_PATIENCE);
            false
        }
        Some(Err(e)) => return Err(e),
    };
    let freed = r.write.freed(usage, done);
    if freed.mem_mb > 0 {
        let took_ms = freed.took.as_millis() as u64;
        out.push(AgentReport::Reclaimed { task, mem_mb: freed.mem_mb, freed_mb: freed.used_mb, took_ms });
    }
    if !done {
        held.reclaim = Some(r);
        return Ok(());
    }
    held.limit_mb = r.write.target() / MB;
    let after = cgroup.memory()?;
    eprintln!(
        "pliant agent: job {} limited to {} MB: {} MB -> {} MB in {} ms",
        slurm_id(task),
        held.limit_mb,
        r.before_mb,
        after.usage / MB,
        r.start.elapsed().as_millis()
    );
    if !r.froze {
        held.watch = Some(after);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resume_ends_when_the_swap_is_back_settles_or_never_moves() {
        let t0 = Instant::now();
        let at = |ms| t0 + Duration::from_millis(ms);
        let fresh = || Restoring { swap: 200 * MB, since: t0, started: t0, moved: false };
        let mut r = fresh();
        assert!(!r.done(200 * MB, at(2000)), "Slurm may not have resumed it yet");
        assert!(!r.done(150 * MB, at(2500)));
        assert!(!r.done(150 * MB, at(3400)), "a second from the last drop");
        assert!(r.done(150 * MB, at(3500)));
        assert!(fresh().done(BACK, at(10)), "all back");
        assert!(fresh().done(200 * MB, at(10_000)), "pages it never touches stay in swap");
    }
}
