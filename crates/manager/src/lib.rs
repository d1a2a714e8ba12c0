//! pliant's resource manager for live mode: the scheduling core run on live
//! events, a durable journal in an embedded SQLite file, the HTTP API
//! (token-guarded JSON, Prometheus text, a web page),
//! `pliant local` (the manager and one agent for this machine in one
//! process), and `pliant serve` (the manager on its own, for agents apart).
//! The node side — cgroups, processes, mechanisms, `pliant agent` — and the
//! HTTPS channel to the agents are `pliant-live`'s.
//!
//! Architecture invariant: this crate holds no policy (that is the core's)
//! and touches no cgroup (that is the agent's); it is the only place in live
//! mode that reads a clock, and it turns the clock into the core's integer µs.
#![warn(missing_docs)]

pub mod api;
pub mod choices;
pub mod elastic;
pub mod events;
pub mod journal;
pub mod local;
pub mod manager;
pub mod metrics;
pub mod page;
pub mod room;
pub mod serve;
pub mod state_dir;
pub mod submit;
pub mod view;
