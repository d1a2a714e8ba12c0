//! What a manager and a node agent say to each other: operations the manager
//! asks for and reports the agent sends back. The same messages go over a
//! channel (`pliant local`) or as JSON over HTTP (`pliant agent`).

use pliant_core::model::TaskRef;
use pliant_core::MechanismKind;
use pliant_core::Resources;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// An operation on one task of a node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum AgentOp {
    /// Start `argv` in a new cgroup with `resources`; its stdout, stderr and
    /// exit code go to files in `log_dir`, and it gets `checkpoint_dir` (see
    /// [`crate::process::CHECKPOINT_DIR_ENV`]). A fresh start empties that
    /// directory; a restore keeps it, and is reported resumed once started.
    Launch {
        /// The task.
        task: TaskRef,
        /// The command.
        argv: Vec<String>,
        /// Its allocation.
        resources: Resources,
        /// Directory for `stdout`, `stderr` and `exit`.
        log_dir: PathBuf,
        /// Where the task saves its state when asked to checkpoint.
        checkpoint_dir: PathBuf,
        /// True to restart from the state saved there (a checkpoint restore).
        restore: bool,
        /// The uid the job's tasks run as on a node that runs each job as a
        /// user of its own (journaled with the job; see [`crate::uid_range`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        uid: Option<u32>,
    },
    /// Take resources back by `mechanism`, down to `limits` (kill: everything;
    /// checkpoint: ask the task to save its state and exit, then report it).
    Preempt {
        /// The victim.
        task: TaskRef,
        /// How.
        mechanism: MechanismKind,
        /// What it keeps.
        limits: Resources,
    },
    /// Give the task its resources back, up to `limits`, and let it run.
    Resume {
        /// The task.
        task: TaskRef,
        /// Its limits from now on: its full allocation, or less (gradual resumption).
        limits: Resources,
    },
    /// Kill the task for good (its job failed or was cancelled).
    Stop {
        /// The task.
        task: TaskRef,
    },
    /// After a manager restart: take over the task (if the agent does not
    /// hold it already) and bring it into the state the journal says.
    Adopt {
        /// The task.
        task: TaskRef,
        /// Where its files are.
        log_dir: PathBuf,
        /// Where it saves its state.
        checkpoint_dir: PathBuf,
        /// Its full allocation.
        resources: Resources,
        /// The state it should be in.
        expect: Expected,
        /// Memory (MB) the manager still expects to hear reclaimed.
        owed_mb: u64,
    },
    /// After adoption: stop every task held but not named by an
    /// [`AgentOp::Adopt`] since the last sweep, and remove every task cgroup
    /// the agent does not hold.
    Sweep,
}

impl AgentOp {
    /// The task the operation is about (`None` for a sweep).
    pub fn task(&self) -> Option<TaskRef> {
        match self {
            AgentOp::Launch { task, .. }
            | AgentOp::Preempt { task, .. }
            | AgentOp::Resume { task, .. }
            | AgentOp::Stop { task }
            | AgentOp::Adopt { task, .. } => Some(*task),
            AgentOp::Sweep => None,
        }
    }
}

/// The state a task should be in on its node, as the manager's journal says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", content = "limits", rename_all = "snake_case")]
pub enum Expected {
    /// Running with its full allocation.
    Running,
    /// Running, shrunk to these limits (graceful preemption).
    Shrunk(Resources),
    /// Frozen at these limits (immediate preemption, or shrunk and swapping).
    Frozen(Resources),
    /// Being resumed to these limits (its full allocation, or less under
    /// gradual resumption): thawed, then reported resumed.
    Restoring(Resources),
    /// Asked to checkpoint: it saves its state and exits, then is reported
    /// checkpointed (or lost).
    Checkpointing,
}

/// What an agent saw happen to a task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "report", rename_all = "snake_case")]
pub enum AgentReport {
    /// The task's process ended by itself.
    Exited {
        /// The task.
        task: TaskRef,
        /// Its exit code, if it exited (`None`: killed by `signal`).
        code: Option<i32>,
        /// The signal that killed it, if one did.
        signal: Option<i32>,
        /// The last lines of its stderr.
        stderr_tail: String,
    },
    /// The task gave back `mem_mb` of memory after its limit was lowered.
    Reclaimed {
        /// The task.
        task: TaskRef,
        /// MB its limit went down by: what the scheduler may book elsewhere.
        mem_mb: u64,
        /// MB its cgroup's usage went down by: what the node really got back
        /// (less than `mem_mb` when the task used less than its limit).
        #[serde(default)]
        freed_mb: u64,
        /// How long the kernel took to reclaim it, in ms.
        took_ms: u64,
    },
    /// A shrunk task started swapping and was frozen.
    Swapping {
        /// The task.
        task: TaskRef,
    },
    /// A preempted task has its allocation back and runs again.
    Resumed {
        /// The task.
        task: TaskRef,
    },
    /// A task asked to checkpoint saved its state and exited 0: its
    /// resources are free and it can be restored from its checkpoint directory.
    Checkpointed {
        /// The task.
        task: TaskRef,
    },
    /// The agent does not have the task (its cgroup is gone), could not start
    /// it, or it failed to checkpoint (its progress since its last save is lost).
    Lost {
        /// The task.
        task: TaskRef,
        /// Why.
        reason: String,
    },
}

impl AgentReport {
    /// The task the report is about.
    pub fn task(&self) -> TaskRef {
        match self {
            AgentReport::Exited { task, .. }
            | AgentReport::Reclaimed { task, .. }
            | AgentReport::Swapping { task }
            | AgentReport::Resumed { task }
            | AgentReport::Checkpointed { task }
            | AgentReport::Lost { task, .. } => *task,
        }
    }
}

impl std::fmt::Display for AgentOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AgentOp::Launch { task, resources, restore: false, .. } => write!(f, "launch {task} with {resources}"),
            AgentOp::Launch { task, resources, restore: true, .. } => {
                write!(f, "restore {task} from its checkpoint with {resources}")
            }
            AgentOp::Preempt { task, mechanism: MechanismKind::Checkpoint, .. } => {
                write!(f, "checkpoint {task} (SIGUSR1: save and exit)")
            }
            AgentOp::Preempt { task, mechanism, limits } => {
                write!(f, "preempt {task}: {} to {limits}", mechanism.name())
            }
            AgentOp::Resume { task, .. } => write!(f, "resume {task}"),
            AgentOp::Stop { task } => write!(f, "stop {task}"),
            AgentOp::Adopt { task, expect, .. } => write!(f, "take over {task} ({expect:?})"),
            AgentOp::Sweep => write!(f, "remove leftover task cgroups"),
        }
    }
}

impl std::fmt::Display for AgentReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AgentReport::Exited { task, code: Some(c), .. } => write!(f, "{task} exited with code {c}"),
            AgentReport::Exited { task, signal: Some(s), .. } => write!(f, "{task} killed by signal {s}"),
            AgentReport::Exited { task, .. } => write!(f, "{task} exited"),
            AgentReport::Reclaimed { task, mem_mb, freed_mb, took_ms } => {
                write!(f, "{task} gave back {mem_mb} MB ({freed_mb} MB in use) in {took_ms} ms")
            }
            AgentReport::Swapping { task } => write!(f, "{task} is swapping: frozen"),
            AgentReport::Resumed { task } => write!(f, "{task} resumed"),
            AgentReport::Checkpointed { task } => write!(f, "{task} checkpointed"),
            AgentReport::Lost { task, reason } => write!(f, "{task} lost: {reason}"),
        }
    }
}

/// The files of one task in its log directory.
pub mod files {
    use std::path::{Path, PathBuf};

    /// Its stdout.
    pub fn stdout(log_dir: &Path) -> PathBuf {
        log_dir.join("stdout")
    }

    /// Its stderr.
    pub fn stderr(log_dir: &Path) -> PathBuf {
        log_dir.join("stderr")
    }

    /// Its exit code, written when it ends.
    pub fn exit(log_dir: &Path) -> PathBuf {
        log_dir.join("exit")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pliant_core::model::JobId;

    #[test]
    fn messages_round_trip_through_json() {
        let task = TaskRef { job: JobId(2), task: 1 };
        let op = AgentOp::Adopt {
            task,
            log_dir: "/x".into(),
            checkpoint_dir: "/c".into(),
            resources: Resources::new(1000, 256),
            expect: Expected::Frozen(Resources::new(10, 64)),
            owed_mb: 192,
        };
        let text = serde_json::to_string(&op).unwrap();
        assert!(text.contains(r#""op":"adopt""#) && text.contains(r#""state":"frozen""#), "{text}");
        assert_eq!(serde_json::from_str::<AgentOp>(&text).unwrap(), op);
        let report = AgentReport::Reclaimed { task, mem_mb: 192, freed_mb: 150, took_ms: 900 };
        let back: AgentReport = serde_json::from_str(&serde_json::to_string(&report).unwrap()).unwrap();
        assert_eq!(back.task(), task);
        assert_eq!(back, report);
    }
}
