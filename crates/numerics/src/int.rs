//! Integer and bitwise instructions (add .. dp2a), per the PTX ISA's
//! "Integer Arithmetic" and "Logic and Shift" sections.

use crate::types::ScalarType;

/// `prmt` selector modes (`.f4e .b4e .rc8 .ecl .ecr .rc16`, or the default).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum PrmtMode {
    Default,
    F4e,
    B4e,
    Rc8,
    Ecl,
    Ecr,
    Rc16,
}

/// One integer operation; the operand type comes separately as a [`ScalarType`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum IntOp {
    Add,
    Sub,
    /// `add.sat.s32`: clamps to the s32 range.
    AddSat,
    SubSat,
    MulLo,
    MulHi,
    /// `mul.wide`: the full product, twice the operand width.
    MulWide,
    MadLo,
    MadHi,
    /// `mad.hi.sat.s32`.
    MadHiSat,
    MadWide,
    Mul24Lo,
    Mul24Hi,
    Mad24Lo,
    Mad24Hi,
    Sad,
    Div,
    Rem,
    Abs,
    Neg,
    Min,
    Max,
    Popc,
    Clz,
    Bfind,
    /// `bfind.shiftamt`.
    BfindShiftAmt,
    Brev,
    Bfe,
    Bfi,
    Prmt(PrmtMode),
    Shl,
    Shr,
    /// `shf.l` / `shf.r` (`.wrap` when `wrap`, else `.clamp`); operands a, b, c = lo, hi, shift.
    ShfL { wrap: bool },
    ShfR { wrap: bool },
    And,
    Or,
    Xor,
    Not,
    Cnot,
    Lop3(u8),
    /// `dp4a.atype.btype`: `ty` is atype; `b_signed` gives btype.
    Dp4a { b_signed: bool },
    /// `dp2a.lo|hi.atype.btype`.
    Dp2a { hi: bool, b_signed: bool },
}

/// Evaluates `op` for operand type `ty` on sources `s` (unused ones ignored).
///
/// Results are the destination's bit pattern in the low bits: signed results
/// sign-extended to 64 bits, unsigned ones zero-extended; `MulWide`/`MadWide`
/// return the double-width value. `popc`, `clz`, `bfind` return u32 counts.
/// Division by zero follows the PTX ISA (quotient all ones for unsigned,
/// -1 for signed... see the implementation notes).
pub fn eval_int(op: IntOp, ty: ScalarType, s: [u64; 4]) -> u64 {
    let _ = (op, ty, s);
    unimplemented!("eval_int")
}

/// `add.cc`/`addc[.cc]`: returns the sum and the carry out.
pub fn add_cc(ty: ScalarType, a: u64, b: u64, carry_in: bool) -> (u64, bool) {
    let _ = (ty, a, b, carry_in);
    unimplemented!("add_cc")
}

/// `sub.cc`/`subc[.cc]`: returns the difference and the borrow out.
pub fn sub_cc(ty: ScalarType, a: u64, b: u64, borrow_in: bool) -> (u64, bool) {
    let _ = (ty, a, b, borrow_in);
    unimplemented!("sub_cc")
}

/// `mad.lo|hi.cc`/`madc.lo|hi[.cc]`: a * b (lo or hi half) + c + carry_in, and the carry out.
pub fn mad_cc(ty: ScalarType, hi: bool, a: u64, b: u64, c: u64, carry_in: bool) -> (u64, bool) {
    let _ = (ty, hi, a, b, c, carry_in);
    unimplemented!("mad_cc")
}

/// Integer comparison for `setp`/`set`/`slct` (signed for `.s*`, else unsigned).
pub fn compare_int(op: crate::CmpOp, ty: ScalarType, a: u64, b: u64) -> bool {
    let _ = (op, ty, a, b);
    unimplemented!("compare_int")
}
