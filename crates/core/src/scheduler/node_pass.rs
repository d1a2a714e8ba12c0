//! The node-by-node allocation pass of YARN's fair scheduler as YARN-ME's
//! Algorithm 1 runs it: each node in turn serves its reserved job or the next
//! job in order; the job's next task is sized (regular fit, else the elastic
//! fit of `policy/sizing/elastic.rs` checked against the timeline of
//! `policy/sizing/timeline.rs`); a node where it does not fit is reserved for
//! that job, and other jobs may use it only if that does not delay the
//! reserved job (§3.3).

use super::Scheduler;
use crate::action::Action;
use crate::model::{JobId, NodeId, TaskRef};
use crate::policy::sizing::elastic::{elastic_fit, least_size_mb};
use crate::policy::sizing::timeline::{Timeline, WaitingJob};
use crate::policy::{JobOrder, Sizing};
use crate::{Micros, Resources};
use std::collections::BTreeMap;

/// A job's place in the pass's order (smaller first): (fair or SRJF key, submit, id).
type OrderKey = (u64, Micros, u32);

/// The jobs waiting in the pass, in order, with what each one's next task needs.
type Order = BTreeMap<OrderKey, Need>;

/// The least a job's next task needs to start on a node: its request, or
/// its smallest elastic size and (as no size runs faster) its ideal run
/// time. A cheap test that spares the backfill sizing jobs that cannot fit.
#[derive(Debug, Clone, Copy)]
struct Need {
    cpu_milli: u64,
    mem_mb: u64,
    runtime: Micros,
}

impl Need {
    /// Whether a task may start in `free` and, with `by`, end by then.
    fn admits(&self, free: Resources, now: Micros, by: Micros) -> bool {
        self.cpu_milli <= free.cpu_milli && self.mem_mb <= free.mem_mb && now.saturating_add(self.runtime) <= by
    }
}

impl Scheduler {
    fn order_key(&self, job: usize) -> OrderKey {
        let j = &self.jobs[job];
        let key = match self.policy.order {
            JobOrder::ShortestRemaining => j.work_left,
            _ => j.held_mb,
        };
        (key, j.req.submit, job as u32)
    }

    fn need(&self, job: usize) -> Need {
        let j = &self.jobs[job];
        let Some(ti) = j.pending.front() else {
            return Need { cpu_milli: u64::MAX, mem_mb: u64::MAX, runtime: Micros::MAX };
        };
        let t = &j.tasks[ti as usize];
        let ideal = t.estimate.unwrap_or(0);
        match (self.policy.sizing, j.req.elastic, t.estimate) {
            (Sizing::Elastic(spec), Some(e), Some(_)) => Need {
                cpu_milli: t.request.cpu_milli,
                mem_mb: least_size_mb(&spec, &e, t.request.mem_mb).min(t.request.mem_mb),
                runtime: if e.profile.never_faster() { ideal } else { 0 },
            },
            _ => Need { cpu_milli: t.request.cpu_milli, mem_mb: t.request.mem_mb, runtime: ideal },
        }
    }

    /// Algorithm 1 over every node with room, in node order.
    pub(super) fn allocate_by_node(&mut self, now: Micros, out: &mut Vec<Action>) {
        let mut order = Order::new();
        for q in &self.queues {
            for class in &q.waiting {
                for k in class {
                    order.insert(self.order_key(k.2 as usize), self.need(k.2 as usize));
                }
            }
        }
        for n in 0..self.nodes.len() {
            loop {
                let free = self.nodes[n].free();
                if free.cpu_milli == 0 || free.mem_mb == 0 {
                    break;
                }
                let reserved = self.reserved[n].filter(|&j| !self.jobs[j as usize].pending.is_empty());
                self.reserved[n] = reserved;
                let Some(job) = reserved.or_else(|| order.first_key_value().map(|(k, _)| k.2)) else { return };
                if self.try_place(now, job as usize, n, &mut order, out) {
                    self.reserved[n] = None;
                    continue;
                }
                if self.policy.node_reservations {
                    self.reserved[n] = Some(job);
                }
                if !(matches!(self.policy.sizing, Sizing::Elastic(_))
                    && self.backfill(now, job as usize, n, &mut order, out))
                {
                    break;
                }
            }
        }
    }

    /// Lines 4–10: places `job`'s next task on node `n` if it fits, regularly
    /// or elastically.
    fn try_place(&mut self, now: Micros, job: usize, n: usize, order: &mut Order, out: &mut Vec<Action>) -> bool {
        self.refresh_timeline(now, job, n);
        match self.size_on(now, job, n, None) {
            Some((size, disk)) => {
                self.place(now, job, n, size, disk, order, out);
                true
            }
            None => false,
        }
    }

    /// The size `job`'s next task gets on node `n` and its spills' disk
    /// bandwidth (milli-MB/s), if it may start there; with `by`, only if it
    /// is estimated to end by then.
    fn size_on(&mut self, now: Micros, job: usize, n: usize, by: Option<Micros>) -> Option<(Resources, u64)> {
        let j = &self.jobs[job];
        let ti = j.pending.front()?;
        let t = &j.tasks[ti as usize];
        let free = self.nodes[n].free();
        let req = t.request;
        let ends_by = |runtime: Micros| by.is_none_or(|b| now + runtime <= b);
        if req.fits_in(&free) {
            return ends_by(t.estimate.unwrap_or(0)).then_some((req, 0));
        }
        let (Sizing::Elastic(spec), Some(e), Some(ideal)) = (self.policy.sizing, j.req.elastic, t.estimate) else {
            return None;
        };
        // No size runs faster than the ideal: a task that cannot end by `by`
        // at its ideal run time cannot under-sized either.
        if req.cpu_milli > free.cpu_milli || (!ends_by(ideal) && e.profile.never_faster()) {
            return None;
        }
        let fit = elastic_fit(&spec, &e, ideal, req.mem_mb, free.mem_mb)?;
        let budget = (spec.disk_budget_mb_s * 1000.0) as u64;
        let size = (Resources::new(req.cpu_milli, fit.mem_mb), fit.disk_mb_s_milli);
        let ok = self.disk_used[n] + fit.disk_mb_s_milli <= budget
            && ends_by(fit.runtime)
            && self.timeline.ends_at_or_after(job, now + fit.runtime);
        ok.then_some(size)
    }

    #[allow(clippy::too_many_arguments)]
    fn place(
        &mut self,
        now: Micros,
        job: usize,
        n: usize,
        size: Resources,
        disk: u64,
        order: &mut Order,
        out: &mut Vec<Action>,
    ) {
        let before = self.order_key(job);
        let ti = self.jobs[job].pending.front().expect("placed tasks wait");
        self.launch(now, job, ti, NodeId(n as u32), size, out);
        self.jobs[job].held_mb += size.mem_mb;
        self.jobs[job].tasks[ti as usize].disk_milli = disk;
        self.disk_used[n] += disk;
        order.remove(&before);
        self.sync_waiting(job);
        if !self.jobs[job].pending.is_empty() {
            order.insert(self.order_key(job), self.need(job));
        }
    }

    /// §3.3: other jobs may use node `n`, reserved for `reserved`, with tasks
    /// estimated to end before the node would have room for the reserved
    /// job's task anyway.
    fn backfill(&mut self, now: Micros, reserved: usize, n: usize, order: &mut Order, out: &mut Vec<Action>) -> bool {
        let Some(ti) = self.jobs[reserved].pending.front() else { return false };
        let need = self.jobs[reserved].tasks[ti as usize].request;
        let node_free = self.nodes[n].free();
        let mut free = node_free;
        let mut room_at = Micros::MAX;
        for &(end, held) in self.node_ends.get(n).map(Vec::as_slice).unwrap_or(&[]) {
            if end <= now {
                continue;
            }
            free += held;
            if need.fits_in(&free) {
                room_at = end;
                break;
            }
        }
        let mut found = None;
        for (k, need) in order.iter() {
            let j = k.2 as usize;
            if j == reserved {
                continue;
            }
            self.refresh_timeline(now, j, n);
            if !need.admits(node_free, now, room_at) {
                continue;
            }
            if let Some(size) = self.size_on(now, j, n, Some(room_at)) {
                found = Some((j, size));
                break;
            }
        }
        let Some((j, (size, disk))) = found else { return false };
        self.place(now, j, n, size, disk, order, out);
        true
    }

    /// Runs the timeline generator if it is stale (a job arrived or a
    /// heartbeat passed) and `job`'s next task would need it on node `n`:
    /// only an elastic fit reads it, so it is generated when first needed.
    fn refresh_timeline(&mut self, now: Micros, job: usize, n: usize) {
        if !self.timeline_stale || !matches!(self.policy.sizing, Sizing::Elastic(_)) {
            return;
        }
        let j = &self.jobs[job];
        let Some(ti) = j.pending.front() else { return };
        let req = j.tasks[ti as usize].request;
        let free = self.nodes[n].free();
        if j.req.elastic.is_some() && !req.fits_in(&free) && req.cpu_milli <= free.cpu_milli {
            self.timeline_stale = false;
            self.generate_timeline(now);
        }
    }

    /// §3.2: runs the timeline generator on the jobs' estimates.
    fn generate_timeline(&mut self, now: Micros) {
        let elastic = self.policy.sizing;
        self.snapshot.take(&self.jobs, |j, t| {
            let ideal = t.estimate.unwrap_or(0);
            let runtime = match (elastic, j.req.elastic) {
                (Sizing::Elastic(_), Some(e)) => e.profile.runtime(ideal, t.request.mem_mb, t.allocated.mem_mb),
                _ => ideal,
            };
            t.started + runtime
        });
        self.node_ends.resize_with(self.nodes.len(), Vec::new);
        self.node_ends.iter_mut().for_each(Vec::clear);
        // By end: backfill reads the first end that makes room, whichever
        // order equal ends come in.
        for r in self.snapshot.running_by_end() {
            self.node_ends[r.node as usize].push((r.end, r.held));
        }
        let mut waiting = Vec::new();
        for (ji, j) in self.jobs.iter().enumerate() {
            if j.status == super::state::JobStatus::Active && !j.pending.is_empty() {
                let tasks = self.snapshot.waiting_runs(ji, j);
                waiting.push(WaitingJob { job: ji as u32, submit: j.req.submit, held_mb: j.held_mb, tasks });
            }
        }
        let free: Vec<Resources> = self.nodes.iter().map(|n| n.free()).collect();
        let running = self.snapshot.by_end(now);
        self.timeline = Timeline::generate(now, &free, &running, &waiting, self.jobs.len());
    }

    /// Undoes a task's sizing bookkeeping when it stops holding resources;
    /// `finished` also takes its estimate off its job's work left.
    pub(super) fn unsize(&mut self, task: TaskRef, finished: bool) {
        let job = &mut self.jobs[task.job.0 as usize];
        let t = &mut job.tasks[task.task as usize];
        job.held_mb = job.held_mb.saturating_sub(t.allocated.mem_mb);
        if finished {
            job.work_left = job.work_left.saturating_sub(t.estimate.unwrap_or(0));
        }
        if let Some(used) = self.disk_used.get_mut(t.node.0 as usize) {
            *used -= std::mem::take(&mut t.disk_milli);
        }
    }

    /// The timeline generator's estimate of `job`'s completion (elastic sizing only).
    pub fn estimated_completion(&mut self, job: JobId) -> Option<Micros> {
        matches!(self.policy.sizing, Sizing::Elastic(_)).then(|| self.timeline.job_end(job.0 as usize))
    }
}
