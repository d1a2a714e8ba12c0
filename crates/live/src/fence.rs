//! Fencing: a node's tasks must not outlive its contact with the manager,
//! or a task the manager requeued elsewhere would run twice. The agent
//! stamps a contact file with the time it sent each heartbeat that got
//! through; a watchdog process, which outlives a killed agent, kills every
//! task of the agent's cgroup once that stamp is older than the manager's
//! agent timeout (plus half the manager's margin: the agent itself stops its
//! tasks at the timeout, and reports them lost, when it is alive to do so).
//! The manager requeues a silent node's tasks only after the timeout plus
//! the whole margin ([`requeue_after`]), so the two runs never overlap.

use crate::cgroup::Layout;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// How often the watchdog looks at the contact file.
const WATCH_PERIOD: Duration = Duration::from_millis(100);

/// The manager's margin past an agent timeout `timeout` before it requeues
/// the silent node's tasks: half the timeout, at least 3 s.
pub fn margin(timeout: Duration) -> Duration {
    (timeout / 2).max(Duration::from_secs(3))
}

/// When the manager requeues the tasks of a node silent since its last
/// heartbeat: `timeout` plus [`margin`].
pub fn requeue_after(timeout: Duration) -> Duration {
    timeout + margin(timeout)
}

/// When the watchdog kills the tasks of an agent silent that long: between
/// the agent's own deadline (`timeout`) and the manager's requeue.
pub fn watchdog_after(timeout: Duration) -> Duration {
    timeout + margin(timeout) / 2
}

/// The file whose modification time is the agent's last contact with the manager.
#[derive(Debug, Clone)]
pub struct Contact {
    file: PathBuf,
}

impl Contact {
    /// The contact file `file` (created at the first [`Contact::stamp`]).
    pub fn new(file: PathBuf) -> Contact {
        Contact { file }
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.file
    }

    /// Records that a heartbeat sent at `sent` got through.
    pub fn stamp(&self, sent: SystemTime) -> std::io::Result<()> {
        let f = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(&self.file)?;
        f.set_modified(sent)
    }

    /// The last contact, if there was one.
    pub fn last(&self) -> Option<SystemTime> {
        std::fs::metadata(&self.file).and_then(|m| m.modified()).ok()
    }

    /// How long ago the last contact was (`None`: never).
    pub fn age(&self) -> Option<Duration> {
        self.last().map(|t| SystemTime::now().duration_since(t).unwrap_or(Duration::ZERO))
    }
}

/// The watchdog's loop: once `contact` is older than `after`, every task
/// cgroup under the top cgroup `top` is killed and removed, with a line to
/// `log`. It returns once its agent (`parent`, a process id) is gone and no
/// task is left to guard.
pub fn watch(layout: &Layout, top: &str, contact: &Contact, after: Duration, parent: u32, log: &dyn Fn(&str)) {
    loop {
        std::thread::sleep(WATCH_PERIOD);
        let stale = !matches!(contact.age(), Some(age) if age <= after);
        let tasks = layout.open(top).map(|top| {
            let names = top.children().unwrap_or_default();
            if stale && !names.is_empty() {
                for name in &names {
                    if let Some(task) = top.open_child(name) {
                        if let Err(e) = task.remove() {
                            log(&format!("cannot stop {name}: {e}"));
                        }
                    }
                }
                log(&format!(
                    "no contact with the manager for over {:.1} s: killed {} (fencing: the manager runs them elsewhere)",
                    after.as_secs_f64(),
                    names.join(", ")
                ));
            }
            let left = top.children().map_or(0, |c| c.len());
            // The agent's cgroup is its agent's to remove.
            std::mem::forget(top);
            left
        });
        // SAFETY: getppid has no preconditions.
        let orphaned = unsafe { libc::getppid() } as u32 != parent;
        if orphaned && tasks.unwrap_or(0) == 0 {
            return;
        }
    }
}
