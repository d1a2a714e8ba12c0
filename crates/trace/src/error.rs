//! Errors: a bad row names its file, line and reason; a [`BadRows`] tally
//! collects the skipped ones when the reader is not strict.

use std::fmt;
use std::path::PathBuf;

/// How many bad rows a summary keeps word for word.
const KEPT_EXAMPLES: usize = 10;

/// One malformed row (or record) of an input file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowError {
    /// The file the row came from.
    pub file: PathBuf,
    /// 1-based line number (for JSON records: the line where the record ends).
    pub line: u64,
    /// What is wrong.
    pub reason: String,
}

impl fmt::Display for RowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file.display(), self.line, self.reason)
    }
}

/// Why a trace could not be read.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// A file or directory could not be opened or read.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A malformed row, in strict mode (or a stream that cannot go on).
    #[error("{0}")]
    Row(RowError),
    /// The inputs are not in any supported format, or are mixed.
    #[error("{0}")]
    Format(String),
    /// Options that cannot work together or with this input.
    #[error("{0}")]
    Options(String),
    /// The native workload file was rejected by `pliant-workload`.
    #[error("{path}: {source}")]
    Native {
        /// The path.
        path: PathBuf,
        /// The reader's error.
        source: pliant_workload::FormatError,
    },
    /// The resulting workload cannot run (e.g. no job left after filtering).
    #[error("{0}")]
    Workload(String),
}

/// The bad rows met so far: a count and the first few, word for word.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BadRows {
    /// Number of bad rows skipped.
    pub count: u64,
    /// The first few of them.
    pub examples: Vec<RowError>,
}

impl BadRows {
    /// Records one bad row: an error in strict mode, a tally otherwise.
    pub fn record(&mut self, e: RowError, strict: bool) -> Result<(), TraceError> {
        if strict {
            return Err(TraceError::Row(e));
        }
        self.count += 1;
        if self.examples.len() < KEPT_EXAMPLES {
            self.examples.push(e);
        }
        Ok(())
    }

    /// Adds another tally to this one.
    pub fn merge(&mut self, other: BadRows) {
        self.count += other.count;
        let room = KEPT_EXAMPLES.saturating_sub(self.examples.len());
        self.examples.extend(other.examples.into_iter().take(room));
    }
}
