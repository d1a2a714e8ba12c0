//! One task as a live body mirrors the core's books of it: where it runs,
//! the limits its node holds it to, the memory it still owes back. Both live
//! bodies (the manager and the Slurm controller) keep one per task and move
//! it through the same state machine: [`TaskMirror::carry_out`] for each
//! node operation the core decided, [`TaskMirror::hear`] for each thing its
//! node (or Slurm) says happened, which gives the observations the core is
//! told, or none when what was heard is stale.

use crate::dispatch::NodeOp;
use pliant_core::model::TaskRef;
use pliant_core::{MechanismKind, Observation, Resources};
use serde::Serialize;

/// Where a task stands: the core's lifecycle state, and `cancelled` for a
/// task its job's cancellation ended (the core counts that as failed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskStatus {
    /// Waiting for resources.
    Pending,
    /// Running with its full allocation.
    Running,
    /// Running with part of its allocation taken away.
    Shrunk,
    /// Frozen at a minimal footprint, or asked to checkpoint.
    Suspended,
    /// Getting its resources back.
    Restoring,
    /// Done.
    Finished,
    /// Its job failed.
    Failed,
    /// Its job was cancelled before it ended.
    Cancelled,
}

impl TaskStatus {
    /// True while the task holds resources on a node.
    pub fn holds_resources(self) -> bool {
        matches!(self, TaskStatus::Running | TaskStatus::Shrunk | TaskStatus::Suspended | TaskStatus::Restoring)
    }

    /// True once the task has ended for good.
    pub fn is_terminal(self) -> bool {
        matches!(self, TaskStatus::Finished | TaskStatus::Failed | TaskStatus::Cancelled)
    }
}

/// What a body heard of a task: from the agent of its node, or from Slurm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Heard {
    /// It ended by itself: successfully (`ok`) or not.
    Exited {
        /// Exit code 0.
        ok: bool,
    },
    /// Its memory limit holds at the lower value: `mem_mb` is free.
    Reclaimed {
        /// MB given back.
        mem_mb: u64,
    },
    /// Shrunk, it started swapping and was frozen.
    Swapping,
    /// Resumed or restored, it runs again with its memory.
    Resumed,
    /// Asked to checkpoint, it saved its state and exited.
    Checkpointed,
    /// Its node could not keep it.
    Lost,
}

/// A task as its body mirrors the core's booking of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TaskMirror {
    /// Lifecycle state.
    pub state: TaskStatus,
    /// The node it is on while it holds resources, or the one it last ran
    /// on once it has ended (`None` while pending).
    pub node: Option<u32>,
    /// What it was given at its last start (zero until it starts).
    pub allocated: Resources,
    /// The limits in force on its node (lower than its allocation while preempted).
    pub limits: Resources,
    /// Memory (MB) its node has yet to report reclaimed.
    pub owed_mb: u64,
    /// True while it is asked to checkpoint and its state is not reported saved.
    pub checkpointing: bool,
}

impl Default for TaskMirror {
    fn default() -> TaskMirror {
        TaskMirror {
            state: TaskStatus::Pending,
            node: None,
            allocated: Resources::ZERO,
            limits: Resources::ZERO,
            owed_mb: 0,
            checkpointing: false,
        }
    }
}

impl TaskMirror {
    /// Started on `node` with `resources`: afresh, or restored (`restore`).
    pub fn start(&mut self, node: u32, resources: Resources, restore: bool) {
        self.state = if restore { TaskStatus::Restoring } else { TaskStatus::Running };
        self.node = Some(node);
        self.allocated = resources;
        self.limits = resources;
        self.owed_mb = 0;
        self.checkpointing = false;
    }

    /// Back to waiting, on no node.
    pub fn requeue(&mut self) {
        *self = TaskMirror::default();
    }

    /// Ended as `state` without finishing (it keeps the node it ran on).
    pub fn end(&mut self, state: TaskStatus) {
        self.state = state;
        self.owed_mb = 0;
        self.checkpointing = false;
    }

    /// Mirrors one node operation the core decided (a launch, restore,
    /// preemption or resumption; the others leave the task as it is).
    pub fn carry_out(&mut self, op: &NodeOp) {
        match *op {
            NodeOp::Launch { node, resources, .. } => self.start(node.0, resources, false),
            NodeOp::Restore { node, resources, .. } => self.start(node.0, resources, true),
            NodeOp::Preempt { mechanism, limits, .. } => self.preempt(mechanism, limits),
            NodeOp::Resume { resources, .. } => {
                self.state = TaskStatus::Restoring;
                self.limits = resources;
                self.owed_mb = 0;
            }
            NodeOp::StopJob { .. } | NodeOp::KeepSlot { .. } => {}
        }
    }

    fn preempt(&mut self, mechanism: MechanismKind, limits: Resources) {
        match mechanism {
            MechanismKind::Kill => self.requeue(),
            MechanismKind::Suspend => {
                // Frozen in place: its CPU is free, its memory stays.
                self.limits.cpu_milli = 0;
                self.state = TaskStatus::Suspended;
            }
            MechanismKind::Checkpoint => {
                // It keeps its allocation until its dump is reported written.
                self.state = TaskStatus::Suspended;
                self.checkpointing = true;
            }
            MechanismKind::Immediate | MechanismKind::Graceful => {
                // Mirrors the core's booking: what the limit drops by is owed back.
                self.owed_mb += self.limits.mem_mb.saturating_sub(limits.mem_mb);
                self.limits = self.limits.min(&limits);
                self.state = match mechanism {
                    MechanismKind::Immediate => TaskStatus::Suspended,
                    _ => TaskStatus::Shrunk,
                };
            }
        }
    }

    /// Takes in what was heard of `task` (from node `from`, when it came
    /// from a node's agent) and returns what the core is to observe of it,
    /// in order; `None` when it is stale: about a task that has ended or
    /// moved on, or from a node it is not on.
    pub fn hear(&mut self, task: TaskRef, heard: Heard, from: Option<u32>) -> Option<Vec<Observation>> {
        if self.state.is_terminal() || from.is_some_and(|n| self.node != Some(n)) {
            return None;
        }
        let state = self.state;
        let observed = match heard {
            Heard::Exited { ok: true } => match state {
                TaskStatus::Running | TaskStatus::Shrunk => {
                    self.state = TaskStatus::Finished;
                    vec![Observation::TaskFinished(task)]
                }
                // Given its memory back, it ran again before that was reported.
                TaskStatus::Restoring => {
                    self.state = TaskStatus::Finished;
                    vec![Observation::Resumed(task), Observation::TaskFinished(task)]
                }
                // It finished while it should have been frozen: run it again.
                TaskStatus::Suspended => {
                    self.requeue();
                    vec![Observation::TaskLost(task)]
                }
                _ => return None,
            },
            Heard::Exited { ok: false } => {
                self.end(TaskStatus::Failed);
                vec![Observation::JobAborted(task.job)]
            }
            Heard::Reclaimed { mem_mb } => {
                let mem_mb = mem_mb.min(self.owed_mb);
                if !matches!(state, TaskStatus::Suspended | TaskStatus::Shrunk) || mem_mb == 0 {
                    return None;
                }
                self.owed_mb -= mem_mb;
                vec![Observation::MemoryReclaimed { task, mem_mb }]
            }
            Heard::Swapping if state == TaskStatus::Shrunk => {
                self.state = TaskStatus::Suspended;
                vec![Observation::Swapping(task)]
            }
            Heard::Resumed if state == TaskStatus::Restoring => {
                // Given only part back (gradual resumption): still shrunk.
                self.state = if self.limits == self.allocated { TaskStatus::Running } else { TaskStatus::Shrunk };
                vec![Observation::Resumed(task)]
            }
            Heard::Checkpointed if self.checkpointing => {
                self.requeue();
                vec![Observation::Checkpointed(task)]
            }
            Heard::Lost if state.holds_resources() => {
                self.requeue();
                vec![Observation::TaskLost(task)]
            }
            Heard::Swapping | Heard::Resumed | Heard::Checkpointed | Heard::Lost => return None,
        };
        Some(observed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pliant_core::model::{JobId, NodeId};

    const TASK: TaskRef = TaskRef { job: JobId(3), task: 1 };

    fn launched(resources: Resources) -> TaskMirror {
        let mut m = TaskMirror::default();
        m.carry_out(&NodeOp::Launch { task: TASK, node: NodeId(2), resources });
        m
    }

    fn preempted(mechanism: MechanismKind, limits: Resources) -> TaskMirror {
        let mut m = launched(Resources::new(2000, 1000));
        m.carry_out(&NodeOp::Preempt { task: TASK, mechanism, limits });
        m
    }

    #[test]
    fn a_shrunk_task_owes_what_its_limit_dropped_by_until_its_node_reports_it_reclaimed() {
        let mut m = preempted(MechanismKind::Graceful, Resources::new(1000, 400));
        assert_eq!((m.state, m.limits, m.owed_mb), (TaskStatus::Shrunk, Resources::new(1000, 400), 600));
        let heard = m.hear(TASK, Heard::Reclaimed { mem_mb: 900 }, Some(2));
        assert_eq!(heard, Some(vec![Observation::MemoryReclaimed { task: TASK, mem_mb: 600 }]));
        assert_eq!(m.owed_mb, 0);
        assert_eq!(m.hear(TASK, Heard::Reclaimed { mem_mb: 10 }, Some(2)), None, "nothing is owed any more");
    }

    #[test]
    fn what_is_heard_from_another_node_or_after_the_end_is_stale() {
        let mut m = launched(Resources::new(1000, 500));
        assert_eq!(m.hear(TASK, Heard::Exited { ok: true }, Some(1)), None);
        assert_eq!(m.state, TaskStatus::Running);
        assert_eq!(m.hear(TASK, Heard::Exited { ok: true }, Some(2)), Some(vec![Observation::TaskFinished(TASK)]));
        assert_eq!(m.hear(TASK, Heard::Exited { ok: false }, None), None);
        assert_eq!((m.state, m.node), (TaskStatus::Finished, Some(2)));
    }

    #[test]
    fn a_task_that_ends_while_its_memory_comes_back_has_resumed_then_finished() {
        let mut m = preempted(MechanismKind::Immediate, Resources::new(0, 100));
        assert_eq!(m.state, TaskStatus::Suspended);
        m.carry_out(&NodeOp::Resume { task: TASK, resources: Resources::new(2000, 1000) });
        assert_eq!((m.state, m.owed_mb), (TaskStatus::Restoring, 0));
        let heard = m.hear(TASK, Heard::Exited { ok: true }, None);
        assert_eq!(heard, Some(vec![Observation::Resumed(TASK), Observation::TaskFinished(TASK)]));
    }

    #[test]
    fn a_task_that_exits_while_frozen_is_lost_and_waits_again() {
        let mut m = preempted(MechanismKind::Suspend, Resources::ZERO);
        assert_eq!((m.state, m.limits), (TaskStatus::Suspended, Resources::new(0, 1000)));
        assert_eq!(m.hear(TASK, Heard::Exited { ok: true }, Some(2)), Some(vec![Observation::TaskLost(TASK)]));
        assert_eq!(m, TaskMirror::default());
    }

    #[test]
    fn only_a_task_asked_to_checkpoint_is_checkpointed() {
        let mut m = preempted(MechanismKind::Graceful, Resources::new(1000, 400));
        assert_eq!(m.hear(TASK, Heard::Checkpointed, Some(2)), None);
        let mut m = preempted(MechanismKind::Checkpoint, Resources::ZERO);
        assert!(m.checkpointing);
        assert_eq!(m.hear(TASK, Heard::Checkpointed, Some(2)), Some(vec![Observation::Checkpointed(TASK)]));
        assert_eq!((m.state, m.node, m.checkpointing), (TaskStatus::Pending, None, false));
    }

    #[test]
    fn resumed_with_part_of_its_allocation_a_task_stays_shrunk() {
        let mut m = preempted(MechanismKind::Graceful, Resources::new(1000, 400));
        m.carry_out(&NodeOp::Resume { task: TASK, resources: Resources::new(2000, 700) });
        assert_eq!(m.hear(TASK, Heard::Resumed, Some(2)), Some(vec![Observation::Resumed(TASK)]));
        assert_eq!(m.state, TaskStatus::Shrunk);
        assert_eq!(m.hear(TASK, Heard::Resumed, Some(2)), None, "not restoring any more");
    }
}
