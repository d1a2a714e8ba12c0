//! The durable journal: an embedded SQLite file holding the cluster's
//! configuration and every scheduling step — its time, the events it took in,
//! whether the resource monitor ran, and the actions that came out. A step is
//! committed before any of its actions is carried out, and the core is
//! deterministic, so replaying the steps rebuilds the manager exactly.

use crate::events::Event;
use pliant_live::stepper::TEXT_ACTIONS;
use rusqlite::{params, Connection, OptionalExtension};
use serde::{de::DeserializeOwned, Serialize};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// A journal that cannot be opened, read or written.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// SQLite refused.
    #[error("journal {path}: {source}")]
    Sqlite {
        /// The journal file.
        path: String,
        /// What SQLite said.
        source: rusqlite::Error,
    },
    /// The file could not be created or made private.
    #[error("journal {path}: {source}")]
    Io {
        /// The journal file.
        path: String,
        /// What the system said.
        source: std::io::Error,
    },
    /// A row does not hold what this version of pliant wrote.
    #[error("journal {path}: step {seq}: {reason}")]
    Corrupt {
        /// The journal file.
        path: String,
        /// The step.
        seq: i64,
        /// What is wrong.
        reason: String,
    },
}

impl JournalError {
    /// True when SQLite found its file system full (SQLITE_FULL).
    pub fn is_disk_full(&self) -> bool {
        matches!(self, JournalError::Sqlite { source: rusqlite::Error::SqliteFailure(e, _), .. }
            if e.code == rusqlite::ErrorCode::DiskFull)
    }
}

/// One scheduling step as journaled.
pub type Step = pliant_live::stepper::Step<Event>;

/// The open journal.
pub struct Journal {
    conn: Connection,
    path: String,
}

impl Journal {
    /// Opens (or creates) the journal at `path`, readable by its owner only
    /// (SQLite gives its `-wal` and `-shm` files the same mode).
    pub fn open(path: &Path) -> Result<Journal, JournalError> {
        let name = path.display().to_string();
        let err = |source| JournalError::Sqlite { path: name.clone(), source };
        let io = |source| JournalError::Io { path: name.clone(), source };
        std::fs::OpenOptions::new().create(true).append(true).mode(0o600).open(path).map_err(io)?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(io)?;
        let conn = Connection::open(path).map_err(err)?;
        conn.execute_batch(
            "PRAGMA journal_mode = WAL;
             PRAGMA synchronous = FULL;
             CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
             CREATE TABLE IF NOT EXISTS steps (
                 seq INTEGER PRIMARY KEY,
                 now INTEGER NOT NULL,
                 monitor INTEGER NOT NULL,
                 events TEXT NOT NULL,
                 actions TEXT NOT NULL
             );",
        )
        .map_err(err)?;
        Ok(Journal { conn, path: name })
    }

    fn sqlite(&self, source: rusqlite::Error) -> JournalError {
        JournalError::Sqlite { path: self.path.clone(), source }
    }

    /// Reads the value stored under `key`, if any.
    pub fn get<T: DeserializeOwned>(&self, key: &str) -> Result<Option<T>, JournalError> {
        let text: Option<String> = self
            .conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()
            .map_err(|e| self.sqlite(e))?;
        text.map(|t| {
            serde_json::from_str(&t).map_err(|e| JournalError::Corrupt {
                path: self.path.clone(),
                seq: 0,
                reason: format!("meta `{key}`: {e}"),
            })
        })
        .transpose()
    }

    /// Stores `value` under `key`.
    pub fn put<T: Serialize>(&self, key: &str, value: &T) -> Result<(), JournalError> {
        let text = serde_json::to_string(value).expect("journal values serialise");
        self.conn
            .execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)", params![key, text])
            .map_err(|e| self.sqlite(e))?;
        Ok(())
    }

    /// Appends a step; it is on disk when this returns.
    pub fn append(&self, step: &Step) -> Result<(), JournalError> {
        let events = serde_json::to_string(&step.events).expect("events serialise");
        let actions = serde_json::to_string(&step.actions).expect("actions serialise");
        self.conn
            .execute(
                "INSERT INTO steps (now, monitor, events, actions) VALUES (?1, ?2, ?3, ?4)",
                params![step.now as i64, step.monitor, events, actions],
            )
            .map_err(|e| self.sqlite(e))?;
        Ok(())
    }

    /// Every step, in order.
    pub fn steps(&self) -> Result<Vec<Step>, JournalError> {
        let mut stmt = self
            .conn
            .prepare("SELECT seq, now, monitor, events, actions FROM steps ORDER BY seq")
            .map_err(|e| self.sqlite(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, bool>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                ))
            })
            .map_err(|e| self.sqlite(e))?;
        let mut steps = Vec::new();
        for row in rows {
            let (seq, now, monitor, events, actions) = row.map_err(|e| self.sqlite(e))?;
            let corrupt = |reason: String| JournalError::Corrupt { path: self.path.clone(), seq, reason };
            steps.push(Step {
                now: u64::try_from(now).map_err(|_| corrupt(format!("negative time {now}")))?,
                monitor,
                events: serde_json::from_str(&events).map_err(|e| corrupt(format!("events: {e}")))?,
                actions: serde_json::from_str(&actions).map_err(|e| match actions.starts_with("[\"") {
                    true => corrupt(TEXT_ACTIONS.into()),
                    false => corrupt(format!("actions: {e}")),
                })?,
            });
        }
        Ok(steps)
    }

    /// The number of steps journaled.
    pub fn len(&self) -> Result<u64, JournalError> {
        let n: i64 = self.conn.query_row("SELECT COUNT(*) FROM steps", [], |r| r.get(0)).map_err(|e| self.sqlite(e))?;
        Ok(n as u64)
    }

    /// True when no step is journaled.
    pub fn is_empty(&self) -> Result<bool, JournalError> {
        Ok(self.len()? == 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pliant_core::model::{JobId, TaskRef};
    use pliant_core::Action;

    #[test]
    fn steps_and_meta_survive_reopening() {
        let dir = pliant_live::scratch::ScratchDir::new("pliant-journal").unwrap();
        let path = dir.path().join("journal.sqlite");
        let step = Step {
            now: 1_500_000,
            events: vec![Event::Cancelled { job: JobId(3) }],
            monitor: true,
            actions: vec![Action::Kill { task: TaskRef { job: JobId(3), task: 0 } }],
        };
        {
            let j = Journal::open(&path).unwrap();
            assert!(j.is_empty().unwrap());
            j.put("epoch", &42u64).unwrap();
            j.append(&step).unwrap();
            j.append(&Step { now: 2, events: vec![], monitor: false, actions: vec![] }).unwrap();
        }
        let j = Journal::open(&path).unwrap();
        assert_eq!(j.get::<u64>("epoch").unwrap(), Some(42));
        assert_eq!(j.get::<u64>("missing").unwrap(), None);
        let steps = j.steps().unwrap();
        assert_eq!(steps.len(), 2);
        assert_eq!(steps[0], step);
        assert_eq!(steps[1].now, 2);
    }

    #[test]
    fn a_row_this_version_did_not_write_is_reported_with_its_step() {
        let dir = pliant_live::scratch::ScratchDir::new("pliant-journal-bad").unwrap();
        let path = dir.path().join("journal.sqlite");
        let j = Journal::open(&path).unwrap();
        j.conn.execute("INSERT INTO steps (now, monitor, events, actions) VALUES (5, 0, 'nope', '[]')", []).unwrap();
        let err = j.steps().unwrap_err().to_string();
        assert!(err.contains("step 1: events:"), "{err}");
    }

    #[test]
    fn a_journal_with_actions_as_text_is_refused_with_why() {
        let dir = pliant_live::scratch::ScratchDir::new("pliant-journal-text").unwrap();
        let j = Journal::open(&dir.path().join("journal.sqlite")).unwrap();
        j.conn
            .execute(
                "INSERT INTO steps (now, monitor, events, actions) VALUES (5, 0, '[]', ?1)",
                [r#"["Kill { task: TaskRef { job: JobId(3), task: 0 } }"]"#],
            )
            .unwrap();
        let err = j.steps().unwrap_err().to_string();
        assert!(err.contains("step 1: its actions are text, as an older pliant journaled them"), "{err}");
    }
}
