//! Poisson arrivals with a piecewise-constant rate.

use pliant_core::time::from_secs_f64;
use pliant_core::Micros;
use rand::Rng;
use rand_distr::{Distribution, Exp};

/// A stretch of time `[start_s, end_s)` with a constant arrival rate.
#[derive(Debug, Clone, Copy)]
pub struct Segment {
    /// Start, in seconds.
    pub start_s: f64,
    /// End, in seconds.
    pub end_s: f64,
    /// Arrivals per second.
    pub rate: f64,
}

/// Arrival times of a Poisson process whose rate is constant on each segment.
pub fn poisson_arrivals(segments: &[Segment], rng: &mut impl Rng) -> Vec<Micros> {
    let mut out = Vec::new();
    for s in segments {
        if s.rate <= 0.0 {
            continue;
        }
        let gap = Exp::new(s.rate).expect("positive rate");
        let mut t = s.start_s + gap.sample(rng);
        while t < s.end_s {
            out.push(from_secs_f64(t));
            t += gap.sample(rng);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn counts_follow_the_rates() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let segs =
            [Segment { start_s: 0.0, end_s: 1000.0, rate: 1.0 }, Segment { start_s: 1000.0, end_s: 2000.0, rate: 5.0 }];
        let a = poisson_arrivals(&segs, &mut rng);
        let first = a.iter().filter(|&&t| t < 1_000_000_000).count();
        let second = a.len() - first;
        // Expected 1000 and 5000; Poisson sd ≈ 32 and 71.
        assert!((900..1100).contains(&first), "{first}");
        assert!((4700..5300).contains(&second), "{second}");
        assert!(a.windows(2).all(|w| w[0] <= w[1]));
    }
}
