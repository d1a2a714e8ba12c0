//! The Slurm controller's journal (`journal.jsonl` of `pliant slurm`) read
//! as the manager's: the same facts under other names. Its actions are the
//! core's, as the manager's are; its events become the manager's — a Slurm
//! job is a job of one task (named `slurm-ID`), `COMPLETED` its exit 0,
//! any other end (failed, cancelled, timed out, gone) its loss, and its
//! node agent's reclaim, swapping, resume and checkpoint reports the same
//! reports — and its cluster entry the manager's configuration (a node of
//! a partition where pliant places can carry out every mechanism; where
//! Slurm places, kill and checkpoint only, as the controller tells its core).

use pliant_core::model::{JobId, TaskRef};
use pliant_core::MechanismKind;
use pliant_live::protocol::AgentReport;
use pliant_live::wire::NodeRecord;
use pliant_manager::events::{Event, JobSpec};
use pliant_manager::journal::Step;
use pliant_manager::manager::ClusterConfig;
use pliant_slurm::controller::{ControllerConfig, Event as SlurmEvent, JobSpec as SlurmSpec};
use pliant_slurm::journal::Journal;
use std::collections::BTreeMap;
use std::path::Path;

/// Reads the Slurm controller's journal at `path` as the manager's
/// configuration and steps.
pub fn read(path: &Path) -> Result<(ClusterConfig, Vec<Step>), String> {
    let (config, steps) = Journal::read::<ControllerConfig, SlurmEvent>(path).map_err(|e| e.to_string())?;
    let config = config.ok_or_else(|| format!("{}: the journal holds no cluster entry", path.display()))?;
    let mechanisms = config.placement.mechanisms().map_or_else(|| MechanismKind::ALL.to_vec(), <[_]>::to_vec);
    let cluster = ClusterConfig {
        policy: config.policy,
        params: config.params,
        nodes: config
            .nodes
            .into_iter()
            .map(|n| NodeRecord { name: n.name, capacity: n.capacity, mechanisms: mechanisms.clone(), notes: vec![] })
            .collect(),
        epoch_unix_us: config.epoch_unix_us,
    };
    // Slurm's id → the core's job (the controller numbers them as they come).
    let mut jobs: BTreeMap<u64, TaskRef> = BTreeMap::new();
    let steps = steps
        .into_iter()
        .map(|step| Step {
            now: step.now,
            monitor: step.monitor,
            events: step.events.iter().filter_map(|e| event(e, &mut jobs)).collect(),
            actions: step.actions,
        })
        .collect();
    Ok((cluster, steps))
}

/// The manager's event for a Slurm controller's one, if it has one (a
/// submission seen again, or news of a job never submitted, has none: the
/// controller drops them too).
fn event(e: &SlurmEvent, jobs: &mut BTreeMap<u64, TaskRef>) -> Option<Event> {
    let report = match *e {
        SlurmEvent::Submitted { slurm_id, uid, ref spec, .. } => return submitted(slurm_id, uid, spec, jobs),
        SlurmEvent::Finished { slurm_id } => {
            AgentReport::Exited { task: *jobs.get(&slurm_id)?, code: Some(0), signal: None, stderr_tail: String::new() }
        }
        SlurmEvent::Ended { slurm_id, ref state } => {
            AgentReport::Lost { task: *jobs.get(&slurm_id)?, reason: format!("Slurm: {state}") }
        }
        SlurmEvent::Reclaimed { slurm_id, mem_mb } => {
            AgentReport::Reclaimed { task: *jobs.get(&slurm_id)?, mem_mb, freed_mb: mem_mb, took_ms: 0 }
        }
        SlurmEvent::Swapping { slurm_id } => AgentReport::Swapping { task: *jobs.get(&slurm_id)? },
        SlurmEvent::Resumed { slurm_id } => AgentReport::Resumed { task: *jobs.get(&slurm_id)? },
        SlurmEvent::Checkpointed { slurm_id } => AgentReport::Checkpointed { task: *jobs.get(&slurm_id)? },
        SlurmEvent::SwapRates { node, rates } => return Some(Event::SwapRates { node, rates }),
    };
    Some(Event::Report { node: 0, report })
}

/// A Slurm job's submission as a job of one task, numbered as it comes.
fn submitted(slurm_id: u64, uid: u32, spec: &SlurmSpec, jobs: &mut BTreeMap<u64, TaskRef>) -> Option<Event> {
    if jobs.contains_key(&slurm_id) {
        return None;
    }
    jobs.insert(slurm_id, TaskRef { job: JobId(jobs.len() as u32), task: 0 });
    let spec = JobSpec {
        name: format!("slurm-{slurm_id}"),
        queue: spec.class,
        cpu_milli: spec.cpu_milli,
        mem_mb: spec.mem_mb,
        priority: spec.priority,
        tasks: 1,
        command: vec![],
        phases: vec![],
        estimate_us: spec.estimate_us,
        elastic: None,
    };
    Some(Event::Submitted { spec, uid: Some(uid) })
}
