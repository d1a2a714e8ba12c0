//! pliant's live body on Linux: tasks run as real processes in cgroups, and
//! the preemption mechanisms keep their work — freeze, shrink, swap out,
//! checkpoint — or kill them when told to.
//!
//! Architecture invariant: the policy lives in `pliant-core`; this crate only
//! carries out its actions ([`dispatch`] is the single mapping) and reports
//! what it observes. It touches only cgroups it created (named `pliant…`),
//! processes it started and swap files it made; on Slurm (`slurm_node` on
//! `slurm_job`, run by a node's `pliant agent --slurm`) it only lowers and
//! lifts the memory limits of the job cgroups Slurm made, and freezes and
//! thaws them.
#![warn(missing_docs)]

pub mod agent;
pub mod capabilities;
pub mod cgroup;
pub mod confine;
pub mod dirtier;
pub mod dispatch;
pub mod fence;
pub mod measure;
pub mod mechanism;
pub mod process;
pub mod protocol;
pub mod reclaim;
pub mod scratch;
pub mod slurm_job;
pub mod slurm_node;
pub mod stepper;
pub mod swap;
pub mod task_files;
