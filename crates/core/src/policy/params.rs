//! The tunable numbers of the presets, settable by name (`--set KEY=VALUE`).

use crate::time::{from_secs_f64, Micros, SECOND};
use serde::Serialize;

/// Parameters shared by the presets; defaults trace to the papers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Params {
    /// Fraction of the cluster reserved for short jobs by `reserve` (BIG-C §5.1: 60 %).
    pub reserve_fraction: f64,
    /// Guaranteed share of the `short` queue in `kill` (BIG-C §5.1: 95 %).
    pub short_share: f64,
    /// Resource monitor period in seconds (BIG-C §4.2: 3 s).
    pub monitor_interval_s: f64,
    /// Launches of a task after which a kill fails its job (DESIGN.md: 4, YARN's default).
    pub max_attempts: u32,
}

impl Default for Params {
    fn default() -> Self {
        Params { reserve_fraction: 0.6, short_share: 0.95, monitor_interval_s: 3.0, max_attempts: 4 }
    }
}

/// Each settable key with its meaning, for `pliant policies`.
pub const PARAM_KEYS: &[(&str, &str)] = &[
    ("reserve_fraction", "fraction of nodes kept for short jobs by `reserve` (0..1, default 0.6)"),
    ("short_share", "guaranteed share of the short queue in preempting presets (0..1, default 0.95)"),
    ("monitor_interval_s", "resource monitor period in seconds (default 3)"),
    ("max_attempts", "launches of a task after which a kill fails its job (default 4)"),
];

/// A rejected `KEY=VALUE`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ParamError {
    /// The key is not one of [`PARAM_KEYS`].
    #[error("unknown parameter `{0}` (see `pliant policies` for the list)")]
    UnknownKey(String),
    /// The value does not parse or is out of range.
    #[error("bad value `{value}` for `{key}`: {reason}")]
    BadValue {
        /// The key.
        key: String,
        /// The value given.
        value: String,
        /// Why it was refused.
        reason: &'static str,
    },
}

impl Params {
    /// Sets one parameter from its textual form.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ParamError> {
        let bad = |reason| ParamError::BadValue { key: key.into(), value: value.into(), reason };
        let fraction = || match value.parse::<f64>() {
            Ok(x) if (0.0..=1.0).contains(&x) => Ok(x),
            _ => Err(bad("expected a number between 0 and 1")),
        };
        match key {
            "reserve_fraction" => self.reserve_fraction = fraction()?,
            "short_share" => self.short_share = fraction()?,
            "monitor_interval_s" => {
                self.monitor_interval_s = match value.parse::<f64>() {
                    Ok(x) if x > 0.0 && x.is_finite() => x,
                    _ => return Err(bad("expected a positive number of seconds")),
                }
            }
            "max_attempts" => {
                self.max_attempts = match value.parse::<u32>() {
                    Ok(n) if n >= 1 => n,
                    _ => return Err(bad("expected a whole number of at least 1")),
                }
            }
            _ => return Err(ParamError::UnknownKey(key.into())),
        }
        Ok(())
    }

    /// The monitor period in microseconds (at least 1 µs).
    pub fn monitor_interval(&self) -> Micros {
        from_secs_f64(self.monitor_interval_s).clamp(1, 3600 * SECOND)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_checks_keys_and_ranges() {
        let mut p = Params::default();
        p.set("reserve_fraction", "0.5").unwrap();
        assert_eq!(p.reserve_fraction, 0.5);
        assert!(matches!(p.set("reserve_fraction", "1.5"), Err(ParamError::BadValue { .. })));
        assert!(matches!(p.set("max_attempts", "0"), Err(ParamError::BadValue { .. })));
        assert_eq!(p.set("nope", "1"), Err(ParamError::UnknownKey("nope".into())));
        assert_eq!(p.monitor_interval(), 3 * SECOND);
    }
}
