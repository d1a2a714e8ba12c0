//! Shrinking a workload: a window of submission times, a deterministic sample
//! of jobs, and scaling to a smaller cluster.
//!
//! Sampling keeps a job when a hash of (seed, job name) falls below the
//! fraction, so the choice is the same whatever the order or the split of the
//! input, and one seed gives one sample. Scaling to `n` nodes from a trace
//! recorded on `m` machines keeps a fraction `n / m` of the jobs, so the load
//! per node stays what it was.

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
    fn the_window_is_half_open_and_rebased() {
        let s = Shrink { window: Some(Window { start: 10, end: 20 }), fraction: 1.0, seed: 0 };
        assert_eq!(s.verdict("a", 9), Verdict::Window);
        assert_eq!(s.verdict("a", 10), Verdict::Keep);
        assert_eq!(s.verdict("a", 20), Verdict::Window);
        assert_eq!(s.rebase(15), 5);
    }
}
