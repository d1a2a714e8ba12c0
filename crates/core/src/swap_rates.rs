//! A node's own swap rates, as its body measured them: a live body times
//! the reclaims and restores it sees on each node and gives the core the
//! figures ([`crate::Scheduler::set_swap_rates`]); a planner that prices
//! shrinks (`pliant`'s cost planner) uses them there instead of its
//! parameters' rates. Data given to the core like any observation: the core
//! reads no clock for them. The simulator sets none.

use crate::Micros;
use serde::{Deserialize, Serialize};

/// Time to move 1 GB of a node's memory each way, where it was measured
/// (`None`: the policy's rate).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SwapRates {
    /// Time to swap out 1 GB of a CPU-deprived container there.
    pub reclaim_per_gb: Option<Micros>,
    /// Time to read 1 GB back there on resume.
    pub restore_per_gb: Option<Micros>,
}

impl SwapRates {
    /// The reclaim and restore rates to price with: these where measured,
    /// `reclaim` and `restore` otherwise.
    pub fn or(self, reclaim: Micros, restore: Micros) -> (Micros, Micros) {
        (self.reclaim_per_gb.unwrap_or(reclaim), self.restore_per_gb.unwrap_or(restore))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_measured_rate_replaces_the_policy_s_and_an_unmeasured_one_keeps_it() {
        assert_eq!(SwapRates::default().or(3, 5), (3, 5));
        let reclaim_only = SwapRates { reclaim_per_gb: Some(9), restore_per_gb: None };
        assert_eq!(reclaim_only.or(3, 5), (9, 5));
        let both = SwapRates { reclaim_per_gb: Some(9), restore_per_gb: Some(11) };
        assert_eq!(both.or(3, 5), (9, 11));
    }
}
