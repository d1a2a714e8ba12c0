//! The event queue: a binary heap ordered by (time, sequence number), so that
//! simultaneous events are handled in the order they were scheduled, the same
//! way on every run.

use pliant_core::Micros;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Something that happens at a point in simulated time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Event {
    /// A running task completes its work, unless its epoch has moved on
    /// (its progress rate changed after this was scheduled).
    TaskFinish {
        /// The job's dense id.
        job: u32,
        /// The task's index in the job.
        task: u32,
        /// The task's epoch when this was scheduled.
        epoch: u32,
    },
    /// A chunk of a task's memory has been swapped out, unless its memory
    /// epoch has moved on.
    Reclaimed {
        /// The job's dense id.
        job: u32,
        /// The task's index in the job.
        task: u32,
        /// The task's memory epoch when this was scheduled.
        epoch: u32,
        /// Memory swapped out, MB.
        mem_mb: u64,
    },
    /// A resumed task has read its memory back, unless its memory epoch has moved on.
    Restored {
        /// The job's dense id.
        job: u32,
        /// The task's index in the job.
        task: u32,
        /// The task's memory epoch when this was scheduled.
        epoch: u32,
    },
    /// A checkpoint dump is written, unless the task's memory epoch has moved on.
    Dumped {
        /// The job's dense id.
        job: u32,
        /// The task's index in the job.
        task: u32,
        /// The task's memory epoch when this was scheduled.
        epoch: u32,
    },
    /// The core's resource monitor runs.
    Monitor,
    /// The utilisation timeline takes a sample.
    Sample,
    /// A task's copy (SSR §IV-C) completes, unless its copy epoch has moved on.
    CopyFinish {
        /// The job's dense id.
        job: u32,
        /// The task's index in the job.
        task: u32,
        /// The task's copy epoch when this was scheduled.
        epoch: u32,
    },
    /// A timer the core asked for (`Scheduler::wake_at`) goes off.
    Wake,
}

/// A deterministic priority queue of events.
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Reverse<(Micros, u64, Event)>>,
    seq: u64,
}

impl EventQueue {
    /// Schedules `event` at `time`.
    pub fn push(&mut self, time: Micros, event: Event) {
        self.heap.push(Reverse((time, self.seq, event)));
        self.seq += 1;
    }

    /// The time of the earliest event.
    pub fn peek_time(&self) -> Option<Micros> {
        self.heap.peek().map(|Reverse((t, _, _))| *t)
    }

    /// Removes and returns the earliest event.
    pub fn pop(&mut self) -> Option<(Micros, Event)> {
        self.heap.pop().map(|Reverse((t, _, e))| (t, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_break_by_insertion_order() {
        let mut q = EventQueue::default();
        q.push(5, Event::Sample);
        q.push(3, Event::Monitor);
        q.push(5, Event::Monitor);
        q.push(5, Event::TaskFinish { job: 0, task: 0, epoch: 0 });
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (3, Event::Monitor),
                (5, Event::Sample),
                (5, Event::Monitor),
                (5, Event::TaskFinish { job: 0, task: 0, epoch: 0 })
            ]
        );
    }
}
