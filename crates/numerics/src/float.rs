//! Floating-point instructions for f16, f16x2, bf16, bf16x2, f32 and f64, per
//! the PTX ISA's "Floating-Point" and "Half Precision" sections: rounding
//! modes, `.ftz`, `.sat`, NaN rules. `.approx` functions use correctly
//! rounded host math; NVIDIA's hardware tables may differ by a few ulp (the
//! bounds the PTX ISA states for each are documented on each function).

use crate::types::{CmpOp, FMode, ScalarType};

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum FloatOp {
    Add,
    Sub,
    Mul,
    /// `fma` and `mad` with a rounding mode: a * b + c rounded once.
    Fma,
    /// `div.rn|rz|rm|rp` (IEEE), f32 and f64.
    Div,
    /// `div.approx.f32`.
    DivApprox,
    /// `div.full.f32`.
    DivFull,
    /// `rcp.rn|rz|rm|rp`.
    Rcp,
    /// `rcp.approx` (and `rcp.approx.ftz.f64`).
    RcpApprox,
    Sqrt,
    SqrtApprox,
    RsqrtApprox,
    SinApprox,
    CosApprox,
    Lg2Approx,
    Ex2Approx,
    TanhApprox,
    Abs,
    Neg,
    Min,
    Max,
    /// `min.NaN` / `max.NaN`: NaN if either input is NaN.
    MinNan,
    MaxNan,
    /// `copysign`: the magnitude of b with the sign of a (PTX operand order).
    Copysign,
}

/// Evaluates `op` on raw bit patterns of type `ty` (f16/bf16 in the low 16
/// bits, the x2 types packed in 32 bits with element 0 low).
pub fn eval_float(op: FloatOp, ty: ScalarType, m: FMode, s: [u64; 3]) -> u64 {
    let _ = (op, ty, m, s);
    unimplemented!("eval_float")
}

/// Float comparison for `setp`/`set` (ordered and unordered forms, `.ftz`).
/// For x2 types, compares element 0 only (see [`compare_float_x2`]).
pub fn compare_float(op: CmpOp, ty: ScalarType, ftz: bool, a: u64, b: u64) -> bool {
    let _ = (op, ty, ftz, a, b);
    unimplemented!("compare_float")
}

/// `setp.f16x2`/`bf16x2`: the comparison of each element (low, high).
pub fn compare_float_x2(op: CmpOp, ty: ScalarType, ftz: bool, a: u64, b: u64) -> (bool, bool) {
    let _ = (op, ty, ftz, a, b);
    unimplemented!("compare_float_x2")
}

/// `testp` classes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum TestpClass {
    Finite,
    Infinite,
    Number,
    NotANumber,
    Normal,
    Subnormal,
}

pub fn testp(class: TestpClass, ty: ScalarType, a: u64) -> bool {
    let _ = (class, ty, a);
    unimplemented!("testp")
}
