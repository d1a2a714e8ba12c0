//! The reserve/permit step and delay scheduling, driven by hand. Two nodes of
//! one slot each; a high-priority job H of two phases of two one-slot tasks
//! (the second `local`), and a low-priority job L of two one-slot tasks, all
//! submitted at 0. H's phase-0 tasks (0 and 1) start on nodes 0 and 1.

use pliant_core::model::{JobClass, JobId, JobRequest, NodeId, PhaseRequest, TaskRef, TaskRequest};
use pliant_core::policy::Params;
use pliant_core::{Action, Micros, Observation, Resources, Scheduler, SECOND};
use pliant_plugins::preset;

const SLOT: Resources = Resources::cores_gb(1, 4);

fn phase(deps: Vec<u32>, local: bool, tasks: usize) -> PhaseRequest {
    PhaseRequest { deps, coupled: false, local, tasks: vec![TaskRequest { resources: SLOT, estimate: None }; tasks] }
}

fn request(id: u32, priority: u8, submit: Micros, phases: Vec<PhaseRequest>) -> JobRequest {
    JobRequest { id: JobId(id), submit, class: JobClass::Short, priority, phases, elastic: None }
}

fn t(job: u32, task: u32) -> TaskRef {
    TaskRef { job: JobId(job), task }
}

fn step(s: &mut Scheduler, now: Micros, obs: Vec<Observation>) -> Vec<Action> {
    for o in obs {
        s.observe(now, o).unwrap();
    }
    let mut out = Vec::new();
    s.schedule(now, &mut out);
    out
}

fn launched(actions: &[Action]) -> Vec<(TaskRef, NodeId)> {
    actions
        .iter()
        .filter_map(|a| match *a {
            Action::Launch { task, node, .. } => Some((task, node)),
            _ => None,
        })
        .collect()
}

/// Submits H and L under `policy`; H's phase 0 takes both nodes.
fn start(policy: &str, params: &Params) -> Scheduler {
    let mut s = Scheduler::new(&[SLOT, SLOT], preset(policy, params).unwrap()).unwrap();
    let h = request(0, 9, 0, vec![phase(vec![], false, 2), phase(vec![0], true, 2)]);
    let l = request(1, 0, 0, vec![phase(vec![], false, 2)]);
    let out = step(&mut s, 0, vec![Observation::JobSubmitted(h), Observation::JobSubmitted(l)]);
    assert_eq!(launched(&out), vec![(t(0, 0), NodeId(0)), (t(0, 1), NodeId(1))]);
    s
}

/// priority: at 10 s L takes the slot H's task 0 freed; at 20 s H's phase 1
/// starts, task 2 on its upstream node 1, and task 3 waits for a node H ran on
/// until the locality wait (3 s) is over, asking to be woken at 23 s; then
/// the cluster is full, so nothing starts.
#[test]
fn priority_gives_the_barrier_slot_away_and_waits_for_locality() {
    let mut s = start("priority", &Params::default());
    let out = step(&mut s, 10 * SECOND, vec![Observation::TaskFinished(t(0, 0))]);
    assert_eq!(launched(&out), vec![(t(1, 0), NodeId(0))]);
    let out = step(&mut s, 20 * SECOND, vec![Observation::TaskFinished(t(0, 1))]);
    assert_eq!(launched(&out), vec![(t(0, 2), NodeId(1))]);
    assert_eq!(s.wake_at(20 * SECOND), Some(23 * SECOND));
    s.wake(23 * SECOND);
    assert!(step(&mut s, 23 * SECOND, vec![]).is_empty());
    assert_eq!(s.wake_at(23 * SECOND), None);
}

/// ssr (Algorithm 1, m = n = 2): the slot freed at 10 s is reserved, L does
/// not get it; at 20 s both of H's phase-1 tasks start on H's own slots.
#[test]
fn ssr_keeps_the_slots_across_the_barrier() {
    let mut s = start("ssr", &Params::default());
    assert!(step(&mut s, 10 * SECOND, vec![Observation::TaskFinished(t(0, 0))]).is_empty());
    assert_eq!(s.reservation().idle(), SLOT);
    let mut got = launched(&step(&mut s, 20 * SECOND, vec![Observation::TaskFinished(t(0, 1))]));
    got.sort();
    assert_eq!(got, vec![(t(0, 2), NodeId(0)), (t(0, 3), NodeId(1))]);
    assert_eq!(s.reservation().idle(), Resources::ZERO);
    // H's last phase releases its slots: L runs.
    let out = step(&mut s, 30 * SECOND, vec![Observation::TaskFinished(t(0, 2))]);
    assert_eq!(launched(&out), vec![(t(1, 0), NodeId(0))]);
}

/// The permit: a job of strictly higher priority takes a reserved slot; one
/// of equal priority does not.
#[test]
fn only_a_higher_priority_may_take_a_reserved_slot() {
    let mut s = start("ssr", &Params::default());
    step(&mut s, 10 * SECOND, vec![Observation::TaskFinished(t(0, 0))]);
    let equal = request(2, 9, 11 * SECOND, vec![phase(vec![], false, 1)]);
    assert!(step(&mut s, 11 * SECOND, vec![Observation::JobSubmitted(equal)]).is_empty());
    let higher = request(3, 11, 12 * SECOND, vec![phase(vec![], false, 1)]);
    let out = step(&mut s, 12 * SECOND, vec![Observation::JobSubmitted(higher)]);
    assert_eq!(launched(&out), vec![(t(3, 0), NodeId(0))]);
    assert_eq!(s.reservation().idle(), Resources::ZERO);
}

/// timeout-reserve (§III-A): the freed slot is kept for 60 s, whatever comes
/// next; the core asks to be woken when it lapses, and L gets it then.
#[test]
fn timeout_reservation_lapses_after_its_timeout() {
    let mut s = start("timeout-reserve", &Params::default());
    assert!(step(&mut s, 10 * SECOND, vec![Observation::TaskFinished(t(0, 0))]).is_empty());
    assert_eq!(s.wake_at(10 * SECOND), Some(70 * SECOND));
    s.wake(70 * SECOND);
    let out = step(&mut s, 70 * SECOND, vec![]);
    assert_eq!(launched(&out), vec![(t(1, 0), NodeId(0))]);
}

/// ssr-stragglers (§IV-C): once H's phase 0 has one task running and one
/// reserved idle slot, the running task gets a copy on that slot.
#[test]
fn a_phase_last_task_is_copied_onto_its_reserved_slot() {
    let mut s = start("ssr-stragglers", &Params::default());
    let out = step(&mut s, 10 * SECOND, vec![Observation::TaskFinished(t(0, 0))]);
    assert_eq!(out, vec![Action::Copy { task: t(0, 1), node: NodeId(0), resources: SLOT }]);
    assert_eq!(s.reservation().idle(), Resources::ZERO);
    // The copy wins at 15 s: both slots come back as H's reservations and
    // phase 1 starts on them.
    let mut got = launched(&step(&mut s, 15 * SECOND, vec![Observation::TaskFinished(t(0, 1))]));
    got.sort();
    assert_eq!(got, vec![(t(0, 2), NodeId(0)), (t(0, 3), NodeId(1))]);
}

/// ssr-deadline (§IV-B) on four one-slot nodes: H has phase 0 of four
/// tasks (ending at 10, 12, 15 and 100 s) and a `local` phase 1 of four; L
/// (three tasks) waits. With P = 0.72^4, 1 − P^(1/4) = 0.28. At 12 s the fit
/// has t_m = 10 s, two finished (10, 12) and two running for 12 s:
/// α = 2 / (3 ln 1.2) ≈ 3.66, so D = 10 s × 0.28^(−1.5 ln 1.2) ≈ 14.16 s, and
/// both reserved slots lapse then, to L. At 15 s a refit
/// (α = 3 / (ln 1.2 + 2 ln 1.5) ≈ 3.02) would put D at ≈ 15.24 s, after now:
/// but the phase's deadline has passed, so the slot task 2 frees goes to L too.
#[test]
fn a_passed_deadline_is_not_refitted() {
    let params = Params { isolation: 0.72f64.powi(4), ..Params::default() };
    let mut s = Scheduler::new(&[SLOT; 4], preset("ssr-deadline", &params).unwrap()).unwrap();
    let h = request(0, 9, 0, vec![phase(vec![], false, 4), phase(vec![0], true, 4)]);
    let l = request(1, 0, 0, vec![phase(vec![], false, 3)]);
    let out = step(&mut s, 0, vec![Observation::JobSubmitted(h), Observation::JobSubmitted(l)]);
    assert_eq!(launched(&out).len(), 4);
    assert!(step(&mut s, 10 * SECOND, vec![Observation::TaskFinished(t(0, 0))]).is_empty());
    assert!(step(&mut s, 12 * SECOND, vec![Observation::TaskFinished(t(0, 1))]).is_empty());
    assert_eq!(s.reservation().idle(), SLOT.times(2));
    let d = 10.0 * SECOND as f64 * 0.28f64.powf(-1.5 * 1.2f64.ln());
    let wake = s.wake_at(12 * SECOND).unwrap();
    assert!((wake as f64 - d).abs() <= 1.0, "{wake} vs {d}");
    s.wake(wake);
    let mut got = launched(&step(&mut s, wake, vec![]));
    got.sort();
    assert_eq!(got, vec![(t(1, 0), NodeId(0)), (t(1, 1), NodeId(1))]);
    assert_eq!(s.reservation().idle(), Resources::ZERO);
    let out = step(&mut s, 15 * SECOND, vec![Observation::TaskFinished(t(0, 2))]);
    assert_eq!(launched(&out), vec![(t(1, 2), NodeId(2))]);
    assert_eq!(s.reservation().idle(), Resources::ZERO);
}
