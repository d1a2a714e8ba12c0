//! Memory elasticity in live mode (YARN-ME §3.2's job metadata): what a
//! submission says about its tasks' elasticity, checked, and turned into the
//! core's view. Under the `elastic` preset the core may start such a task
//! with less memory than its request; the agent makes that its cgroup's
//! memory limit and tells the task in `PLIANT_MEM_MB`. Other presets give
//! every task its request.

use pliant_core::model::{Elasticity, ElasticityProfile};
use pliant_core::Micros;
use serde::{Deserialize, Serialize};

/// Longest run-time estimate a submission may give, in seconds (a year).
const MAX_ESTIMATE_S: f64 = 365.0 * 24.0 * 3600.0;

/// The `elastic` object of a submission: its tasks may run with less memory
/// than their request (the ideal), `penalty` times slower.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ElasticRequest {
    /// Estimated slowdown of an under-sized run (YARN-ME's max penalty, ≥ 1).
    pub penalty: f64,
    /// Least memory a task may get, MB (default: the policy's floor, 10 % of the request).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_mem_mb: Option<u64>,
}

impl ElasticRequest {
    /// The core's view: a max-penalty profile and the owner's floor.
    pub fn elasticity(&self) -> Elasticity {
        Elasticity { profile: ElasticityProfile::max_penalty(self.penalty), min_mem_mb: self.min_mem_mb }
    }
}

/// Checks a submission's run-time estimate (seconds) and elasticity against
/// its tasks' memory request `mem_mb`; returns the estimate in µs. An elastic
/// job needs the estimate: YARN-ME sizes a task from its ideal run time.
pub fn check(estimate_s: Option<f64>, elastic: Option<&ElasticRequest>, mem_mb: u64) -> Result<Option<Micros>, String> {
    let estimate = match estimate_s {
        Some(s) if !(s > 0.0 && s <= MAX_ESTIMATE_S) => {
            return Err(format!("`estimate_s` must be a positive number of seconds up to {MAX_ESTIMATE_S}, got {s}"))
        }
        Some(s) => Some((s * 1e6).round() as Micros),
        None => None,
    };
    if let Some(e) = elastic {
        if e.min_mem_mb == Some(0) {
            return Err("the minimum memory (`min_mem_mb`) must be positive".into());
        }
        e.elasticity().check(mem_mb)?;
        if estimate.is_none() {
            return Err("an elastic job needs `estimate_s` (--estimate), its tasks' run time with their full \
                        memory: YARN-ME decides a task's size from it"
                .into());
        }
    }
    Ok(estimate)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn elastic(penalty: f64, min_mem_mb: Option<u64>) -> ElasticRequest {
        ElasticRequest { penalty, min_mem_mb }
    }

    #[test]
    fn a_sound_request_passes_and_maps_to_a_step_profile() {
        let e = elastic(1.5, Some(1024));
        assert_eq!(check(Some(2.5), Some(&e), 4096), Ok(Some(2_500_000)));
        assert_eq!(check(None, None, 4096), Ok(None));
        assert_eq!(e.elasticity().profile.runtime(10, 4096, 1024), 15);
        assert_eq!(e.elasticity().min_mem_mb, Some(1024));
    }

    #[test]
    fn bad_requests_say_why() {
        let err = |estimate: Option<f64>, e: ElasticRequest| check(estimate, Some(&e), 4096).unwrap_err();
        assert!(err(Some(10.0), elastic(0.9, None)).contains("penalty 0.9 is below 1"));
        assert!(err(Some(10.0), elastic(f64::NAN, None)).contains("below 1"));
        assert!(err(Some(10.0), elastic(1.5, Some(5000)))
            .contains("minimum memory 5000 MB is above the ideal memory 4096 MB"));
        assert!(err(Some(10.0), elastic(1.5, Some(0))).contains("must be positive"));
        assert!(err(None, elastic(1.5, None)).contains("needs `estimate_s`"));
        assert!(check(Some(-1.0), None, 4096).unwrap_err().contains("positive number of seconds"));
        assert!(check(Some(f64::INFINITY), None, 4096).is_err());
    }
}
