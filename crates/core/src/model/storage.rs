//! Checkpoint storage: the tiers a dump can be written to and how long dumps
//! and restores take (checkpoint paper §3.3.1, Table 3, Fig. 2). The same
//! model serves the core's estimates (what the resource manager is configured
//! with) and, as a separate instance, the simulator's ground truth.

use crate::declare_params;
use crate::parameter::{at_least_one, fraction, positive};
use crate::time::{from_secs_f64, Micros};
use serde::{Deserialize, Serialize};

/// A storage medium checkpoints are written to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
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

declare_params! {
    /// Bandwidths of the tiers and of the network, and what an incremental dump writes.
    #[derive(Debug, Clone, Copy, PartialEq, Serialize)]
    pub struct StorageModel {
        /// HDD checkpoint dump/restore bandwidth, MB/s (checkpoint paper Table 3)
        hdd_mb_s: f64 = TABLE_3_MB / 169.18, positive, shown "5 GB in 169.18 s (30.26)";
        /// SSD checkpoint dump/restore bandwidth, MB/s (Table 3)
        ssd_mb_s: f64 = TABLE_3_MB / 43.73, positive, shown "5 GB in 43.73 s (117.08)";
        /// NVM (PMFS) checkpoint dump/restore bandwidth, MB/s (Table 3)
        nvm_mb_s: f64 = TABLE_3_MB / 2.92, positive, shown "5 GB in 2.92 s (1753.42)";
        /// network bandwidth of a remote restore, MB/s
        network_mb_s: f64 = 10e9 / 8.0 / (1024.0 * 1024.0), positive, shown "10 Gb/s (1192.09)";
        /// slow-down of a remote (DFS) image read over a local one (Fig. 2b plots it above the local file system without values: 1.5 is an assumption)
        remote_penalty: f64 = 1.5, at_least_one;
        /// fraction of memory an incremental dump writes (0..1, Table 3)
        dirty_fraction: f64 = 0.1, fraction;
    }
}

impl StorageModel {
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
        r.set_key("network_mb_s", "1024").unwrap().unwrap();
        r.set_key("remote_penalty", "1").unwrap().unwrap();
        let t = r.remote_restore_time(Tier::Ssd, 1024.0) as f64 / SECOND as f64;
        assert!((t - (1.0 + 43.73 / 5.0)).abs() < 1e-5, "{t}");
        assert!(r.set_key("remote_penalty", "0.5").unwrap().is_err());
        assert!(r.set_key("nope", "1").is_none());
    }
}
