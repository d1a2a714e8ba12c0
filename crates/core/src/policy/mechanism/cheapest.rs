//! Each victim by the mechanism the cost planner chose for it (`pliant`,
//! `planner/cost.rs`): killed (`kill.rs`), frozen in place (`suspend.rs`) or
//! shrunk by what the need asks (`container.rs`'s graceful shrink). Every
//! preempted task resumes on its node as a container does, after delayed
//! resumption D (BIG-C §4.3), gradually where the policy says so.

use super::container::Container;
use super::kill::Kill;
use super::suspend::Suspend;
use super::{Mechanism, Preempted, Take};
use crate::action::{Action, MechanismKind};
use crate::scheduler::view::View;
use crate::Micros;

/// Kill, suspend in place or shrink, victim by victim.
#[derive(Debug, Clone)]
pub(crate) struct Cheapest {
    /// Killing.
    pub kill: Kill,
    /// Shrinking (graceful) and resuming.
    pub container: Container,
    /// Freezing in place.
    pub suspend: Suspend,
}

impl Mechanism for Cheapest {
    /// What a node must be able to do for it: shrink (graceful), which
    /// implies freezing and killing.
    fn kind(&self) -> MechanismKind {
        MechanismKind::Graceful
    }

    fn clone_box(&self) -> Box<dyn Mechanism> {
        Box::new(self.clone())
    }

    fn preempt(&mut self, view: &mut View, now: Micros, take: Take, out: &mut Vec<Action>) -> Preempted {
        match take.by {
            Some(MechanismKind::Kill) => self.kill.preempt(view, now, take, out),
            Some(MechanismKind::Suspend) => self.suspend.preempt(view, now, take, out),
            _ => self.container.preempt(view, now, take, out),
        }
    }

    /// Frozen and shrunk tasks are all offered their nodes, once per heartbeat.
    fn offer(&mut self, view: &mut View, out: &mut Vec<Action>) {
        self.container.offer(view, out);
    }
}
