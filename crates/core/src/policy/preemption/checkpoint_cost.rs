//! The checkpoint paper's cost estimates (§4.1): what checkpointing a victim
//! costs (Algorithm 1) and what resuming it locally or remotely costs
//! (Algorithm 2), from what a resource manager knows — the task's memory
//! size, the tier's bandwidth, the node's dump queue and the task's progress.

use crate::model::{StorageModel, Tier};
use crate::Micros;

/// Algorithm 1's `overhead_chkpt`: writing the dump (the dirtied part only
/// if an image exists, §4.1 item 3), reading it back, and waiting behind the
/// `queue` of dumps and restores already booked on the node.
pub fn checkpoint_overhead(s: &StorageModel, tier: Tier, mem_mb: u64, has_image: bool, queue: Micros) -> Micros {
    s.dump_time(tier, s.dump_mb(mem_mb, has_image)) + s.local_restore_time(tier, mem_mb as f64) + queue
}

/// Algorithm 1, line 5: checkpoint only a task whose progress exceeds the
/// overhead; kill the others.
pub fn worth_checkpointing(progress: Micros, overhead: Micros) -> bool {
    progress > overhead
}

/// Algorithm 2's `overhead_local`: read the image plus the local queue.
pub fn local_resume_overhead(s: &StorageModel, tier: Tier, mem_mb: u64, queue: Micros) -> Micros {
    s.local_restore_time(tier, mem_mb as f64) + queue
}

/// Algorithm 2's `overhead_remote`: network transfer and read through the
/// distributed file system, plus the remote node's queue.
pub fn remote_resume_overhead(s: &StorageModel, tier: Tier, mem_mb: u64, queue: Micros) -> Micros {
    s.remote_restore_time(tier, mem_mb as f64) + queue
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SECOND;

    // A 5 GB task on HDD at Table 3's rate (5 GB in 169.18 s): first checkpoint
    // 169.18 + 169.18 = 338.36 s; with an image, 16.918 + 169.18 = 186.098 s;
    // 10 s of queue adds 10 s. 30 s of progress does not pay for it; 400 s does.
    #[test]
    fn algorithm_1_overheads_by_hand() {
        let s = StorageModel::default();
        assert_eq!(checkpoint_overhead(&s, Tier::Hdd, 5120, false, 0), 338_360_000);
        assert_eq!(checkpoint_overhead(&s, Tier::Hdd, 5120, true, 10 * SECOND), 196_098_000);
        assert!(!worth_checkpointing(30 * SECOND, 338_360_000));
        assert!(worth_checkpointing(400 * SECOND, 338_360_000));
        assert!(!worth_checkpointing(5, 5));
    }

    // 1 GB on NVM (1753.42 MB/s): local read 0.584 s; remote adds the network
    // (1024 / 1192.09 = 0.859 s) and the DFS penalty (x1.5 on the read):
    // 0.858993 + 0.876 = 1.734993 s. A local queue of 2 s makes remote cheaper.
    #[test]
    fn algorithm_2_overheads_by_hand() {
        let s = StorageModel::default();
        let local = local_resume_overhead(&s, Tier::Nvm, 1024, 0);
        let remote = remote_resume_overhead(&s, Tier::Nvm, 1024, 0);
        assert_eq!(local, 584_000);
        assert_eq!(remote, 1_734_993);
        assert!(local_resume_overhead(&s, Tier::Nvm, 1024, 2 * SECOND) > remote);
    }
}
