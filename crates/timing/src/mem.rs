//! The memory system below the SM's load/store pipe: sectored caches (L1 per
//! SM, one L2), and bandwidth-limited resources (the L2's slices, each SM's
//! port to it, DRAM).
//!
//! Caches are set-associative with 128-byte lines of four 32-byte sectors;
//! each sector remembers when its data arrives, so a second access to a
//! sector still in flight waits for the same fill (hit under miss) instead of
//! fetching again. Replacement is least recently used. A launch's caches
//! are kept for the next launch of the same shape and reset there
//! ([`Cache::reused`]): up to 64 MB stays with the process between launches.
//!
//! A bandwidth resource serves a fixed number of bytes per cycle. Requests
//! are booked into buckets of [`BUCKET`] cycles: a request arriving at `t`
//! takes room in the first bucket at or after `t` that has some, so a
//! saturated resource delays requests by its backlog, in arrival order,
//! and an idle one adds nothing.

use warpsim_engine::spare::Spare;

/// Cycles per bandwidth bucket.
pub const BUCKET: u64 = 16;

/// Entries of [`Bandwidth`]'s ring (bucket `b` at `b % RING`).
const RING: u64 = 256;

/// Buckets per chunk of [`Bandwidth`]'s far storage.
const CHUNK: u64 = 64;

/// Bytes booked in a bucket, and for a full bucket a later bucket that may
/// have room (path-compressed, as in union-find; never read below `base`).
type Slot = (u64, u64);

/// Bucket `b` before any booking: empty, pointing at the next.
#[inline]
const fn empty(b: u64) -> Slot {
    (0, b + 1)
}

/// Chunk `c`'s buckets, empty.
#[cold]
#[inline(never)]
fn fresh_chunk(c: u64) -> Box<[Slot; CHUNK as usize]> {
    let first = c * CHUNK;
    Box::new(std::array::from_fn(|k| empty(first + k as u64)))
}

/// Buckets in chunks of [`CHUNK`], from chunk `base_chunk` on, each
/// allocated when first booked: a bucket far ahead costs one chunk, not
/// every bucket up to it.
#[derive(Default)]
struct Chunks {
    /// Chunk index of `chunks[0]`.
    base_chunk: u64,
    /// A plain vector (retiring drains its front): it holds only the few chunks ahead.
    chunks: Vec<Option<Box<[Slot; CHUNK as usize]>>>,
}

impl Chunks {
    /// Bucket `b` if its chunk is held.
    #[inline]
    fn get(&self, b: u64) -> Option<&Slot> {
        let i = (b / CHUNK).checked_sub(self.base_chunk)?;
        Some(&self.chunks.get(i as usize)?.as_ref()?[(b % CHUNK) as usize])
    }

    /// Bucket `b` (at or after the first held chunk), its chunk allocated if need be.
    #[inline]
    fn slot(&mut self, b: u64) -> &mut Slot {
        let c = b / CHUNK;
        let i = (c - self.base_chunk) as usize;
        if i >= self.chunks.len() {
            self.chunks.resize(i + 1, None);
        }
        let chunk = self.chunks[i].get_or_insert_with(|| fresh_chunk(c));
        &mut chunk[(b % CHUNK) as usize]
    }

    /// Drops the chunks before the one holding bucket `base`.
    fn retire(&mut self, base: u64) {
        let c = base / CHUNK;
        let k = (c.saturating_sub(self.base_chunk) as usize).min(self.chunks.len());
        self.chunks.drain(..k);
        self.base_chunk += k as u64;
        if self.chunks.is_empty() {
            self.base_chunk = c;
        }
    }
}

/// Buckets of `cap` bytes from `base` on, where a full bucket points at a
/// later one that may have room: the bandwidth booking below and the test's
/// reference booking keep them differently and search them alike.
trait Buckets {
    fn cap(&self) -> u64;
    /// The first bucket that may still be booked.
    fn base(&self) -> u64;
    /// Bucket `b` (at or after `base`).
    fn bucket(&mut self, b: u64) -> &mut Slot;

    /// The first bucket at or after `b` with room.
    #[inline]
    fn find(&mut self, b: u64) -> u64 {
        let (cap, base) = (self.cap(), self.base());
        let mut x = b;
        loop {
            let s = *self.bucket(x);
            if s.0 < cap {
                break;
            }
            x = s.1.max(base);
        }
        // Path compression.
        let mut y = b;
        while y != x {
            let s = self.bucket(y);
            let n = s.1.max(base);
            s.1 = x;
            y = n;
        }
        x
    }

    /// Books `bytes` from bucket `b` on, filling the buckets with room in
    /// turn; returns the bucket the last byte went to and the bytes it holds now.
    #[inline]
    fn fill_from(&mut self, b: u64, bytes: u64) -> (u64, u64) {
        let cap = self.cap();
        let (mut b, mut left) = (b, bytes);
        loop {
            b = self.find(b);
            let s = self.bucket(b);
            let free = cap - s.0;
            if free >= left {
                s.0 += left;
                return (b, s.0);
            }
            s.0 = cap;
            left -= free;
            b += 1;
        }
    }
}

/// A resource serving `rate` bytes per cycle.
///
/// Buckets are looked up in a ring of [`RING`] entries, each tagged with
/// its bucket index (one load and a compare per lookup), in front of
/// chunks of [`CHUNK`] buckets allocated when first written: a bucket
/// whose entry holds another one takes it over, writing the other back to
/// the chunks if it was booked and is not retired (write-back, direct
/// mapped). The ring follows wherever bookings are, the backlog of a
/// saturated resource far ahead of `base` included; a request far in the
/// future costs at most one chunk, not every bucket up to it.
pub struct Bandwidth {
    /// Bytes per bucket.
    cap: u64,
    /// `2^64 / cap` rounded up when `2 <= cap < 2^28` (else 0): `n / cap`
    /// for `n` below 2^32 is then a multiply, not a 64-bit division (Lemire,
    /// Kaser and Kurz, 2019; exact for every 32-bit `n`).
    inv: u64,
    /// The first bucket that may still be booked (everything earlier is retired).
    base: u64,
    /// Buckets at `b % RING`, each with its bucket index (`u64::MAX`: none);
    /// a bucket not there is empty or in `far`. Made at the first booking:
    /// a launch makes hundreds of these (an SM's port, the L2's atomic
    /// units) and most small launches book few of them.
    ring: Vec<(u64, Slot)>,
    /// Booked buckets written back from the ring.
    far: Chunks,
    /// Buckets known to be full (`run.0 .. run.1`): a booking arriving in
    /// them goes straight to `run.1`, the first that may have room (a
    /// saturated resource's usual case). Buckets only fill until retired,
    /// so the run stays true.
    run: (u64, u64),
    pub bytes: u64,
}

impl Bandwidth {
    pub fn new(rate: f64) -> Self {
        let cap = ((rate * BUCKET as f64).round() as u64).max(1);
        Bandwidth {
            cap,
            inv: if (2..1 << 28).contains(&cap) { u64::MAX / cap + 1 } else { 0 },
            base: 0,
            ring: Vec::new(),
            far: Chunks::default(),
            run: (0, 0),
            bytes: 0,
        }
    }

    /// When the last byte of a request arriving at `t` is served, booked in
    /// bucket `b` that now holds `used` bytes: inside the bucket, in
    /// proportion to how full it is.
    #[inline(always)]
    fn served(&self, b: u64, used: u64, t: u64) -> u64 {
        let n = used * BUCKET;
        let q = if self.inv != 0 { ((self.inv as u128 * n as u128) >> 64) as u64 } else { n / self.cap };
        (b * BUCKET + q.min(BUCKET - 1)).max(t)
    }

    /// Bucket `b` (at or after `base`).
    #[inline(always)]
    fn slot(&mut self, b: u64) -> &mut Slot {
        let k = (b % RING) as usize;
        if self.ring.get(k).is_none_or(|e| e.0 != b) {
            self.enter(b);
        }
        &mut self.ring[k].1
    }

    /// Bucket `b` takes its ring entry: the bucket there goes back to `far`
    /// if booked and not retired (an unbooked one is `empty` there too), and
    /// `b` comes from `far` if booked there.
    #[inline(never)]
    fn enter(&mut self, b: u64) {
        if self.ring.is_empty() {
            self.ring = vec![(u64::MAX, (0, 0)); RING as usize];
        }
        let k = (b % RING) as usize;
        let (old, s) = self.ring[k];
        if old != u64::MAX && old >= self.base && s != empty(old) {
            *self.far.slot(old) = s;
        }
        let s = self.far.get(b).copied().unwrap_or(empty(b));
        self.ring[k] = (b, s);
    }

    /// Books `bytes` arriving at `t`; returns when the last byte is served.
    #[inline(always)]
    pub fn book(&mut self, t: u64, bytes: u64) -> u64 {
        self.bytes += bytes;
        let mut b = (t / BUCKET).max(self.base);
        if b.wrapping_sub(self.run.0) < self.run.1 - self.run.0 {
            b = self.run.1;
        }
        let cap = self.cap;
        // Most requests fit in their bucket (or the run's end): one lookup, inline.
        let s = self.slot(b);
        if s.0 < cap && cap - s.0 >= bytes {
            s.0 += bytes;
            let used = s.0;
            if used == cap && b == self.run.1 {
                self.run.1 += 1;
            }
            return self.served(b, used, t);
        }
        let cur = *s;
        self.book_over(t, b, bytes, cur)
    }

    /// [`Bandwidth::book`] of a request that does not fit in bucket `b` (`s`: its slot).
    #[inline(never)]
    fn book_over(&mut self, t: u64, b: u64, bytes: u64, s: Slot) -> u64 {
        let cap = self.cap;
        // A full bucket whose next pointer leads straight to one with room
        // for all of it: what `book_from` does then (`find`'s one hop and
        // its path compression) in three lookups instead of five.
        if s.0 >= cap {
            let x = s.1.max(self.base);
            let sx = self.slot(x);
            if sx.0 < cap && cap - sx.0 >= bytes {
                sx.0 += bytes;
                let used = sx.0;
                self.slot(b).1 = x;
                self.note_full(b, if used == cap { x + 1 } else { x });
                return self.served(x, used, t);
            }
        }
        let (done, end) = self.book_from(t, b, bytes);
        self.note_full(b, end);
        done
    }

    /// Buckets `lo .. hi` are full: the run becomes their union with it
    /// when the two touch, else the later of the two.
    #[inline]
    fn note_full(&mut self, lo: u64, hi: u64) {
        let (a, z) = self.run;
        if lo <= z && a <= hi {
            self.run = (a.min(lo), z.max(hi));
        } else if hi > z {
            self.run = (lo, hi);
        }
    }

    /// [`Bandwidth::book`] from bucket `b` on, over full buckets; also
    /// returns the end of the buckets from `b` on that are full now.
    #[inline]
    fn book_from(&mut self, t: u64, b: u64, bytes: u64) -> (u64, u64) {
        let (b, used) = self.fill_from(b, bytes);
        (self.served(b, used, t), if used == self.cap { b + 1 } else { b })
    }

    /// Forgets buckets before `t` (nothing will arrive earlier).
    pub fn retire(&mut self, t: u64) {
        self.base = self.base.max(t / BUCKET);
        self.far.retire(self.base);
    }

    /// Chunks of far buckets held (for tests of the memory bound).
    #[cfg(test)]
    fn chunks_held(&self) -> usize {
        self.far.chunks.iter().filter(|c| c.is_some()).count()
    }
}

impl Buckets for Bandwidth {
    #[inline(always)]
    fn cap(&self) -> u64 {
        self.cap
    }
    #[inline(always)]
    fn base(&self) -> u64 {
        self.base
    }
    #[inline(always)]
    fn bucket(&mut self, b: u64) -> &mut Slot {
        self.slot(b)
    }
}

/// How busy a bandwidth resource has been lately: bytes arriving per
/// window of [`LOAD_WINDOW`] cycles, for the last two windows, as a fraction
/// of what it can serve. HBM's latency rises with its load well before the
/// bandwidth is used up (queues in the memory controllers), and this is
/// what the L2-miss latency is scaled by.
pub struct LoadTracker {
    /// Bytes a window can take at full rate.
    cap: f64,
    /// (window index, bytes) for the last windows, by index modulo the ring.
    ring: [(u64, u64); 4],
}

/// Cycles per window of [`LoadTracker`].
pub const LOAD_WINDOW: u64 = 256;

impl LoadTracker {
    pub fn new(rate: f64) -> Self {
        LoadTracker { cap: (rate * LOAD_WINDOW as f64).max(1.0), ring: [(u64::MAX, 0); 4] }
    }

    /// Records `bytes` arriving at `t`; returns the utilisation (0 to 1) of
    /// the window before `t`'s and `t`'s own, this arrival included.
    pub fn arrive(&mut self, t: u64, bytes: u64) -> f64 {
        let w = t / LOAD_WINDOW;
        let slot = &mut self.ring[(w % 4) as usize];
        if slot.0 != w {
            *slot = (w, 0);
        }
        slot.1 += bytes;
        let now = slot.1;
        let prev = match w.checked_sub(1) {
            Some(p) if self.ring[(p % 4) as usize].0 == p => self.ring[(p % 4) as usize].1,
            _ => 0,
        };
        ((now + prev) as f64 / (2.0 * self.cap)).min(1.0)
    }
}

/// Result of a cache lookup of one sector.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// Present; data available at this time (in the past for a settled hit).
    Hit(u64),
    /// Absent; the line is (re)allocated and the sector marked in flight.
    Miss,
}

/// Arrival times are kept in 32 bits (4 billion cycles); `INFLIGHT` marks
/// a sector whose fill time is not known yet.
const INFLIGHT: u32 = u32::MAX;

#[inline]
fn t32(t: u64) -> u32 {
    t.min(INFLIGHT as u64 - 1) as u32
}

#[derive(Clone, Copy, Default)]
struct Meta {
    valid: u8,
    dirty: u8,
    ready: [u32; 4],
}

/// `a % d` without a division (Lemire, Kaser and Kurz, "Faster remainder by
/// direct computation", 2019): `m` is `2^128 / d + 1`, exact for every 64-bit `a`.
#[derive(Clone, Copy)]
struct FastMod {
    d: u64,
    m: u128,
}

impl FastMod {
    fn new(d: u64) -> Self {
        let d = d.max(1);
        FastMod { d, m: (u128::MAX / d as u128).wrapping_add(1) }
    }

    #[inline]
    fn rem(&self, a: u64) -> u64 {
        let low = self.m.wrapping_mul(a as u128);
        let d = self.d as u128;
        // The high 64 bits of the 192-bit `low * d`.
        (((((low as u64 as u128) * d) >> 64) + (low >> 64) * d) >> 64) as u64
    }
}

/// Whether some tag is `key` (a fold without early exit, which LLVM vectorises).
#[inline(always)]
fn any_equal(tags: &[u64], key: u64) -> bool {
    tags.iter().fold(0u64, |a, &t| a | u64::from(t == key)) != 0
}

/// The way of a set (its `tags` and use stamps `lru`) a new line takes: the
/// first empty way (tag 0), else the least recently used (the first of
/// equals). Folds over the ways, then one scan for the way found.
#[inline(always)]
fn victim(tags: &[u64], lru: &[u32]) -> usize {
    if any_equal(tags, 0) {
        return tags.iter().position(|&t| t == 0).unwrap_or(0);
    }
    let oldest = lru.iter().fold(u32::MAX, |a, &x| a.min(x));
    lru.iter().position(|&x| x == oldest).unwrap_or(0)
}

/// A sectored set-associative cache.
pub struct Cache {
    set_mod: FastMod,
    ways: usize,
    /// Line address + 1 per way (0: invalid), set by set.
    tags: Vec<u64>,
    lru: Vec<u32>,
    meta: Vec<Meta>,
    clock: u32,
    /// The line [`Cache::line`] returned last: a warp's sectors come in
    /// address order, four to a line, so most lookups find it here without
    /// the set search (a line is in one way at most, so a matching tag there
    /// is the line).
    hint: usize,
    /// Dirty sectors evicted (for write-back traffic).
    pub evicted_dirty_sectors: u64,
    /// The sets that have held a line since the cache was made or reset
    /// (a set's first line goes to way 0, so `tags[set * ways] != 0` marks them).
    touched: Vec<u32>,
    /// What it was made with ([`Cache::new`]'s arguments), to be reused for the same.
    shape: (u64, u32),
}

/// Caches of finished launches, by shape, that [`Cache::reused`] starts the
/// next launch's from: a launch's caches are a 12.8 MB L2 and 132 L1s of
/// ~60 KB on the H200 preset, so making them anew (allocated, cleared and
/// filled) is most of a small launch's time, while a reset clears only the
/// sets a launch used. Small caches are not kept; nor is more than 64 MiB
/// of arrays in all.
static SPARE: Spare<Cache> = Spare::new(64 << 20);

/// Caches with fewer lines are made anew each time.
const SPARE_MIN_LINES: usize = 1024;

impl Cache {
    pub fn new(bytes: u64, ways: u32) -> Self {
        let shape = (bytes, ways);
        let ways = ways.max(1) as usize;
        let nlines = (bytes / 128).max(ways as u64) as usize;
        let sets = (nlines / ways).max(1);
        Cache {
            set_mod: FastMod::new(sets as u64),
            ways,
            tags: vec![0; sets * ways],
            lru: vec![0; sets * ways],
            meta: vec![Meta::default(); sets * ways],
            touched: Vec::new(),
            shape,
            ..Cache::placeholder()
        }
    }

    /// A cache of no lines, allocating nothing, for a field whose real cache
    /// comes later: any lookup in it panics.
    pub fn placeholder() -> Self {
        Cache {
            set_mod: FastMod::new(1),
            ways: 1,
            tags: Vec::new(),
            lru: Vec::new(),
            meta: Vec::new(),
            clock: 0,
            hint: 0,
            evicted_dirty_sectors: 0,
            touched: Vec::new(),
            shape: (0, 0),
        }
    }

    /// [`Cache::new`], or a kept cache of that shape reset to what `new`
    /// would give (the same lookups, fills and evictions follow).
    pub fn reused(bytes: u64, ways: u32) -> Self {
        match SPARE.take_if(|c| c.shape == (bytes, ways)) {
            Some(mut c) => {
                c.reset();
                c
            }
            None => Cache::new(bytes, ways),
        }
    }

    /// Bytes of its arrays.
    fn array_bytes(&self) -> usize {
        self.tags.len() * (std::mem::size_of::<u64>() + std::mem::size_of::<u32>() + std::mem::size_of::<Meta>())
    }

    /// Every way empty, as [`Cache::new`] leaves them. Use stamps and
    /// sector state stay behind in the emptied ways: a line's are written
    /// when it is allocated, and an empty way's are never read.
    fn reset(&mut self) {
        let ways = self.ways;
        if self.touched.len() * 4 > self.tags.len() / ways {
            self.tags.fill(0);
        } else {
            for &set in &self.touched {
                let s = set as usize * ways;
                self.tags[s..s + ways].fill(0);
            }
        }
        self.touched.clear();
        self.clock = 0;
        self.hint = 0;
        self.evicted_dirty_sectors = 0;
    }

    #[inline]
    fn set_of(&self, line: u64) -> usize {
        let h = line ^ (line >> 13) ^ (line >> 23);
        self.set_mod.rem(h) as usize
    }

    #[inline]
    fn find(&self, line: u64) -> Option<usize> {
        if self.tags.get(self.hint) == Some(&(line + 1)) {
            return Some(self.hint);
        }
        let s = self.set_of(line) * self.ways;
        self.tags[s..s + self.ways].iter().position(|&t| t == line + 1).map(|i| s + i)
    }

    /// Allocates `line` in way `victim` (evicting what it held); returns its index.
    fn replace(&mut self, victim: usize, line: u64) -> usize {
        if self.tags[victim] != 0 {
            self.evicted_dirty_sectors += self.meta[victim].dirty.count_ones() as u64;
        }
        self.tags[victim] = line + 1;
        self.meta[victim] = Meta::default();
        victim
    }

    /// The line holding `sector`, allocated if absent, marked used. The
    /// hint's test is inline; the set search and allocation are not.
    #[inline(always)]
    pub fn line(&mut self, sector: u64) -> usize {
        let line = sector >> 2;
        self.clock = self.clock.wrapping_add(1);
        let i = if self.tags.get(self.hint) == Some(&(line + 1)) { self.hint } else { self.search_or_alloc(line) };
        self.lru[i] = self.clock;
        self.hint = i;
        i
    }

    /// `line`'s index found by the set search, else allocated.
    #[inline(never)]
    fn search_or_alloc(&mut self, line: u64) -> usize {
        let s = self.set_of(line) * self.ways;
        let tags = &self.tags[s..s + self.ways];
        // A fold over every way first (no early exit: vectorised); the
        // scan for the way runs only when the line is there.
        if any_equal(tags, line + 1) {
            if let Some(k) = tags.iter().position(|&t| t == line + 1) {
                return s + k;
            }
        }
        if tags[0] == 0 {
            self.touched.push((s / self.ways) as u32);
        }
        let v = victim(tags, &self.lru[s..s + self.ways]);
        self.replace(s + v, line)
    }

    /// Looks up sector `sector` (address / 32). On a miss the sector is
    /// allocated in flight; call [`Cache::fill`] with its arrival.
    #[inline]
    pub fn access(&mut self, sector: u64) -> Lookup {
        self.access_line(sector).1
    }

    /// [`Cache::access`], with the index of the line that holds the sector now
    /// (for [`Cache::fill_line`]).
    #[inline]
    pub fn access_line(&mut self, sector: u64) -> (usize, Lookup) {
        let i = self.line(sector);
        let k = (sector & 3) as usize;
        let m = &mut self.meta[i];
        let r = if m.valid >> k & 1 != 0 {
            Lookup::Hit(if m.ready[k] == INFLIGHT { u64::MAX } else { m.ready[k] as u64 })
        } else {
            m.valid |= 1 << k;
            m.ready[k] = INFLIGHT;
            Lookup::Miss
        };
        (i, r)
    }

    /// Records when sector `sector`'s data arrives (allocating it if needed);
    /// a sector already present keeps its own time unless it was in flight.
    #[inline]
    pub fn fill(&mut self, sector: u64, ready: u64) {
        let i = match self.find(sector >> 2) {
            Some(i) => i,
            None => self.line(sector),
        };
        self.fill_line(i, sector, ready);
    }

    /// [`Cache::fill`] of a sector of line `i` (from [`Cache::access_line`],
    /// with nothing allocated in this cache since): no lookup.
    #[inline]
    pub fn fill_line(&mut self, i: usize, sector: u64, ready: u64) {
        let k = (sector & 3) as usize;
        let m = &mut self.meta[i];
        if m.valid >> k & 1 == 0 || m.ready[k] == INFLIGHT {
            m.ready[k] = t32(ready);
        }
        m.valid |= 1 << k;
    }

    /// Whether the sector is present (settled or in flight).
    pub fn present(&self, sector: u64) -> bool {
        self.find(sector >> 2).is_some_and(|i| self.meta[i].valid >> (sector & 3) & 1 != 0)
    }

    /// A write of a whole or partial sector: allocates (write-back caches),
    /// marks it valid at `ready` and dirty.
    #[inline]
    pub fn write(&mut self, sector: u64, ready: u64) {
        let i = self.line(sector);
        let k = (sector & 3) as usize;
        let m = &mut self.meta[i];
        if m.valid >> k & 1 == 0 || m.ready[k] == INFLIGHT {
            m.ready[k] = t32(ready);
        }
        m.valid |= 1 << k;
        m.dirty |= 1 << k;
    }

    /// Drops a sector (write-through L1 on a store it does not keep).
    #[inline]
    pub fn invalidate(&mut self, sector: u64) {
        if let Some(i) = self.find(sector >> 2) {
            let k = (sector & 3) as usize;
            if self.meta[i].ready[k] != INFLIGHT {
                self.meta[i].valid &= !(1 << k);
            }
        }
    }
}

/// A large cache goes back to [`SPARE`] for the next launch, if there is room.
impl Drop for Cache {
    fn drop(&mut self) {
        if self.tags.len() < SPARE_MIN_LINES {
            return;
        }
        let bytes = self.array_bytes();
        // (The placeholder left in its place is not kept: no recursion.)
        if let Err(mut no_room) = SPARE.keep(std::mem::replace(self, Cache::placeholder()), bytes) {
            // Freed, and not offered again by its own drop.
            no_room.tags = Vec::new();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bandwidth_serves_rate_and_queues() {
        let mut b = Bandwidth::new(32.0);
        // Idle: served at once.
        assert_eq!(b.book(100, 32), 100);
        // 100 requests of 32 bytes at t=1000 take 100 cycles.
        let mut last = 0;
        for _ in 0..100 {
            last = b.book(1000, 32);
        }
        // Within a bucket (16 cycles) of 1100: a bucket serves from its start.
        assert!((1084..=1105).contains(&last), "{last}");
        // A later arrival after the backlog is not delayed.
        assert_eq!(b.book(5000, 32), 5000);
    }

    #[test]
    fn bandwidth_memory_does_not_grow_with_the_distance_of_a_booking() {
        let mut b = Bandwidth::new(32.0);
        assert_eq!(b.book(10, 32), 10);
        // A booking 10^9 cycles ahead (62.5 million buckets) takes a ring
        // entry, and at most one chunk when it goes back.
        assert!((1_000_000_000..1_000_000_016).contains(&b.book(1_000_000_000, 32)));
        assert!(b.chunks_held() <= 1);
        // Evicted by a bucket of its ring entry: written back, one chunk.
        let later = 1_000_000_000 + RING * BUCKET;
        assert!((later..later + 16).contains(&b.book(later, 32)));
        assert_eq!(b.chunks_held(), 1);
        // Saturating across a chunk edge fills later buckets in order.
        let edge = CHUNK * BUCKET * 3 - BUCKET;
        let mut last = 0;
        for _ in 0..64 {
            last = b.book(edge, 32);
        }
        assert!(last >= edge + 48 && last < edge + 80, "{last}");
        b.retire(edge + 200);
        // Retired buckets are gone; bookings before the retire point are served at it.
        assert!(b.book(0, 32) >= (edge + 200) / BUCKET * BUCKET);
    }

    /// A small deterministic generator for the tests below.
    fn lcg(x: &mut u64) -> u64 {
        *x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        *x >> 33
    }

    /// The bandwidth booking before the ring and the run (every bucket in
    /// chunks; a union-find walk over full buckets): the reference of the test below.
    struct Chunked {
        cap: u64,
        base: u64,
        chunks: Chunks,
    }

    impl Buckets for Chunked {
        fn cap(&self) -> u64 {
            self.cap
        }
        fn base(&self) -> u64 {
            self.base
        }
        fn bucket(&mut self, b: u64) -> &mut Slot {
            self.slot(b)
        }
    }

    impl Chunked {
        fn new(rate: f64) -> Self {
            Chunked { cap: ((rate * BUCKET as f64).round() as u64).max(1), base: 0, chunks: Chunks::default() }
        }

        fn slot(&mut self, b: u64) -> &mut Slot {
            self.chunks.slot(b)
        }

        fn book(&mut self, t: u64, bytes: u64) -> u64 {
            let (b, used) = self.fill_from((t / BUCKET).max(self.base), bytes);
            (b * BUCKET + (used * BUCKET / self.cap).min(BUCKET - 1)).max(t)
        }

        fn retire(&mut self, t: u64) {
            self.base = self.base.max(t / BUCKET);
            self.chunks.retire(self.base);
        }
    }

    #[test]
    fn the_reciprocal_divides_as_the_division_does() {
        let mut x = 3u64;
        for rate in [0.01, 0.1, 1.0, 3.3, 32.0, 100.0, 1e5, 1.6e7, 1.7e7, 1e9] {
            let b = Bandwidth::new(rate);
            for k in 0..20_000u64 {
                let used = match k {
                    0 => 0,
                    1 => b.cap,
                    2 => b.cap - 1,
                    _ => lcg(&mut x) % (b.cap + 1),
                };
                let t = lcg(&mut x) % 64;
                let want = (7 * BUCKET + (used * BUCKET / b.cap).min(BUCKET - 1)).max(t);
                assert_eq!(b.served(7, used, t), want, "cap {} used {used}", b.cap);
            }
        }
    }

    #[test]
    fn ring_run_and_one_hop_booking_is_the_reference_booking() {
        // Bursts at a few arrival times on saturated and idle resources,
        // bookings of 0 to 5 sectors, some far ahead of the ring (and
        // reached by it later), retires: every result and the state
        // (checked through later bookings) must match the reference.
        for rate in [1.0, 4.0, 32.0, 100.0] {
            let (mut a, mut b) = (Bandwidth::new(rate), Chunked::new(rate));
            let mut x = rate as u64;
            let mut t = 0u64;
            for i in 0..60_000u64 {
                if lcg(&mut x).is_multiple_of(8) {
                    t += lcg(&mut x) % 64;
                }
                let at = match lcg(&mut x) % 64 {
                    0 => t + RING * BUCKET + lcg(&mut x) % (4 * RING * BUCKET),
                    1 => t + lcg(&mut x) % (2 * RING * BUCKET),
                    _ => t + lcg(&mut x) % 48,
                };
                let bytes = 32 * (lcg(&mut x) % 6);
                assert_eq!(a.book(at, bytes), b.book(at, bytes), "rate {rate}, booking {i}");
                if i % 1000 == 999 {
                    a.retire(t.saturating_sub(200));
                    b.retire(t.saturating_sub(200));
                }
            }
        }
    }

    #[test]
    fn the_line_hint_gives_what_the_set_search_gives() {
        // Two caches, one of which forgets its hint before every call: the
        // same lookups, hits, misses, fills and write-backs.
        let (mut a, mut b) = (Cache::new(128 * 64, 4), Cache::new(128 * 64, 4));
        let mut x = 7u64;
        let mut sec = 0u64;
        for i in 0..50_000u64 {
            sec = match lcg(&mut x) % 4 {
                0 => lcg(&mut x) % 2048,
                _ => sec + 1,
            };
            b.hint = usize::MAX;
            match lcg(&mut x) % 5 {
                0 => {
                    a.write(sec, i);
                    b.write(sec, i);
                }
                1 => {
                    a.invalidate(sec);
                    b.invalidate(sec);
                }
                2 => {
                    a.fill(sec, i + 3);
                    b.fill(sec, i + 3);
                }
                _ => assert_eq!(a.access_line(sec), b.access_line(sec), "lookup {i}"),
            }
            assert_eq!(a.present(sec ^ 4), b.present(sec ^ 4));
        }
        assert_eq!(a.evicted_dirty_sectors, b.evicted_dirty_sectors);
        assert_eq!(a.tags, b.tags);
        assert_eq!(a.lru, b.lru);
    }

    /// The way-by-way victim search the folds replaced: the first empty
    /// way, else the first of the least recently used.
    fn victim_by_ways(tags: &[u64], lru: &[u32]) -> usize {
        let mut v = 0;
        for (i, (&tag, &stamp)) in tags.iter().zip(lru).enumerate() {
            if tag == 0 {
                v = i;
                break;
            }
            if stamp < lru[v] {
                v = i;
            }
        }
        v
    }

    #[test]
    fn the_folded_victim_is_the_way_by_way_victim() {
        // Random sets of 1 to 40 ways: empty ways anywhere, stamps from a
        // small range (ties) or wide (the wrapping clock's values).
        let mut x = 11u64;
        for i in 0..200_000u64 {
            let ways = (lcg(&mut x) % 40 + 1) as usize;
            let range = if i % 2 == 0 { 6 } else { u32::MAX as u64 + 1 };
            let empty = lcg(&mut x) % 4;
            let tags: Vec<u64> = (0..ways).map(|_| if lcg(&mut x) % 8 < empty { 0 } else { lcg(&mut x) % 5 + 1 }).collect();
            let lru: Vec<u32> = (0..ways).map(|_| (lcg(&mut x) % range) as u32).collect();
            assert_eq!(victim(&tags, &lru), victim_by_ways(&tags, &lru), "tags {tags:?} lru {lru:?}");
            let key = lcg(&mut x) % 6;
            assert_eq!(any_equal(&tags, key), tags.contains(&key));
        }
    }

    /// Lookups, fills, writes and drops of sectors among `lines` lines from
    /// seed `seed`: what each lookup found, and the dirty sectors evicted.
    fn workload(c: &mut Cache, seed: u64, n: usize, lines: u64) -> (Vec<Lookup>, u64) {
        let mut x = seed;
        let mut seen = Vec::new();
        for t in 0..n as u64 {
            let sec = lcg(&mut x) % (lines * 4);
            match lcg(&mut x) % 4 {
                0 | 1 => {
                    let (i, r) = c.access_line(sec);
                    if r == Lookup::Miss {
                        c.fill_line(i, sec, t + 100);
                    }
                    seen.push(r);
                }
                2 => c.write(sec, t + 50),
                _ => c.invalidate(sec),
            }
        }
        (seen, c.evicted_dirty_sectors)
    }

    #[test]
    fn a_reset_or_reused_cache_behaves_as_a_new_one() {
        let (bytes, ways) = (128 * 4096, 8);
        // A few sets touched (cleared one by one) and most of them (cleared whole).
        for (warm_lines, warm_n) in [(40, 2_000), (1 << 20, 60_000)] {
            let mut warm = Cache::new(bytes, ways);
            workload(&mut warm, 7, warm_n, warm_lines);
            warm.reset();
            let want = workload(&mut Cache::new(bytes, ways), 11, 30_000, 6_000);
            assert_eq!(workload(&mut warm, 11, 30_000, 6_000), want);
            // Through the pool: dropped, then taken again (or made anew, if
            // another test took it first: the same either way).
            let mut kept = Cache::reused(bytes, ways);
            workload(&mut kept, 3, warm_n, warm_lines);
            drop(kept);
            assert_eq!(workload(&mut Cache::reused(bytes, ways), 11, 30_000, 6_000), want);
        }
    }

    #[test]
    fn cache_hits_after_fill_and_evicts_lru() {
        let mut c = Cache::new(128 * 4, 4); // one set of 4 lines
        assert_eq!(c.access(0), Lookup::Miss);
        c.fill(0, 50);
        assert_eq!(c.access(0), Lookup::Hit(50));
        for l in 1..=4u64 {
            assert_eq!(c.access(l * 4), Lookup::Miss);
        }
        // Line 0 was least recently used and is gone.
        assert_eq!(c.access(0), Lookup::Miss);
    }
    #[test]
    fn fast_remainder_is_the_remainder() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for d in [1u64, 2, 3, 7, 64, 1000, 25_600, 51_200, (1 << 31) + 1, (1 << 40) + 3, u64::MAX] {
            let f = FastMod::new(d);
            for i in 0..20_000u64 {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                for a in [x, i, u64::MAX - i, x >> 7] {
                    assert_eq!(f.rem(a), a % d, "{a} % {d}");
                }
            }
        }
    }

    #[test]
    fn load_tracker_reports_recent_utilisation() {
        // 4 bytes per cycle: a window of 256 cycles takes 1024 bytes.
        let mut l = LoadTracker::new(4.0);
        assert!((l.arrive(10, 512) - 0.25).abs() < 1e-9);
        // The next window sees this one's 512 and its own.
        assert!((l.arrive(300, 1024) - 0.75).abs() < 1e-9);
        // Saturated: capped at 1.
        assert_eq!(l.arrive(310, 4096), 1.0);
        // Long idle: the old windows no longer count.
        assert!((l.arrive(10_000, 256) - 0.125).abs() < 1e-9);
    }
}
