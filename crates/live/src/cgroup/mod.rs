//! One interface over cgroup v1 and cgroup v2.
//!
//! Both versions exist in the wild: v1 has one hierarchy per controller
//! (`/sys/fs/cgroup/memory/...`, `/sys/fs/cgroup/freezer/...`), v2 one unified
//! tree. pliant needs only a handful of knobs from either — CPU quota, memory
//! limit, freeze, kill, and the memory counters that show swapping — so this is
//! a thin layer of our own over the files rather than the `cgroups-rs` crate:
//! it lets us give the memory-limit write the semantics the mechanisms need
//! (retry on `EBUSY`, and on v2 reclaim through `memory.high` before setting
//! `memory.max` so a too-low limit is refused instead of OOM-killing the task),
//! and it keeps the dependency tree small.
//!
//! Every cgroup pliant creates is owned by a [`Cgroup`] handle: dropping the
//! handle kills whatever still runs in it and removes the directories.

mod v1;
mod v2;

use std::io;
use std::path::{Path, PathBuf};
use std::thread::sleep;
use std::time::{Duration, Instant};

/// How long freezing, thawing and killing may take before it is an error.
const SETTLE: Duration = Duration::from_secs(5);
/// Poll period while waiting for the kernel.
const POLL: Duration = Duration::from_millis(2);

/// A cgroup operation that failed.
#[derive(Debug, thiserror::Error)]
pub enum CgroupError {
    /// Reading or writing a cgroup file failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What the kernel said.
        source: io::Error,
    },
    /// The controller needed for this operation is not available here.
    #[error("{0}")]
    Unsupported(String),
    /// The kernel could not reclaim down to the limit in time; the limit was not applied.
    #[error("memory limit of {limit} B not applied: reclaim stalled (EBUSY) with usage at {usage} B after {waited:?}")]
    LimitBusy {
        /// The limit that was asked for.
        limit: u64,
        /// Memory usage when we gave up.
        usage: u64,
        /// How long we retried.
        waited: Duration,
    },
    /// The kernel did not reach the asked-for state in time.
    #[error("{}: timed out waiting for {what}", path.display())]
    Timeout {
        /// The cgroup.
        path: PathBuf,
        /// What we waited for.
        what: &'static str,
    },
    /// No usable cgroup hierarchy is mounted.
    #[error("no usable cgroup hierarchy: {0}")]
    NotFound(String),
}

/// Which cgroup version a hierarchy is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// One hierarchy per controller.
    V1,
    /// The unified hierarchy.
    V2,
}

/// Which controllers a cgroup can use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Controllers {
    /// CPU bandwidth (quota).
    pub cpu: bool,
    /// Memory limit and counters.
    pub memory: bool,
    /// Freezing.
    pub freezer: bool,
    /// A bound on the number of processes.
    pub pids: bool,
}

/// What `pids.max` holds for a bound (or for none), in either version.
fn pids_max_value(max: Option<u64>) -> String {
    max.map_or_else(|| "max".to_string(), |n| n.to_string())
}

/// A cgroup's memory counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MemoryStats {
    /// Bytes charged to the cgroup now.
    pub usage: u64,
    /// The limit in bytes, if any.
    pub limit: Option<u64>,
    /// Bytes of the cgroup's memory that are in swap.
    pub swap: u64,
    /// Major page faults so far (pages read back from disk).
    pub major_faults: u64,
    /// Times usage hit the limit (v1 `memory.failcnt`, v2 `memory.events` max).
    pub failcnt: u64,
}

impl MemoryStats {
    /// True when the cgroup swapped between `earlier` and `self`: more of it is
    /// in swap, or it hit its limit and took major faults (it is paging back
    /// in what it keeps losing).
    pub fn swapping_since(&self, earlier: &MemoryStats) -> bool {
        self.swap > earlier.swap || (self.failcnt > earlier.failcnt && self.major_faults > earlier.major_faults)
    }
}

/// Where the cgroup hierarchies of this machine are mounted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layout {
    /// cgroup v1: the mount point of each controller pliant uses.
    V1(v1::Mounts),
    /// cgroup v2: the root of the unified hierarchy.
    V2(PathBuf),
}

impl Layout {
    /// Finds the hierarchy to use from `/proc/self/mounts`: v1 when its memory
    /// controller is mounted (the v1 controllers then own the resources), else
    /// the unified hierarchy.
    pub fn detect() -> Result<Layout, CgroupError> {
        let mounts = read(Path::new("/proc/self/mounts"))?;
        Layout::from_mounts(&mounts)
    }

    /// Picks the layout from the text of a mounts table.
    pub fn from_mounts(mounts: &str) -> Result<Layout, CgroupError> {
        let v1 = v1::Mounts::parse(mounts);
        if v1.has(v1::Controller::Memory) {
            return Ok(Layout::V1(v1));
        }
        mounts
            .lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                (f.len() > 2 && f[2] == "cgroup2").then(|| PathBuf::from(f[1]))
            })
            .min_by_key(|p| p.components().count())
            .map(Layout::V2)
            .ok_or_else(|| CgroupError::NotFound("neither a v1 memory controller nor cgroup2 is mounted".into()))
    }

    /// The unified hierarchy mounted at `root` (for hybrid machines, e.g. `/sys/fs/cgroup/unified`).
    pub fn v2_at(root: impl Into<PathBuf>) -> Layout {
        Layout::V2(root.into())
    }

    /// The version of this layout.
    pub fn version(&self) -> Version {
        match self {
            Layout::V1(_) => Version::V1,
            Layout::V2(_) => Version::V2,
        }
    }

    /// Creates the top-level cgroup `name` (it should start with `pliant`),
    /// first removing a leftover of the same name — what a killed agent left
    /// behind. Returns the cgroup and whether a leftover was removed.
    pub fn create_fresh(&self, name: &str) -> Result<(Cgroup, bool), CgroupError> {
        let leftover = self.open(name);
        let had_leftover = leftover.is_some();
        if let Some(old) = leftover {
            old.remove()?;
        }
        let inner = match self {
            Layout::V1(m) => Inner::V1(v1::CgroupV1::create_top(m, name)?),
            Layout::V2(root) => Inner::V2(v2::CgroupV2::create(&root.join(name), false)?),
        };
        Ok((Cgroup { inner: Some(inner) }, had_leftover))
    }

    /// Opens an existing top-level cgroup, taking ownership of it.
    pub fn open(&self, name: &str) -> Option<Cgroup> {
        let inner = match self {
            Layout::V1(m) => Inner::V1(v1::CgroupV1::open_top(m, name)?),
            Layout::V2(root) => {
                let path = root.join(name);
                Inner::V2(v2::CgroupV2::open(&path)?)
            }
        };
        Some(Cgroup { inner: Some(inner) })
    }
}

/// A cgroup another program made and owns (Slurm's job cgroups): pliant
/// sets its memory limit, reads its counters and freezes or thaws it, but
/// never kills what runs in it nor removes it (there is no `Drop`).
#[derive(Debug)]
pub struct Foreign {
    inner: Inner,
}

impl Layout {
    /// The existing cgroup at `relative` (e.g. `slurm_n1/uid_0/job_7`), not
    /// taken over: `None` when it is not there.
    pub fn foreign(&self, relative: &str) -> Option<Foreign> {
        let inner = match self {
            Layout::V1(m) => Inner::V1(v1::CgroupV1::open_top(m, relative)?),
            Layout::V2(root) => Inner::V2(v2::CgroupV2::open(&root.join(relative))?),
        };
        Some(Foreign { inner })
    }
}

macro_rules! foreign {
    ($self:ident, $g:ident => $e:expr) => {
        match &$self.inner {
            Inner::V1($g) => $e,
            Inner::V2($g) => $e,
        }
    };
}

impl Foreign {
    /// The cgroup's directory (on v1, the one in the memory hierarchy).
    pub fn path(&self) -> &Path {
        foreign!(self, g => g.path())
    }

    /// As [`Cgroup::set_memory_limit`].
    pub fn set_memory_limit(&self, bytes: Option<u64>, patience: Duration) -> Result<(), CgroupError> {
        foreign!(self, g => g.set_memory_limit(bytes, patience))
    }

    /// The memory counters.
    pub fn memory(&self) -> Result<MemoryStats, CgroupError> {
        foreign!(self, g => g.memory())
    }

    /// Asks the kernel to freeze the cgroup, without waiting.
    pub fn begin_freeze(&self) -> Result<(), CgroupError> {
        foreign!(self, g => g.set_frozen(true, false))
    }

    /// Thaws the cgroup and waits until it runs again.
    pub fn thaw(&self) -> Result<(), CgroupError> {
        foreign!(self, g => g.set_frozen(false, true))
    }

    /// A handle on the memory limit alone, for a thread that lowers it
    /// while the caller goes on (see [`Cgroup::memory_limit`]).
    pub fn memory_limit(&self) -> MemoryLimit {
        MemoryLimit { inner: self.inner.clone() }
    }
}

#[derive(Debug, Clone)]
enum Inner {
    V1(v1::CgroupV1),
    V2(v2::CgroupV2),
}

/// An owned cgroup. Dropping it kills what runs in it and removes it (and any
/// child cgroups); [`Cgroup::remove`] does the same and reports errors.
#[derive(Debug)]
pub struct Cgroup {
    inner: Option<Inner>,
}

macro_rules! dispatch {
    ($self:ident, $g:ident => $e:expr) => {
        match $self.inner.as_ref().expect("a cgroup is only emptied by remove") {
            Inner::V1($g) => $e,
            Inner::V2($g) => $e,
        }
    };
}

impl Cgroup {
    /// Creates the child cgroup `name`, with every controller this one has.
    pub fn child(&self, name: &str) -> Result<Cgroup, CgroupError> {
        let inner = match self.inner.as_ref().expect("live handle") {
            Inner::V1(g) => Inner::V1(g.child(name)?),
            Inner::V2(g) => Inner::V2(g.child(name)?),
        };
        Ok(Cgroup { inner: Some(inner) })
    }

    /// Opens the existing child cgroup `name`, taking ownership of it (e.g.
    /// a task's cgroup left by an agent that was restarted).
    pub fn open_child(&self, name: &str) -> Option<Cgroup> {
        let inner = match self.inner.as_ref().expect("live handle") {
            Inner::V1(g) => g.open_child(name).map(Inner::V1),
            Inner::V2(g) => v2::CgroupV2::open(&g.path().join(name)).map(Inner::V2),
        }?;
        Some(Cgroup { inner: Some(inner) })
    }

    /// The names of this cgroup's child cgroups. On v1 a child left in some
    /// hierarchies only (its agent killed between their removals) is one too.
    pub fn children(&self) -> Result<Vec<String>, CgroupError> {
        let mut names = Vec::new();
        for dir in self.dirs() {
            for name in child_names(&dir)? {
                if !names.contains(&name) {
                    names.push(name);
                }
            }
        }
        Ok(names)
    }

    /// The cgroup's version.
    pub fn version(&self) -> Version {
        match self.inner.as_ref().expect("live handle") {
            Inner::V1(_) => Version::V1,
            Inner::V2(_) => Version::V2,
        }
    }

    /// The cgroup's directory (on v1, the one in the memory hierarchy).
    pub fn path(&self) -> &Path {
        dispatch!(self, g => g.path())
    }

    /// Every directory of this cgroup (one per hierarchy on v1).
    pub fn dirs(&self) -> Vec<PathBuf> {
        dispatch!(self, g => g.dirs())
    }

    /// The controllers this cgroup can use.
    pub fn controllers(&self) -> Controllers {
        dispatch!(self, g => g.controllers())
    }

    /// The `cgroup.procs` files a process must write itself into to join this
    /// cgroup (one per hierarchy on v1).
    pub fn procs_files(&self) -> Vec<PathBuf> {
        self.dirs().into_iter().map(|d| d.join("cgroup.procs")).collect()
    }

    /// Moves process `pid` into this cgroup.
    pub fn add_process(&self, pid: u32) -> Result<(), CgroupError> {
        self.procs_files().iter().try_for_each(|f| write(f, &pid.to_string()))
    }

    /// The processes in this cgroup (not in its children).
    pub fn pids(&self) -> Result<Vec<i32>, CgroupError> {
        let text = read(&self.path().join("cgroup.procs"))?;
        Ok(text.lines().filter_map(|l| l.trim().parse().ok()).collect())
    }

    /// Bounds the processes (and threads) the cgroup may hold at once, or
    /// lifts the bound: a `fork` past it fails with `EAGAIN`.
    pub fn set_pids_max(&self, max: Option<u64>) -> Result<(), CgroupError> {
        dispatch!(self, g => g.set_pids_max(max))
    }

    /// Caps CPU at `millicores` (1000 = one core; at least 1 % of a core), or lifts the cap.
    pub fn set_cpu_quota(&self, millicores: Option<u64>) -> Result<(), CgroupError> {
        dispatch!(self, g => g.set_cpu_quota(millicores))
    }

    /// The CPU cap in millicores, if any.
    pub fn cpu_quota(&self) -> Result<Option<u64>, CgroupError> {
        dispatch!(self, g => g.cpu_quota())
    }

    /// Sets the memory limit, or lifts it. Lowering it below usage makes the
    /// kernel reclaim (swap) the difference first; while reclaim stalls the
    /// write is retried for up to `patience`, after which the old limit stays
    /// and [`CgroupError::LimitBusy`] is returned.
    pub fn set_memory_limit(&self, bytes: Option<u64>, patience: Duration) -> Result<(), CgroupError> {
        dispatch!(self, g => g.set_memory_limit(bytes, patience))
    }

    /// The memory counters.
    pub fn memory(&self) -> Result<MemoryStats, CgroupError> {
        dispatch!(self, g => g.memory())
    }

    /// A handle on this cgroup's memory limit that does not own the cgroup,
    /// for a thread that lowers the limit while the owner goes on (the
    /// write blocks for as long as the kernel reclaims).
    pub fn memory_limit(&self) -> MemoryLimit {
        MemoryLimit { inner: self.inner.clone().expect("live handle") }
    }

    /// Freezes every process in the cgroup and waits until they are frozen.
    pub fn freeze(&self) -> Result<(), CgroupError> {
        dispatch!(self, g => g.set_frozen(true, true))
    }

    /// Asks the kernel to freeze the cgroup without waiting: a task thrashing
    /// in swap can take seconds to reach a point where it can be frozen, and
    /// [`Cgroup::is_frozen`] is true from the request on.
    pub fn begin_freeze(&self) -> Result<(), CgroupError> {
        dispatch!(self, g => g.set_frozen(true, false))
    }

    /// Thaws the cgroup and waits until it runs again.
    pub fn thaw(&self) -> Result<(), CgroupError> {
        dispatch!(self, g => g.set_frozen(false, true))
    }

    /// True when the cgroup is frozen.
    pub fn is_frozen(&self) -> Result<bool, CgroupError> {
        dispatch!(self, g => g.is_frozen())
    }

    /// Kills every process in the cgroup (the whole tree, even processes that
    /// left the task's process group) and waits until it is empty.
    pub fn kill_all(&self) -> Result<(), CgroupError> {
        dispatch!(self, g => g.kill_all())?;
        wait_until(self.path(), "the cgroup to empty", || Ok(self.pids()?.is_empty()))
    }

    /// Kills everything in this cgroup and its children and removes them all.
    pub fn remove(mut self) -> Result<(), CgroupError> {
        self.remove_now()
    }

    /// Leaves the cgroup, with what is in it, as it is when this handle is
    /// dropped (a later agent takes it over): the handle is spent, and
    /// nothing more is done through it.
    pub fn keep(&mut self) {
        self.inner = None;
    }

    fn remove_now(&mut self) -> Result<(), CgroupError> {
        if self.inner.is_none() {
            return Ok(());
        }
        for name in self.children()? {
            if let Some(child) = self.open_child(&name) {
                child.remove()?;
            }
        }
        if self.controllers().freezer && self.is_frozen()? {
            self.thaw()?;
        }
        self.kill_all()?;
        for dir in self.dirs() {
            rmdir(&dir)?;
        }
        self.inner = None;
        Ok(())
    }
}

/// A cgroup's memory limit alone (see [`Cgroup::memory_limit`]); dropping
/// it leaves the cgroup as it is.
#[derive(Debug)]
pub struct MemoryLimit {
    inner: Inner,
}

impl MemoryLimit {
    /// [`Cgroup::set_memory_limit`].
    pub fn set(&self, bytes: Option<u64>, patience: Duration) -> Result<(), CgroupError> {
        match &self.inner {
            Inner::V1(g) => g.set_memory_limit(bytes, patience),
            Inner::V2(g) => g.set_memory_limit(bytes, patience),
        }
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        if let Err(e) = self.remove_now() {
            eprintln!("pliant: could not remove cgroup: {e}");
        }
    }
}

fn child_names(dir: &Path) -> Result<Vec<String>, CgroupError> {
    let entries = std::fs::read_dir(dir).map_err(|source| CgroupError::Io { path: dir.into(), source })?;
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| CgroupError::Io { path: dir.into(), source })?;
        if entry.file_type().map(|t| t.is_dir()).unwrap_or(false) {
            names.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    Ok(names)
}

/// Removes a cgroup directory, retrying while exiting processes still hold it.
fn rmdir(dir: &Path) -> Result<(), CgroupError> {
    let start = Instant::now();
    loop {
        match std::fs::remove_dir(dir) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) && start.elapsed() < SETTLE => sleep(POLL),
            Err(source) => return Err(CgroupError::Io { path: dir.into(), source }),
        }
    }
}

/// Polls `done` until it holds or [`SETTLE`] passes.
fn wait_until(
    path: &Path,
    what: &'static str,
    mut done: impl FnMut() -> Result<bool, CgroupError>,
) -> Result<(), CgroupError> {
    let start = Instant::now();
    while !done()? {
        if start.elapsed() > SETTLE {
            return Err(CgroupError::Timeout { path: path.into(), what });
        }
        sleep(POLL);
    }
    Ok(())
}

/// Writes `value` to a cgroup file; `EBUSY` comes back as an `Io` error with that errno.
fn write(path: &Path, value: &str) -> Result<(), CgroupError> {
    std::fs::write(path, value).map_err(|source| CgroupError::Io { path: path.into(), source })
}

fn read(path: &Path) -> Result<String, CgroupError> {
    std::fs::read_to_string(path).map_err(|source| CgroupError::Io { path: path.into(), source })
}

fn read_u64(path: &Path) -> Result<u64, CgroupError> {
    let text = read(path)?;
    text.trim().parse().map_err(|_| CgroupError::Io {
        path: path.into(),
        source: io::Error::new(io::ErrorKind::InvalidData, format!("not a number: {:?}", text.trim())),
    })
}

/// The value of `key` in a flat-keyed cgroup file (`memory.stat`, `memory.events`, `cgroup.events`).
fn keyed(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let mut it = l.split_whitespace();
        (it.next() == Some(key)).then(|| it.next()?.parse().ok()).flatten()
    })
}

/// True when a memory-limit write failed because reclaim stalled.
fn is_busy(e: &CgroupError) -> bool {
    matches!(e, CgroupError::Io { source, .. } if source.raw_os_error() == Some(libc::EBUSY))
}

/// Retries `attempt` while it fails with `EBUSY`, for up to `patience`.
fn retry_busy(
    limit: u64,
    patience: Duration,
    usage: impl Fn() -> u64,
    mut attempt: impl FnMut() -> Result<bool, CgroupError>,
) -> Result<(), CgroupError> {
    let start = Instant::now();
    loop {
        match attempt() {
            Ok(true) => return Ok(()),
            Ok(false) => {}
            Err(e) if is_busy(&e) => {}
            Err(e) => return Err(e),
        }
        if start.elapsed() >= patience {
            return Err(CgroupError::LimitBusy { limit, usage: usage(), waited: start.elapsed() });
        }
        sleep(Duration::from_millis(10));
    }
}

/// CPU quota in µs per `period_us` for `millicores`, at least 1 % of one core
/// (and never under the kernel's 1 ms minimum).
fn quota_us(millicores: u64, period_us: u64) -> u64 {
    (millicores * period_us / 1000).max(period_us / 100).max(1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyed_files_parse_by_exact_key() {
        let stat = "cache 5300224\nswap 4096\ntotal_swap 8192\npgmajfault 87\n";
        assert_eq!(keyed(stat, "swap"), Some(4096));
        assert_eq!(keyed(stat, "pgmajfault"), Some(87));
        assert_eq!(keyed(stat, "rss"), None);
    }

    #[test]
    fn one_percent_of_a_core_is_the_floor() {
        assert_eq!(quota_us(10, 100_000), 1000);
        assert_eq!(quota_us(0, 100_000), 1000);
        assert_eq!(quota_us(2500, 100_000), 250_000);
    }

    #[test]
    fn swapping_needs_swap_growth_or_faults_at_the_limit() {
        let a = MemoryStats { usage: 100, limit: Some(100), swap: 0, major_faults: 5, failcnt: 1 };
        assert!(!a.swapping_since(&a));
        assert!(MemoryStats { swap: 4096, ..a }.swapping_since(&a));
        assert!(!MemoryStats { major_faults: 9, ..a }.swapping_since(&a), "file faults alone are not swapping");
        assert!(MemoryStats { major_faults: 9, failcnt: 2, ..a }.swapping_since(&a));
    }

    #[test]
    fn layout_prefers_v1_memory_then_the_shallowest_cgroup2() {
        let hybrid = "cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0\n\
                      cgroup /sys/fs/cgroup/memory cgroup rw,relatime,memory 0 0\n\
                      cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0\n";
        assert_eq!(Layout::from_mounts(hybrid).unwrap().version(), Version::V1);
        let v2 = "cgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0\ncgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n";
        assert_eq!(Layout::from_mounts(v2).unwrap(), Layout::V2("/sys/fs/cgroup".into()));
        assert!(Layout::from_mounts("proc /proc proc rw 0 0\n").is_err());
    }
}
