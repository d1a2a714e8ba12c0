//! `pliant trace stats` and `pliant trace import`: the CLI glue over `pliant-trace`.

use pliant_core::{Resources, SECOND};
use pliant_run::{parse_node, parse_window};
use pliant_trace::{
    import, trace_stats, ClassRule, LoadOptions, ReadOptions, StatsOptions, Target, Unfinished, Window,
};
use std::io::Write;
use std::path::PathBuf;

/// `pliant trace …`
#[derive(Debug, clap::Subcommand)]
pub enum TraceCommand {
    /// Print what is in a trace: jobs, tasks, arrivals, percentiles, short share, evictions per band.
    Stats(StatsArgs),
    /// Convert a trace into pliant's native workload format (parsed once, replayed many times).
    Import(ImportArgs),
    /// Find the windows of a trace that hold about a given number of jobs, and of long jobs
    /// (BIG-C §5.5: 3.8 h, 2,202 jobs, 182 long), with the sample that thins a busier one.
    Windows(WindowsArgs),
}

/// Options shared by every trace command.
#[derive(Debug, clap::Args)]
pub struct ReadArgs {
    /// Trace files or directories (gzip or plain; the format is detected).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Size of the largest machine, which normalised requests are fractions of: CORES,GB
    /// (default 32,128; Alibaba v2017: 64,128).
    #[arg(long, value_parser = parse_node)]
    pub node: Option<Resources>,
    /// Only trace time START..END (seconds).
    #[arg(long, value_parser = parse_window)]
    pub window: Option<Window>,
    /// Keep runs unfinished in the window with the part of them it shows (the default; kept for
    /// older command lines).
    #[arg(long, conflicts_with = "finished_only")]
    pub truncate: bool,
    /// Keep only complete, finished runs (drop runs cut by the window's ends and runs that
    /// failed, were killed or lost); the result then carries less than the trace's load.
    #[arg(long)]
    pub finished_only: bool,
    /// Stop at the first malformed row instead of skipping and counting it.
    #[arg(long)]
    pub strict: bool,
    /// Longest duration of a short job, seconds.
    #[arg(long, default_value_t = 300.0)]
    pub short_max_s: f64,
    /// Most CPU-time of a short job, core-seconds.
    #[arg(long, default_value_t = 1000.0)]
    pub short_max_core_s: f64,
    /// Classify as Hawk does instead: a job is short when its tasks' mean run time is at most
    /// this many seconds (--short-max-s and --short-max-core-s are then not used).
    #[arg(long, value_name = "S")]
    pub short_mean_task_s: Option<f64>,
}

/// `pliant trace stats FILES…`
#[derive(Debug, clap::Args)]
pub struct StatsArgs {
    /// What to read.
    #[command(flatten)]
    pub read: ReadArgs,
    /// Width of an arrival-rate bucket, seconds.
    #[arg(long, default_value_t = 600.0)]
    pub bucket_s: f64,
}

/// `pliant trace import FILES… -o FILE`
#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    /// What to read.
    #[command(flatten)]
    pub read: ReadArgs,
    /// The native workload file to write.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Replay on this many nodes, keeping every job (default: the machines the trace ran on).
    #[arg(long, conflicts_with = "scale")]
    pub nodes: Option<u32>,
    /// Shrink the trace by this factor in (0, 1]: round(X × its machines) nodes and a
    /// sample (from --seed) of the same share of its jobs.
    #[arg(long, value_name = "X")]
    pub scale: Option<f64>,
    /// Keep this fraction of the jobs (0 < FRACTION ≤ 1).
    #[arg(long, default_value_t = 1.0)]
    pub sample: f64,
    /// Seed of the sample (--sample and --scale).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// `pliant trace windows FILES… --span-s S --jobs N --long L`
#[derive(Debug, clap::Args)]
pub struct WindowsArgs {
    /// What to read (--window narrows the search to part of the trace).
    #[command(flatten)]
    pub read: ReadArgs,
    /// Length of the window, seconds (BIG-C §5.5: 3.8 h).
    #[arg(long, default_value_t = 13680.0)]
    pub span_s: f64,
    /// Jobs the window should hold after the sample.
    #[arg(long, default_value_t = 2202)]
    pub jobs: u64,
    /// Long jobs among them.
    #[arg(long, default_value_t = 182)]
    pub long: u64,
    /// Windows start this many seconds apart.
    #[arg(long, default_value_t = 60.0)]
    pub step_s: f64,
    /// How many windows to list.
    #[arg(long, default_value_t = 5)]
    pub best: usize,
}

fn seconds(s: f64, what: &str) -> Result<u64, String> {
    if (0.0..1e12).contains(&s) {
        Ok((s * SECOND as f64).round() as u64)
    } else {
        Err(format!("{what} must be a non-negative number of seconds"))
    }
}

impl ReadArgs {
    fn options(&self) -> Result<(ReadOptions, ClassRule), String> {
        let read = ReadOptions {
            node: self.node,
            window: self.window,
            unfinished: if self.finished_only { Unfinished::Drop } else { Unfinished::Truncate },
            strict: self.strict,
            penalty: None,
        };
        let rule = ClassRule {
            max_short_duration: seconds(self.short_max_s, "--short-max-s")?,
            max_short_core_seconds: self.short_max_core_s,
            max_short_mean_task: self.short_mean_task_s.map(|s| seconds(s, "--short-mean-task-s")).transpose()?,
        };
        Ok((read, rule))
    }

    /// The flags that make a replay read the trace as this command did.
    fn replay_flags(&self) -> String {
        let mut flags = String::new();
        if self.finished_only {
            flags.push_str(" --finished-only");
        }
        match self.short_mean_task_s {
            Some(s) => flags.push_str(&format!(" --short-mean-task-s {s}")),
            None if self.short_max_s != 300.0 || self.short_max_core_s != 1000.0 => {
                flags.push_str(" (with the class limits given here)")
            }
            None => {}
        }
        flags
    }
}

/// `pliant trace windows`: the candidate windows as a table, then the replay's flags.
fn windows(a: &WindowsArgs) -> Result<String, String> {
    let (read, classes) = a.read.options()?;
    let opts = LoadOptions {
        read,
        target: Target::Nodes(1),
        classes,
        progress: pliant_run::progress::enabled(),
        ..Default::default()
    };
    let (w, rep) = pliant_trace::load_workload(&a.read.files, &opts).map_err(|e| e.to_string())?;
    eprintln!("{rep}");
    let origin = a.read.window.map_or(0, |win| win.start);
    let jobs: Vec<_> = w
        .jobs
        .iter()
        .filter(|j| pliant_trace::JobKind::of(&j.name).0 == pliant_trace::JobKind::Batch)
        .map(|j| (j.submit + origin, j.class))
        .collect();
    let target = pliant_trace::WindowTarget {
        span: seconds(a.span_s, "--span-s")?,
        jobs: a.jobs,
        long: a.long,
        step: seconds(a.step_s, "--step-s")?.max(1),
    };
    let picks = pliant_trace::pick_windows(&jobs, &target, a.best);
    let Some(best) = picks.first() else {
        let span = jobs.iter().map(|j| j.0).max().unwrap_or(0) - jobs.iter().map(|j| j.0).min().unwrap_or(0);
        return Err(format!(
            "the trace's batch jobs are submitted over {:.0} s, less than one window of {} s (--span-s)",
            span as f64 / SECOND as f64,
            a.span_s
        ));
    };
    let secs = |t: u64| t as f64 / SECOND as f64;
    let mut out = format!(
        "windows of {} s holding about {} jobs, {} long ({} batch jobs read)\n\
         {:>17}  {:>6} {:>6} {:>7}  {:>8} {:>8}  {:>6}\n",
        a.span_s,
        a.jobs,
        a.long,
        jobs.len(),
        "window s",
        "jobs",
        "long",
        "sample",
        "jobs×s",
        "long×s",
        "miss"
    );
    for p in &picks {
        out.push_str(&format!(
            "{:>17}  {:>6} {:>6} {:>7.4}  {:>8.0} {:>8.0}  {:>6.3}\n",
            format!("{}..{}", secs(p.start), secs(p.end)),
            p.jobs,
            p.long,
            p.sample,
            p.jobs as f64 * p.sample,
            p.long as f64 * p.sample,
            p.miss
        ));
    }
    out.push_str(&format!(
        "replay the first: --window {}..{} --sample {:.4}{} (the sample drawn from --seed; runs cut by the window's ends \
         may change the counts a little)\n",
        secs(best.start),
        secs(best.end),
        best.sample,
        a.read.replay_flags()
    ));
    Ok(out)
}

/// Runs a `pliant trace` command; errors come back as one line.
pub fn run(cmd: TraceCommand) -> Result<(), String> {
    match cmd {
        TraceCommand::Stats(a) => {
            let (read, classes) = a.read.options()?;
            let opts = StatsOptions {
                read,
                classes,
                bucket: seconds(a.bucket_s, "--bucket-s")?.max(1),
                progress: pliant_run::progress::enabled(),
            };
            let stats = trace_stats(&a.read.files, &opts).map_err(|e| e.to_string())?;
            let mut out = std::io::stdout().lock();
            match write!(out, "{stats}").and_then(|()| out.flush()) {
                // A reader that stopped early (`| head`) is not an error.
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                    Err(format!("cannot write the statistics: {e}"))
                }
                _ => Ok(()),
            }
        }
        TraceCommand::Import(a) => {
            let (read, classes) = a.read.options()?;
            let opts = LoadOptions {
                read,
                target: match (a.scale, a.nodes) {
                    (Some(x), _) => Target::Scale(x),
                    (None, Some(n)) => Target::Nodes(n),
                    (None, None) => Target::Source,
                },
                source_machines: None,
                sample: a.sample,
                seed: a.seed,
                classes,
                progress: pliant_run::progress::enabled(),
            };
            let file = std::fs::File::create(&a.output).map_err(|e| format!("{}: {e}", a.output.display()))?;
            let out = std::io::BufWriter::new(file);
            let rep = import(&a.read.files, &opts, out).map_err(|e| e.to_string())?;
            eprintln!("{rep}");
            eprintln!("wrote {}", a.output.display());
            Ok(())
        }
        TraceCommand::Windows(a) => {
            let table = windows(&a)?;
            print!("{table}");
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pliant_trace::DEFAULT_NODE;

    #[test]
    fn flags_parse_into_options() {
        assert_eq!(parse_node("32,128"), Ok(DEFAULT_NODE));
        assert_eq!(parse_window("600..4200"), Ok(Window { start: 600 * SECOND, end: 4200 * SECOND }));
        assert!(parse_window("5..5").is_err());
        assert!(parse_node("0,1").is_err());
    }
}
