//! cgroup v1: one directory per controller hierarchy, all with the same relative path.

use super::{keyed, quota_us, read, read_u64, retry_busy, wait_until, write, CgroupError, Controllers, MemoryStats};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A v1 controller pliant uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Controller {
    /// CPU bandwidth (`cpu.cfs_quota_us`).
    Cpu,
    /// Memory (`memory.limit_in_bytes`, `memory.stat`).
    Memory,
    /// The freezer (`freezer.state`).
    Freezer,
    /// The number of processes (`pids.max`).
    Pids,
}

impl Controller {
    const ALL: [Controller; 4] = [Controller::Memory, Controller::Cpu, Controller::Freezer, Controller::Pids];

    fn mount_option(self) -> &'static str {
        match self {
            Controller::Cpu => "cpu",
            Controller::Memory => "memory",
            Controller::Freezer => "freezer",
            Controller::Pids => "pids",
        }
    }
}

/// Where each v1 controller is mounted.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Mounts {
    roots: Vec<(Controller, PathBuf)>,
}

impl Mounts {
    /// Reads the v1 mounts out of a mounts table (`/proc/self/mounts`).
    pub fn parse(mounts: &str) -> Mounts {
        let mut roots = Vec::new();
        for line in mounts.lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() < 4 || f[2] != "cgroup" {
                continue;
            }
            for c in Controller::ALL {
                if f[3].split(',').any(|o| o == c.mount_option()) && !roots.iter().any(|(k, _)| *k == c) {
                    roots.push((c, PathBuf::from(f[1])));
                }
            }
        }
        roots.sort_by_key(|(c, _)| Controller::ALL.iter().position(|x| x == c));
        Mounts { roots }
    }

    /// True when `c` is mounted.
    pub fn has(&self, c: Controller) -> bool {
        self.roots.iter().any(|(k, _)| *k == c)
    }
}

/// A v1 cgroup: the same relative path in each hierarchy.
#[derive(Debug, Clone)]
pub(super) struct CgroupV1 {
    dirs: Vec<(Controller, PathBuf)>,
}

impl CgroupV1 {
    pub(super) fn create_top(m: &Mounts, name: &str) -> Result<Self, CgroupError> {
        let dirs: Vec<_> = m.roots.iter().map(|(c, root)| (*c, root.join(name))).collect();
        Self::make(dirs)
    }

    pub(super) fn open_top(m: &Mounts, name: &str) -> Option<Self> {
        let dirs: Vec<_> = m.roots.iter().map(|(c, root)| (*c, root.join(name))).filter(|(_, d)| d.is_dir()).collect();
        (!dirs.is_empty()).then_some(CgroupV1 { dirs })
    }

    pub(super) fn child(&self, name: &str) -> Result<Self, CgroupError> {
        Self::make(self.dirs.iter().map(|(c, d)| (*c, d.join(name))).collect())
    }

    pub(super) fn open_child(&self, name: &str) -> Option<Self> {
        let dirs: Vec<_> = self.dirs.iter().map(|(c, d)| (*c, d.join(name))).filter(|(_, d)| d.is_dir()).collect();
        (!dirs.is_empty()).then_some(CgroupV1 { dirs })
    }

    /// Creates the directory in every hierarchy; on failure removes the ones already made.
    fn make(dirs: Vec<(Controller, PathBuf)>) -> Result<Self, CgroupError> {
        for (i, (_, dir)) in dirs.iter().enumerate() {
            if let Err(source) = std::fs::create_dir(dir) {
                for (_, made) in &dirs[..i] {
                    let _ = std::fs::remove_dir(made);
                }
                return Err(CgroupError::Io { path: dir.clone(), source });
            }
        }
        Ok(CgroupV1 { dirs })
    }

    fn dir(&self, c: Controller) -> Result<&Path, CgroupError> {
        self.dirs.iter().find(|(k, _)| *k == c).map(|(_, d)| d.as_path()).ok_or_else(|| {
            CgroupError::Unsupported(format!("cgroup v1 {} controller is not mounted", c.mount_option()))
        })
    }

    pub(super) fn path(&self) -> &Path {
        &self.dirs[0].1
    }

    pub(super) fn dirs(&self) -> Vec<PathBuf> {
        self.dirs.iter().map(|(_, d)| d.clone()).collect()
    }

    pub(super) fn controllers(&self) -> Controllers {
        let has = |c| self.dirs.iter().any(|(k, _)| *k == c);
        Controllers {
            cpu: has(Controller::Cpu),
            memory: has(Controller::Memory),
            freezer: has(Controller::Freezer),
            pids: has(Controller::Pids),
        }
    }

    pub(super) fn set_pids_max(&self, max: Option<u64>) -> Result<(), CgroupError> {
        write(&self.dir(Controller::Pids)?.join("pids.max"), &super::pids_max_value(max))
    }

    pub(super) fn set_cpu_quota(&self, millicores: Option<u64>) -> Result<(), CgroupError> {
        let dir = self.dir(Controller::Cpu)?;
        let value = match millicores {
            Some(m) => quota_us(m, read_u64(&dir.join("cpu.cfs_period_us"))?).to_string(),
            None => "-1".to_string(),
        };
        write(&dir.join("cpu.cfs_quota_us"), &value)
    }

    pub(super) fn cpu_quota(&self) -> Result<Option<u64>, CgroupError> {
        let dir = self.dir(Controller::Cpu)?;
        let quota = read(&dir.join("cpu.cfs_quota_us"))?;
        match quota.trim().parse::<u64>() {
            Ok(q) => Ok(Some(q * 1000 / read_u64(&dir.join("cpu.cfs_period_us"))?)),
            Err(_) => Ok(None),
        }
    }

    pub(super) fn set_memory_limit(&self, bytes: Option<u64>, patience: Duration) -> Result<(), CgroupError> {
        let dir = self.dir(Controller::Memory)?;
        let file = dir.join("memory.limit_in_bytes");
        let value = bytes.map_or_else(|| "-1".to_string(), |b| b.to_string());
        let usage = || read_u64(&dir.join("memory.usage_in_bytes")).unwrap_or(0);
        // The write itself reclaims; it fails with EBUSY when reclaim stalls.
        retry_busy(bytes.unwrap_or(u64::MAX), patience, usage, || write(&file, &value).map(|()| true))
    }

    pub(super) fn memory(&self) -> Result<MemoryStats, CgroupError> {
        let dir = self.dir(Controller::Memory)?;
        let stat = read(&dir.join("memory.stat"))?;
        let limit = read_u64(&dir.join("memory.limit_in_bytes"))?;
        Ok(MemoryStats {
            usage: read_u64(&dir.join("memory.usage_in_bytes"))?,
            // v1 reports "no limit" as the largest page-aligned i64.
            limit: (limit < 1 << 62).then_some(limit),
            // Hierarchical (`total_`): a Slurm job's processes are in its
            // step cgroups below it; for a cgroup without children they are
            // the cgroup's own figures.
            swap: keyed(&stat, "total_swap").or_else(|| keyed(&stat, "swap")).unwrap_or(0),
            major_faults: keyed(&stat, "total_pgmajfault").or_else(|| keyed(&stat, "pgmajfault")).unwrap_or(0),
            failcnt: read_u64(&dir.join("memory.failcnt"))?,
        })
    }

    pub(super) fn set_frozen(&self, frozen: bool, wait: bool) -> Result<(), CgroupError> {
        let dir = self.dir(Controller::Freezer)?;
        let state = dir.join("freezer.state");
        let want = if frozen { "FROZEN" } else { "THAWED" };
        write(&state, want)?;
        if !wait {
            return Ok(());
        }
        wait_until(dir, if frozen { "FROZEN" } else { "THAWED" }, || Ok(read(&state)?.trim() == want))
    }

    pub(super) fn is_frozen(&self) -> Result<bool, CgroupError> {
        Ok(read(&self.dir(Controller::Freezer)?.join("freezer.state"))?.trim() != "THAWED")
    }

    /// Freezes (so nothing forks meanwhile), SIGKILLs every process, thaws so
    /// the signals are delivered.
    pub(super) fn kill_all(&self) -> Result<(), CgroupError> {
        let freezer = self.controllers().freezer;
        if freezer {
            self.set_frozen(true, true)?;
        }
        let procs = read(&self.path().join("cgroup.procs"))?;
        for pid in procs.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
            // SAFETY: kill(2) has no memory-safety preconditions.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        if freezer {
            self.set_frozen(false, true)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mounts_pick_each_controller_once() {
        let table = "cgroup /sys/fs/cgroup/cpu,cpuacct cgroup rw,relatime,cpu,cpuacct 0 0\n\
                     cgroup /sys/fs/cgroup/cpuacct cgroup rw,relatime,cpuacct 0 0\n\
                     cgroup /sys/fs/cgroup/freezer cgroup rw,freezer 0 0\n\
                     cgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0\n";
        let m = Mounts::parse(table);
        assert!(m.has(Controller::Cpu) && m.has(Controller::Freezer) && !m.has(Controller::Memory));
        assert_eq!(
            m.roots,
            vec![
                (Controller::Cpu, PathBuf::from("/sys/fs/cgroup/cpu,cpuacct")),
                (Controller::Freezer, PathBuf::from("/sys/fs/cgroup/freezer")),
            ]
        );
    }
}
