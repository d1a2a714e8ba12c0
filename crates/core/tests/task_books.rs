//! The per-task query (`Scheduler::task`) a live body reads instead of
//! keeping its own copy: on one node ⟨2 CPU, 1000 MB⟩ under `gp`, two long
//! tasks fill it and a short one makes the monitor shrink them, the younger first.

mod common;

use pliant_core::model::{JobClass, JobId, NodeId, TaskRef, TaskRequest, TaskState};
use pliant_core::policy::Params;
use pliant_core::{Action, Observation, Resources, Scheduler, TaskBooks, SECOND};
use pliant_plugins::preset;

fn task(id: u32) -> TaskRef {
    TaskRef { job: JobId(id), task: 0 }
}

fn submit(s: &mut Scheduler, id: u32, class: JobClass, mem_mb: u64) {
    let tasks = vec![TaskRequest { resources: Resources::new(1000, mem_mb), estimate: None }];
    s.observe(0, Observation::JobSubmitted(common::one_phase_job(id, class, tasks))).unwrap();
}

#[test]
fn the_books_follow_a_task_through_launch_shrink_reclaim_and_finish() {
    let mut params = Params::default();
    params.set("monitor_interval_s", "1").unwrap();
    let mut s = Scheduler::new(&[Resources::new(2000, 1000)], preset("gp", &params).unwrap()).unwrap();
    let mut out = Vec::new();
    submit(&mut s, 0, JobClass::Long, 625);
    assert_eq!(
        s.task(task(0)),
        Some(TaskBooks { state: TaskState::Pending, node: None, allocated: Resources::ZERO, reclaiming_mb: 0 })
    );
    assert_eq!(s.task(TaskRef { job: JobId(0), task: 1 }), None, "job 0 has one task");
    assert_eq!(s.task(task(1)), None, "no job 1 yet");
    submit(&mut s, 1, JobClass::Long, 375);
    s.schedule(0, &mut out);
    let running = TaskBooks {
        state: TaskState::Running,
        node: Some(NodeId(0)),
        allocated: Resources::new(1000, 375),
        reclaiming_mb: 0,
    };
    assert_eq!(s.task(task(1)), Some(running));
    submit(&mut s, 2, JobClass::Short, 350);
    out.clear();
    s.monitor(4 * SECOND, &mut out);
    let [Action::Graceful { task: victim, to }, ..] = out[..] else { panic!("{out:?}") };
    assert_eq!(victim, task(1));
    let due = 375 - to.mem_mb;
    let shrunk = s.task(victim).unwrap();
    assert_eq!((shrunk.state, shrunk.node, shrunk.reclaiming_mb), (TaskState::Shrunk, Some(NodeId(0)), due));
    assert_eq!(shrunk.allocated.mem_mb, 375, "booked until reclaimed");
    s.observe(4 * SECOND, Observation::MemoryReclaimed { task: victim, mem_mb: 100 }).unwrap();
    let partly = s.task(victim).unwrap();
    assert_eq!((partly.reclaiming_mb, partly.allocated.mem_mb), (due - 100, 275));
    s.observe(5 * SECOND, Observation::TaskFinished(task(0))).unwrap();
    let finished = TaskBooks { state: TaskState::Finished, node: None, allocated: Resources::ZERO, reclaiming_mb: 0 };
    assert_eq!(s.task(task(0)), Some(finished), "a finished job's books are dropped");
}
