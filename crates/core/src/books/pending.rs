//! A job's runnable pending tasks, in order, kept as spans: consecutive
//! task indices that ask the same request. A phase's waiting tasks are one
//! span or a few, whatever their number, and a monitor pass reads a job's
//! few runs of equal requests instead of every one of its waiting tasks.

use crate::Resources;
use std::collections::VecDeque;

/// Tasks `first .. first + count`, each asking `request`.
#[derive(Debug, Clone, Copy)]
struct Span {
    first: u32,
    count: u32,
    request: Resources,
}

/// Pending tasks (indices into the job's tasks) in order. Spans are never
/// empty; two neighbours asking the same request are not consecutive. The
/// first span is kept inline, so that a job whose waiting tasks are one
/// span (as most are) needs no allocation for them.
#[derive(Debug, Clone, Default)]
pub struct PendingTasks {
    /// The first span (none when no task waits).
    head: Option<Span>,
    /// The spans after it.
    rest: VecDeque<Span>,
}

impl PendingTasks {
    /// The spans in order.
    fn spans(&self) -> impl Iterator<Item = &Span> + '_ {
        self.head.iter().chain(&self.rest)
    }

    /// The next task to place.
    pub fn front(&self) -> Option<u32> {
        self.head.map(|s| s.first)
    }

    /// What the next task to place asks for.
    pub fn front_request(&self) -> Option<Resources> {
        self.head.map(|s| s.request)
    }

    /// The waiting tasks in order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.spans().flat_map(|s| s.first..s.first + s.count)
    }

    /// Whether no task waits.
    pub fn is_empty(&self) -> bool {
        self.head.is_none()
    }

    /// Drops the next task (it was placed).
    pub fn pop_front(&mut self) {
        if let Some(head) = &mut self.head {
            head.first += 1;
            head.count -= 1;
            if head.count == 0 {
                self.head = self.rest.pop_front();
            }
        }
    }

    /// Puts `task`, asking `request`, first in line.
    pub fn push_front(&mut self, task: u32, request: Resources) {
        let span = Span { first: task, count: 1, request };
        match &mut self.head {
            Some(s) if s.request == request && task.checked_add(1) == Some(s.first) => {
                s.first = task;
                s.count += 1;
            }
            Some(s) => {
                let old = std::mem::replace(s, span);
                self.reserve_one();
                self.rest.push_front(old);
            }
            None => self.head = Some(span),
        }
    }

    /// Puts tasks `first .. first + count`, each asking `request`, last in line.
    pub fn push_back(&mut self, first: u32, count: u32, request: Resources) {
        if count == 0 {
            return;
        }
        match self.rest.back_mut().or(self.head.as_mut()) {
            Some(s) if s.request == request && s.first.checked_add(s.count) == Some(first) => s.count += count,
            Some(_) => {
                self.reserve_one();
                self.rest.push_back(Span { first, count, request });
            }
            None => self.head = Some(Span { first, count, request }),
        }
    }

    /// Makes room for one more span after the first; the first such room
    /// is no larger than that.
    fn reserve_one(&mut self) {
        if self.rest.capacity() == 0 {
            self.rest.reserve_exact(1);
        }
    }

    /// Drops every task.
    pub fn clear(&mut self) {
        self.head = None;
        self.rest.clear();
    }

    /// The runs, in order: a request and how many tasks in a row ask it.
    pub fn runs(&self) -> impl Iterator<Item = (Resources, u32)> + '_ {
        let mut spans = self.spans().peekable();
        std::iter::from_fn(move || {
            let first = spans.next()?;
            let mut n = first.count;
            while let Some(s) = spans.next_if(|s| s.request == first.request) {
                n += s.count;
            }
            Some((first.request, n))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Whatever is pushed and popped at either end, the runs are the
        /// tasks' requests run-length encoded: maximal, none empty; the
        /// tasks come out in order.
        #[test]
        fn runs_are_the_requests_run_length_encoded(ops in prop::collection::vec((0u8..5, 0u64..3, 0u32..6, 0u32..3), 0..60)) {
            let mut p = PendingTasks::default();
            let mut model: VecDeque<(u32, Resources)> = VecDeque::new();
            for (op, size, i, n) in ops {
                let r = Resources::cores_gb(size, 1);
                match op {
                    0 => { p.push_back(i, 1, r); model.push_back((i, r)); }
                    1 => { p.push_front(i, r); model.push_front((i, r)); }
                    2 => { p.pop_front(); model.pop_front(); }
                    3 => { p.push_back(i, n, r); model.extend((i..i + n).map(|t| (t, r))); }
                    _ => { p.clear(); model.clear(); }
                }
                let mut runs: Vec<(Resources, u32)> = Vec::new();
                for &(_, r) in &model {
                    match runs.last_mut() {
                        Some(last) if last.0 == r => last.1 += 1,
                        _ => runs.push((r, 1)),
                    }
                }
                prop_assert_eq!(p.runs().collect::<Vec<_>>(), runs);
                prop_assert_eq!(p.front(), model.front().map(|&(t, _)| t));
                prop_assert!(p.head.is_some() || p.rest.is_empty(), "spans after no first one");
                prop_assert_eq!(p.iter().collect::<Vec<_>>(), model.iter().map(|&(t, _)| t).collect::<Vec<_>>());
            }
        }
    }

    #[test]
    fn runs_follow_the_tasks_at_both_ends() {
        let (a, b) = (Resources::cores_gb(1, 1), Resources::cores_gb(2, 2));
        let mut p = PendingTasks::default();
        for (t, r) in [(0, a), (1, a), (2, b)] {
            p.push_back(t, 1, r);
        }
        assert_eq!(p.runs().collect::<Vec<_>>(), vec![(a, 2), (b, 1)]);
        p.pop_front();
        p.pop_front();
        assert_eq!((p.front(), p.runs().collect::<Vec<_>>()), (Some(2), vec![(b, 1)]));
        p.push_front(7, b);
        p.push_front(8, a);
        assert_eq!(p.runs().collect::<Vec<_>>(), vec![(a, 1), (b, 2)]);
        p.clear();
        p.pop_front();
        assert!(p.is_empty() && p.runs().next().is_none());
    }
}
