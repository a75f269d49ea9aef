//! Values before they become elements, and the conversion rule.
//!
//! The corpus README says an initialiser names a *value* that is converted to
//! the buffer's dtype "by the usual rule": integers wrap to the width, floats
//! round to nearest even. Where the rule is silent we follow C and NumPy casts:
//! a float stored into an integer dtype truncates toward zero (saturating at
//! the type's bounds, NaN giving 0, as Rust's `as`). Raw bits (`"0x..."`) are
//! stored unchanged and must fit the element width.
//!
//! Rounding to `f16`/`bf16`/`f32` is done here exactly, from the value's exact
//! binary form, by [`round_to_format`]: the `half` crate's `from_f64` rounds
//! twice (through `f32` on x86) and drops sticky bits, so it is only used for
//! widening (`to_f64`), which is exact.

use crate::Dtype;

/// Why a value cannot be read or cannot become an element or scalar of a
/// type; the message names the value as given.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ValueError {
    #[error("number {0} cannot be represented")]
    Unrepresentable(String),
    #[error("string {0:?} is not raw bits \"0x...\"")]
    NotBits(String),
    /// JSON of the wrong kind: `expected` says what was wanted.
    #[error("expected {expected}, found {found}")]
    Kind { expected: &'static str, found: &'static str },
    #[error("integer {0:?} is out of range")]
    IntegerTooLarge(String),
    #[error("{0:?} is not a number")]
    NotANumber(String),
    #[error("{0:?} is not a hexadecimal number")]
    NotHex(String),
    #[error("{0:?} does not fit in 64 bits")]
    HexTooWide(String),
    #[error("raw bits 0x{bits:x} do not fit in {} bits ({dtype})", dtype.bits())]
    BitsTooWide { bits: u64, dtype: Dtype },
    #[error("{0} is not an integer")]
    NotAnInteger(f64),
    #[error("{value} is out of range for {dtype}")]
    OutOfRange { value: i128, dtype: Dtype },
    #[error("{0}")]
    Float(#[from] std::num::ParseFloatError),
    /// A JSON number that is negative or fractional where a count is wanted.
    #[error("{0} is negative")]
    Negative(String),
    #[error("{0} is not a non-negative integer")]
    NotACount(String),
    #[error("unknown scalar type {:?} (expected i32, u32, i64, u64, f32 or f64)", .0.name())]
    NotAScalarType(Dtype),
    /// A list of dimensions that is not 1 to 3 long, or one of them wrong.
    #[error("has {0} dimensions, at most 3")]
    TooManyDims(usize),
    #[error("[{index}]: {source}")]
    Dim { index: usize, source: Box<ValueError> },
    #[error("[{index}]: {value} is too large")]
    DimTooLarge { index: usize, value: u64 },
}

/// A value before it is converted to an element or scalar type.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Value {
    /// An integer (any JSON integer fits).
    Int(i128),
    /// A real number.
    Float(f64),
    /// Raw bits of the element, given as `"0x..."`.
    Bits(u64),
}

impl Value {
    /// A JSON number, or a string `"0x..."` of raw bits.
    pub fn from_json(v: &serde_json::Value) -> Result<Value, ValueError> {
        match v {
            serde_json::Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    Ok(Value::Int(i as i128))
                } else if let Some(u) = n.as_u64() {
                    Ok(Value::Int(u as i128))
                } else if let Some(f) = n.as_f64() {
                    Ok(Value::Float(f))
                } else {
                    Err(ValueError::Unrepresentable(n.to_string()))
                }
            }
            serde_json::Value::String(s) => match parse_hex(s) {
                Some(r) => r.map(Value::Bits),
                None => Err(ValueError::NotBits(s.clone())),
            },
            other => Err(ValueError::Kind { expected: "a number or a \"0x...\" string", found: json_kind(other) }),
        }
    }

    /// Text form (command line): `0x...` raw bits, a decimal integer, or a real
    /// number as Rust parses it (`1.5`, `-3e-2`, `inf`, `nan`).
    pub fn parse_text(s: &str) -> Result<Value, ValueError> {
        let t = s.trim();
        if let Some(r) = parse_hex(t) {
            return r.map(Value::Bits);
        }
        let digits = t.strip_prefix(['-', '+']).unwrap_or(t);
        if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            return t.parse::<i128>().map(Value::Int).map_err(|_| ValueError::IntegerTooLarge(t.to_string()));
        }
        t.parse::<f64>().map(Value::Float).map_err(|_| ValueError::NotANumber(t.to_string()))
    }

    /// The JSON form that [`Value::from_json`] reads back to the same value.
    pub fn to_json(&self) -> serde_json::Value {
        match *self {
            Value::Int(i) => {
                if let Ok(v) = i64::try_from(i) {
                    v.into()
                } else if let Ok(v) = u64::try_from(i) {
                    v.into()
                } else {
                    (i as f64).into()
                }
            }
            Value::Float(f) if f.is_finite() => f.into(),
            Value::Float(f) => format!("0x{:016x}", f.to_bits()).into(),
            Value::Bits(b) => format!("0x{b:x}").into(),
        }
    }
}

/// `Some(Ok(bits))` for `0x...`, `Some(Err)` for a malformed one, `None` if not hex.
pub(crate) fn parse_hex(s: &str) -> Option<Result<u64, ValueError>> {
    let digits = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X"))?;
    let clean: String = digits.chars().filter(|&c| c != '_').collect();
    if clean.is_empty() || !clean.chars().all(|c| c.is_ascii_hexdigit()) {
        return Some(Err(ValueError::NotHex(s.to_string())));
    }
    Some(u64::from_str_radix(&clean, 16).map_err(|_| ValueError::HexTooWide(s.to_string())))
}

pub(crate) fn json_kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// (exponent bits, stored significand bits) of a float dtype.
fn format_of(d: Dtype) -> Option<(u32, u32)> {
    match d {
        Dtype::F16 => Some((5, 10)),
        Dtype::Bf16 => Some((8, 7)),
        Dtype::F32 => Some((8, 23)),
        Dtype::F64 => Some((11, 52)),
        _ => None,
    }
}

/// Rounds `(-1)^neg * m * 2^e` to nearest even in the binary format with `eb`
/// exponent bits and `mb` stored significand bits (IEEE layout, subnormals,
/// overflow to infinity). Returns the format's bits. `eb <= 11`, `mb <= 52`.
pub fn round_to_format(neg: bool, m: u128, e: i32, eb: u32, mb: u32) -> u64 {
    let sign = (neg as u64) << (eb + mb);
    let inf = (((1u64 << eb) - 1) << mb) | sign;
    if m == 0 {
        return sign;
    }
    let bias = (1i64 << (eb - 1)) - 1;
    let emin = 1 - bias;
    let e = e as i64;
    let lead = e + (127 - m.leading_zeros() as i64);
    let mut q = lead.max(emin) - mb as i64;
    let shift = q - e;
    let mut mant: u128 = if shift <= 0 {
        // Exact: the significand has at most mb + 1 bits here.
        m << (-shift) as u32
    } else if shift > 128 {
        0 // m < 2^128 <= half an ulp
    } else {
        let (hi, rem, half) = if shift == 128 {
            (0u128, m, 1u128 << 127)
        } else {
            let s = shift as u32;
            (m >> s, m & ((1u128 << s) - 1), 1u128 << (s - 1))
        };
        if rem > half || (rem == half && hi & 1 == 1) {
            hi + 1
        } else {
            hi
        }
    };
    if mant == 1u128 << (mb + 1) {
        mant >>= 1;
        q += 1;
    }
    if mant >= 1u128 << mb {
        let biased = q + mb as i64 + bias;
        if biased >= (1i64 << eb) - 1 {
            return inf;
        }
        sign | ((biased as u64) << mb) | (mant as u64 & ((1u64 << mb) - 1))
    } else {
        sign | mant as u64
    }
}

/// Rounds an `f64` to the format, nearest even; NaN stays NaN (quiet, top payload bits kept).
pub fn round_f64(x: f64, eb: u32, mb: u32) -> u64 {
    let bits = x.to_bits();
    let neg = bits >> 63 == 1;
    let sign = (neg as u64) << (eb + mb);
    let exp_all = ((1u64 << eb) - 1) << mb;
    if x.is_nan() {
        let payload = (bits & ((1u64 << 52) - 1)) >> (52 - mb);
        return sign | exp_all | (1u64 << (mb - 1)) | payload;
    }
    if x.is_infinite() {
        return sign | exp_all;
    }
    let ef = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    let (m, e) = if ef == 0 { (frac, -1074) } else { (frac | (1u64 << 52), ef - 1075) };
    round_to_format(neg, m as u128, e, eb, mb)
}

/// `f64` to `f16` bits, correctly rounded.
pub fn f64_to_f16_bits(x: f64) -> u16 {
    round_f64(x, 5, 10) as u16
}

/// `f64` to `bf16` bits, correctly rounded.
pub fn f64_to_bf16_bits(x: f64) -> u16 {
    round_f64(x, 8, 7) as u16
}

/// Converts a value to an element of `d`, as little-endian bits in the low
/// `d.bits()` of the result. Raw bits wider than the element are truncated;
/// [`check_fits`] rejects them first where that matters.
pub fn encode(d: Dtype, v: Value) -> u64 {
    match v {
        Value::Bits(b) => b & d.mask(),
        Value::Int(i) => match format_of(d) {
            Some((eb, mb)) => round_to_format(i < 0, i.unsigned_abs(), 0, eb, mb),
            None => (i as u128 as u64) & d.mask(),
        },
        Value::Float(x) => match d {
            Dtype::F64 => x.to_bits(),
            Dtype::F32 => (x as f32).to_bits() as u64,
            Dtype::F16 => f64_to_f16_bits(x) as u64,
            Dtype::Bf16 => f64_to_bf16_bits(x) as u64,
            Dtype::I8 => x as i8 as u8 as u64,
            Dtype::U8 => x as u8 as u64,
            Dtype::I16 => x as i16 as u16 as u64,
            Dtype::U16 => x as u16 as u64,
            Dtype::I32 => x as i32 as u32 as u64,
            Dtype::U32 => x as u32 as u64,
            Dtype::I64 => x as i64 as u64,
            Dtype::U64 => x as u64,
        },
    }
}

/// Raw bits must fit the element width.
pub fn check_fits(d: Dtype, v: Value) -> Result<(), ValueError> {
    match v {
        Value::Bits(b) if b & !d.mask() != 0 => Err(ValueError::BitsTooWide { bits: b, dtype: d }),
        _ => Ok(()),
    }
}

/// A scalar parameter's bits, strictly: integers must be in the type's range
/// (or integral floats in range), raw bits must fit, reals round to nearest even.
pub fn scalar_bits(d: Dtype, v: Value) -> Result<u64, ValueError> {
    check_fits(d, v)?;
    if d.is_float() {
        return Ok(encode(d, v));
    }
    let (lo, hi): (i128, i128) =
        if d.is_signed_int() { (-(1i128 << (d.bits() - 1)), (1i128 << (d.bits() - 1)) - 1) } else { (0, (1i128 << d.bits()) - 1) };
    let i = match v {
        Value::Bits(b) => return Ok(b),
        Value::Int(i) => i,
        Value::Float(x) => {
            if x.fract() != 0.0 || !x.is_finite() || x.abs() > 1e20 {
                return Err(ValueError::NotAnInteger(x));
            }
            x as i128
        }
    };
    if i < lo || i > hi {
        return Err(ValueError::OutOfRange { value: i, dtype: d });
    }
    Ok((i as u128 as u64) & d.mask())
}

/// Parses a scalar of type `d` from text; reals are parsed straight into the
/// type (one rounding) where Rust can (`f32`, `f64`).
pub fn parse_scalar_text(d: Dtype, s: &str) -> Result<u64, ValueError> {
    let v = Value::parse_text(s)?;
    match (d, v) {
        (Dtype::F32, Value::Float(_)) => s.trim().parse::<f32>().map(|f| f.to_bits() as u64).map_err(ValueError::from),
        _ => scalar_bits(d, v),
    }
}

/// An element's value as `f64` (exact except for 64-bit integers beyond 2^53).
pub fn decode_f64(d: Dtype, bits: u64) -> f64 {
    match d {
        Dtype::F16 => half::f16::from_bits(bits as u16).to_f64(),
        Dtype::Bf16 => half::bf16::from_bits(bits as u16).to_f64(),
        Dtype::F32 => f32::from_bits(bits as u32) as f64,
        Dtype::F64 => f64::from_bits(bits),
        _ => decode_int(d, bits) as f64,
    }
}

/// An integer element's value (sign-extended for signed dtypes).
pub fn decode_int(d: Dtype, bits: u64) -> i128 {
    let b = bits & d.mask();
    if d.is_signed_int() {
        let sh = 64 - d.bits();
        (((b << sh) as i64) >> sh) as i128
    } else {
        b as i128
    }
}

/// Human form of an element: the value, and for floats the raw bits too.
pub fn format_elem(d: Dtype, bits: u64) -> String {
    let b = bits & d.mask();
    match d {
        Dtype::F16 => format!("{} (0x{b:04x})", half::f16::from_bits(b as u16)),
        Dtype::Bf16 => format!("{} (0x{b:04x})", half::bf16::from_bits(b as u16)),
        Dtype::F32 => format!("{:?} (0x{b:08x})", f32::from_bits(b as u32)),
        Dtype::F64 => format!("{:?} (0x{b:016x})", f64::from_bits(b)),
        _ => decode_int(d, b).to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn wraps_and_rounds() {
        assert_eq!(encode(Dtype::U8, Value::Int(257)), 1);
        assert_eq!(encode(Dtype::I8, Value::Int(-1)), 0xff);
        assert_eq!(encode(Dtype::U32, Value::Int(-1)), 0xffff_ffff);
        assert_eq!(encode(Dtype::I64, Value::Int(-2)), u64::MAX - 1);
        assert_eq!(encode(Dtype::F32, Value::Int(16_777_217)), 16_777_216f32.to_bits() as u64);
        assert_eq!(encode(Dtype::F32, Value::Int(16_777_219)), 16_777_220f32.to_bits() as u64);
        assert_eq!(encode(Dtype::F16, Value::Int(2049)), 0x6800); // 2048, tie to even
        assert_eq!(encode(Dtype::F16, Value::Int(2051)), 0x6802); // 2052
        assert_eq!(encode(Dtype::F16, Value::Int(65519)), 0x7bff);
        assert_eq!(encode(Dtype::F16, Value::Int(65520)), 0x7c00); // inf
        assert_eq!(encode(Dtype::Bf16, Value::Int(257)), 0x4380); // 256
        assert_eq!(encode(Dtype::F64, Value::Float(-0.0)), (-0.0f64).to_bits());
        assert_eq!(encode(Dtype::I32, Value::Float(-2.7)), (-2i32) as u32 as u64);
        assert_eq!(encode(Dtype::U8, Value::Float(300.0)), 255);
        assert_eq!(encode(Dtype::U8, Value::Float(f64::NAN)), 0);
        assert_eq!(encode(Dtype::U16, Value::Bits(0x1234)), 0x1234);
        // f16 subnormals and underflow
        assert_eq!(f64_to_f16_bits(2f64.powi(-24)), 1);
        assert_eq!(f64_to_f16_bits(2f64.powi(-25)), 0); // tie to even (0)
        assert_eq!(f64_to_f16_bits(2f64.powi(-25) * 1.000001), 1);
        assert_eq!(f64_to_f16_bits(-2f64.powi(-14)), 0x8400);
        assert_eq!(f64_to_f16_bits(f64::INFINITY), 0x7c00);
        assert!(half::f16::from_bits(f64_to_f16_bits(f64::NAN)).is_nan());
        // Sticky bits below f64's top 32 bits matter: 1 + 2^-11 + 2^-40 rounds up.
        let x = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
        assert_eq!(f64_to_f16_bits(x), 0x3c01);
        // 1 + 2^-11 exactly is a tie and rounds to even (1.0).
        assert_eq!(f64_to_f16_bits(1.0 + 2f64.powi(-11)), 0x3c00);
    }

    #[test]
    fn scalars_are_strict() {
        assert_eq!(scalar_bits(Dtype::I32, Value::Int(-1)), Ok(0xffff_ffff));
        assert!(scalar_bits(Dtype::I32, Value::Int(1 << 31)).is_err());
        assert!(scalar_bits(Dtype::U32, Value::Int(-1)).is_err());
        assert_eq!(scalar_bits(Dtype::U64, Value::Int(u64::MAX as i128)), Ok(u64::MAX));
        assert!(scalar_bits(Dtype::U32, Value::Bits(1 << 32)).is_err());
        assert_eq!(scalar_bits(Dtype::I32, Value::Float(5.0)), Ok(5));
        assert!(scalar_bits(Dtype::I32, Value::Float(5.5)).is_err());
        assert_eq!(parse_scalar_text(Dtype::F32, "1.5"), Ok(1.5f32.to_bits() as u64));
        assert_eq!(parse_scalar_text(Dtype::F32, "0.1"), Ok(0.1f32.to_bits() as u64));
        assert_eq!(parse_scalar_text(Dtype::F64, "-inf"), Ok(f64::NEG_INFINITY.to_bits()));
        assert_eq!(parse_scalar_text(Dtype::U64, "0x10"), Ok(16));
        assert_eq!(parse_scalar_text(Dtype::I64, "-3"), Ok((-3i64) as u64));
        assert!(parse_scalar_text(Dtype::I32, "abc").is_err());
        assert!(parse_scalar_text(Dtype::I32, "0x").is_err());
        assert!(parse_scalar_text(Dtype::I32, "99999999999999999999999999999999999999999").is_err());
    }

    #[test]
    fn json_values() {
        use serde_json::json;
        assert_eq!(Value::from_json(&json!(3)), Ok(Value::Int(3)));
        assert_eq!(Value::from_json(&json!(u64::MAX)), Ok(Value::Int(u64::MAX as i128)));
        assert_eq!(Value::from_json(&json!(-1.5)), Ok(Value::Float(-1.5)));
        assert_eq!(Value::from_json(&json!("0x3f800000")), Ok(Value::Bits(0x3f80_0000)));
        assert!(Value::from_json(&json!("12")).is_err());
        assert!(Value::from_json(&json!(null)).is_err());
        for v in [Value::Int(-5), Value::Int(u64::MAX as i128), Value::Float(0.25), Value::Bits(0xabc)] {
            assert_eq!(Value::from_json(&v.to_json()), Ok(v));
        }
    }

    #[test]
    fn formats() {
        assert_eq!(format_elem(Dtype::I8, 0xff), "-1");
        assert_eq!(format_elem(Dtype::U8, 0xff), "255");
        assert_eq!(format_elem(Dtype::F32, 1.5f32.to_bits() as u64), "1.5 (0x3fc00000)");
        assert_eq!(format_elem(Dtype::F16, 0x3c00), "1 (0x3c00)");
        assert_eq!(decode_f64(Dtype::I16, 0x8000), -32768.0);
        assert_eq!(decode_f64(Dtype::Bf16, 0x3f80), 1.0);
    }

    proptest! {
        #[test]
        fn f64_to_f32_matches_hardware(bits in any::<u64>()) {
            let x = f64::from_bits(bits);
            let got = round_f64(x, 8, 23) as u32;
            let want = (x as f32).to_bits();
            if x.is_nan() {
                prop_assert!(f32::from_bits(got).is_nan());
            } else {
                prop_assert_eq!(got, want);
            }
        }

        #[test]
        fn f32_to_half_matches_half(bits in any::<u32>()) {
            let x = f32::from_bits(bits);
            prop_assume!(!x.is_nan());
            prop_assert_eq!(f64_to_f16_bits(x as f64), half::f16::from_f32(x).to_bits());
            prop_assert_eq!(f64_to_bf16_bits(x as f64), half::bf16::from_f32(x).to_bits());
        }

        #[test]
        fn int_to_f32_matches_hardware(i in any::<i64>()) {
            prop_assert_eq!(encode(Dtype::F32, Value::Int(i as i128)), (i as f32).to_bits() as u64);
            prop_assert_eq!(encode(Dtype::F64, Value::Int(i as i128)), (i as f64).to_bits());
        }

        #[test]
        fn small_f64_range_to_f32(m in any::<u64>(), e in -1100i32..-100) {
            // exercise subnormal f32 results from normal f64 inputs
            let x = (m as f64) * 2f64.powi(e);
            prop_assert_eq!(round_f64(x, 8, 23) as u32, (x as f32).to_bits());
        }
    }
}
