//! BIG-C (immediate and graceful preemption): the resource monitor's
//! capacity planner (`capacity.rs`: queues under their guarantee take from
//! queues over it), the take sized by Algorithm 1 (`compute_dr.rs`), the
//! victims chosen by Algorithm 2 (`victims.rs`), and container preemption
//! with delayed and gradual resumption (`container.rs`, §3–§4).

mod capacity;
pub mod compute_dr;
mod container;
pub mod victims;

pub(crate) use capacity::{for_each_take, Capacity};
pub(crate) use container::{
    container_reports, memory_reclaimed, offer_resumptions, task_resumed, task_swapping, ContainerPreemption, Offers,
};
