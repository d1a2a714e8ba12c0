//! What the core's scenario tests share: a job of one phase.

use pliant_core::model::{JobClass, JobId, JobRequest, PhaseRequest, TaskRequest};

/// A job of one phase of independent tasks that read no particular node's
/// output, submitted at 0 with priority 0.
pub fn one_phase_job(id: u32, class: JobClass, tasks: Vec<TaskRequest>) -> JobRequest {
    let phase = PhaseRequest { deps: vec![], coupled: false, local: false, tasks };
    JobRequest { id: JobId(id), submit: 0, class, priority: 0, phases: vec![phase], elastic: None }
}
