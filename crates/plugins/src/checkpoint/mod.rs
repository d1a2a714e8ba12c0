//! The checkpoint paper (checkpoint-based preemption): dumping and restoring
//! victims, Algorithms 1 and 2 (`dump.rs`), and preemption by priority
//! level, §3.1 (`levels.rs`).

mod dump;
mod levels;

pub(crate) use dump::Checkpoint;
pub(crate) use levels::Levels;
