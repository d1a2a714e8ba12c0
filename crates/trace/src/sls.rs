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
//! `c.cores` (default 1), `c.type` (`MAP`/`REDUCE`, any case), `c.prio`
//! (ignored, like `container.priority`) and the penalty model of an
//! under-sized task, `c.penalty` (`STEP` or `SAWTOOTH`, any case) with its
//! `c.ib` (the penalty, ≥ 1), both or neither; a class with neither takes
//! [`ReadOptions::penalty`] (DSS's `PENALTY IB` arguments). The penalty makes
//! the job elastic (one model per job: its classes must agree). DSS has one
//! queue and no job classes, so a DSS record's job is long. `job.start.ms`
//! naming another job (DSS's `job_<k>`: start when it ends) is refused.
//!
//! Phases: one per container type in order of appearance, `map` first; `reduce`
//! waits for `map`; other types are independent. A job's duration in the trace is
//! `job.end.ms − job.start.ms`, or its last `container.end.ms`, or the longest
//! map plus the longest reduce.
//!
//! Every record is read: one that is not valid JSON, or not closed before the
//! next job starts, is a bad row like a valid record with a bad field, and is
//! reported at the line of the offending field (see [`crate::json_records`]).

use crate::error::{BadRows, RowError, TraceError};
use crate::input::{open, Progress};
use crate::json_records::Records;
use crate::record::{task, JobKind, ReadOptions, TraceJob};
use pliant_core::model::{Elasticity, ElasticityProfile, JobClass};
use pliant_core::{Micros, Resources};
use pliant_workload::{JobElasticity, Phase};
use serde_json::{Map, Value};
use std::io::BufRead;
use std::path::{Path, PathBuf};

/// Most containers one task class may ask for.
const MAX_COUNT: u64 = 1_000_000;

/// Fields that place a task class in the file when the one to blame is missing.
const CLASS_KEYS: [&str; 6] = ["c.nr", "count", "container.count", "c.mem", "container.memory", "c.type"];

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

/// Why a record was refused: the reason, and the field to point at (its key
/// and which occurrence of it in the record), if one is to blame.
struct Refusal {
    at: Option<(&'static str, usize)>,
    reason: String,
}

impl From<&str> for Refusal {
    fn from(reason: &str) -> Self {
        Refusal { at: None, reason: reason.to_owned() }
    }
}

/// A refusal blamed on the `nth` occurrence of field `key`.
fn blame(key: &'static str, nth: usize) -> impl Fn(String) -> Refusal {
    move |reason| Refusal { at: Some((key, nth)), reason }
}

/// The penalty model of one DSS task class (`c.penalty`, `c.ib`), or
/// `default` when it names none.
fn penalty_of(
    c: &Map<String, Value>,
    nth: &dyn Fn(&str) -> usize,
    default: Option<ElasticityProfile>,
) -> Result<Option<ElasticityProfile>, Refusal> {
    let (model, ib) = match (c.get("c.penalty"), c.get("c.ib")) {
        (None, None) => return Ok(default),
        (Some(_), None) => {
            return Err(blame("c.penalty", nth("c.penalty"))(
                "`c.penalty` needs `c.ib` (DSS ignores it without)".into(),
            ))
        }
        (None, Some(_)) => return Err(blame("c.ib", nth("c.ib"))("`c.ib` needs `c.penalty`".into())),
        (Some(m), Some(ib)) => (m, ib),
    };
    let ib = ib
        .as_f64()
        .filter(|x| x.is_finite() && *x >= 1.0)
        .ok_or_else(|| blame("c.ib", nth("c.ib"))(format!("`c.ib` must be a number of at least 1, got {ib}")))?;
    match model.as_str().map(str::to_lowercase).as_deref() {
        Some("step") => Ok(Some(ElasticityProfile::Step { penalty: ib })),
        Some("sawtooth") => Ok(Some(ElasticityProfile::Sawtooth { penalty: ib })),
        _ => Err(blame("c.penalty", nth("c.penalty"))(format!(
            "`c.penalty` must be \"STEP\" or \"SAWTOOTH\" (the DSS models pliant has), got {model}"
        ))),
    }
}

fn job_from(v: &Value, n: u64, default_penalty: Option<ElasticityProfile>) -> Result<(TraceJob, u64), Refusal> {
    let o = v.as_object().ok_or("a job record must be a JSON object")?;
    let submit =
        ms(o.get("job.start.ms"), "job.start.ms").map_err(blame("job.start.ms", 0))?.ok_or("missing `job.start.ms`")?;
    let id = match o.get("job.id") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(x)) => x.to_string(),
        None => format!("sls-{n}"),
        Some(x) => return Err(blame("job.id", 0)(format!("`job.id` must be a string or a number, got {x}"))),
    };
    let priority = count(o.get("job.priority"), "job.priority", 0, 11).map_err(blame("job.priority", 0))? as u8;
    let classes = o
        .get("job.tasks")
        .and_then(Value::as_array)
        .ok_or_else(|| blame("job.tasks", 0)("missing `job.tasks` (an array of task classes)".into()))?;
    let mut types: Vec<(String, Vec<pliant_workload::Task>, Micros)> = Vec::new();
    let mut last_end: Option<Micros> = None;
    let mut total = 0;
    let mut dss = false;
    let mut penalties: Vec<Option<ElasticityProfile>> = Vec::new();
    for (k, c) in classes.iter().enumerate() {
        let c = c.as_object().ok_or_else(|| blame("job.tasks", 0)("each of `job.tasks` must be an object".into()))?;
        // Which occurrence of `key` in the record this class's is (to point at its line).
        let nth = |key: &str| classes[..k].iter().filter(|d| d.get(key).is_some()).count();
        let field = |key: &'static str| blame(key, nth(key));
        dss |= c.keys().any(|key| key.starts_with("c."));
        let (name, v) = first(c, &["count", "container.count", "c.nr"]);
        let n = count(v, name, 1, MAX_COUNT).map_err(field(name))?;
        let start = ms(c.get("container.start.ms"), "container.start.ms").map_err(field("container.start.ms"))?;
        let end = ms(c.get("container.end.ms"), "container.end.ms").map_err(field("container.end.ms"))?;
        let (name, v) = first(c, &["duration.ms", "container.duration.ms", "c.dur"]);
        let duration = match (ms(v, name).map_err(field(name))?, start, end) {
            (Some(d), _, _) => d,
            (None, Some(s), Some(e)) if e >= s => e - s,
            _ => {
                let key = CLASS_KEYS.iter().copied().find(|key| c.contains_key(*key));
                return Err(Refusal {
                    at: key.map(|key| (key, nth(key))),
                    reason: "a task class needs `duration.ms` (DSS: `c.dur`) or `container.start.ms` ≤ \
                             `container.end.ms`"
                        .into(),
                });
            }
        };
        if let Some(e) = end {
            last_end = Some(last_end.map_or(e, |l: Micros| l.max(e)));
        }
        let (name, v) = first(c, &["container.memory", "c.mem"]);
        let mem = count(v, name, 1024, 1 << 30).map_err(field(name))?;
        let vcores = match first(c, &["container.vcores", "c.cores"]) {
            (_, None | Some(Value::Null)) => 1.0,
            (name, Some(x)) => x
                .as_f64()
                .filter(|f| f.is_finite() && *f > 0.0 && *f <= 1e6)
                .ok_or_else(|| field(name)(format!("`{name}` must be a positive number, got {x}")))?,
        };
        let kind = match first(c, &["container.type", "c.type"]) {
            (_, None | Some(Value::Null)) => "map".to_owned(),
            (_, Some(Value::String(s))) => s.to_lowercase(),
            (name, Some(x)) => return Err(field(name)(format!("`{name}` must be a string, got {x}"))),
        };
        let penalty = penalty_of(c, &nth, default_penalty)?;
        if penalties.first().is_some_and(|p| *p != penalty) {
            return Err(field(if c.contains_key("c.penalty") { "c.penalty" } else { "c.nr" })(
                "the task classes of a job have different penalties (pliant keeps one per job)".into(),
            ));
        }
        penalties.push(penalty);
        let request = Resources::new(((vcores * 1000.0).round() as u64).max(1), mem.max(1));
        let t = task(request, duration);
        total += n;
        if total > MAX_COUNT {
            return Err(format!("more than {MAX_COUNT} containers in one job").as_str().into());
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
        return Err(blame("job.tasks", 0)("a job needs at least one container".into()));
    }
    types.sort_by_key(|(k, _, _)| k != "map");
    let map_len = types.iter().find(|(k, _, _)| k == "map").map_or(0, |t| t.2);
    let reduce_len = types.iter().find(|(k, _, _)| k == "reduce").map_or(0, |t| t.2);
    let has_map = types[0].0 == "map";
    let end = match (ms(o.get("job.end.ms"), "job.end.ms").map_err(blame("job.end.ms", 0))?, last_end) {
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
    let elastic = penalties[0].map(|profile| JobElasticity {
        estimate: Elasticity { profile, min_mem_mb: None },
        truth: profile,
        true_ideal_scale: 1.0,
    });
    // DSS has one queue and no job classes: its jobs are YARN-ME's batch jobs.
    let class = dss.then_some(JobClass::Long);
    Ok((TraceJob { id, submit, end, priority, sched_class: None, phases, class, elastic, kind: JobKind::Batch }, total))
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
    let row_error = |line: u64, reason: String| RowError { file: path.to_owned(), line, reason };
    for record in Records::new(input) {
        let record = record.map_err(|source| TraceError::Io { path: path.to_owned(), source })?;
        rep.rows += 1;
        let value = if record.unclosed {
            Err(row_error(record.first_line, "a job record that is never closed (a `}` is missing)".into()))
        } else {
            serde_json::from_str::<Value>(&record.text).map_err(|e| {
                // serde_json's message ends with a position inside the record: name the file's line instead.
                let message = e.to_string();
                let reason = message.split(" at line ").next().unwrap_or(&message);
                row_error(record.first_line + e.line().saturating_sub(1) as u64, format!("not valid JSON: {reason}"))
            })
        };
        let value = match value {
            Ok(v) => v,
            Err(e) => {
                rep.bad.record(e, opts.strict)?;
                continue;
            }
        };
        match job_from(&value, rep.rows, opts.penalty) {
            Ok((job, tasks)) => {
                rep.jobs += 1;
                rep.tasks += tasks;
                sink(job)?;
            }
            Err(r) => {
                let line = r.at.map_or(record.first_line, |(key, nth)| record.line_of(key, nth));
                rep.bad.record(row_error(line, r.reason), opts.strict)?;
            }
        }
    }
    Ok(())
}
