//! Shadow memory for race detection: per 4-byte word, the last write and
//! the reads since (one inline, more in a read set), FastTrack-style.

use crate::hb::Hb;

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
    record_read(cell, cur, hb, sets);
}

/// What [`read`] does after its test of the last write: records the read
/// `cur` in `cell`'s read slot or set (for a read whose write test is known
/// to pass: it reports nothing).
#[inline(always)]
pub fn record_read(cell: &mut Cell, cur: Access, hb: &Hb, sets: &mut Sets) {
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
