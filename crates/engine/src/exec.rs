//! Executing warp instructions: the one place PTX semantics meet the machine.
//!
//! A warp's registers are lane columns (`W` values per register, `W` a const
//! generic so each column is a fixed-size array the compiler vectorises).
//! Divergence uses the classic SIMT stack: a divergent branch turns the top
//! entry into the reconvergence entry and pushes one entry per path; an entry
//! is popped when its pc reaches its reconvergence pc. Uniform branches leave
//! the stack alone; exited lanes leave every mask.

use crate::fault::FaultKind;
use crate::memory::{GlobalMemory, MemFault, LOCAL_WINDOW, SHARED_WINDOW, WINDOW_SIZE};
use crate::observer::{BarrierEvent, MemAccessKind, Observer, WarpSyncEvent, WarpSyncKind};
use warpsim_ir::cfg::NO_RECONV;
use warpsim_ir::*;
use warpsim_numerics::{self as num, sext, zext, ScalarType};

/// Tensor-core, matrix-movement, asynchronous-copy and mbarrier instructions.
#[path = "exec_mma.rs"]
mod exec_mma;

/// One SIMT stack entry.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct StackEntry {
    pub pc: u32,
    pub mask: u64,
    /// Reconvergence pc: the entry is popped when `pc` reaches it.
    pub rpc: u32,
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
    pub warp_instructions: &'a mut u64,
    pub thread_instructions: &'a mut u64,
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

#[inline(always)]
fn write32<const W: usize>(r: &mut [u32], d: u32, out: &[u32; W], mask: u64) {
    let dst: &mut [u32; W] = (&mut r[d as usize * W..][..W]).try_into().unwrap();
    if mask == full_mask::<W>() {
        *dst = *out;
    } else {
        // Branch-free blend, which vectorises (a conditional store would not).
        for l in 0..W {
            let m = ((mask >> l) & 1).wrapping_neg() as u32;
            dst[l] = (out[l] & m) | (dst[l] & !m);
        }
    }
}

#[inline(always)]
fn write64<const W: usize>(r: &mut [u64], d: u32, out: &[u64; W], mask: u64) {
    let dst: &mut [u64; W] = (&mut r[d as usize * W..][..W]).try_into().unwrap();
    if mask == full_mask::<W>() {
        *dst = *out;
    } else {
        for l in 0..W {
            let m = ((mask >> l) & 1).wrapping_neg();
            dst[l] = (out[l] & m) | (dst[l] & !m);
        }
    }
}

#[inline(always)]
fn set_pred(preds: &mut [u64], p: u32, bits: u64, mask: u64) {
    let v = &mut preds[p as usize];
    *v = (*v & !mask) | (bits & mask);
}

#[inline(always)]
fn canon_f32(x: f32) -> u32 {
    if x.is_nan() {
        0x7FFF_FFFF
    } else {
        x.to_bits()
    }
}

/// The fast paths below compute what `warpsim-numerics` computes for the
/// same operation with default modifiers (a test checks it); f64 NaN results
/// carry operand payloads, so those lanes go to the general path.
#[inline(always)]
pub fn bin32_lane(f: Bin32, p: u32, q: u32) -> u32 {
    match f {
        Bin32::Add => p.wrapping_add(q),
        Bin32::Sub => p.wrapping_sub(q),
        Bin32::MulLo => p.wrapping_mul(q),
        Bin32::And => p & q,
        Bin32::Or => p | q,
        Bin32::Xor => p ^ q,
        Bin32::Shl => {
            if q > 31 {
                0
            } else {
                p << q
            }
        }
        Bin32::ShrU => {
            if q > 31 {
                0
            } else {
                p >> q
            }
        }
        Bin32::ShrS => ((p as i32) >> q.min(31)) as u32,
        Bin32::MinS => (p as i32).min(q as i32) as u32,
        Bin32::MinU => p.min(q),
        Bin32::MaxS => (p as i32).max(q as i32) as u32,
        Bin32::MaxU => p.max(q),
        Bin32::AddF => canon_f32(f32::from_bits(p) + f32::from_bits(q)),
        Bin32::SubF => canon_f32(f32::from_bits(p) - f32::from_bits(q)),
        Bin32::MulF => canon_f32(f32::from_bits(p) * f32::from_bits(q)),
        Bin32::MinF => min_f32(p, q),
        Bin32::MaxF => max_f32(p, q),
    }
}

#[inline(always)]
pub fn bin64_lane(f: Bin64, p: u64, q: u64) -> u64 {
    use num::float::FloatOp;
    let float = |op: FloatOp, r: f64| {
        if r.is_nan() {
            num::float::eval_float(op, ScalarType::F64, num::FMode::RN, [p, q, 0])
        } else {
            r.to_bits()
        }
    };
    match f {
        Bin64::Add => p.wrapping_add(q),
        Bin64::Sub => p.wrapping_sub(q),
        Bin64::MulLo => p.wrapping_mul(q),
        Bin64::And => p & q,
        Bin64::Or => p | q,
        Bin64::Xor => p ^ q,
        Bin64::AddF => float(FloatOp::Add, f64::from_bits(p) + f64::from_bits(q)),
        Bin64::SubF => float(FloatOp::Sub, f64::from_bits(p) - f64::from_bits(q)),
        Bin64::MulF => float(FloatOp::Mul, f64::from_bits(p) * f64::from_bits(q)),
    }
}

#[inline(always)]
pub fn fma_f64_lane(a: u64, b: u64, c: u64) -> u64 {
    let r = f64::from_bits(a).mul_add(f64::from_bits(b), f64::from_bits(c));
    if r.is_nan() {
        num::float::eval_float(num::float::FloatOp::Fma, ScalarType::F64, num::FMode::RN, [a, b, c])
    } else {
        r.to_bits()
    }
}

/// `fma.rn.f32`, one lane (the column version is [`fma_f32_columns`]).
#[inline(always)]
pub fn fma_f32_lane(a: u32, b: u32, c: u32) -> u32 {
    canon_f32(f32::from_bits(a).mul_add(f32::from_bits(b), f32::from_bits(c)))
}

#[inline(always)]
fn min_f32(a: u32, b: u32) -> u32 {
    let (x, y) = (f32::from_bits(a), f32::from_bits(b));
    if x.is_nan() && y.is_nan() {
        0x7FFF_FFFF
    } else if x.is_nan() {
        b
    } else if y.is_nan() || x < y {
        a
    } else if y < x {
        b
    } else {
        a | b
    }
}

#[inline(always)]
fn max_f32(a: u32, b: u32) -> u32 {
    let (x, y) = (f32::from_bits(a), f32::from_bits(b));
    if x.is_nan() && y.is_nan() {
        0x7FFF_FFFF
    } else if x.is_nan() {
        b
    } else if y.is_nan() || x > y {
        a
    } else if y > x {
        b
    } else {
        a & b
    }
}

#[inline(always)]
fn fma_lanes<const W: usize>(a: &[u32; W], b: &[u32; W], c: &[u32; W], out: &mut [u32; W]) {
    for l in 0..W {
        out[l] = canon_f32(f32::from_bits(a[l]).mul_add(f32::from_bits(b[l]), f32::from_bits(c[l])));
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma,avx2")]
unsafe fn fma_lanes_hw<const W: usize>(a: &[u32; W], b: &[u32; W], c: &[u32; W], out: &mut [u32; W]) {
    fma_lanes::<W>(a, b, c, out)
}

#[inline(always)]
fn fma_f32_columns<const W: usize>(a: &[u32; W], b: &[u32; W], c: &[u32; W], out: &mut [u32; W]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("fma") && std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports the features the function is compiled for.
            unsafe { fma_lanes_hw::<W>(a, b, c, out) };
            return;
        }
    }
    fma_lanes::<W>(a, b, c, out)
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

    #[inline]
    fn addresses(&self, a: &Addr) -> [u64; W] {
        let mut out = [a.offset as u64; W];
        match a.base {
            None => {}
            Some(r) if r.bank == Bank::R64 => {
                let c = col64::<W>(&self.r64, r.slot);
                for l in 0..W {
                    out[l] = c[l].wrapping_add(a.offset as u64);
                }
            }
            Some(r) => {
                // 32-bit addresses (shared, local) wrap at 32 bits: `[%r+512]` with %r = base - 512.
                let c = col32::<W>(&self.r32, r.slot);
                for l in 0..W {
                    out[l] = c[l].wrapping_add(a.offset as u32) as u64;
                }
            }
        }
        out
    }

    /// Removes `lanes` from every mask (they exited).
    fn exit_lanes(&mut self, lanes: u64) {
        self.exited |= lanes;
        for e in self.stack.iter_mut() {
            e.mask &= !lanes;
        }
    }

    /// Runs this warp until it exits, reaches a barrier, faults or uses up `slice` instructions.
    pub fn run<O: Observer>(&mut self, ctx: &mut WarpCtx<'_>, obs: &mut O, slice: u32) -> Result<Stop, WarpFault> {
        // The counters live in locals (registers) while the warp runs.
        let mut n = Counters { clock: *ctx.clock, budget: *ctx.budget, warp_insts: 0, thread_insts: 0 };
        let r = self.run_loop(ctx, obs, slice, &mut n);
        *ctx.clock = n.clock;
        *ctx.budget = n.budget;
        *ctx.warp_instructions += n.warp_insts;
        *ctx.thread_instructions += n.thread_insts;
        r
    }

    #[inline(always)]
    fn run_loop<O: Observer>(&mut self, ctx: &mut WarpCtx<'_>, obs: &mut O, slice: u32, n: &mut Counters) -> Result<Stop, WarpFault> {
        let code = &ctx.kernel.code;
        let full = full_mask::<W>();
        let mut left = slice;
        loop {
            if O::SCHEDULES {
                if let Some(&t) = self.stack.last() {
                    if t.mask != 0 && t.pc != t.rpc && (t.pc as usize) < code.len() && obs.schedule(self.index, t.pc, &mut self.stack) {
                        continue;
                    }
                }
            }
            let Some(top) = self.stack.last_mut() else {
                self.state = WarpState::Done;
                return Ok(Stop::Exited);
            };
            if top.mask == 0 || (top.pc == top.rpc && top.rpc != NO_RECONV) {
                self.stack.pop();
                continue;
            }
            let pc = top.pc;
            if pc as usize >= code.len() {
                // Ran off the end (or past a never-reconverging split): those lanes are done.
                let m = top.mask;
                self.exit_lanes(m);
                continue;
            }
            if left == 0 {
                return Ok(Stop::Yield);
            }
            left -= 1;
            if n.budget == 0 {
                return Err(WarpFault { pc, lane: None, kind: FaultKind::BudgetExceeded { limit: ctx.budget_limit } });
            }
            n.budget -= 1;
            let active = top.mask;
            top.pc = pc + 1;
            let inst = &code[pc as usize];
            let exec = match inst.guard {
                None => active,
                Some(g) => {
                    let p = self.preds[g.pred as usize];
                    active & if g.negate { !p } else { p }
                }
            };
            n.clock += 1;
            n.warp_insts += 1;
            n.thread_insts += active.count_ones() as u64;
            obs.instruction(self.index, pc, active, exec);
            if exec == 0 && !matches!(inst.op, Op::Bra { .. } | Op::BrxIdx { .. }) {
                continue;
            }
            match &inst.op {
                Op::Nop => {}
                Op::Fence => obs.fence(self.index, pc, exec),
                Op::Mma(m) => self.exec_mma(ctx, obs, pc, exec, m)?,
                Op::Mov { d, a } => match (d.bank, a.bank) {
                    (Bank::R32, Bank::R32) => {
                        let v = *col32::<W>(&self.r32, a.slot);
                        write32::<W>(&mut self.r32, d.slot, &v, exec);
                    }
                    (Bank::R64, Bank::R64) => {
                        let v = *col64::<W>(&self.r64, a.slot);
                        write64::<W>(&mut self.r64, d.slot, &v, exec);
                    }
                    _ => {
                        let v = self.gather(*a);
                        self.scatter(*d, &v, exec);
                    }
                },
                Op::Bin32 { f, d, a, b } => {
                    let x = *col32::<W>(&self.r32, *a);
                    let y = *col32::<W>(&self.r32, *b);
                    let mut o = [0u32; W];
                    macro_rules! lanes {
                        (|$p:ident, $q:ident| $e:expr) => {
                            for l in 0..W {
                                let $p = x[l];
                                let $q = y[l];
                                o[l] = $e;
                            }
                        };
                    }
                    macro_rules! each {
                        ($($v:ident),*) => {
                            match f {
                                $(Bin32::$v => lanes!(|p, q| bin32_lane(Bin32::$v, p, q)),)*
                            }
                        };
                    }
                    each!(Add, Sub, MulLo, And, Or, Xor, Shl, ShrU, ShrS, MinS, MinU, MaxS, MaxU, AddF, SubF, MulF, MinF, MaxF);
                    write32::<W>(&mut self.r32, *d, &o, exec);
                }
                Op::Bin64 { f, d, a, b } => {
                    let x = *col64::<W>(&self.r64, *a);
                    let y = *col64::<W>(&self.r64, *b);
                    let mut o = [0u64; W];
                    macro_rules! lanes {
                        (|$p:ident, $q:ident| $e:expr) => {
                            for l in 0..W {
                                let $p = x[l];
                                let $q = y[l];
                                o[l] = $e;
                            }
                        };
                    }
                    macro_rules! each {
                        ($($v:ident),*) => {
                            match f {
                                $(Bin64::$v => lanes!(|p, q| bin64_lane(Bin64::$v, p, q)),)*
                            }
                        };
                    }
                    each!(Add, Sub, MulLo, And, Or, Xor, AddF, SubF, MulF);
                    write64::<W>(&mut self.r64, *d, &o, exec);
                }
                Op::Tern32 { f, d, a, b, c } => {
                    let x = col32::<W>(&self.r32, *a);
                    let y = col32::<W>(&self.r32, *b);
                    let z = col32::<W>(&self.r32, *c);
                    let mut o = [0u32; W];
                    match f {
                        Tern32::MadLo => {
                            for l in 0..W {
                                o[l] = x[l].wrapping_mul(y[l]).wrapping_add(z[l]);
                            }
                        }
                        Tern32::FmaF => fma_f32_columns::<W>(x, y, z, &mut o),
                    }
                    write32::<W>(&mut self.r32, *d, &o, exec);
                }
                Op::FmaF64 { d, a, b, c } => {
                    let x = col64::<W>(&self.r64, *a);
                    let y = col64::<W>(&self.r64, *b);
                    let z = col64::<W>(&self.r64, *c);
                    let mut o = [0u64; W];
                    for l in 0..W {
                        o[l] = fma_f64_lane(x[l], y[l], z[l]);
                    }
                    write64::<W>(&mut self.r64, *d, &o, exec);
                }
                Op::Shift64 { left: shl, signed, d, a, b } => {
                    let x = col64::<W>(&self.r64, *a);
                    let y = col32::<W>(&self.r32, *b);
                    let mut o = [0u64; W];
                    for l in 0..W {
                        let s = y[l];
                        o[l] = if *shl {
                            if s > 63 {
                                0
                            } else {
                                x[l] << s
                            }
                        } else if *signed {
                            ((x[l] as i64) >> s.min(63)) as u64
                        } else if s > 63 {
                            0
                        } else {
                            x[l] >> s
                        };
                    }
                    write64::<W>(&mut self.r64, *d, &o, exec);
                }
                Op::MulWide32 { signed, d, a, b } => {
                    let x = col32::<W>(&self.r32, *a);
                    let y = col32::<W>(&self.r32, *b);
                    let mut o = [0u64; W];
                    if *signed {
                        for l in 0..W {
                            o[l] = ((x[l] as i32 as i64) * (y[l] as i32 as i64)) as u64;
                        }
                    } else {
                        for l in 0..W {
                            o[l] = x[l] as u64 * y[l] as u64;
                        }
                    }
                    write64::<W>(&mut self.r64, *d, &o, exec);
                }
                Op::Extend32To64 { signed, d, a } => {
                    let x = col32::<W>(&self.r32, *a);
                    let mut o = [0u64; W];
                    for l in 0..W {
                        o[l] = if *signed { x[l] as i32 as i64 as u64 } else { x[l] as u64 };
                    }
                    write64::<W>(&mut self.r64, *d, &o, exec);
                }
                Op::Trunc64To32 { d, a } => {
                    let x = col64::<W>(&self.r64, *a);
                    let mut o = [0u32; W];
                    for l in 0..W {
                        o[l] = x[l] as u32;
                    }
                    write32::<W>(&mut self.r32, *d, &o, exec);
                }
                Op::Int { op, ty, d, s } => {
                    let s0 = self.gather(s[0]);
                    let s1 = self.gather(s[1]);
                    let s2 = self.gather(s[2]);
                    let s3 = self.gather(s[3]);
                    let mut o = [0u64; W];
                    for l in 0..W {
                        if exec >> l & 1 != 0 {
                            o[l] = num::int::eval_int(*op, *ty, [s0[l], s1[l], s2[l], s3[l]]);
                        }
                    }
                    self.scatter(*d, &o, exec);
                }
                Op::IntCarry { kind, ty, d, s, cc, carry_in, carry_out } => {
                    let s0 = self.gather(s[0]);
                    let s1 = self.gather(s[1]);
                    let s2 = self.gather(s[2]);
                    let ccv = self.preds[*cc as usize];
                    let mut o = [0u64; W];
                    let mut carry = 0u64;
                    for l in 0..W {
                        if exec >> l & 1 == 0 {
                            continue;
                        }
                        let cin = *carry_in && ccv >> l & 1 != 0;
                        // CC.CF is a carry for add and mad, and NOT borrow for sub (as the hardware keeps it).
                        let (v, c) = match kind {
                            CarryKind::Add => num::int::add_cc(*ty, s0[l], s1[l], cin),
                            CarryKind::Sub => num::int::sub_cc_cf(*ty, s0[l], s1[l], if *carry_in { ccv >> l & 1 != 0 } else { true }),
                            CarryKind::MadLo => num::int::mad_cc(*ty, false, s0[l], s1[l], s2[l], cin),
                            CarryKind::MadHi => num::int::mad_cc(*ty, true, s0[l], s1[l], s2[l], cin),
                        };
                        o[l] = v;
                        carry |= (c as u64) << l;
                    }
                    self.scatter(*d, &o, exec);
                    if *carry_out {
                        set_pred(&mut self.preds, *cc, carry, exec);
                    }
                }
                Op::Float { op, ty, mode, d, s } => {
                    let s0 = self.gather(s[0]);
                    let s1 = self.gather(s[1]);
                    let s2 = self.gather(s[2]);
                    let mut o = [0u64; W];
                    for l in 0..W {
                        if exec >> l & 1 != 0 {
                            o[l] = num::float::eval_float(*op, *ty, *mode, [s0[l], s1[l], s2[l]]);
                        }
                    }
                    self.scatter(*d, &o, exec);
                }
                Op::Setp { cmp, ty, ftz, p, q, a, b, combine } => {
                    let bits = self.compare(*cmp, *ty, *ftz, *a, *b, exec);
                    let (pv, qv) = match combine {
                        None => (bits, !bits),
                        Some((bop, c, neg)) => {
                            let cv = self.preds[*c as usize] ^ if *neg { u64::MAX } else { 0 };
                            (combine_bits(*bop, bits, cv), combine_bits(*bop, !bits, cv))
                        }
                    };
                    set_pred(&mut self.preds, *p, pv, exec);
                    if let Some(q) = q {
                        set_pred(&mut self.preds, *q, qv, exec);
                    }
                }
                Op::Set { cmp, ty, dty, ftz, d, a, b, combine } => {
                    let bits = self.compare(*cmp, *ty, *ftz, *a, *b, exec);
                    let bits = match combine {
                        None => bits,
                        Some((bop, c, neg)) => {
                            let cv = self.preds[*c as usize] ^ if *neg { u64::MAX } else { 0 };
                            combine_bits(*bop, bits, cv)
                        }
                    };
                    let t = if *dty == ScalarType::F32 { 0x3F80_0000u64 } else { u64::MAX };
                    let mut o = [0u64; W];
                    for (l, x) in o.iter_mut().enumerate() {
                        *x = if bits >> l & 1 != 0 { t } else { 0 };
                    }
                    self.scatter(*d, &o, exec);
                }
                Op::Selp { d, a, b, c, negate } => {
                    let pv = self.preds[*c as usize] ^ if *negate { u64::MAX } else { 0 };
                    match (d.bank, a.bank, b.bank) {
                        (Bank::R32, Bank::R32, Bank::R32) => {
                            let x = col32::<W>(&self.r32, a.slot);
                            let y = col32::<W>(&self.r32, b.slot);
                            let mut o = [0u32; W];
                            for l in 0..W {
                                o[l] = if pv >> l & 1 != 0 { x[l] } else { y[l] };
                            }
                            write32::<W>(&mut self.r32, d.slot, &o, exec);
                        }
                        _ => {
                            let x = self.gather(*a);
                            let y = self.gather(*b);
                            let mut o = [0u64; W];
                            for l in 0..W {
                                o[l] = if pv >> l & 1 != 0 { x[l] } else { y[l] };
                            }
                            self.scatter(*d, &o, exec);
                        }
                    }
                }
                Op::Slct { cty, ftz, d, a, b, c } => {
                    let x = self.gather(*a);
                    let y = self.gather(*b);
                    let z = self.gather(*c);
                    let mut o = [0u64; W];
                    for l in 0..W {
                        let ge = if *cty == ScalarType::F32 {
                            let mut f = f32::from_bits(z[l] as u32);
                            if *ftz && f.is_subnormal() {
                                f = 0.0;
                            }
                            f >= 0.0 || (f == 0.0)
                        } else {
                            (z[l] as u32 as i32) >= 0
                        };
                        o[l] = if ge { x[l] } else { y[l] };
                    }
                    self.scatter(*d, &o, exec);
                }
                Op::Testp { class, ty, p, a } => {
                    let x = self.gather(*a);
                    let mut bits = 0u64;
                    for (l, v) in x.iter().enumerate() {
                        bits |= (num::float::testp(*class, *ty, *v) as u64) << l;
                    }
                    set_pred(&mut self.preds, *p, bits, exec);
                }
                Op::PredLogic { op, d, a, b } => {
                    let (x, y) = (self.preds[*a as usize], self.preds[*b as usize]);
                    let v = match op {
                        PredOp::And => x & y,
                        PredOp::Or => x | y,
                        PredOp::Xor => x ^ y,
                        PredOp::Not => !x,
                        PredOp::Mov => x,
                        PredOp::AndNot => x & !y,
                    };
                    set_pred(&mut self.preds, *d, v, exec);
                }
                Op::Cvt { dty, sty, mode, d, a } => {
                    let x = self.gather(*a);
                    let mut o = [0u64; W];
                    for l in 0..W {
                        if exec >> l & 1 != 0 {
                            o[l] = num::cvt::cvt(*dty, *sty, *mode, x[l]);
                        }
                    }
                    self.scatter(*d, &o, exec);
                }
                Op::CvtPack { dty, mode, d, a, b } => {
                    let x = *col32::<W>(&self.r32, *a);
                    let y = *col32::<W>(&self.r32, *b);
                    let mut o = [0u32; W];
                    for l in 0..W {
                        if exec >> l & 1 != 0 {
                            o[l] = num::cvt::cvt_pack_x2(*dty, *mode, f32::from_bits(x[l]), f32::from_bits(y[l]));
                        }
                    }
                    write32::<W>(&mut self.r32, *d, &o, exec);
                }
                Op::Pack { d, parts, n, elem_bits } => {
                    let mut o = [0u64; W];
                    for k in 0..*n as usize {
                        let v = self.gather(parts[k]);
                        for l in 0..W {
                            o[l] |= zext(v[l], *elem_bits as u32) << (k as u32 * *elem_bits as u32);
                        }
                    }
                    self.scatter(*d, &o, exec);
                }
                Op::Unpack { ds, a, n, elem_bits } => {
                    let v = self.gather(*a);
                    for k in 0..*n as usize {
                        if let Some(dk) = ds[k] {
                            let mut o = [0u64; W];
                            for l in 0..W {
                                o[l] = zext(v[l] >> (k as u32 * *elem_bits as u32), *elem_bits as u32);
                            }
                            self.scatter(dk, &o, exec);
                        }
                    }
                }
                Op::Cvta { to_generic, window, d, a } => {
                    let v = self.gather(*a);
                    let mut o = [0u64; W];
                    for l in 0..W {
                        o[l] = if *to_generic { v[l].wrapping_add(*window) } else { v[l].wrapping_sub(*window) };
                    }
                    self.scatter(*d, &o, exec);
                }
                Op::Ld { space: Space::KernelParam, size, signed, n, d, addr } if addr.base.is_none() => {
                    // Kernel parameters are uniform: one read, broadcast to every lane.
                    for k in 0..*n as usize {
                        let off = (addr.offset as u64).wrapping_add(k as u64 * *size as u64);
                        let raw = self.load(ctx, Space::KernelParam, off, *size as u32, 0, 0).map_err(|kind| WarpFault {
                            pc,
                            lane: None,
                            kind,
                        })?;
                        if let Some(dk) = d[k] {
                            let v = if *signed { sext(raw, *size as u32 * 8) } else { raw };
                            self.scatter(dk, &[v; W], exec);
                        }
                    }
                }
                Op::Ld { space, size, signed, n, d, addr } => {
                    let base = self.addresses(addr);
                    let size = *size as u32;
                    if O::WANTS_MEMORY {
                        obs.memory(self.index, pc, *space, MemAccessKind::Load, size * *n as u32, &base, exec);
                    }
                    if let Some(alloc) = self.one_allocation(ctx, *space, &base, exec, size * *n as u32, size) {
                        let mut m = exec;
                        while m != 0 {
                            let l = m.trailing_zeros() as usize;
                            m &= m - 1;
                            for k in 0..*n as usize {
                                let raw = alloc.load_at(base[l] - alloc.base + k as u64 * size as u64, size);
                                if let Some(dk) = d[k] {
                                    let v = if *signed { sext(raw, size * 8) } else { raw };
                                    self.put_lane(dk, l, v)
                                }
                            }
                        }
                        continue;
                    }
                    let local_bytes = ctx.kernel.local_bytes;
                    let mut m = exec;
                    while m != 0 {
                        let l = m.trailing_zeros() as usize;
                        m &= m - 1;
                        for k in 0..*n as usize {
                            let a = base[l].wrapping_add(k as u64 * size as u64);
                            let raw = self.load(ctx, *space, a, size, l, local_bytes).map_err(|kind| WarpFault {
                                pc,
                                lane: Some(l as u32),
                                kind,
                            })?;
                            if let Some(dk) = d[k] {
                                let v = if *signed { sext(raw, size * 8) } else { raw };
                                self.put_lane(dk, l, v)
                            }
                        }
                    }
                }
                Op::St { space, size, n, s, addr } => {
                    let base = self.addresses(addr);
                    let size = *size as u32;
                    if O::WANTS_MEMORY {
                        obs.memory(self.index, pc, *space, MemAccessKind::Store, size * *n as u32, &base, exec);
                    }
                    if let Some(alloc) = self.one_allocation(ctx, *space, &base, exec, size * *n as u32, size) {
                        let mut m = exec;
                        while m != 0 {
                            let l = m.trailing_zeros() as usize;
                            m &= m - 1;
                            for k in 0..*n as usize {
                                let v = self.lane_value(s[k], l);
                                alloc.store_at(base[l] - alloc.base + k as u64 * size as u64, size, v);
                            }
                        }
                        continue;
                    }
                    let local_bytes = ctx.kernel.local_bytes;
                    let mut m = exec;
                    while m != 0 {
                        let l = m.trailing_zeros() as usize;
                        m &= m - 1;
                        for k in 0..*n as usize {
                            let a = base[l].wrapping_add(k as u64 * size as u64);
                            let v = self.lane_value(s[k], l);
                            self.store(ctx, *space, a, size, v, l, local_bytes).map_err(|kind| WarpFault {
                                pc,
                                lane: Some(l as u32),
                                kind,
                            })?;
                        }
                    }
                }
                Op::Atom { space, op, ty, d, addr, b, c } => {
                    let base = self.addresses(addr);
                    let size = ty.bytes();
                    if O::WANTS_MEMORY {
                        obs.memory(self.index, pc, *space, MemAccessKind::Atomic, size, &base, exec);
                    }
                    let local_bytes = ctx.kernel.local_bytes;
                    let mut m = exec;
                    while m != 0 {
                        let l = m.trailing_zeros() as usize;
                        m &= m - 1;
                        let bv = self.lane_value(*b, l);
                        let cv = self.lane_value(*c, l);
                        let old = self.atomic(ctx, *space, base[l], *op, *ty, bv, cv, l, local_bytes).map_err(|kind| WarpFault {
                            pc,
                            lane: Some(l as u32),
                            kind,
                        })?;
                        if let Some(dr) = d {
                            let v = if ty.is_signed() { sext(old, size * 8) } else { old };
                            self.put_lane(*dr, l, v)
                        }
                    }
                }
                Op::Bra { target, reconv } => {
                    let taken = exec;
                    let not_taken = active & !exec;
                    obs.branch(self.index, pc, taken, not_taken);
                    let top = self.stack.last_mut().unwrap();
                    if not_taken == 0 {
                        top.pc = *target;
                    } else if taken != 0 {
                        top.pc = *reconv;
                        // Taken path below, fall-through path on top (runs first).
                        self.stack.push(StackEntry { pc: *target, mask: taken, rpc: *reconv });
                        self.stack.push(StackEntry { pc: pc + 1, mask: not_taken, rpc: *reconv });
                        if O::SCHEDULES {
                            obs.diverged(self.index, pc, &mut self.stack);
                        }
                    }
                }
                Op::BrxIdx { index, targets, reconv } => {
                    let idx = self.gather(*index);
                    let mut groups: Vec<(u32, u64)> = Vec::new();
                    let mut m = exec;
                    while m != 0 {
                        let l = m.trailing_zeros() as usize;
                        m &= m - 1;
                        let i = idx[l] as usize;
                        let Some(&t) = targets.get(i) else {
                            return Err(WarpFault {
                                pc,
                                lane: Some(l as u32),
                                kind: FaultKind::Unsupported(format!("brx.idx index {i} out of range (list has {})", targets.len())),
                            });
                        };
                        match groups.iter_mut().find(|g| g.0 == t) {
                            Some(g) => g.1 |= 1 << l,
                            None => groups.push((t, 1 << l)),
                        }
                    }
                    let rest = active & !exec;
                    obs.branch(self.index, pc, exec, rest);
                    let top = self.stack.last_mut().unwrap();
                    if groups.len() == 1 && rest == 0 {
                        top.pc = groups[0].0;
                    } else {
                        top.pc = *reconv;
                        if rest != 0 {
                            self.stack.push(StackEntry { pc: pc + 1, mask: rest, rpc: *reconv });
                        }
                        for (t, mask) in groups.into_iter().rev() {
                            self.stack.push(StackEntry { pc: t, mask, rpc: *reconv });
                        }
                        if O::SCHEDULES {
                            obs.diverged(self.index, pc, &mut self.stack);
                        }
                    }
                }
                Op::Exit => self.exit_lanes(exec),
                Op::Trap => return Err(WarpFault { pc, lane: Some(exec.trailing_zeros()), kind: FaultKind::Trap }),
                Op::Bar { kind, id, count, pred, aligned } => {
                    let bid = self.uniform(*id, exec) as u32;
                    let cnt = count.map(|c| self.uniform(c, exec) as u32);
                    let red = match (kind, pred) {
                        (BarKind::Red(r), Some((p, neg))) => {
                            let v = self.preds[*p as usize] ^ if *neg { u64::MAX } else { 0 };
                            Some((*r, v & exec))
                        }
                        _ => None,
                    };
                    let wait = !matches!(kind, BarKind::Arrive);
                    let arrival = BarrierArrival { id: bid, count: cnt, threads: exec.count_ones(), wait, red, exec };
                    if bid > 15 {
                        return Err(WarpFault { pc, lane: None, kind: FaultKind::Unsupported(format!("barrier id {bid} is above 15")) });
                    }
                    let live = self.present & !self.exited;
                    obs.barrier(self.index, pc, &BarrierEvent { id: bid, count: cnt, exec, live, wait, aligned: *aligned });
                    if wait {
                        self.state = WarpState::AtBarrier;
                    }
                    return Ok(Stop::Barrier(arrival));
                }
                Op::BarWarpSync { mask } => {
                    if O::WANTS_SYNC {
                        self.report_sync(obs, pc, WarpSyncKind::BarWarpSync, exec, *mask, None);
                    }
                }
                Op::Shfl { mode, d, p, a, b, c, mask } => {
                    let mut sources = [u32::MAX; W];
                    let av = *col32::<W>(&self.r32, *a);
                    let bv = col32::<W>(&self.r32, *b);
                    let cv = col32::<W>(&self.r32, *c);
                    let mut o = [0u32; W];
                    let mut pbits = 0u64;
                    for l in 0..W {
                        let lane = (l & 31) as u32;
                        let half = l & !31;
                        let bval = bv[l] & 0x1f;
                        let clamp = cv[l] & 0x1f;
                        let seg = (cv[l] >> 8) & 0x1f;
                        let max_lane = (lane & seg) | (clamp & !seg);
                        let min_lane = lane & seg;
                        let (j, ok) = match mode {
                            ShflMode::Up => {
                                let j = lane as i32 - bval as i32;
                                (j, j >= max_lane as i32)
                            }
                            ShflMode::Down => {
                                let j = (lane + bval) as i32;
                                (j, j <= max_lane as i32)
                            }
                            ShflMode::Bfly => {
                                let j = (lane ^ bval) as i32;
                                (j, j <= max_lane as i32)
                            }
                            ShflMode::Idx => {
                                let j = (min_lane | (bval & !seg)) as i32;
                                (j, j <= max_lane as i32)
                            }
                        };
                        let src = if ok { half + j as usize } else { l };
                        o[l] = av[src.min(W - 1)];
                        pbits |= (ok as u64) << l;
                        if O::WANTS_SYNC && ok {
                            sources[l] = (half + j as usize) as u32;
                        }
                    }
                    if O::WANTS_SYNC {
                        self.report_sync(obs, pc, WarpSyncKind::Shfl, exec, RegRef::r32(*mask), Some(&sources));
                    }
                    write32::<W>(&mut self.r32, *d, &o, exec);
                    if let Some(p) = p {
                        set_pred(&mut self.preds, *p, pbits, exec);
                    }
                }
                Op::Vote { mode, d, a, negate, mask } => {
                    if O::WANTS_SYNC {
                        self.report_sync(obs, pc, WarpSyncKind::Vote, exec, RegRef::r32(*mask), None);
                    }
                    let pv = (self.preds[*a as usize] ^ if *negate { u64::MAX } else { 0 }) & exec;
                    match mode {
                        VoteMode::Ballot => {
                            let mut o = [0u64; W];
                            for (l, x) in o.iter_mut().enumerate() {
                                *x = (pv >> (l & !31)) & 0xFFFF_FFFF;
                            }
                            self.scatter(*d, &o, exec);
                        }
                        _ => {
                            let r = match mode {
                                VoteMode::All => pv == exec,
                                VoteMode::Any => pv != 0,
                                _ => pv == exec || pv == 0,
                            };
                            let bits = if r { u64::MAX } else { 0 };
                            match d.bank {
                                Bank::Pred => set_pred(&mut self.preds, d.slot, bits, exec),
                                _ => self.scatter(*d, &[bits & 1; W], exec),
                            }
                        }
                    }
                }
                Op::Match { all, ty: _, d, p, a, mask } => {
                    if O::WANTS_SYNC {
                        self.report_sync(obs, pc, WarpSyncKind::Match, exec, RegRef::r32(*mask), None);
                    }
                    let v = self.gather(*a);
                    let mut o = [0u32; W];
                    let mut pbits = 0u64;
                    if *all {
                        let first = v[exec.trailing_zeros() as usize];
                        let same = (0..W).all(|l| exec >> l & 1 == 0 || v[l] == first);
                        for (l, x) in o.iter_mut().enumerate() {
                            *x = if same { (exec >> (l & !31)) as u32 } else { 0 };
                        }
                        pbits = if same { u64::MAX } else { 0 };
                    } else {
                        for l in 0..W {
                            if exec >> l & 1 == 0 {
                                continue;
                            }
                            let mut mm = 0u64;
                            for k in 0..W {
                                if exec >> k & 1 != 0 && v[k] == v[l] {
                                    mm |= 1 << k;
                                }
                            }
                            o[l] = (mm >> (l & !31)) as u32;
                        }
                    }
                    write32::<W>(&mut self.r32, *d, &o, exec);
                    if let Some(p) = p {
                        set_pred(&mut self.preds, *p, pbits, exec);
                    }
                }
                Op::Activemask { d } => {
                    let mut o = [0u32; W];
                    for (l, x) in o.iter_mut().enumerate() {
                        *x = (exec >> (l & !31)) as u32;
                    }
                    write32::<W>(&mut self.r32, *d, &o, exec);
                }
                Op::Redux { op, ty, d, a, mask } => {
                    if O::WANTS_SYNC {
                        self.report_sync(obs, pc, WarpSyncKind::Redux, exec, RegRef::r32(*mask), None);
                    }
                    let v = col32::<W>(&self.r32, *a);
                    let signed = ty.is_signed();
                    let mut acc: Option<u32> = None;
                    for l in 0..W {
                        if exec >> l & 1 == 0 {
                            continue;
                        }
                        let x = v[l];
                        acc = Some(match acc {
                            None => x,
                            Some(y) => match op {
                                ReduxOp::Add => y.wrapping_add(x),
                                ReduxOp::And => y & x,
                                ReduxOp::Or => y | x,
                                ReduxOp::Xor => y ^ x,
                                ReduxOp::Min if signed => (y as i32).min(x as i32) as u32,
                                ReduxOp::Min => y.min(x),
                                ReduxOp::Max if signed => (y as i32).max(x as i32) as u32,
                                ReduxOp::Max => y.max(x),
                            },
                        });
                    }
                    let o = [acc.unwrap_or(0); W];
                    write32::<W>(&mut self.r32, *d, &o, exec);
                }
                Op::ElectSync { d, p, mask } => {
                    if O::WANTS_SYNC {
                        self.report_sync(obs, pc, WarpSyncKind::Elect, exec, RegRef::r32(*mask), None);
                    }
                    let mv = self.uniform(RegRef::r32(*mask), exec);
                    let cand = exec & (mv | mv << 32);
                    let leader = if cand == 0 { exec.trailing_zeros() } else { cand.trailing_zeros() };
                    set_pred(&mut self.preds, *p, 1u64 << leader, exec);
                    if let Some(d) = d {
                        write32::<W>(&mut self.r32, *d, &[leader & 31; W], exec);
                    }
                }
                Op::Clock { kind, d } => {
                    let c = n.clock;
                    let v = match kind {
                        ClockKind::Clock32 => c & 0xFFFF_FFFF,
                        ClockKind::Clock64 => c,
                        ClockKind::GlobalTimer => c,
                        ClockKind::GlobalTimerLo => c & 0xFFFF_FFFF,
                        ClockKind::GlobalTimerHi => c >> 32,
                    };
                    self.scatter(*d, &[v; W], exec);
                }
            }
            let _ = full;
        }
    }

    /// Tells the observer about a warp-synchronous instruction, with each lane's mask.
    #[inline(never)]
    fn report_sync<O: Observer>(&self, obs: &mut O, pc: u32, kind: WarpSyncKind, exec: u64, mask: RegRef, sources: Option<&[u32]>) {
        let mut masks = [0u32; W];
        for (l, m) in masks.iter_mut().enumerate() {
            *m = self.lane_value(mask, l) as u32;
        }
        obs.warp_sync(self.index, pc, &WarpSyncEvent { kind, exec, live: self.present & !self.exited, masks: &masks, sources });
    }

    /// For a global access: the allocation holding every active lane's bytes when
    /// all are aligned and in one allocation (the common case, checked once).
    #[inline]
    fn one_allocation<'m>(
        &self,
        ctx: &WarpCtx<'m>,
        space: Space,
        base: &[u64; W],
        exec: u64,
        bytes: u32,
        size: u32,
    ) -> Option<&'m crate::memory::Allocation> {
        if !matches!(space, Space::Global | Space::Generic) {
            return None;
        }
        let (mut lo, mut hi, mut misaligned) = (u64::MAX, 0u64, 0u64);
        for l in 0..W {
            let on = exec >> l & 1 != 0;
            let a = base[l];
            lo = if on { lo.min(a) } else { lo };
            hi = if on { hi.max(a) } else { hi };
            misaligned |= if on { a & (size as u64 - 1) } else { 0 };
        }
        if misaligned != 0 || lo.wrapping_sub(SHARED_WINDOW) < WINDOW_SIZE || lo.wrapping_sub(LOCAL_WINDOW) < WINDOW_SIZE {
            return None;
        }
        ctx.gmem.find_range(lo, hi.checked_add(bytes as u64)?)
    }

    fn compare(&self, cmp: num::CmpOp, ty: ScalarType, ftz: bool, a: RegRef, b: RegRef, exec: u64) -> u64 {
        use num::CmpOp::*;
        let mut bits = 0u64;
        macro_rules! fast {
            ($col:ident, $reg:ident, $conv:expr) => {{
                let x = $col::<W>(&self.$reg, a.slot);
                let y = $col::<W>(&self.$reg, b.slot);
                let f = $conv;
                macro_rules! go {
                    ($op:tt) => {
                        for l in 0..W {
                            bits |= ((f(x[l]) $op f(y[l])) as u64) << l;
                        }
                    };
                }
                match cmp {
                    Eq => go!(==),
                    Ne => go!(!=),
                    Lt | Lo => go!(<),
                    Le | Ls => go!(<=),
                    Gt | Hi => go!(>),
                    Ge | Hs => go!(>=),
                    _ => unreachable!(),
                }
                return bits;
            }};
        }
        let simple = matches!(cmp, Eq | Ne | Lt | Le | Gt | Ge | Lo | Ls | Hi | Hs);
        if simple && a.bank == b.bank {
            match (ty, a.bank) {
                (ScalarType::S32, Bank::R32) => fast!(col32, r32, |v: u32| v as i32),
                (ScalarType::U32 | ScalarType::B32, Bank::R32) => fast!(col32, r32, |v: u32| v),
                (ScalarType::S64, Bank::R64) => fast!(col64, r64, |v: u64| v as i64),
                (ScalarType::U64 | ScalarType::B64, Bank::R64) => fast!(col64, r64, |v: u64| v),
                (ScalarType::F32, Bank::R32) if !ftz && cmp != Ne => fast!(col32, r32, f32::from_bits),
                (ScalarType::F64, Bank::R64) if cmp != Ne => fast!(col64, r64, f64::from_bits),
                _ => {}
            }
        }
        let x = self.gather(a);
        let y = self.gather(b);
        for l in 0..W {
            if exec >> l & 1 != 0 {
                bits |= (num::compare(cmp, ty, ftz, x[l], y[l]) as u64) << l;
            }
        }
        bits
    }

    fn local_slot(&mut self, off: u64, size: u32, lane: usize, local_bytes: u32, access: &'static str) -> Result<usize, FaultKind> {
        if off % size as u64 != 0 {
            return Err(FaultKind::Misaligned { space: "local", access, size, addr: off });
        }
        if off + size as u64 > local_bytes as u64 {
            return Err(FaultKind::OutOfBounds { space: "local", access, size, addr: off });
        }
        if self.local.is_empty() {
            self.local.resize(local_bytes as usize * W, 0);
        }
        Ok(lane * local_bytes as usize + off as usize)
    }

    fn load(&mut self, ctx: &WarpCtx<'_>, space: Space, addr: u64, size: u32, lane: usize, local_bytes: u32) -> Result<u64, FaultKind> {
        let (space, addr) = resolve_generic(space, addr);
        match space {
            Space::Global | Space::Const | Space::Generic => {
                ctx.gmem.load(addr, size).map_err(|f| mem_fault(f, if space == Space::Const { "const" } else { "global" }, "load"))
            }
            Space::Shared => {
                let i = shared_index(ctx.shared.len(), addr, size, "load")?;
                Ok(read_le(&ctx.shared[i..i + size as usize]))
            }
            Space::Local => {
                let i = self.local_slot(addr, size, lane, local_bytes, "load")?;
                Ok(read_le(&self.local[i..i + size as usize]))
            }
            Space::KernelParam => {
                if addr + size as u64 > ctx.params.len() as u64 {
                    return Err(FaultKind::OutOfBounds { space: "param", access: "load", size, addr });
                }
                Ok(read_le(&ctx.params[addr as usize..addr as usize + size as usize]))
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn store(
        &mut self,
        ctx: &mut WarpCtx<'_>,
        space: Space,
        addr: u64,
        size: u32,
        v: u64,
        lane: usize,
        local_bytes: u32,
    ) -> Result<(), FaultKind> {
        let (space, addr) = resolve_generic(space, addr);
        match space {
            Space::Global | Space::Generic => ctx.gmem.store(addr, size, v).map_err(|f| mem_fault(f, "global", "store")),
            Space::Const | Space::KernelParam => Err(FaultKind::Unsupported("store to a read-only state space".into())),
            Space::Shared => {
                let i = shared_index(ctx.shared.len(), addr, size, "store")?;
                ctx.shared[i..i + size as usize].copy_from_slice(&v.to_le_bytes()[..size as usize]);
                Ok(())
            }
            Space::Local => {
                let i = self.local_slot(addr, size, lane, local_bytes, "store")?;
                self.local[i..i + size as usize].copy_from_slice(&v.to_le_bytes()[..size as usize]);
                Ok(())
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn atomic(
        &mut self,
        ctx: &mut WarpCtx<'_>,
        space: Space,
        addr: u64,
        op: AtomOp,
        ty: ScalarType,
        b: u64,
        c: u64,
        lane: usize,
        local_bytes: u32,
    ) -> Result<u64, FaultKind> {
        let (space, addr) = resolve_generic(space, addr);
        let size = ty.bytes();
        let f = |old: u64| atom_apply(op, ty, old, b, c);
        match space {
            Space::Global | Space::Generic => {
                let r = match size {
                    2 => ctx.gmem.rmw16(addr, |o| f(o as u64) as u16).map(|v| v as u64),
                    4 => ctx.gmem.rmw32(addr, |o| f(o as u64) as u32).map(|v| v as u64),
                    _ => ctx.gmem.rmw64(addr, f),
                };
                r.map_err(|e| mem_fault(e, "global", "atomic"))
            }
            Space::Shared => {
                let i = shared_index(ctx.shared.len(), addr, size, "atomic")?;
                let old = read_le(&ctx.shared[i..i + size as usize]);
                let new = f(old);
                ctx.shared[i..i + size as usize].copy_from_slice(&new.to_le_bytes()[..size as usize]);
                Ok(old)
            }
            Space::Local => {
                let i = self.local_slot(addr, size, lane, local_bytes, "atomic")?;
                let old = read_le(&self.local[i..i + size as usize]);
                let new = f(old);
                self.local[i..i + size as usize].copy_from_slice(&new.to_le_bytes()[..size as usize]);
                Ok(old)
            }
            _ => Err(FaultKind::Unsupported("atomic on a read-only state space".into())),
        }
    }
}

#[inline]
fn combine_bits(op: num::BoolOp, a: u64, b: u64) -> u64 {
    match op {
        num::BoolOp::And => a & b,
        num::BoolOp::Or => a | b,
        num::BoolOp::Xor => a ^ b,
    }
}

use warpsim_ir::window::resolve as resolve_generic;

#[inline]
fn shared_index(len: usize, addr: u64, size: u32, access: &'static str) -> Result<usize, FaultKind> {
    if addr % size as u64 != 0 {
        return Err(FaultKind::Misaligned { space: "shared", access, size, addr });
    }
    if addr + size as u64 > len as u64 {
        return Err(FaultKind::OutOfBounds { space: "shared", access, size, addr });
    }
    Ok(addr as usize)
}

#[inline]
fn read_le(b: &[u8]) -> u64 {
    let mut x = [0u8; 8];
    x[..b.len()].copy_from_slice(b);
    u64::from_le_bytes(x)
}

fn mem_fault(f: MemFault, space: &'static str, access: &'static str) -> FaultKind {
    match f {
        MemFault::OutOfBounds { addr, size } => FaultKind::OutOfBounds { space, access, size, addr },
        MemFault::Misaligned { addr, size } => FaultKind::Misaligned { space, access, size, addr },
    }
}

/// The new value an atomic stores, given the old one.
pub fn atom_apply(op: AtomOp, ty: ScalarType, old: u64, b: u64, c: u64) -> u64 {
    let bits = ty.bits();
    let signed = ty.is_signed();
    let float = ty.is_float();
    let mask = zext(u64::MAX, bits);
    let v = match op {
        AtomOp::Add if float => match ty {
            ScalarType::F32 => (f32::from_bits(old as u32) + f32::from_bits(b as u32)).to_bits() as u64,
            ScalarType::F64 => (f64::from_bits(old) + f64::from_bits(b)).to_bits(),
            _ => num::float::eval_float(num::float::FloatOp::Add, ty, num::FMode::RN, [old, b, 0]),
        },
        AtomOp::Add => old.wrapping_add(b),
        AtomOp::Min | AtomOp::Max if float => {
            let fo = if op == AtomOp::Min { num::float::FloatOp::Min } else { num::float::FloatOp::Max };
            num::float::eval_float(fo, ty, num::FMode::RN, [old, b, 0])
        }
        AtomOp::Min | AtomOp::Max => {
            let (x, y) =
                if signed { (sext(old, bits) as i64, sext(b, bits) as i64) } else { (zext(old, bits) as i64, zext(b, bits) as i64) };
            let less = if signed { x < y } else { (x as u64) < (y as u64) };
            let pick_old = if op == AtomOp::Min { less } else { !less };
            if pick_old {
                old
            } else {
                b
            }
        }
        AtomOp::Inc => {
            let (o, bb) = (zext(old, bits), zext(b, bits));
            if o >= bb {
                0
            } else {
                o + 1
            }
        }
        AtomOp::Dec => {
            let (o, bb) = (zext(old, bits), zext(b, bits));
            if o == 0 || o > bb {
                bb
            } else {
                o - 1
            }
        }
        AtomOp::And => old & b,
        AtomOp::Or => old | b,
        AtomOp::Xor => old ^ b,
        AtomOp::Exch => b,
        AtomOp::Cas => {
            if zext(old, bits) == zext(b, bits) {
                c
            } else {
                old
            }
        }
    };
    v & mask
}
