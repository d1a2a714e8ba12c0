//! The task lifecycle as an explicit state machine: every change of state goes
//! through [`TaskState::transition`], which refuses the illegal ones.

use serde::{Deserialize, Serialize};

/// Where a task is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskState {
    /// Waiting for resources (never started, or killed and requeued).
    Pending,
    /// Running with its full allocation.
    Running,
    /// Running with part of its allocation taken away (graceful preemption).
    Shrunk,
    /// Frozen, holding no CPU: by immediate preemption (memory reclaimed to
    /// its footprint), by suspend in place (memory kept), or by graceful
    /// preemption once it swapped.
    Suspended,
    /// Getting its resources and state back before running again.
    Restoring,
    /// Done; terminal.
    Finished,
    /// Given up on (its job failed or was cancelled); terminal.
    Failed,
}

/// A refused change of state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("illegal task transition {from:?} -> {to:?}")]
pub struct IllegalTransition {
    /// The state the task was in.
    pub from: TaskState,
    /// The state that was asked for.
    pub to: TaskState,
}

impl TaskState {
    /// True when `self -> to` is a legal step of the lifecycle.
    pub fn can_become(self, to: TaskState) -> bool {
        use TaskState::*;
        match (self, to) {
            // A checkpointed task restarts from its image: `Pending -> Restoring`.
            (Pending, Running | Restoring | Failed) => true,
            // Killed-and-requeued is `Running -> Pending`.
            (Running, Finished | Pending | Failed | Shrunk | Suspended) => true,
            (Shrunk, Running | Shrunk | Suspended | Restoring | Finished | Pending | Failed) => true,
            (Suspended, Restoring | Pending | Failed) => true,
            // Gradual resumption gives a shrunk container part back: `Restoring -> Shrunk`.
            (Restoring, Running | Shrunk | Pending | Failed) => true,
            _ => false,
        }
    }

    /// Moves to `to` if the lifecycle allows it.
    pub fn transition(&mut self, to: TaskState) -> Result<(), IllegalTransition> {
        if self.can_become(to) {
            *self = to;
            Ok(())
        } else {
            Err(IllegalTransition { from: *self, to })
        }
    }

    /// True for states in which the task holds resources on a node.
    pub fn holds_resources(self) -> bool {
        matches!(self, TaskState::Running | TaskState::Shrunk | TaskState::Suspended | TaskState::Restoring)
    }

    /// True for Finished and Failed.
    pub fn is_terminal(self) -> bool {
        matches!(self, TaskState::Finished | TaskState::Failed)
    }
}

#[cfg(test)]
mod tests {
    use super::TaskState::*;
    use super::*;

    #[test]
    fn legal_lifecycle_of_a_killed_task() {
        let mut s = Pending;
        for next in [Running, Pending, Running, Finished] {
            s.transition(next).unwrap();
        }
        assert_eq!(s, Finished);
    }

    #[test]
    fn terminal_states_do_not_move() {
        for from in [Finished, Failed] {
            for to in [Pending, Running, Shrunk, Suspended, Restoring, Finished, Failed] {
                assert!(!from.can_become(to), "{from:?} -> {to:?}");
            }
        }
    }

    #[test]
    fn a_pending_task_cannot_finish() {
        let mut s = Pending;
        assert_eq!(s.transition(Finished), Err(IllegalTransition { from: Pending, to: Finished }));
        assert_eq!(s, Pending);
    }
}
