//! `pliant what-if STATE_DIR`: the cluster's own history, read from its
//! journal, replayed under every policy named, side by side in `simulate`'s
//! table, JSON and `--out` files, beside what really happened.

use pliant_core::policy::Registry;
use pliant_core::{Micros, SECOND};
use pliant_metrics::RunRecord;
use pliant_report::{comparison_json, comparison_table, counted, plot_cpu_timeline};
use pliant_run::settings::SettingsArgs;
use pliant_run::simulate::{run_all, write_outputs, Format};
use pliant_twin::compare::Comparison;
use pliant_twin::what_if::{prepare, Question, WhatIf};
use pliant_twin::window::Window;
use serde::Serialize;
use std::path::PathBuf;

/// Options of `pliant what-if`.
#[derive(Debug, clap::Args)]
#[command(after_long_help = COUNTING)]
pub struct WhatIfArgs {
    /// The cluster's state directory (`--state-dir` of `pliant local` or `serve`).
    pub state_dir: PathBuf,
    /// Comma-separated policies to replay beside the one that ran: presets
    /// (`pliant policies`) or `FILE#NAME` of an experiment file; default:
    /// fifo, priority, kill, ip, gp, suspend and pliant, those every node can carry out.
    #[arg(long, value_delimiter = ',')]
    pub policies: Option<Vec<String>>,
    /// A policy composed from a preset's steps, `NAME=FROM[,STEP=VALUE]...`;
    /// repeatable; replayed after the --policies (or the default ones).
    #[arg(long = "compose", value_name = "NAME=FROM[,STEP=VALUE]...")]
    pub compose: Vec<String>,
    /// Replay only the jobs submitted at or after this time since the
    /// cluster started: seconds, or with a unit (`90s`, `15m`, `2h`, `1d`).
    #[arg(long, value_parser = parse_since_start)]
    pub since: Option<Micros>,
    /// Replay only the jobs submitted before this time since the cluster started.
    #[arg(long, value_parser = parse_since_start)]
    pub until: Option<Micros>,
    /// Replay on this many nodes (the cluster's own taken in turn) instead of the cluster's.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub nodes: Option<u32>,
    /// Execution-model settings for the replays (`--config`, `--set`).
    #[command(flatten)]
    pub settings: SettingsArgs,
    /// Replay at the reclaim and restore rates of the settings even where
    /// the journal shows the cluster's own.
    #[arg(long)]
    pub no_journal_rates: bool,
    /// Output format on standard output.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Also write results.json, jobs.csv, preemptions.csv, jct_cdf.svg and cpu_timeline.svg here.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// How the journal's jobs are counted, for `--help`.
const COUNTING: &str = "\
How the journal is counted:
  Each job is replayed as it was submitted (time, class, priority, requests,
  phases); each task's work is the time it really ran at full allocation in
  its last attempt (a kill loses the attempt, as it did live). A job that did
  not finish live (still running when the journal ends, failed, cancelled)
  is replayed with the work it had done, so it holds room as it did, but it
  is left out of every row's JCT columns: it has no JCT to compare. The
  first replay is the policy that ran; the row `NAME (live)` is what really
  happened, and the worst JCT error of that replay on the cluster as it was
  (the twin) is the band within which the other rows can be believed.
  --since and --until keep the jobs submitted in the window (earlier jobs
  are left out even if they still held room).";

/// `90`, `90s`, `15m`, `2h`, `1d`: µs since the cluster started.
fn parse_since_start(s: &str) -> Result<Micros, String> {
    let t = s.trim();
    let (number, unit) = match t.char_indices().last() {
        Some((i, 's')) => (&t[..i], 1.0),
        Some((i, 'm')) => (&t[..i], 60.0),
        Some((i, 'h')) => (&t[..i], 3600.0),
        Some((i, 'd')) => (&t[..i], 86400.0),
        _ => (t, 1.0),
    };
    match number.parse::<f64>() {
        Ok(x) if x >= 0.0 && (x * unit) < 1e12 => Ok((x * unit * SECOND as f64).round() as Micros),
        _ => Err(format!("`{s}` is not a time since the cluster started (e.g. 90, 15m, 2h, 1d)")),
    }
}

/// One policy ranked by mean JCT.
#[derive(Debug, Clone, Serialize)]
struct Ranked {
    policy: String,
    /// Mean JCT of the jobs finished (both classes), seconds.
    mean_jct_s: Option<f64>,
    /// Its change from the replay of the policy that ran (0.05: 5 % longer).
    vs_ran: Option<f64>,
    /// Whether the change is within the band (the twin's worst JCT error).
    within_band: bool,
}

/// What `what-if` adds to `simulate`'s JSON document, under `what_if`.
#[derive(Debug, Clone, Serialize)]
struct WhatIfDoc {
    state_dir: String,
    /// The policy that ran (the first result).
    policy_ran: String,
    /// The twin's worst JCT error: the band within which the rows can be believed.
    band_worst_jct_error: Option<f64>,
    /// What happened, in the layout of a result.
    live: serde_json::Value,
    /// The replays by mean JCT, best first.
    ranking: Vec<Ranked>,
    /// The window, seconds since the cluster started.
    since_s: f64,
    until_s: Option<f64>,
    /// The cluster's nodes and the nodes replayed.
    journal_nodes: usize,
    nodes: usize,
    /// Jobs submitted in the window.
    jobs: usize,
    /// Jobs that did not finish live, left out of the JCT columns.
    unfinished_live: Vec<String>,
    /// Default presets the nodes cannot carry out.
    left_out: Vec<String>,
}

fn mean_jct(run: &RunRecord) -> Option<f64> {
    let jcts: Vec<f64> = run.jobs.iter().filter_map(|j| j.jct()).map(|t| t as f64 / 1e6).collect();
    (!jcts.is_empty()).then(|| jcts.iter().sum::<f64>() / jcts.len() as f64)
}

fn ranking(replays: &[RunRecord], band: Option<f64>) -> Vec<Ranked> {
    let ran = mean_jct(&replays[0]);
    let mut ranked: Vec<Ranked> = replays
        .iter()
        .map(|r| {
            let mean = mean_jct(r);
            let vs_ran = mean.zip(ran).map(|(m, base)| m / base.max(1e-9) - 1.0);
            let within_band = vs_ran.zip(band).is_some_and(|(v, b)| v.abs() <= b);
            Ranked { policy: r.policy.clone(), mean_jct_s: mean, vs_ran, within_band }
        })
        .collect();
    ranked.sort_by(|a, b| a.mean_jct_s.unwrap_or(f64::INFINITY).total_cmp(&b.mean_jct_s.unwrap_or(f64::INFINITY)));
    ranked
}

fn percent(x: Option<f64>) -> String {
    x.map_or_else(|| "-".into(), |v| format!("{:.1} %", v * 100.0))
}

/// The lines under the table: the band, the ranking, what was left out.
fn notes(w: &WhatIf, twin: &Comparison, doc: &WhatIfDoc) -> String {
    let finished = twin.jobs.iter().filter(|j| j.jct_error.is_some()).count();
    let mut s = format!(
        "{ran} (live) is what happened; {ran} is its replay. The replay of {ran} on the cluster as it was is off by at \
         most {band} in JCT (the twin's worst error, over the {finished} jobs that finished in both): a difference \
         between rows smaller than that cannot be told from the replay's error.\n",
        ran = w.ran,
        band = percent(doc.band_worst_jct_error),
    );
    s.push_str("by mean JCT of the jobs finished, best first (change from the replay of the policy that ran):\n");
    for r in &doc.ranking {
        let mean = r.mean_jct_s.map_or_else(|| "-".into(), |m| format!("{m:.2} s"));
        let vs = r.vs_ran.map_or_else(|| "-".into(), |v| format!("{:+.1} %", v * 100.0));
        let band = if r.within_band { " (within the band)" } else { "" };
        s.push_str(&format!("  {:<16} {mean:>10}  {vs:>8}{band}\n", r.policy));
    }
    s.push_str(&format!(
        "swap rates: reclaim {:.2} s/GB from {}, restore {:.2} s/GB from {} ({} at their own)\n",
        w.rates.reclaim.s_per_gb,
        w.rates.reclaim.from,
        w.rates.restore.s_per_gb,
        w.rates.restore.from,
        counted(w.rates.tasks.len(), "task")
    ));
    if let Some(first) = doc.unfinished_live.first() {
        let more = doc.unfinished_live.len() - 1;
        let rest = if more > 0 { format!(" and {more} more (the JSON names them all)") } else { String::new() };
        s.push_str(&format!(
            "{} did not finish live, replayed but left out of the JCT columns: {first}{rest}\n",
            counted(doc.unfinished_live.len(), "job")
        ));
    }
    if !doc.left_out.is_empty() {
        s.push_str(&format!("left out (a node cannot carry out their preemption): {}\n", doc.left_out.join(", ")));
    }
    s
}

/// Runs `pliant what-if`.
pub fn run(args: WhatIfArgs, registry: &Registry) -> Result<(), String> {
    let mut profiles = Vec::new();
    for name in args.policies.iter().flatten().map(|s| s.trim()).filter(|s| !s.is_empty()) {
        profiles.push(pliant_run::policy_spec::resolve("--policies", name, registry)?);
    }
    for spec in &args.compose {
        profiles.push(pliant_run::policy_spec::composition("--compose", spec, registry)?);
    }
    if let (Some(since), Some(until)) = (args.since, args.until) {
        if since >= until {
            return Err("--since must come before --until".into());
        }
    }
    let settings = args.settings.load()?;
    let replay = pliant_twin::Replay {
        reclaim_from: settings.source("reclaim_s_per_gb").into(),
        restore_from: settings.source("restore_s_per_gb").into(),
        exec: settings.exec.clone(),
        journal_rates: !args.no_journal_rates,
        registry: registry.clone(),
        policy: None,
    };
    let question = Question {
        window: Window { since: args.since.unwrap_or(0), until: args.until },
        nodes: args.nodes.map(|n| n as usize),
        policies: (args.policies.is_some() || !args.compose.is_empty()).then_some(profiles),
    };
    let w = prepare(&args.state_dir, &replay, &question)?;
    if let Some(dir) = &args.out {
        pliant_run::out_dir::check(dir)?;
    }
    let mut replays = run_all(&w.workload, w.policies.clone(), w.opts.clone())?;
    let twin = w.twin(&replays[0])?;
    let mut live = w.live();
    let finished = w.finished_live();
    for run in replays.iter_mut().chain(std::iter::once(&mut live)) {
        let mut keep = finished.iter();
        run.jobs.retain(|_| *keep.next().unwrap_or(&true));
    }
    let live_result = comparison_json("", 0, 1.0, (), std::slice::from_ref(&live)).results;
    let unfinished_live = w.observed.jobs.iter().filter(|j| j.end.is_none()).map(|j| j.name.clone()).collect();
    let what_if = WhatIfDoc {
        state_dir: args.state_dir.display().to_string(),
        policy_ran: w.ran.clone(),
        band_worst_jct_error: twin.worst_jct_error,
        live: serde_json::to_value(&live_result[0]).map_err(|e| e.to_string())?,
        ranking: ranking(&replays, twin.worst_jct_error),
        since_s: question.window.since as f64 / 1e6,
        until_s: question.window.until.map(|u| u as f64 / 1e6),
        journal_nodes: w.journal_nodes,
        nodes: w.workload.cluster.nodes.len(),
        jobs: w.workload.jobs.len(),
        unfinished_live,
        left_out: w.left_out.clone(),
    };
    let params = serde_json::json!({ "policy_params": w.params, "exec": w.opts.exec });
    let name = args.state_dir.display().to_string();
    let mut doc = serde_json::to_value(comparison_json(&name, 0, 1.0, params, &replays)).map_err(|e| e.to_string())?;
    doc["what_if"] = serde_json::to_value(&what_if).map_err(|e| e.to_string())?;
    let json = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?;
    let mut rows = vec![live];
    rows.extend(replays);
    let title = format!(
        "what-if on {}: {} on {} (the cluster had {})",
        w.path,
        counted(what_if.jobs, "job"),
        counted(what_if.nodes, "node"),
        w.journal_nodes
    );
    match args.format {
        Format::Json => println!("{json}"),
        Format::Table => print!("{}{}", comparison_table(&title, &rows), notes(&w, &twin, &what_if)),
    }
    if let Some(dir) = &args.out {
        let written = write_outputs(dir, &title, None, &json, &rows)?;
        // The journal samples no CPU over time: the timeline shows the replays alone.
        plot_cpu_timeline(&rows[1..], &title, None, &dir.join("cpu_timeline.svg"))
            .map_err(|e| format!("{}: cannot plot cpu_timeline.svg: {e}", dir.display()))?;
        eprintln!("{}", pliant_run::out_dir::wrote(dir, &written));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_since_the_start_take_units() {
        assert_eq!(parse_since_start("90"), Ok(90 * SECOND));
        assert_eq!(parse_since_start("1.5s"), Ok(1_500_000));
        assert_eq!(parse_since_start("15m"), Ok(900 * SECOND));
        assert_eq!(parse_since_start("2h"), Ok(7200 * SECOND));
        assert_eq!(parse_since_start("1d"), Ok(86_400 * SECOND));
        assert!(parse_since_start("-1").is_err());
        assert!(parse_since_start("soon").is_err());
    }
}
