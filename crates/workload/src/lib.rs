//! Workloads: a cluster and the jobs to run on it, with the ground truth a
//! simulator needs (how long each task really runs) beside what the core is
//! allowed to see (requests and estimates).
#![warn(missing_docs)]

pub mod format;
mod model;
pub mod scenarios;
pub mod straggler_study;

pub use format::{read_job_line, read_workload, write_workload, FormatError, JobReader};
pub use model::{Cluster, Job, JobElasticity, Phase, StageTasks, Task, ValidationError, Workload, DSS_AM};
