//! What a resource manager knows about its cluster and its work: jobs made of
//! phases made of tasks, with requests and job-supplied estimates — never the
//! true amount of work a task will do.

mod elasticity;
mod ids;
mod job;
mod priority_level;
mod storage;
mod task_state;

pub use elasticity::{spilled_mb, Elasticity, ElasticityProfile, SHUFFLE_BUFFER_FRACTION};
pub use ids::{JobId, NodeId, TaskRef};
pub use job::{JobClass, JobRequest, PhaseRequest, TaskRequest};
pub use priority_level::PriorityLevel;
pub use storage::{StorageModel, Tier};
pub use task_state::{IllegalTransition, TaskState};
