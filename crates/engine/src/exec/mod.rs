//! Executing warp instructions: the one place PTX semantics meet the machine.
//!
//! A warp's registers are lane columns (`W` values per register, `W` a const
//! generic so each column is a fixed-size array the compiler vectorises).
//! Divergence uses the classic SIMT stack: a divergent branch turns the top
//! entry into the reconvergence entry and pushes one entry per path; an entry
//! is popped when its pc reaches its reconvergence pc. Uniform branches leave
//! the stack alone; exited lanes leave every mask.
//!
//! This module holds the warp, its register columns and the dispatch loop
//! ([`Warp::run`]); each instruction family's handlers live in a child module
//! (`alu`, `memory`, `control`, `warp`, `mma`), as `#[inline(always)]`
//! methods called from the loop's one match, so the loop compiles as before.

// Lane loops index several columns by lane (`o[l] = f(x[l], y[l])`): the form that vectorises.
#![allow(clippy::needless_range_loop)]

use crate::fault::{FaultKind, FaultSpace};
use crate::memory::GlobalMemory;
use crate::observer::MemAccessKind;
use crate::observer::Observer;
use crate::schedule::{SchedulePolicy, Simt};
use warpsim_ir::cfg::NO_RECONV;
use warpsim_ir::*;

mod alu;
mod call;
mod control;
mod memory;
mod mma;
mod printf;
mod warp;

pub use alu::{bin32_lane, bin64_lane, fma_f32_lane, fma_f64_lane};
pub use call::{CallRecord, CALL_RPC};
pub use memory::atom_apply;
pub use mma::MbarrierError;

#[cfg(test)]
pub(crate) mod testkit;

/// One SIMT stack entry.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct StackEntry {
    pub pc: u32,
    pub mask: u64,
    /// Reconvergence pc: the entry is popped when `pc` reaches it.
    pub rpc: u32,
}

impl StackEntry {
    /// Nothing left to run here: no lanes, or at its reconvergence point
    /// (the run loop pops such an entry before it runs an instruction).
    #[inline(always)]
    pub fn is_done(&self) -> bool {
        self.mask == 0 || (self.pc == self.rpc && self.rpc != NO_RECONV)
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum WarpState {
    Ready,
    AtBarrier,
    Done,
}

pub struct Warp<const W: usize> {
    /// Index of the warp within its block.
    pub index: u32,
    pub r32: Vec<u32>,
    pub r64: Vec<u64>,
    /// One lane mask per predicate register.
    pub preds: Vec<u64>,
    pub stack: Vec<StackEntry>,
    /// Lanes that exist (a partial last warp has fewer).
    pub present: u64,
    pub exited: u64,
    /// Per-lane local memory, `local_bytes` per lane, allocated on first use.
    pub local: Vec<u8>,
    pub state: WarpState,
    /// Global accesses past an allocation's exact end that a GPU serves
    /// (within its page granule): served, and kept here for the block to
    /// report as warnings.
    pub past_end: Vec<WarpFault>,
    /// Device `printf` output of this warp not yet collected by its block.
    pub printed: String,
    /// Calls in progress (functions that were not inlined), innermost last.
    pub calls: Vec<CallRecord>,
}

/// Why a warp stopped running.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Stop {
    Exited,
    /// Waiting at (or arrived at) a block barrier.
    Barrier(BarrierArrival),
    /// Its time slice ran out.
    Yield,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct BarrierArrival {
    pub id: u32,
    pub count: Option<u32>,
    pub threads: u32,
    pub wait: bool,
    /// For `bar.red`: the reduction, the lanes' predicate values.
    pub red: Option<(BarRed, u64)>,
    pub exec: u64,
}

/// A fault inside a warp: which lane (if one is to blame) and what.
#[derive(Clone, Debug)]
pub struct WarpFault {
    pub pc: u32,
    pub lane: Option<u32>,
    pub kind: FaultKind,
}

impl WarpFault {
    /// A fault of the whole warp (no lane to blame).
    fn warp(pc: u32, kind: FaultKind) -> Self {
        WarpFault { pc, lane: None, kind }
    }

    /// A fault of lane `lane`.
    fn lane(pc: u32, lane: usize, kind: FaultKind) -> Self {
        WarpFault { pc, lane: Some(lane as u32), kind }
    }
}

struct Counters {
    clock: u64,
    budget: u64,
    warp_insts: u64,
    thread_insts: u64,
}

/// Everything a warp needs from its block and launch while it runs.
pub struct WarpCtx<'a> {
    pub kernel: &'a Kernel,
    pub gmem: &'a GlobalMemory,
    pub shared: &'a mut [u8],
    pub params: &'a [u8],
    /// The block's deterministic cycle counter (one tick per warp instruction).
    pub clock: &'a mut u64,
    pub budget: &'a mut u64,
    pub budget_limit: u64,
    /// [`LaunchConfig::serve_past_end`](crate::launch::LaunchConfig::serve_past_end).
    pub serve_past_end: bool,
    pub warp_instructions: &'a mut u64,
    pub thread_instructions: &'a mut u64,
    /// Local memory bytes per lane: the kernel's, plus the call stack when it calls functions.
    pub local_bytes: u32,
    /// [`LaunchConfig::stack_size`](crate::launch::LaunchConfig::stack_size), for messages.
    pub stack_size: u32,
}

#[inline(always)]
fn full_mask<const W: usize>() -> u64 {
    if W >= 64 {
        u64::MAX
    } else {
        (1u64 << W) - 1
    }
}

#[inline(always)]
fn col32<const W: usize>(r: &[u32], s: u32) -> &[u32; W] {
    r[s as usize * W..][..W].try_into().unwrap()
}

#[inline(always)]
fn col64<const W: usize>(r: &[u64], s: u32) -> &[u64; W] {
    r[s as usize * W..][..W].try_into().unwrap()
}

/// A register word: `u32` or `u64`, blended lane by lane under a mask.
trait Word: Copy + PartialEq + std::ops::BitAnd<Output = Self> + std::ops::BitOr<Output = Self> + std::ops::Not<Output = Self> {
    /// All ones when bit 0 of `bit` is set, else zero.
    fn ones_if(bit: u64) -> Self;
}

impl Word for u32 {
    #[inline(always)]
    fn ones_if(bit: u64) -> u32 {
        (bit & 1).wrapping_neg() as u32
    }
}

impl Word for u64 {
    #[inline(always)]
    fn ones_if(bit: u64) -> u64 {
        (bit & 1).wrapping_neg()
    }
}

/// Writes `out` to the lanes of column `d` set in `mask`.
#[inline(always)]
fn write_col<T: Word, const W: usize>(r: &mut [T], d: u32, out: &[T; W], mask: u64) {
    let dst: &mut [T; W] = (&mut r[d as usize * W..][..W]).try_into().unwrap();
    if mask == full_mask::<W>() {
        *dst = *out;
    } else {
        // Branch-free blend, which vectorises (a conditional store would not).
        // The lane masks go through `black_box` so that LLVM cannot see they are
        // all-ones or zero: it would turn the blend into a masked store
        // (`vpmaskmovd`), microcoded and many times slower on AMD cores.
        let mut ms = [T::ones_if(0); W];
        for l in 0..W {
            ms[l] = T::ones_if(mask >> l);
        }
        let ms = std::hint::black_box(ms);
        for l in 0..W {
            dst[l] = (out[l] & ms[l]) | (dst[l] & !ms[l]);
        }
    }
}

/// Lanes per chunk in [`map_cols`]: one 256-bit vector of `u32`.
const CHUNK: usize = 8;

/// Column `d` = `f` of the lanes of the `src` columns, for the lanes in `mask`.
///
/// Computed eight lanes at a time straight into the register file: a
/// whole-column temporary would be stored and reloaded on the critical path of
/// every dependent instruction. `d` may be one of `src` (a chunk's sources are
/// read before it is written). `W` is a multiple of [`CHUNK`].
#[inline(always)]
fn map_cols<T: Word + Default, const W: usize, const N: usize>(r: &mut [T], d: u32, src: [u32; N], mask: u64, f: impl Fn([T; N]) -> T) {
    map_cols_flagged::<T, W, N>(r, d, src, mask, f, |_| T::ones_if(0));
}

/// [`map_cols`], also telling whether `flag` is non-zero for some lane it
/// wrote. `flag` gives a lane mask (all ones or zero, like a vector compare),
/// and the masks are or-ed lane-wise and tested once at the end: the test runs
/// beside the stores, off the path of the next instruction that reads the
/// column (f32 ops write raw results and fix a NaN later).
#[inline(always)]
fn map_cols_flagged<T: Word + Default, const W: usize, const N: usize>(
    r: &mut [T],
    d: u32,
    src: [u32; N],
    mask: u64,
    f: impl Fn([T; N]) -> T,
    flag: impl Fn(T) -> T,
) -> bool {
    let cols = r.len() / W;
    assert!((d as usize) < cols && src.iter().all(|&s| (s as usize) < cols), "register column out of range");
    let base = r.as_mut_ptr();
    let zero = T::ones_if(0);
    let mut flagged = [zero; CHUNK];
    if mask == full_mask::<W>() {
        for c in (0..W / CHUNK).map(|k| k * CHUNK) {
            // SAFETY: columns `src` and `d` lie inside `r` (asserted above) and `c + CHUNK <= W`.
            let o = unsafe { chunk_of::<T, W, N>(base, src, c, &f) };
            // SAFETY: as above.
            unsafe { base.add(d as usize * W + c).cast::<[T; CHUNK]>().write(o) };
            for i in 0..CHUNK {
                flagged[i] = flagged[i] | flag(o[i]);
            }
        }
        return flagged != [zero; CHUNK];
    }
    // As in `write_col`: the lane masks go through `black_box`, so the blend stays a blend.
    let mut ms = [T::ones_if(0); W];
    for l in 0..W {
        ms[l] = T::ones_if(mask >> l);
    }
    let ms = std::hint::black_box(ms);
    for c in (0..W / CHUNK).map(|k| k * CHUNK) {
        // SAFETY: as above.
        let (o, dst) = unsafe { (chunk_of::<T, W, N>(base, src, c, &f), &mut *base.add(d as usize * W + c).cast::<[T; CHUNK]>()) };
        for i in 0..CHUNK {
            let m = ms[c + i];
            dst[i] = (o[i] & m) | (dst[i] & !m);
            flagged[i] = flagged[i] | (flag(o[i]) & m);
        }
    }
    flagged != [zero; CHUNK]
}

/// `f` of lanes `c..c + CHUNK` of the `src` columns of the register file at `base`.
///
/// # Safety
/// Each column `src[k]` (`W` values from `base + src[k] * W`) lies inside one
/// allocation, and `c + CHUNK <= W`.
#[inline(always)]
unsafe fn chunk_of<T: Copy + Default, const W: usize, const N: usize>(
    base: *const T,
    src: [u32; N],
    c: usize,
    f: &impl Fn([T; N]) -> T,
) -> [T; CHUNK] {
    let mut x = [[T::default(); CHUNK]; N];
    for k in 0..N {
        // SAFETY: the caller's guarantee.
        x[k] = unsafe { base.add(src[k] as usize * W + c).cast::<[T; CHUNK]>().read() };
    }
    let mut o = [T::default(); CHUNK];
    for i in 0..CHUNK {
        let mut a = [T::default(); N];
        for k in 0..N {
            a[k] = x[k][i];
        }
        o[i] = f(a);
    }
    o
}

#[inline(always)]
fn write32<const W: usize>(r: &mut [u32], d: u32, out: &[u32; W], mask: u64) {
    write_col(r, d, out, mask)
}

#[inline(always)]
fn write64<const W: usize>(r: &mut [u64], d: u32, out: &[u64; W], mask: u64) {
    write_col(r, d, out, mask)
}

#[inline(always)]
fn set_pred(preds: &mut [u64], p: u32, bits: u64, mask: u64) {
    let v = &mut preds[p as usize];
    *v = (*v & !mask) | (bits & mask);
}

/// Iterates over the lanes set in `mask`, lowest first.
#[inline(always)]
fn lanes(mask: u64) -> impl Iterator<Item = usize> {
    set_bits(mask)
}

impl<const W: usize> Warp<W> {
    /// Reads a register as 64-bit values per lane (predicates as 0/1).
    #[inline]
    fn gather(&self, r: RegRef) -> [u64; W] {
        let mut out = [0u64; W];
        match r.bank {
            Bank::R32 => {
                let c = col32::<W>(&self.r32, r.slot);
                for l in 0..W {
                    out[l] = c[l] as u64;
                }
            }
            Bank::R64 => out = *col64::<W>(&self.r64, r.slot),
            Bank::Pred => {
                let p = self.preds[r.slot as usize];
                for (l, o) in out.iter_mut().enumerate() {
                    *o = p >> l & 1;
                }
            }
        }
        out
    }

    /// Writes 64-bit values per lane into a register of any bank, for lanes in `mask`.
    #[inline]
    fn scatter(&mut self, d: RegRef, v: &[u64; W], mask: u64) {
        match d.bank {
            Bank::R32 => {
                let mut o = [0u32; W];
                for l in 0..W {
                    o[l] = v[l] as u32;
                }
                write32::<W>(&mut self.r32, d.slot, &o, mask);
            }
            Bank::R64 => write64::<W>(&mut self.r64, d.slot, v, mask),
            Bank::Pred => {
                let mut bits = 0u64;
                for (l, x) in v.iter().enumerate() {
                    bits |= (x & 1) << l;
                }
                set_pred(&mut self.preds, d.slot, bits, mask);
            }
        }
    }

    /// Writes `v` to the lanes of `d` in `mask` (a uniform value: one column fill).
    #[inline]
    fn broadcast(&mut self, d: RegRef, v: u64, mask: u64) {
        match d.bank {
            Bank::R32 => map_cols::<u32, W, 0>(&mut self.r32, d.slot, [], mask, |[]| v as u32),
            Bank::R64 => map_cols::<u64, W, 0>(&mut self.r64, d.slot, [], mask, |[]| v),
            Bank::Pred => set_pred(&mut self.preds, d.slot, (v & 1).wrapping_neg(), mask),
        }
    }

    /// Writes one lane of a register of any bank.
    #[inline]
    fn put_lane(&mut self, r: RegRef, lane: usize, v: u64) {
        match r.bank {
            Bank::R32 => self.r32[r.slot as usize * W + lane] = v as u32,
            Bank::R64 => self.r64[r.slot as usize * W + lane] = v,
            Bank::Pred => {
                let p = &mut self.preds[r.slot as usize];
                *p = (*p & !(1 << lane)) | ((v & 1) << lane);
            }
        }
    }

    #[inline]
    fn lane_value(&self, r: RegRef, lane: usize) -> u64 {
        match r.bank {
            Bank::R32 => self.r32[r.slot as usize * W + lane] as u64,
            Bank::R64 => self.r64[r.slot as usize * W + lane],
            Bank::Pred => self.preds[r.slot as usize] >> lane & 1,
        }
    }

    /// The first active lane's value (for operands that must be uniform).
    #[inline]
    fn uniform(&self, r: RegRef, mask: u64) -> u64 {
        self.lane_value(r, if mask == 0 { 0 } else { mask.trailing_zeros() as usize })
    }

    /// Sets the stack top's pc (the run loop keeps it in a local meanwhile).
    #[inline(always)]
    fn top_pc(&mut self, pc: u32) {
        if let Some(t) = self.stack.last_mut() {
            t.pc = pc;
        }
    }

    /// Runs this warp until it exits, reaches a barrier, faults or uses up
    /// `slice` instructions, with the SIMT stack's own order of lane groups.
    pub fn run<O: Observer>(&mut self, ctx: &mut WarpCtx<'_>, obs: &mut O, slice: u32) -> Result<Stop, WarpFault> {
        self.run_scheduled(ctx, obs, &mut Simt, slice)
    }

    /// [`Warp::run`] with the lane groups ordered by `sched`.
    #[inline]
    pub fn run_scheduled<O: Observer, S: SchedulePolicy>(
        &mut self,
        ctx: &mut WarpCtx<'_>,
        obs: &mut O,
        sched: &mut S,
        slice: u32,
    ) -> Result<Stop, WarpFault> {
        // Two loops, each its own function (neither moves the other's registers).
        if ctx.kernel.forward_only {
            self.run_counted::<O, S, true>(ctx, obs, sched, slice)
        } else {
            self.run_counted::<O, S, false>(ctx, obs, sched, slice)
        }
    }

    /// [`Warp::run_scheduled`] with `FLAT` the kernel's
    /// [`forward_only`](Kernel::forward_only): the run loop then also runs
    /// loads, stores, `mul.wide` and branches no lane takes without ending a run.
    #[inline(never)]
    fn run_counted<O: Observer, S: SchedulePolicy, const FLAT: bool>(
        &mut self,
        ctx: &mut WarpCtx<'_>,
        obs: &mut O,
        sched: &mut S,
        slice: u32,
    ) -> Result<Stop, WarpFault> {
        // The counters live in locals (registers) while the warp runs.
        let mut n = Counters { clock: *ctx.clock, budget: *ctx.budget, warp_insts: 0, thread_insts: 0 };
        let r = self.run_loop::<O, S, FLAT>(ctx, obs, sched, slice, &mut n);
        *ctx.clock = n.clock;
        *ctx.budget = n.budget;
        *ctx.warp_instructions += n.warp_insts;
        *ctx.thread_instructions += n.thread_insts;
        r
    }

    /// A load or store that faults inside a forward-only run: the run ends
    /// there as though the access had ended it (the run's `ran` instructions
    /// counted; the caller moved the stack top past it and told its guard
    /// before it ran), then the fault.
    #[cold]
    #[inline(never)]
    fn fault_in_run<O: Observer>(&mut self, obs: &mut O, n: &mut Counters, start: u32, ran: u32, active: u64, f: WarpFault) -> WarpFault {
        obs.straight_run(self.index, start, ran, active);
        n.budget -= u64::from(ran);
        n.clock += u64::from(ran);
        n.warp_insts += u64::from(ran);
        n.thread_insts += u64::from(active.count_ones()) * u64::from(ran);
        f
    }

    #[inline(always)]
    fn run_loop<O: Observer, S: SchedulePolicy, const FLAT: bool>(
        &mut self,
        ctx: &mut WarpCtx<'_>,
        obs: &mut O,
        sched: &mut S,
        slice: u32,
        n: &mut Counters,
    ) -> Result<Stop, WarpFault> {
        let code: &[Inst] = &ctx.kernel.code;
        // Lanes whose registers nothing reads any more: in a kernel whose lanes
        // never read each other's registers, the absent and exited ones. The
        // inner loop's register-to-register instructions write them along with
        // the active lanes (`wide`), which makes a partial warp's columns
        // whole. Lanes that exit during this call join at the exits below (a
        // stale value only writes fewer lanes).
        let private = if ctx.kernel.lane_private { full_mask::<W>() } else { 0 };
        let mut unread = private & !(self.present & !self.exited);
        let mut left = slice;
        loop {
            if S::ACTIVE {
                if let Some(&t) = self.stack.last() {
                    if t.mask != 0 && t.pc != t.rpc && (t.pc as usize) < code.len() && sched.schedule(self.index, t.pc, &mut self.stack) {
                        continue;
                    }
                }
            }
            let Some(top) = self.stack.last_mut() else {
                self.state = WarpState::Done;
                return Ok(Stop::Exited);
            };
            if top.is_done() {
                self.stack.pop();
                continue;
            }
            let pc = top.pc;
            if pc as usize >= code.len() {
                // Ran off the end (or past a never-reconverging split): those lanes are done.
                let m = top.mask;
                self.exit_lanes(m);
                unread |= private & m;
                continue;
            }
            if left == 0 {
                return Ok(Stop::Yield);
            }
            // The one mask the inner loop keeps: the stack top's lanes and the
            // unread ones. `active` is `wide & !unread` (the stack holds no
            // exited or absent lane), worked out where it is needed.
            let wide = top.mask | unread;
            // Straight-line code of this stack entry runs in the inner loop with
            // the pc in a local, for at most `run` instructions: up to the
            // reconvergence point (or the end of the code), the slice and the
            // budget. The stack top is written back before anything that reads
            // or changes the stack, and when the run ends; the counters are
            // settled once per run.
            let len = code.len() as u32;
            let end = if top.rpc > pc { top.rpc.min(len) } else { len };
            let run = if S::ACTIVE { 1 } else { (end - pc).min(left) };
            let run = if n.budget < u64::from(run) { n.budget as u32 } else { run };
            if run == 0 {
                return Err(WarpFault::warp(pc, FaultKind::BudgetExceeded { limit: ctx.budget_limit }));
            }
            let start = pc;
            let stop = pc + run;
            // The run's instructions as an iterator: no bounds check, and the pc
            // is only worked out where it is needed (the observer, a break).
            let mut insts = code[start as usize..stop as usize].iter();
            let inst = loop {
                let Some(inst) = insts.next() else {
                    self.top_pc(stop);
                    break None;
                };
                let pc = stop - 1 - insts.len() as u32;
                let lanes = match inst.guard {
                    None => wide,
                    Some(g) => {
                        let p = self.preds[g.pred as usize];
                        wide & if g.negate { !p } else { p }
                    }
                };
                // Here, before the instruction, so that nothing about the guard is kept
                // past it (the match above unchanged: the bare engine's loop stays as it was).
                if inst.guard.is_some() {
                    obs.guard(wide & !unread, lanes & !unread);
                }
                obs.instruction(self.index, pc, wide & !unread, lanes & !unread);
                // Register-to-register instructions: they neither fault nor touch the stack.
                let plain = match &inst.op {
                    Op::Nop => true,
                    // Integer, float, comparison and conversion lane loops (alu.rs).
                    Op::Mov { d, a } => {
                        if lanes != 0 {
                            self.mov(*d, *a, lanes)
                        }
                        true
                    }
                    Op::Bin32 { f, d, a, b } => {
                        if lanes != 0 {
                            self.bin32(*f, *d, *a, *b, lanes)
                        }
                        true
                    }
                    Op::Bin64 { f, d, a, b } => {
                        if lanes != 0 {
                            self.bin64(*f, *d, *a, *b, lanes)
                        }
                        true
                    }
                    Op::Tern32 { f, d, a, b, c } => {
                        if lanes != 0 {
                            self.tern32(*f, *d, *a, *b, *c, lanes)
                        }
                        true
                    }
                    Op::Setp(st) => {
                        if lanes != 0 {
                            self.setp(st, lanes)
                        }
                        true
                    }
                    Op::Selp { d, a, b, c, negate } => {
                        if lanes != 0 {
                            self.selp(*d, *a, *b, *c, *negate, lanes)
                        }
                        true
                    }
                    // Forward-only code (`FLAT`) also runs these here. In loops they would
                    // cost the arithmetic loop registers (LLVM spills), and they are seldom
                    // in a loop's body; in code that runs once a warp, every run saved counts.
                    // A match of their own, so that the other loop's match stays as it was.
                    _ if FLAT => match &inst.op {
                        Op::MulWide32 { signed, d, a, b } => {
                            if lanes != 0 {
                                self.mul_wide32(*signed, *d, *a, *b, lanes)
                            }
                            true
                        }
                        // Loads and stores change no stack mask. `ld.param` at a constant offset
                        // is a uniform value, one column fill per element; any other access (or one
                        // out of the parameters' bytes) is `ld`'s or `st`'s, which name a fault.
                        Op::Ld { space, size, signed, n: count, d, addr } => {
                            let param = *space == Space::KernelParam && addr.base.is_none();
                            if !(lanes == 0 || param && self.ld_param(ctx.params, *size, *signed, *count, d, addr.offset, lanes)) {
                                let exec = lanes & !unread;
                                if exec != 0 {
                                    // A served access past an allocation's end is noted at the stack top's pc.
                                    self.top_pc(pc + 1);
                                    if let Err(f) = self.ld(ctx, obs, pc, *space, *size, *signed, *count, d, addr, exec) {
                                        return Err(self.fault_in_run(obs, n, start, stop - start - insts.len() as u32, wide & !unread, f));
                                    }
                                }
                            }
                            true
                        }
                        Op::St { space, size, n: count, s, addr } => {
                            let exec = lanes & !unread;
                            if exec != 0 {
                                self.top_pc(pc + 1);
                                if let Err(f) = self.st(ctx, obs, pc, *space, *size, *count, s, addr, exec) {
                                    return Err(self.fault_in_run(obs, n, start, stop - start - insts.len() as u32, wide & !unread, f));
                                }
                            }
                            true
                        }
                        // A branch no live lane takes: every lane falls through, the stack stays.
                        Op::Bra { .. } if lanes & !unread == 0 => {
                            obs.branch(self.index, pc, 0, wide & !unread);
                            true
                        }
                        _ => false,
                    },
                    _ => false,
                };
                if !plain {
                    self.top_pc(pc + 1);
                    // `lanes & active` (`lanes` lies within `wide`).
                    let exec = lanes & !unread;
                    if exec == 0 && !matches!(inst.op, Op::Bra { .. } | Op::BrxIdx { .. }) {
                        break None;
                    }
                    break Some((inst, exec, pc));
                }
            };
            let active = wide & !unread;
            let ran = stop - start - insts.len() as u32;
            obs.straight_run(self.index, start, ran, active);
            left -= ran;
            n.budget -= u64::from(ran);
            n.clock += u64::from(ran);
            n.warp_insts += u64::from(ran);
            n.thread_insts += u64::from(active.count_ones()) * u64::from(ran);
            let Some((inst, exec, pc)) = inst else { continue };
            match &inst.op {
                Op::Nop | Op::Mov { .. } | Op::Bin32 { .. } | Op::Bin64 { .. } | Op::Tern32 { .. } | Op::Setp(_) | Op::Selp { .. } => {}
                Op::Fence => obs.fence(self.index, pc, exec),
                Op::Mma(m) => self.exec_mma(ctx, obs, pc, exec, m)?,
                Op::FmaF64 { d, a, b, c } => self.fma_f64(*d, *a, *b, *c, exec),
                Op::Shift64 { left: shl, signed, d, a, b } => self.shift64(*shl, *signed, *d, *a, *b, exec),
                Op::MulWide32 { signed, d, a, b } => self.mul_wide32(*signed, *d, *a, *b, exec),
                Op::Extend32To64 { signed, d, a } => self.extend32(*signed, *d, *a, exec),
                Op::Trunc64To32 { d, a } => self.trunc64(*d, *a, exec),
                Op::Int { op, ty, d, s } => self.int(*op, *ty, *d, s, exec),
                Op::IntCarry { kind, ty, d, s, cc, carry_in, carry_out } => {
                    self.int_carry(*kind, *ty, *d, s, *cc, *carry_in, *carry_out, exec)
                }
                Op::Float { op, ty, mode, d, s } => self.float(*op, *ty, *mode, *d, s, exec),
                Op::Set(st) => self.set(st, exec),
                Op::Slct { cty, ftz, d, a, b, c } => self.slct(*cty, *ftz, *d, *a, *b, *c, exec),
                Op::Testp { class, ty, p, a } => self.testp(*class, *ty, *p, *a, exec),
                Op::PredLogic { op, d, a, b } => self.pred_logic(*op, *d, *a, *b, exec),
                Op::Cvt { dty, sty, mode, relu, satfinite, d, a } => self.cvt(*dty, *sty, *mode, (*relu, *satfinite), *d, *a, exec),
                Op::CvtToF8x2 { fmt, relu, from_f16x2, d, a, b } => self.cvt_to_f8x2(*fmt, *relu, *from_f16x2, *d, *a, *b, exec),
                Op::CvtF8x2ToF16x2 { fmt, relu, d, a } => self.cvt_f8x2_to_f16x2(*fmt, *relu, *d, *a, exec),
                Op::CvtPack { dty, mode, relu, satfinite, d, a, b } => self.cvt_pack(*dty, *mode, (*relu, *satfinite), *d, *a, *b, exec),
                Op::Pack { d, parts, n, elem_bits } => self.pack(*d, parts, *n, *elem_bits, exec),
                Op::Unpack { ds, a, n, elem_bits } => self.unpack(ds, *a, *n, *elem_bits, exec),
                Op::Clock { kind, d } => self.clock(*kind, *d, n.clock, exec),
                // Loads, stores, atomics and address conversion (memory.rs).
                Op::Cvta { to_generic, window, d, a } => self.cvta(*to_generic, *window, *d, *a, exec),
                // Forward-only code runs every load and store in the inner loop.
                Op::Ld { .. } | Op::St { .. } if FLAT => {}
                Op::Ld { space, size, signed, n, d, addr } => self.ld(ctx, obs, pc, *space, *size, *signed, *n, d, addr, exec)?,
                Op::St { space, size, n, s, addr } => self.st(ctx, obs, pc, *space, *size, *n, s, addr, exec)?,
                Op::Atom { space, op, ty, d, addr, b, c } => self.atom(ctx, obs, pc, *space, *op, *ty, *d, addr, *b, *c, exec)?,
                // Branches, exit, trap and block barriers (control.rs). A
                // branch's `exec` lanes take it, the rest of `active` fall through.
                Op::Bra { target, reconv } => {
                    obs.branch(self.index, pc, exec, active & !exec);
                    self.bra(sched, pc, exec, active & !exec, *target, *reconv)
                }
                Op::BrxIdx { index, targets, reconv } => {
                    self.brx_idx(sched, pc, exec, active & !exec, *index, targets, *reconv)?;
                    obs.branch(self.index, pc, exec, active & !exec)
                }
                Op::Exit => {
                    self.exit_lanes(exec);
                    unread |= private & exec;
                }
                // Calls of functions that were not inlined (call.rs).
                Op::Call(site) => self.call(ctx, obs, pc, active, exec, site)?,
                Op::Ret => self.ret(ctx, obs, pc, exec)?,
                Op::Trap => return Err(WarpFault { pc, lane: Some(exec.trailing_zeros()), kind: FaultKind::Trap }),
                // Device assert and printf (printf.rs).
                Op::AssertFail { params } => return Err(self.assert_fail(ctx, pc, exec, params)),
                Op::Printf { format, args, d } => self.printf(ctx, pc, exec, *format, *args, *d)?,
                Op::Bar { kind, id, count, pred, aligned } => return self.bar(obs, pc, exec, *kind, *id, *count, *pred, *aligned),
                // Warp-synchronous instructions (warp.rs).
                Op::BarWarpSync { mask } => self.bar_warp_sync(obs, pc, exec, *mask),
                Op::Shfl(s) => self.shfl(obs, pc, exec, s),
                Op::Vote { mode, d, a, negate, mask } => self.vote(obs, pc, exec, *mode, *d, *a, *negate, *mask),
                Op::Match { all, ty: _, d, p, a, mask } => self.match_sync(obs, pc, exec, *all, *d, *p, *a, *mask),
                Op::Activemask { d } => self.activemask(*d, exec),
                Op::Redux { op, ty, d, a, mask } => self.redux(obs, pc, exec, *op, *ty, *d, *a, *mask),
                Op::ElectSync { d, p, mask } => self.elect(obs, pc, exec, *d, *p, *mask),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testkit::*;
    use super::*;
    use crate::observer::Observer;
    use warpsim_numerics::{CmpOp, ScalarType};

    const N32: u32 = 6;
    const N64: u32 = 4;
    const NPRED: u32 = 3;

    /// A random register-to-register instruction (a quarter guarded), or now
    /// and then a guarded `exit`.
    fn random_inst(rng: &mut impl FnMut() -> u64) -> Inst {
        let mut pick = |n: u32| (rng() % u64::from(n)) as u32;
        let guard = (pick(4) == 0).then(|| Guard { pred: pick(NPRED), negate: pick(2) == 1 });
        let reg = |bank: u32, slot: u32| match bank {
            0 => RegRef::r32(slot % N32),
            1 => RegRef::r64(slot % N64),
            _ => RegRef::pred(slot % NPRED),
        };
        let op = match pick(9) {
            0 if guard.is_some() => Op::Exit,
            0 | 1 => Op::Mov { d: reg(pick(3), pick(8)), a: reg(pick(3), pick(8)) },
            2 => {
                use Bin32::*;
                let fs = [Add, Sub, MulLo, And, Or, Xor, Shl, ShrU, ShrS, MinS, MinU, MaxS, MaxU, AddF, SubF, MulF, MinF, MaxF];
                Op::Bin32 { f: fs[pick(fs.len() as u32) as usize], d: pick(N32), a: pick(N32), b: pick(N32) }
            }
            3 => {
                use Bin64::*;
                let fs = [Add, Sub, MulLo, And, Or, Xor, AddF, SubF, MulF];
                Op::Bin64 { f: fs[pick(fs.len() as u32) as usize], d: pick(N64), a: pick(N64), b: pick(N64) }
            }
            4 | 5 => {
                let f = if pick(2) == 0 { Tern32::MadLo } else { Tern32::FmaF };
                Op::Tern32 { f, d: pick(N32), a: pick(N32), b: pick(N32), c: pick(N32) }
            }
            6 => {
                let cmps = [CmpOp::Eq, CmpOp::Ne, CmpOp::Lt, CmpOp::Ge, CmpOp::Lo, CmpOp::Hi, CmpOp::Equ, CmpOp::Nan];
                let types = [(ScalarType::S32, 0), (ScalarType::U32, 0), (ScalarType::F32, 0), (ScalarType::S64, 1), (ScalarType::F64, 1)];
                let (ty, bank) = types[pick(types.len() as u32) as usize];
                let q = (pick(2) == 0).then(|| pick(NPRED));
                let (a, b) = (reg(bank, pick(8)), reg(bank, pick(8)));
                Op::Setp(Setp { cmp: cmps[pick(cmps.len() as u32) as usize], ty, ftz: false, p: pick(NPRED), q, a, b, combine: None })
            }
            _ => {
                let bank = pick(2);
                Op::Selp { d: reg(bank, pick(8)), a: reg(bank, pick(8)), b: reg(bank, pick(8)), c: pick(NPRED), negate: pick(2) == 1 }
            }
        };
        Inst::new(op, guard)
    }

    /// The run loop's per-instruction hooks, in order: (hook, pc, lanes, lanes).
    #[derive(Default, Debug, PartialEq)]
    struct Log(Vec<(u8, u32, u64, u64)>);

    impl Observer for Log {
        const WANTS_MEMORY: bool = true;
        fn instruction(&mut self, _: u32, pc: u32, active: u64, exec: u64) {
            self.0.push((0, pc, active, exec));
        }
        fn guard(&mut self, active: u64, exec: u64) {
            self.0.push((1, 0, active, exec));
        }
        fn straight_run(&mut self, _: u32, pc: u32, count: u32, active: u64) {
            self.0.push((3, pc, u64::from(count), active));
        }
        fn branch(&mut self, _: u32, pc: u32, taken: u64, not_taken: u64) {
            self.0.push((4, pc, taken, not_taken));
        }
        fn memory(&mut self, _: u32, pc: u32, space: Space, kind: MemAccessKind, bytes: u32, addrs: &[u64], mask: u64) {
            // The lanes' addresses folded into one word.
            let sum = addrs.iter().fold(u64::from(bytes) << 8 | (kind as u64) << 4 | space as u64, |h, &a| h.rotate_left(7) ^ a);
            self.0.push((5, pc, mask, sum));
        }
    }

    /// Lanes each guarded pc turned off, paired as the metrics observer pairs
    /// them: a run's `guard` calls with its guarded pcs in order.
    fn guard_offs(l: &Log, code: &[Inst]) -> Vec<u64> {
        let mut off = vec![0u64; code.len()];
        let mut pending = Vec::new();
        for &(hook, pc, a, b) in &l.0 {
            match hook {
                1 => pending.push((a, b)),
                3 => {
                    let guarded = (pc..pc + a as u32).filter(|&p| code[p as usize].guard.is_some());
                    for (p, (active, exec)) in guarded.zip(pending.drain(..)) {
                        off[p as usize] += u64::from((active & !exec).count_ones());
                    }
                }
                _ => {}
            }
        }
        off
    }

    /// A bare warp with these register columns and predicate masks, lanes
    /// `present`, of which `exited` have already exited.
    fn warp_with(r32: &[u32], r64: &[u64], preds: &[u64], present: u64, exited: u64) -> Warp<32> {
        let mut w = bare(N32 + 1, N64 + 1, NPRED);
        w.r32 = r32.to_vec();
        w.r64 = r64.to_vec();
        w.r64.resize((N64 as usize + 1) * 32, 0);
        w.preds = preds.to_vec();
        w.present = present;
        w.exited = exited;
        w.stack[0].mask = present & !exited;
        w
    }

    /// The forward-only loop (loads, stores, `mul.wide` and branches no lane
    /// takes inside runs) against the loop that ends a run at each: on random
    /// forward programs (guards, guarded exits and forward branches, parameter
    /// loads in and out of range, global and shared loads and stores of
    /// vectors, now and then out of bounds or misaligned, partial warps,
    /// exited lanes, short slices), the same stops and faults, live registers
    /// and predicates, memory, counters, per-instruction, branch and memory
    /// hooks, instructions counted by runs and lanes turned off by guards.
    #[test]
    fn forward_only_runs_equal_runs_that_end_at_each() {
        let mut rng = numbers(0x0f1a_7c0d_e5ee_d123);
        // The global buffer: 16 bytes a lane.
        const GLOBAL: usize = 32 * 16;
        let (mut folded, mut faults, mut accesses, mut served) = (0, 0, 0, 0);
        for round in 0..600 {
            let len = 40;
            let code: Vec<Inst> = (0..len)
                .map(|pc| {
                    let guard = rng().is_multiple_of(3).then(|| Guard { pred: rng() as u32 % NPRED, negate: rng() % 2 == 1 });
                    match rng() % 15 {
                        0 | 1 => {
                            let target = (pc + 1 + rng() as u32 % 6).min(len);
                            let g = Guard { pred: rng() as u32 % NPRED, negate: rng() % 2 == 1 };
                            Inst::new(Op::Bra { target, reconv: target }, Some(g))
                        }
                        2 => {
                            // 16 parameter bytes: now and then an element past them (a fault).
                            let (size, bank) = if rng().is_multiple_of(2) { (4u8, 0) } else { (8, 1) };
                            let n = 1 + (rng() % 2) as u8;
                            let reg = |slot: u64| if bank == 0 { RegRef::r32(slot as u32 % N32) } else { RegRef::r64(slot as u32 % N64) };
                            let d = [Some(reg(rng())), (n == 2 && !rng().is_multiple_of(4)).then(|| reg(rng())), None, None];
                            let offset = (rng() % 18) as i64 & !(i64::from(size) - 1);
                            let op = Op::Ld {
                                space: Space::KernelParam,
                                size,
                                signed: rng().is_multiple_of(2),
                                n,
                                d,
                                addr: Addr { base: None, offset },
                            };
                            Inst::new(op, guard)
                        }
                        12..=14 => {
                            // Global at 16 bytes a lane (r64 N64) or shared at one address; now and
                            // then an offset past the buffer or not a multiple of the vector's size.
                            let global = !rng().is_multiple_of(3);
                            let (size, bank) = if rng().is_multiple_of(2) { (4u8, 0) } else { (8, 1) };
                            let n = [1u8, 2, 4][rng() as usize % if size == 4 { 3 } else { 2 }];
                            let reg = |slot: u64| if bank == 0 { RegRef::r32(slot as u32 % N32) } else { RegRef::r64(slot as u32 % N64) };
                            let offset = match rng() % 24 {
                                0 => 8,
                                1 => 600,
                                _ if global => 0,
                                _ => (rng() % 3 * 16) as i64,
                            };
                            let (space, base) = if global { (Space::Global, Some(RegRef::r64(N64))) } else { (Space::Shared, None) };
                            let addr = Addr { base, offset };
                            let op = if rng() % 14 < 12 {
                                let d = std::array::from_fn(|k| (k < n as usize && !rng().is_multiple_of(5)).then(|| reg(rng())));
                                Op::Ld { space, size, signed: rng().is_multiple_of(2), n, d, addr }
                            } else {
                                Op::St { space, size, n, s: std::array::from_fn(|_| reg(rng())), addr }
                            };
                            Inst::new(op, guard)
                        }
                        3 => {
                            let op = Op::MulWide32 {
                                signed: rng().is_multiple_of(2),
                                d: rng() as u32 % N64,
                                a: rng() as u32 % N32,
                                b: rng() as u32 % N32,
                            };
                            Inst::new(op, guard)
                        }
                        _ => random_inst(&mut rng),
                    }
                })
                .chain([Inst::new(Op::Bar { kind: BarKind::Sync, id: RegRef::r32(N32), count: None, pred: None, aligned: false }, None)])
                .collect();
            let present = if round % 3 == 0 { (rng() & FULL).max(1) } else { FULL };
            let exited = if round % 8 == 7 { present & rng() } else { 0 };
            let mut r32: Vec<u32> = (0..N32 * 32).map(|_| rng() as u32).collect();
            r32.resize((N32 as usize + 1) * 32, 0);
            let r64: Vec<u64> = (0..N64 * 32).map(|_| rng()).collect();
            // Guards all off, all on or mixed.
            let preds: Vec<u64> = (0..NPRED)
                .map(|_| match rng() % 3 {
                    0 => 0,
                    1 => FULL,
                    _ => rng(),
                })
                .collect();
            let params: Vec<u8> = (0..16).map(|_| rng() as u8).collect();
            let slice = if round % 3 == 0 { 1 + rng() as u32 % 16 } else { 1000 };
            let private = round % 2 == 0;
            let data: Vec<u8> = (0..GLOBAL).map(|_| rng() as u8).collect();
            let shared: Vec<u8> = (0..64).map(|_| rng() as u8).collect();
            // Each lane's 16 bytes: in lane order or shuffled.
            let slot_of: Vec<u64> = (0..32).map(|l| if round % 4 == 1 { l ^ (rng() % 32) } else { l }).collect();
            let runs = [false, true].map(|flat| {
                let mut b = Block::new(0);
                b.kernel.code = code.clone();
                b.kernel.lane_private = private;
                b.kernel.forward_only = flat;
                b.params.clone_from(&params);
                b.shared.clone_from(&shared);
                let buf = b.gmem.alloc("g", GLOBAL as u64, None);
                b.gmem.write(buf, &data).unwrap();
                let mut w = warp_with(&r32, &r64, &preds, present, exited);
                for (l, s) in slot_of.iter().enumerate() {
                    w.r64[N64 as usize * 32 + l] = buf + s * 16;
                }
                let mut log = Log::default();
                let end = loop {
                    match w.run(&mut b.ctx(), &mut log, slice) {
                        Ok(Stop::Yield) => continue,
                        Ok(stop) => break Ok(stop),
                        Err(f) => break Err(format!("{f:?}")),
                    }
                };
                let mut mem = vec![0u8; GLOBAL];
                b.gmem.read(buf, &mut mem).unwrap();
                mem.extend_from_slice(&b.shared);
                (w, end, b.counters(), log, mem)
            });
            let [(ends, e0, c0, log0, mem0), (flat, e1, c1, log1, mem1)] = &runs;
            assert_eq!((e0, c0, ends.exited, &ends.stack), (e1, c1, flat.exited, &flat.stack), "round {round}");
            assert!(mem0 == mem1, "round {round}: memory differs");
            assert_eq!(format!("{:?}", ends.past_end), format!("{:?}", flat.past_end), "round {round}: served past the end");
            served += flat.past_end.len();
            // The same instruction, branch and memory hooks, the same instructions
            // counted by runs and the same lanes turned off by guards.
            let hooks = |l: &Log, kind: u8| l.0.iter().filter(|h| h.0 == kind).copied().collect::<Vec<_>>();
            assert_eq!((hooks(log0, 0), hooks(log0, 4), hooks(log0, 5)), (hooks(log1, 0), hooks(log1, 4), hooks(log1, 5)), "round {round}");
            assert_eq!(guard_offs(log0, &code), guard_offs(log1, &code), "round {round}");
            faults += e1.is_err() as u32;
            accesses += hooks(log1, 5).len();
            let counted = |l: &Log| {
                let mut per_pc = vec![0u64; len as usize + 1];
                for &(_, pc, count, active) in l.0.iter().filter(|h| h.0 == 3) {
                    for p in pc..pc + count as u32 {
                        per_pc[p as usize] += u64::from(active.count_ones());
                    }
                }
                per_pc
            };
            assert_eq!(counted(log0), counted(log1), "round {round}");
            folded += (hooks(log1, 3).len() < hooks(log0, 3).len()) as u32;
            let live = present & !ends.exited;
            for l in (0..32).filter(|l| live >> l & 1 != 0) {
                for s in 0..N32 as usize {
                    assert_eq!(ends.r32[s * 32 + l], flat.r32[s * 32 + l], "round {round} r32 {s} lane {l}");
                }
                for s in 0..N64 as usize {
                    assert_eq!(ends.r64[s * 32 + l], flat.r64[s * 32 + l], "round {round} r64 {s} lane {l}");
                }
            }
            for (p, (x, y)) in ends.preds.iter().zip(&flat.preds).enumerate() {
                assert_eq!(x & live, y & live, "round {round} pred {p}");
            }
        }
        // The forward-only loop ran longer runs; accesses ran and some faulted.
        assert!(folded > 300, "{folded}");
        assert!(faults > 30 && accesses > 1000 && served > 30, "{faults} {accesses} {served}");
    }

    /// Register-to-register instructions that also write absent and exited
    /// lanes (a `lane_private` kernel) against the blends that keep them: on
    /// random programs (guards, exits between, divergent branches) and partial
    /// warps, some lanes exited before and short slices, the live lanes end
    /// with the same registers and predicates, the same lanes exit, and an
    /// observer sees the same hooks with the same lanes.
    #[test]
    fn whole_columns_over_dead_lanes_equal_blends() {
        let mut rng = numbers(0x05ee_d0fd_ead1_a9e5);
        let mut dead_written = 0;
        for round in 0..400 {
            // Now and then a guarded forward branch that reconverges at its
            // target: lanes wait there while the others run the skipped code.
            let len = 48;
            let code: Vec<Inst> = (0..len)
                .map(|pc| match rng() % 10 {
                    0 => {
                        let target = (pc + 2 + rng() as u32 % 6).min(len);
                        Inst::new(Op::Bra { target, reconv: target }, Some(Guard { pred: rng() as u32 % NPRED, negate: rng() % 2 == 1 }))
                    }
                    _ => random_inst(&mut rng),
                })
                // A barrier at the end stops the warp before its lanes run off the code (and exit).
                .chain([Inst::new(Op::Bar { kind: BarKind::Sync, id: RegRef::r32(N32), count: None, pred: None, aligned: false }, None)])
                .collect();
            let present = match round % 4 {
                0 => FULL,
                1 => FULL >> (rng() % 32),
                _ => (rng() & FULL).max(1),
            };
            // A quarter NaNs; barrier id 0 in the column after the program's.
            let mut r32: Vec<u32> = (0..N32 * 32).map(|_| if rng().is_multiple_of(4) { 0x7FC0_0000 } else { rng() as u32 }).collect();
            r32.resize((N32 as usize + 1) * 32, 0);
            let r64: Vec<u64> = (0..N64 * 32).map(|_| rng()).collect();
            let preds: Vec<u64> = (0..NPRED).map(|_| rng()).collect();
            // Now and then lanes that exited before, and slices that end runs early.
            let exited = if round % 8 == 7 { present & rng() } else { 0 };
            let slice = if round % 3 == 0 { 1 + rng() as u32 % 16 } else { 1000 };
            let runs = [false, true].map(|private| {
                let mut b = Block::new(0);
                b.kernel.code = code.clone();
                b.kernel.lane_private = private;
                let mut w = warp_with(&r32, &r64, &preds, present, exited);
                let mut log = Log::default();
                let stop = loop {
                    match w.run(&mut b.ctx(), &mut log, slice).unwrap() {
                        Stop::Yield => continue,
                        stop => break stop,
                    }
                };
                (w, stop, log)
            });
            let [(blend, s0, log0), (whole, s1, log1)] = &runs;
            assert_eq!((s0, blend.exited, &blend.stack), (s1, whole.exited, &whole.stack), "round {round}");
            // Observers see the same lanes either way.
            assert_eq!(log0, log1, "round {round}");
            let live = present & !blend.exited;
            assert!(matches!(s0, Stop::Barrier(_)) || live == 0, "round {round}: {s0:?}");
            let mut saw_dead = false;
            for l in 0..32 {
                let on = live >> l & 1 != 0;
                for s in 0..N32 as usize {
                    let (x, y) = (blend.r32[s * 32 + l], whole.r32[s * 32 + l]);
                    assert!(!on || x == y, "round {round} r32 {s} lane {l}");
                    saw_dead |= x != y;
                }
                for s in 0..N64 as usize {
                    let (x, y) = (blend.r64[s * 32 + l], whole.r64[s * 32 + l]);
                    assert!(!on || x == y, "round {round} r64 {s} lane {l}");
                    saw_dead |= x != y;
                }
            }
            for (p, (x, y)) in blend.preds.iter().zip(&whole.preds).enumerate() {
                assert_eq!(x & live, y & live, "round {round} pred {p}");
            }
            dead_written += saw_dead as u32;
        }
        // The whole-column path ran: dead lanes got values the blends kept out.
        assert!(dead_written > 100, "{dead_written}");
    }
}
