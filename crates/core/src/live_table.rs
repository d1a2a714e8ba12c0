//! Values by dense id (0, 1, 2, … in the order they were added) of which
//! only the live ones are kept: a removed value's memory is freed and its
//! room reused by a later one, so a table holds as many values as are live
//! at once, plus four bytes per id ever given. The core keeps its jobs so,
//! and the simulator its jobs' true state: finished jobs leave both.

use std::ops::{Index, IndexMut};

/// What `slot` holds for an id whose value was removed.
const GONE: u32 = u32::MAX;

/// Values by dense id; removed ones are gone for good.
#[derive(Debug, Clone)]
pub struct LiveTable<T> {
    /// Per id, its value's index in `values`, or [`GONE`].
    slot: Vec<u32>,
    /// The live values, with holes where removed ones were.
    values: Vec<Option<T>>,
    /// Holes in `values`, to fill first.
    holes: Vec<u32>,
}

impl<T> Default for LiveTable<T> {
    fn default() -> Self {
        LiveTable { slot: Vec::new(), values: Vec::new(), holes: Vec::new() }
    }
}

impl<T> LiveTable<T> {
    /// Ids given so far (live or removed): the next id is this.
    pub fn len(&self) -> usize {
        self.slot.len()
    }

    /// No id given yet.
    pub fn is_empty(&self) -> bool {
        self.slot.is_empty()
    }

    /// Adds `value` under the next id, which it returns.
    pub fn push(&mut self, value: T) -> usize {
        let at = match self.holes.pop() {
            Some(h) => {
                self.values[h as usize] = Some(value);
                h
            }
            None => {
                self.values.push(Some(value));
                (self.values.len() - 1) as u32
            }
        };
        self.slot.push(at);
        self.slot.len() - 1
    }

    /// The value of `id`, unless it was removed (or never given).
    pub fn get(&self, id: usize) -> Option<&T> {
        match self.slot.get(id) {
            Some(&at) if at != GONE => self.values[at as usize].as_ref(),
            _ => None,
        }
    }

    /// The value of `id` to change, unless it was removed (or never given).
    pub fn get_mut(&mut self, id: usize) -> Option<&mut T> {
        match self.slot.get(id) {
            Some(&at) if at != GONE => self.values[at as usize].as_mut(),
            _ => None,
        }
    }

    /// True when `id` was given and then removed.
    pub fn removed(&self, id: usize) -> bool {
        self.slot.get(id) == Some(&GONE)
    }

    /// Removes `id`'s value and returns it (`None` if it was already gone).
    pub fn remove(&mut self, id: usize) -> Option<T> {
        let at = std::mem::replace(self.slot.get_mut(id)?, GONE);
        if at == GONE {
            return None;
        }
        self.holes.push(at);
        self.values[at as usize].take()
    }

    /// The live values, in no particular order.
    pub fn live(&self) -> impl Iterator<Item = &T> {
        self.values.iter().flatten()
    }
}

impl<T> Index<usize> for LiveTable<T> {
    type Output = T;
    fn index(&self, id: usize) -> &T {
        self.get(id).unwrap_or_else(|| panic!("id {id} is not live"))
    }
}

impl<T> IndexMut<usize> for LiveTable<T> {
    fn index_mut(&mut self, id: usize) -> &mut T {
        self.get_mut(id).unwrap_or_else(|| panic!("id {id} is not live"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_stay_dense_and_removed_values_free_their_room() {
        let mut t = LiveTable::default();
        assert_eq!((t.push("a"), t.push("b"), t.push("c")), (0, 1, 2));
        assert_eq!(t.remove(1), Some("b"));
        assert_eq!(t.remove(1), None);
        assert!(t.removed(1) && !t.removed(0) && !t.removed(7));
        // The next value takes the hole, under a new id.
        assert_eq!(t.push("d"), 3);
        assert_eq!(t.values.len(), 3);
        assert_eq!((t[0], t.get(1), t[2], t[3]), ("a", None, "c", "d"));
        t[3] = "e";
        assert_eq!(t.get(3), Some(&"e"));
        assert_eq!(t.len(), 4);
        let mut live: Vec<_> = t.live().copied().collect();
        live.sort();
        assert_eq!(live, ["a", "c", "e"]);
    }

    #[test]
    #[should_panic(expected = "id 0 is not live")]
    fn a_removed_id_cannot_be_read() {
        let mut t = LiveTable::default();
        t.push(1);
        t.remove(0);
        let _ = t[0];
    }
}
