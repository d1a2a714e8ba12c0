//! The per-job records a run keeps for its report. While the run goes on
//! they are kept compact (56 bytes a job, its name in one shared string), as
//! every job that has arrived has one, ended or not; the run hands them out
//! as [`JobRecord`]s when it ends, when the live jobs' memory is free.

use pliant_core::model::JobClass;
use pliant_core::Micros;
use pliant_metrics::JobRecord;
use pliant_workload::Job;

/// An instant not reached (yet).
const NEVER: Micros = Micros::MAX;

/// One job's record as the run keeps it: a [`JobRecord`] with its instants
/// [`NEVER`] where the report's are `None`, and its name apart.
#[derive(Debug, Clone)]
pub(crate) struct Kept {
    submit: Micros,
    first_start: Micros,
    end: Micros,
    retry_end: Micros,
    /// Task-time its tasks spent preempted without progress.
    pub stalled: Micros,
    tasks: u32,
    /// Times its tasks were preempted.
    pub preemptions: u32,
    /// Its application attempts that started.
    pub attempts: u32,
    /// Times its tasks were killed.
    pub kills: u32,
    /// Its killed tasks' launches again.
    pub relaunches: u32,
    class: JobClass,
    priority: u8,
    failed: bool,
}

impl Kept {
    /// A task of it started at `now`: the first one's start is kept.
    pub fn started(&mut self, now: Micros) {
        if self.first_start == NEVER {
            self.first_start = now;
        }
    }

    /// The job failed (its owner may submit it again).
    pub fn fail(&mut self) {
        self.failed = true;
    }

    /// The job, or for a failed one its resubmission, ended at `now`.
    pub fn end(&mut self, now: Micros) {
        if self.failed {
            self.retry_end = now;
        } else {
            self.end = now;
        }
    }
}

/// Every arrived job's record, in arrival order.
#[derive(Debug, Clone, Default)]
pub(crate) struct Records {
    jobs: Vec<Kept>,
    /// Every job's name, one after another.
    names: String,
    /// Where each job's name ends in `names`.
    name_ends: Vec<u32>,
}

impl Records {
    /// Begins the record of `job`, which has just arrived; returns its index.
    pub fn arrive(&mut self, job: &Job) -> usize {
        self.names.push_str(&job.name);
        self.name_ends.push(self.names.len() as u32);
        self.jobs.push(Kept {
            submit: job.submit,
            first_start: NEVER,
            end: NEVER,
            retry_end: NEVER,
            stalled: 0,
            tasks: job.tasks().count() as u32,
            preemptions: 0,
            attempts: 0,
            kills: 0,
            relaunches: 0,
            class: job.class,
            priority: job.priority,
            failed: false,
        });
        self.jobs.len() - 1
    }

    /// The record of the job that arrived `index`-th.
    pub fn get_mut(&mut self, index: usize) -> &mut Kept {
        &mut self.jobs[index]
    }

    /// The records as the report takes them, in arrival order.
    pub fn into_records(self) -> Vec<JobRecord> {
        let at = |t: Micros| (t != NEVER).then_some(t);
        let starts = std::iter::once(0).chain(self.name_ends.iter().map(|&e| e as usize));
        let names = starts.zip(&self.name_ends).map(|(from, &to)| self.names[from..to as usize].to_string());
        self.jobs
            .iter()
            .zip(names)
            .map(|(k, name)| JobRecord {
                name,
                class: k.class,
                priority: k.priority,
                submit: k.submit,
                first_start: at(k.first_start),
                end: at(k.end),
                failed: k.failed,
                tasks: k.tasks,
                preemptions: k.preemptions,
                attempts: k.attempts,
                kills: k.kills,
                relaunches: k.relaunches,
                stalled: k.stalled,
                retry_end: at(k.retry_end),
                alone: None,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pliant_workload::{Phase, Task};

    fn job(name: &str, submit: Micros, tasks: usize) -> Job {
        let task = Task { request: pliant_core::Resources::cores_gb(1, 1), duration: 5, estimate: None };
        Job {
            name: name.into(),
            submit,
            class: JobClass::Short,
            priority: 9,
            phases: vec![Phase::independent(vec![task; tasks])],
            elastic: None,
        }
    }

    #[test]
    fn records_come_out_as_the_report_takes_them() {
        let mut r = Records::default();
        let (a, b, c) = (r.arrive(&job("a", 1, 2)), r.arrive(&job("bé", 2, 1)), r.arrive(&job("", 3, 4)));
        assert_eq!((a, b, c), (0, 1, 2));
        r.get_mut(a).started(5);
        r.get_mut(a).started(7);
        r.get_mut(a).end(9);
        r.get_mut(b).started(4);
        r.get_mut(b).fail();
        r.get_mut(b).preemptions += 2;
        r.get_mut(b).stalled += 3;
        r.get_mut(b).end(20);
        let out = r.into_records();
        let view: Vec<_> = out
            .iter()
            .map(|j| (j.name.as_str(), j.submit, j.first_start, j.end, j.retry_end, j.failed, j.tasks, j.preemptions))
            .collect();
        assert_eq!(
            view,
            [
                ("a", 1, Some(5), Some(9), None, false, 2, 0),
                ("bé", 2, Some(4), None, Some(20), true, 1, 2),
                ("", 3, None, None, None, false, 4, 0)
            ]
        );
        assert_eq!((out[1].stalled, out[1].class, out[1].priority, out[1].alone), (3, JobClass::Short, 9, None));
    }
}
