//! Why each preemption was made: the choice the `pliant` preset's planner
//! made per victim, with every mechanism's estimate for the same victim and
//! need (`docs/cost-model.md`) — what the simulator writes to
//! `preemptions.csv`, shown live by `GET /preemptions` and `pliant status`.

use pliant_core::policy::cost::{Choice, Estimate};
use pliant_core::{Micros, Resources};
use serde::Serialize;

/// One mechanism's estimate, in the units an operator reads.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EstimateView {
    /// The mechanism (`kill`, `suspend`, `graceful`).
    pub mechanism: &'static str,
    /// What it takes from the victim.
    pub takes: Resources,
    /// Seconds until what it takes is free.
    pub free_after_s: f64,
    /// The total cost, core-seconds: lost + resume + wait + stopped.
    pub cost_core_s: f64,
    /// Work lost (core-seconds the victim runs again).
    pub lost_core_s: f64,
    /// Core-seconds the victim holds without progress to resume.
    pub resume_core_s: f64,
    /// Core-seconds of the need kept waiting until it is free.
    pub wait_core_s: f64,
    /// Core-seconds the victim's job is stopped while the waiting task runs.
    pub stopped_core_s: f64,
    /// What the victim keeps while preempted.
    pub keeps: Resources,
    /// Disk I/O it takes from the node's other tasks, MB.
    pub io_mb: u64,
}

impl From<&Estimate> for EstimateView {
    fn from(e: &Estimate) -> EstimateView {
        let core_s = |us: u64| us as f64 / 1e6;
        EstimateView {
            mechanism: e.mechanism.name(),
            takes: e.takes,
            free_after_s: core_s(e.free_after),
            cost_core_s: core_s(e.cost()),
            lost_core_s: core_s(e.lost),
            resume_core_s: core_s(e.resume),
            wait_core_s: core_s(e.wait),
            stopped_core_s: core_s(e.stopped),
            keeps: e.keeps,
            io_mb: e.io_mb,
        }
    }
}

/// One preemption and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChoiceView {
    /// When (µs since the manager's epoch).
    pub at_us: Micros,
    /// The victim's job.
    pub job: u32,
    /// The victim's index in its job.
    pub task: u32,
    /// What the victim held.
    pub held: Resources,
    /// What the waiting work still lacked when the victim was chosen.
    pub need: Resources,
    /// The estimate chosen.
    pub chosen: EstimateView,
    /// Every mechanism that could help, with its estimate (the chosen one among them).
    pub options: Vec<EstimateView>,
}

impl From<&Choice> for ChoiceView {
    fn from(c: &Choice) -> ChoiceView {
        ChoiceView {
            at_us: c.at,
            job: c.task.job.0,
            task: c.task.task,
            held: c.held,
            need: c.need,
            chosen: (&c.chosen).into(),
            options: c.options.iter().flatten().map(EstimateView::from).collect(),
        }
    }
}
