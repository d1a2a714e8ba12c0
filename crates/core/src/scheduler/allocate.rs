//! The allocation pass: serve queues from the most under-served, jobs in each
//! queue in service order, and place each runnable task on a node.

use super::Scheduler;
use crate::action::Action;
use crate::books::{QueueState, ServiceKey, View};
use crate::model::{JobClass, JobId, NodeId, TaskRef, TaskState};
use crate::policy::steps::{Mechanism, Pick, Reservation};
use crate::policy::HeadOfLine;
use crate::{Micros, Resources};
use std::ops::Bound::{Excluded, Unbounded};

/// Where the allocation pass stands in one class's waiting set of the
/// queue it serves.
#[derive(Debug, Clone)]
pub(super) struct ClassWalk {
    /// The class's next job to serve.
    next: Option<ServiceKey>,
    /// Held back by a task that found no room (FIFO: nothing overtakes it).
    blocked: bool,
    /// Every job served in it so far has left the set.
    all_left: bool,
}

impl Scheduler {
    pub(super) fn allocate(&mut self, now: Micros, out: &mut Vec<Action>) {
        if let Scheduler { view, mechanism, reservation, placement_pass: Some(pass), .. } = self {
            let mut start = |view: &mut View, job, task, node, size| {
                launch(view, mechanism.as_mut(), reservation.as_mut(), now, job, task, node, size, out)
            };
            return pass.allocate(view, now, &mut start);
        }
        // The queues with waiting jobs (a pass visits no other), the most
        // under-served first: lowest used / guaranteed dominant share. The
        // pass's lists are buffers kept between passes.
        let mut order = std::mem::take(&mut self.pass_order);
        order.clear();
        let waiting = |q: &QueueState| q.waiting.iter().any(|w| !w.is_empty());
        order.extend(self.view.queues.iter().enumerate().filter(|(_, q)| waiting(q)).map(|(i, _)| (0.0, i)));
        if order.is_empty() {
            self.pass_order = order;
            return;
        }
        if order.len() > 1 {
            let total = self.view.total;
            for (served, i) in &mut order {
                let q = &self.view.queues[*i];
                let g = q.guaranteed.dominant_share(&total).max(f64::MIN_POSITIVE);
                *served = q.used.dominant_share(&total) / g;
            }
            order.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        }
        // Request sizes that found no node in this pass: bigger ones won't either.
        let mut no_room = std::mem::take(&mut self.pass_no_room);
        no_room.clear();
        let mut classes = std::mem::take(&mut self.pass_classes);
        self.allocate_queues(now, &order, &mut no_room, &mut classes, out);
        self.pass_order = order;
        self.pass_no_room = no_room;
        self.pass_classes = classes;
    }

    /// Serves the queues in `order` (how served each is, and its index; see
    /// `allocate`); `no_room` collects the request sizes that found no node;
    /// `walk` is a buffer for each queue's classes.
    fn allocate_queues(
        &mut self,
        now: Micros,
        order: &[(f64, usize)],
        no_room: &mut Vec<Resources>,
        walk: &mut Vec<ClassWalk>,
        out: &mut Vec<Action>,
    ) {
        // Classes held back by a task that found no room (FIFO: nothing
        // overtakes it), per queue in its classes' order; every class is in
        // one queue, and once all are held back the pass ends.
        let classes: usize = self.view.queues.iter().map(|q| q.waiting.len()).sum();
        let mut held_back = 0;
        for &(_, qi) in order {
            // Walk the per-class waiting sets merged in service order: each
            // class's next job. Serving a job of one class changes only that
            // class's set (the job may leave it), so only its next is sought
            // again: the set's first while every job served in it has left it.
            walk.clear();
            let sets = &self.view.queues[qi].waiting;
            walk.extend(sets.iter().map(|set| ClassWalk {
                next: set.first().copied(),
                blocked: false,
                all_left: true,
            }));
            loop {
                let pick = |(c, w): (usize, &ClassWalk)| if w.blocked { None } else { w.next.map(|k| (k, c)) };
                let Some((key, c)) = walk.iter().enumerate().filter_map(pick).min() else { break };
                let id = key.2 as usize;
                let full = self.view.free_index.full();
                if held_back == classes || (full && !self.reservation.usable_by(self.view.jobs[id].req.priority)) {
                    return;
                }
                let class = self.view.jobs[id].req.class;
                while let Some(ti) = self.view.jobs[id].pending.front() {
                    let req = self.view.jobs[id].tasks.request(ti as usize);
                    let reservation = self.reservation.as_mut();
                    let node = match self.preference.pick(&mut self.view, reservation, now, id, ti, req) {
                        Pick::Take(node) => Some(node),
                        Pick::Wait => break,
                        Pick::Any => {
                            let free =
                                if no_room.iter().any(|r| r.fits_in(&req)) { None } else { self.find_node(req, class) };
                            free.or_else(|| self.reservation.take_lower(&mut self.view, id, req))
                        }
                    };
                    let Some(node) = node else {
                        no_room.push(req);
                        match self.policy.head_of_line {
                            HeadOfLine::All => return,
                            HeadOfLine::PerClass => {
                                walk[c].blocked = true;
                                held_back += 1;
                            }
                        }
                        break;
                    };
                    launch(
                        &mut self.view,
                        self.mechanism.as_mut(),
                        self.reservation.as_mut(),
                        now,
                        id,
                        ti,
                        node,
                        req,
                        out,
                    );
                }
                self.view.sync_waiting(id);
                let w = &mut walk[c];
                if !w.blocked {
                    w.all_left &= !self.view.is_waiting(id);
                    let set = &self.view.queues[qi].waiting[c];
                    w.next =
                        if w.all_left { set.first() } else { set.range((Excluded(key), Unbounded)).next() }.copied();
                }
            }
        }
    }

    /// First fit among the nodes `class` may use. Short tasks go where they
    /// leave preempted containers' promised room alone if they can, and into
    /// it only if nowhere else has room, so preempted work resumes sooner.
    fn find_node(&self, req: Resources, class: JobClass) -> Option<NodeId> {
        let view = &self.view;
        // With nothing promised anywhere, free room is where long work may go.
        let long_index = if view.promising > 0 { &view.long_index } else { &view.free_index };
        let found = match class {
            JobClass::Short if view.promising == 0 => view.free_index.first_fit(req, 0),
            JobClass::Short => long_index.first_fit(req, 0).or_else(|| view.free_index.first_fit(req, 0)),
            JobClass::Long => long_index.first_fit(req, view.first_shared_node),
        };
        found.map(|i| NodeId(i as u32))
    }
}

/// Starts a pending task on `node` with `size`: its request, unless a sizing
/// step (`policy/sizing/`) gave it less; a task the mechanism keeps an image
/// of (`Mechanism::image`) is restored by it.
#[allow(clippy::too_many_arguments)]
pub(super) fn launch(
    view: &mut View,
    mechanism: &mut dyn Mechanism,
    reservation: &mut dyn Reservation,
    now: Micros,
    job: usize,
    task: u32,
    node: NodeId,
    size: Resources,
    out: &mut Vec<Action>,
) {
    if let Some(image) = mechanism.image(TaskRef { job: JobId(job as u32), task }) {
        return mechanism.restore(view, now, job, task, image, node, out);
    }
    let j = view.job_mut(job);
    j.pending.pop_front();
    let t = &mut j.tasks[task as usize];
    t.state.transition(TaskState::Running).expect("pending tasks can start");
    t.node = node;
    t.allocated = size;
    t.attempts += 1;
    t.started = now;
    t.ran_before = 0;
    t.running_since = Some(now);
    j.running += 1;
    let queue = j.queue;
    view.reserve(node, queue, size);
    reservation.release_spent(view, job);
    out.push(Action::Launch { task: TaskRef { job: JobId(job as u32), task }, node, resources: size });
}
