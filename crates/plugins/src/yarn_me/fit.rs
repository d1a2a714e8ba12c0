//! YARN-ME Algorithm 1, lines 7–10: the elastic fit. A task that does not fit
//! regularly gets the memory size, among those allowed that fit on the node,
//! with the lowest modelled run time (the smallest such size on ties), and is
//! placed only if it then ends before its job's estimated completion (line 9,
//! asked of the timeline generator by the node pass).

use pliant_core::model::{Elasticity, ElasticityProfile};
use pliant_core::policy::ElasticSpec;
use pliant_core::Micros;

/// An elastic allocation: the memory given and the run time it is expected to take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ElasticFit {
    /// Memory allocated, MB.
    pub mem_mb: u64,
    /// Estimated run time with it.
    pub runtime: Micros,
    /// Estimated disk bandwidth its spills use, MB/s.
    pub disk_mb_s_milli: u64,
}

/// The sizes allowed for a task of ideal memory `ideal_mb`: from the floor
/// (10 % of ideal, or the owner's minimum if higher) up to below the ideal,
/// in whole granules.
fn allowed(spec: &ElasticSpec, e: &Elasticity, ideal_mb: u64) -> (u64, u64) {
    let g = spec.granularity_mb.max(1);
    let floor = ((ideal_mb as f64 * spec.min_fraction).ceil() as u64).max(e.min_mem_mb.unwrap_or(0)).max(1);
    (floor.div_ceil(g) * g, ideal_mb.saturating_sub(1) / g * g)
}

/// The least memory any allowed size takes: a task cannot start
/// elastically where less is free.
pub fn least_size_mb(spec: &ElasticSpec, e: &Elasticity, ideal_mb: u64) -> u64 {
    allowed(spec, e, ideal_mb).0
}

/// Line 7: the best elastic size for a task (ideal `ideal_mb`, estimated
/// `ideal` µs) in `free_mb` of free memory, or `None` if no allowed size fits.
pub fn elastic_fit(
    spec: &ElasticSpec,
    e: &Elasticity,
    ideal: Micros,
    ideal_mb: u64,
    free_mb: u64,
) -> Option<ElasticFit> {
    let (lo, hi) = allowed(spec, e, ideal_mb);
    let hi = hi.min(free_mb / spec.granularity_mb.max(1) * spec.granularity_mb.max(1));
    if lo > hi {
        return None;
    }
    // A step costs the same at every under-sized allocation: the least wins.
    let hi = if matches!(e.profile, ElasticityProfile::Step { .. }) { lo } else { hi };
    let mut best: Option<ElasticFit> = None;
    let mut m = lo;
    while m <= hi {
        let runtime = e.profile.runtime(ideal, ideal_mb, m);
        if best.is_none_or(|b| runtime < b.runtime) {
            let secs = (runtime as f64 / 1e6).max(1e-6);
            let disk = e.profile.spilled_mb(ideal_mb, m) / secs;
            best = Some(ElasticFit { mem_mb: m, runtime, disk_mb_s_milli: (disk * 1000.0).round() as u64 });
        }
        m += spec.granularity_mb.max(1);
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use pliant_core::SECOND;

    fn spec() -> ElasticSpec {
        ElasticSpec { min_fraction: 0.1, granularity_mb: 100, disk_budget_mb_s: 120.0, heartbeat: SECOND }
    }

    #[test]
    fn step_profile_takes_the_floor() {
        let e = Elasticity { profile: ElasticityProfile::max_penalty(1.5), min_mem_mb: None };
        // Ideal 4,000 MB: sizes 400..3,900; all run 1.5×; the smallest wins.
        let fit = elastic_fit(&spec(), &e, 10 * SECOND, 4000, 2500).unwrap();
        assert_eq!((fit.mem_mb, fit.runtime), (400, 15 * SECOND));
        assert!(elastic_fit(&spec(), &e, 10 * SECOND, 4000, 399).is_none());
        let owner = Elasticity { min_mem_mb: Some(1000), ..e };
        assert_eq!(elastic_fit(&spec(), &owner, 10 * SECOND, 4000, 2500).unwrap().mem_mb, 1000);
    }

    #[test]
    fn spill_profile_takes_the_cheapest_size() {
        // Input 7,000 MB; diskRate: 1 s per 100 MB spilled.
        let e = Elasticity {
            profile: ElasticityProfile::Spill { input_mb: 7000.0, us_per_mb: 10_000.0 },
            min_mem_mb: None,
        };
        // Spill = ⌊7,000 / B⌋ × B with B = 0.7 m: least just above B = 3,500,
        // i.e. m = 5,100 (B = 3,570, one buffer spilled, +35.7 s); m = 5,000
        // (B = 3,500) spills two buffers, 7,000 MB.
        let fit = elastic_fit(&spec(), &e, 100 * SECOND, 10_000, 7_000).unwrap();
        assert_eq!(fit.mem_mb, 5100);
        assert_eq!(fit.runtime, 135_700_000);
        assert_eq!(fit.disk_mb_s_milli, (3570.0 / 135.7 * 1000.0f64).round() as u64);
    }
}
