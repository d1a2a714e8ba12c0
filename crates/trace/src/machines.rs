//! The trace's own machines: Google `machine_events`, Alibaba v2018
//! `machine_meta` and v2017 `server_event`, so that a replay runs on the
//! trace's heterogeneous cluster.
//!
//! * Google `machine_events` (timestamp, machine ID, event type 0 ADD /
//!   1 REMOVE / 2 UPDATE, platform, CPUs, memory): capacities are fractions
//!   of the largest machine (0.25, 0.5, 1.0 for CPU), so of
//!   [`ReadOptions::node`].
//! * Alibaba v2018 `machine_meta` (machine ID, time, failure domains 1 and
//!   2, CPU count, memory (normalised, 100 = the largest), status): CPUs are
//!   cores, memory a percentage of the node's.
//! * Alibaba v2017 `server_event` (time, machine ID, event type `add` /
//!   `remove` / `softerror` / `harderror`, detail, CPUs, memory (fraction),
//!   disk): CPUs are cores, memory a fraction of the node's.
//!
//! pliant's cluster does not change during a run, so the cluster is every
//! machine the trace has up at some instant of the window: those added before
//! it ends and not removed before it starts, at their last capacity before it
//! ends. Adds and removals inside the window are counted in [`MachineReport`];
//! a machine whose capacity the trace leaves empty is left out (counted).

use crate::error::{RowError, TraceError};
use crate::input::{is_header, Lines, Progress};
use crate::record::{fraction_of, ReadOptions};
use pliant_core::{Micros, Resources, SECOND};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Which machine table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    /// Google 2011 `machine_events`.
    Google,
    /// Alibaba v2018 `machine_meta`.
    Alibaba2018,
    /// Alibaba v2017 `server_event`.
    Alibaba2017,
}

/// What a machine table held.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MachineReport {
    /// Machines in the cluster (up at some instant of the window).
    pub machines: u64,
    /// Machines added inside the window (after its start).
    pub added: u64,
    /// Machines removed inside the window.
    pub removed: u64,
    /// Machines left out because the trace gives no capacity for them.
    pub no_capacity: u64,
    /// Rows read, bad ones included.
    pub rows: u64,
    /// Bad rows skipped.
    pub bad: crate::error::BadRows,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Event {
    Add,
    Remove,
    Update,
}

struct Row {
    time: Micros,
    id: String,
    event: Event,
    /// CPU cores (Alibaba) or the fraction of the largest machine (Google); memory likewise.
    capacity: Option<(f64, f64)>,
}

fn number(f: &[&str], i: usize, name: &str) -> Result<Option<f64>, String> {
    if f[i].is_empty() {
        return Ok(None);
    }
    match f[i].parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(Some(x)),
        _ => Err(format!("field {} ({name}): expected a non-negative number, got `{}`", i + 1, f[i])),
    }
}

fn fields<'a>(line: &'a str, n: usize, what: &str) -> Result<Vec<&'a str>, String> {
    let f: Vec<&str> = line.split(',').collect();
    if f.len() != n {
        return Err(format!("{} fields in a {what} row, expected {n}", f.len()));
    }
    Ok(f)
}

fn seconds(x: Option<f64>, scale: f64) -> Micros {
    (x.unwrap_or(0.0) * scale).round() as Micros
}

fn both(cpu: Option<f64>, mem: Option<f64>) -> Option<(f64, f64)> {
    cpu.zip(mem).filter(|&(c, m)| c > 0.0 && m > 0.0)
}

fn parse(table: Table, line: &str) -> Result<Row, String> {
    match table {
        Table::Google => {
            let f = fields(line, 6, "machine_events")?;
            let event = match f[2] {
                "0" => Event::Add,
                "1" => Event::Remove,
                "2" => Event::Update,
                other => return Err(format!("field 3 (event type): expected 0, 1 or 2, got `{other}`")),
            };
            let time = number(&f, 0, "timestamp")?;
            Ok(Row {
                time: seconds(time, 1.0),
                id: f[1].to_owned(),
                event,
                capacity: both(number(&f, 4, "CPUs")?, number(&f, 5, "memory")?),
            })
        }
        Table::Alibaba2018 => {
            let f = fields(line, 7, "machine_meta")?;
            let cap = both(number(&f, 4, "cpu_num")?, number(&f, 5, "mem_size")?).map(|(c, m)| (c, m / 100.0));
            let event = if f[6].eq_ignore_ascii_case("using") || f[6].is_empty() { Event::Add } else { Event::Remove };
            Ok(Row {
                time: seconds(number(&f, 1, "time_stamp")?, SECOND as f64),
                id: f[0].to_owned(),
                event,
                capacity: cap,
            })
        }
        Table::Alibaba2017 => {
            let f = fields(line, 7, "server_event")?;
            let event = match f[2].to_ascii_lowercase().as_str() {
                "add" => Event::Add,
                "remove" => Event::Remove,
                _ => Event::Update,
            };
            Ok(Row {
                time: seconds(number(&f, 0, "timestamp")?, SECOND as f64),
                id: f[1].to_owned(),
                event,
                capacity: both(number(&f, 4, "CPUs")?, number(&f, 5, "memory")?),
            })
        }
    }
}

#[derive(Default)]
struct Machine {
    up: bool,
    /// Up at some instant of the window.
    seen: bool,
    capacity: Option<Resources>,
}

/// Reads the machine table `files` and returns the cluster it describes for
/// the window of `opts` (the whole table without one), in machine-ID order.
pub fn read(
    table: Table,
    files: &[PathBuf],
    opts: &ReadOptions,
    progress: &Progress,
) -> Result<(Vec<Resources>, MachineReport), TraceError> {
    let node = opts.node_size();
    let (start, end) = opts.window.map_or((0, Micros::MAX), |w| (w.start, w.end));
    let mut rep = MachineReport::default();
    let mut machines: BTreeMap<String, Machine> = BTreeMap::new();
    for path in files {
        let mut lines = Lines::open(path, progress)?;
        let mut first = true;
        while let Some((line, text)) = lines.next_line()? {
            if matches!(text, Ok("")) || (std::mem::take(&mut first) && text.as_ref().is_ok_and(|t| is_header(t))) {
                continue;
            }
            rep.rows += 1;
            let row = match text.and_then(|t| parse(table, t)) {
                Ok(row) => row,
                Err(reason) => {
                    rep.bad.record(RowError { file: path.clone(), line, reason }, opts.strict)?;
                    continue;
                }
            };
            if row.time >= end {
                continue;
            }
            let m = machines.entry(row.id).or_default();
            let inside = row.time >= start;
            m.seen |= inside && m.up;
            if let Some((cpu, mem)) = row.capacity {
                m.capacity = Some(match table {
                    Table::Google => fraction_of(node, cpu, mem),
                    Table::Alibaba2018 | Table::Alibaba2017 => {
                        let cores = (cpu * 1000.0).round() as u64;
                        Resources::new(cores.max(1), ((mem.min(1.0) * node.mem_mb as f64).round() as u64).max(1))
                    }
                });
            }
            match row.event {
                Event::Add => {
                    rep.added += u64::from(row.time > start && !m.up);
                    m.up = true;
                }
                Event::Remove => {
                    rep.removed += u64::from(row.time > start && m.up);
                    m.up = false;
                }
                Event::Update => {}
            }
            m.seen |= inside && m.up;
        }
    }
    let mut nodes = Vec::new();
    // Up after the last event read: up from then on, so inside the window.
    for m in machines.values().filter(|m| m.seen || m.up) {
        match m.capacity {
            Some(c) => nodes.push(c),
            None => rep.no_capacity += 1,
        }
    }
    rep.machines = nodes.len() as u64;
    Ok((nodes, rep))
}
