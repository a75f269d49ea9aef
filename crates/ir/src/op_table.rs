//! The op table: every fact about a decoded instruction that more than one
//! consumer needs, declared once per [`Op`] variant (and [`MmaOp`] form) in
//! exhaustive matches. Liveness (`regs`), register packing (`pack`, which
//! renames through [`Op::visit_slots_mut`]), the SASS-folding model (metrics),
//! the timing decoder, the checker's plan and the engine's schedule points
//! derive from these answers, so adding an op fails to compile here until
//! its registers, latency class, memory access and collective nature are
//! decided, and the consumers stay free of catch-all arms.
//!
//! Modifiers that do not change what the engine computes (memory ordering,
//! scope, cache operator, `.sync`, fence kind, `.pragma "nounroll"`) are kept
//! beside the op in [`InstMeta`], recorded at lowering, so that nobody
//! re-parses opcode text downstream.

use crate::inst::{
    Addr, Bank, BarKind, BarRed, Bin32, Bin64, CallSlot, CallTarget, CarryKind, Inst, Op, Pc, RegRef, Set, Setp, Shfl, Space, Tern32,
};
use crate::mma::{BulkDir, MbarKind, MmaOp, SyncKind, WgmmaA};
use warpsim_numerics::float::FloatOp;
use warpsim_numerics::int::IntOp;
use warpsim_numerics::ScalarType;

// ---- registers ------------------------------------------------------------------

/// How an instruction touches a register.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum RegRole {
    Read,
    Write,
}

/// A `RegRef` operand given to the visitor `$f` as its bank and a reference
/// to its slot (`&mut` when `$m` is `mut`).
macro_rules! reg {
    ($f:ident, $role:expr, $r:expr $(, $m:tt)?) => {
        $f($role, $r.bank, &$($m)? $r.slot)
    };
}

/// The base register of an address, read.
macro_rules! addr_base {
    ($f:ident, $a:expr $(, $m:tt)?) => {
        if let Some(b) = &$($m)? $a.base {
            reg!($f, RegRole::Read, b $(, $m)?)
        }
    };
}

/// Slots of fixed banks: the reads, then the one write.
macro_rules! fixed {
    ($f:ident, $($rb:ident $r:ident),* => $wb:ident $w:ident) => {{
        $($f(RegRole::Read, Bank::$rb, $r);)*
        $f(RegRole::Write, Bank::$wb, $w)
    }};
}

/// Every register slot of an [`Op`], reads first (in operand order), then
/// writes: the one declaration behind [`Op::visit_slots`] and
/// [`Op::visit_slots_mut`] (`$m` is `mut` for the latter). Fields that are
/// slots of a fixed bank bind as references to `u32`; `RegRef` fields give
/// their bank and slot. The guard is not included (see [`Inst::visit_regs`]).
macro_rules! op_slots {
    ($op:expr, $f:ident $(, $m:tt)?) => {{
        use Bank::{Pred as P, R32 as B32};
        use RegRole::{Read as R, Write as W};
        match $op {
            Op::Nop | Op::Fence | Op::Exit | Op::Trap | Op::Bra { .. } | Op::AssertFail { .. } | Op::Ret => {}
            Op::Printf { d, .. } => {
                if let Some(d) = d {
                    $f(W, B32, d);
                }
            }
            // The callee's own registers are its business (saved and restored per call).
            Op::Call(c) => {
                if let CallTarget::Indirect(r) = &$($m)? c.target {
                    reg!($f, R, r $(, $m)?);
                }
                for a in &$($m)? c.args {
                    if let CallSlot::Reg(r) = a {
                        reg!($f, R, r $(, $m)?);
                    }
                }
                for a in &$($m)? c.rets {
                    if let CallSlot::Reg(r) = a {
                        reg!($f, W, r $(, $m)?);
                    }
                }
            }
            Op::Mov { d, a } | Op::Cvt { d, a, .. } | Op::Cvta { d, a, .. } => {
                reg!($f, R, a $(, $m)?);
                reg!($f, W, d $(, $m)?);
            }
            Op::Bin32 { d, a, b, .. } | Op::CvtPack { d, a, b, .. } | Op::CvtToF8x2 { d, a, b, .. } => fixed!($f, R32 a, R32 b => R32 d),
            Op::Bin64 { d, a, b, .. } => fixed!($f, R64 a, R64 b => R64 d),
            Op::Tern32 { d, a, b, c, .. } => fixed!($f, R32 a, R32 b, R32 c => R32 d),
            Op::FmaF64 { d, a, b, c } => fixed!($f, R64 a, R64 b, R64 c => R64 d),
            Op::Shift64 { d, a, b, .. } => fixed!($f, R64 a, R32 b => R64 d),
            Op::MulWide32 { d, a, b, .. } => fixed!($f, R32 a, R32 b => R64 d),
            Op::Extend32To64 { d, a, .. } => fixed!($f, R32 a => R64 d),
            Op::Trunc64To32 { d, a } => fixed!($f, R64 a => R32 d),
            Op::CvtF8x2ToF16x2 { d, a, .. } => fixed!($f, R32 a => R32 d),
            Op::Int { d, s, .. } => {
                for s in s {
                    reg!($f, R, s $(, $m)?);
                }
                reg!($f, W, d $(, $m)?);
            }
            Op::IntCarry { d, s, cc, carry_in, carry_out, .. } => {
                for s in s {
                    reg!($f, R, s $(, $m)?);
                }
                if *carry_in {
                    $f(R, P, &$($m)? *cc);
                }
                reg!($f, W, d $(, $m)?);
                if *carry_out {
                    $f(W, P, cc);
                }
            }
            Op::Float { d, s, .. } => {
                for s in s {
                    reg!($f, R, s $(, $m)?);
                }
                reg!($f, W, d $(, $m)?);
            }
            Op::Setp(Setp { p, q, a, b, combine, .. }) => {
                reg!($f, R, a $(, $m)?);
                reg!($f, R, b $(, $m)?);
                if let Some((_, c, _)) = combine {
                    $f(R, P, c);
                }
                $f(W, P, p);
                if let Some(q) = q {
                    $f(W, P, q);
                }
            }
            Op::Set(Set { d, a, b, combine, .. }) => {
                reg!($f, R, a $(, $m)?);
                reg!($f, R, b $(, $m)?);
                if let Some((_, c, _)) = combine {
                    $f(R, P, c);
                }
                reg!($f, W, d $(, $m)?);
            }
            Op::Selp { d, a, b, c, .. } => {
                reg!($f, R, a $(, $m)?);
                reg!($f, R, b $(, $m)?);
                $f(R, P, c);
                reg!($f, W, d $(, $m)?);
            }
            Op::Slct { d, a, b, c, .. } => {
                reg!($f, R, a $(, $m)?);
                reg!($f, R, b $(, $m)?);
                reg!($f, R, c $(, $m)?);
                reg!($f, W, d $(, $m)?);
            }
            Op::Testp { p, a, .. } => {
                reg!($f, R, a $(, $m)?);
                $f(W, P, p);
            }
            Op::PredLogic { d, a, b, .. } => fixed!($f, Pred a, Pred b => Pred d),
            Op::Pack { d, parts, n, .. } => {
                let n = (*n as usize).min(4);
                for s in &$($m)? parts[..n] {
                    reg!($f, R, s $(, $m)?);
                }
                reg!($f, W, d $(, $m)?);
            }
            Op::Unpack { ds, a, .. } => {
                reg!($f, R, a $(, $m)?);
                for d in ds {
                    if let Some(d) = d {
                        reg!($f, W, d $(, $m)?);
                    }
                }
            }
            Op::Ld { d, addr: a, .. } => {
                addr_base!($f, a $(, $m)?);
                for d in d {
                    if let Some(d) = d {
                        reg!($f, W, d $(, $m)?);
                    }
                }
            }
            Op::St { s, n, addr: a, .. } => {
                addr_base!($f, a $(, $m)?);
                let n = (*n as usize).min(4);
                for s in &$($m)? s[..n] {
                    reg!($f, R, s $(, $m)?);
                }
            }
            Op::Atom { d, addr: a, b, c, .. } => {
                addr_base!($f, a $(, $m)?);
                reg!($f, R, b $(, $m)?);
                reg!($f, R, c $(, $m)?);
                if let Some(d) = d {
                    reg!($f, W, d $(, $m)?);
                }
            }
            Op::BrxIdx { index, .. } => reg!($f, R, index $(, $m)?),
            Op::Bar { kind, id, count, pred, .. } => {
                reg!($f, R, id $(, $m)?);
                if let Some(c) = count {
                    reg!($f, R, c $(, $m)?);
                }
                if let Some((p, _)) = pred {
                    $f(R, P, p);
                }
                match kind {
                    BarKind::Red(BarRed::Popc { d } | BarRed::And { d } | BarRed::Or { d }) => reg!($f, W, d $(, $m)?),
                    BarKind::Sync | BarKind::Arrive => {}
                }
            }
            Op::BarWarpSync { mask } => reg!($f, R, mask $(, $m)?),
            Op::Shfl(Shfl { d, p, a, b, c, mask, .. }) => {
                for s in [a, b, c, mask] {
                    $f(R, B32, s);
                }
                $f(W, B32, d);
                if let Some(p) = p {
                    $f(W, P, p);
                }
            }
            Op::Vote { d, a, mask, .. } => {
                $f(R, P, a);
                $f(R, B32, mask);
                reg!($f, W, d $(, $m)?);
            }
            Op::Match { d, p, a, mask, .. } => {
                reg!($f, R, a $(, $m)?);
                $f(R, B32, mask);
                $f(W, B32, d);
                if let Some(p) = p {
                    $f(W, P, p);
                }
            }
            Op::Activemask { d } => $f(W, B32, d),
            Op::Redux { d, a, mask, .. } => fixed!($f, R32 a, R32 mask => R32 d),
            Op::ElectSync { d, p, mask } => {
                $f(R, B32, mask);
                if let Some(d) = d {
                    $f(W, B32, d);
                }
                $f(W, P, p);
            }
            Op::Clock { d, .. } => reg!($f, W, d $(, $m)?),
            Op::Mma(mma) => mma_slots!(&$($m)? **mma, $f $(, $m)?),
        }
    }};
}

/// [`op_slots`] for the tensor-core and asynchronous-copy forms.
macro_rules! mma_slots {
    ($op:expr, $f:ident $(, $m:tt)?) => {{
        use RegRole::{Read as R, Write as W};
        match $op {
            MmaOp::Mma(mma) => {
                for r in &$($m)? mma.a {
                    reg!($f, R, r $(, $m)?);
                }
                for r in &$($m)? mma.b {
                    reg!($f, R, r $(, $m)?);
                }
                for r in &$($m)? mma.c {
                    reg!($f, R, r $(, $m)?);
                }
                for r in &$($m)? mma.d {
                    reg!($f, W, r $(, $m)?);
                }
            }
            MmaOp::WmmaLoad { addr: a, stride, d, .. } => {
                addr_base!($f, a $(, $m)?);
                if let Some(s) = stride {
                    reg!($f, R, s $(, $m)?);
                }
                for r in d {
                    reg!($f, W, r $(, $m)?);
                }
            }
            MmaOp::WmmaStore { addr: a, stride, s, .. } => {
                addr_base!($f, a $(, $m)?);
                if let Some(st) = stride {
                    reg!($f, R, st $(, $m)?);
                }
                for r in s {
                    reg!($f, R, r $(, $m)?);
                }
            }
            MmaOp::LdMatrix { addr: a, d, .. } => {
                addr_base!($f, a $(, $m)?);
                for r in d {
                    reg!($f, W, r $(, $m)?);
                }
            }
            MmaOp::StMatrix { addr: a, s, .. } => {
                addr_base!($f, a $(, $m)?);
                for r in s {
                    reg!($f, R, r $(, $m)?);
                }
            }
            MmaOp::MovMatrix { d, a } => {
                reg!($f, R, a $(, $m)?);
                reg!($f, W, d $(, $m)?);
            }
            MmaOp::CpAsync { dst, src, src_size, ignore_src, .. } => {
                addr_base!($f, dst $(, $m)?);
                addr_base!($f, src $(, $m)?);
                if let Some(s) = src_size {
                    reg!($f, R, s $(, $m)?);
                }
                if let Some((p, _)) = ignore_src {
                    $f(R, Bank::Pred, p);
                }
            }
            MmaOp::CpAsyncMbarrierArrive { addr: a, .. } => addr_base!($f, a $(, $m)?),
            MmaOp::Mbarrier { kind, addr: a, .. } => {
                addr_base!($f, a $(, $m)?);
                match kind {
                    MbarKind::Init { count } => reg!($f, R, count $(, $m)?),
                    MbarKind::Arrive { state, count, expect_tx, .. } => {
                        if let Some(c) = count {
                            reg!($f, R, c $(, $m)?);
                        }
                        if let Some(t) = expect_tx {
                            reg!($f, R, t $(, $m)?);
                        }
                        if let Some(s) = state {
                            reg!($f, W, s $(, $m)?);
                        }
                    }
                    MbarKind::ExpectTx { tx } | MbarKind::CompleteTx { tx } => reg!($f, R, tx $(, $m)?),
                    MbarKind::Wait { p, arg, .. } => {
                        reg!($f, R, arg $(, $m)?);
                        $f(W, Bank::Pred, p);
                    }
                    MbarKind::Inval => {}
                }
            }
            MmaOp::MbarPendingCount { d, state } => {
                reg!($f, R, state $(, $m)?);
                reg!($f, W, d $(, $m)?);
            }
            MmaOp::Bulk { dst, src, size, mbar, .. } => {
                addr_base!($f, dst $(, $m)?);
                addr_base!($f, src $(, $m)?);
                reg!($f, R, size $(, $m)?);
                if let Some(mb) = mbar {
                    addr_base!($f, mb $(, $m)?);
                }
            }
            MmaOp::BulkTensor { smem, tmap, coords, mbar, .. } => {
                addr_base!($f, smem $(, $m)?);
                reg!($f, R, tmap $(, $m)?);
                for r in coords {
                    reg!($f, R, r $(, $m)?);
                }
                if let Some(mb) = mbar {
                    addr_base!($f, mb $(, $m)?);
                }
            }
            MmaOp::Wgmma(w) => {
                for r in &$($m)? w.d {
                    reg!($f, R, r $(, $m)?);
                }
                match &$($m)? w.a {
                    WgmmaA::Desc(r) => reg!($f, R, r $(, $m)?),
                    WgmmaA::Regs(rs) => {
                        for r in rs {
                            reg!($f, R, r $(, $m)?);
                        }
                    }
                }
                reg!($f, R, w.b_desc $(, $m)?);
                if let Ok((p, _)) = &$($m)? w.scale_d {
                    $f(R, Bank::Pred, p);
                }
                for r in &$($m)? w.d {
                    reg!($f, W, r $(, $m)?);
                }
            }
            MmaOp::Sync(_) => {}
        }
    }};
}

impl Op {
    /// Calls `f` with the role, bank and slot of every register the op reads
    /// and writes (guard not included: see [`Inst::visit_regs`]). Reads come
    /// first, in operand order, then writes; no allocation.
    pub fn visit_slots(&self, mut f: impl FnMut(RegRole, Bank, &u32)) {
        op_slots!(self, f)
    }

    /// [`Op::visit_slots`] with each slot writable: renaming registers.
    pub fn visit_slots_mut(&mut self, mut f: impl FnMut(RegRole, Bank, &mut u32)) {
        op_slots!(self, f, mut)
    }

    /// [`Op::visit_slots`] as registers.
    pub fn visit_regs(&self, mut f: impl FnMut(RegRole, RegRef)) {
        self.visit_slots(|role, bank, &slot| f(role, RegRef { bank, slot }))
    }

    /// Calls `f` for every register the op reads.
    pub fn for_each_read(&self, mut f: impl FnMut(RegRef)) {
        self.visit_regs(|role, r| {
            if role == RegRole::Read {
                f(r)
            }
        })
    }

    /// Calls `f` for every register the op writes.
    pub fn for_each_write(&self, mut f: impl FnMut(RegRef)) {
        self.visit_regs(|role, r| {
            if role == RegRole::Write {
                f(r)
            }
        })
    }
}

impl Inst {
    /// [`Op::visit_regs`], with the guard predicate read first.
    pub fn visit_regs(&self, mut f: impl FnMut(RegRole, RegRef)) {
        if let Some(g) = self.guard {
            f(RegRole::Read, RegRef::pred(g.pred));
        }
        self.op.visit_regs(f)
    }
}

impl MmaOp {
    /// Registers read and written (reads first), as [`Op::visit_regs`].
    pub fn visit_regs(&self, mut f: impl FnMut(RegRole, RegRef)) {
        let mut g = |role, bank, &slot: &u32| f(role, RegRef { bank, slot });
        mma_slots!(self, g)
    }
}

// ---- latency classes --------------------------------------------------------------

/// The functional unit an instruction issues to.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Unit {
    /// No unit: folded into operands, or handled by the issue logic
    /// (branches, barriers, exits, fences).
    None,
    /// FP32 FMA pipe (also f16/bf16 math).
    Fp32,
    /// Integer and logic ALU.
    Int,
    /// Integer multiply-add (the FMA-heavy pipe).
    Imad,
    Fp64,
    /// Multi-function unit: transcendental approximations.
    Sfu,
    /// Conversions and bit scans.
    Conv,
    Tensor,
    /// Memory input/output: shuffles, special registers, mbarriers.
    Mio,
    /// Load/store and asynchronous copies.
    Lsu,
}

/// What an instruction costs, in machine-neutral terms; the timing decoder
/// maps each class to a pipe, latency and issue slots from the GPU preset.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum LatencyClass {
    /// Folded away by ptxas (packing, truncation, zero-extension, same-width
    /// conversions): no issue slot, results ready with the sources.
    Free,
    /// A register copy: free, unless its source is a per-lane special
    /// register (read with `S2R`).
    Move,
    /// One integer/logic instruction.
    Alu,
    /// Two integer instructions (64-bit add, logic, shift).
    Alu64,
    /// One `IMAD`.
    Imad,
    /// A 64-bit multiply: three `IMAD`s.
    Imad64,
    /// Integer division or remainder: a short `IMAD` sequence.
    IntDiv32,
    IntDiv64,
    /// A conversion or bit scan (`popc`, `clz`, `bfind`, `brev`).
    Conv,
    /// A 64-bit bit scan: two conversion-unit instructions.
    Conv64,
    Fp16,
    Fp32,
    Fp64,
    /// One MUFU instruction.
    Mufu,
    /// MUFU then an FMA (`div.approx`, `sin`, `cos`).
    MufuFma,
    /// IEEE `div` on f32 (and smaller): an FMA sequence around MUFU.RCP.
    FDiv32,
    FDiv64,
    /// `div.full.f32`.
    FDivFull,
    /// IEEE `rcp`/`sqrt` on f32.
    FRcpSqrt32,
    FRcpSqrt64,
    /// `vote`, `activemask`, `elect`.
    Vote,
    /// Shuffle and `redux`: a shared-memory-pipe wavefront.
    Shfl,
    /// `match`.
    Match,
    /// Reading a clock.
    Clock,
    /// A load, store, atomic or asynchronous copy: its path depends on the
    /// space and the addresses, decided at run time.
    Mem,
    /// mbarrier operations other than waits on them: variable latency through MIO.
    Mbarrier,
    Branch,
    Exit,
    Barrier,
    /// Memory fences and waits for asynchronous copies.
    Fence,
    /// A warp-level `mma`: `work` is m * n * k.
    Mma {
        work: u32,
    },
    /// A warpgroup `wgmma` of width `n`.
    Wgmma {
        n: u32,
    },
}

impl LatencyClass {
    /// The functional unit of this class.
    pub fn unit(self) -> Unit {
        use LatencyClass as L;
        match self {
            L::Free | L::Move | L::Branch | L::Exit | L::Barrier | L::Fence | L::Clock => Unit::None,
            L::Alu | L::Alu64 | L::Vote => Unit::Int,
            L::Imad | L::Imad64 | L::IntDiv32 | L::IntDiv64 => Unit::Imad,
            L::Conv | L::Conv64 => Unit::Conv,
            L::Fp16 | L::Fp32 | L::FDiv32 | L::FDivFull | L::FRcpSqrt32 => Unit::Fp32,
            L::Fp64 | L::FDiv64 | L::FRcpSqrt64 => Unit::Fp64,
            L::Mufu | L::MufuFma => Unit::Sfu,
            L::Shfl | L::Match | L::Mbarrier => Unit::Mio,
            L::Mem => Unit::Lsu,
            L::Mma { .. } | L::Wgmma { .. } => Unit::Tensor,
        }
    }
}

fn is_float_ty(t: ScalarType) -> bool {
    matches!(
        t,
        ScalarType::F16 | ScalarType::F16x2 | ScalarType::BF16 | ScalarType::BF16x2 | ScalarType::TF32 | ScalarType::F32 | ScalarType::F64
    )
}

fn is_half_ty(t: ScalarType) -> bool {
    matches!(t, ScalarType::F16 | ScalarType::F16x2 | ScalarType::BF16 | ScalarType::BF16x2)
}

// ---- the facts of each op -----------------------------------------------------------

/// Kinds of warp-collective op.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Collective {
    /// `shfl.sync`: lanes read each other's registers.
    Shuffle,
    /// `vote`, `match`, `activemask`, `redux`, `elect`: lanes combine values.
    Vote,
    /// `bar.warp.sync`: lanes wait for each other.
    WarpSync,
}

/// Where control goes after an op.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Flow<'a> {
    /// To the next instruction.
    Next,
    /// To one of `targets` (or the next instruction when a guard is false),
    /// reconverging at `reconv`.
    Branch { targets: &'a [Pc], reconv: Pc },
    /// Out of the kernel (`exit`, `ret`, `trap`).
    Exit,
}

/// What an instruction does to memory.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum AccessKind {
    Load,
    Store,
    /// Read-modify-write (`atom`, `red`).
    Atomic,
    /// An asynchronous copy (`cp.async`, bulk and tensor copies): its
    /// writes land when the copy completes, not in issue order.
    AsyncCopy,
    /// An operation on an mbarrier object in shared memory.
    Mbarrier,
}

/// A memory access of one instruction.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct MemAccess {
    pub kind: AccessKind,
    /// The space named by the instruction (the destination space of copies).
    pub space: Space,
    /// Bytes each lane accesses, all vector elements together, for the
    /// per-lane forms (`ld`, `st`, `atom`); 0 for fragment, matrix, bulk and
    /// mbarrier forms, whose addresses the engine works out itself.
    pub lane_bytes: u32,
}

/// Everything the table says about one op (registers aside: see
/// [`Op::visit_regs`]). [`Op::facts`] is the one exhaustive match that
/// decides them; the other methods read one field.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct OpFacts<'a> {
    pub latency: LatencyClass,
    pub mem: Option<MemAccess>,
    /// The address of the per-lane forms (`ld`, `st`, `atom`), whose lanes
    /// each compute `base + offset`.
    pub lane_address: Option<(Space, &'a Addr)>,
    pub flow: Flow<'a>,
    pub collective: Option<Collective>,
    /// ptxas may issue this integer op as an `IMAD` (`IMAD.IADD`,
    /// `IMAD.SHL`, `IMAD.MOV`) on the FMA pipe when the ALU is busy.
    pub imad_alternative: bool,
    /// The result can be a uniform value when the sources are (the uniform
    /// datapath has integer, logic and move instructions, and constant-bank
    /// loads).
    pub uniform_capable: bool,
}

impl<'a> OpFacts<'a> {
    /// An op of class `latency` and nothing else of note.
    const fn of(latency: LatencyClass) -> OpFacts<'a> {
        OpFacts {
            latency,
            mem: None,
            lane_address: None,
            flow: Flow::Next,
            collective: None,
            imad_alternative: false,
            uniform_capable: false,
        }
    }

    /// An integer, logic or move op (uniform-capable).
    const fn int(latency: LatencyClass) -> OpFacts<'a> {
        OpFacts { uniform_capable: true, ..OpFacts::of(latency) }
    }

    const fn collective(latency: LatencyClass, c: Collective) -> OpFacts<'a> {
        OpFacts { collective: Some(c), ..OpFacts::of(latency) }
    }

    /// A per-lane memory op.
    fn lane_mem(kind: AccessKind, space: Space, lane_bytes: u32, addr: &'a Addr) -> OpFacts<'a> {
        OpFacts {
            mem: Some(MemAccess { kind, space, lane_bytes }),
            lane_address: Some((space, addr)),
            uniform_capable: kind == AccessKind::Load && matches!(space, Space::KernelParam | Space::Const),
            ..OpFacts::of(LatencyClass::Mem)
        }
    }
}

fn is_int_ty(t: ScalarType) -> bool {
    !t.is_float()
}

impl Op {
    /// The table's row for this op.
    pub fn facts(&self) -> OpFacts<'_> {
        use LatencyClass as L;
        let of = OpFacts::of;
        let int = OpFacts::int;
        match self {
            Op::Nop | Op::Fence => of(if matches!(self, Op::Fence) { L::Fence } else { L::Free }),
            Op::Mov { .. } => OpFacts { imad_alternative: true, ..int(L::Move) },
            Op::Bin32 { f, .. } => match f {
                Bin32::AddF | Bin32::SubF | Bin32::MulF => of(L::Fp32),
                Bin32::MinF | Bin32::MaxF => of(L::Alu),
                Bin32::MulLo => int(L::Imad),
                Bin32::Add | Bin32::Sub | Bin32::Shl => OpFacts { imad_alternative: true, ..int(L::Alu) },
                Bin32::And | Bin32::Or | Bin32::Xor | Bin32::ShrU | Bin32::ShrS | Bin32::MinS | Bin32::MinU | Bin32::MaxS | Bin32::MaxU => {
                    int(L::Alu)
                }
            },
            Op::Bin64 { f, .. } => match f {
                Bin64::AddF | Bin64::SubF | Bin64::MulF => of(L::Fp64),
                Bin64::MulLo => int(L::Imad64),
                Bin64::Add | Bin64::Sub | Bin64::And | Bin64::Or | Bin64::Xor => int(L::Alu64),
            },
            Op::Tern32 { f, .. } => match f {
                Tern32::FmaF => of(L::Fp32),
                Tern32::MadLo => int(L::Imad),
            },
            Op::FmaF64 { .. } => of(L::Fp64),
            Op::Shift64 { .. } => int(L::Alu64),
            Op::MulWide32 { .. } => int(L::Imad),
            Op::Extend32To64 { signed, .. } => int(if *signed { L::Alu } else { L::Free }),
            Op::Trunc64To32 { .. } => int(L::Free),
            Op::Int { op, ty, .. } => OpFacts {
                imad_alternative: matches!(op, IntOp::Add | IntOp::Sub | IntOp::Shl) && ty.bits() <= 32,
                uniform_capable: is_int_ty(*ty),
                ..of(int_class(*op, ty.bits() > 32))
            },
            Op::IntCarry { kind, ty, .. } => OpFacts {
                uniform_capable: is_int_ty(*ty),
                ..of(match kind {
                    CarryKind::MadLo | CarryKind::MadHi => L::Imad,
                    CarryKind::Add | CarryKind::Sub => L::Alu,
                })
            },
            Op::Float { op, ty, .. } => of(float_class(*op, *ty)),
            Op::Setp(Setp { ty, .. }) => {
                OpFacts { uniform_capable: is_int_ty(*ty), ..of(if *ty == ScalarType::F64 { L::Fp64 } else { L::Alu }) }
            }
            Op::Set(Set { ty, dty, .. }) => {
                OpFacts { uniform_capable: is_int_ty(*ty) && is_int_ty(*dty), ..of(if *ty == ScalarType::F64 { L::Fp64 } else { L::Alu }) }
            }
            Op::Selp { .. } | Op::PredLogic { .. } => int(L::Alu),
            Op::Slct { cty, .. } => OpFacts { uniform_capable: is_int_ty(*cty), ..of(L::Alu) },
            // F2FP on sm_89+, as the f16x2 pack.
            Op::Testp { .. } | Op::CvtPack { .. } | Op::CvtToF8x2 { .. } | Op::CvtF8x2ToF16x2 { .. } => of(L::Alu),
            Op::Cvt { dty, sty, .. } => OpFacts { uniform_capable: is_int_ty(*dty) && is_int_ty(*sty), ..of(cvt_class(*dty, *sty)) },
            Op::Pack { .. } | Op::Unpack { .. } => int(L::Free),
            Op::Cvta { window, .. } => int(if *window == 0 { L::Free } else { L::Alu }),
            Op::Ld { space, size, n, addr, .. } => OpFacts::lane_mem(AccessKind::Load, *space, *size as u32 * *n as u32, addr),
            Op::St { space, size, n, addr, .. } => OpFacts::lane_mem(AccessKind::Store, *space, *size as u32 * *n as u32, addr),
            Op::Atom { space, ty, addr, .. } => OpFacts::lane_mem(AccessKind::Atomic, *space, ty.bits().max(8) / 8, addr),
            Op::Bra { target, reconv } => {
                OpFacts { flow: Flow::Branch { targets: std::slice::from_ref(target), reconv: *reconv }, ..of(L::Branch) }
            }
            Op::BrxIdx { targets, reconv, .. } => OpFacts { flow: Flow::Branch { targets, reconv: *reconv }, ..of(L::Branch) },
            Op::Exit | Op::Trap | Op::AssertFail { .. } => OpFacts { flow: Flow::Exit, ..of(L::Exit) },
            // `CALL` and `RET` issue as branches. A call comes back to the
            // next instruction; a return leaves its function (in the
            // post-dominator tree, its function's exit).
            Op::Call(_) => of(L::Branch),
            Op::Ret => OpFacts { flow: Flow::Exit, ..of(L::Branch) },
            // A system call on the GPU; its cost is not modelled.
            Op::Printf { .. } => of(L::Alu),
            Op::Bar { .. } => of(L::Barrier),
            Op::BarWarpSync { .. } => OpFacts::collective(L::Alu, Collective::WarpSync),
            Op::Shfl(_) => OpFacts::collective(L::Shfl, Collective::Shuffle),
            Op::Redux { .. } => OpFacts::collective(L::Shfl, Collective::Vote),
            Op::Match { .. } => OpFacts::collective(L::Match, Collective::Vote),
            Op::Vote { .. } | Op::Activemask { .. } | Op::ElectSync { .. } => OpFacts::collective(L::Vote, Collective::Vote),
            Op::Clock { .. } => of(L::Clock),
            Op::Mma(m) => m.facts(),
        }
    }

    /// The op's latency class (see [`LatencyClass`]).
    pub fn latency_class(&self) -> LatencyClass {
        self.facts().latency
    }

    /// The memory the op touches, if any.
    pub fn mem_access(&self) -> Option<MemAccess> {
        self.facts().mem
    }

    /// See [`OpFacts::lane_address`].
    pub fn lane_address(&self) -> Option<(Space, &Addr)> {
        self.facts().lane_address
    }

    /// The op's control flow.
    pub fn flow(&self) -> Flow<'_> {
        self.facts().flow
    }

    /// Which warp-collective op this is, if it is one.
    pub fn collective(&self) -> Option<Collective> {
        self.facts().collective
    }

    /// Whether the lanes of a warp exchange values or synchronise in this
    /// op (`shfl`, `vote`, `match`, `activemask`, `redux`, `elect`,
    /// `bar.warp.sync`): the engine must run the warp's lanes to it together.
    /// Tensor-core ops are warp-wide too but are told apart by [`Op::Mma`].
    pub fn is_warp_collective(&self) -> bool {
        self.facts().collective.is_some()
    }

    /// Whether a lane may read another lane's registers in this op: warp
    /// collectives (a `shfl` source, the member masks the checker is told),
    /// tensor-core ops (fragments) and calls (a frame per call).
    pub fn reads_other_lanes(&self) -> bool {
        self.is_warp_collective() || matches!(self, Op::Mma(_) | Op::Call(_))
    }

    /// See [`OpFacts::imad_alternative`].
    pub fn imad_alternative(&self) -> bool {
        self.facts().imad_alternative
    }

    /// See [`OpFacts::uniform_capable`].
    pub fn uniform_capable(&self) -> bool {
        self.facts().uniform_capable
    }

    /// Whether running the op reads or writes nothing outside its block
    /// (its warps, barriers, shared and local memory, call stacks) but
    /// memory no kernel writes (kernel parameters, constants): no global or
    /// generic access, no asynchronous copy, no device `printf` or assertion
    /// (the launch's output). Blocks on different SMs whose ops all stay in
    /// their blocks can run in any order, or at once.
    pub fn stays_in_block(&self) -> bool {
        let f = self.facts();
        let touches_memory = f.mem.is_some_and(|m| {
            !matches!(m.kind, AccessKind::Load | AccessKind::Store | AccessKind::Atomic | AccessKind::Mbarrier)
                || !matches!(m.space, Space::Shared | Space::Local | Space::KernelParam | Space::Const)
        });
        let writes_output = matches!(self, Op::Printf { .. } | Op::AssertFail { .. });
        !(touches_memory || writes_output)
    }
}

/// Integer ops of [`Op::Int`] (`wide`: more than 32 bits).
fn int_class(op: IntOp, wide: bool) -> LatencyClass {
    use LatencyClass as L;
    let pick = |narrow, w| if wide { w } else { narrow };
    match op {
        IntOp::Div | IntOp::Rem => pick(L::IntDiv32, L::IntDiv64),
        IntOp::MulLo
        | IntOp::MulHi
        | IntOp::MulWide
        | IntOp::MadLo
        | IntOp::MadHi
        | IntOp::MadHiSat
        | IntOp::MadWide
        | IntOp::Mul24Lo
        | IntOp::Mul24Hi
        | IntOp::Mad24Lo
        | IntOp::Mad24Hi
        | IntOp::Mad24HiSat
        | IntOp::Sad
        | IntOp::Dp4a { .. }
        | IntOp::Dp2a { .. } => pick(L::Imad, L::Imad64),
        IntOp::Popc | IntOp::Clz | IntOp::Bfind | IntOp::BfindShiftAmt | IntOp::Brev => pick(L::Conv, L::Conv64),
        IntOp::Add
        | IntOp::Sub
        | IntOp::AddSat
        | IntOp::SubSat
        | IntOp::Abs
        | IntOp::Neg
        | IntOp::Min
        | IntOp::Max
        | IntOp::MinRelu
        | IntOp::MaxRelu
        | IntOp::MinMax16x2 { .. }
        | IntOp::Bfe
        | IntOp::Bfi
        | IntOp::Bmsk { .. }
        | IntOp::Szext { .. }
        | IntOp::Fns
        | IntOp::CvtPack { .. }
        | IntOp::Prmt(_)
        | IntOp::Shl
        | IntOp::Shr
        | IntOp::ShfL { .. }
        | IntOp::ShfR { .. }
        | IntOp::And
        | IntOp::Or
        | IntOp::Xor
        | IntOp::Not
        | IntOp::Cnot
        | IntOp::Lop3(_) => pick(L::Alu, L::Alu64),
    }
}

/// Floating-point ops of [`Op::Float`].
fn float_class(op: FloatOp, ty: ScalarType) -> LatencyClass {
    use LatencyClass as L;
    let f64t = ty == ScalarType::F64;
    let pick = |narrow, w| if f64t { w } else { narrow };
    match op {
        FloatOp::Add | FloatOp::Sub | FloatOp::Mul | FloatOp::Fma | FloatOp::FmaRelu => {
            pick(if is_half_ty(ty) { L::Fp16 } else { L::Fp32 }, L::Fp64)
        }
        FloatOp::Abs
        | FloatOp::Neg
        | FloatOp::Min
        | FloatOp::Max
        | FloatOp::MinNan
        | FloatOp::MaxNan
        | FloatOp::MinXorsignAbs
        | FloatOp::MaxXorsignAbs
        | FloatOp::MinNanXorsignAbs
        | FloatOp::MaxNanXorsignAbs
        | FloatOp::Copysign => pick(L::Alu, L::Fp64),
        FloatOp::Div => pick(L::FDiv32, L::FDiv64),
        FloatOp::DivFull => L::FDivFull,
        FloatOp::DivApprox | FloatOp::SinApprox | FloatOp::CosApprox => L::MufuFma,
        FloatOp::Rcp | FloatOp::Sqrt => pick(L::FRcpSqrt32, L::FRcpSqrt64),
        FloatOp::RcpApprox | FloatOp::SqrtApprox | FloatOp::RsqrtApprox | FloatOp::Lg2Approx | FloatOp::Ex2Approx | FloatOp::TanhApprox => {
            L::Mufu
        }
    }
}

/// `cvt.dty.sty`: f16/bf16 <-> f32 on the ALU, other float conversions on
/// the conversion unit, same-width integer ones folded away.
fn cvt_class(dty: ScalarType, sty: ScalarType) -> LatencyClass {
    use LatencyClass as L;
    if is_float_ty(dty) || is_float_ty(sty) {
        if (is_half_ty(dty) && sty == ScalarType::F32) || (is_half_ty(sty) && dty == ScalarType::F32) {
            L::Alu
        } else {
            L::Conv
        }
    } else if dty.bits() == sty.bits() {
        L::Free
    } else {
        L::Alu
    }
}

impl MmaOp {
    /// The form's row of the table (see [`Op::facts`]).
    pub fn facts(&self) -> OpFacts<'_> {
        use LatencyClass as L;
        let mem = |kind, space| OpFacts { mem: Some(MemAccess { kind, space, lane_bytes: 0 }), ..OpFacts::of(L::Mem) };
        match self {
            MmaOp::Mma(x) => OpFacts::of(L::Mma { work: x.shape.m * x.shape.n * x.shape.k }),
            MmaOp::Wgmma(w) => OpFacts::of(L::Wgmma { n: w.shape.n }),
            MmaOp::WmmaLoad { space, .. } | MmaOp::LdMatrix { space, .. } => mem(AccessKind::Load, *space),
            MmaOp::WmmaStore { space, .. } | MmaOp::StMatrix { space, .. } => mem(AccessKind::Store, *space),
            MmaOp::CpAsync { dst_space, .. } => mem(AccessKind::AsyncCopy, *dst_space),
            MmaOp::Bulk { dir, .. } => mem(
                AccessKind::AsyncCopy,
                match dir {
                    BulkDir::SharedToGlobal => Space::Global,
                    BulkDir::GlobalToShared | BulkDir::SharedToShared => Space::Shared,
                },
            ),
            MmaOp::BulkTensor { load, .. } => mem(AccessKind::AsyncCopy, if *load { Space::Shared } else { Space::Global }),
            MmaOp::MovMatrix { .. } => OpFacts::of(L::Alu),
            MmaOp::Sync(s) => OpFacts::of(match s {
                SyncKind::CpAsyncWait | SyncKind::BulkWait => L::Fence,
                SyncKind::CpAsyncCommit
                | SyncKind::BulkCommit
                | SyncKind::WgmmaFence
                | SyncKind::WgmmaCommit
                | SyncKind::WgmmaWait
                | SyncKind::SetMaxNReg
                | SyncKind::Prefetch => L::Alu,
            }),
            MmaOp::CpAsyncMbarrierArrive { space, .. } | MmaOp::Mbarrier { space, .. } => {
                OpFacts { mem: Some(MemAccess { kind: AccessKind::Mbarrier, space: *space, lane_bytes: 0 }), ..OpFacts::of(L::Mbarrier) }
            }
            MmaOp::MbarPendingCount { .. } => OpFacts::of(L::Mbarrier),
        }
    }
}

// ---- modifiers kept from the source -----------------------------------------------

/// Memory-ordering semantics (`.relaxed`, `.acquire`, ...; `.volatile` and
/// `.weak` too, which PTX spells in the same place).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum MemOrder {
    /// None written (the instruction's default).
    #[default]
    Default,
    Weak,
    Volatile,
    Relaxed,
    Acquire,
    Release,
    AcqRel,
    /// `fence.sc`.
    Sc,
}

/// `.cta`, `.cluster`, `.gpu`, `.sys`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum MemScope {
    Cta,
    Cluster,
    Gpu,
    Sys,
}

/// Cache operators of `ld`/`st` (`.nc` of `ld.global.nc` included).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum CacheOp {
    Ca,
    Cg,
    Cs,
    Lu,
    Cv,
    Wb,
    Wt,
    /// `ld.global.nc`: the non-coherent (texture) path.
    Nc,
}

impl CacheOp {
    /// Whether loads with this operator skip L1 (`.cg`, `.cs`, `.lu`, `.cv`).
    pub fn bypasses_l1(self) -> bool {
        matches!(self, CacheOp::Cg | CacheOp::Cs | CacheOp::Lu | CacheOp::Cv)
    }
}

/// What kind of fence an [`Op::Fence`] is.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum FenceKind {
    /// `membar.*` / `fence.{sc,acq_rel}.*`: orders memory accesses.
    Memory,
    /// `fence.proxy.*`: orders between memory proxies only.
    Proxy,
    /// `fence.mbarrier_init.*`.
    MbarrierInit,
    /// No ordering: `prefetch`, `nanosleep`, `pmevent`, `discard`, `applypriority`.
    NoOrdering,
}

/// Modifiers of one instruction that lowering keeps beside its [`Op`].
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct InstMeta {
    pub ordering: MemOrder,
    pub scope: Option<MemScope>,
    pub cache: Option<CacheOp>,
    /// The fence kind of [`Op::Fence`] (`None` for other ops).
    pub fence: Option<FenceKind>,
    /// A `.sync` form (with a member mask).
    pub sync: bool,
    /// A `.pragma "nounroll"` stands between the previous instruction and
    /// this one (the loop whose body holds it is not unrolled).
    pub nounroll: bool,
}

impl InstMeta {
    /// The modifiers of `opcode` (the head, then its dotted modifiers).
    pub fn from_opcode(opcode: &str) -> InstMeta {
        let mut parts = opcode.split('.');
        let head = parts.next().unwrap_or("");
        let mut m = InstMeta::default();
        let mut proxy = false;
        let mut mbarrier_init = false;
        for p in parts {
            match p {
                "weak" => m.ordering = MemOrder::Weak,
                "volatile" => m.ordering = MemOrder::Volatile,
                "relaxed" => m.ordering = MemOrder::Relaxed,
                "acquire" => m.ordering = MemOrder::Acquire,
                "release" => m.ordering = MemOrder::Release,
                "acq_rel" => m.ordering = MemOrder::AcqRel,
                "sc" => m.ordering = MemOrder::Sc,
                "cta" => m.scope = Some(MemScope::Cta),
                "cluster" => m.scope = Some(MemScope::Cluster),
                "gpu" => m.scope = Some(MemScope::Gpu),
                "sys" => m.scope = Some(MemScope::Sys),
                "ca" => m.cache = Some(CacheOp::Ca),
                "cg" => m.cache = Some(CacheOp::Cg),
                "cs" => m.cache = Some(CacheOp::Cs),
                "lu" => m.cache = Some(CacheOp::Lu),
                "cv" => m.cache = Some(CacheOp::Cv),
                "wb" => m.cache = Some(CacheOp::Wb),
                "wt" => m.cache = Some(CacheOp::Wt),
                "nc" => m.cache = Some(CacheOp::Nc),
                "sync" => m.sync = true,
                "proxy" => proxy = true,
                "mbarrier_init" => mbarrier_init = true,
                _ => {}
            }
        }
        m.fence = match head {
            "membar" | "fence" if mbarrier_init => Some(FenceKind::MbarrierInit),
            "membar" | "fence" if proxy => Some(FenceKind::Proxy),
            "membar" | "fence" => Some(FenceKind::Memory),
            _ => None,
        };
        m
    }
}

#[cfg(test)]
mod tests;
