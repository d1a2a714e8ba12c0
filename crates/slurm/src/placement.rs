//! Who places the partition's jobs: pliant (it holds every job and releases
//! each on the node its core chose) or Slurm (`--placement slurm`: Slurm
//! places and starts the jobs itself, booking CPU and memory under
//! `CR_Core_Memory`; pliant adopts each job where Slurm started it, so that
//! its core's books say what runs where, and decides only preemptions).
//!
//! When Slurm places, pliant takes into its own hands only the short jobs
//! Slurm could not start (pending for `Resources` or `Priority`): it holds
//! them, so that its core can preempt for them and place them on the room
//! it freed. Only the mechanisms that free Slurm's booking can serve:
//! requeue (`kill`) and a checkpoint followed by a requeue. Slurm 22.05
//! keeps a suspended job's memory booked under `CR_Core_Memory` and refuses
//! to lower a running or suspended job's memory (`scontrol update
//! MinMemoryNode=…`: "Job is no longer pending execution"; `TRES=…`: "Update
//! of this parameter is not supported"), so BIG-C's `immediate` and
//! `graceful` cannot give a waiting job room Slurm would see; Slurm's own
//! `suspend` frees the cores, but any pending job may take them before
//! pliant resumes the victim.

use crate::records::SlurmJob;
use pliant_core::model::JobClass;
use pliant_core::policy::Policy;
use pliant_core::MechanismKind;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// Who places the partition's jobs; fixed when the journal is created.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Placer {
    /// pliant: every job is held and released on the node the core chose.
    #[default]
    Pliant,
    /// Slurm: jobs are not held; pliant adopts them where they start and
    /// preempts for the short jobs Slurm cannot start.
    Slurm,
}

impl Placer {
    /// `pliant` or `slurm`.
    pub fn parse(text: &str) -> Result<Placer, String> {
        match text {
            "pliant" => Ok(Placer::Pliant),
            "slurm" => Ok(Placer::Slurm),
            other => Err(format!("--placement {other:?}: expected `pliant` or `slurm`")),
        }
    }

    /// The name `--placement` takes.
    pub fn name(self) -> &'static str {
        match self {
            Placer::Pliant => "pliant",
            Placer::Slurm => "slurm",
        }
    }

    /// The mechanisms a node can carry out under this placer (`None`: all).
    pub fn mechanisms(self) -> Option<&'static [MechanismKind]> {
        match self {
            Placer::Pliant => None,
            Placer::Slurm => Some(&[MechanismKind::Kill, MechanismKind::Checkpoint]),
        }
    }

    /// Refuses a policy (named `name`) that preempts by a mechanism this
    /// placer cannot carry out; a policy that chooses per victim (`pliant`)
    /// is left to choose among those it can.
    pub fn check(self, name: &str, policy: &Policy) -> Result<(), String> {
        let (Some(can), Some(kind)) = (self.mechanisms(), policy.preemption.and_then(|p| p.mechanism.kind())) else {
            return Ok(());
        };
        if can.contains(&kind) {
            return Ok(());
        }
        Err(format!(
            "policy `{name}` preempts by {} preemption, which cannot work with --placement {}: Slurm books \
             memory there (CR_Core_Memory), keeps a suspended job's memory booked, and 22.05 refuses to lower a \
             running job's memory, so only requeue (kill) and checkpoint free room Slurm sees; use --policy kill, \
             checkpoint-nvm or pliant, or --placement pliant",
            kind.name(),
            self.name()
        ))
    }
}

/// Whether pliant, when Slurm places, takes a pending job it does not
/// manage yet into its hands (holding it): a short job Slurm could not
/// start. Other pending jobs are Slurm's to place.
pub fn takes_pending(job: &SlurmJob, class: Option<JobClass>) -> bool {
    class == Some(JobClass::Short) && matches!(job.reason.as_str(), "Resources" | "Priority")
}

/// The pending jobs of the partition pliant has seen and does not manage,
/// when Slurm places them: one that leaves the live states between two
/// polls (started and ended meanwhile) is read by id, so that it is adopted
/// where it ran all the same.
#[derive(Debug, Default)]
pub struct Queued {
    ids: BTreeSet<u64>,
}

impl Queued {
    /// Takes in one poll's pending jobs (`pending`, not managed) and the
    /// ids of all the jobs it showed live (`live`); returns the ids seen
    /// pending before that are no longer live, to be read by id.
    pub fn update(&mut self, pending: impl IntoIterator<Item = u64>, live: &BTreeSet<u64>) -> Vec<u64> {
        let gone: Vec<u64> = self.ids.iter().copied().filter(|id| !live.contains(id)).collect();
        for id in &gone {
            self.ids.remove(id);
        }
        self.ids.extend(pending);
        gone
    }

    /// Forgets a job (pliant manages it now).
    pub fn forget(&mut self, id: u64) {
        self.ids.remove(&id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pliant_core::policy::Params;
    use pliant_plugins::preset;

    #[test]
    fn slurm_placement_refuses_what_cannot_free_slurms_booking() {
        let p = Params::default();
        for (name, ok) in [("kill", true), ("ip", false), ("gp", false), ("suspend", false), ("pliant", true)] {
            let policy = preset(name, &p).unwrap();
            let r = Placer::Slurm.check(name, &policy);
            assert_eq!(r.is_ok(), ok, "{name}: {r:?}");
            if let Err(e) = r {
                assert!(e.contains("--placement slurm") && e.contains(&format!("`{name}`")), "{e}");
            }
            assert!(Placer::Pliant.check(name, &policy).is_ok());
        }
        assert_eq!(Placer::parse("slurm"), Ok(Placer::Slurm));
        assert!(Placer::parse("both").unwrap_err().contains("`pliant` or `slurm`"));
    }

    #[test]
    fn a_queued_job_that_left_between_polls_is_named_once() {
        let mut q = Queued::default();
        let live = |ids: &[u64]| ids.iter().copied().collect::<BTreeSet<u64>>();
        assert!(q.update([1, 2, 3], &live(&[1, 2, 3])).is_empty());
        assert_eq!(q.update([1], &live(&[1, 3])), vec![2]);
        q.forget(3);
        assert_eq!(q.update([], &live(&[])), vec![1]);
        assert!(q.update([], &live(&[])).is_empty());
    }
}
