//! Floating-point instructions for f16, f16x2, bf16, bf16x2, f32 and f64, per
//! the PTX ISA's "Floating-Point" and "Half Precision" sections: rounding
//! modes, `.ftz`, `.sat`, NaN rules. `.approx` functions use correctly
//! rounded host math; NVIDIA's hardware tables may differ by a few ulp (the
//! bounds the PTX ISA states for each are documented on each function).
//!
//! Behaviour the ISA leaves open follows an sm_90 GPU (`tests/hw_golden.rs`
//! replays results recorded on one):
//! * NaN results: canonical `0x7fffffff` (f32) / `0x7fff` (f16, bf16), also
//!   from `abs`/`neg`; f64 propagates a NaN operand quietened (`add`, `sub`,
//!   `mul`, `fma`, `min`, `max` prefer operand b, then c, then a; `div` a
//!   then b) and otherwise produces `0xfff8000000000000`; f64 `abs`/`neg`
//!   return a NaN operand quietened with its sign unchanged. `copysign` is a
//!   pure bit operation.
//! * `.ftz` flushes subnormal inputs, and results that are below the
//!   smallest normal after rounding to the format's precision (tininess
//!   detected with an unbounded exponent), to a zero of the same sign.
//! * `.sat` maps NaN and -0.0 to +0.0.

use rustc_apfloat::Round;

use crate::fp::{self, Arith, Fmt};
use crate::types::{CmpOp, FMode, ScalarType};

enum_with_units! {
    #[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
    pub enum FloatOp {
        Add,
        Sub,
        Mul,
        /// `fma` and `mad` with a rounding mode: a * b + c rounded once.
        Fma,
        /// `div.rn|rz|rm|rp` (IEEE), f32 and f64.
        Div,
        /// `div.approx.f32`: the ISA computes `a * (1/b)` with at most 2 ulp of
        /// error for |b| in [2^-126, 2^126]; for 2^126 < |b| < 2^128 it returns
        /// 0 (NaN when a is infinite). Here: correctly rounded a / b inside that
        /// range, the ISA's values outside it.
        DivApprox,
        /// `div.full.f32`: at most 2 ulp of error in the ISA; correctly rounded here.
        DivFull,
        /// `rcp.rn|rz|rm|rp`.
        Rcp,
        /// `rcp.approx` (and `rcp.approx.ftz.f64`). f32: at most 1 ulp of error
        /// in the ISA, correctly rounded here. f64: the ISA's coarse form, which
        /// uses only the upper 32 bits of the operand and produces only the
        /// upper 32 bits of the result (modelled as the truncated reciprocal of
        /// the truncated operand, which matches the hardware on the recorded
        /// vectors); subnormals are flushed.
        RcpApprox,
        Sqrt,
        /// `sqrt.approx.f32`: relative error about 2^-23 in the ISA; correctly
        /// rounded here.
        SqrtApprox,
        /// `rsqrt.approx`: f32 relative error 2^-22.9 in the ISA (here: 1/sqrt
        /// rounded from f64); `rsqrt.approx.f64` (emulated in software on the
        /// GPU) near correctly rounded here; `rsqrt.approx.ftz.f64` the ISA's
        /// coarse form: `d[63:32] = 1/sqrt(a[63:32])`, `d[31:0] = 0`, NaN ->
        /// `0x7fffffff00000000`, subnormals flushed (the upper word is truncated
        /// here).
        RsqrtApprox,
        /// `sin.approx.f32`: the ISA bounds the absolute error by 2^-20.5 in
        /// [-2pi, 2pi] and 2^-14.7 in [-100pi, 100pi] (best effort outside);
        /// host `sin` here (the hardware's range reduction drifts for large
        /// arguments).
        SinApprox,
        /// `cos.approx.f32`: error bounds as for `sin.approx`; host `cos` here.
        CosApprox,
        /// `lg2.approx.f32`: absolute error 2^-22 in (0.5, 2), relative error
        /// 2^-22 elsewhere in the ISA; host `log2` here.
        Lg2Approx,
        /// `ex2.approx`: at most 2 ulp from the correctly rounded result (f32) in
        /// the ISA; host `exp2` here, also for the f16/bf16 forms
        /// (`ex2.approx.ftz.bf16` flushes subnormals).
        Ex2Approx,
        /// `tanh.approx`: relative error 2^-11 in the ISA, subnormals passed
        /// through; host `tanh` here.
        TanhApprox,
        /// `abs`: clears the sign bit. A NaN operand gives the canonical NaN
        /// (f16, bf16, f32) or itself quietened, sign unchanged (f64), as the
        /// hardware does (the ISA leaves it unspecified).
        Abs,
        /// `neg`: flips the sign bit; NaN operands as for [`FloatOp::Abs`].
        Neg,
        /// `min`: the smaller operand, -0.0 below +0.0; one NaN operand gives
        /// the other operand, two NaNs the canonical NaN (f64: operand b
        /// quietened).
        Min,
        Max,
        /// `min.NaN` / `max.NaN`: NaN if either input is NaN.
        MinNan,
        MaxNan,
        /// `min.xorsign.abs` / `max.xorsign.abs` (f32, f16, bf16 and x2): the
        /// smaller (larger) magnitude, with the sign bit the XOR of the
        /// operands' sign bits unless the result is NaN (the ISA's pseudocode).
        MinXorsignAbs,
        MaxXorsignAbs,
        /// `min.NaN.xorsign.abs` / `max.NaN.xorsign.abs`.
        MinNanXorsignAbs,
        MaxNanXorsignAbs,
        /// `copysign`: the magnitude of b with the sign of a (PTX operand order).
        Copysign,
        /// `fma.rn.relu` (f16, bf16 and x2): fma, then negative results and
        /// -0.0 become +0.0 (NaN stays the canonical NaN).
        FmaRelu,
    }
}

/// Evaluates `op` on raw bit patterns of type `ty` (f16/bf16 in the low 16
/// bits, the x2 types packed in 32 bits with element 0 low).
///
/// `m.rnd` selects the rounding of `Add`..`Rcp`, `Sqrt` (`None` = round to
/// nearest even); `.approx` forms ignore it. `m.ftz` affects f32 and f16 (and
/// the f64 `rsqrt.approx.ftz`); `m.sat` clamps the result to [0, 1].
#[inline]
pub fn eval_float(op: FloatOp, ty: ScalarType, m: FMode, s: [u64; 3]) -> u64 {
    match ty {
        ScalarType::F16x2 | ScalarType::BF16x2 => {
            let fmt = Fmt::of(ty);
            let lane = |sh: u32| {
                let l = |x: u64| (x >> sh) & 0xFFFF;
                eval_elem(op, fmt, m, l(s[0]), l(s[1]), l(s[2])) & 0xFFFF
            };
            lane(0) | (lane(16) << 16)
        }
        _ => {
            let fmt = Fmt::of(ty);
            let k = fmt.mask();
            eval_elem(op, fmt, m, s[0] & k, s[1] & k, s[2] & k)
        }
    }
}

/// One element: operands already masked to the format's width.
fn eval_elem(op: FloatOp, fmt: Fmt, m: FMode, a: u64, b: u64, c: u64) -> u64 {
    let ftz = m.ftz && fmt.honours_ftz();
    let fl = |x: u64| if ftz { fmt.flush(x) } else { x };
    // The bf16 `.approx` forms (`ex2.approx.ftz.bf16`) honour `.ftz` too.
    let aftz = m.ftz && fmt != Fmt::F64;
    let afl = |x: u64| if aftz { fmt.flush(x) } else { x };
    match op {
        FloatOp::Add => arith(Arith::Add, fmt, m, ftz, fl(a), fl(b), 0),
        FloatOp::Sub => arith(Arith::Sub, fmt, m, ftz, fl(a), fl(b), 0),
        FloatOp::Mul => arith(Arith::Mul, fmt, m, ftz, fl(a), fl(b), 0),
        FloatOp::Fma => arith(Arith::Fma, fmt, m, ftz, fl(a), fl(b), fl(c)),
        FloatOp::FmaRelu => {
            let r = arith(Arith::Fma, fmt, m, ftz, fl(a), fl(b), fl(c));
            if fmt.is_nan(r) {
                r
            } else if fmt.is_neg(r) {
                0
            } else {
                r
            }
        }
        FloatOp::Div | FloatOp::DivFull => arith(Arith::Div, fmt, m, ftz, fl(a), fl(b), 0),
        FloatOp::DivApprox => div_approx(fmt, m, ftz, fl(a), fl(b)),
        FloatOp::Rcp => arith(Arith::Div, fmt, m, ftz, fmt.one(), fl(a), 0),
        FloatOp::RcpApprox => {
            if fmt == Fmt::F64 {
                finish(fmt, m, false, coarse_f64(a, false))
            } else {
                arith(Arith::Div, fmt, rn(m), ftz, fmt.one(), fl(a), 0)
            }
        }
        FloatOp::Sqrt => arith(Arith::Sqrt, fmt, m, ftz, fl(a), 0, 0),
        FloatOp::SqrtApprox => arith(Arith::Sqrt, fmt, rn(m), ftz, fl(a), 0, 0),
        FloatOp::RsqrtApprox => {
            if fmt == Fmt::F64 && m.ftz {
                finish(fmt, m, false, coarse_f64(a, true))
            } else if fmt == Fmt::F64 {
                finish(fmt, m, false, rsqrt_f64(a))
            } else {
                host(fmt, m, aftz, afl(a), |x| 1.0 / x.sqrt())
            }
        }
        FloatOp::SinApprox => host(fmt, m, aftz, afl(a), f64::sin),
        FloatOp::CosApprox => host(fmt, m, aftz, afl(a), f64::cos),
        FloatOp::Lg2Approx => host(fmt, m, aftz, afl(a), f64::log2),
        FloatOp::Ex2Approx => host(fmt, m, aftz, afl(a), f64::exp2),
        FloatOp::TanhApprox => host(fmt, m, aftz, afl(a), f64::tanh),
        FloatOp::Abs | FloatOp::Neg => {
            let x = fl(a);
            if fmt.is_nan(x) {
                // f64 keeps the (quietened) NaN with its sign; others canonicalise.
                return fmt.nan_result(&[x]);
            }
            if op == FloatOp::Abs {
                x & !fmt.sign()
            } else {
                x ^ fmt.sign()
            }
        }
        FloatOp::Copysign => (b & !fmt.sign()) | (a & fmt.sign()),
        FloatOp::Min | FloatOp::Max | FloatOp::MinNan | FloatOp::MaxNan => {
            let is_max = matches!(op, FloatOp::Max | FloatOp::MaxNan);
            let nan_mode = matches!(op, FloatOp::MinNan | FloatOp::MaxNan);
            let r = min_max(fmt, is_max, nan_mode, fl(a), fl(b));
            if m.sat {
                fmt.saturate(r)
            } else {
                r
            }
        }
        FloatOp::MinXorsignAbs | FloatOp::MaxXorsignAbs | FloatOp::MinNanXorsignAbs | FloatOp::MaxNanXorsignAbs => {
            let is_max = matches!(op, FloatOp::MaxXorsignAbs | FloatOp::MaxNanXorsignAbs);
            let nan_mode = matches!(op, FloatOp::MinNanXorsignAbs | FloatOp::MaxNanXorsignAbs);
            let (a, b) = (fl(a), fl(b));
            let sign = (a ^ b) & fmt.sign();
            let r = min_max(fmt, is_max, nan_mode, a & !fmt.sign(), b & !fmt.sign());
            if fmt.is_nan(r) {
                r
            } else {
                (r & !fmt.sign()) | sign
            }
        }
    }
}

#[inline]
fn rn(m: FMode) -> FMode {
    FMode { rnd: None, ..m }
}

/// Applies the NaN policy, output flush and saturation to an arithmetic
/// result.
#[inline]
fn finish(fmt: Fmt, m: FMode, ftz: bool, r: u64) -> u64 {
    let r = if fmt.is_nan(r) { fmt.nan_result(&[r]) } else { r };
    let r = if ftz { fmt.flush(r) } else { r };
    if m.sat {
        fmt.saturate(r)
    } else {
        r
    }
}

/// Correctly rounded arithmetic with the instruction's modifiers; `a`, `b`,
/// `c` are already flushed when `ftz`.
#[inline]
fn arith(op: Arith, fmt: Fmt, m: FMode, ftz: bool, a: u64, b: u64, c: u64) -> u64 {
    let rnd = fp::round_of(m.rnd);
    let fast = if rnd == Round::NearestTiesToEven { native_rn(op, fmt, ftz, a, b, c) } else { None };
    let r = match fast {
        Some(r) => r,
        None if ftz => fp::soft_ftz(fmt, op, a, b, c, rnd),
        None => fp::soft(fmt, op, a, b, c, rnd),
    };
    let r = if fmt.is_nan(r) {
        match op {
            Arith::Div => fmt.nan_result(&[a, b]),
            _ => fmt.nan_result(&[b, c, a]),
        }
    } else {
        r
    };
    if m.sat {
        fmt.saturate(r)
    } else {
        r
    }
}

/// `op` on host floats (f32 or f64), rounded to nearest even.
macro_rules! host_rn {
    ($op:expr, $x:expr, $y:expr, $z:expr) => {{
        let (x, y, z) = ($x, $y, $z);
        match $op {
            Arith::Add => x + y,
            Arith::Sub => x - y,
            Arith::Mul => x * y,
            Arith::Div => x / y,
            Arith::Fma => x.mul_add(y, z),
            Arith::Sqrt => x.sqrt(),
        }
    }};
}

/// Round-to-nearest fast paths on host floats. `None` sends the operation to
/// the soft-float (f16/bf16 fma, and `.ftz` results at the normal boundary).
#[inline]
fn native_rn(op: Arith, fmt: Fmt, ftz: bool, a: u64, b: u64, c: u64) -> Option<u64> {
    match fmt {
        Fmt::F32 => {
            let r = host_rn!(op, f32::from_bits(a as u32), f32::from_bits(b as u32), f32::from_bits(c as u32));
            let bits = r.to_bits() as u64;
            if ftz && r != 0.0 && r.abs() <= f32::MIN_POSITIVE {
                return None;
            }
            Some(bits)
        }
        Fmt::F64 => Some(host_rn!(op, f64::from_bits(a), f64::from_bits(b), f64::from_bits(c)).to_bits()),
        Fmt::F16 | Fmt::BF16 => {
            // f32 carries 24 >= 2 * 11 + 2 bits, so rounding the f32 result of
            // +, -, *, / or sqrt once more to f16/bf16 is correctly rounded.
            if op == Arith::Fma {
                return None;
            }
            let (x, y) = (fmt.to_f64(a) as f32, fmt.to_f64(b) as f32);
            let r = match op {
                Arith::Add => x + y,
                Arith::Sub => x - y,
                Arith::Mul => x * y,
                Arith::Div => x / y,
                _ => x.sqrt(),
            };
            let bits = if fmt == Fmt::F16 { half::f16::from_f32(r).to_bits() } else { half::bf16::from_f32(r).to_bits() } as u64;
            if ftz && (fmt.is_subnormal(bits) || (bits & !fmt.sign()) == fmt.min_normal()) {
                return None;
            }
            Some(bits)
        }
    }
}

/// `div.approx.f32` (and, for other formats, a correctly rounded division).
fn div_approx(fmt: Fmt, m: FMode, ftz: bool, a: u64, b: u64) -> u64 {
    if fmt == Fmt::F32 {
        let mag = b & 0x7FFF_FFFF;
        if mag > 0x7E80_0000 && mag < 0x7F80_0000 {
            // 2^126 < |b| < 2^128: the reciprocal underflows.
            let r = if fmt.is_nan(a) || fmt.is_inf(a) { fmt.canonical_nan() } else { (a ^ b) & fmt.sign() };
            return finish(fmt, m, ftz, r);
        }
    }
    arith(Arith::Div, fmt, rn(m), ftz, a, b, 0)
}

/// Transcendental `.approx` functions through host f64 math.
#[inline]
fn host(fmt: Fmt, m: FMode, ftz: bool, a: u64, f: impl Fn(f64) -> f64) -> u64 {
    let r = fmt.from_f64_rn(f(fmt.to_f64(a)));
    finish(fmt, m, ftz, r)
}

/// `rsqrt.approx.f64`: 1/sqrt(x) with one Newton correction in f64.
fn rsqrt_f64(a: u64) -> u64 {
    let x = f64::from_bits(a);
    if x.is_nan() {
        return Fmt::F64.nan_result(&[a]);
    }
    if x == 0.0 {
        return Fmt::F64.inf(x.is_sign_negative());
    }
    if x < 0.0 {
        return fp::F64_DEFAULT_NAN;
    }
    if x.is_infinite() {
        return 0;
    }
    // Scale subnormals and huge values so the correction cannot over/underflow.
    let (xs, scale) = if x < 1e-300 {
        (x * 2f64.powi(200), 2f64.powi(100))
    } else if x > 1e300 {
        (x * 2f64.powi(-200), 2f64.powi(-100))
    } else {
        (x, 1.0)
    };
    let s = xs.sqrt();
    let y = 1.0 / s;
    let e = (-y).mul_add(s, 1.0);
    let y = y.mul_add(e, y);
    (y * scale).to_bits()
}

/// The coarse f64 reciprocal (`rsqrt == false`) or reciprocal square root of
/// `rcp.approx.ftz.f64` / `rsqrt.approx.ftz.f64`: only the upper 32 bits of
/// the operand are read and only the upper 32 bits of the result written;
/// subnormal operands and results are flushed; any NaN gives
/// `0x7fffffff00000000`.
fn coarse_f64(a: u64, rsqrt: bool) -> u64 {
    const HI: u64 = 0xFFFF_FFFF_0000_0000;
    const NAN: u64 = 0x7FFF_FFFF_0000_0000;
    let f = Fmt::F64;
    let x = f.flush(a & HI);
    if f.is_nan(x) {
        return NAN;
    }
    let neg = f.is_neg(x);
    let r = if f.is_zero(x) {
        f.inf(neg)
    } else if f.is_inf(x) {
        if rsqrt && neg {
            return NAN;
        }
        x & f.sign()
    } else if rsqrt {
        if neg {
            return NAN;
        }
        rsqrt_f64(x)
    } else {
        fp::recip(f, x, Round::TowardZero)
    };
    f.flush(r) & HI
}

/// `min`/`max` with the ISA's NaN rules and -0.0 < +0.0.
#[inline]
fn min_max(fmt: Fmt, is_max: bool, nan_mode: bool, a: u64, b: u64) -> u64 {
    let (an, bn) = (fmt.is_nan(a), fmt.is_nan(b));
    if an && bn {
        return fmt.nan_result(&[b, a]);
    }
    if an || bn {
        if nan_mode {
            return fmt.nan_result(&[a, b]);
        }
        return if an { b } else { a };
    }
    let (x, y) = (fmt.to_f64(a), fmt.to_f64(b));
    if x == y {
        // Equal values, or zeros of different signs: -0.0 < +0.0.
        let a_neg = fmt.is_neg(a);
        return if a_neg == is_max { b } else { a };
    }
    if (x < y) != is_max {
        a
    } else {
        b
    }
}

/// Float comparison for `setp`/`set` (ordered and unordered forms, `.ftz`).
/// For x2 types, compares element 0 only (see [`compare_float_x2`]).
#[inline]
pub fn compare_float(op: CmpOp, ty: ScalarType, ftz: bool, a: u64, b: u64) -> bool {
    let fmt = Fmt::of(ty);
    let k = fmt.mask();
    cmp_elem(op, fmt, ftz, a & k, b & k)
}

/// `setp.f16x2`/`bf16x2`: the comparison of each element (low, high).
#[inline]
pub fn compare_float_x2(op: CmpOp, ty: ScalarType, ftz: bool, a: u64, b: u64) -> (bool, bool) {
    let fmt = Fmt::of(ty);
    let k = fmt.mask();
    let hi = |x: u64| x.checked_shr(fmt.bits()).unwrap_or(0) & k;
    (cmp_elem(op, fmt, ftz, a & k, b & k), cmp_elem(op, fmt, ftz, hi(a), hi(b)))
}

#[inline]
fn cmp_elem(op: CmpOp, fmt: Fmt, ftz: bool, a: u64, b: u64) -> bool {
    let ftz = ftz && fmt.honours_ftz();
    let (a, b) = if ftz { (fmt.flush(a), fmt.flush(b)) } else { (a, b) };
    let unordered = fmt.is_nan(a) || fmt.is_nan(b);
    let (x, y) = (fmt.to_f64(a), fmt.to_f64(b));
    use CmpOp::*;
    match op {
        Eq => !unordered && x == y,
        Ne => !unordered && x != y,
        Lt | Lo => !unordered && x < y,
        Le | Ls => !unordered && x <= y,
        Gt | Hi => !unordered && x > y,
        Ge | Hs => !unordered && x >= y,
        Equ => unordered || x == y,
        Neu => unordered || x != y,
        Ltu => unordered || x < y,
        Leu => unordered || x <= y,
        Gtu => unordered || x > y,
        Geu => unordered || x >= y,
        Num => !unordered,
        Nan => unordered,
    }
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

/// `testp.class.type a` (f32 and f64 in the ISA; f16/bf16 handled alike).
/// As the ISA says, +0.0 and -0.0 count as normal numbers. `.ftz` does not
/// apply.
#[inline]
pub fn testp(class: TestpClass, ty: ScalarType, a: u64) -> bool {
    let fmt = Fmt::of(ty);
    let a = a & fmt.mask();
    let nan = fmt.is_nan(a);
    let inf = fmt.is_inf(a);
    match class {
        TestpClass::Finite => !nan && !inf,
        TestpClass::Infinite => inf,
        TestpClass::Number => !nan,
        TestpClass::NotANumber => nan,
        TestpClass::Normal => !nan && !inf && !fmt.is_subnormal(a),
        TestpClass::Subnormal => fmt.is_subnormal(a),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{rnd, ALL_TYPES};
    use crate::types::Rounding;
    use proptest::prelude::*;
    use ScalarType::*;

    const RN: FMode = FMode::RN;
    fn md(rnd: Option<Rounding>, ftz: bool, sat: bool) -> FMode {
        FMode { rnd, ftz, sat }
    }
    fn rm(r: Rounding) -> FMode {
        md(Some(r), false, false)
    }
    fn f(x: f32) -> u64 {
        x.to_bits() as u64
    }
    fn d(x: f64) -> u64 {
        x.to_bits()
    }
    fn e32(op: FloatOp, m: FMode, a: u64, b: u64, c: u64) -> u64 {
        eval_float(op, F32, m, [a, b, c])
    }
    const CNAN: u64 = 0x7FFF_FFFF;
    const ONE: u64 = 0x3F80_0000;
    const MIN_SUB: u64 = 1;
    const MIN_NORM: u64 = 0x0080_0000;
    const MAXF: u64 = 0x7F7F_FFFF;
    const INF: u64 = 0x7F80_0000;
    const NEG: u64 = 0x8000_0000;

    #[test]
    fn rounding_modes_differ() {
        let tie = f(2f32.powi(-24)); // 1 + 2^-24 is halfway between 1 and 1 + 2^-23
        assert_eq!(e32(FloatOp::Add, RN, ONE, tie, 0), ONE);
        assert_eq!(e32(FloatOp::Add, rm(Rounding::Rz), ONE, tie, 0), ONE);
        assert_eq!(e32(FloatOp::Add, rm(Rounding::Rm), ONE, tie, 0), ONE);
        assert_eq!(e32(FloatOp::Add, rm(Rounding::Rp), ONE, tie, 0), ONE + 1);
        let above = f(2f32.powi(-24) * 1.5);
        assert_eq!(e32(FloatOp::Add, RN, ONE, above, 0), ONE + 1);
        assert_eq!(e32(FloatOp::Add, rm(Rounding::Rz), ONE, above, 0), ONE);
        // Negative: rm rounds away from zero, rp toward it.
        assert_eq!(e32(FloatOp::Sub, rm(Rounding::Rm), ONE | NEG, above, 0), (ONE + 1) | NEG);
        assert_eq!(e32(FloatOp::Sub, rm(Rounding::Rp), ONE | NEG, above, 0), ONE | NEG);
        // Overflow: rn -> inf, rz -> max, rm (positive) -> max, rp (negative) -> -max.
        assert_eq!(e32(FloatOp::Mul, RN, MAXF, f(2.0), 0), INF);
        assert_eq!(e32(FloatOp::Mul, rm(Rounding::Rz), MAXF, f(2.0), 0), MAXF);
        assert_eq!(e32(FloatOp::Mul, rm(Rounding::Rm), MAXF, f(2.0), 0), MAXF);
        assert_eq!(e32(FloatOp::Mul, rm(Rounding::Rp), MAXF | NEG, f(2.0), 0), MAXF | NEG);
        assert_eq!(e32(FloatOp::Mul, rm(Rounding::Rm), MAXF | NEG, f(2.0), 0), INF | NEG);
        // Exact zero sums are +0 except when rounding toward -inf.
        assert_eq!(e32(FloatOp::Add, RN, ONE, ONE | NEG, 0), 0);
        assert_eq!(e32(FloatOp::Add, rm(Rounding::Rm), ONE, ONE | NEG, 0), NEG);
        assert_eq!(e32(FloatOp::Add, RN, NEG, NEG, 0), NEG);
        assert_eq!(e32(FloatOp::Add, RN, 0, NEG, 0), 0);
        // f64 too.
        let t = d(2f64.powi(-53));
        assert_eq!(eval_float(FloatOp::Add, F64, RN, [d(1.0), t, 0]), d(1.0));
        assert_eq!(eval_float(FloatOp::Add, F64, rm(Rounding::Rp), [d(1.0), t, 0]), d(1.0) + 1);
        assert_eq!(eval_float(FloatOp::Div, F64, rm(Rounding::Rm), [d(1.0), d(3.0), 0]), d(1.0 / 3.0));
        assert_eq!(eval_float(FloatOp::Div, F64, rm(Rounding::Rp), [d(1.0), d(3.0), 0]), d(1.0 / 3.0) + 1);
    }

    #[test]
    fn fma_rounds_once() {
        let a = f(1.0 + 2f32.powi(-23));
        let b = f(1.0 - 2f32.powi(-23));
        // a*b = 1 - 2^-46 exactly; fma keeps it, mul+add loses it.
        assert_eq!(e32(FloatOp::Fma, RN, a, b, ONE | NEG), f(-(2f32.powi(-46))));
        let p = e32(FloatOp::Mul, RN, a, b, 0);
        assert_eq!(e32(FloatOp::Add, RN, p, ONE | NEG, 0), 0);
        // f32(1/3) is 11184811 * 2^-25, so 3 * it - 1 = 2^-25 exactly.
        assert_eq!(e32(FloatOp::Fma, rm(Rounding::Rz), f(3.0), f(1.0 / 3.0), ONE | NEG), f(2f32.powi(-25)));
        assert_eq!(e32(FloatOp::Fma, rm(Rounding::Rm), f(0.1), f(10.0), ONE | NEG), f(0.1f32.mul_add(10.0, -1.0)));
        // inf * 0 + x is NaN.
        assert_eq!(e32(FloatOp::Fma, RN, INF, 0, ONE), CNAN);
    }

    #[test]
    fn nan_results() {
        // f32/f16/bf16: always canonical.
        assert_eq!(e32(FloatOp::Add, RN, 0x7FC1_2345, ONE, 0), CNAN);
        assert_eq!(e32(FloatOp::Mul, rm(Rounding::Rz), 0x7F80_0001, ONE, 0), CNAN);
        assert_eq!(e32(FloatOp::Sub, RN, INF, INF, 0), CNAN);
        assert_eq!(e32(FloatOp::Sqrt, RN, ONE | NEG, 0, 0), CNAN);
        assert_eq!(eval_float(FloatOp::Add, F16, RN, [0x7E01, 0x3C00, 0]), 0x7FFF);
        assert_eq!(eval_float(FloatOp::Mul, BF16, RN, [0x7F80, 0, 0]), 0x7FFF);
        // f64: NaN operands propagate quietened (b, then c, then a); new NaNs are 0xfff8...
        let (qa, sb) = (0x7FF8_0000_0000_0001u64, 0x7FF0_0000_0000_0002u64);
        assert_eq!(eval_float(FloatOp::Add, F64, RN, [qa, d(1.0), 0]), qa);
        assert_eq!(eval_float(FloatOp::Add, F64, RN, [qa, sb, 0]), sb | 0x0008_0000_0000_0000);
        assert_eq!(eval_float(FloatOp::Fma, F64, RN, [qa, d(1.0), 0xFFF8_0000_0000_0003]), 0xFFF8_0000_0000_0003);
        assert_eq!(eval_float(FloatOp::Div, F64, RN, [qa, sb, 0]), qa);
        assert_eq!(eval_float(FloatOp::Sub, F64, RN, [d(f64::INFINITY), d(f64::INFINITY), 0]), 0xFFF8_0000_0000_0000);
        assert_eq!(eval_float(FloatOp::Sqrt, F64, rm(Rounding::Rz), [d(-1.0), 0, 0]), 0xFFF8_0000_0000_0000);
    }

    #[test]
    fn ftz_inputs_and_results() {
        let ftz = md(None, true, false);
        // Subnormal inputs are flushed (sign kept).
        assert_eq!(e32(FloatOp::Add, RN, MIN_SUB, 0, 0), MIN_SUB);
        assert_eq!(e32(FloatOp::Add, ftz, MIN_SUB, 0, 0), 0);
        assert_eq!(e32(FloatOp::Add, ftz, MIN_SUB | NEG, NEG, 0), NEG);
        assert_eq!(e32(FloatOp::Add, ftz, MIN_NORM, 0x8000_0001, 0), MIN_NORM);
        // Subnormal results are flushed.
        assert_eq!(e32(FloatOp::Mul, RN, MIN_NORM, f(0.5), 0), 0x0040_0000);
        assert_eq!(e32(FloatOp::Mul, ftz, MIN_NORM, f(0.5), 0), 0);
        assert_eq!(e32(FloatOp::Mul, ftz, MIN_NORM | NEG, f(0.5), 0), NEG);
        // Tininess is judged after rounding to 24 bits (unbounded exponent):
        // (1 - 2^-24) 2^-126 is below 2^-126 and flushed, though round-to-
        // nearest into the subnormal range would give 2^-126 ...
        assert_eq!(e32(FloatOp::Mul, RN, 0x3F7F_FFFF, MIN_NORM, 0), MIN_NORM);
        assert_eq!(e32(FloatOp::Mul, ftz, 0x3F7F_FFFF, MIN_NORM, 0), 0);
        // ... while 2^-126 (1 - 2^-46) rounds to 2^-126 first and survives.
        assert_eq!(e32(FloatOp::Mul, ftz, 0x3280_0001, 0x0D7F_FFFE, 0), MIN_NORM);
        assert_eq!(e32(FloatOp::Fma, ftz, 0x3280_0001, 0x0D7F_FFFE, NEG), MIN_NORM);
        assert_eq!(e32(FloatOp::Mul, md(Some(Rounding::Rz), true, false), 0x3280_0001, 0x0D7F_FFFE, 0), 0);
        // f16 honours .ftz; f64 and bf16 do not.
        assert_eq!(eval_float(FloatOp::Add, F16, ftz, [0x0001, 0, 0]), 0);
        assert_eq!(eval_float(FloatOp::Mul, F16, ftz, [0x2001, 0x1FFE, 0]), 0x0400);
        assert_eq!(eval_float(FloatOp::Add, BF16, ftz, [0x0001, 0, 0]), 0x0001);
        assert_eq!(eval_float(FloatOp::Add, F64, ftz, [1, 0, 0]), 1);
        // abs/neg/min/max flush too.
        assert_eq!(e32(FloatOp::Abs, ftz, 0x8000_0001, 0, 0), 0);
        assert_eq!(e32(FloatOp::Neg, ftz, 0x0000_0001, 0, 0), NEG);
        assert_eq!(e32(FloatOp::Max, ftz, 0x0000_0001, NEG, 0), 0);
    }

    #[test]
    fn saturation() {
        let sat = md(None, false, true);
        assert_eq!(e32(FloatOp::Add, sat, f(0.25), f(0.5), 0), f(0.75));
        assert_eq!(e32(FloatOp::Add, sat, f(1.0), f(0.5), 0), ONE);
        assert_eq!(e32(FloatOp::Add, sat, f(-1.0), f(0.5), 0), 0);
        assert_eq!(e32(FloatOp::Add, sat, NEG, NEG, 0), 0); // -0 -> +0
        assert_eq!(e32(FloatOp::Sub, sat, INF, INF, 0), 0); // NaN -> +0
        assert_eq!(e32(FloatOp::Mul, sat, INF, ONE, 0), ONE);
        assert_eq!(e32(FloatOp::Fma, sat, f(2.0), f(2.0), f(-3.5)), f(0.5));
        assert_eq!(eval_float(FloatOp::Add, F16, sat, [0x3C00, 0x3C00, 0]), 0x3C00);
        assert_eq!(eval_float(FloatOp::Add, F16x2, sat, [0xBC00_3800, 0x0000_0000, 0]), 0x0000_3800);
    }

    #[test]
    fn division_and_reciprocal() {
        assert_eq!(e32(FloatOp::Div, RN, ONE, 0, 0), INF);
        assert_eq!(e32(FloatOp::Div, RN, ONE | NEG, 0, 0), INF | NEG);
        assert_eq!(e32(FloatOp::Div, RN, 0, 0, 0), CNAN);
        // 1/3 rounds up to nearest (0x3eaaaaab).
        assert_eq!(e32(FloatOp::Div, RN, ONE, f(3.0), 0), 0x3EAA_AAAB);
        assert_eq!(e32(FloatOp::Div, rm(Rounding::Rz), ONE, f(3.0), 0), 0x3EAA_AAAA);
        assert_eq!(e32(FloatOp::Div, rm(Rounding::Rp), ONE, f(3.0), 0), 0x3EAA_AAAB);
        assert_eq!(e32(FloatOp::Div, rm(Rounding::Rm), ONE | NEG, f(3.0), 0), 0xBEAA_AAAB);
        assert_eq!(e32(FloatOp::Rcp, RN, f(4.0), 0, 0), f(0.25));
        assert_eq!(e32(FloatOp::Rcp, rm(Rounding::Rm), f(3.0), 0, 0), 0x3EAA_AAAA);
        assert_eq!(e32(FloatOp::Rcp, RN, NEG, 0, 0), INF | NEG);
        assert_eq!(e32(FloatOp::RcpApprox, RN, INF, 0, 0), 0);
        assert_eq!(e32(FloatOp::DivFull, RN, f(1.0), f(10.0), 0), f(0.1));
        // div.approx: 2^126 < |b| < 2^128 gives 0 (NaN for infinite a).
        assert_eq!(e32(FloatOp::DivApprox, RN, ONE, 0x7E80_0001, 0), 0);
        assert_eq!(e32(FloatOp::DivApprox, RN, ONE, 0xFEC0_0000, 0), NEG);
        assert_eq!(e32(FloatOp::DivApprox, RN, INF, 0x7F00_0000, 0), CNAN);
        assert_eq!(e32(FloatOp::DivApprox, RN, ONE, 0x7E80_0000, 0), f(2f32.powi(-126)));
        assert_eq!(e32(FloatOp::DivApprox, RN, f(6.0), f(3.0), 0), f(2.0));
        // f64 coarse reciprocal: upper word only, truncated.
        let r = eval_float(FloatOp::RcpApprox, F64, md(None, true, false), [d(3.0), 0, 0]);
        assert_eq!(r & 0xFFFF_FFFF, 0);
        assert!((f64::from_bits(r) - 1.0 / 3.0).abs() < 1e-6);
        assert_eq!(eval_float(FloatOp::RcpApprox, F64, RN, [d(f64::NAN), 0, 0]), 0x7FFF_FFFF_0000_0000);
        assert_eq!(eval_float(FloatOp::RcpApprox, F64, RN, [1, 0, 0]), d(f64::INFINITY));
    }

    #[test]
    fn square_roots() {
        assert_eq!(e32(FloatOp::Sqrt, RN, f(4.0), 0, 0), f(2.0));
        assert_eq!(e32(FloatOp::Sqrt, RN, NEG, 0, 0), NEG);
        assert_eq!(e32(FloatOp::Sqrt, RN, INF, 0, 0), INF);
        assert_eq!(e32(FloatOp::Sqrt, RN, INF | NEG, 0, 0), CNAN);
        let two = f(2.0);
        let lo = e32(FloatOp::Sqrt, rm(Rounding::Rm), two, 0, 0);
        let hi = e32(FloatOp::Sqrt, rm(Rounding::Rp), two, 0, 0);
        assert_eq!(hi, lo + 1);
        assert_eq!(e32(FloatOp::Sqrt, rm(Rounding::Rz), two, 0, 0), lo);
        assert_eq!(e32(FloatOp::SqrtApprox, RN, two, 0, 0), f(2f32.sqrt()));
        // sqrt(2) rounds up to nearest in f64.
        assert_eq!(eval_float(FloatOp::Sqrt, F64, rm(Rounding::Rp), [d(2.0), 0, 0]), d(2f64.sqrt()));
        assert_eq!(eval_float(FloatOp::Sqrt, F64, rm(Rounding::Rm), [d(2.0), 0, 0]), d(2f64.sqrt()) - 1);
        assert_eq!(eval_float(FloatOp::Sqrt, F64, RN, [1, 0, 0]), d(f64::from_bits(1).sqrt()));
    }

    #[test]
    fn approx_special_values() {
        let a = |op, x: u64| e32(op, RN, x, 0, 0);
        assert_eq!(a(FloatOp::SinApprox, NEG), NEG);
        assert_eq!(a(FloatOp::SinApprox, INF), CNAN);
        assert_eq!(a(FloatOp::CosApprox, NEG), ONE);
        assert_eq!(a(FloatOp::Lg2Approx, 0), INF | NEG);
        assert_eq!(a(FloatOp::Lg2Approx, NEG), INF | NEG);
        assert_eq!(a(FloatOp::Lg2Approx, ONE | NEG), CNAN);
        assert_eq!(a(FloatOp::Lg2Approx, f(8.0)), f(3.0));
        assert_eq!(a(FloatOp::Ex2Approx, INF | NEG), 0);
        assert_eq!(a(FloatOp::Ex2Approx, NEG), ONE);
        assert_eq!(a(FloatOp::Ex2Approx, f(10.0)), f(1024.0));
        assert_eq!(a(FloatOp::TanhApprox, INF | NEG), ONE | NEG);
        assert_eq!(a(FloatOp::TanhApprox, MIN_SUB), MIN_SUB); // subnormals pass through
        assert_eq!(a(FloatOp::RsqrtApprox, NEG), INF | NEG);
        assert_eq!(a(FloatOp::RsqrtApprox, INF), 0);
        assert_eq!(a(FloatOp::RsqrtApprox, f(4.0)), f(0.5));
        assert_eq!(e32(FloatOp::Ex2Approx, md(None, true, false), f(-130.0), 0, 0), 0);
        assert_eq!(e32(FloatOp::Ex2Approx, RN, f(-130.0), 0, 0), f(2f32.powi(-130)));
        // bf16 .approx honours .ftz.
        assert_eq!(eval_float(FloatOp::Ex2Approx, BF16, md(None, true, false), [0xC2FE, 0, 0]), 0);
        // f64 rsqrt forms.
        assert_eq!(eval_float(FloatOp::RsqrtApprox, F64, RN, [d(4.0), 0, 0]), d(0.5));
        assert_eq!(eval_float(FloatOp::RsqrtApprox, F64, RN, [d(-0.0), 0, 0]), d(f64::NEG_INFINITY));
        let ftz = md(None, true, false);
        assert_eq!(eval_float(FloatOp::RsqrtApprox, F64, ftz, [d(-4.0), 0, 0]), 0x7FFF_FFFF_0000_0000);
        assert_eq!(eval_float(FloatOp::RsqrtApprox, F64, ftz, [d(0.5), 0, 0]), 0x3FF6_A09E_0000_0000);
        assert_eq!(eval_float(FloatOp::RsqrtApprox, F64, ftz, [0x8000_0000_0000_0001, 0, 0]), d(f64::NEG_INFINITY));
    }

    #[test]
    fn min_max_rules() {
        assert_eq!(e32(FloatOp::Min, RN, 0x7FC1_2345, ONE, 0), ONE);
        assert_eq!(e32(FloatOp::Max, RN, ONE, 0x7F80_0001, 0), ONE);
        assert_eq!(e32(FloatOp::Min, RN, 0x7FC0_0000, 0xFFC5_4321, 0), CNAN);
        assert_eq!(e32(FloatOp::MinNan, RN, 0x7FC1_2345, ONE, 0), CNAN);
        assert_eq!(e32(FloatOp::MaxNan, RN, ONE, f(2.0), 0), f(2.0));
        assert_eq!(e32(FloatOp::Min, RN, 0, NEG, 0), NEG);
        assert_eq!(e32(FloatOp::Min, RN, NEG, 0, 0), NEG);
        assert_eq!(e32(FloatOp::Max, RN, NEG, 0, 0), 0);
        assert_eq!(e32(FloatOp::Max, RN, 0, NEG, 0), 0);
        assert_eq!(e32(FloatOp::Min, RN, f(-2.0), f(1.0), 0), f(-2.0));
        assert_eq!(e32(FloatOp::Max, RN, INF | NEG, MAXF | NEG, 0), MAXF | NEG);
        let (q1, s2) = (0x7FF8_0000_0000_0001u64, 0x7FF0_0000_0000_0002u64);
        assert_eq!(eval_float(FloatOp::Max, F64, RN, [q1, s2, 0]), s2 | 0x0008_0000_0000_0000);
        assert_eq!(eval_float(FloatOp::Min, F64, RN, [q1, d(3.0), 0]), d(3.0));
        assert_eq!(eval_float(FloatOp::Min, F16, RN, [0x7E00, 0x7E00, 0]), 0x7FFF);
        assert_eq!(eval_float(FloatOp::Max, BF16x2, RN, [0x3F80_7FC0, 0x4000_3F80, 0]), 0x4000_3F80);
    }

    #[test]
    fn sign_operations() {
        assert_eq!(e32(FloatOp::Abs, RN, f(-2.0), 0, 0), f(2.0));
        assert_eq!(e32(FloatOp::Neg, RN, 0, 0, 0), NEG);
        assert_eq!(e32(FloatOp::Abs, RN, 0xFFC0_0000, 0, 0), CNAN);
        assert_eq!(e32(FloatOp::Neg, RN, 0x7FC0_0000, 0, 0), CNAN);
        assert_eq!(eval_float(FloatOp::Neg, F16, RN, [0x7E00, 0, 0]), 0x7FFF);
        assert_eq!(eval_float(FloatOp::Neg, F64, RN, [d(2.0), 0, 0]), d(-2.0));
        assert_eq!(eval_float(FloatOp::Neg, F64, RN, [0x7FF4_0000_0000_0000, 0, 0]), 0x7FFC_0000_0000_0000);
        assert_eq!(eval_float(FloatOp::Abs, F64, RN, [0xFFF8_0000_0000_0001, 0, 0]), 0xFFF8_0000_0000_0001);
        // copysign d, a, b: b's magnitude, a's sign; NaNs untouched.
        assert_eq!(e32(FloatOp::Copysign, RN, f(-1.0), f(3.0), 0), f(-3.0));
        assert_eq!(e32(FloatOp::Copysign, RN, 0x7FC0_0000, 0xFFC5_4321, 0), 0x7FC5_4321);
        assert_eq!(e32(FloatOp::Copysign, RN, NEG, 0x7F81_2345, 0), 0xFF81_2345);
        assert_eq!(eval_float(FloatOp::Copysign, F64, RN, [d(-0.0), d(5.0), 0]), d(-5.0));
        assert_eq!(eval_float(FloatOp::Neg, F16x2, RN, [0x8000_3C00, 0, 0]), 0x0000_BC00);
    }

    #[test]
    fn half_precision() {
        // 1 + 2^-11 ties to 1 in f16; x2 lanes are independent.
        assert_eq!(eval_float(FloatOp::Add, F16, RN, [0x3C00, 0x1000, 0]), 0x3C00);
        assert_eq!(eval_float(FloatOp::Add, F16x2, RN, [0x3C00_4000, 0x3C00_3C00, 0]), 0x4000_4200);
        assert_eq!(eval_float(FloatOp::Mul, F16, RN, [0x7BFF, 0x4000, 0]), 0x7C00);
        // (1 + 2^-10)(1 - 2^-10) - 1 = -2^-20, a subnormal f16: rounded once.
        assert_eq!(eval_float(FloatOp::Fma, F16, RN, [0x3C01, 0x3BFE, 0xBC00]), 0x8010);
        assert_eq!(eval_float(FloatOp::Mul, BF16, RN, [0x3FC0, 0x4000, 0]), 0x4040);
        assert_eq!(eval_float(FloatOp::Sub, BF16x2, RN, [0x4000_3F80, 0x3F80_3F80, 0]), 0x3F80_0000);
        assert_eq!(eval_float(FloatOp::FmaRelu, F16, RN, [0xBC00, 0x3C00, 0x0000]), 0);
        assert_eq!(eval_float(FloatOp::FmaRelu, BF16, RN, [0x3F80, 0x7FC0, 0]), 0x7FFF);
        assert_eq!(eval_float(FloatOp::FmaRelu, F16x2, RN, [0xBC00_3C00, 0x3C00_3C00, 0]), 0x0000_3C00);
        // Subnormal f16 results are kept without .ftz.
        assert_eq!(eval_float(FloatOp::Mul, F16, RN, [0x0400, 0x3800, 0]), 0x0200);
    }

    #[test]
    fn comparisons() {
        use CmpOp::*;
        let nan = 0x7FC0_0000;
        for op in [Eq, Ne, Lt, Le, Gt, Ge] {
            assert!(!compare_float(op, F32, false, nan, ONE), "{op:?}");
        }
        for op in [Equ, Neu, Ltu, Leu, Gtu, Geu, Nan] {
            assert!(compare_float(op, F32, false, ONE, nan), "{op:?}");
        }
        assert!(compare_float(Num, F32, false, ONE, INF));
        assert!(!compare_float(Num, F32, false, ONE, nan));
        assert!(compare_float(Eq, F32, false, 0, NEG));
        assert!(compare_float(Lt, F32, false, INF | NEG, MAXF | NEG));
        assert!(!compare_float(Eq, F32, false, MIN_SUB, 0));
        assert!(compare_float(Eq, F32, true, MIN_SUB, 0));
        assert!(compare_float(Ltu, F64, false, d(1.0), d(2.0)));
        assert!(compare_float(Gt, F16, false, 0x3C00, 0x0001));
        assert!(!compare_float(Gt, F16, true, 0x0002, 0x0001));
        assert!(compare_float(Gt, BF16, true, 0x0002, 0x0001)); // bf16 ignores .ftz
        assert_eq!(compare_float_x2(Lt, F16x2, false, 0x3C00_4000, 0x4000_3C00), (false, true));
        assert_eq!(compare_float_x2(Geu, BF16x2, false, 0x7FC0_0000, 0x3F80_3F80), (false, true));
        assert!(compare_float(Lt, F16x2, false, 0x0000_3C00, 0x0000_4000)); // element 0
        assert!(crate::compare(Neu, F32, false, nan, nan));
    }

    #[test]
    fn testp_classes() {
        use TestpClass::*;
        let cases: [(u64, [bool; 6]); 7] = [
            (0, [true, false, true, false, true, false]),
            (NEG, [true, false, true, false, true, false]),
            (ONE, [true, false, true, false, true, false]),
            (MIN_SUB, [true, false, true, false, false, true]),
            (INF | NEG, [false, true, true, false, false, false]),
            (0x7F80_0001, [false, false, false, true, false, false]),
            (MAXF, [true, false, true, false, true, false]),
        ];
        for (x, want) in cases {
            for (class, w) in [Finite, Infinite, Number, NotANumber, Normal, Subnormal].into_iter().zip(want) {
                assert_eq!(testp(class, F32, x), w, "{class:?} {x:#x}");
            }
        }
        assert!(testp(Subnormal, F64, 1));
        assert!(testp(Normal, F64, d(-0.0)));
        assert!(testp(NotANumber, F64, 0x7FF0_0000_0000_0001));
    }

    // ---------------------------------------------------------------- properties

    fn any_op() -> impl Strategy<Value = FloatOp> {
        prop::sample::select(FloatOp::UNIT)
    }

    fn any_f32() -> impl Strategy<Value = f32> {
        prop_oneof![
            any::<u32>().prop_map(f32::from_bits),
            (-1e6f32..1e6),
            prop::sample::select(vec![0.0, -0.0, 1.0, f32::MIN_POSITIVE, 1e-45, f32::MAX, f32::INFINITY, f32::NAN]),
        ]
    }

    /// Position of a float in the ordered sequence of floats (-0 and +0 share 0).
    fn key(x: f32) -> i64 {
        let m = (x.to_bits() & 0x7FFF_FFFF) as i64;
        if x.is_sign_negative() {
            -m
        } else {
            m
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]

        #[test]
        fn never_panics(op in any_op(), ti in 0..ALL_TYPES.len(), r in rnd(), ftz: bool, sat: bool,
                        s in prop::array::uniform3(any::<u64>()), c in 0usize..18) {
            let ty = ALL_TYPES[ti];
            let _ = eval_float(op, ty, FMode { rnd: r, ftz, sat }, s);
            let cmp = [CmpOp::Eq, CmpOp::Ne, CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge, CmpOp::Lo, CmpOp::Ls,
                CmpOp::Hi, CmpOp::Hs, CmpOp::Equ, CmpOp::Neu, CmpOp::Ltu, CmpOp::Leu, CmpOp::Gtu, CmpOp::Geu,
                CmpOp::Num, CmpOp::Nan][c];
            let _ = compare_float(cmp, ty, ftz, s[0], s[1]);
            let _ = compare_float_x2(cmp, ty, ftz, s[0], s[1]);
            for class in [TestpClass::Finite, TestpClass::Normal, TestpClass::Subnormal] {
                let _ = testp(class, ty, s[2]);
            }
        }

        #[test]
        fn rn_f32_matches_native(a in any_f32(), b in any_f32(), c in any_f32()) {
            let check = |op: FloatOp, native: f32| {
                let r = eval_float(op, F32, RN, [f(a), f(b), f(c)]) as u32;
                if native.is_nan() { r == CNAN as u32 } else { r == native.to_bits() }
            };
            prop_assert!(check(FloatOp::Add, a + b));
            prop_assert!(check(FloatOp::Sub, a - b));
            prop_assert!(check(FloatOp::Mul, a * b));
            prop_assert!(check(FloatOp::Div, a / b));
            prop_assert!(check(FloatOp::Fma, a.mul_add(b, c)));
            prop_assert!(check(FloatOp::Sqrt, a.sqrt()));
        }

        #[test]
        fn soft_float_agrees_with_native(a in any_f32(), b in any_f32(), c in any_f32(), x: f64, y: f64, z: f64) {
            // The directed-rounding paths (soft-float) give the hardware's
            // round-to-nearest results when asked for round-to-nearest.
            use crate::fp::{soft, Arith};
            use rustc_apfloat::Round::NearestTiesToEven as N;
            for (op, native) in [(Arith::Add, a + b), (Arith::Mul, a * b), (Arith::Div, a / b),
                                 (Arith::Fma, a.mul_add(b, c)), (Arith::Sqrt, a.sqrt())] {
                let r = soft(crate::fp::Fmt::F32, op, f(a), f(b), f(c), N) as u32;
                prop_assert!(native.is_nan() && f32::from_bits(r).is_nan() || r == native.to_bits(), "{:?}", op);
            }
            for (op, native) in [(Arith::Sub, x - y), (Arith::Mul, x * y), (Arith::Div, x / y),
                                 (Arith::Fma, x.mul_add(y, z)), (Arith::Sqrt, x.sqrt())] {
                let r = soft(crate::fp::Fmt::F64, op, d(x), d(y), d(z), N);
                prop_assert!(native.is_nan() && f64::from_bits(r).is_nan() || r == native.to_bits(), "{:?}", op);
            }
        }

        #[test]
        fn directed_rounding_brackets_exact(a in any_f32(), b in any_f32()) {
            let (a, b) = (if a.is_finite() { a } else { 1.5 }, if b.is_finite() { b } else { -0.75 });
            // f32 products are exact in f64; sums are when the exponents are close.
            let exact_sum = a as f64 + b as f64;
            let sum_exact = (exact_sum - a as f64) - b as f64 == 0.0 && exact_sum.is_finite();
            let cases = [(FloatOp::Mul, a as f64 * b as f64, true), (FloatOp::Add, exact_sum, sum_exact)];
            for (op, exact, ok) in cases {
                if !ok { continue; }
                let g = |r| f32::from_bits(eval_float(op, F32, rm(r), [f(a), f(b), 0]) as u32) as f64;
                let (lo, hi, z) = (g(Rounding::Rm), g(Rounding::Rp), g(Rounding::Rz));
                prop_assert!(lo <= exact && exact <= hi, "{:?} {} {} {}", op, lo, exact, hi);
                let toward_zero = if exact < 0.0 { hi } else { lo };
                prop_assert_eq!(z, toward_zero);
                let n = g(Rounding::Rn);
                prop_assert!(n == lo || n == hi);
                if lo != hi {
                    prop_assert_eq!(key(lo as f32) + 1, key(hi as f32), "adjacent");
                }
            }
        }

        #[test]
        fn directed_sqrt_brackets(x in 0u32..0x7F80_0000) {
            let v = f32::from_bits(x) as f64;
            let g = |r| f32::from_bits(eval_float(FloatOp::Sqrt, F32, rm(r), [x as u64, 0, 0]) as u32) as f64;
            let (lo, hi) = (g(Rounding::Rm), g(Rounding::Rp));
            prop_assert!(lo * lo <= v && v <= hi * hi);
            prop_assert_eq!(g(Rounding::Rz), lo);
            prop_assert!(hi == lo || f32::from_bits((lo as f32).to_bits() + 1) as f64 == hi);
        }

        #[test]
        fn half_fast_paths_match_soft(a: u16, b: u16, opi in 0usize..5, bf: bool) {
            use crate::fp::{soft, Arith, Fmt};
            let (ty, fmt) = if bf { (BF16, Fmt::BF16) } else { (F16, Fmt::F16) };
            let (op, ar) = [(FloatOp::Add, Arith::Add), (FloatOp::Sub, Arith::Sub), (FloatOp::Mul, Arith::Mul),
                            (FloatOp::Div, Arith::Div), (FloatOp::Sqrt, Arith::Sqrt)][opi];
            let r = eval_float(op, ty, RN, [a as u64, b as u64, 0]);
            let s = soft(fmt, ar, a as u64, b as u64, 0, rustc_apfloat::Round::NearestTiesToEven);
            if fmt.is_nan(s) { prop_assert_eq!(r, 0x7FFF); } else { prop_assert_eq!(r, s); }
        }

        #[test]
        fn x2_is_lanewise(a: u32, b: u32, c: u32, opi in 0usize..6) {
            let op = [FloatOp::Add, FloatOp::Mul, FloatOp::Fma, FloatOp::Min, FloatOp::Neg, FloatOp::MaxNan][opi];
            for (x2, one) in [(F16x2, F16), (BF16x2, BF16)] {
                let r = eval_float(op, x2, RN, [a as u64, b as u64, c as u64]);
                let lane = |sh: u32| eval_float(op, one, RN, [(a >> sh) as u64 & 0xFFFF, (b >> sh) as u64 & 0xFFFF,
                    (c >> sh) as u64 & 0xFFFF]);
                prop_assert_eq!(r, lane(0) | lane(16) << 16);
            }
        }

        #[test]
        fn ftz_results_are_never_subnormal(a: u32, b: u32, c: u32, r in rnd(), opi in 0usize..5) {
            let op = [FloatOp::Add, FloatOp::Mul, FloatOp::Fma, FloatOp::Div, FloatOp::Rcp][opi];
            let v = eval_float(op, F32, md(r, true, false), [a as u64, b as u64, c as u64]);
            prop_assert!(!crate::fp::Fmt::F32.is_subnormal(v));
            let h = eval_float(op, F16, md(r, true, false), [a as u64 & 0xFFFF, b as u64 & 0xFFFF, c as u64 & 0xFFFF]);
            prop_assert!(!crate::fp::Fmt::F16.is_subnormal(h));
        }
    }
}
