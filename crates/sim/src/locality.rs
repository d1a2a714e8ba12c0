//! The ground truth of data locality (SSR §II-B case 2, §VI-B): a task of a
//! `local` phase that reads upstream output — the first as many of its tasks
//! as its upstream phases had — runs `locality_slowdown` times slower on a
//! node none of those upstream tasks ran on (remote fetch, cold JVM). Tasks
//! beyond that count read no particular node's output and run anywhere at
//! full speed.

use crate::execution::JobExec;

impl JobExec {
    /// The speed of its task `task` on `node`, `slowdown` times slower away
    /// from the data it reads.
    #[inline]
    pub(crate) fn speed_on(&self, task: u32, node: u32, slowdown: f64) -> f64 {
        let phase = &self.phases[self.tasks[task as usize].phase as usize];
        if !phase.local {
            return 1.0;
        }
        let upstream: u32 = phase.deps.iter().map(|&d| self.phases[d as usize].tasks.len() as u32).sum();
        let local = task - phase.tasks.start >= upstream
            || phase.deps.iter().any(|&d| self.phases[d as usize].ran_on.contains(&node));
        if local {
            1.0
        } else {
            1.0 / slowdown
        }
    }
}
