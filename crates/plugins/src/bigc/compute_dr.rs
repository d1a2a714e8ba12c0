//! BIG-C Algorithm 1 (§4.3): the resources to preempt from the long queue.

use pliant_core::Resources;

/// Algorithm 1, lines 5–10: given the starved queue's request `r_s` and the
/// over-provisioned queue's excess `a` (= r⃗_l − f⃗_l, line 4), the amount to
/// preempt. YARN's capacity scheduler takes all of `a` when `r_s` does not fit
/// under it; BIG-C (`use_compute_dr`) takes only what `r_s` needs, via COMPUTEDR.
pub fn preempted_resources(r_s: Resources, a: Resources, use_compute_dr: bool) -> Resources {
    if r_s.strictly_less(&a) {
        r_s
    } else if use_compute_dr {
        compute_dr(r_s, a)
    } else {
        a
    }
}

/// COMPUTEDR (Algorithm 1, lines 11–19, as the text of §4.3 explains it): the
/// dominant resource of `r_s` against `a` is taken in full, and the other one
/// in proportion to `r_s`'s own ratio, capped at `a`.
pub fn compute_dr(r_s: Resources, a: Resources) -> Resources {
    // Dominant: the larger of r_s.cpu / a.cpu and r_s.mem / a.mem, cross-multiplied.
    let cpu_side = r_s.cpu_milli as u128 * a.mem_mb as u128;
    let mem_side = r_s.mem_mb as u128 * a.cpu_milli as u128;
    if cpu_side >= mem_side {
        let mem = if r_s.cpu_milli == 0 {
            0
        } else {
            (a.cpu_milli as u128 * r_s.mem_mb as u128 / r_s.cpu_milli as u128) as u64
        };
        Resources::new(a.cpu_milli, mem.min(a.mem_mb))
    } else {
        let cpu =
            if r_s.mem_mb == 0 { 0 } else { (a.mem_mb as u128 * r_s.cpu_milli as u128 / r_s.mem_mb as u128) as u64 };
        Resources::new(cpu.min(a.cpu_milli), a.mem_mb)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The worked example of BIG-C §4.3: a = ⟨10 CPU, 15 GB⟩, r_s = ⟨20 CPU, 10 GB⟩.
    // CPU dominates (20/10 > 10/15). The capacity scheduler preempts all of a;
    // COMPUTEDR preempts ⟨10 CPU, 10 × 10/20 GB⟩ = ⟨10 CPU, 5 GB⟩.
    #[test]
    fn paper_example() {
        let a = Resources::cores_gb(10, 15);
        let r_s = Resources::cores_gb(20, 10);
        assert_eq!(preempted_resources(r_s, a, true), Resources::cores_gb(10, 5));
        assert_eq!(preempted_resources(r_s, a, false), Resources::cores_gb(10, 15));
    }

    // A request strictly under the excess is taken as it is (line 6).
    #[test]
    fn small_request_is_taken_whole() {
        let a = Resources::cores_gb(10, 15);
        let r_s = Resources::cores_gb(4, 4);
        assert_eq!(preempted_resources(r_s, a, true), r_s);
        assert_eq!(preempted_resources(r_s, a, false), r_s);
    }

    // Memory-dominant: r_s = ⟨2 CPU, 30 GB⟩ against a = ⟨10 CPU, 15 GB⟩: 30/15 > 2/10,
    // so all 15 GB and 15 × 2/30 = 1 CPU.
    #[test]
    fn memory_dominant_request() {
        let a = Resources::cores_gb(10, 15);
        let r_s = Resources::cores_gb(2, 30);
        assert_eq!(compute_dr(r_s, a), Resources::cores_gb(1, 15));
    }

    // Nothing over-provisioned in the dominant resource means nothing to take.
    #[test]
    fn no_excess_cpu_takes_nothing() {
        let a = Resources::cores_gb(0, 15);
        let r_s = Resources::cores_gb(20, 10);
        assert_eq!(compute_dr(r_s, a), Resources::ZERO);
    }
}
