//! Checkpoint-based preemption (checkpoint paper §3.2, §4.1, §5.2.2):
//! dumping victims (or killing them when a checkpoint does not pay,
//! Algorithm 1), booking each node's queue of dumps and restores, and
//! restoring a checkpointed task locally or remotely (Algorithm 2), with the
//! paper's cost estimates from what a resource manager knows — the task's
//! memory size, the tier's bandwidth, the node's dump queue and the task's
//! progress.

use crate::bigc::{memory_reclaimed, task_resumed, task_swapping};
use crate::plain::kill;
use pliant_core::action::Action;
use pliant_core::books::{TaskRuntime, View};
use pliant_core::model::{JobId, NodeId, StorageModel, TaskRef, TaskState, Tier};
use pliant_core::policy::steps::{Image, Mechanism, Preempted, Take};
use pliant_core::policy::CheckpointSpec;
use pliant_core::CoreError;
use pliant_core::{Micros, Resources};
use std::collections::BTreeMap;

/// A dump or restore of a task in its node's queue.
#[derive(Debug, Clone, Copy)]
enum IoOp {
    /// The task is being dumped; it frees these resources when the dump ends.
    Dump(Resources),
    /// The task is being restored.
    Restore,
}

/// A node's queue of dumps and restores (one at a time per node, §5.2.2), as
/// the core books it.
#[derive(Debug, Clone, Copy, Default)]
struct IoQueue {
    /// Operations booked and not yet reported done.
    ops: u32,
    /// When, by the estimates, the last booked operation ends.
    busy_until: Micros,
}

/// Checkpointing to one tier, basic or adaptive, with its per-node queues.
#[derive(Debug, Clone)]
pub(crate) struct Checkpoint {
    spec: CheckpointSpec,
    /// Launches of a coupled task after which a kill fails its job.
    max_attempts: u32,
    /// Per node, its queue of checkpoint dumps and restores.
    io: Vec<IoQueue>,
    /// Per node, what tasks being dumped there will free when their dumps end.
    freeing: Vec<Resources>,
    /// Per task that has one, the image it restarts from (its last dump;
    /// kept after a restore, so that the next dump writes only what the
    /// task dirtied, §4.1 item 3).
    images: BTreeMap<TaskRef, Image>,
    /// Per task, its dump or restore booked in its node's queue.
    io_ops: BTreeMap<TaskRef, IoOp>,
}

impl Checkpoint {
    /// Checkpointing by `spec` on a cluster of `nodes` nodes.
    pub fn new(spec: CheckpointSpec, max_attempts: u32, nodes: usize) -> Self {
        Checkpoint {
            spec,
            max_attempts,
            io: vec![IoQueue::default(); nodes],
            freeing: vec![Resources::ZERO; nodes],
            images: BTreeMap::new(),
            io_ops: BTreeMap::new(),
        }
    }

    /// Estimated wait behind the dumps and restores booked on `node`.
    fn io_queue_time(&self, node: NodeId, now: Micros) -> Micros {
        self.io[node.0 as usize].busy_until.saturating_sub(now)
    }

    /// Books an operation of estimated `duration` at the end of `node`'s queue.
    fn book_io(&mut self, node: NodeId, now: Micros, duration: Micros) {
        let q = &mut self.io[node.0 as usize];
        q.busy_until = q.busy_until.max(now) + duration;
        q.ops += 1;
    }

    /// An operation of `node`'s queue is over; an empty queue is free from `now`.
    fn unbook_io(&mut self, node: NodeId, now: Micros) {
        let q = &mut self.io[node.0 as usize];
        q.ops -= 1;
        if q.ops == 0 {
            q.busy_until = q.busy_until.min(now);
        }
    }

    /// The estimated time to dump `task` (`t`) now: its whole memory the
    /// first time, the dirtied part once it has an image.
    fn dump_estimate(&self, task: TaskRef, t: &TaskRuntime) -> Micros {
        let s = &self.spec.storage;
        s.dump_time(self.spec.tier, s.dump_mb(t.request.mem_mb, self.images.contains_key(&task)))
    }

    /// Algorithm 2: where a checkpointed task restores, given the first node
    /// with room. Its own node if it fits there — for adaptive policies only
    /// if that is estimated no dearer than a remote restore on `first_fit`.
    fn restore_node(&self, view: &View, now: Micros, t: &TaskRuntime, image: Image, first_fit: NodeId) -> NodeId {
        let local = image.node;
        if first_fit == local || !t.request.fits_in(&view.node_free(local.0 as usize)) {
            return first_fit;
        }
        if !self.spec.adaptive {
            return local;
        }
        let (s, tier, mem) = (&self.spec.storage, self.spec.tier, t.request.mem_mb);
        let local_cost = local_resume_overhead(s, tier, mem, self.io_queue_time(local, now));
        let remote_cost = remote_resume_overhead(s, tier, mem, self.io_queue_time(first_fit, now));
        if local_cost <= remote_cost {
            local
        } else {
            first_fit
        }
    }
}

impl Mechanism for Checkpoint {
    fn clone_box(&self) -> Box<dyn Mechanism> {
        Box::new(self.clone())
    }

    /// §5.2.2: adaptive checkpointing takes the victims cheapest to dump
    /// first (memory over the tier's bandwidth, plus the node's queue).
    fn victim_cost(&self, view: &View, now: Micros, task: TaskRef) -> Option<Micros> {
        let t = view.task(task);
        self.spec.adaptive.then(|| self.dump_estimate(task, t) + self.io_queue_time(t.node, now))
    }

    fn freeing(&self, node: usize) -> Resources {
        self.freeing[node]
    }

    fn io_queue(&self, node: usize, now: Micros) -> Micros {
        self.io_queue_time(NodeId(node as u32), now)
    }

    /// Adaptive (Alg. 1): checkpoint a victim only if its progress exceeds
    /// dump + restore + queue, else kill it. Basic: always checkpoint.
    fn preempt(&mut self, view: &mut View, now: Micros, take: Take, out: &mut Vec<Action>) -> Preempted {
        let task = take.task;
        let t = view.task(task);
        if self.spec.adaptive {
            let queue = self.io_queue_time(t.node, now);
            let s = &self.spec.storage;
            let has_image = self.images.contains_key(&task);
            let overhead = checkpoint_overhead(s, self.spec.tier, t.request.mem_mb, has_image, queue);
            if !worth_checkpointing(t.ran(now), overhead) {
                self.images.remove(&task);
                return Preempted::Killed { exhausted: kill(view, task, self.max_attempts, out) };
            }
        }
        let dump = self.dump_estimate(task, t);
        let t = view.task_mut(task);
        t.state.transition(TaskState::Suspended).expect("victims are running");
        t.pause(now);
        self.images.insert(task, Image { node: t.node, banked: t.ran(now) });
        self.io_ops.insert(task, IoOp::Dump(t.allocated));
        let (node, frees) = (t.node, t.allocated);
        self.freeing[node.0 as usize] += frees;
        self.book_io(node, now, dump);
        out.push(Action::Checkpoint { task, tier: self.spec.tier });
        Preempted::Kept
    }

    fn restore(
        &mut self,
        view: &mut View,
        now: Micros,
        job: usize,
        task: u32,
        image: Image,
        first_fit: NodeId,
        out: &mut Vec<Action>,
    ) {
        let node = self.restore_node(view, now, &view.job(job).tasks[task as usize], image, first_fit);
        let j = view.job_mut(job);
        j.pending.pop_front();
        j.running += 1;
        let queue = j.queue;
        let t = &mut j.tasks[task as usize];
        t.state.transition(TaskState::Restoring).expect("pending tasks can restore");
        t.node = node;
        t.allocated = t.request;
        t.ran_before = image.banked;
        t.running_since = None;
        let (res, mb) = (t.request, t.request.mem_mb as f64);
        let (s, tier) = (&self.spec.storage, self.spec.tier);
        let duration =
            if node == image.node { s.local_restore_time(tier, mb) } else { s.remote_restore_time(tier, mb) };
        self.book_io(node, now, duration);
        view.reserve(node, queue, res);
        let task = TaskRef { job: JobId(job as u32), task };
        self.io_ops.insert(task, IoOp::Restore);
        out.push(Action::Restore { task, node, resources: res, image: image.node, tier });
    }

    /// The body wrote a task's dump: its resources are free and it waits to be restored.
    fn checkpointed(&mut self, view: &mut View, now: Micros, task: TaskRef) -> Result<(), CoreError> {
        let t = view.checked_task(task)?;
        let (TaskState::Suspended, Some(&IoOp::Dump(frees))) = (t.state, self.io_ops.get(&task)) else {
            return Err(CoreError::BadTask { task, what: format!("checkpointed while {:?} and not dumping", t.state) });
        };
        self.io_ops.remove(&task);
        let node = t.node;
        view.requeue(task);
        self.freeing[node.0 as usize] -= frees;
        self.unbook_io(node, now);
        Ok(())
    }

    /// A restored task runs again: its restore leaves its node's queue.
    fn resumed(&mut self, view: &mut View, now: Micros, task: TaskRef) -> Result<(), CoreError> {
        task_resumed(view, now, task)?;
        if let Some(IoOp::Restore) = self.io_ops.remove(&task) {
            let node = view.task(task).node;
            self.unbook_io(node, now);
        }
        Ok(())
    }

    /// Checkpointed tasks are not suspended: only the books' checks answer.
    fn memory_reclaimed(&mut self, view: &mut View, task: TaskRef, mem_mb: u64) -> Result<(), CoreError> {
        memory_reclaimed(view, task, mem_mb, None)
    }

    fn swapping(&mut self, view: &mut View, now: Micros, task: TaskRef) -> Result<(), CoreError> {
        task_swapping(view, now, task)
    }

    fn image(&self, task: TaskRef) -> Option<Image> {
        self.images.get(&task).copied()
    }

    /// Drops a failed or lost task's booked dump or restore; a task lost
    /// while dumping has no image: it starts afresh.
    fn forget(&mut self, view: &mut View, task: TaskRef) {
        let node = view.task(task).node;
        match self.io_ops.remove(&task) {
            Some(IoOp::Dump(frees)) => {
                self.freeing[node.0 as usize] -= frees;
                self.io[node.0 as usize].ops -= 1;
                self.images.remove(&task);
            }
            Some(IoOp::Restore) => self.io[node.0 as usize].ops -= 1,
            None => {}
        }
    }

    fn finished(&mut self, _view: &View, task: TaskRef) {
        self.images.remove(&task);
    }
}

/// Algorithm 1's `overhead_chkpt`: writing the dump (the dirtied part only
/// if an image exists, §4.1 item 3), reading it back, and waiting behind the
/// `queue` of dumps and restores already booked on the node.
pub(crate) fn checkpoint_overhead(s: &StorageModel, tier: Tier, mem_mb: u64, has_image: bool, queue: Micros) -> Micros {
    s.dump_time(tier, s.dump_mb(mem_mb, has_image)) + s.local_restore_time(tier, mem_mb as f64) + queue
}

/// Algorithm 1, line 5: checkpoint only a task whose progress exceeds the
/// overhead; kill the others.
pub(crate) fn worth_checkpointing(progress: Micros, overhead: Micros) -> bool {
    progress > overhead
}

/// Algorithm 2's `overhead_local`: read the image plus the local queue.
pub(crate) fn local_resume_overhead(s: &StorageModel, tier: Tier, mem_mb: u64, queue: Micros) -> Micros {
    s.local_restore_time(tier, mem_mb as f64) + queue
}

/// Algorithm 2's `overhead_remote`: network transfer and read through the
/// distributed file system, plus the remote node's queue.
pub(crate) fn remote_resume_overhead(s: &StorageModel, tier: Tier, mem_mb: u64, queue: Micros) -> Micros {
    s.remote_restore_time(tier, mem_mb as f64) + queue
}

#[cfg(test)]
mod tests {
    use super::*;
    use pliant_core::SECOND;

    // A 5 GB task on HDD at Table 3's rate (5 GB in 169.18 s): first checkpoint
    // 169.18 + 169.18 = 338.36 s; with an image, 16.918 + 169.18 = 186.098 s;
    // 10 s of queue adds 10 s. 30 s of progress does not pay for it; 400 s does.
    #[test]
    fn algorithm_1_overheads_by_hand() {
        let s = StorageModel::default();
        assert_eq!(checkpoint_overhead(&s, Tier::Hdd, 5120, false, 0), 338_360_000);
        assert_eq!(checkpoint_overhead(&s, Tier::Hdd, 5120, true, 10 * SECOND), 196_098_000);
        assert!(!worth_checkpointing(30 * SECOND, 338_360_000));
        assert!(worth_checkpointing(400 * SECOND, 338_360_000));
        assert!(!worth_checkpointing(5, 5));
    }

    // 1 GB on NVM (1753.42 MB/s): local read 0.584 s; remote adds the network
    // (1024 / 1192.09 = 0.859 s) and the DFS penalty (x1.5 on the read):
    // 0.858993 + 0.876 = 1.734993 s. A local queue of 2 s makes remote cheaper.
    #[test]
    fn algorithm_2_overheads_by_hand() {
        let s = StorageModel::default();
        let local = local_resume_overhead(&s, Tier::Nvm, 1024, 0);
        let remote = remote_resume_overhead(&s, Tier::Nvm, 1024, 0);
        assert_eq!(local, 584_000);
        assert_eq!(remote, 1_734_993);
        assert!(local_resume_overhead(&s, Tier::Nvm, 1024, 2 * SECOND) > remote);
    }
}
