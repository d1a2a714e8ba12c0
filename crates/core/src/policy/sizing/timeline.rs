//! YARN-ME's timeline generator (§3.2): an estimate of each job's evolution
//! from job-supplied estimates only. It walks forward from now: running tasks
//! end at their start plus their estimated run time (at the size they got);
//! waiting tasks start, at their requested size, on the first node with room
//! as soon as one has it, jobs served in fair order (least memory held
//! first). A job's estimated completion is its last task's estimated end.

use crate::scheduler::NodeIndex;
use crate::{Micros, Resources};
use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};

/// A running task as the generator sees it.
#[derive(Debug, Clone, Copy)]
pub struct RunningTask {
    /// Dense job index.
    pub job: u32,
    /// Its node.
    pub node: u32,
    /// What it holds.
    pub held: Resources,
    /// Its estimated end.
    pub end: Micros,
}

/// A job with waiting tasks.
#[derive(Debug, Clone)]
pub struct WaitingJob {
    /// Dense job index.
    pub job: u32,
    /// Its submission time (ties in fair order).
    pub submit: Micros,
    /// Memory its running tasks hold now, MB.
    pub held_mb: u64,
    /// Its waiting tasks in order: request and estimated run time.
    pub tasks: Vec<(Resources, Micros)>,
}

/// The generator's output.
#[derive(Debug, Clone, Default)]
pub struct Timeline {
    /// Per job index, its estimated completion (0 for jobs it did not see).
    pub job_end: Vec<Micros>,
}

impl Timeline {
    /// Runs the generator at `now` over nodes with `free` resources.
    pub fn generate(
        now: Micros,
        free: &[Resources],
        running: &[RunningTask],
        waiting: &[WaitingJob],
        jobs: usize,
    ) -> Self {
        let mut free = free.to_vec();
        let mut index = NodeIndex::new(&free);
        let mut job_end = vec![0; jobs];
        let mut held: Vec<u64> = vec![0; jobs];
        let mut ends = BinaryHeap::with_capacity(running.len());
        for r in running {
            let end = r.end.max(now);
            job_end[r.job as usize] = job_end[r.job as usize].max(end);
            ends.push(Reverse((end, r.node, r.job, r.held.cpu_milli, r.held.mem_mb)));
        }
        let mut next = vec![0usize; jobs];
        let mut order: BTreeSet<(u64, Micros, u32)> = BTreeSet::new();
        let mut submit = vec![0; jobs];
        for w in waiting {
            held[w.job as usize] = w.held_mb;
            submit[w.job as usize] = w.submit;
            if !w.tasks.is_empty() {
                order.insert((w.held_mb, w.submit, w.job));
            }
        }
        let tasks_of: Vec<Option<&WaitingJob>> = {
            let mut v = vec![None; jobs];
            for w in waiting {
                v[w.job as usize] = Some(w);
            }
            v
        };
        let mut t = now;
        while let Some(&(h, s, j)) = order.first() {
            let w = tasks_of[j as usize].expect("ordered jobs wait");
            let (req, est) = w.tasks[next[j as usize]];
            if let Some(node) = index.first_fit(req, 0) {
                free[node] -= req;
                index.update(node, free[node]);
                let end = t + est;
                job_end[j as usize] = job_end[j as usize].max(end);
                ends.push(Reverse((end, node as u32, j, req.cpu_milli, req.mem_mb)));
                order.remove(&(h, s, j));
                held[j as usize] += req.mem_mb;
                next[j as usize] += 1;
                if next[j as usize] < w.tasks.len() {
                    order.insert((held[j as usize], s, j));
                }
                continue;
            }
            // Nothing fits now: move on to the next estimated end.
            let Some(Reverse((end, node, job, cpu, mem))) = ends.pop() else { break };
            t = end;
            let n = node as usize;
            free[n] += Resources::new(cpu, mem);
            index.update(n, free[n]);
            let jb = job as usize;
            let waiting_key = (held[jb], submit[jb], job);
            let was_waiting = order.remove(&waiting_key);
            held[jb] = held[jb].saturating_sub(mem);
            if was_waiting {
                order.insert((held[jb], submit[jb], job));
            }
        }
        // Jobs whose tasks never found room (more than any node holds) never end.
        for (j, w) in tasks_of.iter().enumerate() {
            if w.is_some_and(|w| next[j] < w.tasks.len()) {
                job_end[j] = Micros::MAX;
            }
        }
        Timeline { job_end }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SECOND;

    #[test]
    fn waiting_tasks_follow_estimated_ends() {
        // One node of 10 GB, 4 cores: job 0 runs a 6 GB task until 100 s;
        // job 1 waits with two 5 GB tasks of 50 s: 4 GB is free, so both wait
        // for 100 s and run 100–150 s.
        let free = [Resources::cores_gb(3, 4)];
        let running = [RunningTask { job: 0, node: 0, held: Resources::cores_gb(1, 6), end: 100 * SECOND }];
        let waiting =
            [WaitingJob { job: 1, submit: 0, held_mb: 0, tasks: vec![(Resources::cores_gb(1, 5), 50 * SECOND); 2] }];
        let tl = Timeline::generate(10 * SECOND, &free, &running, &waiting, 2);
        assert_eq!(tl.job_end, vec![100 * SECOND, 150 * SECOND]);
    }

    #[test]
    fn fair_order_interleaves_jobs() {
        // Two 1 GB slots; job 0 waits with three 10 s tasks, job 1 with one:
        // fair order starts one of job 0, then job 1's (it holds less), then
        // job 0's other two at 10 s. FIFO would have ended job 1 at 20 s.
        let free = [Resources::cores_gb(2, 2)];
        let w = |job, n| WaitingJob {
            job,
            submit: 0,
            held_mb: 0,
            tasks: vec![(Resources::cores_gb(1, 1), 10 * SECOND); n],
        };
        let tl = Timeline::generate(0, &free, &[], &[w(0, 3), w(1, 1)], 2);
        assert_eq!(tl.job_end, vec![20 * SECOND, 10 * SECOND]);
    }
}
