//! The node-aware planner takes as its rule says: for the first waiting
//! short task, the fewest running long tasks on one node that, with the
//! node's free room, cover its request — or nothing when no node can.
//!
//! The hand-built states: two ⟨16 CPU, 64 GB⟩ nodes full of a long job's
//! tasks (two of ⟨8, 16⟩, four of ⟨4, 8⟩); a short job of one task arrives
//! at 1 s and the monitor runs at 3 s.

use custom_policy::{node_fit, run};
use pliant_core::model::{JobClass, JobId, JobRequest, NodeId, PhaseRequest, TaskRef, TaskRequest, TaskState};
use pliant_core::{Action, Micros, Observation, Resources, Scheduler, SECOND};
use std::collections::HashMap;

const NODE: Resources = Resources { cpu_milli: 16_000, mem_mb: 64 * 1024 };

/// A job of one phase of tasks asking `asks`, submitted at `submit`.
fn job(id: u32, class: JobClass, submit: Micros, asks: &[Resources]) -> JobRequest {
    let tasks = asks.iter().map(|&resources| TaskRequest { resources, estimate: None }).collect();
    let phase = PhaseRequest { deps: vec![], coupled: false, local: false, tasks };
    JobRequest { id: JobId(id), submit, class, priority: 0, phases: vec![phase], elastic: None }
}

/// The state before the monitor runs: each node's free room and each
/// running long task's node and allocation.
struct Before {
    free: Vec<Resources>,
    long: Vec<(TaskRef, NodeId, Resources)>,
}

/// Fills both nodes with the long job, lets a short task asking `request`
/// arrive, runs the monitor: the state it saw and the victims it took.
fn monitor_with_waiting(request: Resources) -> (Before, Vec<TaskRef>) {
    let mut s = Scheduler::new(&[NODE, NODE], node_fit()).unwrap();
    let mut long = vec![Resources::cores_gb(8, 16); 2];
    long.extend([Resources::cores_gb(4, 8); 4]);
    let mut out = Vec::new();
    s.observe(0, Observation::JobSubmitted(job(0, JobClass::Long, 0, &long))).unwrap();
    s.schedule(0, &mut out);
    s.observe(SECOND, Observation::JobSubmitted(job(1, JobClass::Short, SECOND, &[request]))).unwrap();
    let free = s.node_allocations().map(|(capacity, allocated)| capacity.saturating_sub(&allocated)).collect();
    let long = (0..long.len() as u32)
        .map(|task| (TaskRef { job: JobId(0), task }, s.task(TaskRef { job: JobId(0), task }).unwrap()))
        .filter(|(_, books)| books.state == TaskState::Running)
        .map(|(task, books)| (task, books.node.unwrap(), books.allocated))
        .collect();
    out.clear();
    s.monitor(3 * SECOND, &mut out);
    let victims = out.iter().filter_map(|a| a.preemption().map(|p| p.task)).collect();
    (Before { free, long }, victims)
}

impl Before {
    /// The running long tasks on `node`.
    fn on(&self, node: usize) -> Vec<(TaskRef, NodeId, Resources)> {
        self.long.iter().copied().filter(|l| l.1 == NodeId(node as u32)).collect()
    }

    /// Whether some `n` of `node`'s long tasks, with its free room, cover `request`.
    fn fits_with(&self, node: usize, n: usize, request: Resources) -> bool {
        let on = self.on(node);
        (0u32..1 << on.len()).filter(|set| set.count_ones() as usize == n).any(|set| {
            let freed = (0..on.len()).filter(|i| set & (1 << i) != 0).fold(Resources::ZERO, |sum, i| sum + on[i].2);
            request.fits_in(&(self.free[node] + freed))
        })
    }

    /// The node and allocation of long task `task`.
    fn of(&self, task: TaskRef) -> (NodeId, Resources) {
        let l = self.long.iter().find(|l| l.0 == task).expect("a running long task");
        (l.1, l.2)
    }
}

#[test]
fn takes_the_fewest_long_tasks_on_one_node_that_make_room() {
    let request = Resources::cores_gb(8, 4);
    let (before, victims) = monitor_with_waiting(request);
    assert!(before.free.iter().all(|free| !request.fits_in(free)), "no node has the room: {:?}", before.free);
    assert!(!victims.is_empty(), "some node can make room");

    let node = before.of(victims[0]).0;
    assert!(victims.iter().all(|&v| before.of(v).0 == node), "all on one node: {victims:?}");
    let freed = victims.iter().fold(Resources::ZERO, |sum, &v| sum + before.of(v).1);
    assert!(request.fits_in(&(before.free[node.0 as usize] + freed)), "the room covers the request");
    for other in 0..before.free.len() {
        for fewer in 0..victims.len() {
            assert!(!before.fits_with(other, fewer, request), "{fewer} victims on node {other} would do");
        }
    }
    // Both nodes are full; one ⟨8, 16⟩ task frees enough on the node it is on.
    assert_eq!(victims.len(), 1);
    assert_eq!(before.of(victims[0]).1, Resources::cores_gb(8, 16));
}

#[test]
fn takes_nothing_when_no_node_can_make_room() {
    // Bigger than a node, though the long tasks of both hold more.
    let request = Resources::cores_gb(20, 4);
    let (before, victims) = monitor_with_waiting(request);
    assert!(before.long.iter().fold(Resources::ZERO, |sum, l| sum + l.2).cpu_milli >= request.cpu_milli);
    assert!((0..before.free.len()).all(|node| !before.fits_with(node, before.on(node).len(), request)));
    assert_eq!(victims, []);
}

#[test]
fn on_high_load_each_monitors_victims_share_a_node_and_short_jobs_finish() {
    let runs = run("high-load", 1, [node_fit(), node_fit()]);
    let record = &runs[0];
    let mut node_of: HashMap<TaskRef, NodeId> = HashMap::new();
    let mut taken_at: HashMap<Micros, NodeId> = HashMap::new();
    let mut preemptions = 0;
    for &(at, ref action) in &record.decisions {
        if let Action::Launch { task, node, .. } = *action {
            node_of.insert(task, node);
        } else if let Some(p) = action.preemption() {
            preemptions += 1;
            let node = node_of[&p.task];
            assert_eq!(*taken_at.entry(at).or_insert(node), node, "victims at {at} on two nodes");
        }
    }
    assert!(preemptions > 0, "the planner took something");
    let short: Vec<_> = record.jobs.iter().filter(|j| j.class == JobClass::Short).collect();
    assert!(!short.is_empty() && short.iter().all(|j| j.end.is_some() && !j.failed), "every short job finished");
    // The same decisions and the same jobs' record twice (the run's wall time aside).
    assert!(runs[0].decisions == runs[1].decisions && runs[0].jobs == runs[1].jobs, "deterministic");
}
