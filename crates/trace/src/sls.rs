//! YARN Scheduler Load Simulator (SLS) JSON: a stream of job objects (or
//! arrays of them), pretty-printed or not.
//!
//! Job fields: `job.id` (string or number), `job.start.ms` (required),
//! `job.end.ms`, `job.priority` (0–11, default 0), `job.tasks` (required, non-empty).
//! Task-class fields: `count` or `container.count` (default 1), duration from
//! `duration.ms` / `container.duration.ms` or else `container.end.ms −
//! container.start.ms`, `container.memory` (MB, default 1024),
//! `container.vcores` (default 1), `container.type` (`map`, `reduce`, …;
//! default `map`). `container.priority` orders containers inside a YARN
//! application and has no pliant counterpart; it is ignored.
//!
//! DSS's variant (the YARN-ME paper's simulator, epfl-labos/DSS) is read too:
//! task classes with `c.nr` (count), `c.dur` (duration, ms), `c.mem` (MB),
//! `c.cores` (default 1), `c.type` (`MAP`/`REDUCE`, any case) and `c.prio`
//! (ignored, like `container.priority`).
//!
//! Phases: one per container type in order of appearance, `map` first; `reduce`
//! waits for `map`; other types are independent. A job's duration in the trace is
//! `job.end.ms − job.start.ms`, or its last `container.end.ms`, or the longest
//! map plus the longest reduce.
//!
//! A record that is not valid JSON ends the file (a JSON stream cannot be
//! resynchronised); a valid record with bad fields is a bad row.

use crate::error::{BadRows, RowError, TraceError};
use crate::input::{open, Progress};
use crate::record::{task, ReadOptions, TraceJob};
use pliant_core::{Micros, Resources};
use pliant_workload::Phase;
use serde_json::{Map, Value};
use std::cell::Cell;
use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// Most containers one task class may ask for.
const MAX_COUNT: u64 = 1_000_000;

/// What an SLS read found besides the jobs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SlsReport {
    /// Job records read, bad ones included.
    pub rows: u64,
    /// Bad records skipped.
    pub bad: BadRows,
    /// Jobs handed out.
    pub jobs: u64,
    /// Tasks handed out.
    pub tasks: u64,
}

/// Counts the lines of the bytes that pass through, so errors can name one.
struct LineCount<R> {
    inner: R,
    seen: Rc<Cell<Seen>>,
}

/// Bytes and line breaks read so far, and whether the last byte was a line break.
#[derive(Clone, Copy, Default)]
struct Seen {
    bytes: u64,
    breaks: u64,
    last_break: bool,
}

impl Seen {
    /// The 1-based line of the byte just before `offset` (the JSON parser reads
    /// at most one byte past a record).
    fn line_at(&self, offset: u64) -> u64 {
        let peeked_break = self.last_break && self.bytes > offset;
        self.breaks - u64::from(peeked_break) + 1
    }
}

impl<R: BufRead> Read for LineCount<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let mut s = self.seen.get();
        s.bytes += n as u64;
        s.breaks += buf[..n].iter().filter(|&&b| b == b'\n').count() as u64;
        if n > 0 {
            s.last_break = buf[n - 1] == b'\n';
        }
        self.seen.set(s);
        Ok(n)
    }
}

fn ms(v: Option<&Value>, name: &str) -> Result<Option<Micros>, String> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(x) => match x.as_f64() {
            Some(f) if f.is_finite() && (0.0..1e15).contains(&f) => Ok(Some((f * 1000.0).round() as Micros)),
            _ => Err(format!("`{name}` must be a non-negative number of milliseconds, got {x}")),
        },
    }
}

fn count(v: Option<&Value>, name: &str, default: u64, max: u64) -> Result<u64, String> {
    match v {
        None | Some(Value::Null) => Ok(default),
        Some(x) => match x.as_f64() {
            Some(f) if f.is_finite() && f >= 0.0 && f <= max as f64 && f.fract() == 0.0 => Ok(f as u64),
            _ => Err(format!("`{name}` must be a whole number from 0 to {max}, got {x}")),
        },
    }
}

/// The first of `names` that `o` has, with the name it has it under (so an
/// error names the field as the file spells it: `c.mem` in a DSS trace).
fn first<'a>(o: &'a Map<String, Value>, names: &[&'static str]) -> (&'static str, Option<&'a Value>) {
    names.iter().find_map(|&n| o.get(n).map(|v| (n, Some(v)))).unwrap_or((names[0], None))
}

fn job_from(v: &Value, n: u64) -> Result<(TraceJob, u64), String> {
    let o = v.as_object().ok_or("a job record must be a JSON object")?;
    let submit = ms(o.get("job.start.ms"), "job.start.ms")?.ok_or("missing `job.start.ms`")?;
    let id = match o.get("job.id") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(x)) => x.to_string(),
        None => format!("sls-{n}"),
        Some(x) => return Err(format!("`job.id` must be a string or a number, got {x}")),
    };
    let priority = count(o.get("job.priority"), "job.priority", 0, 11)? as u8;
    let classes =
        o.get("job.tasks").and_then(Value::as_array).ok_or("missing `job.tasks` (an array of task classes)")?;
    let mut types: Vec<(String, Vec<pliant_workload::Task>, Micros)> = Vec::new();
    let mut last_end: Option<Micros> = None;
    let mut total = 0;
    for c in classes {
        let c = c.as_object().ok_or("each of `job.tasks` must be an object")?;
        let (name, v) = first(c, &["count", "container.count", "c.nr"]);
        let n = count(v, name, 1, MAX_COUNT)?;
        let start = ms(c.get("container.start.ms"), "container.start.ms")?;
        let end = ms(c.get("container.end.ms"), "container.end.ms")?;
        let (name, v) = first(c, &["duration.ms", "container.duration.ms", "c.dur"]);
        let duration = match (ms(v, name)?, start, end) {
            (Some(d), _, _) => d,
            (None, Some(s), Some(e)) if e >= s => e - s,
            _ => {
                return Err("a task class needs `duration.ms` (DSS: `c.dur`) or `container.start.ms` ≤ \
                            `container.end.ms`"
                    .into())
            }
        };
        if let Some(e) = end {
            last_end = Some(last_end.map_or(e, |l: Micros| l.max(e)));
        }
        let (name, v) = first(c, &["container.memory", "c.mem"]);
        let mem = count(v, name, 1024, 1 << 30)?;
        let vcores = match first(c, &["container.vcores", "c.cores"]) {
            (_, None | Some(Value::Null)) => 1.0,
            (name, Some(x)) => x
                .as_f64()
                .filter(|f| f.is_finite() && *f > 0.0 && *f <= 1e6)
                .ok_or_else(|| format!("`{name}` must be a positive number, got {x}"))?,
        };
        let kind = match first(c, &["container.type", "c.type"]) {
            (_, None | Some(Value::Null)) => "map".to_owned(),
            (_, Some(Value::String(s))) => s.to_lowercase(),
            (name, Some(x)) => return Err(format!("`{name}` must be a string, got {x}")),
        };
        let request = Resources::new(((vcores * 1000.0).round() as u64).max(1), mem.max(1));
        let t = task(request, duration);
        total += n;
        if total > MAX_COUNT {
            return Err(format!("more than {MAX_COUNT} containers in one job"));
        }
        match types.iter_mut().find(|(k, _, _)| *k == kind) {
            Some((_, tasks, longest)) => {
                tasks.resize(tasks.len() + n as usize, t);
                *longest = (*longest).max(t.duration);
            }
            None => types.push((kind, vec![t; n as usize], t.duration)),
        }
    }
    types.retain(|(_, tasks, _)| !tasks.is_empty());
    if types.is_empty() {
        return Err("a job needs at least one container".into());
    }
    types.sort_by_key(|(k, _, _)| k != "map");
    let map_len = types.iter().find(|(k, _, _)| k == "map").map_or(0, |t| t.2);
    let reduce_len = types.iter().find(|(k, _, _)| k == "reduce").map_or(0, |t| t.2);
    let has_map = types[0].0 == "map";
    let end = match (ms(o.get("job.end.ms"), "job.end.ms")?, last_end) {
        (Some(e), _) if e >= submit => e,
        (_, Some(e)) if e >= submit => e,
        _ => submit + map_len + reduce_len,
    };
    let phases = types
        .into_iter()
        .map(|(k, tasks, _)| Phase {
            deps: if k == "reduce" && has_map { vec![0] } else { vec![] },
            coupled: false,
            local: false,
            tasks,
            stages: vec![],
        })
        .collect();
    Ok((TraceJob { id, submit, end, priority, sched_class: None, phases }, total))
}

/// Reads SLS JSON files, handing every good job record to `sink` in file order.
pub fn read(
    files: &[PathBuf],
    opts: &ReadOptions,
    progress: &Progress,
    sink: &mut dyn FnMut(TraceJob) -> Result<(), TraceError>,
) -> Result<SlsReport, TraceError> {
    let mut rep = SlsReport::default();
    for path in files {
        read_one(path, open(path, progress)?, opts, &mut rep, sink)?;
    }
    Ok(rep)
}

fn read_one(
    path: &Path,
    input: Box<dyn BufRead>,
    opts: &ReadOptions,
    rep: &mut SlsReport,
    sink: &mut dyn FnMut(TraceJob) -> Result<(), TraceError>,
) -> Result<(), TraceError> {
    let seen = Rc::new(Cell::new(Seen::default()));
    let counted = LineCount { inner: input, seen: Rc::clone(&seen) };
    let row_error = |line: u64, reason: String| RowError { file: path.to_owned(), line, reason };
    let mut stream = serde_json::Deserializer::from_reader(counted).into_iter::<Value>();
    while let Some(item) = stream.next() {
        let line = seen.get().line_at(stream.byte_offset() as u64);
        let jobs = match item {
            Ok(Value::Array(jobs)) => jobs,
            Ok(v) => vec![v],
            Err(e) => {
                rep.rows += 1;
                return rep.bad.record(row_error(e.line() as u64, format!("not valid JSON: {e}")), opts.strict);
            }
        };
        for v in jobs {
            rep.rows += 1;
            match job_from(&v, rep.rows) {
                Ok((job, tasks)) => {
                    rep.jobs += 1;
                    rep.tasks += tasks;
                    sink(job)?;
                }
                Err(reason) => rep.bad.record(row_error(line, reason), opts.strict)?,
            }
        }
    }
    Ok(())
}
