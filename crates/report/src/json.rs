//! The JSON report. Its keys are stable and documented in docs/output.md:
//! `scenario`, `seed`, `scale`, `params`, and `results`, one object per policy.

use pliant_core::model::{JobClass, PriorityLevel};
use pliant_metrics::{summarise, summarise_level, Attempts, CheckpointCounts, ClassSummary, RunRecord};
use serde::Serialize;
use std::collections::BTreeMap;

/// One policy's results.
#[derive(Debug, Clone, Serialize)]
pub struct PolicyResult {
    /// The policy's name.
    pub policy: String,
    /// Per-class summaries, keyed `short` and `long`, and per priority level,
    /// keyed `free`, `middle` and `production`.
    pub classes: BTreeMap<&'static str, ClassSummary>,
    /// Mean JCT per priority level over that of the paper's kill baseline
    /// (`priority-kill`, or else `kill`) in the same comparison, if it was run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jct_vs_kill: Option<BTreeMap<&'static str, f64>>,
    /// Utilisation means.
    pub utilization: Utilization,
    /// Core-seconds lost to kills and held while reclaiming, dumping or restoring.
    pub waste_core_seconds: f64,
    /// The part of the waste that is work lost to kills.
    pub lost_work_core_seconds: f64,
    /// Core-seconds of slots reserved and left idle (SSR's utilisation loss), if any.
    #[serde(skip_serializing_if = "is_zero")]
    pub reserved_idle_core_seconds: f64,
    /// The waste in core-hours.
    pub waste_core_hours: f64,
    /// Core-hours running Spark executors held waiting at their stage's
    /// barrier for its slowest executor (only with `simulate --barrier-idle`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub barrier_idle_core_hours: Option<f64>,
    /// The waste as a percentage of the cluster's capacity (cores × makespan).
    pub waste_pct_capacity: f64,
    /// Dumps (full, incremental), restores (local, remote) and adaptive kills.
    pub checkpoints: CheckpointCounts,
    /// Energy from the per-node linear power model, in kWh.
    pub energy_kwh: f64,
    /// Preemptions by mechanism.
    pub preemptions: BTreeMap<String, u64>,
    /// Tasks killed, started again, and application attempts beyond the first.
    pub attempts: Attempts,
    /// Time of the last event, in seconds.
    pub makespan_s: f64,
    /// The simulator's own cost.
    pub sim: SimFigures,
}

/// Utilisation means over the run.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Utilization {
    /// Mean CPU in use by progressing tasks over total CPU.
    pub cpu_mean: f64,
    /// Mean memory allocated over total memory.
    pub mem_mean: f64,
}

/// The simulator's cost for one run.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct SimFigures {
    /// Events processed.
    pub events: u64,
    /// Wall-clock seconds (the only non-deterministic field).
    pub wall_seconds: f64,
    /// Events per wall-clock second.
    pub events_per_second: f64,
}

/// The version of the JSON documents' layout (`simulate`'s and `sweep`'s),
/// raised whenever a key changes meaning or goes away.
pub const SCHEMA_VERSION: u32 = 1;

/// A side-by-side comparison of policies on one workload.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison<P: Serialize> {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The scenario name or workload file.
    pub scenario: String,
    /// The seed.
    pub seed: u64,
    /// The scale factor.
    pub scale: f64,
    /// The policy parameters in force.
    pub params: P,
    /// One entry per policy, in the order run.
    pub results: Vec<PolicyResult>,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

fn policy_result(run: &RunRecord) -> PolicyResult {
    let mut classes = BTreeMap::new();
    for class in [JobClass::Short, JobClass::Long] {
        classes.insert(class.name(), summarise(&run.jobs, class));
    }
    for level in PriorityLevel::ALL {
        classes.insert(level.name(), summarise_level(&run.jobs, level));
    }
    let wall = run.cost.wall_seconds;
    let capacity = run.cluster_cores * run.makespan as f64 / 1e6;
    PolicyResult {
        policy: run.policy.clone(),
        classes,
        jct_vs_kill: None,
        waste_core_hours: run.waste_core_seconds / 3600.0,
        barrier_idle_core_hours: run.barrier_idle_core_seconds.map(|s| s / 3600.0),
        waste_pct_capacity: if capacity > 0.0 { 100.0 * run.waste_core_seconds / capacity } else { 0.0 },
        checkpoints: run.checkpoints,
        utilization: Utilization { cpu_mean: run.cpu_mean, mem_mean: run.mem_mean },
        waste_core_seconds: run.waste_core_seconds,
        lost_work_core_seconds: run.lost_work_core_seconds,
        reserved_idle_core_seconds: run.reserved_core_seconds,
        energy_kwh: run.energy_joules / 3.6e6,
        preemptions: run.preemptions.clone(),
        attempts: Attempts::of(&run.jobs),
        makespan_s: run.makespan as f64 / 1e6,
        sim: SimFigures {
            events: run.cost.events,
            wall_seconds: wall,
            events_per_second: if wall > 0.0 { run.cost.events as f64 / wall } else { 0.0 },
        },
    }
}

/// The run that per-level JCTs are normalised to: the checkpoint paper's
/// kill baseline (`priority-kill`), or else `kill`.
pub(crate) fn kill_baseline(runs: &[RunRecord]) -> Option<&RunRecord> {
    ["priority-kill", "kill"].iter().find_map(|b| runs.iter().find(|r| r.policy == *b))
}

/// Builds the comparison document.
pub fn comparison_json<P: Serialize>(
    scenario: &str,
    seed: u64,
    scale: f64,
    params: P,
    runs: &[RunRecord],
) -> Comparison<P> {
    let mut results: Vec<PolicyResult> = runs.iter().map(policy_result).collect();
    if let Some(base) = kill_baseline(runs).map(|b| policy_result(b).classes) {
        for r in &mut results {
            let ratios = PriorityLevel::ALL
                .iter()
                .filter(|l| base[l.name()].jct.mean > 0.0 && r.classes[l.name()].jct.count > 0)
                .map(|l| (l.name(), r.classes[l.name()].jct.mean / base[l.name()].jct.mean))
                .collect();
            r.jct_vs_kill = Some(ratios);
        }
    }
    Comparison { schema_version: SCHEMA_VERSION, scenario: scenario.to_string(), seed, scale, params, results }
}

/// Figures of a run by their dotted paths in the run's JSON result, e.g.
/// `classes.short.queue_delay.mean` or `waste_core_seconds`; `None` where the
/// result holds `null` (nothing measured).
pub fn result_metrics(run: &RunRecord, paths: &[String]) -> Result<Vec<Option<f64>>, String> {
    let doc = serde_json::to_value(policy_result(run)).map_err(|e| e.to_string())?;
    paths.iter().map(|path| metric_at(&doc, path)).collect()
}

fn metric_at(doc: &serde_json::Value, path: &str) -> Result<Option<f64>, String> {
    let mut at = doc;
    for (depth, part) in path.split('.').enumerate() {
        at = match at.get(part) {
            Some(next) => next,
            None => {
                let known: Vec<&str> =
                    at.as_object().map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default();
                let parent = path.split('.').take(depth).collect::<Vec<_>>().join(".");
                let parent = if parent.is_empty() { "a result".to_string() } else { format!("`{parent}`") };
                return Err(format!("no metric `{path}`: {parent} has keys {}", known.join(", ")));
            }
        };
    }
    if at.is_null() {
        return Ok(None);
    }
    at.as_f64().map(Some).ok_or_else(|| format!("metric `{path}` is not a number"))
}
