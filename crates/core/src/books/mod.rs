//! The shared books: nodes, queues, jobs and their tasks as the resource
//! manager sees them, and the [`View`] through which the policy's plugins
//! (`policy/`, and the built-in ones in `pliant-plugins`) read and book them
//! — the public book types a plugin reads through the view. The scheduler (`scheduler/`) keeps them
//! and calls the plugins; both use this module, which uses neither.

mod pending;
mod state;
mod tasks;
mod view;
mod waiting;

pub use pending::PendingTasks;
pub use state::{JobRuntime, JobStatus, NodeState, PhaseRuntime, QueueState, ServiceKey, Submitted};
pub use tasks::{TaskRuntime, Tasks};
pub use view::{Holding, View};
pub use waiting::Waiting;
