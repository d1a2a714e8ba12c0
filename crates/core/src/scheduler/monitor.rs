//! The resource monitor (BIG-C §4.2): every few seconds, compare each queue's
//! usage with its guaranteed share and take resources back from
//! over-provisioned queues for starved ones.

use super::state::{JobStatus, TaskRuntime};
use super::Scheduler;
use crate::action::Action;
use crate::model::{JobId, TaskRef, TaskState};
use crate::policy::preemption::{choose_victims, preempted_resources, Container, VictimJob};
use crate::policy::PreemptionSpec;
use crate::{Micros, Resources};

impl Scheduler {
    pub(super) fn preempt(&mut self, now: Micros, spec: PreemptionSpec, out: &mut Vec<Action>) {
        for starved in 0..self.queues.len() {
            let q = &self.queues[starved];
            if !q.used.strictly_less(&q.guaranteed) {
                continue;
            }
            // The starved queue's request r⃗_s: its runnable pending demand, up
            // to its guarantee, less what is already free in the cluster.
            let room = q.guaranteed.saturating_sub(&q.used);
            let demand = self.pending_demand(starved).min(&room);
            let free = self.total - self.allocated;
            let mut need = demand.saturating_sub(&free);
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
                let victims = choose_victims(self.victim_jobs(over, now), p, self.total);
                for c in victims {
                    need = need.saturating_sub(&c.resources);
                    if self.jobs[c.task.job.0 as usize].status == JobStatus::Active {
                        self.preempt_task(c.task, spec.mechanism, out);
                    }
                }
            }
        }
    }

    /// Sum of the requests of a queue's runnable pending tasks.
    fn pending_demand(&self, queue: usize) -> Resources {
        let mut sum = Resources::ZERO;
        for key in self.queues[queue].waiting.iter().flatten() {
            let job = &self.jobs[key.2 as usize];
            for &t in &job.pending {
                sum += job.tasks[t as usize].request;
            }
        }
        sum
    }

    /// The jobs of a queue with their running containers, for Algorithm 2.
    fn victim_jobs(&self, queue: usize, now: Micros) -> Vec<VictimJob> {
        let running = |t: &TaskRuntime| t.state == TaskState::Running;
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
