//! Graceful preemption while a victim's reclaim is still under way: on one
//! node ⟨2 CPU, 1000 MB⟩ two long tasks of ⟨1 CPU, 625 MB⟩ and ⟨1 CPU, 375 MB⟩
//! fill it; a short task of ⟨1 CPU, 350 MB⟩ arrives. The monitor shrinks the
//! younger long task to its footprint; its memory comes back as the body
//! reports it. A reclaim that outlasts a monitor period (a loaded machine
//! swaps slowly) is on its way: the next round does not take it again, it
//! goes on to the other long task.

mod common;

use pliant_core::model::{JobClass, JobId, JobRequest, TaskRef, TaskRequest};
use pliant_core::policy::Params;
use pliant_core::{Action, Observation, Resources, Scheduler, SECOND};
use pliant_plugins::preset;

fn job(id: u32, class: JobClass, cpu_milli: u64, mem_mb: u64) -> JobRequest {
    common::one_phase_job(id, class, vec![TaskRequest { resources: Resources::new(cpu_milli, mem_mb), estimate: None }])
}

const LONG_0: TaskRef = TaskRef { job: JobId(0), task: 0 };
const LONG_1: TaskRef = TaskRef { job: JobId(1), task: 0 };
const SHORT: TaskRef = TaskRef { job: JobId(2), task: 0 };

/// The two long tasks running, the short one waiting, the first monitor
/// round done (at 4 s): the scheduler and that round's actions.
fn first_round() -> (Scheduler, Vec<Action>) {
    let mut params = Params::default();
    params.set("monitor_interval_s", "1").unwrap();
    let mut policy = preset("gp", &params).unwrap();
    // As a live manager runs it: a container keeps no CPU while preempted.
    policy.preemption.as_mut().unwrap().footprint.cpu_milli = 0;
    let mut s = Scheduler::new(&[Resources::new(2000, 1000)], policy).unwrap();
    let mut out = Vec::new();
    s.observe(0, Observation::JobSubmitted(job(0, JobClass::Long, 1000, 625))).unwrap();
    s.observe(0, Observation::JobSubmitted(job(1, JobClass::Long, 1000, 375))).unwrap();
    s.schedule(0, &mut out);
    assert_eq!(out.len(), 2, "{out:?}");
    out.clear();
    s.observe(3 * SECOND, Observation::JobSubmitted(job(2, JobClass::Short, 1000, 350))).unwrap();
    s.schedule(3 * SECOND, &mut out);
    assert!(out.is_empty(), "the node is full: {out:?}");
    s.monitor(4 * SECOND, &mut out);
    s.schedule(4 * SECOND, &mut out);
    (s, out)
}

#[test]
fn the_first_round_shrinks_the_younger_long_task_to_its_footprint() {
    let (_, out) = first_round();
    let [Action::Graceful { task, to }] = out[..] else { panic!("{out:?}") };
    assert_eq!(task, LONG_1);
    assert!(to.mem_mb < 375 && to.cpu_milli == 0, "{to:?}");
}

// 128 of the 311 MB due are back by the next round (5 s): the short task
// still lacks 350 − 128 MB, of which 183 are on their way. The round takes
// the 39 MB left over from the other long task, not the same one again.
#[test]
fn the_next_round_does_not_take_a_reclaim_under_way_again() {
    let (mut s, out) = first_round();
    let Action::Graceful { to, .. } = out[0] else { unreachable!() };
    let due = 375 - to.mem_mb;
    s.observe(4 * SECOND + 100_000, Observation::MemoryReclaimed { task: LONG_1, mem_mb: 128 }).unwrap();
    let mut out = Vec::new();
    s.monitor(5 * SECOND, &mut out);
    s.schedule(5 * SECOND, &mut out);
    let shrunk: Vec<TaskRef> =
        out.iter().filter_map(|a| if let Action::Graceful { task, .. } = a { Some(*task) } else { None }).collect();
    assert_eq!(shrunk, vec![LONG_0], "{out:?}");
    // The rest of the first reclaim and the other's give the short task its room.
    let Action::Graceful { to: to_0, .. } = out[0] else { unreachable!() };
    s.observe(5 * SECOND + 100_000, Observation::MemoryReclaimed { task: LONG_1, mem_mb: due - 128 }).unwrap();
    s.observe(5 * SECOND + 100_000, Observation::MemoryReclaimed { task: LONG_0, mem_mb: 625 - to_0.mem_mb }).unwrap();
    out.clear();
    s.schedule(5 * SECOND + 100_000, &mut out);
    assert!(matches!(out[..], [Action::Launch { task: SHORT, .. }]), "{out:?}");
}
