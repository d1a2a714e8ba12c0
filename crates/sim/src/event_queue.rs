//! The event queue, ordered by time, then by the order of scheduling, so
//! that simultaneous events are handled in that order, the same way on
//! every run. Time never goes back (no event is scheduled before the last
//! one taken out), so the queue is a calendar: a ring of 1,024 slots of
//! 131 ms, 134 s ahead. An event goes at the end of its slot's list; the
//! slot being read and the next one are kept in order (the next is sorted
//! when it becomes the next), and events are taken out slot after slot.
//! Events beyond the ring wait in a binary heap and move into the ring as
//! it reaches them. A push and a pop touch one slot's list and a bit of the
//! occupancy map, not a path through a heap: at `mixed` scale 10 fifo's
//! pops took 84 instructions each against 398 for the 8-ary heap this
//! replaced, and at scale 100 the queue missed a 1 MB cache a third as
//! often (docs/benchmarks.md). A radix heap on the time (buckets by the
//! highest bit that differs from the last time taken out) did half as
//! well: each event moved ~5 times between buckets on its way out.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

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
    /// A step of a task's memory has been swapped out, unless its memory
    /// epoch has moved on.
    Reclaimed {
        /// The job's dense id.
        job: u32,
        /// The task's index in the job.
        task: u32,
        /// The task's memory epoch when this was scheduled.
        epoch: u32,
        /// Memory swapped out, MB (at most a reclaim step).
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

/// An event under its time.
#[derive(Debug, Clone, Copy)]
struct Entry {
    time: Micros,
    event: Event,
}

/// log2 of a slot's width, µs: 131 ms.
const SLOT_BITS: u32 = 17;
/// Slots in the ring: it reaches 134 s ahead.
const SLOTS: u64 = 1024;
/// Events a slot keeps room for once it is read: a burst's room beyond
/// that is given back, so that the ring does not hold every slot's largest.
const KEPT_ROOM: usize = 64;
/// Bits of the ring's occupancy map in one word.
const WORD: u64 = u64::BITS as u64;

/// A deterministic priority queue of events, for times that never go back:
/// no event is scheduled before the last one taken out.
#[derive(Debug)]
pub struct EventQueue {
    /// The time of the last event taken out (0 before the first).
    last: Micros,
    /// The current slot's number (`last`'s time >> `SLOT_BITS`); the ring
    /// holds the events of slots `cursor .. cursor + SLOTS`.
    cursor: u64,
    /// Slot `s`'s events at `ring[s % SLOTS]`, in the order they were
    /// scheduled; the current slot's and the next one's by time, then in
    /// that order.
    ring: Vec<Vec<Entry>>,
    /// In the current slot, the events before `head` are taken out already.
    head: usize,
    /// Bit `i % WORD` of word `i / WORD` set when `ring[i]` is not empty.
    occupied: Vec<u64>,
    /// The first slot after the current one that holds events, if any.
    ahead: Option<u64>,
    /// The events beyond the ring, all later than every event in it, each
    /// under its time and its number in the order of scheduling (`seq`).
    far: BinaryHeap<Reverse<(Micros, u64, Event)>>,
    seq: u64,
}

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue {
            last: 0,
            cursor: 0,
            ring: (0..SLOTS).map(|_| Vec::new()).collect(),
            head: 0,
            occupied: vec![0; (SLOTS / WORD) as usize],
            ahead: None,
            far: BinaryHeap::new(),
            seq: 0,
        }
    }
}

impl EventQueue {
    /// Schedules `event` at `time`, which must not be before the last event
    /// taken out.
    pub fn push(&mut self, time: Micros, event: Event) {
        assert!(time >= self.last, "event at {time} µs scheduled after one at {} µs was handled", self.last);
        let slot = time >> SLOT_BITS;
        if slot - self.cursor >= SLOTS {
            self.far.push(Reverse((time, self.seq, event)));
            self.seq += 1;
            return;
        }
        // The slots read next are kept in order; the others are put in
        // order when they become the next.
        let in_order = slot == self.cursor || self.ahead == Some(slot);
        if !in_order && self.ahead.is_none_or(|ahead| slot < ahead) {
            // An empty slot before the next: it is the next now.
            self.ahead = Some(slot);
        }
        let entry = Entry { time, event };
        let events = self.slot_mut(slot);
        match events.last() {
            Some(latest) if in_order && latest.time > time => {
                let at = events.partition_point(|e| e.time <= time);
                events.insert(at, entry);
            }
            _ => events.push(entry),
        }
    }

    /// The events of a slot in the ring, which is marked as holding some.
    #[inline(always)]
    fn slot_mut(&mut self, slot: u64) -> &mut Vec<Entry> {
        let i = slot % SLOTS;
        self.occupied[(i / WORD) as usize] |= 1 << (i % WORD);
        &mut self.ring[i as usize]
    }

    /// The time of the earliest event.
    pub fn peek_time(&self) -> Option<Micros> {
        let current = &self.ring[(self.cursor % SLOTS) as usize];
        if let Some(entry) = current.get(self.head) {
            return Some(entry.time);
        }
        match self.ahead {
            Some(slot) => Some(self.ring[(slot % SLOTS) as usize][0].time),
            None => self.far.peek().map(|Reverse((time, ..))| *time),
        }
    }

    /// Removes and returns the earliest event.
    pub fn pop(&mut self) -> Option<(Micros, Event)> {
        if self.head == self.ring[(self.cursor % SLOTS) as usize].len() {
            self.advance()?;
        }
        let entry = self.ring[(self.cursor % SLOTS) as usize][self.head];
        self.head += 1;
        self.last = entry.time;
        Some((entry.time, entry.event))
    }

    /// The first slot after the current one that holds events, if the ring
    /// holds any.
    fn next_slot(&self) -> Option<u64> {
        let current = self.cursor % SLOTS;
        let (word, bit) = ((current / WORD) as usize, current % WORD);
        let words = self.occupied.len();
        // The bits after the current slot's in its word, the other words in
        // ring order, then the bits before the current slot's.
        let after = self.occupied[word] & (u64::MAX << bit) << 1;
        let before = self.occupied[word] & ((1 << bit) - 1);
        let found = std::iter::once((word, after))
            .chain((1..words).map(|k| ((word + k) % words, self.occupied[(word + k) % words])))
            .chain(std::iter::once((word, before)))
            .find(|&(_, bits)| bits != 0)?;
        let i = found.0 as u64 * WORD + found.1.trailing_zeros() as u64;
        Some(self.cursor + (i + SLOTS - current) % SLOTS)
    }

    /// Leaves the current slot, all taken out, for the next that holds
    /// events, and brings the far events the ring then reaches into it.
    /// None if the queue is empty.
    fn advance(&mut self) -> Option<()> {
        let current = (self.cursor % SLOTS) as usize;
        self.ring[current].clear();
        self.ring[current].shrink_to(KEPT_ROOM);
        self.occupied[current / WORD as usize] &= !(1 << (current as u64 % WORD));
        self.head = 0;
        self.cursor = match self.ahead {
            Some(slot) => slot,
            None => self.far.peek()?.0 .0 >> SLOT_BITS,
        };
        while let Some(&Reverse((time, _, event))) = self.far.peek() {
            let slot = time >> SLOT_BITS;
            if slot - self.cursor >= SLOTS {
                break;
            }
            self.far.pop();
            self.slot_mut(slot).push(Entry { time, event });
        }
        self.ahead = self.next_slot();
        if let Some(slot) = self.ahead {
            // Stable: events at the same time stay in the order of scheduling.
            self.ring[(slot % SLOTS) as usize].sort_by_key(|e| e.time);
        }
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_compact() {
        assert_eq!(std::mem::size_of::<Event>(), 16);
        assert_eq!(std::mem::size_of::<Entry>(), 24);
    }

    /// What the queue may be asked to do, times relative to the last event
    /// taken out (or to an instant the caller has moved on to).
    #[derive(Debug, Clone)]
    enum Op {
        Push(u64),
        Pop,
        MoveOn(u64),
    }

    /// Time offsets: ties, the same slot, the next few slots, around the
    /// ring's reach, far beyond it.
    fn offset() -> impl proptest::strategy::Strategy<Value = u64> {
        use proptest::prelude::*;
        prop_oneof![
            3 => 0u64..4,
            3 => 0u64..1_000,
            2 => 0u64..1 << 20,
            2 => 0u64..1 << 28,
            1 => 0u64..1 << 40,
            1 => 0u64..u64::MAX >> 2,
        ]
    }

    fn op() -> impl proptest::strategy::Strategy<Value = Op> {
        use proptest::prelude::*;
        prop_oneof![5 => offset().prop_map(Op::Push), 4 => Just(Op::Pop), 1 => offset().prop_map(Op::MoveOn)]
    }

    proptest::proptest! {
        /// Under any pushes that never go back in time, events come out as
        /// from a binary heap on (time, order of pushing), ties included.
        #[test]
        fn pops_as_a_binary_heap_on_time_then_push_order(ops in proptest::collection::vec(op(), 0..400)) {
            use std::cmp::Reverse;
            let mut q = EventQueue::default();
            let mut model = std::collections::BinaryHeap::new();
            let mut now = 0u64;
            for (seq, op) in ops.into_iter().enumerate() {
                match op {
                    Op::Push(after) => {
                        let time = now.saturating_add(after);
                        q.push(time, Event::TaskFinish { job: seq as u32, task: 0, epoch: 0 });
                        model.push(Reverse((time, seq)));
                    }
                    Op::Pop => {
                        let expected = model.pop().map(|Reverse((time, seq))| {
                            now = time;
                            (time, Event::TaskFinish { job: seq as u32, task: 0, epoch: 0 })
                        });
                        proptest::prop_assert_eq!(q.pop(), expected);
                    }
                    Op::MoveOn(by) => {
                        // The engine moves on to an arrival before the next event.
                        let next = model.peek().map_or(u64::MAX, |Reverse((time, _))| *time);
                        now = now.saturating_add(by).min(next);
                    }
                }
                proptest::prop_assert_eq!(q.peek_time(), model.peek().map(|Reverse((time, _))| *time));
            }
            while let Some(Reverse((time, seq))) = model.pop() {
                proptest::prop_assert_eq!(q.pop(), Some((time, Event::TaskFinish { job: seq as u32, task: 0, epoch: 0 })));
            }
            proptest::prop_assert_eq!(q.pop(), None);
        }
    }

    #[test]
    #[should_panic(expected = "scheduled after")]
    fn refuses_an_event_before_the_last_taken_out() {
        let mut q = EventQueue::default();
        q.push(5, Event::Sample);
        q.pop();
        q.push(4, Event::Sample);
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
