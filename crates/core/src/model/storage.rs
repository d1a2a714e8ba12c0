//! Checkpoint storage: the tiers a dump can be written to and how long dumps
//! and restores take (checkpoint paper §3.3.1, Table 3, Fig. 2). The same
//! model serves the core's estimates (what the resource manager is configured
//! with) and, as a separate instance, the simulator's ground truth.

use crate::time::{from_secs_f64, Micros};
use serde::Serialize;

/// A storage medium checkpoints are written to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    /// A hard disk.
    Hdd,
    /// A solid-state disk.
    Ssd,
    /// Non-volatile memory behind a file system (PMFS in the paper).
    Nvm,
}

impl Tier {
    /// Every tier, slowest first.
    pub const ALL: [Tier; 3] = [Tier::Hdd, Tier::Ssd, Tier::Nvm];

    /// The lowercase name used in preset names and reports.
    pub fn name(self) -> &'static str {
        match self {
            Tier::Hdd => "hdd",
            Tier::Ssd => "ssd",
            Tier::Nvm => "nvm",
        }
    }
}

/// MB in the 5 GB program the paper dumps for Table 3.
const TABLE_3_MB: f64 = 5.0 * 1024.0;

/// Bandwidths of the tiers and of the network, and what an incremental dump writes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StorageModel {
    /// HDD dump and restore bandwidth, MB/s (Table 3: 5 GB in 169.18 s).
    pub hdd_mb_s: f64,
    /// SSD dump and restore bandwidth, MB/s (Table 3: 5 GB in 43.73 s).
    pub ssd_mb_s: f64,
    /// NVM (PMFS) dump and restore bandwidth, MB/s (Table 3: 5 GB in 2.92 s).
    pub nvm_mb_s: f64,
    /// Network bandwidth for a remote restore, MB/s (10 Gb/s).
    pub network_mb_s: f64,
    /// Slow-down of reading an image back through the distributed file system
    /// on another node, over reading it locally (Fig. 2b).
    pub remote_penalty: f64,
    /// Fraction of a task's memory an incremental dump writes (Table 3: 10 %).
    pub dirty_fraction: f64,
}

impl Default for StorageModel {
    fn default() -> Self {
        StorageModel {
            hdd_mb_s: TABLE_3_MB / 169.18,
            ssd_mb_s: TABLE_3_MB / 43.73,
            nvm_mb_s: TABLE_3_MB / 2.92,
            network_mb_s: 10e9 / 8.0 / (1024.0 * 1024.0),
            // Fig. 2b plots HDFS suspend/restore above the local file system;
            // its values are not in the text: 1.5x is an assumption.
            remote_penalty: 1.5,
            dirty_fraction: 0.1,
        }
    }
}

/// The storage keys settable with `--set`, with their meaning.
pub const STORAGE_KEYS: &[(&str, &str)] = &[
    ("hdd_mb_s", "HDD checkpoint dump/restore bandwidth, MB/s (default: 5 GB in 169.18 s, Table 3)"),
    ("ssd_mb_s", "SSD checkpoint dump/restore bandwidth, MB/s (default: 5 GB in 43.73 s, Table 3)"),
    ("nvm_mb_s", "NVM checkpoint dump/restore bandwidth, MB/s (default: 5 GB in 2.92 s, Table 3)"),
    ("network_mb_s", "network bandwidth of a remote restore, MB/s (default 10 Gb/s)"),
    ("remote_penalty", "slow-down of a remote (DFS) image read over a local one (default 1.5, Fig. 2b)"),
    ("dirty_fraction", "fraction of memory an incremental dump writes (0..1, default 0.1, Table 3)"),
];

impl StorageModel {
    /// Sets one key of [`STORAGE_KEYS`]; `None` for an unknown key.
    pub fn set(&mut self, key: &str, value: &str) -> Option<Result<(), String>> {
        let slot = match key {
            "hdd_mb_s" => &mut self.hdd_mb_s,
            "ssd_mb_s" => &mut self.ssd_mb_s,
            "nvm_mb_s" => &mut self.nvm_mb_s,
            "network_mb_s" => &mut self.network_mb_s,
            "remote_penalty" => &mut self.remote_penalty,
            "dirty_fraction" => &mut self.dirty_fraction,
            _ => return None,
        };
        let ok = |x: f64| match key {
            "dirty_fraction" => (0.0..=1.0).contains(&x),
            "remote_penalty" => x >= 1.0 && x.is_finite(),
            _ => x > 0.0 && x.is_finite(),
        };
        Some(match value.parse::<f64>() {
            Ok(x) if ok(x) => {
                *slot = x;
                Ok(())
            }
            _ => Err(format!(
                "bad value `{value}` for `{key}`: expected {}",
                match key {
                    "dirty_fraction" => "a number between 0 and 1",
                    "remote_penalty" => "a number of at least 1",
                    _ => "a positive number",
                }
            )),
        })
    }

    /// Dump and restore bandwidth of `tier`, MB/s.
    pub fn bandwidth(&self, tier: Tier) -> f64 {
        match tier {
            Tier::Hdd => self.hdd_mb_s,
            Tier::Ssd => self.ssd_mb_s,
            Tier::Nvm => self.nvm_mb_s,
        }
    }

    /// MB a dump of a task with `mem_mb` of memory writes: all of it the first
    /// time, the dirtied part once an earlier image exists (§4.1, item 3).
    pub fn dump_mb(&self, mem_mb: u64, incremental: bool) -> f64 {
        if incremental {
            mem_mb as f64 * self.dirty_fraction
        } else {
            mem_mb as f64
        }
    }

    /// Time to write `mb` to `tier`.
    pub fn dump_time(&self, tier: Tier, mb: f64) -> Micros {
        from_secs_f64(mb / self.bandwidth(tier))
    }

    /// Time to read an image of `mb` back on the node that wrote it (Alg. 2).
    /// Fig. 2a's restore times are not in the text: reads are taken to run at
    /// the dump bandwidth.
    pub fn local_restore_time(&self, tier: Tier, mb: f64) -> Micros {
        self.dump_time(tier, mb)
    }

    /// Time to restore an image of `mb` on another node: network transfer plus
    /// a read through the distributed file system (Alg. 2).
    pub fn remote_restore_time(&self, tier: Tier, mb: f64) -> Micros {
        from_secs_f64(mb / self.network_mb_s + mb / self.bandwidth(tier) * self.remote_penalty)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SECOND;

    // Table 3's first dumps of 5 GB, and a remote restore of 1 GB on SSD with
    // the network at 1024 MB/s and no DFS penalty: 1 s + 1024 / 117.08 s = 9.746 s.
    #[test]
    fn table_3_first_dumps_and_a_remote_restore() {
        let s = StorageModel::default();
        assert_eq!(s.dump_time(Tier::Hdd, 5120.0), 169_180_000);
        assert_eq!(s.dump_time(Tier::Ssd, 5120.0), 43_730_000);
        assert_eq!(s.dump_time(Tier::Nvm, 5120.0), 2_920_000);
        assert_eq!(s.dump_mb(5120, true), 512.0);
        let mut r = s;
        r.set("network_mb_s", "1024").unwrap().unwrap();
        r.set("remote_penalty", "1").unwrap().unwrap();
        let t = r.remote_restore_time(Tier::Ssd, 1024.0) as f64 / SECOND as f64;
        assert!((t - (1.0 + 43.73 / 5.0)).abs() < 1e-5, "{t}");
        assert!(r.set("remote_penalty", "0.5").unwrap().is_err());
        assert!(r.set("nope", "1").is_none());
    }
}
