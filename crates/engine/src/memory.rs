//! Global memory: a set of allocations with exact bounds, materialised lazily
//! page by page so that a launch declaring gigabytes and touching a little
//! costs only what it touches.
//!
//! Blocks run in parallel, so page words are atomics accessed with `Relaxed`
//! ordering (plain moves on x86): racing kernels get some interleaving of
//! their stores, never undefined behaviour in the simulator. Accesses of
//! 1, 2, 4 and 8 bytes go through atomics of that width at natural alignment.

use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, AtomicU8, Ordering::Relaxed};
use std::sync::{Arc, OnceLock};

pub const PAGE_SHIFT: u32 = 16;
pub const PAGE_SIZE: u64 = 1 << PAGE_SHIFT;
const WORDS_PER_PAGE: usize = (PAGE_SIZE / 8) as usize;

/// First address handed out for global allocations (generic == global here).
pub const GLOBAL_BASE: u64 = 0x7f00_0000_0000;
pub use warpsim_ir::window::{LOCAL_WINDOW, SHARED_WINDOW, WINDOW_SIZE};
/// Guard gap between allocations, so a one-past-the-end access never lands in a neighbour.
const ALLOC_GAP: u64 = PAGE_SIZE;

/// Produces an allocation's initial bytes on demand.
pub trait Filler: Send + Sync {
    /// Writes the bytes at `[byte_offset, byte_offset + out.len())` of the allocation.
    fn fill(&self, byte_offset: u64, out: &mut [u8]);
}

/// Initial bytes given inline (module-level `.global` initialisers).
pub struct BytesFiller(pub Vec<u8>);

impl Filler for BytesFiller {
    fn fill(&self, byte_offset: u64, out: &mut [u8]) {
        for (i, b) in out.iter_mut().enumerate() {
            *b = self.0.get(byte_offset as usize + i).copied().unwrap_or(0);
        }
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum MemFault {
    /// No allocation contains all of `[addr, addr + size)`.
    OutOfBounds { addr: u64, size: u32 },
    /// `addr` is not a multiple of the access size.
    Misaligned { addr: u64, size: u32 },
}

type Page = Box<[AtomicU64]>;

pub struct Allocation {
    pub name: String,
    pub base: u64,
    pub size: u64,
    pages: Box<[OnceLock<Page>]>,
    filler: Option<Arc<dyn Filler>>,
}

impl Allocation {
    fn page(&self, index: usize) -> &Page {
        self.pages[index].get_or_init(|| {
            let words: Page = (0..WORDS_PER_PAGE).map(|_| AtomicU64::new(0)).collect();
            if let Some(f) = &self.filler {
                let start = index as u64 * PAGE_SIZE;
                let len = (self.size - start).min(PAGE_SIZE) as usize;
                let mut bytes = vec![0u8; WORDS_PER_PAGE * 8];
                f.fill(start, &mut bytes[..len]);
                for (w, chunk) in words.iter().zip(bytes.chunks_exact(8)) {
                    w.store(u64::from_le_bytes(chunk.try_into().unwrap()), Relaxed);
                }
            }
            words
        })
    }

    /// Loads `size` bytes at byte offset `off`, without checks (the engine's
    /// fast path checks once for a whole warp).
    ///
    /// # Safety
    /// `size` is 1, 2, 4 or 8, `off` is a multiple of `size`, and
    /// `off + size <= self.size` (so the access lies within one page).
    #[inline]
    pub unsafe fn load_at(&self, off: u64, size: u32) -> u64 {
        debug_assert!(off + size as u64 <= self.size && off.is_multiple_of(size as u64));
        let in_page = (off & (PAGE_SIZE - 1)) as usize;
        let Some(page) = self.pages[(off >> PAGE_SHIFT) as usize].get() else {
            let mut b = [0u8; 8];
            if let Some(f) = &self.filler {
                f.fill(off, &mut b[..size as usize]);
            }
            return u64::from_le_bytes(b);
        };
        // SAFETY: the caller guarantees a naturally aligned access of 1, 2, 4 or 8 bytes, so
        // `in_page + size <= PAGE_SIZE` and the atomic's pointer is aligned; the page outlives `&self`.
        unsafe {
            let p = (page.as_ptr() as *const u8).add(in_page);
            match size {
                1 => (*(p as *const AtomicU8)).load(Relaxed) as u64,
                2 => (*(p as *const AtomicU16)).load(Relaxed) as u64,
                4 => (*(p as *const AtomicU32)).load(Relaxed) as u64,
                _ => (*(p as *const AtomicU64)).load(Relaxed),
            }
        }
    }

    /// Stores the low `size` bytes of `v` at byte offset `off`, without checks.
    ///
    /// # Safety
    /// As for [`Allocation::load_at`].
    #[inline]
    pub unsafe fn store_at(&self, off: u64, size: u32, v: u64) {
        debug_assert!(off + size as u64 <= self.size && off.is_multiple_of(size as u64));
        let page = self.page((off >> PAGE_SHIFT) as usize);
        let in_page = (off & (PAGE_SIZE - 1)) as usize;
        // SAFETY: as in `load_at`.
        unsafe {
            let p = (page.as_ptr() as *const u8).add(in_page);
            match size {
                1 => (*(p as *const AtomicU8)).store(v as u8, Relaxed),
                2 => (*(p as *const AtomicU16)).store(v as u16, Relaxed),
                4 => (*(p as *const AtomicU32)).store(v as u32, Relaxed),
                _ => (*(p as *const AtomicU64)).store(v, Relaxed),
            }
        }
    }

    /// Pages materialised so far (for memory accounting and tests).
    pub fn resident_pages(&self) -> usize {
        self.pages.iter().filter(|p| p.get().is_some()).count()
    }
}

#[derive(Default)]
pub struct GlobalMemory {
    allocs: Vec<Allocation>,
    next: u64,
}

impl GlobalMemory {
    pub fn new() -> Self {
        GlobalMemory { allocs: Vec::new(), next: GLOBAL_BASE }
    }

    /// Memory whose allocations start at `base` (at least [`GLOBAL_BASE`]): the
    /// driver library puts them in an address range it reserved from the host.
    pub fn with_base(base: u64) -> Self {
        GlobalMemory { allocs: Vec::new(), next: base.max(GLOBAL_BASE) }
    }

    /// Releases the allocation at `base` (its pages go; its addresses are not handed out again).
    pub fn free(&mut self, base: u64) -> bool {
        match self.allocs.binary_search_by_key(&base, |a| a.base) {
            Ok(i) => {
                self.allocs.remove(i);
                true
            }
            Err(_) => false,
        }
    }

    /// Reserves `size` bytes, zero-filled or filled by `filler`, and returns the base address.
    pub fn alloc(&mut self, name: &str, size: u64, filler: Option<Arc<dyn Filler>>) -> u64 {
        let base = self.next.max(GLOBAL_BASE);
        let npages = size.div_ceil(PAGE_SIZE) as usize;
        self.next = base + (npages as u64).max(1) * PAGE_SIZE + ALLOC_GAP;
        self.allocs.push(Allocation { name: name.to_string(), base, size, pages: (0..npages).map(|_| OnceLock::new()).collect(), filler });
        base
    }

    pub fn allocations(&self) -> &[Allocation] {
        &self.allocs
    }

    /// The allocation holding all of `[lo, hi)`, if one does.
    #[inline]
    pub fn find_range(&self, lo: u64, hi: u64) -> Option<&Allocation> {
        let a = self.find(lo)?;
        (hi - a.base <= a.size).then_some(a)
    }

    /// The allocation holding `addr`, if any.
    #[inline]
    pub fn find(&self, addr: u64) -> Option<&Allocation> {
        let i = self.allocs.partition_point(|a| a.base <= addr);
        let a = self.allocs.get(i.checked_sub(1)?)?;
        (addr - a.base < a.size).then_some(a)
    }

    /// The allocation holding the naturally aligned `size` bytes at `addr`, and their offset in it.
    #[inline]
    fn checked(&self, addr: u64, size: u32) -> Result<(&Allocation, u64), MemFault> {
        if addr & (size as u64 - 1) != 0 {
            return Err(MemFault::Misaligned { addr, size });
        }
        let a = self.find(addr).ok_or(MemFault::OutOfBounds { addr, size })?;
        let off = addr - a.base;
        if off + size as u64 > a.size {
            return Err(MemFault::OutOfBounds { addr, size });
        }
        Ok((a, off))
    }

    #[inline]
    fn locate(&self, addr: u64, size: u32) -> Result<*const u8, MemFault> {
        let (a, off) = self.checked(addr, size)?;
        let page = a.page((off >> PAGE_SHIFT) as usize);
        let in_page = (off & (PAGE_SIZE - 1)) as usize;
        // SAFETY: in_page + size <= PAGE_SIZE because the access is naturally aligned
        // and PAGE_SIZE is a multiple of every access size.
        Ok(unsafe { (page.as_ptr() as *const u8).add(in_page) })
    }

    /// Loads `size` (1, 2, 4 or 8) bytes, zero-extended. A page nothing has
    /// stored to is not materialised: the bytes come from the filler.
    #[inline]
    pub fn load(&self, addr: u64, size: u32) -> Result<u64, MemFault> {
        let (a, off) = self.checked(addr, size)?;
        // SAFETY: `addr` (so `off`, as `a.base` is page-aligned) is a multiple of `size` and
        // `off + size <= a.size`, both checked by `checked`.
        Ok(unsafe { a.load_at(off, size) })
    }

    /// Stores the low `size` (1, 2, 4 or 8) bytes of `v`.
    #[inline]
    pub fn store(&self, addr: u64, size: u32, v: u64) -> Result<(), MemFault> {
        let p = self.locate(addr, size)?;
        // SAFETY: `locate` returned a pointer to a naturally aligned, in-bounds word of a live page.
        unsafe {
            match size {
                1 => (*(p as *const AtomicU8)).store(v as u8, Relaxed),
                2 => (*(p as *const AtomicU16)).store(v as u16, Relaxed),
                4 => (*(p as *const AtomicU32)).store(v as u32, Relaxed),
                _ => (*(p as *const AtomicU64)).store(v, Relaxed),
            }
        }
        Ok(())
    }

    /// Atomically replaces the 4-byte word at `addr` by `f(old)` and returns `old`.
    #[inline]
    pub fn rmw32(&self, addr: u64, f: impl Fn(u32) -> u32) -> Result<u32, MemFault> {
        let p = self.locate(addr, 4)?;
        // SAFETY: `locate` returned a pointer to a naturally aligned, in-bounds word of a live page.
        let a = unsafe { &*(p as *const AtomicU32) };
        Ok(a.fetch_update(Relaxed, Relaxed, |old| Some(f(old))).unwrap())
    }

    /// Atomically replaces the 8-byte word at `addr` by `f(old)` and returns `old`.
    #[inline]
    pub fn rmw64(&self, addr: u64, f: impl Fn(u64) -> u64) -> Result<u64, MemFault> {
        let p = self.locate(addr, 8)?;
        // SAFETY: `locate` returned a pointer to a naturally aligned, in-bounds word of a live page.
        let a = unsafe { &*(p as *const AtomicU64) };
        Ok(a.fetch_update(Relaxed, Relaxed, |old| Some(f(old))).unwrap())
    }

    /// Atomically replaces the 2-byte word at `addr` by `f(old)` and returns `old`.
    #[inline]
    pub fn rmw16(&self, addr: u64, f: impl Fn(u16) -> u16) -> Result<u16, MemFault> {
        let p = self.locate(addr, 2)?;
        // SAFETY: `locate` returned a pointer to a naturally aligned, in-bounds word of a live page.
        let a = unsafe { &*(p as *const AtomicU16) };
        Ok(a.fetch_update(Relaxed, Relaxed, |old| Some(f(old))).unwrap())
    }

    /// The allocation whose page-rounded extent (its size rounded up to
    /// [`PAGE_SIZE`]) holds all of `[addr, addr + size)`, with the offset.
    /// A GPU serves such an access past the exact end (allocations are carved
    /// from larger pages); beyond the granule it faults.
    fn in_granule(&self, addr: u64, size: u32) -> Option<(&Allocation, u64)> {
        if addr & (size as u64 - 1) != 0 {
            return None;
        }
        let i = self.allocs.partition_point(|a| a.base <= addr);
        let a = self.allocs.get(i.checked_sub(1)?)?;
        let off = addr - a.base;
        (off + size as u64 <= a.pages.len() as u64 * PAGE_SIZE).then_some((a, off))
    }

    /// [`load`](Self::load) of an access past the exact end of an allocation
    /// but within its granule; `None` beyond it.
    pub fn load_past_end(&self, addr: u64, size: u32) -> Option<u64> {
        let (a, off) = self.in_granule(addr, size)?;
        let page = a.page((off >> PAGE_SHIFT) as usize);
        let in_page = (off & (PAGE_SIZE - 1)) as usize;
        let w = page[in_page / 8].load(Relaxed);
        Some((w >> ((in_page % 8) * 8)) & (u64::MAX >> (64 - size * 8)))
    }

    /// [`store`](Self::store) past the exact end, within the granule;
    /// `false` beyond it.
    pub fn store_past_end(&self, addr: u64, size: u32, v: u64) -> bool {
        let Some((a, off)) = self.in_granule(addr, size) else {
            return false;
        };
        let page = a.page((off >> PAGE_SHIFT) as usize);
        let in_page = (off & (PAGE_SIZE - 1)) as usize;
        let shift = (in_page % 8) * 8;
        let m = (u64::MAX >> (64 - size * 8)) << shift;
        let _ = page[in_page / 8].fetch_update(Relaxed, Relaxed, |w| Some((w & !m) | ((v << shift) & m)));
        true
    }

    /// Copies `[addr, addr + out.len())` out without materialising untouched pages.
    pub fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), MemFault> {
        let a = self.find(addr).ok_or(MemFault::OutOfBounds { addr, size: 1 })?;
        let off = addr - a.base;
        if off + out.len() as u64 > a.size {
            return Err(MemFault::OutOfBounds { addr, size: out.len() as u32 });
        }
        let mut done = 0usize;
        while done < out.len() {
            let pos = off + done as u64;
            let pi = (pos >> PAGE_SHIFT) as usize;
            let in_page = (pos & (PAGE_SIZE - 1)) as usize;
            let n = (PAGE_SIZE as usize - in_page).min(out.len() - done);
            let dst = &mut out[done..done + n];
            match a.pages[pi].get() {
                Some(words) => {
                    for (k, b) in dst.iter_mut().enumerate() {
                        let byte = in_page + k;
                        *b = (words[byte / 8].load(Relaxed) >> ((byte % 8) * 8)) as u8;
                    }
                }
                None => match &a.filler {
                    Some(f) => f.fill(pos, dst),
                    None => dst.fill(0),
                },
            }
            done += n;
        }
        Ok(())
    }

    /// Writes bytes into an allocation (used to load inputs from files).
    pub fn write(&self, addr: u64, data: &[u8]) -> Result<(), MemFault> {
        for (i, b) in data.iter().enumerate() {
            self.store(addr + i as u64, 1, *b as u64)?;
        }
        Ok(())
    }

    /// Bytes of pages materialised so far over all allocations.
    pub fn resident_bytes(&self) -> u64 {
        self.allocs.iter().map(|a| a.resident_pages() as u64 * PAGE_SIZE).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Iota;
    impl Filler for Iota {
        fn fill(&self, off: u64, out: &mut [u8]) {
            for (i, b) in out.iter_mut().enumerate() {
                *b = (off + i as u64) as u8;
            }
        }
    }

    #[test]
    fn exact_bounds_and_alignment() {
        let mut m = GlobalMemory::new();
        let a = m.alloc("a", 256, None);
        assert!(m.store(a + 252, 4, 7).is_ok());
        assert_eq!(m.load(a + 252, 4), Ok(7));
        assert_eq!(m.store(a + 256, 4, 1), Err(MemFault::OutOfBounds { addr: a + 256, size: 4 }));
        // Past the exact end but within the page: served by the *_past_end forms.
        assert!(m.store_past_end(a + 256, 2, 0xBEEF));
        assert_eq!(m.load_past_end(a + 256, 4), Some(0xBEEF));
        assert_eq!(m.load_past_end(a + PAGE_SIZE, 4), None);
        assert!(!m.store_past_end(a + PAGE_SIZE - 2, 4, 0));
        assert_eq!(m.load(a + 2, 4), Err(MemFault::Misaligned { addr: a + 2, size: 4 }));
        assert!(m.load(a - 4, 4).is_err());
    }

    #[test]
    fn lazy_pages_and_filler() {
        let mut m = GlobalMemory::new();
        let a = m.alloc("big", 1 << 32, Some(Arc::new(Iota)));
        let mut buf = [0u8; 4];
        m.read(a + 1000, &mut buf).unwrap();
        assert_eq!(buf, [232, 233, 234, 235]);
        assert_eq!(m.load(a + 1000, 4), Ok(0xEBEAE9E8));
        assert_eq!(m.resident_bytes(), 0, "loads do not materialise pages");
        assert_eq!(m.load(a + (3 << 30), 1), Ok(0));
        m.store(a + (3 << 30) + 8, 8, u64::MAX).unwrap();
        assert_eq!(m.resident_bytes(), PAGE_SIZE);
        assert_eq!(m.load(a + (3 << 30) + 9, 1), Ok(0xff));
    }
}
