//! Property tests of the scheduling core driven directly with observations.

use pliant_core::model::{JobClass, JobId, JobRequest, PhaseRequest, TaskRef, TaskRequest};
use pliant_core::policy::Params;
use pliant_core::{Action, Observation, Resources, Scheduler, SECOND};
use pliant_plugins::{preset, PRESETS};
use proptest::prelude::*;

fn job(id: u32, class: JobClass, tasks: &[(u64, u64)], coupled: bool) -> JobRequest {
    JobRequest {
        id: JobId(id),
        submit: 0,
        class,
        priority: if class == JobClass::Short { 9 } else { 0 },
        phases: vec![PhaseRequest {
            deps: vec![],
            coupled,
            local: false,
            tasks: tasks
                .iter()
                .map(|&(c, m)| TaskRequest { resources: Resources::cores_gb(c, m), estimate: Some(10 * SECOND) })
                .collect(),
        }],
        elastic: None,
    }
}

fn assert_no_overallocation(s: &Scheduler) {
    for (i, (cap, alloc)) in s.node_allocations().enumerate() {
        assert!(alloc.fits_in(&cap), "node {i} over-allocated: {alloc} of {cap}");
    }
}

proptest! {
    /// Whatever arrives and finishes, in any order, under any preset, no node
    /// ever holds more than its capacity.
    #[test]
    fn no_node_is_ever_over_allocated(
        jobs in prop::collection::vec((any::<bool>(), prop::collection::vec((1u64..=16, 1u64..=32), 1..6)), 1..12),
        finish_picks in prop::collection::vec(any::<prop::sample::Index>(), 0..60),
        preset_pick in 0..PRESETS.len(),
    ) {
        let policy = preset(PRESETS[preset_pick].name, &Params::default()).unwrap();
        let mut s = Scheduler::new(&[Resources::cores_gb(32, 64); 3], policy).unwrap();
        let mut running: Vec<TaskRef> = Vec::new();
        let mut out = Vec::new();
        let mut now = 0;
        let mut picks = finish_picks.into_iter();
        for (i, (short, tasks)) in jobs.iter().enumerate() {
            let class = if *short { JobClass::Short } else { JobClass::Long };
            s.observe(now, Observation::JobSubmitted(job(i as u32, class, tasks, !short))).unwrap();
            now += SECOND;
            s.monitor(now, &mut out);
            s.schedule(now, &mut out);
            let mut reports = Vec::new();
            for a in out.drain(..) {
                match a {
                    Action::Launch { task, .. } => running.push(task),
                    Action::Kill { task } | Action::Immediate { task, .. } | Action::Suspend { task } => {
                        running.retain(|t| *t != task)
                    }
                    Action::FailJob { job } => running.retain(|t| t.job != job),
                    // Shrunk tasks keep running; resumed ones report back before finishing;
                    // a copied task finishes once, whichever of the two ends first.
                    Action::Graceful { .. } | Action::Copy { .. } => {}
                    Action::Resume { task, .. } => reports.push(Observation::Resumed(task)),
                    // Dumps end and restores finish before the next step.
                    Action::Checkpoint { task, .. } => {
                        running.retain(|t| *t != task);
                        reports.push(Observation::Checkpointed(task));
                    }
                    Action::Restore { task, .. } => {
                        running.push(task);
                        reports.push(Observation::Resumed(task));
                    }
                }
            }
            assert_no_overallocation(&s);
            for r in reports {
                s.observe(now, r).unwrap();
            }
            if let (Some(pick), false) = (picks.next(), running.is_empty()) {
                let t = running.remove(pick.index(running.len()));
                s.observe(now, Observation::TaskFinished(t)).unwrap();
            }
        }
    }
}

/// A task that is not running cannot finish: the core refuses the observation.
#[test]
fn finishing_a_pending_task_is_refused() {
    let policy = preset("fifo", &Params::default()).unwrap();
    let mut s = Scheduler::new(&[Resources::cores_gb(1, 1)], policy).unwrap();
    s.observe(0, Observation::JobSubmitted(job(0, JobClass::Long, &[(1, 1), (1, 1)], false))).unwrap();
    let mut out = Vec::new();
    s.schedule(0, &mut out);
    assert_eq!(out.len(), 1, "one node of one core fits one task");
    let pending = TaskRef { job: JobId(0), task: 1 };
    assert!(s.observe(1, Observation::TaskFinished(pending)).is_err());
}

/// Job ids must be dense and in order.
#[test]
fn out_of_order_job_ids_are_refused() {
    let policy = preset("fifo", &Params::default()).unwrap();
    let mut s = Scheduler::new(&[Resources::cores_gb(1, 1)], policy).unwrap();
    let err = s.observe(0, Observation::JobSubmitted(job(3, JobClass::Long, &[(1, 1)], false))).unwrap_err();
    assert_eq!(err.to_string(), "job submitted with id 3, expected 0");
}

/// The `kill` preset on one node of ⟨32 CPU, 64 GB⟩: a long job of four ⟨8, 16⟩
/// executors fills it; a short job of two ⟨4, 4⟩ tasks arrives. The short queue
/// (95 %) is starved and the long queue is over its 5 % (= ⟨1.6, 3.2⟩) by ⟨30.4, 60.8⟩.
/// r_s = ⟨8, 8⟩ < a, so p = ⟨8, 8⟩ (Alg. 1 line 6): Alg. 2 kills one executor
/// of the job (⟨8, 16⟩, taken at random as YARN does, BIG-C §2.2), which
/// covers CPU, the dominant resource. Both short tasks then start in its place.
#[test]
fn kill_preset_frees_exactly_one_executor_for_two_short_tasks() {
    let policy = preset("kill", &Params::default()).unwrap();
    let mut s = Scheduler::new(&[Resources::cores_gb(32, 64)], policy).unwrap();
    let mut out = Vec::new();
    s.observe(0, Observation::JobSubmitted(job(0, JobClass::Long, &[(8, 16); 4], true))).unwrap();
    s.schedule(0, &mut out);
    assert_eq!(out.len(), 4);
    out.clear();
    s.observe(SECOND, Observation::JobSubmitted(job(1, JobClass::Short, &[(4, 4); 2], false))).unwrap();
    s.schedule(SECOND, &mut out);
    assert!(out.is_empty(), "no room before the monitor runs");
    s.monitor(3 * SECOND, &mut out);
    s.schedule(3 * SECOND, &mut out);
    let killed: Vec<_> =
        out.iter().filter_map(|a| if let Action::Kill { task } = a { Some(*task) } else { None }).collect();
    assert!(matches!(killed[..], [TaskRef { job: JobId(0), task: 0..=3 }]), "{killed:?}");
    let launched: Vec<_> =
        out.iter().filter(|a| matches!(a, Action::Launch { task, .. } if task.job == JobId(1))).collect();
    assert_eq!(launched.len(), 2);
    assert_no_overallocation(&s);
}

/// `suspend` on one ⟨32 CPU, 128 GB⟩ node: four ⟨8, 16⟩ executors hold every
/// core and half the memory; two short ⟨4, 4⟩ tasks arrive. Their need less
/// what is free is ⟨8 CPU, 0⟩: suspend in place frees only CPU, so p = ⟨8, 0⟩
/// and one executor (the youngest, task 3) is frozen with its 16 GB kept.
/// Both short tasks start; the node then holds 32 cores and 72 GB. Once they
/// finish, the executor resumes after D = 3 refused heartbeat offers, reading
/// nothing back.
#[test]
fn suspend_preset_freezes_one_executor_and_keeps_its_memory() {
    let policy = preset("suspend", &Params::default()).unwrap();
    let mut s = Scheduler::new(&[Resources::cores_gb(32, 128)], policy).unwrap();
    let mut out = Vec::new();
    s.observe(0, Observation::JobSubmitted(job(0, JobClass::Long, &[(8, 16); 4], true))).unwrap();
    s.schedule(0, &mut out);
    out.clear();
    s.observe(SECOND, Observation::JobSubmitted(job(1, JobClass::Short, &[(4, 4); 2], false))).unwrap();
    s.monitor(3 * SECOND, &mut out);
    s.schedule(3 * SECOND, &mut out);
    let executor = TaskRef { job: JobId(0), task: 3 };
    assert_eq!(out[0], Action::Suspend { task: executor });
    let launched: Vec<TaskRef> =
        out.iter().filter_map(|a| if let Action::Launch { task, .. } = a { Some(*task) } else { None }).collect();
    assert_eq!(launched, vec![TaskRef { job: JobId(1), task: 0 }, TaskRef { job: JobId(1), task: 1 }]);
    assert_eq!(out.len(), 3);
    assert_eq!(s.node_allocations().next().unwrap().1, Resources::cores_gb(32, 72));
    out.clear();
    for task in launched {
        s.observe(4 * SECOND, Observation::TaskFinished(task)).unwrap();
    }
    let mut resumed_at = None;
    for beat in 2..8 {
        s.monitor(beat * 3 * SECOND, &mut out);
        s.schedule(beat * 3 * SECOND, &mut out);
        if out.contains(&Action::Resume { task: executor, resources: Resources::cores_gb(8, 16) }) {
            resumed_at = Some(beat);
            break;
        }
    }
    assert_eq!(resumed_at, Some(5), "resumed at the fourth heartbeat offer after D = 3 refused ones");
    s.observe(15 * SECOND, Observation::Resumed(executor)).unwrap();
    assert_eq!(s.node_allocations().next().unwrap().1, Resources::cores_gb(32, 64));
    assert_no_overallocation(&s);
}

/// BIG-C §5.1: the long queue is best effort. Short tasks fill one ⟨32, 64⟩ node
/// (eight ⟨4, 4⟩); a long job arrives with its queue at 0 of its 5 % guarantee.
/// Under every preempting preset the monitor leaves the short tasks alone.
#[test]
fn the_long_queue_never_preempts_short_tasks() {
    for name in ["kill", "ip", "gp"] {
        let policy = preset(name, &Params::default()).unwrap();
        let mut s = Scheduler::new(&[Resources::cores_gb(32, 64)], policy).unwrap();
        let mut out = Vec::new();
        s.observe(0, Observation::JobSubmitted(job(0, JobClass::Short, &[(4, 4); 8], false))).unwrap();
        s.schedule(0, &mut out);
        assert_eq!(out.len(), 8, "{name}");
        out.clear();
        s.observe(SECOND, Observation::JobSubmitted(job(1, JobClass::Long, &[(8, 16)], true))).unwrap();
        s.monitor(3 * SECOND, &mut out);
        s.schedule(3 * SECOND, &mut out);
        assert_eq!(out, vec![], "{name}: the long job waits");
    }
}

/// `gp` on one ⟨2 CPU, 4 GB⟩ node: a long ⟨2, 4⟩ executor fills it and a short
/// ⟨2, 4⟩ task arrives. p⃗ = ⟨2, 4⟩; one r_GP step (⟨2 CPU, 4 GB⟩) takes the executor
/// down to the footprint ⟨1 % of a CPU, 64 MB⟩; it swaps and is frozen. Once its
/// 4096 − 64 MB are reported reclaimed, the footprint is not booked either: the
/// node shows nothing allocated and the short task starts with all 4 GB.
#[test]
fn a_container_shrunk_to_the_footprint_books_nothing_once_reclaimed() {
    let policy = preset("gp", &Params::default()).unwrap();
    let mut s = Scheduler::new(&[Resources::cores_gb(2, 4)], policy).unwrap();
    let mut out = Vec::new();
    s.observe(0, Observation::JobSubmitted(job(0, JobClass::Long, &[(2, 4)], true))).unwrap();
    s.schedule(0, &mut out);
    out.clear();
    s.observe(SECOND, Observation::JobSubmitted(job(1, JobClass::Short, &[(2, 4)], false))).unwrap();
    s.monitor(3 * SECOND, &mut out);
    s.schedule(3 * SECOND, &mut out);
    let executor = TaskRef { job: JobId(0), task: 0 };
    assert_eq!(out, vec![Action::Graceful { task: executor, to: Resources::new(10, 64) }]);
    out.clear();
    s.observe(4 * SECOND, Observation::Swapping(executor)).unwrap();
    s.observe(20 * SECOND, Observation::MemoryReclaimed { task: executor, mem_mb: 4096 - 64 }).unwrap();
    let (_, allocated) = s.node_allocations().next().unwrap();
    assert_eq!(allocated, Resources::ZERO);
    s.schedule(20 * SECOND, &mut out);
    assert!(matches!(out[..], [Action::Launch { task, .. }] if task.job == JobId(1)), "{out:?}");
}

/// A lost task is requeued and relaunched on the room it gave back; a job
/// aborted by the body frees its node, and a second abort is refused.
#[test]
fn lost_tasks_are_requeued_and_aborted_jobs_free_their_nodes() {
    let policy = preset("fifo", &Params::default()).unwrap();
    let mut s = Scheduler::new(&[Resources::cores_gb(1, 1)], policy).unwrap();
    s.observe(0, Observation::JobSubmitted(job(0, JobClass::Long, &[(1, 1)], false))).unwrap();
    s.observe(0, Observation::JobSubmitted(job(1, JobClass::Long, &[(1, 1)], false))).unwrap();
    let mut out = Vec::new();
    s.schedule(0, &mut out);
    let first = TaskRef { job: JobId(0), task: 0 };
    let launch =
        |task| Action::Launch { task, node: pliant_core::model::NodeId(0), resources: Resources::cores_gb(1, 1) };
    assert_eq!(out, vec![launch(first)], "one node of one core and 1 GB fits one task");
    out.clear();
    s.observe(SECOND, Observation::TaskLost(first)).unwrap();
    s.schedule(SECOND, &mut out);
    assert_eq!(out, vec![launch(first)], "the lost task goes back to the front, ahead of job 1");
    out.clear();
    s.observe(2 * SECOND, Observation::JobAborted(JobId(0))).unwrap();
    s.schedule(2 * SECOND, &mut out);
    assert_eq!(out, vec![launch(TaskRef { job: JobId(1), task: 0 })], "no FailJob: the body stops what it aborted");
    assert!(s.observe(3 * SECOND, Observation::JobAborted(JobId(0))).is_err());
    assert!(s.observe(3 * SECOND, Observation::JobAborted(JobId(7))).is_err());
    assert!(s.observe(3 * SECOND, Observation::TaskLost(first)).is_err(), "a failed task holds nothing to lose");
}

/// A task lost with its node is placed on another node, never on the lost
/// one until it is back.
#[test]
fn a_lost_node_takes_no_work_until_it_is_back() {
    use pliant_core::model::NodeId;
    let policy = preset("fifo", &Params::default()).unwrap();
    let mut s = Scheduler::new(&[Resources::cores_gb(1, 1); 2], policy).unwrap();
    s.observe(0, Observation::JobSubmitted(job(0, JobClass::Long, &[(1, 1)], false))).unwrap();
    let mut out = Vec::new();
    s.schedule(0, &mut out);
    let task = TaskRef { job: JobId(0), task: 0 };
    let on = |node| Action::Launch { task, node: NodeId(node), resources: Resources::cores_gb(1, 1) };
    assert_eq!(out, vec![on(0)], "first fit: node 0");
    out.clear();
    s.observe(SECOND, Observation::NodeLost(NodeId(0))).unwrap();
    s.observe(SECOND, Observation::TaskLost(task)).unwrap();
    s.schedule(SECOND, &mut out);
    assert_eq!(out, vec![on(1)], "node 0 is down: node 1");
    out.clear();
    s.observe(2 * SECOND, Observation::NodeLost(NodeId(1))).unwrap();
    s.observe(2 * SECOND, Observation::TaskLost(task)).unwrap();
    s.schedule(2 * SECOND, &mut out);
    assert!(out.is_empty(), "both nodes down: nowhere to go, got {out:?}");
    s.observe(3 * SECOND, Observation::NodeBack(NodeId(0))).unwrap();
    s.schedule(3 * SECOND, &mut out);
    assert_eq!(out, vec![on(0)], "node 0 is back");
    assert!(s.observe(4 * SECOND, Observation::NodeLost(NodeId(2))).is_err());
}

/// `kill` on two ⟨4 CPU, 4 GB⟩ nodes: a long ⟨4, 4⟩ task runs on node 0 and node 1
/// is lost. A short ⟨4, 4⟩ task arrives. The lost node's capacity is not free
/// room: the short queue's guarantee is 95 % of node 0, so the monitor kills
/// the long task and the short task runs there. Once node 1 is back, the
/// cluster's capacity counts it again.
#[test]
fn a_lost_node_is_not_room_for_the_preempting_queue() {
    use pliant_core::model::NodeId;
    let policy = preset("kill", &Params::default()).unwrap();
    let mut s = Scheduler::new(&[Resources::cores_gb(4, 4); 2], policy).unwrap();
    let mut out = Vec::new();
    s.observe(0, Observation::JobSubmitted(job(0, JobClass::Long, &[(4, 4)], true))).unwrap();
    s.schedule(0, &mut out);
    out.clear();
    s.observe(SECOND, Observation::NodeLost(NodeId(1))).unwrap();
    s.observe(SECOND, Observation::NodeLost(NodeId(1))).unwrap();
    assert_eq!(s.total(), Resources::cores_gb(4, 4), "a repeated report changes nothing");
    s.observe(SECOND, Observation::JobSubmitted(job(1, JobClass::Short, &[(4, 4)], false))).unwrap();
    s.monitor(3 * SECOND, &mut out);
    s.schedule(3 * SECOND, &mut out);
    let long = TaskRef { job: JobId(0), task: 0 };
    assert_eq!(out[0], Action::Kill { task: long }, "{out:?}");
    assert!(matches!(out[1..], [Action::Launch { task, node: NodeId(0), .. }] if task.job == JobId(1)), "{out:?}");
    s.observe(4 * SECOND, Observation::NodeBack(NodeId(1))).unwrap();
    assert_eq!(s.total(), Resources::cores_gb(8, 8));
}

/// A victim lost while its dump is being written (its process did not
/// checkpoint) has no image: it starts afresh, and its dump leaves nothing
/// booked, so the next production task preempts it again.
#[test]
fn a_task_lost_while_dumping_restarts_afresh_and_frees_its_booking() {
    use pliant_core::model::NodeId;
    let policy = preset("checkpoint-nvm", &Params::default()).unwrap();
    let mut s = Scheduler::new(&[Resources::cores_gb(1, 1)], policy).unwrap();
    // Long jobs are priority 0 (free level), short ones 9 (production).
    s.observe(0, Observation::JobSubmitted(job(0, JobClass::Long, &[(1, 1)], false))).unwrap();
    let mut out = Vec::new();
    s.schedule(0, &mut out);
    let free = TaskRef { job: JobId(0), task: 0 };
    let launch = |task| Action::Launch { task, node: NodeId(0), resources: Resources::cores_gb(1, 1) };
    assert_eq!(out, vec![launch(free)]);
    let mut checkpoints = 0;
    for (prod, t) in [(1, SECOND), (2, 10 * SECOND)] {
        out.clear();
        s.observe(t, Observation::JobSubmitted(job(prod, JobClass::Short, &[(1, 1)], false))).unwrap();
        s.monitor(t, &mut out);
        s.schedule(t, &mut out);
        assert!(matches!(out.as_slice(), [Action::Checkpoint { task, .. }] if *task == free), "{out:?}");
        checkpoints += 1;
        out.clear();
        s.observe(t + 1, Observation::TaskLost(free)).unwrap();
        s.schedule(t + 1, &mut out);
        let prod_task = TaskRef { job: JobId(prod), task: 0 };
        assert_eq!(out, vec![launch(prod_task)], "the lost victim's room goes to production");
        out.clear();
        s.observe(t + 2, Observation::TaskFinished(prod_task)).unwrap();
        s.schedule(t + 2, &mut out);
        assert_eq!(out, vec![launch(free)], "a fresh launch, not a restore from a dump that never finished");
    }
    assert_eq!(checkpoints, 2);
}
