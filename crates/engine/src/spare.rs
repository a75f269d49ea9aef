//! Buffers kept between launches: a launch's warps (and, in the timing
//! model, its warp slots) would otherwise be allocated, and faulted in,
//! anew each time. Each kind has one bounded, process-wide list behind a
//! lock held only for a push or a pop.

use std::sync::Mutex;

/// A process-wide list of kept `T`s, holding at most `limit` bytes.
pub struct Spare<T> {
    limit: usize,
    /// The kept items with their bytes, and the bytes in all.
    list: Mutex<(Vec<(T, usize)>, usize)>,
}

impl<T> Spare<T> {
    /// An empty list that keeps at most `limit` bytes.
    pub const fn new(limit: usize) -> Self {
        Spare { limit, list: Mutex::new((Vec::new(), 0)) }
    }

    /// The item kept last, if any.
    pub fn take(&self) -> Option<T> {
        let mut list = self.list.lock().ok()?;
        let (item, bytes) = list.0.pop()?;
        list.1 -= bytes;
        Some(item)
    }

    /// Keeps `item`, which holds `bytes`, if there is room; else drops it.
    pub fn keep(&self, item: T, bytes: usize) {
        let Ok(mut list) = self.list.lock() else { return };
        if list.1 + bytes <= self.limit {
            list.1 += bytes;
            list.0.push((item, bytes));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_up_to_its_limit_and_gives_back_the_last_kept() {
        let spare = Spare::new(10);
        spare.keep("a", 4);
        spare.keep("b", 6);
        spare.keep("c", 1);
        assert_eq!(spare.take(), Some("b"), "c did not fit");
        spare.keep("d", 6);
        assert_eq!((spare.take(), spare.take(), spare.take()), (Some("d"), Some("a"), None));
    }
}
