//! The manager's state directory: resolved to an absolute path at start
//! (agents, which may run in other directories or on other machines, are
//! sent paths inside it) and readable by its owner only (it holds the
//! journal with every command line, the tasks' output and the token).

use std::path::{Path, PathBuf};

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

/// The manager's state directory `dir`, made absolute and private
/// ([`pliant_live::daemon::private_state_dir`]; `log` hears what was
/// changed), refused where its journal is lost ([`check_journal`]).
pub fn prepare(dir: &Path, log: &dyn Fn(&str)) -> Result<PathBuf, String> {
    let dir = pliant_live::daemon::private_state_dir(dir, log)?;
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
}
