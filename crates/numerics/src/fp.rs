//! Shared floating-point machinery: format descriptions, NaN policy,
//! flush-to-zero, saturation, and correctly rounded soft-float arithmetic in
//! every rounding mode (through `rustc_apfloat`, plus an exact integer square
//! root that `rustc_apfloat` lacks).
//!
//! NaN policy (observed on an sm_90 GPU, see `tests/hw_golden.rs`):
//! * f16, bf16, f32: every NaN result of arithmetic is the canonical NaN
//!   (`0x7fff`, `0x7fff`, `0x7fffffff`), whatever the input payloads.
//! * f64: a NaN operand is propagated, quietened (quiet bit set, payload and
//!   sign kept); a NaN produced from non-NaN operands (inf - inf, 0 * inf,
//!   sqrt(-1)) is `0xfff8000000000000` (the value CUDA calls `CUDART_NAN`).

use rustc_apfloat::ieee::{BFloat, Double, Half, IeeeFloat, Semantics, Single};
use rustc_apfloat::{Float, FloatConvert, Round};

use crate::types::{Rounding, ScalarType};

/// The four binary interchange formats the GPU computes in.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Fmt {
    F16,
    BF16,
    F32,
    F64,
}

/// The NaN an f64 operation produces when no operand is a NaN.
pub const F64_DEFAULT_NAN: u64 = 0xFFF8_0000_0000_0000;

impl Fmt {
    /// The element format of a PTX float type (`f16x2` -> `F16`, `tf32` ->
    /// `F32`, as tf32 values live in f32 containers). Non-float types map by
    /// width so that no input can panic.
    #[inline]
    pub fn of(ty: ScalarType) -> Fmt {
        use ScalarType::*;
        match ty {
            F16 | F16x2 => Fmt::F16,
            BF16 | BF16x2 => Fmt::BF16,
            F32 | TF32 => Fmt::F32,
            F64 => Fmt::F64,
            _ => match ty.bits() {
                0..=16 => Fmt::F16,
                17..=32 => Fmt::F32,
                _ => Fmt::F64,
            },
        }
    }

    #[inline]
    pub const fn bits(self) -> u32 {
        match self {
            Fmt::F16 | Fmt::BF16 => 16,
            Fmt::F32 => 32,
            Fmt::F64 => 64,
        }
    }

    /// Explicit mantissa (fraction) bits.
    #[inline]
    pub const fn man_bits(self) -> u32 {
        match self {
            Fmt::F16 => 10,
            Fmt::BF16 => 7,
            Fmt::F32 => 23,
            Fmt::F64 => 52,
        }
    }

    #[inline]
    pub const fn mask(self) -> u64 {
        match self {
            Fmt::F64 => u64::MAX,
            _ => (1u64 << self.bits()) - 1,
        }
    }

    #[inline]
    pub const fn sign(self) -> u64 {
        1u64 << (self.bits() - 1)
    }

    #[inline]
    pub const fn man_mask(self) -> u64 {
        (1u64 << self.man_bits()) - 1
    }

    #[inline]
    pub const fn exp_mask(self) -> u64 {
        self.mask() & !self.sign() & !self.man_mask()
    }

    /// The quiet bit (most significant fraction bit).
    #[inline]
    pub const fn quiet(self) -> u64 {
        1u64 << (self.man_bits() - 1)
    }

    #[inline]
    pub const fn canonical_nan(self) -> u64 {
        match self {
            Fmt::F16 | Fmt::BF16 => 0x7FFF,
            Fmt::F32 => 0x7FFF_FFFF,
            Fmt::F64 => F64_DEFAULT_NAN,
        }
    }

    #[inline]
    pub const fn one(self) -> u64 {
        match self {
            Fmt::F16 => 0x3C00,
            Fmt::BF16 => 0x3F80,
            Fmt::F32 => 0x3F80_0000,
            Fmt::F64 => 0x3FF0_0000_0000_0000,
        }
    }

    #[inline]
    pub const fn inf(self, neg: bool) -> u64 {
        self.exp_mask() | if neg { self.sign() } else { 0 }
    }

    #[inline]
    pub const fn max_finite(self, neg: bool) -> u64 {
        (self.exp_mask() - (1u64 << self.man_bits())) | self.man_mask() | if neg { self.sign() } else { 0 }
    }

    /// Smallest normal magnitude, as bits.
    #[inline]
    pub const fn min_normal(self) -> u64 {
        1u64 << self.man_bits()
    }

    /// Whether `.ftz` has an effect on this format (f32 and f16 only).
    #[inline]
    pub const fn honours_ftz(self) -> bool {
        matches!(self, Fmt::F16 | Fmt::F32)
    }

    #[inline]
    pub const fn is_nan(self, x: u64) -> bool {
        (x & self.exp_mask()) == self.exp_mask() && (x & self.man_mask()) != 0
    }

    #[inline]
    pub const fn is_inf(self, x: u64) -> bool {
        (x & !self.sign() & self.mask()) == self.exp_mask()
    }

    #[inline]
    pub const fn is_zero(self, x: u64) -> bool {
        (x & !self.sign() & self.mask()) == 0
    }

    #[inline]
    pub const fn is_subnormal(self, x: u64) -> bool {
        (x & self.exp_mask()) == 0 && (x & self.man_mask()) != 0
    }

    #[inline]
    pub const fn is_neg(self, x: u64) -> bool {
        x & self.sign() != 0
    }

    /// Flushes a subnormal to a zero of the same sign.
    #[inline]
    pub const fn flush(self, x: u64) -> u64 {
        if self.is_subnormal(x) {
            x & self.sign()
        } else {
            x
        }
    }

    /// The NaN result of an arithmetic operation whose operands, in the
    /// hardware's priority order, are `prio` (see the module docs).
    #[inline]
    pub fn nan_result(self, prio: &[u64]) -> u64 {
        if self == Fmt::F64 {
            for &x in prio {
                if self.is_nan(x) {
                    return x | self.quiet();
                }
            }
        }
        self.canonical_nan()
    }

    /// `.sat`: clamps to [+0.0, 1.0]; NaN and -0.0 become +0.0.
    #[inline]
    pub fn saturate(self, x: u64) -> u64 {
        if self.is_nan(x) || self.is_neg(x) || self.is_zero(x) {
            0
        } else if (x & self.mask()) >= self.one() {
            self.one()
        } else {
            x
        }
    }

    /// Exact widening to f64 (every format converts exactly).
    #[inline]
    pub fn to_f64(self, x: u64) -> f64 {
        match self {
            Fmt::F16 => half::f16::from_bits(x as u16).to_f64(),
            Fmt::BF16 => half::bf16::from_bits(x as u16).to_f64(),
            Fmt::F32 => f32::from_bits(x as u32) as f64,
            Fmt::F64 => f64::from_bits(x),
        }
    }

    /// Round-to-nearest-even narrowing of an f64 (NaN payloads not kept).
    #[inline]
    pub fn from_f64_rn(self, v: f64) -> u64 {
        match self {
            Fmt::F64 => v.to_bits(),
            _ => convert(Fmt::F64, self, v.to_bits(), Round::NearestTiesToEven),
        }
    }
}

/// Maps a PTX rounding modifier to an IEEE rounding direction (`None`, and
/// the integral forms, to their float counterparts).
#[inline]
pub fn round_of(r: Option<Rounding>) -> Round {
    match r {
        None | Some(Rounding::Rn) | Some(Rounding::Rni) => Round::NearestTiesToEven,
        Some(Rounding::Rz) | Some(Rounding::Rzi) => Round::TowardZero,
        Some(Rounding::Rm) | Some(Rounding::Rmi) => Round::TowardNegative,
        Some(Rounding::Rp) | Some(Rounding::Rpi) => Round::TowardPositive,
        Some(Rounding::Rna) => Round::NearestTiesToAway,
    }
}

// ------------------------------------------------------------------ soft float

/// f32 precision with f64's exponent range: computing in it and then checking
/// for results below 2^-126 gives flush-to-zero with tininess detected after
/// rounding to 24 bits but before denormalisation, as the hardware does.
pub struct SingleWideS;
impl Semantics for SingleWideS {
    const BITS: usize = 1 + 11 + 23;
    const EXP_BITS: usize = 11;
}
type SingleWide = IeeeFloat<SingleWideS>;

/// f16 precision with an 8-bit exponent, for `.ftz` f16 arithmetic.
pub struct HalfWideS;
impl Semantics for HalfWideS {
    const BITS: usize = 1 + 8 + 10;
    const EXP_BITS: usize = 8;
}
type HalfWide = IeeeFloat<HalfWideS>;

/// A correctly rounded arithmetic operation.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Arith {
    Add,
    Sub,
    Mul,
    Div,
    Fma,
    Sqrt,
}

macro_rules! dispatch {
    ($fmt:expr, $F:ident => $body:expr) => {
        dispatch!(@arms $fmt, $F => $body; F16 Half, BF16 BFloat, F32 Single, F64 Double)
    };
    (@arms $fmt:expr, $F:ident => $body:expr; $($fmt_name:ident $ty:ident),*) => {
        match $fmt {
            $(Fmt::$fmt_name => {
                type $F = $ty;
                $body
            })*
        }
    };
}

#[inline]
fn apply<F: Float>(op: Arith, a: F, b: F, c: F, r: Round) -> F {
    match op {
        Arith::Add => a.add_r(b, r).value,
        Arith::Sub => a.sub_r(b, r).value,
        Arith::Mul => a.mul_r(b, r).value,
        Arith::Div => a.div_r(b, r).value,
        Arith::Fma => a.mul_add_r(b, c, r).value,
        Arith::Sqrt => sqrt_r(a, r),
    }
}

/// Integer square root (floor) of a u128.
fn isqrt_u128(n: u128) -> u128 {
    if n == 0 {
        return 0;
    }
    let mut x = (n as f64).sqrt() as u128;
    // Two Newton steps from a 53-bit estimate reach the floor within one.
    for _ in 0..2 {
        if x == 0 {
            x = 1;
        }
        x = (x + n / x) / 2;
    }
    while x.checked_mul(x).is_none_or(|sq| sq > n) {
        x -= 1;
    }
    while (x + 1).checked_mul(x + 1).is_some_and(|sq| sq <= n) {
        x += 1;
    }
    x
}

/// Correctly rounded square root in any rounding mode.
fn sqrt_r<F: Float>(x: F, r: Round) -> F {
    if x.is_nan() || x.is_zero() || (x.is_infinite() && !x.is_negative()) {
        return x;
    }
    if x.is_negative() {
        return F::NAN;
    }
    // x = m * 2^(e - (p - 1)) with m an integer of p bits.
    let p = F::PRECISION as i32;
    let e = x.ilogb();
    let m = x.scalbn(p - 1 - e).to_u128(128).value;
    let mut exp = e - (p - 1);
    let mut m = m;
    if exp & 1 != 0 {
        m <<= 1;
        exp -= 1;
    }
    // sqrt(m * 2^72) has at least 36 + p/2 >= p + 2 bits: round it to p bits
    // by hand (the result is always normal, so no subnormal rounding).
    let n = m << 72;
    let q = isqrt_u128(n);
    let sticky = q * q != n;
    let nb = 128 - q.leading_zeros() as i32;
    let shift = (nb - p) as u32;
    let mut keep = q >> shift;
    let rem = q & ((1u128 << shift) - 1);
    let half = 1u128 << (shift - 1);
    let up = match r {
        Round::NearestTiesToEven => rem > half || (rem == half && (sticky || keep & 1 == 1)),
        Round::NearestTiesToAway => rem >= half,
        Round::TowardPositive => rem != 0 || sticky,
        Round::TowardZero | Round::TowardNegative => false,
    };
    keep += up as u128;
    F::from_u128(keep).value.scalbn(exp / 2 - 36 + shift as i32)
}

/// Correctly rounded `op` on raw bit patterns of `fmt` (no NaN policy, no
/// ftz; NaN results carry whatever payload the soft-float produced).
#[inline]
pub fn soft(fmt: Fmt, op: Arith, a: u64, b: u64, c: u64, r: Round) -> u64 {
    dispatch!(fmt, F => {
        apply(op, F::from_bits(a as u128), F::from_bits(b as u128), F::from_bits(c as u128), r)
            .to_bits() as u64
    })
}

fn soft_wide<W>(fmt: Fmt, op: Arith, a: u64, b: u64, c: u64, r: Round) -> u64
where
    W: Float + FloatConvert<Single> + FloatConvert<Half>,
    Single: FloatConvert<W>,
    Half: FloatConvert<W>,
{
    let widen = |x: u64| -> W {
        let mut li = false;
        match fmt {
            Fmt::F16 => Half::from_bits(x as u128).convert(&mut li).value,
            _ => Single::from_bits(x as u128).convert(&mut li).value,
        }
    };
    let v: W = apply(op, widen(a), widen(b), widen(c), r);
    if v.is_finite() && !v.is_zero() {
        let min_normal: W = {
            let mut li = false;
            match fmt {
                Fmt::F16 => Half::smallest_normalized().convert(&mut li).value,
                _ => Single::smallest_normalized().convert(&mut li).value,
            }
        };
        if v.abs() < min_normal {
            return if v.is_negative() { fmt.sign() } else { 0 };
        }
    }
    let mut li = false;
    match fmt {
        Fmt::F16 => FloatConvert::<Half>::convert_r(v, r, &mut li).value.to_bits() as u64,
        _ => FloatConvert::<Single>::convert_r(v, r, &mut li).value.to_bits() as u64,
    }
}

/// Like [`soft`], but with `.ftz` output semantics for f32/f16: a result whose
/// magnitude, rounded to the format's precision with an unbounded exponent,
/// is below the smallest normal becomes a zero of its sign. Inputs must
/// already be flushed.
#[inline]
pub fn soft_ftz(fmt: Fmt, op: Arith, a: u64, b: u64, c: u64, r: Round) -> u64 {
    match fmt {
        Fmt::F32 => soft_wide::<SingleWide>(fmt, op, a, b, c, r),
        Fmt::F16 => soft_wide::<HalfWide>(fmt, op, a, b, c, r),
        _ => soft(fmt, op, a, b, c, r),
    }
}

/// Converts between formats with rounding `r` (NaN payloads as the
/// soft-float leaves them; callers apply their NaN policy).
#[inline]
pub fn convert(src: Fmt, dst: Fmt, x: u64, r: Round) -> u64 {
    dispatch!(src, S => {
        let v = S::from_bits(x as u128);
        dispatch!(dst, D => {
            let mut li = false;
            let out: D = v.convert_r(r, &mut li).value;
            out.to_bits() as u64
        })
    })
}

/// Converts with rounding `r`, also reporting whether the result is inexact.
#[inline]
pub fn convert_inexact(src: Fmt, dst: Fmt, x: u64, r: Round) -> (u64, bool) {
    dispatch!(src, S => {
        let v = S::from_bits(x as u128);
        dispatch!(dst, D => {
            let mut li = false;
            let out: D = v.convert_r(r, &mut li).value;
            (out.to_bits() as u64, li)
        })
    })
}

/// Rounds to an integral value in the same format.
#[inline]
pub fn round_integral(fmt: Fmt, x: u64, r: Round) -> u64 {
    dispatch!(fmt, F => F::from_bits(x as u128).round_to_integral(r).value.to_bits() as u64)
}

/// Converts a mathematical integer to `fmt` with rounding `r`.
#[inline]
pub fn from_i128(fmt: Fmt, v: i128, r: Round) -> u64 {
    dispatch!(fmt, F => F::from_i128_r(v, r).value.to_bits() as u64)
}

/// Division by directed/nearest rounding of `1 / x` (used by `rcp`).
#[inline]
pub fn recip(fmt: Fmt, x: u64, r: Round) -> u64 {
    soft(fmt, Arith::Div, fmt.one(), x, 0, r)
}

/// Converts a mathematical integer to `fmt` with rounding `r`, also
/// reporting whether the result is inexact.
#[inline]
pub fn from_i128_inexact(fmt: Fmt, v: i128, r: Round) -> (u64, bool) {
    dispatch!(fmt, F => {
        let s = F::from_i128_r(v, r);
        (s.value.to_bits() as u64, s.status.contains(rustc_apfloat::Status::INEXACT))
    })
}

/// f64 -> f32 narrowing under `.ftz`: results that are below 2^-126 after
/// rounding to 24 bits with an unbounded exponent become signed zeros.
pub fn narrow_f64_to_f32_ftz(x: u64, r: Round) -> u64 {
    let v = Double::from_bits(x as u128);
    let mut li = false;
    let w: SingleWide = v.convert_r(r, &mut li).value;
    if w.is_finite() && !w.is_zero() {
        let min_normal: SingleWide = Single::smallest_normalized().convert(&mut li).value;
        if w.abs() < min_normal {
            return if w.is_negative() { Fmt::F32.sign() } else { 0 };
        }
    }
    let out: Single = w.convert_r(r, &mut li).value;
    out.to_bits() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn isqrt_exact() {
        for n in [0u128, 1, 2, 3, 4, 15, 16, 17, 1 << 100, (1 << 126) + 12345, u128::MAX >> 1] {
            let q = isqrt_u128(n);
            assert!(q * q <= n && (q + 1) * (q + 1) > n, "{n}");
        }
    }

    #[test]
    fn sqrt_soft_matches_native_rn() {
        for x in [2.0f64, 3.0, 0.5, 1e-310, 5e-324, 1.7976931348623157e308, 10.0, 0.1] {
            let r = soft(Fmt::F64, Arith::Sqrt, x.to_bits(), 0, 0, Round::NearestTiesToEven);
            assert_eq!(r, x.sqrt().to_bits(), "{x}");
        }
        for x in [2.0f32, 3.0, 1e-45, 1e-40, 3.4e38, 0.3] {
            let r = soft(Fmt::F32, Arith::Sqrt, x.to_bits() as u64, 0, 0, Round::NearestTiesToEven);
            assert_eq!(r as u32, x.sqrt().to_bits(), "{x}");
        }
    }

    #[test]
    fn sqrt_directed_brackets() {
        let x = 2.0f64.to_bits();
        let lo = soft(Fmt::F64, Arith::Sqrt, x, 0, 0, Round::TowardNegative);
        let hi = soft(Fmt::F64, Arith::Sqrt, x, 0, 0, Round::TowardPositive);
        let z = soft(Fmt::F64, Arith::Sqrt, x, 0, 0, Round::TowardZero);
        assert_eq!(hi, lo + 1);
        assert_eq!(z, lo);
        // Exact squares are exact in every mode.
        let x = 9.0f64.to_bits();
        for r in [Round::TowardNegative, Round::TowardPositive, Round::TowardZero] {
            assert_eq!(f64::from_bits(soft(Fmt::F64, Arith::Sqrt, x, 0, 0, r)), 3.0);
        }
    }

    #[test]
    fn ftz_tininess_after_rounding_unbounded() {
        // (1 - 2^-24) * 2^-126 is exact with an unbounded exponent, below 2^-126: flushed.
        let r = soft_ftz(Fmt::F32, Arith::Mul, 0x3F7F_FFFF, 0x0080_0000, 0, Round::NearestTiesToEven);
        assert_eq!(r, 0);
        // Without ftz it rounds (ties-to-even) up to the smallest normal.
        let r = soft(Fmt::F32, Arith::Mul, 0x3F7F_FFFF, 0x0080_0000, 0, Round::NearestTiesToEven);
        assert_eq!(r, 0x0080_0000);
    }

    #[test]
    fn format_constants() {
        assert_eq!(Fmt::F32.max_finite(false), 0x7F7F_FFFF);
        assert_eq!(Fmt::F16.max_finite(true), 0xFBFF);
        assert_eq!(Fmt::BF16.inf(false), 0x7F80);
        assert_eq!(Fmt::F64.exp_mask(), 0x7FF0_0000_0000_0000);
        assert!(Fmt::F16.is_subnormal(0x8001));
        assert_eq!(Fmt::F32.flush(0x8000_0001), 0x8000_0000);
        assert_eq!(Fmt::F32.saturate(0x8000_0000), 0);
        assert_eq!(Fmt::F32.saturate(0x4000_0000), 0x3F80_0000);
        assert_eq!(Fmt::F64.nan_result(&[1, 0x7FF0_0000_0000_0001]), 0x7FF8_0000_0000_0001);
        assert_eq!(Fmt::F64.nan_result(&[1, 2]), F64_DEFAULT_NAN);
    }
}
