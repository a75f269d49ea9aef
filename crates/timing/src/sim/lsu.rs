//! The memory path: the MIO pipe (shared memory wavefronts, shuffles) and
//! the LSU pipe (L1 lines) with their queues, the sectored L1 per SM, the
//! port to the L2, the L2 and DRAM with latency and bandwidth. A memory
//! instruction's captured accesses go in, the cycle its data is back comes
//! out; the cache and bandwidth primitives are in [`crate::mem`].

use super::issue::MemRec;
use super::{Gpu, Sm};
use crate::decode::TInst;
use crate::mem::{Bandwidth, Cache, LoadTracker, Lookup};
use crate::preset::TimingGpu;
use std::collections::{HashMap, VecDeque};
use warpsim_engine::Observer;
use warpsim_ir::window::{generic_space, LOCAL_WINDOW, SHARED_WINDOW};
use warpsim_ir::Space;

/// Memory-path parameters from the preset (latencies in cycles).
#[derive(Clone)]
pub(super) struct MemSpec {
    pub(super) lat_l1: u64,
    pub(super) lat_l2: u64,
    pub(super) lat_dram: u64,
    pub(super) lat_shared: u64,
    pub(super) lat_shared_atomic: u64,
    pub(super) shared_wavefronts_per_cycle: u64,
    pub(super) l1_lines_per_cycle: u64,
    pub(super) l1_bytes_per_cycle: u64,
    /// Bytes one DRAM access brings into the L2.
    pub(super) dram_fetch_bytes: u64,
    /// Extra L2-miss latency at full DRAM load (scaled by the recent load).
    pub(super) dram_queue: f64,
    /// Atomic units: how many, bytes each owns in turn, and the cycles (in
    /// hundredths) per operation and between float operations on one word.
    pub(super) atomic_units: u64,
    pub(super) atomic_chunk: u64,
    /// Chunks per window and units per window (0: no windows); see
    /// `TimingParams::l2_atomic_window_units`.
    pub(super) atomic_window_chunks: u64,
    pub(super) atomic_window_units: u64,
    pub(super) atomic_op_centi: u64,
    pub(super) atomic_float_word_centi: u64,
    pub(super) shared_cas_cycles: u64,
    pub(super) shared_cas_conflict_cycles: u64,
    /// Load/store pipe cost of L2 traffic (hundredths of a cycle per line and per sector; loads, stores).
    pub(super) l2_load_centi: (u64, u64),
    pub(super) l2_store_centi: (u64, u64),
}

impl MemSpec {
    /// The L2 atomic unit that owns byte address `addr`.
    pub(super) fn atomic_unit(&self, addr: u64) -> usize {
        let chunk = addr / self.atomic_chunk;
        let units = self.atomic_window_units;
        if units == 0 {
            return (chunk % self.atomic_units) as usize;
        }
        let (window, mut rest) = (chunk / self.atomic_window_chunks, chunk % self.atomic_window_chunks);
        let mut folded = 0;
        while rest != 0 {
            folded ^= rest % units;
            rest /= units;
        }
        ((folded + units * window) % self.atomic_units) as usize
    }

    pub(super) fn new(gpu: &TimingGpu) -> Self {
        let (p, t) = (&gpu.preset, &gpu.timing);
        MemSpec {
            lat_l1: p.latencies.l1_hit as u64,
            lat_l2: p.latencies.l2_hit as u64,
            lat_dram: gpu.dram_latency() as u64,
            lat_shared: p.latencies.shared as u64,
            lat_shared_atomic: p.latencies.shared_atomic as u64,
            shared_wavefronts_per_cycle: t.shared_wavefronts_per_cycle as u64,
            l1_lines_per_cycle: t.l1_lines_per_cycle as u64,
            l1_bytes_per_cycle: p.l1_bytes_per_cycle.max(1) as u64,
            dram_fetch_bytes: t.dram_fetch_bytes as u64,
            dram_queue: t.dram_queue_cycles,
            atomic_units: t.l2_atomic_units as u64,
            atomic_chunk: t.l2_atomic_chunk_bytes as u64,
            atomic_window_chunks: (t.l2_atomic_window_bytes / t.l2_atomic_chunk_bytes.max(1)).max(1) as u64,
            atomic_window_units: t.l2_atomic_window_units as u64,
            atomic_op_centi: (t.atomic_unit_cycles * 100.0).round() as u64,
            atomic_float_word_centi: (t.atomic_float_word_cycles * 100.0).round() as u64,
            shared_cas_cycles: t.shared_cas_cycles as u64,
            shared_cas_conflict_cycles: t.shared_cas_conflict_cycles as u64,
            l2_load_centi: (centi(t.l2_load_line_cycles), centi(t.l2_load_sector_cycles)),
            l2_store_centi: (centi(t.l2_store_line_cycles), centi(t.l2_store_sector_cycles)),
        }
    }
}

/// Cycles in hundredths.
fn centi(c: f64) -> u64 {
    (c * 100.0).round() as u64
}

/// Memory counters of the launch.
#[derive(Default)]
pub(super) struct MemCounters {
    pub(super) l2_read_sectors: u64,
    pub(super) l2_write_sectors: u64,
    pub(super) l2_read_hits: u64,
    pub(super) l1_sectors: u64,
    pub(super) l1_hits: u64,
    pub(super) dram_read_bytes: u64,
    pub(super) shared_wavefronts: u64,
    /// L2 sectors (read and written) and DRAM bytes read per pc.
    pub(super) pc_l2: Vec<u64>,
    pub(super) pc_dram: Vec<u64>,
}

impl MemCounters {
    fn new(n: usize) -> Self {
        MemCounters { pc_l2: vec![0; n], pc_dram: vec![0; n], ..Default::default() }
    }

    /// Adds `o`'s counts.
    pub(super) fn merge(&mut self, o: &MemCounters) {
        self.l2_read_sectors += o.l2_read_sectors;
        self.l2_write_sectors += o.l2_write_sectors;
        self.l2_read_hits += o.l2_read_hits;
        self.l1_sectors += o.l1_sectors;
        self.l1_hits += o.l1_hits;
        self.dram_read_bytes += o.dram_read_bytes;
        self.shared_wavefronts += o.shared_wavefronts;
        for (a, b) in self.pc_l2.iter_mut().zip(&o.pc_l2) {
            *a += b;
        }
        for (a, b) in self.pc_dram.iter_mut().zip(&o.pc_dram) {
            *a += b;
        }
    }

    /// L2 sectors read and written.
    pub(super) fn l2_sectors(&self) -> u64 {
        self.l2_read_sectors + self.l2_write_sectors
    }
}

/// The memory system beyond the SMs: the L2, its bandwidth, DRAM.
pub(super) struct MemSystem {
    pub(super) spec: MemSpec,
    pub(super) l2: Cache,
    pub(super) l2_bw: Bandwidth,
    pub(super) dram: Bandwidth,
    pub(super) dram_load: LoadTracker,
    /// The L2's atomic units (operations booked in hundredths: 100 per
    /// operation), and when each word may take its next float operation
    /// (hundredths of a cycle).
    pub(super) atomic_units: Vec<Bandwidth>,
    pub(super) atomic_words: HashMap<u64, u64>,
    pub(super) st: MemCounters,
}

impl MemSystem {
    /// The memory system for a kernel of `n` instructions.
    pub(super) fn new(spec: MemSpec, gpu: &TimingGpu, n: usize) -> Self {
        let atomic_units = (0..spec.atomic_units).map(|_| Bandwidth::new(10_000.0 / spec.atomic_op_centi.max(1) as f64)).collect();
        MemSystem {
            spec,
            l2: Cache::reused(gpu.preset.l2_bytes, gpu.timing.l2_ways),
            l2_bw: Bandwidth::new(gpu.timing.l2_bytes_per_cycle),
            dram: Bandwidth::new(gpu.dram_bytes_per_cycle()),
            dram_load: LoadTracker::new(gpu.dram_bytes_per_cycle()),
            atomic_units,
            atomic_words: HashMap::new(),
            st: MemCounters::new(n),
        }
    }

    /// The spec and counters of a memory system, with no L2, bandwidth or
    /// DRAM state: what SMs issuing only local instructions use (they touch
    /// no more than the spec and the shared-memory counters).
    pub(super) fn counters_only(spec: MemSpec, n: usize) -> Self {
        MemSystem {
            spec,
            l2: Cache::placeholder(),
            l2_bw: Bandwidth::new(1.0),
            dram: Bandwidth::new(1.0),
            dram_load: LoadTracker::new(1.0),
            atomic_units: Vec::new(),
            atomic_words: HashMap::new(),
            st: MemCounters::new(n),
        }
    }

    /// Forgets bandwidth bookings before `t`.
    pub(super) fn retire(&mut self, t: u64) {
        self.l2_bw.retire(t);
        self.dram.retire(t);
        for u in self.atomic_units.iter_mut() {
            u.retire(t);
        }
    }

    /// The operations of one atomic request at the L2: `words` are the
    /// (word address, lanes) pairs sorted by address, `at` when each
    /// sector's data is at the L2. Each sector goes to the atomic unit that
    /// owns it; lanes on distinct words of a sector are one operation, lanes
    /// on one word one operation each, and float operations on one word wait
    /// for the previous one's read-modify-write. Returns when the last
    /// operation is done.
    pub(super) fn atomics(&mut self, words: &[(u64, u32)], at: &dyn Fn(u64) -> u64, float: bool) -> u64 {
        let (op, word_gap) = (self.spec.atomic_op_centi, if float { self.spec.atomic_float_word_centi } else { self.spec.atomic_op_centi });
        let mut end = 0u64;
        let mut i = 0;
        while i < words.len() {
            let sector = words[i].0 >> 5;
            let mut j = i;
            while j < words.len() && words[j].0 >> 5 == sector {
                j += 1;
            }
            let unit = self.spec.atomic_unit(words[i].0);
            let arrive = at(sector) * 100;
            let deg = words[i..j].iter().map(|w| w.1).max().unwrap_or(1);
            for k in 0..deg {
                let mut start = arrive;
                for w in &words[i..j] {
                    if w.1 > k {
                        start = start.max(self.atomic_words.get(&w.0).copied().unwrap_or(0));
                    }
                }
                let served = self.atomic_units[unit].book(start.div_ceil(100), 100) * 100;
                let done = (start + op).max(served);
                for w in &words[i..j] {
                    if w.1 > k {
                        self.atomic_words.insert(w.0, done - op + word_gap);
                    }
                }
                end = end.max(done);
            }
            i = j;
        }
        end.div_ceil(100)
    }
}

/// One SM's memory pipes: when the MIO and L1 pipes are free, its L1 and its port to the L2.
pub(super) struct SmMem {
    pub(super) mio_free: u64,
    pub(super) l1_free: u64,
    /// Hundredths of a cycle of L2 traffic the load/store pipe still owes.
    pub(super) l1_owed: u64,
    pub(super) l1: Cache,
    pub(super) port: Bandwidth,
    /// When each shared-memory word (block slot, address) lets the next
    /// lane of a compare-and-swap loop through.
    pub(super) cas_words: HashMap<(u16, u64), u64>,
    /// The last shared-memory access costed, per slot of pcs ([`shared_wavefronts`]);
    /// made at the SM's first shared-memory access.
    pub(super) shared_memo: Option<Box<[SharedMemo; SHARED_MEMO_SLOTS]>>,
    /// The sector list global and local accesses build, kept between them
    /// (made at the first: a fresh one is 1.3 KB zeroed per instruction).
    sectors: Option<Box<SectorList>>,
}

/// Slots of [`SmMem::shared_memo`] (an instruction's slot: its
/// [`crate::decode::TInst::shared_seq`] modulo this).
const SHARED_MEMO_SLOTS: usize = 8;

/// A shared-memory access and its wavefronts: its lanes' addresses as offsets
/// from lane 0's, its active lanes, bytes per lane, and whether it is a load;
/// `key` the bits of the offsets that decide the count (see [`shared_wavefronts`]).
#[derive(Clone, Copy)]
pub(super) struct SharedMemo {
    pc: u32,
    n: u8,
    load: bool,
    bytes: u32,
    mask: u64,
    key: u64,
    rel: [u64; 64],
    wavefronts: u32,
}

impl SharedMemo {
    const EMPTY: SharedMemo = SharedMemo { pc: u32::MAX, n: 0, load: false, bytes: 0, mask: 0, key: u64::MAX, rel: [0; 64], wavefronts: 0 };
}

/// Words (of 4 bytes) a remembered access may span for [`period`] to look
/// for distinct words (a bitset of this many bits on the stack).
const PERIOD_WORDS: u64 = 2048;

/// The period (bytes, a power of two, at least the 128 bytes of one row of
/// banks) within which the words of an access (lanes `mask` of `a`, each
/// `bytes` wide from a 4-byte aligned lane 0) are all distinct and span
/// less than it; `None` if two active lanes share a word or they span
/// [`PERIOD_WORDS`] or more.
fn period(a: &[u64], mask: u64, bytes: u32) -> Option<u64> {
    let k = (bytes / 4).max(1) as u64;
    let on = |l: usize| l < 64 && mask >> l & 1 != 0;
    let (mut lo, mut hi) = (u64::MAX, 0u64);
    for (l, &x) in a.iter().enumerate() {
        if on(l) {
            lo = lo.min(x / 4);
            hi = hi.max(x / 4 + k - 1);
        }
    }
    if lo > hi || hi - lo >= PERIOD_WORDS {
        return None;
    }
    let mut seen = [0u64; (PERIOD_WORDS / 64) as usize];
    for (l, &x) in a.iter().enumerate() {
        if on(l) {
            for w in x / 4 - lo..x / 4 - lo + k {
                let (i, b) = ((w / 64) as usize, 1u64 << (w % 64));
                if seen[i] & b != 0 {
                    return None;
                }
                seen[i] |= b;
            }
        }
    }
    Some((4 * (hi - lo + 1)).next_power_of_two().max(128))
}

/// Wavefronts of a shared-memory access at `pc` (a load or not, `bytes`
/// per lane, lanes `mask`, shared offsets `a`): `warpsim_metrics::coalesce`'s
/// count, remembered in the memo's `slot` (modulo its size; the pc must
/// match too). The count depends only on the words'
/// offsets from each other: moving every address by a multiple of 4 bytes
/// moves every word by the same count, which permutes the banks and keeps
/// distinct words distinct. So an access whose lane 0 is 4-byte aligned and
/// whose lanes sit at the remembered offsets from it (addresses below 2^48:
/// no wrap-around) costs what the remembered one did. When the remembered
/// access's words were all distinct within a period `p` (a power of two
/// from 128 bytes, [`period`]), offsets need only match modulo `p`: words
/// congruent modulo `p / 4` to distinct words within less than `p / 4` are
/// distinct again, and sit in the same banks up to one rotation, so an
/// access that wraps (`& 4092` on a 4 KiB array) still hits.
#[inline]
pub(super) fn shared_wavefronts(
    memo: &mut [SharedMemo; SHARED_MEMO_SLOTS],
    slot: u32,
    pc: u32,
    a: &[u64],
    mask: u64,
    bytes: u32,
    load: bool,
) -> u32 {
    let a0 = a.first().copied().unwrap_or(0);
    let m = &mut memo[slot as usize % SHARED_MEMO_SLOTS];
    // (A remembered access has at most 64 lanes.)
    if m.pc == pc && m.n as usize == a.len() && m.mask == mask && m.bytes == bytes && m.load == load {
        // One straight fold over the lanes (no early exit: vectorised): the
        // high bits of every address, and where the offsets differ.
        let (high, diff) = a.iter().zip(&m.rel).fold((0u64, 0u64), |(h, d), (&x, &r)| (h | x, d | (x.wrapping_sub(a0) ^ r)));
        if a0 % 4 == 0 && high >> 48 == 0 && diff & m.key == 0 {
            return m.wavefronts;
        }
    }
    let high = a.iter().fold(0u64, |h, &x| h | x);
    let fits = a0 % 4 == 0 && high >> 48 == 0 && a.len() <= 64;
    let c = if load {
        warpsim_metrics::coalesce::shared_load_cost(a, mask, bytes)
    } else {
        warpsim_metrics::coalesce::shared_cost(a, mask, bytes)
    };
    if fits {
        m.pc = pc;
        m.n = a.len() as u8;
        m.mask = mask;
        m.bytes = bytes;
        m.load = load;
        for (r, &x) in m.rel.iter_mut().zip(a) {
            *r = x.wrapping_sub(a0);
        }
        m.key = period(a, mask, bytes).map_or(u64::MAX, |p| p - 1);
        m.wavefronts = c.wavefronts;
    }
    c.wavefronts
}

impl SmMem {
    /// An SM's memory pipes before any block runs there: no L1 yet
    /// (its first block brings it, [`super::place::first_wave`]).
    pub(super) fn unbuilt(gpu: &TimingGpu) -> Self {
        SmMem {
            mio_free: 0,
            l1_free: 0,
            l1_owed: 0,
            l1: Cache::placeholder(),
            port: Bandwidth::new(gpu.timing.l2_port_bytes_per_cycle),
            cas_words: HashMap::new(),
            shared_memo: None,
            sectors: None,
        }
    }

    /// Adds L2 traffic (hundredths of a cycle) to the load/store pipe's busy time.
    fn owe(&mut self, centi: u64) {
        self.l1_owed += centi;
        self.l1_free += self.l1_owed / 100;
        self.l1_owed %= 100;
    }

    /// A shuffle takes one MIO wavefront from `t`; returns when it starts.
    pub(super) fn shuffle(&mut self, q: &mut Queues, spec: &MemSpec, t: u64) -> u64 {
        let start = self.mio_free.max(t);
        self.mio_free = start + 1u64.div_ceil(spec.shared_wavefronts_per_cycle);
        q.push_mio(start);
        start
    }
}

/// A sub-partition's MIO and LSU queues: start times of entries not yet
/// started, and a time before which none starts, so that dropping the
/// started ones (every scan) is one compare while nothing has.
#[derive(Default)]
pub(super) struct Queues {
    mio: VecDeque<u64>,
    lsu: VecDeque<u64>,
    /// At most the earliest front of the two (a lower bound: a push lowers
    /// it, [`Queues::pop_started`] makes it exact).
    first: u64,
}

impl Queues {
    /// Entries in the MIO queue, in the LSU queue.
    #[inline]
    pub(super) fn mio_len(&self) -> usize {
        self.mio.len()
    }
    #[inline]
    pub(super) fn lsu_len(&self) -> usize {
        self.lsu.len()
    }

    /// The first entry's start time in the MIO queue, in the LSU queue.
    #[inline]
    pub(super) fn mio_front(&self) -> Option<u64> {
        self.mio.front().copied()
    }
    #[inline]
    pub(super) fn lsu_front(&self) -> Option<u64> {
        self.lsu.front().copied()
    }

    /// Queues an MIO entry that starts at `start`.
    #[inline]
    pub(super) fn push_mio(&mut self, start: u64) {
        self.mio.push_back(start);
        self.first = self.first.min(start);
    }

    /// Queues an LSU entry that starts at `start`.
    #[inline]
    pub(super) fn push_lsu(&mut self, start: u64) {
        self.lsu.push_back(start);
        self.first = self.first.min(start);
    }

    /// Drops the entries that have started by `t` (a front at or before
    /// `t`, in turn).
    #[inline(always)]
    pub(super) fn pop_started(&mut self, t: u64) {
        if self.first <= t {
            self.pop_fronts(t);
        }
    }

    /// [`Queues::pop_started`] when a front may have started.
    #[inline(never)]
    fn pop_fronts(&mut self, t: u64) {
        while self.mio.front().is_some_and(|&x| x <= t) {
            self.mio.pop_front();
        }
        while self.lsu.front().is_some_and(|&x| x <= t) {
            self.lsu.pop_front();
        }
        self.first = self.mio.front().copied().unwrap_or(u64::MAX).min(self.lsu.front().copied().unwrap_or(u64::MAX));
    }
}

impl<'a, const W: usize, O: Observer> Sm<'a, W, O> {
    /// Timing of a shared-memory access (lanes `shared` of shared offsets
    /// `a`) by the instruction `ti` at `pc`; returns when its results are
    /// ready. Out of line: the global path's setup stays out of shared accesses.
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    pub(super) fn shared_memory(
        &mut self,
        s: usize,
        wsu: usize,
        t: u64,
        ti: &TInst,
        pc: u32,
        a: &[u64],
        shared: u64,
        bytes: u32,
        gg: &mut Gpu<'a, W>,
    ) -> u64 {
        let mut done = t + 1;
        let load = !(ti.is_store() || ti.is_atomic());
        let memo = self.mem.shared_memo.get_or_insert_with(|| Box::new([SharedMemo::EMPTY; SHARED_MEMO_SLOTS]));
        let mut wf = shared_wavefronts(memo, ti.shared_seq, pc, a, shared, bytes, load).max(1) as u64;
        let spec = &gg.memsys.spec;
        let mut busy = wf.div_ceil(spec.shared_wavefronts_per_cycle);
        if ti.is_atomic() && ti.atom.float {
            // A compare-and-swap loop: a round trip per wavefront, dearer when they conflict.
            busy = 4 * wf + (wf - 1) * spec.shared_cas_conflict_cycles;
        } else if ti.is_atomic() && ti.atom.returns && !ti.atom.aggregated {
            // Lanes on the same word serialise when each needs its old value.
            wf = wf.max(same_address_degree(a, shared));
            busy = wf.div_ceil(spec.shared_wavefronts_per_cycle);
        }
        gg.memsys.st.shared_wavefronts += wf;
        let start = self.mem.mio_free.max(t);
        self.mem.mio_free = start + busy;
        self.smsp[s].q.push_mio(start);
        let lat = if ti.is_atomic() { spec.lat_shared_atomic + spec.lat_shared } else { spec.lat_shared };
        done = done.max(self.mem.mio_free - 1 + lat);
        if ti.is_atomic() && ti.atom.float {
            // Lanes on one word get through one round each.
            let cas = spec.shared_cas_cycles;
            let block = self.warps[wsu].block;
            let mut ws: Vec<(u64, u32)> = Vec::new();
            lanes_per_word(a, shared, &mut ws);
            for &(addr, lanes) in &ws {
                if lanes > 1 {
                    let f = self.mem.cas_words.entry((block, addr)).or_insert(0);
                    let s0 = (*f).max(start);
                    *f = s0 + lanes as u64 * cas;
                    done = done.max(*f + lat);
                }
            }
            // The warp runs the loop: nothing of it issues until its lanes are through.
            let w = &mut self.warps[wsu];
            w.fence_until = w.fence_until.max(done);
        }
        done
    }

    /// Timing of a memory instruction; returns when its results are ready.
    pub(super) fn memory(&mut self, s: usize, wsu: usize, t: u64, cap: &MemRec, addrs: &[u64], gg: &mut Gpu<'a, W>) -> u64 {
        let pc = cap.pc;
        let dec = gg.dec;
        let ti = &dec.insts[pc as usize];
        let bytes = cap.bytes.max(1);
        // Split lanes by state space.
        let (mut shared, mut local, mut global) = (0u64, 0u64, 0u64);
        match cap.space {
            Space::Shared => shared = cap.mask,
            Space::Local => local = cap.mask,
            Space::KernelParam => return t + 1,
            Space::Global | Space::Const => global = cap.mask,
            Space::Generic => {
                let mut m = cap.mask;
                while m != 0 {
                    let l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    let a = addrs[l];
                    match generic_space(a) {
                        Space::Shared => shared |= 1 << l,
                        Space::Local => local |= 1 << l,
                        _ => global |= 1 << l,
                    }
                }
            }
        }
        let mut done = t + 1;
        let n = cap.n as usize;
        if shared != 0 {
            // Shared offsets: the captured addresses themselves, or (generic
            // accesses) moved out of the shared window in a copy.
            let staged: [u64; 64];
            let a: &[u64] = if cap.space == Space::Generic {
                let mut b = [0u64; 64];
                for (x, &g) in b.iter_mut().zip(&addrs[..n]) {
                    *x = g.wrapping_sub(SHARED_WINDOW);
                }
                staged = b;
                &staged[..n]
            } else {
                &addrs[..n]
            };
            done = done.max(self.shared_memory(s, wsu, t, ti, pc, a, shared, bytes, gg));
        }
        if local != 0 || global != 0 {
            let mut list = self.mem.sectors.take().unwrap_or_else(|| Box::new(SectorList::new()));
            list.clear();
            if !list.push_progression(&addrs[..n], global, bytes) {
                let mut m = global;
                while m != 0 {
                    let l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    list.push(addrs[l], bytes);
                }
            }
            if local != 0 {
                // Local memory: per-warp interleaved, in its own address range.
                let w = &self.warps[wsu];
                let gw = self.blocks[w.block as usize].eng.id() * gg.nwarps as u64 + w.widx as u64;
                let base = (1u64 << 62) + gw * (gg.kernel.local_bytes as u64).max(4) * W as u64;
                let mut m = local;
                while m != 0 {
                    let l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    let off = if cap.space == Space::Generic { addrs[l].wrapping_sub(LOCAL_WINDOW) } else { addrs[l] };
                    list.push(base + (off / 4) * 4 * W as u64 + l as u64 * 4 + off % 4, bytes);
                }
            }
            let secs = list.sorted();
            let k = secs.len();
            let lines = if secs.is_empty() { 0 } else { 1 + secs.windows(2).filter(|w| w[0] >> 2 != w[1] >> 2).count() as u64 };
            let per = gg.memsys.spec.l1_lines_per_cycle;
            let data_cycles = (k as u64 * 32).div_ceil(gg.memsys.spec.l1_bytes_per_cycle);
            let t1 = self.mem.l1_free.max(t);
            self.mem.l1_free = t1 + lines.div_ceil(per).max(data_cycles).max(1);
            self.smsp[s].q.push_lsu(t1);
            let half = gg.memsys.spec.lat_l2 / 2;
            if ti.is_store() {
                let (a, b) = gg.memsys.spec.l2_store_centi;
                self.mem.owe(a * lines + b * k as u64);
                let mut ack = t1;
                // A local phase leaves the L2 bookings to the in-order pass (`defer`).
                let defer = gg.scratch.is_some();
                for &sec in secs {
                    self.mem.l1.invalidate(sec);
                    let arrive = self.mem.port.book(t1, 32) + half;
                    gg.memsys.st.l2_write_sectors += 1;
                    if defer {
                        self.deferred.sector(sec, arrive);
                        // The L2 serves it at `arrive` or later: a floor of the
                        // acknowledgement the replay works out (see `defer`).
                        ack = ack.max(arrive + half);
                        continue;
                    }
                    let served = gg.memsys.l2_bw.book(arrive, 32);
                    gg.memsys.l2.write(sec, served);
                    ack = ack.max(served + half);
                }
                if defer {
                    self.deferred.store(wsu, t1);
                    self.warps[wsu].ack_pending = true;
                }
                let w = &mut self.warps[wsu];
                w.store_ack = w.store_ack.max(ack);
                done = done.max(t + 1);
            } else {
                let mut ready = t1 + gg.memsys.spec.lat_l1;
                let bypass = ti.bypass_l1 || ti.is_atomic();
                let mut sec_ready: Vec<(u64, u64)> = Vec::new();
                let (mut miss_secs, mut miss_lines, mut last_line) = (0u64, 0u64, u64::MAX);
                for (i, &sec) in secs.iter().enumerate() {
                    let issue = t1 + (i as u64) / 4;
                    gg.memsys.st.l1_sectors += 1;
                    let mut l1_line = usize::MAX;
                    let hit = if bypass {
                        None
                    } else {
                        let (i, lookup) = self.mem.l1.access_line(sec);
                        l1_line = i;
                        match lookup {
                            Lookup::Hit(r) => Some(r),
                            Lookup::Miss => None,
                        }
                    };
                    let r = match hit {
                        Some(r) => {
                            gg.memsys.st.l1_hits += 1;
                            r.max(issue + gg.memsys.spec.lat_l1)
                        }
                        None => {
                            miss_secs += 1;
                            if sec >> 2 != last_line {
                                miss_lines += 1;
                                last_line = sec >> 2;
                            }
                            let r = self.l2_read(sec, issue, gg);
                            if !bypass {
                                // The L2 read touched no L1 line.
                                self.mem.l1.fill_line(l1_line, sec, r);
                            }
                            r
                        }
                    };
                    ready = ready.max(r);
                    if ti.is_atomic() {
                        sec_ready.push((sec, r));
                    }
                }
                let (a, b) = gg.memsys.spec.l2_load_centi;
                self.mem.owe(a * miss_lines + b * miss_secs);
                if ti.is_atomic() {
                    // The L2's atomic units perform the operations (one per
                    // warp when ptxas aggregates them); the old values come back.
                    let mut words: Vec<(u64, u32)> = Vec::new();
                    lanes_per_word(&addrs[..n], global | local, &mut words);
                    if ti.atom.aggregated {
                        words.iter_mut().for_each(|w| w.1 = 1);
                    }
                    let back = sec_ready.iter().copied().collect::<HashMap<u64, u64>>();
                    let half = gg.memsys.spec.lat_l2 / 2;
                    let at = |sec: u64| back.get(&sec).map_or(t1 + half, |&r| r.saturating_sub(half));
                    let end = gg.memsys.atomics(&words, &at, ti.atom.float) + half;
                    ready = ready.max(end);
                    let w = &mut self.warps[wsu];
                    w.store_ack = w.store_ack.max(ready);
                    gg.memsys.st.l2_write_sectors += k as u64;
                    if !ti.atom.returns {
                        // `RED`: nothing waits for it but fences and the warp's exit.
                        ready = t + 1;
                    }
                }
                done = done.max(ready);
            }
            self.mem.sectors = Some(list);
        }
        done
    }

    /// A sector read from the L2 leaving the L1 at `t`; returns when its data is back.
    fn l2_read(&mut self, sec: u64, t: u64, gg: &mut Gpu<'a, W>) -> u64 {
        let half = gg.memsys.spec.lat_l2 / 2;
        let at_l2 = t + half;
        gg.memsys.st.l2_read_sectors += 1;
        let (line, lookup) = gg.memsys.l2.access_line(sec);
        let have = match lookup {
            Lookup::Hit(r) => {
                gg.memsys.st.l2_read_hits += 1;
                r.max(at_l2)
            }
            Lookup::Miss => {
                let fetch = gg.memsys.spec.dram_fetch_bytes;
                let per = (fetch / 32).max(1);
                // The first sector of the fetch (a mask, not a division, for the usual power of two).
                let first = if per.is_power_of_two() { sec & !(per - 1) } else { sec - sec % per };
                let served = gg.memsys.dram.book(at_l2, fetch);
                // The controllers' queueing below saturation; a saturated
                // DRAM's backlog (the booking's delay) is the same queue.
                let queue = if gg.memsys.spec.dram_queue > 0.0 {
                    let load = gg.memsys.dram_load.arrive(at_l2, fetch);
                    ((gg.memsys.spec.dram_queue * load).round() as u64).saturating_sub(served.saturating_sub(at_l2))
                } else {
                    0
                };
                let r = served + gg.memsys.spec.lat_dram.saturating_sub(gg.memsys.spec.lat_l2) + queue;
                gg.memsys.st.dram_read_bytes += fetch;
                // Sectors of `sec`'s line are in `line` until a fill of another line allocates.
                gg.memsys.l2.fill_line(line, sec, r);
                let mut held = true;
                for x in first..first + per {
                    if x != sec {
                        if held && x >> 2 == sec >> 2 {
                            gg.memsys.l2.fill_line(line, x, r);
                        } else {
                            gg.memsys.l2.fill(x, r);
                            held = false;
                        }
                    }
                }
                r
            }
        };
        let out = gg.memsys.l2_bw.book(have, 32);
        let port = self.mem.port.book(out, 32);
        port + half
    }
}

/// Pairs (a lane's sector) a request's sector list takes; further ones are dropped.
const SECTOR_PAIRS: usize = 160;

/// The distinct sectors (address / 32) of a request's lanes, in address
/// order. Lanes are pushed in lane order; a sector equal to the one before
/// is not stored again, and while each is above the one before the list is
/// already sorted and distinct (a warp's usual ascending addresses) and
/// needs no sort.
struct SectorList {
    sectors: [u64; SECTOR_PAIRS],
    len: usize,
    pairs: usize,
    ascending: bool,
}

impl SectorList {
    fn new() -> Self {
        SectorList { sectors: [0; SECTOR_PAIRS], len: 0, pairs: 0, ascending: true }
    }

    /// Empty, as [`SectorList::new`] makes it (the array's old entries are past `len`).
    fn clear(&mut self) {
        (self.len, self.pairs, self.ascending) = (0, 0, true);
    }

    /// Into an empty list, every lane of `addrs` (all in `mask`) when they
    /// address consecutive aligned elements of a power-of-two size up to a
    /// sector from lane 0's (a coalesced warp): each lane then adds one pair
    /// and the sectors are one ascending range, as `push` lane by lane would
    /// leave them. Returns false, pushing nothing, for any other request.
    fn push_progression(&mut self, addrs: &[u64], mask: u64, bytes: u32) -> bool {
        let (n, b) = (addrs.len(), bytes as u64);
        let Some(&a0) = addrs.first() else { return false };
        let whole = if n >= 64 { u64::MAX } else { (1u64 << n) - 1 };
        if self.len != 0 || mask != whole || !b.is_power_of_two() || b > 32 || a0 % b != 0 || n > SECTOR_PAIRS {
            return false;
        }
        let mut off = 0u64;
        let mut steps = true;
        for &a in addrs {
            steps &= a.wrapping_sub(a0) == off;
            off += b;
        }
        let Some(end) = a0.checked_add(off - 1).filter(|_| steps) else { return false };
        for (i, x) in (a0 >> 5..=end >> 5).enumerate() {
            self.sectors[i] = x;
        }
        self.len = ((end >> 5) - (a0 >> 5) + 1) as usize;
        self.pairs = n;
        true
    }

    /// The sectors of `bytes` bytes from `a` (counted against [`SECTOR_PAIRS`]).
    #[inline]
    fn push(&mut self, a: u64, bytes: u32) {
        let last = (a + bytes as u64 - 1) >> 5;
        let mut x = a >> 5;
        while x <= last && self.pairs < SECTOR_PAIRS {
            self.pairs += 1;
            let before = if self.len == 0 { None } else { Some(self.sectors[self.len - 1]) };
            if before != Some(x) {
                self.ascending &= before.is_none_or(|b| b < x);
                self.sectors[self.len] = x;
                self.len += 1;
            }
            x += 1;
        }
    }

    /// The distinct sectors pushed, sorted.
    fn sorted(&mut self) -> &[u64] {
        let secs = &mut self.sectors[..self.len];
        if !self.ascending {
            secs.sort_unstable();
            let mut k = 0;
            for i in 0..secs.len() {
                if i == 0 || secs[i] != secs[k - 1] {
                    secs[k] = secs[i];
                    k += 1;
                }
            }
            self.len = k;
            self.ascending = true;
        }
        &self.sectors[..self.len]
    }
}

/// The (word address, active lanes on it) pairs of a request, by address.
fn lanes_per_word(addrs: &[u64], mask: u64, out: &mut Vec<(u64, u32)>) {
    let mut v: Vec<u64> = (0..addrs.len()).filter(|&l| mask >> l & 1 != 0).map(|l| addrs[l] & !3).collect();
    v.sort_unstable();
    out.clear();
    for a in v {
        match out.last_mut() {
            Some(last) if last.0 == a => last.1 += 1,
            _ => out.push((a, 1)),
        }
    }
}

/// The most active lanes addressing one location.
fn same_address_degree(addrs: &[u64], mask: u64) -> u64 {
    let mut v: Vec<u64> = (0..addrs.len()).filter(|&l| mask >> l & 1 != 0).map(|l| addrs[l]).collect();
    v.sort_unstable();
    let mut best = 0;
    let mut run = 0;
    for i in 0..v.len() {
        run = if i > 0 && v[i] == v[i - 1] { run + 1 } else { 1 };
        best = best.max(run);
    }
    best as u64
}

#[cfg(test)]
mod tests {
    use super::{shared_wavefronts, MemSpec, Queues, SectorList, SharedMemo, SECTOR_PAIRS, SHARED_MEMO_SLOTS};
    use crate::TimingGpu;
    use std::collections::{HashSet, VecDeque};

    fn units(spec: &MemSpec, base: u64, bytes: u64, step: u64) -> usize {
        (0..bytes / step).map(|i| spec.atomic_unit(base + i * step)).collect::<HashSet<_>>().len()
    }

    use warpsim_engine::rng::numbers;

    /// Queues against two plain deques popped at every call: the same
    /// lengths and fronts after random pushes (in order and not) and pops.
    #[test]
    fn queues_pop_what_plain_deques_pop() {
        let mut rnd = numbers(0x1d8e_4e27_c47d_124fu64);
        for _ in 0..200 {
            let (mut q, mut mio, mut lsu) = (Queues::default(), VecDeque::new(), VecDeque::new());
            let mut t = 0u64;
            for _ in 0..500 {
                let r = rnd();
                t += r % 4;
                let start = if r >> 8 & 3 == 0 { t.saturating_sub(r >> 16 & 7) } else { t + (r >> 16) % 40 };
                match r >> 24 & 3 {
                    0 => {
                        q.push_mio(start);
                        mio.push_back(start);
                    }
                    1 => {
                        q.push_lsu(start);
                        lsu.push_back(start);
                    }
                    _ => {}
                }
                q.pop_started(t);
                for d in [&mut mio, &mut lsu] {
                    while d.front().is_some_and(|&x| x <= t) {
                        d.pop_front();
                    }
                }
                assert_eq!((q.mio_len(), q.lsu_len()), (mio.len(), lsu.len()));
                assert_eq!((q.mio_front(), q.lsu_front()), (mio.front().copied(), lsu.front().copied()));
            }
        }
    }

    /// Sector lists against every pair collected, sorted and deduplicated:
    /// ascending, descending, repeated, scattered and overflowing requests,
    /// in one list cleared between requests (as an SM reuses its own).
    #[test]
    fn sector_lists_are_the_sorted_distinct_sectors_of_the_first_pairs() {
        let mut rnd = numbers(0x51_7cc1_b727_220au64);
        let mut list = SectorList::new();
        let mut progressions = 0;
        for _ in 0..50_000 {
            let r = rnd();
            let bytes = [1u32, 2, 4, 8, 16, 32, 64, 100][r as usize % 8];
            let n = (r >> 4) as usize % 64 + 1;
            let base = rnd() % (1 << 40);
            let stride = [0u64, 1, 4, 8, 16, 32, 33, 128, 4096][(r >> 12) as usize % 9];
            let addrs: Vec<u64> = (0..n as u64)
                .map(|l| match r >> 20 & 3 {
                    0 => base + l * stride,
                    1 => base + (n as u64 - l) * stride,
                    2 => base + rnd() % 1024,
                    _ => base + (l * stride) % 256,
                })
                .collect();
            list.clear();
            let mut want = Vec::new();
            for &a in &addrs {
                want.extend((a >> 5..=(a + bytes as u64 - 1) >> 5).take(SECTOR_PAIRS - want.len().min(SECTOR_PAIRS)));
            }
            // A whole coalesced warp may take the one-range path: the same list.
            let mask = if n >= 64 { u64::MAX } else { (1u64 << n) - 1 };
            if list.push_progression(&addrs, mask, bytes) {
                assert_eq!(list.pairs, n.min(SECTOR_PAIRS));
                progressions += 1;
            } else {
                addrs.iter().for_each(|&a| list.push(a, bytes));
            }
            want.truncate(SECTOR_PAIRS);
            want.sort_unstable();
            want.dedup();
            assert_eq!(list.sorted(), &want[..], "bytes {bytes} addrs {addrs:?}");
        }
        assert!(progressions > 100, "only {progressions} requests took the one-range path");
    }

    #[test]
    fn a_hot_window_reaches_only_its_units_and_larger_sets_reach_all() {
        let spec = MemSpec::new(&TimingGpu::by_name("h200").unwrap());
        let (chunk, window) = (spec.atomic_chunk, spec.atomic_chunk * spec.atomic_window_chunks);
        assert_eq!(units(&spec, 0, chunk, 4), 1, "one chunk, one unit");
        assert_eq!(units(&spec, 0, 8 * chunk, chunk), 8, "chunks of a window spread");
        assert_eq!(units(&spec, 0, window, 4) as u64, spec.atomic_window_units);
        assert_eq!(units(&spec, 0, 64 * window, chunk) as u64, spec.atomic_units);
    }

    #[test]
    fn without_windows_chunks_go_to_the_units_in_turn() {
        let mut spec = MemSpec::new(&TimingGpu::by_name("h200").unwrap());
        spec.atomic_window_units = 0;
        let c = spec.atomic_chunk;
        assert_eq!(spec.atomic_unit(0), spec.atomic_unit(c - 1));
        assert_eq!(spec.atomic_unit(c), 1);
        assert_eq!(spec.atomic_unit(spec.atomic_units * c), 0);
    }

    /// Remembered shared-memory costs against the metrics crate's count, on
    /// a random mix of strided, wrapped, broadcast, random and moved
    /// patterns, masks, sizes, loads and stores, over a few pcs.
    #[test]
    fn remembered_shared_costs_match_the_metrics_count() {
        let mut memo = Box::new([SharedMemo::EMPTY; SHARED_MEMO_SLOTS]);
        let mut rnd = numbers(0x2545_f491_4f6c_dd1du64);
        for _ in 0..60_000 {
            let r = rnd();
            let pc = (r % 7) as u32;
            let bytes = [4u32, 8, 16, 1, 2][(r >> 8) as usize % 5];
            let load = r >> 12 & 1 == 0;
            let n = if r >> 13 & 7 == 0 { (r >> 16) as usize % 64 + 1 } else { 32 };
            let mask = match r >> 22 & 3 {
                0 => rnd() & (u64::MAX >> (64 - n)),
                _ => u64::MAX >> (64 - n),
            };
            let stride = [0u64, 4, 8, 12, 16, 32, 64, 128, 132, 256, 3, 6][(r >> 24) as usize % 12];
            // Bases move by multiples of 4 mostly, sometimes not.
            let base = if r >> 28 & 7 == 0 { rnd() % 4096 } else { (rnd() % 1024) * 4 };
            let wrap = [u64::MAX, 4095, 1023][(r >> 31) as usize % 3];
            let a: Vec<u64> = match r >> 33 & 7 {
                0 => (0..n).map(|_| rnd() % 8192).collect(),
                1 => (0..n).map(|_| (rnd() % 1024) << 50).collect(),
                _ => (0..n as u64).map(|l| (base + l * stride) & wrap).collect(),
            };
            let want = if load {
                warpsim_metrics::coalesce::shared_load_cost(&a, mask, bytes)
            } else {
                warpsim_metrics::coalesce::shared_cost(&a, mask, bytes)
            }
            .wavefronts;
            let got = shared_wavefronts(&mut memo, pc, pc, &a, mask, bytes, load);
            assert_eq!(got, want, "pc {pc} bytes {bytes} load {load} mask {mask:x} a {a:?}");
        }
    }

    /// Remembered costs of accesses that move and wrap (a base advancing
    /// over a power-of-two window, `& 4092` in a kernel), against the
    /// metrics crate's count: strides that keep words distinct hit modulo the
    /// period, strides that make lanes share words must not.
    #[test]
    fn wrapping_shared_accesses_hit_modulo_the_period_and_match_the_metrics_count() {
        let mut memo = Box::new([SharedMemo::EMPTY; SHARED_MEMO_SLOTS]);
        let mut rnd = numbers(0x9e37_79b9_7f4a_7c15u64);
        let mut period_hits = 0;
        for _ in 0..400 {
            let r = rnd();
            let pc = (r % 5) as u32;
            let bytes = [4u32, 4, 8, 16, 2][(r >> 8) as usize % 5];
            let load = r >> 12 & 1 == 0;
            let n = if r >> 13 & 7 == 0 { (r >> 16) as usize % 64 + 1 } else { 32 };
            let mask = match r >> 22 & 3 {
                0 => rnd() & (u64::MAX >> (64 - n)),
                _ => u64::MAX >> (64 - n),
            };
            // Strides in words: distinct within the window or not (33 * 32 > 1024, 64 * 16 = 1024).
            let stride = [0u64, 1, 2, 3, 8, 16, 31, 32, 33, 64, 100, 256][(r >> 24) as usize % 12] * 4;
            let window = [1024u64, 4096, 8192, 512][(r >> 28) as usize % 4];
            let step = [4u64, 8, 12, 128, 2][(r >> 30) as usize % 5];
            // Lane 0 mostly 4-byte aligned.
            let base = (r >> 33) % 1024 * 4 + u64::from(r >> 50 & 7 == 0);
            for i in 0..64u64 {
                let a: Vec<u64> = (0..n as u64).map(|l| (base + i * step + l * stride) & (window - 1)).collect();
                let want = if load {
                    warpsim_metrics::coalesce::shared_load_cost(&a, mask, bytes)
                } else {
                    warpsim_metrics::coalesce::shared_cost(&a, mask, bytes)
                }
                .wavefronts;
                let slot = memo[pc as usize % SHARED_MEMO_SLOTS];
                let got = shared_wavefronts(&mut memo, pc, pc, &a, mask, bytes, load);
                assert_eq!(got, want, "pc {pc} bytes {bytes} load {load} mask {mask:x} a {a:?}");
                let exact = a.iter().zip(&slot.rel).all(|(&x, &r)| x.wrapping_sub(a[0]) == r);
                let after = &memo[pc as usize % SHARED_MEMO_SLOTS];
                if slot.pc == pc
                    && a[0].is_multiple_of(4)
                    && !exact
                    && after.rel == slot.rel
                    && after.key == slot.key
                    && slot.key != u64::MAX
                {
                    period_hits += 1;
                }
            }
        }
        assert!(period_hits > 1000, "only {period_hits} accesses hit modulo a period");
    }
}
