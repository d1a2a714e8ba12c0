//! The one place that turns core decisions into node operations. When the
//! core gains a mechanism or an action, the compiler points here.

use pliant_core::model::{JobId, NodeId, TaskRef};
use pliant_core::{Action, MechanismKind, Resources};

/// What the live body does for one core action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeOp {
    /// Start the task's command on `node` with `resources`.
    Launch {
        /// The task.
        task: TaskRef,
        /// The node.
        node: NodeId,
        /// Its allocation.
        resources: Resources,
    },
    /// Take resources back from the task by `mechanism`, down to `limits`
    /// (kill frees everything; `limits` is then zero).
    Preempt {
        /// The victim.
        task: TaskRef,
        /// How, as the node carries it out.
        mechanism: MechanismKind,
        /// The CPU and memory it keeps.
        limits: Resources,
    },
    /// Restore the task's full allocation, memory first, then CPU.
    Resume {
        /// The task.
        task: TaskRef,
        /// Its full allocation.
        resources: Resources,
    },
    /// Start a checkpointed task on `node` from the image its dump left on `image`.
    Restore {
        /// The task.
        task: TaskRef,
        /// Where it runs.
        node: NodeId,
        /// Its allocation.
        resources: Resources,
        /// The node whose dump wrote the image.
        image: NodeId,
    },
    /// A straggler copy (SSR §IV-C): live mode runs no copies, so its
    /// reserved slot just stays held until the task finishes.
    KeepSlot {
        /// The task the copy was for.
        task: TaskRef,
    },
    /// Kill every task of the job that still runs; the job is over.
    StopJob {
        /// The job.
        job: JobId,
    },
}

/// The node operation for a core action.
pub fn node_op(action: &Action) -> NodeOp {
    if let Some(p) = action.preemption() {
        return NodeOp::Preempt { task: p.task, mechanism: p.mechanism, limits: p.keeps };
    }
    match *action {
        Action::Launch { task, node, resources } => NodeOp::Launch { task, node, resources },
        Action::Resume { task, resources } => NodeOp::Resume { task, resources },
        Action::Restore { task, node, resources, image, .. } => NodeOp::Restore { task, node, resources, image },
        Action::Copy { task, .. } => NodeOp::KeepSlot { task },
        Action::FailJob { job } => NodeOp::StopJob { job },
        Action::Kill { .. }
        | Action::Immediate { .. }
        | Action::Graceful { .. }
        | Action::Suspend { .. }
        | Action::Checkpoint { .. } => unreachable!("preemptions are mapped above"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_core_action_maps_to_a_node_operation() {
        let task = TaskRef { job: JobId(3), task: 1 };
        let launch = Action::Launch { task, node: NodeId(0), resources: Resources::new(1000, 512) };
        assert_eq!(node_op(&launch), NodeOp::Launch { task, node: NodeId(0), resources: Resources::new(1000, 512) });
        assert_eq!(
            node_op(&Action::Kill { task }),
            NodeOp::Preempt { task, mechanism: MechanismKind::Kill, limits: Resources::ZERO }
        );
        let footprint = Resources::new(10, 64);
        assert_eq!(
            node_op(&Action::Immediate { task, footprint }),
            NodeOp::Preempt { task, mechanism: MechanismKind::Immediate, limits: footprint }
        );
        let to = Resources::new(2000, 4096);
        assert_eq!(
            node_op(&Action::Graceful { task, to }),
            NodeOp::Preempt { task, mechanism: MechanismKind::Graceful, limits: to }
        );
        assert_eq!(node_op(&Action::Resume { task, resources: to }), NodeOp::Resume { task, resources: to });
        assert_eq!(node_op(&Action::FailJob { job: JobId(3) }), NodeOp::StopJob { job: JobId(3) });
        assert_eq!(
            node_op(&Action::Suspend { task }),
            NodeOp::Preempt { task, mechanism: MechanismKind::Suspend, limits: Resources::ZERO }
        );
    }
}
