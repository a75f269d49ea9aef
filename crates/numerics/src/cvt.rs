//! `cvt`: conversions between every pair of PTX scalar types, with rounding
//! (`.rn .rz .rm .rp .rna` to floats, `.rni .rzi .rmi .rpi` to integral
//! values), `.ftz` and `.sat`, as the PTX ISA's cvt section defines them.
//!
//! Where the ISA leaves a result open, this follows an sm_90 GPU (see
//! `tests/hw_golden.rs`):
//! * NaN: f32 -> f64 and f64 -> f32 keep sign and payload (shifted) and set
//!   the quiet bit; every other conversion to f16, bf16 or f32 (including
//!   f32 -> f32 with `.ftz`/`.sat`/`.rni`...) gives the canonical NaN
//!   (`0x7fff`, `0x7fffffff`); f64 -> f64 quietens. Float to integer: NaN -> 0.
//! * `tf32` results are f32 bit patterns with the low 13 bits clear; a NaN
//!   operand just has those bits cleared.
//! * `.ftz` (f32 source or destination) flushes subnormal f32 inputs and f32
//!   results to zero; `.sat` on a float destination clamps to [0, 1] (NaN and
//!   -0.0 to +0.0); `.sat` on an integer destination clamps to its range.

use rustc_apfloat::Round;

use crate::fp::{self, Fmt};
use crate::types::{norm, sext, zext, FMode, Rounding, ScalarType};

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Kind {
    Int { bits: u32, signed: bool },
    Float(Fmt),
    Tf32,
}

#[inline]
fn kind(ty: ScalarType) -> Kind {
    use ScalarType::*;
    match ty {
        F16 | F16x2 => Kind::Float(Fmt::F16),
        BF16 | BF16x2 => Kind::Float(Fmt::BF16),
        F32 => Kind::Float(Fmt::F32),
        F64 => Kind::Float(Fmt::F64),
        TF32 => Kind::Tf32,
        B128 => Kind::Int { bits: 64, signed: false },
        _ => Kind::Int { bits: ty.bits(), signed: ty.is_signed() },
    }
}

/// Converts `bits` of type `src` to type `dst`. Integer results come back
/// sign-extended to 64 bits for signed `dst`, zero-extended otherwise; float
/// results as their raw bit pattern. Float-to-integer conversions saturate
/// to the destination range and map NaN to 0, as the PTX ISA specifies.
///
/// Rounding: `m.rnd == None` means round-to-nearest-even for conversions to
/// a float (`.rna` for tf32), and round-toward-zero (`.rzi`) for float to
/// integer, which the ISA requires to carry an explicit modifier. A float
/// rounding mode (`.rn` ...) on a float-to-integer conversion acts as its
/// integral counterpart (`.rni` ...); an integral mode on a float-to-float
/// conversion rounds to an integral value first.
#[inline]
pub fn cvt(dst: ScalarType, src: ScalarType, m: FMode, bits: u64) -> u64 {
    cvt_with(dst, src, m, false, false, bits)
}

/// [`cvt`] with the `.relu` (negative results and -0.0 become +0.0, NaN stays
/// NaN) and `.satfinite` (infinities and out-of-range values become the
/// largest finite value of their sign; NaN stays NaN) modifiers of the
/// f16/bf16/tf32 conversions.
pub fn cvt_with(dst: ScalarType, src: ScalarType, m: FMode, relu: bool, satfinite: bool, bits: u64) -> u64 {
    match (kind(dst), kind(src)) {
        (Kind::Int { bits: db, signed: ds }, Kind::Int { bits: sb, signed: ss }) => {
            let v: i128 = if ss { sext(bits, sb) as i64 as i128 } else { zext(bits, sb) as i128 };
            let v = if m.sat {
                let (lo, hi) = int_range(db, ds);
                v.clamp(lo, hi)
            } else {
                v
            };
            norm(v as u64, db, ds)
        }
        (Kind::Int { bits: db, signed: ds }, Kind::Float(sf)) => float_to_int(db, ds, sf, m, bits),
        (Kind::Int { bits: db, signed: ds }, Kind::Tf32) => float_to_int(db, ds, Fmt::F32, m, bits),
        (Kind::Float(df), Kind::Int { bits: sb, signed: ss }) => {
            let v: i128 = if ss { sext(bits, sb) as i64 as i128 } else { zext(bits, sb) as i128 };
            let r = int_to_float(df, v, fp::round_of(m.rnd));
            post_float(df, m, relu, satfinite, r)
        }
        (Kind::Tf32, Kind::Int { bits: sb, signed: ss }) => {
            let v: i128 = if ss { sext(bits, sb) as i64 as i128 } else { zext(bits, sb) as i128 };
            let (r, inexact) = fp::from_i128_inexact(Fmt::F32, v, Round::TowardZero);
            tf32_from_f32(r | inexact as u64, m, satfinite)
        }
        (Kind::Float(df), Kind::Float(sf)) => float_to_float(df, sf, m, relu, satfinite, bits),
        (Kind::Float(df), Kind::Tf32) => float_to_float(df, Fmt::F32, m, relu, satfinite, bits),
        (Kind::Tf32, Kind::Float(sf)) => {
            let x = bits & sf.mask();
            let x = if m.ftz && sf == Fmt::F32 { sf.flush(x) } else { x };
            let x = if let Some(r) = integral(m.rnd) { fp::round_integral(sf, x, r) } else { x };
            let x32 = match sf {
                Fmt::F32 => x,
                _ if sf.is_nan(x) => nan_convert(sf, Fmt::F32, x),
                _ => {
                    // Round to odd into f32 so the final tf32 rounding is exact.
                    let (r, inexact) = fp::convert_inexact(sf, Fmt::F32, x, Round::TowardZero);
                    r | inexact as u64
                }
            };
            let m = FMode { rnd: m.rnd.filter(|r| integral(Some(*r)).is_none()), ..m };
            tf32_from_f32(x32, m, satfinite)
        }
        (Kind::Tf32, Kind::Tf32) => {
            let m = FMode { rnd: m.rnd.filter(|r| integral(Some(*r)).is_none()), ..m };
            tf32_from_f32(bits & 0xFFFF_FFFF, m, satfinite)
        }
    }
}

/// `cvt.rn[.relu][.satfinite].f16x2.f32 d, a, b` and the bf16x2 form: packs
/// two f32 values, `a` into the upper half and `b` into the lower half.
#[inline]
pub fn cvt_pack_x2(dst: ScalarType, m: FMode, a: f32, b: f32) -> u32 {
    cvt_pack_x2_with(dst, m, false, false, a, b)
}

/// [`cvt_pack_x2`] with `.relu` and `.satfinite` (see [`cvt_with`]).
pub fn cvt_pack_x2_with(dst: ScalarType, m: FMode, relu: bool, satfinite: bool, a: f32, b: f32) -> u32 {
    let elem = match dst {
        ScalarType::BF16 | ScalarType::BF16x2 => ScalarType::BF16,
        _ => ScalarType::F16,
    };
    let one = |x: f32| cvt_with(elem, ScalarType::F32, m, relu, satfinite, x.to_bits() as u64) as u32 & 0xFFFF;
    (one(a) << 16) | one(b)
}

#[inline]
fn int_range(bits: u32, signed: bool) -> (i128, i128) {
    let bits = bits.clamp(1, 64);
    if signed {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
}

/// The integral rounding an `.rni`-style modifier asks for, if any.
#[inline]
fn integral(r: Option<Rounding>) -> Option<Round> {
    match r {
        Some(Rounding::Rni) => Some(Round::NearestTiesToEven),
        Some(Rounding::Rzi) => Some(Round::TowardZero),
        Some(Rounding::Rmi) => Some(Round::TowardNegative),
        Some(Rounding::Rpi) => Some(Round::TowardPositive),
        _ => None,
    }
}

fn float_to_int(db: u32, ds: bool, sf: Fmt, m: FMode, bits: u64) -> u64 {
    let x = bits & sf.mask();
    let x = if m.ftz && sf == Fmt::F32 { sf.flush(x) } else { x };
    if sf.is_nan(x) {
        // ISA: 0, unless the source is f64 or the destination 64-bit, in
        // which case 1 << (bits(dst) - 1) (MININT, or MAXINT/2 + 1 unsigned).
        return if sf == Fmt::F64 || db == 64 { norm(1u64 << (db.clamp(1, 64) - 1), db, ds) } else { 0 };
    }
    let v = sf.to_f64(x);
    let r = match m.rnd {
        Some(Rounding::Rn | Rounding::Rni) => v.round_ties_even(),
        Some(Rounding::Rm | Rounding::Rmi) => v.floor(),
        Some(Rounding::Rp | Rounding::Rpi) => v.ceil(),
        Some(Rounding::Rna) => v.round(),
        None | Some(Rounding::Rz | Rounding::Rzi) => v.trunc(),
    };
    // `as i128` saturates (infinities included); then clamp to the destination.
    let (lo, hi) = int_range(db, ds);
    let i = (r as i128).clamp(lo, hi);
    norm(i as u64, db, ds)
}

/// The NaN a float-to-float conversion produces, as the hardware does it:
/// f16 -> f64, bf16 -> f64, f32 -> f64 and f64 -> anything keep the sign and
/// the payload (shifted) and set the quiet bit; bf16 -> f32 only shifts (the
/// ISA leaves that NaN unspecified); everything else gives the canonical NaN.
fn nan_convert(sf: Fmt, df: Fmt, x: u64) -> u64 {
    let neg = sf.is_neg(x);
    let man = x & sf.man_mask();
    let with = |m: u64| if neg { df.sign() } else { 0 } | df.exp_mask() | m;
    match (sf, df) {
        (Fmt::BF16, Fmt::F32) => (x & 0xFFFF) << 16,
        (_, Fmt::F64) if sf != Fmt::F64 => with((man << (df.man_bits() - sf.man_bits())) | df.quiet()),
        (Fmt::F64, _) => with((man >> (sf.man_bits() - df.man_bits())) | df.quiet()),
        _ => df.canonical_nan(),
    }
}

#[inline]
fn int_to_float(df: Fmt, v: i128, r: Round) -> u64 {
    if r == Round::NearestTiesToEven {
        match df {
            Fmt::F32 => return (v as f32).to_bits() as u64,
            Fmt::F64 => return (v as f64).to_bits(),
            _ => {}
        }
    }
    fp::from_i128(df, v, r)
}

/// `.relu`, `.satfinite`, `.ftz` (f32 results) and `.sat` on a float result.
#[inline]
fn post_float(df: Fmt, m: FMode, relu: bool, satfinite: bool, r: u64) -> u64 {
    let mut r = r;
    if df.is_nan(r) {
        return if m.sat { 0 } else { r };
    }
    if relu && df.is_neg(r) {
        r = 0;
    }
    if satfinite && df.is_inf(r) {
        r = df.max_finite(df.is_neg(r));
    }
    if m.ftz && df == Fmt::F32 {
        r = df.flush(r);
    }
    if m.sat {
        r = df.saturate(r);
    }
    r
}

fn float_to_float(df: Fmt, sf: Fmt, m: FMode, relu: bool, satfinite: bool, bits: u64) -> u64 {
    let x = bits & sf.mask();
    let x = if m.ftz && sf == Fmt::F32 { sf.flush(x) } else { x };
    if sf.is_nan(x) {
        let r = if sf == df && (sf != Fmt::F64 && (m.ftz || m.rnd.is_some())) {
            // cvt.ftz.f32.f32, cvt.rni.f32.f32 ...: the arithmetic canonicalises.
            sf.canonical_nan()
        } else if sf == df {
            // A plain move (f32, f16, bf16) or f64 rounding (quietens).
            if sf == Fmt::F64 {
                x | sf.quiet()
            } else {
                x
            }
        } else if m.ftz && sf == Fmt::F32 {
            // The flush canonicalises first (cvt.ftz.f64.f32).
            nan_convert(sf, df, sf.canonical_nan())
        } else {
            nan_convert(sf, df, x)
        };
        let r = if relu { df.canonical_nan() } else { r };
        return if m.sat { 0 } else { r };
    }
    let r = match integral(m.rnd) {
        Some(ir) => {
            let xi = fp::round_integral(sf, x, ir);
            fp::convert(sf, df, xi, Round::NearestTiesToEven)
        }
        None => {
            let rnd = fp::round_of(m.rnd);
            if sf == df {
                x
            } else if m.ftz && df == Fmt::F32 && sf == Fmt::F64 {
                fp::narrow_f64_to_f32_ftz(x, rnd)
            } else if sf == Fmt::F32 && df == Fmt::F64 {
                (f32::from_bits(x as u32) as f64).to_bits()
            } else if sf == Fmt::F64 && df == Fmt::F32 && rnd == Round::NearestTiesToEven {
                (f64::from_bits(x) as f32).to_bits() as u64
            } else {
                fp::convert(sf, df, x, rnd)
            }
        }
    };
    post_float(df, m, relu, satfinite, r)
}

/// Rounds an f32 bit pattern to tf32 (low 13 bits cleared) with `m.rnd`
/// (`.rna` when `None`).
///
/// NaN: `.rna` clears the low bits of the NaN; `.rn`/`.rz` give `0x7fffe000`.
/// `.satfinite` turns an infinite result into the largest finite tf32 value
/// of its sign; with `.rna`, as on sm_90, it subtracts one tf32 ulp from
/// every result whose exponent is all ones, NaNs included (a NaN stays a NaN
/// unless its payload was a single ulp).
fn tf32_from_f32(x: u64, m: FMode, satfinite: bool) -> u64 {
    let x = x & 0xFFFF_FFFF;
    let f = Fmt::F32;
    let x = if m.ftz { f.flush(x) } else { x };
    let rna = matches!(m.rnd, None | Some(Rounding::Rna));
    let mut r = if f.is_nan(x) {
        if rna {
            x & !0x1FFF
        } else {
            0x7FFF_E000
        }
    } else {
        let sign = x & 0x8000_0000;
        let mag = x & 0x7FFF_FFFF;
        let low = mag & 0x1FFF;
        let trunc = mag & !0x1FFF;
        let up = match m.rnd {
            None | Some(Rounding::Rna) => low >= 0x1000,
            Some(Rounding::Rn | Rounding::Rni) => low > 0x1000 || (low == 0x1000 && trunc & 0x2000 != 0),
            Some(Rounding::Rz | Rounding::Rzi) => false,
            Some(Rounding::Rp | Rounding::Rpi) => low != 0 && sign == 0,
            Some(Rounding::Rm | Rounding::Rmi) => low != 0 && sign != 0,
        };
        sign | (trunc + if up { 0x2000 } else { 0 })
    };
    if satfinite && r & 0x7F80_0000 == 0x7F80_0000 {
        if rna {
            r -= 0x2000;
        } else if f.is_inf(r) {
            r = (r & 0x8000_0000) | 0x7F7F_E000;
        }
    }
    if m.sat {
        r = f.saturate(r);
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{rnd, ALL_TYPES};
    use proptest::prelude::*;
    use ScalarType::*;

    fn m(rnd: Option<Rounding>) -> FMode {
        FMode { rnd, ftz: false, sat: false }
    }
    const NONE: FMode = FMode { rnd: None, ftz: false, sat: false };
    const SAT: FMode = FMode { rnd: None, ftz: false, sat: true };
    fn f(x: f32) -> u64 {
        x.to_bits() as u64
    }
    fn d(x: f64) -> u64 {
        x.to_bits()
    }
    fn rni() -> FMode {
        m(Some(Rounding::Rni))
    }

    #[test]
    fn int_to_int() {
        assert_eq!(cvt(S32, S8, NONE, 0x80), 0xFFFF_FFFF_FFFF_FF80);
        assert_eq!(cvt(U32, S8, NONE, 0x80), 0xFFFF_FF80);
        assert_eq!(cvt(S32, U8, NONE, 0x80), 0x80);
        assert_eq!(cvt(U8, U32, NONE, 0x1234), 0x34);
        assert_eq!(cvt(S8, U32, NONE, 0x1280), 0xFFFF_FFFF_FFFF_FF80);
        assert_eq!(cvt(S64, S32, NONE, 0x8000_0000), 0xFFFF_FFFF_8000_0000);
        assert_eq!(cvt(U64, S32, NONE, 0xFFFF_FFFF), u64::MAX);
        assert_eq!(cvt(U16, S64, NONE, u64::MAX), 0xFFFF);
        // .sat clamps the source value to the destination range.
        assert_eq!(cvt(S8, S32, SAT, 1000), 127);
        assert_eq!(cvt(S8, S32, SAT, (-1000i64) as u64), (-128i64) as u64);
        assert_eq!(cvt(U8, S32, SAT, (-5i64) as u64), 0);
        assert_eq!(cvt(U32, S32, SAT, 0x8000_0000), 0);
        assert_eq!(cvt(S32, U32, SAT, 0x8000_0000), 0x7FFF_FFFF);
        assert_eq!(cvt(S32, U64, SAT, u64::MAX), 0x7FFF_FFFF);
        assert_eq!(cvt(U64, S64, SAT, 1 << 63), 0);
        assert_eq!(cvt(S16, S64, SAT, 5), 5);
    }

    #[test]
    fn int_to_float_rounding() {
        // 2^24 + 1 is halfway between two f32 values.
        let v = (1u64 << 24) + 1;
        assert_eq!(cvt(F32, U32, NONE, v), f(16777216.0));
        assert_eq!(cvt(F32, U32, m(Some(Rounding::Rn)), v), f(16777216.0));
        assert_eq!(cvt(F32, U32, m(Some(Rounding::Rz)), v), f(16777216.0));
        assert_eq!(cvt(F32, U32, m(Some(Rounding::Rm)), v), f(16777216.0));
        assert_eq!(cvt(F32, U32, m(Some(Rounding::Rp)), v), f(16777218.0));
        assert_eq!(cvt(F32, S32, m(Some(Rounding::Rm)), (-(v as i64)) as u64), f(-16777218.0));
        assert_eq!(cvt(F32, S32, m(Some(Rounding::Rz)), (-(v as i64)) as u64), f(-16777216.0));
        assert_eq!(cvt(F64, U64, NONE, u64::MAX), d(18446744073709551616.0));
        assert_eq!(cvt(F64, U64, m(Some(Rounding::Rz)), u64::MAX), d(18446744073709549568.0));
        assert_eq!(cvt(F64, S64, NONE, 1 << 63), d(-9223372036854775808.0));
        assert_eq!(cvt(F64, S32, NONE, 0xFFFF_FFFF), d(-1.0));
        // f16: 65520 rounds to infinity, 65519 to the largest finite value.
        assert_eq!(cvt(F16, U32, NONE, 65520), 0x7C00);
        assert_eq!(cvt(F16, U32, NONE, 65519), 0x7BFF);
        assert_eq!(cvt(F16, U32, m(Some(Rounding::Rz)), 1_000_000), 0x7BFF);
        assert_eq!(cvt(F16, S16, NONE, 0xFFFF), 0xBC00);
        assert_eq!(cvt(BF16, S32, NONE, 257), 0x4380); // 257 -> 256 (ties to even)
        assert_eq!(cvt(BF16, S32, m(Some(Rounding::Rp)), 257), 0x4381);
        // .sat on a float destination.
        assert_eq!(cvt(F32, S32, SAT, 5), f(1.0));
        assert_eq!(cvt(F32, S32, SAT, (-5i64) as u64), 0);
    }

    #[test]
    fn float_to_int() {
        let r = |mode, x: f32| cvt(S32, F32, m(Some(mode)), f(x)) as i64;
        assert_eq!(r(Rounding::Rni, 2.5), 2);
        assert_eq!(r(Rounding::Rni, 3.5), 4);
        assert_eq!(r(Rounding::Rni, -2.5), -2);
        assert_eq!(r(Rounding::Rzi, -2.7), -2);
        assert_eq!(r(Rounding::Rmi, -2.1), -3);
        assert_eq!(r(Rounding::Rpi, 2.1), 3);
        assert_eq!(r(Rounding::Rpi, -0.5), 0);
        // Saturation is implicit; NaN gives 0 from f32 into <= 32 bits ...
        assert_eq!(r(Rounding::Rzi, 3e9), i32::MAX as i64);
        assert_eq!(r(Rounding::Rzi, f32::NEG_INFINITY), i32::MIN as i64);
        assert_eq!(r(Rounding::Rzi, f32::NAN), 0);
        assert_eq!(cvt(U32, F32, rni(), f(-7.0)), 0);
        assert_eq!(cvt(U8, F32, rni(), f(300.0)), 255);
        assert_eq!(cvt(S8, F32, rni(), f(-300.0)), (-128i64) as u64);
        assert_eq!(cvt(U64, F32, rni(), f(f32::INFINITY)), u64::MAX);
        // ... and 1 << (bits - 1) from f64 or into 64 bits.
        assert_eq!(cvt(S64, F32, rni(), f(f32::NAN)), 1 << 63);
        assert_eq!(cvt(U64, F16, rni(), 0x7E00), 1 << 63);
        assert_eq!(cvt(S32, F64, rni(), d(f64::NAN)), 0xFFFF_FFFF_8000_0000);
        assert_eq!(cvt(U16, F64, rni(), d(f64::NAN)), 0x8000);
        assert_eq!(cvt(S8, F64, rni(), d(f64::NAN)), 0xFFFF_FFFF_FFFF_FF80);
        // .ftz flushes f32 subnormal inputs first.
        let tiny = 1;
        assert_eq!(cvt(S32, F32, m(Some(Rounding::Rpi)), tiny), 1);
        assert_eq!(cvt(S32, F32, FMode { rnd: Some(Rounding::Rpi), ftz: true, sat: false }, tiny), 0);
        // f64 and f16 sources.
        assert_eq!(cvt(S64, F64, rni(), d(-1e300)), 1 << 63);
        assert_eq!(cvt(U16, F16, rni(), 0x7BFF), 65504);
        assert_eq!(cvt(S16, BF16, m(Some(Rounding::Rzi)), 0xC2F7), (-123i64) as u64);
    }

    #[test]
    fn float_to_float() {
        let x = f(1.0 + 2f32.powi(-11)); // halfway between two f16 values
        assert_eq!(cvt(F16, F32, m(Some(Rounding::Rn)), x), 0x3C00);
        assert_eq!(cvt(F16, F32, m(Some(Rounding::Rp)), x), 0x3C01);
        assert_eq!(cvt(F16, F32, m(Some(Rounding::Rz)), x), 0x3C00);
        assert_eq!(cvt(F16, F32, m(Some(Rounding::Rm)), f(-1.0 - 2f32.powi(-11))), 0xBC01);
        assert_eq!(cvt(F16, F32, m(Some(Rounding::Rn)), f(70000.0)), 0x7C00);
        assert_eq!(cvt(F16, F32, m(Some(Rounding::Rz)), f(70000.0)), 0x7BFF);
        assert_eq!(cvt(F16, F32, m(Some(Rounding::Rn)), f(2f32.powi(-24))), 0x0001);
        assert_eq!(cvt(F16, F32, m(Some(Rounding::Rn)), f(2f32.powi(-26))), 0x0000);
        assert_eq!(cvt(F16, F32, m(Some(Rounding::Rp)), f(2f32.powi(-26))), 0x0001);
        assert_eq!(cvt(BF16, F32, m(Some(Rounding::Rn)), 0x3F80_8000), 0x3F80);
        assert_eq!(cvt(BF16, F32, m(Some(Rounding::Rn)), 0x3F81_8000), 0x3F82);
        assert_eq!(cvt(F32, F16, NONE, 0x0001), f(2f32.powi(-24)));
        assert_eq!(cvt(F64, F32, NONE, 1), d(f32::from_bits(1) as f64));
        assert_eq!(cvt(F32, F64, m(Some(Rounding::Rz)), d(1.0 + 2f64.powi(-30))), f(1.0));
        assert_eq!(cvt(F32, F64, m(Some(Rounding::Rp)), d(1.0 + 2f64.powi(-30))), f(1.0) + 1);
        assert_eq!(cvt(F32, F64, m(Some(Rounding::Rm)), d(1e300)), 0x7F7F_FFFF);
        assert_eq!(cvt(F16, BF16, m(Some(Rounding::Rn)), 0x3F80), 0x3C00);
        // NaNs: canonical into f16/f32, payload kept (and quietened) into and out of f64.
        assert_eq!(cvt(F16, F32, m(Some(Rounding::Rn)), 0x7FA1_2345), 0x7FFF);
        assert_eq!(cvt(F32, F16, NONE, 0x7D23), 0x7FFF_FFFF);
        assert_eq!(cvt(F64, F32, NONE, 0x7F80_0001), 0x7FF8_0000_2000_0000);
        assert_eq!(cvt(F32, F64, m(Some(Rounding::Rn)), 0x7FF4_1234_5678_9ABC), 0x7FE0_91A2);
        assert_eq!(cvt(F64, F16, NONE, 0xFC01), 0xFFF8_0400_0000_0000);
        assert_eq!(cvt(F32, BF16, NONE, 0x7F81), 0x7F81_0000);
        assert_eq!(cvt(F32, F32, NONE, 0x7FA1_2345), 0x7FA1_2345);
        assert_eq!(cvt(F64, F32, FMode { rnd: None, ftz: true, sat: false }, 0x7FC0_0000), 0x7FFF_FFFF_E000_0000);
    }

    #[test]
    fn same_size_integral_rounding_ftz_sat() {
        let r = |mode, x: f32| f32::from_bits(cvt(F32, F32, m(Some(mode)), f(x)) as u32);
        assert_eq!(r(Rounding::Rni, 2.5), 2.0);
        assert_eq!(r(Rounding::Rni, -3.5), -4.0);
        assert_eq!(r(Rounding::Rzi, -3.7), -3.0);
        assert_eq!(r(Rounding::Rmi, 3.2), 3.0);
        assert_eq!(r(Rounding::Rpi, 3.2), 4.0);
        assert_eq!(cvt(F32, F32, m(Some(Rounding::Rzi)), f(-0.5)), f(-0.0));
        assert_eq!(cvt(F32, F32, m(Some(Rounding::Rni)), 0x7FA1_2345), 0x7FFF_FFFF);
        assert_eq!(cvt(F64, F64, m(Some(Rounding::Rpi)), d(2.25)), d(3.0));
        assert_eq!(cvt(F64, F64, m(Some(Rounding::Rni)), 0x7FF4_0000_0000_0000), 0x7FFC_0000_0000_0000);
        assert_eq!(cvt(F16, F16, m(Some(Rounding::Rmi)), 0xBE00), 0xC000); // -1.5 -> -2
        let ftz = FMode { rnd: None, ftz: true, sat: false };
        assert_eq!(cvt(F32, F32, ftz, 0x8000_0001), 0x8000_0000);
        assert_eq!(cvt(F32, F32, ftz, 0x7FC0_0000), 0x7FFF_FFFF);
        assert_eq!(cvt(F32, F64, ftz, d(1e-40)), 0); // f32 result flushed
        assert_eq!(cvt(F32, F64, NONE, d(1e-40)), f(1e-40));
        assert_eq!(cvt(F32, F32, SAT, f(1.5)), f(1.0));
        assert_eq!(cvt(F32, F32, SAT, f(-0.0)), 0);
        assert_eq!(cvt(F32, F32, SAT, 0x7FC0_0000), 0);
        assert_eq!(cvt(F16, F32, FMode { rnd: Some(Rounding::Rn), ftz: false, sat: true }, f(3.0)), 0x3C00);
    }

    #[test]
    fn tf32() {
        let rna = m(Some(Rounding::Rna));
        // Low 13 bits cleared; .rna rounds ties away from zero.
        assert_eq!(cvt(TF32, F32, rna, 0x3F80_1000), 0x3F80_2000);
        assert_eq!(cvt(TF32, F32, rna, 0x3F80_0FFF), 0x3F80_0000);
        assert_eq!(cvt(TF32, F32, m(Some(Rounding::Rn)), 0x3F80_1000), 0x3F80_0000);
        assert_eq!(cvt(TF32, F32, m(Some(Rounding::Rn)), 0x3F80_3000), 0x3F80_4000);
        assert_eq!(cvt(TF32, F32, m(Some(Rounding::Rz)), 0xBF80_1FFF), 0xBF80_0000);
        assert_eq!(cvt(TF32, F32, NONE, 0x3F80_1000), 0x3F80_2000); // default .rna
        assert_eq!(cvt(TF32, F32, rna, 0x7F7F_FFFF), 0x7F80_0000);
        assert_eq!(cvt_with(TF32, F32, rna, false, true, 0x7F7F_FFFF), 0x7F7F_E000);
        assert_eq!(cvt_with(TF32, F32, rna, false, true, 0xFF80_0000), 0xFF7F_E000);
        assert_eq!(cvt(TF32, F32, rna, 0x7FA1_2345), 0x7FA1_2000);
        assert_eq!(cvt(TF32, F32, m(Some(Rounding::Rn)), 0x7FA1_2345), 0x7FFF_E000);
        assert_eq!(cvt(F32, TF32, NONE, 0x3F80_2000), 0x3F80_2000);
    }

    #[test]
    fn relu_satfinite_and_pack() {
        let rn = m(Some(Rounding::Rn));
        assert_eq!(cvt_with(F16, F32, rn, true, false, f(-3.0)), 0);
        assert_eq!(cvt_with(F16, F32, rn, true, false, f(3.0)), 0x4200);
        assert_eq!(cvt_with(F16, F32, rn, true, false, f(f32::NAN)), 0x7FFF);
        assert_eq!(cvt_with(F16, F32, rn, false, true, f(1e6)), 0x7BFF);
        assert_eq!(cvt_with(F16, F32, rn, false, true, f(f32::NEG_INFINITY)), 0xFBFF);
        assert_eq!(cvt_with(BF16, F32, rn, false, true, f(f32::INFINITY)), 0x7F7F);
        // a -> upper half, b -> lower half.
        assert_eq!(cvt_pack_x2(F16x2, rn, 1.0, 2.0), 0x3C00_4000);
        assert_eq!(cvt_pack_x2(BF16x2, rn, -1.0, f32::NAN), 0xBF80_7FFF);
        assert_eq!(cvt_pack_x2(F16x2, m(Some(Rounding::Rz)), 1.0 + 2f32.powi(-11) * 1.5, 0.0), 0x3C00_0000);
        assert_eq!(cvt_pack_x2_with(F16x2, rn, true, true, -1.0, 1e9), 0x0000_7BFF);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]

        #[test]
        fn never_panics(di in 0..ALL_TYPES.len(), si in 0..ALL_TYPES.len(), r in rnd(), ftz: bool, sat: bool, relu: bool,
                        satfinite: bool, x: u64, a: f32, b: f32) {
            let mode = FMode { rnd: r, ftz, sat };
            let _ = cvt_with(ALL_TYPES[di], ALL_TYPES[si], mode, relu, satfinite, x);
            let _ = cvt_pack_x2_with(ALL_TYPES[di], mode, relu, satfinite, a, b);
        }

        #[test]
        fn round_trips(x: f32, h: u16, i: i32, l: i64) {
            let rn = m(Some(Rounding::Rn));
            if !x.is_nan() {
                prop_assert_eq!(cvt(F32, F64, rn, cvt(F64, F32, NONE, f(x))), f(x));
            }
            if !crate::fp::Fmt::F16.is_nan(h as u64) {
                prop_assert_eq!(cvt(F16, F32, rn, cvt(F32, F16, NONE, h as u64)), h as u64);
                prop_assert_eq!(cvt(F16, F64, rn, cvt(F64, F16, NONE, h as u64)), h as u64);
            }
            if !crate::fp::Fmt::BF16.is_nan(h as u64) {
                prop_assert_eq!(cvt(BF16, F32, rn, cvt(F32, BF16, NONE, h as u64)), h as u64);
            }
            prop_assert_eq!(cvt(S32, F64, rni(), cvt(F64, S32, rn, i as u64)), i as i64 as u64);
            prop_assert_eq!(cvt(S32, S64, NONE, cvt(S64, S32, NONE, i as u64)), i as i64 as u64);
            prop_assert_eq!(cvt(U32, U64, NONE, cvt(U64, U32, NONE, i as u64)), i as u32 as u64);
            prop_assert_eq!(cvt(S64, F64, rni(), cvt(F64, S64, rn, l as u64)), (l as f64) as i64 as u64);
        }

        #[test]
        fn narrowing_matches_half_crate(x: f32) {
            prop_assume!(!x.is_nan());
            let rn = m(Some(Rounding::Rn));
            prop_assert_eq!(cvt(F16, F32, rn, f(x)), half::f16::from_f32(x).to_bits() as u64);
            prop_assert_eq!(cvt(BF16, F32, rn, f(x)), half::bf16::from_f32(x).to_bits() as u64);
        }

        #[test]
        fn directed_narrowing_brackets(v: f64) {
            prop_assume!(v.is_finite());
            let g = |r| f32::from_bits(cvt(F32, F64, m(Some(r)), d(v)) as u32) as f64;
            let (lo, hi) = (g(Rounding::Rm), g(Rounding::Rp));
            prop_assert!(lo <= v && v <= hi);
            let z = g(Rounding::Rz);
            prop_assert!(z.abs() <= v.abs());
            let n = g(Rounding::Rn);
            prop_assert!(n == lo || n == hi);
        }

        #[test]
        fn float_to_int_matches_rust_casts(x: f32, v: f64) {
            let rz = m(Some(Rounding::Rzi));
            if !x.is_nan() {
                prop_assert_eq!(cvt(S32, F32, rz, f(x)), x as i32 as i64 as u64);
                prop_assert_eq!(cvt(U32, F32, rz, f(x)), x as u32 as u64);
                prop_assert_eq!(cvt(S16, F32, rz, f(x)), x as i16 as i64 as u64);
                prop_assert_eq!(cvt(U8, F32, rz, f(x)), x as u8 as u64);
            }
            if !v.is_nan() {
                prop_assert_eq!(cvt(S64, F64, rz, d(v)), v as i64 as u64);
                prop_assert_eq!(cvt(U64, F64, rz, d(v)), v as u64);
                prop_assert_eq!(cvt(S64, F64, rni(), d(v)), v.round_ties_even() as i64 as u64);
            }
        }

        #[test]
        fn int_to_float_matches_rust_casts(i: i64, u: u32) {
            prop_assert_eq!(cvt(F32, S64, NONE, i as u64), f(i as f32));
            prop_assert_eq!(cvt(F64, S64, NONE, i as u64), d(i as f64));
            prop_assert_eq!(cvt(F32, U32, NONE, u as u64), f(u as f32));
            let g = |r| f32::from_bits(cvt(F32, S64, m(Some(r)), i as u64) as u32) as f64;
            // Bracket the exact integer (exact as i128 comparison through f64 is
            // enough here: f32 values are exactly representable in i128).
            prop_assert!((g(Rounding::Rm) as i128) <= i as i128 && i as i128 <= g(Rounding::Rp) as i128);
        }
    }
}
