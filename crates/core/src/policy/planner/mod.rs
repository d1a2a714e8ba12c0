//! How much to take back and from whom — the *preemption planner* step. One
//! file per algorithm: `capacity.rs` (BIG-C's resource monitor: queues over
//! their guarantee give back to starved ones, sized by `compute_dr.rs`,
//! Algorithm 1, victims by `victims.rs`, Algorithm 2) and `levels.rs` (the
//! checkpoint paper's priority levels, §3.1) and `least_cost.rs` (pliant's own: the
//! take sized by the need, each victim by its cheapest mechanism). A planner reads a [`View`] and
//! the policy's mechanism (for its cost estimates) and returns its takes in
//! order; the scheduler hands them to the mechanism.

mod capacity;
mod compute_dr;
mod least_cost;
mod levels;
mod victims;

pub use compute_dr::{compute_dr, preempted_resources};
pub use victims::{choose_graceful, choose_victims, Container, VictimJob};

use crate::books::View;
use crate::policy::cost::Choice;
use crate::policy::mechanism::{Mechanism, Take};
use crate::policy::{PlannerSpec, Policy};
use crate::Micros;

/// A preemption planner.
pub trait Planner: std::fmt::Debug + Send + Sync {
    /// A copy of it with its state.
    fn clone_box(&self) -> Box<dyn Planner>;

    /// What to take back now, in the order it is to be taken.
    fn plan(&mut self, view: &View, mechanism: &dyn Mechanism, now: Micros) -> Vec<Take>;

    /// The choices it made since last asked, with their estimates (planners
    /// that choose per victim).
    fn take_choices(&mut self) -> Vec<Choice> {
        Vec::new()
    }
}

impl Clone for Box<dyn Planner> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// The planner `policy` preempts with, if it preempts.
pub(crate) fn build(policy: &Policy) -> Option<Box<dyn Planner>> {
    let spec = policy.preemption.as_ref()?;
    Some(match spec.planner {
        PlannerSpec::Capacity => Box::new(capacity::Capacity {
            preempts: policy.queues.iter().map(|q| q.preempts).collect(),
            compute_dr: spec.compute_dr,
            gp_step: spec.gp_step,
            footprint: spec.footprint,
        }),
        PlannerSpec::PriorityLevels => Box::new(levels::Levels {
            priority_order: policy.order == crate::policy::JobOrder::Priority,
            buffers: Default::default(),
            floors: Default::default(),
        }),
        PlannerSpec::Cost => Box::new(least_cost::Cost {
            preempts: policy.queues.iter().map(|q| q.preempts).collect(),
            rates: spec.rates,
            max_attempts: policy.max_attempts,
            choices: Vec::new(),
        }),
        PlannerSpec::Custom(custom) => custom.0.build(policy),
    })
}
