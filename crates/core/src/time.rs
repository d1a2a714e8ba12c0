//! Time in pliant is an integer count of microseconds. Floating-point time
//! would make event order depend on rounding; integers keep every run exact.

/// A point in time or a duration, in microseconds.
pub type Micros = u64;

/// Microseconds in one second.
pub const SECOND: Micros = 1_000_000;

/// Converts seconds (possibly fractional) to microseconds, rounding to nearest.
/// Negative or non-finite inputs give 0.
pub fn from_secs_f64(secs: f64) -> Micros {
    if secs.is_finite() && secs > 0.0 {
        (secs * SECOND as f64).round() as Micros
    } else {
        0
    }
}

/// Converts microseconds to seconds, for reporting only.
pub fn to_secs_f64(t: Micros) -> f64 {
    t as f64 / SECOND as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_round_trip() {
        assert_eq!(from_secs_f64(1.5), 1_500_000);
        assert_eq!(from_secs_f64(-3.0), 0);
        assert_eq!(from_secs_f64(f64::NAN), 0);
        assert_eq!(to_secs_f64(2_500_000), 2.5);
    }
}
