//! The 8-bit float formats of `cvt` on sm_89 and later (`.e4m3x2`,
//! `.e5m2x2`): two values packed in 16 bits, the first operand in the upper
//! byte as with `.f16x2`.
//!
//! To fp8: round to nearest even with `.satfinite` (the only form PTX has):
//! out-of-range values and infinities become the largest finite value of
//! their sign (448 for e4m3, 57344 for e5m2), NaN becomes `0x7F`; `.relu`
//! turns negative results and -0.0 into +0.0. From fp8 to f16 every value is
//! exact; NaN becomes the canonical f16 NaN `0x7FFF` (e4m3) or keeps its bits
//! (e5m2, the upper byte of an f16).

/// An 8-bit float format.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum F8 {
    /// 4 exponent bits (bias 7), 3 mantissa bits, no infinities, NaN `S.1111.111`.
    E4M3,
    /// 5 exponent bits (bias 15), 2 mantissa bits, IEEE-like.
    E5M2,
}

impl F8 {
    /// (mantissa bits, exponent bias, largest finite value, its code).
    fn params(self) -> (i32, i32, f64, u8) {
        match self {
            F8::E4M3 => (3, 7, 448.0, 0x7E),
            F8::E5M2 => (2, 15, 57344.0, 0x7B),
        }
    }
}

/// Binary exponent of a finite non-zero f64.
fn exponent(x: f64) -> i32 {
    ((x.to_bits() >> 52) & 0x7FF) as i32 - 1023
}

/// Code of the exactly representable magnitude `r` in a format with `mbits`
/// mantissa bits and bias `bias` (no sign).
fn encode(r: f64, mbits: i32, bias: i32) -> u32 {
    if r == 0.0 {
        return 0;
    }
    let e = exponent(r);
    if e < 1 - bias {
        (r / 2f64.powi(1 - bias - mbits)) as u32
    } else {
        (((e + bias) as u32) << mbits) | ((r / 2f64.powi(e - mbits)) as u32 - (1 << mbits))
    }
}

/// `cvt.rn.satfinite{.relu}.e4m3|e5m2` of one value (f32 and f16 inputs
/// are exact in f64).
pub fn to_f8(fmt: F8, relu: bool, x: f64) -> u8 {
    if x.is_nan() {
        return 0x7F;
    }
    let neg = x.is_sign_negative();
    if relu && neg {
        return 0;
    }
    let sign = if neg { 0x80 } else { 0 };
    let (mbits, bias, max, max_code) = fmt.params();
    let ax = x.abs();
    if ax >= max {
        return sign | max_code;
    }
    if ax == 0.0 {
        return sign;
    }
    let q = 2f64.powi(exponent(ax).max(1 - bias) - mbits);
    let r = (ax / q).round_ties_even() * q;
    if r >= max {
        return sign | max_code;
    }
    sign | encode(r, mbits, bias) as u8
}

/// The value of an fp8 code (NaN for NaN codes, infinities for e5m2's).
pub fn from_f8(fmt: F8, b: u8) -> f64 {
    let (mbits, bias, _, _) = fmt.params();
    let ebits = 7 - mbits;
    let exp = ((b >> mbits) as i32) & ((1 << ebits) - 1);
    let m = (b as i32) & ((1 << mbits) - 1);
    let sign = if b & 0x80 != 0 { -1.0 } else { 1.0 };
    let top = (1 << ebits) - 1;
    match fmt {
        F8::E4M3 if exp == top && m == (1 << mbits) - 1 => return f64::NAN,
        F8::E5M2 if exp == top => return if m == 0 { sign * f64::INFINITY } else { f64::NAN },
        _ => {}
    }
    let mag =
        if exp == 0 { m as f64 * 2f64.powi(1 - bias - mbits) } else { (1.0 + m as f64 / (1 << mbits) as f64) * 2f64.powi(exp - bias) };
    sign * mag
}

/// `cvt.rn.satfinite{.relu}.e4m3x2|e5m2x2.f32 d, a, b`: `a` in the upper byte.
pub fn f8x2_from_f32(fmt: F8, relu: bool, a: f32, b: f32) -> u16 {
    ((to_f8(fmt, relu, a as f64) as u16) << 8) | to_f8(fmt, relu, b as f64) as u16
}

/// `cvt.rn.satfinite{.relu}.e4m3x2|e5m2x2.f16x2 d, a`: each half to a byte.
pub fn f8x2_from_f16x2(fmt: F8, relu: bool, a: u32) -> u16 {
    let h = |x: u32| to_f8(fmt, relu, half::f16::from_bits(x as u16).to_f64()) as u16;
    (h(a >> 16) << 8) | h(a & 0xFFFF)
}

/// `cvt.rn{.relu}.f16x2.e4m3x2|e5m2x2 d, a`: each byte to an f16 half.
pub fn f16x2_from_f8x2(fmt: F8, relu: bool, a: u16) -> u32 {
    let h = |b: u8| -> u32 {
        let v = from_f8(fmt, b);
        if v.is_nan() {
            return match fmt {
                F8::E4M3 => 0x7FFF,
                F8::E5M2 => (b as u32) << 8,
            };
        }
        if relu && v.is_sign_negative() {
            return 0;
        }
        let sign = if v.is_sign_negative() { 0x8000 } else { 0 };
        if v.is_infinite() {
            return sign | 0x7C00;
        }
        sign | encode(v.abs(), 10, 15)
    };
    (h((a >> 8) as u8) << 16) | h(a as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_rounding() {
        for fmt in [F8::E4M3, F8::E5M2] {
            for b in 0..=255u8 {
                let v = from_f8(fmt, b);
                if v.is_nan() {
                    assert_eq!(to_f8(fmt, false, v), 0x7F);
                } else if v.is_infinite() {
                    assert_eq!(to_f8(fmt, false, v), (b & 0x80) | 0x7B);
                } else {
                    assert_eq!(to_f8(fmt, false, v), b, "{fmt:?} {b:#x}");
                    // f16 decode agrees with half's.
                    let h = f16x2_from_f8x2(fmt, false, b as u16) as u16;
                    assert_eq!(half::f16::from_bits(h).to_f64(), v, "{fmt:?} {b:#x}");
                }
            }
        }
        // Values from ZLUDA's tests, as the H200 gave them.
        assert_eq!(f8x2_from_f32(F8::E4M3, false, 0.40625, 12.9), 0x2D55);
        assert_eq!(f8x2_from_f32(F8::E5M2, false, 0.375, -5256.6), 0x36ED);
        assert_eq!(f16x2_from_f8x2(F8::E4M3, false, 0x2D55), 0x3680_4A80);
        assert_eq!(f16x2_from_f8x2(F8::E5M2, false, 0x36ED), 0x3600_ED00);
        // Ties to even, saturation, subnormals, relu.
        assert_eq!(to_f8(F8::E4M3, false, 1.0625), 0x38); // 1 + 1/16: tie to 1.0
        assert_eq!(to_f8(F8::E4M3, false, 1.1875), 0x3A); // tie to 1.25
        assert_eq!(to_f8(F8::E4M3, false, 1e9), 0x7E);
        assert_eq!(to_f8(F8::E4M3, false, f64::NEG_INFINITY), 0xFE);
        assert_eq!(to_f8(F8::E5M2, false, f64::INFINITY), 0x7B);
        assert_eq!(to_f8(F8::E4M3, false, 2f64.powi(-9)), 0x01);
        assert_eq!(to_f8(F8::E4M3, false, 2f64.powi(-11)), 0x00); // half the smallest: tie to 0
        assert_eq!(to_f8(F8::E4M3, true, -3.0), 0x00);
        assert_eq!(to_f8(F8::E4M3, false, -0.0), 0x80);
        assert_eq!(f16x2_from_f8x2(F8::E4M3, true, 0xB87F), 0x7FFF);
    }
}
