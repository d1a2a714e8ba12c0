//! The preemption planner: how much to take from over-provisioned queues
//! (BIG-C Algorithm 1), from which containers (BIG-C Algorithm 2) and what a
//! preempted container gets back (BIG-C §4.3); and the checkpoint paper's
//! cost estimates (its Algorithms 1 and 2).

mod checkpoint_cost;
mod preempted_resources;
mod resumption;
mod victim_selection;

pub use checkpoint_cost::{checkpoint_overhead, local_resume_overhead, remote_resume_overhead, worth_checkpointing};
pub use preempted_resources::{compute_dr, preempted_resources};
pub use resumption::resumption_grant;
pub use victim_selection::{choose_graceful, choose_victims, Container, VictimJob};
