//! The cgroups Slurm's `task/cgroup` plugin makes for a job, and the memory
//! operations pliant carries out on them where Slurm has none: BIG-C's
//! reclaim of a suspended job's memory to its footprint (§3.2), a graceful
//! shrink's lower limit (§3.3), and the limit lifted again before the job
//! resumes (Slurm 22.05 does not restore it when it resumes a job).
//!
//! Layout (Slurm 22.05, cgroup v1): `<controller>/slurm_<node>/uid_<uid>/job_<id>`,
//! the `slurm_<node>` level named after the node so that several `slurmd`
//! on one machine keep apart. pliant never creates, kills in or removes
//! these cgroups: Slurm does.

use crate::cgroup::{CgroupError, Foreign, Layout, MemoryLimit, MemoryStats};
use std::time::Duration;

/// One Slurm job's cgroup on its node.
#[derive(Debug)]
pub struct SlurmJobCgroup {
    cgroup: Foreign,
}

impl SlurmJobCgroup {
    /// The job cgroup's path below each controller's mount point.
    pub fn relative_path(node: &str, uid: u32, job: u64) -> String {
        format!("slurm_{node}/uid_{uid}/job_{job}")
    }

    /// Slurm job `job` of user `uid` on `node`, if its cgroup is there.
    pub fn open(layout: &Layout, node: &str, uid: u32, job: u64) -> Option<SlurmJobCgroup> {
        layout.foreign(&Self::relative_path(node, uid, job)).map(|cgroup| SlurmJobCgroup { cgroup })
    }

    /// Slurm job `job` on `node`, whoever owns it, if its cgroup is there
    /// (the node's agent knows a job by its id alone).
    pub fn find(layout: &Layout, node: &str, job: u64) -> Option<SlurmJobCgroup> {
        let top = layout.foreign(&format!("slurm_{node}"))?;
        let uid = std::fs::read_dir(top.path()).ok()?.flatten().find_map(|e| {
            let uid = e.file_name().to_str()?.strip_prefix("uid_")?.parse::<u32>().ok()?;
            e.path().join(format!("job_{job}")).is_dir().then_some(uid)
        })?;
        Self::open(layout, node, uid, job)
    }

    /// A handle on the job's memory limit alone, for a thread that lowers it.
    pub fn memory_limit(&self) -> MemoryLimit {
        self.cgroup.memory_limit()
    }

    /// Lifts the limit pliant set. Under `CR_Core` Slurm's own limit on the
    /// job is the node's whole memory, which the node's limit caps anyway.
    pub fn lift(&self) -> Result<(), CgroupError> {
        self.cgroup.set_memory_limit(None, Duration::ZERO)
    }

    /// Freezes the job now, without waiting for it to settle (Slurm's own
    /// freeze after `scontrol suspend` comes about 2 s later).
    pub fn begin_freeze(&self) -> Result<(), CgroupError> {
        self.cgroup.begin_freeze()
    }

    /// Thaws what [`SlurmJobCgroup::begin_freeze`] froze (Slurm's resume
    /// thaws only the steps it froze itself).
    pub fn thaw(&self) -> Result<(), CgroupError> {
        self.cgroup.thaw()
    }

    /// The job's memory counters.
    pub fn memory(&self) -> Result<MemoryStats, CgroupError> {
        self.cgroup.memory()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_cgroups_are_named_after_node_user_and_job() {
        assert_eq!(SlurmJobCgroup::relative_path("n1", 0, 7), "slurm_n1/uid_0/job_7");
    }
}
