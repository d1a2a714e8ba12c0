//! The node-by-node allocation pass of YARN's fair scheduler as YARN-ME's
//! Algorithm 1 runs it: each node in turn serves its reserved job or the next
//! job in order; the job's next task is sized (regular fit, else the elastic
//! fit of `fit.rs` checked against the timeline of `timeline.rs`); a node where it does not fit is reserved for
//! that job, and other jobs may use it only if that does not delay the
//! reserved job (§3.3).
//!
//! Kept linear in the cluster: the order of waiting jobs lives from pass to
//! pass and only the jobs the books touched are re-keyed; a backfill looks
//! only at the waiting jobs whose need fits the node (`need_index.rs`); with node
//! reservations only the nodes where a visit could change something are
//! visited (see `NodePass::incremental` and `NodePass::backfill_incremental`).

use super::fit::{elastic_fit, least_size_mb};
use super::need_index::{Need, OrderKey, Waiting};
use super::node_set::NodeSet;
use super::quiet::QuietNodes;
use super::snapshot::SnapshotCache;
use super::timeline::{Timeline, WaitingJob};
use pliant_core::books::{JobStatus, View};
use pliant_core::model::{Elasticity, JobId, JobRequest, NodeId, TaskRef};
use pliant_core::policy::steps::{Launch, PlacementPass};
use pliant_core::policy::{JobOrder, Policy, Sizing};
use pliant_core::{Micros, Resources};
use std::collections::{BTreeMap, BTreeSet};

/// The jobs waiting in the pass, in order, with what each one's next task needs.
type Order = Waiting;

/// The fair scheduler's node-by-node pass and YARN-ME's state: node
/// reservations, the timeline generator's last estimates and snapshot, and
/// the disk bandwidth elastic tasks' spills booked per node.
#[derive(Debug, Clone)]
pub(crate) struct NodePass {
    /// `Fair` or `ShortestRemaining`.
    order: JobOrder,
    /// A node where a job's task did not fit is reserved for that job (§3.3).
    node_reservations: bool,
    /// Requested or elastic sizing.
    sizing: Sizing,
    /// Per job, its tasks' memory elasticity as its request gives it (boxed:
    /// most jobs have none), kept only under elastic sizing and while the
    /// job lives: YARN-ME's own per-job data, not in the shared job record.
    elastic: Vec<Option<Box<Elasticity>>>,
    /// Per node, the job it is reserved for.
    reserved: Vec<Option<u32>>,
    /// The timeline generator's last estimates (§3.2).
    timeline: Timeline,
    /// A job arrived or a heartbeat passed since the timeline was generated.
    timeline_stale: bool,
    /// Per node, its running tasks' estimated ends and holdings as of the timeline, by end.
    node_ends: Vec<Vec<(Micros, Resources)>>,
    /// What the timeline generator's snapshot of each job may skip.
    snapshot: SnapshotCache,
    /// Per node, disk bandwidth booked by elastic tasks' spills, milli-MB/s.
    disk_used: Vec<u64>,
    /// Per task whose spills booked some, that disk bandwidth on its node,
    /// milli-MB/s: YARN-ME's own per-task data, kept here and not in the
    /// shared task record.
    spills: BTreeMap<TaskRef, u64>,
    /// The waiting jobs in order, kept from pass to pass: a pass first
    /// re-keys only the jobs the books touched since the last one.
    waiting: Order,
    /// Per job, its key and its need in `order` while it is there.
    keyed: Vec<Option<(OrderKey, Need)>>,
    /// The jobs being re-keyed (a buffer kept between passes).
    touched: Vec<u32>,
    /// The active jobs (kept with `waiting`): the timeline generator reads
    /// these, not every job there ever was.
    active: BTreeSet<u32>,
    /// Only nodes whose visit could change something are visited: with node
    /// reservations and requested sizes, a node left full, or reserved for
    /// a job whose next task does not fit it, stays so until its free
    /// resources or that job's next task change.
    incremental: bool,
    /// With node reservations and §3.3's backfill, but no ApplicationMaster
    /// start delay, no per-heartbeat limit and no job the timeline generator
    /// would read, a node whose visit placed nothing places nothing until its
    /// free resources change, its reserved job's next task changes, or a job
    /// whose need fits it starts waiting with that need (a backfill serves
    /// the first such job). Only those nodes are visited: the ones in
    /// `to_visit`, and the nodes where a `fresh` job fits.
    backfill_incremental: bool,
    /// An elastic job waited under elastic sizing: the timeline generator may
    /// run, and every pass visits every node.
    elastic_seen: bool,
    /// The last pass visited only some nodes.
    was_incremental: bool,
    /// Jobs waiting with a need not yet offered to every node, as of the
    /// pass under way (`backfill_incremental` only).
    fresh: Vec<u32>,
    /// Jobs that came to wait with a new need since the pass began.
    fresh_next: Vec<u32>,
    /// The needs a look for a fresh job's first fit has tried (a buffer).
    looked_for: Vec<Resources>,
    /// The nodes to visit (`incremental` and `backfill_incremental` only).
    to_visit: NodeSet,
    /// (job, node) for each node reserved for a job.
    reserved_for: BTreeSet<(u32, u32)>,
    /// Nodes refreshed since the last pass (a buffer kept between passes).
    refreshed: Vec<u32>,
    /// Other jobs may use a reserved node (§3.3's backfill, DSS's `-g`).
    backfill: bool,
    /// The ApplicationMaster container each job places first (ZERO: none).
    am: Resources,
    /// Per job, the node its ApplicationMaster holds, once placed.
    am_node: Vec<Option<NodeId>>,
    /// Per node, the tasks this pass placed there that still hold resources,
    /// kept only for a requested-size backfill, which reads when they end
    /// (elastic sizing reads the timeline's; no node: not kept).
    on_node: Vec<Vec<TaskRef>>,
    /// Per node, whether its reservation is for its job's ApplicationMaster
    /// (YARN reserves for a container type: placed elsewhere, it lapses).
    reserved_am: Vec<bool>,
    /// Containers a node takes per node heartbeat (0: any number, at any pass).
    per_beat: u32,
    /// The node heartbeat period (with `per_beat`).
    beat: Micros,
    /// Per node, the containers it took at the heartbeat `beat_at`.
    served: Vec<u32>,
    /// The heartbeat `served` counts.
    beat_at: Micros,
    /// Nodes that took `per_beat` containers at this heartbeat and may take
    /// more at the next (a buffer kept between passes).
    limited: Vec<u32>,
    /// How long after its ApplicationMaster is placed a job's tasks may be.
    am_start: Micros,
    /// Per job, when its ApplicationMaster runs (its tasks may be placed).
    am_ready: Vec<Micros>,
    /// Under DSS's heartbeats (fair order), which nodes heartbeat (`quiet.rs`).
    quiet: Option<QuietNodes>,
}

impl NodePass {
    /// The pass of `policy` on `nodes` nodes.
    pub fn new(policy: &Policy, nodes: usize) -> Self {
        let (order, node_reservations, sizing) = (policy.order, policy.node_reservations, policy.sizing);
        let backfill = policy.backfill.unwrap_or(true);
        let quiet = (order == JobOrder::Fair && policy.per_heartbeat.unwrap_or(0) > 0).then(|| QuietNodes::new(nodes));
        NodePass {
            order,
            node_reservations,
            sizing,
            elastic: Vec::new(),
            reserved: vec![None; nodes],
            timeline: Timeline::default(),
            timeline_stale: true,
            node_ends: Vec::new(),
            snapshot: SnapshotCache::default(),
            disk_used: vec![0; nodes],
            spills: BTreeMap::new(),
            waiting: Order::new(backfill),
            keyed: Vec::new(),
            touched: Vec::new(),
            active: BTreeSet::new(),
            // A backfill may serve any waiting job on any reserved node.
            // Quiet nodes are visited as they wake instead.
            incremental: node_reservations && !backfill && matches!(sizing, Sizing::Requested) && quiet.is_none(),
            backfill_incremental: node_reservations
                && backfill
                && policy.am_start.unwrap_or(0) == 0
                && policy.per_heartbeat.unwrap_or(0) == 0,
            elastic_seen: false,
            was_incremental: true,
            fresh: Vec::new(),
            fresh_next: Vec::new(),
            looked_for: Vec::new(),
            to_visit: NodeSet::full(nodes),
            reserved_for: BTreeSet::new(),
            refreshed: Vec::new(),
            backfill,
            am: policy.am.unwrap_or(Resources::ZERO),
            am_node: Vec::new(),
            // Only a requested-size backfill reads them.
            on_node: if backfill && sizing == Sizing::Requested { vec![Vec::new(); nodes] } else { Vec::new() },
            reserved_am: vec![false; nodes],
            // DSS's SRTF (meganode) places as many as fit at each heartbeat.
            per_beat: match (order, policy.per_heartbeat.unwrap_or(0)) {
                (JobOrder::ShortestRemaining, p) if p > 0 => u32::MAX,
                (_, p) => p,
            },
            beat: policy.node_heartbeat.max(1),
            served: vec![0; nodes],
            beat_at: Micros::MAX,
            limited: Vec::new(),
            am_start: policy.am_start.unwrap_or(0),
            am_ready: Vec::new(),
            quiet,
        }
    }

    /// Reserves node `n` for `job` (or for none).
    fn set_reserved(&mut self, n: usize, job: Option<u32>) {
        let old = std::mem::replace(&mut self.reserved[n], job);
        if (self.incremental || self.backfill_incremental) && old != job {
            if let Some(o) = old {
                self.reserved_for.remove(&(o, n as u32));
            }
            if let Some(j) = job {
                self.reserved_for.insert((j, n as u32));
            }
        }
    }

    /// The nodes reserved for `job` are to be visited again if its next
    /// task changed: its need in the order went from `before` to `after`
    /// (`None`: not there). A change of its place in the order alone
    /// changes no visit of a node reserved for it.
    fn revisit_reserved_for(&mut self, job: u32, before: Option<Need>, after: Option<Need>) {
        if (self.incremental || self.backfill_incremental) && before != after {
            for &(_, n) in self.reserved_for.range((job, 0)..=(job, u32::MAX)) {
                self.to_visit.insert(n);
            }
        }
    }

    /// Puts job `job` in `order` under its current key while it waits, and
    /// takes it out otherwise; the nodes reserved for it are visited again
    /// if its need changed.
    fn rekey(&mut self, view: &View, order: &mut Order, job: usize) {
        if self.keyed.len() <= job {
            self.keyed.resize(job + 1, None);
        }
        // Still waiting under the same key with the same need (a job the
        // pass itself re-keyed as it launched): it stays where it is.
        if let Some((key, need)) = self.keyed[job].filter(|_| view.is_waiting(job)) {
            if key == self.order_key(view, job) && need == self.need(view, job) {
                return;
            }
        }
        let before = self.keyed[job].take().and_then(|(key, _)| order.remove(&key));
        if view.job_status(job) == JobStatus::Active {
            self.active.insert(job as u32);
        } else {
            self.active.remove(&(job as u32));
        }
        let after = view.is_waiting(job).then(|| self.insert(view, order, job, before));
        self.revisit_reserved_for(job as u32, before, after);
    }

    /// Puts waiting job `job` in `order` under its current key; `before` is
    /// its need when it was last there. Returns its need.
    fn insert(&mut self, view: &View, order: &mut Order, job: usize, before: Option<Need>) -> Need {
        let key = self.order_key(view, job);
        let need = self.need(view, job);
        order.insert(key, need);
        self.keyed[job] = Some((key, need));
        if self.elasticity(job).is_some() {
            self.elastic_seen = true;
        }
        if self.backfill_incremental && before != Some(need) {
            self.fresh_next.push(job as u32);
        }
        need
    }

    /// Job `job`'s elasticity, if it has one and the sizing is elastic.
    fn elasticity(&self, job: usize) -> Option<Elasticity> {
        self.elastic.get(job).and_then(|e| e.as_deref().copied())
    }

    /// Whether this pass visits only the nodes where something may change.
    fn incremental_now(&self) -> bool {
        self.incremental || (self.backfill_incremental && !self.elastic_seen)
    }

    /// A job arrived or a heartbeat passed: the timeline is to be generated again.
    pub fn stale(&mut self) {
        self.timeline_stale = true;
    }

    fn order_key(&self, view: &View, job: usize) -> OrderKey {
        let j = view.job(job);
        let key = match self.order {
            JobOrder::ShortestRemaining => j.work_left,
            _ => j.held_mb,
        };
        (key, j.req.submit, job as u32)
    }

    /// Whether `job` may be served at `now`: its next container is its
    /// ApplicationMaster, or that runs (YARN: an AM asks for its tasks).
    fn ready(&self, job: usize, now: Micros) -> bool {
        self.am_ready.get(job).is_none_or(|&at| at <= now)
    }

    /// Whether `job`'s next container is its ApplicationMaster.
    fn am_first(&self, job: usize) -> bool {
        !self.am.is_zero() && self.am_node.get(job).is_none_or(Option::is_none)
    }

    /// A job arrived: under DSS's heartbeats every node wakes.
    pub fn job_arrived(&mut self) {
        if let Some(q) = &mut self.quiet {
            q.wake_all();
        }
    }

    /// A job ended: its ApplicationMaster gives its node back.
    pub fn job_ended(&mut self, view: &mut View, job: usize) {
        if let Some(e) = self.elastic.get_mut(job) {
            *e = None;
        }
        if let Some(node) = self.am_node.get_mut(job).and_then(Option::take) {
            if let Some(q) = &mut self.quiet {
                q.wake(node.0 as usize);
            }
            let queue = view.job(job).queue;
            view.release(node, queue, self.am);
            let j = view.job_mut(job);
            j.held_mb = j.held_mb.saturating_sub(self.am.mem_mb);
        }
    }

    fn need(&self, view: &View, job: usize) -> Need {
        if self.am_first(job) {
            return Need { cpu_milli: self.am.cpu_milli, mem_mb: self.am.mem_mb, runtime: 0, am: true };
        }
        let j = view.job(job);
        let Some(ti) = j.pending.front() else {
            return Need { cpu_milli: u64::MAX, mem_mb: u64::MAX, runtime: Micros::MAX, am: false };
        };
        let (request, estimate) = (j.tasks.request(ti as usize), j.tasks.estimate(ti as usize));
        let ideal = estimate.unwrap_or(0);
        match (self.sizing, self.elasticity(job), estimate) {
            (Sizing::Elastic(spec), Some(e), Some(_)) => Need {
                cpu_milli: request.cpu_milli,
                mem_mb: least_size_mb(&spec, &e, request.mem_mb).min(request.mem_mb),
                runtime: if e.profile.never_faster() { ideal } else { 0 },
                am: false,
            },
            _ => Need { cpu_milli: request.cpu_milli, mem_mb: request.mem_mb, runtime: ideal, am: false },
        }
    }

    /// Algorithm 1 over every node with room, in node order.
    pub fn allocate(&mut self, view: &mut View, now: Micros, launch: &mut Launch) {
        if self.per_beat > 0 {
            // Nodes take containers only when they heartbeat (all at once,
            // in node order, every `beat`).
            let next = (now / self.beat + 1) * self.beat;
            if !now.is_multiple_of(self.beat) {
                view.wake_at(next);
                return;
            }
            if self.beat_at != now {
                self.served.fill(0);
                self.beat_at = now;
            }
        }
        let mut order = std::mem::replace(&mut self.waiting, Order::new(false));
        view.take_touched(&mut self.touched);
        let touched = std::mem::take(&mut self.touched);
        for &job in &touched {
            self.rekey(view, &mut order, job as usize);
        }
        self.touched = touched;
        self.touched.clear();
        view.take_refreshed(&mut self.refreshed);
        if self.incremental || self.backfill_incremental {
            self.to_visit.extend(self.refreshed.iter().copied());
        }
        self.refreshed.clear();
        self.walk(view, now, &mut order, launch);
        self.waiting = order;
        if self.quiet.as_ref().is_some_and(QuietNodes::any_awake) {
            view.wake_at(now + self.beat);
        }
        if !self.limited.is_empty() {
            view.wake_at(now + self.beat);
            if self.incremental || self.backfill_incremental {
                self.to_visit.extend(self.limited.iter().copied());
            }
            self.limited.clear();
        }
    }

    /// Serves every node with room (or, `incremental`, every node to
    /// visit), in node order, from `order`.
    fn walk(&mut self, view: &mut View, now: Micros, order: &mut Order, launch: &mut Launch) {
        if self.quiet.is_some() {
            // Only the nodes that heartbeat now; each then decides whether it
            // heartbeats at the next node heartbeat.
            let mut serving = true;
            for n in 0..view.node_count() {
                if !self.quiet.as_mut().is_some_and(|q| q.heartbeats(n, now)) {
                    continue;
                }
                serving = serving && self.visit(view, now, n, order, launch);
                let head = order.first_key().map(|k| k.2);
                let reserved = self.reserved[n].is_some();
                if let Some(q) = &mut self.quiet {
                    q.after_heartbeat(n, now, head, reserved, self.node_reservations);
                }
            }
            return;
        }
        let incremental = self.incremental_now();
        if !std::mem::replace(&mut self.was_incremental, incremental) {
            // The last passes visited every node: each may change again.
            self.to_visit.extend(0..view.node_count() as u32);
        }
        if !incremental {
            self.fresh.clear();
            self.fresh_next.clear();
            for n in 0..view.node_count() {
                if !self.visit(view, now, n, order, launch) {
                    return;
                }
            }
            return;
        }
        self.fresh.append(&mut self.fresh_next);
        self.fresh.sort_unstable();
        self.fresh.dedup();
        let mut from = 0;
        loop {
            let marked = self.to_visit.next_from(from as u32).map(|n| n as usize);
            let Some(n) = self.first_fresh_fit(view, from).into_iter().chain(marked).min() else { break };
            self.to_visit.remove(n as u32);
            from = n + 1;
            if !self.visit(view, now, n, order, launch) {
                // Not served to the end: still to visit.
                self.to_visit.insert(n as u32);
                return;
            }
        }
        // Every node has seen the jobs fresh when the pass began.
        self.fresh.clear();
    }

    /// The first node at `from` or later where a fresh job's need fits. A
    /// need no smaller than one looked for already fits no earlier.
    fn first_fresh_fit(&mut self, view: &View, from: usize) -> Option<usize> {
        let mut looked = std::mem::take(&mut self.looked_for);
        looked.clear();
        let mut first = None;
        let needs = self.fresh.iter().chain(&self.fresh_next).filter_map(|&j| self.keyed.get(j as usize)?.map(|k| k.1));
        for need in needs {
            let shape = Resources::new(need.cpu_milli, need.mem_mb);
            if looked.iter().any(|l| l.fits_in(&shape)) {
                continue;
            }
            looked.push(shape);
            if let Some(n) = view.first_fit(shape, from) {
                first = Some(first.map_or(n, |f: usize| f.min(n)));
            }
        }
        self.looked_for = looked;
        first
    }

    /// Serves node `n`; false when no job is left to serve (the walk ends).
    fn visit(&mut self, view: &mut View, now: Micros, n: usize, order: &mut Order, launch: &mut Launch) -> bool {
        loop {
            let free = view.node_free(n);
            if free.cpu_milli == 0 || free.mem_mb == 0 {
                return true;
            }
            if self.per_beat > 0 && self.served[n] >= self.per_beat {
                self.limited.push(n as u32);
                return true;
            }
            let reserved = self.reserved[n].filter(|&j| {
                view.jobs().get(j as usize).is_some_and(|j| !j.pending.is_empty())
                    && self.reserved_am[n] == self.am_first(j as usize)
            });
            self.set_reserved(n, reserved);
            let Some(job) = reserved.or_else(|| self.first_ready(order, now)) else { return false };
            if self.try_place(view, now, job as usize, n, order, launch) {
                self.set_reserved(n, None);
                if self.per_beat > 0 {
                    self.served[n] += 1;
                }
                continue;
            }
            if self.node_reservations {
                self.reserved_am[n] = self.am_first(job as usize);
                self.set_reserved(n, Some(job));
            }
            if !(self.backfill && self.backfill(view, now, job as usize, n, order, launch)) {
                return true;
            }
        }
    }

    /// The first job in `order` that may be served at `now`.
    fn first_ready(&self, order: &Order, now: Micros) -> Option<u32> {
        if self.am_start == 0 {
            return order.first_key().map(|k| k.2);
        }
        order.iter().map(|(k, _)| k.2).find(|&j| self.ready(j as usize, now))
    }

    /// Lines 4–10: places `job`'s next task on node `n` if it fits, regularly
    /// or elastically.
    fn try_place(
        &mut self,
        view: &mut View,
        now: Micros,
        job: usize,
        n: usize,
        order: &mut Order,
        launch: &mut Launch,
    ) -> bool {
        if self.timeline_stale && matches!(self.sizing, Sizing::Elastic(_)) {
            self.refresh_timeline(view, now, job, n);
        }
        match self.size_on(view, now, job, n, None) {
            Some((size, disk)) => {
                self.place(view, now, job, n, size, disk, order, launch);
                true
            }
            None => false,
        }
    }

    /// The size `job`'s next task gets on node `n` and its spills' disk
    /// bandwidth (milli-MB/s), if it may start there; with `by`, only if it
    /// is estimated to end by then.
    fn size_on(
        &mut self,
        view: &View,
        now: Micros,
        job: usize,
        n: usize,
        by: Option<Micros>,
    ) -> Option<(Resources, u64)> {
        let j = view.job(job);
        let ti = j.pending.front()?;
        let free = view.node_free(n);
        if self.am_first(job) {
            // DSS: no ApplicationMaster goes into a reserved node's gap.
            return (by.is_none() && self.am.fits_in(&free)).then_some((self.am, 0));
        }
        let (req, estimate) = (j.tasks.request(ti as usize), j.tasks.estimate(ti as usize));
        let ends_by = |runtime: Micros| by.is_none_or(|b| now + runtime <= b);
        if req.fits_in(&free) {
            return ends_by(estimate.unwrap_or(0)).then_some((req, 0));
        }
        let (Sizing::Elastic(spec), Some(e), Some(ideal)) = (self.sizing, self.elasticity(job), estimate) else {
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
        view: &mut View,
        now: Micros,
        job: usize,
        n: usize,
        size: Resources,
        disk: u64,
        order: &mut Order,
        launch: &mut Launch,
    ) {
        let ti = view.job(job).pending.front().expect("placed tasks wait");
        if self.am_first(job) {
            // The body runs no process for it: the core holds its node's room.
            let queue = view.job(job).queue;
            view.reserve(NodeId(n as u32), queue, size);
            if self.am_node.len() <= job {
                self.am_node.resize(job + 1, None);
            }
            self.am_node[job] = Some(NodeId(n as u32));
            if self.am_start > 0 {
                if self.am_ready.len() <= job {
                    self.am_ready.resize(job + 1, 0);
                }
                self.am_ready[job] = now + self.am_start;
                view.wake_at(now + self.am_start);
            }
            if let Some(q) = &mut self.quiet {
                q.placed(n, now + self.am_start, Some(now + self.am_start));
            }
        } else {
            launch(view, job, ti, NodeId(n as u32), size);
            let task = TaskRef { job: JobId(job as u32), task: ti };
            if let Some(on) = self.on_node.get_mut(n) {
                on.push(task);
            }
            if disk > 0 {
                self.spills.insert(task, disk);
            } else {
                self.spills.remove(&task);
            }
            self.disk_used[n] += disk;
            if let Some(q) = &mut self.quiet {
                // Launched two ApplicationMaster heartbeats after being placed (DSS).
                q.placed(n, now + 2 * self.am_start, None);
            }
        }
        view.job_mut(job).held_mb += size.mem_mb;
        let before = self.keyed[job].take().and_then(|(key, _)| order.remove(&key));
        view.sync_waiting(job);
        let after = (!view.job(job).pending.is_empty()).then(|| self.insert(view, order, job, before));
        self.revisit_reserved_for(job as u32, before, after);
    }

    /// §3.3: other jobs may use node `n`, reserved for `reserved`, with tasks
    /// estimated to end before the node would have room for the reserved
    /// job's task anyway.
    fn backfill(
        &mut self,
        view: &mut View,
        now: Micros,
        reserved: usize,
        n: usize,
        order: &mut Order,
        launch: &mut Launch,
    ) -> bool {
        let Some(ti) = view.job(reserved).pending.front() else { return false };
        let need = if self.am_first(reserved) { self.am } else { view.job(reserved).tasks.request(ti as usize) };
        let node_free = view.node_free(n);
        let mut free = node_free;
        let mut room_at = Micros::MAX;
        if self.sizing == Sizing::Requested {
            self.node_ends_of(view, n);
        }
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
        if self.per_beat > 0 {
            // On heartbeats, a gap's task must end a heartbeat before (DSS's -g).
            room_at = room_at.saturating_sub(self.beat);
        }
        let mut found = None;
        if self.timeline_stale && self.elastic_seen {
            // Each job passed may set the timeline generator off: every one is looked at.
            for (k, need) in order.iter() {
                let j = k.2 as usize;
                if j == reserved || !self.ready(j, now) {
                    continue;
                }
                // Checked here, not only inside: this loop may pass every waiting job.
                self.refresh_timeline(view, now, j, n);
                if !need.admits(node_free, now, room_at) {
                    continue;
                }
                if let Some(size) = self.size_on(view, now, j, n, Some(room_at)) {
                    found = Some((j, size));
                    break;
                }
            }
        } else {
            // Only jobs whose need fits may be placed: those, in order.
            let mut after = None;
            while let Some((k, need)) = order.next_fitting(node_free, after) {
                after = Some(k);
                let j = k.2 as usize;
                if j == reserved || !self.ready(j, now) || !need.admits(node_free, now, room_at) {
                    continue;
                }
                if let Some(size) = self.size_on(view, now, j, n, Some(room_at)) {
                    found = Some((j, size));
                    break;
                }
            }
        }
        let Some((j, (size, disk))) = found else { return false };
        self.place(view, now, j, n, size, disk, order, launch);
        if self.per_beat > 0 {
            self.served[n] += 1;
        }
        true
    }

    /// Runs the timeline generator if it is stale (a job arrived or a
    /// heartbeat passed) and `job`'s next task would need it on node `n`:
    /// only an elastic fit reads it, so it is generated when first needed.
    fn refresh_timeline(&mut self, view: &View, now: Micros, job: usize, n: usize) {
        if !self.timeline_stale || !matches!(self.sizing, Sizing::Elastic(_)) {
            return;
        }
        let j = view.job(job);
        let Some(ti) = j.pending.front() else { return };
        let req = j.tasks.request(ti as usize);
        let free = view.node_free(n);
        if self.elasticity(job).is_some() && !req.fits_in(&free) && req.cpu_milli <= free.cpu_milli {
            self.timeline_stale = false;
            self.generate_timeline(view, now);
        }
    }

    /// §3.2: runs the timeline generator on the jobs' estimates.
    fn generate_timeline(&mut self, view: &View, now: Micros) {
        let elastic = &self.elastic;
        let active = self.active.iter().map(|&j| j as usize);
        self.snapshot.take(view.jobs(), active, |j, t| {
            let ideal = t.estimate.unwrap_or(0);
            let runtime = match elastic.get(j.req.id.0 as usize).and_then(Option::as_deref) {
                Some(e) => e.profile.runtime(ideal, t.request.mem_mb, t.allocated.mem_mb),
                None => ideal,
            };
            t.started + runtime
        });
        self.node_ends.resize_with(view.node_count(), Vec::new);
        self.node_ends.iter_mut().for_each(Vec::clear);
        // By end: backfill reads the first end that makes room, whichever
        // order equal ends come in.
        for r in self.snapshot.running_by_end() {
            self.node_ends[r.node as usize].push((r.end, r.held));
        }
        let mut waiting = Vec::new();
        for &ji in &self.active {
            let ji = ji as usize;
            let Some(j) = view.jobs().get(ji) else { continue };
            if j.status == JobStatus::Active && !j.pending.is_empty() {
                let tasks = self.snapshot.waiting_runs(ji, j);
                waiting.push(WaitingJob { job: ji as u32, submit: j.req.submit, held_mb: j.held_mb, tasks });
            }
        }
        let free: Vec<Resources> = (0..view.node_count()).map(|n| view.node_free(n)).collect();
        let running = self.snapshot.by_end(now);
        // As DSS's PEEK look-ahead (a copy of the cluster with its node
        // reservations), under DSS's heartbeats the generator sees the nodes
        // reserved for a job's task (§3.3, "Node reservations").
        let reserved: Vec<Option<u32>> = if self.quiet.is_some() && self.node_reservations {
            (0..view.node_count())
                .map(|n| {
                    self.reserved[n].filter(|&j| {
                        !self.reserved_am[n] && view.jobs().get(j as usize).is_some_and(|j| !j.pending.is_empty())
                    })
                })
                .collect()
        } else {
            Vec::new()
        };
        self.timeline = Timeline::generate(now, &free, &running, &waiting, view.jobs().len(), &reserved);
    }

    /// Node `n`'s entry of `node_ends` from the tasks placed there, each
    /// ending at its start plus its estimate (requested sizes), by end.
    fn node_ends_of(&mut self, view: &View, n: usize) {
        self.node_ends.resize_with(view.node_count(), Vec::new);
        let ends = &mut self.node_ends[n];
        ends.clear();
        // Launched two AM heartbeats after being placed (DSS).
        let launch = 2 * self.am_start;
        for &t in &self.on_node[n] {
            let t = view.task(t);
            ends.push((t.started + launch + t.estimate.unwrap_or(0), t.allocated));
        }
        ends.sort_by_key(|e| e.0);
    }

    /// A task stopped holding resources: its spills' disk bandwidth is free.
    pub fn unsize(&mut self, view: &mut View, task: TaskRef) {
        let node = view.task(task).node.0 as usize;
        if let Some(q) = &mut self.quiet {
            q.wake(node);
        }
        if let Some(i) = self.on_node.get(node).and_then(|on| on.iter().position(|&t| t == task)) {
            self.on_node[node].swap_remove(i);
        }
        if let Some(used) = self.disk_used.get_mut(node) {
            *used -= self.spills.remove(&task).unwrap_or(0);
        }
    }

    /// Every pass visits every node.
    #[cfg(test)]
    pub fn visit_every_node(&mut self) {
        self.incremental = false;
        self.backfill_incremental = false;
    }
}

impl PlacementPass for NodePass {
    fn clone_box(&self) -> Box<dyn PlacementPass> {
        Box::new(self.clone())
    }

    fn allocate(&mut self, view: &mut View, now: Micros, launch: &mut Launch) {
        NodePass::allocate(self, view, now, launch)
    }

    /// The timeline is to be generated again, and under DSS's heartbeats
    /// every node wakes; under elastic sizing, the job's elasticity is kept.
    fn job_submitted(&mut self, req: &JobRequest) {
        if let (Sizing::Elastic(_), Some(e)) = (self.sizing, req.elastic) {
            let job = req.id.0 as usize;
            if self.elastic.len() <= job {
                self.elastic.resize(job + 1, None);
            }
            self.elastic[job] = Some(Box::new(e));
        }
        self.stale();
        self.job_arrived();
    }

    fn job_ended(&mut self, view: &mut View, job: usize) {
        NodePass::job_ended(self, view, job)
    }

    fn task_released(&mut self, view: &mut View, task: TaskRef) {
        self.unsize(view, task)
    }

    /// The heartbeat: the timeline generator runs again (YARN-ME §3.2).
    fn monitored(&mut self, view: &mut View) {
        if matches!(self.sizing, Sizing::Elastic(_)) {
            self.stale();
            view.set_dirty();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::NodePass;
    use crate::builtin::BUILTIN;
    use crate::preset;
    use pliant_core::model::{JobClass, JobId, JobRequest, PhaseRequest, TaskRef, TaskRequest};
    use pliant_core::policy::steps::{StepBuilder, Steps};
    use pliant_core::policy::{Params, Plugins, Policy};
    use pliant_core::{Action, Micros, Observation, Resources, Scheduler, SECOND};
    use proptest::prelude::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    /// The built-in steps, the node pass visiting every node at every pass.
    struct EveryNode;

    static EVERY_NODE: EveryNode = EveryNode;

    impl StepBuilder for EveryNode {
        fn name(&self) -> &'static str {
            "every-node"
        }

        fn steps(&self, policy: &Policy, nodes: usize) -> Steps {
            let mut pass = NodePass::new(policy, nodes);
            pass.visit_every_node();
            Steps { placement_pass: Some(Box::new(pass)), ..BUILTIN.steps(policy, nodes) }
        }
    }

    /// A job: submission (s), task count, task CPU cores, memory GB, run time (s).
    type Spec = (u64, u32, u64, u64, u64);

    /// Replays `jobs` on three 4-core 8 GB nodes, tasks ending after their
    /// run time, and returns every launch with its time.
    fn launches(name: &str, jobs: &[Spec], every_node: bool) -> Vec<(Micros, TaskRef, u32, Resources)> {
        let mut policy = preset(name, &Params::default()).expect("a preset");
        if every_node {
            policy.plugins = Plugins(&EVERY_NODE);
        }
        let mut core = Scheduler::new(&[Resources::cores_gb(4, 8); 3], policy).expect("nodes");
        let mut jobs = jobs.to_vec();
        jobs.sort_by_key(|j| j.0);
        let mut ends: BinaryHeap<Reverse<(Micros, TaskRef)>> = BinaryHeap::new();
        let (mut next, mut out, mut log) = (0, Vec::new(), Vec::new());
        while next < jobs.len() || !ends.is_empty() {
            let arrival = jobs.get(next).map(|j| j.0 * SECOND);
            let now = arrival.into_iter().chain(ends.peek().map(|e| e.0 .0)).min().expect("something is left");
            while jobs.get(next).is_some_and(|j| j.0 * SECOND == now) {
                let (_, n, cpu, gb, secs) = jobs[next];
                let task = TaskRequest { resources: Resources::cores_gb(cpu, gb), estimate: Some(secs * SECOND) };
                let phases =
                    vec![PhaseRequest { deps: vec![], coupled: false, local: false, tasks: vec![task; n as usize] }];
                let id = JobId(next as u32);
                let req = JobRequest { id, submit: now, class: JobClass::Short, priority: 0, phases, elastic: None };
                core.observe(now, Observation::JobSubmitted(req)).expect("in order");
                next += 1;
            }
            while let Some(&Reverse((_, task))) = ends.peek().filter(|e| e.0 .0 == now) {
                ends.pop();
                core.observe(now, Observation::TaskFinished(task)).expect("running");
            }
            core.schedule(now, &mut out);
            for a in out.drain(..) {
                let Action::Launch { task, node, resources } = a else { panic!("only launches: {a:?}") };
                ends.push(Reverse((now + jobs[task.job.0 as usize].4 * SECOND, task)));
                log.push((now, task, node.0, resources));
            }
        }
        log
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Visiting only the nodes where something may change places every
        /// task where and when visiting every node does.
        #[test]
        fn passes_over_some_nodes_place_as_passes_over_all(
            jobs in prop::collection::vec((0u64..40, 1u32..6, 1u64..5, 1u64..9, 1u64..30), 1..25),
        ) {
            for name in ["yarn", "elastic"] {
                let all = launches(name, &jobs, true);
                prop_assert_eq!(launches(name, &jobs, false), all);
            }
        }
    }
}
