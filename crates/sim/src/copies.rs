//! The ground truth of straggler copies (SSR §IV-C): a copy of a running
//! task runs on another slot from scratch; the first of the two to finish is
//! the task's finish and the other stops. A copy's true duration is a fresh
//! draw from its phase's durations: the duration of the sibling ⌈m/2⌉ places
//! after it in the phase (wrapping), so copies and originals are independent
//! draws from the same distribution, as in the paper's numerical study.

use crate::event_queue::{Event, EventQueue};
use crate::execution::{Execution, TaskExec, Usage};
use pliant_core::{Micros, Resources};

impl Execution {
    /// Starts a copy of running task `task` of job `job` on `node`.
    pub fn copy(&mut self, now: Micros, job: u32, task: u32, node: u32, held: Resources, events: &mut EventQueue) {
        let j = &self.jobs[job as usize];
        let speed = j.speed_on(task, node, self.model.locality_slowdown);
        let range = j.phases[j.tasks[task as usize].phase as usize].tasks.clone();
        let m = range.end - range.start;
        let sibling = range.start + (task - range.start + m.div_ceil(2)) % m;
        let duration = j.tasks[sibling as usize].duration;
        let t = self.task(job, task);
        if !t.running || t.copy.is_some() {
            return;
        }
        t.copy = Some((node, held));
        t.copy_epoch += 1;
        let epoch = t.copy_epoch;
        self.usage.held_mem += held.mem_mb;
        self.usage.busy_cpu += held.cpu_milli as f64;
        self.usage.busy_nodes += held.cpu_milli as f64 / self.node_cpu[node as usize] as f64;
        events.push(now + (duration as f64 / speed).ceil() as Micros, Event::CopyFinish { job, task, epoch });
    }

    /// Whether a copy finishing now is still current (its task has not
    /// finished or stopped since): then it wins.
    pub fn copy_won(&self, job: u32, task: u32, epoch: u32) -> bool {
        let t = &self.jobs[job as usize].tasks[task as usize];
        t.running && t.copy.is_some() && t.copy_epoch == epoch
    }
}

/// Stops task `t`'s copy, if it has one (its task finished or stopped),
/// taking what it held and used off `usage`; `node_cpu` is every node's CPU.
pub(crate) fn end_copy(t: &mut TaskExec, node_cpu: &[u64], usage: &mut Usage) {
    let Some((node, held)) = t.copy.take() else { return };
    t.copy_epoch += 1;
    usage.held_mem -= held.mem_mb;
    usage.busy_cpu -= held.cpu_milli as f64;
    usage.busy_nodes -= held.cpu_milli as f64 / node_cpu[node as usize] as f64;
}
