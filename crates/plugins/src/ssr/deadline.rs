//! The reservation deadline of SSR §IV-B: fit a Pareto distribution to a
//! phase's observed task durations and reserve for as long as all N tasks
//! finish with probability P (Eq. 2); Eq. 3–4 give the utilisation bound.

/// A Pareto distribution of task durations (Eq. 1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pareto {
    /// Scale t_m: the shortest duration.
    pub t_m: f64,
    /// Shape α (> 1 for a finite mean).
    pub alpha: f64,
}

impl Pareto {
    /// Maximum-likelihood fit to observed durations: t_m is the shortest
    /// (§IV-B: "the duration of the task that finishes first"), α = k / Σ ln(t_i / t_m).
    /// `None` with fewer than two durations or no spread among them.
    pub fn fit(durations: &[f64]) -> Option<Pareto> {
        Pareto::fit_censored(durations, &[])
    }

    /// As [`Pareto::fit`], counting tasks still running as right-censored
    /// observations (their duration is at least their run time so far):
    /// α = k / (Σ_finished ln(t_i / t_m) + Σ_running ln(max(r_j, t_m) / t_m)).
    /// Fitting early finishers alone would see only the short end of the
    /// distribution and take the tail for lighter than it is.
    pub fn fit_censored(finished: &[f64], running: &[f64]) -> Option<Pareto> {
        let t_m = finished.iter().copied().fold(f64::INFINITY, f64::min);
        if finished.len() < 2 || t_m <= 0.0 {
            return None;
        }
        let log = |t: f64| (t.max(t_m) / t_m).ln();
        let sum: f64 = finished.iter().chain(running).map(|&t| log(t)).sum();
        (sum > 0.0).then(|| Pareto { t_m, alpha: finished.len() as f64 / sum })
    }

    /// Eq. 2 solved for the deadline: D = t_m (1 − P^(1/N))^(−1/α), with α
    /// no lower than 1 (§IV-B: "for a meaningful shape parameter, we have
    /// α > 1"): a phase whose few fast durations sit among many slow ones
    /// fits α < 1, an infinite-mean tail, and would reserve for many times
    /// longer than any of its tasks has run.
    pub fn deadline(&self, isolation: f64, tasks: u32) -> f64 {
        let tail = 1.0 - isolation.powf(1.0 / tasks.max(1) as f64);
        self.t_m * tail.powf(-1.0 / self.alpha.max(1.0))
    }
}

/// Eq. 4: the lower bound on expected utilisation of reserved slots for
/// isolation `p`, `n` tasks per phase and shape `alpha`.
pub fn utilisation_bound(p: f64, n: u32, alpha: f64) -> f64 {
    let tail = 1.0 - p.powf(1.0 / n as f64);
    alpha / (alpha - 1.0) * tail.powf(1.0 / alpha) - tail / (alpha - 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_recovers_t_m_and_alpha_by_hand() {
        // ln(2) + ln(4) = 3 ln 2 over 3 samples: α = 3 / (3 ln 2) = 1 / ln 2.
        let p = Pareto::fit(&[10.0, 20.0, 40.0]).unwrap();
        assert_eq!(p.t_m, 10.0);
        assert!((p.alpha - 1.0 / 2f64.ln()).abs() < 1e-12);
        assert!(Pareto::fit(&[5.0]).is_none());
        assert!(Pareto::fit(&[5.0, 5.0]).is_none());
        // One task still running at 80: α = 3 / (3 ln 2 + ln 8) = 1 / (2 ln 2).
        let c = Pareto::fit_censored(&[10.0, 20.0, 40.0], &[80.0]).unwrap();
        assert!((c.alpha - 1.0 / (2.0 * 2f64.ln())).abs() < 1e-12);
    }

    #[test]
    fn deadline_satisfies_equation_2() {
        let p = Pareto { t_m: 2.0, alpha: 1.6 };
        let d = p.deadline(0.9, 20);
        // P = (1 − (t_m / D)^α)^N.
        let back = (1.0 - (p.t_m / d).powf(p.alpha)).powi(20);
        assert!((back - 0.9).abs() < 1e-9, "{back}");
        // N = 1, α = 1, P = 0.5: D = t_m / 0.5.
        assert!((Pareto { t_m: 3.0, alpha: 1.0 }.deadline(0.5, 1) - 6.0).abs() < 1e-12);
        // A fitted α below 1 counts as 1: the same 6.0, not 3 / 0.5^2 = 12.
        assert!((Pareto { t_m: 3.0, alpha: 0.5 }.deadline(0.5, 1) - 6.0).abs() < 1e-12);
    }

    #[test]
    fn utilisation_bound_falls_with_isolation() {
        // P → 0: tail → 1, bound → α/(α−1) − 1/(α−1) = 1.
        assert!((utilisation_bound(1e-300, 20, 2.0) - 1.0).abs() < 1e-9);
        let lo = utilisation_bound(0.5, 20, 1.6);
        let hi = utilisation_bound(0.99, 20, 1.6);
        assert!(hi < lo && hi > 0.0, "{lo} {hi}");
    }
}
