//! The ground truth of checkpointing (checkpoint paper §3.3.1, §4.1, Table 3,
//! Fig. 2). A dump freezes the task and writes its memory — all of it the
//! first time, the dirtied fraction once an image exists — at the tier's
//! bandwidth, after the dumps and restores already queued on its node (one
//! at a time per node); its resources free when the dump ends. A restore
//! reads the image back on the node that wrote it, or on another node over
//! the network and through the distributed file system, after that node's
//! queue; the task holds its allocation without progress meanwhile. Core time
//! held while waiting, dumping or restoring counts as waste.

use crate::event_queue::{Event, EventQueue};
use crate::execution::Execution;
use pliant_core::model::Tier;
use pliant_core::model::{JobId, TaskRef};
use pliant_core::{Micros, Observation, Resources};
use pliant_metrics::CheckpointCounts;
use std::collections::HashSet;

/// The nodes' dump queues and the tasks that have an image.
#[derive(Debug, Clone, Default)]
pub(crate) struct CheckpointExec {
    /// Per node, when the operation last queued there ends.
    pub io_free_at: Vec<Micros>,
    /// Tasks (job, task) with an image to restore from.
    pub images: HashSet<(u32, u32)>,
    /// Dumps and restores carried out.
    pub counts: CheckpointCounts,
}

impl CheckpointExec {
    /// No images, every node's queue free.
    pub fn new(nodes: usize) -> Self {
        CheckpointExec { io_free_at: vec![0; nodes], ..Default::default() }
    }

    /// Queues an operation of `duration` on `node`; returns when it ends.
    fn enqueue(&mut self, node: u32, now: Micros, duration: Micros) -> Micros {
        let free_at = &mut self.io_free_at[node as usize];
        *free_at = (*free_at).max(now) + duration;
        *free_at
    }
}

impl Execution {
    /// Freezes a running task and queues its dump on its node.
    pub fn checkpoint(&mut self, now: Micros, job: u32, task: u32, tier: Tier, events: &mut EventQueue) {
        let incremental = self.ckpt.images.contains(&(job, task));
        let t = self.task(job, task);
        t.frozen = true;
        t.mem_epoch += 1;
        let (node, epoch, mem, cores) = (t.node, t.mem_epoch, t.requested.mem_mb, t.held.cpu_milli as f64 / 1000.0);
        let s = &self.model.storage;
        let duration = s.dump_time(tier, s.dump_mb(mem, incremental));
        let end = self.ckpt.enqueue(node, now, duration);
        self.held_core_us += cores * (end - now) as f64;
        let counts = &mut self.ckpt.counts;
        if incremental {
            counts.incremental_dumps += 1;
        } else {
            counts.full_dumps += 1;
        }
        events.push(end, Event::Dumped { job, task, epoch });
        self.update_rates(now, job, task, events);
    }

    /// A dump is written: the task stops, keeping its progress, and frees its resources.
    pub fn dumped(&mut self, now: Micros, job: u32, task: u32, epoch: u32, events: &mut EventQueue) {
        let t = self.task(job, task);
        if t.mem_epoch != epoch || !t.running || !t.frozen {
            return;
        }
        self.stop(now, job, task, events);
        self.ckpt.images.insert((job, task));
        self.reports.push(Observation::Checkpointed(TaskRef { job: JobId(job), task }));
        self.update_rates(now, job, task, events);
    }

    /// Starts a checkpointed task on `node` from its image on `image`: it
    /// holds `held` at once and runs when the restore ends.
    #[allow(clippy::too_many_arguments)]
    pub fn restore(
        &mut self,
        now: Micros,
        job: u32,
        task: u32,
        node: u32,
        held: Resources,
        image: u32,
        tier: Tier,
        events: &mut EventQueue,
    ) {
        let t = self.task(job, task);
        t.running = true;
        t.node = node;
        t.held = held;
        t.frozen = false;
        t.restoring = true;
        t.since = now;
        t.mem_epoch += 1;
        let (epoch, mb) = (t.mem_epoch, t.requested.mem_mb as f64);
        let s = &self.model.storage;
        let duration = if node == image { s.local_restore_time(tier, mb) } else { s.remote_restore_time(tier, mb) };
        let end = self.ckpt.enqueue(node, now, duration);
        let counts = &mut self.ckpt.counts;
        if node == image {
            counts.local_restores += 1;
        } else {
            counts.remote_restores += 1;
        }
        self.held_core_us += held.cpu_milli as f64 / 1000.0 * (end - now) as f64;
        self.usage.held_mem += held.mem_mb;
        self.usage.running_tasks += 1;
        events.push(end, Event::Restored { job, task, epoch });
        self.update_rates(now, job, task, events);
    }

    /// A killed task restarts from scratch: its image is gone.
    pub fn drop_image(&mut self, job: u32, task: u32) {
        self.ckpt.images.remove(&(job, task));
    }
}
