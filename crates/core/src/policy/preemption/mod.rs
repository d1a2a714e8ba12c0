//! The preemption planner: how much to take from over-provisioned queues
//! (BIG-C Algorithm 1) and from which containers (BIG-C Algorithm 2).

mod preempted_resources;
mod victim_selection;

pub use preempted_resources::{compute_dr, preempted_resources};
pub use victim_selection::{choose_graceful, choose_victims, Container, VictimJob};
