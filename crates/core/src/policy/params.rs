//! The tunable numbers of the presets, declared once (`parameter.rs`),
//! settable by name (`--set KEY=VALUE`).

use crate::declare_params;
use crate::model::StorageModel;
use crate::parameter::{any, fraction, if_set, non_negative, positive, probability, whole, whole_positive, ParamError};
use crate::policy::cost::CostParams;
use crate::time::{from_secs_f64, Micros, SECOND};
use crate::Resources;
use serde::Serialize;

declare_params! {
    /// Parameters shared by the presets; every default traces to a paper or a measurement.
    #[derive(Debug, Clone, PartialEq, Serialize)]
    pub struct Params {
        /// fraction of nodes kept for short jobs by `reserve` (0..1; BIG-C §5.1: 60 %)
        reserve_fraction: f64 = 0.6, fraction;
        /// guaranteed share of the short queue in preempting presets (0..1; BIG-C §5.1: 95 %)
        short_share: f64 = 0.95, fraction;
        /// resource monitor period in seconds (BIG-C §4.2)
        monitor_interval_s: f64 = 3.0, positive;
        /// launches of a coupled (Spark) task after which a kill fails its job (YARN's default); preempted MapReduce attempts count as killed, not failed; the simulator applies it under kill_model=tasks only
        max_attempts: u32 = 4, whole_positive;
        /// offers of its node a preempted container waits for before resuming, D (BIG-C §4.3, §5.3)
        delayed_resumption: u32 = 3, whole;
        /// graceful-preemption step r_GP in basic units of ⟨1 CPU, 2 GB⟩ (BIG-C §5.3)
        gp_units: u32 = 2, whole_positive;
        /// 1: a gracefully preempted container takes back part of what it gave up when its node has room for part (our reading, the paper is silent); 0: all at once
        gradual_resumption: bool = true, any;
        /// memory a suspended container keeps, MB (BIG-C §3.2; the authors' code used 128)
        footprint_mb: u64 = 64, whole_positive;
        /// seconds a task of a `local` phase waits for its upstream nodes before taking any slot (SSR §VI-B, Spark's `spark.locality.wait`)
        locality_wait_s: f64 = 3.0, non_negative;
        /// target isolation probability P of `ssr-deadline`, strictly between 0 and 1 (SSR Eq. 2; Fig. 14's middle setting)
        isolation: f64 = 0.9, probability;
        /// pre-reservation threshold R of the `ssr` presets, 0..1 (SSR §III-B; Hadoop's reduce slow start)
        prereserve: f64 = 0.05, fraction;
        /// seconds `timeout-reserve` keeps a freed slot (SSR §III-A: Spark's `executorIdleTimeout`)
        reservation_timeout_s: f64 = 60.0, non_negative;
        /// least memory of an elastic task, fraction of its ideal (0..1; YARN-ME §6.1)
        elastic_min_fraction: f64 = 0.1, fraction;
        /// memory step of elastic sizing, MB (YARN-ME §6.1)
        elastic_granularity_mb: u64 = 100, whole_positive;
        /// per-node disk bandwidth elastic tasks' spills may use, MB/s (YARN-ME §3.3; §5.1's nodes have one SATA HDD)
        elastic_disk_mb_s: f64 = 120.0, positive;
        /// node heartbeat period, seconds: the timeline generator reruns at each (YARN-ME §3.2; YARN's default), and nodes take containers at each under containers_per_heartbeat
        heartbeat_s: f64 = 1.0, positive;
    }
    nested {
        /// Checkpoint storage bandwidths, as the checkpointing presets estimate with them.
        storage: StorageModel;
        /// YARN's ApplicationMaster and DSS's `-r`/`-g` switches (unset: the workload's or the preset's).
        yarn: YarnParams;
        /// The rates of `pliant`'s cost model.
        cost: CostParams;
    }
}

declare_params! {
    /// YARN's ApplicationMaster container and DSS's reservation switches; each
    /// is unset unless given, and only what is given shows in the output.
    #[derive(Debug, Clone, PartialEq)]
    pub struct YarnParams {
        /// MB of the ApplicationMaster container each job runs under yarn, elastic and meganode: placed before its tasks, held until its last task ends (YARN, DSS); 0: none
        am_mb: Option<u64> = None, |v| if_set(v, whole), shown "the workload's: 1000 for yarn-me* and SLS/DSS traces, else 0";
        /// cores of that ApplicationMaster container
        am_cores: Option<f64> = None, |v| if_set(v, non_negative), shown "1";
        /// 1: yarn and elastic reserve a node for the job whose task did not fit there (DSS -r); 0: not
        node_reservations: Option<bool> = None, any, shown "1";
        /// 1: other jobs may use a reserved node with tasks ending before the reserved task fits (YARN-ME §3.3, DSS -g); 0: not
        backfill: Option<bool> = None, any, shown "yarn 0; elastic 1, or 0 where the workload runs DSS's AMs";
        /// containers yarn and elastic give a node per node heartbeat (heartbeat_s; YARN's NodeManager heartbeat, DSS: one), placing only on heartbeats (meganode, DSS's SRTF: as many as fit; yarn and elastic nodes go quiet between them as DSS's do, docs/traces.md); 0: any number, at any instant
        containers_per_heartbeat: Option<u32> = None, |v| if_set(v, whole), shown "the workload's: 1 for yarn-me* and SLS/DSS traces (DSS), else 0";
        /// seconds per ApplicationMaster heartbeat: a job's tasks are placed from one heartbeat after its AM, and each runs from two heartbeats after it is placed, holding its room meanwhile (DSS: 1 s); 0: at once
        am_heartbeat_s: Option<f64> = None, |v| if_set(v, non_negative), shown "the workload's: 1 for yarn-me* and SLS/DSS traces (DSS), else 0";
    }
}

/// Only the keys given show in a run's `params`.
impl Serialize for YarnParams {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.serialize_changed(serializer)
    }
}

impl YarnParams {
    /// The ApplicationMaster set here: `None` leaves it to the workload, `Some(ZERO)` means none.
    pub fn am(&self) -> Option<Resources> {
        let cpu = (self.am_cores.unwrap_or(1.0) * 1000.0).round() as u64;
        match self.am_mb {
            None => None,
            Some(0) => Some(Resources::ZERO),
            Some(mb) => Some(Resources::new(cpu, mb)),
        }
    }
}

/// The basic unit graceful preemption steps in (BIG-C §5.3: ⟨1 CPU, 2 GB⟩).
pub const GP_BASIC_UNIT: Resources = Resources::cores_gb(1, 2);

/// The CPU a suspended container keeps (BIG-C §3.2: 1 % of a core).
pub const FOOTPRINT_CPU_MILLI: u64 = 10;

impl Params {
    /// Sets one parameter (storage keys included) from its textual form.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ParamError> {
        self.set_key(key, value).unwrap_or_else(|| Err(ParamError::UnknownKey(key.into())))
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
