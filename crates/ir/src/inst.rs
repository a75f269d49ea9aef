//! The decoded instruction set the engine executes. Lowering turns each PTX
//! instruction into one of these: operands are register slots in one of
//! three banks (32-bit, 64-bit, predicate), immediates live in constant
//! registers, labels are resolved to program counters, and every divergent
//! branch carries its reconvergence point. The executor never sees text.

use crate::op_table::InstMeta;
use warpsim_numerics::float::{FloatOp, TestpClass};
use warpsim_numerics::fp8::F8;
use warpsim_numerics::int::IntOp;
use warpsim_numerics::{BoolOp, CmpOp, FMode, ScalarType};

/// Register banks: values of 1..32 bits live in `R32`, 64-bit ones in `R64`,
/// predicates as one bit per lane in `Pred`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Bank {
    R32,
    R64,
    Pred,
}

/// A register: bank and slot.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct RegRef {
    pub bank: Bank,
    pub slot: u32,
}

impl RegRef {
    pub const fn r32(slot: u32) -> Self {
        RegRef { bank: Bank::R32, slot }
    }
    pub const fn r64(slot: u32) -> Self {
        RegRef { bank: Bank::R64, slot }
    }
    pub const fn pred(slot: u32) -> Self {
        RegRef { bank: Bank::Pred, slot }
    }
}

/// Program counter: an index into [`Kernel::code`](crate::Kernel::code).
pub type Pc = u32;

/// Where a memory instruction's address points.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Space {
    Global,
    Shared,
    Local,
    /// The kernel's parameter buffer (read-only).
    KernelParam,
    Const,
    /// Generic addressing: global, or the shared/local windows.
    Generic,
}

/// `base register + offset`, or an absolute `offset` when `base` is `None`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Addr {
    pub base: Option<RegRef>,
    pub offset: i64,
}

/// `@p` / `@!p`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Guard {
    pub pred: u32,
    pub negate: bool,
}

/// `setp.cmp[.bool].ty p[|q], a, b[, c]`: `combine` is the `.bool` op with
/// `c` (and whether `c` is negated).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Setp {
    pub cmp: CmpOp,
    pub ty: ScalarType,
    pub ftz: bool,
    pub p: u32,
    pub q: Option<u32>,
    pub a: RegRef,
    pub b: RegRef,
    pub combine: Option<(BoolOp, u32, bool)>,
}

/// `set.cmp[.bool].dtype.stype d, a, b[, c]`: all ones (or 1.0f when `dty`
/// is `f32`) where the comparison, combined as for [`Setp`], holds.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Set {
    pub cmp: CmpOp,
    pub ty: ScalarType,
    pub dty: ScalarType,
    pub ftz: bool,
    pub d: RegRef,
    pub a: RegRef,
    pub b: RegRef,
    pub combine: Option<(BoolOp, u32, bool)>,
}

/// `shfl.sync.mode.b32 d[|p], a, b, c, membermask` (32-bit register slots).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Shfl {
    pub mode: ShflMode,
    pub d: u32,
    pub p: Option<u32>,
    pub a: u32,
    pub b: u32,
    pub c: u32,
    pub mask: u32,
}

/// Fast 32-bit binary operations (full-width, no modifiers).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Bin32 {
    Add,
    Sub,
    MulLo,
    And,
    Or,
    Xor,
    Shl,
    ShrU,
    ShrS,
    MinS,
    MinU,
    MaxS,
    MaxU,
    AddF,
    SubF,
    MulF,
    MinF,
    MaxF,
}

/// Fast 64-bit binary operations on two 64-bit registers.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Bin64 {
    Add,
    Sub,
    MulLo,
    And,
    Or,
    Xor,
    AddF,
    SubF,
    MulF,
}

/// Fast three-operand operations.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Tern32 {
    /// `mad.lo` on 32 bits.
    MadLo,
    /// `fma.rn.f32` / `mad.rn.f32`.
    FmaF,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ShflMode {
    Up,
    Down,
    Bfly,
    Idx,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum VoteMode {
    All,
    Any,
    Uni,
    Ballot,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ReduxOp {
    Add,
    Min,
    Max,
    And,
    Or,
    Xor,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum AtomOp {
    Add,
    Min,
    Max,
    Inc,
    Dec,
    And,
    Or,
    Xor,
    Exch,
    Cas,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum BarKind {
    /// `bar.sync` / `barrier.sync`: arrive and wait.
    Sync,
    /// `bar.arrive`: arrive without waiting.
    Arrive,
    /// `bar.red.popc|and|or`: arrive, wait, and reduce a predicate.
    Red(BarRed),
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum BarRed {
    Popc { d: RegRef },
    And { d: RegRef },
    Or { d: RegRef },
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ClockKind {
    Clock32,
    Clock64,
    GlobalTimer,
    GlobalTimerLo,
    GlobalTimerHi,
}

/// One decoded instruction. Unused source slots point at a zero register.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    Nop,
    Mov {
        d: RegRef,
        a: RegRef,
    },
    Bin32 {
        f: Bin32,
        d: u32,
        a: u32,
        b: u32,
    },
    Bin64 {
        f: Bin64,
        d: u32,
        a: u32,
        b: u32,
    },
    Tern32 {
        f: Tern32,
        d: u32,
        a: u32,
        b: u32,
        c: u32,
    },
    /// `fma.rn.f64`.
    FmaF64 {
        d: u32,
        a: u32,
        b: u32,
        c: u32,
    },
    /// 64-bit shifts: value in a 64-bit register, count in a 32-bit one.
    Shift64 {
        left: bool,
        signed: bool,
        d: u32,
        a: u32,
        b: u32,
    },
    /// `mul.wide.s32|u32`.
    MulWide32 {
        signed: bool,
        d: u32,
        a: u32,
        b: u32,
    },
    /// `cvt.s64.s32` / `cvt.u64.u32` (and the same-width moves between banks).
    Extend32To64 {
        signed: bool,
        d: u32,
        a: u32,
    },
    /// `cvt.u32.u64` and other truncations.
    Trunc64To32 {
        d: u32,
        a: u32,
    },
    /// Any integer operation, lane by lane through `warpsim-numerics`.
    Int {
        op: IntOp,
        ty: ScalarType,
        d: RegRef,
        s: [RegRef; 4],
    },
    /// `add.cc`, `addc`, `sub.cc`, `subc`, `mad.cc`, `madc`: carry in and out through `cc`.
    IntCarry {
        kind: CarryKind,
        ty: ScalarType,
        d: RegRef,
        s: [RegRef; 3],
        cc: u32,
        carry_in: bool,
        carry_out: bool,
    },
    Float {
        op: FloatOp,
        ty: ScalarType,
        mode: FMode,
        d: RegRef,
        s: [RegRef; 3],
    },
    Setp(Setp),
    Set(Set),
    /// `selp d, a, b, c`: a where c, else b.
    Selp {
        d: RegRef,
        a: RegRef,
        b: RegRef,
        c: u32,
        negate: bool,
    },
    /// `slct.dtype.s32|f32 d, a, b, c`: a when c >= 0, else b.
    Slct {
        cty: ScalarType,
        ftz: bool,
        d: RegRef,
        a: RegRef,
        b: RegRef,
        c: RegRef,
    },
    Testp {
        class: TestpClass,
        ty: ScalarType,
        p: u32,
        a: RegRef,
    },
    /// Predicate logic: `and/or/xor/not/mov.pred`.
    PredLogic {
        op: PredOp,
        d: u32,
        a: u32,
        b: u32,
    },
    /// `cvt{.rnd}{.ftz}{.sat}{.relu}{.satfinite}.dty.sty d, a`.
    Cvt {
        dty: ScalarType,
        sty: ScalarType,
        mode: FMode,
        relu: bool,
        satfinite: bool,
        d: RegRef,
        a: RegRef,
    },
    /// `cvt.rn{.relu}{.satfinite}.f16x2.f32 d, a, b` and the bf16x2 form.
    CvtPack {
        dty: ScalarType,
        mode: FMode,
        relu: bool,
        satfinite: bool,
        d: u32,
        a: u32,
        b: u32,
    },
    /// `cvt.rn.satfinite{.relu}.e4m3x2|e5m2x2.f32 d, a, b` (a in the upper
    /// byte of the 16-bit `d`); `from_f16x2`: the `.f16x2 d, a` form (`b == a`).
    CvtToF8x2 {
        fmt: F8,
        relu: bool,
        from_f16x2: bool,
        d: u32,
        a: u32,
        b: u32,
    },
    /// `cvt.rn{.relu}.f16x2.e4m3x2|e5m2x2 d, a`.
    CvtF8x2ToF16x2 {
        fmt: F8,
        relu: bool,
        d: u32,
        a: u32,
    },
    /// `mov.bN d, {a, b, ...}`: packs `n` elements of `elem_bits` each.
    Pack {
        d: RegRef,
        parts: [RegRef; 4],
        n: u8,
        elem_bits: u8,
    },
    /// `mov.bN {a, b, ...}, s`: unpacks.
    Unpack {
        ds: [Option<RegRef>; 4],
        a: RegRef,
        n: u8,
        elem_bits: u8,
    },
    /// `cvta`: adds (`to_generic`) or subtracts a window base.
    Cvta {
        to_generic: bool,
        window: u64,
        d: RegRef,
        a: RegRef,
    },
    Ld {
        space: Space,
        size: u8,
        signed: bool,
        n: u8,
        d: [Option<RegRef>; 4],
        addr: Addr,
    },
    St {
        space: Space,
        size: u8,
        n: u8,
        s: [RegRef; 4],
        addr: Addr,
    },
    Atom {
        space: Space,
        op: AtomOp,
        ty: ScalarType,
        d: Option<RegRef>,
        addr: Addr,
        b: RegRef,
        c: RegRef,
    },
    Bra {
        target: Pc,
        reconv: Pc,
    },
    BrxIdx {
        index: RegRef,
        targets: Box<[Pc]>,
        reconv: Pc,
    },
    Exit,
    Trap,
    /// A call of a function lowered as code of its own (recursive, called
    /// through a pointer, or too large to inline): see [`CallSite`].
    Call(Box<CallSite>),
    /// The end of such a function's code: its lanes return to their call site.
    Ret,
    /// `call __assertfail, (message, file, line, function, charSize)`: the
    /// local offsets of the first four `.param` arguments.
    AssertFail {
        params: [u32; 4],
    },
    /// `call (r), vprintf, (format, args)`: local offsets of the two arguments.
    Printf {
        format: u32,
        args: u32,
        /// The 32-bit register that gets `vprintf`'s return value (the number
        /// of arguments the format consumed), when the call takes it.
        d: Option<u32>,
    },
    Bar {
        kind: BarKind,
        id: RegRef,
        count: Option<RegRef>,
        aligned: bool,
        pred: Option<(u32, bool)>,
    },
    BarWarpSync {
        mask: RegRef,
    },
    Shfl(Shfl),
    Vote {
        mode: VoteMode,
        d: RegRef,
        a: u32,
        negate: bool,
        mask: u32,
    },
    Match {
        all: bool,
        ty: ScalarType,
        d: u32,
        p: Option<u32>,
        a: RegRef,
        mask: u32,
    },
    Activemask {
        d: u32,
    },
    Redux {
        op: ReduxOp,
        ty: ScalarType,
        d: u32,
        a: u32,
        mask: u32,
    },
    ElectSync {
        d: Option<u32>,
        p: u32,
        mask: u32,
    },
    Clock {
        kind: ClockKind,
        d: RegRef,
    },
    /// Fences, prefetches, nanosleep: no functional effect.
    Fence,
    /// Tensor-core, matrix-movement, asynchronous-copy and mbarrier
    /// instructions (`crate::mma`; lowered in `lower_mma.rs`).
    Mma(Box<crate::mma::MmaOp>),
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum CarryKind {
    Add,
    Sub,
    MadLo,
    MadHi,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum PredOp {
    And,
    Or,
    Xor,
    Not,
    Mov,
    AndNot,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Inst {
    pub op: Op,
    pub guard: Option<Guard>,
    /// Modifiers that do not change what the op computes (ordering, scope,
    /// cache operator, pragmas): see [`crate::op_table`].
    pub meta: InstMeta,
}

impl Inst {
    /// An instruction without modifiers.
    pub fn new(op: Op, guard: Option<Guard>) -> Inst {
        Inst { op, guard, meta: InstMeta::default() }
    }
}

impl Op {
    /// Whether this instruction can change control flow.
    pub fn is_branch(&self) -> bool {
        matches!(self, Op::Bra { .. } | Op::BrxIdx { .. } | Op::Exit | Op::Trap | Op::AssertFail { .. } | Op::Call(_) | Op::Ret)
    }
}

/// Where one argument or result of a real call lives, on one side of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CallSlot {
    /// `.param` bytes at `off` in the side's frame (the callee's `size` is what moves).
    Frame { off: u32, size: u32 },
    /// A register (a `.reg` parameter, or a register passed as an argument).
    Reg(RegRef),
}

/// Whom a call calls.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CallTarget {
    /// The function at this index of [`Kernel::functions`](crate::Kernel::functions).
    Direct(u32),
    /// The function whose address each lane holds in this 64-bit register.
    Indirect(RegRef),
}

/// One `call` of a function that has code of its own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallSite {
    pub target: CallTarget,
    /// Bytes of the calling function's frame (the callee's frame starts past them).
    pub caller_frame: u32,
    /// The caller's arguments and result slots, in declaration order.
    pub args: Vec<CallSlot>,
    pub rets: Vec<CallSlot>,
}
