//! The reserve/permit step (SSR Algorithm 1; Kubernetes scheduling framework
//! style): when a task finishes, the policy's reservation rule may keep its
//! slot for the job. A kept slot is booked on its node like an allocation,
//! so ordinary placement never sees it; the job's own tasks take it first
//! (`locality.rs`), and only a job of strictly higher priority may take it
//! from the job (the permit, TRYALLOCATETASK). Reservations expire at their
//! deadline (§IV-B), for which the core asks the body to wake it. The
//! decisions are in `speculative.rs`, `deadline.rs` and `stragglers.rs`.

use super::deadline::Pareto;
use super::speculative::{slot_fate, SlotFate};
use super::stragglers::should_copy;
use pliant_core::action::Action;
use pliant_core::books::{JobStatus, View};
use pliant_core::model::{JobId, NodeId, TaskRef, TaskState};
use pliant_core::policy::steps::Reservation;
use pliant_core::policy::ReservationSpec;
use pliant_core::{Micros, Resources};
use std::collections::{BTreeMap, BTreeSet};

/// One reserved slot.
#[derive(Debug, Clone, Copy)]
struct Hold {
    node: NodeId,
    res: Resources,
    /// The phase whose finished task (or pre-reservation) made it.
    phase: u32,
    /// When it lapses, if it does.
    expires: Option<Micros>,
}

/// The slot book: every job's reserved slots and what reservation still has to do.
#[derive(Debug, Clone)]
pub(crate) struct SlotBook {
    /// The policy's reservation rule.
    spec: ReservationSpec,
    /// Reserved slots per job.
    holds: BTreeMap<u32, Vec<Hold>>,
    /// Per (job, phase): slots still to pre-reserve for its downstream
    /// phase, and their size (Algorithm 1, lines 16–17).
    wanted: BTreeMap<(u32, u32), (u32, Resources)>,
    /// Per (job, phase): observed run times of its finished tasks (µs), and
    /// the deadline they give (Eq. 2), once there is one.
    observed: BTreeMap<(u32, u32), (Vec<f64>, Option<Micros>)>,
    /// Reserved slots lent to copies of running tasks, per (job, task).
    copies: BTreeMap<(u32, u32), Hold>,
    /// Phases (job, phase) that had a task finish since the last pass: they
    /// may now have as many idle reserved slots as running tasks.
    to_check: BTreeSet<(u32, u32)>,
    /// Resources of all holds (not those lent to copies).
    idle: Resources,
    /// No hold in `holds` lapses before this (a lower bound: a step before
    /// it need not look through them).
    next_expiry: Option<Micros>,
    /// The jobs with holds, as (priority, job): the permit looks only
    /// through the holders of lower priority.
    holders: BTreeSet<(u8, u32)>,
}

impl SlotBook {
    /// A slot book for `spec`.
    pub fn new(spec: ReservationSpec) -> Self {
        SlotBook {
            spec,
            holds: BTreeMap::new(),
            wanted: BTreeMap::new(),
            observed: BTreeMap::new(),
            copies: BTreeMap::new(),
            to_check: BTreeSet::new(),
            idle: Resources::ZERO,
            next_expiry: None,
            holders: BTreeSet::new(),
        }
    }

    /// Books a reserved slot for `job`.
    fn book_hold(&mut self, view: &mut View, job: u32, hold: Hold) {
        view.book_node(hold.node, hold.res);
        self.idle += hold.res;
        if let Some(t) = hold.expires {
            view.wake_at(t);
        }
        self.keep_hold(view, job, hold);
    }

    /// Puts `hold` among `job`'s holds.
    fn keep_hold(&mut self, view: &View, job: u32, hold: Hold) {
        self.lapses_at(hold.expires);
        self.holders.insert((view.job(job as usize).req.priority, job));
        self.holds.entry(job).or_default().push(hold);
    }

    /// `job` has no hold left.
    fn unlist(&mut self, view: &View, job: u32) {
        self.holds.remove(&job);
        self.holders.remove(&(view.job(job as usize).req.priority, job));
    }

    /// Some hold may lapse at `expires`.
    fn lapses_at(&mut self, expires: Option<Micros>) {
        if let Some(t) = expires {
            self.next_expiry = Some(self.next_expiry.map_or(t, |n| n.min(t)));
        }
    }

    /// Gives an idle reserved slot back to its node.
    fn drop_hold(&mut self, view: &mut View, hold: Hold) {
        self.idle -= hold.res;
        view.unbook_node(hold.node, hold.res);
    }

    /// Removes and unbooks the first hold of `job` that `pick` accepts and
    /// whose node then has room for `req`; returns its node.
    fn take_hold(&mut self, view: &mut View, job: u32, req: Resources, pick: impl Fn(&Hold) -> bool) -> Option<NodeId> {
        let holds = self.holds.get(&job)?;
        let i = holds.iter().position(|h| pick(h) && req.fits_in(&(view.node_free(h.node.0 as usize) + h.res)))?;
        Some(self.remove_hold(view, job, i))
    }

    /// Removes and unbooks hold `i` of `job`; returns its node.
    fn remove_hold(&mut self, view: &mut View, job: u32, i: usize) -> NodeId {
        let holds = self.holds.get_mut(&job).expect("a job with holds");
        let hold = holds.swap_remove(i);
        if holds.is_empty() {
            self.unlist(view, job);
        }
        self.drop_hold(view, hold);
        hold.node
    }

    /// The permit: a slot reserved by a job of strictly lower priority, which
    /// a task of `job` may take when no free slot is left.
    pub(crate) fn take_lower_hold(&mut self, view: &mut View, job: usize, req: Resources) -> Option<NodeId> {
        if self.holders.is_empty() {
            return None;
        }
        let priority = view.job(job).req.priority;
        let lower = self.holders.range(..(priority, 0));
        let fits = |h: &Hold| req.fits_in(&(view.node_free(h.node.0 as usize) + h.res));
        let first_fit = |o: u32| self.holds[&o].iter().position(fits).map(|i| (o, i));
        // Owners in job order, as the holds are kept: one priority's holders
        // are; those of several are merged.
        let (owner, i) = if lower.clone().next().map(|h| h.0) == lower.clone().next_back().map(|h| h.0) {
            lower.map(|&(_, o)| o).find_map(first_fit)?
        } else {
            let mut owners: Vec<u32> = lower.map(|&(_, o)| o).collect();
            owners.sort_unstable();
            owners.into_iter().find_map(first_fit)?
        };
        Some(self.remove_hold(view, owner, i))
    }

    /// Whether a job of `priority` could use some reserved slot (its own, or
    /// one of a lower priority).
    pub(crate) fn holds_usable_by(&self, priority: u8) -> bool {
        self.holders.first().is_some_and(|&(p, _)| p <= priority)
    }

    /// Algorithm 1 (or the timeout rule) for a task that finished on `node`
    /// after running `ran`, having just freed `res`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn reserve_on_finish(
        &mut self,
        view: &mut View,
        now: Micros,
        task: TaskRef,
        node: NodeId,
        res: Resources,
        ran: Micros,
    ) {
        let spec = self.spec;
        if let Some(hold) = self.copies.remove(&(task.job.0, task.task)) {
            self.idle += hold.res;
            self.keep_hold(view, task.job.0, hold);
        }
        let (jid, job) = (task.job.0, view.job(task.job.0 as usize));
        if job.unfinished == 0 {
            return;
        }
        let phase = job.tasks.phase(task.task as usize);
        let expires = match spec {
            ReservationSpec::Timeout { timeout } => {
                return self.book_hold(view, jid, Hold { node, res, phase, expires: Some(now + timeout) });
            }
            ReservationSpec::Speculative { prereserve, isolation, stragglers } => {
                let p = &job.phases[phase as usize];
                let m = p.tasks.len() as u32;
                let key = (jid, phase);
                let observed = self.observed.entry(key).or_default();
                let mut expires = observed.1;
                if expires.is_some_and(|t| t <= now) {
                    // The phase's deadline has passed: its reservations are
                    // over (§IV-B), whatever a refit would say now.
                    return;
                }
                if let Some(isolation) = isolation {
                    observed.0.push(ran as f64);
                    let running: Vec<f64> = p
                        .tasks
                        .clone()
                        .filter(|&t| job.tasks.state(t as usize) == TaskState::Running)
                        .map(|t| job.tasks.ran(t as usize, now) as f64)
                        .collect();
                    if let Some(fit) = Pareto::fit_censored(&observed.0, &running) {
                        let d = fit.deadline(isolation, m);
                        let at =
                            p.released.saturating_add(if d.is_finite() { d.ceil() as Micros } else { Micros::MAX });
                        expires = Some(at);
                        observed.1 = expires;
                    }
                }
                if expires.is_some_and(|t| t <= now) {
                    // The refit moved the deadline before now: the phase's
                    // slots lapse at the next step, this one at once.
                    return self.update_expiry(view, jid, phase, expires);
                }
                let downstream: Option<u32> = (!p.downstream.is_empty())
                    .then(|| p.downstream.iter().map(|&d| job.phases[d as usize].tasks.len() as u32).sum());
                let finished = m - p.unfinished;
                let started = self.wanted.contains_key(&key);
                if stragglers {
                    self.to_check.insert(key);
                }
                match slot_fate(m, finished, downstream, true, prereserve, started) {
                    SlotFate::Release => return,
                    SlotFate::Reserve => {}
                    SlotFate::ReserveAndPreReserve { extra } => {
                        self.wanted.insert(key, (extra, res));
                    }
                }
                self.update_expiry(view, jid, phase, expires);
                expires
            }
        };
        self.book_hold(view, jid, Hold { node, res, phase, expires });
    }

    /// Moves the expiry of the slots reserved in `phase` of `job` to `expires`.
    fn update_expiry(&mut self, view: &mut View, job: u32, phase: u32, expires: Option<Micros>) {
        if let Some(holds) = self.holds.get_mut(&job) {
            for h in holds.iter_mut().filter(|h| h.phase == phase) {
                h.expires = expires;
            }
            self.lapses_at(expires);
        }
        if let Some(t) = expires {
            view.wake_at(t);
        }
    }

    /// Before an allocation pass: reserved slots whose deadline has come go
    /// back to the cluster, and pre-reservations take free slots.
    #[inline]
    pub(crate) fn step(&mut self, view: &mut View, now: Micros, out: &mut Vec<Action>) {
        if !(self.holds.is_empty() && self.wanted.is_empty()) {
            self.step_holds(view, now, out);
        }
    }

    /// [`SlotBook::step`] where there are holds or pre-reservations to make.
    fn step_holds(&mut self, view: &mut View, now: Micros, out: &mut Vec<Action>) {
        self.copy_stragglers(view, out);
        let mut expired = Vec::new();
        if self.next_expiry.is_some_and(|t| t <= now) {
            let mut next = None;
            let mut emptied = Vec::new();
            self.holds.retain(|&job, holds| {
                holds.retain(|h| {
                    let lapsed = h.expires.is_some_and(|t| t <= now);
                    if lapsed {
                        expired.push(*h);
                    } else if let Some(t) = h.expires {
                        next = Some(next.map_or(t, |n: Micros| n.min(t)));
                    }
                    !lapsed
                });
                if holds.is_empty() {
                    emptied.push(job);
                }
                !holds.is_empty()
            });
            for job in emptied {
                self.unlist(view, job);
            }
            self.next_expiry = next;
        }
        if !expired.is_empty() {
            view.set_dirty();
        }
        for h in expired {
            self.drop_hold(view, h);
        }
        let wanted: Vec<_> = self.wanted.iter().map(|(&k, &v)| (k, v)).collect();
        for ((job, phase), (count, res)) in wanted {
            let expires = self.observed.get(&(job, phase)).and_then(|o| o.1);
            if expires.is_some_and(|t| t <= now) {
                continue;
            }
            let mut left = count;
            while left > 0 {
                let Some(i) = view.first_fit(res, 0) else { break };
                self.book_hold(view, job, Hold { node: NodeId(i as u32), res, phase, expires });
                left -= 1;
            }
            self.wanted.insert((job, phase), (left, res));
        }
    }

    /// SSR §IV-C: in each phase that had a task finish, once its running
    /// tasks are no more than its idle reserved slots, each running task
    /// without a copy gets one on a reserved slot (on another node if it can).
    fn copy_stragglers(&mut self, view: &View, out: &mut Vec<Action>) {
        for (job, phase) in std::mem::take(&mut self.to_check) {
            // A finished job has no task left to copy.
            let Some(j) = view.jobs().get(job as usize) else { continue };
            let running: Vec<(u32, NodeId)> = j.phases[phase as usize]
                .tasks
                .clone()
                .filter(|&t| j.tasks.state(t as usize) == TaskState::Running)
                .filter(|&t| !self.copies.contains_key(&(job, t)))
                .map(|t| (t, j.tasks[t as usize].node))
                .collect();
            let idle = self.holds.get(&job).map_or(0, |h| h.iter().filter(|h| h.phase == phase).count());
            if !should_copy(running.len() as u32, idle as u32) {
                continue;
            }
            for (task, on) in running {
                let holds = self.holds.get_mut(&job).expect("idle holds counted above");
                let of_phase = |h: &Hold| h.phase == phase;
                let i = holds
                    .iter()
                    .position(|h| of_phase(h) && h.node != on)
                    .or_else(|| holds.iter().position(of_phase))
                    .expect("as many idle holds as running tasks");
                let hold = holds.swap_remove(i);
                if holds.is_empty() {
                    self.unlist(view, job);
                }
                self.idle -= hold.res;
                self.copies.insert((job, task), hold);
                out.push(Action::Copy {
                    task: TaskRef { job: JobId(job), task },
                    node: hold.node,
                    resources: hold.res,
                });
            }
        }
    }

    /// A phase's downstream phases started: it needs no more pre-reservation.
    pub(crate) fn phase_released(&mut self, job: u32, upstream: u32) {
        if let Some(w) = self.wanted.get_mut(&(job, upstream)) {
            w.0 = 0;
        }
    }

    /// Slots a job keeps for phases that have all started, or for a job that
    /// has ended, go back to the cluster.
    pub(crate) fn release_spent_holds(&mut self, view: &mut View, job: usize) {
        let Some(holds) = self.holds.get(&(job as u32)) else { return };
        let j = view.job(job);
        let ended = j.status != JobStatus::Active;
        let blind = matches!(self.spec, ReservationSpec::Timeout { .. });
        if !ended && (blind || !j.pending.is_empty()) {
            return;
        }
        let spent = |h: &Hold| {
            ended || j.phases[h.phase as usize].downstream.iter().all(|&d| j.phases[d as usize].upstream_left == 0)
        };
        let (gone, kept): (Vec<Hold>, Vec<Hold>) = holds.iter().partition(|h| spent(h));
        if ended {
            let phases = (job as u32, 0)..=(job as u32, u32::MAX);
            let wanted: Vec<(u32, u32)> = self.wanted.range(phases.clone()).map(|(&k, _)| k).collect();
            for k in wanted {
                self.wanted.remove(&k);
            }
            let observed: Vec<(u32, u32)> = self.observed.range(phases).map(|(&k, _)| k).collect();
            for k in observed {
                self.observed.remove(&k);
            }
            let lent: Vec<(u32, u32)> =
                self.copies.range((job as u32, 0)..=(job as u32, u32::MAX)).map(|(&k, _)| k).collect();
            for k in lent {
                let hold = self.copies.remove(&k).expect("listed");
                view.unbook_node(hold.node, hold.res);
            }
        }
        if kept.is_empty() {
            self.unlist(view, job as u32);
        } else {
            self.holds.insert(job as u32, kept);
        }
        if !gone.is_empty() {
            view.set_dirty();
        }
        for h in gone {
            self.drop_hold(view, h);
        }
    }
}

impl Reservation for SlotBook {
    fn clone_box(&self) -> Box<dyn Reservation> {
        Box::new(self.clone())
    }

    fn before_pass(&mut self, view: &mut View, now: Micros, out: &mut Vec<Action>) {
        self.step(view, now, out)
    }

    fn task_finished(
        &mut self,
        view: &mut View,
        now: Micros,
        task: TaskRef,
        node: NodeId,
        res: Resources,
        ran: Micros,
        phase_done: Option<u32>,
    ) {
        if let Some(phase) = phase_done {
            self.phase_released(task.job.0, phase);
        }
        self.reserve_on_finish(view, now, task, node, res, ran);
    }

    fn release_spent(&mut self, view: &mut View, job: usize) {
        self.release_spent_holds(view, job)
    }

    fn usable_by(&self, priority: u8) -> bool {
        self.holds_usable_by(priority)
    }

    /// One of `job`'s own reserved slots on a node `prefer` accepts.
    fn take_own(
        &mut self,
        view: &mut View,
        job: usize,
        req: Resources,
        prefer: &dyn Fn(NodeId) -> bool,
    ) -> Option<NodeId> {
        if self.holds.is_empty() {
            return None;
        }
        self.take_hold(view, job as u32, req, |h| prefer(h.node))
    }

    fn take_lower(&mut self, view: &mut View, job: usize, req: Resources) -> Option<NodeId> {
        self.take_lower_hold(view, job, req)
    }

    /// What reserved slots hold idle now (lent to no copy).
    fn idle(&self) -> Resources {
        self.idle
    }
}
