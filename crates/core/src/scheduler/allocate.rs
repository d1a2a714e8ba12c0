//! The allocation pass: serve queues from the most under-served, jobs in each
//! queue in service order, and place each runnable task on a node.

use super::state::JobState;
use super::Scheduler;
use crate::action::Action;
use crate::model::{JobClass, NodeId, TaskState};
use crate::policy::JobOrder;
use crate::{Micros, Resources};

/// The key that orders jobs in a queue (smaller first).
pub(crate) fn service_key(order: JobOrder, job: &JobState) -> (u8, Micros, u32) {
    let priority = match order {
        JobOrder::Fifo => 0,
        JobOrder::Priority => u8::MAX - job.req.priority,
    };
    (priority, job.req.submit, job.req.id.0)
}

impl Scheduler {
    pub(super) fn allocate(&mut self, now: Micros, out: &mut Vec<Action>) {
        for qi in 0..self.queues.len() {
            if self.queues[qi].has_ended_jobs {
                let jobs = &self.jobs;
                let q = &mut self.queues[qi];
                q.jobs.retain(|&j| jobs[j as usize].status == super::state::JobStatus::Active);
                q.has_ended_jobs = false;
            }
        }
        // The most under-served queue first: lowest used / guaranteed dominant share.
        let mut order: Vec<usize> = (0..self.queues.len()).collect();
        let total = self.total;
        let served = |q: &super::state::QueueState| {
            let g = q.guaranteed.dominant_share(&total).max(f64::MIN_POSITIVE);
            q.used.dominant_share(&total) / g
        };
        order.sort_by(|&a, &b| served(&self.queues[a]).total_cmp(&served(&self.queues[b])).then(a.cmp(&b)));

        // Upper bounds on what any single node can still take.
        let mut max_free = Resources::ZERO;
        for n in &self.nodes {
            max_free = max_free.max(&n.free());
        }
        // Request sizes that found no node in this pass: bigger ones won't either.
        let mut no_room: Vec<Resources> = Vec::new();
        for qi in order {
            for ji in 0..self.queues[qi].jobs.len() {
                if max_free.cpu_milli == 0 || max_free.mem_mb == 0 {
                    return;
                }
                let id = self.queues[qi].jobs[ji] as usize;
                while let Some(&ti) = self.jobs[id].pending.front() {
                    let req = self.jobs[id].tasks[ti as usize].request;
                    if !req.fits_in(&max_free) || no_room.iter().any(|r| r.fits_in(&req)) {
                        break;
                    }
                    let class = self.jobs[id].req.class;
                    let Some(node) = self.find_node(req, class) else {
                        no_room.push(req);
                        break;
                    };
                    self.launch(now, id, ti, node, out);
                }
            }
        }
    }

    /// First fit among the nodes `class` may use.
    fn find_node(&self, req: Resources, class: JobClass) -> Option<NodeId> {
        self.nodes
            .iter()
            .position(|n| !(n.short_only && class == JobClass::Long) && req.fits_in(&n.free()))
            .map(|i| NodeId(i as u32))
    }

    fn launch(&mut self, now: Micros, job: usize, task: u32, node: NodeId, out: &mut Vec<Action>) {
        let j = &mut self.jobs[job];
        j.pending.pop_front();
        let t = &mut j.tasks[task as usize];
        t.state.transition(TaskState::Running).expect("pending tasks can start");
        t.node = node;
        t.allocated = t.request;
        t.attempts += 1;
        t.started = now;
        let res = t.request;
        j.running += 1;
        let queue = j.queue;
        self.reserve(node, queue, res);
        out.push(Action::Launch {
            task: crate::model::TaskRef { job: crate::model::JobId(job as u32), task },
            node,
            resources: res,
        });
    }
}
