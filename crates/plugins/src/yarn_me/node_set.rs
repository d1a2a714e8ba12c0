//! A set of node indexes as a bitset: the node pass marks the nodes it is
//! to visit and walks them in node order, which a bitset does in a few
//! word operations (a `BTreeSet<u32>` cost the pass about 5 % of its time).

/// Node indexes, one bit each.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct NodeSet {
    words: Vec<u64>,
}

impl NodeSet {
    /// Every node of `nodes`.
    pub fn full(nodes: usize) -> Self {
        let mut set = NodeSet::default();
        set.extend(0..nodes as u32);
        set
    }

    /// Adds node `n`.
    pub fn insert(&mut self, n: u32) {
        let (word, bit) = (n as usize / 64, n % 64);
        if self.words.len() <= word {
            self.words.resize(word + 1, 0);
        }
        self.words[word] |= 1 << bit;
    }

    /// Takes node `n` out.
    pub fn remove(&mut self, n: u32) {
        if let Some(w) = self.words.get_mut(n as usize / 64) {
            *w &= !(1 << (n % 64));
        }
    }

    /// The least node in the set at `from` or later.
    pub fn next_from(&self, from: u32) -> Option<u32> {
        let mut word = from as usize / 64;
        // The bits of the first word below `from` do not count.
        let mut bits = self.words.get(word)? & (u64::MAX << (from % 64));
        loop {
            if bits != 0 {
                return Some(word as u32 * 64 + bits.trailing_zeros());
            }
            word += 1;
            bits = *self.words.get(word)?;
        }
    }
}

impl Extend<u32> for NodeSet {
    fn extend<I: IntoIterator<Item = u32>>(&mut self, nodes: I) {
        for n in nodes {
            self.insert(n);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    proptest! {
        // Whatever is added and taken out, the set finds the next node from
        // anywhere as an ordered set of the same nodes does.
        #[test]
        fn finds_the_next_node_as_an_ordered_set_does(
            ops in prop::collection::vec((any::<bool>(), 0u32..300), 0..80),
            full in 0usize..130,
        ) {
            let mut set = NodeSet::full(full);
            let mut model: BTreeSet<u32> = (0..full as u32).collect();
            for (add, n) in ops {
                if add {
                    set.insert(n);
                    model.insert(n);
                } else {
                    set.remove(n);
                    model.remove(&n);
                }
                for from in [0, n.saturating_sub(1), n, n + 1, 63, 64, 65, 127, 128, 299, 300, 1000] {
                    prop_assert_eq!(set.next_from(from), model.range(from..).next().copied());
                }
            }
        }
    }
}
