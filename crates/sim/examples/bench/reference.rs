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

/// One task: what it asks and how long it runs, and where it stands.
pub struct Task {
    /// CPU, millicores.
    pub cpu: u64,
    /// Memory, MB.
    pub mem: u64,
    /// Run time, µs.
    pub duration: u64,
    node: u32,
    running: bool,
    /// The sequence number of its live completion event (stale ones differ).
    epoch: u64,
}

impl Task {
    /// A task asking `cpu` millicores and `mem` MB for `duration` µs.
    pub fn new(cpu: u64, mem: u64, duration: u64) -> Self {
        Task { cpu, mem, duration, node: 0, running: false, epoch: u64::MAX }
    }
}

/// One job: its submission time, its tasks and, for a pool phase, its
/// stages (the tasks are then its executors).
pub struct Job {
    /// Submission time, µs.
    pub submit: u64,
    /// Its tasks (a pool phase's executors).
    pub tasks: Vec<Task>,
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
    fn new(stages: &Stages, tasks: &[Task]) -> Self {
        Pool {
            queued: stages.0[0].0,
            stages: stages.0.clone(),
            stage: 0,
            in_flight: tasks.iter().map(|_| Vec::new()).collect(),
            slots: tasks.iter().map(|t| ((t.cpu / 1000) as u32).max(1)).collect(),
        }
    }

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

/// A job that has arrived and not ended: its submission index and its state.
struct Live {
    index: u32,
    job: Job,
    next_task: u32,
    unfinished: u32,
    pool: Option<Pool>,
}

/// Sample period, µs (pliant's default: every 2 s).
const SAMPLE: u64 = 2_000_000;
/// A queued event: (time, sequence number, kind, job's slot, task).
type Queued = Reverse<(u64, u64, u8, u32, u32)>;

/// An event's kind in the queue.
const FINISH: u8 = 0;
const SAMPLE_TICK: u8 = 1;

struct Loop {
    nodes: Vec<(u64, u64)>,
    tree: FreeTree,
    /// The live jobs by slot; an ended job's slot is taken by a later one.
    live: Vec<Option<Live>>,
    free_slots: Vec<u32>,
    heap: BinaryHeap<Queued>,
    seq: u64,
    used_cpu: u64,
    samples: Vec<u64>,
}

impl Loop {
    /// Queues an event; returns its sequence number.
    fn push(&mut self, at: u64, kind: u8, slot: u32, task: u32) -> u64 {
        self.heap.push(Reverse((at, self.seq, kind, slot, task)));
        self.seq += 1;
        self.seq - 1
    }

    fn job(&mut self, slot: u32) -> &mut Live {
        self.live[slot as usize].as_mut().expect("a live job")
    }

    /// Gives task `t` of the job in `slot` its next completion event.
    fn set_rate(&mut self, now: u64, slot: u32, t: usize) {
        let l = self.job(slot);
        let at = match &mut l.pool {
            None => Some(now + l.job.tasks[t].duration),
            Some(p) if p.done() => Some(now),
            Some(p) => p.pull(t, now),
        };
        let epoch = at.map_or(u64::MAX, |at| self.push(at, FINISH, slot, t as u32));
        self.job(slot).job.tasks[t].epoch = epoch;
    }

    fn free(&mut self, n: usize, cpu: i64, mem: i64) {
        let (c, m) = &mut self.nodes[n];
        *c = (*c as i64 + cpu) as u64;
        *m = (*m as i64 + mem) as u64;
        self.tree.set(n, self.nodes[n]);
        self.used_cpu = (self.used_cpu as i64 - cpu) as u64;
    }

    /// Completion `seq` of task `t` of the job in `slot` is due; the job's
    /// submission index when it ended its job.
    fn finish(&mut self, now: u64, slot: u32, t: usize, seq: u64) -> Option<Option<u32>> {
        let l = self.live[slot as usize].as_mut()?;
        if !l.job.tasks[t].running || l.job.tasks[t].epoch != seq {
            return None;
        }
        let executors = l.job.tasks.len();
        if let Some(stage_ended) = l.pool.as_mut().filter(|p| !p.done()).map(|p| p.complete(t, now)) {
            if stage_ended {
                for e in 0..executors {
                    if self.job(slot).job.tasks[e].running {
                        self.set_rate(now, slot, e);
                    }
                }
            } else {
                self.set_rate(now, slot, t);
            }
            return Some(None);
        }
        let task = &mut l.job.tasks[t];
        task.running = false;
        task.epoch = u64::MAX;
        let (node, cpu, mem) = (task.node as usize, task.cpu as i64, task.mem as i64);
        l.unfinished -= 1;
        let ended = (l.unfinished == 0).then_some(l.index);
        self.free(node, cpu, mem);
        if ended.is_some() {
            self.live[slot as usize] = None;
            self.free_slots.push(slot);
        }
        Some(ended)
    }

    /// Places waiting tasks in FIFO order until one finds no node.
    fn pass(&mut self, now: u64, waiting: &mut VecDeque<u32>) {
        while let Some(&slot) = waiting.front() {
            loop {
                let l = self.job(slot);
                let t = l.next_task as usize;
                let Some(task) = l.job.tasks.get(t) else { break };
                let (cpu, mem) = (task.cpu, task.mem);
                let Some(n) = self.tree.first_fit(cpu, mem, 1) else { return };
                self.free(n, -(cpu as i64), -(mem as i64));
                let l = self.job(slot);
                l.job.tasks[t].node = n as u32;
                l.job.tasks[t].running = true;
                l.next_task += 1;
                self.set_rate(now, slot, t);
            }
            waiting.pop_front();
        }
    }

    /// Job `index` arrives: it takes a free slot, which it returns.
    fn arrive(&mut self, index: u32, job: Job) -> u32 {
        let pool = job.stages.as_ref().map(|s| Pool::new(s, &job.tasks));
        let unfinished = job.tasks.len() as u32;
        let live = Some(Live { index, job, next_task: 0, unfinished, pool });
        match self.free_slots.pop() {
            Some(slot) => {
                self.live[slot as usize] = live;
                slot
            }
            None => {
                self.live.push(live);
                (self.live.len() - 1) as u32
            }
        }
    }
}

/// Replays `jobs` (in submission order, each taken when the run reaches
/// it, dropped when it ends) on nodes of the given (CPU, memory).
pub fn run(nodes: &[(u64, u64)], jobs: impl Iterator<Item = Job>) -> Outcome {
    let mut l = Loop {
        nodes: nodes.to_vec(),
        tree: FreeTree::new(nodes),
        live: Vec::new(),
        free_slots: Vec::new(),
        heap: BinaryHeap::new(),
        seq: 0,
        used_cpu: 0,
        samples: Vec::new(),
    };
    let mut jobs = jobs.peekable();
    let mut ends = Vec::new();
    let mut waiting = VecDeque::new();
    let (mut live, mut events, mut now) = (0, 0, 0);
    l.push(0, SAMPLE_TICK, 0, 0);
    while live > 0 || jobs.peek().is_some() {
        let arrival = jobs.peek().map(|j| j.submit);
        let event = l.heap.peek().map(|Reverse(e)| e.0);
        now = match (arrival, event) {
            (Some(a), Some(e)) => a.min(e),
            (Some(a), None) => a,
            (None, Some(e)) => e,
            (None, None) => break,
        };
        while let Some(job) = jobs.next_if(|j| j.submit == now) {
            waiting.push_back(l.arrive(ends.len() as u32, job));
            ends.push(None);
            live += 1;
            events += 1;
        }
        while l.heap.peek().is_some_and(|Reverse(e)| e.0 == now) {
            let Reverse((_, seq, kind, slot, t)) = l.heap.pop().expect("peeked");
            if kind == SAMPLE_TICK {
                events += 1;
                l.samples.push(l.used_cpu);
                l.push(now + SAMPLE, SAMPLE_TICK, 0, 0);
            } else if let Some(ended) = l.finish(now, slot, t as usize, seq) {
                events += 1;
                if let Some(index) = ended {
                    ends[index as usize] = Some(now);
                    live -= 1;
                }
            }
        }
        l.pass(now, &mut waiting);
    }
    Outcome { events, makespan: now, ends }
}
