//! The numerical study of SSR §IV-C (Fig. 10): how much copying a phase's
//! running tasks onto its reserved slots, once half of them have finished,
//! shortens the phase, for task durations drawn i.i.d. from a Pareto.

use crate::scenarios::pareto;
use pliant_plugins::ssr::stragglers::phase_time_with_copies;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// The mean reduction of phase completion time, 1 − E[T'] / E[T], over
/// `runs` phases of `n` tasks with Pareto shape `alpha` (the mean cancels out).
pub fn straggler_speedup(alpha: f64, n: usize, runs: usize, seed: u64) -> f64 {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (mut plain, mut copied) = (0.0, 0.0);
    for _ in 0..runs {
        let mut tasks: Vec<f64> = (0..n).map(|_| pareto(&mut rng, alpha, 1.0)).collect();
        tasks.sort_by(f64::total_cmp);
        let copies: Vec<f64> = (0..n).map(|_| pareto(&mut rng, alpha, 1.0)).collect();
        plain += tasks[n - 1];
        copied += phase_time_with_copies(&tasks, &copies);
    }
    1.0 - copied / plain
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_help_more_with_heavier_tails_and_more_tasks() {
        let heavy = straggler_speedup(1.2, 20, 2000, 1);
        let light = straggler_speedup(3.0, 20, 2000, 1);
        let wide = straggler_speedup(1.2, 200, 500, 1);
        assert!(heavy > light && light > 0.0, "{heavy} {light}");
        assert!(wide > heavy, "{wide} {heavy}");
        assert!(heavy < 1.0);
    }
}
