//! SSR (speculative slot reservation): when a task of a DAG job finishes,
//! its slot may be kept for the job's downstream phase. A reserved slot
//! carries its job's priority: tasks of lower or equal priority may not use
//! it, higher ones may take it (§III–§IV, Algorithm 1, TRYALLOCATETASK).
//! `slots.rs` is the reserve/permit step and keeps the reservations;
//! `speculative.rs`, `deadline.rs` and `stragglers.rs` decide; `locality.rs`
//! is delay scheduling (§II-B).

pub mod deadline;
mod locality;
mod slots;
pub mod speculative;
pub mod stragglers;

use pliant_core::policy::steps::{NoReservation, Preference, Reservation};
use pliant_core::policy::Policy;

/// The reserve/permit step of `policy`: its slot book if it reserves.
pub(crate) fn reservation(policy: &Policy) -> Box<dyn Reservation> {
    match policy.reservation {
        Some(spec) => Box::new(slots::SlotBook::new(spec)),
        None => Box::new(NoReservation),
    }
}

/// The placement preference of `policy`'s queue-by-queue pass: delay scheduling.
pub(crate) fn preference(policy: &Policy) -> Box<dyn Preference> {
    locality::build(policy)
}
