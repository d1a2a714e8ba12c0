//! The `pliant` preset by hand: on one node ⟨8 CPU, 16 GB⟩ a long job runs two
//! tasks of ⟨4 CPU, 7 GB⟩ (2 GB free); a short task arrives, estimated to
//! run 5 s. The take is sized by its deficit on the node and each victim
//! gives it back the cheapest way (docs/cost-model.md).

mod common;

use pliant_core::action::MechanismKind;
use pliant_core::model::{JobClass, JobId, JobRequest, TaskRef, TaskRequest, Tier};
use pliant_core::policy::Params;
use pliant_core::{Action, Micros, Observation, Resources, Scheduler, SwapRates, SECOND};
use pliant_plugins::preset;

fn job(id: u32, class: JobClass, tasks: &[(u64, u64)]) -> JobRequest {
    let estimate = Some(1000 * SECOND);
    common::one_phase_job(
        id,
        class,
        tasks.iter().map(|&(c, m)| TaskRequest { resources: Resources::cores_gb(c, m), estimate }).collect(),
    )
}

/// The long job running since 0, a short task of `short` arriving at `at`,
/// the monitor one second later: its actions and the scheduler.
fn short_arrives(at: Micros, short: (u64, u64)) -> (Vec<Action>, Scheduler) {
    short_arrives_at_rates(at, short, SwapRates::default())
}

/// As [`short_arrives`], the node's body having measured its swap at `swap`.
fn short_arrives_at_rates(at: Micros, short: (u64, u64), swap: SwapRates) -> (Vec<Action>, Scheduler) {
    let mut short = job(1, JobClass::Short, &[short]);
    short.phases[0].tasks[0].estimate = Some(5 * SECOND);
    let policy = preset("pliant", &Params::default()).unwrap();
    let mut s = Scheduler::new(&[Resources::cores_gb(8, 16)], policy).unwrap();
    s.set_swap_rates(0, swap);
    let mut out = Vec::new();
    s.observe(0, Observation::JobSubmitted(job(0, JobClass::Long, &[(4, 7), (4, 7)]))).unwrap();
    s.schedule(0, &mut out);
    out.clear();
    s.observe(at, Observation::JobSubmitted(short)).unwrap();
    s.monitor(at + SECOND, &mut out);
    s.schedule(at + SECOND, &mut out);
    (out, s)
}

const VICTIM: TaskRef = TaskRef { job: JobId(0), task: 1 };
const SHORT: TaskRef = TaskRef { job: JobId(1), task: 0 };

// A CPU-only deficit ⟨1, 0⟩ (2 GB are free): suspend in place would take all
// 4 cores for the short task's 5 s (20 core-s), a shrink exactly 1 and no
// memory (5 core-s). The youngest task (task 1; ties by task) gives it.
#[test]
fn a_cpu_only_deficit_shrinks_one_core_without_touching_memory() {
    let (out, mut s) = short_arrives(100 * SECOND, (1, 1));
    assert_eq!(out[0], Action::Graceful { task: VICTIM, to: Resources::new(3000, 7 * 1024) });
    assert!(matches!(out[1], Action::Launch { task: SHORT, .. }), "{out:?}");
    assert_eq!(out.len(), 2);
    let choices = s.planner_mut().unwrap().take_choices();
    assert_eq!(choices.len(), 1);
    let c = &choices[0];
    assert_eq!((c.chosen.mechanism, c.chosen.takes, c.chosen.cost()), (MechanismKind::Graceful, c.need, 5 * SECOND));
    assert_eq!(c.need, Resources::new(1000, 0));
    let suspend = c.options[0].expect("suspend frees CPU");
    assert_eq!((suspend.takes, suspend.cost()), (Resources::cores_gb(4, 0), 20 * SECOND));
    assert!(s.planner_mut().unwrap().take_choices().is_empty(), "taken once");
}

// A deficit ⟨1 CPU, 2 GB⟩ from a task that ran 101 s: a kill loses 4 × 101 =
// 404 core-s and its 4 cores for the short task's 5 s, 424; a shrink by the
// need frees the 1,433 MB above the task's 5,735 MB working set (80 % of 7 GB)
// at once and swaps the other 615 MB out in 1.80 s at 3 s/GB (the waiting
// core waits: 1.80 core-s), which freezes the task: its 4 cores read them
// back for 3.06 s (12.25) and stop for 1.80 + 5 s (27.21): 41.26 core-s.
// Shrink: the short task starts once the 2 GB are reported reclaimed.
#[test]
fn a_memory_deficit_reclaims_only_that_much() {
    let (out, mut s) = short_arrives(100 * SECOND, (1, 4));
    assert_eq!(out, vec![Action::Graceful { task: VICTIM, to: Resources::new(3000, 5 * 1024) }]);
    let c = &s.planner_mut().unwrap().take_choices()[0];
    assert_eq!(c.chosen.cost(), 41_260_737);
    assert_eq!(c.options[2].unwrap().cost(), 424 * SECOND);
    assert_eq!(
        c.options[0].unwrap().takes.mem_mb,
        0,
        "suspend in place frees no memory: not chosen while memory is missing"
    );
    let mut out = Vec::new();
    s.observe(107 * SECOND, Observation::MemoryReclaimed { task: VICTIM, mem_mb: 2048 }).unwrap();
    s.schedule(107 * SECOND, &mut out);
    assert!(matches!(out[..], [Action::Launch { task: SHORT, .. }]), "{out:?}");
}

// The same deficit on a node whose body measured its reclaims at 150 s/GB:
// the 615 MB swapped out take 90.1 s, while the waiting core waits (90.1
// core-s) and the frozen task's 4 cores stop for 95.1 s (380.4): dearer
// than the kill's 424 with the read back (12.25): the shrink is no longer
// the cheapest, and a checkpoint to NVM is taken instead.
#[test]
fn a_node_measured_slow_to_reclaim_is_not_shrunk() {
    let slow = SwapRates { reclaim_per_gb: Some(150 * SECOND), restore_per_gb: None };
    let (out, mut s) = short_arrives_at_rates(100 * SECOND, (1, 4), slow);
    assert_eq!(out, vec![Action::Checkpoint { task: VICTIM, tier: Tier::Nvm }]);
    let c = &s.planner_mut().unwrap().take_choices()[0];
    let shrink = c.options[1].unwrap().cost();
    assert!(shrink > 424 * SECOND && c.chosen.cost() < shrink, "{shrink} vs {:?}", c.chosen);
}

// The same deficit from tasks that ran 3 s: a kill costs 12 + 4 × 5 = 32 core-s,
// a shrink 41.26: the youngest is killed and the short task starts at once.
#[test]
fn a_task_that_has_barely_run_is_killed() {
    let (out, mut s) = short_arrives(2 * SECOND, (1, 4));
    assert_eq!(out[0], Action::Kill { task: VICTIM });
    assert!(matches!(out[1], Action::Launch { task: SHORT, .. }), "{out:?}");
    assert_eq!(s.planner_mut().unwrap().take_choices()[0].chosen.mechanism, MechanismKind::Kill);
}

// Two nodes ⟨8 CPU, 16 GB⟩, each with one long task ⟨8 CPU, 8 GB⟩: job 0's
// (1000 s estimated) on node 0, job 1's (3000 s) on node 1. A short task
// ⟨2 CPU, 1 GB⟩ costs the same to make room for on either node; Algorithm 2
// takes from the job with the longest remaining time first, so node 1's
// task gives it — not the lowest node's.
#[test]
fn equal_costs_go_to_the_longest_remaining_job() {
    let policy = preset("pliant", &Params::default()).unwrap();
    let node = Resources::cores_gb(8, 16);
    let mut s = Scheduler::new(&[node, node], policy).unwrap();
    let mut out = Vec::new();
    let mut longer = job(1, JobClass::Long, &[(8, 8)]);
    longer.phases[0].tasks[0].estimate = Some(3000 * SECOND);
    s.observe(0, Observation::JobSubmitted(job(0, JobClass::Long, &[(8, 8)]))).unwrap();
    s.observe(0, Observation::JobSubmitted(longer)).unwrap();
    s.schedule(0, &mut out);
    assert!(matches!(out[..], [Action::Launch { .. }, Action::Launch { .. }]), "{out:?}");
    out.clear();
    s.observe(100 * SECOND, Observation::JobSubmitted(job(2, JobClass::Short, &[(2, 1)]))).unwrap();
    s.monitor(101 * SECOND, &mut out);
    let victim = TaskRef { job: JobId(1), task: 0 };
    assert_eq!(out[0], Action::Graceful { task: victim, to: Resources::new(6000, 8 * 1024) }, "{out:?}");
}

/// The checkpoint paper's two-job experiment (§3.3.3) on one node ⟨4 CPU,
/// 8 GB⟩: a long task ⟨4 CPU, 5 GB⟩ estimated at 60 s runs from 0; at 30 s
/// a short task of the same size arrives; the monitor runs at 31 s. Its
/// actions and the scheduler; `tier`: whether the node has a checkpoint tier.
fn two_job(tier: bool) -> (Vec<Action>, Scheduler) {
    let policy = preset("pliant", &Params::default()).unwrap();
    let mut s = Scheduler::new(&[Resources::cores_gb(4, 8)], policy).unwrap();
    if !tier {
        s.unpriced_mechanisms(0, &[MechanismKind::Checkpoint]);
    }
    let sized = |id, class| {
        let mut j = job(id, class, &[(4, 5)]);
        j.phases[0].tasks[0].estimate = Some(60 * SECOND);
        j
    };
    let mut out = Vec::new();
    s.observe(0, Observation::JobSubmitted(sized(0, JobClass::Long))).unwrap();
    s.schedule(0, &mut out);
    out.clear();
    s.observe(30 * SECOND, Observation::JobSubmitted(sized(1, JobClass::Short))).unwrap();
    s.monitor(31 * SECOND, &mut out);
    s.schedule(31 * SECOND, &mut out);
    (out, s)
}

// Where the node has a tier (NVM by default: 5 GB in 2.92 s), checkpointing
// the long task costs 275.04 core-s (the dump while 4 cores wait, the
// restore, the task stopped 2.92 + 60 s), a shrink by the need 284.4 (1 GB
// swapped, which freezes it) and a kill 4 × 31 + 240 = 364: it is dumped,
// the short task starts once the dump is written, and when the short task
// ends the long one is restored on its node. Without a tier it is shrunk.
#[test]
fn where_the_node_has_a_tier_the_two_job_victim_is_checkpointed() {
    let (out, mut s) = two_job(true);
    let long = TaskRef { job: JobId(0), task: 0 };
    let short = TaskRef { job: JobId(1), task: 0 };
    assert_eq!(out, vec![Action::Checkpoint { task: long, tier: Tier::Nvm }]);
    let c = &s.planner_mut().unwrap().take_choices()[0];
    assert_eq!((c.chosen.mechanism, c.chosen.cost()), (MechanismKind::Checkpoint, 275_040_000));
    assert_eq!(
        c.options.map(|o| o.map(|e| e.cost())),
        [
            Some(240 * SECOND), // suspend in place: frees no memory, not counted while memory is missing
            Some(284_400_000),
            Some(364 * SECOND),
            Some(275_040_000),
        ]
    );
    let mut out = Vec::new();
    s.observe(34 * SECOND, Observation::Checkpointed(long)).unwrap();
    s.schedule(34 * SECOND, &mut out);
    assert!(matches!(out[..], [Action::Launch { task, .. }] if task == short), "{out:?}");
    out.clear();
    s.observe(94 * SECOND, Observation::TaskFinished(short)).unwrap();
    s.schedule(94 * SECOND, &mut out);
    assert!(matches!(out[..], [Action::Restore { task, .. }] if task == long), "{out:?}");

    let (out, _) = two_job(false);
    assert_eq!(out, vec![Action::Graceful { task: long, to: Resources::new(0, 3 * 1024) }]);
}
