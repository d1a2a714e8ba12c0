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
        };
        Ok((read, rule))
    }
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
