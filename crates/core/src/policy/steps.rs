//! The steps a policy is composed of, as the traits the `Scheduler` calls
//! them by. Each plugin keeps its own state; the scheduler keeps only the
//! shared books ([`View`]) and hands every plugin the observations it needs
//! through these methods.
//!
//! - [`Planner`]: how much to take back and from whom.
//! - [`Mechanism`]: how a victim gives its resources back, and what it does
//!   when the body reports on it.
//! - [`PlacementPass`]: a pass that places waiting tasks itself, in place of
//!   the scheduler's queue-by-queue pass (YARN's fair scheduler).
//! - [`Reservation`]: the reserve/permit step — slots kept for a job when
//!   its tasks finish (SSR).
//! - [`Preference`]: where the queue-by-queue pass would rather put a job's
//!   next task before its first fit, and whether the job waits for it
//!   (delay scheduling).
//!
//! The built-in plugins of every step are in `pliant-plugins`, which uses
//! only this crate's public API, as a plugin from outside does.
//!
//! From outside the core, a policy names a planner through a
//! [`PlannerPlugin`] (`PlannerSpec::Custom`) and a mechanism through a
//! [`MechanismPlugin`] (`MechanismSpec::Custom`). A plugin reads the books
//! through the [`View`] but books only through the core's own steps, so a
//! mechanism from outside is a [`MechanismRule`]: it chooses per victim
//! ([`Holding`]) among the operations every body carries out
//! (`MechanismKind`), and `pliant_plugins::by_rule` carries them out. The types of the
//! traits' signatures are public: these, `Action`, `CoreError`,
//! `MechanismKind`, `Micros` and `Resources` at the crate's root, and
//! `model::{JobRequest, NodeId, TaskRef}`.

pub use super::cost::Choice;
pub use super::mechanism::{Image, Mechanism, MechanismRule, Preempted, Take};
pub use super::planner::Planner;
pub use crate::books::{Holding, View, Waiting};

use crate::action::Action;
use crate::model::{JobRequest, NodeId, TaskRef};
use crate::policy::Policy;
use crate::{Micros, Resources};

/// The steps of one policy, built fresh for one scheduler by the
/// [`StepBuilder`] the policy carries.
pub struct Steps {
    /// Whom the resource monitor takes from, if the policy preempts.
    pub planner: Option<Box<dyn Planner>>,
    /// How victims give resources back (kill when the policy does not preempt).
    pub mechanism: Box<dyn Mechanism>,
    /// The reserve/permit step.
    pub reservation: Box<dyn Reservation>,
    /// The placement preference of the queue-by-queue pass.
    pub preference: Box<dyn Preference>,
    /// A placement pass of the policy's own, if it has one.
    pub placement_pass: Option<Box<dyn PlacementPass>>,
}

/// Builds the steps of a policy for each scheduler that runs it: the
/// registry's plugins, which the policy it built carries
/// ([`Policy::plugins`](crate::policy::Policy::plugins)), so that the
/// scheduler names no plugin.
pub trait StepBuilder: Sync {
    /// Its name, for a policy's debug output and comparison.
    fn name(&self) -> &'static str;

    /// The steps of `policy`, with fresh state, for a cluster of `nodes` nodes.
    fn steps(&self, policy: &Policy, nodes: usize) -> Steps;
}

/// Builds a [`Planner`] written outside the core for each scheduler that
/// runs a policy naming it (`PlannerSpec::Custom`): a `static` of the
/// plugin's crate.
pub trait PlannerPlugin: Sync {
    /// Its name, unique among the planners a run compares.
    fn name(&self) -> &'static str;

    /// A planner, with fresh state, for a scheduler running `policy`.
    fn build(&self, policy: &Policy) -> Box<dyn Planner>;
}

/// Builds the [`Mechanism`] of each scheduler that runs a policy naming it
/// (`MechanismSpec::Custom`), with fresh state: a `static` of the plugin's
/// crate. A mechanism from outside the core chooses among the operations
/// the core and every body carry out — a [`MechanismRule`] run by
/// `pliant_plugins::by_rule`; a new operation on a node is added inside the core.
pub trait MechanismPlugin: Sync {
    /// Its name, unique among the mechanisms a run compares.
    fn name(&self) -> &'static str;

    /// A mechanism, with fresh state, for a scheduler running `policy` on a
    /// cluster of `nodes` nodes.
    fn build(&self, policy: &Policy, nodes: usize) -> Box<dyn Mechanism>;
}

/// Starts task `task` of job `job` on a node with a size: the scheduler's
/// launch, which a [`PlacementPass`] calls for each task it places.
pub type Launch<'a> = dyn FnMut(&mut View, usize, u32, NodeId, Resources) + 'a;

/// A pass that places waiting tasks itself, in place of the scheduler's
/// queue-by-queue first-fit pass, with the state it keeps between passes.
pub trait PlacementPass: std::fmt::Debug + Send {
    /// A copy of it with its state.
    fn clone_box(&self) -> Box<dyn PlacementPass>;

    /// Places what it will of the waiting tasks, each through `launch`.
    fn allocate(&mut self, view: &mut View, now: Micros, launch: &mut Launch);

    /// Job `req` was submitted (it is in the books already): what the pass
    /// reads of its request beyond the books, it keeps.
    fn job_submitted(&mut self, _req: &JobRequest) {}

    /// A job ended (finished or failed), before it leaves the books.
    fn job_ended(&mut self, _view: &mut View, _job: usize) {}

    /// A task stopped holding resources (it finished, was killed or lost, or
    /// its job failed).
    fn task_released(&mut self, _view: &mut View, _task: TaskRef) {}

    /// The resource monitor ran (a heartbeat).
    fn monitored(&mut self, _view: &mut View) {}
}

impl Clone for Box<dyn PlacementPass> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// The reserve/permit step: resources kept for a job beyond its tasks'
/// allocations, which its own tasks take first and a task of higher
/// priority may take from it. Every method defaults to "nothing reserved".
pub trait Reservation: std::fmt::Debug + Send + Sync {
    /// A copy of it with its state.
    fn clone_box(&self) -> Box<dyn Reservation>;

    /// Before an allocation pass: what lapsed goes back, what is to be
    /// reserved ahead is taken; may append actions (copies).
    fn before_pass(&mut self, _view: &mut View, _now: Micros, _out: &mut Vec<Action>) {}

    /// Task `task` finished on `node` after running `ran`, having just freed
    /// `res`; `phase_done`: its phase, whose last task it was.
    #[allow(clippy::too_many_arguments)]
    fn task_finished(
        &mut self,
        _view: &mut View,
        _now: Micros,
        _task: TaskRef,
        _node: NodeId,
        _res: Resources,
        _ran: Micros,
        _phase_done: Option<u32>,
    ) {
    }

    /// Job `job` launched a task or ended: what it no longer needs goes back.
    fn release_spent(&mut self, _view: &mut View, _job: usize) {}

    /// Whether a job of `priority` could take something reserved.
    fn usable_by(&self, _priority: u8) -> bool {
        false
    }

    /// Takes a slot `job` reserved with room for `req` on a node `prefer`
    /// accepts; returns its node.
    fn take_own(
        &mut self,
        _view: &mut View,
        _job: usize,
        _req: Resources,
        _prefer: &dyn Fn(NodeId) -> bool,
    ) -> Option<NodeId> {
        None
    }

    /// The permit: takes a slot a lower-priority job reserved with room for
    /// `req`, for a task of `job` that found no free room; returns its node.
    fn take_lower(&mut self, _view: &mut View, _job: usize, _req: Resources) -> Option<NodeId> {
        None
    }

    /// What is reserved and idle now.
    fn idle(&self) -> Resources {
        Resources::ZERO
    }
}

impl Clone for Box<dyn Reservation> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// Where a job's next task goes in this pass, as a [`Preference`] picks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    /// This node: a slot the reservation step handed over, or a node the
    /// task prefers with room for it.
    Take(NodeId),
    /// Nowhere yet: its job sits out this pass, without holding back others.
    Wait,
    /// Any node with room: the pass's own first fit.
    Any,
}

/// The placement-preference step of the queue-by-queue pass: before its
/// first fit, where a job's next task would rather go (a slot its job
/// reserved, which it takes through the [`Reservation`] step; a node it
/// prefers) and whether it waits for one. It keeps its own per-job data,
/// fed by the methods below.
pub trait Preference: std::fmt::Debug + Send + Sync {
    /// A copy of it with its state.
    fn clone_box(&self) -> Box<dyn Preference>;

    /// Picks where task `task` of job `job`, asking `req`, goes in this
    /// pass; may take a slot from `reservation` and ask for a wake-up
    /// (`View::wake_at`).
    fn pick(
        &mut self,
        view: &mut View,
        reservation: &mut dyn Reservation,
        now: Micros,
        job: usize,
        task: u32,
        req: Resources,
    ) -> Pick;

    /// Task `task`, of phase `phase`, finished on `node`.
    fn task_finished(&mut self, _view: &View, _task: TaskRef, _phase: u32, _node: NodeId) {}

    /// Job `job` ended (finished or failed).
    fn job_ended(&mut self, _job: usize) {}
}

impl Clone for Box<dyn Preference> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// A policy that reserves nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoReservation;

impl Reservation for NoReservation {
    fn clone_box(&self) -> Box<dyn Reservation> {
        Box::new(*self)
    }
}
