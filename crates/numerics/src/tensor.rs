//! Tensor-core arithmetic: how an `mma`/`wmma`/`wgmma` instruction reads its
//! operands and rounds its accumulation, as recorded on an H200 (the PTX ISA
//! leaves it unspecified). The engine gathers fragments and calls these per
//! element of D; keeping them here tests the rounding apart from the engine.
//!
//! * Operands become exact f64s ([`operand_f64`]); tf32 keeps the top 19 bits.
//! * f32 accumulation ([`tensor_core_sum_f32`]): the exact products and C are
//!   aligned to the largest exponent, truncated to 26 bits below it, added
//!   exactly, and the sum rounded toward zero.
//! * Other accumulators ([`round_sum`]): the exact sum rounded once to
//!   nearest even.

use crate::{cvt, FMode, ScalarType};

/// An operand element's raw bits as an exact f64 (integers too: they fit).
pub fn operand_f64(ty: ScalarType, raw: u64) -> f64 {
    match ty {
        ScalarType::F16 => half::f16::from_bits(raw as u16).to_f64(),
        ScalarType::BF16 => half::bf16::from_bits(raw as u16).to_f64(),
        // The tensor cores read the sign, exponent and top 10 mantissa bits.
        ScalarType::TF32 => f32::from_bits(raw as u32 & 0xFFFF_E000) as f64,
        ScalarType::F32 => f32::from_bits(raw as u32) as f64,
        ScalarType::F64 => f64::from_bits(raw),
        _ => operand_int(ty, raw) as f64,
    }
}

/// An integer operand element (s8, u8, else s32).
pub fn operand_int(ty: ScalarType, raw: u64) -> i64 {
    match ty {
        ScalarType::S8 => raw as u8 as i8 as i64,
        ScalarType::U8 => raw as u8 as i64,
        _ => raw as u32 as i32 as i64,
    }
}

/// Rounds an exact (f64) result to the accumulator type `ty` (f16, f32, f64;
/// anything else as f32): raw bits.
pub fn encode(ty: ScalarType, v: f64) -> u64 {
    match ty {
        // (Not half::f16::from_f64, which rounds through f32.)
        ScalarType::F16 => cvt::cvt(ScalarType::F16, ScalarType::F64, FMode::RN, v.to_bits()),
        ScalarType::F32 => {
            if v.is_nan() {
                0x7FFF_FFFF
            } else {
                (v as f32).to_bits() as u64
            }
        }
        ScalarType::F64 => v.to_bits(),
        _ => (v as f32).to_bits() as u64,
    }
}

/// The exact sum of `terms` as (hi, lo): `hi` within one f64 ulp of the sum
/// and `lo` carrying the sign of the remainder (0 when `hi` is exact).
/// Shewchuk's exact summation with non-overlapping partials (Python's
/// `math.fsum`).
pub fn exact_sum(terms: &[f64]) -> (f64, f64) {
    if terms.iter().any(|x| !x.is_finite()) {
        return (terms.iter().sum(), 0.0);
    }
    let mut partials: Vec<f64> = Vec::with_capacity(terms.len());
    for &x0 in terms {
        let mut x = x0;
        let mut i = 0;
        for j in 0..partials.len() {
            let mut y = partials[j];
            if x.abs() < y.abs() {
                std::mem::swap(&mut x, &mut y);
            }
            let hi = x + y;
            let lo = y - (hi - x);
            if lo != 0.0 {
                partials[i] = lo;
                i += 1;
            }
            x = hi;
        }
        partials.truncate(i);
        partials.push(x);
    }
    let Some(mut hi) = partials.pop() else {
        return (0.0, 0.0);
    };
    let mut lo = 0.0;
    while let Some(y) = partials.pop() {
        let x = hi;
        hi = x + y;
        lo = y - (hi - x);
        if lo != 0.0 {
            break;
        }
    }
    (hi, lo)
}

/// Rounds the exact sum of `terms` once to `ty` (round to nearest even), as [`encode`] does.
pub fn round_sum(terms: &[f64], ty: ScalarType) -> u64 {
    let (hi, lo) = exact_sum(terms);
    // `hi` rounds like the exact sum unless it sits exactly on a tie of the
    // narrower format; then the remainder's sign decides.
    if lo != 0.0 && is_tie(hi, ty) {
        let b = hi.to_bits();
        let away = (lo > 0.0) == (hi > 0.0);
        let nudged = if hi == 0.0 { f64::from_bits(1).copysign(lo) } else { f64::from_bits(if away { b + 1 } else { b - 1 }) };
        return encode(ty, nudged);
    }
    encode(ty, hi)
}

/// The exponent e of `x = m * 2^e`, 0.5 <= |m| < 1 (C's `frexp`), for finite non-zero `x`.
fn frexp_exp(x: f64) -> i32 {
    let e = ((x.to_bits() >> 52) & 0x7FF) as i32;
    if e == 0 {
        // Subnormal: scale up first.
        frexp_exp(x * 2f64.powi(64)) - 64
    } else {
        e - 1022
    }
}

/// Bits below the largest term's exponent that the tensor cores keep of each term.
const TC_ALIGN_BITS: i32 = 26;

/// An f32-accumulating tensor-core instruction's sum of C and the exact
/// products `terms`: aligned to the largest exponent, truncated to
/// 2^(emax - 26), added exactly, rounded toward zero to f32 (raw bits).
pub fn tensor_core_sum_f32(terms: &[f64]) -> u32 {
    if terms.iter().any(|x| !x.is_finite()) {
        let s: f64 = terms.iter().sum();
        return if s.is_nan() { 0x7FFF_FFFF } else { (s as f32).to_bits() };
    }
    let Some(emax) = terms.iter().filter(|&&x| x != 0.0).map(|&x| frexp_exp(x)).max() else {
        // All zero: +0 unless every term is -0.
        return if terms.iter().all(|x| x.is_sign_negative()) { 0x8000_0000 } else { 0 };
    };
    let shift = TC_ALIGN_BITS - emax;
    if !(-1000..=1000).contains(&shift) {
        return round_sum_rz_f32(terms);
    }
    // Each term scaled to units of 2^(emax - 26) and truncated toward zero: an integer below 2^27.
    let sum: i64 = terms.iter().map(|&t| (t * 2f64.powi(shift)).trunc() as i64).sum();
    let v = sum as f64 * 2f64.powi(-shift);
    rz_f32(v).to_bits()
}

fn round_sum_rz_f32(terms: &[f64]) -> u32 {
    let (hi, lo) = exact_sum(terms);
    // Toward zero: step back when the f64 sum overshoots the exact value's magnitude.
    let f = rz_f32(hi);
    if lo != 0.0 && f as f64 == hi && (lo > 0.0) != (hi > 0.0) && hi != 0.0 {
        return f.to_bits() - 1;
    }
    f.to_bits()
}

/// `v` rounded toward zero to f32.
fn rz_f32(v: f64) -> f32 {
    let f = v as f32;
    if (f as f64).abs() > v.abs() {
        f32::from_bits(f.to_bits() - 1)
    } else {
        f
    }
}

/// Whether `x` lies exactly halfway between two neighbours of type `ty` (f32, f16; never for others).
fn is_tie(x: f64, ty: ScalarType) -> bool {
    match ty {
        ScalarType::F32 => {
            let f = x as f32;
            if f as f64 == x || !f.is_finite() || f == 0.0 {
                return false;
            }
            let other = if (f as f64).abs() < x.abs() { f32::from_bits(f.to_bits() + 1) } else { f32::from_bits(f.to_bits() - 1) };
            (x - f as f64).abs() == (other as f64 - x).abs()
        }
        ScalarType::F16 => {
            let h = half::f16::from_bits(encode(ScalarType::F16, x) as u16);
            let hv = h.to_f64();
            if hv == x || !hv.is_finite() || hv == 0.0 {
                return false;
            }
            let b = h.to_bits();
            let other = half::f16::from_bits(if hv.abs() < x.abs() { b + 1 } else { b - 1 }).to_f64();
            (x - hv).abs() == (other - x).abs()
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tensor_core_f32_sums_truncate() {
        let f = |t: &[f64]| f32::from_bits(tensor_core_sum_f32(t));
        // Round toward zero, not to nearest.
        assert_eq!(f(&[1.0, 2f64.powi(-24) * 1.5]), 1.0);
        assert_eq!(f(&[-1.0, -(2f64.powi(-24) * 1.5)]), -1.0);
        // Terms far below the largest one are dropped before adding.
        assert_eq!(f(&[1.0, 2f64.powi(-27), 2f64.powi(-27), 2f64.powi(-27), 2f64.powi(-27)]), 1.0);
        assert_eq!(f(&[1.0, 2f64.powi(-26), 2f64.powi(-26)]), 1.0);
        assert_eq!(f(&[1.0, 2f64.powi(-25), 2f64.powi(-25), 2f64.powi(-25), 2f64.powi(-25)]), 1.0 + 2f32.powi(-23));
        assert_eq!(f(&[0.0, -0.0]).to_bits(), 0);
        assert_eq!(f(&[-0.0, -0.0]).to_bits(), 0x8000_0000);
        assert!(f(&[f64::INFINITY, -f64::INFINITY]).is_nan());
        assert_eq!(f(&[1e300, 1e300]), f32::MAX);
    }

    #[test]
    fn exact_sums_round_once() {
        let f32_of = |t: &[f64]| f32::from_bits(round_sum(t, ScalarType::F32) as u32);
        // 1 + 2^-24 + 2^-60: just above the f32 tie between 1 and 1 + 2^-23.
        assert_eq!(f32_of(&[1.0, 2f64.powi(-24), 2f64.powi(-60)]), 1.0 + 2f32.powi(-23));
        assert_eq!(f32_of(&[1.0, 2f64.powi(-24), -2f64.powi(-60)]), 1.0);
        assert_eq!(f32_of(&[1.0, 2f64.powi(-24)]), 1.0, "an exact tie rounds to even");
        assert_eq!(f32_of(&[-1.0, -2f64.powi(-24), -2f64.powi(-60)]), -1.0 - 2f32.powi(-23));
        assert_eq!(f32_of(&[1e30, 1.0, -1e30]), 1.0);
        assert_eq!(f32_of(&[]), 0.0);
        assert!(f32_of(&[f64::INFINITY, 1.0]).is_infinite());
        let h = |t: &[f64]| half::f16::from_bits(round_sum(t, ScalarType::F16) as u16).to_f64();
        assert_eq!(h(&[1.0, 2f64.powi(-11), 2f64.powi(-70)]), 1.0 + 2f64.powi(-10));
        assert_eq!(h(&[1.0, 2f64.powi(-11)]), 1.0);
    }

    #[test]
    fn operands_read_as_the_tensor_cores_do() {
        // tf32 ignores the low 13 mantissa bits.
        assert_eq!(operand_f64(ScalarType::TF32, 0x3F80_1FFF), 1.0);
        assert_eq!(operand_f64(ScalarType::BF16, 0x3FC0), 1.5);
        assert_eq!(operand_f64(ScalarType::S8, 0xFF), -1.0);
        assert_eq!(operand_int(ScalarType::U8, 0xFF), 255);
        assert_eq!(encode(ScalarType::F32, f64::NAN), 0x7FFF_FFFF);
        assert_eq!(encode(ScalarType::F16, 1.0), 0x3C00);
    }
}
