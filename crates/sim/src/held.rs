//! A job as the run holds it from its arrival until its owner stops waiting
//! for it: only what the run reads again (its request to the core, made anew
//! for a resubmission, and its tasks' truth for the execution model at its
//! first launch), in exact-size allocations: per task its duration, its
//! requests as runs of equal ones, and its estimates only where they are
//! neither all absent nor each its task's duration. Its name is in its
//! record (`records`) from its arrival on.

use pliant_core::model::{JobClass, JobId, JobRequest, PhaseRequest, TaskRequest};
use pliant_core::{Micros, Resources};
use pliant_workload::{Job, JobElasticity, StageTasks, Task};

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

/// The owner's estimates of a held job's tasks.
#[derive(Debug)]
enum Estimates {
    /// Each task's estimate is its true duration.
    Durations,
    /// No task has one.
    Absent,
    /// Each task's own, in task order.
    Each(Box<[Option<Micros>]>),
}

/// The phase of a job that is one plain phase (its tasks are all the job's).
static PLAIN: std::sync::LazyLock<HeldPhase> = std::sync::LazyLock::new(|| HeldPhase {
    end: 0,
    coupled: false,
    local: false,
    deps: Box::default(),
    stages: Box::default(),
});

/// A job as the run holds it (see the module's doc).
#[derive(Debug)]
pub(crate) struct HeldJob {
    class: JobClass,
    priority: u8,
    /// Every task's true duration, phases in order.
    durations: Box<[Micros]>,
    /// What the first task asks for.
    first_request: Resources,
    /// Every later run of tasks asking the same, as its first task's index
    /// and request (empty when every task asks the first's).
    more_requests: Box<[(u32, Resources)]>,
    estimates: Estimates,
    /// Its phases, unless it is one plain phase ([`HeldJob::plain`]).
    phases: Box<[HeldPhase]>,
    /// It is one independent phase, neither coupled nor local nor a pool
    /// (as most jobs are): `phases` is empty, and [`PLAIN`] stands for it.
    plain: bool,
    /// Its memory elasticity, if any (boxed: most jobs have none).
    pub elastic: Option<Box<JobElasticity>>,
}

impl HeldJob {
    /// What the run keeps of `job`.
    pub fn new(job: &Job) -> Self {
        let plain = match job.phases.as_slice() {
            [only] => only.deps.is_empty() && !only.coupled && !only.local && only.stages.is_empty(),
            _ => false,
        };
        let mut end = 0;
        let phases = match plain {
            true => Box::default(),
            false => job
                .phases
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
                .collect(),
        };
        let count = job.phases.iter().map(|p| p.tasks.len()).sum();
        let first_request = job.phases.iter().find_map(|p| p.tasks.first()).map_or(Resources::ZERO, |t| t.request);
        let (mut durations, mut more_requests) = (Vec::with_capacity(count), Vec::new());
        let (mut last, mut exact, mut absent) = (first_request, true, true);
        for (t, i) in job.phases.iter().flat_map(|p| &p.tasks).zip(0u32..) {
            durations.push(t.duration);
            if t.request != last {
                more_requests.push((i, t.request));
                last = t.request;
            }
            exact &= t.estimate == Some(t.duration);
            absent &= t.estimate.is_none();
        }
        let estimates = match (exact, absent) {
            (true, _) => Estimates::Durations,
            (_, true) => Estimates::Absent,
            _ => Estimates::Each(job.tasks().map(|t| t.estimate).collect()),
        };
        HeldJob {
            class: job.class,
            priority: job.priority,
            durations: durations.into_boxed_slice(),
            first_request,
            more_requests: more_requests.into_boxed_slice(),
            estimates,
            phases,
            plain,
            elastic: job.elastic.map(Box::new),
        }
    }

    /// Number of tasks.
    pub fn task_count(&self) -> usize {
        self.durations.len()
    }

    /// Task `i` as the workload gave it.
    fn task(&self, i: usize) -> Task {
        let request = match self.more_requests.partition_point(|r| r.0 as usize <= i) {
            0 => self.first_request,
            run => self.more_requests[run - 1].1,
        };
        let duration = self.durations[i];
        let estimate = match &self.estimates {
            Estimates::Durations => Some(duration),
            Estimates::Absent => None,
            Estimates::Each(each) => each[i],
        };
        Task { request, duration, estimate }
    }

    /// Its phases, each with its tasks, in order.
    pub fn phases(&self) -> impl Iterator<Item = (&HeldPhase, impl Iterator<Item = Task> + '_)> + '_ {
        let plain = self.plain.then(|| (&*PLAIN, 0..self.durations.len()));
        let starts = std::iter::once(0).chain(self.phases.iter().map(|p| p.end));
        let listed = self.phases.iter().zip(starts).map(|(p, from)| (p, from as usize..p.end as usize));
        plain.into_iter().chain(listed).map(move |(p, tasks)| (p, tasks.map(move |i| self.task(i))))
    }

    /// What the core is told of it, submitted at `submit` as core job `id`
    /// (as [`Job::request`]).
    pub fn request(&self, id: JobId, submit: Micros) -> JobRequest {
        let (class, priority) = (self.class, self.priority);
        let mut req = JobRequest { id, submit, class, priority, phases: Vec::new(), elastic: None };
        self.request_into(id, submit, &mut req);
        req
    }

    /// As [`HeldJob::request`], made in `req` (its buffers reused).
    pub fn request_into(&self, id: JobId, submit: Micros, req: &mut JobRequest) {
        (req.id, req.submit, req.class, req.priority) = (id, submit, self.class, self.priority);
        req.elastic = self.elastic.as_ref().map(|e| e.estimate);
        req.phases.truncate(if self.plain { 1 } else { self.phases.len() });
        for ((p, tasks), i) in self.phases().zip(0..) {
            if i == req.phases.len() {
                req.phases.push(PhaseRequest { deps: Vec::new(), coupled: false, local: false, tasks: Vec::new() });
            }
            let into = &mut req.phases[i];
            (into.coupled, into.local) = (p.coupled, p.local);
            into.deps.clear();
            into.deps.extend_from_slice(&p.deps);
            into.tasks.clear();
            into.tasks.extend(tasks.map(|t| TaskRequest { resources: t.request, estimate: t.estimate }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pliant_workload::Phase;

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
        let held = HeldJob::new(&job);
        assert_eq!(held.request(JobId(4), 9), JobRequest { submit: 9, ..job.request(JobId(4)) });
        assert_eq!(held.task_count(), 3);
        let phases: Vec<_> = held.phases().map(|(p, t)| (p.deps.to_vec(), p.coupled, p.local, t.collect())).collect();
        assert_eq!(
            phases,
            [
                (vec![], false, false, vec![task(1, 10), task(2, 20)]),
                (vec![0], true, true, vec![task(3, 30)]),
                (vec![0, 1], false, false, vec![])
            ]
        );
        assert_eq!(held.phases().nth(1).map(|(p, _)| p.stages.to_vec()), Some(stages));
        // Estimates kept as they were given: each its duration, all absent, or neither.
        let one = |tasks: Vec<Task>| Job { phases: vec![Phase::independent(tasks)], ..job.clone() };
        let exact = |d| Task { estimate: Some(d), ..task(1, d) };
        let absent = |d| Task { estimate: None, ..task(1, d) };
        for tasks in [vec![exact(4), exact(6)], vec![absent(4), absent(6)], vec![exact(4), absent(6)], vec![]] {
            let j = one(tasks.clone());
            let held = HeldJob::new(&j);
            assert_eq!(held.request(JobId(0), 5), j.request(JobId(0)));
            assert_eq!(held.phases().flat_map(|(_, t)| t).collect::<Vec<_>>(), tasks);
        }
        let none = Job { phases: vec![], ..job.clone() };
        assert_eq!(HeldJob::new(&none).request(JobId(1), 5), none.request(JobId(1)));
        // One buffer made anew for jobs of more, fewer and no phases says what each asks.
        let mut buffer = HeldJob::new(&one(vec![exact(4)])).request(JobId(0), 0);
        for (j, id) in [job.clone(), one(vec![absent(3), exact(2)]), none, job].iter().zip(1..) {
            HeldJob::new(j).request_into(JobId(id), 7, &mut buffer);
            assert_eq!(buffer, JobRequest { submit: 7, ..j.request(JobId(id)) });
        }
    }
}
