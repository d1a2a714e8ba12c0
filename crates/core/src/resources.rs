//! Resource vectors ⟨CPU, memory⟩ and the dominant-resource-fairness (DRF)
//! helpers the capacity scheduler and BIG-C's Algorithm 1 are written in.
//!
//! CPU is in millicores and memory in MB, both integers, so that sums of
//! allocations never drift.

use serde::{Deserialize, Serialize};
use std::ops::{Add, AddAssign, Sub, SubAssign};

/// A ⟨CPU, memory⟩ vector: an allocation, a request, a capacity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct Resources {
    /// CPU in millicores (1000 = one core).
    pub cpu_milli: u64,
    /// Memory in MB.
    pub mem_mb: u64,
}

/// Which resource of a vector is dominant relative to some total.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dominant {
    /// CPU's share is the larger (ties go to CPU).
    Cpu,
    /// Memory's share is the larger.
    Memory,
}

impl Resources {
    /// The empty vector.
    pub const ZERO: Resources = Resources { cpu_milli: 0, mem_mb: 0 };

    /// Builds a vector from millicores and MB.
    pub const fn new(cpu_milli: u64, mem_mb: u64) -> Self {
        Resources { cpu_milli, mem_mb }
    }

    /// Builds a vector from whole cores and GB (1 GB = 1024 MB).
    pub const fn cores_gb(cores: u64, gb: u64) -> Self {
        Resources { cpu_milli: cores * 1000, mem_mb: gb * 1024 }
    }

    /// True when both components are zero.
    pub fn is_zero(&self) -> bool {
        self.cpu_milli == 0 && self.mem_mb == 0
    }

    /// True when some component is positive (the paper's p⃗ > (0, 0)).
    pub fn any_positive(&self) -> bool {
        !self.is_zero()
    }

    /// Component-wise `self ≤ other`: `self` fits inside `other`.
    pub fn fits_in(&self, other: &Resources) -> bool {
        self.cpu_milli <= other.cpu_milli && self.mem_mb <= other.mem_mb
    }

    /// Component-wise strict `self < other` (BIG-C Alg. 1 line 5 compares vectors this way).
    pub fn strictly_less(&self, other: &Resources) -> bool {
        self.cpu_milli < other.cpu_milli && self.mem_mb < other.mem_mb
    }

    /// Component-wise subtraction that stops at zero.
    pub fn saturating_sub(&self, other: &Resources) -> Resources {
        Resources {
            cpu_milli: self.cpu_milli.saturating_sub(other.cpu_milli),
            mem_mb: self.mem_mb.saturating_sub(other.mem_mb),
        }
    }

    /// Component-wise minimum.
    pub fn min(&self, other: &Resources) -> Resources {
        Resources { cpu_milli: self.cpu_milli.min(other.cpu_milli), mem_mb: self.mem_mb.min(other.mem_mb) }
    }

    /// Component-wise maximum.
    pub fn max(&self, other: &Resources) -> Resources {
        Resources { cpu_milli: self.cpu_milli.max(other.cpu_milli), mem_mb: self.mem_mb.max(other.mem_mb) }
    }

    /// Scales both components by `factor` (rounded down), e.g. a queue's share of the cluster.
    pub fn scale(&self, factor: f64) -> Resources {
        Resources {
            cpu_milli: (self.cpu_milli as f64 * factor).floor() as u64,
            mem_mb: (self.mem_mb as f64 * factor).floor() as u64,
        }
    }

    /// Multiplies both components by an integer count.
    pub fn times(&self, n: u64) -> Resources {
        Resources { cpu_milli: self.cpu_milli * n, mem_mb: self.mem_mb * n }
    }

    /// How many copies of this vector fit in `room` side by side (`u64::MAX`
    /// for the zero vector, which fits any number of times).
    pub fn copies_in(&self, room: &Resources) -> u64 {
        let copies = |need: u64, have: u64| have.checked_div(need).unwrap_or(u64::MAX);
        copies(self.cpu_milli, room.cpu_milli).min(copies(self.mem_mb, room.mem_mb))
    }

    /// This vector's share of `total` in each resource (0 where the total is 0).
    pub fn shares(&self, total: &Resources) -> (f64, f64) {
        let share = |x: u64, t: u64| if t == 0 { 0.0 } else { x as f64 / t as f64 };
        (share(self.cpu_milli, total.cpu_milli), share(self.mem_mb, total.mem_mb))
    }

    /// DRF's dominant share: the larger of this vector's shares of `total`.
    pub fn dominant_share(&self, total: &Resources) -> f64 {
        let (c, m) = self.shares(total);
        c.max(m)
    }

    /// Which resource dominates this vector relative to `total`.
    pub fn dominant(&self, total: &Resources) -> Dominant {
        let (c, m) = self.shares(total);
        if c >= m {
            Dominant::Cpu
        } else {
            Dominant::Memory
        }
    }
}

impl Add for Resources {
    type Output = Resources;
    fn add(self, o: Resources) -> Resources {
        Resources { cpu_milli: self.cpu_milli + o.cpu_milli, mem_mb: self.mem_mb + o.mem_mb }
    }
}

impl AddAssign for Resources {
    fn add_assign(&mut self, o: Resources) {
        *self = *self + o;
    }
}

/// Exact subtraction; panics on underflow in debug builds, which would be an
/// accounting bug. Use [`Resources::saturating_sub`] where underflow is expected.
impl Sub for Resources {
    type Output = Resources;
    fn sub(self, o: Resources) -> Resources {
        Resources { cpu_milli: self.cpu_milli - o.cpu_milli, mem_mb: self.mem_mb - o.mem_mb }
    }
}

impl SubAssign for Resources {
    fn sub_assign(&mut self, o: Resources) {
        *self = *self - o;
    }
}

impl std::fmt::Display for Resources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "⟨{} CPU, {} MB⟩", self.cpu_milli as f64 / 1000.0, self.mem_mb)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_in_counts_by_the_scarcer_resource() {
        let room = Resources::cores_gb(10, 8);
        assert_eq!(Resources::cores_gb(3, 2).copies_in(&room), 3);
        assert_eq!(Resources::cores_gb(1, 3).copies_in(&room), 2);
        assert_eq!(Resources::cores_gb(11, 1).copies_in(&room), 0);
        assert_eq!(Resources::new(0, 1024).copies_in(&room), 8);
        assert_eq!(Resources::ZERO.copies_in(&room), u64::MAX);
    }

    #[test]
    fn dominant_share_picks_the_larger_share() {
        let total = Resources::cores_gb(100, 100);
        let r = Resources::cores_gb(20, 10);
        assert_eq!(r.dominant_share(&total), 0.2);
        assert_eq!(r.dominant(&total), Dominant::Cpu);
        assert_eq!(Resources::cores_gb(1, 50).dominant(&total), Dominant::Memory);
    }

    #[test]
    fn comparisons_are_component_wise() {
        let a = Resources::new(1000, 2048);
        let b = Resources::new(2000, 1024);
        assert!(!a.fits_in(&b));
        assert!(!b.fits_in(&a));
        assert!(a.fits_in(&a));
        assert!(!a.strictly_less(&a));
        assert_eq!(a.saturating_sub(&b), Resources::new(0, 1024));
        assert_eq!(a.min(&b), Resources::new(1000, 1024));
        assert_eq!(a.max(&b), Resources::new(2000, 2048));
    }
}
