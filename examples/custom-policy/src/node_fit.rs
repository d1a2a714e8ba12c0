//! The node-aware planner, *node fit*: it sizes its take per node from the
//! tasks waiting one by one (`View::waiting_all`), not from a queue's sum.
//!
//! For the first waiting task of a short job it looks at each node in turn:
//! the node's running tasks of long jobs, largest allocation first (CPU,
//! then memory), are taken until the node's free room plus what they hold
//! covers the task's request. It takes from the ONE node where that needs
//! the fewest victims (the lowest-numbered among equals), and kills them,
//! so that all they hold is free at once. It takes nothing when some node
//! already has the room (the task is placed without victims) or when no
//! node could make it even by taking all its long tasks.

use pliant_core::model::{JobClass, NodeId, TaskState};
use pliant_core::policy::steps::{Holding, Mechanism, Planner, PlannerPlugin, Take, View};
use pliant_core::policy::Policy;
use pliant_core::{MechanismKind, Micros, Resources};
use std::cmp::Reverse;

/// The planner: the fewest victims on one node for the first waiting short task.
#[derive(Debug, Clone)]
struct NodeFit;

impl Planner for NodeFit {
    fn clone_box(&self) -> Box<dyn Planner> {
        Box::new(self.clone())
    }

    fn plan(&mut self, view: &View, _mechanism: &dyn Mechanism, now: Micros) -> Vec<Take> {
        let Some(first) = view.waiting_all().find(|w| w.class == JobClass::Short) else {
            return Vec::new();
        };
        let nodes = 0..view.node_count();
        if nodes.clone().any(|i| first.request.fits_in(&view.node_free(i))) {
            return Vec::new();
        }
        let long = long_running(view, now);
        nodes
            .filter_map(|i| {
                fewest_victims(view.node_free(i), first.request, long.iter().filter(|h| h.node == NodeId(i as u32)))
            })
            .min_by_key(Vec::len)
            .unwrap_or_default()
            .into_iter()
            .map(|victim| Take { task: victim.task, shrink_to: None, by: Some(MechanismKind::Kill) })
            .collect()
    }
}

/// Every running task of a long job, largest allocation first (CPU, then
/// memory; the task breaks ties).
fn long_running(view: &View, now: Micros) -> Vec<Holding> {
    let mut long: Vec<Holding> = (0..view.queue_count())
        .flat_map(|q| view.holding(q, now))
        .filter(|h| h.state == TaskState::Running && view.job_class(h.task.job) == Some(JobClass::Long))
        .collect();
    long.sort_by_key(|h| (Reverse((h.allocated.cpu_milli, h.allocated.mem_mb)), h.task));
    long
}

/// The first of `candidates` (in their order) whose allocations, with
/// `free`, cover `request`; `None` if all of them do not.
fn fewest_victims<'a>(
    free: Resources,
    request: Resources,
    candidates: impl Iterator<Item = &'a Holding>,
) -> Option<Vec<Holding>> {
    let mut room = free;
    let mut victims = Vec::new();
    for victim in candidates {
        if request.fits_in(&room) {
            break;
        }
        room += victim.allocated;
        victims.push(*victim);
    }
    request.fits_in(&room).then_some(victims)
}

/// Builds [`NodeFit`] for each run of a policy naming `node-fit`.
pub(crate) struct NodeFitPlugin;

impl PlannerPlugin for NodeFitPlugin {
    fn name(&self) -> &'static str {
        "node-fit"
    }

    fn build(&self, _policy: &Policy) -> Box<dyn Planner> {
        Box::new(NodeFit)
    }
}
