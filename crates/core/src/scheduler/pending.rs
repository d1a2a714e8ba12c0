//! A job's runnable pending tasks, in order, with the runs of equal requests
//! among them kept alongside: a monitor pass reads a job's few runs instead
//! of every one of its waiting tasks.

use crate::Resources;
use std::collections::VecDeque;

/// Pending tasks (indices into the job's tasks) and their runs of equal
/// requests. Runs are never empty and two neighbours never ask the same.
#[derive(Debug, Clone, Default)]
pub(crate) struct PendingTasks {
    tasks: VecDeque<u32>,
    runs: VecDeque<(Resources, u32)>,
}

impl PendingTasks {
    /// The next task to place.
    pub fn front(&self) -> Option<u32> {
        self.tasks.front().copied()
    }

    /// The waiting tasks in order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.tasks.iter().copied()
    }

    /// Whether no task waits.
    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }

    /// Drops the next task (it was placed).
    pub fn pop_front(&mut self) {
        if self.tasks.pop_front().is_some() {
            let front = self.runs.front_mut().expect("a task is in a run");
            front.1 -= 1;
            if front.1 == 0 {
                self.runs.pop_front();
            }
        }
    }

    /// Puts `task`, asking `request`, first in line.
    pub fn push_front(&mut self, task: u32, request: Resources) {
        self.tasks.push_front(task);
        match self.runs.front_mut() {
            Some(run) if run.0 == request => run.1 += 1,
            _ => self.runs.push_front((request, 1)),
        }
    }

    /// Puts `task`, asking `request`, last in line.
    pub fn push_back(&mut self, task: u32, request: Resources) {
        self.tasks.push_back(task);
        match self.runs.back_mut() {
            Some(run) if run.0 == request => run.1 += 1,
            _ => self.runs.push_back((request, 1)),
        }
    }

    /// Makes room for `more` tasks.
    pub fn reserve(&mut self, more: usize) {
        self.tasks.reserve(more);
    }

    /// Drops every task.
    pub fn clear(&mut self) {
        self.tasks.clear();
        self.runs.clear();
    }

    /// The runs, in order: a request and how many tasks in a row ask it.
    pub fn runs(&self) -> impl Iterator<Item = (Resources, u32)> + '_ {
        self.runs.iter().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Whatever is pushed and popped at either end, the runs are the
        /// tasks' requests run-length encoded: maximal, none empty.
        #[test]
        fn runs_are_the_requests_run_length_encoded(ops in prop::collection::vec((0u8..4, 0u64..3), 0..60)) {
            let mut p = PendingTasks::default();
            let mut model: VecDeque<(u32, Resources)> = VecDeque::new();
            for (i, (op, size)) in ops.into_iter().enumerate() {
                let r = Resources::cores_gb(size, 1);
                match op {
                    0 => { p.push_back(i as u32, r); model.push_back((i as u32, r)); }
                    1 => { p.push_front(i as u32, r); model.push_front((i as u32, r)); }
                    2 => { p.pop_front(); model.pop_front(); }
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
            }
        }
    }

    #[test]
    fn runs_follow_the_tasks_at_both_ends() {
        let (a, b) = (Resources::cores_gb(1, 1), Resources::cores_gb(2, 2));
        let mut p = PendingTasks::default();
        for (t, r) in [(0, a), (1, a), (2, b)] {
            p.push_back(t, r);
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
