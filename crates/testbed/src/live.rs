//! Live-mode test helpers: live tests run only under PLIANT_LIVE_TESTS=1 (and
//! then fail where the machine cannot run them), the machine-wide lock
//! the live tests that use swap or much memory share, and a free port.

use pliant_live::cgroup::Layout;

/// A test that cannot run on this machine for `reason`: fails under
/// PLIANT_LIVE_TESTS=1, is listed at the end of the run otherwise.
pub fn skip(reason: &str) {
    pliant_xtest::cannot_run(reason);
}

/// As [`skip`], for a test of data outside the repository: fails under
/// PLIANT_REQUIRE_SHARED=1, which `.ci/run` sets when the data is there.
pub fn skip_without_data(reason: &str) {
    pliant_xtest::without_data(reason);
}

/// Why live mode cannot run here, if it cannot.
pub fn missing_capability() -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("needs root to create cgroups".into());
    }
    let layout = match Layout::detect() {
        Ok(l) => l,
        Err(e) => return Some(e.to_string()),
    };
    // Unique per call: tests without the machine lock probe at the same time.
    static PROBES: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let probe = PROBES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let name = format!("pliant-probe-{}-{probe}", std::process::id());
    match layout.create_fresh(&name) {
        Ok((top, _)) => {
            let c = top.controllers();
            (!(c.cpu && c.memory && c.freezer))
                .then(|| format!("needs cpu, memory and freezer controllers, have {c:?}"))
        }
        Err(e) => Some(format!("cannot create a cgroup: {e}")),
    }
}

/// Serialises with the other live tests (swap and memory are machine-wide).
pub fn machine_lock() -> std::fs::File {
    use std::os::fd::AsRawFd;
    let path = std::env::temp_dir().join("pliant-live-tests.lock");
    let file = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(&path).expect("lock file");
    // SAFETY: flock only takes the descriptor; the lock goes with the file.
    assert_eq!(unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) }, 0);
    file
}

/// The machine lock for a live test `what`, or `None` when live tests were
/// not asked for (PLIANT_LIVE_TESTS=1: then nothing is touched) or (after
/// [`skip`]) when live mode cannot run here.
pub fn live_machine(what: &str) -> Option<std::fs::File> {
    if !pliant_xtest::live(what) {
        return None;
    }
    let lock = machine_lock();
    if let Some(reason) = missing_capability() {
        skip(&format!("{what}: {reason}"));
        return None;
    }
    Some(lock)
}

/// For a live test `what` whose tasks sleep in a few MB (no swap, no memory
/// pressure, next to no CPU): it needs cgroups but not the machine lock, so
/// it runs beside the test that holds it. `false` (after [`skip`]) when live
/// mode cannot run here.
pub fn live_without_lock(what: &str) -> bool {
    if !pliant_xtest::live(what) {
        return false;
    }
    match missing_capability() {
        Some(reason) => {
            skip(&format!("{what}: {reason}"));
            false
        }
        None => true,
    }
}

/// A port nobody listens on now, below Linux's ephemeral range (32768–60999):
/// a manager restarted on it after a SIGKILL cannot find it taken as the
/// source port of some other connection (`Address already in use`).
pub fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU16, Ordering};
    static NEXT: AtomicU16 = AtomicU16::new(0);
    let offset = (std::process::id() % 1_000) as u16 * 12;
    loop {
        let port = 20_000 + (offset + NEXT.fetch_add(1, Ordering::Relaxed) % 12_000) % 12_000;
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}
