//! Global memory's shadow, packed: per 4-byte word, a 4-byte slot for its
//! last write and one for its reads. A slot names a record of its page (the
//! warp instruction: block, thread base, time, pc, kind), the lane and the
//! bytes, so the 32 lanes of an instruction share one record. A page keeps
//! a sorted cell per touched word until many are touched, then an array of
//! write slots and one of read slots, each made on first use: a page only
//! read (or only written) costs 4 KiB, as much as its data. The full
//! [`Cell`] costs 32 bytes a word; faulting in and missing on that much
//! memory cost more wall time than the checks themselves.
//!
//! Slots decode to the [`Access`] values [`shadow::read`] and
//! [`shadow::write`] work on, and encode back: the checks are the same
//! code as for shared memory.

use crate::hb::Hb;
use crate::shadow::{self, Access, Cell, Hit, Sets, BYTES, DENSE, SET};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Words per page (4 KiB of data).
pub const PAGE_WORDS: u64 = 1024;
/// A page turns dense (slot arrays) once this many of its words are
/// touched; until then it keeps a sorted cell per touched word (a strided
/// pass over a large buffer stays small). At 256 a sparse page (12 bytes a
/// word, 3 KiB) still costs less than one 4 KiB slot array: a stride-8 pass
/// (128 words a page) made a zeroed array per page, 8 of 9 slots unused, and
/// the page faults of that memory cost more than the checks.
const DENSE_AFTER: usize = 256;
/// A warp touching at least this many words that fill a quarter of their
/// span or more (a contiguous or stride-4 pass, which will likely touch a
/// quarter of the page or more) makes its page dense at once.
const DENSE_WARP: usize = 32;

/// A slot: 0 for none; a read set ([`SET_BIT`], [`DENSE_BIT`], the set's
/// index below); or record index + 1 (bits 10..31), lane within its
/// 64-thread group (bits 4..10) and bytes of the word (bits 0..4).
const SET_BIT: u32 = 1 << 31;
const DENSE_BIT: u32 = 1 << 30;
const LANE_SHIFT: u32 = 4;
const REC_SHIFT: u32 = 10;
/// Records a page may hold before its first collection (then twice those
/// live). A collection visits the page's 2048 slots twice, so it waits for
/// at least 128 new records (2 KiB, half a page of data): at 64, a page
/// that a few blocks each touch with a load and two divergent stores a
/// warp spent more on collecting than on checking.
const GC_MIN: usize = 128;

/// What the lanes of one warp instruction share: block, first thread of
/// their 64-thread group, time, pc, and [`shadow::ATOMIC`]/[`shadow::WRITE`].
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
struct Rec {
    block: u32,
    tau: u32,
    pc: u32,
    base: u16,
    bits: u8,
}

impl Rec {
    #[inline(always)]
    fn of(a: &Access) -> Rec {
        Rec { block: a.block, tau: a.tau, pc: a.pc, base: a.tid & !63, bits: a.bits & !BYTES }
    }
}

/// A touched word of a sparse page.
#[derive(Copy, Clone, Debug, Default)]
struct Sparse {
    off: u16,
    w: u32,
    r: u32,
}

type Slots = Box<[u32; PAGE_WORDS as usize]>;

enum Cells {
    Sparse(Vec<Sparse>),
    Dense {
        w: Option<Slots>,
        r: Option<Slots>,
    },
    /// A page so far touched only by warp instructions whose lanes sit at
    /// a fixed stride, over disjoint spans (a pass over a buffer, strided or
    /// contiguous): the instructions, no slots. One inline (a strided pass
    /// touches each page once: no allocation), more in a list; turned into
    /// slots when touched otherwise.
    Run(Run),
    Runs(Vec<Run>),
}

/// One warp instruction's accesses of a fresh page: lanes `lane0..lane0 +
/// lanes` (thread numbers within their group of 64) access `nw` whole words
/// each, lane `k` from word `off + k * stride` (`stride >= nw`), recorded as
/// `rec` (the page's first record) would in a sparse page.
#[derive(Copy, Clone, Debug)]
struct Run {
    rec: Rec,
    off: u16,
    stride: u16,
    lanes: u8,
    nw: u8,
    lane0: u8,
    write: bool,
}

/// Runs a page may hold; the next access settles it.
const RUNS_MAX: usize = 32;

impl Run {
    /// The words the run spans, first to last.
    fn span(&self) -> usize {
        (self.lanes as usize - 1) * self.stride as usize + self.nw as usize
    }

    /// Its first word and the one past its last.
    fn ends(&self) -> (usize, usize) {
        (self.off as usize, self.off as usize + self.span())
    }
}

struct Page {
    recs: Vec<Rec>,
    /// Records at which the next collection runs.
    gc_at: usize,
    cells: Cells,
}

/// One warp instruction's accesses of whole words: lane `l` of `mask`
/// (thread `base + l`) accesses `words` words from `addrs[l]`, as `first`
/// (its block, bytes, kind, time and pc).
pub struct WarpAccess<'a> {
    pub first: Access,
    pub base: u32,
    pub mask: u64,
    pub addrs: &'a [u64],
    pub words: u64,
    pub write: bool,
    /// Words from one active lane's first to the next's, when the active
    /// lanes are consecutive and their words ascend without overlapping
    /// (`words <= stride < PAGE_WORDS`).
    pub stride: Option<u64>,
}

/// A record's slot bits (index + 1, shifted), for [`GlobalShadow::apply`].
#[derive(Copy, Clone, Debug)]
pub struct RecId(u32);

#[inline(always)]
fn decode(recs: &[Rec], s: u32) -> Access {
    if s == 0 {
        return Access::default();
    }
    if s & SET_BIT != 0 {
        let bits = SET | if s & DENSE_BIT != 0 { DENSE } else { 0 };
        return Access { bits, pc: s & !(SET_BIT | DENSE_BIT), tau: 1, ..Default::default() };
    }
    let Some(r) = recs.get(((s >> REC_SHIFT) as usize).wrapping_sub(1)) else { return Access::default() };
    Access { block: r.block, tid: r.base | ((s >> LANE_SHIFT) & 63) as u16, bits: r.bits | (s as u8 & BYTES), tau: r.tau, pc: r.pc }
}

/// The slot for `new`, which is `old` (held in `slot`), empty, a read set,
/// or the current access (`cur`, encoded): the only values a read or write
/// leaves in a cell.
#[inline(always)]
fn encode(new: &Access, old: &Access, slot: u32, cur: u32) -> u32 {
    if new == old {
        slot
    } else if new.empty() {
        0
    } else if new.bits & SET != 0 {
        // Set indices count live sets: far below 2^30.
        SET_BIT | if new.bits & DENSE != 0 { DENSE_BIT } else { 0 } | (new.pc & !(SET_BIT | DENSE_BIT))
    } else {
        cur
    }
}

/// `cur` (of record `rec`) checked against and recorded in the cell whose slots are `w` and `r`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn step(recs: &[Rec], w: &mut u32, r: &mut u32, cur: Access, rec: RecId, write: bool, hb: &Hb, sets: &mut Sets, hits: &mut Vec<Hit>) {
    let enc = rec.0 | (cur.tid as u32 & 63) << LANE_SHIFT | (cur.bits & BYTES) as u32;
    if *w == 0 && *r == 0 {
        // An untouched word (the common case): nothing to conflict with.
        if write {
            *w = enc;
        } else {
            *r = enc;
        }
        return;
    }
    // Earlier accesses by this thread only (its read before its write):
    // nothing to conflict with, and what `shadow::write` or `shadow::read`
    // leaves is known. A read slot whose bytes the access covers is replaced
    // (a read) or emptied (a write); a read that does not cover it makes a
    // read set, below.
    if (*w == 0 || same_thread(recs, *w, &cur)) && (*r == 0 || same_thread(recs, *r, &cur)) {
        let covered = *r as u8 & BYTES & !cur.bits == 0;
        if write {
            if covered {
                *r = 0;
            }
            *w = enc;
            return;
        }
        if covered {
            *r = enc;
            return;
        }
    }
    let old = Cell { w: decode(recs, *w), r: decode(recs, *r) };
    let mut cell = old;
    if write {
        shadow::write(&mut cell, cur, hb, sets, hits);
    } else {
        shadow::read(&mut cell, cur, hb, sets, hits);
    }
    *w = encode(&cell.w, &old.w, *w, enc);
    *r = encode(&cell.r, &old.r, *r, enc);
}

/// Whether slot `s` (not empty) is one access by `cur`'s thread.
#[inline(always)]
fn same_thread(recs: &[Rec], s: u32, cur: &Access) -> bool {
    s & SET_BIT == 0
        && ((s >> LANE_SHIFT) & 63) as u16 == cur.tid & 63
        && recs.get(((s >> REC_SHIFT) as usize).wrapping_sub(1)).is_some_and(|r| r.block == cur.block && r.base == cur.tid & !63)
}

/// Empty slots (zeroed by the allocator: untouched pages are not written).
fn zeroed() -> Slots {
    vec![0; PAGE_WORDS as usize].into_boxed_slice().try_into().unwrap_or_else(|_| Box::new([0; PAGE_WORDS as usize]))
}

/// A warp of consecutive lanes over consecutive words of a dense page
/// (`wa.stride == Some(wa.words)`): when none of the words was touched (the
/// common case), what the word-by-word path leaves, each slot the access's
/// own, written as one slice; nothing to report. False (nothing done) when
/// one was.
#[inline(always)]
fn fill_untouched(fill: &mut [u32; PAGE_WORDS as usize], other: &Option<Slots>, wa: &WarpAccess<'_>, rec: RecId) -> bool {
    let l0 = wa.mask.trailing_zeros() as usize;
    let Some(&a0) = wa.addrs.get(l0) else { return false };
    let (o0, nw) = (((a0 >> 2) % PAGE_WORDS) as usize, wa.words as usize);
    let len = wa.mask.count_ones() as usize * nw;
    let Some(fs) = fill.get_mut(o0..o0 + len) else { return false };
    // Or-reduced (vectorised) rather than stopping at the first touched word.
    let untouched = |s: &[u32]| s.iter().fold(0, |a, &x| a | x) == 0;
    if !untouched(fs) || other.as_ref().is_some_and(|o| o.get(o0..o0 + len).is_none_or(|os| !untouched(os))) {
        return false;
    }
    let tid0 = wa.first.tid as u32;
    let bytes = (wa.first.bits & BYTES) as u32;
    for (k, c) in fs.chunks_exact_mut(nw.max(1)).enumerate() {
        c.fill(rec.0 | ((tid0 + k as u32) & 63) << LANE_SHIFT | bytes);
    }
    true
}

impl Page {
    fn new() -> Page {
        Page { recs: Vec::new(), gc_at: GC_MIN, cells: Cells::Sparse(Vec::new()) }
    }

    /// The record of `cur`, added when it is not the last one.
    #[inline(always)]
    fn rec(&mut self, cur: &Access, scratch: &mut Vec<u32>) -> RecId {
        if let Cells::Run(_) | Cells::Runs(_) = self.cells {
            self.settle();
        }
        let r = Rec::of(cur);
        if self.recs.last() != Some(&r) {
            if self.recs.len() >= self.gc_at {
                self.collect(scratch);
            }
            self.recs.push(r);
        }
        RecId((self.recs.len() as u32) << REC_SHIFT)
    }

    /// Drops the records no slot names, renumbering the slots.
    #[cold]
    #[inline(never)]
    fn collect(&mut self, map: &mut Vec<u32>) {
        map.clear();
        map.resize(self.recs.len() + 1, 0);
        let named = |s: u32| if s != 0 && s & SET_BIT == 0 { Some((s >> REC_SHIFT) as usize) } else { None };
        self.for_slots(|s| {
            if let Some(m) = named(*s).and_then(|i| map.get_mut(i)) {
                *m = 1;
            }
        });
        let mut live = 0;
        for (i, m) in map.iter_mut().enumerate().skip(1) {
            if *m != 0 {
                self.recs[live] = self.recs[i - 1];
                live += 1;
                *m = live as u32;
            }
        }
        self.recs.truncate(live);
        self.for_slots(|s| {
            if let Some(&m) = named(*s).and_then(|i| map.get(i)) {
                *s = (*s & ((1 << REC_SHIFT) - 1)) | m << REC_SHIFT;
            }
        });
        self.gc_at = (2 * live).max(GC_MIN);
    }

    /// Runs turned into the slots they stand for, their records the
    /// page's first (in order, as [`Page::rec`] adds them): sparse cells
    /// with room for as many words as their density predicts, or slot
    /// arrays where [`GlobalShadow::reserve`] would have made them.
    #[cold]
    #[inline(never)]
    fn settle(&mut self) {
        let cells = std::mem::replace(&mut self.cells, Cells::Sparse(Vec::new()));
        let runs: &[Run] = match &cells {
            Cells::Run(run) => std::slice::from_ref(run),
            Cells::Runs(runs) => runs,
            _ => {
                self.cells = cells;
                return;
            }
        };
        let words = |r: &Run| r.lanes as usize * r.nw as usize;
        let total: usize = runs.iter().map(words).sum();
        let dense = total >= DENSE_AFTER || runs.iter().any(|r| words(r) >= DENSE_WARP && 4 * words(r) >= r.span());
        let mut sparse = Vec::new();
        let (mut w, mut r) = (None::<Slots>, None::<Slots>);
        if !dense {
            let (lo, hi) = runs.iter().fold((PAGE_WORDS as usize, 0), |(lo, hi), r| (lo.min(r.ends().0), hi.max(r.ends().1)));
            sparse.reserve((total * PAGE_WORDS as usize / (hi - lo).max(1)).min(DENSE_AFTER).max(total));
        }
        self.recs.clear();
        for run in runs {
            if self.recs.last() != Some(&run.rec) {
                self.recs.push(run.rec);
            }
            let rec = (self.recs.len() as u32) << REC_SHIFT;
            for k in 0..run.lanes as usize {
                let enc = rec | ((run.lane0 as u32 + k as u32) & 63) << LANE_SHIFT | BYTES as u32;
                let first = run.off as usize + k * run.stride as usize;
                let words = first..(first + run.nw as usize).min(PAGE_WORDS as usize);
                if dense {
                    if let Some(a) = if run.write { &mut w } else { &mut r }.get_or_insert_with(zeroed).get_mut(words) {
                        a.fill(enc);
                    }
                } else {
                    let (w, r) = if run.write { (enc, 0) } else { (0, enc) };
                    sparse.extend(words.map(|o| Sparse { off: o as u16, w, r }));
                }
            }
        }
        self.cells = if dense {
            Cells::Dense { w, r }
        } else {
            // Runs are disjoint: distinct words, sorted once.
            sparse.sort_unstable_by_key(|e| e.off);
            Cells::Sparse(sparse)
        };
    }

    fn for_slots(&mut self, mut f: impl FnMut(&mut u32)) {
        match &mut self.cells {
            Cells::Run(_) | Cells::Runs(_) => {}
            Cells::Sparse(v) => v.iter_mut().for_each(|e| {
                f(&mut e.w);
                f(&mut e.r);
            }),
            Cells::Dense { w, r } => w.iter_mut().chain(r.iter_mut()).for_each(|a| a.iter_mut().for_each(&mut f)),
        }
    }

    /// The page turned dense: slot arrays, the sparse cells in place.
    #[inline(never)]
    fn make_dense(&mut self) {
        let Cells::Sparse(v) = &self.cells else { return };
        let (mut w, mut r) = (None::<Slots>, None::<Slots>);
        for e in v {
            let o = e.off as usize % PAGE_WORDS as usize;
            if e.w != 0 {
                w.get_or_insert_with(zeroed)[o] = e.w;
            }
            if e.r != 0 {
                r.get_or_insert_with(zeroed)[o] = e.r;
            }
        }
        self.cells = Cells::Dense { w, r };
    }

    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn apply(&mut self, off: usize, cur: Access, rec: RecId, write: bool, hb: &Hb, sets: &mut Sets, hits: &mut Vec<Hit>) {
        let off = off % PAGE_WORDS as usize;
        if let Cells::Sparse(v) = &mut self.cells {
            let i = match v.last() {
                // Lanes mostly go up: try the end first.
                Some(e) if (e.off as usize) < off => Err(v.len()),
                _ => v.binary_search_by_key(&(off as u16), |e| e.off),
            };
            match i {
                Ok(i) => {
                    let e = &mut v[i];
                    return step(&self.recs, &mut e.w, &mut e.r, cur, rec, write, hb, sets, hits);
                }
                Err(i) if v.len() < DENSE_AFTER => {
                    v.insert(i, Sparse { off: off as u16, w: 0, r: 0 });
                    let e = &mut v[i];
                    return step(&self.recs, &mut e.w, &mut e.r, cur, rec, write, hb, sets, hits);
                }
                Err(_) => self.make_dense(),
            }
        }
        let Cells::Dense { w, r } = &mut self.cells else { return };
        // A missing array's slots are empty; a step may fill one (reads the
        // read slot, writes the write slot), which then makes the array.
        let (mut zw, mut zr) = (0, 0);
        let ws = match w {
            Some(a) => &mut a[off],
            None => &mut zw,
        };
        let rs = match r {
            Some(a) => &mut a[off],
            None => &mut zr,
        };
        step(&self.recs, ws, rs, cur, rec, write, hb, sets, hits);
        if zw != 0 {
            w.get_or_insert_with(zeroed)[off] = zw;
        }
        if zr != 0 {
            r.get_or_insert_with(zeroed)[off] = zr;
        }
    }

    /// The decoded cell at `off` (tests).
    #[cfg(test)]
    fn cell(&self, off: usize) -> Cell {
        if let Cells::Run(_) | Cells::Runs(_) = self.cells {
            let cells = match &self.cells {
                Cells::Run(run) => Cells::Run(*run),
                Cells::Runs(runs) => Cells::Runs(runs.clone()),
                _ => unreachable!(),
            };
            let mut p = Page { recs: Vec::new(), gc_at: GC_MIN, cells };
            p.settle();
            return p.cell(off);
        }
        let (w, r) = match &self.cells {
            Cells::Run(_) | Cells::Runs(_) => (0, 0),
            Cells::Sparse(v) => v.iter().find(|e| e.off as usize == off).map_or((0, 0), |e| (e.w, e.r)),
            Cells::Dense { w, r } => (w.as_ref().map_or(0, |a| a[off]), r.as_ref().map_or(0, |a| a[off])),
        };
        Cell { w: decode(&self.recs, w), r: decode(&self.recs, r) }
    }
}

/// A fast hasher for page numbers.
#[derive(Default)]
pub struct PageHasher(u64);

impl Hasher for PageHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ b as u64).wrapping_mul(0x517C_C1B7_2722_0A95);
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (x ^ (x >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 ^= self.0 >> 32;
    }
}

/// Pages of the allocations' shadow tables at most (4 bytes per 4 KiB page).
const TABLE_PAGES: u64 = 1 << 26;

/// An allocation's pages: `pages` from `first`, their indices from `at` in
/// [`GlobalShadow::table`].
#[derive(Copy, Clone, Debug)]
struct Span {
    first: u64,
    pages: u64,
    at: usize,
}

/// Global memory's shadow: by 4 KiB page, the cells of the touched words.
#[derive(Default)]
pub struct GlobalShadow {
    /// The allocations' pages, by first page; `table` holds each page's
    /// index + 1 (0: none yet), made zeroed so that untouched parts cost
    /// nothing. Pages outside them (served past an allocation's end) go
    /// through `index`.
    spans: Vec<Span>,
    table: Vec<u32>,
    index: HashMap<u64, u32, BuildHasherDefault<PageHasher>>,
    pages: Vec<Page>,
    /// The page last used and its index (consecutive lanes mostly share a page).
    last: Option<(u64, u32)>,
    /// A collection's renumbering, kept.
    scratch: Vec<u32>,
}

impl GlobalShadow {
    /// A shadow for global memory whose allocations are `allocs` (base, bytes).
    pub fn new(allocs: impl Iterator<Item = (u64, u64)>) -> GlobalShadow {
        let bytes = PAGE_WORDS * 4;
        let mut spans: Vec<Span> = allocs
            .filter(|&(_, size)| size > 0)
            .map(|(base, size)| {
                let first = base / bytes;
                let last = base.saturating_add(size - 1) / bytes;
                Span { first, pages: last - first + 1, at: 0 }
            })
            .collect();
        spans.sort_by_key(|s| s.first);
        // Overlapping spans (none in practice) would name one page twice: keep the first.
        let mut end = 0;
        spans.retain(|s| {
            let keep = s.first >= end;
            end = end.max(s.first + s.pages);
            keep
        });
        let mut at = 0u64;
        for s in &mut spans {
            s.at = at as usize;
            at += s.pages;
        }
        if at > TABLE_PAGES {
            spans.clear();
            at = 0;
        }
        GlobalShadow { spans, table: vec![0; at as usize], ..Default::default() }
    }

    /// The index of page `page` (words `page * 1024..`), made when new.
    #[inline(always)]
    pub fn page(&mut self, page: u64) -> usize {
        match self.last {
            Some((p, i)) if p == page => i as usize,
            _ => self.page_index(page),
        }
    }

    #[inline(never)]
    fn page_index(&mut self, page: u64) -> usize {
        let n = self.pages.len() as u32;
        let k = self.spans.partition_point(|s| s.first <= page);
        let slot = match k.checked_sub(1).and_then(|k| self.spans.get(k)) {
            Some(s) if page - s.first < s.pages => self.table.get_mut(s.at + (page - s.first) as usize),
            _ => None,
        };
        let i = match slot {
            Some(e) => {
                if *e == 0 {
                    *e = n + 1;
                }
                *e - 1
            }
            None => *self.index.entry(page).or_insert(n),
        };
        if i == n {
            self.pages.push(Page::new());
        }
        self.last = Some((page, i));
        i as usize
    }

    /// Page `idx` ready for `words` more touched words lying within `span`
    /// words: made dense when they would turn it dense (a warp's 16-byte
    /// accesses of a page make it dense at once rather than part way
    /// through) or when they are a dense pass's ([`DENSE_WARP`]), else
    /// with room for them.
    #[inline(always)]
    pub fn reserve(&mut self, idx: usize, words: usize, span: usize) {
        if let Some(p) = self.pages.get_mut(idx) {
            if let Cells::Run(_) | Cells::Runs(_) = p.cells {
                p.settle();
            }
            match &mut p.cells {
                Cells::Sparse(v) if v.len() + words >= DENSE_AFTER || (words >= DENSE_WARP && 4 * words >= span) => p.make_dense(),
                // A new page: room for as many words as the warp's density
                // would put in it (one allocation for a strided pass);
                // else room for the words at once, not by doublings.
                Cells::Sparse(v) if v.capacity() == 0 => v.reserve((words * PAGE_WORDS as usize / span.max(1)).min(DENSE_AFTER).max(words)),
                Cells::Sparse(v) => v.reserve(words),
                Cells::Dense { .. } | Cells::Run(_) | Cells::Runs(_) => {}
            }
        }
    }

    /// Records `wa` as a run of page `idx` ([`Cells::Run`]) when its lanes
    /// sit at a fixed stride ([`WarpAccess::stride`]) and the page is fresh
    /// or holds fewer than [`RUNS_MAX`] runs, none overlapping its span:
    /// the slots the word-by-word path would fill, none of them touched
    /// before, so nothing to report. False (nothing done) otherwise.
    #[inline(always)]
    pub fn run(&mut self, idx: usize, wa: &WarpAccess<'_>) -> bool {
        let Some(stride) = wa.stride else { return false };
        let Some(p) = self.pages.get_mut(idx) else { return false };
        let l0 = wa.mask.trailing_zeros() as usize;
        let Some(&a0) = wa.addrs.get(l0) else { return false };
        let run = Run {
            rec: Rec::of(&wa.first),
            off: ((a0 >> 2) % PAGE_WORDS) as u16,
            stride: stride as u16,
            lanes: wa.mask.count_ones() as u8,
            nw: wa.words as u8,
            lane0: (wa.first.tid & 63) as u8,
            write: wa.write,
        };
        let (lo, hi) = run.ends();
        let apart = |r: &Run| r.ends().1 <= lo || hi <= r.ends().0;
        match &mut p.cells {
            Cells::Sparse(v) if v.capacity() == 0 && p.recs.is_empty() => p.cells = Cells::Run(run),
            Cells::Run(first) if apart(first) => {
                // Room for the runs of a pass like the first.
                let mut v = Vec::with_capacity((PAGE_WORDS as usize / first.span()).clamp(2, RUNS_MAX));
                v.extend([*first, run]);
                p.cells = Cells::Runs(v);
            }
            Cells::Runs(v) if v.len() < RUNS_MAX && v.iter().all(apart) => v.push(run),
            _ => return false,
        }
        true
    }

    /// The record of page `idx` for `cur` and the accesses of its warp
    /// instruction ([`GlobalShadow::apply`]), from threads of `cur.tid`'s
    /// group of 64 (a warp's).
    #[inline(always)]
    pub fn rec(&mut self, idx: usize, cur: &Access) -> RecId {
        match self.pages.get_mut(idx) {
            Some(p) => p.rec(cur, &mut self.scratch),
            None => RecId(0),
        }
    }

    /// Access `cur` of word `word` of page `idx`, of record `rec`: reports
    /// conflicting earlier accesses into `hits` and records it.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub fn apply(&mut self, idx: usize, word: u64, cur: Access, rec: RecId, write: bool, hb: &Hb, sets: &mut Sets, hits: &mut Vec<Hit>) {
        if let Some(p) = self.pages.get_mut(idx) {
            p.apply((word % PAGE_WORDS) as usize, cur, rec, write, hb, sets, hits);
        }
    }

    /// The accesses `wa` of one warp instruction to page `idx` (record
    /// `rec`): as [`GlobalShadow::apply`] word by word, lanes in order, with
    /// `on_hit` told each access that finds `hits` (it must empty them).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub fn warp(
        &mut self,
        idx: usize,
        rec: RecId,
        wa: &WarpAccess<'_>,
        hb: &Hb,
        sets: &mut Sets,
        hits: &mut Vec<Hit>,
        mut on_hit: impl FnMut(u64, Access, &mut Vec<Hit>),
    ) {
        let Some(p) = self.pages.get_mut(idx) else { return };
        let (write, nw) = (wa.write, wa.words);
        let lanes = || {
            warpsim_ir::set_bits(wa.mask)
                .filter_map(|l| Some((*wa.addrs.get(l)? >> 2, Access { tid: (wa.base + l as u32) as u16, ..wa.first })))
        };
        let Cells::Dense { w, r } = &mut p.cells else {
            for (first, cur) in lanes() {
                for word in first..first + nw {
                    p.apply((word % PAGE_WORDS) as usize, cur, rec, write, hb, sets, hits);
                    if !hits.is_empty() {
                        on_hit(word, cur, hits);
                    }
                }
            }
            return;
        };
        // The slot the access fills (a write's, a read's) in an array made
        // now; the other, when its array is missing, is empty and stays so.
        let (fill, other) = if write { (w, r) } else { (r, w) };
        let fill = fill.get_or_insert_with(zeroed);
        if wa.stride == Some(nw) && fill_untouched(fill, other, wa, rec) {
            return;
        }
        let Some(other) = other else {
            // Only the filled kind of slot exists in the page (a page only
            // read, or only written, so far): a word whose slot is empty is
            // untouched.
            for (first, cur) in lanes() {
                let enc = rec.0 | (cur.tid as u32 & 63) << LANE_SHIFT | (cur.bits & BYTES) as u32;
                for word in first..first + nw {
                    let fs = &mut fill[(word % PAGE_WORDS) as usize];
                    if *fs == 0 {
                        *fs = enc;
                        continue;
                    }
                    // The missing slot is empty, and stays so (a read leaves
                    // the write slot, a write an empty read slot, as it is).
                    let mut none = 0;
                    let (ws, rs) = if write { (fs, &mut none) } else { (&mut none, fs) };
                    step(&p.recs, ws, rs, cur, rec, write, hb, sets, hits);
                    if !hits.is_empty() {
                        on_hit(word, cur, hits);
                    }
                }
            }
            return;
        };
        for (first, cur) in lanes() {
            let enc = rec.0 | (cur.tid as u32 & 63) << LANE_SHIFT | (cur.bits & BYTES) as u32;
            for word in first..first + nw {
                let o = (word % PAGE_WORDS) as usize;
                let (fs, os) = (&mut fill[o], &mut other[o]);
                if *fs == 0 && *os == 0 {
                    *fs = enc;
                    continue;
                }
                let (ws, rs) = if write { (fs, os) } else { (os, fs) };
                step(&p.recs, ws, rs, cur, rec, write, hb, sets, hits);
                if !hits.is_empty() {
                    on_hit(word, cur, hits);
                }
            }
        }
    }

    /// Access `cur` of word `word`, alone (its page and record found for it).
    #[inline(always)]
    pub fn access(&mut self, word: u64, cur: Access, write: bool, hb: &Hb, sets: &mut Sets, hits: &mut Vec<Hit>) {
        let idx = self.page(word / PAGE_WORDS);
        let rec = self.rec(idx, &cur);
        self.apply(idx, word, cur, rec, write, hb, sets, hits);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hb::Arrival;
    use crate::shadow::{ATOMIC, WRITE};

    /// An access that found hits: its word, itself, and the earlier accesses (and whether writes).
    type Found = (u64, Access, Vec<(Access, bool)>);

    fn xorshift(s: &mut u64) -> u64 {
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        *s
    }

    /// Random accesses (reads, writes, atomics, partial words; warp
    /// instructions over few or many words of few pages, by threads of
    /// several blocks, with barriers and warp barriers between) give the
    /// hits and cells of [`shadow::read`] and [`shadow::write`] on full
    /// cells: word by word ([`GlobalShadow::access`]) and warp by warp
    /// ([`GlobalShadow::warp`]), through records shared by lanes and
    /// collected, sparse pages turning dense, and slot arrays made on first use.
    #[test]
    fn packed_cells_match_full_cells() {
        let (warps, w) = (4usize, 32usize);
        // Hits, dense pages, sparse pages, most records, warp-path accesses,
        // accesses of words whose every earlier access is their thread's.
        let mut stats = [0usize; 8];
        for seed in 1..=24u64 {
            let mut s = seed * 0x9E37_79B9;
            let mut hb = Hb::new(seed % 3 == 0);
            hb.reset(warps, w);
            let mut tau = vec![0u32; warps];
            let (mut sets_a, mut sets_b) = (Sets::new(false), Sets::new(false));
            let mut hits_b = Vec::new();
            // Pages 0 and 1 through an allocation's table, the others through the index.
            let mut shadow = GlobalShadow::new([(100, 2 * PAGE_WORDS * 4 - 100)].into_iter());
            let mut full: HashMap<u64, Cell> = HashMap::new();
            let mut block = 0u32;
            for _ in 0..3000 {
                let x = xorshift(&mut s);
                match x % 40 {
                    0 => {
                        // A barrier of the whole block, or the next block.
                        if x & 64 != 0 {
                            block += 1;
                            hb.reset(warps, w);
                            tau.fill(0);
                        } else {
                            let arrivals: Vec<Arrival> = (0..warps as u32)
                                .map(|wp| {
                                    tau[wp as usize] += 1;
                                    Arrival { warp: wp, lanes: u32::MAX as u64, tau: tau[wp as usize], wait: true, pc: 0 }
                                })
                                .collect();
                            hb.barrier(&arrivals);
                        }
                        continue;
                    }
                    1 => {
                        let wp = (x >> 8) as usize % warps;
                        tau[wp] += 1;
                        hb.warp_sync(wp as u32, u32::MAX as u64, tau[wp]);
                        continue;
                    }
                    _ => {}
                }
                let wp = (x >> 8) as usize % warps;
                tau[wp] += 1;
                let op_bits = match (x >> 12) % 8 {
                    0..=3 => 0,
                    4..=6 => WRITE,
                    _ => ATOMIC | WRITE,
                };
                let write = op_bits & WRITE != 0;
                let pc = (x >> 16) as u32 % 50;
                // Few pages (and now and then one of many, kept sparse).
                let page = if (x >> 20).is_multiple_of(16) { 3 + (x >> 24) % 64 } else { (x >> 24) % 3 };
                // Now and then the words of the last few warps (a thread's read, then its write).
                let start = if (x >> 30).is_multiple_of(4) { (x >> 32) % 8 } else { (x >> 32) % PAGE_WORDS };
                let lanes = 1 + (x >> 42) % 32;
                // (first word, access, words) per lane, in order.
                let mut accesses = Vec::new();
                let by_warp = (x >> 28).is_multiple_of(3);
                let mut stride = 0;
                if by_warp {
                    // Whole words, one page, `nw` words a lane from `start`,
                    // lanes `stride` words apart (consecutive or strided).
                    let nw = 1 + (x >> 48) % 4;
                    let widest = (PAGE_WORDS - nw) / (lanes - 1).max(1);
                    stride = if (x >> 50) & 1 == 0 { nw } else { nw + (x >> 51) % (widest - nw + 1) };
                    let start = start.min(PAGE_WORDS - ((lanes - 1) * stride + nw));
                    for l in 0..lanes {
                        let tid = (wp * w) as u16 + l as u16;
                        let cur = Access { block, tid, bits: BYTES | op_bits, tau: tau[wp], pc };
                        accesses.push((page * PAGE_WORDS + start + l * stride, cur, nw));
                    }
                } else {
                    let scattered = (x >> 29) & 1 != 0;
                    for l in 0..lanes {
                        let y = xorshift(&mut s);
                        let off = if scattered { y % PAGE_WORDS } else { (start + l) % PAGE_WORDS };
                        let bytes = if y & 0x300 == 0 { ((y >> 12) as u8 % 15) + 1 } else { BYTES };
                        let tid = (wp * w) as u16 + l as u16;
                        accesses.push((page * PAGE_WORDS + off, Access { block, tid, bits: bytes | op_bits, tau: tau[wp], pc }, 1));
                    }
                }
                // The packed shadow's hits, per access.
                let mut got: Vec<Found> = Vec::new();
                let mut hits_a = Vec::new();
                if by_warp {
                    let idx = shadow.page(page);
                    let addrs: Vec<u64> = accesses.iter().map(|a| a.0 * 4).collect();
                    let (first, base) = (accesses[0].1, (wp * w) as u32);
                    // Half the seeds leave out the stride (the lane path for them).
                    let stride = (seed % 4 < 2).then_some(stride);
                    let wa = WarpAccess { first, base, mask: (1 << lanes) - 1, addrs: &addrs, words: accesses[0].2, write, stride };
                    let words = accesses.len() * accesses[0].2 as usize;
                    let span = (accesses[accesses.len() - 1].0 + accesses[0].2 - accesses[0].0) as usize;
                    let had_runs = matches!(shadow.pages[idx].cells, Cells::Run(_) | Cells::Runs(_));
                    if seed % 2 == 0 && shadow.run(idx, &wa) {
                        stats[6] += 1;
                        stats[7] += had_runs as usize;
                    } else {
                        if seed % 2 == 0 {
                            // As the checker does: sparse pages reserved for, or made dense by, the warp.
                            shadow.reserve(idx, words, span);
                        }
                        let rec = shadow.rec(idx, &accesses[0].1);
                        shadow.warp(idx, rec, &wa, &hb, &mut sets_a, &mut hits_a, |word, cur, hits| {
                            got.push((word, cur, hits.iter().map(|h| (h.prior, h.prior_write)).collect()));
                            hits.clear();
                        });
                    }
                    stats[4] += accesses.len();
                } else {
                    for &(word, cur, _) in &accesses {
                        shadow.access(word, cur, write, &hb, &mut sets_a, &mut hits_a);
                        if !hits_a.is_empty() {
                            got.push((word, cur, hits_a.iter().map(|h| (h.prior, h.prior_write)).collect()));
                            hits_a.clear();
                        }
                    }
                }
                // Full cells, word by word.
                let mut want = Vec::new();
                for &(first, cur, nw) in &accesses {
                    for word in first..first + nw {
                        let cell = full.entry(word).or_default();
                        let own = |a: &Access| a.empty() || (a.bits & SET == 0 && a.block == cur.block && a.tid == cur.tid);
                        if !(cell.w.empty() && cell.r.empty()) && own(&cell.w) && own(&cell.r) {
                            stats[5] += 1;
                        }
                        if write {
                            shadow::write(cell, cur, &hb, &mut sets_b, &mut hits_b);
                        } else {
                            shadow::read(cell, cur, &hb, &mut sets_b, &mut hits_b);
                        }
                        if !hits_b.is_empty() {
                            want.push((word, cur, hits_b.iter().map(|h| (h.prior, h.prior_write)).collect::<Vec<_>>()));
                            hits_b.clear();
                        }
                    }
                }
                assert_eq!(got, want, "seed {seed}");
                for &(first, _, nw) in &accesses {
                    for word in first..first + nw {
                        let i = shadow.page(word / PAGE_WORDS);
                        let got = shadow.pages[i].cell((word % PAGE_WORDS) as usize);
                        let cell = full[&word];
                        assert_eq!((got.w, got.r), (cell.w, cell.r), "seed {seed} word {word}");
                    }
                }
                stats[0] += want.len();
            }
            for p in &shadow.pages {
                match &p.cells {
                    Cells::Dense { .. } => stats[1] += 1,
                    Cells::Sparse(_) | Cells::Run(_) | Cells::Runs(_) => stats[2] += 1,
                }
                stats[3] = stats[3].max(p.recs.len());
            }
            // Every cell, once more, after the last collection.
            for (&word, cell) in &full {
                let i = shadow.page(word / PAGE_WORDS);
                let got = shadow.pages[i].cell((word % PAGE_WORDS) as usize);
                assert_eq!((got.w, got.r), (cell.w, cell.r), "seed {seed} word {word} at the end");
            }
        }
        // Races found, pages of both kinds, both paths, runs (on pages with
        // runs too); records stay bounded.
        assert!(stats[0] > 0 && stats[1] > 0 && stats[2] > 0 && stats[4] > 0 && stats[5] > 0 && stats[6] > 0 && stats[7] > 0, "{stats:?}");
        assert!(stats[3] <= 2 * 2 * PAGE_WORDS as usize, "{stats:?}");
    }

    /// Pages found through the allocations' tables and through the index
    /// (outside them, overlapping spans) number like one map from page to
    /// the order of first use.
    #[test]
    fn page_indices_match_a_map() {
        let bytes = PAGE_WORDS * 4;
        let mut s = 7u64;
        for _ in 0..50 {
            let allocs: Vec<(u64, u64)> =
                (0..1 + xorshift(&mut s) % 5).map(|_| (xorshift(&mut s) % (64 * bytes), xorshift(&mut s) % (8 * bytes))).collect();
            let mut shadow = GlobalShadow::new(allocs.iter().copied());
            let mut want: HashMap<u64, usize> = HashMap::new();
            let mut tabled = 0;
            for _ in 0..400 {
                let page = xorshift(&mut s) % 80;
                let n = want.len();
                let i = *want.entry(page).or_insert(n);
                assert_eq!(shadow.page(page), i, "page {page} of {allocs:?}");
                tabled += shadow.spans.iter().any(|sp| (sp.first..sp.first + sp.pages).contains(&page)) as usize;
            }
            assert_eq!(shadow.pages.len(), want.len());
            assert!(tabled > 0);
        }
    }

    /// Records are collected: a page stays bounded however many instructions touch it.
    #[test]
    fn records_are_collected() {
        let hb = {
            let mut h = Hb::new(false);
            h.reset(1, 32);
            h
        };
        let (mut sets, mut hits) = (Sets::new(false), Vec::new());
        let mut shadow = GlobalShadow::default();
        for tau in 1..20_000u32 {
            let cur = Access { block: 0, tid: 0, bits: BYTES | WRITE, tau, pc: 3 };
            shadow.access((tau % 8) as u64, cur, true, &hb, &mut sets, &mut hits);
        }
        assert!(hits.is_empty());
        let p = &shadow.pages[0];
        assert!(p.recs.len() <= GC_MIN, "{}", p.recs.len());
        assert_eq!(p.cell(3).w.tau, 19_995);
    }
}
