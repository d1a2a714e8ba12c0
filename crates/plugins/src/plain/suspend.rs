//! Suspend in place (Slurm's SUSPEND, `scontrol suspend`): the victim is
//! frozen with its memory kept resident, so it frees its CPU at once and
//! nothing else; no memory is swapped out, so it resumes without reading any
//! back. It resumes on its own node once its CPU is free there, after delayed
//! resumption D (BIG-C §4.3), as a container does.

use crate::bigc::{offer_resumptions, Offers};
use pliant_core::action::Action;
use pliant_core::books::View;
use pliant_core::model::{TaskRef, TaskState};
use pliant_core::policy::steps::{Mechanism, Preempted, Take};
use pliant_core::{Micros, Resources};

/// Freezes victims in place.
#[derive(Debug, Clone)]
pub(crate) struct Suspend {
    /// Offers of its node a frozen task waits for before resuming (D).
    pub delayed_resumption: u32,
    /// The offers its frozen tasks refused, and the heartbeat's buffers.
    pub offers: Offers,
}

/// Freezes `task` in place: its CPU is free at once, its memory stays booked.
pub(crate) fn freeze(view: &mut View, now: Micros, task: TaskRef, out: &mut Vec<Action>) {
    let queue = view.queue_of(task);
    let t = view.task_mut(task);
    t.state.transition(TaskState::Suspended).expect("victims are running");
    t.pause(now);
    let cpu = std::mem::take(&mut t.allocated.cpu_milli);
    let node = t.node;
    view.add_preempted(task);
    view.release(node, queue, Resources::new(cpu, 0));
    view.sync_promise(task);
    out.push(Action::Suspend { task });
}

impl Mechanism for Suspend {
    fn clone_box(&self) -> Box<dyn Mechanism> {
        Box::new(self.clone())
    }

    /// Only the CPU: memory stays resident.
    fn frees(&self, held: Resources) -> Resources {
        Resources::new(held.cpu_milli, 0)
    }

    fn preempt(&mut self, view: &mut View, now: Micros, take: Take, out: &mut Vec<Action>) -> Preempted {
        self.offers.reset(take.task);
        freeze(view, now, take.task, out);
        Preempted::Kept
    }

    fn offer(&mut self, view: &mut View, out: &mut Vec<Action>) {
        offer_resumptions(view, self.delayed_resumption, None, &mut self.offers, out);
    }

    crate::bigc::container_reports!();

    fn forget(&mut self, _view: &mut View, task: TaskRef) {
        self.offers.reset(task);
    }

    /// Only a task among the preempted can have refused offers.
    fn finished(&mut self, view: &View, task: TaskRef) {
        if view.is_preempted(task) {
            self.offers.reset(task);
        }
    }
}
