//! `pliant._native`: the simulator behind the `pliant` Python package. Each
//! call is a `pliant simulate`, `sweep` or `run` command line run by the
//! command's own code (`pliant-run`), with the GIL released while the
//! policies run in parallel; results come back as the texts the command
//! writes (`results.json`, `jobs.csv`, `preemptions.csv`, `sweep.json`) and
//! the utilisation timeline as columns. The Python side makes DataFrames.
//! Planners written in Python run among the policies (`planner.rs`).

mod planner;

use pliant_metrics::RunRecord;
use pliant_report::{write_jobs_csv, write_preemptions_csv};
use pliant_run::simulate::{simulate, Simulation};
use pliant_run::sweep::sweep;
use pliant_run::Command;
use pyo3::create_exception;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;

create_exception!(
    _native,
    PliantError,
    pyo3::exceptions::PyException,
    "A run pliant refused: the command's message, `FILE:LINE: reason` for bad input."
);

/// What a command line produced, before it becomes Python objects.
enum Outcome {
    /// `simulate`: the runs and the texts the command writes.
    Simulated { sim: Simulation, jobs_csv: String, preemptions_csv: String },
    /// `sweep`: `sweep.json`.
    Swept { json: String },
}

/// A CSV writer's output as text.
fn csv_text(write: impl FnOnce(&mut Vec<u8>) -> Result<(), String>) -> Result<String, String> {
    let mut bytes = Vec::new();
    write(&mut bytes)?;
    String::from_utf8(bytes).map_err(|e| e.to_string())
}

/// Runs a parsed command as `pliant` would, printing nothing.
fn execute(command: Command) -> Result<Outcome, String> {
    match command {
        Command::Simulate(args) => {
            let sim = simulate(&args)?;
            let jobs_csv = csv_text(|b| write_jobs_csv(&sim.runs, b).map_err(|e| e.to_string()))?;
            let preemptions_csv = csv_text(|b| write_preemptions_csv(&sim.runs, b).map_err(|e| e.to_string()))?;
            Ok(Outcome::Simulated { sim, jobs_csv, preemptions_csv })
        }
        Command::Sweep(args) => sweep(&args).map(|(_, json)| Outcome::Swept { json }),
    }
}

/// The utilisation timeline of every run as columns.
fn timeline<'py>(py: Python<'py>, runs: &[RunRecord]) -> PyResult<Bound<'py, PyDict>> {
    let samples = runs.iter().flat_map(|r| r.timeline.iter().map(move |s| (r.policy.as_str(), s)));
    let (mut policy, mut time_s, mut cpu, mut mem) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (p, s) in samples {
        policy.push(p);
        time_s.push(s.time as f64 / 1e6);
        cpu.push(s.cpu);
        mem.push(s.mem);
    }
    let columns = PyDict::new(py);
    columns.set_item("policy", policy)?;
    columns.set_item("time_s", time_s)?;
    columns.set_item("cpu", cpu)?;
    columns.set_item("mem", mem)?;
    Ok(columns)
}

/// Runs `command` with the planner objects `planners` among its policies,
/// without the GIL, and returns its outcome as a dict.
fn outcome<'py>(
    py: Python<'py>,
    command: impl FnOnce() -> Result<Command, String> + Send,
    planners: &[Bound<'py, PyAny>],
) -> PyResult<Bound<'py, PyDict>> {
    let claimed = planners.iter().map(planner::claim).collect::<PyResult<Vec<_>>>()?;
    let done = py.detach(|| {
        let mut command = command()?;
        let args = command.policy_args();
        for planner in &claimed {
            let profile = planner.profile(&mut args.registry).map_err(|e| format!("policy {}: {e}", planner.name()))?;
            args.profiles.push(profile);
        }
        args.take_in_files()?;
        execute(command)
    });
    if let Some(failure) = claimed.iter().find_map(planner::Claimed::failure) {
        return Err(failure);
    }
    let done = done.map_err(PliantError::new_err)?;
    let out = PyDict::new(py);
    out.set_item("planners", planner::counts(py, &claimed)?)?;
    match done {
        Outcome::Simulated { sim, jobs_csv, preemptions_csv } => {
            out.set_item("kind", "simulate")?;
            out.set_item("json", sim.json.as_str())?;
            out.set_item("jobs_csv", jobs_csv)?;
            out.set_item("preemptions_csv", preemptions_csv)?;
            out.set_item("timeline", timeline(py, &sim.runs)?)?;
        }
        Outcome::Swept { json } => {
            out.set_item("kind", "sweep")?;
            out.set_item("json", json)?;
        }
    }
    Ok(out)
}

/// Runs a `simulate` or `sweep` command line (without the program name, e.g.
/// `["simulate", "--scenario", "two-job"]`), with the `pliant.Planner`
/// objects `planners` among its policies, and returns a dict: `kind`
/// (`simulate` or `sweep`), `json` (the command's JSON document),
/// `planners` (their plan calls, as columns) and, for `simulate`,
/// `jobs_csv`, `preemptions_csv` and `timeline` (columns).
#[pyfunction]
#[pyo3(signature = (line, planners = Vec::new()))]
fn run_line<'py>(py: Python<'py>, line: Vec<String>, planners: Vec<Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyDict>> {
    outcome(py, move || Command::parse(line), &planners)
}

/// Runs an experiment file as `pliant run FILE [--out OUT]` does and returns
/// what [`run_line`] returns for the command line it stands for.
#[pyfunction]
#[pyo3(signature = (path, out=None))]
fn run_experiment(py: Python<'_>, path: PathBuf, out: Option<PathBuf>) -> PyResult<Bound<'_, PyDict>> {
    outcome(py, move || Command::from_experiment(&path, out.as_deref(), &pliant_plugins::registry()), &[])
}

/// The built-in scenarios: (name, about, the presets compared on it by default).
#[pyfunction]
fn scenarios() -> Vec<(&'static str, &'static str, Vec<&'static str>)> {
    pliant_workload::scenarios::SCENARIOS.iter().map(|s| (s.name, s.about, s.policies.to_vec())).collect()
}

/// The policy presets: (name, about).
#[pyfunction]
fn policies() -> Vec<(&'static str, &'static str)> {
    pliant_plugins::PRESETS.iter().map(|p| (p.name, p.about)).collect()
}

/// Every setting a run takes (`--set KEY=VALUE`): (key, default, about).
#[pyfunction]
fn parameters() -> Vec<(&'static str, String, &'static str)> {
    pliant_run::Settings::keys().into_iter().map(|k| (k.key, k.default, k.about)).collect()
}

/// The module: the functions above and `PliantError`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("PliantError", m.py().get_type::<PliantError>())?;
    m.add_function(wrap_pyfunction!(run_line, m)?)?;
    m.add_function(wrap_pyfunction!(run_experiment, m)?)?;
    m.add_function(wrap_pyfunction!(scenarios, m)?)?;
    m.add_function(wrap_pyfunction!(policies, m)?)?;
    m.add_function(wrap_pyfunction!(parameters, m)?)?;
    planner::add_classes(m)?;
    Ok(())
}
