//! pliant's resource manager for live mode: the scheduling core run on live
//! events, a durable journal in an embedded SQLite file, the HTTP API
//! (token-guarded JSON, Prometheus text, a web page),
//! `pliant local` (the manager and one agent for this machine in one
//! process), and `pliant serve` / `pliant agent` as separate processes. The node side — cgroups, processes, mechanisms — is
//! `pliant-live`.
//!
//! Architecture invariant: this crate holds no policy (that is the core's)
//! and touches no cgroup (that is the agent's); it is the only place in live
//! mode that reads a clock, and it turns the clock into the core's integer µs.
#![warn(missing_docs)]

pub mod api;
pub mod choices;
pub mod client;
pub mod credentials;
pub mod delivery;
pub mod elastic;
pub mod events;
pub mod journal;
pub mod local;
pub mod manager;
pub mod metrics;
pub mod node_dir;
pub mod page;
pub mod peer;
pub mod remote_agent;
pub mod room;
pub mod serve;
pub mod server;
pub mod signals;
pub mod state_dir;
pub mod strict;
pub mod submit;
pub mod tls;
pub mod token;
pub mod view;
