//! The reserve/permit step (SSR Algorithm 1; Kubernetes scheduling framework
//! style): when a task finishes, the policy's reservation rule may keep its
//! slot for the job. A kept slot is booked on its node like an allocation,
//! so ordinary placement never sees it; the job's own tasks take it first
//! (`locality.rs`), and only a job of strictly higher priority may take it
//! from the job (the permit, TRYALLOCATETASK). Reservations expire at their
//! deadline (§IV-B), for which the core asks the body to wake it.

use super::Scheduler;
use crate::action::Action;
use crate::model::TaskState;
use crate::model::{NodeId, TaskRef};
use crate::policy::reservation::deadline::Pareto;
use crate::policy::reservation::speculative::{slot_fate, SlotFate};
use crate::policy::reservation::stragglers::should_copy;
use crate::policy::ReservationSpec;
use crate::{Micros, Resources};
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

/// Every job's reserved slots and what reservation still has to do.
#[derive(Debug, Clone, Default)]
pub(super) struct Reservations {
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
}

impl Scheduler {
    /// Books a reserved slot for `job`.
    fn book_hold(&mut self, job: u32, hold: Hold) {
        self.nodes[hold.node.0 as usize].allocated += hold.res;
        self.refresh_node(hold.node);
        self.reservations.idle += hold.res;
        if let Some(t) = hold.expires {
            self.wakes.insert(t);
        }
        self.reservations.holds.entry(job).or_default().push(hold);
    }

    /// What reserved slots hold idle now (lent to no copy).
    pub fn reserved_idle(&self) -> Resources {
        self.reservations.idle
    }

    /// Gives an idle reserved slot back to its node.
    fn drop_hold(&mut self, hold: Hold) {
        self.reservations.idle -= hold.res;
        self.unbook(hold);
    }

    /// Gives a reserved slot (idle or lent to a copy) back to its node.
    fn unbook(&mut self, hold: Hold) {
        self.nodes[hold.node.0 as usize].allocated -= hold.res;
        self.refresh_node(hold.node);
    }

    /// Removes and unbooks the first hold of `job` that `pick` accepts and
    /// whose node then has room for `req`; returns its node.
    fn take_hold(&mut self, job: u32, req: Resources, pick: impl Fn(&Hold) -> bool) -> Option<NodeId> {
        let holds = self.reservations.holds.get_mut(&job)?;
        let nodes = &self.nodes;
        let i = holds.iter().position(|h| pick(h) && req.fits_in(&(nodes[h.node.0 as usize].free() + h.res)))?;
        let hold = holds.swap_remove(i);
        if holds.is_empty() {
            self.reservations.holds.remove(&job);
        }
        self.drop_hold(hold);
        Some(hold.node)
    }

    /// One of `job`'s own reserved slots on a node `pick` accepts.
    pub(super) fn take_own_hold(
        &mut self,
        job: usize,
        req: Resources,
        pick: impl Fn(NodeId) -> bool,
    ) -> Option<NodeId> {
        if self.reservations.holds.is_empty() {
            return None;
        }
        self.take_hold(job as u32, req, |h| pick(h.node))
    }

    /// The permit: a slot reserved by a job of strictly lower priority, which
    /// a task of `job` may take when no free slot is left.
    pub(super) fn take_lower_hold(&mut self, job: usize, req: Resources) -> Option<NodeId> {
        let priority = self.jobs[job].req.priority;
        let lower: Vec<u32> = self
            .reservations
            .holds
            .keys()
            .copied()
            .filter(|&o| self.jobs[o as usize].req.priority < priority)
            .collect();
        lower.into_iter().find_map(|owner| self.take_hold(owner, req, |_| true))
    }

    /// Whether a job of `priority` could use some reserved slot (its own, or
    /// one of a lower priority).
    pub(super) fn holds_usable_by(&self, priority: u8) -> bool {
        self.reservations.holds.keys().any(|&o| self.jobs[o as usize].req.priority <= priority)
    }

    /// Algorithm 1 (or the timeout rule) for a task that finished on `node`
    /// after running `ran`, having just freed `res`.
    pub(super) fn reserve_on_finish(&mut self, now: Micros, task: TaskRef, node: NodeId, res: Resources, ran: Micros) {
        let Some(spec) = self.policy.reservation else { return };
        if let Some(hold) = self.reservations.copies.remove(&(task.job.0, task.task)) {
            self.reservations.idle += hold.res;
            self.reservations.holds.entry(task.job.0).or_default().push(hold);
        }
        let (jid, job) = (task.job.0, &self.jobs[task.job.0 as usize]);
        if job.unfinished == 0 {
            return;
        }
        let phase = job.tasks[task.task as usize].phase;
        let expires = match spec {
            ReservationSpec::Timeout { timeout } => {
                return self.book_hold(jid, Hold { node, res, phase, expires: Some(now + timeout) });
            }
            ReservationSpec::Speculative { prereserve, isolation, stragglers } => {
                let p = &job.phases[phase as usize];
                let m = p.tasks.len() as u32;
                let key = (jid, phase);
                let observed = self.reservations.observed.entry(key).or_default();
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
                        .map(|t| &job.tasks[t as usize])
                        .filter(|t| t.state == TaskState::Running)
                        .map(|t| t.ran(now) as f64)
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
                    return self.update_expiry(jid, phase, expires);
                }
                let downstream: Option<u32> = (!p.downstream.is_empty())
                    .then(|| p.downstream.iter().map(|&d| job.phases[d as usize].tasks.len() as u32).sum());
                let finished = m - p.unfinished;
                let started = self.reservations.wanted.contains_key(&key);
                if stragglers {
                    self.reservations.to_check.insert(key);
                }
                match slot_fate(m, finished, downstream, true, prereserve, started) {
                    SlotFate::Release => return,
                    SlotFate::Reserve => {}
                    SlotFate::ReserveAndPreReserve { extra } => {
                        self.reservations.wanted.insert(key, (extra, res));
                    }
                }
                self.update_expiry(jid, phase, expires);
                expires
            }
        };
        self.book_hold(jid, Hold { node, res, phase, expires });
    }

    /// Moves the expiry of the slots reserved in `phase` of `job` to `expires`.
    fn update_expiry(&mut self, job: u32, phase: u32, expires: Option<Micros>) {
        if let Some(holds) = self.reservations.holds.get_mut(&job) {
            for h in holds.iter_mut().filter(|h| h.phase == phase) {
                h.expires = expires;
            }
        }
        if let Some(t) = expires {
            self.wakes.insert(t);
        }
    }

    /// Before an allocation pass: reserved slots whose deadline has come go
    /// back to the cluster, and pre-reservations take free slots.
    pub(super) fn reservation_step(&mut self, now: Micros, out: &mut Vec<Action>) {
        if self.reservations.holds.is_empty() && self.reservations.wanted.is_empty() {
            return;
        }
        self.copy_stragglers(out);
        let mut expired = Vec::new();
        self.reservations.holds.retain(|_, holds| {
            holds.retain(|h| {
                let lapsed = h.expires.is_some_and(|t| t <= now);
                if lapsed {
                    expired.push(*h);
                }
                !lapsed
            });
            !holds.is_empty()
        });
        if !expired.is_empty() {
            self.dirty = true;
        }
        for h in expired {
            self.drop_hold(h);
        }
        let wanted: Vec<_> = self.reservations.wanted.iter().map(|(&k, &v)| (k, v)).collect();
        for ((job, phase), (count, res)) in wanted {
            let expires = self.reservations.observed.get(&(job, phase)).and_then(|o| o.1);
            if expires.is_some_and(|t| t <= now) {
                continue;
            }
            let mut left = count;
            while left > 0 {
                let Some(i) = self.free_index.first_fit(res, 0) else { break };
                self.book_hold(job, Hold { node: NodeId(i as u32), res, phase, expires });
                left -= 1;
            }
            self.reservations.wanted.insert((job, phase), (left, res));
        }
    }

    /// SSR §IV-C: in each phase that had a task finish, once its running
    /// tasks are no more than its idle reserved slots, each running task
    /// without a copy gets one on a reserved slot (on another node if it can).
    fn copy_stragglers(&mut self, out: &mut Vec<Action>) {
        for (job, phase) in std::mem::take(&mut self.reservations.to_check) {
            let j = &self.jobs[job as usize];
            let running: Vec<(u32, NodeId)> = j.phases[phase as usize]
                .tasks
                .clone()
                .filter(|&t| j.tasks[t as usize].state == TaskState::Running)
                .filter(|&t| !self.reservations.copies.contains_key(&(job, t)))
                .map(|t| (t, j.tasks[t as usize].node))
                .collect();
            let idle = self.reservations.holds.get(&job).map_or(0, |h| h.iter().filter(|h| h.phase == phase).count());
            if !should_copy(running.len() as u32, idle as u32) {
                continue;
            }
            for (task, on) in running {
                let holds = self.reservations.holds.get_mut(&job).expect("idle holds counted above");
                let of_phase = |h: &Hold| h.phase == phase;
                let i = holds
                    .iter()
                    .position(|h| of_phase(h) && h.node != on)
                    .or_else(|| holds.iter().position(of_phase))
                    .expect("as many idle holds as running tasks");
                let hold = holds.swap_remove(i);
                if holds.is_empty() {
                    self.reservations.holds.remove(&job);
                }
                self.reservations.idle -= hold.res;
                self.reservations.copies.insert((job, task), hold);
                out.push(Action::Copy {
                    task: TaskRef { job: crate::model::JobId(job), task },
                    node: hold.node,
                    resources: hold.res,
                });
            }
        }
    }

    /// A phase's downstream phases started: it needs no more pre-reservation.
    pub(super) fn phase_released(&mut self, job: u32, upstream: u32) {
        if let Some(w) = self.reservations.wanted.get_mut(&(job, upstream)) {
            w.0 = 0;
        }
    }

    /// Slots a job keeps for phases that have all started, or for a job that
    /// has ended, go back to the cluster.
    pub(super) fn release_spent_holds(&mut self, job: usize) {
        let Some(holds) = self.reservations.holds.get(&(job as u32)) else { return };
        let j = &self.jobs[job];
        let ended = j.status != super::JobStatus::Active;
        let blind = matches!(self.policy.reservation, Some(ReservationSpec::Timeout { .. }));
        if !ended && (blind || !j.pending.is_empty()) {
            return;
        }
        let spent = |h: &Hold| {
            ended || j.phases[h.phase as usize].downstream.iter().all(|&d| j.phases[d as usize].upstream_left == 0)
        };
        let (gone, kept): (Vec<Hold>, Vec<Hold>) = holds.iter().partition(|h| spent(h));
        if ended {
            self.reservations.wanted.retain(|&(o, _), _| o != job as u32);
            self.reservations.observed.retain(|&(o, _), _| o != job as u32);
            let lent: Vec<(u32, u32)> =
                self.reservations.copies.range((job as u32, 0)..=(job as u32, u32::MAX)).map(|(&k, _)| k).collect();
            for k in lent {
                let hold = self.reservations.copies.remove(&k).expect("listed");
                self.unbook(hold);
            }
        }
        if kept.is_empty() {
            self.reservations.holds.remove(&(job as u32));
        } else {
            self.reservations.holds.insert(job as u32, kept);
        }
        if !gone.is_empty() {
            self.dirty = true;
        }
        for h in gone {
            self.drop_hold(h);
        }
    }

    /// The earliest instant after `now` the core wants a pass at even if the
    /// body observes nothing (a locality wait ends, a reservation expires);
    /// the body arranges a timer and calls [`Scheduler::wake`] then.
    pub fn wake_at(&mut self, now: Micros) -> Option<Micros> {
        while let Some(&t) = self.wakes.first() {
            if t > now {
                return Some(t);
            }
            self.wakes.pop_first();
        }
        None
    }

    /// A timer the core asked for ([`Scheduler::wake_at`]) went off: the
    /// next [`Scheduler::schedule`] runs an allocation pass.
    pub fn wake(&mut self, _now: Micros) {
        self.dirty = true;
    }
}
