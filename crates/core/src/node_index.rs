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

    /// Records node `node`'s new free resources. Nothing moves when they are
    /// unchanged; otherwise the climb stops at the first ancestor whose
    /// maximum does not change: those above keep theirs.
    pub fn update(&mut self, node: usize, free: Resources) {
        let mut i = self.leaves + node;
        if self.tree[i] == free {
            return;
        }
        self.tree[i] = free;
        let mut max = free;
        while i > 1 {
            max = max.max(&self.tree[i ^ 1]);
            i /= 2;
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
    /// The subtrees right of `from` are visited left to right without
    /// recursion: into one whose maximum covers `req`, past one whose does
    /// not (a covering maximum may combine two nodes, so a descent can fail
    /// and carry on to the right).
    pub fn first_fit(&self, req: Resources, from: usize) -> Option<usize> {
        if from >= self.nodes {
            return None;
        }
        // The largest subtree whose leftmost leaf is `from`: climb while a left child.
        let leaf = self.leaves + from;
        let mut i = leaf >> leaf.trailing_zeros();
        loop {
            if req.fits_in(&self.tree[i]) {
                if i >= self.leaves {
                    let node = i - self.leaves;
                    return (node < self.nodes).then_some(node);
                }
                i *= 2;
            } else {
                // The next subtree to the right: climb while a right child.
                while i % 2 == 1 {
                    i /= 2;
                }
                if i == 0 {
                    return None;
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
            let max = nodes.iter().fold(Resources::ZERO, |acc, n| acc.max(n));
            prop_assert_eq!(index.max_free(), max);
        }
    }
}
