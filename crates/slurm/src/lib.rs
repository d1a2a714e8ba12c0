//! pliant on Slurm: Slurm launches, tracks, accounts and cleans up the jobs;
//! pliant's core — the same code as the simulator — places them and decides
//! which running jobs yield and how (`docs/slurm.md`).
//!
//! The controller talks to Slurm through its own command-line tools
//! ([`tools`]): `squeue` (a compact format, only pliant's partition and the
//! jobs it tracks) and `sinfo --json` to read, `scontrol` (batched where
//! Slurm takes job lists) and `scancel` to act; `slurm/job_submit.lua` holds
//! the partition's jobs at submission. With `--placement slurm`
//! ([`placement`]) Slurm places and starts the jobs itself and pliant adopts
//! them and only preempts. Debian's Slurm 22.05 has no `scontrol --json` and its
//! `slurmrestd` (v0.0.38) cannot place a job on a node nor suspend one, so
//! the REST daemon would still need `scontrol` beside it.
//!
//! Architecture invariant: Slurm stays the source of truth for what runs
//! where; the controller's journal ([`journal`]) holds only what Slurm does
//! not know (pliant's decisions and the memory it reclaimed), and a restart
//! replays it and then squares it with what Slurm shows.
#![warn(missing_docs)]

pub mod agent;
pub mod calls;
pub mod controller;
pub mod journal;
pub mod link;
pub mod options;
pub mod placement;
pub mod recorded;
pub mod records;
pub mod tools;
