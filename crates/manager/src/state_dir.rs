//! The manager's state directory: resolved to an absolute path at start
//! (agents, which may run in other directories or on other machines, are
//! sent paths inside it) and readable by its owner only (it holds the
//! journal with every command line, the tasks' output and the token).

use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Mode of the state directory: its owner's only.
pub const MODE: u32 = 0o700;

/// The state directory of a manager run as root when none is named.
pub const SYSTEM_DEFAULT: &str = "/var/lib/pliant";
/// The state directory of a manager run as another user when none is
/// named: `pliant-state` in the directory it starts in.
pub const USER_DEFAULT: &str = "pliant-state";

/// The state directory when none is named: [`SYSTEM_DEFAULT`] for root,
/// else [`USER_DEFAULT`] (clients look for the token and the certificate there too).
pub fn default_dir() -> PathBuf {
    PathBuf::from(if pliant_live::confine::running_as_root() { SYSTEM_DEFAULT } else { USER_DEFAULT })
}

/// Makes `dir` absolute (and free of `..` and symbolic links), creates it
/// (mode [`MODE`]) if it is missing, refuses it unless it and the
/// directories above it are safe ([`pliant_live::strict::check_dir`]: this user's,
/// writable by nobody else), and takes group and other read access away
/// from it if it has any; `log` hears of that.
pub fn prepare(dir: &Path, log: &dyn Fn(&str)) -> Result<PathBuf, String> {
    let dir = std::path::absolute(dir).map_err(|e| format!("--state-dir {}: {e}", dir.display()))?;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(MODE)
        .create(&dir)
        .map_err(|e| format!("cannot create the state directory {}: {e}", dir.display()))?;
    let dir = std::fs::canonicalize(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    pliant_live::strict::check_dir(&dir, "state directory")?;
    let mode = std::fs::metadata(&dir).map_err(|e| format!("{}: {e}", dir.display()))?.permissions().mode();
    if mode & 0o077 != 0 {
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(MODE))
            .map_err(|e| format!("cannot make {} private (chmod 700 it): {e}", dir.display()))?;
        log(&format!("{} could be read by other users: made private (mode 700)", dir.display()));
    }
    check_journal(&dir)?;
    Ok(dir)
}

/// Refuses a state directory whose journal is lost: `journal.sqlite` empty
/// with no write-ahead log beside it, or missing where `logs/` shows that a
/// cluster ran here. Either would start a new, empty cluster over the old
/// one's tasks and logs without a word.
fn check_journal(dir: &Path) -> Result<(), String> {
    let journal = dir.join("journal.sqlite");
    let size = |path: &Path| std::fs::metadata(path).map(|m| m.len()).ok();
    match size(&journal) {
        Some(0) if size(&dir.join("journal.sqlite-wal")).unwrap_or(0) == 0 => Err(format!(
            "{}: the journal is empty (0 bytes, no write-ahead log): the state of the cluster that ran here is lost, \
             and starting would make a new, empty cluster beside its tasks; restore the journal from a backup, \
             or move {} aside to start a new cluster",
            journal.display(),
            dir.display()
        )),
        None if dir.join("logs").is_dir() => Err(format!(
            "{}: the journal is missing, but {} holds the logs of a cluster that ran here: starting would make a \
             new, empty cluster beside its tasks; restore the journal from a backup, or remove {} (or use another \
             --state-dir) to start a new cluster",
            journal.display(),
            dir.join("logs").display(),
            dir.join("logs").display()
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lost_journal_is_refused_not_replaced_by_a_new_cluster() {
        let scratch = pliant_live::scratch::ScratchDir::new("pliant-lost-journal").unwrap();
        let dir = scratch.path().join("state");
        // A new state directory, then one whose journal is being written: both fine.
        prepare(&dir, &|_| {}).unwrap();
        std::fs::write(dir.join("journal.sqlite"), b"").unwrap();
        std::fs::write(dir.join("journal.sqlite-wal"), b"wal frames").unwrap();
        prepare(&dir, &|_| {}).unwrap();
        // Emptied, with no write-ahead log: refused.
        std::fs::remove_file(dir.join("journal.sqlite-wal")).unwrap();
        let err = prepare(&dir, &|_| {}).unwrap_err();
        assert!(err.contains("journal.sqlite: the journal is empty"), "{err}");
        // Deleted after tasks ran (their logs stay): refused, naming the logs.
        std::fs::remove_file(dir.join("journal.sqlite")).unwrap();
        std::fs::create_dir(dir.join("logs")).unwrap();
        let err = prepare(&dir, &|_| {}).unwrap_err();
        assert!(err.contains("the journal is missing") && err.contains("logs"), "{err}");
        // The logs removed, as the message says: a new cluster may start.
        std::fs::remove_dir(dir.join("logs")).unwrap();
        prepare(&dir, &|_| {}).unwrap();
    }

    #[test]
    fn a_relative_directory_becomes_absolute_and_private() {
        let scratch = pliant_live::scratch::ScratchDir::new("pliant-state-dir").unwrap();
        let open = scratch.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).unwrap();
        let said = std::cell::RefCell::new(Vec::new());
        let dir = prepare(&open, &|m| said.borrow_mut().push(m.to_string())).unwrap();
        assert_eq!(std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o700);
        assert_eq!(said.borrow().len(), 1, "{said:?}");
        let relative = Path::new("pliant-state-dir-test-relative");
        let made = prepare(relative, &|_| {}).unwrap();
        std::fs::remove_dir(&made).unwrap();
        assert!(made.is_absolute(), "{}", made.display());
        assert!(made.ends_with(relative));
    }
}
