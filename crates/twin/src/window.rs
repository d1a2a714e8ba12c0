//! A window of a live run: the jobs submitted in it, numbered afresh from
//! 0 in submission order, with their decisions and their own swap rates,
//! every time counted from the window's start. A job submitted before the
//! window is left out even where it still held room when the window
//! opened; a job submitted in it is kept whole, even where it ran past its end.

use crate::observed::Observed;
use pliant_core::Micros;
use pliant_sim::TaskSwapRates;

/// Submission times kept, µs of core time (since the cluster's epoch).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Window {
    /// The first instant kept (0: the journal's start).
    pub since: Micros,
    /// The first instant no longer kept (`None`: the journal's end).
    pub until: Option<Micros>,
}

impl Window {
    /// Whether a job submitted at `submit` is in the window.
    pub fn holds(&self, submit: Micros) -> bool {
        submit >= self.since && self.until.is_none_or(|u| submit < u)
    }

    /// The jobs of `observed` in the window, and the rates of `tasks` that
    /// belong to them, renumbered and with times from [`Window::since`].
    pub fn apply(&self, observed: Observed, tasks: &[TaskSwapRates]) -> (Observed, Vec<TaskSwapRates>) {
        let kept: Vec<bool> = observed.jobs.iter().map(|j| self.holds(j.submit)).collect();
        let mut renumbered = Vec::with_capacity(kept.len());
        let mut next = 0u32;
        for &k in &kept {
            renumbered.push(k.then(|| {
                next += 1;
                next - 1
            }));
        }
        let shift = |t: Micros| t.saturating_sub(self.since);
        let mut workload = observed.workload;
        workload.jobs = workload.jobs.into_iter().zip(&kept).filter(|(_, k)| **k).map(|(j, _)| j).collect();
        for job in &mut workload.jobs {
            job.submit = shift(job.submit);
        }
        let mut jobs: Vec<_> = observed.jobs.into_iter().zip(&kept).filter(|(_, k)| **k).map(|(j, _)| j).collect();
        for job in &mut jobs {
            job.submit = shift(job.submit);
            job.first_start = job.first_start.map(shift);
            job.end = job.end.map(shift);
        }
        let decisions = observed
            .decisions
            .into_iter()
            .filter_map(|mut d| {
                d.job = renumbered[d.job as usize]?;
                d.at = shift(d.at);
                Some(d)
            })
            .collect();
        let tasks = tasks
            .iter()
            .filter_map(|t| Some(TaskSwapRates { job: (*renumbered.get(t.job as usize)?)?, ..*t }))
            .collect();
        (Observed { workload, jobs, decisions, end: shift(observed.end) }, tasks)
    }
}
