//! YARN-ME's timeline generator (§3.2): an estimate of each job's evolution
//! from job-supplied estimates only. It walks forward from now: running tasks
//! end at their start plus their estimated run time (at the size they got);
//! waiting tasks start, at their requested size, on the first node with room
//! as soon as one has it, jobs served in fair order (least memory held
//! first). A job's estimated completion is its last task's estimated end.
//! With reservations (§3.3, "Node reservations": the generator takes them
//! into account), a node reserved for a job serves only that job, first as
//! room frees on it, until one of its tasks starts there or it has no task
//! left to start.

use pliant_core::node_index::NodeIndex;
use pliant_core::{Micros, Resources};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

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
    /// Its waiting tasks in order, as runs of equal ones: request,
    /// estimated run time and how many.
    pub tasks: Vec<(Resources, Micros, u32)>,
}

/// An estimated end in the walk: (time, node, job, CPU, memory) freed.
type End = (Micros, u32, u32, u64, u64);

/// A job's place in the walk's fair order: (memory held, submission, job).
type FairKey = (u64, Micros, u32);

/// The generator's walk, kept between questions: it advances only as far as
/// a question needs (the answers are those of a walk to the end).
#[derive(Debug, Clone, Default)]
pub struct Timeline {
    /// Per job index, the latest estimated end of its tasks placed so far.
    job_end: Vec<Micros>,
    free: Vec<Resources>,
    index: Option<NodeIndex>,
    /// The running tasks' ends, in order, and how many have passed.
    running_ends: Vec<End>,
    passed: usize,
    /// The ends of the tasks the walk placed.
    ends: BinaryHeap<Reverse<End>>,
    /// Jobs with unplaced tasks by fair key, smallest first. An entry is
    /// current while it matches its job's `held` and the job has unplaced
    /// tasks; others are dropped when they come to the top (a job whose key
    /// changes gets a new entry rather than a search for the old one).
    order: BinaryHeap<Reverse<FairKey>>,
    held: Vec<u64>,
    submit: Vec<Micros>,
    /// Per job, the run and the task within it the walk places next.
    next: Vec<(usize, u32)>,
    tasks: Vec<Vec<(Resources, Micros, u32)>>,
    /// The walk's clock.
    t: Micros,
    /// Some task found no room even with every estimated end passed.
    stuck: bool,
    /// Per node, the job it is reserved for (the index sees it as full).
    reserved_for: Vec<Option<u32>>,
    /// Per job, the nodes reserved for it.
    reserved_nodes: Vec<Vec<u32>>,
}

impl Timeline {
    /// Starts the generator at `now` over nodes with `free` resources.
    pub fn generate(
        now: Micros,
        free: &[Resources],
        running: &[RunningTask],
        waiting: &[WaitingJob],
        jobs: usize,
        reserved: &[Option<u32>],
    ) -> Self {
        let mut job_end = vec![0; jobs];
        let mut running_ends = Vec::with_capacity(running.len());
        for r in running {
            let end = r.end.max(now);
            job_end[r.job as usize] = job_end[r.job as usize].max(end);
            running_ends.push((end, r.node, r.job, r.held.cpu_milli, r.held.mem_mb));
        }
        // Equal entries are alike, so an unstable sort gives a heap's order
        // (callers may hand them over in order already).
        if !running_ends.is_sorted() {
            running_ends.sort_unstable();
        }
        let mut reserved_for = vec![None; free.len()];
        let mut reserved_nodes = vec![Vec::new(); if reserved.iter().any(Option::is_some) { jobs } else { 0 }];
        let mut visible = free.to_vec();
        for (n, &r) in reserved.iter().enumerate().take(free.len()) {
            if let Some(j) = r.filter(|&j| (j as usize) < reserved_nodes.len()) {
                reserved_for[n] = Some(j);
                reserved_nodes[j as usize].push(n as u32);
                visible[n] = Resources::ZERO;
            }
        }
        let mut tl = Timeline {
            job_end,
            free: free.to_vec(),
            index: Some(NodeIndex::new(&visible)),
            running_ends,
            passed: 0,
            ends: BinaryHeap::new(),
            order: BinaryHeap::with_capacity(waiting.len()),
            held: vec![0; jobs],
            submit: vec![0; jobs],
            next: vec![(0, 0); jobs],
            tasks: vec![Vec::new(); jobs],
            t: now,
            stuck: false,
            reserved_for,
            reserved_nodes,
        };
        for w in waiting {
            let j = w.job as usize;
            tl.held[j] = w.held_mb;
            tl.submit[j] = w.submit;
            tl.tasks[j] = w.tasks.clone();
            if !w.tasks.is_empty() {
                tl.order.push(Reverse((w.held_mb, w.submit, w.job)));
            }
        }
        for n in 0..tl.reserved_for.len() {
            tl.serve_reserved(n);
        }
        tl
    }

    /// Node `n`'s free resources as the first-fit index sees them (none while reserved).
    fn visible(&self, n: usize) -> Resources {
        if self.reserved_for[n].is_some() {
            Resources::ZERO
        } else {
            self.free[n]
        }
    }

    /// Ends node `n`'s reservation: other jobs may use it.
    fn unreserve(&mut self, n: usize) {
        if let Some(j) = self.reserved_for[n].take() {
            self.reserved_nodes[j as usize].retain(|&m| m as usize != n);
            self.index.as_mut().expect("generated").update(n, self.free[n]);
        }
    }

    /// Job `job` has no task left to start: its reservations lapse.
    fn release_reservations(&mut self, job: usize) {
        if self.reserved_nodes.get(job).is_some_and(|r| !r.is_empty()) {
            for n in std::mem::take(&mut self.reserved_nodes[job]) {
                self.reserved_for[n as usize] = None;
                self.index.as_mut().expect("generated").update(n as usize, self.free[n as usize]);
            }
        }
    }

    /// If node `n` is reserved and its job's next task fits there, starts it
    /// there now and ends the reservation (YARN serves a reserved node's job first).
    fn serve_reserved(&mut self, n: usize) {
        let Some(j) = self.reserved_for[n] else { return };
        let jb = j as usize;
        if !self.unplaced(jb) {
            self.release_reservations(jb);
            return;
        }
        let (run, _) = self.next[jb];
        let req = self.tasks[jb][run].0;
        if req.fits_in(&self.free[n]) {
            self.unreserve(n);
            self.place(jb, n);
            if self.unplaced(jb) {
                self.order.push(Reverse((self.held[jb], self.submit[jb], j)));
            }
        }
    }

    /// Starts job `jb`'s next task on node `n` at the walk's clock.
    fn place(&mut self, jb: usize, n: usize) {
        let (run, within) = self.next[jb];
        let (req, est, count) = self.tasks[jb][run];
        self.free[n] -= req;
        let visible = self.visible(n);
        self.index.as_mut().expect("generated").update(n, visible);
        let end = self.t + est;
        self.job_end[jb] = self.job_end[jb].max(end);
        self.ends.push(Reverse((end, n as u32, jb as u32, req.cpu_milli, req.mem_mb)));
        self.held[jb] += req.mem_mb;
        self.next[jb] = if within + 1 < count { (run, within + 1) } else { (run + 1, 0) };
        if !self.unplaced(jb) {
            self.release_reservations(jb);
        }
    }

    /// Whether `job` has tasks the walk has not placed yet.
    fn unplaced(&self, job: usize) -> bool {
        self.next.get(job).is_some_and(|&(run, _)| run < self.tasks[job].len())
    }

    /// The first job in fair order, dropping entries that are no longer current.
    fn head(&mut self) -> Option<FairKey> {
        while let Some(&Reverse(key @ (h, _, j))) = self.order.peek() {
            if self.held[j as usize] == h && self.unplaced(j as usize) {
                return Some(key);
            }
            self.order.pop();
        }
        None
    }

    /// One step of the walk: the next task in fair order starts on the first
    /// node with room, or, if none has room, the next estimated end passes.
    /// False when the walk is over.
    fn step(&mut self) -> bool {
        let Some((_, s, j)) = self.head() else { return false };
        let jb = j as usize;
        let (run, _) = self.next[jb];
        let req = self.tasks[jb][run].0;
        let fit = self.index.as_ref().expect("generated").first_fit(req, 0);
        if let Some(node) = fit {
            self.place(jb, node);
            if self.unplaced(jb) {
                let mut top = self.order.peek_mut().expect("the head is in the order");
                *top = Reverse((self.held[jb], s, j));
            } else {
                self.order.pop();
            }
            return true;
        }
        let Some((end, node, job, cpu, mem)) = self.next_end() else {
            self.stuck = true;
            return false;
        };
        self.t = end;
        let n = node as usize;
        self.free[n] += Resources::new(cpu, mem);
        let visible = self.visible(n);
        self.index.as_mut().expect("generated").update(n, visible);
        let jb = job as usize;
        self.held[jb] = self.held[jb].saturating_sub(mem);
        if self.unplaced(jb) {
            self.order.push(Reverse((self.held[jb], self.submit[jb], job)));
        }
        self.serve_reserved(n);
        true
    }

    /// Takes the earliest estimated end not yet passed.
    fn next_end(&mut self) -> Option<End> {
        let running = self.running_ends.get(self.passed).copied();
        match (running, self.ends.peek()) {
            (Some(r), Some(&Reverse(p))) if p < r => self.ends.pop().map(|Reverse(e)| e),
            (Some(r), _) => {
                self.passed += 1;
                Some(r)
            }
            (None, _) => self.ends.pop().map(|Reverse(e)| e),
        }
    }

    /// Whether `job` is estimated to complete at `time` or later (§3.3's
    /// test: an elastic task ending at `time` is no straggler). The walk
    /// stops as soon as the answer is sure: once its clock passes `time`
    /// with tasks of the job still unplaced, they end later.
    pub fn ends_at_or_after(&mut self, job: usize, time: Micros) -> bool {
        loop {
            if self.job_end.get(job).is_some_and(|&e| e >= time) {
                return true;
            }
            if !self.unplaced(job) {
                return false;
            }
            if self.t >= time || self.stuck || !self.step() {
                // Unplaced tasks start no earlier than the clock (or never).
                return true;
            }
        }
    }

    /// `job`'s estimated completion (walking as far as needed; `Micros::MAX`
    /// if some of its tasks never find room).
    pub fn job_end(&mut self, job: usize) -> Micros {
        while self.unplaced(job) {
            if self.stuck || !self.step() {
                return Micros::MAX;
            }
        }
        self.job_end.get(job).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pliant_core::SECOND;

    #[test]
    fn waiting_tasks_follow_estimated_ends() {
        // One node of 10 GB, 4 cores: job 0 runs a 6 GB task until 100 s;
        // job 1 waits with two 5 GB tasks of 50 s: 4 GB is free, so both wait
        // for 100 s and run 100–150 s.
        let free = [Resources::cores_gb(3, 4)];
        let running = [RunningTask { job: 0, node: 0, held: Resources::cores_gb(1, 6), end: 100 * SECOND }];
        let waiting =
            [WaitingJob { job: 1, submit: 0, held_mb: 0, tasks: vec![(Resources::cores_gb(1, 5), 50 * SECOND, 2)] }];
        let mut tl = Timeline::generate(10 * SECOND, &free, &running, &waiting, 2, &[]);
        assert_eq!((tl.job_end(0), tl.job_end(1)), (100 * SECOND, 150 * SECOND));
        let mut tl = Timeline::generate(10 * SECOND, &free, &running, &waiting, 2, &[]);
        assert!(tl.ends_at_or_after(1, 150 * SECOND));
        assert!(!tl.ends_at_or_after(1, 150 * SECOND + 1));
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
            tasks: vec![(Resources::cores_gb(1, 1), 10 * SECOND, n)],
        };
        let mut tl = Timeline::generate(0, &free, &[], &[w(0, 3), w(1, 1)], 2, &[]);
        assert_eq!((tl.job_end(1), tl.job_end(0)), (10 * SECOND, 20 * SECOND));
    }

    #[test]
    fn a_reserved_node_serves_its_job_first() {
        // One node of 10 GB, 4 cores: job 2 runs a 6 GB task until 100 s.
        // Job 0 (holding least) waits with two 3 GB tasks of 200 s, job 1
        // with one 8 GB task of 10 s. Unreserved, job 0 takes the node's room
        // first and job 1 runs 300–310 s; reserved for job 1, the node serves
        // it as soon as it has room (100–110 s), then job 0 (110–310 s).
        let free = [Resources::cores_gb(3, 4)];
        let running = [RunningTask { job: 2, node: 0, held: Resources::cores_gb(1, 6), end: 100 * SECOND }];
        let waiting = [
            WaitingJob { job: 0, submit: 0, held_mb: 0, tasks: vec![(Resources::cores_gb(1, 3), 200 * SECOND, 2)] },
            WaitingJob { job: 1, submit: 0, held_mb: 5000, tasks: vec![(Resources::cores_gb(1, 8), 10 * SECOND, 1)] },
        ];
        let mut tl = Timeline::generate(10 * SECOND, &free, &running, &waiting, 3, &[]);
        assert_eq!((tl.job_end(0), tl.job_end(1)), (300 * SECOND, 310 * SECOND));
        let mut tl = Timeline::generate(10 * SECOND, &free, &running, &waiting, 3, &[Some(1)]);
        assert_eq!((tl.job_end(1), tl.job_end(0)), (110 * SECOND, 310 * SECOND));
    }
}
