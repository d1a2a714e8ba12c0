//! How a victim gives its resources back — the *mechanism* step's traits.
//! A planner (`planner.rs`) decides whom to take from; the scheduler hands
//! each [`Take`] to the policy's [`Mechanism`] with a [`View`] of its books.
//! A mechanism rule from outside the core ([`MechanismRule`]) chooses per
//! victim among the operations every body carries out. The built-in
//! mechanisms, and the one that runs a rule, are plugins (`pliant-plugins`).

use crate::action::{Action, MechanismKind};
use crate::books::{Holding, View};
use crate::error::CoreError;
use crate::model::{NodeId, TaskRef};
use crate::{Micros, Resources};

/// What a planner takes from one victim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Take {
    /// The victim.
    pub task: TaskRef,
    /// Its new limits, for a graceful step; `None`: all it holds.
    pub shrink_to: Option<Resources>,
    /// The mechanism to use, when the planner chooses per victim (`pliant`);
    /// `None`: the policy's. A [`MechanismRule`] chooses in its place.
    pub by: Option<MechanismKind>,
}

/// Where a checkpointed task's image is and how far the task had got
/// (checkpoint paper §4.2).
#[derive(Debug, Clone, Copy)]
pub struct Image {
    /// The node whose dump wrote it.
    pub node: NodeId,
    /// Run time of the attempt it saves (the task's progress, as the core saw it run).
    pub banked: Micros,
}

/// What preempting one victim came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preempted {
    /// It gives its resources back and will run again where it was.
    Kept,
    /// It was killed and requeued; `exhausted`: its job has used up its attempts.
    Killed {
        /// The job must fail.
        exhausted: bool,
    },
}

/// A way of taking resources back from running tasks, with the state it
/// keeps (queues of dumps, images) and what it does when the body reports.
pub trait Mechanism: std::fmt::Debug + Send + Sync {
    /// A copy of it with its state.
    fn clone_box(&self) -> Box<dyn Mechanism>;

    /// Its estimated cost of taking `task` now, if it orders victims by cost
    /// (the checkpoint paper §5.2.2: the cheapest to dump first).
    fn victim_cost(&self, _view: &View, _now: Micros, _task: TaskRef) -> Option<Micros> {
        None
    }

    /// Whether it takes from a victim in graceful steps (BIG-C's r⃗_GP) rather
    /// than the whole container, so that a planner sizes steps.
    fn shrinks(&self) -> bool {
        false
    }

    /// What taking a victim holding `held` frees (all of it, unless the
    /// mechanism keeps some: suspend in place keeps the memory).
    fn frees(&self, held: Resources) -> Resources {
        held
    }

    /// What preemptions under way will free on node `node` when they end.
    fn freeing(&self, _node: usize) -> Resources {
        Resources::ZERO
    }

    /// How long, by its estimates, the dumps and restores booked on node
    /// `node` keep its storage busy from `now`.
    fn io_queue(&self, _node: usize, _now: Micros) -> Micros {
        0
    }

    /// Takes back what `take` says from a running victim.
    fn preempt(&mut self, view: &mut View, now: Micros, take: Take, out: &mut Vec<Action>) -> Preempted;

    /// At a heartbeat: offers preempted tasks their nodes' free resources.
    fn offer(&mut self, _view: &mut View, _out: &mut Vec<Action>) {}

    /// The image task `task` restarts from, if it keeps one (a task it
    /// checkpointed): the scheduler then has it [`Mechanism::restore`] the
    /// task instead of launching it afresh.
    fn image(&self, _task: TaskRef) -> Option<Image> {
        None
    }

    /// Starts task `task` of `job` from its `image` (the head of its job's
    /// pending tasks); `first_fit` is the first node with room for it.
    #[allow(clippy::too_many_arguments)]
    fn restore(
        &mut self,
        _view: &mut View,
        _now: Micros,
        _job: usize,
        _task: u32,
        _image: Image,
        _first_fit: NodeId,
        _out: &mut Vec<Action>,
    ) {
        unreachable!("only checkpointing makes images")
    }

    /// The body wrote a task's dump.
    fn checkpointed(&mut self, view: &mut View, _now: Micros, task: TaskRef) -> Result<(), CoreError> {
        let state = view.checked_task(task)?.state;
        Err(CoreError::BadTask { task, what: format!("checkpointed while {state:?} and not dumping") })
    }

    /// The body reports a task running again after a resumption or a
    /// restore.
    fn resumed(&mut self, view: &mut View, now: Micros, task: TaskRef) -> Result<(), CoreError>;

    /// The body reclaimed `mem_mb` of a suspended or shrunk task's memory.
    fn memory_reclaimed(&mut self, view: &mut View, task: TaskRef, mem_mb: u64) -> Result<(), CoreError>;

    /// The body froze a shrunk task that started swapping.
    fn swapping(&mut self, view: &mut View, now: Micros, task: TaskRef) -> Result<(), CoreError>;

    /// A task stopped holding resources for good or was lost: drop what is
    /// booked for it.
    fn forget(&mut self, _view: &mut View, _task: TaskRef) {}

    /// A task finished, or its job failed: drop what it keeps for it. The
    /// view still shows the task as it was (among the preempted, if it was).
    fn finished(&mut self, _view: &View, _task: TaskRef) {}
}

impl Clone for Box<dyn Mechanism> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// A mechanism rule: by which of the operations every body carries out
/// ([`MechanismKind`]) each victim is taken — a mechanism written outside the
/// core, run by `pliant_plugins::by_rule`. A new operation on a node is not a rule: it is
/// a new kind in the core and an arm in every body (ARCHITECTURE.md, "Adding
/// a mechanism").
pub trait MechanismRule: std::fmt::Debug + Send + Sync {
    /// A copy of it with its state.
    fn clone_box(&self) -> Box<dyn MechanismRule>;

    /// The operation `victim`, which the planner takes now, is taken by:
    /// `Kill`; `Immediate` (suspended to the policy's footprint); `Graceful`
    /// (shrunk to the step the planner sized, if it sized one, else as
    /// `Immediate`); `Suspend` (frozen in place, memory kept); `Checkpoint`
    /// (dumped, where the policy's `rates` have a checkpoint tier, else as
    /// `Immediate`). Only what the victim's node can do (`View::node_can`).
    fn choose(&mut self, view: &View, now: Micros, victim: &Holding) -> MechanismKind;

    /// Whether a planner sizes graceful steps for it (BIG-C's r⃗_GP) rather
    /// than taking whole victims; by default it does not.
    fn shrinks(&self) -> bool {
        false
    }
}

impl Clone for Box<dyn MechanismRule> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}
