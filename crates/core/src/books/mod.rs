//! The shared books: nodes, queues, jobs and their tasks as the resource
//! manager sees them, and the [`View`] through which the policy's plugins
//! (`policy/`) read and book them. The scheduler (`scheduler/`) keeps them
//! and calls the plugins; both use this module, which uses neither.

mod pending;
mod state;
mod tasks;
mod view;
mod waiting;

pub(crate) use state::{JobRuntime, JobStatus, NodeState, QueueState, ServiceKey};
pub(crate) use tasks::TaskRuntime;
pub use view::{Holding, View};
pub use waiting::Waiting;
