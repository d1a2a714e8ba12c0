//! The `pliant` command as a library: [`App`] is the whole command line over
//! a registry of plugins, so that a crate of its own builds its own `pliant`
//! — every command, its planners and mechanisms registered by name — as
//! `examples/custom-policy` does. This is the only layer (with the reports)
//! that knows about files: it reads inputs, runs the bodies and writes
//! outputs.

mod catalog_cmd;
mod elasticity_cmd;
mod generate_cmd;
mod live_cmd;
mod manager_cmd;
mod numeric_cmd;
mod slurm_cmd;
mod trace_cmd;
mod what_if_cmd;

use clap::{Parser, Subcommand};
use pliant_core::policy::steps::{MechanismPlugin, PlannerPlugin};
use pliant_core::policy::{Profile, Registry};
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

/// The `pliant` command line over the built-in plugins and those registered:
/// `App::new().planner(&MINE).run()` is a `pliant` with one more planner.
pub struct App {
    registry: Registry,
}

impl Default for App {
    fn default() -> App {
        App::new()
    }
}

impl App {
    /// The command line with the built-in plugins only: the stock `pliant`.
    pub fn new() -> App {
        App { registry: pliant_plugins::registry() }
    }

    /// Registers a planner by its name (see `Registry::add_planner`).
    ///
    /// # Panics
    /// If a planner of that name is registered already.
    pub fn planner(mut self, plugin: &'static dyn PlannerPlugin) -> App {
        self.registry.add_planner(plugin).unwrap_or_else(|e| panic!("{e}"));
        self
    }

    /// Registers a mechanism by its name (see `Registry::add_mechanism`).
    ///
    /// # Panics
    /// If a mechanism of that name is registered already.
    pub fn mechanism(mut self, plugin: &'static dyn MechanismPlugin) -> App {
        self.registry.add_mechanism(plugin).unwrap_or_else(|e| panic!("{e}"));
        self
    }

    /// Registers a named policy, which every command then takes by its
    /// name as it takes a preset (see `Registry::add_policy`).
    ///
    /// # Panics
    /// If its name is taken or it names a plugin not registered.
    pub fn policy(mut self, profile: Profile) -> App {
        self.registry.add_policy(profile).unwrap_or_else(|e| panic!("{e}"));
        self
    }

    /// Parses the process's arguments and runs the command; an error is one
    /// line on stderr and exit code 2.
    pub fn run(self) -> ExitCode {
        let cli = Cli::parse();
        if ends_on_broken_pipe(&cli.command) {
            // SAFETY: restores SIGPIPE's default action before any thread starts;
            // a write to a closed pipe then ends the process quietly, as it ends
            // `cat` (the shell shows exit 141), instead of a panic.
            unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
        }
        pliant_run::progress::set_quiet(cli.quiet);
        match run(cli.command, &self.registry) {
            Ok(()) => ExitCode::SUCCESS,
            Err(message) => {
                eprintln!("error: {message}");
                ExitCode::from(2)
            }
        }
    }
}
