//! A scheduling decision as the twin compares them: a task placed on a node,
//! or a task preempted by a mechanism. The simulator hands the core's actions
//! over as values; a live run's journal keeps them serialised as themselves,
//! read back as the same values (one reader for both).

use pliant_core::action::Action;
use pliant_core::model::TaskRef;
use pliant_core::{MechanismKind, Micros};
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
    /// Preempted by a mechanism.
    Preempt {
        /// The mechanism (`kill`, `immediate`, `graceful`, `suspend`, `checkpoint`).
        mechanism: MechanismKind,
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
        if let Some(p) = action.preemption() {
            return Some(d(&p.task, Kind::Preempt { mechanism: p.mechanism }, Some(p.keeps.cpu_milli)));
        }
        Some(match action {
            Action::Launch { task, node, resources }
            | Action::Restore { task, node, resources, .. }
            | Action::Copy { task, node, resources } => {
                d(task, Kind::Place { node: node.0 }, Some(resources.cpu_milli))
            }
            Action::Resume { task, resources } => d(task, Kind::Resume, Some(resources.cpu_milli)),
            Action::Kill { .. }
            | Action::Immediate { .. }
            | Action::Graceful { .. }
            | Action::Suspend { .. }
            | Action::Checkpoint { .. }
            | Action::FailJob { .. } => return None,
        })
    }

    /// The task it is about.
    pub fn task_ref(&self) -> (u32, u32) {
        (self.job, self.task)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pliant_core::model::Tier;
    use pliant_core::model::{JobId, NodeId};
    use pliant_core::Resources;

    #[test]
    fn every_action_journals_as_itself_and_reads_as_its_decision() {
        let task = TaskRef { job: JobId(12), task: 3 };
        let r = Resources::new(1500, 512);
        let actions = [
            Action::Launch { task, node: NodeId(4), resources: r },
            Action::Kill { task },
            Action::Immediate { task, footprint: Resources::new(10, 64) },
            Action::Suspend { task },
            Action::Graceful { task, to: Resources::new(500, 256) },
            Action::Resume { task, resources: r },
            Action::Checkpoint { task, tier: Tier::Nvm },
            Action::Restore { task, node: NodeId(2), resources: r, image: NodeId(4), tier: Tier::Ssd },
            Action::Copy { task, node: NodeId(7), resources: r },
            Action::FailJob { job: JobId(1) },
        ];
        let journaled = serde_json::to_string(&actions).unwrap();
        assert_eq!(serde_json::from_str::<Vec<Action>>(&journaled).unwrap(), actions);
        let mechanisms: Vec<_> = actions
            .iter()
            .filter_map(|a| match Decision::from_action(9, a)?.kind {
                Kind::Preempt { mechanism } => Some(mechanism.name()),
                _ => None,
            })
            .collect();
        assert_eq!(mechanisms, ["kill", "immediate", "suspend", "graceful", "checkpoint"]);
        let graceful = Decision::from_action(9, &actions[4]).unwrap();
        assert_eq!((graceful.job, graceful.task, graceful.cpu_milli), (12, 3, Some(500)));
        assert_eq!(Decision::from_action(9, &actions[2]).unwrap().cpu_milli, Some(10));
        assert_eq!(Decision::from_action(9, &actions[7]).unwrap().kind, Kind::Place { node: 2 });
        assert_eq!(Decision::from_action(0, &actions[9]), None);
    }
}
