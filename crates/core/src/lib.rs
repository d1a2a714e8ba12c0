//! pliant's scheduling core: the model a resource manager keeps and the
//! policies that decide with it.
//!
//! Architecture invariant: this crate does no I/O, reads no clock and holds no
//! global state. Time is an integer count of microseconds. It sees only what a
//! real resource manager sees — requests, job-supplied estimates and observed
//! events — never a body's ground truth.
#![warn(missing_docs)]

pub mod action;
pub mod books;
pub mod driver;
mod error;
mod live_table;
pub mod model;
pub mod names;
pub mod node_index;
pub mod observation;
pub mod parameter;
pub mod policy;
pub mod resources;
pub mod scheduler;
mod swap_rates;
pub mod time;

pub use action::{Action, MechanismKind};
pub use driver::{Driver, Pass};
pub use error::CoreError;
pub use live_table::LiveTable;
pub use observation::Observation;
pub use resources::Resources;
pub use scheduler::{MemoryWanted, Scheduler, TaskBooks};
#[doc(hidden)]
pub use serde as __serde;
pub use swap_rates::SwapRates;
pub use time::{Micros, SECOND};
