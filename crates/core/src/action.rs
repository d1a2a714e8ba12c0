//! What the core decides, as data: the body carries these out.

use crate::model::Tier;
use crate::model::{JobId, NodeId, TaskRef};
use crate::Resources;
use serde::{Deserialize, Serialize};

/// How a policy takes resources back from running tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MechanismKind {
    /// Kill the task; its progress is lost and it is requeued.
    Kill,
    /// Immediate preemption (BIG-C §3.2): suspend the whole container to its footprint.
    Immediate,
    /// Graceful preemption (BIG-C §3.3): shrink containers step by step.
    Graceful,
    /// Suspend in place (Slurm's SUSPEND): freeze the task, memory kept.
    Suspend,
    /// Checkpoint-based preemption (checkpoint paper §3.2): dump the task's
    /// state to storage, free its resources, restore it later on any node.
    Checkpoint,
}

impl MechanismKind {
    /// Every mechanism, in declaration order. Adding a kind fails to compile
    /// until it is listed here (see `listed` below), so a body or a book that
    /// goes through this list cannot drop a new one silently.
    pub const ALL: [MechanismKind; 5] = {
        use MechanismKind::{Checkpoint, Graceful, Immediate, Kill, Suspend};
        /// Exhaustive: a new kind is an error here, next to the list to extend.
        const fn listed(m: MechanismKind) {
            match m {
                Kill | Immediate | Graceful | Suspend | Checkpoint => {}
            }
        }
        listed(Kill);
        [Kill, Immediate, Graceful, Suspend, Checkpoint]
    };

    /// The name used in reports, JSON and the live API.
    pub fn name(self) -> &'static str {
        match self {
            MechanismKind::Kill => "kill",
            MechanismKind::Immediate => "immediate",
            MechanismKind::Graceful => "graceful",
            MechanismKind::Suspend => "suspend",
            MechanismKind::Checkpoint => "checkpoint",
        }
    }
}

/// A decision of the core.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Action {
    /// Start `task` on `node` with `resources`.
    Launch {
        /// The task to start.
        task: TaskRef,
        /// Where to start it.
        node: NodeId,
        /// The allocation it gets.
        resources: Resources,
    },
    /// Kill a running task: its progress is lost; the core has requeued it.
    Kill {
        /// The victim.
        task: TaskRef,
    },
    /// Immediate preemption: deprive the task of CPU, then lower its memory
    /// limit to `footprint`; the body reports memory as it is reclaimed.
    Immediate {
        /// The victim.
        task: TaskRef,
        /// What it keeps (BIG-C §3.2: 1 % CPU and 64 MB).
        footprint: Resources,
    },
    /// One or more graceful-preemption steps: lower the task's CPU and memory
    /// limits to `to`; the body reports memory as it is reclaimed, and
    /// freezes the task and reports it if it starts swapping.
    Graceful {
        /// The victim.
        task: TaskRef,
        /// Its new limits.
        to: Resources,
    },
    /// Suspend in place: freeze the task with its memory kept resident; its
    /// CPU is free at once. `Resume` thaws it.
    Suspend {
        /// The victim.
        task: TaskRef,
    },
    /// Give a suspended or shrunk task its full allocation back on its node
    /// and let it run again once its memory is restored.
    Resume {
        /// The task.
        task: TaskRef,
        /// Its full allocation.
        resources: Resources,
    },
    /// Freeze the task and dump its state to `tier` after the dumps and
    /// restores queued on its node; its resources free when the dump ends,
    /// which the body reports (`Observation::Checkpointed`).
    Checkpoint {
        /// The victim.
        task: TaskRef,
        /// Where the image goes.
        tier: Tier,
    },
    /// Start a checkpointed task on `node` from its image on `image`: a local
    /// restore if they are the same node, a remote one otherwise. It holds
    /// `resources` from now on and runs once the body reports it restored.
    Restore {
        /// The task.
        task: TaskRef,
        /// Where it runs.
        node: NodeId,
        /// The allocation it gets.
        resources: Resources,
        /// The node whose dump wrote the image.
        image: NodeId,
        /// The tier the image is on.
        tier: Tier,
    },
    /// Start a copy of running `task` on `node`, in a slot its job reserved
    /// (SSR §IV-C): the first of the two to finish is the task's finish, and
    /// the body stops the other then.
    Copy {
        /// The task copied.
        task: TaskRef,
        /// Where the copy runs.
        node: NodeId,
        /// The copy's allocation.
        resources: Resources,
    },
    /// The job has failed: stop all its tasks; it will not be scheduled again.
    FailJob {
        /// The failed job.
        job: JobId,
    },
}

/// A preempting action as every body reads it: the victim, the mechanism
/// and what the victim keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Preemption {
    /// The victim.
    pub task: TaskRef,
    /// The mechanism, which names the action.
    pub mechanism: MechanismKind,
    /// The CPU and memory it keeps (kill, suspend in place and checkpoint
    /// keep no limit: zero).
    pub keeps: Resources,
}

impl Action {
    /// The preemption this action is, if it is one: each preempting action
    /// is named after its mechanism, and this is the one place that maps
    /// one to the other for every body.
    pub fn preemption(&self) -> Option<Preemption> {
        let (task, mechanism, keeps) = match *self {
            Action::Kill { task } => (task, MechanismKind::Kill, Resources::ZERO),
            Action::Immediate { task, footprint } => (task, MechanismKind::Immediate, footprint),
            Action::Graceful { task, to } => (task, MechanismKind::Graceful, to),
            Action::Suspend { task } => (task, MechanismKind::Suspend, Resources::ZERO),
            Action::Checkpoint { task, .. } => (task, MechanismKind::Checkpoint, Resources::ZERO),
            Action::Launch { .. }
            | Action::Resume { .. }
            | Action::Restore { .. }
            | Action::Copy { .. }
            | Action::FailJob { .. } => return None,
        };
        Some(Preemption { task, mechanism, keeps })
    }

    /// The task it is about (a failed job's is none).
    pub fn task(&self) -> Option<TaskRef> {
        match *self {
            Action::Launch { task, .. }
            | Action::Kill { task }
            | Action::Immediate { task, .. }
            | Action::Graceful { task, .. }
            | Action::Suspend { task }
            | Action::Resume { task, .. }
            | Action::Checkpoint { task, .. }
            | Action::Restore { task, .. }
            | Action::Copy { task, .. } => Some(task),
            Action::FailJob { .. } => None,
        }
    }
}
