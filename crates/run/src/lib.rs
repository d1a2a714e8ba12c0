//! Simulator runs as `pliant simulate`, `pliant sweep` and `pliant run` make
//! them — the workload a run replays, the settings in force, experiment files,
//! the policies run in parallel, the outputs written — for the command and for
//! the Python package alike, so that both decide and report the same.
#![warn(missing_docs)]

pub mod experiment;
pub mod out_dir;
pub mod policy_spec;
pub mod progress;
pub mod settings;
pub mod simulate;
pub mod sweep;
pub mod workload_args;

pub use experiment::Command;
pub use settings::Settings;
pub use workload_args::{parse_node, parse_window};
