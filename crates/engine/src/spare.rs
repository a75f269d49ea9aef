//! Buffers kept between launches: a launch's warps, its buffers' 2 MiB
//! memory chunks (and, in the timing model, its warp slots and caches)
//! would otherwise be allocated, and faulted in, anew each time. Each kind
//! has one bounded, process-wide list behind a lock held only for a push or
//! a take.

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
        self.take_if(|_| true)
    }

    /// The item kept last of those `fits` accepts, if any.
    pub fn take_if(&self, fits: impl Fn(&T) -> bool) -> Option<T> {
        let mut list = self.list.lock().ok()?;
        let i = list.0.iter().rposition(|(item, _)| fits(item))?;
        let (item, bytes) = list.0.remove(i);
        list.1 -= bytes;
        Some(item)
    }

    /// Keeps `item`, which holds `bytes`, if there is room; else gives it
    /// back (for a caller whose `Drop` keeps items, to let go of it itself).
    pub fn keep(&self, item: T, bytes: usize) -> Result<(), T> {
        let Ok(mut list) = self.list.lock() else { return Err(item) };
        if list.1 + bytes > self.limit {
            return Err(item);
        }
        list.1 += bytes;
        list.0.push((item, bytes));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_up_to_its_limit_and_gives_back_the_last_kept() {
        let spare = Spare::new(10);
        assert_eq!(spare.keep("a", 4), Ok(()));
        assert_eq!(spare.keep("b", 6), Ok(()));
        assert_eq!(spare.keep("c", 1), Err("c"), "no room for c");
        assert_eq!(spare.take(), Some("b"));
        assert_eq!(spare.keep("d", 6), Ok(()));
        assert_eq!((spare.take(), spare.take(), spare.take()), (Some("d"), Some("a"), None));
    }

    #[test]
    fn takes_the_last_kept_that_fits_and_frees_its_room() {
        let spare = Spare::new(10);
        for (item, bytes) in [(1, 2), (20, 2), (3, 2), (40, 2)] {
            assert_eq!(spare.keep(item, bytes), Ok(()));
        }
        assert_eq!(spare.take_if(|&x| x < 10), Some(3));
        assert_eq!(spare.take_if(|&x| x > 100), None);
        assert_eq!(spare.keep(5, 4), Ok(()), "3's two bytes came free");
        assert_eq!(spare.keep(6, 1), Err(6));
        assert_eq!((spare.take(), spare.take(), spare.take(), spare.take(), spare.take()), (Some(5), Some(40), Some(20), Some(1), None));
    }
}
