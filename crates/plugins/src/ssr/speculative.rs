//! SSR Algorithm 1, HANDLETASKCOMPLETION: reserve or release the slot a
//! finished task frees.

/// What to do with the slot a finished task freed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotFate {
    /// Give it back to the cluster (lines 3 and 11).
    Release,
    /// Keep it for the job (lines 8, 13 and 15).
    Reserve,
    /// Keep it, and from now on also reserve `extra` more slots as other
    /// jobs free them (lines 15–17, pre-reservation).
    ReserveAndPreReserve {
        /// Slots to pre-reserve for the downstream phase.
        extra: u32,
    },
}

/// Algorithm 1 for a task that finished in a phase of `m` tasks, of which
/// `finished` (this one included) have finished; `n` is the downstream
/// phase's parallelism (`None`: final phase), `known` whether it is known
/// beforehand, `r` the pre-reservation threshold. Pre-reservation starts
/// once, at the first finish past the threshold (`already` tells if it has).
pub fn slot_fate(m: u32, finished: u32, n: Option<u32>, known: bool, r: f64, already: bool) -> SlotFate {
    let Some(n) = n else { return SlotFate::Release };
    if !known || m == n {
        return SlotFate::Reserve;
    }
    if m > n {
        return if finished <= m - n { SlotFate::Release } else { SlotFate::Reserve };
    }
    if !already && finished as f64 / m as f64 > r {
        SlotFate::ReserveAndPreReserve { extra: n - m }
    } else {
        SlotFate::Reserve
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn follows_the_three_cases_of_algorithm_1() {
        assert_eq!(slot_fate(4, 1, None, true, 0.5, false), SlotFate::Release);
        assert_eq!(slot_fate(4, 1, Some(4), true, 0.5, false), SlotFate::Reserve);
        assert_eq!(slot_fate(4, 1, Some(9), false, 0.5, false), SlotFate::Reserve);
        // m = 5 > n = 2: the first 3 finishers release, the last 2 reserve.
        let fates: Vec<_> = (1..=5).map(|f| slot_fate(5, f, Some(2), true, 0.5, false)).collect();
        let reserved = fates.iter().filter(|&&f| f == SlotFate::Reserve).count();
        assert_eq!(reserved, 2);
        assert_eq!(fates[2], SlotFate::Release);
        assert_eq!(fates[3], SlotFate::Reserve);
        // m = 4 < n = 10, R = 0.5: 2/4 is not past R, 3/4 is.
        assert_eq!(slot_fate(4, 2, Some(10), true, 0.5, false), SlotFate::Reserve);
        assert_eq!(slot_fate(4, 3, Some(10), true, 0.5, false), SlotFate::ReserveAndPreReserve { extra: 6 });
        assert_eq!(slot_fate(4, 4, Some(10), true, 0.5, true), SlotFate::Reserve);
        // R = 0: the first finish already pre-reserves.
        assert_eq!(slot_fate(4, 1, Some(10), true, 0.0, false), SlotFate::ReserveAndPreReserve { extra: 6 });
    }
}
