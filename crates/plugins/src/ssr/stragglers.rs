//! Straggler mitigation with reserved slots (SSR §IV-C): once a phase's
//! running tasks are no more than its reserved idle slots, each running
//! task gets a copy on a reserved slot; the first of the two to finish wins.

/// Whether a phase with `running` tasks still running and `idle_reserved`
/// reserved idle slots should copy them now (§IV-C, Fig. 9).
pub fn should_copy(running: u32, idle_reserved: u32) -> bool {
    running > 0 && running <= idle_reserved
}

/// The phase completion time of the numerical study of §IV-C: `sorted` are
/// the N task durations in increasing order, `copies[k]` the duration of a
/// copy of the k-th; copies start when the ⌈N/2⌉-th task finishes.
/// T' = t(⌈N/2⌉) + max over k > ⌈N/2⌉ of min(t(k) − t(⌈N/2⌉), t'(k)).
pub fn phase_time_with_copies(sorted: &[f64], copies: &[f64]) -> f64 {
    let half = sorted.len().div_ceil(2);
    let start = sorted[half - 1];
    let tail = (half..sorted.len()).map(|k| (sorted[k] - start).min(copies[k])).fold(0.0, f64::max);
    start + tail
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_start_at_half_and_the_first_finisher_wins() {
        assert!(should_copy(2, 2));
        assert!(!should_copy(3, 2));
        assert!(!should_copy(0, 4));
        // N = 4: copies start at t(2) = 2; task 3 (5) vs copy 1 → 2 + 1 = 3;
        // task 4 (20) vs copy 4 → 2 + 4 = 6. T' = 2 + max(1, 4) = 6.
        let t = phase_time_with_copies(&[1.0, 2.0, 5.0, 20.0], &[9.0, 9.0, 1.0, 4.0]);
        assert_eq!(t, 6.0);
    }
}
