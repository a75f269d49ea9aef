//! The checker: an [`Observer`] of the engine that finds races, barrier
//! divergence, sync-mask errors and reads of uninitialised memory while the
//! kernel runs. (Out-of-bounds and misaligned accesses and deadlocks stop
//! the engine with a fault; [`crate::check_launch`] turns that fault into a
//! diagnostic.)
//!
//! Blocks must run one after another through one checker (the launch is
//! serial in check mode): global memory's shadow then sees every block, and
//! a race between blocks is found like one within a block.

use crate::diag::{lanes, Collector, DiagKind, Diagnostic, Site};
use crate::global::{GlobalShadow, WarpAccess, PAGE_WORDS};
use crate::hb::{Arrival, Foreign, Hb};
use crate::plan::*;
use crate::shadow::{self, Access, Cell, Hit, Sets, ATOMIC, BYTES, WRITE};
use std::collections::HashMap;
use std::sync::Arc;
use warpsim_engine::{BarrierEvent, MemAccessKind, Observer, WarpSyncEvent, WarpSyncKind};
use warpsim_ir::Space;

/// The lanes of `lanes` whose member mask (`masks[lane]`) is `mask`.
fn lanes_with_mask(masks: &[u32], lanes: u64, mask: u32) -> u64 {
    warpsim_ir::set_bits(lanes).filter(|&l| masks[l] == mask).fold(0, |b, l| b | 1 << l)
}

/// The memories whose races the shadow cells track.
#[derive(Copy, Clone)]
enum RaceSpace {
    Shared,
    Global,
}
use RaceSpace::{Global, Shared};

impl RaceSpace {
    fn name(self) -> &'static str {
        match self {
            Shared => "shared",
            Global => "global",
        }
    }
}

/// How to check.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct CheckOptions {
    /// Check as on pre-Volta GPUs: the lanes of a warp run in lockstep, so
    /// each warp instruction is ordered after the warp's earlier ones.
    pub lockstep: bool,
}

/// What every lane of one warp memory instruction shares.
struct Op {
    kind: MemAccessKind,
    flags: u16,
    tau: u32,
    pc: u32,
    /// [`ATOMIC`] and [`WRITE`] of the access's [`Access::bits`].
    bits: u8,
    write: bool,
    access: &'static str,
}

impl Op {
    #[inline(always)]
    fn new(kind: MemAccessKind, flags: u16, tau: u32, pc: u32) -> Op {
        let atomic = kind == MemAccessKind::Atomic || flags & F_STRONG != 0;
        let write = kind != MemAccessKind::Load;
        let access = match kind {
            MemAccessKind::Load => "read",
            MemAccessKind::Store => "write",
            MemAccessKind::Atomic => "atomic",
        };
        let bits = if atomic { ATOMIC } else { 0 } | if write { WRITE } else { 0 };
        Op { kind, flags, tau, pc, bits, write, access }
    }
}

/// A warp's shared load whose recording waits ([`Checker::shared_read_fast`]):
/// its first thread, time, pc, lanes, words per lane, and where its lanes'
/// first words start in `Checker::deferred_words` (one per active lane, in order).
#[derive(Copy, Clone)]
struct Deferred {
    base: u32,
    tau: u32,
    pc: u32,
    mask: u64,
    words: u32,
    start: u32,
}

/// Deferred lanes' words beyond which the reads are recorded at once (a
/// long run of reads with nothing between them keeps a bounded log).
const DEFER_LIMIT: usize = 1 << 20;

#[derive(Default)]
struct Bar {
    arrivals: Vec<Arrival>,
    aligned: bool,
}

pub struct Checker {
    plan: Arc<Plan>,
    started: bool,
    block: u64,
    block32: u32,
    ctaid: [u32; 3],
    /// Per warp: memory, synchronising and fence instructions issued (the lanes' clock).
    tau: Vec<u32>,
    /// Per thread: clock at its latest fence (0: none yet).
    fence_tau: Vec<u32>,
    hb: Hb,
    shared: Vec<Cell>,
    shared_sets: Sets,
    /// One bit per byte of shared memory: written in this block.
    shared_init: Vec<u64>,
    /// Every byte of shared memory written in this block (bits only get set
    /// within a block, so this stays true): the fast reads skip the
    /// per-lane uninitialised test. Recomputed only when `shared_init_grew`.
    shared_full: bool,
    shared_init_grew: bool,
    /// One bit per byte of each thread's local memory; per warp, the block it was last cleared for.
    local_init: Vec<u64>,
    local_block: Vec<u64>,
    shared_sync: HashMap<u64, Foreign>,
    bars: Vec<Bar>,
    global: GlobalShadow,
    global_sets: Sets,
    global_sync: HashMap<u64, Foreign>,
    hits: Vec<Hit>,
    /// Shared reads not yet recorded in their cells (see [`Checker::shared_read_fast`]).
    deferred: Vec<Deferred>,
    deferred_words: Vec<u32>,
    /// Whether the per-warp fast paths run (off only in tests that compare them with the lane path).
    fast: bool,
    pub diags: Collector,
}

fn site(plan: &Plan, pc: u32, block: u64, tid: Option<u32>, access: Option<&'static str>) -> Site {
    let p = plan.place(pc);
    let w = plan.warp_size as u32;
    Site {
        ptx_line: p.ptx_line,
        source_line: p.source.clone(),
        opcode: p.opcode.clone(),
        block: plan.block_coords(block),
        thread: tid.map(|t| plan.thread_coords(t)),
        warp: tid.map(|t| t / w),
        lane: tid.map(|t| t % w),
        access,
    }
}

fn warp_site(plan: &Plan, block: u64, pc: u32, warp: u32, lane: Option<u32>) -> Site {
    let w = plan.warp_size as u32;
    let mut s = site(plan, pc, block, lane.map(|l| warp * w + l), None);
    s.warp = Some(warp);
    s
}

impl Checker {
    pub fn new(plan: Arc<Plan>, opts: CheckOptions) -> Checker {
        let global = GlobalShadow::new(plan.allocations.iter().map(|a| (a.1, a.2)));
        Checker {
            plan,
            started: false,
            block: 0,
            block32: 0,
            ctaid: [0; 3],
            tau: Vec::new(),
            fence_tau: Vec::new(),
            hb: Hb::new(opts.lockstep),
            shared: Vec::new(),
            shared_sets: Sets::new(true),
            shared_init: Vec::new(),
            shared_full: false,
            shared_init_grew: false,
            local_init: Vec::new(),
            local_block: Vec::new(),
            shared_sync: HashMap::new(),
            bars: (0..16).map(|_| Bar::default()).collect(),
            global,
            global_sets: Sets::new(false),
            global_sync: HashMap::new(),
            hits: Vec::new(),
            deferred: Vec::new(),
            deferred_words: Vec::new(),
            fast: true,
            diags: Collector::default(),
        }
    }

    /// A new time for warp `warp`: each memory, synchronising or fence
    /// instruction a warp issues gets the next one (other instructions need none).
    #[inline(always)]
    fn tick(&mut self, warp: u32) -> u32 {
        let t = &mut self.tau[warp as usize];
        *t += 1;
        *t
    }

    /// Folds another checker's findings into this one (parallel runs).
    pub fn merge(&mut self, other: Checker) {
        self.diags.merge(other.diags);
    }

    /// The diagnostics, by place.
    pub fn finish(self) -> Vec<Diagnostic> {
        let mut d = self.diags.diags;
        one_address_advice(&mut d);
        d.sort_by_key(|x| (x.site.ptx_line, x.kind, x.other.as_ref().map(|o| o.ptx_line)));
        d
    }

    #[cold]
    #[inline(never)]
    fn uninit(&mut self, space: &'static str, pc: u32, t: u32, addr: u64, bytes: u32) {
        let plan = self.plan.clone();
        let tag = if space == "shared" { 1 } else { 2 };
        let block = self.block;
        self.diags.report((DiagKind::Uninitialized, pc, 0, tag), || {
            let message = if space == "shared" {
                format!(
                    "read of {bytes} bytes of shared memory at offset {addr:#x} that no thread of the block has written (shared memory starts undefined in every block)"
                )
            } else {
                format!("read of {bytes} bytes of local memory at offset {addr:#x} that the thread has not written (a local variable or array used before it is set)")
            };
            Diagnostic {
                kind: DiagKind::Uninitialized,
                message,
                site: site(&plan, pc, block, Some(t), Some("read")),
                other: None,
                space: Some(space),
                address: Some(addr),
                count: 0,
            }
        });
    }

    #[cold]
    #[inline(never)]
    fn report_races(&mut self, space: &'static str, addr: u64, cur: Access, cur_access: &'static str) {
        report_races(&self.plan, &mut self.diags, self.block, &mut self.hits, space, addr, cur, cur_access);
    }

    /// An access of `bytes` at `a` of shared memory by thread `t`.
    #[inline(always)]
    fn shared_access(&mut self, t: u32, a: u64, bytes: u32, op: &Op) {
        let end = a + bytes as u64;
        if end > self.plan.shared_bytes as u64 || bytes == 0 {
            return; // the engine faults
        }
        if op.kind != MemAccessKind::Store
            && op.flags & F_INIT == 0
            && self.plan.shared_writes_seen
            && !bits_all(&self.shared_init, a, bytes)
        {
            self.uninit("shared", op.pc, t, a, bytes);
        }
        if op.kind != MemAccessKind::Load {
            bits_set(&mut self.shared_init, a, bytes);
            self.shared_init_grew = true;
        }
        if op.flags & F_ASYNC != 0 {
            return; // see F_ASYNC: its completion is not modelled, so neither are its races
        }
        self.race_check(Shared, t, a, end, op);
    }

    /// An access of `bytes` at `a` of global memory by thread `t`.
    #[inline(always)]
    fn global_access(&mut self, t: u32, a: u64, bytes: u32, op: &Op) {
        if bytes == 0 || op.flags & F_ASYNC != 0 {
            return;
        }
        let end = a.saturating_add(bytes as u64);
        self.race_check(Global, t, a, end, op);
    }

    /// Checks `[a, end)` of shared or global memory for races with earlier
    /// accesses, then records the access's synchronisation.
    #[inline(always)]
    fn race_check(&mut self, mem: RaceSpace, t: u32, a: u64, end: u64, op: &Op) {
        let (first, last) = (a >> 2, (end - 1) >> 2);
        let mut word = first;
        loop {
            let cur =
                Access { block: self.block32, tid: t as u16, bits: byte_bits(a, end, word, first, last) | op.bits, tau: op.tau, pc: op.pc };
            match mem {
                Shared => {
                    let (cell, sets) = (&mut self.shared[word as usize], &mut self.shared_sets);
                    if op.write {
                        shadow::write(cell, cur, &self.hb, sets, &mut self.hits);
                    } else {
                        shadow::read(cell, cur, &self.hb, sets, &mut self.hits);
                    }
                }
                Global => self.global.access(word, cur, op.write, &self.hb, &mut self.global_sets, &mut self.hits),
            }
            if !self.hits.is_empty() {
                self.report_races(mem.name(), word << 2, cur, op.access);
            }
            if word >= last {
                break;
            }
            word += 1;
        }
        if op.flags & (F_ATOMIC | F_STRONG | F_VOLATILE) != 0 {
            self.sync_access(mem, t, a, op);
        }
    }

    /// The synchronisation of a strong, volatile or atomic access.
    #[cold]
    #[inline(never)]
    fn sync_access(&mut self, mem: RaceSpace, t: u32, a: u64, op: &Op) {
        self.flush_reads(); // an acquire changes the clocks the deferred reads' recording consults
        let rel = releases(op.kind, op.flags, self.fence_tau[t as usize]);
        let acq = acquires(op.kind, op.flags);
        let sync = match mem {
            Shared => &mut self.shared_sync,
            Global => &mut self.global_sync,
        };
        sync_op(&mut self.hb, sync, a >> 2, t, op.tau, self.block32, acq, rel);
    }

    /// A plain aligned shared load (every lane in bounds, whole words) whose
    /// every lane reads written words whose last write it already knows, or
    /// its own (the common read after a barrier): it has nothing to report,
    /// so recording the reads in their cells (each word's read slot or set)
    /// waits in a log until [`Checker::flush_reads`], which runs, in the
    /// original order, before anything looks at those cells or changes the
    /// clocks their recording consults: any other shared access, a barrier,
    /// a warp barrier, an acquire, or a full log. A block that ends first (a
    /// kernel reading its shared memory after its last barrier) never
    /// records them: the block's shadow starts empty again. Returns false,
    /// having changed nothing, when some lane does not qualify.
    #[inline(always)]
    fn shared_read_fast(&mut self, base: u32, mask: u64, addrs: &[u64], bytes: u32, op: &Op) -> bool {
        if !self.fast
            || op.kind != MemAccessKind::Load
            || op.flags & (F_ATOMIC | F_STRONG | F_VOLATILE | F_ASYNC | F_INIT) != 0
            || bytes == 0
            || !bytes.is_multiple_of(4)
            || bytes > 16
        {
            return false;
        }
        let limit = self.plan.shared_bytes as u64;
        if self.shared_init_grew && !self.shared_full {
            self.shared_init_grew = false;
            self.shared_full = bits_full(&self.shared_init, limit);
        }
        let check_init = self.plan.shared_writes_seen && !self.shared_full;
        if bytes == 4 && self.shared_read_words(base, mask, addrs, limit, check_init, op) {
            return true;
        }
        let start = self.deferred_words.len();
        let nw = (bytes / 4) as u64;
        for l in warpsim_ir::set_bits(mask) {
            let t = base + l as u32;
            let ok = addrs.get(l).is_some_and(|&a| {
                a & 3 == 0
                    && a + bytes as u64 <= limit
                    && (!check_init || bits_all(&self.shared_init, a, bytes))
                    && (a >> 2..(a >> 2) + nw).all(|word| {
                        self.shared.get(word as usize).is_some_and(|c| {
                            let w = &c.w;
                            w.empty()
                                || (w.block == self.block32 && (w.tid as u32 == t || self.hb.snap_knows(t as usize, w.tid as usize, w.tau)))
                        })
                    })
            });
            if !ok {
                self.deferred_words.truncate(start);
                return false;
            }
            self.deferred_words.push((addrs[l] >> 2) as u32);
        }
        self.deferred.push(Deferred { base, tau: op.tau, pc: op.pc, mask, words: nw as u32, start: start as u32 });
        if self.deferred_words.len() > DEFER_LIMIT {
            self.flush_reads();
        }
        true
    }

    /// [`Checker::shared_read_fast`] for one-word loads whose lanes hold one
    /// snapshot (after a barrier, all of them): the same tests, with the
    /// snapshot's clocks found once for the warp. False (nothing done) when
    /// some lane does not qualify or the lanes' snapshots differ.
    #[inline(always)]
    fn shared_read_words(&mut self, base: u32, mask: u64, addrs: &[u64], limit: u64, check_init: bool, op: &Op) -> bool {
        if mask == 0 || (addrs.len() < 64 && mask >> addrs.len() != 0) {
            return false;
        }
        let Some(vc) = self.hb.shared_snap(base as usize, mask) else { return false };
        // Whether every lane's word holds at most one earlier read, ordered
        // before the lane (see `replaces`): then the reads are recorded at
        // once, when nothing waits in the log before them.
        let mut scan = WordScan { words: [0; 64], k: 0, direct: self.deferred.is_empty() };
        let (blk, init) = (self.block32, if check_init { Some(&self.shared_init[..]) } else { None });
        if addrs.len() <= 64 && mask == u64::MAX >> (64 - addrs.len()) {
            // Every lane: alignment and bounds in one pass over the column.
            let (odd, hi) = addrs.iter().fold((0, 0), |(o, h), &a| (o | a, h.max(a)));
            if odd & 3 != 0 || hi.saturating_add(4) > limit {
                return false;
            }
            for (l, &a) in addrs.iter().enumerate() {
                if !scan.lane(base + l as u32, a, init, &self.shared, blk, vc) {
                    return false;
                }
            }
        } else {
            for l in warpsim_ir::set_bits(mask) {
                let a = addrs[l];
                if a & 3 != 0 || a + 4 > limit || !scan.lane(base + l as u32, a, init, &self.shared, blk, vc) {
                    return false;
                }
            }
        }
        let WordScan { words, k, direct } = scan;
        if direct {
            // What `flush_reads` would do with this instruction, the first in
            // the log: each lane's read replaces the word's read slot, unless
            // an earlier lane of the warp read the word too (a broadcast),
            // which the general recording takes.
            let (blk, shared, sets) = (self.block32, &mut self.shared, &mut self.shared_sets);
            for (&word, l) in words[..k.min(64)].iter().zip(warpsim_ir::set_bits(mask)) {
                let t = base + l as u32;
                let cur = Access { block: blk, tid: t as u16, bits: BYTES, tau: op.tau, pc: op.pc };
                if let Some(c) = shared.get_mut(word as usize) {
                    if replaces(&c.r, t, blk, vc) {
                        c.r = cur;
                    } else {
                        shadow::record_read(c, cur, &self.hb, sets);
                    }
                }
            }
            return true;
        }
        let start = self.deferred_words.len();
        self.deferred_words.extend_from_slice(&words[..k.min(64)]);
        self.deferred.push(Deferred { base, tau: op.tau, pc: op.pc, mask, words: 1, start: start as u32 });
        if self.deferred_words.len() > DEFER_LIMIT {
            self.flush_reads();
        }
        true
    }

    /// A plain global load or store of whole words (every active lane's
    /// address a multiple of 4) whose words all lie in one page of the
    /// shadow: the lane path's reads or writes of each word, in the same
    /// order, with the page and the instruction's record found once. False
    /// (nothing done) otherwise.
    #[inline(always)]
    fn global_words(&mut self, base: u32, mask: u64, addrs: &[u64], bytes: u32, op: &Op) -> bool {
        if !self.fast
            || op.kind == MemAccessKind::Atomic
            || op.flags & (F_ATOMIC | F_STRONG | F_VOLATILE | F_ASYNC) != 0
            || bytes == 0
            || !bytes.is_multiple_of(4)
            || bytes > 16
            || mask == 0
            || (addrs.len() < 64 && mask >> addrs.len() != 0)
        {
            return false;
        }
        let nw = (bytes / 4) as u64;
        let (mut lo, mut hi, mut odd) = (u64::MAX, 0u64, 0u64);
        // Whether the active lanes are consecutive and their addresses
        // `step` bytes apart (the first two lanes' difference).
        let l0 = mask.trailing_zeros() as usize;
        let a0 = addrs[l0];
        let step = if mask.count_ones() > 1 { addrs[l0 + 1].wrapping_sub(a0) } else { 4 * nw };
        let mut affine = (mask >> l0) & (mask >> l0).wrapping_add(1) == 0;
        for l in warpsim_ir::set_bits(mask) {
            let a = addrs[l];
            odd |= a & 3;
            lo = lo.min(a >> 2);
            hi = hi.max((a >> 2) + nw - 1);
            affine &= a == a0.wrapping_add((l - l0) as u64 * step);
        }
        let page = lo / PAGE_WORDS;
        if odd != 0 || hi / PAGE_WORDS != page || hi >= u64::MAX >> 3 {
            return false;
        }
        let stride = (affine && step >= 4 * nw && step < 4 * PAGE_WORDS).then_some(step / 4);
        let first =
            Access { block: self.block32, tid: (base + mask.trailing_zeros()) as u16, bits: BYTES | op.bits, tau: op.tau, pc: op.pc };
        let wa = WarpAccess { first, base, mask, addrs, words: nw, write: op.write, stride };
        let idx = self.global.page(page);
        if self.global.run(idx, &wa) {
            return true;
        }
        self.global.reserve(idx, (mask.count_ones() as u64 * nw).min(hi - lo + 1) as usize, (hi - lo + 1) as usize);
        // The lanes' threads are one warp's: one record serves them all.
        let rec = self.global.rec(idx, &first);
        let (plan, diags, block) = (&self.plan, &mut self.diags, self.block);
        let on_hit =
            |word: u64, cur: Access, hits: &mut Vec<Hit>| report_races(plan, diags, block, hits, "global", word << 2, cur, op.access);
        self.global.warp(idx, rec, &wa, &self.hb, &mut self.global_sets, &mut self.hits, on_hit);
        true
    }

    /// A plain one-word shared store whose every lane's word was last
    /// written and read (one reader, not a set) by accesses its thread
    /// already knows, or by itself (the common write after a barrier): no
    /// race to report, so each lane's write does what the lane path's does
    /// there (the word written, its reads forgotten, its bytes initialised).
    /// Deferred reads are recorded first. False (only that done) when some
    /// lane does not qualify.
    #[inline(always)]
    fn shared_store_words(&mut self, base: u32, mask: u64, addrs: &[u64], bytes: u32, op: &Op) -> bool {
        if !self.fast
            || op.kind != MemAccessKind::Store
            || op.flags & (F_ATOMIC | F_STRONG | F_VOLATILE | F_ASYNC) != 0
            || bytes != 4
            || mask == 0
            || (addrs.len() < 64 && mask >> addrs.len() != 0)
        {
            return false;
        }
        self.flush_reads();
        let Some(vc) = self.hb.shared_snap(base as usize, mask) else { return false };
        let limit = self.plan.shared_bytes as u64;
        let known = |a: &Access, t: u32| {
            a.tau == 0
                || (a.block == self.block32
                    && a.bits & shadow::SET == 0
                    && (a.tid as u32 == t || vc.get(a.tid as usize).is_some_and(|&x| x >= a.tau)))
        };
        for l in warpsim_ir::set_bits(mask) {
            let a = addrs[l];
            let t = base + l as u32;
            if a & 3 != 0 || a + 4 > limit {
                return false;
            }
            let Some(c) = self.shared.get((a >> 2) as usize) else { return false };
            if !known(&c.w, t) || !known(&c.r, t) {
                return false;
            }
        }
        for l in warpsim_ir::set_bits(mask) {
            let a = addrs[l];
            // `bits_set(.., a, 4)`: the word's four bits (`a` is a multiple of 4).
            if let Some(b) = self.shared_init.get_mut((a >> 6) as usize) {
                *b |= 0xF << (a & 63);
            }
            if let Some(c) = self.shared.get_mut((a >> 2) as usize) {
                c.w = Access { block: self.block32, tid: (base + l as u32) as u16, bits: BYTES | op.bits, tau: op.tau, pc: op.pc };
                c.r = Access::default();
            }
        }
        self.shared_init_grew = true;
        true
    }

    /// Records the deferred shared reads in their cells, in order, exactly as
    /// the lane path would have (they report nothing: their write checks passed
    /// and nothing has changed since).
    #[inline(never)]
    fn flush_reads(&mut self) {
        if self.deferred.is_empty() {
            return;
        }
        let entries = std::mem::take(&mut self.deferred);
        let words = std::mem::take(&mut self.deferred_words);
        for d in &entries {
            for (i, l) in (d.start as usize..).zip(warpsim_ir::set_bits(d.mask)) {
                let t = d.base + l as u32;
                let first = words[i] as u64;
                for word in first..first + d.words as u64 {
                    let cur = Access { block: self.block32, tid: t as u16, bits: BYTES, tau: d.tau, pc: d.pc };
                    // The write test passed when the read was deferred, and
                    // holds still: the last write is the same (a shared write
                    // flushes first) and clocks only grow.
                    if let Some(c) = self.shared.get_mut(word as usize) {
                        shadow::record_read(c, cur, &self.hb, &mut self.shared_sets);
                    }
                }
            }
        }
        self.deferred = entries;
        self.deferred.clear();
        self.deferred_words = words;
        self.deferred_words.clear();
    }

    #[inline(always)]
    fn local_access(&mut self, t: u32, a: u64, bytes: u32, kind: MemAccessKind, pc: u32) {
        let lb = self.plan.local_bytes as u64;
        if a + bytes as u64 > lb || bytes == 0 {
            return; // the engine faults
        }
        let w = self.plan.warp_size;
        let warp = t as usize / w;
        if self.local_block[warp] != self.block + 1 {
            self.local_block[warp] = self.block + 1;
            let (s, e) = ((warp * w) as u64 * lb, ((warp + 1) * w) as u64 * lb);
            bits_clear(&mut self.local_init, s, e);
        }
        let off = t as u64 * lb + a;
        if kind != MemAccessKind::Store && !bits_all(&self.local_init, off, bytes) {
            self.uninit("local", pc, t, a, bytes);
        }
        if kind != MemAccessKind::Load {
            bits_set(&mut self.local_init, off, bytes);
        }
    }

    /// Checks a `*.sync` instruction's member masks and shuffle sources.
    #[inline(always)]
    fn sync_mask(&mut self, warp: u32, pc: u32, e: &WarpSyncEvent<'_>) {
        if !self.sync_mask_clean(warp, e) {
            self.sync_mask_report(warp, pc, e);
        }
    }

    /// Whether [`Checker::sync_mask_report`] has nothing to report, found
    /// for the common case (warps of up to 32 lanes, every executing lane
    /// giving one mask) without its per-lane unions: each executing lane in
    /// the mask, every lane the mask names executing it (or neither live
    /// nor present, which it reports), every shuffle source in the mask and
    /// executing. False leaves the decision to `sync_mask_report`.
    #[inline(always)]
    fn sync_mask_clean(&self, warp: u32, e: &WarpSyncEvent<'_>) -> bool {
        let w = self.plan.warp_size;
        let exec = e.exec;
        if w > 32 || exec == 0 || exec >> w != 0 || e.masks.len() < w {
            return false;
        }
        let masks = &e.masks[..w];
        let m0 = masks[exec.trailing_zeros() as usize];
        let uniform = if exec == u64::MAX >> (64 - w) {
            masks.iter().fold(true, |same, &m| same & (m == m0))
        } else {
            warpsim_ir::set_bits(exec).all(|l| masks[l] == m0)
        };
        let m = m0 as u64;
        if !uniform || exec & !m != 0 {
            return false;
        }
        // The lanes named that do not execute it: none, or only lanes that
        // neither exist nor are live elsewhere (`never` of the report).
        let missing = m & !exec;
        if missing & (!self.plan.present(warp) | e.live) != 0 {
            return false;
        }
        let Some(src) = e.sources else { return true };
        let Some(src) = src.get(..w) else { return false };
        // A valid source (below `w`) must be named and executing.
        let ok = m & exec;
        let mut bad = false;
        for (l, &j) in src.iter().enumerate() {
            bad |= exec >> l & 1 != 0 && j < w as u32 && ok >> j & 1 == 0;
        }
        !bad
    }

    #[cold]
    #[inline(never)]
    fn sync_mask_report(&mut self, warp: u32, pc: u32, e: &WarpSyncEvent<'_>) {
        let plan = self.plan.clone();
        let block = self.block;
        let w = self.plan.warp_size;
        let exec = e.exec;
        let full = |l: usize| -> u64 {
            let m = e.masks[l] as u64;
            if w > 32 {
                m << (l & !31)
            } else {
                m
            }
        };
        let present = self.plan.present(warp);
        let op = self.plan.place(pc).opcode.clone();
        let mut not_self = 0u64;
        let mut union = 0u64;
        let mut m = exec;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            let f = full(l);
            union |= f;
            if f >> l & 1 == 0 {
                not_self |= 1 << l;
            }
        }
        if not_self != 0 {
            let l = not_self.trailing_zeros();
            let mask = e.masks[l as usize];
            self.diags.report((DiagKind::SyncMask, pc, 0, 1), || Diagnostic {
                kind: DiagKind::SyncMask,
                message: format!("`{op}` executed by {} whose member mask ({mask:#010x}) does not name them (each lane must be in its own mask: undefined behaviour)", lanes(not_self)),
                site: warp_site(&plan, block, pc, warp, Some(l)),
                other: None,
                space: None,
                address: None,
                count: 0,
            });
        }
        // Different masks within one call: a lane naming a lane that gives
        // another mask (groups that each name only themselves may share an
        // instruction: lanes 0-15 with 0x0000ffff and 16-31 with 0xffff0000).
        let m0 = e.masks[exec.trailing_zeros() as usize];
        let mut uniform = true;
        let mut m = exec;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            uniform &= e.masks[l] == m0;
        }
        if !uniform {
            let mut pair = None;
            let mut m = exec;
            while m != 0 && pair.is_none() {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                let mut named = full(l) & exec;
                while named != 0 {
                    let j = named.trailing_zeros() as usize;
                    named &= named - 1;
                    if e.masks[j] != e.masks[l] {
                        pair = Some((l, j));
                        break;
                    }
                }
            }
            if let Some((l, j)) = pair {
                let (ml, mj) = (e.masks[l], e.masks[j]);
                let with = |mask: u32| lanes_with_mask(e.masks, exec, mask);
                let (gl, gj) = (with(ml), with(mj));
                self.diags.report((DiagKind::SyncMask, pc, 0, 2), || Diagnostic {
                    kind: DiagKind::SyncMask,
                    message: format!(
                        "the lanes executing one `{op}` give different member masks: {ml:#010x} ({}) names lane {j}, which gives {mj:#010x} ({}); every lane a mask names must give the same mask",
                        lanes(gl),
                        lanes(gj)
                    ),
                    site: warp_site(&plan, block, pc, warp, Some(l as u32)),
                    other: None,
                    space: None,
                    address: None,
                    count: 0,
                });
            }
        }
        // Lanes named by the mask that do not execute the instruction with the others.
        let missing = union & !exec;
        let absent = missing & !present;
        let elsewhere = missing & e.live;
        let never = absent | elsewhere;
        if never != 0 {
            let first = exec.trailing_zeros();
            let mask = e.masks[first as usize];
            let nthreads = self.plan.nthreads;
            self.diags.report((DiagKind::SyncMask, pc, 0, 3), || {
                let mut why = Vec::new();
                if elsewhere != 0 {
                    why.push(format!("{} are active but on another path (a divergent branch sent them elsewhere), so they never execute it with these lanes", lanes(elsewhere)));
                }
                if absent != 0 {
                    why.push(format!("{} do not exist (the block has {nthreads} threads, so this warp is partial)", lanes(absent)));
                }
                Diagnostic {
                    kind: DiagKind::SyncMask,
                    message: format!(
                        "`{op}` with member mask {mask:#010x} executed by {} only: the mask names lanes that never arrive: {} (undefined behaviour: the GPU may hang or return undefined values)",
                        lanes(exec),
                        why.join("; ")
                    ),
                    site: warp_site(&plan, block, pc, warp, Some(first)),
                    other: None,
                    space: None,
                    address: None,
                    count: 0,
                }
            });
        }
        // Shuffles reading a lane outside the mask, or one that does not execute it.
        if let Some(src) = e.sources {
            let mut bad = 0u64;
            let mut example = None;
            let mut m = exec;
            while m != 0 {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                let j = src[l];
                if j == u32::MAX || j as usize >= w {
                    continue;
                }
                let outside = full(l) >> j & 1 == 0;
                let inactive = exec >> j & 1 == 0;
                if (outside || inactive) && never >> j & 1 == 0 {
                    bad |= 1 << l;
                    example.get_or_insert((l as u32, j, outside));
                }
            }
            if let Some((l, j, outside)) = example {
                let mask = e.masks[l as usize];
                let state = if e.live >> j & 1 == 0 && present >> j & 1 != 0 {
                    "has exited"
                } else if present >> j & 1 == 0 {
                    "does not exist"
                } else {
                    "does not execute this shuffle"
                };
                self.diags.report((DiagKind::SyncMask, pc, 0, 4), || Diagnostic {
                    kind: DiagKind::SyncMask,
                    message: if outside {
                        format!("`{op}`: lane {l} reads lane {j}, which its member mask ({mask:#010x}) does not name ({} read outside the mask); the value read is undefined", lanes(bad))
                    } else {
                        format!("`{op}`: lane {l} reads lane {j}, which {state} ({} read inactive lanes); the value read is undefined", lanes(bad))
                    },
                    site: warp_site(&plan, block, pc, warp, Some(l)),
                    other: None,
                    space: None,
                    address: None,
                    count: 0,
                });
            }
        }
    }
}

/// Reports the races `hits` holds (the earlier accesses `cur`, at `addr`,
/// conflicts with), which it empties.
#[cold]
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn report_races(
    plan: &Plan,
    diags: &mut Collector,
    block: u64,
    hits: &mut Vec<Hit>,
    space: &'static str,
    addr: u64,
    cur: Access,
    cur_access: &'static str,
) {
    for h in hits.iter() {
        let prior_access = if h.prior.bits & ATOMIC != 0 && h.prior_write {
            "atomic"
        } else if h.prior_write {
            "write"
        } else {
            "read"
        };
        let sub = (space == "shared") as u32 | (h.prior_write as u32) << 1 | ((cur_access != "read") as u32) << 2;
        let w = plan.warp_size as u32;
        diags.report((DiagKind::Race, cur.pc, h.prior.pc, sub), || {
            let same_block = h.prior.block == cur.block;
            let same_warp = same_block && h.prior.tid as u32 / w == cur.tid as u32 / w;
            let why = if same_warp {
                WHY_SAME_WARP
            } else if same_block {
                WHY_SAME_BLOCK
            } else {
                WHY_BLOCKS
            };
            let p = plan.place(h.prior.pc);
            let prior_where = p.source.clone().map(|s| format!("{s}, PTX line {}", p.ptx_line)).unwrap_or_else(|| format!("PTX line {}", p.ptx_line));
            let message = format!(
                "{space}-memory race at {space} address {addr:#x}: this {cur_access} and an earlier {prior_access} ({prior_where}) by another thread are not ordered; {why}"
            );
            let mut prior_block = block;
            if !same_block {
                // Blocks are numbered in u32 here; fine for reports.
                prior_block = h.prior.block as u64;
            }
            Diagnostic {
                kind: DiagKind::Race,
                message,
                site: site(plan, cur.pc, block, Some(cur.tid as u32), Some(cur_access)),
                other: Some(site(plan, h.prior.pc, prior_block, Some(h.prior.tid as u32), Some(prior_access))),
                space: Some(space),
                address: Some(addr),
                count: 0,
            }
        });
    }
    hits.clear();
}

/// Whether an access releases: an explicit `.release`, or a strong write after a fence.
#[inline]
fn releases(kind: MemAccessKind, flags: u16, fence_tau: u32) -> bool {
    kind != MemAccessKind::Load && flags & (F_ATOMIC | F_STRONG | F_VOLATILE) != 0 && (flags & F_RELEASE != 0 || fence_tau != 0)
}

/// Whether an access acquires: atomics, and strong or volatile loads (an
/// atomic or load that a fence follows is the PTX acquire pattern; warpsim
/// takes the atomic itself as the acquire, which never reports a race that
/// the fence would have prevented).
#[inline]
fn acquires(kind: MemAccessKind, flags: u16) -> bool {
    kind == MemAccessKind::Atomic || (kind == MemAccessKind::Load && flags & (F_ACQUIRE | F_STRONG | F_VOLATILE) != 0)
}

#[allow(clippy::too_many_arguments)]
fn sync_op(hb: &mut Hb, objs: &mut HashMap<u64, Foreign>, key: u64, t: u32, tau: u32, block: u32, acq: bool, rel: bool) {
    if acq {
        if let Some(r) = objs.get(&key) {
            hb.acquire(t as usize, block, r);
        }
    }
    if rel {
        let r = objs.entry(key).or_default();
        hb.release(t as usize, tau, block, r);
    }
}

/// The words a one-word shared load's lanes read, in lane order, gathered by
/// [`Checker::shared_read_words`] before anything is recorded.
struct WordScan {
    words: [u32; 64],
    k: usize,
    /// Whether every word so far holds at most one read that this one replaces.
    direct: bool,
}

impl WordScan {
    /// Lane thread `t`'s aligned, in-bounds word address `a`: notes the word,
    /// or says false when the lane does not qualify (its bytes uninitialised
    /// while `init` is given, or the word's write unknown to `t`).
    #[inline(always)]
    fn lane(&mut self, t: u32, a: u64, init: Option<&[u64]>, shared: &[Cell], blk: u32, vc: &[u32]) -> bool {
        if init.is_some_and(|init| init.get((a >> 6) as usize).is_none_or(|&b| (b >> (a & 63)) & 0xF != 0xF)) {
            return false;
        }
        let Some(c) = shared.get((a >> 2) as usize) else { return false };
        let w = &c.w;
        let known = w.tau == 0 || (w.block == blk && (w.tid as u32 == t || vc.get(w.tid as usize).is_some_and(|&x| x >= w.tau)));
        if !known {
            return false;
        }
        let word = (a >> 2) as u32;
        // A lane reading its neighbour's word (a broadcast) would find the
        // neighbour's read in the slot: the log records those warp-wide.
        let k = self.k;
        self.direct = self.direct && replaces(&c.r, t, blk, vc) && (k == 0 || self.words[(k - 1) & 63] != word);
        self.words[k & 63] = word;
        self.k = k + 1;
        true
    }
}

/// Whether a whole-word read by thread `t` of block `block`, whose
/// snapshot's clocks are `vc`, simply replaces read slot `r` (what
/// [`shadow::record_read`] does there): the slot is empty, or one read (not
/// a set) by `t` itself or known to `t` through the snapshot. False leaves
/// the decision to `record_read`.
#[inline(always)]
fn replaces(r: &Access, t: u32, block: u32, vc: &[u32]) -> bool {
    r.tau == 0
        || (r.bits & shadow::SET == 0 && r.block == block && (r.tid as u32 == t || vc.get(r.tid as usize).is_some_and(|&x| x >= r.tau)))
}

/// Bytes of word `word` that `[a, end)` covers, as a 4-bit mask (`first`
/// and `last`: the words of `a` and `end - 1`).
#[inline(always)]
fn byte_bits(a: u64, end: u64, word: u64, first: u64, last: u64) -> u8 {
    let mut b = 0xF;
    if word == first {
        b &= 0xF << (a & 3);
    }
    if word == last {
        b &= 0xF >> (3 - ((end - 1) & 3));
    }
    b & 0xF
}

/// The bits `[s, s + n)` of one word (`s + n <= 64`).
#[inline(always)]
fn bit_range(s: u64, n: u32) -> u64 {
    (u64::MAX >> (64 - n)) << s
}

#[inline]
fn bits_all(bits: &[u64], a: u64, n: u32) -> bool {
    let s = a & 63;
    if n > 0 && s + n as u64 <= 64 {
        let m = bit_range(s, n);
        return bits.get((a >> 6) as usize).is_some_and(|w| w & m == m);
    }
    (a..a + n as u64).all(|i| bits.get((i >> 6) as usize).is_some_and(|w| w >> (i & 63) & 1 != 0))
}

/// Whether bits `0..n` are all set.
fn bits_full(bits: &[u64], n: u64) -> bool {
    let (whole, rest) = ((n / 64) as usize, (n % 64) as u32);
    bits.get(..whole).is_some_and(|b| b.iter().all(|&w| w == u64::MAX))
        && (rest == 0 || bits.get(whole).is_some_and(|&w| w & bit_range(0, rest) == bit_range(0, rest)))
}

#[inline]
fn bits_set(bits: &mut [u64], a: u64, n: u32) {
    let s = a & 63;
    if n > 0 && s + n as u64 <= 64 {
        if let Some(w) = bits.get_mut((a >> 6) as usize) {
            *w |= bit_range(s, n);
        }
        return;
    }
    for i in a..a + n as u64 {
        if let Some(w) = bits.get_mut((i >> 6) as usize) {
            *w |= 1 << (i & 63);
        }
    }
}

fn bits_clear(bits: &mut [u64], s: u64, e: u64) {
    let mut i = s;
    while i < e {
        let Some(w) = bits.get_mut((i >> 6) as usize) else { return };
        if i & 63 == 0 && e - i >= 64 {
            *w = 0;
            i += 64;
        } else {
            *w &= !(1 << (i & 63));
            i += 1;
        }
    }
}

impl Observer for Checker {
    const WANTS_MEMORY: bool = true;
    const WANTS_SYNC: bool = true;

    fn block_begin(&mut self, block: u64, warps: u32) {
        let plan = self.plan.clone();
        let w = plan.warp_size;
        self.started = true;
        self.block = block;
        self.block32 = block as u32;
        self.ctaid = plan.block_coords(block);
        let nw = warps as usize;
        self.tau.clear();
        self.tau.resize(nw, 0);
        self.fence_tau.clear();
        self.fence_tau.resize(nw * w, 0);
        self.hb.reset(nw, w);
        let words = (plan.shared_bytes as usize).div_ceil(4);
        self.shared.clear();
        self.shared.resize(words, Cell::default());
        self.shared_sets.clear();
        // Reads not yet recorded die with the block's shadow.
        self.deferred.clear();
        self.deferred_words.clear();
        self.shared_init.clear();
        self.shared_init.resize((plan.shared_bytes as usize).div_ceil(64), 0);
        self.shared_full = false;
        self.shared_init_grew = false;
        if plan.local_bytes > 0 {
            let need = (nw * w * plan.local_bytes as usize).div_ceil(64);
            if self.local_init.len() < need {
                self.local_init.resize(need, 0);
            }
            self.local_block.resize(nw.max(self.local_block.len()), 0);
        }
        self.shared_sync.clear();
        for b in &mut self.bars {
            b.arrivals.clear();
            b.aligned = false;
        }
    }

    fn fence(&mut self, warp: u32, pc: u32, exec: u64) {
        if !self.started || self.plan.flags[pc as usize] & F_FENCE == 0 || exec == 0 {
            return;
        }
        let tau = self.tick(warp);
        let w = self.plan.warp_size;
        let mut m = exec;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            self.fence_tau[warp as usize * w + l] = tau;
        }
    }

    fn memory(&mut self, warp: u32, pc: u32, space: Space, kind: MemAccessKind, bytes: u32, addrs: &[u64], mask: u64) {
        if !self.started {
            return;
        }
        let flags = self.plan.flags[pc as usize];
        let tau = self.tick(warp);
        let op = Op::new(kind, flags, tau, pc);
        let base = warp * self.plan.warp_size as u32;
        // Lanes in order, each access whole (its uninitialised-read check,
        // then its words), whatever the space: the order diagnostics are found in.
        let lanes = warpsim_ir::set_bits(mask).filter_map(|l| Some((base + l as u32, *addrs.get(l)?)));
        match space {
            Space::Shared => {
                if !self.shared_read_fast(base, mask, addrs, bytes, &op) && !self.shared_store_words(base, mask, addrs, bytes, &op) {
                    self.flush_reads();
                    lanes.for_each(|(t, a)| self.shared_access(t, a, bytes, &op));
                }
            }
            Space::Global => {
                if !self.global_words(base, mask, addrs, bytes, &op) {
                    lanes.for_each(|(t, a)| self.global_access(t, a, bytes, &op));
                }
            }
            Space::Local => lanes.for_each(|(t, a)| self.local_access(t, a, bytes, kind, pc)),
            _ => {
                self.flush_reads();
                for (t, addr) in lanes {
                    let (sp, a) = resolve(space, addr);
                    match sp {
                        Space::Shared => self.shared_access(t, a, bytes, &op),
                        Space::Global => self.global_access(t, a, bytes, &op),
                        Space::Local => self.local_access(t, a, bytes, kind, pc),
                        _ => {}
                    }
                }
            }
        }
    }

    fn warp_sync(&mut self, warp: u32, pc: u32, e: &WarpSyncEvent<'_>) {
        if !self.started || self.plan.flags[pc as usize] & F_SYNC == 0 {
            return;
        }
        self.sync_mask(warp, pc, e);
        if e.kind == WarpSyncKind::BarWarpSync {
            self.flush_reads();
            // The lanes that execute it together with one mask are ordered with each other.
            let tau = self.tick(warp);
            let mut rest = e.exec;
            while rest != 0 {
                let m0 = e.masks[rest.trailing_zeros() as usize];
                let group = lanes_with_mask(e.masks, rest, m0);
                self.hb.warp_sync(warp, group, tau);
                rest &= !group;
            }
        }
    }

    fn barrier(&mut self, warp: u32, pc: u32, e: &BarrierEvent) {
        let block = self.block;
        if !self.started {
            return;
        }
        if e.aligned && e.exec != e.live {
            let plan = self.plan.clone();
            let rest = e.live & !e.exec;
            let op = self.plan.place(pc).opcode.clone();
            let first = e.exec.trailing_zeros();
            self.diags.report((DiagKind::BarrierDivergence, pc, 0, 1), || Diagnostic {
                kind: DiagKind::BarrierDivergence,
                message: format!(
                    "`{op}` (barrier {}) reached by {} of warp {warp} without {} of the same warp, which are on another path: every thread of the block must reach the barrier, and for an aligned barrier (bar.sync, __syncthreads) the lanes of a warp together",
                    e.id,
                    lanes(e.exec),
                    lanes(rest)
                ),
                site: warp_site(&plan, block, pc, warp, Some(first)),
                other: None,
                space: None,
                address: None,
                count: 0,
            });
        }
        let tau = self.tick(warp);
        if let Some(b) = self.bars.get_mut(e.id as usize) {
            b.arrivals.push(Arrival { warp, lanes: e.exec, tau, wait: e.wait, pc });
            // Only whole-block barriers (__syncthreads) must be one instruction for
            // everyone; named barriers with a count pair bar.arrive with bar.sync.
            b.aligned |= e.aligned && e.count.is_none() && e.wait;
        }
    }

    fn barrier_complete(&mut self, id: u32) {
        let block = self.block;
        if !self.started {
            return;
        }
        let Some(b) = self.bars.get_mut(id as usize) else { return };
        let arrivals = std::mem::take(&mut b.arrivals);
        let aligned = std::mem::replace(&mut b.aligned, false);
        if aligned {
            if let Some(other) = arrivals.iter().find(|a| a.pc != arrivals[0].pc && a.wait) {
                let plan = self.plan.clone();
                let first = arrivals[0];
                let other = *other;
                let (p0, p1) = (self.plan.place(first.pc).ptx_line, self.plan.place(other.pc).ptx_line);
                self.diags.report((DiagKind::BarrierDivergence, first.pc, other.pc, 2), || Diagnostic {
                    kind: DiagKind::BarrierDivergence,
                    message: format!(
                        "barrier {id} completed with threads waiting at different barrier instructions (PTX lines {p0} and {p1}): __syncthreads() (bar.sync without a thread count) must be reached through the same instruction by every thread of the block (a condition around it must be uniform across the block)"
                    ),
                    site: warp_site(&plan, block, first.pc, first.warp, Some(first.lanes.trailing_zeros())),
                    other: Some(warp_site(&plan, block, other.pc, other.warp, Some(other.lanes.trailing_zeros()))),
                    space: None,
                    address: None,
                    count: 0,
                });
            }
        }
        self.flush_reads();
        self.hb.barrier(&arrivals);
        if let Some(b) = self.bars.get_mut(id as usize) {
            let mut a = arrivals;
            a.clear();
            b.arrivals = a;
        }
    }
}

use warpsim_ir::window::resolve;

/// The end of a race's message: why the accesses are not ordered, and the barrier that orders them.
const WHY_SAME_WARP: &str = "they are lanes of one warp, and since Volta the lanes of a warp do not run in lockstep: order them with __syncwarp() (bar.warp.sync) between the accesses (--lockstep checks as on pre-Volta GPUs)";
const WHY_SAME_BLOCK: &str = "they are threads of different warps with no __syncthreads() (bar.sync) between the accesses";
const WHY_BLOCKS: &str = "they are threads of different blocks, which only atomics with fences (__threadfence) order";
/// The end of a race's message where many threads read-modify-write one address (`out[0] += x`): no barrier makes that correct.
pub const WHY_RMW: &str = "many threads read-modify-write this one address (like `out[0] += x`), which no barrier makes correct: use atomicAdd (or the atomic for the operation), or reduce in shared memory or with warp shuffles first and let one thread write";
/// The same where many threads store to one address without reading it.
pub const WHY_ONE_WRITER: &str = "many threads store to this one address, which no barrier makes correct: let one thread store it (if (threadIdx.x == 0)), or use an atomic";

/// Replaces the barrier advice of races that are many threads updating one
/// address: an instruction whose stores race with its own stores by other
/// threads (one address for all), and the reads of the same source line
/// (any, without line info) racing with them (the read of a read-modify-write). Races between
/// different addresses per thread (`s[i] = s[i + 1]`) keep the barrier advice.
fn one_address_advice(diags: &mut [Diagnostic]) {
    let is_write = |s: &Site| s.access != Some("read");
    // Instructions that store to one address from many threads.
    let self_racing: Vec<u32> = diags
        .iter()
        .filter(|d| d.kind == DiagKind::Race)
        .filter_map(|d| {
            d.other.as_ref().filter(|o| o.ptx_line == d.site.ptx_line && is_write(o) && is_write(&d.site)).map(|_| d.site.ptx_line)
        })
        .collect();
    if self_racing.is_empty() {
        return;
    }
    // For each racing pair touching such a store on the same line: whether one side reads (a read-modify-write).
    let touches = |d: &Diagnostic| {
        let o = d.other.as_ref()?;
        let store = [&d.site, o].into_iter().find(|s| self_racing.contains(&s.ptx_line))?;
        // One source line (PTX without line info: any pair with the store).
        let same_line = match (&d.site.source_line, &o.source_line) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        };
        same_line.then_some(store.ptx_line)
    };
    let rmw_stores: Vec<u32> = diags
        .iter()
        .filter(|d| d.kind == DiagKind::Race)
        .filter(|d| !is_write(&d.site) || d.other.as_ref().is_some_and(|o| !is_write(o)))
        .filter_map(touches)
        .collect();
    for d in diags.iter_mut().filter(|d| d.kind == DiagKind::Race) {
        let Some(l) = touches(d) else { continue };
        let advice = if rmw_stores.contains(&l) { WHY_RMW } else { WHY_ONE_WRITER };
        for why in [WHY_SAME_WARP, WHY_SAME_BLOCK, WHY_BLOCKS] {
            if let Some(head) = d.message.strip_suffix(why) {
                d.message = format!("{head}{advice}");
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use warpsim_engine::{launch_observed_partial, GlobalMemory, LaunchArgs, LaunchConfig, LaunchInput};

    /// Runs kernel `k(.param .u64 buf)` of `src` over two blocks of `block`
    /// threads with the fast paths on or off: the diagnostics, and whether
    /// the last checker still held deferred reads, and its shared cells
    /// (write, read) once they are recorded.
    fn run(src: &str, block: u32, fast: bool) -> (Vec<Diagnostic>, bool, Vec<(Access, Access)>) {
        let prog = warpsim_ir::compile_kernel("t.ptx", src, "k").unwrap_or_else(|e| panic!("{e}\n{src}"));
        let k = prog.kernel("k").unwrap();
        let mut mem = GlobalMemory::new();
        let globals = warpsim_engine::alloc_module_globals(&prog, &mut mem);
        let buf = mem.alloc("buf", 4096, None);
        let cfg = LaunchConfig { grid: [2, 1, 1], block: [block, 1, 1], serial: true, ..Default::default() };
        let params = buf.to_le_bytes();
        let args =
            LaunchArgs { input: LaunchInput { program: &prog, kernel: k, mem: &mem, globals: &globals, params: &params }, cfg: &cfg };
        let session = crate::CheckSession::new(&prog, k, &cfg, &mem, CheckOptions::default());
        let make = || {
            let mut c = session.checker();
            c.fast = fast;
            c
        };
        let (result, checker) = launch_observed_partial(&args, &make, &|a: &mut Checker, b| a.merge(b));
        let mut checker = checker;
        let deferred = !checker.deferred.is_empty();
        checker.flush_reads();
        let cells = checker.shared.iter().map(|c| (c.w, c.r)).collect();
        (session.finish(checker, result.as_ref().err()), deferred, cells)
    }

    /// Global loads and stores of whole words through dense shadow pages
    /// (vector and scalar, racing within a block and between blocks, with
    /// and without a barrier) give the lane path's diagnostics and counts.
    #[test]
    fn global_words_report_as_the_lane_path() {
        let mut races = 0;
        for sync in ["bar.sync 0;", ""] {
            for shift in [1, 2, 7] {
                for block in [64, 40] {
                    let src = format!(
                        ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 buf)\n{{\n.reg .b32 %r<32>;\n.reg .b64 %rd<16>;\n
                         ld.param.u64 %rd1, [buf]; mov.u32 %r1, %tid.x; mul.wide.u32 %rd2, %r1, 16; add.s64 %rd3, %rd1, %rd2;
                         ld.global.v4.u32 {{%r2, %r3, %r4, %r5}}, [%rd3];
                         st.global.v4.u32 [%rd3], {{%r2, %r3, %r4, %r1}};
                         {sync}
                         xor.b32 %r6, %r1, {shift}; mul.wide.u32 %rd4, %r6, 16; add.s64 %rd5, %rd1, %rd4;
                         ld.global.u32 %r7, [%rd5+4];
                         ld.global.v2.u32 {{%r8, %r9}}, [%rd5+8];
                         st.global.u32 [%rd5+12], %r7;
                         mul.wide.u32 %rd6, %r1, 4; add.s64 %rd7, %rd1, %rd6;
                         st.global.u32 [%rd7+2048], %r1;
                         ret;\n}}\n"
                    );
                    let (slow, _, _) = run(&src, block, false);
                    let (fast, _, _) = run(&src, block, true);
                    assert_eq!(fast, slow, "{sync} shift {shift} block {block}");
                    races += slow.iter().filter(|d| d.kind == DiagKind::Race).count();
                }
            }
        }
        assert!(races > 0);
    }

    /// Deferred shared reads (reads after a barrier, vector reads, reads
    /// that race, of unwritten words, with writes and barriers after them)
    /// give the lane path's diagnostics and counts.
    #[test]
    fn deferred_shared_reads_report_as_the_lane_path() {
        let (mut races, mut uninit, mut deferred) = (false, false, false);
        // A first load where lanes 8 apart read one word (a broadcast, recorded at once).
        let bcast = "and.b32 %r20, %r1, 7; shl.b32 %r20, %r20, 2; add.u32 %r20, %r20, %r3; ld.shared.u32 %r21, [%r20];";
        for (sync1, first) in ["bar.sync 0;", "bar.warp.sync -1;", ""].into_iter().flat_map(|s| [(s, ""), (s, bcast)]) {
            for sync2 in ["", "bar.sync 0;"] {
                for stride in [1, 2, 33] {
                    for block in [64, 48] {
                        let src = format!(
                            ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 buf)\n{{\n.shared .align 16 .b8 s[1024];\n.reg .b32 %r<32>;\n
                             mov.u32 %r1, %tid.x; shl.b32 %r2, %r1, 2; mov.u32 %r3, s; add.u32 %r4, %r3, %r2;
                             st.shared.u32 [%r4], %r1;
                             {sync1}
                             {first}
                             mul.lo.u32 %r5, %r1, {stride}; and.b32 %r5, %r5, 63; shl.b32 %r6, %r5, 2; add.u32 %r7, %r3, %r6;
                             ld.shared.u32 %r8, [%r7];
                             ld.shared.u32 %r9, [%r4];
                             ld.shared.v2.u32 {{%r10, %r11}}, [%r3+8];
                             ld.shared.v4.u32 {{%r12, %r13, %r14, %r15}}, [%r3+16];
                             and.b32 %r16, %r1, 7; shl.b32 %r16, %r16, 2; add.u32 %r16, %r16, 240; add.u32 %r16, %r16, %r3;
                             ld.shared.u32 %r17, [%r16];
                             {sync2}
                             st.shared.u32 [%r7], %r8;
                             ld.shared.u32 %r18, [%r4];
                             ret;\n}}\n"
                        );
                        let (slow, _, slow_cells) = run(&src, block, false);
                        let (fast, held, fast_cells) = run(&src, block, true);
                        assert_eq!(fast, slow, "{sync1} {first} {sync2} stride {stride} block {block}");
                        assert!(fast_cells == slow_cells, "cells: {sync1} {first} {sync2} stride {stride} block {block}");
                        races |= slow.iter().any(|d| d.kind == DiagKind::Race);
                        uninit |= slow.iter().any(|d| d.kind == DiagKind::Uninitialized);
                        deferred |= held;
                    }
                }
            }
        }
        assert!(races && uninit && deferred, "races {races} uninit {uninit} deferred {deferred}");
    }

    /// Random member masks, lanes and shuffle sources: whenever the quick
    /// test finds a `*.sync` clean, the full check reports nothing (and it
    /// does report on some of the others).
    #[test]
    fn clean_sync_masks_report_nothing() {
        use warpsim_engine::{WarpSyncEvent, WarpSyncKind};
        let src = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 buf)\n{\nret;\n}\n";
        let prog = warpsim_ir::compile_kernel("t.ptx", src, "k").unwrap();
        let k = prog.kernel("k").unwrap();
        let mem = GlobalMemory::new();
        let mut next = warpsim_engine::rng::numbers(0x2545_F491_4F6C_DD1Du64);
        let (mut clean, mut reported) = (0, 0);
        for block in [32u32, 20, 64] {
            let cfg = LaunchConfig { grid: [1, 1, 1], block: [block, 1, 1], serial: true, ..Default::default() };
            let session = crate::CheckSession::new(&prog, k, &cfg, &mem, CheckOptions::default());
            for round in 0..4000 {
                let mut c = session.checker();
                let nwarps = block.div_ceil(32);
                c.block_begin(0, nwarps);
                let warp = (next() % nwarps as u64) as u32;
                let present = c.plan.present(warp);
                let exec = match round % 3 {
                    0 => present,
                    _ => next() & present,
                } | 1;
                let live = exec | (next() & present);
                let m0 = match next() % 4 {
                    0 => u32::MAX,
                    1 => exec as u32,
                    2 => live as u32,
                    _ => (exec | next()) as u32,
                };
                let mut masks = [m0; 32];
                if next().is_multiple_of(4) {
                    masks[(next() % 32) as usize] = next() as u32;
                }
                let mut sources = [0u32; 32];
                for (l, s) in sources.iter_mut().enumerate() {
                    *s = match next() % 16 {
                        0 => u32::MAX,
                        1 => 40,
                        2 => (next() % 32) as u32,
                        _ => (l as u32 + (next() % 3) as u32) % 32,
                    };
                }
                let shfl = next().is_multiple_of(2);
                let e = WarpSyncEvent {
                    kind: if shfl { WarpSyncKind::Shfl } else { WarpSyncKind::Vote },
                    exec,
                    live,
                    masks: &masks,
                    sources: shfl.then_some(&sources[..]),
                };
                let quick = c.sync_mask_clean(warp, &e);
                c.sync_mask_report(warp, 0, &e);
                if quick {
                    assert!(c.diags.diags.is_empty(), "block {block} round {round}: {:?}", c.diags.diags);
                    clean += 1;
                } else if !c.diags.diags.is_empty() {
                    reported += 1;
                }
            }
        }
        assert!(clean > 1000 && reported > 1000, "clean {clean} reported {reported}");
    }

    /// The bytes of each word an access covers, against a byte-by-byte count.
    #[test]
    fn byte_bits_cover_the_access() {
        for a in 0..12u64 {
            for n in 1..=16u64 {
                let end = a + n;
                let (first, last) = (a >> 2, (end - 1) >> 2);
                for word in first..=last {
                    let want = (0..4).filter(|b| (a..end).contains(&(word * 4 + b))).fold(0u8, |m, b| m | 1 << b);
                    assert_eq!(byte_bits(a, end, word, first, last), want, "a {a} n {n} word {word}");
                }
            }
        }
    }

    /// `bits_full` against one bit at a time: all set, one cleared (every
    /// position), bits past `n` ignored, too short a vector.
    #[test]
    fn bits_full_matches_bit_by_bit() {
        for n in 0..200u64 {
            let slow = |b: &[u64]| (0..n).all(|i| b.get((i >> 6) as usize).is_some_and(|w| w >> (i & 63) & 1 != 0));
            let mut b = vec![0u64; (n as usize).div_ceil(64)];
            bits_set(&mut b, 0, n as u32);
            assert!(bits_full(&b, n) && slow(&b), "n {n}");
            for i in 0..n {
                let mut c = b.clone();
                c[(i >> 6) as usize] &= !(1 << (i & 63));
                assert_eq!(bits_full(&c, n), slow(&c), "n {n} cleared {i}");
                assert!(!bits_full(&c, n));
            }
            if n % 64 != 0 {
                // Bits past n do not count.
                let mut c = b.clone();
                if let Some(w) = c.last_mut() {
                    *w |= !bit_range(0, (n % 64) as u32);
                }
                assert!(bits_full(&c, n));
            }
            if n > 0 {
                assert!(!bits_full(&b[..b.len() - 1], n), "n {n} short");
            }
        }
    }

    /// Word-wide bit tests and sets, against one bit at a time.
    #[test]
    fn bit_ranges_match_bit_by_bit() {
        for a in 0..130u64 {
            for n in 0..=70u32 {
                let mut fast = vec![0u64; 3];
                let mut slow = vec![0u64; 3];
                bits_set(&mut fast, a, n);
                for i in a..a + n as u64 {
                    if let Some(w) = slow.get_mut((i >> 6) as usize) {
                        *w |= 1 << (i & 63);
                    }
                }
                assert_eq!(fast, slow, "set a {a} n {n}");
                let all = |b: &[u64]| (a..a + n as u64).all(|i| b.get((i >> 6) as usize).is_some_and(|w| w >> (i & 63) & 1 != 0));
                assert_eq!(bits_all(&fast, a, n), all(&slow), "all a {a} n {n}");
                let mut part = slow.clone();
                if n > 1 {
                    let i = a + n as u64 / 2;
                    if let Some(w) = part.get_mut((i >> 6) as usize) {
                        *w &= !(1 << (i & 63));
                    }
                }
                assert_eq!(bits_all(&part, a, n), all(&part), "part a {a} n {n}");
            }
        }
    }
}
