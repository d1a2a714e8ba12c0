//! Graceful preemption when the free room is split over nodes: two nodes
//! ⟨2 CPU, 1000 MB⟩ each run a long task of ⟨1 CPU, 700 MB⟩; a short task
//! of ⟨1 CPU, 550 MB⟩ arrives. The cluster has 600 MB free in all, but no
//! node more than 300 MB: the first monitor round shrinks a long task, and
//! once its memory is back the short task runs on that node — it does not
//! wait for another task to arrive.

mod common;

use pliant_core::model::{JobClass, JobId, JobRequest, TaskRef, TaskRequest};
use pliant_core::policy::Params;
use pliant_core::{Action, Observation, Resources, Scheduler, SECOND};
use pliant_plugins::preset;

fn job(id: u32, class: JobClass, mem_mb: u64) -> JobRequest {
    common::one_phase_job(id, class, vec![TaskRequest { resources: Resources::new(1000, mem_mb), estimate: None }])
}

#[test]
fn a_short_task_that_fits_the_free_total_but_no_node_gets_a_preemption() {
    let mut params = Params::default();
    params.set("monitor_interval_s", "1").unwrap();
    let policy = preset("gp", &params).unwrap();
    let node = Resources::new(2000, 1000);
    let mut s = Scheduler::new(&[node, node], policy).unwrap();
    let mut out = Vec::new();
    s.observe(0, Observation::JobSubmitted(job(0, JobClass::Long, 700))).unwrap();
    s.observe(0, Observation::JobSubmitted(job(1, JobClass::Long, 700))).unwrap();
    s.schedule(0, &mut out);
    let nodes: Vec<u32> =
        out.iter().filter_map(|a| if let Action::Launch { node, .. } = a { Some(node.0) } else { None }).collect();
    assert_eq!(nodes, vec![0, 1], "one long task per node: {out:?}");
    out.clear();
    s.observe(3 * SECOND, Observation::JobSubmitted(job(2, JobClass::Short, 550))).unwrap();
    s.schedule(3 * SECOND, &mut out);
    assert!(out.is_empty(), "no node has 550 MB free: {out:?}");
    s.monitor(4 * SECOND, &mut out);
    s.schedule(4 * SECOND, &mut out);
    let shrunk: Vec<(TaskRef, Resources)> = out
        .iter()
        .filter_map(|a| if let Action::Graceful { task, to } = a { Some((*task, *to)) } else { None })
        .collect();
    assert!(!shrunk.is_empty(), "the monitor round took nothing back: {out:?}");
    // Each shrunk task's memory comes back; the short task then runs.
    let mut later = Vec::new();
    for (task, to) in &shrunk {
        s.observe(4 * SECOND + 100_000, Observation::MemoryReclaimed { task: *task, mem_mb: 700 - to.mem_mb }).unwrap();
    }
    s.schedule(4 * SECOND + 100_000, &mut later);
    let short = TaskRef { job: JobId(2), task: 0 };
    assert!(later.iter().any(|a| matches!(a, Action::Launch { task, .. } if *task == short)), "{later:?}");
}
