//! Global memory: a set of allocations with exact bounds, materialised lazily
//! page by page so that a launch declaring gigabytes and touching a little
//! costs only what it touches.
//!
//! Blocks run in parallel, so page words are atomics accessed with `Relaxed`
//! ordering (plain moves on x86): racing kernels get some interleaving of
//! their stores, never undefined behaviour in the simulator. Accesses of
//! 1, 2, 4 and 8 bytes go through atomics of that width at natural alignment.

use std::ptr::NonNull;
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, AtomicU8, Ordering::Relaxed};
use std::sync::{Arc, Mutex, OnceLock};
use warpsim_ir::set_bits;

pub const PAGE_SHIFT: u32 = 16;
pub const PAGE_SIZE: u64 = 1 << PAGE_SHIFT;
const WORDS_PER_PAGE: usize = (PAGE_SIZE / 8) as usize;

/// First address handed out for global allocations (generic == global here).
pub const GLOBAL_BASE: u64 = 0x7f00_0000_0000;
pub use warpsim_ir::window::{LOCAL_WINDOW, SHARED_WINDOW, WINDOW_SIZE};
/// `$call` with the constant `$S` bound to the access size `size` (1, 2, 4,
/// anything else 8): one run-time size turned into a const generic.
macro_rules! with_size {
    ($size:expr, $S:ident => $call:expr) => {
        match $size {
            1 => {
                const $S: u32 = 1;
                $call
            }
            2 => {
                const $S: u32 = 2;
                $call
            }
            4 => {
                const $S: u32 = 4;
                $call
            }
            _ => {
                const $S: u32 = 8;
                $call
            }
        }
    };
}

/// Guard gap between allocations, so a one-past-the-end access never lands in a neighbour.
const ALLOC_GAP: u64 = PAGE_SIZE;

/// Produces an allocation's initial bytes on demand.
pub trait Filler: Send + Sync {
    /// Writes the bytes at `[byte_offset, byte_offset + out.len())` of the allocation:
    /// every byte of `out` (a page may come from a freed allocation's memory, not zeroed).
    fn fill(&self, byte_offset: u64, out: &mut [u8]);

    /// The naturally aligned `size`-byte value (1, 2, 4 or 8 bytes, zero-extended)
    /// at each of `offsets`, into `out`: a warp's load from a page nothing has
    /// stored to asks for all its lanes in one call.
    fn gather(&self, size: u32, offsets: &[u64], out: &mut [u64]) {
        for (o, &off) in out.iter_mut().zip(offsets) {
            let mut b = [0u8; 8];
            self.fill(off, &mut b[..size as usize]);
            *o = u64::from_le_bytes(b);
        }
    }

    /// [`Filler::gather`] at the offsets `first + j * step` (wrapping) for each
    /// `out[j]`: a full warp whose lanes stand a fixed stride apart, the common
    /// case, lets an initialiser compute its elements from an index progression.
    fn gather_affine(&self, size: u32, first: u64, step: u64, out: &mut [u64]) {
        gather_progression(self, size, first, step, out)
    }

    /// [`Filler::gather_affine`] for elements of at most 4 bytes, as 32-bit
    /// words: a load into 32-bit registers takes them with no widening here
    /// and no narrowing in the engine. By default, through `gather_affine`.
    fn gather_affine32(&self, size: u32, first: u64, step: u64, out: &mut [u32]) {
        let mut wide = [0u64; 64];
        for (c, chunk) in out.chunks_mut(64).enumerate() {
            let wide = &mut wide[..chunk.len()];
            self.gather_affine(size, first.wrapping_add(step.wrapping_mul(c as u64 * 64)), step, wide);
            for (o, &x) in chunk.iter_mut().zip(wide.iter()) {
                *o = x as u32;
            }
        }
    }

    /// [`Filler::gather_affine32`] for each column `out[k]`, whose progression
    /// starts at `first + k * gap` (wrapping): a warp's vector load asks for
    /// all its elements in one call.
    fn gather_columns32(&self, size: u32, first: u64, gap: u64, step: u64, out: &mut [&mut [u32]]) {
        for (k, o) in out.iter_mut().enumerate() {
            self.gather_affine32(size, first.wrapping_add(gap.wrapping_mul(k as u64)), step, o);
        }
    }
}

/// A register word a warp's load writes: `u64`, or `u32` for elements of at
/// most 4 bytes (a load into 32-bit registers then never widens and narrows).
pub trait LoadWord: Copy + Default + 'static {
    /// The low bits of an element's (zero-extended) value.
    fn from_bits(x: u64) -> Self;
    /// [`Filler::gather`] into words of this width.
    fn gather(f: &dyn Filler, size: u32, offsets: &[u64], out: &mut [Self]);
    /// [`Filler::gather_affine`] into words of this width.
    fn gather_affine(f: &dyn Filler, size: u32, first: u64, step: u64, out: &mut [Self]);
    /// [`Filler::gather_columns32`] into words of this width.
    fn gather_columns<const W: usize, const N: usize>(f: &dyn Filler, size: u32, first: u64, gap: u64, step: u64, out: [&mut [Self; W]; N]);
}

impl LoadWord for u64 {
    #[inline(always)]
    fn from_bits(x: u64) -> u64 {
        x
    }

    #[inline(always)]
    fn gather(f: &dyn Filler, size: u32, offsets: &[u64], out: &mut [u64]) {
        f.gather(size, offsets, out)
    }

    #[inline(always)]
    fn gather_affine(f: &dyn Filler, size: u32, first: u64, step: u64, out: &mut [u64]) {
        f.gather_affine(size, first, step, out)
    }

    #[inline(always)]
    fn gather_columns<const W: usize, const N: usize>(f: &dyn Filler, size: u32, first: u64, gap: u64, step: u64, out: [&mut [u64; W]; N]) {
        for (k, o) in out.into_iter().enumerate() {
            f.gather_affine(size, first.wrapping_add(gap.wrapping_mul(k as u64)), step, o);
        }
    }
}

impl LoadWord for u32 {
    #[inline(always)]
    fn from_bits(x: u64) -> u32 {
        x as u32
    }

    #[inline(always)]
    fn gather(f: &dyn Filler, size: u32, offsets: &[u64], out: &mut [u32]) {
        let mut wide = [0u64; 64];
        for (offs, o) in offsets.chunks(64).zip(out.chunks_mut(64)) {
            let wide = &mut wide[..o.len()];
            f.gather(size, offs, wide);
            for (o, &x) in o.iter_mut().zip(wide.iter()) {
                *o = x as u32;
            }
        }
    }

    #[inline(always)]
    fn gather_affine(f: &dyn Filler, size: u32, first: u64, step: u64, out: &mut [u32]) {
        f.gather_affine32(size, first, step, out)
    }

    #[inline(always)]
    fn gather_columns<const W: usize, const N: usize>(f: &dyn Filler, size: u32, first: u64, gap: u64, step: u64, out: [&mut [u32; W]; N]) {
        f.gather_columns32(size, first, gap, step, &mut out.map(|c| c.as_mut_slice()))
    }
}

/// [`Filler::gather_affine`] through [`Filler::gather`], 64 offsets at a time.
pub fn gather_progression<F: Filler + ?Sized>(f: &F, size: u32, first: u64, step: u64, out: &mut [u64]) {
    let mut offs = [0u64; 64];
    for (c, chunk) in out.chunks_mut(64).enumerate() {
        let at = first.wrapping_add(step.wrapping_mul(c as u64 * 64));
        for (j, o) in offs[..chunk.len()].iter_mut().enumerate() {
            *o = at.wrapping_add(step.wrapping_mul(j as u64));
        }
        f.gather(size, &offs[..chunk.len()], chunk);
    }
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

/// A materialised page: [`WORDS_PER_PAGE`] words in its allocation's [`PageArena`].
#[derive(Copy, Clone)]
struct Page(NonNull<AtomicU64>);

// SAFETY: a page is a pointer to atomics that live as long as the arena that
// owns them (the allocation's), and atomics may be shared between threads.
unsafe impl Send for Page {}
// SAFETY: as for `Send`.
unsafe impl Sync for Page {}

/// Pages per arena chunk: 2 MiB, the x86 huge page.
const CHUNK_PAGES: usize = 32;

/// Where an allocation's materialised pages live: carved, in the order they
/// are first touched, from chunks of up to [`CHUNK_PAGES`] pages mapped
/// zeroed from the operating system. A chunk of 2 MiB is aligned and asks
/// for a transparent huge page, so first touching a whole output costs one
/// fault per 2 MiB instead of one per 4 KiB, and no page is zeroed twice (the
/// kernel zeroes it; a page allocated from the heap was zeroed again).
/// Pages are handed out densely, so an allocation touched sparsely still
/// holds only the pages it touched, rounded up to one chunk. Freed 2 MiB
/// chunks wait in [`SPARE_CHUNKS`] for the next allocation, already faulted
/// in: their pages are handed out dirty, for the caller to fill or zero.
struct PageArena {
    /// The allocation's page count: chunks never hold more pages than are left to materialise.
    npages: usize,
    /// The chunks (each with its page count), and how many pages the last has handed out.
    state: Mutex<(Vec<(Chunk, usize)>, usize)>,
}

impl PageArena {
    fn new(npages: usize) -> Self {
        PageArena { npages, state: Mutex::new((Vec::new(), 0)) }
    }

    /// A fresh page, and whether it holds a freed allocation's bytes (else it
    /// is zeroed); at most `npages` are ever asked for.
    fn take(&self) -> (NonNull<AtomicU64>, bool) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let (chunks, used) = &mut *st;
        if chunks.last().is_none_or(|&(_, n)| *used == n) {
            let given: usize = chunks.iter().map(|&(_, n)| n).sum();
            let n = self.npages.saturating_sub(given).clamp(1, CHUNK_PAGES);
            let chunk = Chunk::obtain(n * PAGE_SIZE as usize);
            let n = chunk.pages();
            chunks.push((chunk, n));
            *used = 0;
        }
        let (chunk, _) = chunks.last().expect("a chunk was pushed if there was none");
        // SAFETY: `used < n`, so the page lies inside the chunk.
        let p = unsafe { chunk.at.as_ptr().add(*used * PAGE_SIZE as usize) };
        *used += 1;
        // SAFETY: a chunk's pointer is not null, nor is an offset into it; chunks are page-aligned.
        (unsafe { NonNull::new_unchecked(p as *mut AtomicU64) }, chunk.dirty)
    }
}

/// Freed 2 MiB chunks kept for the next allocation (at most 64 MiB):
/// a program or a benchmark that allocates and frees buffers launch after launch
/// reuses memory already faulted in, instead of having the kernel zero fresh huge
/// pages each time (a quarter of a functional `copy_f4` launch's time here).
#[cfg(unix)]
static SPARE_CHUNKS: crate::spare::Spare<Chunk> = crate::spare::Spare::new(64 << 20);

/// Zeroed memory from the operating system (or, where mapping fails, the
/// heap), freed on drop.
struct Chunk {
    at: NonNull<u8>,
    len: usize,
    /// Mapped with `mmap` (unmapped on drop), or allocated from the heap.
    mapped: bool,
    /// Taken from [`SPARE_CHUNKS`]: it holds a freed allocation's bytes.
    dirty: bool,
}

// SAFETY: a chunk is plain memory owned by its arena.
unsafe impl Send for Chunk {}
// SAFETY: as for `Send`; the arena hands each page out once, behind a lock.
unsafe impl Sync for Chunk {}

/// The transparent huge page size (x86-64, aarch64 with 4 KiB pages).
#[cfg(unix)]
const HUGE_PAGE: usize = 2 << 20;

impl Chunk {
    /// `len` bytes (a multiple of [`PAGE_SIZE`], not 0), page-aligned: a
    /// spare 2 MiB chunk (`dirty`) when one is kept, else zeroed memory.
    /// The simulator runs inside users' processes (the driver library,
    /// Python), so a failed mapping is no reason to abort: the heap is tried
    /// next, then a single page. Only a heap that cannot give one page ends
    /// the process, as any allocation of the same size would.
    fn obtain(len: usize) -> Chunk {
        #[cfg(unix)]
        if len == HUGE_PAGE {
            if let Some(c) = SPARE_CHUNKS.take() {
                return c;
            }
        }
        #[cfg(unix)]
        if let Some(c) = Chunk::mapped(len) {
            return c;
        }
        Chunk::heap(len)
    }

    /// `len` zeroed bytes from the heap, page-aligned; a single page if `len`
    /// cannot be had.
    fn heap(len: usize) -> Chunk {
        use std::alloc::Layout;
        // SAFETY: a page's size is a power of two and a multiple of its alignment.
        let page = unsafe { Layout::from_size_align_unchecked(PAGE_SIZE as usize, PAGE_SIZE as usize) };
        let zeroed = |l: Layout| {
            // SAFETY: `l` has a non-zero size (`len` is at least a page).
            NonNull::new(unsafe { std::alloc::alloc_zeroed(l) })
        };
        let (p, layout) = match Layout::from_size_align(len, PAGE_SIZE as usize).ok().and_then(|l| Some((zeroed(l)?, l))) {
            Some(got) => got,
            None => (zeroed(page).unwrap_or_else(|| std::alloc::handle_alloc_error(page)), page),
        };
        Chunk { at: p, len: layout.size(), mapped: false, dirty: false }
    }

    /// `len` zeroed bytes mapped from the operating system, aligned to 2 MiB
    /// and advised as a huge page when `len` is 2 MiB; `None` if mapping fails.
    #[cfg(unix)]
    fn mapped(len: usize) -> Option<Chunk> {
        let huge = len == HUGE_PAGE;
        let map = if huge { len + HUGE_PAGE } else { len };
        // SAFETY: an anonymous private mapping has no preconditions; the result is checked.
        let p = unsafe {
            libc::mmap(std::ptr::null_mut(), map, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0)
        };
        if p == libc::MAP_FAILED || p.is_null() {
            return None;
        }
        let mut at = p as usize;
        if huge {
            // Keep the aligned 2 MiB inside the mapping; give back the rest.
            let start = at.next_multiple_of(HUGE_PAGE);
            // SAFETY: both ranges lie inside the mapping just made (`start - at < HUGE_PAGE`,
            // `start + len <= at + map`), and nothing refers to them.
            unsafe {
                if start > at {
                    libc::munmap(at as *mut libc::c_void, start - at);
                }
                if at + map > start + len {
                    libc::munmap((start + len) as *mut libc::c_void, at + map - start - len);
                }
            }
            at = start;
            #[cfg(target_os = "linux")]
            // SAFETY: advice on a range this chunk owns; failure (no huge pages) is harmless.
            unsafe {
                libc::madvise(at as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
            };
        }
        Some(Chunk { at: NonNull::new(at as *mut u8)?, len, mapped: true, dirty: false })
    }

    /// Pages in the chunk (a heap fallback may hold fewer than asked for).
    fn pages(&self) -> usize {
        self.len / PAGE_SIZE as usize
    }
}

impl Drop for Chunk {
    fn drop(&mut self) {
        // SAFETY: the chunk's memory came from `obtain` with this length (mapped or from the heap with
        // page alignment), and the pages carved from it die with their arena, which owns the chunk.
        unsafe {
            #[cfg(unix)]
            if self.mapped {
                if self.len == HUGE_PAGE {
                    // The memory moves to a chunk in the list; this one lets go of it.
                    match SPARE_CHUNKS.keep(Chunk { at: self.at, len: self.len, mapped: true, dirty: true }, HUGE_PAGE) {
                        Ok(()) => return,
                        // No room: unmapped below, once (not by the copy's own drop).
                        Err(copy) => std::mem::forget(copy),
                    }
                }
                libc::munmap(self.at.as_ptr() as *mut libc::c_void, self.len);
                return;
            }
            std::alloc::dealloc(self.at.as_ptr(), std::alloc::Layout::from_size_align_unchecked(self.len, PAGE_SIZE as usize));
        }
    }
}

pub struct Allocation {
    pub name: String,
    pub base: u64,
    pub size: u64,
    pages: Box<[OnceLock<Page>]>,
    filler: Option<Arc<dyn Filler>>,
    arena: PageArena,
}

impl Allocation {
    /// Page `index`'s words, materialising it (from the filler, or zeroed) on first use.
    fn page(&self, index: usize) -> &[AtomicU64] {
        let p = *self.pages[index].get_or_init(|| {
            let (words, dirty) = self.arena.take();
            // SAFETY: the page is fresh from the arena and not yet published, so its bytes are
            // this closure's alone; the words are read as atomics only after `OnceLock` publishes it.
            let page = unsafe { std::slice::from_raw_parts_mut(words.as_ptr() as *mut u8, PAGE_SIZE as usize) };
            // What the filler writes (all of it), then zeros past it on a reused page.
            let filled = match &self.filler {
                Some(f) => {
                    let start = index as u64 * PAGE_SIZE;
                    let len = (self.size - start).min(PAGE_SIZE) as usize;
                    f.fill(start, &mut page[..len]);
                    len
                }
                None => 0,
            };
            if dirty {
                page[filled..].fill(0);
            }
            Page(words)
        });
        // SAFETY: a page is `WORDS_PER_PAGE` words of the arena, which lives as long as `self`.
        unsafe { std::slice::from_raw_parts(p.0.as_ptr(), WORDS_PER_PAGE) }
    }

    /// Page `index`'s words if it was materialised.
    #[inline(always)]
    fn resident(&self, index: usize) -> Option<&[AtomicU64]> {
        // SAFETY: as in `page`.
        self.pages[index].get().map(|p| unsafe { std::slice::from_raw_parts(p.0.as_ptr() as *const AtomicU64, WORDS_PER_PAGE) })
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
        let Some(page) = self.resident((off >> PAGE_SHIFT) as usize) else {
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
            with_size!(size, S => load_sized::<S>(p))
        }
    }

    /// For each lane `l` in `mask`, loads the `size`-byte value at offset
    /// `addr[l] - sub` into `out[l]` (other lanes' values are unspecified): a
    /// warp's access, with the page looked up once per run of lanes in one
    /// page and one [`Filler::gather`] for the lanes on pages nothing has
    /// stored to.
    ///
    /// `page`, when known (from [`GlobalMemory::warp_span`]), is the page
    /// holding every active lane's bytes; `None` finds out.
    ///
    /// # Safety
    /// `size` is 1, 2, 4 or 8 and, for every lane in `mask`, the offset is a
    /// multiple of `size` with `offset + size <= self.size`; with `page`
    /// `Some(p)`, every such offset lies in page `p`.
    #[inline]
    pub unsafe fn load_lanes<const W: usize>(
        &self,
        addr: &[u64; W],
        sub: u64,
        mask: u64,
        size: u32,
        page: Option<usize>,
        out: &mut [u64; W],
    ) {
        // SAFETY: the caller's guarantees, passed on.
        unsafe { with_size!(size, S => self.load_lanes_sized::<W, S, u64>(addr, sub, mask, page, out)) }
    }

    /// [`Allocation::load_lanes`] for a size known at compile time, into words `T`.
    ///
    /// # Safety
    /// As for [`Allocation::load_lanes`], with `S` the size (at most the word's).
    #[inline(always)]
    unsafe fn load_lanes_sized<const W: usize, const S: u32, T: LoadWord>(
        &self,
        addr: &[u64; W],
        sub: u64,
        mask: u64,
        page: Option<usize>,
        out: &mut [T; W],
    ) {
        if mask == 0 {
            return;
        }
        let Some(page) = page.or_else(|| one_page::<W>(addr, sub, mask)) else {
            // SAFETY: the caller's guarantees, passed on.
            return unsafe { self.load_lanes_paged::<W, S, T>(addr, sub, mask, out) };
        };
        // Every active lane in one page.
        match self.resident(page) {
            Some(p) => {
                let p = p.as_ptr() as *const u8;
                for l in 0..W {
                    // An active lane's offset is a multiple of `S` in this page, which the mask keeps;
                    // an inactive lane reads some aligned word of the page, and its value is unspecified.
                    let at = (addr[l].wrapping_sub(sub) & (PAGE_SIZE - S as u64)) as usize;
                    // SAFETY: `at + S <= PAGE_SIZE` and `at` is a multiple of `S`, so the atomic's
                    // pointer is aligned and inside the page, which outlives `&self`.
                    out[l] = T::from_bits(unsafe { load_sized::<S>(p.add(at)) });
                }
            }
            None => match &self.filler {
                Some(f) => {
                    if mask == u64::MAX >> (64 - W) {
                        // Every lane active: lanes a fixed stride apart go to the filler as a progression.
                        let step = addr[1].wrapping_sub(addr[0]);
                        if back_to_back::<W>(addr, step) {
                            return T::gather_affine(&**f, S, addr[0].wrapping_sub(sub), step, out);
                        }
                    }
                    // The filler sees only active lanes' offsets (an inactive lane takes the first active one's).
                    let first = addr[mask.trailing_zeros() as usize].wrapping_sub(sub);
                    let offs: [u64; W] = std::array::from_fn(|l| if mask >> l & 1 != 0 { addr[l].wrapping_sub(sub) } else { first });
                    T::gather(&**f, S, &offs, out)
                }
                None => *out = [T::default(); W],
            },
        }
    }

    /// [`Allocation::load_lanes_sized`] for lanes on several pages.
    ///
    /// # Safety
    /// As for [`Allocation::load_lanes`], with `S` the size.
    #[cold]
    unsafe fn load_lanes_paged<const W: usize, const S: u32, T: LoadWord>(&self, addr: &[u64; W], sub: u64, mask: u64, out: &mut [T; W]) {
        let mut missing = 0u64;
        let (mut at, mut page) = (usize::MAX, None::<*const u8>);
        for l in set_bits(mask) {
            let off = addr[l].wrapping_sub(sub);
            let pi = (off >> PAGE_SHIFT) as usize;
            if pi != at {
                at = pi;
                page = self.resident(pi).map(|p| p.as_ptr() as *const u8);
            }
            match page {
                // SAFETY: the offset is a multiple of `S` inside the allocation, so the `S` bytes lie
                // inside this page and the atomic's pointer is aligned; the page outlives `&self`.
                Some(p) => out[l] = T::from_bits(unsafe { load_sized::<S>(p.add((off & (PAGE_SIZE - 1)) as usize)) }),
                None => missing |= 1 << l,
            }
        }
        if missing == 0 {
            return;
        }
        let Some(f) = &self.filler else {
            for l in set_bits(missing) {
                out[l] = T::default();
            }
            return;
        };
        let (mut offs, mut vals, mut n) = ([0u64; W], [T::default(); W], 0);
        for l in set_bits(missing) {
            offs[n] = addr[l].wrapping_sub(sub);
            n += 1;
        }
        T::gather(&**f, S, &offs[..n], &mut vals[..n]);
        for (l, v) in set_bits(missing).zip(vals) {
            out[l] = v;
        }
    }

    /// For each lane `l` in `mask`, lowest first, stores the low `size` bytes
    /// of `v[l]` at offset `addr[l] - sub`, materialising pages as needed.
    ///
    /// # Safety
    /// As for [`Allocation::load_lanes`].
    #[inline]
    pub unsafe fn store_lanes<const W: usize>(&self, addr: &[u64; W], sub: u64, mask: u64, size: u32, page: Option<usize>, v: &[u64; W]) {
        // SAFETY: the caller's guarantees, passed on.
        unsafe { with_size!(size, S => self.store_lanes_sized::<W, S>(addr, sub, mask, page, v)) }
    }

    /// [`Allocation::store_lanes`] for a size known at compile time.
    ///
    /// # Safety
    /// As for [`Allocation::load_lanes`], with `S` the size.
    #[inline(always)]
    unsafe fn store_lanes_sized<const W: usize, const S: u32>(
        &self,
        addr: &[u64; W],
        sub: u64,
        mask: u64,
        page: Option<usize>,
        v: &[u64; W],
    ) {
        if mask == 0 {
            return;
        }
        if let Some(page) = page.or_else(|| one_page::<W>(addr, sub, mask)) {
            let p = self.page(page).as_ptr() as *const u8;
            if mask == u64::MAX >> (64 - W) {
                for (&a, &x) in addr.iter().zip(v) {
                    // SAFETY: as below, every lane being active.
                    unsafe { store_sized::<S>(p.add((a.wrapping_sub(sub) & (PAGE_SIZE - 1)) as usize), x) }
                }
                return;
            }
            for l in set_bits(mask) {
                // SAFETY: an active lane's offset is a multiple of `S` inside the allocation and in this
                // page, so the atomic's pointer is aligned; the page outlives `&self`.
                unsafe { store_sized::<S>(p.add((addr[l].wrapping_sub(sub) & (PAGE_SIZE - 1)) as usize), v[l]) }
            }
            return;
        }
        let (mut at, mut page) = (usize::MAX, std::ptr::null::<u8>());
        for l in set_bits(mask) {
            let off = addr[l].wrapping_sub(sub);
            let pi = (off >> PAGE_SHIFT) as usize;
            if pi != at {
                at = pi;
                page = self.page(pi).as_ptr() as *const u8;
            }
            // SAFETY: as in `load_lanes_sized`.
            unsafe { store_sized::<S>(page.add((off & (PAGE_SIZE - 1)) as usize), v[l]) }
        }
    }

    /// A warp's `N`-element vectors of `size`-byte elements at offsets
    /// `addr[l] - self.base`: element `k` of lane `l` into `out[k][l]` (other
    /// lanes' values are unspecified), as words `T` (`u32` only for `size` up
    /// to 4; the engine passes 32-bit register columns straight in). A full
    /// warp whose vectors lie back to back on a page nothing has stored to asks
    /// the filler for one progression per element, straight into `out[k]` (no
    /// per-element page or lane tests).
    ///
    /// # Safety
    /// `size` is 1, 2, 4 or 8 (at most `T`'s size) and, for every lane in
    /// `mask`, the offset is a multiple of `N * size` with its `N * size` bytes
    /// inside the allocation; with `page` `Some(p)`, inside page `p`.
    #[inline]
    pub unsafe fn load_vectors<const W: usize, const N: usize, T: LoadWord>(
        &self,
        addr: &[u64; W],
        mask: u64,
        size: u32,
        page: Option<usize>,
        out: [&mut [T; W]; N],
    ) {
        debug_assert!(size as usize <= size_of::<T>());
        // SAFETY: the caller's guarantees, passed on.
        unsafe { with_size!(size, S => self.load_vectors_sized::<W, N, S, T>(addr, mask, page, out)) }
    }

    /// [`Allocation::load_vectors`] for a size known at compile time.
    ///
    /// # Safety
    /// As for [`Allocation::load_vectors`], with `S` the size.
    #[inline(always)]
    unsafe fn load_vectors_sized<const W: usize, const N: usize, const S: u32, T: LoadWord>(
        &self,
        addr: &[u64; W],
        mask: u64,
        page: Option<usize>,
        out: [&mut [T; W]; N],
    ) {
        if let (true, Some(pi), Some(f)) = (N > 1 && mask == u64::MAX >> (64 - W), page, &self.filler) {
            if self.resident(pi).is_none() && back_to_back::<W>(addr, N as u64 * S as u64) {
                // Element `k` of every lane is the progression `first + k * S`, `N * S` apart.
                let first = addr[0].wrapping_sub(self.base);
                return T::gather_columns::<W, N>(&**f, S, first, S as u64, N as u64 * S as u64, out);
            }
        }
        for (k, o) in out.into_iter().enumerate() {
            // SAFETY: element `k` of each vector is a naturally aligned `S`-byte access in bounds.
            unsafe { self.load_lanes_sized::<W, S, T>(addr, self.base.wrapping_sub(k as u64 * S as u64), mask, page, o) }
        }
    }

    /// For each lane `l` in `mask`, lowest first, stores the low `size` bytes of
    /// `v[k][l]` as element `k` of the lane's `N`-element vector at offset
    /// `addr[l] - self.base`; `v` are register columns (`u32` or `u64`). A full
    /// warp whose vectors lie back to back from an 8-byte boundary goes eight
    /// bytes to a store (a pair of `f32`, not one each).
    ///
    /// # Safety
    /// As for [`Allocation::load_vectors`].
    #[inline]
    pub unsafe fn store_vectors<const W: usize, const N: usize, T: Copy + Into<u64>>(
        &self,
        addr: &[u64; W],
        mask: u64,
        size: u32,
        page: Option<usize>,
        v: [&[T; W]; N],
    ) {
        // SAFETY: the caller's guarantees, passed on.
        unsafe { with_size!(size, S => self.store_vectors_sized::<W, N, S, T>(addr, mask, page, v)) }
    }

    /// [`Allocation::store_vectors`] for a size known at compile time.
    ///
    /// # Safety
    /// As for [`Allocation::load_vectors`], with `S` the size.
    #[inline(always)]
    unsafe fn store_vectors_sized<const W: usize, const N: usize, const S: u32, T: Copy + Into<u64>>(
        &self,
        addr: &[u64; W],
        mask: u64,
        page: Option<usize>,
        v: [&[T; W]; N],
    ) {
        let first = addr[0].wrapping_sub(self.base);
        // Words hold their bytes in address order only on a little-endian host.
        let packable = S < 8 && cfg!(target_endian = "little") && (W * N * S as usize).is_multiple_of(8);
        if let (true, Some(pi)) = (packable && mask == u64::MAX >> (64 - W) && first.is_multiple_of(8), page) {
            if back_to_back::<W>(addr, N as u64 * S as u64) {
                // Disjoint lanes: the order of the stores does not matter.
                let per = 8 / S as usize;
                let bits = u64::MAX >> (64 - 8 * S);
                let p = self.page(pi).as_ptr() as *const u8;
                let at = (first & (PAGE_SIZE - 1)) as usize;
                if N.is_multiple_of(per) {
                    // Each lane's vector is whole words: word `g` of every lane is built for the
                    // warp at once, then stored. `black_box` keeps the words a vector build (zero
                    // extends, shifts and ors, eight lanes to two instructions each); seeing only
                    // scalar stores use them, LLVM packed each word with scalar loads and shifts.
                    let groups = N / per;
                    for g in 0..groups {
                        let mut x = [0u64; W];
                        for t in 0..per {
                            let (col, shift) = (v[g * per + t], 8 * S as usize * t);
                            for (x, &c) in x.iter_mut().zip(col) {
                                *x |= (c.into() & bits) << shift;
                            }
                        }
                        let x = std::hint::black_box(x);
                        for (l, &x) in x.iter().enumerate() {
                            // SAFETY: as below; word `l * groups + g` of the warp's bytes.
                            unsafe { store_sized::<8>(p.add(at + 8 * (l * groups + g)), x) }
                        }
                    }
                    return;
                }
                for w in 0..W * N / per {
                    let mut x = 0u64;
                    for t in 0..per {
                        let j = w * per + t;
                        x |= (v[j % N][j / N].into() & bits) << (8 * S as usize * t);
                    }
                    // SAFETY: the warp's `W * N * S` bytes lie back to back in page `pi` from `at`, a
                    // multiple of 8, so each word is aligned and inside the page, which outlives `&self`.
                    unsafe { store_sized::<8>(p.add(at + 8 * w), x) }
                }
                return;
            }
        }
        // Element by element, lanes in order: vectors are aligned to their whole size, so two
        // lanes' vectors are the same bytes or disjoint and the highest lane's value stays.
        for (k, col) in v.iter().enumerate() {
            let x: [u64; W] = std::array::from_fn(|l| col[l].into());
            // SAFETY: element `k` of each vector is a naturally aligned `S`-byte access in bounds.
            unsafe { self.store_lanes_sized::<W, S>(addr, self.base.wrapping_sub(k as u64 * S as u64), mask, page, &x) }
        }
    }

    /// Pages materialised so far (for memory accounting and tests).
    pub fn resident_pages(&self) -> usize {
        self.pages.iter().filter(|p| p.get().is_some()).count()
    }
}

/// The page holding every active lane's offset `addr[l] - sub`, when one
/// does; `mask` is not 0.
#[inline(always)]
fn one_page<const W: usize>(addr: &[u64; W], sub: u64, mask: u64) -> Option<usize> {
    let first = addr[mask.trailing_zeros() as usize].wrapping_sub(sub);
    let spread = active_or::<W>(addr, mask, |a| a.wrapping_sub(sub) ^ first);
    (spread < PAGE_SIZE).then_some((first >> PAGE_SHIFT) as usize)
}

/// Whether `addr[l] = addr[0] + l * step` for every lane (wrapping): a full
/// warp's vectors of `step` bytes back to back.
#[inline(always)]
fn back_to_back<const W: usize>(addr: &[u64; W], step: u64) -> bool {
    const L: usize = 4;
    if !W.is_multiple_of(L) {
        // Each lane's step from the one before: a subtract per lane.
        return (1..W).fold(0u64, |d, l| d | (addr[l].wrapping_sub(addr[l - 1]) ^ step)) == 0;
    }
    // Each lane against `addr[0] + l * step`, `L` lanes at a time from running sums (AVX2 has
    // no 64-bit multiply): a vector xor, or and add per `L` lanes, which the fold over
    // neighbours' differences did not become.
    let mut want: [u64; L] = std::array::from_fn(|i| addr[0].wrapping_add(step.wrapping_mul(i as u64)));
    let mut diff = [0u64; L];
    for c in 0..W / L {
        for i in 0..L {
            diff[i] |= addr[c * L + i] ^ want[i];
            want[i] = want[i].wrapping_add(step.wrapping_mul(L as u64));
        }
    }
    diff == [0; L]
}

/// The bitwise or of `f(addr[l])` over the lanes in `mask`: where lanes'
/// values differ, in one pass without a compare (unsigned 64-bit min and max
/// cost a compare, a sign flip and a blend per four lanes).
#[inline(always)]
fn active_or<const W: usize>(addr: &[u64; W], mask: u64, f: impl Fn(u64) -> u64) -> u64 {
    let mut acc = 0u64;
    if mask == u64::MAX >> (64 - W) {
        // Every lane active (the common case): no lane select.
        for &a in addr {
            acc |= f(a);
        }
        return acc;
    }
    for (l, &a) in addr.iter().enumerate() {
        acc |= if mask >> l & 1 != 0 { f(a) } else { 0 };
    }
    acc
}

/// A relaxed atomic load of `S` (1, 2, 4 or 8) bytes, zero-extended.
///
/// # Safety
/// `p` points to `S` bytes of a live page, aligned to `S`.
#[inline(always)]
unsafe fn load_sized<const S: u32>(p: *const u8) -> u64 {
    // SAFETY: the caller's guarantee; every page word is an atomic, so any aligned part is one too.
    unsafe {
        match S {
            1 => (*(p as *const AtomicU8)).load(Relaxed) as u64,
            2 => (*(p as *const AtomicU16)).load(Relaxed) as u64,
            4 => (*(p as *const AtomicU32)).load(Relaxed) as u64,
            _ => (*(p as *const AtomicU64)).load(Relaxed),
        }
    }
}

/// A relaxed atomic store of the low `S` (1, 2, 4 or 8) bytes of `v`.
///
/// # Safety
/// As for [`load_sized`].
#[inline(always)]
unsafe fn store_sized<const S: u32>(p: *const u8, v: u64) {
    // SAFETY: as in `load_sized`.
    unsafe {
        match S {
            1 => (*(p as *const AtomicU8)).store(v as u8, Relaxed),
            2 => (*(p as *const AtomicU16)).store(v as u16, Relaxed),
            4 => (*(p as *const AtomicU32)).store(v as u32, Relaxed),
            _ => (*(p as *const AtomicU64)).store(v, Relaxed),
        }
    }
}

/// Where a warp's access lies: see [`GlobalMemory::warp_span`].
#[derive(Copy, Clone)]
pub struct WarpSpan<'m> {
    pub alloc: &'m Allocation,
    /// The page holding every active lane's bytes, when one does.
    pub page: Option<usize>,
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

    /// Memory whose allocations start at `base` (at least [`GLOBAL_BASE`], rounded
    /// up to a page): the driver library puts them in an address range it
    /// reserved from the host. Every allocation's base is page-aligned, so
    /// an aligned access never crosses a page.
    pub fn with_base(base: u64) -> Self {
        GlobalMemory { allocs: Vec::new(), next: base.max(GLOBAL_BASE).next_multiple_of(PAGE_SIZE) }
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
        self.allocs.push(Allocation {
            name: name.to_string(),
            base,
            size,
            pages: (0..npages).map(|_| OnceLock::new()).collect(),
            filler,
            arena: PageArena::new(npages),
        });
        base
    }

    pub fn allocations(&self) -> &[Allocation] {
        &self.allocs
    }

    /// Memory with the same allocations (bases, sizes, names), zero-filled
    /// and with no page materialised: code that only writes global memory
    /// faults in it exactly where it would here (the timing model runs
    /// such code in a scratch copy and applies the writes later, in order).
    pub fn same_layout(&self) -> GlobalMemory {
        let allocs = self
            .allocs
            .iter()
            .map(|a| Allocation {
                name: a.name.clone(),
                base: a.base,
                size: a.size,
                pages: (0..a.pages.len()).map(|_| OnceLock::new()).collect(),
                filler: None,
                arena: PageArena::new(a.pages.len()),
            })
            .collect();
        GlobalMemory { allocs, next: self.next }
    }

    /// Where a warp's access lies when every active lane's `bytes` (at most
    /// `align`, a power of two) at `addr[l]` are aligned to `align` and inside
    /// one allocation: that allocation, and the page holding them all when
    /// one does. `None` for an empty `mask` or any other access (the caller
    /// then goes lane by lane, which finds the faulting lane).
    #[inline]
    pub fn warp_span<const W: usize>(&self, addr: &[u64; W], mask: u64, bytes: u32, align: u32) -> Option<WarpSpan<'_>> {
        debug_assert!(align.is_power_of_two() && bytes <= align && align as u64 <= PAGE_SIZE);
        if mask == 0 {
            return None;
        }
        let first = addr[mask.trailing_zeros() as usize];
        let alloc = self.find(first)?;
        let rel = first - alloc.base;
        // The bits in which some active lane's offset differs from the first's. Every offset is
        // aligned exactly when the first's is and no lane's low bits differ from its (the base is
        // page-aligned, so an offset is aligned exactly when its address is).
        let spread = active_or::<W>(addr, mask, |a| a.wrapping_sub(alloc.base) ^ rel);
        if (spread | rel) & (align as u64 - 1) != 0 {
            return None;
        }
        let page_start = rel & !(PAGE_SIZE - 1);
        if spread < PAGE_SIZE && page_start + PAGE_SIZE <= alloc.size {
            // All in the first lane's page, which lies wholly inside the allocation; an aligned
            // access of at most `align` bytes never crosses a page's end.
            return Some(WarpSpan { alloc, page: Some((rel >> PAGE_SHIFT) as usize) });
        }
        let (mut lo, mut hi) = (u64::MAX, 0u64);
        for (l, &a) in addr.iter().enumerate() {
            let on = mask >> l & 1 != 0;
            let o = a.wrapping_sub(alloc.base);
            lo = if on { lo.min(o) } else { lo };
            hi = if on { hi.max(o) } else { hi };
        }
        // Offsets wrap below the base, so `lo <= rel` and `hi` in bounds mean every lane is inside.
        if hi.checked_add(bytes as u64)? > alloc.size {
            return None;
        }
        let page = (lo >> PAGE_SHIFT == hi >> PAGE_SHIFT).then_some((lo >> PAGE_SHIFT) as usize);
        Some(WarpSpan { alloc, page })
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
        unsafe { with_size!(size, S => store_sized::<S>(p, v)) }
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
            match a.resident(pi) {
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

    /// `warp_span` against a lane-by-lane reference: random warps near page
    /// and allocation edges, partial masks, misaligned and foreign lanes;
    /// then the warp's load and store through the span equal single ones.
    /// The heap chunk (where mapping fails) is zeroed, page-aligned and freed as a heap block.
    #[test]
    fn heap_chunks_are_zeroed_and_aligned() {
        for pages in [1, 3, CHUNK_PAGES] {
            let c = Chunk::heap(pages * PAGE_SIZE as usize);
            assert!(!c.mapped);
            assert_eq!(c.pages(), pages);
            assert!((c.at.as_ptr() as usize).is_multiple_of(PAGE_SIZE as usize));
            // SAFETY: the chunk holds `len` bytes.
            let bytes = unsafe { std::slice::from_raw_parts(c.at.as_ptr(), c.len) };
            assert!(bytes.iter().all(|&b| b == 0));
        }
    }

    #[test]
    fn arena_pages_are_distinct_zeroed_and_filled() {
        // 70 pages: chunks of 32, 32 and 6, handed out in the order pages are touched.
        let mut m = GlobalMemory::new();
        let n = 70u64;
        let z = m.alloc("z", n * PAGE_SIZE - 24, None);
        let f = m.alloc("f", n * PAGE_SIZE, Some(Arc::new(Iota)));
        let t = m.alloc("t", 16, None);
        let mut rng = crate::rng::numbers(0xa7e);
        let mut order: Vec<u64> = (0..n).collect();
        for i in (1..order.len()).rev() {
            order.swap(i, rng() as usize % (i + 1));
        }
        for &p in &order {
            let at = p * PAGE_SIZE + (rng() % (PAGE_SIZE / 8 - 4)) * 8;
            // A fresh zeroed page; the filler's bytes around the store.
            assert_eq!(m.load(z + at + 8, 8).unwrap(), 0, "page {p}");
            m.store(z + at, 8, p + 1).unwrap();
            m.store(f + at, 4, 0xdead_0000 + p).unwrap();
            assert_eq!(m.load(f + at + 4, 4).unwrap(), u32::from_le_bytes(std::array::from_fn(|i| (at + 4 + i as u64) as u8)) as u64);
        }
        m.store(t + 8, 8, 7).unwrap();
        for &p in &order {
            let page = m.allocations()[0].page(p as usize);
            let nonzero: Vec<u64> = page.iter().map(|w| w.load(Relaxed)).filter(|&w| w != 0).collect();
            assert_eq!(nonzero, vec![p + 1], "page {p} holds only its own store");
        }
        assert_eq!(m.allocations()[0].resident_pages(), n as usize);
        assert_eq!(m.load(t + 8, 8).unwrap(), 7);
        assert_eq!(m.load(t, 8).unwrap(), 0);
        assert!(m.free(z) && m.free(f));
        assert_eq!(m.load(t + 8, 8).unwrap(), 7);
    }

    /// Pages carved from freed allocations' chunks read as fresh memory: zero where
    /// nothing fills them; the filler's bytes, and zeros past the allocation's end,
    /// where one does.
    #[test]
    fn reused_chunks_read_as_fresh_memory() {
        let n = CHUNK_PAGES as u64;
        let mut reused = 0;
        for _ in 0..3 {
            let mut m = GlobalMemory::new();
            let (a, b) = (m.alloc("a", n * PAGE_SIZE, None), m.alloc("b", n * PAGE_SIZE, Some(Arc::new(Iota))));
            for base in [a, b] {
                for w in 0..n * PAGE_SIZE / 8 {
                    m.store(base + w * 8, 8, u64::MAX).unwrap();
                }
            }
            let freed: Vec<*const AtomicU64> = (0..2).map(|i| m.allocations()[i].page(0).as_ptr()).collect();
            assert!(m.free(a) && m.free(b));
            let end = n * PAGE_SIZE - 20;
            m.alloc("z", n * PAGE_SIZE, None);
            m.alloc("f", end, Some(Arc::new(Iota)));
            for p in 0..n as usize {
                let z = m.allocations()[0].page(p);
                assert!(z.iter().all(|w| w.load(Relaxed) == 0), "z page {p}");
                let f = m.allocations()[1].page(p);
                for (i, w) in f.iter().enumerate() {
                    let at = (p * PAGE_SIZE as usize + i * 8) as u64;
                    let want = u64::from_le_bytes(std::array::from_fn(|k| if at + (k as u64) < end { (at + k as u64) as u8 } else { 0 }));
                    assert_eq!(w.load(Relaxed), want, "f page {p} word {i}");
                }
            }
            // (Other tests running beside this one may take a freed chunk first.)
            reused += (0..2).filter(|&i| freed.contains(&m.allocations()[i].page(0).as_ptr())).count();
        }
        assert!(reused > 0, "no freed chunk was reused");
    }

    /// `load_vectors`/`store_vectors` (one progression for a full warp's back-to-back
    /// vectors on an untouched page, eight bytes to a store) against element-by-element
    /// single accesses, on random warps: back to back or not, full or partial, fresh,
    /// materialised and zero pages, page edges.
    #[test]
    fn vectors_equal_element_by_element() {
        fn check<const N: usize>(m: &GlobalMemory, addr: &[u64; 32], mask: u64, size: u32, rng: &mut impl FnMut() -> u64, round: usize) {
            let bytes = size * N as u32;
            let Some(span) = m.warp_span(addr, mask, bytes, bytes.next_power_of_two()) else { return };
            let mut got = [[0u64; 32]; N];
            // SAFETY: `warp_span` checked bounds, alignment and the page.
            unsafe { span.alloc.load_vectors::<32, N, u64>(addr, mask, size, span.page, got.each_mut()) };
            let mut got32 = [[0u32; 32]; N];
            if size <= 4 {
                // SAFETY: as above, with elements of at most 4 bytes.
                unsafe { span.alloc.load_vectors::<32, N, u32>(addr, mask, size, span.page, got32.each_mut()) };
            }
            for l in set_bits(mask) {
                for (k, g) in got.iter().enumerate() {
                    let want = m.load(addr[l] + k as u64 * size as u64, size).unwrap();
                    assert_eq!(g[l], want, "round {round} lane {l} element {k}");
                    if size <= 4 {
                        assert_eq!(got32[k][l] as u64, want, "32-bit words: round {round} lane {l} element {k}");
                    }
                }
            }
            let v: [[u64; 32]; N] = std::array::from_fn(|_| std::array::from_fn(|_| rng()));
            // SAFETY: as above.
            unsafe { span.alloc.store_vectors::<32, N, u64>(addr, mask, size, span.page, std::array::from_fn(|k| &v[k])) };
            for l in set_bits(mask) {
                let last = set_bits(mask).filter(|&j| addr[j] == addr[l]).last().unwrap();
                for (k, x) in v.iter().enumerate() {
                    let want = x[last] & (u64::MAX >> (64 - size * 8));
                    assert_eq!(m.load(addr[l] + k as u64 * size as u64, size).unwrap(), want, "round {round} lane {l} element {k}");
                }
            }
            if size <= 4 {
                // The engine's 32-bit register columns, stored in place.
                let v: [[u32; 32]; N] = std::array::from_fn(|_| std::array::from_fn(|_| rng() as u32));
                // SAFETY: as above.
                unsafe { span.alloc.store_vectors::<32, N, u32>(addr, mask, size, span.page, std::array::from_fn(|k| &v[k])) };
                for l in set_bits(mask) {
                    let last = set_bits(mask).filter(|&j| addr[j] == addr[l]).last().unwrap();
                    for (k, x) in v.iter().enumerate() {
                        let want = x[last] as u64 & (u64::MAX >> (64 - size * 8));
                        let got = m.load(addr[l] + k as u64 * size as u64, size).unwrap();
                        assert_eq!(got, want, "32-bit columns: round {round} lane {l} element {k}");
                    }
                }
            }
        }
        let mut rng = crate::rng::numbers(0xc0b1);
        for round in 0..3000 {
            // Fresh memory every few rounds, so untouched (filler) pages keep coming.
            let mut m = GlobalMemory::new();
            let a = m.alloc("a", 3 * PAGE_SIZE + 96, Some(Arc::new(Iota)));
            let z = m.alloc("z", 2 * PAGE_SIZE, None);
            if round % 3 == 0 {
                m.store(a + PAGE_SIZE + 8, 8, 0x0102_0304_0506_0708).unwrap(); // page 1 materialised
            }
            let (size, n) = [(1u32, 1usize), (2, 1), (4, 1), (8, 1), (1, 2), (2, 2), (4, 2), (8, 2), (1, 4), (2, 4), (4, 4)][round % 11];
            let vec = size as u64 * n as u64;
            let base = [a, a + PAGE_SIZE - 64 * vec, a + PAGE_SIZE, z, z + PAGE_SIZE - 32 * vec, a + 8, a + 4][rng() as usize % 7];
            let mut addr: [u64; 32] = std::array::from_fn(|l| base.wrapping_add(l as u64 * vec));
            match rng() % 4 {
                0 => {}
                1 => addr.iter_mut().for_each(|x| *x = base + (rng() % 64) * vec),
                2 => addr.swap(3, 7),
                _ => addr.iter_mut().enumerate().for_each(|(l, x)| *x = base + l as u64 * 2 * vec),
            }
            let mask = if rng().is_multiple_of(3) { rng() & u64::from(u32::MAX) } else { u64::from(u32::MAX) };
            match n {
                1 => check::<1>(&m, &addr, mask, size, &mut rng, round),
                2 => check::<2>(&m, &addr, mask, size, &mut rng, round),
                _ => check::<4>(&m, &addr, mask, size, &mut rng, round),
            }
        }
    }

    #[test]
    fn warp_span_equals_lane_by_lane() {
        let mut m = GlobalMemory::new();
        let a = m.alloc("a", 3 * PAGE_SIZE + 96, Some(Arc::new(Iota)));
        let b = m.alloc("b", 2 * PAGE_SIZE, None);
        m.store(a + PAGE_SIZE + 8, 8, 0x0102_0304_0506_0708).unwrap(); // page 1 materialised
        let mut rng = crate::rng::numbers(0x5eed);
        let edges =
            [a, a + PAGE_SIZE - 64, a + 2 * PAGE_SIZE - 32, a + 3 * PAGE_SIZE + 80, b + PAGE_SIZE - 16, b + 2 * PAGE_SIZE - 16, a - 64];
        for round in 0..4000 {
            let (size, n) = [(1u32, 1u32), (2, 1), (4, 1), (8, 1), (4, 2), (4, 4), (8, 2)][round % 7];
            let (bytes, align) = (size * n, size * n);
            let centre = edges[rng() as usize % edges.len()];
            let spread = [8u64, 64, 512, 1 << 17][rng() as usize % 4];
            let mut addr = [0u64; 32];
            for x in &mut addr {
                let off = (rng() % spread) & !(align as u64 - 1);
                *x = centre.wrapping_add(off);
                if rng().is_multiple_of(200) {
                    *x += 1; // misaligned
                }
            }
            if round % 4 == 3 {
                // Lanes a fixed stride apart (the filler's progression when all are active).
                let step = [0, size as u64, align as u64, 4 * align as u64, 40][rng() as usize % 5];
                let start = centre.wrapping_add((rng() % spread) & !(align as u64 - 1));
                for (l, x) in addr.iter_mut().enumerate() {
                    *x = start.wrapping_add(l as u64 * step);
                }
            }
            if round % 5 == 0 {
                // The highest lane exactly at, or one element past, the end of `a`.
                addr[31] = a + 3 * PAGE_SIZE + 96 - bytes as u64 + (rng() % 2) * align as u64;
            }
            let mask = match round % 3 {
                0 => u64::from(u32::MAX),
                1 => rng() & u64::from(u32::MAX),
                _ => 1 << (rng() % 32),
            };
            let want = (mask != 0).then(|| {
                let lanes: Vec<u64> = set_bits(mask).map(|l| addr[l]).collect();
                let al = m.find(lanes[0])?;
                let inside = lanes.iter().all(|&x| x % align as u64 == 0 && x >= al.base && x + bytes as u64 <= al.base + al.size);
                inside.then(|| {
                    let pages: std::collections::BTreeSet<u64> = lanes.iter().map(|&x| (x - al.base) >> PAGE_SHIFT).collect();
                    (al.base, (pages.len() == 1).then(|| pages.first().copied().unwrap() as usize))
                })
            });
            let got = m.warp_span(&addr, mask, bytes, align).map(|s| (s.alloc.base, s.page));
            assert_eq!(got, want.flatten(), "round {round} mask {mask:#x} size {size} n {n}");
            let Some(span) = m.warp_span(&addr, mask, bytes, align) else { continue };
            let mut got = [0u64; 32];
            // SAFETY: `warp_span` checked bounds, alignment and the page.
            unsafe { span.alloc.load_lanes(&addr, span.alloc.base, mask, size, span.page, &mut got) };
            for l in set_bits(mask) {
                assert_eq!(got[l], m.load(addr[l], size).unwrap(), "round {round} lane {l}");
            }
            let v: [u64; 32] = std::array::from_fn(|_| rng());
            // SAFETY: as above.
            unsafe { span.alloc.store_lanes(&addr, span.alloc.base, mask, size, span.page, &v) };
            for l in set_bits(mask) {
                // The highest lane storing to an address wins.
                let last = set_bits(mask).filter(|&k| addr[k] == addr[l]).last().unwrap();
                assert_eq!(m.load(addr[l], size).unwrap(), v[last] & (u64::MAX >> (64 - size * 8)), "round {round} lane {l}");
            }
        }
    }

    #[test]
    fn lane_accesses_equal_single_ones_across_pages() {
        let mut m = GlobalMemory::new();
        let a = m.alloc("a", 3 * PAGE_SIZE, Some(Arc::new(Iota)));
        m.store(a + PAGE_SIZE + 64, 8, 0x0102_0304_0506_0708).unwrap(); // page 1 materialised, 0 and 2 not
        let alloc = m.find(a).unwrap();
        for size in [1u32, 2, 4, 8] {
            // Lanes straddle the three pages, out of order, two on the same address.
            let mut addr: [u64; 8] = [0, 7, 1, 2, 3, 0, 9, 17].map(|k| a + PAGE_SIZE - 16 + k * 8 * size as u64);
            addr[6] = a + 2 * PAGE_SIZE + 8 * size as u64;
            let mask = 0b1110_1111;
            let mut got = [u64::MAX; 8];
            // SAFETY: every address is aligned to `size` and inside the allocation.
            unsafe { alloc.load_lanes(&addr, a, mask, size, None, &mut got) };
            for l in 0..8 {
                let want = if mask >> l & 1 != 0 { m.load(addr[l], size).unwrap() } else { u64::MAX };
                assert_eq!(got[l], want, "size {size} lane {l}");
            }
            let v: [u64; 8] = std::array::from_fn(|l| 0x1111_1111_1111_1111 * (l as u64 + 1));
            // SAFETY: as above.
            unsafe { alloc.store_lanes(&addr, a, mask, size, None, &v) };
            assert_eq!(m.load(addr[5], size).unwrap(), v[5] & (u64::MAX >> (64 - size * 8)), "the higher lane's store stays");
            assert_eq!(m.load(addr[7], size).unwrap(), v[7] & (u64::MAX >> (64 - size * 8)));
        }
        assert_eq!(m.resident_bytes(), 3 * PAGE_SIZE);
        // All lanes in one page: unmaterialised (from the filler), then materialised.
        let mut m = GlobalMemory::new();
        let a = m.alloc("b", 2 * PAGE_SIZE, Some(Arc::new(Iota)));
        let alloc = m.find(a).unwrap();
        let addr: [u64; 8] = [3, 1, 4, 1, 5, 9, 2, 6].map(|k| a + PAGE_SIZE + k * 4);
        for round in 0..2 {
            let mut got = [0u64; 8];
            // SAFETY: aligned addresses inside the allocation.
            unsafe { alloc.load_lanes(&addr, a, 0b1011_0110, 4, None, &mut got) };
            for l in [1, 2, 4, 5, 7] {
                assert_eq!(got[l], m.load(addr[l], 4).unwrap(), "round {round} lane {l}");
            }
            m.store(a + PAGE_SIZE + 4, 4, 77).unwrap();
        }
    }
}
