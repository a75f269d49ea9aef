//! The metrics observer: per-instruction counters gathered while the engine
//! runs, one observer per worker, merged at the end.

use crate::coalesce::{global_cost, local_addresses, shared_cost, shared_load_cost, unit_stride_global_cost, GlobalCost, SharedCost};
use crate::sass::Merged;
use std::sync::Arc;
use warpsim_engine::{MemAccessKind, Observer};
use warpsim_ir::window::{generic_space, LOCAL_WINDOW, SHARED_WINDOW};
use warpsim_ir::{Kernel, Op, Space};

/// A struct of `u64` counters with `add`, which adds another's field by field.
macro_rules! counters {
    ($(#[$attr:meta])* pub struct $name:ident { $($(#[$fattr:meta])* pub $f:ident: u64,)* }) => {
        $(#[$attr])*
        #[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
        pub struct $name {
            $($(#[$fattr])* pub $f: u64,)*
        }

        impl $name {
            pub fn add(&mut self, o: &$name) {
                $(self.$f += o.$f;)*
            }
        }
    };
}

counters! {
    /// How often an instruction ran and how its lanes and branches went: for one pc
    /// ([`PcCounters`]) and, summed over the instructions that become SASS, for a launch
    /// ([`crate::Totals`]).
    pub struct InstCounts {
        pub warp_insts: u64,
        /// Active lanes summed over executions (Nsight Compute's thread instructions).
        pub thread_insts: u64,
        /// Active lanes whose guard predicate was true.
        pub pred_on_threads: u64,
        /// Branch executions and their distinct targets; divergent ones split the warp.
        pub branches: u64,
        pub branch_targets: u64,
        pub divergent_branches: u64,
    }
}

counters! {
    /// Memory traffic of accesses: for one pc ([`PcCounters`]) and, summed over the loads
    /// or the stores, for a launch ([`crate::Totals::ld`], [`crate::Totals::st`]).
    pub struct MemCounts {
        /// Global memory.
        pub global_requests: u64,
        pub global_sectors: u64,
        pub global_ideal_sectors: u64,
        pub global_lines: u64,
        pub global_bytes: u64,
        /// Local memory (interleaved per lane).
        pub local_requests: u64,
        pub local_sectors: u64,
        /// Shared memory.
        pub shared_requests: u64,
        pub shared_wavefronts: u64,
        pub shared_ideal_wavefronts: u64,
    }
}

impl MemCounts {
    /// One global request of cost `g`.
    #[inline(always)]
    fn add_global(&mut self, g: GlobalCost) {
        self.global_requests += 1;
        self.global_sectors += g.sectors as u64;
        self.global_ideal_sectors += g.ideal_sectors as u64;
        self.global_lines += g.lines as u64;
        self.global_bytes += g.bytes_requested as u64;
    }

    /// One shared request of cost `s`.
    #[inline(always)]
    fn add_shared(&mut self, s: SharedCost) {
        self.shared_requests += 1;
        self.shared_wavefronts += s.wavefronts as u64;
        self.shared_ideal_wavefronts += s.ideal_wavefronts as u64;
    }
}

/// Counters of one PTX instruction (one pc), summed over every warp that ran it
/// (serialised flat: one object of both parts' fields).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct PcCounters {
    #[serde(flatten)]
    pub insts: InstCounts,
    #[serde(flatten)]
    pub mem: MemCounts,
}

impl PcCounters {
    pub fn add(&mut self, o: &PcCounters) {
        self.insts.add(&o.insts);
        self.mem.add(&o.mem);
    }
}

/// Gathers [`PcCounters`] for every instruction of one kernel
/// ([`MetricsObserver::into_per_pc`]).
#[derive(Clone, Debug)]
pub struct MetricsObserver {
    /// Branch and memory counters; the instruction counters are in `runs` until
    /// [`MetricsObserver::into_per_pc`].
    per_pc: Vec<PcCounters>,
    /// Per pc (and one past the last): the straight runs that start there
    /// minus those that end there, in warps and in active lanes (wrapping), so
    /// that a pc's warp and thread instructions are the sum over the pcs up to
    /// it; and the lanes its guard turned off.
    runs: Vec<[u64; 3]>,
    /// Which pcs have a guard and which are `bra`s (the same for every worker).
    shape: Arc<CodeShape>,
    /// The `exec` of each [`Observer::guard`] call since the last straight
    /// run, in order (as many slots as guarded pcs: a run passes each pc once).
    guard_execs: Vec<u64>,
    guards_in_run: usize,
    /// Shared loads that ptxas merges into wider ones ([`crate::sass::merged_shared_loads`]);
    /// empty: none.
    merged: Arc<[Merged]>,
    /// Per pc, its [`Memos`]' index in `memos` (`u32::MAX`: none yet).
    memo_of: Vec<u32>,
    memos: Vec<Memos>,
}

/// What the observer needs to know of the code, beside the engine's hooks.
#[derive(Clone, Debug, Default)]
pub struct CodeShape {
    /// The pcs with a guard predicate, ascending.
    guarded: Vec<u32>,
    /// Per pc (and one past the last): the index in `guarded` of the first guarded pc at or after it.
    guarded_from: Vec<u32>,
    /// Per pc: a `bra`, whose executions are its straight runs' (branches and
    /// one target each); [`Observer::branch`] then counts only divergence.
    bra: Vec<bool>,
}

impl CodeShape {
    /// The shape of `kernel`'s code.
    pub fn of(kernel: &Kernel) -> CodeShape {
        CodeShape::from_flags(kernel.code.iter().map(|i| (i.guard.is_some(), matches!(i.op, Op::Bra { .. }))))
    }

    /// Per pc, whether it is guarded and whether it is a `bra`.
    fn from_flags(flags: impl Iterator<Item = (bool, bool)>) -> CodeShape {
        let mut shape = CodeShape::default();
        for (pc, (guarded, bra)) in flags.enumerate() {
            shape.guarded_from.push(shape.guarded.len() as u32);
            if guarded {
                shape.guarded.push(pc as u32);
            }
            shape.bra.push(bra);
        }
        shape.guarded_from.push(shape.guarded.len() as u32);
        shape
    }
}

/// The last global or shared access of one instruction (pc) whose cost was
/// computed, and that cost.
/// The cost of a warp access depends on its addresses only through their
/// differences, to a granule: shifting every active lane's address by one
/// multiple of 128 bytes (global: sectors of 32 bytes and lines of 128 move
/// together) or of 4 (shared: each phase's words move together, so the
/// banks are renamed and distinct words stay distinct) leaves it unchanged.
/// The next warp of a strided loop, or the next iteration of a bank
/// pattern, is such a shift of the memo's access: its cost is the memo's
/// (the memo stays: a run of shifts compares against one access).
#[derive(Clone, Debug)]
struct Memo {
    mask: u64,
    /// Lanes in `addrs` (0: empty).
    n: usize,
    addrs: [u64; 64],
    global: GlobalCost,
    shared: SharedCost,
}

impl Memo {
    const EMPTY: Memo = Memo {
        mask: 0,
        n: 0,
        addrs: [0; 64],
        global: GlobalCost { sectors: 0, lines: 0, bytes_requested: 0, ideal_sectors: 0 },
        shared: SharedCost { wavefronts: 0, ideal_wavefronts: 0 },
    };

    /// Whether `addrs` (lanes `mask`) are the memo's shifted by one multiple of `granule`.
    #[inline(always)]
    fn shifted(&self, addrs: &[u64], mask: u64, granule: u64) -> bool {
        let n = addrs.len();
        if self.n != n || self.mask != mask || mask == 0 || n > 64 {
            return false;
        }
        let first = mask.trailing_zeros() as usize;
        let d = addrs[first].wrapping_sub(self.addrs[first]);
        if !d.is_multiple_of(granule) {
            return false;
        }
        // Every lane's difference xor `d`, or-ed: zero when all are shifted by `d`.
        let mut off = 0u64;
        if n == 32 && mask == u32::MAX as u64 {
            // A full 32-lane warp: fixed lengths, so the compare unrolls.
            if let (Ok(a), Ok(p)) = (<&[u64; 32]>::try_from(addrs), <&[u64; 32]>::try_from(&self.addrs[..32])) {
                for l in 0..32 {
                    off |= a[l].wrapping_sub(p[l]) ^ d;
                }
                return off == 0;
            }
        }
        if n == 64 || mask == (1 << n) - 1 {
            for (a, p) in addrs.iter().zip(&self.addrs) {
                off |= a.wrapping_sub(*p) ^ d;
            }
        } else {
            for (l, (a, p)) in addrs.iter().zip(&self.addrs).enumerate() {
                off |= if mask >> l & 1 != 0 { a.wrapping_sub(*p) ^ d } else { 0 };
            }
        }
        off == 0
    }

    #[inline(always)]
    fn keep(&mut self, addrs: &[u64], mask: u64) {
        let n = addrs.len().min(64);
        self.addrs[..n].copy_from_slice(&addrs[..n]);
        self.n = n;
        self.mask = mask;
    }
}

/// The memos of one instruction: a few accesses that do not shift into one
/// another (a bank-stride loop whose lanes wrap at the array's end goes
/// through a handful of patterns, each shifted on every warp), the one that
/// matched last tried first.
#[derive(Clone, Debug)]
struct Memos {
    last: u8,
    /// The way the next new access replaces.
    next: u8,
    /// Each way's [`signature`], apart so that a miss scans one short array.
    sigs: [u64; MEMO_WAYS],
    /// The ways made so far, in the order they were first replaced (most
    /// instructions use one or two of the `MEMO_WAYS`; a way is ~560 bytes,
    /// so they are made on first use rather than zeroed for every pc of
    /// every block chunk's observer).
    ways: Vec<Memo>,
}

/// Ways per instruction: `smem_stride_33`'s loads go through 9 patterns per
/// warp (one per lane that wraps at 1024 words within 256 iterations), which
/// 8 ways, replaced in turn, never kept.
const MEMO_WAYS: usize = 16;

impl Memos {
    fn new() -> Memos {
        Memos { last: 0, next: 0, sigs: [0; MEMO_WAYS], ways: Vec::new() }
    }

    /// The way that matched last, or else the way after it (the next pattern
    /// of a loop whose patterns were kept in turn), if `addrs` shift it; that
    /// way is then the one tried first.
    #[inline(always)]
    fn last_or_next(&mut self, addrs: &[u64], mask: u64, granule: u64) -> Option<&Memo> {
        let last = self.last as usize % MEMO_WAYS;
        let shifted = |w: usize| self.ways.get(w).is_some_and(|m| m.shifted(addrs, mask, granule));
        let w = if shifted(last) {
            last
        } else {
            let next = (last + 1) % MEMO_WAYS;
            if !shifted(next) {
                return None;
            }
            self.last = next as u8;
            next
        };
        self.ways.get(w)
    }
}

/// What a shift of every active lane by one amount leaves unchanged: the sum
/// of the active lanes' distances from the first one (wrapping).
fn signature(addrs: &[u64], mask: u64) -> u64 {
    let Some(&first) = addrs.get(mask.trailing_zeros() as usize) else { return 0 };
    let mut sig = 0u64;
    if addrs.len() <= 64 && mask == u64::MAX >> (64 - addrs.len()) {
        // Every lane: the sum less the first's times the lanes.
        for &a in addrs {
            sig = sig.wrapping_add(a);
        }
        return sig.wrapping_sub(first.wrapping_mul(addrs.len() as u64));
    }
    for (l, &a) in addrs.iter().enumerate() {
        sig = sig.wrapping_add(if mask >> l & 1 != 0 { a.wrapping_sub(first) } else { 0 });
    }
    sig
}

impl MetricsObserver {
    /// An observer for code of `shape` ([`CodeShape::of`] the kernel), counting
    /// its merged shared loads as the SASS loads they become. `shape` and
    /// `merged` ([`crate::sass::merged_shared_loads`] of the kernel) are
    /// computed once per launch.
    pub fn new(shape: Arc<CodeShape>, merged: Arc<[Merged]>) -> Self {
        let code_len = shape.bra.len();
        MetricsObserver {
            per_pc: vec![PcCounters::default(); code_len],
            runs: vec![[0; 3]; code_len + 1],
            guard_execs: vec![0; shape.guarded.len()],
            guards_in_run: 0,
            shape,
            merged,
            memo_of: vec![u32::MAX; code_len],
            memos: Vec::new(),
        }
    }

    /// The guarded pcs of the run `start..` (as many as [`Observer::guard`]
    /// calls since the last run: every guarded pc of the run): the lanes each
    /// one's guard turned off.
    #[inline(never)]
    fn count_guards(&mut self, start: u32, active: u64) {
        let calls = std::mem::take(&mut self.guards_in_run).min(self.guard_execs.len());
        let from = self.shape.guarded_from.get(start as usize).map_or(self.shape.guarded.len(), |&i| i as usize);
        let pcs = self.shape.guarded.get(from..).unwrap_or_default();
        for (&pc, &exec) in pcs.iter().zip(&self.guard_execs[..calls]) {
            if let Some(r) = self.runs.get_mut(pc as usize) {
                r[2] += (active & !exec).count_ones() as u64;
            }
        }
    }

    pub fn merge(&mut self, other: MetricsObserver) {
        for (a, b) in self.per_pc.iter_mut().zip(other.per_pc.iter()) {
            a.add(b);
        }
        for (a, b) in self.runs.iter_mut().zip(other.runs.iter()) {
            for (x, y) in a.iter_mut().zip(b) {
                *x = x.wrapping_add(*y);
            }
        }
    }

    /// The counters of every pc.
    pub fn into_per_pc(self) -> Vec<PcCounters> {
        let mut per_pc = self.per_pc;
        let (mut warps, mut threads) = (0u64, 0u64);
        for ((c, r), &bra) in per_pc.iter_mut().zip(&self.runs).zip(&self.shape.bra) {
            warps = warps.wrapping_add(r[0]);
            threads = threads.wrapping_add(r[1]);
            c.insts.warp_insts += warps;
            c.insts.thread_insts += threads;
            c.insts.pred_on_threads += threads - r[2];
            if bra {
                c.insts.branches += warps;
                c.insts.branch_targets += warps;
            }
        }
        per_pc
    }
}

impl Observer for MetricsObserver {
    const WANTS_MEMORY: bool = true;

    /// Kept until the run's pcs are known ([`MetricsObserver::count_guards`]);
    /// the rest of an instruction's counts are [`Observer::straight_run`]'s.
    #[inline(always)]
    fn guard(&mut self, _active: u64, exec: u64) {
        if let Some(e) = self.guard_execs.get_mut(self.guards_in_run) {
            *e = exec;
        }
        self.guards_in_run += 1;
    }

    #[inline(always)]
    fn straight_run(&mut self, _warp: u32, pc: u32, count: u32, active: u64) {
        let lanes = active.count_ones() as u64;
        let r = &mut self.runs[pc as usize..=(pc + count) as usize];
        r[0][0] = r[0][0].wrapping_add(1);
        r[0][1] = r[0][1].wrapping_add(lanes);
        let end = r.len() - 1;
        r[end][0] = r[end][0].wrapping_sub(1);
        r[end][1] = r[end][1].wrapping_sub(lanes);
        if self.guards_in_run != 0 {
            self.count_guards(pc, active);
        }
    }

    /// A `bra`'s execution and its one target are its runs' (see
    /// [`CodeShape::bra`]): only a divergent one, or a `brx.idx`, counts here.
    #[inline(always)]
    fn branch(&mut self, _warp: u32, pc: u32, taken: u64, not_taken: u64) {
        let diverged = taken != 0 && not_taken != 0;
        let bra = self.shape.bra.get(pc as usize).copied().unwrap_or(false);
        if diverged || !bra {
            self.count_branch(pc, bra, diverged);
        }
    }

    /// A global or shared access that shifts its instruction's memo adds the memo's
    /// cost here; anything else is [`MetricsObserver::count_memory`]'s.
    #[inline(always)]
    fn memory(&mut self, _warp: u32, pc: u32, space: Space, kind: MemAccessKind, bytes: u32, addrs: &[u64], mask: u64) {
        let granule = match space {
            Space::Global => 128,
            Space::Shared => 4,
            _ => return self.count_memory(pc, space, kind, bytes, addrs, mask),
        };
        let pcu = pc as usize;
        if let (Some(&i), Some(c)) = (self.memo_of.get(pcu), self.per_pc.get_mut(pcu)) {
            if let Some(m) = self.memos.get_mut(i as usize).and_then(|g| g.last_or_next(addrs, mask, granule)) {
                if space == Space::Global {
                    c.mem.add_global(m.global);
                } else {
                    c.mem.add_shared(m.shared);
                }
                return;
            }
            // A coalesced global access of a partial warp (a divergent or tail warp's:
            // its mask seldom repeats) costs in closed form, without the memos'
            // signature, scan and copy. A full warp's takes the memo, whose hit is cheaper.
            if space == Space::Global && mask != u64::MAX >> (64 - addrs.len().clamp(1, 64)) {
                if let Some(g) = unit_stride_global_cost(addrs, mask, bytes) {
                    c.mem.add_global(g);
                    return;
                }
            }
        }
        self.count_memory(pc, space, kind, bytes, addrs, mask)
    }
}

impl MetricsObserver {
    /// A divergent branch (two targets), or a `brx.idx`'s execution (`bra` false:
    /// its execution is not counted by its runs).
    #[inline(never)]
    fn count_branch(&mut self, pc: u32, bra: bool, diverged: bool) {
        if let Some(c) = self.per_pc.get_mut(pc as usize) {
            if !bra {
                c.insts.branches += 1;
                c.insts.branch_targets += 1;
            }
            c.insts.branch_targets += diverged as u64;
            c.insts.divergent_branches += diverged as u64;
        }
    }

    /// [`Observer::memory`] without the memo's shortcut: costs the access (and
    /// keeps it as the instruction's memo when it is global or shared).
    #[inline(never)]
    fn count_memory(&mut self, pc: u32, space: Space, kind: MemAccessKind, bytes: u32, addrs: &[u64], mask: u64) {
        let (mut global, mut shared, mut local) = (0u64, 0u64, 0u64);
        match space {
            Space::Global => global = mask,
            // The constant cache, not L1: Nsight counts no global requests for `ld.const`
            // (calibration/micro, group `mem11`: `const_*`).
            Space::Const => return,
            Space::Shared => shared = mask,
            Space::Local => local = mask,
            Space::KernelParam => return,
            Space::Generic => {
                for (l, &a) in addrs.iter().enumerate() {
                    if mask >> l & 1 == 0 {
                        continue;
                    }
                    match generic_space(a) {
                        Space::Shared => shared |= 1 << l,
                        Space::Local => local |= 1 << l,
                        _ => global |= 1 << l,
                    }
                }
            }
        }
        // One space (not generic): one of the instruction's memos may hold the cost.
        let mut memo = match space {
            Space::Global => memo_slot(&mut self.memo_of, &mut self.memos, pc, addrs, mask, 128),
            Space::Shared => memo_slot(&mut self.memo_of, &mut self.memos, pc, addrs, mask, 4),
            _ => None,
        };
        let c = &mut self.per_pc[pc as usize];
        let n = addrs.len().min(64);
        if global != 0 {
            let g = match memo.as_mut() {
                Some((m, hit)) => {
                    if !*hit {
                        m.global = global_cost(addrs, global, bytes);
                        m.keep(addrs, global);
                    }
                    m.global
                }
                None => global_cost(addrs, global, bytes),
            };
            c.mem.add_global(g);
        }
        if shared != 0 {
            let s = match memo {
                Some((m, hit)) => {
                    if !hit {
                        m.shared = shared_access_cost(&self.merged, pc, space, kind, addrs, shared, bytes);
                        m.keep(addrs, shared);
                    }
                    m.shared
                }
                None => {
                    let mut tmp = [0u64; 64];
                    let a: &[u64] = if space == Space::Generic {
                        for (t, &x) in tmp.iter_mut().zip(addrs) {
                            *t = x.wrapping_sub(SHARED_WINDOW);
                        }
                        &tmp[..n]
                    } else {
                        addrs
                    };
                    shared_access_cost(&self.merged, pc, space, kind, a, shared, bytes)
                }
            };
            c.mem.add_shared(s);
        }
        if local != 0 {
            let mut off = [0u64; 64];
            // Only the local lanes' offsets (another lane's may be any value, e.g. a null pointer's).
            for (l, (o, &x)) in off.iter_mut().zip(addrs).enumerate() {
                if local >> l & 1 != 0 {
                    *o = if space == Space::Generic { x.wrapping_sub(LOCAL_WINDOW) } else { x };
                }
            }
            let mut tmp = [0u64; 64];
            local_addresses(&off[..n], &mut tmp[..n]);
            let g = global_cost(&tmp[..n], local, bytes);
            c.mem.local_requests += 1;
            c.mem.local_sectors += g.sectors as u64;
        }
    }
}

/// The memo of `pc` that `addrs` (lanes `mask`) shift by a multiple of
/// `granule` (and `true`), or else the one they replace (and `false`), made
/// the one tried first either way; `pc`'s memos are made empty on first use.
#[inline(always)]
fn memo_slot<'a>(
    memo_of: &mut [u32],
    memos: &'a mut Vec<Memos>,
    pc: u32,
    addrs: &[u64],
    mask: u64,
    granule: u64,
) -> Option<(&'a mut Memo, bool)> {
    let i = memo_of.get_mut(pc as usize)?;
    if *i == u32::MAX {
        *i = memos.len() as u32;
        memos.push(Memos::new());
    }
    let g = memos.get_mut(*i as usize)?;
    let sig = signature(addrs, mask);
    // The ways whose signature matches, as bits (one vector compare), then the shift test.
    let mut cands = 0u32;
    for (w, &s) in g.sigs.iter().enumerate() {
        cands |= ((s == sig) as u32) << w;
    }
    let mut found = None;
    while cands != 0 {
        let w = cands.trailing_zeros() as usize;
        cands &= cands - 1;
        if g.ways.get(w).is_some_and(|m| m.shifted(addrs, mask, granule)) {
            found = Some(w);
            break;
        }
    }
    let (way, hit) = match found {
        Some(w) => (w, true),
        None => {
            let w = g.next as usize % MEMO_WAYS;
            g.next = ((w + 1) % MEMO_WAYS) as u8;
            // The caller keeps the access in this way.
            g.sigs[w] = sig;
            if w == g.ways.len() {
                g.ways.push(Memo::EMPTY);
            }
            (w, false)
        }
    };
    g.last = way as u8;
    Some((g.ways.get_mut(way)?, hit))
}

/// Wavefronts of a shared access at shared offsets `a` (lanes `shared`): a
/// load ptxas merges into a wider one counts as that load.
#[inline]
fn shared_access_cost(merged: &[Merged], pc: u32, space: Space, kind: MemAccessKind, a: &[u64], shared: u64, bytes: u32) -> SharedCost {
    match merged.get(pc as usize) {
        Some(&Merged::Leads { bytes: wide, delta }) if space == Space::Shared && kind == MemAccessKind::Load => {
            let mut w = [0u64; 64];
            for (x, &y) in w.iter_mut().zip(a) {
                *x = y.wrapping_add_signed(delta as i64);
            }
            shared_load_cost(&w[..a.len().min(64)], shared, wide as u32)
        }
        _ if kind == MemAccessKind::Load => shared_load_cost(a, shared, bytes),
        _ => shared_cost(a, shared, bytes),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An observer for `len` pcs, none guarded and none a `bra`.
    fn plain(len: usize) -> MetricsObserver {
        MetricsObserver::new(Arc::new(CodeShape::from_flags((0..len).map(|_| (false, false)))), Arc::from(Vec::new()))
    }

    /// Straight runs, guards taken in order without their pcs and `bra`s counted
    /// from their runs give each pc's counts as counting every instruction
    /// does (random guarded pcs, masks, guards and branch outcomes); merging adds them.
    #[test]
    fn runs_and_guards_count_as_every_instruction() {
        let mut next = warpsim_engine::rng::numbers(0x2545_F491_4F6C_DD1D);
        let len = 40usize;
        let flags: Vec<(bool, bool)> = (0..len).map(|_| (next().is_multiple_of(3), next().is_multiple_of(4))).collect();
        let shape = Arc::new(CodeShape::from_flags(flags.iter().copied()));
        let (mut a, mut b) =
            (MetricsObserver::new(shape.clone(), Arc::from(Vec::new())), MetricsObserver::new(shape, Arc::from(Vec::new())));
        let mut want = vec![InstCounts::default(); len];
        for round in 0..5000 {
            let obs = if round % 2 == 0 { &mut a } else { &mut b };
            let start = (next() % len as u64) as u32;
            let count = 1 + (next() % (len as u64 - start as u64)) as u32;
            // A `bra` ends its run, as in the engine.
            let count = (start..start + count).position(|pc| flags[pc as usize].1).map_or(count, |i| i as u32 + 1);
            let active = if next().is_multiple_of(4) { u32::MAX as u64 } else { next() & u32::MAX as u64 };
            let mut last_exec = active;
            for pc in start..start + count {
                let (guarded, _) = flags[pc as usize];
                let exec = if guarded && !next().is_multiple_of(4) { active & next() } else { active };
                if guarded {
                    obs.guard(active, exec);
                }
                obs.instruction(0, pc, active, exec);
                let w = &mut want[pc as usize];
                w.warp_insts += 1;
                w.thread_insts += active.count_ones() as u64;
                w.pred_on_threads += exec.count_ones() as u64;
                last_exec = exec;
            }
            obs.straight_run(0, start, count, active);
            // The run's last instruction as a branch (a `bra` or a `brx.idx`): taken by `exec`.
            let last = (start + count - 1) as usize;
            if flags[last].1 || next().is_multiple_of(2) {
                let (taken, not_taken) = (last_exec, active & !last_exec);
                obs.branch(0, last as u32, taken, not_taken);
                let w = &mut want[last];
                let targets = (taken != 0) as u64 + (not_taken != 0) as u64;
                w.branches += 1;
                w.branch_targets += targets.max(1);
                w.divergent_branches += (targets == 2) as u64;
            }
        }
        a.merge(b);
        let got: Vec<InstCounts> = a.into_per_pc().into_iter().map(|c| c.insts).collect();
        assert_eq!(got, want);
    }

    /// A bank-stride loop whose lanes wrap (`smem_stride_33`: lane `l` reads
    /// word `(33 l + k) % 1024`) goes through 9 patterns per warp in 256
    /// iterations: the second warp finds each in a way (none replaced), and
    /// every count equals the cost function's.
    #[test]
    fn wrapping_bank_patterns_stay_in_the_ways() {
        let mut obs = plain(1);
        let mut want = MemCounts::default();
        let mut replaced = Vec::new();
        for warp in 0..2 {
            for k in 0..256u64 {
                let addrs: Vec<u64> = (0..32u64).map(|l| (l * 33 + k) % 1024 * 4).collect();
                obs.memory(warp, 0, Space::Shared, MemAccessKind::Load, 4, &addrs, u32::MAX as u64);
                want.add_shared(shared_load_cost(&addrs, u32::MAX as u64, 4));
            }
            replaced.push(obs.memos[0].next);
        }
        assert_eq!(obs.per_pc[0].mem, want);
        assert_eq!(replaced, [9, 9], "the second warp replaced a way");
        // One lane off the pattern is not a shift of any way: it is costed, and kept.
        let mut addrs: Vec<u64> = (0..32u64).map(|l| (l * 33) % 1024 * 4).collect();
        addrs[5] += 4;
        obs.memory(2, 0, Space::Shared, MemAccessKind::Load, 4, &addrs, u32::MAX as u64);
        want.add_shared(shared_load_cost(&addrs, u32::MAX as u64, 4));
        assert_eq!((obs.per_pc[0].mem.clone(), obs.memos[0].next), (want, 10));
    }

    /// Accesses that shift the last one's addresses (by the granule or not),
    /// new ones, partial masks and 64-lane warps: the counters the memo gives
    /// equal the cost functions' on every access.
    #[test]
    fn memoised_costs_equal_the_cost_functions() {
        let mut next = warpsim_engine::rng::numbers(0x9E37_79B9_7F4A_7C15);
        let mut obs = plain(4);
        let mut want = vec![PcCounters::default(); 4];
        // Per pc, its last accesses (most recent last).
        let mut last: Vec<Vec<Vec<u64>>> = vec![vec![vec![0; 32]]; 4];
        for round in 0..20000 {
            let pc = (next() % 3) as usize;
            let (space, kind) =
                [(Space::Global, MemAccessKind::Load), (Space::Shared, MemAccessKind::Load), (Space::Shared, MemAccessKind::Store)][pc];
            let bytes = [4u32, 8, 16][pc % 3];
            let n = if round % 97 == 0 { 64 } else { 32 };
            let addrs: Vec<u64> = match next() % 4 {
                // A shift of the last access (or of an earlier one) by a multiple of 4, 128 or neither.
                0 | 1 => {
                    let h = &last[pc];
                    let back = if next().is_multiple_of(2) { 1 } else { 1 + (next() as usize % h.len()) };
                    let d = [4u64, 128, 256, 12, 1][(next() % 5) as usize] * (next() % 40);
                    let from = &h[h.len() - back.min(h.len())];
                    (0..n).map(|l| from.get(l).copied().unwrap_or(l as u64 * 4) + d).collect()
                }
                _ => {
                    let stride = [0u64, 1, 2, 4, 8, 32, 33][(next() % 7) as usize] * bytes as u64;
                    let base = 0x1000 + (next() % 4096) * 4;
                    (0..n as u64)
                        .map(|l| if next().is_multiple_of(16) { base + next() % 8192 * 4 } else { (base + l * stride) % 0xC000 })
                        .collect()
                }
            };
            let mask = if next().is_multiple_of(3) { u64::MAX >> (64 - n) } else { next() & (u64::MAX >> (64 - n)) };
            obs.memory(0, pc as u32, space, kind, bytes, &addrs, mask);
            let c = &mut want[pc].mem;
            if mask != 0 && space == Space::Global {
                let g = global_cost(&addrs, mask, bytes);
                c.global_requests += 1;
                c.global_sectors += g.sectors as u64;
                c.global_ideal_sectors += g.ideal_sectors as u64;
                c.global_lines += g.lines as u64;
                c.global_bytes += g.bytes_requested as u64;
            } else if mask != 0 {
                let s = if kind == MemAccessKind::Load { shared_load_cost(&addrs, mask, bytes) } else { shared_cost(&addrs, mask, bytes) };
                c.shared_requests += 1;
                c.shared_wavefronts += s.wavefronts as u64;
                c.shared_ideal_wavefronts += s.ideal_wavefronts as u64;
            }
            assert_eq!(obs.per_pc, want, "round {round}");
            last[pc].push(addrs);
            if last[pc].len() > 12 {
                last[pc].remove(0);
            }
        }
    }
}
