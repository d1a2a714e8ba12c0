//! Which format a set of inputs is in: by file name first (`task_events*`,
//! `job_events*`, `batch_instance*`, the machine tables), then by the first
//! non-blank line (JSON with a `cluster` record: native; other JSON: SLS;
//! CSV: by field count and content, after a header row if there is one —
//! an 8-field row is Alibaba v2017's `batch_task` when its sixth field is a
//! task status, Google's `job_events` when its fourth is an event type).
//! Files inside a directory that match no format (READMEs, checksums) are
//! skipped; a file named on its own must match, or is refused with its first
//! data line's number and why.

use crate::error::TraceError;
use crate::input::{base_name, expand, is_header, Lines, Progress};
use crate::machines::Table;
use pliant_core::Resources;
use std::path::{Path, PathBuf};

/// A supported input format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// pliant's native JSON Lines workload (`pliant_workload::format`).
    Native,
    /// Google cluster-data 2011.
    Google2011,
    /// Alibaba cluster-trace-v2018.
    Alibaba2018,
    /// Alibaba cluster-trace-v2017.
    Alibaba2017,
    /// YARN SLS JSON.
    Sls,
}

impl Format {
    /// The name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            Format::Native => "pliant native",
            Format::Google2011 => "Google 2011",
            Format::Alibaba2018 => "Alibaba v2018",
            Format::Alibaba2017 => "Alibaba v2017",
            Format::Sls => "YARN SLS",
        }
    }

    /// The largest machine of a trace of this format, when none is given:
    /// 64 CPUs for Alibaba v2017, ⟨32 CPU, 128 GB⟩ otherwise.
    pub fn default_node(self) -> Resources {
        match self {
            Format::Alibaba2017 => crate::alibaba::NODE_2017,
            _ => crate::record::DEFAULT_NODE,
        }
    }
}

/// The role of one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Native,
    GoogleTasks,
    GoogleJobs,
    AliTasks2018,
    AliTasks2017,
    AliInstances,
    Sls,
    Machines(Table),
}

/// The inputs, sorted by role.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inputs {
    /// Their format.
    pub format: Format,
    /// The main files: native or SLS files, `task_events`, `batch_task`.
    pub main: Vec<PathBuf>,
    /// Companion files: Google `job_events`, Alibaba `batch_instance`.
    pub companion: Vec<PathBuf>,
    /// The trace's machine table, if given: which one and its files.
    pub machines: Option<(Table, Vec<PathBuf>)>,
}

impl Inputs {
    /// Every file, main ones first.
    pub fn all(&self) -> Vec<PathBuf> {
        let machines = self.machines.iter().flat_map(|(_, f)| f);
        self.main.iter().chain(&self.companion).chain(machines).cloned().collect()
    }
}

fn is_int(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// Whether `s` is a Google 2011 event type (0 SUBMIT … 8 UPDATE_RUNNING).
fn is_event_type(s: &str) -> bool {
    matches!(s.parse::<u8>(), Ok(0..=8))
}

/// The CSV layouts, by field count, for the reason a file is refused.
const LAYOUTS: &str = "Google task_events: 13 fields, integers in the 1st and 3rd; \
                       Google job_events: 8 fields, an event type 0-8 in the 4th; \
                       Alibaba v2018 batch_task: 9 fields, an instance count in the 2nd; v2018 batch_instance: 14; \
                       v2017 batch_task: 8 fields, an instance count in the 5th and a status in the 6th; \
                       v2017 batch_instance: 12";

/// The role of a file, or why it has none (`file:line: reason`).
fn sniff(path: &Path) -> Result<Result<Kind, String>, TraceError> {
    let name = base_name(path);
    // The published Google trace keeps each table's parts in a directory named after it.
    let parent =
        path.parent().and_then(|p| p.file_name()).map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    for (prefix, kind) in [
        ("task_events", Kind::GoogleTasks),
        ("job_events", Kind::GoogleJobs),
        ("batch_instance", Kind::AliInstances),
        ("machine_events", Kind::Machines(Table::Google)),
        ("machine_meta", Kind::Machines(Table::Alibaba2018)),
        ("server_event", Kind::Machines(Table::Alibaba2017)),
    ] {
        if name.starts_with(prefix) || parent == prefix {
            return Ok(Ok(kind));
        }
    }
    let mut lines = Lines::open(path, &Progress::hidden())?;
    let mut header = true;
    let (line, first) = loop {
        match lines.next_line() {
            Ok(Some((_, Ok(t)))) if t.trim().is_empty() || t.starts_with('#') => continue,
            Ok(Some((_, Ok(t)))) if std::mem::take(&mut header) && is_header(t) => continue,
            Ok(Some((n, Ok(t)))) => break (n, t.trim().to_owned()),
            Ok(Some((n, Err(reason)))) => return Ok(Err(format!("{}:{n}: {reason}", path.display()))),
            _ => return Ok(Err(format!("{}: no data line", path.display()))),
        }
    };
    if first.starts_with('{') || first.starts_with('[') {
        let native = first.starts_with("{\"cluster\"") || first.replace(' ', "").starts_with("{\"cluster\"");
        return Ok(Ok(if native { Kind::Native } else { Kind::Sls }));
    }
    let f: Vec<&str> = first.split(',').collect();
    Ok(match f.len() {
        13 if is_int(f[0]) && is_int(f[2]) => Ok(Kind::GoogleTasks),
        8 if is_int(f[4]) && crate::alibaba::is_status(f[5]) => Ok(Kind::AliTasks2017),
        8 if is_int(f[0]) && is_event_type(f[3]) => Ok(Kind::GoogleJobs),
        9 if is_int(f[1]) => Ok(Kind::AliTasks2018),
        14 => Ok(Kind::AliInstances),
        n => Err(format!(
            "{}:{line}: a row of {n} comma-separated field(s) whose numbers are not where a known layout has them ({LAYOUTS})",
            path.display()
        )),
    })
}

/// Lists the files under `paths` and works out their format.
pub fn detect(paths: &[PathBuf]) -> Result<Inputs, TraceError> {
    let mut kinds = Vec::new();
    for p in paths {
        let from_dir = p.is_dir();
        for f in expand(std::slice::from_ref(p))? {
            match sniff(&f)? {
                Ok(k) => kinds.push((k, f)),
                Err(_) if from_dir => {}
                Err(why) => return Err(TraceError::Format(format!("not a supported trace or workload format: {why}"))),
            }
        }
    }
    let has = |k: Kind| kinds.iter().any(|(x, _)| *x == k);
    let format = if has(Kind::GoogleTasks) {
        Format::Google2011
    } else if has(Kind::AliTasks2018) {
        Format::Alibaba2018
    } else if has(Kind::AliTasks2017) {
        Format::Alibaba2017
    } else if has(Kind::Native) {
        Format::Native
    } else if has(Kind::Sls) {
        Format::Sls
    } else if has(Kind::GoogleJobs) {
        return Err(TraceError::Format(
            "Google job_events without task_events: the task_events files are needed".into(),
        ));
    } else if has(Kind::AliInstances) {
        return Err(TraceError::Format(
            "Alibaba batch_instance without batch_task: the batch_task files are needed".into(),
        ));
    } else {
        let named: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        return Err(TraceError::Format(format!(
            "{}: no trace or workload file found (Google task_events*, Alibaba batch_task*, YARN SLS *.json, or a native .jsonl)",
            named.join(", ")
        )));
    };
    let (main_kind, companion_kind) = match format {
        Format::Google2011 => (Kind::GoogleTasks, Some(Kind::GoogleJobs)),
        Format::Alibaba2018 => (Kind::AliTasks2018, Some(Kind::AliInstances)),
        Format::Alibaba2017 => (Kind::AliTasks2017, Some(Kind::AliInstances)),
        Format::Native => (Kind::Native, None),
        Format::Sls => (Kind::Sls, None),
    };
    let mut inputs = Inputs { format, main: Vec::new(), companion: Vec::new(), machines: None };
    for (k, f) in kinds {
        if let Kind::Machines(table) = k {
            match &mut inputs.machines {
                None => inputs.machines = Some((table, vec![f])),
                Some((t, files)) if *t == table => files.push(f),
                Some(_) => return Err(TraceError::Format(format!("{}: a second kind of machine table", f.display()))),
            }
            continue;
        }
        if k == main_kind {
            inputs.main.push(f);
        } else if Some(k) == companion_kind {
            inputs.companion.push(f);
        } else {
            return Err(TraceError::Format(format!(
                "{}: a different format from the other inputs ({})",
                f.display(),
                format.name()
            )));
        }
    }
    if format == Format::Native && inputs.main.len() > 1 {
        return Err(TraceError::Format("give one native workload file at a time".into()));
    }
    inputs.main.sort();
    inputs.companion.sort();
    if let Some((_, files)) = &mut inputs.machines {
        files.sort();
    }
    Ok(inputs)
}
