//! What other policies would have made of a live run: the workload the
//! cluster really ran, read from its journal (each submission with its time,
//! class, priority and requests; each task's work as it really ran, see
//! [`crate::observed`]), on its nodes (or as many of them as asked, taken in
//! turn) and at the swap rates its reclaims and restores really went at
//! (each task at its own where the journal shows them), ready to replay
//! under every policy asked. The policy that ran comes first, and its replay
//! on the cluster as it was is the twin: its worst JCT error against what
//! happened is the band within which the other replays can be believed.

use crate::compare::{compare, Comparison};
use crate::observed::Observed;
use crate::window::Window;
use crate::{rates, Journaled, Replay};
use pliant_core::policy::{Policy, Profile};
use pliant_core::Micros;
use pliant_live::stepper::build_policy;
use pliant_manager::manager::unfit_node;
use pliant_metrics::{JobRecord, RunRecord};
use pliant_sim::{simulate, NodeSwapRates, SimOptions};
use pliant_workload::Workload;
use std::collections::BTreeMap;
use std::path::Path;

/// The presets replayed beside the policy that ran when none are named
/// (those every node can carry out).
pub const DEFAULT_PRESETS: [&str; 7] = ["fifo", "priority", "kill", "ip", "gp", "suspend", "pliant"];

/// What to ask of the journal.
#[derive(Debug, Clone, Default)]
pub struct Question {
    /// The jobs to replay: those submitted in this window.
    pub window: Window,
    /// Replay on this many nodes (the journal's taken in turn) instead of the cluster's own.
    pub nodes: Option<usize>,
    /// The policies to replay besides the one that ran (`None`: [`DEFAULT_PRESETS`]).
    pub policies: Option<Vec<Profile>>,
}

/// A journal's workload ready to replay under several policies.
pub struct WhatIf {
    /// The journal file.
    pub path: String,
    /// The policy that ran.
    pub ran: String,
    /// Its `--set` parameters, which every replay has.
    pub params: Vec<(String, String)>,
    /// The policies to replay, the one that ran first.
    pub policies: Vec<Policy>,
    /// Default presets left out: a node cannot carry out their mechanism.
    pub left_out: Vec<String>,
    /// The jobs of the window, at the nodes asked.
    pub workload: Workload,
    /// The simulator's options for every replay.
    pub opts: SimOptions,
    /// The swap rates the replays run at.
    pub rates: rates::Rates,
    /// The nodes of the cluster as it was.
    pub journal_nodes: usize,
    /// The window's jobs as they went live.
    pub observed: Observed,
    /// The run's monitor period (how far apart the same preemption's times may be).
    monitor: Micros,
    /// The workload on the cluster as it was, where `--nodes` changed it.
    as_it_was: Option<(Workload, SimOptions)>,
}

/// Reads the journal of `state_dir` and makes ready the replays `question`
/// asks for, at the execution model and rates `replay` gives. Errors (no
/// journal, no job in the window, a policy no node can carry out) come
/// before anything runs.
pub fn prepare(state_dir: &Path, replay: &Replay, question: &Question) -> Result<WhatIf, String> {
    let run = Journaled::read(state_dir)?;
    let path = run.path.display().to_string();
    let config = &run.config;
    let all = run.observe();
    let submitted = (all.jobs.first().map(|j| j.submit), all.jobs.last().map(|j| j.submit));
    let (exec, rates) = run.exec_and_rates(replay);
    let (observed, tasks) = question.window.apply(all, &rates.tasks);
    if observed.jobs.is_empty() {
        let span = match submitted {
            (Some(a), Some(b)) => format!("its jobs were submitted from {:.1} s to {:.1} s", secs(a), secs(b)),
            _ => "it holds no job".to_string(),
        };
        return Err(format!("{path}: no job was submitted in the window asked ({span} after the cluster started)"));
    }
    // The rates given before the window opened hold from its start.
    let shift = |r: &NodeSwapRates| NodeSwapRates { at: r.at.saturating_sub(question.window.since), ..*r };
    let nodes = rates.nodes.iter().map(shift).collect();
    let rates = rates::Rates { tasks, nodes, ..rates };
    let ran = run.config.policy(&replay.registry)?;
    let mut policies = vec![ran.clone()];
    let mut left_out = Vec::new();
    let unfit = |policy: &Policy| config.nodes.iter().find_map(|n| unfit_node(&policy.name, policy, n));
    let named = match &question.policies {
        Some(profiles) => profiles.clone(),
        None => DEFAULT_PRESETS.iter().map(|p| replay.registry.preset(p)).collect::<Result<_, _>>()?,
    };
    for profile in named.iter().filter(|p| p.name != ran.name) {
        let policy = build_policy(&replay.registry, profile, &config.params)?;
        match (unfit(&policy), &question.policies) {
            (None, _) => policies.push(policy),
            (Some(why), Some(_)) => return Err(why),
            (Some(_), None) => left_out.push(profile.name.clone()),
        }
    }
    let params = run.params()?;
    let real_opts = run.sim_options(exec, &rates);
    let mut workload = observed.workload.clone();
    let mut opts = real_opts.clone();
    let journal_nodes = config.nodes.len();
    let as_it_was = match question.nodes {
        Some(n) if n != journal_nodes => {
            workload.cluster.nodes = (0..n).map(|i| config.nodes[i % journal_nodes].capacity).collect();
            opts.node_mechanisms = (0..n).map(|i| real_opts.node_mechanisms[i % journal_nodes].clone()).collect();
            // A node stands for the journal's node it copies, rates included.
            opts.node_swap_rates = (real_opts.node_swap_rates.iter())
                .flat_map(|r| {
                    (r.node as usize..n).step_by(journal_nodes).map(move |i| NodeSwapRates { node: i as u32, ..*r })
                })
                .collect();
            Some((observed.workload.clone(), real_opts))
        }
        _ => None,
    };
    Ok(WhatIf {
        path,
        ran: ran.name,
        params: config.params.clone(),
        policies,
        left_out,
        workload,
        opts,
        rates,
        journal_nodes,
        observed,
        monitor: params.monitor_interval(),
        as_it_was,
    })
}

fn secs(us: Micros) -> f64 {
    us as f64 / 1e6
}

impl WhatIf {
    /// The twin: the replay of the policy that ran on the cluster as it was
    /// (`replayed`, the first replay, where the nodes were not changed)
    /// against what happened.
    pub fn twin(&self, replayed: &RunRecord) -> Result<Comparison, String> {
        let own;
        let record = match &self.as_it_was {
            None => replayed,
            Some((workload, opts)) => {
                own = simulate(workload, self.policies[0].clone(), opts)
                    .map_err(|e| format!("the replay failed: {e}"))?;
                &own
            }
        };
        Ok(compare(&self.observed, record, self.monitor))
    }

    /// Whether each job of the window finished live (one that did not —
    /// still running when the journal ends, killed for good, failed or
    /// cancelled — has no JCT to compare).
    pub fn finished_live(&self) -> Vec<bool> {
        self.observed.jobs.iter().map(|j| j.end.is_some()).collect()
    }

    /// What happened, as a run record: each job's times and preemptions,
    /// the preemptions by mechanism, the work lost to kills (the whole of
    /// its waste: the journal does not show the time held while memory
    /// moved), and the CPU the tasks' work kept busy over the cluster's.
    pub fn live(&self) -> RunRecord {
        let nodes = &self.observed.workload.cluster.nodes;
        let cores: f64 = nodes.iter().map(|n| n.cpu_milli as f64 / 1000.0).sum();
        let jobs: Vec<JobRecord> = self
            .observed
            .jobs
            .iter()
            .zip(&self.observed.workload.jobs)
            .map(|(l, w)| JobRecord {
                name: l.name.clone(),
                class: l.class,
                priority: w.priority,
                submit: l.submit,
                first_start: l.first_start,
                end: l.end,
                failed: false,
                tasks: w.phases.iter().map(|p| p.tasks.len() as u32).sum(),
                preemptions: l.preemptions,
                attempts: u32::from(l.first_start.is_some()),
                kills: l.kills,
                relaunches: l.relaunches,
                stalled: 0,
                retry_end: None,
                alone: None,
            })
            .collect();
        let mut preemptions = BTreeMap::new();
        for d in &self.observed.decisions {
            if let crate::decision::Kind::Preempt { mechanism } = d.kind {
                *preemptions.entry(mechanism.name().to_string()).or_insert(0) += 1;
            }
        }
        let lost = self.observed.lost_work_core_seconds();
        let work: f64 = self
            .observed
            .workload
            .jobs
            .iter()
            .flat_map(|j| j.phases.iter().flat_map(|p| &p.tasks))
            .map(|t| secs(t.duration) * t.request.cpu_milli as f64 / 1000.0)
            .sum();
        let makespan = self.observed.end;
        let capacity = cores * secs(makespan);
        RunRecord {
            policy: format!("{} (live)", self.ran),
            jobs,
            cpu_mean: if capacity > 0.0 { (work + lost) / capacity } else { 0.0 },
            waste_core_seconds: lost,
            lost_work_core_seconds: lost,
            preemptions,
            cluster_cores: cores,
            makespan,
            ..RunRecord::default()
        }
    }
}
