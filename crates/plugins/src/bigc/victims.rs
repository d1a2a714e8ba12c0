//! BIG-C Algorithm 2 (§4.3): pick the job with the longest remaining time and
//! take from its containers until p⃗ is satisfied, then move to the next job.
//! Kill and immediate preemption take whole containers ([`choose_victims`]),
//! in a job in the [`ContainerOrder`] the mechanism takes them; graceful
//! preemption takes r⃗_GP steps, largest container first, one step per
//! container per round ([`choose_graceful`]).

use pliant_core::model::{JobId, TaskRef};
use pliant_core::{Micros, Resources};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// A running container that may be preempted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Container {
    /// Its task.
    pub task: TaskRef,
    /// What it holds.
    pub resources: Resources,
    /// When it started (the most recent goes first under [`ContainerOrder::Youngest`]).
    pub started: Micros,
}

/// The order Algorithm 2 takes a chosen job's containers in (line 5,
/// "Choose a container c from the job", leaves it open).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContainerOrder {
    /// The most recently started first, least work lost (BIG-C's own
    /// immediate preemption).
    Youngest,
    /// At random, as YARN's capacity scheduler kills (BIG-C §2.2: "YARN kills
    /// tasks selected randomly from the long job"): drawn from `seed`, so a
    /// run is still deterministic.
    Random {
        /// Seeds the draw (the monitor round's instant, say).
        seed: u64,
    },
}

/// A job of the over-provisioned queue, with its estimated remaining time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VictimJob {
    /// The job.
    pub job: JobId,
    /// Estimated remaining time (from job-supplied estimates and observed progress).
    pub remaining: Micros,
    /// Its running containers.
    pub containers: Vec<Container>,
}

/// p⃗ counts as satisfied once its dominant resource (against `total`) is
/// reclaimed: "as long as the over-provisioned dominant resource is fully
/// reclaimed, p⃗ is considered satisfied" (§4.3).
fn satisfied(left: Resources, p: Resources, total: Resources) -> bool {
    match p.dominant(&total) {
        pliant_core::resources::Dominant::Cpu => left.cpu_milli == 0,
        pliant_core::resources::Dominant::Memory => left.mem_mb == 0,
    }
}

/// Algorithm 2: the containers to preempt whole to release `p` out of a
/// cluster of size `total`, in the order they are chosen, each job's in `order`.
pub fn choose_victims(
    mut jobs: Vec<VictimJob>,
    p: Resources,
    total: Resources,
    order: ContainerOrder,
) -> Vec<Container> {
    let mut chosen = Vec::new();
    if p.is_zero() {
        return chosen;
    }
    // Line 3: longest remaining time first; ties broken by the younger job.
    jobs.sort_by(|a, b| b.remaining.cmp(&a.remaining).then(b.job.cmp(&a.job)));
    let mut left = p;
    for mut job in jobs {
        job.containers.sort_by(|a, b| b.started.cmp(&a.started).then(b.task.cmp(&a.task)));
        if let ContainerOrder::Random { seed } = order {
            let mut rng = ChaCha8Rng::seed_from_u64(seed ^ (job.job.0 as u64).rotate_left(32));
            job.containers.shuffle(&mut rng);
        }
        for c in job.containers {
            if satisfied(left, p, total) {
                return chosen;
            }
            // Lines 5–8: take the container whole.
            left = left.saturating_sub(&c.resources);
            chosen.push(c);
        }
        // Line 9–10: job exhausted with p⃗ still open: next job.
    }
    chosen
}

/// Algorithm 2 with graceful preemption (the red lines 7–8): each step takes
/// `step` (r⃗_GP) from the job's largest container not yet stepped this round,
/// never below `footprint`. GP "reclaims its resources in multiple rounds"
/// (§3.3) and removes a container once it swaps (line 8), which only its node
/// can tell after the step: so one call — one round of the resource monitor —
/// takes at most one step from each container, and collects the rest from the
/// next job's containers ("from many containers", §4.3). Returns each touched
/// container with its new limits, in the order touched. (Containers that swap
/// are frozen by their node and leave the set through the core's state.)
pub fn choose_graceful(
    mut jobs: Vec<VictimJob>,
    p: Resources,
    step: Resources,
    footprint: Resources,
    total: Resources,
) -> Vec<(TaskRef, Resources)> {
    let mut out: Vec<(TaskRef, Resources)> = Vec::new();
    if p.is_zero() || step.is_zero() {
        return out;
    }
    jobs.sort_by(|a, b| b.remaining.cmp(&a.remaining).then(b.job.cmp(&a.job)));
    let mut left = p;
    for job in jobs {
        let mut set: Vec<(TaskRef, Resources)> = job.containers.iter().map(|c| (c.task, c.resources)).collect();
        loop {
            if satisfied(left, p, total) {
                return out;
            }
            // Line 5: the largest container that still has something above its footprint.
            let pick = set
                .iter()
                .enumerate()
                .filter(|(_, (_, cur))| !cur.saturating_sub(&footprint).is_zero())
                .max_by(|(_, a), (_, b)| {
                    let (sa, sb) = (a.1.dominant_share(&total), b.1.dominant_share(&total));
                    sa.total_cmp(&sb).then(b.0.cmp(&a.0))
                })
                .map(|(i, _)| i);
            let Some(i) = pick else { break };
            // Line 7: p⃗ = p⃗ − r⃗_GP, r⃗_c = r⃗_c − r⃗_GP; line 8: stepped for this round.
            let (task, cur) = set.swap_remove(i);
            let take = step.min(&cur.saturating_sub(&footprint));
            left = left.saturating_sub(&take);
            out.push((task, cur - take));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn container(job: u32, task: u32, cores: u64, gb: u64, started: Micros) -> Container {
        Container { task: TaskRef { job: JobId(job), task }, resources: Resources::cores_gb(cores, gb), started }
    }

    // Cluster ⟨100 CPU, 100 GB⟩. p = ⟨10 CPU, 5 GB⟩ (CPU-dominant).
    // Job 1 has 100 s left, job 2 has 300 s left → job 2 first.
    // Job 2's containers: task 0 (8 CPU, started at 0) and task 1 (8 CPU, started at 5):
    // the younger task 1 goes first, leaving ⟨2, 0⟩; task 0 next, leaving ⟨0, 0⟩: done.
    // Job 1 is never touched.
    #[test]
    fn longest_remaining_job_and_youngest_container_first() {
        let jobs = vec![
            VictimJob { job: JobId(1), remaining: 100, containers: vec![container(1, 0, 4, 4, 0)] },
            VictimJob {
                job: JobId(2),
                remaining: 300,
                containers: vec![container(2, 0, 8, 8, 0), container(2, 1, 8, 8, 5)],
            },
        ];
        let chosen =
            choose_victims(jobs, Resources::cores_gb(10, 5), Resources::cores_gb(100, 100), ContainerOrder::Youngest);
        let tasks: Vec<_> = chosen.iter().map(|c| (c.task.job.0, c.task.task)).collect();
        assert_eq!(tasks, vec![(2, 1), (2, 0)]);
    }

    // p = ⟨10 CPU, 5 GB⟩; job 2 holds only ⟨4 CPU, 16 GB⟩: memory is over-reclaimed but
    // CPU (dominant) is still short by 6, so Alg. 2 goes on to job 1 (line 10).
    #[test]
    fn moves_to_the_next_job_when_one_is_exhausted() {
        let jobs = vec![
            VictimJob { job: JobId(1), remaining: 100, containers: vec![container(1, 0, 8, 8, 0)] },
            VictimJob { job: JobId(2), remaining: 300, containers: vec![container(2, 0, 4, 16, 0)] },
        ];
        let chosen =
            choose_victims(jobs, Resources::cores_gb(10, 5), Resources::cores_gb(100, 100), ContainerOrder::Youngest);
        assert_eq!(chosen.len(), 2);
        assert_eq!(chosen[1].task.job, JobId(1));
    }

    // One job of 8 containers started at 0..7 s, each ⟨1 CPU, 1 GB⟩, p = ⟨3 CPU, 0⟩.
    // Youngest first takes tasks 7, 6, 5; YARN's random order takes other
    // ones for some rounds, the same ones for the same seed, and always 3.
    #[test]
    fn random_order_takes_others_than_the_youngest_and_repeats_per_seed() {
        let jobs = || {
            vec![VictimJob {
                job: JobId(1),
                remaining: 100,
                containers: (0..8).map(|i| container(1, i, 1, 1, i as Micros)).collect(),
            }]
        };
        let (p, total) = (Resources::cores_gb(3, 0), Resources::cores_gb(100, 100));
        let tasks =
            |order| -> Vec<u32> { choose_victims(jobs(), p, total, order).iter().map(|c| c.task.task).collect() };
        assert_eq!(tasks(ContainerOrder::Youngest), vec![7, 6, 5]);
        let draws: Vec<Vec<u32>> = (0..20).map(|seed| tasks(ContainerOrder::Random { seed })).collect();
        assert!(draws.iter().all(|d| d.len() == 3));
        assert!(draws.iter().filter(|d| **d != vec![7, 6, 5]).count() >= 15);
        assert_eq!(draws[4], tasks(ContainerOrder::Random { seed: 4 }));
    }

    #[test]
    fn nothing_to_take_takes_nothing() {
        let jobs = vec![VictimJob { job: JobId(1), remaining: 1, containers: vec![container(1, 0, 1, 1, 0)] }];
        assert!(choose_victims(jobs, Resources::ZERO, Resources::cores_gb(1, 1), ContainerOrder::Youngest).is_empty());
    }

    // Graceful, cluster ⟨100 CPU, 100 GB⟩, r_GP = ⟨2 CPU, 4 GB⟩, footprint ⟨0, 0⟩ for
    // round numbers, p = ⟨5 CPU, 3 GB⟩ (CPU-dominant). Job 1 (300 s left) has
    // A = ⟨8, 16⟩ (task 0) and B = ⟨16, 32⟩ (task 1); job 2 (100 s left) has C = ⟨4, 8⟩.
    // Step 1: B is largest → B = ⟨14, 28⟩, left ⟨3, 0⟩. Step 2: B had its step this
    // round, so A → ⟨6, 12⟩, left ⟨1, 0⟩. Job 1 is exhausted: job 2, C → ⟨2, 4⟩, done.
    #[test]
    fn graceful_takes_one_step_per_container_per_round_largest_first() {
        let jobs = vec![
            VictimJob { job: JobId(2), remaining: 100, containers: vec![container(2, 0, 4, 8, 0)] },
            VictimJob {
                job: JobId(1),
                remaining: 300,
                containers: vec![container(1, 0, 8, 16, 0), container(1, 1, 16, 32, 0)],
            },
        ];
        let out = choose_graceful(
            jobs,
            Resources::cores_gb(5, 3),
            Resources::cores_gb(2, 4),
            Resources::ZERO,
            Resources::cores_gb(100, 100),
        );
        let t = |job, task| TaskRef { job: JobId(job), task };
        assert_eq!(
            out,
            vec![
                (t(1, 1), Resources::cores_gb(14, 28)),
                (t(1, 0), Resources::cores_gb(6, 12)),
                (t(2, 0), Resources::cores_gb(2, 4)),
            ]
        );
    }

    // Two equal containers ⟨4, 8⟩ and p = ⟨4 CPU, 0⟩ with r_GP = ⟨1, 2⟩: one step from
    // each (ties to the lower task first), leaving ⟨2, 0⟩ for the next round.
    #[test]
    fn graceful_spreads_over_equal_containers_and_stops_at_the_footprint() {
        let jobs = vec![VictimJob {
            job: JobId(1),
            remaining: 100,
            containers: vec![container(1, 0, 4, 8, 0), container(1, 1, 4, 8, 0)],
        }];
        let out = choose_graceful(
            jobs,
            Resources::cores_gb(4, 0),
            Resources::cores_gb(1, 2),
            Resources::cores_gb(0, 1),
            Resources::cores_gb(100, 100),
        );
        assert_eq!(
            out,
            vec![
                (TaskRef { job: JobId(1), task: 0 }, Resources::cores_gb(3, 6)),
                (TaskRef { job: JobId(1), task: 1 }, Resources::cores_gb(3, 6)),
            ]
        );
        // A take that would cross the footprint stops at it: ⟨1, 3⟩ with footprint ⟨0, 1⟩
        // and r_GP ⟨2, 4⟩ leaves ⟨0, 1⟩, then the container is empty and leaves the set.
        let jobs = vec![VictimJob { job: JobId(2), remaining: 1, containers: vec![container(2, 0, 1, 3, 0)] }];
        let out = choose_graceful(
            jobs,
            Resources::cores_gb(10, 10),
            Resources::cores_gb(2, 4),
            Resources::cores_gb(0, 1),
            Resources::cores_gb(100, 100),
        );
        assert_eq!(out, vec![(TaskRef { job: JobId(2), task: 0 }, Resources::cores_gb(0, 1))]);
    }
}
