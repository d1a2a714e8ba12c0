//! pliant's live body on Linux: tasks run as real processes in cgroups, and
//! the preemption mechanisms keep their work — freeze, shrink, swap out,
//! checkpoint — or kill them when told to; and what both live bodies (the
//! manager and the Slurm controller) share with their agents: the live step
//! driver ([`stepper`]), the messages ([`wire`]), the HTTPS server and client,
//! the tokens and node credentials, and `pliant agent` ([`remote_agent`]).
//!
//! Architecture invariant: the policy lives in `pliant-core`; this crate only
//! carries out its actions ([`dispatch`] is the single mapping) and reports
//! what it observes. It touches only cgroups it created (named `pliant…`),
//! processes it started, swap files it made and the tasks' directories it
//! makes (under a directory descriptor, never through a link: [`held_dir`]);
//! on Slurm (`slurm_node` on `slurm_job`, run by a node's `pliant agent
//! --slurm`) it only lowers and lifts the memory limits of the job cgroups
//! Slurm made, and freezes and thaws them.
#![warn(missing_docs)]

pub mod agent;
pub mod capabilities;
pub mod cgroup;
pub mod client;
pub mod confine;
pub mod credentials;
pub mod daemon;
pub mod delivery;
pub mod dirtier;
pub mod dispatch;
pub mod executor;
pub mod fence;
pub mod held_dir;
pub mod machine;
pub mod measure;
pub mod mechanism;
pub mod mirror;
pub mod node_dir;
pub mod node_loop;
pub mod peer;
pub mod process;
pub mod protocol;
pub mod reclaim;
pub mod remote_agent;
pub mod report_sequence;
pub mod scratch;
pub mod server;
pub mod slurm_job;
pub mod slurm_node;
pub mod stepper;
pub mod strict;
pub mod swap;
pub mod swap_meter;
pub mod task_dir;
pub mod task_files;
pub mod tls;
pub mod token;
pub mod uid_range;
pub mod wire;
