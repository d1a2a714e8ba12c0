//! pliant's own cost-based policy: the cost planner (`least_cost.rs`: the
//! take sized by the need per resource, each victim given back by its
//! cheapest mechanism) and the mechanism that takes each victim by the
//! mechanism chosen for it (`cheapest.rs`), by the planner or by a
//! `MechanismRule` from outside.

mod cheapest;
mod least_cost;

pub(crate) use cheapest::Cheapest;
pub(crate) use least_cost::Cost;
