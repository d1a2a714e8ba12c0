//! The `pliant` command. This is the only layer (with the reports) that knows
//! about files: it reads inputs, runs the bodies and writes outputs.

mod catalog_cmd;
mod elasticity_cmd;
mod generate_cmd;
mod live_cmd;
mod manager_cmd;
mod numeric_cmd;
mod slurm_cmd;
mod trace_cmd;

use clap::{Parser, Subcommand};
use pliant_core::policy::Registry;
use std::process::ExitCode;

/// pliant: cluster scheduling where preemption keeps work.
#[derive(Parser)]
#[command(name = "pliant", version, about, long_about = None)]
struct Cli {
    /// No progress bars (they are drawn on stderr only when it is a terminal).
    #[arg(long, short, global = true)]
    quiet: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// `simulate` and `sweep`.
    #[command(flatten)]
    Simulation(pliant_run::Command),
    /// Run an experiment file (TOML): workload, cluster, policies, parameters, sweep, outputs.
    Run(RunArgs),
    /// The SSR paper's numerical studies (Eq. 4 / Fig. 8, Fig. 10).
    #[command(subcommand)]
    Numeric(numeric_cmd::NumericCmd),
    /// YARN-ME §6.2: run N Table 2 traces under yarn, elastic and meganode and print the avg-JCT ratios.
    Elasticity(elasticity_cmd::ElasticityArgs),
    /// Write a generated trace: `yarn-me` (YARN-ME Table 2) in the native format or DSS's SLS variant.
    Generate(generate_cmd::GenerateArgs),
    /// List the built-in scenarios.
    Scenarios,
    /// List the policy presets and their settable parameters.
    Policies {
        /// Print only the parameters, as the Markdown table of docs/parameters.md.
        #[arg(long)]
        markdown: bool,
    },
    /// Inspect and import real cluster traces (Google 2011, Alibaba, YARN SLS).
    #[command(subcommand)]
    Trace(trace_cmd::TraceCommand),
    /// Live-mode mechanisms on this machine (measure).
    #[command(flatten)]
    Live(live_cmd::LiveCommand),
    /// Live-mode cluster (local, serve, agent, submit, status, cancel, logs).
    #[command(flatten)]
    Cluster(manager_cmd::ManagerCommand),
    /// Place and preempt the jobs of a Slurm partition (Slurm runs them; see docs/slurm.md).
    Slurm(slurm_cmd::SlurmArgs),
}

/// Arguments of `pliant run`.
#[derive(clap::Args)]
struct RunArgs {
    /// The experiment file (see docs/experiment.md); `experiment.toml` of a
    /// results directory reruns that run.
    experiment: std::path::PathBuf,
    /// Write the results here (instead of the file's `[outputs] dir`).
    #[arg(long)]
    out: Option<std::path::PathBuf>,
}

fn run(command: Command, registry: &Registry) -> Result<(), String> {
    match command {
        Command::Run(args) => {
            pliant_run::Command::from_experiment(&args.experiment, args.out.as_deref(), registry)?.run()
        }
        Command::Simulation(mut command) => {
            command.policy_args().registry = registry.clone();
            command.run()
        }
        Command::Numeric(cmd) => numeric_cmd::run(cmd),
        Command::Elasticity(args) => elasticity_cmd::run(args),
        Command::Generate(args) => generate_cmd::run(args),
        Command::Scenarios => catalog_cmd::scenarios(),
        Command::Policies { markdown } => catalog_cmd::policies(markdown, registry),
        Command::Trace(cmd) => trace_cmd::run(cmd),
        Command::Live(cmd) => live_cmd::run(cmd, registry),
        Command::Cluster(cmd) => manager_cmd::run(cmd, registry),
        Command::Slurm(args) => slurm_cmd::run(args, registry),
    }
}

/// Whether `command` may end at once when its output pipe closes (`pliant
/// policies | head -1`): it holds no cgroup, swap file or task that an end
/// without clean-up would leave behind. The others keep Rust's default: a
/// write error they handle.
fn ends_on_broken_pipe(command: &Command) -> bool {
    use live_cmd::LiveCommand as L;
    use manager_cmd::ManagerCommand as M;
    !matches!(
        command,
        Command::Cluster(M::Local(_) | M::Serve(_) | M::Agent(_) | M::AgentWatchdog(_))
            | Command::Live(L::Measure(_) | L::Dirty(_))
            | Command::Slurm(_)
    )
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if ends_on_broken_pipe(&cli.command) {
        // SAFETY: restores SIGPIPE's default action before any thread starts;
        // a write to a closed pipe then ends the process quietly, as it ends
        // `cat` (the shell shows exit 141), instead of a panic.
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    }
    pliant_run::progress::set_quiet(cli.quiet);
    match run(cli.command, &Registry::new()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}
