//! Live-mode commands: `pliant measure` measures the preemption mechanisms on
//! this machine. `measure` runs its workload as `pliant dirty …` (a hidden
//! subcommand), so [`LiveCommand`] is meant to be flattened into the top-level
//! command.

use pliant_core::policy::Registry;
use pliant_live::dirtier::{self, DirtyArgs};
use pliant_live::measure::{self, MeasureConfig};
use pliant_run::settings::SettingsArgs;
use pliant_run::simulate::Format;
use std::path::PathBuf;
use std::time::Duration;

/// The live-mode subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum LiveCommand {
    /// Measure, on this machine, freeze/thaw latency, seconds per GB to reclaim
    /// and restore dirty memory, and cooperative checkpoint dump/restart
    /// (needs root, cgroups with cpu, memory and freezer, and swap or --temp-swap).
    Measure(MeasureArgs),
    /// The memory-dirtying workload `measure` runs.
    #[command(hide = true)]
    Dirty(DirtyCmd),
    /// Replay a live run (its state directory's journal) through the simulator
    /// and compare them, job by job and decision by decision.
    Twin(TwinArgs),
    /// Replay the cluster's own history (its state directory's journal)
    /// under several policies, side by side with what really happened: was
    /// the policy that ran the right one?
    WhatIf(crate::what_if_cmd::WhatIfArgs),
}

/// Options of `pliant twin`.
#[derive(Debug, clap::Args)]
pub struct TwinArgs {
    /// The live run's state directory (`--state-dir` of `pliant local` or `serve`).
    pub state_dir: PathBuf,
    /// Execution-model settings for the replay, e.g. `--config` with `pliant measure --out`'s file.
    #[command(flatten)]
    pub settings: SettingsArgs,
    /// Replay at the reclaim and restore rates of the settings (`--config`,
    /// `--set`, defaults) even where the run's journal shows its own.
    #[arg(long)]
    pub no_journal_rates: bool,
    /// Replay under this policy instead of the run's: a preset, a
    /// composition `NAME=FROM[,STEP=VALUE]...`, or `FILE#NAME` of an
    /// experiment file (what it would have decided on the same run).
    #[arg(long)]
    pub policy: Option<String>,
    /// Output format on standard output.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// Options of `pliant measure`.
#[derive(Debug, clap::Args)]
pub struct MeasureArgs {
    /// Dirty-memory sizes, comma-separated, in MB or with an M or G suffix.
    #[arg(long, value_delimiter = ',', default_value = "256M,512M,1G,2G", value_parser = parse_size_mb)]
    pub sizes: Vec<u64>,
    /// Turn on a temporary swap file for the run; it is turned off and deleted afterwards.
    #[arg(long)]
    pub temp_swap: bool,
    /// Seconds a memory-limit write may keep failing with EBUSY before reclaim counts as stalled.
    #[arg(long, default_value = "10", value_parser = parse_seconds)]
    pub patience: Duration,
    /// Also write the measured rates as a parameter file for `simulate --config`
    /// (reclaim_s_per_gb, restore_s_per_gb and the tier's bandwidth).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// The checkpoint tier whose bandwidth the measured disk sets in `--out`.
    #[arg(long, default_value = "ssd", value_parser = ["hdd", "ssd", "nvm"])]
    pub tier: String,
}

/// Options of the hidden `pliant dirty` workload.
#[derive(Debug, clap::Args)]
pub struct DirtyCmd {
    /// Buffer size in MB.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub mb: u64,
    /// Stop after this many passes.
    #[arg(long)]
    pub passes: Option<u64>,
    /// Also stop (printing `done N`) before the next pass once this file exists.
    #[arg(long, value_name = "FILE")]
    pub until_file: Option<PathBuf>,
}

/// Runs a live-mode subcommand; the twin builds the journal's policy through `registry`.
pub fn run(cmd: LiveCommand, registry: &Registry) -> Result<(), String> {
    match cmd {
        LiveCommand::Measure(args) => {
            let exe = std::env::current_exe().map_err(|e| format!("cannot find the pliant executable: {e}"))?;
            let cfg = MeasureConfig {
                sizes_mb: args.sizes,
                workload: vec![exe.to_string_lossy().into_owned(), "dirty".into()],
                temp_swap: args.temp_swap,
                patience: args.patience,
            };
            // Create the output first: a path that cannot be written fails before minutes of measuring.
            let out = match &args.out {
                Some(path) => Some((
                    path,
                    std::fs::File::create(path).map_err(|e| format!("{}: cannot write: {e}", path.display()))?,
                )),
                None => None,
            };
            let rows = measure::measure(&cfg, &mut |line| eprintln!("measure: {line}")).map_err(|e| e.to_string())?;
            print!("{}", measure::table(&rows));
            if let Some((path, mut file)) = out {
                use std::io::Write;
                let calibration = measure::calibrate(&rows, &args.tier).ok_or("nothing was measured")?;
                file.write_all(calibration.to_config(&rows).as_bytes())
                    .map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
                eprintln!("measure: wrote the calibration to {} (use it with simulate --config)", path.display());
            }
            Ok(())
        }
        LiveCommand::WhatIf(args) => crate::what_if_cmd::run(args, registry),
        LiveCommand::Dirty(d) => dirtier::run(DirtyArgs { mb: d.mb, passes: d.passes, until_file: d.until_file }),
        LiveCommand::Twin(args) => {
            let settings = args.settings.load()?;
            let replay = pliant_twin::Replay {
                reclaim_from: settings.source("reclaim_s_per_gb").into(),
                restore_from: settings.source("restore_s_per_gb").into(),
                exec: settings.exec,
                journal_rates: !args.no_journal_rates,
                registry: registry.clone(),
                policy: args.policy.map(|s| pliant_run::policy_spec::resolve("--policy", &s, registry)).transpose()?,
            };
            let report = pliant_twin::twin(&args.state_dir, replay)?;
            match args.format {
                Format::Table => print!("{}", pliant_twin::render::table(&report)),
                Format::Json => println!("{}", serde_json::to_string_pretty(&report).expect("the report serialises")),
            }
            Ok(())
        }
    }
}

/// `256M`, `2G` or a plain number of MB.
pub(crate) fn parse_size_mb(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (digits, factor) = match t.char_indices().last() {
        Some((i, 'G' | 'g')) => (&t[..i], 1024),
        Some((i, 'M' | 'm')) => (&t[..i], 1),
        _ => (t, 1),
    };
    match digits.parse::<u64>() {
        Ok(n) if n > 0 => Ok(n * factor),
        _ => Err(format!("`{s}` is not a size (e.g. 256M, 2G)")),
    }
}

pub(crate) fn parse_seconds(s: &str) -> Result<Duration, String> {
    match s.parse::<f64>() {
        Ok(x) if x > 0.0 && x.is_finite() => Ok(Duration::from_secs_f64(x)),
        _ => Err(format!("`{s}` is not a positive number of seconds")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_take_m_and_g_suffixes() {
        assert_eq!(parse_size_mb("256M"), Ok(256));
        assert_eq!(parse_size_mb("2G"), Ok(2048));
        assert_eq!(parse_size_mb("512"), Ok(512));
        assert!(parse_size_mb("0M").is_err());
        assert!(parse_size_mb("1T").is_err());
        assert!(parse_size_mb("").is_err());
        assert_eq!(parse_seconds("1.5"), Ok(Duration::from_millis(1500)));
        assert!(parse_seconds("-1").is_err());
    }
}
