//! Slot reservation (SSR paper §III–§IV): when a task of a DAG job finishes,
//! its slot may be kept for the job's downstream phase. A reserved slot
//! carries its job's priority: tasks of lower or equal priority may not use
//! it, higher ones may take it (Algorithm 1, TRYALLOCATETASK). `slots.rs` is
//! the reserve/permit step and keeps the reservations; the other files decide.

pub mod deadline;
mod slots;
pub mod speculative;
pub mod stragglers;

use crate::policy::steps::{NoReservation, Reservation};
use crate::policy::Policy;
use crate::Micros;

/// The reserve/permit step of `policy`: its slot book if it reserves.
pub(crate) fn build(policy: &Policy) -> Box<dyn Reservation> {
    match policy.reservation {
        Some(spec) => Box::new(slots::SlotBook::new(spec)),
        None => Box::new(NoReservation),
    }
}

/// Which reservation rule a policy follows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ReservationSpec {
    /// Speculative slot reservation (SSR §III-B, Algorithm 1).
    Speculative {
        /// Pre-reservation threshold R: finished fraction of a phase after
        /// which the extra slots a wider next phase needs are reserved.
        prereserve: f64,
        /// Target isolation probability P: reservations of a phase expire
        /// at the deadline of Eq. 2 after it started (§IV-B); none if unset.
        isolation: Option<f64>,
        /// Run copies of a phase's last running tasks on its idle reserved
        /// slots (§IV-C).
        stragglers: bool,
    },
    /// Timeout-based reservation (SSR §III-A, Spark's dynamic allocation):
    /// every slot a task of an unfinished job frees is kept for the job for
    /// `timeout`, whether a downstream phase needs it or not.
    Timeout {
        /// How long a freed slot is kept.
        timeout: Micros,
    },
}
