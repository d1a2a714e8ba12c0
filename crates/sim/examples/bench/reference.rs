//! The reference: a minimal first-fit FIFO event loop, std only, to measure
//! pliant against on the same machine in the same run. It runs single-phase
//! jobs (plain tasks, or Spark pool phases whose executors pull stage tasks)
//! the way pliant's `fifo` preset does — jobs in submission order, each
//! task on the lowest-numbered node with room, nothing overtaking a task
//! that found none, simultaneous events in the order they were scheduled —
//! so its schedule must equal `fifo`'s, which the bench asserts.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// A Spark pool phase: stages of `(tasks, duration)`, one task per executor core.
pub struct Stages(pub Vec<(u32, u64)>);

/// One job: its submission time, its tasks' `(cpu, mem, duration)` and,
/// for a pool phase, its stages (the tasks are then its executors).
pub struct Job {
    /// Submission time, µs.
    pub submit: u64,
    /// Per task: CPU (millicores), memory (MB), run time (µs).
    pub tasks: Vec<(u64, u64, u64)>,
    /// The stages its executors pull, if it is a Spark pool phase.
    pub stages: Option<Stages>,
}

/// What a run produced.
pub struct Outcome {
    /// Events handled: arrivals, task (or executor) completions, samples.
    pub events: u64,
    /// Time of the last event, µs.
    pub makespan: u64,
    /// Each job's end, in submission order.
    pub ends: Vec<Option<u64>>,
}

/// First fit over the nodes' free (CPU, memory): a segment tree of
/// component-wise maxima, descended leftmost first.
struct FreeTree {
    leaves: usize,
    max: Vec<(u64, u64)>,
}

impl FreeTree {
    fn new(free: &[(u64, u64)]) -> Self {
        let leaves = free.len().next_power_of_two();
        let mut max = vec![(0, 0); 2 * leaves];
        max[leaves..leaves + free.len()].copy_from_slice(free);
        for i in (1..leaves).rev() {
            max[i] = (max[2 * i].0.max(max[2 * i + 1].0), max[2 * i].1.max(max[2 * i + 1].1));
        }
        FreeTree { leaves, max }
    }

    fn set(&mut self, node: usize, free: (u64, u64)) {
        let mut i = self.leaves + node;
        self.max[i] = free;
        while i > 1 {
            i /= 2;
            self.max[i] = (self.max[2 * i].0.max(self.max[2 * i + 1].0), self.max[2 * i].1.max(self.max[2 * i + 1].1));
        }
    }

    fn first_fit(&self, cpu: u64, mem: u64, i: usize) -> Option<usize> {
        let (c, m) = self.max[i];
        if c < cpu || m < mem {
            return None;
        }
        if i >= self.leaves {
            return Some(i - self.leaves);
        }
        self.first_fit(cpu, mem, 2 * i).or_else(|| self.first_fit(cpu, mem, 2 * i + 1))
    }
}

/// A pool phase's progress: every running executor progresses at full speed
/// under FIFO, so an in-flight stage task is just its start time.
struct Pool {
    stages: Vec<(u32, u64)>,
    stage: usize,
    queued: u32,
    in_flight: Vec<Vec<u64>>,
    slots: Vec<u32>,
}

impl Pool {
    fn done(&self) -> bool {
        self.stage == self.stages.len()
    }

    /// Fills executor `e`'s free cores; returns when its first task ends.
    fn pull(&mut self, e: usize, now: u64) -> Option<u64> {
        let n = (self.slots[e] as usize).saturating_sub(self.in_flight[e].len()).min(self.queued as usize);
        self.queued -= n as u32;
        self.in_flight[e].extend(std::iter::repeat_n(now, n));
        let d = self.stages[self.stage].1;
        self.in_flight[e].iter().map(|&s| (s + d).max(now)).min()
    }

    /// Retires executor `e`'s finished tasks; true when that ended the stage.
    fn complete(&mut self, e: usize, now: u64) -> bool {
        let d = self.stages[self.stage].1;
        self.in_flight[e].retain(|&s| now - s < d);
        if self.queued == 0 && self.in_flight.iter().all(Vec::is_empty) {
            self.stage += 1;
            self.queued = self.stages.get(self.stage).map_or(0, |s| s.0);
            return true;
        }
        false
    }
}

/// Sample period, µs (pliant's default: every 2 s).
const SAMPLE: u64 = 2_000_000;
/// A queued event: (time, sequence number, kind, job, task, epoch).
type Queued = Reverse<(u64, u64, u8, u32, u32, u32)>;

/// An event's kind in the queue.
const FINISH: u8 = 0;
const SAMPLE_TICK: u8 = 1;

struct Loop<'a> {
    jobs: &'a [Job],
    nodes: Vec<(u64, u64)>,
    tree: FreeTree,
    /// Per job: index of its first task in the flat task arrays.
    first: Vec<usize>,
    node: Vec<u32>,
    epoch: Vec<u32>,
    running: Vec<bool>,
    next_task: Vec<u32>,
    unfinished: Vec<u32>,
    pools: Vec<Option<Pool>>,
    heap: BinaryHeap<Queued>,
    seq: u64,
    used_cpu: u64,
    samples: Vec<u64>,
}

impl Loop<'_> {
    fn push(&mut self, at: u64, kind: u8, job: u32, task: u32, epoch: u32) {
        self.heap.push(Reverse((at, self.seq, kind, job, task, epoch)));
        self.seq += 1;
    }

    /// Gives task `t` of job `j` (flat index `f`) its next completion event.
    fn set_rate(&mut self, now: u64, j: usize, t: usize) {
        let f = self.first[j] + t;
        self.epoch[f] += 1;
        let at = match &mut self.pools[j] {
            None => Some(now + self.jobs[j].tasks[t].2),
            Some(p) if p.done() => Some(now),
            Some(p) => p.pull(t, now),
        };
        if let Some(at) = at {
            self.push(at, FINISH, j as u32, t as u32, self.epoch[f]);
        }
    }

    fn free(&mut self, n: usize, cpu: i64, mem: i64) {
        let (c, m) = &mut self.nodes[n];
        *c = (*c as i64 + cpu) as u64;
        *m = (*m as i64 + mem) as u64;
        self.tree.set(n, self.nodes[n]);
        self.used_cpu = (self.used_cpu as i64 - cpu) as u64;
    }

    /// A completion is due; true when it ended its job.
    fn finish(&mut self, now: u64, j: usize, t: usize, epoch: u32) -> Option<bool> {
        let f = self.first[j] + t;
        if !self.running[f] || self.epoch[f] != epoch {
            return None;
        }
        if let Some(p) = &mut self.pools[j] {
            if !p.done() {
                if p.complete(t, now) {
                    for e in 0..self.jobs[j].tasks.len() {
                        if self.running[self.first[j] + e] {
                            self.set_rate(now, j, e);
                        }
                    }
                } else {
                    self.set_rate(now, j, t);
                }
                return Some(false);
            }
        }
        self.running[f] = false;
        self.epoch[f] += 1;
        let (cpu, mem, _) = self.jobs[j].tasks[t];
        self.free(self.node[f] as usize, cpu as i64, mem as i64);
        self.unfinished[j] -= 1;
        Some(self.unfinished[j] == 0)
    }

    /// Places waiting tasks in FIFO order until one finds no node.
    fn pass(&mut self, now: u64, waiting: &mut VecDeque<usize>) {
        while let Some(&j) = waiting.front() {
            while (self.next_task[j] as usize) < self.jobs[j].tasks.len() {
                let t = self.next_task[j] as usize;
                let (cpu, mem, _) = self.jobs[j].tasks[t];
                let Some(n) = self.tree.first_fit(cpu, mem, 1) else { return };
                self.free(n, -(cpu as i64), -(mem as i64));
                let f = self.first[j] + t;
                self.node[f] = n as u32;
                self.running[f] = true;
                self.next_task[j] += 1;
                self.set_rate(now, j, t);
            }
            waiting.pop_front();
        }
    }
}

/// Replays `jobs` (sorted by submission) on nodes of the given (CPU, memory).
pub fn run(nodes: &[(u64, u64)], jobs: &[Job]) -> Outcome {
    let mut first = Vec::with_capacity(jobs.len());
    let mut total = 0;
    for j in jobs {
        first.push(total);
        total += j.tasks.len();
    }
    let pools = jobs
        .iter()
        .map(|j| {
            j.stages.as_ref().map(|s| Pool {
                queued: s.0[0].0,
                stages: s.0.clone(),
                stage: 0,
                in_flight: vec![Vec::new(); j.tasks.len()],
                slots: j.tasks.iter().map(|t| ((t.0 / 1000) as u32).max(1)).collect(),
            })
        })
        .collect();
    let mut l = Loop {
        jobs,
        nodes: nodes.to_vec(),
        tree: FreeTree::new(nodes),
        first,
        node: vec![0; total],
        epoch: vec![0; total],
        running: vec![false; total],
        next_task: vec![0; jobs.len()],
        unfinished: jobs.iter().map(|j| j.tasks.len() as u32).collect(),
        pools,
        heap: BinaryHeap::new(),
        seq: 0,
        used_cpu: 0,
        samples: Vec::new(),
    };
    let mut ends = vec![None; jobs.len()];
    let mut waiting = VecDeque::new();
    let (mut next, mut ended, mut events, mut now) = (0, 0, 0, 0);
    l.push(0, SAMPLE_TICK, 0, 0, 0);
    while ended < jobs.len() {
        let arrival = jobs.get(next).map(|j| j.submit);
        let event = l.heap.peek().map(|Reverse(e)| e.0);
        now = match (arrival, event) {
            (Some(a), Some(e)) => a.min(e),
            (Some(a), None) => a,
            (None, Some(e)) => e,
            (None, None) => break,
        };
        while next < jobs.len() && jobs[next].submit == now {
            waiting.push_back(next);
            next += 1;
            events += 1;
        }
        while l.heap.peek().is_some_and(|Reverse(e)| e.0 == now) {
            let Reverse((_, _, kind, j, t, epoch)) = l.heap.pop().expect("peeked");
            if kind == SAMPLE_TICK {
                events += 1;
                l.samples.push(l.used_cpu);
                l.push(now + SAMPLE, SAMPLE_TICK, 0, 0, 0);
            } else if let Some(job_done) = l.finish(now, j as usize, t as usize, epoch) {
                events += 1;
                if job_done {
                    ends[j as usize] = Some(now);
                    ended += 1;
                }
            }
        }
        l.pass(now, &mut waiting);
    }
    Outcome { events, makespan: now, ends }
}
