//! Suspend in place (Slurm's SUSPEND, `scontrol suspend`): the victim is
//! frozen with its memory kept resident, so it frees its CPU at once and
//! nothing else; no memory is swapped out, so it resumes without reading any
//! back. It resumes on its own node once its CPU is free there, after delayed
//! resumption D (BIG-C §4.3), as a container does.

use super::container::{offer_resumptions, OfferBuffers};
use super::{Mechanism, Preempted, Take};
use crate::action::Action;
use crate::model::TaskState;
use crate::scheduler::view::View;
use crate::{Micros, Resources};

/// Freezes victims in place.
#[derive(Debug, Clone)]
pub(crate) struct Suspend {
    /// Offers of its node a frozen task waits for before resuming (D).
    pub delayed_resumption: u32,
    /// The heartbeat's buffers, kept between heartbeats.
    pub offers: OfferBuffers,
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
        let task = take.task;
        let queue = view.queue_of(task);
        let t = view.task_mut(task);
        t.state.transition(TaskState::Suspended).expect("victims are running");
        t.pause(now);
        t.offers = 0;
        let cpu = std::mem::take(&mut t.allocated.cpu_milli);
        let node = t.node;
        view.add_preempted(task);
        view.release(node, queue, Resources::new(cpu, 0));
        view.sync_promise(task);
        out.push(Action::Suspend { task });
        Preempted::Kept
    }

    fn offer(&mut self, view: &mut View, out: &mut Vec<Action>) {
        offer_resumptions(view, self.delayed_resumption, None, &mut self.offers, out);
    }
}
