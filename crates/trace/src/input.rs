//! Opening trace files: plain or gzip (by magic bytes, not by name), listed
//! one by one or as a directory, read line by line with line numbers and an
//! optional progress bar over the bytes read.

use crate::error::TraceError;
use flate2::read::MultiGzDecoder;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

/// Longest line accepted; a longer one is a bad row (and the rest of it is skipped).
const MAX_LINE: usize = 1 << 20;

/// Expands directories into their files (sorted by name, hidden files left
/// out); files are kept in the order given.
pub fn expand(paths: &[PathBuf]) -> Result<Vec<PathBuf>, TraceError> {
    let mut out = Vec::new();
    for p in paths {
        let meta = std::fs::metadata(p).map_err(|source| TraceError::Io { path: p.clone(), source })?;
        if meta.is_dir() {
            let entries = std::fs::read_dir(p).map_err(|source| TraceError::Io { path: p.clone(), source })?;
            let mut files = Vec::new();
            for e in entries {
                let e = e.map_err(|source| TraceError::Io { path: p.clone(), source })?;
                let hidden = e.file_name().to_string_lossy().starts_with('.');
                if !hidden && e.path().is_file() {
                    files.push(e.path());
                }
            }
            files.sort();
            out.extend(files);
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

/// The file name without a trailing `.gz`, for format detection.
pub fn base_name(path: &Path) -> String {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    name.strip_suffix(".gz").map(str::to_owned).unwrap_or(name)
}

/// A progress bar over the bytes of the input files, drawn on stderr and
/// hidden when stderr is not a terminal (or when disabled).
#[derive(Clone)]
pub struct Progress {
    bar: ProgressBar,
}

impl Progress {
    /// A bar for `files`; `enabled = false` gives a hidden one.
    pub fn new(enabled: bool, files: &[PathBuf]) -> Self {
        let total = files.iter().filter_map(|f| std::fs::metadata(f).ok()).map(|m| m.len()).sum();
        let target = if enabled { ProgressDrawTarget::stderr() } else { ProgressDrawTarget::hidden() };
        let bar = ProgressBar::with_draw_target(Some(total), target);
        if let Ok(style) = ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {elapsed} (eta {eta}) {msg}") {
            bar.set_style(style);
        }
        Progress { bar }
    }

    /// A hidden bar (for tests and library callers that want none).
    pub fn hidden() -> Self {
        Progress { bar: ProgressBar::hidden() }
    }

    /// Clears the bar once reading is done.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// Opens `path` as a byte stream, decompressing when it starts with the gzip
/// magic bytes; the bytes read advance `progress`.
pub fn open(path: &Path, progress: &Progress) -> Result<Box<dyn BufRead>, TraceError> {
    let file = File::open(path).map_err(|source| TraceError::Io { path: path.to_owned(), source })?;
    decompress(path, Box::new(progress.bar.wrap_read(file)))
}

/// Wraps any byte stream, decompressing it when it starts with the gzip magic
/// bytes; `path` names it in errors.
pub fn decompress(path: &Path, inner: Box<dyn Read>) -> Result<Box<dyn BufRead>, TraceError> {
    let mut raw = BufReader::with_capacity(1 << 16, inner);
    let head = raw.fill_buf().map_err(|source| TraceError::Io { path: path.to_owned(), source })?;
    Ok(if head.starts_with(&[0x1f, 0x8b]) {
        Box::new(BufReader::with_capacity(1 << 16, MultiGzDecoder::new(raw)))
    } else {
        Box::new(raw)
    })
}

/// A file read line by line, with its 1-based line number.
pub struct Lines {
    path: PathBuf,
    reader: Box<dyn BufRead>,
    buf: Vec<u8>,
    line: u64,
}

/// One line: its number and its text, or why it is not text.
pub type Line<'a> = (u64, Result<&'a str, String>);

impl Lines {
    /// Opens `path`, decompressing when it starts with the gzip magic bytes.
    pub fn open(path: &Path, progress: &Progress) -> Result<Self, TraceError> {
        Ok(Lines { path: path.to_owned(), reader: open(path, progress)?, buf: Vec::new(), line: 0 })
    }

    /// The file these lines come from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The next line (without its line break), `None` at the end. A read or
    /// decompression failure ends the file with an error naming the line.
    pub fn next_line(&mut self) -> Result<Option<Line<'_>>, TraceError> {
        self.buf.clear();
        let mut too_long = false;
        let mut any = false;
        loop {
            let chunk = match self.reader.fill_buf() {
                Ok(c) => c,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    return Err(TraceError::Row(crate::error::RowError {
                        file: self.path.clone(),
                        line: self.line + 1,
                        reason: format!("cannot read: {e}"),
                    }))
                }
            };
            if chunk.is_empty() {
                break;
            }
            any = true;
            let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
                Some(i) => (i + 1, true),
                None => (chunk.len(), false),
            };
            if self.buf.len() + take <= MAX_LINE {
                self.buf.extend_from_slice(&chunk[..take]);
            } else {
                too_long = true;
            }
            self.reader.consume(take);
            if done {
                break;
            }
        }
        if !any {
            return Ok(None);
        }
        self.line += 1;
        if too_long {
            return Ok(Some((self.line, Err(format!("line longer than {MAX_LINE} bytes")))));
        }
        let mut end = self.buf.len();
        while end > 0 && matches!(self.buf[end - 1], b'\n' | b'\r') {
            end -= 1;
        }
        let text = std::str::from_utf8(&self.buf[..end]).map_err(|e| format!("not UTF-8 text: {e}"));
        Ok(Some((self.line, text)))
    }
}

/// True when a CSV line is a header row: every field a column name (a word of
/// letters, digits, `_` or spaces, starting with a letter), none of them a number.
pub fn is_header(line: &str) -> bool {
    line.split(',').all(|f| {
        let f = f.trim();
        f.starts_with(|c: char| c.is_ascii_alphabetic())
            && f.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ' ')
            && f.parse::<f64>().is_err()
    }) && line.contains('_')
}
