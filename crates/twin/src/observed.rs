//! What a live run did, read from its journal: the workload it ran (each
//! job's submission, requests and estimates as submitted, and each task's
//! true work as the run observed it), each job's life, and the decisions.
//!
//! A task's true work is its run time at full allocation: the time it ran,
//! each interval weighted by the CPU it had over the CPU it asked for (a
//! shrink slows it, a suspension or a swapping freeze stops it), over its
//! last attempt (a kill loses the attempt's work; a cooperative checkpoint
//! keeps it). Times are the manager's: when it decided an action or took in
//! a report. Start-up and the agent's report delay count as work; the time
//! a resumed task spends reading its memory back does not (the agent reports
//! it resumed once that is done, and the replay models it as its restore).

use crate::decision::{Decision, Kind};
use pliant_core::model::JobClass;
use pliant_core::{Action, MechanismKind, Micros, Resources};
use pliant_live::protocol::AgentReport;
use pliant_manager::events::{Event, JobSpec};
use pliant_manager::journal::Step;
use pliant_workload::{Cluster, Job, JobElasticity, Phase, Task, Workload};
use serde::Serialize;

/// One job of the live run as it went.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LiveJob {
    /// Its name.
    pub name: String,
    /// Short or long.
    pub class: JobClass,
    /// Submission, µs of core time.
    pub submit: Micros,
    /// Its first placement.
    pub first_start: Option<Micros>,
    /// When its last task ended (absent if one never did).
    pub end: Option<Micros>,
    /// Preemption actions taken against its tasks.
    pub preemptions: u32,
    /// Of those, kills.
    pub kills: u32,
    /// Launches of its tasks that had been launched before (after a kill
    /// or a lost node).
    pub relaunches: u32,
    /// Core-seconds of its tasks' work lost to kills.
    pub lost_work_core_seconds: f64,
}

/// A live run, read back.
#[derive(Debug, Clone)]
pub struct Observed {
    /// The workload to replay: the same submissions with the observed work.
    pub workload: Workload,
    /// Each job's life, in submission order.
    pub jobs: Vec<LiveJob>,
    /// Every decision, in the order the core made them.
    pub decisions: Vec<Decision>,
    /// The journal's last step, µs of core time.
    pub end: Micros,
}

impl Observed {
    /// Core-seconds of work lost to kills, over the run.
    pub fn lost_work_core_seconds(&self) -> f64 {
        self.jobs.iter().map(|j| j.lost_work_core_seconds).sum()
    }
}

/// Where one task stands as the journal is walked.
#[derive(Debug, Clone, Copy, Default)]
struct TaskRun {
    /// CPU it asked for, millicores.
    request_cpu: u64,
    /// Work done in the current attempt, µs at full allocation.
    work: f64,
    /// Its progress rate now (allocated CPU over requested).
    rate: f64,
    /// Since when that rate holds.
    since: Micros,
    /// CPU a resume ordered, taken up when the agent says it runs again.
    resume_cpu: u64,
    /// It ended by itself.
    done: bool,
    /// It has been launched.
    launched: bool,
}

impl TaskRun {
    fn advance(&mut self, now: Micros) {
        self.work += self.rate * now.saturating_sub(self.since) as f64;
        self.since = now;
    }

    /// The current attempt's work in core-seconds: what a kill loses.
    fn lost_work_core_seconds(&self) -> f64 {
        self.work * self.request_cpu as f64 / 1000.0 / 1e6
    }

    fn set_cpu(&mut self, now: Micros, cpu_milli: u64) {
        self.advance(now);
        self.rate = cpu_milli.min(self.request_cpu) as f64 / self.request_cpu.max(1) as f64;
    }
}

/// Walks the journal's steps of a cluster of `nodes`.
pub fn observe(nodes: &[Resources], steps: &[Step]) -> Observed {
    let mut specs: Vec<JobSpec> = Vec::new();
    let mut jobs: Vec<LiveJob> = Vec::new();
    let mut runs: Vec<Vec<TaskRun>> = Vec::new();
    let mut decisions = Vec::new();
    for step in steps {
        let now = step.now;
        for event in &step.events {
            match event {
                Event::Submitted { spec, .. } => {
                    let run = TaskRun { request_cpu: spec.cpu_milli, ..TaskRun::default() };
                    runs.push(vec![run; spec.tasks as usize]);
                    jobs.push(LiveJob {
                        name: spec.name.clone(),
                        class: spec.queue,
                        submit: now,
                        first_start: None,
                        end: None,
                        preemptions: 0,
                        kills: 0,
                        relaunches: 0,
                        lost_work_core_seconds: 0.0,
                    });
                    specs.push(spec.clone());
                }
                Event::Report { report, .. } => {
                    let task = report.task();
                    let Some(run) = runs.get_mut(task.job.0 as usize).and_then(|r| r.get_mut(task.task as usize))
                    else {
                        continue;
                    };
                    match report {
                        AgentReport::Exited { code: Some(0), .. } if run.rate > 0.0 || run.work > 0.0 => {
                            run.advance(now);
                            run.rate = 0.0;
                            run.done = true;
                            let job = &mut jobs[task.job.0 as usize];
                            if runs[task.job.0 as usize].iter().all(|r| r.done) {
                                job.end = Some(now);
                            }
                        }
                        AgentReport::Swapping { .. } => run.set_cpu(now, 0),
                        AgentReport::Resumed { .. } => run.set_cpu(now, run.resume_cpu),
                        AgentReport::Lost { .. } => {
                            run.advance(now);
                            jobs[task.job.0 as usize].lost_work_core_seconds += run.lost_work_core_seconds();
                            (run.work, run.rate) = (0.0, 0.0);
                        }
                        _ => {}
                    }
                }
                Event::Cancelled { .. } | Event::NodeLost { .. } | Event::NodeBack { .. } | Event::SwapRates { .. } => {
                }
            }
        }
        for action in &step.actions {
            let Some(d) = Decision::from_action(now, action) else { continue };
            let Some(run) = runs.get_mut(d.job as usize).and_then(|r| r.get_mut(d.task as usize)) else { continue };
            let job = &mut jobs[d.job as usize];
            match d.kind {
                Kind::Place { .. } if matches!(action, Action::Copy { .. }) => {}
                Kind::Place { .. } => {
                    job.first_start.get_or_insert(now);
                    if matches!(action, Action::Launch { .. }) {
                        (run.work, run.rate, run.since) = (0.0, 0.0, now);
                        job.relaunches += u32::from(run.launched);
                        run.launched = true;
                    }
                    run.set_cpu(now, d.cpu_milli.unwrap_or(run.request_cpu));
                }
                Kind::Preempt { mechanism } => {
                    job.preemptions += 1;
                    run.set_cpu(now, d.cpu_milli.unwrap_or(0));
                    if mechanism == MechanismKind::Kill {
                        job.kills += 1;
                        job.lost_work_core_seconds += run.lost_work_core_seconds();
                        run.work = 0.0;
                    }
                }
                Kind::Resume => run.resume_cpu = d.cpu_milli.unwrap_or(run.request_cpu),
            }
            decisions.push(d);
        }
    }
    // A task still running when the journal ends has done its work up to then.
    let end = steps.last().map_or(0, |s| s.now);
    for run in runs.iter_mut().flatten() {
        run.advance(end);
    }
    let jobs_out =
        specs.iter().zip(&jobs).zip(&runs).map(|((spec, job), runs)| replay_job(spec, job.submit, runs)).collect();
    Observed {
        workload: Workload { cluster: Cluster { am: None, nodes: nodes.to_vec() }, jobs: jobs_out },
        jobs,
        decisions,
        end,
    }
}

/// The job to replay: the submission's phases, as the manager hands them to
/// the core, with each task's observed work as its true duration.
fn replay_job(spec: &JobSpec, submit: Micros, runs: &[TaskRun]) -> Job {
    let request = Resources::new(spec.cpu_milli, spec.mem_mb);
    let mut work =
        runs.iter().map(|r| Task { request, duration: (r.work.round() as Micros).max(1), estimate: spec.estimate_us });
    let mut phase = |deps: Vec<u32>, local: bool, n: u32| Phase {
        deps,
        coupled: false,
        local,
        tasks: work.by_ref().take(n as usize).collect(),
        stages: vec![],
    };
    let phases = if spec.phases.is_empty() {
        vec![phase(vec![], false, spec.tasks)]
    } else {
        spec.phases.iter().map(|p| phase(p.after.clone(), p.local, p.tasks)).collect()
    };
    let elastic = spec.elastic.map(|e| {
        let estimate = e.elasticity();
        JobElasticity { estimate, truth: estimate.profile, true_ideal_scale: 1.0 }
    });
    Job { name: spec.name.clone(), submit, class: spec.queue, priority: spec.priority, phases, elastic }
}
