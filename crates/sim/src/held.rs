//! A job as the run holds it from its arrival until its owner stops waiting
//! for it: only what the run reads again (its request to the core, made anew
//! for a resubmission, and its tasks' truth for the execution model at its
//! first launch), in exact-size allocations. Its name, class and the like
//! are in its record (`records`) from its arrival on.

use pliant_core::model::{JobClass, JobId, JobRequest, PhaseRequest, TaskRequest};
use pliant_core::Micros;
use pliant_workload::{Job, JobElasticity, Phase, StageTasks, Task};

/// One phase of a held job: its tasks are `HeldJob::tasks[previous end .. end]`.
#[derive(Debug)]
pub(crate) struct HeldPhase {
    /// Where its tasks end in the job's tasks.
    end: u32,
    /// Coupled (Spark-like): see [`Phase::coupled`].
    pub coupled: bool,
    /// Reads its upstream phases' output where it was written: see [`Phase::local`].
    pub local: bool,
    /// Upstream phases.
    pub deps: Box<[u32]>,
    /// Its pool's stages (empty for an ordinary phase): see [`Phase::stages`].
    pub stages: Box<[StageTasks]>,
}

/// A job as the run holds it (see the module's doc).
#[derive(Debug)]
pub(crate) struct HeldJob {
    class: JobClass,
    priority: u8,
    /// Every task, phases in order.
    tasks: Box<[Task]>,
    phases: Box<[HeldPhase]>,
    /// Its memory elasticity, if any (boxed: most jobs have none).
    pub elastic: Option<Box<JobElasticity>>,
}

impl HeldJob {
    /// What the run keeps of `job`, which it takes (its tasks' storage is
    /// reused where it can be).
    pub fn new(job: Job) -> Self {
        let Job { phases, class, priority, elastic, .. } = job;
        let mut end = 0;
        let held = phases
            .iter()
            .map(|p| {
                end += p.tasks.len() as u32;
                HeldPhase {
                    end,
                    coupled: p.coupled,
                    local: p.local,
                    deps: p.deps.as_slice().into(),
                    stages: p.stages.as_slice().into(),
                }
            })
            .collect();
        let tasks = match <[Phase; 1]>::try_from(phases) {
            Ok([only]) => only.tasks.into_boxed_slice(),
            Err(phases) => phases.into_iter().flat_map(|p| p.tasks).collect(),
        };
        HeldJob { class, priority, tasks, phases: held, elastic: elastic.map(Box::new) }
    }

    /// Number of tasks.
    pub fn task_count(&self) -> usize {
        self.tasks.len()
    }

    /// Its phases, each with its tasks, in order.
    pub fn phases(&self) -> impl Iterator<Item = (&HeldPhase, &[Task])> + '_ {
        let starts = std::iter::once(0).chain(self.phases.iter().map(|p| p.end));
        self.phases.iter().zip(starts).map(|(p, from)| (p, &self.tasks[from as usize..p.end as usize]))
    }

    /// What the core is told of it, submitted at `submit` as core job `id`
    /// (as [`Job::request`]).
    pub fn request(&self, id: JobId, submit: Micros) -> JobRequest {
        JobRequest {
            id,
            submit,
            class: self.class,
            priority: self.priority,
            phases: self
                .phases()
                .map(|(p, tasks)| PhaseRequest {
                    deps: p.deps.to_vec(),
                    coupled: p.coupled,
                    local: p.local,
                    tasks: tasks.iter().map(|t| TaskRequest { resources: t.request, estimate: t.estimate }).collect(),
                })
                .collect(),
            elastic: self.elastic.as_ref().map(|e| e.estimate),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pliant_core::Resources;

    fn task(cores: u64, duration: Micros) -> Task {
        Task { request: Resources::cores_gb(cores, 1), duration, estimate: Some(duration + 1) }
    }

    #[test]
    fn a_held_job_asks_the_core_what_the_job_asks() {
        let stages = vec![StageTasks { count: 3, duration: 7 }];
        let job = Job {
            name: "j".into(),
            submit: 5,
            class: JobClass::Long,
            priority: 2,
            phases: vec![
                Phase::independent(vec![task(1, 10), task(2, 20)]),
                Phase { deps: vec![0], coupled: true, local: true, tasks: vec![task(3, 30)], stages: stages.clone() },
                Phase { deps: vec![0, 1], coupled: false, local: false, tasks: vec![], stages: vec![] },
            ],
            elastic: None,
        };
        let held = HeldJob::new(job.clone());
        assert_eq!(held.request(JobId(4), 9), JobRequest { submit: 9, ..job.request(JobId(4)) });
        assert_eq!(held.task_count(), 3);
        let phases: Vec<_> = held.phases().map(|(p, t)| (p.deps.to_vec(), p.coupled, p.local, t.to_vec())).collect();
        assert_eq!(
            phases,
            [
                (vec![], false, false, vec![task(1, 10), task(2, 20)]),
                (vec![0], true, true, vec![task(3, 30)]),
                (vec![0, 1], false, false, vec![])
            ]
        );
        assert_eq!(held.phases().nth(1).map(|(p, _)| p.stages.to_vec()), Some(stages));
        let one = Job { phases: vec![Phase::independent(vec![task(1, 4)])], ..job };
        assert_eq!(HeldJob::new(one.clone()).request(JobId(0), 5), one.request(JobId(0)));
    }
}
