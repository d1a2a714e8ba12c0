//! The resource monitor (BIG-C §4.2): every few seconds, compare each queue's
//! usage with its guaranteed share and take resources back from
//! over-provisioned queues for starved ones.

use super::state::{JobStatus, TaskRuntime};
use super::Scheduler;
use crate::action::{Action, Mechanism};
use crate::model::{JobId, TaskRef, TaskState};
use crate::policy::preemption::{choose_graceful, choose_victims, preempted_resources, Container, VictimJob};
use crate::policy::PreemptionSpec;
use crate::{Micros, Resources};

impl Scheduler {
    pub(super) fn preempt(&mut self, now: Micros, spec: PreemptionSpec, out: &mut Vec<Action>) {
        for starved in 0..self.queues.len() {
            let q = &self.queues[starved];
            if !self.policy.queues[starved].preempts || !q.used.strictly_less(&q.guaranteed) {
                continue;
            }
            // The starved queue's request r⃗_s: its runnable pending demand, up
            // to its guarantee, less what is already free in the cluster.
            let room = q.guaranteed.saturating_sub(&q.used);
            let demand = self.pending_demand(starved).min(&room);
            // Memory that preempted tasks are still giving back is on its way.
            // (Tasks of a node just lost still count as allocated until reported lost.)
            let coming = self.total.saturating_sub(&self.allocated) + Resources::new(0, self.reclaiming_mb);
            let mut need = demand.saturating_sub(&coming);
            for over in 0..self.queues.len() {
                if over == starved || need.is_zero() {
                    continue;
                }
                let o = &self.queues[over];
                // Algorithm 1, lines 3–4: the excess over the fair allocation.
                let a = o.used.saturating_sub(&o.guaranteed);
                if a.is_zero() {
                    continue;
                }
                let p = preempted_resources(need, a, spec.compute_dr);
                need = need.saturating_sub(&p);
                match spec.mechanism {
                    Mechanism::Graceful => {
                        let jobs = self.victim_jobs(over, now, |s| matches!(s, TaskState::Running | TaskState::Shrunk));
                        for (task, to) in choose_graceful(jobs, p, spec.gp_step, spec.footprint, self.total) {
                            self.shrink(task, to, spec.footprint, out);
                        }
                    }
                    Mechanism::Immediate | Mechanism::Kill | Mechanism::Checkpoint => {
                        let jobs = self.victim_jobs(over, now, |s| s == TaskState::Running);
                        for c in choose_victims(jobs, p, self.total) {
                            // A kill can fail a job, whose other victims are then gone already.
                            if self.jobs[c.task.job.0 as usize].status != JobStatus::Active {
                                continue;
                            }
                            match spec.mechanism {
                                Mechanism::Kill => self.kill(c.task, out),
                                Mechanism::Checkpoint => self.preempt_victim(now, c.task, &spec, out),
                                _ => self.suspend(now, c.task, spec.footprint, out),
                            }
                        }
                    }
                }
            }
        }
    }

    /// Sum of the requests of a queue's runnable pending tasks.
    fn pending_demand(&self, queue: usize) -> Resources {
        let mut sum = Resources::ZERO;
        for key in self.queues[queue].waiting.iter().flatten() {
            for (request, tasks) in self.jobs[key.2 as usize].pending.runs() {
                sum += request.times(tasks as u64);
            }
        }
        sum
    }

    /// The jobs of a queue with their running containers, for Algorithm 2.
    fn victim_jobs(&self, queue: usize, now: Micros, eligible: impl Fn(TaskState) -> bool) -> Vec<VictimJob> {
        let running = |t: &TaskRuntime| eligible(t.state);
        self.queues[queue]
            .active
            .iter()
            .map(|key| &self.jobs[key.2 as usize])
            .filter(|job| job.running > 0)
            .map(|job| VictimJob {
                job: job.req.id,
                remaining: job.estimated_remaining(now),
                containers: job
                    .tasks
                    .iter()
                    .enumerate()
                    .filter(|(_, t)| running(t))
                    .map(|(i, t)| Container {
                        task: TaskRef { job: JobId(job.req.id.0), task: i as u32 },
                        resources: t.allocated,
                        started: t.started,
                    })
                    .collect(),
            })
            .collect()
    }
}
