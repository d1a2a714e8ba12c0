//! Shrinking a workload: a window of submission times, a deterministic sample
//! of jobs, and scaling to a smaller cluster.
//!
//! * **Sample** (`--sample S`): a job is kept when [`draw`]`(seed, job name)`,
//!   a SplitMix64 hash of the seed and the trace's job ID mapped to [0, 1),
//!   falls below the fraction. The choice depends only on the seed and the
//!   job, not on the order or the split of the input files; one seed gives one
//!   sample, and a smaller fraction keeps a subset of a larger one's jobs.
//! * **Scale** (`--scale X`, 0 < X ≤ 1) of a trace recorded on M machines:
//!   the cluster becomes N = max(1, round(X·M)) nodes ([`scaled_nodes`]) and
//!   the jobs are sampled as above with fraction N / M (times S when both are
//!   given), so each node sees the arrival rate and load per node it had in
//!   the trace. Jobs are kept or dropped whole, with their original times.
//! * **Window** (`--window A..B`): jobs submitted in [A, B) are kept and
//!   their times shifted so that A becomes 0.

use crate::record::Window;
use pliant_core::Micros;

/// The job filters of a load, ready to apply.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shrink {
    /// Jobs submitted in this window are kept, with times shifted so it starts at 0.
    pub window: Option<Window>,
    /// Fraction of jobs kept (1 keeps all).
    pub fraction: f64,
    /// Seed of the sample.
    pub seed: u64,
}

/// SplitMix64's finaliser: a well-mixed 64-bit value.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A uniform value in [0, 1) from a seed and a name.
pub fn draw(seed: u64, name: &str) -> f64 {
    let h = name.bytes().fold(mix(seed), |h, b| mix(h ^ u64::from(b)));
    (h >> 11) as f64 / (1u64 << 53) as f64
}

/// The node count of a cluster of `machines` scaled by `factor`:
/// max(1, round(factor × machines)); `None` unless 0 < factor ≤ 1.
pub fn scaled_nodes(factor: f64, machines: u32) -> Option<u32> {
    (factor > 0.0 && factor <= 1.0).then(|| ((factor * f64::from(machines)).round() as u32).max(1))
}

/// Why a job was left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Kept.
    Keep,
    /// Submitted outside the window.
    Window,
    /// Not drawn in the sample.
    Sample,
}

impl Shrink {
    /// Whether a job with this name and submission time stays.
    pub fn verdict(&self, name: &str, submit: Micros) -> Verdict {
        if self.window.is_some_and(|w| !w.contains(submit)) {
            Verdict::Window
        } else if self.fraction < 1.0 && draw(self.seed, name) >= self.fraction {
            Verdict::Sample
        } else {
            Verdict::Keep
        }
    }

    /// The submission time in the shrunk workload (window start = 0).
    pub fn rebase(&self, submit: Micros) -> Micros {
        submit.saturating_sub(self.window.map_or(0, |w| w.start))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sample_is_deterministic_and_close_to_the_fraction() {
        let s = Shrink { window: None, fraction: 0.25, seed: 7 };
        let kept = (0..10_000).filter(|i| s.verdict(&i.to_string(), 0) == Verdict::Keep).count();
        let again = (0..10_000).filter(|i| s.verdict(&i.to_string(), 0) == Verdict::Keep).count();
        assert_eq!(kept, again);
        // Binomial(10,000, 0.25): mean 2,500, sd ≈ 43; ±5 sd.
        assert!((2_285..=2_715).contains(&kept), "{kept}");
        let other = Shrink { seed: 8, ..s };
        let differs = (0..100).any(|i| s.verdict(&i.to_string(), 0) != other.verdict(&i.to_string(), 0));
        assert!(differs);
    }

    #[test]
    fn scaling_rounds_the_node_count_and_nests_samples() {
        // 0.01 × 12,583 = 125.83 → 126; 0.00001 × 12,583 = 0.13 → at least 1.
        assert_eq!(scaled_nodes(0.01, 12_583), Some(126));
        assert_eq!(scaled_nodes(0.000_01, 12_583), Some(1));
        assert_eq!(scaled_nodes(1.0, 4), Some(4));
        assert_eq!(scaled_nodes(0.0, 4), None);
        assert_eq!(scaled_nodes(1.5, 4), None);
        assert_eq!(scaled_nodes(f64::NAN, 4), None);
        // A smaller fraction keeps a subset of a larger one's jobs (same seed).
        let small = Shrink { window: None, fraction: 0.1, seed: 5 };
        let large = Shrink { fraction: 0.3, ..small };
        for i in 0..2_000 {
            let name = i.to_string();
            if small.verdict(&name, 0) == Verdict::Keep {
                assert_eq!(large.verdict(&name, 0), Verdict::Keep, "{name}");
            }
        }
    }

    #[test]
    fn the_window_is_half_open_and_rebased() {
        let s = Shrink { window: Some(Window { start: 10, end: 20 }), fraction: 1.0, seed: 0 };
        assert_eq!(s.verdict("a", 9), Verdict::Window);
        assert_eq!(s.verdict("a", 10), Verdict::Keep);
        assert_eq!(s.verdict("a", 20), Verdict::Window);
        assert_eq!(s.rebase(15), 5);
    }
}
