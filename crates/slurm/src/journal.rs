//! The controller's journal: one JSON document per line — the cluster
//! first, then every scheduling step (its instant, the events it took in,
//! whether the monitor ran, the actions it decided). Each line is on disk
//! (`fsync`) before the step's actions reach Slurm, so a controller killed
//! at any point replays to the state it had decided. A last line torn by
//! the kill is dropped.

use serde::de::DeserializeOwned;
use serde::Serialize;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// A journal that could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// Reading or writing the file failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The journal file.
        path: PathBuf,
        /// What failed.
        source: io::Error,
    },
    /// A line is not a journal entry.
    #[error("{}:{line}: {reason}", path.display())]
    Corrupt {
        /// The journal file.
        path: PathBuf,
        /// Its 1-based line number.
        line: usize,
        /// Why it does not parse.
        reason: String,
    },
}

pub use pliant_live::stepper::Step;
use pliant_live::stepper::TEXT_ACTIONS;

/// What a journal holds: its cluster entry and its steps.
pub type Contents<C, E> = (Option<C>, Vec<Step<E>>);

/// The journal file, open for appending.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    file: File,
}

impl Journal {
    /// Opens (or creates) the journal at `path`; returns it with the cluster
    /// entry and the steps it holds.
    pub fn open<C: DeserializeOwned, E: DeserializeOwned>(
        path: &Path,
    ) -> Result<(Journal, Contents<C, E>), JournalError> {
        let io_err = |source| JournalError::Io { path: path.into(), source };
        let mut file = OpenOptions::new().create(true).read(true).append(true).open(path).map_err(io_err)?;
        let mut text = String::new();
        file.read_to_string(&mut text).map_err(io_err)?;
        // A last line without its newline was torn by a kill in the middle
        // of its write: its step was never acted on. It is cut off, so that
        // the next line does not glue onto it.
        let whole = text.rfind('\n').map_or(0, |i| i + 1);
        if whole < text.len() {
            file.set_len(whole as u64).map_err(io_err)?;
        }
        Ok((Journal { path: path.into(), file }, parse(path, &text[..whole])?))
    }

    /// Reads the journal at `path` without opening it for writing (a
    /// controller may be appending to it): its cluster entry and its whole
    /// steps, a torn last line left out.
    pub fn read<C: DeserializeOwned, E: DeserializeOwned>(path: &Path) -> Result<Contents<C, E>, JournalError> {
        let text = std::fs::read_to_string(path).map_err(|source| JournalError::Io { path: path.into(), source })?;
        parse(path, &text[..text.rfind('\n').map_or(0, |i| i + 1)])
    }

    /// Writes the cluster entry of a new journal.
    pub fn start<C: Serialize>(&mut self, config: &C) -> Result<(), JournalError> {
        self.write_line(&serde_json::to_string(config).expect("a config serialises"))
    }

    /// Appends one step.
    pub fn append<E: Serialize>(&mut self, step: &Step<E>) -> Result<(), JournalError> {
        self.write_line(&serde_json::to_string(step).expect("a step serialises"))
    }

    fn write_line(&mut self, line: &str) -> Result<(), JournalError> {
        let io_err = |source| JournalError::Io { path: self.path.clone(), source };
        let mut text = String::with_capacity(line.len() + 2);
        text.push_str(line);
        text.push('\n');
        self.file.write_all(text.as_bytes()).map_err(io_err)?;
        self.file.sync_data().map_err(io_err)
    }
}

/// The entries of the whole lines `text` of the journal at `path`.
fn parse<C: DeserializeOwned, E: DeserializeOwned>(path: &Path, text: &str) -> Result<Contents<C, E>, JournalError> {
    let (mut config, mut steps) = (None, Vec::new());
    for (i, line) in text.lines().enumerate() {
        let corrupt = |reason: String| JournalError::Corrupt { path: path.into(), line: i + 1, reason };
        if i == 0 {
            config = Some(serde_json::from_str::<C>(line).map_err(|e| corrupt(e.to_string()))?);
        } else {
            let step = serde_json::from_str::<Step<E>>(line);
            steps.push(step.map_err(|e| match line.contains(r#""actions":[""#) {
                true => corrupt(TEXT_ACTIONS.into()),
                false => corrupt(e.to_string()),
            })?);
        }
    }
    Ok((config, steps))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pliant_core::model::{JobId, NodeId, TaskRef};
    use pliant_core::{Action, Resources};

    fn launch() -> Action {
        Action::Launch {
            task: TaskRef { job: JobId(1), task: 0 },
            node: NodeId(2),
            resources: Resources::new(1000, 64),
        }
    }

    #[test]
    fn steps_come_back_and_a_torn_last_line_is_dropped() {
        let dir = std::env::temp_dir().join(format!("pliant-slurm-journal-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("journal.jsonl");
        let _ = std::fs::remove_file(&path);
        {
            let (mut j, (config, steps)) = Journal::open::<String, u32>(&path).unwrap();
            assert_eq!((config, steps.len()), (None, 0));
            j.start(&"cluster".to_string()).unwrap();
            j.append(&Step { now: 5, events: vec![1u32, 2], monitor: true, actions: vec![launch()] }).unwrap();
        }
        std::fs::OpenOptions::new().append(true).open(&path).unwrap().write_all(b"{\"now\":9,\"ev").unwrap();
        let first = Step { now: 5, events: vec![1u32, 2], monitor: true, actions: vec![launch()] };
        let torn = std::fs::metadata(&path).unwrap().len();
        let (config, steps) = Journal::read::<String, u32>(&path).unwrap();
        assert_eq!((config.as_deref(), steps), (Some("cluster"), vec![first.clone()]));
        assert_eq!(std::fs::metadata(&path).unwrap().len(), torn, "reading leaves the file as it is");
        let (mut j, (config, steps)) = Journal::open::<String, u32>(&path).unwrap();
        assert_eq!(config.as_deref(), Some("cluster"));
        assert_eq!(steps, vec![first.clone()]);
        let second = Step { now: 7, events: vec![3u32], monitor: false, actions: vec![] };
        j.append(&second).unwrap();
        let (_, (_, steps)) = Journal::open::<String, u32>(&path).unwrap();
        assert_eq!(steps, vec![first, second]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_journal_with_actions_as_text_is_refused_with_why() {
        let dir = std::env::temp_dir().join(format!("pliant-slurm-journal-text-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("journal.jsonl");
        std::fs::write(&path, "\"cluster\"\n{\"now\":5,\"events\":[],\"monitor\":false,\"actions\":[\"Launch\"]}\n")
            .unwrap();
        let err = Journal::read::<String, u32>(&path).unwrap_err().to_string();
        assert!(err.ends_with(":2: its actions are text, as an older pliant journaled them, which this version does not replay: finish that cluster's work with the version that wrote it, or start from a new state directory"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
