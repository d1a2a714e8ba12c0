//! A segment tree over the nodes' free resources, so that first-fit placement
//! costs O(log n) instead of a scan of every node. Each leaf holds a node's
//! free resources exactly; each inner entry holds an upper bound, component
//! by component, of the leaves below it: a subtree whose bound does not
//! cover a request cannot hold it.
//!
//! The bounds are kept loose where that is cheaper: a node that loses room
//! leaves its ancestors' bounds as they were (still bounds), and a node that
//! gains room raises them only as far as they fall short of it. A search
//! that finds no room under an entry tightens it to the larger of its
//! children's bounds on its way out, so stale bounds are paid for once, by
//! the first search that meets them, and only where searches go.

use crate::Resources;
use std::cell::Cell;

/// Free resources per node with first-fit search.
#[derive(Debug, Clone)]
pub struct NodeIndex {
    nodes: usize,
    leaves: usize,
    /// The leaves at `leaves..`, the bounds above them (the root at 1).
    /// Searches tighten bounds through a shared reference.
    tree: Vec<Cell<Resources>>,
    /// How many nodes have some CPU free, and how many some memory.
    with_cpu: usize,
    with_mem: usize,
}

impl NodeIndex {
    /// An index over nodes with the given free resources.
    pub fn new(free: &[Resources]) -> Self {
        let leaves = free.len().next_power_of_two().max(1);
        let mut tree = vec![Resources::ZERO; 2 * leaves];
        tree[leaves..leaves + free.len()].copy_from_slice(free);
        for i in (1..leaves).rev() {
            tree[i] = tree[2 * i].max(&tree[2 * i + 1]);
        }
        let with_cpu = free.iter().filter(|f| f.cpu_milli > 0).count();
        let with_mem = free.iter().filter(|f| f.mem_mb > 0).count();
        NodeIndex { nodes: free.len(), leaves, tree: tree.into_iter().map(Cell::new).collect(), with_cpu, with_mem }
    }

    /// Records node `node`'s new free resources: the bounds above it rise
    /// as far as they fall short of them, and stay where they are otherwise.
    pub fn update(&mut self, node: usize, free: Resources) {
        let mut i = self.leaves + node;
        let old = self.tree[i].replace(free);
        self.with_cpu = self.with_cpu + usize::from(free.cpu_milli > 0) - usize::from(old.cpu_milli > 0);
        self.with_mem = self.with_mem + usize::from(free.mem_mb > 0) - usize::from(old.mem_mb > 0);
        if free.fits_in(&old) {
            return;
        }
        while i > 1 {
            i /= 2;
            let bound = self.tree[i].get();
            if free.fits_in(&bound) {
                return;
            }
            self.tree[i].set(bound.max(&free));
        }
    }

    /// Whether every node has no CPU free or every node no memory free:
    /// then no request that asks for both fits anywhere.
    pub fn full(&self) -> bool {
        self.with_cpu == 0 || self.with_mem == 0
    }

    /// The lowest-numbered node at index `from` or later where `req` fits.
    /// The subtrees right of `from` are visited left to right without
    /// recursion: into one whose bound covers `req`, past one whose does
    /// not (a covering bound may be loose, or combine two nodes, so a
    /// descent can fail and carry on to the right). Leaving a subtree
    /// where nothing fit, the search tightens its bound.
    pub fn first_fit(&self, req: Resources, from: usize) -> Option<usize> {
        if from >= self.nodes {
            return None;
        }
        // Every index below is under the tree's length, a power of two:
        // masking with `len - 1` changes none and spares the bounds checks.
        let tree = &self.tree[..];
        let at = |i: usize| &tree[i & (tree.len() - 1)];
        // The largest subtree whose leftmost leaf is `from`: climb while a left child.
        let leaf = self.leaves + from;
        let mut i = leaf >> leaf.trailing_zeros();
        loop {
            if req.fits_in(&at(i).get()) {
                if i >= self.leaves {
                    let node = i - self.leaves;
                    return (node < self.nodes).then_some(node);
                }
                i *= 2;
            } else {
                // The next subtree to the right: climb while a right child,
                // tightening each parent left to its children's bounds.
                while i % 2 == 1 {
                    i /= 2;
                    if i == 0 {
                        return None;
                    }
                    at(i).set(at(2 * i).get().max(&at(2 * i + 1).get()));
                }
                i += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Every inner entry bounds its children; the leaves are the nodes'
    /// free resources (none past the last node).
    fn assert_bounds(index: &NodeIndex, nodes: &[Resources]) {
        let at = |i: usize| index.tree[i].get();
        for (n, free) in nodes.iter().enumerate() {
            assert_eq!(at(index.leaves + n), *free);
        }
        for i in 1..index.leaves {
            assert!(at(2 * i).fits_in(&at(i)) && at(2 * i + 1).fits_in(&at(i)), "entry {i} bounds its children");
        }
    }

    proptest! {
        /// Through any mix of updates and searches (which tighten bounds),
        /// first fit equals a plain left-to-right scan, `full` says whether
        /// no node has CPU or none memory, and the bounds hold.
        #[test]
        fn matches_a_linear_scan(
            free in prop::collection::vec((0u64..8, 0u64..8), 1..40),
            steps in prop::collection::vec(
                (any::<bool>(), any::<prop::sample::Index>(), (0u64..8, 0u64..8), 0usize..40),
                0..60,
            ),
        ) {
            let mut nodes: Vec<Resources> = free.iter().map(|&(c, m)| Resources::new(c, m)).collect();
            let mut index = NodeIndex::new(&nodes);
            for (search, pick, (c, m), from) in steps {
                let r = Resources::new(c, m);
                if search {
                    let scan = (from..nodes.len()).find(|&i| r.fits_in(&nodes[i]));
                    prop_assert_eq!(index.first_fit(r, from), scan);
                } else {
                    let i = pick.index(nodes.len());
                    nodes[i] = r;
                    index.update(i, r);
                }
                let max = nodes.iter().fold(Resources::ZERO, |acc, n| acc.max(n));
                prop_assert_eq!(index.full(), max.cpu_milli == 0 || max.mem_mb == 0);
                assert_bounds(&index, &nodes);
            }
        }
    }

    /// Nodes 0-3 fill up one after another (their bounds above stay loose);
    /// a search for room none has finds none and tightens the root to what
    /// is free, so that the next such search stops at the root.
    #[test]
    fn a_search_that_finds_nothing_tightens_the_bounds_it_passed() {
        let full = Resources::cores_gb(4, 4);
        let mut index = NodeIndex::new(&[full; 4]);
        for n in 0..4 {
            index.update(n, Resources::cores_gb(1, 1));
        }
        assert_eq!(index.tree[1].get(), full, "a node losing room leaves the bounds above it");
        assert_eq!(index.first_fit(Resources::cores_gb(2, 2), 0), None);
        assert_eq!(index.tree[1].get(), Resources::cores_gb(1, 1));
        index.update(2, Resources::cores_gb(3, 2));
        assert_eq!(index.tree[1].get(), Resources::cores_gb(3, 2), "a node gaining room raises them");
        assert_eq!(index.first_fit(Resources::cores_gb(2, 2), 0), Some(2));
    }
}
