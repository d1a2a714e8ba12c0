//! Experiment files: a whole run — workload, cluster, policies, parameters,
//! an optional sweep and the outputs — written down in TOML (`pliant run
//! FILE`), and the resolved experiment that `--out` writes beside the results
//! so that any result can be rerun. An experiment becomes the command line of
//! `simulate` or `sweep`, so both paths decide the same.

use crate::settings::Settings;
use crate::simulate::SimulateArgs;
use crate::sweep::SweepArgs;
use clap::{Parser, Subcommand};
use pliant_core::policy::{Profile, Registry};
use pliant_workload::scenarios::SCENARIOS;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// The experiment file's name among the results.
pub const RESOLVED_NAME: &str = "experiment.toml";

/// A run as a command line says it: `simulate` or `sweep` with its flags.
#[derive(Subcommand)]
pub enum Command {
    /// Replay a scenario or workload under several policies and compare them.
    Simulate(SimulateArgs),
    /// Vary one setting over values and compare policies on chosen metrics.
    Sweep(SweepArgs),
}

impl Command {
    /// Parses a `simulate` or `sweep` command line (without the program name)
    /// as `pliant` does; an error is clap's first line.
    pub fn parse(line: impl IntoIterator<Item = String>) -> Result<Command, String> {
        /// The command line alone, for clap.
        #[derive(Parser)]
        #[command(name = "pliant")]
        struct Line {
            #[command(subcommand)]
            command: Command,
        }
        let first = |e: clap::Error| e.to_string().lines().next().unwrap_or("bad command line").to_string();
        Line::try_parse_from(std::iter::once("pliant".to_string()).chain(line)).map(|l| l.command).map_err(first)
    }

    /// The run an experiment file stands for (see [`command_line`]), its
    /// policies built through `registry`.
    pub fn from_experiment(path: &Path, out: Option<&Path>, registry: &Registry) -> Result<Command, String> {
        let line = command_line(path, out, registry)?;
        let mut command = Command::parse(line).map_err(|e| format!("{}: {e}", path.display()))?;
        command.policy_args().registry = registry.clone();
        Ok(command)
    }

    /// Its policies: the names, compositions, profiles and registry it runs.
    pub fn policy_args(&mut self) -> &mut crate::simulate::PolicyArgs {
        match self {
            Command::Simulate(args) => &mut args.run,
            Command::Sweep(args) => &mut args.run,
        }
    }

    /// Runs it as `pliant` does: results on standard output.
    pub fn run(mut self) -> Result<(), String> {
        self.policy_args().take_in_files()?;
        match self {
            Command::Simulate(args) => crate::simulate::run(args),
            Command::Sweep(args) => crate::sweep::run(args),
        }
    }
}

/// An experiment file as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Experiment {
    /// Presets to compare (default: the scenario's, or every preset for a
    /// file), or `[policies.NAME]` tables: presets and compositions.
    policies: Option<PoliciesSpec>,
    workload: Spanned<WorkloadSpec>,
    #[serde(default)]
    cluster: Option<Spanned<ClusterSpec>>,
    #[serde(default)]
    parameters: BTreeMap<Spanned<String>, Spanned<toml::Value>>,
    sweep: Option<SweepSpec>,
    #[serde(default)]
    outputs: OutputSpec,
}

/// The policies: a list of presets, or `[policies.NAME]` tables in the
/// file's order — a preset (no steps) or a composition of steps.
enum PoliciesSpec {
    List(Vec<Spanned<String>>),
    Table(Vec<(String, Spanned<PolicyEntry>)>),
}

impl<'de> Deserialize<'de> for PoliciesSpec {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = PoliciesSpec;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a list of presets or [policies.NAME] tables")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<PoliciesSpec, A::Error> {
                let mut names = Vec::new();
                while let Some(name) = seq.next_element()? {
                    names.push(name);
                }
                Ok(PoliciesSpec::List(names))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<PoliciesSpec, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry()? {
                    entries.push(entry);
                }
                Ok(PoliciesSpec::Table(entries))
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

/// One `[policies.NAME]`: the preset it starts from (default: NAME) and the
/// points it fills anew (`pliant_core::policy::profile::POINTS`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PolicyEntry {
    from: Option<Spanned<String>>,
    queues: Option<Spanned<String>>,
    order: Option<Spanned<String>>,
    head_of_line: Option<Spanned<String>>,
    placement: Option<Spanned<String>>,
    planner: Option<Spanned<String>>,
    compute_dr: Option<Spanned<bool>>,
    mechanism: Option<Spanned<String>>,
    reservation: Option<Spanned<String>>,
    sizing: Option<Spanned<String>>,
    attempts: Option<Spanned<String>>,
}

impl PolicyEntry {
    /// The steps it sets, as (step, value, where).
    fn steps(&self) -> Vec<(&'static str, String, Range<usize>)> {
        let named = [
            ("queues", &self.queues),
            ("order", &self.order),
            ("head_of_line", &self.head_of_line),
            ("placement", &self.placement),
            ("planner", &self.planner),
        ];
        let mut steps: Vec<_> =
            named.into_iter().filter_map(|(k, v)| v.as_ref().map(|v| (k, v.get_ref().clone(), v.span()))).collect();
        if let Some(b) = &self.compute_dr {
            steps.push(("compute_dr", b.get_ref().to_string(), b.span()));
        }
        let rest = [
            ("mechanism", &self.mechanism),
            ("reservation", &self.reservation),
            ("sizing", &self.sizing),
            ("attempts", &self.attempts),
        ];
        steps.extend(rest.into_iter().filter_map(|(k, v)| v.as_ref().map(|v| (k, v.get_ref().clone(), v.span()))));
        steps
    }

    /// The profile of `[policies.NAME]` (at `span`) through `registry`; an
    /// error is the span at fault with the reason.
    fn profile(&self, name: &str, span: Range<usize>, registry: &Registry) -> Result<Profile, (Range<usize>, String)> {
        let steps = self.steps();
        let Some(from) = &self.from else {
            if !steps.is_empty() || !registry.policy_names().contains(&name) {
                let reason = "a composed policy names the preset it starts `from`";
                return Err((span, format!("[policies.{name}]: {reason}")));
            }
            return registry.preset(name).map_err(|e| (span, e));
        };
        let pairs: Vec<(&str, &str)> = steps.iter().map(|(k, v, _)| (*k, v.as_str())).collect();
        registry.compose(name, from.get_ref(), &pairs).map_err(|e| {
            let span = e.step.map_or(from.span(), |i| steps[i].2.clone());
            (span, e.reason)
        })
    }
}

/// An experiment file read for its policies alone.
#[derive(Deserialize)]
struct PoliciesOnly {
    policies: Option<PoliciesSpec>,
}

/// The profile of the policy `name` of experiment file `path` (`FILE#NAME`):
/// a `[policies.NAME]` table, or a preset its list names. Every problem is
/// `FILE:LINE: reason`, or names the policies the file has.
pub fn policy(path: &Path, name: &str, registry: &Registry) -> Result<Profile, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    let file: PoliciesOnly = toml::from_str(&text).map_err(|err| {
        let span = err.span().unwrap_or(0..0);
        at(path, &text, span, err.message().trim().replace('\n', "; "))
    })?;
    let has: Vec<String> = match &file.policies {
        None => Vec::new(),
        Some(PoliciesSpec::List(list)) => {
            if let Some(p) = list.iter().find(|p| p.get_ref() == name) {
                return registry.preset(name).map_err(|e| at(path, &text, p.span(), e));
            }
            list.iter().map(|p| p.get_ref().clone()).collect()
        }
        Some(PoliciesSpec::Table(entries)) => {
            if let Some((_, entry)) = entries.iter().find(|(n, _)| n == name) {
                let (span, entry) = (entry.span(), entry.get_ref());
                return entry.profile(name, span, registry).map_err(|(span, e)| at(path, &text, span, e));
            }
            entries.iter().map(|(n, _)| n.clone()).collect()
        }
    };
    Err(format!("{}: no [policies.{name}] here (it has: {})", path.display(), has.join(", ")))
}

/// What to replay.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct WorkloadSpec {
    scenario: Option<Spanned<String>>,
    /// A native workload or a trace, relative to the experiment file.
    file: Option<Spanned<PathBuf>>,
    scale: Option<Spanned<f64>>,
    seed: Option<Spanned<u64>>,
    /// `"FIRST..LAST"`: a sweep's seeds.
    seeds: Option<Spanned<String>>,
    long_jobs: Option<Spanned<String>>,
    /// `"START..END"` in trace seconds.
    window: Option<Spanned<String>>,
    sample: Option<Spanned<f64>>,
    /// `"SHORT,LONG"`: task counts scaled to these shares of the cluster's CPU.
    fit_use: Option<Spanned<String>>,
    /// Hawk's class rule: the longest mean task run time of a short job, seconds.
    short_mean_task_s: Option<Spanned<f64>>,
    truncate: Option<bool>,
    finished_only: Option<bool>,
    strict: Option<bool>,
}

/// The cluster a workload file is replayed on.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct ClusterSpec {
    nodes: Option<Spanned<u32>>,
    /// `"CORES,GB"`: the machine a trace's normalised requests are fractions of.
    node: Option<Spanned<String>>,
}

/// One parameter varied over values.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SweepSpec {
    vary: Spanned<String>,
    values: Spanned<Vec<Spanned<toml::Value>>>,
    #[serde(default)]
    metrics: Option<Vec<String>>,
}

/// What to write and how.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct OutputSpec {
    /// A directory for the results, relative to the current directory.
    dir: Option<PathBuf>,
    format: Option<Spanned<String>>,
    slowdown: Option<bool>,
    barrier_idle: Option<bool>,
}

/// `FILE:LINE: reason`.
fn at(path: &Path, text: &str, span: Range<usize>, reason: impl std::fmt::Display) -> String {
    let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
    format!("{}:{line}: {reason}", path.display())
}

/// A parameter value as `--set` takes it.
pub fn set_value(value: &toml::Value) -> Option<String> {
    match value {
        toml::Value::String(s) => Some(s.clone()),
        toml::Value::Integer(i) => Some(i.to_string()),
        toml::Value::Float(f) => Some(f.to_string()),
        toml::Value::Boolean(b) => Some(if *b { "1" } else { "0" }.to_string()),
        _ => None,
    }
}

/// Reads an experiment file and returns the `pliant` command line it stands for
/// (without the program name); `out` overrides its output directory; its
/// compositions are checked against `registry`. Every problem is
/// `FILE:LINE: reason`.
pub fn command_line(path: &Path, out: Option<&Path>, registry: &Registry) -> Result<Vec<String>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    let e: Experiment = toml::from_str(&text).map_err(|err| {
        let span = err.span().unwrap_or(0..0);
        at(path, &text, span, err.message().trim().replace('\n', "; "))
    })?;
    let err = |span: Range<usize>, reason: String| at(path, &text, span, reason);
    let mut args: Vec<String> = Vec::new();
    let mut push = |flag: &str, value: String| {
        args.push(flag.to_string());
        args.push(value);
    };

    let w = e.workload.get_ref();
    let file = match (&w.scenario, &w.file) {
        (Some(_), Some(f)) => return Err(err(f.span(), "give `scenario` or `file`, not both".into())),
        (None, None) => return Err(err(e.workload.span(), "[workload] needs `scenario` or `file`".into())),
        (Some(s), None) => {
            if !SCENARIOS.iter().any(|k| k.name == s.get_ref()) {
                return Err(err(s.span(), pliant_workload::scenarios::unknown_scenario(s.get_ref())));
            }
            push("--scenario", s.get_ref().clone());
            false
        }
        (None, Some(f)) => {
            let base = path.parent().unwrap_or(Path::new("."));
            let full = base.join(f.get_ref());
            if !full.exists() {
                return Err(err(f.span(), format!("no such workload file or directory: {}", full.display())));
            }
            push("--workload", full.display().to_string());
            true
        }
    };
    if let Some(scale) = &w.scale {
        let x = *scale.get_ref();
        let ok = if file { x > 0.0 && x <= 1.0 } else { x > 0.0 && x <= 10_000.0 };
        if !ok {
            let range = if file { "(0, 1] for a workload file" } else { "(0, 10000] for a scenario" };
            return Err(err(scale.span(), format!("scale must be in {range}, got {x}")));
        }
        push("--scale", x.to_string());
    }
    let seeds = match (&w.seed, &w.seeds) {
        (Some(s), Some(_)) => return Err(err(s.span(), "give `seed` or `seeds`, not both".into())),
        (Some(s), None) => {
            push("--seed", s.get_ref().to_string());
            None
        }
        (None, Some(range)) => {
            let parsed = range.get_ref().split_once("..").and_then(|(a, b)| {
                let (a, b) = (a.trim().parse::<u64>().ok()?, b.trim().parse::<u64>().ok()?);
                (a <= b).then_some((a, b))
            });
            let Some((first, last)) = parsed else {
                return Err(err(
                    range.span(),
                    format!("seeds must be \"FIRST..LAST\", e.g. \"1..3\", got `{}`", range.get_ref()),
                ));
            };
            if e.sweep.is_none() {
                return Err(err(range.span(), "a seed range needs a [sweep] (its points are averaged over the seeds); give `seed = N` for one run".into()));
            }
            push("--seed", first.to_string());
            Some(last - first + 1)
        }
        (None, None) => None,
    };
    if let Some(long_jobs) = &w.long_jobs {
        if !["spark", "wordcount", "terasort"].contains(&long_jobs.get_ref().as_str()) {
            return Err(err(
                long_jobs.span(),
                format!("long_jobs must be spark, wordcount or terasort, got `{}`", long_jobs.get_ref()),
            ));
        }
        push("--long-jobs", long_jobs.get_ref().clone());
    }
    let file_only = |name: &str, span: Range<usize>| -> Result<(), String> {
        if file {
            Ok(())
        } else {
            Err(err(
                span,
                format!("`{name}` applies to a workload file, not a scenario (whose cluster grows with scale)"),
            ))
        }
    };
    if let Some(window) = &w.window {
        file_only("window", window.span())?;
        crate::parse_window(window.get_ref()).map_err(|r| err(window.span(), r))?;
        push("--window", window.get_ref().clone());
    }
    if let Some(sample) = &w.sample {
        file_only("sample", sample.span())?;
        push("--sample", sample.get_ref().to_string());
    }
    if let Some(fit) = &w.fit_use {
        file_only("fit_use", fit.span())?;
        crate::workload_args::parse_use_shares(fit.get_ref()).map_err(|r| err(fit.span(), r))?;
        push("--fit-use", fit.get_ref().clone());
    }
    if let Some(cutoff) = &w.short_mean_task_s {
        file_only("short_mean_task_s", cutoff.span())?;
        push("--short-mean-task-s", cutoff.get_ref().to_string());
    }
    if let Some(cluster) = &e.cluster {
        file_only("[cluster]", cluster.span())?;
        let c = cluster.get_ref();
        if let Some(nodes) = &c.nodes {
            if *nodes.get_ref() == 0 {
                return Err(err(nodes.span(), "nodes must be at least 1".into()));
            }
            if w.scale.is_some() {
                return Err(err(nodes.span(), "give [cluster] nodes or [workload] scale, not both".into()));
            }
            push("--nodes", nodes.get_ref().to_string());
        }
        if let Some(node) = &c.node {
            crate::parse_node(node.get_ref()).map_err(|r| err(node.span(), r))?;
            push("--node", node.get_ref().clone());
        }
    }
    let mut flags: Vec<&str> = Vec::new();
    if w.truncate == Some(true) {
        flags.push("--truncate");
    }
    if w.finished_only == Some(true) {
        flags.push("--finished-only");
    }
    if w.strict == Some(true) {
        flags.push("--strict");
    }

    if let Some(policies) = &e.policies {
        let mut names: Vec<&str> = Vec::new();
        match policies {
            PoliciesSpec::List(list) => {
                for p in list {
                    registry.preset(p.get_ref()).map_err(|e| err(p.span(), e))?;
                    names.push(p.get_ref());
                }
            }
            PoliciesSpec::Table(entries) => {
                for (name, entry) in entries {
                    let (span, entry) = (entry.span(), entry.get_ref());
                    entry.profile(name, span, registry).map_err(|(span, reason)| err(span, reason))?;
                    names.push(name);
                    if let Some(from) = &entry.from {
                        let line: Vec<String> = entry.steps().iter().map(|(k, v, _)| format!(",{k}={v}")).collect();
                        push("--compose", format!("{name}={}{}", from.get_ref(), line.concat()));
                    }
                }
            }
        }
        if names.is_empty() {
            let line = text.find("policies").unwrap_or(0);
            return Err(err(line..line, "policies is empty".into()));
        }
        push("--policies", names.join(","));
    }
    let mut check = Settings::default();
    for (key, value) in &e.parameters {
        let v = set_value(value.get_ref()).ok_or_else(|| {
            err(value.span(), format!("parameter `{}` takes a number, a boolean or a string", key.get_ref()))
        })?;
        check.set(key.get_ref(), &v).map_err(|r| err(key.span(), r))?;
        push("--set", format!("{}={v}", key.get_ref()));
    }
    if let Some(format) = &e.outputs.format {
        if !["table", "json"].contains(&format.get_ref().as_str()) {
            return Err(err(format.span(), format!("format must be `table` or `json`, got `{}`", format.get_ref())));
        }
        push("--format", format.get_ref().clone());
    }
    if let Some(dir) = out.map(Path::to_path_buf).or(e.outputs.dir.clone()) {
        push("--out", dir.display().to_string());
    }

    let command = match &e.sweep {
        None => {
            if e.outputs.slowdown == Some(true) {
                flags.push("--slowdown");
            }
            if e.outputs.barrier_idle == Some(true) {
                flags.push("--barrier-idle");
            }
            "simulate"
        }
        Some(sweep) => {
            let key = sweep.vary.get_ref();
            let mut values = Vec::new();
            for value in sweep.values.get_ref() {
                let v = set_value(value.get_ref())
                    .ok_or_else(|| err(value.span(), "a swept value is a number, a boolean or a string".into()))?;
                check.clone().set(key, &v).map_err(|r| err(value.span(), format!("{key} = {v}: {r}")))?;
                values.push(v);
            }
            if values.is_empty() {
                return Err(err(sweep.values.span(), "values is empty".into()));
            }
            push("--vary", format!("{key}={}", values.join(",")));
            if let Some(n) = seeds {
                push("--seeds", n.to_string());
            }
            if let Some(metrics) = &sweep.metrics {
                push("--metric", metrics.join(","));
            }
            "sweep"
        }
    };
    let mut line = vec![command.to_string()];
    line.extend(args);
    line.extend(flags.into_iter().map(String::from));
    Ok(line)
}

/// The resolved experiment `--out` writes: everything a rerun needs, with
/// every parameter's value in force.
#[derive(Serialize)]
struct Resolved {
    policies: ResolvedPolicies,
    workload: ResolvedWorkload,
    #[serde(skip_serializing_if = "Option::is_none")]
    cluster: Option<ResolvedCluster>,
    parameters: toml::Table,
    #[serde(skip_serializing_if = "Option::is_none")]
    sweep: Option<ResolvedSweep>,
    outputs: ResolvedOutputs,
}

/// The policies run: their names, or `[policies.NAME]` tables (in name
/// order) when some are composed.
#[derive(Serialize)]
#[serde(untagged)]
enum ResolvedPolicies {
    Names(Vec<String>),
    Tables(toml::Table),
}

impl ResolvedPolicies {
    /// `names` with the compositions of `compose` (`--compose`).
    fn of(names: &[String], compose: &[String]) -> ResolvedPolicies {
        if compose.is_empty() {
            return ResolvedPolicies::Names(names.to_vec());
        }
        let composed = |name: &str| {
            compose.iter().find_map(|c| {
                let (n, rest) = c.split_once('=')?;
                (n.trim() == name).then_some(rest)
            })
        };
        let tables = names.iter().map(|name| {
            let mut table = toml::Table::new();
            if let Some(rest) = composed(name) {
                let mut parts = rest.split(',');
                table.insert("from".into(), toml::Value::String(parts.next().unwrap_or_default().trim().into()));
                for (k, v) in parts.filter_map(|p| p.split_once('=')) {
                    let value = match v.trim() {
                        "true" => toml::Value::Boolean(true),
                        "false" => toml::Value::Boolean(false),
                        v => toml::Value::String(v.into()),
                    };
                    table.insert(k.trim().into(), value);
                }
            }
            (name.clone(), toml::Value::Table(table))
        });
        ResolvedPolicies::Tables(tables.collect())
    }
}

#[derive(Serialize)]
struct ResolvedWorkload {
    #[serde(skip_serializing_if = "Option::is_none")]
    scenario: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    scale: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    seed: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    seeds: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    long_jobs: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    window: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sample: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    fit_use: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    short_mean_task_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    truncate: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    finished_only: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    strict: Option<bool>,
}

#[derive(Serialize)]
struct ResolvedCluster {
    #[serde(skip_serializing_if = "Option::is_none")]
    nodes: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    node: Option<String>,
}

#[derive(Serialize)]
struct ResolvedSweep {
    vary: String,
    values: Vec<toml::Value>,
    metrics: Vec<String>,
}

#[derive(Serialize)]
struct ResolvedOutputs {
    format: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    slowdown: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    barrier_idle: Option<bool>,
}

/// A swept value as TOML: a number when it reads as one, else a string.
fn toml_value(v: &str) -> toml::Value {
    if let Ok(i) = v.parse::<i64>() {
        toml::Value::Integer(i)
    } else if let Ok(f) = v.parse::<f64>() {
        toml::Value::Float(f)
    } else {
        toml::Value::String(v.to_string())
    }
}

/// What a run was: the pieces of a resolved experiment.
pub struct RunDescription<'a> {
    /// The workload's flags.
    pub workload: &'a crate::workload_args::WorkloadArgs,
    /// The policies run, by name.
    pub policies: Vec<String>,
    /// The compositions among them (`--compose`).
    pub compose: &'a [String],
    /// The policies a program gave as profiles among them (Python
    /// planners), which the file names but cannot build.
    pub profiles: &'a [Profile],
    /// Every setting in force.
    pub settings: &'a Settings,
    /// `table` or `json`.
    pub format: &'a str,
    /// Whether slowdowns were measured (simulate only).
    pub slowdown: Option<bool>,
    /// `Some(true)` when barrier idle was measured (simulate only).
    pub barrier_idle: Option<bool>,
    /// The sweep: key, values, seed count and metrics.
    pub sweep: Option<(&'a str, &'a [String], u64, &'a [String])>,
}

/// Writes the resolved experiment of a run into `dir`.
pub fn write_resolved(dir: &Path, run: &RunDescription) -> Result<(), String> {
    let w = run.workload;
    let file = w.workload.as_ref().map(|p| std::path::absolute(p).unwrap_or_else(|_| p.clone()));
    let is_file = file.is_some();
    let (seed, seeds) = match run.sweep {
        Some((_, _, n, _)) if n > 1 => (None, Some(format!("{}..{}", w.seed, w.seed + n - 1))),
        _ => (Some(w.seed), None),
    };
    let window = w.window.map(|x| format!("{}..{}", x.start as f64 / 1e6, x.end as f64 / 1e6));
    let workload = ResolvedWorkload {
        scenario: (!is_file).then(|| w.scenario_name().to_string()),
        file,
        scale: (!is_file || w.nodes.is_none()).then_some(w.scale),
        seed,
        seeds,
        long_jobs: (!is_file).then(|| w.long_jobs.clone()),
        window,
        sample: is_file.then_some(w.sample),
        fit_use: w.fit_use.map(|f| format!("{},{}", f.short, f.long)),
        short_mean_task_s: w.short_mean_task_s,
        truncate: is_file.then_some(w.truncate),
        finished_only: is_file.then_some(w.finished_only),
        strict: is_file.then_some(w.strict),
    };
    let cluster = is_file.then(|| ResolvedCluster {
        nodes: w.nodes,
        node: w.node.map(|n| format!("{},{}", n.cpu_milli as f64 / 1000.0, n.mem_mb as f64 / 1024.0)),
    });
    let json = serde_json::to_value(run.settings).map_err(|e| e.to_string())?;
    let parameters: toml::Table = json
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| {
            let value = match v {
                serde_json::Value::Bool(b) => toml::Value::Boolean(*b),
                serde_json::Value::String(s) => toml::Value::String(s.clone()),
                serde_json::Value::Number(n) => match n.as_i64() {
                    Some(i) => toml::Value::Integer(i),
                    None => toml::Value::Float(n.as_f64()?),
                },
                _ => return None,
            };
            Some((k.clone(), value))
        })
        .collect();
    let sweep = run.sweep.map(|(key, values, _, metrics)| ResolvedSweep {
        vary: key.to_string(),
        values: values.iter().map(|v| toml_value(v)).collect(),
        metrics: metrics.to_vec(),
    });
    let resolved = Resolved {
        policies: ResolvedPolicies::of(&run.policies, run.compose),
        workload,
        cluster,
        parameters,
        sweep,
        outputs: ResolvedOutputs {
            format: run.format.to_string(),
            slowdown: run.slowdown,
            barrier_idle: run.barrier_idle,
        },
    };
    let body = toml::to_string(&resolved).map_err(|e| e.to_string())?;
    let mut text = format!("# The resolved experiment of these results: `pliant run {RESOLVED_NAME}` reruns it.\n");
    if !run.profiles.is_empty() {
        let names: Vec<&str> = run.profiles.iter().map(|o| o.name.as_str()).collect();
        text += &format!(
            "# Except {}: given as objects (planners written in Python), which a file cannot hold.\n",
            names.join(", ")
        );
    }
    text += &body;
    std::fs::write(dir.join(RESOLVED_NAME), text)
        .map_err(|e| format!("{}: cannot write {RESOLVED_NAME}: {e}", dir.display()))
}
