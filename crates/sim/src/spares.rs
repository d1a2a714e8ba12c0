//! Emptied buffers kept by capacity for reuse. A run makes and drops a few
//! small vectors per job (its tasks' records), of a few sizes; taking an
//! emptied one of the exact size back costs less than asking the allocator,
//! whose small caches are soon full or empty when jobs come and go in bursts.

/// The largest capacity kept.
const MAX_CAPACITY: usize = 16;

/// Buffers kept per capacity: enough for a burst of jobs ending at once,
/// few enough that at most a few hundred kilobytes are held.
const PER_CAPACITY: usize = 32;

/// Emptied vectors by capacity (see the module's doc).
#[derive(Debug, Clone)]
pub(crate) struct Spares<T> {
    /// At index `c`, kept vectors of capacity `c`.
    by_capacity: Vec<Vec<Vec<T>>>,
}

impl<T> Default for Spares<T> {
    fn default() -> Self {
        Spares { by_capacity: Vec::new() }
    }
}

impl<T> Spares<T> {
    /// An empty vector of capacity `capacity`: a kept one if there is one.
    pub fn take(&mut self, capacity: usize) -> Vec<T> {
        match self.by_capacity.get_mut(capacity).and_then(Vec::pop) {
            Some(kept) => kept,
            None => Vec::with_capacity(capacity),
        }
    }

    /// Keeps `values`' buffer, its values dropped, for a later
    /// [`Spares::take`] of its capacity, unless it is too large or enough
    /// of its capacity are kept (then it is freed).
    pub fn keep(&mut self, mut values: Vec<T>) {
        let capacity = values.capacity();
        if capacity == 0 || capacity > MAX_CAPACITY || std::mem::size_of::<T>() == 0 {
            return;
        }
        if self.by_capacity.len() <= capacity {
            self.by_capacity.resize_with(capacity + 1, Vec::new);
        }
        let kept = &mut self.by_capacity[capacity];
        if kept.len() < PER_CAPACITY {
            values.clear();
            kept.push(values);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_buffer_comes_back_empty_for_its_capacity_only() {
        let mut spares = Spares::default();
        let mut v: Vec<String> = spares.take(3);
        assert_eq!((v.len(), v.capacity()), (0, 3));
        v.push("a".into());
        let at = v.as_ptr();
        spares.keep(v);
        let other = spares.take(4);
        assert_eq!(other.capacity(), 4);
        assert_ne!(other.as_ptr(), at);
        let again = spares.take(3);
        assert_eq!((again.len(), again.capacity(), again.as_ptr()), (0, 3, at));
        let fresh = spares.take(3);
        assert_ne!(fresh.as_ptr(), at);
    }

    #[test]
    fn large_buffers_and_those_past_the_limit_are_freed() {
        let mut spares: Spares<u64> = Spares::default();
        spares.keep(Vec::with_capacity(MAX_CAPACITY + 1));
        assert_eq!(spares.by_capacity.len(), 0);
        for _ in 0..PER_CAPACITY + 5 {
            spares.keep(Vec::with_capacity(2));
        }
        assert_eq!(spares.by_capacity[2].len(), PER_CAPACITY);
    }
}
