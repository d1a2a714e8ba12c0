//! Container-based preemption (BIG-C §3–§4): immediate preemption suspends a
//! victim to its footprint, graceful preemption shrinks it step by step; the
//! memory it gives back is booked as the body reports it reclaimed, and it
//! resumes on its own node after delayed resumption D — wholly, or under
//! graceful preemption gradually ([`resumption_grant`]).

use pliant_core::action::Action;
use pliant_core::books::View;
use pliant_core::model::{TaskRef, TaskState};
use pliant_core::policy::steps::{Mechanism, Preempted, Take};
use pliant_core::CoreError;
use pliant_core::{Micros, Resources};
use std::collections::BTreeMap;

/// Per task suspended or shrunk to its footprint whose memory above it is
/// still being reclaimed, the footprint's memory still booked on its node,
/// MB (BIG-C's own per-task data, kept by the mechanism and not in the
/// shared task record).
pub(crate) type Footprints = BTreeMap<TaskRef, u64>;

/// Immediate (§3.2) or graceful (§3.3) preemption with delayed resumption (§4.3).
#[derive(Debug, Clone)]
pub(crate) struct ContainerPreemption {
    /// Graceful: victims are shrunk to the planner's limits; immediate: suspended.
    pub graceful: bool,
    /// What a suspended container keeps.
    pub footprint: Resources,
    /// The graceful-preemption step r⃗_GP.
    pub gp_step: Resources,
    /// Offers of its node a preempted container waits for before resuming (D).
    pub delayed_resumption: u32,
    /// A gracefully preempted container may take back part of what it gave up.
    pub gradual_resumption: bool,
    /// The offers its preempted tasks refused, and the heartbeat's buffers.
    pub offers: Offers,
    /// Footprints still booked while memory is reclaimed.
    pub footprints: Footprints,
}

/// What [`offer_resumptions`] keeps between heartbeats: per preempted task
/// the offers of its node it refused (delayed resumption D), and buffers so
/// that a heartbeat allocates nothing: the preempted tasks and their nodes,
/// and per node what they hold and what is held back for them.
#[derive(Debug, Clone, Default)]
pub(crate) struct Offers {
    /// Per task preempted since it last resumed wholly, the offers it
    /// refused (none: no entry).
    refused: BTreeMap<TaskRef, u32>,
    candidates: Vec<TaskRef>,
    /// Each candidate's node, in the same order.
    nodes: Vec<u32>,
    preempted_hold: NodeSums,
    held_back: NodeSums,
}

/// Resources summed per node (dense node ids), zero between heartbeats: a
/// heartbeat zeroes the nodes it added to, not every node.
#[derive(Debug, Clone, Default)]
struct NodeSums {
    sums: Vec<Resources>,
}

impl Offers {
    /// `task` was just preempted: it has refused no offer yet.
    pub fn reset(&mut self, task: TaskRef) {
        self.refused.remove(&task);
    }
}

impl NodeSums {
    /// Makes room for `nodes` nodes' sums (zero).
    fn ready(&mut self, nodes: usize) {
        if self.sums.len() < nodes {
            self.sums.resize(nodes, Resources::ZERO);
        }
    }

    /// Node `node`'s sum, to read or add to.
    fn at(&mut self, node: u32) -> &mut Resources {
        &mut self.sums[node as usize]
    }

    /// The sums of `nodes` back to zero (every other one is).
    fn clear(&mut self, nodes: &[u32]) {
        for &n in nodes {
            self.sums[n as usize] = Resources::ZERO;
        }
    }
}

impl Mechanism for ContainerPreemption {
    fn shrinks(&self) -> bool {
        self.graceful
    }

    fn clone_box(&self) -> Box<dyn Mechanism> {
        Box::new(self.clone())
    }

    fn preempt(&mut self, view: &mut View, now: Micros, take: Take, out: &mut Vec<Action>) -> Preempted {
        match take.shrink_to {
            Some(to) => self.shrink(view, take.task, to, out),
            None => self.suspend(view, now, take.task, out),
        }
        Preempted::Kept
    }

    fn offer(&mut self, view: &mut View, out: &mut Vec<Action>) {
        let gradual = (self.gradual_resumption && self.graceful).then_some(self.gp_step);
        offer_resumptions(view, self.delayed_resumption, gradual, &mut self.offers, out);
    }

    fn memory_reclaimed(&mut self, view: &mut View, task: TaskRef, mem_mb: u64) -> Result<(), CoreError> {
        memory_reclaimed(view, task, mem_mb, Some(&mut self.footprints))
    }

    /// A suspended task runs, a shrunk one stays shrunk.
    fn resumed(&mut self, view: &mut View, now: Micros, task: TaskRef) -> Result<(), CoreError> {
        task_resumed(view, now, task)
    }

    /// A shrunk task frozen while swapping frees its CPU.
    fn swapping(&mut self, view: &mut View, now: Micros, task: TaskRef) -> Result<(), CoreError> {
        task_swapping(view, now, task)
    }

    fn forget(&mut self, _view: &mut View, task: TaskRef) {
        self.footprints.remove(&task);
        self.offers.reset(task);
    }

    /// Only a task among the preempted can have a footprint or refused offers.
    fn finished(&mut self, view: &View, task: TaskRef) {
        if view.is_preempted(task) {
            self.footprints.remove(&task);
            self.offers.reset(task);
        }
    }
}

/// At each heartbeat, offers every fully reclaimed preempted task its
/// node's free resources; it resumes on the offer after D refused ones
/// (delayed resumption, §4.3 "Practical considerations"): wholly, or with
/// `gradual` (graceful preemption's r⃗_GP) with part of what it misses
/// ([`resumption_grant`]), staying shrunk until the rest comes back at a
/// later offer. Tasks are served in service order, and what an older task
/// waits for on its node is held for it: a younger task never resumes into
/// room an older one needs — unless the older one could not fit even once
/// everything but the other preempted tasks there has left (then holding
/// room for it would only deadlock them).
pub(crate) fn offer_resumptions(
    view: &mut View,
    delayed: u32,
    gradual: Option<Resources>,
    buffers: &mut Offers,
    out: &mut Vec<Action>,
) {
    let Offers { refused: refusals, candidates, nodes, preempted_hold, held_back } = buffers;
    view.preempted_into(candidates);
    nodes.clear();
    preempted_hold.ready(view.node_count());
    held_back.ready(view.node_count());
    for &task in candidates.iter() {
        let t = view.task(task);
        nodes.push(t.node.0);
        *preempted_hold.at(t.node.0) += t.allocated;
    }
    for &task in candidates.iter() {
        let t = view.task(task);
        if !matches!(t.state, TaskState::Suspended | TaskState::Shrunk) {
            continue;
        }
        let missing = t.request - t.allocated;
        let node = t.node;
        let others = preempted_hold.at(node.0).saturating_sub(&t.allocated);
        let claimed = held_back.at(node.0);
        let attainable = view.node_capacity(node.0 as usize).saturating_sub(&others).saturating_sub(claimed);
        if !missing.fits_in(&attainable) {
            continue;
        }
        if t.reclaiming_mb > 0 {
            // Still giving memory back: it will want its room; hold it.
            *claimed += missing;
            continue;
        }
        let room = view.node_free(node.0 as usize).saturating_sub(claimed);
        let grant = match resumption_grant(missing, room, gradual) {
            Some(grant) if delayed == 0 || refusals.get(&task).is_some_and(|&n| n >= delayed) => grant,
            refused => {
                if refused.is_some() {
                    *refusals.entry(task).or_insert(0) += 1;
                }
                *claimed += missing;
                continue;
            }
        };
        let t = view.task_mut(task);
        t.state.transition(TaskState::Restoring).expect("preempted tasks can restore");
        t.allocated += grant;
        let resources = t.allocated;
        if resources == t.request {
            view.remove_preempted(task);
            refusals.remove(&task);
        } else {
            *claimed += missing - grant;
        }
        let queue = view.queue_of(task);
        view.sync_promise(task);
        view.reserve(node, queue, grant);
        out.push(Action::Resume { task, resources });
    }
    preempted_hold.clear(nodes);
    held_back.clear(nodes);
}

impl ContainerPreemption {
    /// Immediate preemption (§3.2): CPU and memory down to the footprint.
    /// CPU frees at once; memory frees as the body reports it reclaimed.
    /// The footprint itself is not booked against the node (it is the
    /// overcommitted minimum that keeps the container alive): once the
    /// memory above it is reclaimed, the container's whole allocation counts
    /// as free, so that footprints never fragment a node against the
    /// container's own resumption.
    fn suspend(&mut self, view: &mut View, now: Micros, task: TaskRef, out: &mut Vec<Action>) {
        let footprint = self.footprint;
        let t = view.task_mut(task);
        t.state.transition(TaskState::Suspended).expect("victims are running");
        t.pause(now);
        set_footprint(&mut self.footprints, task, footprint.mem_mb.min(t.allocated.mem_mb));
        self.lower_limits(view, task, Resources::new(0, footprint.mem_mb));
        self.unbook_reclaimed_footprint(view, task);
        out.push(Action::Immediate { task, footprint });
    }

    /// Graceful preemption (§3.3, Alg. 2 line 7): lower the task's limits to
    /// `to`. A task shrunk down to the footprint is, like a suspended one,
    /// not booked for it.
    fn shrink(&mut self, view: &mut View, task: TaskRef, to: Resources, out: &mut Vec<Action>) {
        let t = view.task_mut(task);
        t.state.transition(TaskState::Shrunk).expect("graceful victims run");
        if to.mem_mb <= self.footprint.mem_mb {
            set_footprint(&mut self.footprints, task, to.mem_mb.min(t.allocated.mem_mb));
        }
        self.lower_limits(view, task, to);
        self.unbook_reclaimed_footprint(view, task);
        out.push(Action::Graceful { task, to });
    }

    /// Once nothing is left to reclaim, the footprint stops counting against the node.
    fn unbook_reclaimed_footprint(&mut self, view: &mut View, task: TaskRef) {
        if view.task(task).reclaiming_mb > 0 {
            return;
        }
        if let Some(mem) = self.footprints.remove(&task) {
            let t = view.task_mut(task);
            t.allocated.mem_mb -= mem;
            let node = t.node;
            let queue = view.queue_of(task);
            view.release(node, queue, Resources::new(0, mem));
            view.sync_promise(task);
        }
    }

    /// Frees CPU above `to` now and books the memory above it as being reclaimed.
    fn lower_limits(&mut self, view: &mut View, task: TaskRef, to: Resources) {
        let queue = view.queue_of(task);
        let t = view.task_mut(task);
        let cpu = t.allocated.cpu_milli.saturating_sub(to.cpu_milli);
        t.allocated.cpu_milli -= cpu;
        let mem_target = to.mem_mb.min(t.allocated.mem_mb);
        let newly = (t.allocated.mem_mb - mem_target).saturating_sub(t.reclaiming_mb);
        t.reclaiming_mb += newly;
        let node = t.node;
        self.offers.reset(task);
        view.add_reclaiming(newly as i64);
        view.add_preempted(task);
        view.release(node, queue, Resources::new(cpu, 0));
        view.sync_promise(task);
    }
}

/// Books `mb` of footprint for `task` (none: no entry).
fn set_footprint(footprints: &mut Footprints, task: TaskRef, mb: u64) {
    if mb > 0 {
        footprints.insert(task, mb);
    } else {
        footprints.remove(&task);
    }
}

/// The `Mechanism` methods for the body's reports on a task, booked as a
/// suspended or shrunk container's (`task_resumed`, `memory_reclaimed`
/// with no footprints of its own, `task_swapping`): for a mechanism that
/// keeps nothing of its own on them.
macro_rules! container_reports {
    () => {
        fn resumed(
            &mut self,
            view: &mut pliant_core::books::View,
            now: pliant_core::Micros,
            task: pliant_core::model::TaskRef,
        ) -> Result<(), pliant_core::CoreError> {
            $crate::bigc::task_resumed(view, now, task)
        }

        fn memory_reclaimed(
            &mut self,
            view: &mut pliant_core::books::View,
            task: pliant_core::model::TaskRef,
            mem_mb: u64,
        ) -> Result<(), pliant_core::CoreError> {
            $crate::bigc::memory_reclaimed(view, task, mem_mb, None)
        }

        fn swapping(
            &mut self,
            view: &mut pliant_core::books::View,
            now: pliant_core::Micros,
            task: pliant_core::model::TaskRef,
        ) -> Result<(), pliant_core::CoreError> {
            $crate::bigc::task_swapping(view, now, task)
        }
    };
}
pub(crate) use container_reports;

/// The node froze a shrunk task that started swapping (Alg. 2 line 8): it
/// leaves the reclaim set; its CPU counts as free (the 1 % it keeps is the
/// footprint, not booked).
pub(crate) fn task_swapping(view: &mut View, now: Micros, task: TaskRef) -> Result<(), CoreError> {
    let t = view.checked_task(task)?;
    if t.state != TaskState::Shrunk {
        return Err(CoreError::BadTask { task, what: format!("swapping while {:?}", t.state) });
    }
    t.state.transition(TaskState::Suspended).expect("shrunk tasks can be frozen");
    t.pause(now);
    let cpu = std::mem::take(&mut t.allocated.cpu_milli);
    let node = t.node;
    let queue = view.queue_of(task);
    view.release(node, queue, Resources::new(cpu, 0));
    view.sync_promise(task);
    Ok(())
}

/// Memory given back by a suspended or shrunk task; a mechanism that books
/// footprints passes them (`footprints`).
pub(crate) fn memory_reclaimed(
    view: &mut View,
    task: TaskRef,
    mem_mb: u64,
    footprints: Option<&mut Footprints>,
) -> Result<(), CoreError> {
    let t = view.checked_task(task)?;
    if !matches!(t.state, TaskState::Suspended | TaskState::Shrunk) || mem_mb > t.reclaiming_mb {
        let what = format!("{mem_mb} MB reclaimed while {:?} with {} MB due", t.state, t.reclaiming_mb);
        return Err(CoreError::BadTask { task, what });
    }
    t.reclaiming_mb -= mem_mb;
    // Fully reclaimed: the footprint stops counting too.
    let footprint = match footprints {
        Some(footprints) if t.reclaiming_mb == 0 => footprints.remove(&task).unwrap_or(0),
        _ => 0,
    };
    let freed = mem_mb + footprint;
    t.allocated.mem_mb -= freed;
    let node = t.node;
    let queue = view.queue_of(task);
    view.add_reclaiming(-(mem_mb as i64));
    view.release(node, queue, Resources::new(0, freed));
    view.sync_promise(task);
    Ok(())
}

/// A resumed task runs again: shrunk, if it got only part of what it
/// gave up (it is still among the preempted).
pub(crate) fn task_resumed(view: &mut View, now: Micros, task: TaskRef) -> Result<(), CoreError> {
    view.checked_task(task)?;
    let to = if view.is_preempted(task) { TaskState::Shrunk } else { TaskState::Running };
    let t = view.task_mut(task);
    t.state.transition(to).map_err(|e| CoreError::BadTask { task, what: e.to_string() })?;
    t.running_since.get_or_insert(now);
    Ok(())
}

// What a preempted container gets back when its node has room (BIG-C §4.3,
// "Delayed resumption"): a preempted task's resource request "can only be
// satisfied on the machine where the task was preempted".
//
// Immediate preemption "reclaims and restores all resources of a preempted
// task in one pass" (§3.2): it resumes only when everything it gave up fits.
// For graceful preemption the paper says how resources are taken (r⃗_GP per
// round, §3.3) but not how they come back. Gradual resumption is our reading,
// the mirror of the take: a container takes back what its node has, as long
// as that is all the memory it gave up (below its working set it would only
// swap again) and at least one step's CPU (r⃗_GP's); the rest comes back at
// later offers. GP's own premise (§3.3) is that part of a
// container's resources is enough to make progress: a frozen Spark executor
// then finishes its in-flight tasks instead of holding its stage for as long
// as its whole allocation does not fit on its node.
/// What to give back to a preempted container missing `missing` when its
/// node has `room` free for it: everything if it fits; with `gradual` (the
/// step r⃗_GP), part of it as above; otherwise nothing.
pub(crate) fn resumption_grant(missing: Resources, room: Resources, gradual: Option<Resources>) -> Option<Resources> {
    if missing.fits_in(&room) {
        return Some(missing);
    }
    // Less CPU than it misses (else it would fit), but a step's worth.
    let step = gradual?;
    (missing.mem_mb <= room.mem_mb && room.cpu_milli >= step.cpu_milli)
        .then(|| Resources::new(room.cpu_milli.min(missing.cpu_milli), missing.mem_mb))
}

#[cfg(test)]
mod tests {
    use super::*;

    const STEP: Resources = Resources::cores_gb(2, 4);

    // A frozen ⟨8 CPU, 16 GB⟩ executor shrunk once by r_GP = ⟨2, 4⟩ misses its
    // 8 cores (freezing released them) and 4 GB.
    const MISSING: Resources = Resources::cores_gb(8, 4);

    #[test]
    fn everything_comes_back_when_it_fits() {
        let room = Resources::cores_gb(10, 20);
        assert_eq!(resumption_grant(MISSING, room, None), Some(MISSING));
        assert_eq!(resumption_grant(MISSING, room, Some(STEP)), Some(MISSING));
    }

    // Room ⟨3 CPU, 20 GB⟩: whole resumption waits; gradual gives its 4 GB and
    // the 3 cores there are, and 5 cores are still owed.
    #[test]
    fn gradual_takes_what_the_node_has() {
        let room = Resources::cores_gb(3, 20);
        assert_eq!(resumption_grant(MISSING, room, None), None);
        assert_eq!(resumption_grant(MISSING, room, Some(STEP)), Some(Resources::cores_gb(3, 4)));
    }

    // Less than one step's CPU, or not all the memory: nothing yet.
    #[test]
    fn gradual_needs_a_step_of_cpu_and_all_the_memory() {
        assert_eq!(resumption_grant(MISSING, Resources::new(1_999, 20_480), Some(STEP)), None);
        assert_eq!(resumption_grant(MISSING, Resources::new(8_000, 4_095), Some(STEP)), None);
        // Exactly a step's CPU is enough.
        let room = Resources::new(2_000, 4_096);
        assert_eq!(resumption_grant(MISSING, room, Some(STEP)), Some(Resources::cores_gb(2, 4)));
    }
}
