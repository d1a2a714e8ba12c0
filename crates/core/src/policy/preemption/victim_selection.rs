//! BIG-C Algorithm 2 (§4.3) with whole-container takes (kill and immediate
//! preemption): pick the job with the longest remaining time, take its
//! containers until p⃗ is satisfied, then move to the next job.

use crate::model::{JobId, TaskRef};
use crate::{Micros, Resources};

/// A running container that may be preempted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Container {
    /// Its task.
    pub task: TaskRef,
    /// What it holds.
    pub resources: Resources,
    /// When it started; the most recent goes first (least work lost, as YARN does).
    pub started: Micros,
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
        crate::resources::Dominant::Cpu => left.cpu_milli == 0,
        crate::resources::Dominant::Memory => left.mem_mb == 0,
    }
}

/// Algorithm 2: the containers to preempt whole to release `p` out of a
/// cluster of size `total`, in the order they are chosen.
pub fn choose_victims(mut jobs: Vec<VictimJob>, p: Resources, total: Resources) -> Vec<Container> {
    let mut chosen = Vec::new();
    if p.is_zero() {
        return chosen;
    }
    // Line 3: longest remaining time first; ties broken by the younger job.
    jobs.sort_by(|a, b| b.remaining.cmp(&a.remaining).then(b.job.cmp(&a.job)));
    let mut left = p;
    for mut job in jobs {
        job.containers.sort_by(|a, b| b.started.cmp(&a.started).then(b.task.cmp(&a.task)));
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
        let chosen = choose_victims(jobs, Resources::cores_gb(10, 5), Resources::cores_gb(100, 100));
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
        let chosen = choose_victims(jobs, Resources::cores_gb(10, 5), Resources::cores_gb(100, 100));
        assert_eq!(chosen.len(), 2);
        assert_eq!(chosen[1].task.job, JobId(1));
    }

    #[test]
    fn nothing_to_take_takes_nothing() {
        let jobs = vec![VictimJob { job: JobId(1), remaining: 1, containers: vec![container(1, 0, 1, 1, 0)] }];
        assert!(choose_victims(jobs, Resources::ZERO, Resources::cores_gb(1, 1)).is_empty());
    }
}
