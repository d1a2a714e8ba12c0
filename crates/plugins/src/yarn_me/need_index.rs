//! The jobs waiting in the node pass, in its order, each with the least its
//! next task needs, and indexed by that need's CPU and memory: a backfill
//! looks only at the jobs whose need fits the node's free room, in order,
//! instead of walking every waiting job for every node it visits.

use pliant_core::{Micros, Resources};
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound::{Excluded, Unbounded};

/// A job's place in the pass's order (smaller first): (fair or SRJF key, submit, id).
pub(super) type OrderKey = (u64, Micros, u32);

/// The least a job's next task needs to start on a node: its request, or
/// its smallest elastic size and (as no size runs faster) its ideal run
/// time. A cheap test that spares the backfill sizing jobs that cannot fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Need {
    pub cpu_milli: u64,
    pub mem_mb: u64,
    pub runtime: Micros,
    /// The next container is the job's ApplicationMaster.
    pub am: bool,
}

impl Need {
    /// Whether a task may start in `free` and, with `by`, end by then.
    pub fn admits(&self, free: Resources, now: Micros, by: Micros) -> bool {
        self.fits(free) && now.saturating_add(self.runtime) <= by
    }

    /// Whether `free` holds the CPU and memory it needs.
    pub fn fits(&self, free: Resources) -> bool {
        self.cpu_milli <= free.cpu_milli && self.mem_mb <= free.mem_mb
    }
}

/// The waiting jobs in order, with their needs, indexed by need.
#[derive(Debug, Clone)]
pub(super) struct Waiting {
    order: BTreeMap<OrderKey, Need>,
    /// `by_need` is kept (a pass that never backfills does not read it).
    indexed: bool,
    /// The keys of `order` by their need's (CPU, memory).
    by_need: BTreeMap<(u64, u64), BTreeSet<OrderKey>>,
}

impl Waiting {
    /// No job waits; `indexed`: jobs are indexed by need for [`Waiting::next_fitting`].
    pub fn new(indexed: bool) -> Self {
        Waiting { order: BTreeMap::new(), indexed, by_need: BTreeMap::new() }
    }

    /// Adds a job under `key`.
    pub fn insert(&mut self, key: OrderKey, need: Need) {
        self.order.insert(key, need);
        if !self.indexed {
            return;
        }
        self.by_need.entry((need.cpu_milli, need.mem_mb)).or_default().insert(key);
    }

    /// Takes the job under `key` out; returns its need.
    pub fn remove(&mut self, key: &OrderKey) -> Option<Need> {
        let need = self.order.remove(key)?;
        if !self.indexed {
            return Some(need);
        }
        let shape = (need.cpu_milli, need.mem_mb);
        let keys = self.by_need.get_mut(&shape).expect("indexed with the order");
        keys.remove(key);
        if keys.is_empty() {
            self.by_need.remove(&shape);
        }
        Some(need)
    }

    /// The need of the job under `key`.
    #[cfg(test)]
    pub fn get(&self, key: &OrderKey) -> Option<&Need> {
        self.order.get(key)
    }

    /// The first job in order.
    pub fn first_key(&self) -> Option<&OrderKey> {
        self.order.keys().next()
    }

    /// Every job in order.
    pub fn iter(&self) -> impl Iterator<Item = (&OrderKey, &Need)> {
        self.order.iter()
    }

    /// The first job after `after` (from the first, if `None`) whose need's
    /// CPU and memory fit in `free` (indexed only).
    pub fn next_fitting(&self, free: Resources, after: Option<OrderKey>) -> Option<(OrderKey, Need)> {
        debug_assert!(self.indexed, "next_fitting reads the index by need");
        let mut best: Option<OrderKey> = None;
        for (_, keys) in self.by_need.range(..=(free.cpu_milli, u64::MAX)).filter(|((_, mem), _)| *mem <= free.mem_mb) {
            let next = match after {
                None => keys.first(),
                Some(a) => keys.range((Excluded(a), Unbounded)).next(),
            };
            if let Some(&k) = next {
                best = Some(best.map_or(k, |b| b.min(k)));
            }
        }
        best.map(|k| (k, self.order[&k]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Walking `next_fitting` from the start gives exactly the jobs whose
        /// need fits, in order, whatever was inserted and removed.
        #[test]
        fn next_fitting_walks_the_fitting_jobs_in_order(
            ops in prop::collection::vec((0u64..6, 0u64..4, 0u64..4, any::<bool>()), 0..60),
            free in (0u64..5, 0u64..5),
        ) {
            let mut w = Waiting::new(true);
            for (i, (key, cpu, mem, insert)) in ops.into_iter().enumerate() {
                let k = (key, 0, key as u32);
                w.remove(&k);
                if insert {
                    w.insert(k, Need { cpu_milli: cpu, mem_mb: mem, runtime: i as u64, am: false });
                }
            }
            let free = Resources::new(free.0, free.1);
            let expected: Vec<OrderKey> = w.iter().filter(|(_, n)| n.fits(free)).map(|(k, _)| *k).collect();
            let mut walked = Vec::new();
            let mut after = None;
            while let Some((k, need)) = w.next_fitting(free, after) {
                prop_assert_eq!(w.get(&k), Some(&need));
                walked.push(k);
                after = Some(k);
            }
            prop_assert_eq!(walked, expected);
        }
    }
}
