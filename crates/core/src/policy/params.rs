//! The tunable numbers of the presets, settable by name (`--set KEY=VALUE`).

use crate::model::StorageModel;
use crate::time::{from_secs_f64, Micros, SECOND};
use crate::Resources;
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
    /// Launches of a coupled (Spark) task after which a kill fails its job (DESIGN.md: 4,
    /// YARN's default); preempted MapReduce attempts count as killed, not failed.
    pub max_attempts: u32,
    /// Scheduling opportunities a preempted container is offered on its node
    /// before it really resumes (BIG-C §4.3 and §5.3: D = 3).
    pub delayed_resumption: u32,
    /// Graceful-preemption step in basic units of ⟨1 CPU, 2 GB⟩ (BIG-C §5.3: 2).
    pub gp_units: u32,
    /// A gracefully preempted container takes back part of what it gave up
    /// when its node has room for part (`policy/preemption/resumption.rs`;
    /// the paper is silent, so this is our reading); false: only all at once.
    pub gradual_resumption: bool,
    /// Memory a suspended container keeps, in MB (BIG-C §3.2: 64; the authors' code used 128).
    pub footprint_mb: u64,
    /// How long a task that prefers its upstream phase's nodes waits for one
    /// before taking any slot, in seconds (SSR §VI-B: 3 s, Spark's `spark.locality.wait`).
    pub locality_wait_s: f64,
    /// Target isolation probability P of `ssr-deadline` (SSR §IV-B, Eq. 2;
    /// the paper sweeps it in Fig. 14; 0.9 is its middle setting).
    pub isolation: f64,
    /// Pre-reservation threshold R (SSR §III-B; Hadoop's reduce slow start, 0.05).
    pub prereserve: f64,
    /// How long `timeout-reserve` keeps a freed slot, in seconds (SSR §III-A:
    /// Spark's dynamic allocation, `executorIdleTimeout` = 60 s).
    pub reservation_timeout_s: f64,
    /// Least memory of an elastic task as a fraction of its ideal (YARN-ME §6.1: 10 %).
    pub elastic_min_fraction: f64,
    /// Memory allocation granularity of elastic sizing, MB (YARN-ME §6.1: 100 MB).
    pub elastic_granularity_mb: u64,
    /// Per-node disk bandwidth elastic tasks' spills may use, MB/s (YARN-ME §3.3;
    /// §5.1's nodes have one SATA HDD, ~120 MB/s sequential).
    pub elastic_disk_mb_s: f64,
    /// Node heartbeat period in seconds: the timeline generator's period
    /// (YARN-ME §3.2; YARN's default NodeManager heartbeat, 1 s).
    pub heartbeat_s: f64,
    /// Memory of the ApplicationMaster container each job of a YARN preset
    /// runs, MB (0: none); unset: the workload's (DSS and the YARN-ME traces:
    /// 1,000 MB).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub am_mb: Option<u64>,
    /// Cores of that ApplicationMaster container (DSS: 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub am_cores: Option<f64>,
    /// Whether `yarn` and `elastic` reserve a node for the job whose task did
    /// not fit there (DSS's `-r`); unset: both do.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_reservations: Option<bool>,
    /// Whether other jobs may use a reserved node with tasks that end before
    /// the reserved task would fit (YARN-ME §3.3, DSS's `-g`); unset: `yarn`
    /// does not (DSS's REGULAR `-r`), `elastic` does unless the workload runs
    /// DSS's ApplicationMasters (DSS's PEEK `-r`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backfill: Option<bool>,
    /// Checkpoint storage bandwidths, as the checkpointing presets estimate with them.
    #[serde(flatten)]
    pub storage: StorageModel,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            reserve_fraction: 0.6,
            short_share: 0.95,
            monitor_interval_s: 3.0,
            max_attempts: 4,
            delayed_resumption: 3,
            gp_units: 2,
            gradual_resumption: true,
            footprint_mb: 64,
            locality_wait_s: 3.0,
            isolation: 0.9,
            prereserve: 0.05,
            reservation_timeout_s: 60.0,
            elastic_min_fraction: 0.1,
            elastic_granularity_mb: 100,
            elastic_disk_mb_s: 120.0,
            heartbeat_s: 1.0,
            am_mb: None,
            am_cores: None,
            node_reservations: None,
            backfill: None,
            storage: StorageModel::default(),
        }
    }
}

/// Each settable key with its meaning, for `pliant policies`.
pub const PARAM_KEYS: &[(&str, &str)] = &[
    ("reserve_fraction", "fraction of nodes kept for short jobs by `reserve` (0..1, default 0.6)"),
    ("short_share", "guaranteed share of the short queue in preempting presets (0..1, default 0.95)"),
    ("monitor_interval_s", "resource monitor period in seconds (default 3)"),
    ("max_attempts", "launches of a coupled (Spark) task after which a kill fails its job (default 4)"),
    ("delayed_resumption", "offers of its node a preempted container waits for before resuming, D (default 3)"),
    ("gp_units", "graceful-preemption step in basic units of <1 CPU, 2 GB> (default 2)"),
    (
        "gradual_resumption",
        "1: a gracefully preempted container takes back part of what it gave up when its node has room for part; 0: all at once (default 1)",
    ),
    ("footprint_mb", "memory a suspended container keeps, MB (default 64)"),
    (
        "locality_wait_s",
        "seconds a task of a `local` phase waits for its upstream nodes before taking any slot (default 3, Spark)",
    ),
    ("isolation", "target isolation probability P of ssr-deadline, strictly between 0 and 1 (default 0.9, SSR Eq. 2)"),
    ("prereserve", "pre-reservation threshold R of the ssr presets, 0..1 (default 0.05, SSR §III-B)"),
    ("reservation_timeout_s", "seconds timeout-reserve keeps a freed slot (default 60, Spark's executorIdleTimeout)"),
    ("elastic_min_fraction", "least memory of an elastic task, fraction of its ideal (0..1, default 0.1)"),
    ("elastic_granularity_mb", "memory step of elastic sizing, MB (default 100)"),
    ("elastic_disk_mb_s", "per-node disk bandwidth elastic tasks' spills may use, MB/s (default 120)"),
    ("heartbeat_s", "node heartbeat period, seconds: the timeline generator reruns each one (default 1)"),
    (
        "am_mb",
        "MB of the ApplicationMaster container each job of yarn, elastic and meganode runs (0: none; default: the workload's, 1000 for yarn-me* and DSS traces, else none)",
    ),
    ("am_cores", "cores of that ApplicationMaster container (default 1)"),
    ("node_reservations", "1: yarn and elastic reserve a node for the job whose task did not fit (DSS -r); 0: they do not (default 1)"),
    ("backfill", "1: other jobs may use a reserved node with tasks ending before the reserved one fits (DSS -g); 0: not (default: yarn 0; elastic 1, 0 where the workload runs DSS's AMs)"),
];

/// The basic unit graceful preemption steps in (BIG-C §5.3: ⟨1 CPU, 2 GB⟩).
pub const GP_BASIC_UNIT: Resources = Resources::cores_gb(1, 2);

/// The CPU a suspended container keeps (BIG-C §3.2: 1 % of a core).
pub const FOOTPRINT_CPU_MILLI: u64 = 10;

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
    /// A storage key with a bad value.
    #[error("{0}")]
    Storage(String),
}

impl Params {
    /// Sets one parameter from its textual form.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ParamError> {
        let bad = |reason| ParamError::BadValue { key: key.into(), value: value.into(), reason };
        let whole = |min: u64| match value.parse::<u64>() {
            Ok(n) if n >= min && n <= u32::MAX as u64 => Ok(n),
            _ if min == 0 => Err(bad("expected a whole number")),
            _ => Err(bad("expected a whole number of at least 1")),
        };
        let fraction = || match value.parse::<f64>() {
            Ok(x) if (0.0..=1.0).contains(&x) => Ok(x),
            _ => Err(bad("expected a number between 0 and 1")),
        };
        let secs = || match value.parse::<f64>() {
            Ok(x) if (0.0..1e9).contains(&x) => Ok(x),
            _ => Err(bad("expected a non-negative number of seconds")),
        };
        match key {
            "locality_wait_s" => self.locality_wait_s = secs()?,
            "reservation_timeout_s" => self.reservation_timeout_s = secs()?,
            "prereserve" => self.prereserve = fraction()?,
            "isolation" => {
                self.isolation = match value.parse::<f64>() {
                    Ok(x) if x > 0.0 && x < 1.0 => x,
                    _ => return Err(bad("expected a probability strictly between 0 and 1")),
                }
            }
            "reserve_fraction" => self.reserve_fraction = fraction()?,
            "short_share" => self.short_share = fraction()?,
            "monitor_interval_s" => {
                self.monitor_interval_s = match value.parse::<f64>() {
                    Ok(x) if x > 0.0 && x.is_finite() => x,
                    _ => return Err(bad("expected a positive number of seconds")),
                }
            }
            "max_attempts" => self.max_attempts = whole(1)? as u32,
            "delayed_resumption" => self.delayed_resumption = whole(0)? as u32,
            "gp_units" => self.gp_units = whole(1)? as u32,
            "gradual_resumption" | "node_reservations" | "backfill" => {
                let on = match value {
                    "1" | "true" => true,
                    "0" | "false" => false,
                    _ => return Err(bad("expected 1 or 0")),
                };
                match key {
                    "gradual_resumption" => self.gradual_resumption = on,
                    "node_reservations" => self.node_reservations = Some(on),
                    _ => self.backfill = Some(on),
                }
            }
            "am_mb" => self.am_mb = Some(whole(0)?),
            "am_cores" => {
                self.am_cores = match value.parse::<f64>() {
                    Ok(x) if (0.0..=1e6).contains(&x) => Some(x),
                    _ => return Err(bad("expected a non-negative number of cores")),
                }
            }
            "footprint_mb" => self.footprint_mb = whole(1)?,
            "elastic_min_fraction" => self.elastic_min_fraction = fraction()?,
            "elastic_granularity_mb" => self.elastic_granularity_mb = whole(1)?,
            "elastic_disk_mb_s" | "heartbeat_s" => {
                let x = match value.parse::<f64>() {
                    Ok(x) if x > 0.0 && x.is_finite() => x,
                    _ => return Err(bad("expected a positive number")),
                };
                if key == "heartbeat_s" {
                    self.heartbeat_s = x;
                } else {
                    self.elastic_disk_mb_s = x;
                }
            }
            _ => {
                return match self.storage.set(key, value) {
                    Some(result) => result.map_err(ParamError::Storage),
                    None => Err(ParamError::UnknownKey(key.into())),
                }
            }
        }
        Ok(())
    }

    /// The graceful-preemption step r⃗_GP.
    pub fn gp_step(&self) -> Resources {
        GP_BASIC_UNIT.times(self.gp_units as u64)
    }

    /// What a suspended container keeps.
    pub fn footprint(&self) -> Resources {
        Resources::new(FOOTPRINT_CPU_MILLI, self.footprint_mb)
    }

    /// The locality wait in microseconds.
    pub fn locality_wait(&self) -> Micros {
        from_secs_f64(self.locality_wait_s)
    }

    /// The ApplicationMaster container set here: `None` leaves it to the
    /// workload, `Some(ZERO)` means none.
    pub fn am(&self) -> Option<Resources> {
        let cpu = (self.am_cores.unwrap_or(1.0) * 1000.0).round() as u64;
        match self.am_mb {
            None => None,
            Some(0) => Some(Resources::ZERO),
            Some(mb) => Some(Resources::new(cpu, mb)),
        }
    }

    /// YARN-ME's settings.
    pub fn elastic(&self) -> super::ElasticSpec {
        super::ElasticSpec {
            min_fraction: self.elastic_min_fraction,
            granularity_mb: self.elastic_granularity_mb,
            disk_budget_mb_s: self.elastic_disk_mb_s,
            heartbeat: from_secs_f64(self.heartbeat_s).clamp(1, 3600 * SECOND),
        }
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
        assert!(matches!(p.set("isolation", "1"), Err(ParamError::BadValue { .. })));
        assert!(matches!(p.set("isolation", "0"), Err(ParamError::BadValue { .. })));
        p.set("isolation", "0.99").unwrap();
        assert_eq!(p.isolation, 0.99);
        assert!(matches!(p.set("prereserve", "-0.1"), Err(ParamError::BadValue { .. })));
        assert!(matches!(p.set("prereserve", "1.01"), Err(ParamError::BadValue { .. })));
        p.set("prereserve", "1").unwrap();
        assert_eq!(p.locality_wait(), 3 * SECOND);
    }
}
