//! How much to take back and from whom — the *preemption planner* step's
//! trait. A planner reads a [`View`] and the policy's mechanism (for its cost
//! estimates) and returns its takes in order; the scheduler hands them to the
//! mechanism. The built-in planners are plugins (`pliant-plugins`).

use crate::books::View;
use crate::policy::cost::Choice;
use crate::policy::mechanism::{Mechanism, Take};
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
