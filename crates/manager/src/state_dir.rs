//! The manager's state directory: resolved to an absolute path at start
//! (agents, which may run in other directories or on other machines, are
//! sent paths inside it) and readable by its owner only (it holds the
//! journal with every command line, the tasks' output and the token).

use std::os::unix::fs::PermissionsExt;
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

/// Makes `dir` absolute (and free of `..` and symbolic links), refuses it
/// unless every component of the path that reaches it is safe and it is
/// this user's, writable by nobody else ([`pliant_live::strict::make_dir`]:
/// checked before anything is made, the missing directories then made mode
/// [`MODE`]), and takes group and other read access away from it if it has
/// any; `log` hears of that.
pub fn prepare(dir: &Path, log: &dyn Fn(&str)) -> Result<PathBuf, String> {
    let dir = pliant_live::strict::make_dir(dir, "state directory", MODE)?;
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
/// (0 bytes; SQLite writes a journal's first page as it enters WAL mode,
/// before any write-ahead log exists, so a log beside an empty journal
/// cannot rebuild it), or missing where `logs/` shows that a cluster ran
/// here. Either would start a new, empty cluster over the old one's tasks
/// and logs without a word. Nothing is opened or written before.
pub fn check_journal(dir: &Path) -> Result<(), String> {
    let journal = dir.join("journal.sqlite");
    let size = |path: &Path| std::fs::metadata(path).map(|m| m.len()).ok();
    let wal = match size(&dir.join("journal.sqlite-wal")) {
        Some(1..) => " beside a write-ahead log, which cannot rebuild it",
        _ => "",
    };
    match size(&journal) {
        Some(0) => Err(format!(
            "{}: the journal is lost (empty: 0 bytes{wal}): the state of the cluster that ran here is gone, and \
             starting would make a new, empty cluster beside its tasks; restore the journal from a backup, or \
             move {} aside to start a new cluster",
            journal.display(),
            dir.display()
        )),
        None if dir.join("logs").is_dir() => Err(format!(
            "{}: the journal is lost (missing, but {} holds the logs of a cluster that ran here): starting would \
             make a new, empty cluster beside its tasks; restore the journal from a backup, or remove {} (or use \
             another --state-dir) to start a new cluster",
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
        // A new state directory: fine.
        prepare(&dir, &|_| {}).unwrap();
        // Emptied, with or without its write-ahead log: refused alike.
        std::fs::write(dir.join("journal.sqlite"), b"").unwrap();
        std::fs::write(dir.join("journal.sqlite-wal"), b"wal frames").unwrap();
        let err = prepare(&dir, &|_| {}).unwrap_err();
        assert!(err.contains("journal.sqlite: the journal is lost (empty: 0 bytes beside a write-ahead log"), "{err}");
        std::fs::remove_file(dir.join("journal.sqlite-wal")).unwrap();
        let err = prepare(&dir, &|_| {}).unwrap_err();
        assert!(err.contains("journal.sqlite: the journal is lost (empty: 0 bytes)"), "{err}");
        // Deleted after tasks ran (their logs stay): refused, naming the logs.
        std::fs::remove_file(dir.join("journal.sqlite")).unwrap();
        std::fs::create_dir(dir.join("logs")).unwrap();
        let err = prepare(&dir, &|_| {}).unwrap_err();
        assert!(err.contains("the journal is lost (missing, but") && err.contains("logs"), "{err}");
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
