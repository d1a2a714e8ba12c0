//! Helpers the reader tests share: the fixtures and a read that collects the jobs.

use pliant_trace::input::Progress;
use pliant_trace::{detect, read_trace, ReadOptions, ReadReport, TraceJob};
use std::path::PathBuf;

/// A file or directory under `tests/fixtures`.
pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures")).join(name)
}

/// Every job of fixture `name` read with `opts`, in the order handed out, and the report.
pub fn read(name: &str, opts: &ReadOptions) -> (Vec<TraceJob>, ReadReport) {
    let inputs = detect(&[fixture(name)]).unwrap();
    let mut jobs = Vec::new();
    let rep = read_trace(&inputs, opts, &Progress::hidden(), &mut |j| {
        jobs.push(j);
        Ok(())
    })
    .unwrap();
    (jobs, rep)
}
