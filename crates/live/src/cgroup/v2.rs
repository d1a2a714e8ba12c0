//! cgroup v2: one directory in the unified tree.
//!
//! Freezing (`cgroup.freeze`) and killing (`cgroup.kill`) are core files and
//! work without any controller; CPU and memory need the `cpu` and `memory`
//! controllers enabled by the parent's `cgroup.subtree_control`. pliant enables
//! them only in cgroups it created itself.

use super::{keyed, quota_us, read, read_u64, retry_busy, wait_until, write, CgroupError, Controllers, MemoryStats};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A v2 cgroup.
#[derive(Debug, Clone)]
pub(super) struct CgroupV2 {
    path: PathBuf,
}

impl CgroupV2 {
    /// Makes the directory; with `enable_in_parent`, first enables in the
    /// parent (which must be ours) every controller pliant uses that it has.
    pub(super) fn create(path: &Path, enable_in_parent: bool) -> Result<Self, CgroupError> {
        if let (true, Some(parent)) = (enable_in_parent, path.parent()) {
            let available = read(&parent.join("cgroup.controllers"))?;
            for c in ["cpu", "memory", "pids"] {
                if available.split_whitespace().any(|a| a == c) {
                    write(&parent.join("cgroup.subtree_control"), &format!("+{c}"))?;
                }
            }
        }
        std::fs::create_dir(path).map_err(|source| CgroupError::Io { path: path.into(), source })?;
        Ok(CgroupV2 { path: path.into() })
    }

    pub(super) fn open(path: &Path) -> Option<Self> {
        path.is_dir().then(|| CgroupV2 { path: path.into() })
    }

    pub(super) fn child(&self, name: &str) -> Result<Self, CgroupError> {
        Self::create(&self.path.join(name), true)
    }

    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    pub(super) fn dirs(&self) -> Vec<PathBuf> {
        vec![self.path.clone()]
    }

    pub(super) fn controllers(&self) -> Controllers {
        let enabled = read(&self.path.join("cgroup.controllers")).unwrap_or_default();
        let has = |c: &str| enabled.split_whitespace().any(|a| a == c);
        Controllers {
            cpu: has("cpu"),
            memory: has("memory"),
            freezer: self.path.join("cgroup.freeze").exists(),
            pids: has("pids"),
        }
    }

    pub(super) fn set_pids_max(&self, max: Option<u64>) -> Result<(), CgroupError> {
        self.require("pids", self.controllers().pids)?;
        write(&self.path.join("pids.max"), &super::pids_max_value(max))
    }

    fn require(&self, controller: &str, enabled: bool) -> Result<(), CgroupError> {
        if enabled {
            Ok(())
        } else {
            Err(CgroupError::Unsupported(format!(
                "the cgroup v2 {controller} controller is not enabled for {} (see its parent's cgroup.subtree_control)",
                self.path.display()
            )))
        }
    }

    pub(super) fn set_cpu_quota(&self, millicores: Option<u64>) -> Result<(), CgroupError> {
        self.require("cpu", self.controllers().cpu)?;
        let file = self.path.join("cpu.max");
        let period = parse_cpu_max(&read(&file)?).1;
        let value = match millicores {
            Some(m) => format!("{} {period}", quota_us(m, period)),
            None => format!("max {period}"),
        };
        write(&file, &value)
    }

    pub(super) fn cpu_quota(&self) -> Result<Option<u64>, CgroupError> {
        self.require("cpu", self.controllers().cpu)?;
        let (quota, period) = parse_cpu_max(&read(&self.path.join("cpu.max"))?);
        Ok(quota.map(|q| q * 1000 / period))
    }

    /// Reclaims through `memory.high` (which never OOM-kills) until usage is
    /// under the limit, and only then sets `memory.max`; if usage does not get
    /// there in time, `memory.high` goes back and nothing is applied.
    pub(super) fn set_memory_limit(&self, bytes: Option<u64>, patience: Duration) -> Result<(), CgroupError> {
        self.require("memory", self.controllers().memory)?;
        let (high, max) = (self.path.join("memory.high"), self.path.join("memory.max"));
        let Some(limit) = bytes else {
            write(&max, "max")?;
            return write(&high, "max");
        };
        let old_high = read(&high)?;
        let current = self.path.join("memory.current");
        let reclaimed = retry_busy(
            limit,
            patience,
            || read_u64(&current).unwrap_or(0),
            || {
                write(&high, &limit.to_string())?;
                Ok(read_u64(&current)? <= limit)
            },
        );
        match reclaimed {
            Ok(()) => write(&max, &limit.to_string()),
            Err(e) => {
                write(&high, old_high.trim())?;
                Err(e)
            }
        }
    }

    pub(super) fn memory(&self) -> Result<MemoryStats, CgroupError> {
        self.require("memory", self.controllers().memory)?;
        let swap_file = self.path.join("memory.swap.current");
        Ok(MemoryStats {
            usage: read_u64(&self.path.join("memory.current"))?,
            limit: read(&self.path.join("memory.max"))?.trim().parse().ok(),
            swap: if swap_file.exists() { read_u64(&swap_file)? } else { 0 },
            major_faults: keyed(&read(&self.path.join("memory.stat"))?, "pgmajfault").unwrap_or(0),
            failcnt: keyed(&read(&self.path.join("memory.events"))?, "max").unwrap_or(0),
        })
    }

    pub(super) fn set_frozen(&self, frozen: bool, wait: bool) -> Result<(), CgroupError> {
        self.require("freezer (cgroup.freeze, Linux 5.2+)", self.controllers().freezer)?;
        write(&self.path.join("cgroup.freeze"), if frozen { "1" } else { "0" })?;
        if !wait {
            return Ok(());
        }
        let settled = || Ok((keyed(&read(&self.path.join("cgroup.events"))?, "frozen") == Some(1)) == frozen);
        wait_until(&self.path, if frozen { "frozen 1" } else { "frozen 0" }, settled)
    }

    /// True once freezing was asked for (`cgroup.freeze`), as v1's FREEZING counts as frozen.
    pub(super) fn is_frozen(&self) -> Result<bool, CgroupError> {
        Ok(read(&self.path.join("cgroup.freeze"))?.trim() == "1")
    }

    /// `cgroup.kill` (Linux 5.14+) kills the whole cgroup atomically; older
    /// kernels get freeze, SIGKILL each process, thaw.
    pub(super) fn kill_all(&self) -> Result<(), CgroupError> {
        let kill = self.path.join("cgroup.kill");
        if kill.exists() {
            return write(&kill, "1");
        }
        let freezer = self.controllers().freezer;
        if freezer {
            self.set_frozen(true, true)?;
        }
        for pid in read(&self.path.join("cgroup.procs"))?.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
            // SAFETY: kill(2) has no memory-safety preconditions.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        if freezer {
            self.set_frozen(false, true)?;
        }
        Ok(())
    }
}

/// `cpu.max` is "QUOTA PERIOD" or "max PERIOD".
fn parse_cpu_max(text: &str) -> (Option<u64>, u64) {
    let mut it = text.split_whitespace();
    let quota = it.next().and_then(|q| q.parse().ok());
    let period = it.next().and_then(|p| p.parse().ok()).unwrap_or(100_000);
    (quota, period)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The v2 memory and CPU files cannot be exercised on a machine whose
    /// controllers are bound to v1; this checks what the layer writes and
    /// reads against plain files laid out like a v2 cgroup.
    #[test]
    fn cpu_and_memory_files_round_trip_on_a_fake_v2_cgroup() {
        let dir = std::env::temp_dir().join(format!("pliant-v2-fake-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let put = |f: &str, v: &str| std::fs::write(dir.join(f), v).unwrap();
        put("cgroup.controllers", "cpu memory pids\n");
        put("cpu.max", "max 100000\n");
        put("memory.high", "max\n");
        put("memory.max", "max\n");
        put("memory.current", "1048576\n");
        put("memory.stat", "anon 1048576\npgmajfault 12\n");
        put("memory.events", "low 0\nhigh 3\nmax 7\noom 0\noom_kill 0\n");
        let g = CgroupV2 { path: dir.clone() };

        g.set_cpu_quota(Some(1500)).unwrap();
        assert_eq!(std::fs::read_to_string(dir.join("cpu.max")).unwrap(), "150000 100000");
        assert_eq!(g.cpu_quota().unwrap(), Some(1500));
        g.set_cpu_quota(None).unwrap();
        assert_eq!(g.cpu_quota().unwrap(), None);

        g.set_memory_limit(Some(2 << 20), Duration::ZERO).unwrap();
        assert_eq!(std::fs::read_to_string(dir.join("memory.max")).unwrap(), (2u64 << 20).to_string());
        let too_low = g.set_memory_limit(Some(4096), Duration::ZERO);
        assert!(matches!(too_low, Err(CgroupError::LimitBusy { limit: 4096, usage: 1048576, .. })), "{too_low:?}");
        assert_eq!(std::fs::read_to_string(dir.join("memory.high")).unwrap(), (2u64 << 20).to_string());
        assert_eq!(std::fs::read_to_string(dir.join("memory.max")).unwrap(), (2u64 << 20).to_string());

        let m = g.memory().unwrap();
        assert_eq!(m, MemoryStats { usage: 1 << 20, limit: Some(2 << 20), swap: 0, major_faults: 12, failcnt: 7 });
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
