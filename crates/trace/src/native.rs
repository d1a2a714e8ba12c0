//! pliant's native workload format on the trace side: the view of a native
//! job as a [`TraceJob`], for statistics. (Writing is
//! [`pliant_workload::format::WorkloadWriter`], which streams.)

use crate::record::{JobKind, TraceJob};
use pliant_core::Micros;
use pliant_workload::Job;

/// A native job seen as a trace job; its end is its submission plus its
/// critical path (each phase lasting as long as its longest task).
pub fn trace_job(job: Job) -> TraceJob {
    let mut finish: Vec<Micros> = Vec::with_capacity(job.phases.len());
    for p in &job.phases {
        let ready = p.deps.iter().filter_map(|&d| finish.get(d as usize)).max().copied().unwrap_or(0);
        finish.push(ready + p.tasks.iter().map(|t| t.duration).max().unwrap_or(0));
    }
    TraceJob {
        kind: JobKind::of(&job.name).0,
        end: job.submit + finish.into_iter().max().unwrap_or(0),
        id: job.name,
        submit: job.submit,
        priority: job.priority,
        sched_class: None,
        class: Some(job.class),
        elastic: job.elastic,
        phases: job.phases,
    }
}
