//! The live run and its replay side by side: per job (JCT, queueing delay,
//! preemptions) and per decision (the sequences of preemptions and of
//! placements, and the first point where they part, with the likely reason).

use crate::decision::{Decision, Kind};
use crate::observed::Observed;
use pliant_core::Micros;
use pliant_metrics::RunRecord;
use serde::Serialize;

/// One job, live and simulated. Times in seconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobRow {
    /// Its name.
    pub name: String,
    /// JCT in the live run (`None`: it did not end there).
    pub live_jct_s: Option<f64>,
    /// JCT in the replay.
    pub sim_jct_s: Option<f64>,
    /// Replay JCT over live JCT, minus 1.
    pub jct_error: Option<f64>,
    /// Queueing delay live.
    pub live_queue_s: Option<f64>,
    /// Queueing delay in the replay.
    pub sim_queue_s: Option<f64>,
    /// Preemption actions against its tasks, live.
    pub live_preemptions: u32,
    /// The same in the replay.
    pub sim_preemptions: u32,
}

/// A task preempted by a mechanism: the first action of an episode (a
/// graceful preemption's later shrink steps of the same task belong to it).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Preemption {
    /// When, seconds.
    pub at_s: f64,
    /// The job.
    pub job: u32,
    /// The task within it.
    pub task: u32,
    /// How.
    pub mechanism: &'static str,
}

/// Where two decision sequences first part.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Divergence {
    /// The position in the sequences (0-based).
    pub index: usize,
    /// The live decision there, as text.
    pub live: Option<String>,
    /// The replay's decision there, as text.
    pub sim: Option<String>,
    /// Why they likely differ.
    pub why: String,
}

/// The whole comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// Per job, in submission order.
    pub jobs: Vec<JobRow>,
    /// The largest |jct_error| over jobs that ended in both.
    pub worst_jct_error: Option<f64>,
    /// The jobs (index and name) that did not finish in the live run (it
    /// stopped first): the replay gives them only the work they had done, so
    /// they have no JCT error and are left out of the worst one.
    pub unfinished_live: Vec<(usize, String)>,
    /// Work lost to kills, core-seconds, live.
    pub live_lost_work_core_seconds: f64,
    /// The same in the replay.
    pub sim_lost_work_core_seconds: f64,
    /// The live run's preemptions, in order.
    pub live_preemptions: Vec<Preemption>,
    /// The replay's.
    pub sim_preemptions: Vec<Preemption>,
    /// The first difference of victim or mechanism, or of time by more than the tolerance.
    pub preemption_divergence: Option<Divergence>,
    /// The first placement (task and node) that differs.
    pub placement_divergence: Option<Divergence>,
    /// How far apart the same preemption's times may be, seconds (the monitor period).
    pub tolerance_s: f64,
}

fn secs(us: Micros) -> f64 {
    us as f64 / 1e6
}

/// Compares the live run with its replay; `tolerance` is the monitor period.
pub fn compare(live: &Observed, sim: &RunRecord, tolerance: Micros) -> Comparison {
    let jobs: Vec<JobRow> = live
        .jobs
        .iter()
        .zip(&sim.jobs)
        .map(|(l, s)| {
            let live_jct = l.end.map(|e| secs(e - l.submit));
            let sim_jct = s.end.map(|e| secs(e - s.submit));
            JobRow {
                name: l.name.clone(),
                live_jct_s: live_jct,
                sim_jct_s: sim_jct,
                jct_error: live_jct.zip(sim_jct).map(|(l, s)| s / l.max(1e-6) - 1.0),
                live_queue_s: l.first_start.map(|t| secs(t - l.submit)),
                sim_queue_s: s.first_start.map(|t| secs(t - s.submit)),
                live_preemptions: l.preemptions,
                sim_preemptions: s.preemptions,
            }
        })
        .collect();
    let worst_jct_error = jobs.iter().filter_map(|j| j.jct_error).map(f64::abs).max_by(f64::total_cmp);
    let unfinished_live: Vec<(usize, String)> =
        jobs.iter().enumerate().filter(|(_, j)| j.live_jct_s.is_none()).map(|(i, j)| (i, j.name.clone())).collect();
    let sim_decisions: Vec<Decision> =
        sim.decisions.iter().filter_map(|(at, action)| Decision::from_action(*at, action)).collect();
    let live_preemptions = preemptions(&live.decisions);
    let sim_preemptions = preemptions(&sim_decisions);
    let mut preemption_divergence = preemption_divergence(&live_preemptions, &sim_preemptions, secs(tolerance));
    let mut placement_divergence = placement_divergence(&live.decisions, &sim_decisions);
    if !unfinished_live.is_empty() {
        for d in [&mut preemption_divergence, &mut placement_divergence].into_iter().flatten() {
            d.why = unfinished_first(&unfinished_live, &d.why);
        }
    }
    Comparison {
        jobs,
        worst_jct_error,
        unfinished_live,
        live_lost_work_core_seconds: live.lost_work_core_seconds(),
        sim_lost_work_core_seconds: sim.lost_work_core_seconds,
        live_preemptions,
        sim_preemptions,
        preemption_divergence,
        placement_divergence,
        tolerance_s: secs(tolerance),
    }
}

/// The preemption episodes of a decision sequence: a preemption of a task
/// that was placed or resumed since its last one (or never preempted).
fn preemptions(decisions: &[Decision]) -> Vec<Preemption> {
    let mut in_episode = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for d in decisions {
        match d.kind {
            Kind::Preempt { mechanism } => {
                if in_episode.insert((d.task_ref(), mechanism)) {
                    out.push(Preemption { at_s: secs(d.at), job: d.job, task: d.task, mechanism: mechanism.name() });
                }
            }
            Kind::Place { .. } | Kind::Resume => in_episode.retain(|(t, _)| *t != d.task_ref()),
        }
    }
    out
}

/// The reason of a divergence when some jobs did not finish live: that
/// first (the replay ends them with the work they had done, which moves
/// what follows), then the reason the sequences alone give.
fn unfinished_first(unfinished: &[(usize, String)], why: &str) -> String {
    let jobs: Vec<String> = unfinished.iter().map(|(i, name)| format!("{i} ({name})")).collect();
    let (them, it) = if jobs.len() == 1 { ("job", "it") } else { ("jobs", "them") };
    format!(
        "{them} {} did not finish live (the run stopped first) and the replay ends {it} with the work done by then, \
         which changes what follows; else {why}",
        jobs.join(", ")
    )
}

fn describe(p: &Preemption) -> String {
    format!("{} job {} task {} at {:.2} s", p.mechanism, p.job, p.task, p.at_s)
}

fn preemption_divergence(live: &[Preemption], sim: &[Preemption], tolerance_s: f64) -> Option<Divergence> {
    let same = |a: &Preemption, b: &Preemption| (a.job, a.task, a.mechanism) == (b.job, b.task, b.mechanism);
    let index = (0..live.len().max(sim.len())).find(|&i| match (live.get(i), sim.get(i)) {
        (Some(a), Some(b)) => !same(a, b) || (a.at_s - b.at_s).abs() > tolerance_s,
        _ => true,
    })?;
    let (l, s) = (live.get(index), sim.get(index));
    let why = match (l, s) {
        (Some(a), Some(b)) if same(a, b) => format!(
            "timing: the same preemption {:.2} s apart, more than the monitor period ({tolerance_s:.2} s)",
            b.at_s - a.at_s
        ),
        (Some(a), Some(b)) if sim.iter().any(|x| same(x, a)) || live.iter().any(|x| same(x, b)) => {
            "timing: both runs make these preemptions, in another order (tasks ended or freed resources at other times)"
                .to_string()
        }
        (Some(_), Some(_)) => "model gap: the runs chose another victim or mechanism (the execution model's times \
                               or resources differ from the machine's before this point)"
            .to_string(),
        (Some(_), None) => {
            "model gap: the live run preempted more (in the replay the need was met, or met earlier)".to_string()
        }
        (None, Some(_)) => "model gap: the replay preempted more (its tasks held their resources longer)".to_string(),
        (None, None) => unreachable!("an index past both sequences is never chosen"),
    };
    Some(Divergence { index, live: l.map(describe), sim: s.map(describe), why })
}

fn placement_divergence(live: &[Decision], sim: &[Decision]) -> Option<Divergence> {
    let places = |ds: &[Decision]| -> Vec<(u32, u32, u32, Micros)> {
        ds.iter()
            .filter_map(|d| match d.kind {
                Kind::Place { node } => Some((d.job, d.task, node, d.at)),
                _ => None,
            })
            .collect()
    };
    let (l, s) = (places(live), places(sim));
    let index = (0..l.len().max(s.len())).find(|&i| match (l.get(i), s.get(i)) {
        (Some(a), Some(b)) => (a.0, a.1, a.2) != (b.0, b.1, b.2),
        _ => true,
    })?;
    let text = |p: &(u32, u32, u32, Micros)| format!("job {} task {} on node {} at {:.2} s", p.0, p.1, p.2, secs(p.3));
    let why = match (l.get(index), s.get(index)) {
        (Some(a), Some(b)) if (a.0, a.1) == (b.0, b.1) => "another node: the nodes' free room differed".to_string(),
        (Some(_), Some(_)) => "another order: tasks ended (and freed room) in another order".to_string(),
        _ => "one run placed more (a kill or a restore placed a task again)".to_string(),
    };
    Some(Divergence { index, live: l.get(index).map(text), sim: s.get(index).map(text), why })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pre(at_s: f64, job: u32, mechanism: &'static str) -> Preemption {
        Preemption { at_s, job, task: 0, mechanism }
    }

    #[test]
    fn a_graceful_episode_counts_once_until_the_task_runs_again() {
        let d = |at: Micros, kind| Decision { at, job: 1, task: 0, kind, cpu_milli: None };
        let graceful = Kind::Preempt { mechanism: pliant_core::MechanismKind::Graceful };
        let seq = [d(1, Kind::Place { node: 0 }), d(2, graceful), d(3, graceful), d(4, Kind::Resume), d(5, graceful)];
        let p = preemptions(&seq);
        assert_eq!(p.iter().map(|p| p.at_s * 1e6).collect::<Vec<_>>(), vec![2.0, 5.0]);
    }

    #[test]
    fn a_job_that_did_not_finish_live_is_named_before_any_model_gap() {
        let why = unfinished_first(&[(0, "long".into())], "model gap: the replay preempted more");
        assert!(why.starts_with("job 0 (long) did not finish live (the run stopped first)"), "{why}");
        assert!(why.ends_with("; else model gap: the replay preempted more"), "{why}");
        let two = unfinished_first(&[(0, "a".into()), (2, "c".into())], "x");
        assert!(two.starts_with("jobs 0 (a), 2 (c) did not finish live") && two.contains("ends them"), "{two}");
    }

    #[test]
    fn divergence_says_timing_or_model_gap() {
        let live = [pre(3.0, 1, "graceful"), pre(6.0, 2, "graceful")];
        assert_eq!(
            preemption_divergence(&live, &[pre(4.0, 1, "graceful"), pre(9.5, 2, "graceful")], 3.0).unwrap().index,
            1
        );
        assert_eq!(preemption_divergence(&live, &[pre(5.9, 1, "graceful"), pre(6.1, 2, "graceful")], 3.0), None);
        let swapped = preemption_divergence(&live, &[pre(3.0, 2, "graceful"), pre(6.0, 1, "graceful")], 3.0).unwrap();
        assert!(swapped.why.starts_with("timing: both runs"), "{}", swapped.why);
        let other = preemption_divergence(&live, &[pre(3.0, 1, "kill")], 3.0).unwrap();
        assert_eq!((other.index, other.why.starts_with("model gap: the runs chose")), (0, true));
        let fewer = preemption_divergence(&live, &live[..1], 3.0).unwrap();
        assert_eq!((fewer.index, fewer.sim.is_none()), (1, true));
    }
}
