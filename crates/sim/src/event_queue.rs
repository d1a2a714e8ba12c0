//! The event queue: an 8-ary min-heap ordered by (time, sequence number), so
//! that simultaneous events are handled in the order they were scheduled,
//! the same way on every run. An entry is 32 bytes: the time and the
//! sequence number in one 16-byte key, and a 16-byte event. Eight children
//! side by side (four adjacent cache lines) make a third of a binary heap's
//! depth: a pop from a large queue waits on a third as many cache misses,
//! one after another, for a few more comparisons. (At `mixed` scale 300,
//! fifo's run took ~12 % less CPU with four children than with two, and
//! ~5 % less again with eight.)

use pliant_core::Micros;

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
        /// Memory swapped out, MB (at most a reclaim chunk).
        mem_mb: u16,
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

impl Event {
    /// The job whose task it concerns, if any.
    pub fn job(&self) -> Option<u32> {
        match *self {
            Event::TaskFinish { job, .. }
            | Event::Reclaimed { job, .. }
            | Event::Restored { job, .. }
            | Event::Dumped { job, .. }
            | Event::CopyFinish { job, .. } => Some(job),
            Event::Monitor | Event::Sample | Event::Wake => None,
        }
    }

    /// Whether the loop counts it as processed even when it is stale (a
    /// memory or dump step; a stale finish or copy finish is not counted).
    pub fn counted_when_stale(&self) -> bool {
        matches!(self, Event::Reclaimed { .. } | Event::Restored { .. } | Event::Dumped { .. })
    }
}

/// A queued event under its key: the time in the high 64 bits, the sequence
/// number in the low, so that one comparison orders by time, then by the
/// order of scheduling. Keys are unique: the order of pops is the keys'
/// order, whatever the heap's shape.
#[derive(Debug, Clone, Copy)]
struct Entry {
    key: u128,
    event: Event,
}

impl Entry {
    fn time(&self) -> Micros {
        (self.key >> 64) as Micros
    }
}

/// Children per entry of the heap.
const ARITY: usize = 8;

/// A deterministic priority queue of events.
#[derive(Debug, Default)]
pub struct EventQueue {
    /// The heap: entry `i`'s children are `ARITY * i + 1 ..= ARITY * i + ARITY`,
    /// none with a smaller key; the root is the earliest.
    heap: Vec<Entry>,
    seq: u64,
}

impl EventQueue {
    /// Schedules `event` at `time`.
    pub fn push(&mut self, time: Micros, event: Event) {
        let entry = Entry { key: (time as u128) << 64 | self.seq as u128, event };
        self.seq += 1;
        let mut i = self.heap.len();
        self.heap.push(entry);
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if self.heap[parent].key < entry.key {
                break;
            }
            self.heap[i] = self.heap[parent];
            i = parent;
        }
        self.heap[i] = entry;
    }

    /// The time of the earliest event.
    pub fn peek_time(&self) -> Option<Micros> {
        self.heap.first().map(Entry::time)
    }

    /// Removes and returns the earliest event.
    pub fn pop(&mut self) -> Option<(Micros, Event)> {
        let last = self.heap.pop()?;
        let Some(&root) = self.heap.first() else {
            return Some((last.time(), last.event));
        };
        // Sift the last entry down from the root into the hole the earliest leaves.
        let heap = &mut self.heap[..];
        let len = heap.len();
        let mut i = 0;
        loop {
            let first = ARITY * i + 1;
            if first >= len {
                break;
            }
            let children = &heap[first..len.min(first + ARITY)];
            let (least, key) = match <&[Entry; ARITY]>::try_from(children) {
                Ok(full) => least_of(full),
                Err(_) => least_of(children),
            };
            if last.key < key {
                break;
            }
            heap[i] = children[least];
            i = first + least;
        }
        heap[i] = last;
        Some((root.time(), root.event))
    }
}

/// The index and key of the least of a family of children. Inlined, so
/// that a full family (every one but the last) is searched unrolled: the
/// caller gives it as a slice of exactly `ARITY`.
#[inline(always)]
fn least_of(children: &[Entry]) -> (usize, u128) {
    let (mut least, mut key) = (0, children[0].key);
    for (c, child) in children.iter().enumerate().skip(1) {
        if child.key < key {
            (least, key) = (c, child.key);
        }
    }
    (least, key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_compact() {
        assert_eq!(std::mem::size_of::<Event>(), 16);
        assert_eq!(std::mem::size_of::<Entry>(), 32);
    }

    proptest::proptest! {
        /// Whatever is pushed and popped, events come out by time, then in
        /// the order they were pushed.
        #[test]
        fn pops_in_time_then_push_order(ops in proptest::collection::vec(proptest::option::of(0u64..20), 0..200)) {
            let mut q = EventQueue::default();
            let mut model = std::collections::BTreeMap::new();
            for (n, op) in ops.into_iter().enumerate() {
                let event = Event::TaskFinish { job: n as u32, task: 0, epoch: 0 };
                match op {
                    Some(time) => {
                        q.push(time, event);
                        model.insert((time, n), event);
                    }
                    None => {
                        let expected = model.pop_first().map(|((time, _), e)| (time, e));
                        proptest::prop_assert_eq!(q.pop(), expected);
                    }
                }
                proptest::prop_assert_eq!(q.peek_time(), model.keys().next().map(|&(time, _)| time));
            }
        }
    }

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
