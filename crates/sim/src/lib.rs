//! pliant's simulator: replays a workload on a simulated cluster, with the
//! shared core making every decision and a ground-truth execution model
//! deciding how tasks really behave.
//!
//! Architecture invariant: the simulator never tells the core anything a real
//! resource manager would not know; the execution model is the only place that
//! reads a task's true duration.
#![warn(missing_docs)]

mod engine;
mod event_queue;
mod execution;

pub use engine::simulate;

use pliant_core::{CoreError, Micros, SECOND};

/// The per-node linear power model of DESIGN.md: idle + (peak − idle) × CPU utilisation.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct PowerModel {
    /// Watts drawn by an idle node.
    pub idle_w: f64,
    /// Watts drawn by a fully busy node.
    pub peak_w: f64,
}

/// Knobs of the simulator itself (not of the policy).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SimOptions {
    /// Period of the utilisation timeline.
    pub sample_interval: Micros,
    /// Power model for the energy figure.
    pub power: PowerModel,
}

impl Default for SimOptions {
    fn default() -> Self {
        // BIG-C Fig. 8d samples utilisation every 2 s.
        SimOptions { sample_interval: 2 * SECOND, power: PowerModel { idle_w: 100.0, peak_w: 250.0 } }
    }
}

/// Why a simulation could not complete.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SimError {
    /// The core refused an observation (a bug in the body or the core).
    #[error("core error: {0}")]
    Core(#[from] CoreError),
    /// Nothing runs, nothing arrives, yet jobs remain: they can never start
    /// (for example long jobs under `reserve` with every node reserved).
    #[error("{unfinished} jobs can never run under this policy (stuck at t = {at} µs)")]
    Stuck {
        /// Jobs left.
        unfinished: usize,
        /// When the run got stuck.
        at: Micros,
    },
}
