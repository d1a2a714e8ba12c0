//! pliant's simulator as the live cluster's twin. A live run leaves a journal
//! of every submission, report and decision; [`twin`] reads it back, builds
//! the workload the run really ran (each task's work as the run observed it),
//! replays it through the simulator under the same policy and parameters, and
//! puts the two side by side: per job and per decision, with the first point
//! where they part and why. [`what_if`] replays the same workload under other
//! policies beside it; the Slurm controller's journal is read as the
//! manager's ([`slurm_journal`]).
#![warn(missing_docs)]

pub mod compare;
pub mod decision;
pub mod observed;
pub mod rates;
pub mod render;
pub mod slurm_journal;
pub mod what_if;
pub mod window;

use pliant_core::policy::{Params, Profile, Registry};
use pliant_live::stepper::build_policy;
use pliant_manager::journal::{Journal, Step};
use pliant_manager::manager::ClusterConfig;
use pliant_sim::{simulate, ExecModel, KillModel, SimOptions};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// The version of the JSON report's layout (its `schema_version`): it
/// changes when a key changes meaning or goes away.
pub const SCHEMA_VERSION: u32 = 2;

/// A live run and its replay.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TwinReport {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The state directory the run left.
    pub state_dir: String,
    /// The policy replayed: the one the run ran, unless another was asked.
    pub policy: String,
    /// Its `--set` parameters.
    pub params: Vec<(String, String)>,
    /// The execution model the replay ran with.
    pub exec: ExecModel,
    /// Its swap rates, where they came from, and what the journal showed of them.
    pub rates: rates::Rates,
    /// The comparison.
    #[serde(flatten)]
    pub comparison: compare::Comparison,
}

/// How the replay runs.
#[derive(Debug, Clone)]
pub struct Replay {
    /// The execution model the settings give (`--config`, `--set`, defaults).
    pub exec: ExecModel,
    /// Where the settings' `reclaim_s_per_gb` came from (`--config FILE`, `--set`, `default`).
    pub reclaim_from: String,
    /// Where their `restore_s_per_gb` came from.
    pub restore_from: String,
    /// Run at the rates the run itself showed, where its journal shows them.
    pub journal_rates: bool,
    /// The plugins the policy is built from.
    pub registry: Registry,
    /// The policy to replay under instead of the journal's (what another
    /// policy would have decided on the same run).
    pub policy: Option<Profile>,
}

/// A live run's state directory, read: the cluster's configuration and
/// every journaled step.
#[derive(Debug, Clone)]
pub struct Journaled {
    /// The journal file.
    pub path: PathBuf,
    /// The cluster: policy, parameters, nodes.
    pub config: ClusterConfig,
    /// Every step, in order.
    pub steps: Vec<Step>,
}

impl Journaled {
    /// Reads the journal of `state_dir`, the manager's (`journal.sqlite`)
    /// or the Slurm controller's (`journal.jsonl`, see [`slurm_journal`]);
    /// the error names the directory or the file and why it cannot be replayed.
    pub fn read(state_dir: &Path) -> Result<Journaled, String> {
        let (manager, slurm) = (state_dir.join("journal.sqlite"), state_dir.join("journal.jsonl"));
        if slurm.is_file() && !manager.is_file() {
            let (config, steps) = slurm_journal::read(&slurm)?;
            return Ok(Journaled { path: slurm, config, steps });
        }
        if !manager.is_file() {
            return Err(format!(
                "{}: no journal.sqlite (pliant local or serve) nor journal.jsonl (pliant slurm) here: not the state \
                 directory of a pliant run",
                state_dir.display()
            ));
        }
        let journal = Journal::open(&manager).map_err(|e| e.to_string())?;
        let config: ClusterConfig = journal
            .get("config")
            .map_err(|e| e.to_string())?
            .ok_or_else(|| format!("{}: the journal holds no cluster configuration", manager.display()))?;
        let steps = journal.steps().map_err(|e| e.to_string())?;
        Ok(Journaled { path: manager, config, steps })
    }

    /// The run as it went: its workload, jobs and decisions.
    pub fn observe(&self) -> observed::Observed {
        let nodes: Vec<_> = self.config.nodes.iter().map(|n| n.capacity).collect();
        observed::observe(&nodes, &self.steps)
    }

    /// The policy parameters the run had.
    pub fn params(&self) -> Result<Params, String> {
        let mut params = Params::default();
        for (k, v) in &self.config.params {
            params.set(k, v).map_err(|e| e.to_string())?;
        }
        Ok(params)
    }

    /// The execution model a replay runs with and its swap rates: the
    /// settings' (`replay.exec`), or the run's own where its journal shows
    /// them and `replay.journal_rates` asks for them.
    pub fn exec_and_rates(&self, replay: &Replay) -> (ExecModel, rates::Rates) {
        let shown = rates::from_journal(&self.steps);
        let mut exec = replay.exec.clone();
        // A live task is a process: a kill loses its run alone, and the live
        // core's own max_attempts fails a job (no Spark application to fail).
        exec.kill_model = KillModel::Tasks;
        let pick = |given: &mut f64, from: &str, journal: rates::Shown| {
            let own = journal.s_per_gb().filter(|_| replay.journal_rates);
            *given = own.unwrap_or(*given);
            let from = if own.is_some() { "journal".to_string() } else { from.to_string() };
            rates::RateUsed { s_per_gb: *given, from, journal }
        };
        let rates = rates::Rates {
            reclaim: pick(&mut exec.reclaim_s_per_gb, &replay.reclaim_from, shown.reclaim),
            restore: pick(&mut exec.restore_s_per_gb, &replay.restore_from, shown.restore),
            tasks: if replay.journal_rates { shown.per_task() } else { Vec::new() },
            nodes: rates::given(&self.steps),
        };
        (exec, rates)
    }

    /// The simulator's options for a replay of this cluster at `exec` and
    /// `rates`: live nodes have no checkpoint tier the core knows, and only
    /// the mechanisms they can carry out (the manager tells its core so).
    pub fn sim_options(&self, exec: ExecModel, rates: &rates::Rates) -> SimOptions {
        SimOptions {
            exec,
            record_decisions: true,
            without_checkpoint_tier: true,
            node_mechanisms: self.config.mechanisms(),
            task_swap_rates: rates.tasks.clone(),
            node_swap_rates: rates.nodes.clone(),
            ..SimOptions::default()
        }
    }
}

/// Replays the live run kept in `state_dir` as `replay` says.
pub fn twin(state_dir: &Path, replay: Replay) -> Result<TwinReport, String> {
    let run = Journaled::read(state_dir)?;
    let observed = run.observe();
    if observed.jobs.is_empty() {
        return Err(format!("{}: the run has no jobs to replay", run.path.display()));
    }
    let config = &run.config;
    let policy = match &replay.policy {
        Some(profile) => build_policy(&replay.registry, profile, &config.params)?,
        None => config.policy(&replay.registry)?,
    };
    let params = run.params()?;
    let (exec, rates) = run.exec_and_rates(&replay);
    let opts = run.sim_options(exec.clone(), &rates);
    let policy_name = policy.name.clone();
    let record = simulate(&observed.workload, policy, &opts).map_err(|e| format!("the replay failed: {e}"))?;
    Ok(TwinReport {
        schema_version: SCHEMA_VERSION,
        state_dir: state_dir.display().to_string(),
        policy: policy_name,
        params: config.params.clone(),
        exec,
        rates,
        comparison: compare::compare(&observed, &record, params.monitor_interval()),
    })
}
