//! Shadow memory for race detection: per 4-byte word, the last write and
//! the reads since (one inline, more in a read set), FastTrack-style.

use crate::hb::Hb;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Bits of [`Access::bits`]: which bytes of the word (low 4), whether the
/// access is atomic or morally strong, and (in a cell's read slot) whether
/// the reads live in a read set (`Access::pc` is then the set's index),
/// and whether that set is dense.
pub const BYTES: u8 = 0x0F;
pub const ATOMIC: u8 = 0x10;
pub const WRITE: u8 = 0x20;
pub const DENSE: u8 = 0x40;
pub const SET: u8 = 0x80;

/// One access: who (block, thread), when (the thread's clock), where (pc).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Access {
    pub block: u32,
    pub tid: u16,
    pub bits: u8,
    pub tau: u32,
    pub pc: u32,
}

impl Access {
    #[inline(always)]
    pub fn empty(&self) -> bool {
        self.tau == 0
    }
}

#[derive(Copy, Clone, Debug, Default)]
pub struct Cell {
    pub w: Access,
    pub r: Access,
}

/// A conflicting earlier access found for the current one.
#[derive(Copy, Clone, Debug)]
pub struct Hit {
    pub prior: Access,
    pub prior_write: bool,
}

/// Read sets, reused: reads of one word by several threads not ordered
/// among themselves. A small set lists them; a dense one (shared memory
/// only) has a slot per thread of the block, `dense[i * dense_n + tid]`:
/// tau | pc << 32 | bytes << 56, 0 for none (one load from the cell's index
/// to the slot).
#[derive(Default)]
pub struct Sets {
    sets: Vec<Vec<Access>>,
    free: Vec<u32>,
    dense: Vec<u64>,
    dense_free: Vec<u32>,
    /// Slots per dense set (the block's threads).
    dense_n: usize,
    /// Whether sets may turn dense (shared memory: one block's threads).
    dense_ok: bool,
    /// Dense slots in use, against a memory budget.
    dense_words: usize,
}

const SMALL_CAP: usize = 8;
/// Dense read sets above this many slots (all cells together) fall back to
/// small sets that forget the oldest reader (missing a race, never inventing one).
const DENSE_BUDGET: usize = 1 << 24;

impl Sets {
    pub fn new(dense_ok: bool) -> Sets {
        Sets { dense_ok, ..Default::default() }
    }

    pub fn clear(&mut self) {
        self.sets.clear();
        self.free.clear();
        self.dense.clear();
        self.dense_free.clear();
        self.dense_words = 0;
    }

    fn alloc(&mut self, s: Vec<Access>) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.sets[i as usize] = s;
                i
            }
            None => {
                self.sets.push(s);
                (self.sets.len() - 1) as u32
            }
        }
    }

    fn release(&mut self, i: u32) {
        self.sets[i as usize] = Vec::new();
        self.free.push(i);
    }

    /// A new dense set of `n` empty slots, or `None` when its slots would not
    /// match those in use (`n` changes only between blocks, after `clear`).
    fn alloc_dense(&mut self, n: usize) -> Option<u32> {
        if n == 0 {
            return None;
        }
        if self.dense_n != n {
            if self.dense_words != 0 {
                return None;
            }
            self.dense.clear();
            self.dense_free.clear();
            self.dense_n = n;
        }
        self.dense_words += n;
        match self.dense_free.pop() {
            Some(i) => Some(i),
            None => {
                self.dense.resize(self.dense.len() + n, 0);
                Some((self.dense.len() / n - 1) as u32)
            }
        }
    }

    /// Dense set `i`'s slots.
    fn dense_slots(&mut self, i: u32) -> &mut [u64] {
        let n = self.dense_n;
        self.dense.get_mut(i as usize * n..(i as usize + 1) * n).unwrap_or_default()
    }

    /// Ends dense set `i`: its slots empty again.
    fn release_dense(&mut self, i: u32) {
        self.dense_slots(i).fill(0);
        self.dense_words -= self.dense_n;
        self.dense_free.push(i);
    }
}

/// Whether `p` (earlier) and `cur` conflict: overlapping bytes, different
/// threads, not both atomic, not one warp instruction, not ordered.
///
/// A read racing with an atomic is not reported either: it sees the value
/// before or after, whole (the CUDA Programming Guide's `atomicCAS` loops
/// start from such a read). Writes racing with atomics lose updates.
#[inline(always)]
fn conflict(hb: &Hb, p: &Access, cur: &Access) -> bool {
    if p.bits & cur.bits & BYTES == 0 || p.bits & cur.bits & ATOMIC != 0 {
        return false;
    }
    if (p.bits | cur.bits) & ATOMIC != 0 && (p.bits & cur.bits & WRITE == 0) {
        return false;
    }
    if p.block == cur.block {
        if p.tid == cur.tid || (p.tau == cur.tau && (p.tid ^ cur.tid) >> hb.shift == 0) {
            return false;
        }
        !hb.knows(cur.tid as usize, p.tid as usize, p.tau)
    } else {
        !hb.knows_foreign(cur.tid as usize, p.block, p.tid as usize, p.tau)
    }
}

/// Whether `p` happens before `cur` (or is the same thread's).
#[inline(always)]
fn before(hb: &Hb, p: &Access, cur: &Access) -> bool {
    if p.block == cur.block {
        p.tid == cur.tid || hb.knows(cur.tid as usize, p.tid as usize, p.tau)
    } else {
        hb.knows_foreign(cur.tid as usize, p.block, p.tid as usize, p.tau)
    }
}

/// A read `cur` of `cell`: reports a conflicting write, records the read.
#[inline(always)]
pub fn read(cell: &mut Cell, cur: Access, hb: &Hb, sets: &mut Sets, hits: &mut Vec<Hit>) {
    if !cell.w.empty() && conflict(hb, &cell.w, &cur) {
        hits.push(Hit { prior: cell.w, prior_write: true });
    }
    if cell.r.bits & SET == 0 {
        if cell.r.empty() || (cell.r.bits & BYTES & !cur.bits == 0 && before(hb, &cell.r, &cur)) {
            cell.r = cur;
        } else {
            new_set(cell, cur, sets);
        }
        return;
    }
    // A dense set (many readers of a word of shared memory) takes the read in its thread's slot.
    if cell.r.bits & DENSE != 0 && (cur.tid as usize) < sets.dense_n {
        if let Some(e) = sets.dense.get_mut(cell.r.pc as usize * sets.dense_n + cur.tid as usize) {
            *e = dense_entry(&cur);
        }
        return;
    }
    read_set(cell, cur, hb, sets);
}

/// A second reader of `cell`, not ordered after the first: the reads move to a set.
#[cold]
#[inline(never)]
fn new_set(cell: &mut Cell, cur: Access, sets: &mut Sets) {
    let mut v = Vec::with_capacity(SMALL_CAP);
    v.extend([cell.r, cur]);
    let i = sets.alloc(v);
    cell.r = Access { bits: SET, pc: i, tau: 1, ..Default::default() };
}

/// A read `cur` recorded in the small read set of `cell`.
#[inline(never)]
fn read_set(cell: &mut Cell, cur: Access, hb: &Hb, sets: &mut Sets) {
    if cell.r.bits & DENSE != 0 {
        return; // a thread beyond the dense set's slots: cannot happen (they are the block's)
    }
    let i = cell.r.pc;
    let dense_ok = sets.dense_ok;
    let Some(v) = sets.sets.get_mut(i as usize) else { return };
    if let Some(e) = v.iter_mut().find(|e| e.block == cur.block && e.tid == cur.tid && e.bits & BYTES & !cur.bits == 0) {
        *e = cur;
        return;
    }
    if v.len() >= SMALL_CAP {
        v.retain(|e| !(e.bits & BYTES & !cur.bits == 0 && before(hb, e, &cur)));
    }
    if v.len() < SMALL_CAP {
        v.push(cur);
        return;
    }
    let tids_fit = v.iter().chain([&cur]).all(|e| (e.tid as usize) < hb.n);
    let dense = if dense_ok && tids_fit && sets.dense_words + hb.n <= DENSE_BUDGET { sets.alloc_dense(hb.n) } else { None };
    let Some(j) = dense else {
        let v = &mut sets.sets[i as usize];
        v.remove(0);
        v.push(cur);
        return;
    };
    // Too many concurrent readers for a small set: one slot per thread of the block.
    let v = std::mem::take(&mut sets.sets[i as usize]);
    let d = sets.dense_slots(j);
    for e in v.iter().chain([&cur]) {
        d[e.tid as usize] = dense_entry(e);
    }
    sets.release(i);
    cell.r = Access { bits: SET | DENSE, pc: j, tau: 1, ..Default::default() };
}

#[inline(always)]
fn dense_entry(a: &Access) -> u64 {
    a.tau as u64 | ((a.pc as u64 & 0x00FF_FFFF) << 32) | (((a.bits & (BYTES | ATOMIC)) as u64) << 56)
}

/// A write `cur` of `cell`: reports conflicting earlier accesses, becomes the last write.
#[inline(always)]
pub fn write(cell: &mut Cell, cur: Access, hb: &Hb, sets: &mut Sets, hits: &mut Vec<Hit>) {
    if !cell.w.empty() && conflict(hb, &cell.w, &cur) {
        hits.push(Hit { prior: cell.w, prior_write: true });
    }
    if cell.r.bits & SET == 0 {
        if !cell.r.empty() && conflict(hb, &cell.r, &cur) {
            hits.push(Hit { prior: cell.r, prior_write: false });
        }
    } else {
        write_set(cell.r, cur, hb, sets, hits);
    }
    // Reads that did not cover the written bytes stay (a later write to them may race).
    if cell.r.bits & SET != 0 || cell.r.bits & BYTES & !cur.bits == 0 {
        cell.r = Access::default();
    }
    // (A concurrent write to other bytes of the word is forgotten: that may
    // miss a race, never invent one.)
    cell.w = cur;
}

/// A write `cur` checked against the reads of the read set `r` names, which it ends.
#[inline(never)]
fn write_set(r: Access, cur: Access, hb: &Hb, sets: &mut Sets, hits: &mut Vec<Hit>) {
    let i = r.pc;
    if r.bits & DENSE == 0 {
        for e in sets.sets.get(i as usize).into_iter().flatten() {
            if conflict(hb, e, &cur) {
                hits.push(Hit { prior: *e, prior_write: false });
            }
        }
        sets.release(i);
    } else {
        {
            for (u, &x) in sets.dense_slots(i).iter().enumerate() {
                if x == 0 {
                    continue;
                }
                let e = Access {
                    block: cur.block,
                    tid: u as u16,
                    bits: ((x >> 56) as u8) & (BYTES | ATOMIC),
                    tau: x as u32,
                    pc: ((x >> 32) & 0x00FF_FFFF) as u32,
                };
                if conflict(hb, &e, &cur) {
                    hits.push(Hit { prior: e, prior_write: false });
                }
            }
        }
        sets.release_dense(i);
    }
}

/// A fast hasher for word addresses.
#[derive(Default)]
pub struct WordHasher(u64);

impl Hasher for WordHasher {
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

type WordMap<V> = HashMap<u64, V, BuildHasherDefault<WordHasher>>;

/// Words per page of global memory's shadow (4 KiB of data).
const PAGE_WORDS: u64 = 1024;
/// A page turns dense (one cell per word, in order) once this many of its
/// words are touched; until then it keeps a sorted cell per touched word (a
/// strided pass over a large buffer stays small).
const DENSE_AFTER: usize = 128;

enum Page {
    Dense(Box<[Cell]>),
    Sparse(Vec<(u16, Cell)>),
}

/// Global memory's shadow: a cell per touched word, by 4 KiB page.
#[derive(Default)]
pub struct GlobalShadow {
    index: WordMap<u32>,
    pages: Vec<Page>,
    /// The page last used and its index (consecutive lanes mostly share a page).
    last: Option<(u64, u32)>,
}

impl GlobalShadow {
    /// The cell of word `word` (address / 4), created empty when new.
    #[inline(always)]
    pub fn cell(&mut self, word: u64) -> &mut Cell {
        let off = (word % PAGE_WORDS) as u16;
        // The page of the last access, dense: no lookup.
        let idx = match self.last {
            Some((p, i)) if p == word / PAGE_WORDS && matches!(self.pages.get(i as usize), Some(Page::Dense(_))) => i as usize,
            _ => self.page_for(word),
        };
        match &mut self.pages[idx] {
            Page::Dense(c) => &mut c[off as usize],
            Page::Sparse(v) => sparse_cell(v, off),
        }
    }

    /// The index of page `page` (words `page * 1024..`) made dense, for one
    /// warp instruction touching `words` distinct words of it: when the page
    /// is dense already, or would be once the instruction's words are
    /// touched (the page's words so far and these reach [`DENSE_AFTER`]: a
    /// warp's 16-byte accesses of one page make it dense at once rather
    /// than at the next). `None` (nothing changed) otherwise.
    #[inline(always)]
    pub fn dense_page(&mut self, page: u64, words: usize) -> Option<usize> {
        let idx = match self.last {
            Some((p, i)) if p == page => i as usize,
            _ => self.page_index(page),
        };
        match &self.pages[idx] {
            Page::Dense(_) => Some(idx),
            Page::Sparse(v) if v.len() + words >= DENSE_AFTER => {
                self.make_dense(idx);
                Some(idx)
            }
            Page::Sparse(_) => None,
        }
    }

    /// The cells of dense page `idx` ([`GlobalShadow::dense_page`]).
    #[inline(always)]
    pub fn dense_cells(&mut self, idx: usize) -> Option<&mut [Cell; PAGE_WORDS as usize]> {
        match self.pages.get_mut(idx) {
            Some(Page::Dense(c)) => (&mut c[..]).try_into().ok(),
            _ => None,
        }
    }

    /// The index of page `page`, made (empty, sparse) when new.
    #[inline(never)]
    fn page_index(&mut self, page: u64) -> usize {
        let n = self.pages.len() as u32;
        let i = *self.index.entry(page).or_insert(n);
        if i == n {
            self.pages.push(Page::Sparse(Vec::new()));
        }
        self.last = Some((page, i));
        i as usize
    }

    /// Page `idx` turned dense: one cell per word, the sparse cells in place.
    #[inline(never)]
    fn make_dense(&mut self, idx: usize) {
        let mut cells = vec![Cell::default(); PAGE_WORDS as usize].into_boxed_slice();
        if let Page::Sparse(v) = &self.pages[idx] {
            for (o, c) in v {
                cells[*o as usize] = *c;
            }
        }
        self.pages[idx] = Page::Dense(cells);
    }

    /// Words per page.
    pub const PAGE_WORDS: u64 = PAGE_WORDS;

    /// The index of word `word`'s page, made (or made dense) as needed.
    #[inline(never)]
    fn page_for(&mut self, word: u64) -> usize {
        let page = word / PAGE_WORDS;
        let off = (word % PAGE_WORDS) as u16;
        let idx = match self.last {
            Some((p, i)) if p == page => i as usize,
            _ => self.page_index(page),
        };
        let full = matches!(&self.pages[idx], Page::Sparse(v) if v.len() >= DENSE_AFTER && v.binary_search_by_key(&off, |e| e.0).is_err());
        if full {
            self.make_dense(idx);
        }
        idx
    }
}

/// The cell at `off` of a sparse page, made when new.
#[inline(never)]
fn sparse_cell(v: &mut Vec<(u16, Cell)>, off: u16) -> &mut Cell {
    let i = match v.last() {
        // Lanes mostly go up: try the end first.
        Some(e) if e.0 < off => Err(v.len()),
        _ => v.binary_search_by_key(&off, |e| e.0),
    };
    match i {
        Ok(i) => &mut v[i].1,
        Err(i) => {
            v.insert(i, (off, Cell::default()));
            &mut v[i].1
        }
    }
}
