//! A segment tree over the nodes' free resources, so that first-fit placement
//! and "does anything fit anywhere?" cost O(log n) instead of a scan of every
//! node. Each inner entry holds the component-wise maximum of its children; a
//! subtree whose maximum does not cover a request cannot hold it.

use crate::Resources;

/// Free resources per node with first-fit search.
#[derive(Debug, Clone)]
pub(crate) struct NodeIndex {
    nodes: usize,
    leaves: usize,
    tree: Vec<Resources>,
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
        NodeIndex { nodes: free.len(), leaves, tree }
    }

    /// Records node `node`'s new free resources. The climb stops at the
    /// first ancestor whose maximum does not change: those above keep theirs.
    pub fn update(&mut self, node: usize, free: Resources) {
        let mut i = self.leaves + node;
        self.tree[i] = free;
        while i > 1 {
            i /= 2;
            let max = self.tree[2 * i].max(&self.tree[2 * i + 1]);
            if self.tree[i] == max {
                return;
            }
            self.tree[i] = max;
        }
    }

    /// Component-wise maximum free over all nodes: an upper bound on what fits.
    pub fn max_free(&self) -> Resources {
        self.tree[1]
    }

    /// The lowest-numbered node at index `from` or later where `req` fits.
    pub fn first_fit(&self, req: Resources, from: usize) -> Option<usize> {
        self.search(1, 0, self.leaves, req, from)
    }

    fn search(&self, i: usize, lo: usize, hi: usize, req: Resources, from: usize) -> Option<usize> {
        if hi <= from || lo >= self.nodes || !req.fits_in(&self.tree[i]) {
            return None;
        }
        if hi - lo == 1 {
            return Some(lo);
        }
        let mid = (lo + hi) / 2;
        self.search(2 * i, lo, mid, req, from).or_else(|| self.search(2 * i + 1, mid, hi, req, from))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// First fit through the tree equals a plain left-to-right scan.
        #[test]
        fn matches_a_linear_scan(
            free in prop::collection::vec((0u64..8, 0u64..8), 1..40),
            updates in prop::collection::vec((any::<prop::sample::Index>(), 0u64..8, 0u64..8), 0..20),
            req in (0u64..8, 0u64..8),
            from in 0usize..40,
        ) {
            let mut nodes: Vec<Resources> = free.iter().map(|&(c, m)| Resources::new(c, m)).collect();
            let mut index = NodeIndex::new(&nodes);
            for (pick, c, m) in updates {
                let i = pick.index(nodes.len());
                nodes[i] = Resources::new(c, m);
                index.update(i, nodes[i]);
            }
            let req = Resources::new(req.0, req.1);
            let scan = (from..nodes.len()).find(|&i| req.fits_in(&nodes[i]));
            prop_assert_eq!(index.first_fit(req, from), scan);
        }
    }
}
