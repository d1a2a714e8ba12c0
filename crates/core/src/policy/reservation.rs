//! Slot reservation (SSR paper §III–§IV) as a policy names it: when a task
//! of a DAG job finishes, its slot may be kept for the job's downstream
//! phase. The reserve/permit step that keeps the reservations is a plugin
//! (`pliant_plugins::ssr`).

use crate::Micros;

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
