//! Each victim by the mechanism the cost planner chose for it (`pliant`,
//! `least_cost.rs`): killed (`plain/kill.rs`), frozen in place (`plain/suspend.rs`),
//! shrunk by what the need asks (`bigc/container.rs`'s graceful shrink) or, where
//! the policy has a checkpoint tier, dumped (`checkpoint/dump.rs`, basic: the
//! planner already chose it over a kill). A frozen or shrunk task resumes on
//! its node as a container does, after delayed resumption D (BIG-C §4.3),
//! gradually where the policy says so; a checkpointed one waits in its job's
//! queue and is restored where there is room (the checkpoint paper's Alg. 2).
//! Under a mechanism rule from outside the core (`MechanismRule`), the rule
//! chooses instead of the planner.

use crate::bigc::ContainerPreemption;
use crate::checkpoint::Checkpoint;
use crate::plain::freeze;
use crate::plain::Kill;
use pliant_core::action::{Action, MechanismKind};
use pliant_core::books::{Holding, View};
use pliant_core::model::{NodeId, TaskRef};
use pliant_core::policy::steps::{Image, Mechanism, MechanismRule, Preempted, Take};
use pliant_core::CoreError;
use pliant_core::{Micros, Resources};

/// Kill, suspend in place, shrink or checkpoint, victim by victim.
#[derive(Debug, Clone)]
pub(crate) struct Cheapest {
    /// Killing.
    pub kill: Kill,
    /// Shrinking (graceful) and resuming (frozen tasks too).
    pub container: ContainerPreemption,
    /// Checkpointing, with its per-node queues, if the policy has a tier.
    pub checkpoint: Option<Checkpoint>,
    /// The rule that chooses each victim's mechanism, if not the planner.
    pub rule: Option<Box<dyn MechanismRule>>,
}

impl Mechanism for Cheapest {
    /// A planner other than the cost planner takes graceful steps with it,
    /// unless a rule chooses.
    fn shrinks(&self) -> bool {
        self.rule.as_ref().is_none_or(|rule| rule.shrinks())
    }

    fn clone_box(&self) -> Box<dyn Mechanism> {
        Box::new(self.clone())
    }

    fn freeing(&self, node: usize) -> Resources {
        self.checkpoint.as_ref().map_or(Resources::ZERO, |c| c.freeing(node))
    }

    fn io_queue(&self, node: usize, now: Micros) -> Micros {
        self.checkpoint.as_ref().map_or(0, |c| c.io_queue(node, now))
    }

    fn preempt(&mut self, view: &mut View, now: Micros, take: Take, out: &mut Vec<Action>) -> Preempted {
        let take = match &mut self.rule {
            Some(rule) => {
                let by = rule.choose(view, now, &Holding::of(take.task, view.task(take.task), now));
                // Only a graceful step keeps the size the planner gave it.
                Take { by: Some(by), shrink_to: take.shrink_to.filter(|_| by == MechanismKind::Graceful), ..take }
            }
            None => take,
        };
        match (take.by, &mut self.checkpoint) {
            (Some(MechanismKind::Kill), checkpoint) => {
                // A killed task starts afresh: its image, if any, is of no use.
                if let Some(checkpoint) = checkpoint {
                    checkpoint.finished(view, take.task);
                }
                self.kill.preempt(view, now, take, out)
            }
            (Some(MechanismKind::Suspend), _) => {
                self.container.offers.reset(take.task);
                freeze(view, now, take.task, out);
                Preempted::Kept
            }
            (Some(MechanismKind::Checkpoint), Some(checkpoint)) => checkpoint.preempt(view, now, take, out),
            _ => self.container.preempt(view, now, take, out),
        }
    }

    /// Frozen and shrunk tasks are all offered their nodes, once per heartbeat.
    fn offer(&mut self, view: &mut View, out: &mut Vec<Action>) {
        self.container.offer(view, out);
    }

    fn image(&self, task: TaskRef) -> Option<Image> {
        self.checkpoint.as_ref().and_then(|c| c.image(task))
    }

    fn restore(
        &mut self,
        view: &mut View,
        now: Micros,
        job: usize,
        task: u32,
        image: Image,
        first_fit: NodeId,
        out: &mut Vec<Action>,
    ) {
        let checkpoint = self.checkpoint.as_mut().expect("only checkpointing makes images");
        checkpoint.restore(view, now, job, task, image, first_fit, out)
    }

    fn checkpointed(&mut self, view: &mut View, now: Micros, task: TaskRef) -> Result<(), CoreError> {
        match &mut self.checkpoint {
            Some(checkpoint) => checkpoint.checkpointed(view, now, task),
            None => self.container.checkpointed(view, now, task),
        }
    }

    fn resumed(&mut self, view: &mut View, now: Micros, task: TaskRef) -> Result<(), CoreError> {
        match &mut self.checkpoint {
            Some(checkpoint) => checkpoint.resumed(view, now, task),
            None => self.container.resumed(view, now, task),
        }
    }

    fn memory_reclaimed(&mut self, view: &mut View, task: TaskRef, mem_mb: u64) -> Result<(), CoreError> {
        self.container.memory_reclaimed(view, task, mem_mb)
    }

    fn swapping(&mut self, view: &mut View, now: Micros, task: TaskRef) -> Result<(), CoreError> {
        self.container.swapping(view, now, task)
    }

    fn forget(&mut self, view: &mut View, task: TaskRef) {
        self.container.forget(view, task);
        if let Some(checkpoint) = &mut self.checkpoint {
            checkpoint.forget(view, task);
        }
    }

    fn finished(&mut self, view: &View, task: TaskRef) {
        self.container.finished(view, task);
        if let Some(checkpoint) = &mut self.checkpoint {
            checkpoint.finished(view, task);
        }
    }
}
