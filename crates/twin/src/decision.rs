//! A scheduling decision as the twin compares them: a task placed on a node,
//! or a task preempted by a mechanism. The simulator hands the core's actions
//! over as values; a live run's journal keeps them as their `Debug` text, read
//! back here (one reader for both, checked against every action kind).

use pliant_core::action::Action;
use pliant_core::model::TaskRef;
use pliant_core::Micros;
use serde::Serialize;

/// What was decided about a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Kind {
    /// Started (launched, restored or copied) on a node.
    Place {
        /// The node.
        node: u32,
    },
    /// Preempted by a mechanism (`kill`, `immediate`, `graceful`, `checkpoint`, …).
    Preempt {
        /// The mechanism's name.
        mechanism: &'static str,
    },
    /// Given its resources back after a preemption.
    Resume,
}

/// One decision at one time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Decision {
    /// When, µs of core time.
    pub at: Micros,
    /// The job.
    pub job: u32,
    /// The task within its job.
    pub task: u32,
    /// What.
    pub kind: Kind,
    /// The CPU (millicores) it runs with afterwards, where the action says
    /// (a launch's, a shrink's, a resume's allocation; a suspension's footprint).
    pub cpu_milli: Option<u64>,
}

impl Decision {
    /// The decision an action is, if it is one the twin compares (a failed job is not).
    pub fn from_action(at: Micros, action: &Action) -> Option<Decision> {
        let d = |task: &TaskRef, kind, cpu: Option<u64>| Decision {
            at,
            job: task.job.0,
            task: task.task,
            kind,
            cpu_milli: cpu,
        };
        let preempt = |mechanism| Kind::Preempt { mechanism };
        Some(match action {
            Action::Launch { task, node, resources }
            | Action::Restore { task, node, resources, .. }
            | Action::Copy { task, node, resources } => {
                d(task, Kind::Place { node: node.0 }, Some(resources.cpu_milli))
            }
            Action::Kill { task } => d(task, preempt("kill"), Some(0)),
            Action::Suspend { task, footprint } => d(task, preempt("immediate"), Some(footprint.cpu_milli)),
            Action::Freeze { task } => d(task, preempt("suspend"), Some(0)),
            Action::Shrink { task, to } => d(task, preempt("graceful"), Some(to.cpu_milli)),
            Action::Checkpoint { task, .. } => d(task, preempt("checkpoint"), Some(0)),
            Action::Resume { task, resources } => d(task, Kind::Resume, Some(resources.cpu_milli)),
            Action::FailJob { .. } => return None,
        })
    }

    /// Reads an action's `Debug` text as a live journal keeps it; `None` for
    /// text that is no decision the twin compares.
    pub fn parse(at: Micros, text: &str) -> Option<Decision> {
        let name = text.split([' ', '{']).next()?;
        let kind = match name {
            "Launch" | "Restore" | "Copy" => Kind::Place { node: number_after(text, "node: NodeId(")? as u32 },
            "Kill" => Kind::Preempt { mechanism: "kill" },
            "Suspend" => Kind::Preempt { mechanism: "immediate" },
            "Freeze" => Kind::Preempt { mechanism: "suspend" },
            "Shrink" => Kind::Preempt { mechanism: "graceful" },
            "Checkpoint" => Kind::Preempt { mechanism: "checkpoint" },
            "Resume" => Kind::Resume,
            _ => return None,
        };
        let cpu_milli = match name {
            "Kill" | "Freeze" | "Checkpoint" => Some(0),
            _ => number_after(text, "cpu_milli: "),
        };
        Some(Decision {
            at,
            job: number_after(text, "job: JobId(")? as u32,
            task: number_after(text, "), task: ")? as u32,
            kind,
            cpu_milli,
        })
    }

    /// The task it is about.
    pub fn task_ref(&self) -> (u32, u32) {
        (self.job, self.task)
    }
}

/// The unsigned number that follows the first `pattern` in `text`.
fn number_after(text: &str, pattern: &str) -> Option<u64> {
    let rest = &text[text.find(pattern)? + pattern.len()..];
    let end = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    rest[..end].parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pliant_core::model::Tier;
    use pliant_core::model::{JobId, NodeId};
    use pliant_core::Resources;

    #[test]
    fn the_journal_text_of_every_action_reads_as_the_action() {
        let task = TaskRef { job: JobId(12), task: 3 };
        let r = Resources::new(1500, 512);
        let actions = [
            Action::Launch { task, node: NodeId(4), resources: r },
            Action::Kill { task },
            Action::Suspend { task, footprint: Resources::new(10, 64) },
            Action::Freeze { task },
            Action::Shrink { task, to: Resources::new(500, 256) },
            Action::Resume { task, resources: r },
            Action::Checkpoint { task, tier: Tier::Nvm },
            Action::Restore { task, node: NodeId(2), resources: r, image: NodeId(4), tier: Tier::Ssd },
            Action::Copy { task, node: NodeId(7), resources: r },
        ];
        for action in &actions {
            let typed = Decision::from_action(9, action).unwrap();
            assert_eq!(Decision::parse(9, &format!("{action:?}")), Some(typed), "{action:?}");
        }
        let shrink = Decision::from_action(9, &actions[4]).unwrap();
        assert_eq!((shrink.job, shrink.task, shrink.cpu_milli), (12, 3, Some(500)));
        assert_eq!(shrink.kind, Kind::Preempt { mechanism: "graceful" });
        assert_eq!(Decision::from_action(9, &actions[7]).unwrap().kind, Kind::Place { node: 2 });
        assert_eq!(Decision::from_action(0, &Action::FailJob { job: JobId(1) }), None);
        assert_eq!(Decision::parse(0, "FailJob { job: JobId(1) }"), None);
    }
}
