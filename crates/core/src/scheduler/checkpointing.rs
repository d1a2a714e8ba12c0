//! Checkpoint-based preemption in the core (checkpoint paper §3.2, §4.1,
//! §5.2.2): dumping victims (or killing them when a checkpoint does not pay,
//! Algorithm 1), booking each node's queue of dumps and restores, and
//! restoring a checkpointed task locally or remotely (Algorithm 2).

use super::state::{Image, IoOp, TaskRuntime};
use super::Scheduler;
use crate::action::Action;
use crate::model::{JobId, NodeId, TaskRef, TaskState};
use crate::policy::preemption::{
    checkpoint_overhead, local_resume_overhead, remote_resume_overhead, worth_checkpointing,
};
use crate::policy::CheckpointSpec;
use crate::{CoreError, Micros, Resources};

impl Scheduler {
    /// Estimated wait behind the dumps and restores booked on `node`.
    pub(super) fn io_queue_time(&self, node: NodeId, now: Micros) -> Micros {
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

    /// The estimated time to dump `t` now: its whole memory the first time,
    /// the dirtied part once it has an image.
    pub(super) fn dump_estimate(t: &TaskRuntime, spec: &CheckpointSpec) -> Micros {
        spec.storage.dump_time(spec.tier, spec.storage.dump_mb(t.request.mem_mb, t.image.is_some()))
    }

    /// Preempts a running victim. Adaptive (Alg. 1): checkpoint it only if its
    /// progress exceeds dump + restore + queue, else kill it. Basic: always checkpoint.
    pub(super) fn checkpoint_or_kill(
        &mut self,
        now: Micros,
        task: TaskRef,
        spec: CheckpointSpec,
        out: &mut Vec<Action>,
    ) {
        let t = &self.jobs[task.job.0 as usize].tasks[task.task as usize];
        if spec.adaptive {
            let queue = self.io_queue_time(t.node, now);
            let overhead = checkpoint_overhead(&spec.storage, spec.tier, t.request.mem_mb, t.image.is_some(), queue);
            if !worth_checkpointing(t.ran(now), overhead) {
                self.kill(task, out);
                return;
            }
        }
        let dump = Self::dump_estimate(t, &spec);
        let t = &mut self.jobs[task.job.0 as usize].tasks[task.task as usize];
        t.state.transition(TaskState::Suspended).expect("victims are running");
        t.pause(now);
        t.image = Some(Image { node: t.node, banked: t.ran(now) });
        t.io_op = Some(IoOp::Dump(t.allocated));
        let (node, frees) = (t.node, t.allocated);
        self.freeing[node.0 as usize] += frees;
        self.book_io(node, now, dump);
        out.push(Action::Checkpoint { task, tier: spec.tier });
    }

    /// The body wrote a task's dump: its resources are free and it waits to be restored.
    pub(super) fn task_checkpointed(&mut self, now: Micros, task: TaskRef) -> Result<(), CoreError> {
        let job = self.job_mut(task)?;
        let queue = job.queue;
        let t = &mut job.tasks[task.task as usize];
        let (TaskState::Suspended, Some(IoOp::Dump(frees))) = (t.state, t.io_op) else {
            return Err(CoreError::BadTask { task, what: format!("checkpointed while {:?} and not dumping", t.state) });
        };
        t.state.transition(TaskState::Pending).expect("checked above");
        t.io_op = None;
        let (node, held) = (t.node, std::mem::replace(&mut t.allocated, Resources::ZERO));
        job.running -= 1;
        job.pending.push_front(task.task, job.tasks[task.task as usize].request);
        self.freeing[node.0 as usize] -= frees;
        self.unbook_io(node, now);
        self.release(node, queue, held);
        self.sync_waiting(task.job.0 as usize);
        Ok(())
    }

    /// Algorithm 2: where a checkpointed task restores, given the first node
    /// with room. Its own node if it fits there — for adaptive policies only
    /// if that is estimated no dearer than a remote restore on `first_fit`.
    fn restore_node(
        &self,
        now: Micros,
        t: &TaskRuntime,
        image: Image,
        first_fit: NodeId,
        spec: &CheckpointSpec,
    ) -> NodeId {
        let local = image.node;
        if first_fit == local || !t.request.fits_in(&self.nodes[local.0 as usize].free()) {
            return first_fit;
        }
        if !spec.adaptive {
            return local;
        }
        let (s, mem) = (&spec.storage, t.request.mem_mb);
        let local_cost = local_resume_overhead(s, spec.tier, mem, self.io_queue_time(local, now));
        let remote_cost = remote_resume_overhead(s, spec.tier, mem, self.io_queue_time(first_fit, now));
        if local_cost <= remote_cost {
            local
        } else {
            first_fit
        }
    }

    /// Starts a checkpointed task from its image (the head of its job's
    /// pending tasks); `first_fit` is the first node with room for it.
    pub(super) fn restore(
        &mut self,
        now: Micros,
        job: usize,
        task: u32,
        image: Image,
        first_fit: NodeId,
        out: &mut Vec<Action>,
    ) {
        let spec = self.policy.preemption.and_then(|p| p.checkpoint).expect("only checkpointing policies make images");
        let node = self.restore_node(now, &self.jobs[job].tasks[task as usize], image, first_fit, &spec);
        let j = &mut self.jobs[job];
        j.pending.pop_front();
        j.running += 1;
        let queue = j.queue;
        let t = &mut j.tasks[task as usize];
        t.state.transition(TaskState::Restoring).expect("pending tasks can restore");
        t.node = node;
        t.allocated = t.request;
        t.ran_before = image.banked;
        t.running_since = None;
        t.io_op = Some(IoOp::Restore);
        let (res, mb) = (t.request, t.request.mem_mb as f64);
        let duration = if node == image.node {
            spec.storage.local_restore_time(spec.tier, mb)
        } else {
            spec.storage.remote_restore_time(spec.tier, mb)
        };
        self.book_io(node, now, duration);
        self.reserve(node, queue, res);
        let task = TaskRef { job: JobId(job as u32), task };
        out.push(Action::Restore { task, node, resources: res, image: image.node, tier: spec.tier });
    }

    /// A restored task runs again: its restore leaves its node's queue.
    pub(super) fn restore_done(&mut self, now: Micros, task: TaskRef) {
        let t = &mut self.jobs[task.job.0 as usize].tasks[task.task as usize];
        if let Some(IoOp::Restore) = t.io_op.take() {
            let node = t.node;
            self.unbook_io(node, now);
        }
    }

    /// Drops a failed task's booked dump or restore.
    pub(super) fn forget_checkpoint(&mut self, task: TaskRef) {
        let t = &mut self.jobs[task.job.0 as usize].tasks[task.task as usize];
        let node = t.node;
        match t.io_op.take() {
            Some(IoOp::Dump(frees)) => {
                self.freeing[node.0 as usize] -= frees;
                self.io[node.0 as usize].ops -= 1;
            }
            Some(IoOp::Restore) => self.io[node.0 as usize].ops -= 1,
            None => {}
        }
    }
}
