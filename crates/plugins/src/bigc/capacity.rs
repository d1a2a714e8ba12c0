//! The resource monitor (BIG-C §4.2): every few seconds, compare each queue's
//! usage with its guaranteed share and take resources back from
//! over-provisioned queues for starved ones — how much by Algorithm 1
//! (`compute_dr.rs`), from whom by Algorithm 2 (`victims.rs`).

use super::compute_dr::preempted_resources;
use super::victims::{choose_graceful, choose_victims, Container, ContainerOrder, VictimJob};
use pliant_core::books::{TaskRuntime, View};
use pliant_core::model::{JobId, TaskRef, TaskState};
use pliant_core::policy::steps::Planner;
use pliant_core::policy::steps::{Mechanism, Take};
use pliant_core::{Micros, Resources};

/// Capacity queues with guarantees (YARN's capacity scheduler, BIG-C).
#[derive(Debug, Clone)]
pub(crate) struct Capacity {
    /// Per queue, whether it takes back when under its guarantee.
    pub preempts: Vec<bool>,
    /// Algorithm 1 with COMPUTEDR (BIG-C), or all the excess (YARN).
    pub compute_dr: bool,
    /// The graceful-preemption step r⃗_GP.
    pub gp_step: Resources,
    /// What a suspended container keeps.
    pub footprint: Resources,
    /// Whole containers are taken at random within a job (YARN's kill,
    /// BIG-C §2.2), else the youngest first.
    pub random_victims: bool,
}

impl Planner for Capacity {
    fn clone_box(&self) -> Box<dyn Planner> {
        Box::new(self.clone())
    }

    fn plan(&mut self, view: &View, mechanism: &dyn Mechanism, now: Micros) -> Vec<Take> {
        // Graceful preemption takes r⃗_GP steps, the others whole containers.
        let graceful = mechanism.shrinks();
        let mut takes = Vec::new();
        // Only what the mechanism frees can be taken (suspend in place: CPU).
        let frees = |p| mechanism.frees(p);
        for_each_take(view, &self.preempts, self.compute_dr, true, frees, |_, over, p| {
            if graceful {
                let eligible = |s| matches!(s, TaskState::Running | TaskState::Shrunk);
                let jobs = victim_jobs(view, over, now, mechanism, eligible);
                let steps = choose_graceful(jobs, p, self.gp_step, self.footprint, view.total());
                takes.extend(steps.into_iter().map(|(task, to)| Take { task, shrink_to: Some(to), by: None }));
            } else {
                let jobs = victim_jobs(view, over, now, mechanism, |s| s == TaskState::Running);
                let order = match self.random_victims {
                    true => ContainerOrder::Random { seed: now },
                    false => ContainerOrder::Youngest,
                };
                let victims = choose_victims(jobs, p, view.total(), order);
                takes.extend(victims.into_iter().map(|c| Take { task: c.task, shrink_to: None, by: None }));
            }
        });
        takes
    }
}

/// Algorithm 1 over the queues: each queue that takes back and is under its
/// guarantee asks its runnable pending demand up to its guarantee (less what
/// is free or being reclaimed, with `less_free`); queues over their guarantee
/// give it in turn, each its p⃗ — sized by COMPUTEDR with `compute_dr`
/// (lines 3–10), what the mechanism `frees` of it — and `take(starved, over,
/// p⃗)` takes it.
pub(crate) fn for_each_take(
    view: &View,
    preempts: &[bool],
    compute_dr: bool,
    less_free: bool,
    frees: impl Fn(Resources) -> Resources,
    mut take: impl FnMut(usize, usize, Resources),
) {
    let queues = view.queues();
    for starved in 0..queues.len() {
        let q = &queues[starved];
        if !preempts[starved] || !q.used.strictly_less(&q.guaranteed) {
            continue;
        }
        // The starved queue's request r⃗_s: its runnable pending demand, up
        // to its guarantee, less what is already free in the cluster.
        let room = q.guaranteed.saturating_sub(&q.used);
        let demand = view.pending_demand(starved).min(&room);
        let mut need = if less_free {
            // Memory that preempted tasks are still giving back is on its way.
            // (Tasks of a node just lost still count as allocated until reported lost.)
            let pool = view.total().saturating_sub(&view.allocated()) + Resources::new(0, view.reclaiming_mb());
            // Free room that no waiting task fits in on any node is no room
            // for them: counted, it held such a task back from any preemption
            // until another arrived. Only a mechanism that frees memory makes
            // room there; suspending in place (CPU alone) counts the pool.
            let split = frees(Resources::new(0, 1)).mem_mb > 0 && !fits_somewhere(view, starved);
            demand.saturating_sub(if split { &Resources::ZERO } else { &pool })
        } else {
            demand
        };
        for (over, o) in queues.iter().enumerate() {
            if over == starved || need.is_zero() {
                continue;
            }
            // Algorithm 1, lines 3–4: the excess over the fair allocation.
            let a = o.used.saturating_sub(&o.guaranteed);
            if a.is_zero() {
                continue;
            }
            let p = frees(preempted_resources(need, a, compute_dr));
            need = need.saturating_sub(&p);
            take(starved, over, p);
        }
    }
}

/// Whether some node's free room, with the memory preempted tasks there
/// are still giving back, holds the smallest request queue `queue` has
/// waiting, resource by resource (true when nothing waits).
fn fits_somewhere(view: &View, queue: usize) -> bool {
    let requests =
        view.queues()[queue].waiting.iter().flatten().flat_map(|key| view.job(key.2 as usize).pending.runs());
    let Some(least) = requests.map(|(request, _)| request).reduce(|a, b| a.min(&b)) else { return true };
    view.room_with_reclaims().iter().any(|r| least.fits_in(r))
}

/// The jobs of a queue with their running containers and what taking each
/// would free, for Algorithm 2. A shrunk container still giving memory back
/// holds, for this, only what it keeps once its reclaim is done: the need
/// already counts that memory as on its way (`for_each_take`), and taking it
/// again would shrink the same container to the same limit (a body whose
/// reclaim outlasts a monitor period saw that, while the victim it should
/// have gone on to kept its room).
fn victim_jobs(
    view: &View,
    queue: usize,
    now: Micros,
    mechanism: &dyn Mechanism,
    eligible: impl Fn(TaskState) -> bool,
) -> Vec<VictimJob> {
    let running = |t: &TaskRuntime| eligible(t.state);
    view.queues()[queue]
        .active
        .iter()
        .map(|key| view.job(key.2 as usize))
        .filter(|job| job.running > 0)
        .map(|job| VictimJob {
            job: job.req.id,
            remaining: job.estimated_remaining(now),
            containers: job
                .tasks
                .changed()
                .filter(|(_, t)| running(t))
                .map(|(i, t)| Container {
                    task: TaskRef { job: JobId(job.req.id.0), task: i },
                    resources: mechanism.frees(t.allocated.saturating_sub(&Resources::new(0, t.reclaiming_mb))),
                    started: t.started,
                })
                .collect(),
        })
        .collect()
}
