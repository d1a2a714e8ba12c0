//! The one place that turns core decisions into node operations. When the
//! core gains a mechanism or an action, the compiler points here.

use crate::capabilities::NodeMechanism;
use pliant_core::model::{JobId, NodeId, TaskRef};
use pliant_core::{Action, Mechanism, Resources};

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
    /// Take the task's resources back by `mechanism`.
    Preempt {
        /// The victim.
        task: TaskRef,
        /// How, as the node carries it out.
        mechanism: NodeMechanism,
    },
    /// Kill every task of the job that still runs; the job is over.
    StopJob {
        /// The job.
        job: JobId,
    },
}

/// The node mechanism that carries out the core's `mechanism`.
pub fn node_mechanism(mechanism: Mechanism) -> NodeMechanism {
    match mechanism {
        Mechanism::Kill => NodeMechanism::Kill,
    }
}

/// The node operation for a core action.
pub fn node_op(action: &Action) -> NodeOp {
    match *action {
        Action::Launch { task, node, resources } => NodeOp::Launch { task, node, resources },
        Action::Preempt { task, mechanism } => NodeOp::Preempt { task, mechanism: node_mechanism(mechanism) },
        Action::FailJob { job } => NodeOp::StopJob { job },
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
        let kill = Action::Preempt { task, mechanism: Mechanism::Kill };
        assert_eq!(node_op(&kill), NodeOp::Preempt { task, mechanism: NodeMechanism::Kill });
        assert_eq!(node_op(&Action::FailJob { job: JobId(3) }), NodeOp::StopJob { job: JobId(3) });
    }
}
