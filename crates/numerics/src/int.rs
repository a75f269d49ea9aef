//! Integer and bitwise instructions (add .. dp2a), per the PTX ISA's
//! "Integer Arithmetic" and "Logic and Shift" sections.

use crate::types::{norm, sext, zext, CmpOp, ScalarType};

enum_with_units! {
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
}

enum_with_units! {
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
        /// `mad24.hi.sat.s32`: bits 47..16 of the 48-bit product plus c, clamped
        /// to the s32 range.
        Mad24HiSat,
        Sad,
        Div,
        Rem,
        Abs,
        Neg,
        Min,
        Max,
        /// `min.relu.s32` / `max.relu.s32`: the result clamped below at 0.
        MinRelu,
        MaxRelu,
        Popc,
        Clz,
        Bfind,
        /// `bfind.shiftamt`.
        BfindShiftAmt,
        Brev,
        Bfe,
        Bfi,
        Shl,
        Shr,
        And,
        Or,
        Xor,
        Not,
        Cnot,
        /// `fns.b32 d, mask, base, offset`: the bit position of the
        /// |offset|-th set bit of `mask` from `base` on (upwards for a positive
        /// offset, downwards for a negative one, `base` itself for 0), or
        /// 0xffffffff when there is none.
        Fns,
        ;
        /// `min|max{.relu}.{s16x2,u16x2}`: two 16-bit elements per 32-bit
        /// operand, element 0 low (`.relu` on `.s16x2` only).
        MinMax16x2 {
            max: bool,
            signed: bool,
            relu: bool,
        },
        /// `szext.clamp|wrap.{s32,u32} d, a, b`: the low `b` bits of `a`, sign-
        /// or zero-extended (`.wrap`: b mod 32; `.clamp`: b at most 32).
        Szext {
            wrap: bool,
        },
        /// `bmsk.clamp|wrap.b32 d, a, b`: `b` one bits from bit `a` (`.wrap`:
        /// both taken mod 32; `.clamp`: clamped to 32, the mask cut at bit 31).
        Bmsk {
            wrap: bool,
        },
        /// `cvt.pack.sat.{u,s}{8,16}.s32{.b32} d, a, b{, c}`: a and b
        /// saturated to `bits`, b in the low bits, a above it, then c's low
        /// bits above both (none for 16-bit elements).
        CvtPack {
            bits: u8,
            signed: bool,
        },
        Prmt(PrmtMode),
        /// `shf.l` / `shf.r` (`.wrap` when `wrap`, else `.clamp`); operands a, b, c = lo, hi, shift.
        ShfL {
            wrap: bool,
        },
        ShfR {
            wrap: bool,
        },
        Lop3(u8),
        /// `dp4a.atype.btype`: `ty` is atype; `b_signed` gives btype.
        Dp4a {
            b_signed: bool,
        },
        /// `dp2a.lo|hi.atype.btype`.
        Dp2a {
            hi: bool,
            b_signed: bool,
        },
    }
}

/// Element `i` of the `bits`-wide elements packed in `v` (`dp4a`, `dp2a`).
#[inline]
fn lane_field(v: u64, bits: u32, i: u32, signed: bool) -> i64 {
    norm(v >> (bits * i), bits, signed) as i64
}

/// Operand width in bits for `ty` (`Pred` is 1 bit; `b128` is not an
/// arithmetic type and is treated as 64 bits).
#[inline]
fn width(ty: ScalarType) -> u32 {
    ty.bits().clamp(1, 64)
}

#[inline]
fn mask(bits: u32) -> u64 {
    zext(u64::MAX, bits)
}

/// The operand as a mathematical integer (sign- or zero-extended).
/// `fns.b32`, as the PTX ISA's pseudocode states it.
fn fns(mask: u32, base: u32, offset: i32) -> u32 {
    let bit = |p: i64| (0..32).contains(&p) && mask >> p & 1 == 1;
    if offset == 0 {
        return if bit(base as i64) { base } else { u32::MAX };
    }
    let step = if offset > 0 { 1 } else { -1 };
    let mut count = offset.unsigned_abs() - 1;
    let mut pos = base as i64;
    while (0..32).contains(&pos) {
        if bit(pos) {
            if count == 0 {
                return pos as u32;
            }
            count -= 1;
        }
        pos += step;
    }
    u32::MAX
}

#[inline]
fn val(v: u64, bits: u32, signed: bool) -> i128 {
    if signed {
        sext(v, bits) as i64 as i128
    } else {
        zext(v, bits) as i128
    }
}

#[inline]
fn clamp_to(v: i128, bits: u32, signed: bool) -> u64 {
    let (lo, hi) = if signed { (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1) } else { (0, (1i128 << bits) - 1) };
    norm(v.clamp(lo, hi) as u64, bits, signed)
}

/// The full product of two `bits`-wide operands (exact: at most 128 bits).
#[inline]
fn product(a: u64, b: u64, bits: u32, signed: bool) -> u128 {
    if signed {
        (val(a, bits, true) * val(b, bits, true)) as u128
    } else {
        (zext(a, bits) as u128) * (zext(b, bits) as u128)
    }
}

/// Bits `2n-1..n` of the product, normalised to the type.
#[inline]
fn mul_hi(a: u64, b: u64, bits: u32, signed: bool) -> u64 {
    let p = product(a, b, bits, signed);
    let hi = if signed { ((p as i128) >> bits) as u64 } else { (p >> bits) as u64 };
    norm(hi, bits, signed)
}

/// Evaluates `op` for operand type `ty` on sources `s` (unused ones ignored).
///
/// Results are the destination's bit pattern in the low bits: signed results
/// sign-extended to 64 bits, unsigned ones zero-extended; `MulWide`/`MadWide`
/// return the double-width value (for 64-bit operands, which PTX does not
/// allow, its low 64 bits). `popc`, `clz`, `bfind` return u32 counts.
///
/// Operand roles follow the PTX operand order: `s[0]` = a, `s[1]` = b,
/// `s[2]` = c, `s[3]` = d (`bfi`'s length). Shift amounts (`shl`, `shr`,
/// `shf`) are the low 32 bits of their operand, read unsigned.
///
/// Values the ISA leaves open follow an sm_90 GPU (see `tests/hw_golden.rs`):
/// division by zero gives all ones (unsigned `0xffff..`, signed -1), and so
/// does remainder by zero; `MIN / -1 = MIN`, `MIN % -1 = 0`; nothing panics.
#[inline]
pub fn eval_int(op: IntOp, ty: ScalarType, s: [u64; 4]) -> u64 {
    let w = width(ty);
    let sg = ty.is_signed();
    let [a, b, c, d] = s;
    let nrm = |v: u64| norm(v, w, sg);
    match op {
        IntOp::Add => nrm(a.wrapping_add(b)),
        IntOp::Sub => nrm(a.wrapping_sub(b)),
        IntOp::AddSat => clamp_to(val(a, w, sg) + val(b, w, sg), w, sg),
        IntOp::SubSat => clamp_to(val(a, w, sg) - val(b, w, sg), w, sg),
        IntOp::MulLo => nrm(a.wrapping_mul(b)),
        IntOp::MulHi => mul_hi(a, b, w, sg),
        IntOp::MulWide => {
            let p = product(a, b, w, sg) as u64;
            norm(p, (2 * w).min(64), sg)
        }
        IntOp::MadLo => nrm(a.wrapping_mul(b).wrapping_add(c)),
        IntOp::MadHi => nrm(mul_hi(a, b, w, sg).wrapping_add(c)),
        IntOp::MadHiSat => clamp_to(val(mul_hi(a, b, w, sg), w, sg) + val(c, w, sg), w, sg),
        IntOp::MadWide => {
            let ww = (2 * w).min(64);
            let p = product(a, b, w, sg) as u64;
            norm(p.wrapping_add(c), ww, sg)
        }
        IntOp::Mul24Lo | IntOp::Mul24Hi | IntOp::Mad24Lo | IntOp::Mad24Hi | IntOp::Mad24HiSat => {
            let x = |v: u64| {
                if sg {
                    sext(v, 24) as i64
                } else {
                    zext(v, 24) as i64
                }
            };
            let t = x(a) * x(b); // 48-bit product, exact in i64
            let part = match op {
                IntOp::Mul24Lo | IntOp::Mad24Lo => t as u64,
                _ => (t >> 16) as u64,
            };
            match op {
                IntOp::Mul24Lo | IntOp::Mul24Hi => norm(part, 32, sg),
                IntOp::Mad24HiSat => clamp_to(val(part, 32, sg) + val(c, 32, sg), 32, sg),
                _ => norm(part.wrapping_add(c), 32, sg),
            }
        }
        IntOp::Sad => {
            let diff = (val(a, w, sg) - val(b, w, sg)).unsigned_abs() as u64;
            nrm(diff.wrapping_add(c))
        }
        IntOp::Div => {
            let (x, y) = (val(a, w, sg), val(b, w, sg));
            if y == 0 {
                nrm(u64::MAX)
            } else {
                // i128 division: MIN / -1 overflows the type and wraps to MIN.
                nrm((x / y) as u64)
            }
        }
        IntOp::Rem => {
            let (x, y) = (val(a, w, sg), val(b, w, sg));
            if y == 0 {
                nrm(u64::MAX)
            } else {
                nrm((x % y) as u64)
            }
        }
        IntOp::Abs => nrm(val(a, w, true).unsigned_abs() as u64),
        IntOp::Neg => nrm(a.wrapping_neg()),
        IntOp::Min | IntOp::Max | IntOp::MinRelu | IntOp::MaxRelu => {
            let (x, y) = (val(a, w, sg), val(b, w, sg));
            let smaller = matches!(op, IntOp::Min | IntOp::MinRelu);
            let r = if (x < y) == smaller { x } else { y };
            let r = if matches!(op, IntOp::MinRelu | IntOp::MaxRelu) { r.max(0) } else { r };
            nrm(r as u64)
        }
        IntOp::MinMax16x2 { max, signed, relu } => {
            let half = |sh: u32| {
                let (x, y) = (val(a >> sh, 16, signed), val(b >> sh, 16, signed));
                let r = if (x < y) != max { x } else { y };
                let r = if relu { r.max(0) } else { r };
                (r as u64 & 0xFFFF) << sh
            };
            half(0) | half(16)
        }
        IntOp::Popc => zext(a, w).count_ones() as u64,
        IntOp::Clz => (zext(a, w).leading_zeros() - (64 - w)) as u64,
        IntOp::Bfind | IntOp::BfindShiftAmt => {
            let msb = w - 1;
            let mut x = zext(a, w);
            if sg && (x >> msb) & 1 == 1 {
                x = !x & mask(w);
            }
            if x == 0 {
                0xFFFF_FFFF
            } else {
                let i = 63 - x.leading_zeros();
                (if op == IntOp::BfindShiftAmt { msb - i } else { i }) as u64
            }
        }
        IntOp::Brev => nrm(zext(a, w).reverse_bits() >> (64 - w)),
        IntOp::Bfe => bfe(a, b, c, w, sg),
        IntOp::Bfi => nrm(bfi(a, b, c, d, w)),
        IntOp::CvtPack { bits, signed } => {
            let n = (bits as u32).clamp(1, 16);
            let (lo, hi) = if signed { (-(1i64 << (n - 1)), (1i64 << (n - 1)) - 1) } else { (0, (1i64 << n) - 1) };
            let m = (1u64 << n) - 1;
            let sat = |x: u64| ((x as u32 as i32 as i64).clamp(lo, hi) as u64) & m;
            let c = if n >= 16 { 0 } else { (c << (2 * n)) & 0xFFFF_FFFF };
            nrm(c | sat(a) << n | sat(b))
        }
        IntOp::Szext { wrap } => {
            let n = if wrap { b & 31 } else { (b as u32).min(32) as u64 } as u32;
            let x = a as u32;
            let r = match n {
                0 => 0,
                32 => x,
                _ if sg => (((x << (32 - n)) as i32) >> (32 - n)) as u32,
                _ => x & ((1u32 << n) - 1),
            };
            nrm(r as u64)
        }
        IntOp::Fns => nrm(fns(a as u32, b as u32, c as u32 as i32) as u64),
        IntOp::Bmsk { wrap } => {
            let (p, n) = if wrap { (a & 31, b & 31) } else { ((a as u32).min(32) as u64, (b as u32).min(32) as u64) };
            nrm((((1u64 << n) - 1) << p) & 0xFFFF_FFFF)
        }
        IntOp::Prmt(mode) => norm(prmt(mode, a, b, c), 32, sg),
        IntOp::Shl => {
            let n = b as u32;
            if n >= w {
                0
            } else {
                norm(a << n, w, sg)
            }
        }
        IntOp::Shr => {
            let n = b as u32;
            if sg {
                sext((sext(a, w) as i64 >> n.min(w - 1)) as u64, w)
            } else if n >= w {
                0
            } else {
                zext(a, w) >> n
            }
        }
        IntOp::ShfL { wrap } | IntOp::ShfR { wrap } => {
            // Funnel shift of {b:a}; b.32 (b.64 here as an extension).
            let fw = if w > 32 { 64 } else { 32 };
            let c = c as u32;
            let n = if wrap { c & (fw - 1) } else { c.min(fw) };
            let x = ((zext(b, fw) as u128) << fw) | zext(a, fw) as u128;
            let r = match op {
                IntOp::ShfL { .. } => ((x << n) >> fw) as u64,
                _ => (x >> n) as u64,
            };
            norm(r, fw, sg)
        }
        IntOp::And => nrm(a & b),
        IntOp::Or => nrm(a | b),
        IntOp::Xor => nrm(a ^ b),
        IntOp::Not => nrm(!a),
        IntOp::Cnot => (zext(a, w) == 0) as u64,
        IntOp::Lop3(lut) => nrm(lop3(a, b, c, lut)),
        IntOp::Dp4a { b_signed } => {
            let mut acc = c as i64;
            for i in 0..4 {
                acc = acc.wrapping_add(lane_field(a, 8, i, sg) * lane_field(b, 8, i, b_signed));
            }
            norm(acc as u64, 32, sg || b_signed)
        }
        IntOp::Dp2a { hi, b_signed } => {
            let (half, byte) = (|i| lane_field(a, 16, i, sg), |i| lane_field(b, 8, i, b_signed));
            let base = if hi { 2 } else { 0 };
            let acc = (c as i64).wrapping_add(half(0) * byte(base)).wrapping_add(half(1) * byte(base + 1));
            norm(acc as u64, 32, sg || b_signed)
        }
    }
}

/// `bfe`, per the ISA's pseudocode: position and length are the low 8 bits
/// of b and c; bits past the operand read as the sign bit (signed) or 0.
#[inline]
fn bfe(a: u64, b: u64, c: u64, w: u32, signed: bool) -> u64 {
    let msb = w - 1;
    let pos = (b & 0xFF) as u32;
    let len = (c & 0xFF) as u32;
    let a = zext(a, w);
    let sbit = if !signed || len == 0 { 0 } else { (a >> (pos + len - 1).min(msb)) & 1 };
    // Bits taken from a: i < len and pos + i <= msb.
    let take = if pos > msb { 0 } else { len.min(w - pos) };
    let field = if take == 0 { 0 } else { (a >> pos) & mask(take) };
    let r = if sbit == 1 { field | (mask(w) & !mask(take)) } else { field };
    if signed {
        sext(r, w)
    } else {
        r
    }
}

/// `bfi`: inserts the low `len` bits of a into b at `pos` (low 8 bits of c
/// and d), clipped at the operand's most significant bit.
#[inline]
fn bfi(a: u64, b: u64, c: u64, d: u64, w: u32) -> u64 {
    let pos = (c & 0xFF) as u32;
    let len = (d & 0xFF) as u32;
    if pos >= w || len == 0 {
        return zext(b, w);
    }
    let n = len.min(w - pos);
    let m = mask(n) << pos;
    zext((b & !m) | ((a << pos) & m), w)
}

/// `lop3.b32 d, a, b, c, immLut`: each result bit is
/// `immLut[(a << 2) | (b << 1) | c]` of the operand bits.
#[inline]
pub fn lop3(a: u64, b: u64, c: u64, lut: u8) -> u64 {
    let mut r = 0u64;
    for i in 0..8 {
        if lut >> i & 1 == 1 {
            let x = if i & 4 != 0 { a } else { !a };
            let y = if i & 2 != 0 { b } else { !b };
            let z = if i & 1 != 0 { c } else { !c };
            r |= x & y & z;
        }
    }
    r
}

/// `prmt.b32[.mode] d, a, b, c`: picks bytes of {b, a} (bytes 0-3 from a,
/// 4-7 from b). The default mode reads four selector nibbles from c (bit 3
/// of a nibble replicates the picked byte's sign bit); the other modes use
/// `c[1:0]` to choose a fixed pattern.
#[inline]
pub fn prmt(mode: PrmtMode, a: u64, b: u64, c: u64) -> u64 {
    let x = ((b & 0xFFFF_FFFF) << 32) | (a & 0xFFFF_FFFF);
    let byte = |i: u64| (x >> (8 * (i & 7))) & 0xFF;
    let sel = (c & 3) as usize;
    let pick: [u64; 4] = match mode {
        PrmtMode::Default => {
            let mut r = 0;
            for i in 0..4 {
                let n = (c >> (4 * i)) & 0xF;
                let v = byte(n);
                let v = if n & 8 != 0 {
                    if v & 0x80 != 0 {
                        0xFF
                    } else {
                        0
                    }
                } else {
                    v
                };
                r |= v << (8 * i);
            }
            return r;
        }
        // Entries are the byte indices for d.b0, d.b1, d.b2, d.b3.
        PrmtMode::F4e => [[0, 1, 2, 3], [1, 2, 3, 4], [2, 3, 4, 5], [3, 4, 5, 6]][sel],
        PrmtMode::B4e => [[0, 7, 6, 5], [1, 0, 7, 6], [2, 1, 0, 7], [3, 2, 1, 0]][sel],
        PrmtMode::Rc8 => [[0, 0, 0, 0], [1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3]][sel],
        PrmtMode::Ecl => [[0, 1, 2, 3], [1, 1, 2, 3], [2, 2, 2, 3], [3, 3, 3, 3]][sel],
        PrmtMode::Ecr => [[0, 0, 0, 0], [0, 1, 1, 1], [0, 1, 2, 2], [0, 1, 2, 3]][sel],
        PrmtMode::Rc16 => [[0, 1, 0, 1], [2, 3, 2, 3], [0, 1, 0, 1], [2, 3, 2, 3]][sel],
    };
    pick.iter().enumerate().fold(0, |r, (i, &n)| r | (byte(n) << (8 * i)))
}

/// `add.cc`/`addc[.cc]`: returns the sum and the carry out.
#[inline]
pub fn add_cc(ty: ScalarType, a: u64, b: u64, carry_in: bool) -> (u64, bool) {
    let w = width(ty);
    let s = zext(a, w) as u128 + zext(b, w) as u128 + carry_in as u128;
    (norm(s as u64, w, ty.is_signed()), (s >> w) & 1 == 1)
}

/// `sub.cc`/`subc[.cc]`: returns the difference and the borrow out.
///
/// PTX defines `subc` as `d = a - (b + CC.CF)`, CC.CF being the borrow of
/// the previous `sub.cc`; chains of `sub.cc`/`subc` compose through this
/// function as written. On the hardware the flag is a single carry bit that
/// holds NOT borrow after a subtraction (a - b is computed as a + ~b + 1):
/// `sub.cc` followed by `addc` adds 1 when there was *no* borrow, and
/// `add.cc` followed by `subc` subtracts 1 when there was *no* carry. An
/// engine keeping one CC.CF for both chains should use [`sub_cc_cf`], which
/// takes and returns that carry flag, to match the hardware for mixed chains.
#[inline]
pub fn sub_cc(ty: ScalarType, a: u64, b: u64, borrow_in: bool) -> (u64, bool) {
    let w = width(ty);
    let diff = zext(a, w) as i128 - zext(b, w) as i128 - borrow_in as i128;
    (norm(diff as u64, w, ty.is_signed()), diff < 0)
}

/// `sub.cc`/`subc[.cc]` with the hardware's flag convention: `cf_in` and the
/// returned flag are CC.CF, the carry of `a + ~b + CF` (i.e. NOT borrow), the
/// same flag [`add_cc`] and [`mad_cc`] read and write. `sub.cc` (no flag in)
/// is `sub_cc_cf(ty, a, b, true)`.
#[inline]
pub fn sub_cc_cf(ty: ScalarType, a: u64, b: u64, cf_in: bool) -> (u64, bool) {
    let (d, borrow) = sub_cc(ty, a, b, !cf_in);
    (d, !borrow)
}

/// `mad.lo|hi.cc`/`madc.lo|hi[.cc]`: a * b (lo or hi half) + c + carry_in, and the carry out.
#[inline]
pub fn mad_cc(ty: ScalarType, hi: bool, a: u64, b: u64, c: u64, carry_in: bool) -> (u64, bool) {
    let w = width(ty);
    let sg = ty.is_signed();
    let part = if hi { mul_hi(a, b, w, sg) } else { a.wrapping_mul(b) };
    let s = zext(part, w) as u128 + zext(c, w) as u128 + carry_in as u128;
    (norm(s as u64, w, sg), (s >> w) & 1 == 1)
}

/// Integer comparison for `setp`/`set`/`slct` (signed for `.s*`, else unsigned).
///
/// `lo`/`ls`/`hi`/`hs` always compare unsigned; the unordered float forms
/// (`equ` ...) act as their ordered counterparts; `num` is true and `nan`
/// false (integers are never NaN).
#[inline]
pub fn compare_int(op: CmpOp, ty: ScalarType, a: u64, b: u64) -> bool {
    let w = width(ty);
    let (x, y) = (val(a, w, ty.is_signed()), val(b, w, ty.is_signed()));
    let (ux, uy) = (zext(a, w), zext(b, w));
    use CmpOp::*;
    match op {
        Eq | Equ => ux == uy,
        Ne | Neu => ux != uy,
        Lt | Ltu => x < y,
        Le | Leu => x <= y,
        Gt | Gtu => x > y,
        Ge | Geu => x >= y,
        Lo => ux < uy,
        Ls => ux <= uy,
        Hi => ux > uy,
        Hs => ux >= uy,
        Num => true,
        Nan => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::ALL_TYPES;
    use proptest::prelude::*;
    use ScalarType::*;

    fn e(op: IntOp, ty: ScalarType, a: u64, b: u64) -> u64 {
        eval_int(op, ty, [a, b, 0, 0])
    }
    fn e3(op: IntOp, ty: ScalarType, a: u64, b: u64, c: u64) -> u64 {
        eval_int(op, ty, [a, b, c, 0])
    }
    const M32: u64 = 0xFFFF_FFFF;
    fn s(v: i64) -> u64 {
        v as u64
    }

    #[test]
    fn add_sub_wrap_and_extend() {
        assert_eq!(e(IntOp::Add, U32, M32, 1), 0);
        assert_eq!(e(IntOp::Add, S32, 0x7FFF_FFFF, 1), s(i32::MIN as i64));
        assert_eq!(e(IntOp::Sub, U16, 0, 1), 0xFFFF);
        assert_eq!(e(IntOp::Sub, S16, 0, 1), u64::MAX);
        assert_eq!(e(IntOp::Add, S64, i64::MAX as u64, 1), i64::MIN as u64);
        // High garbage bits in the operands are ignored.
        assert_eq!(e(IntOp::Add, U32, 0xDEAD_0000_0000_0001, 1), 2);
    }

    #[test]
    fn saturating_add_sub() {
        assert_eq!(e(IntOp::AddSat, S32, 0x7FFF_FFFF, 1), 0x7FFF_FFFF);
        assert_eq!(e(IntOp::AddSat, S32, 0x8000_0000, M32), s(i32::MIN as i64));
        assert_eq!(e(IntOp::SubSat, S32, 0x8000_0000, 1), s(i32::MIN as i64));
        assert_eq!(e(IntOp::SubSat, S32, 0x7FFF_FFFF, M32), 0x7FFF_FFFF);
        assert_eq!(e(IntOp::AddSat, S32, 5, s(-7)), s(-2));
    }

    #[test]
    fn multiplies() {
        assert_eq!(e(IntOp::MulLo, U32, M32, M32), 1);
        assert_eq!(e(IntOp::MulHi, U32, M32, M32), 0xFFFF_FFFE);
        assert_eq!(e(IntOp::MulHi, S32, M32, M32), 0); // -1 * -1 = 1
        assert_eq!(e(IntOp::MulHi, S32, 0x8000_0000, 2), u64::MAX); // -2^32 >> 32 = -1
        assert_eq!(e(IntOp::MulWide, S32, s(-2), 3), s(-6));
        assert_eq!(e(IntOp::MulWide, U32, M32, M32), 0xFFFF_FFFE_0000_0001);
        assert_eq!(e(IntOp::MulWide, U16, 0xFFFF, 0xFFFF), 0xFFFE_0001);
        assert_eq!(e(IntOp::MulWide, S16, 0x8000, 0x8000), 0x4000_0000);
        assert_eq!(e(IntOp::MulHi, U64, u64::MAX, u64::MAX), u64::MAX - 1);
        assert_eq!(e(IntOp::MulHi, S64, i64::MIN as u64, i64::MIN as u64), 1 << 62);
        assert_eq!(e(IntOp::MulHi, U16, 0xFFFF, 0xFFFF), 0xFFFE);
        assert_eq!(e3(IntOp::MadLo, S32, 3, 4, s(-20)), s(-8));
        assert_eq!(e3(IntOp::MadHi, U32, M32, M32, 2), 0); // 0xfffffffe + 2 wraps
        assert_eq!(e3(IntOp::MadWide, U32, M32, M32, 0xFFFF_FFFF), 0xFFFF_FFFF_0000_0000);
        assert_eq!(e3(IntOp::MadWide, S32, s(-1), 1, s(-1)), s(-2));
        // mad.hi.sat.s32 clamps the sum.
        assert_eq!(e3(IntOp::MadHiSat, S32, 0x4000_0000, 4, 0x7FFF_FFFF), 0x7FFF_FFFF);
        assert_eq!(e3(IntOp::MadHiSat, S32, 0x8000_0000, 2, 0x8000_0000), s(i32::MIN as i64));
        assert_eq!(e3(IntOp::MadHiSat, S32, 0x4000_0000, 4, 5), 6);
    }

    #[test]
    fn mul24_and_mad24() {
        // Operands are the low 24 bits, sign-extended from bit 23 for s32.
        assert_eq!(e(IntOp::Mul24Lo, S32, 0x0080_0000, 2), 0xFFFF_FFFF_FF00_0000);
        assert_eq!(e(IntOp::Mul24Lo, U32, 0xFF80_0000, 2), 0x0100_0000);
        assert_eq!(e(IntOp::Mul24Hi, U32, 0xFF_FFFF, 0xFF_FFFF), 0xFFFF_FE00);
        assert_eq!(e(IntOp::Mul24Hi, S32, 0xFF_FFFF, 0xFF_FFFF), 0); // (-1)(-1) = 1
        assert_eq!(e(IntOp::Mul24Hi, S32, 0x80_0000, 0x7F_FFFF), s((-(1i64 << 23) * ((1 << 23) - 1)) >> 16));
        assert_eq!(e3(IntOp::Mad24Lo, U32, 0x0100_0003, 5, 1), 16);
        assert_eq!(e3(IntOp::Mad24Hi, U32, 0xFF_FFFF, 0xFF_FFFF, 0x200), 0); // 0xfffffe00 + 0x200 wraps
        assert_eq!(e3(IntOp::Mad24HiSat, S32, 0x7F_FFFF, 0x7F_FFFF, 0x7FFF_FFFF), 0x7FFF_FFFF);
    }

    #[test]
    fn sad_abs_neg_min_max() {
        assert_eq!(e3(IntOp::Sad, U32, 3, 10, 1), 8);
        assert_eq!(e3(IntOp::Sad, S32, s(-3), 10, 1), 14);
        assert_eq!(e3(IntOp::Sad, S32, 0x8000_0000, 0x7FFF_FFFF, 0), u64::MAX); // |-2^31 - (2^31-1)| wraps
        assert_eq!(e3(IntOp::Sad, U64, 0, u64::MAX, 1), 0);
        assert_eq!(e(IntOp::Abs, S32, 0x8000_0000, 0), s(i32::MIN as i64));
        assert_eq!(e(IntOp::Abs, S16, 0xFFFF, 0), 1);
        assert_eq!(e(IntOp::Abs, S64, i64::MIN as u64, 0), i64::MIN as u64);
        assert_eq!(e(IntOp::Neg, S32, 0x8000_0000, 0), s(i32::MIN as i64));
        assert_eq!(e(IntOp::Neg, S16, 1, 0), u64::MAX);
        assert_eq!(e(IntOp::Min, S32, M32, 1), u64::MAX);
        assert_eq!(e(IntOp::Min, U32, M32, 1), 1);
        assert_eq!(e(IntOp::Max, S16, 0x8000, 0x7FFF), 0x7FFF);
        assert_eq!(e(IntOp::Max, U64, 0, u64::MAX), u64::MAX);
    }

    #[test]
    fn division_edge_cases() {
        for (ty, min, ones) in [(S16, 0x8000u64, 0xFFFFu64), (S32, 0x8000_0000, M32), (S64, 1 << 63, u64::MAX)] {
            let w = ty.bits();
            assert_eq!(e(IntOp::Div, ty, 7, 0), u64::MAX, "{ty:?} x/0 = -1");
            assert_eq!(e(IntOp::Div, ty, s(-7), 0), u64::MAX);
            assert_eq!(e(IntOp::Rem, ty, 7, 0), u64::MAX, "{ty:?} x%0 = all ones");
            assert_eq!(e(IntOp::Div, ty, min, ones), sext(min, w), "{ty:?} MIN/-1 = MIN");
            assert_eq!(e(IntOp::Rem, ty, min, ones), 0, "{ty:?} MIN%-1 = 0");
            assert_eq!(e(IntOp::Div, ty, s(-7), 2), s(-3), "truncates toward zero");
            assert_eq!(e(IntOp::Rem, ty, s(-7), 2), s(-1), "sign of the dividend");
            assert_eq!(e(IntOp::Rem, ty, 7, s(-2)), 1);
        }
        for ty in [U16, U32, U64] {
            let ones = zext(u64::MAX, ty.bits());
            assert_eq!(e(IntOp::Div, ty, 5, 0), ones);
            assert_eq!(e(IntOp::Rem, ty, 5, 0), ones);
            assert_eq!(e(IntOp::Div, ty, ones, 2), ones >> 1);
            assert_eq!(e(IntOp::Rem, ty, ones, 10), ones % 10);
        }
    }

    #[test]
    fn bit_counting() {
        assert_eq!(e(IntOp::Popc, B32, M32, 0), 32);
        assert_eq!(e(IntOp::Popc, B64, u64::MAX, 0), 64);
        assert_eq!(e(IntOp::Popc, B32, 0xF_0000_0001, 0), 1);
        assert_eq!(e(IntOp::Clz, B32, 0, 0), 32);
        assert_eq!(e(IntOp::Clz, B64, 0, 0), 64);
        assert_eq!(e(IntOp::Clz, B32, 1, 0), 31);
        assert_eq!(e(IntOp::Clz, B64, 1 << 40, 0), 23);
        assert_eq!(e(IntOp::Bfind, U32, 0, 0), 0xFFFF_FFFF);
        assert_eq!(e(IntOp::Bfind, U32, 0x8000_0000, 0), 31);
        assert_eq!(e(IntOp::Bfind, S32, M32, 0), 0xFFFF_FFFF); // -1 has no non-sign bit
        assert_eq!(e(IntOp::Bfind, S32, 0x8000_0000, 0), 30);
        assert_eq!(e(IntOp::Bfind, S32, 0x7FFF_FFFF, 0), 30);
        assert_eq!(e(IntOp::BfindShiftAmt, U32, 1, 0), 31);
        assert_eq!(e(IntOp::BfindShiftAmt, U64, 1 << 40, 0), 23);
        assert_eq!(e(IntOp::BfindShiftAmt, S32, 0, 0), 0xFFFF_FFFF);
        assert_eq!(e(IntOp::Bfind, S64, s(-2), 0), 0);
        assert_eq!(e(IntOp::Brev, B32, 1, 0), 0x8000_0000);
        assert_eq!(e(IntOp::Brev, B64, 0b110, 0), 0x6000_0000_0000_0000);
    }

    #[test]
    fn bfe_per_isa_pseudocode() {
        assert_eq!(e3(IntOp::Bfe, U32, 0xABCD_1234, 8, 8), 0x12);
        assert_eq!(e3(IntOp::Bfe, S32, 0x0000_8000, 8, 8), !0x7F); // 0x80 sign-extended
        assert_eq!(e3(IntOp::Bfe, S32, 0x8000_0000, 28, 8), s(-8)); // past msb: sign fill
        assert_eq!(e3(IntOp::Bfe, U32, 0x8000_0000, 28, 8), 8);
        assert_eq!(e3(IntOp::Bfe, S32, 0xFFFF_FFFF, 4, 0), 0); // len 0
        assert_eq!(e3(IntOp::Bfe, S32, 0x8000_0000, 40, 3), u64::MAX); // pos past msb, signed
        assert_eq!(e3(IntOp::Bfe, U32, 0x8000_0000, 40, 3), 0);
        // Only the low 8 bits of pos and len count.
        assert_eq!(e3(IntOp::Bfe, U32, 0xABCD_1234, 0x1208, 0x3308), 0x12);
        assert_eq!(e3(IntOp::Bfe, U64, 0xF000_0000_0000_0000, 60, 8), 0xF);
        assert_eq!(e3(IntOp::Bfe, S64, 0xF000_0000_0000_0000, 60, 8), u64::MAX);
    }

    #[test]
    fn bfi_per_isa_pseudocode() {
        assert_eq!(eval_int(IntOp::Bfi, B32, [0xF, 0xFFFF_0000, 4, 4]), 0xFFFF_00F0);
        assert_eq!(eval_int(IntOp::Bfi, B32, [0xFF, 0, 28, 8]), 0xF000_0000); // clipped at msb
        assert_eq!(eval_int(IntOp::Bfi, B32, [0xFF, 0x1234, 32, 8]), 0x1234); // pos past msb
        assert_eq!(eval_int(IntOp::Bfi, B32, [0xFF, 0x1234, 0, 0]), 0x1234); // len 0
        assert_eq!(eval_int(IntOp::Bfi, B32, [0xFF, 0, 0x104, 0x204]), 0xF0); // low 8 bits
        assert_eq!(eval_int(IntOp::Bfi, B64, [0xFF, 0, 60, 8]), 0xF000_0000_0000_0000);
        let (clamp, wrap) = (IntOp::Bmsk { wrap: false }, IntOp::Bmsk { wrap: true });
        assert_eq!(eval_int(clamp, B32, [24, 12, 0, 0]), 0xFF00_0000);
        assert_eq!(eval_int(clamp, B32, [0, 32, 0, 0]), 0xFFFF_FFFF);
        assert_eq!(eval_int(clamp, B32, [40, 4, 0, 0]), 0);
        assert_eq!(eval_int(clamp, B32, [4, 0xFFFF_FFFF, 0, 0]), 0xFFFF_FFF0);
        assert_eq!(eval_int(wrap, B32, [33, 3, 0, 0]), 0b1110);
        assert_eq!(eval_int(wrap, B32, [0, 32, 0, 0]), 0);
        let pack = |bits, signed, a: i32, b: i32, c: u32| {
            eval_int(IntOp::CvtPack { bits, signed }, B32, [a as u32 as u64, b as u32 as u64, c as u64, 0])
        };
        assert_eq!(pack(8, false, -257, 257, 0xF839_B0ED), 0xB0ED_00FF);
        assert_eq!(pack(8, true, -257, 257, 0xF839_B0ED), 0xB0ED_807F);
        assert_eq!(pack(16, true, 40000, -3, 0xFFFF_FFFF), 0x7FFF_FFFD);
        assert_eq!(pack(4, true, -9, 5, 0xABCD_EF12), 0xCDEF_1285);
        assert_eq!(pack(2, false, 7, 1, 1), 0x1D);
    }

    #[test]
    fn prmt_modes() {
        let (a, b) = (0x8877_6655u64, 0x4433_2211u64); // bytes 0..7: 55 66 77 88 11 22 33 44
        assert_eq!(prmt(PrmtMode::Default, a, b, 0x3210), a);
        assert_eq!(prmt(PrmtMode::Default, a, b, 0x7654), b);
        assert_eq!(prmt(PrmtMode::Default, a, b, 0x0123), 0x5566_7788);
        // Bit 3 of a selector replicates the sign of the picked byte.
        assert_eq!(prmt(PrmtMode::Default, a, b, 0x8B0B), 0x00FF_55FF);
        assert_eq!(prmt(PrmtMode::F4e, a, b, 1), 0x1188_7766);
        assert_eq!(prmt(PrmtMode::B4e, a, b, 0), 0x2233_4455);
        assert_eq!(prmt(PrmtMode::Rc8, a, b, 2), 0x7777_7777);
        assert_eq!(prmt(PrmtMode::Ecl, a, b, 1), 0x8877_6666);
        assert_eq!(prmt(PrmtMode::Ecr, a, b, 2), 0x7777_6655);
        assert_eq!(prmt(PrmtMode::Rc16, a, b, 1), 0x8877_8877);
        assert_eq!(eval_int(IntOp::Prmt(PrmtMode::Rc16), B32, [a, b, 0, 0]), 0x6655_6655);
    }

    #[test]
    fn shifts_past_width() {
        assert_eq!(e(IntOp::Shl, B32, 1, 31), 0x8000_0000);
        assert_eq!(e(IntOp::Shl, B32, 1, 32), 0);
        assert_eq!(e(IntOp::Shl, B32, 1, u32::MAX as u64), 0);
        assert_eq!(e(IntOp::Shl, B16, 1, 16), 0);
        assert_eq!(e(IntOp::Shl, B64, 1, 63), 1 << 63);
        assert_eq!(e(IntOp::Shl, B64, 1, 64), 0);
        // The shift amount is the low 32 bits of its operand.
        assert_eq!(e(IntOp::Shl, B32, 1, 0x1_0000_0001), 2);
        assert_eq!(e(IntOp::Shr, U32, 0x8000_0000, 31), 1);
        assert_eq!(e(IntOp::Shr, U32, 0x8000_0000, 32), 0);
        assert_eq!(e(IntOp::Shr, B32, 0x8000_0000, 4), 0x0800_0000); // .b is logical
        assert_eq!(e(IntOp::Shr, S32, 0x8000_0000, 4), 0xFFFF_FFFF_F800_0000);
        assert_eq!(e(IntOp::Shr, S32, 0x8000_0000, 100), u64::MAX);
        assert_eq!(e(IntOp::Shr, S32, 0x7FFF_FFFF, 100), 0);
        assert_eq!(e(IntOp::Shr, S16, 0x8000, 16), u64::MAX);
        assert_eq!(e(IntOp::Shr, S64, 1 << 63, 64), u64::MAX);
        assert_eq!(e(IntOp::Shr, U64, u64::MAX, 64), 0);
    }

    #[test]
    fn funnel_shifts() {
        let (lo, hi) = (0x8765_4321u64, 0x1234_5678u64);
        let shf = |op, n| eval_int(op, B32, [lo, hi, n, 0]);
        let (lw, lc) = (IntOp::ShfL { wrap: true }, IntOp::ShfL { wrap: false });
        let (rw, rc) = (IntOp::ShfR { wrap: true }, IntOp::ShfR { wrap: false });
        assert_eq!(shf(lw, 8), 0x3456_7887);
        assert_eq!(shf(rw, 8), 0x7887_6543);
        assert_eq!(shf(lw, 0), hi);
        assert_eq!(shf(rw, 0), lo);
        assert_eq!(shf(lw, 40), 0x3456_7887); // wrap: 40 & 31 = 8
        assert_eq!(shf(lc, 40), lo); // clamp: 32
        assert_eq!(shf(rc, 40), hi);
        assert_eq!(shf(rw, 32), lo);
        assert_eq!(shf(lc, 32), lo);
    }

    #[test]
    fn logic_ops() {
        assert_eq!(e(IntOp::And, B32, 0xF0F0, 0xFF00), 0xF000);
        assert_eq!(e(IntOp::Or, B16, 0xF0F0, 0x0F0F_0F0F), 0xFFFF);
        assert_eq!(e(IntOp::Xor, B64, u64::MAX, 1), u64::MAX - 1);
        assert_eq!(e(IntOp::Not, B32, 0, 0), M32);
        assert_eq!(e(IntOp::Not, B16, 0xFF, 0), 0xFF00);
        assert_eq!(e(IntOp::Not, Pred, 1, 0), 0);
        assert_eq!(e(IntOp::Not, Pred, 0, 0), 1);
        assert_eq!(e(IntOp::And, Pred, 1, 3), 1);
        assert_eq!(e(IntOp::Cnot, B32, 0, 0), 1);
        assert_eq!(e(IntOp::Cnot, B32, 0x100, 0), 0);
        assert_eq!(e(IntOp::Cnot, B16, 0x1_0000, 0), 1); // only the low 16 bits count
        assert_eq!(e3(IntOp::Lop3(0x96), B32, 0b1100, 0b1010, 0b0110), 0b1100 ^ 0b1010 ^ 0b0110);
        assert_eq!(e3(IntOp::Lop3(0xE8), B32, 0b1100, 0b1010, 0b0110), 0b1110); // majority
        assert_eq!(e3(IntOp::Lop3(0xFF), B32, 0, 0, 0), M32);
    }

    #[test]
    fn dot_products() {
        // dp4a.u32.u32: 1*5 + 2*6 + 3*7 + 4*8 + 10 = 80
        assert_eq!(e3(IntOp::Dp4a { b_signed: false }, U32, 0x0403_0201, 0x0807_0605, 10), 80);
        // dp4a.s32.s32: bytes are signed: (-1)*(-1) * 4 = 4
        assert_eq!(e3(IntOp::Dp4a { b_signed: true }, S32, M32, M32, 0), 4);
        assert_eq!(e3(IntOp::Dp4a { b_signed: false }, U32, M32, M32, 0), 4 * 255 * 255);
        // dp4a.s32.u32: signed a, unsigned b: -1 * 255 * 4 - 1
        assert_eq!(e3(IntOp::Dp4a { b_signed: false }, S32, M32, M32, M32), s(-1021));
        // dp2a.lo: a halves times b bytes 0, 1; .hi: bytes 2, 3.
        let (a, b) = (0x0003_0002u64, 0x0504_0302u64);
        assert_eq!(e3(IntOp::Dp2a { hi: false, b_signed: false }, U32, a, b, 1), 2 * 2 + 3 * 3 + 1);
        assert_eq!(e3(IntOp::Dp2a { hi: true, b_signed: false }, U32, a, b, 1), 2 * 4 + 3 * 5 + 1);
        assert_eq!(e3(IntOp::Dp2a { hi: false, b_signed: true }, S32, 0xFFFF_FFFF, 0xFFFF, 0), 2);
        // Accumulation wraps at 32 bits.
        assert_eq!(e3(IntOp::Dp4a { b_signed: false }, U32, 0x01, 0x01, M32), 0);
    }

    #[test]
    fn carry_chains() {
        assert_eq!(add_cc(U32, M32, 1, false), (0, true));
        assert_eq!(add_cc(U32, M32, 0, true), (0, true));
        assert_eq!(add_cc(U32, 1, 2, true), (4, false));
        assert_eq!(add_cc(S32, 0x7FFF_FFFF, 1, false), (s(i32::MIN as i64), false));
        assert_eq!(add_cc(U64, u64::MAX, u64::MAX, true), (u64::MAX, true));
        assert_eq!(sub_cc(U32, 0, 1, false), (M32, true));
        assert_eq!(sub_cc(U32, 5, 5, true), (M32, true));
        assert_eq!(sub_cc(U32, 5, 3, true), (1, false));
        // Hardware flag convention: CF = NOT borrow.
        assert_eq!(sub_cc_cf(U32, 5, 3, true), (2, true));
        assert_eq!(sub_cc_cf(U32, 3, 5, true), (s(-2) & M32, false));
        assert_eq!(sub_cc_cf(U32, 5, 5, false), (M32, false));
        assert_eq!(mad_cc(U32, false, 0x10000, 0x10000, M32, false), (M32, false));
        assert_eq!(mad_cc(U32, false, 0x10000, 0x10000, M32, true), (0, true));
        assert_eq!(mad_cc(U32, true, M32, M32, 2, false), (0, true));
        assert_eq!(mad_cc(S32, true, M32, M32, M32, false), (u64::MAX, false)); // hi(1) = 0; 0 + -1
    }

    #[test]
    fn integer_compare() {
        use CmpOp::*;
        assert!(compare_int(Lt, S32, M32, 0));
        assert!(!compare_int(Lt, U32, M32, 0));
        assert!(compare_int(Lo, S32, 0, M32)); // lo is unsigned even on .s32
        assert!(compare_int(Hi, U64, u64::MAX, 0));
        assert!(compare_int(Ge, S16, 0x7FFF, 0x8000));
        assert!(compare_int(Eq, B16, 0x1_0005, 5)); // low 16 bits only
        assert!(compare_int(Ne, B32, 1, 2));
        assert!(compare_int(Le, S64, 3, 3));
        assert!(compare_int(Num, S32, 0, 0) && !compare_int(Nan, S32, 0, 0));
        assert!(crate::compare(Gt, S32, false, 1, M32));
    }

    fn any_op() -> impl Strategy<Value = IntOp> {
        use IntOp::*;
        let simple = prop::sample::select(IntOp::UNIT);
        let prm = prop::sample::select(PrmtMode::UNIT);
        prop_oneof![
            simple,
            prm.prop_map(Prmt),
            any::<bool>().prop_map(|wrap| ShfL { wrap }),
            any::<bool>().prop_map(|wrap| Bmsk { wrap }),
            (prop::sample::select(vec![2u8, 4, 8, 16]), any::<bool>()).prop_map(|(bits, signed)| CvtPack { bits, signed }),
            any::<bool>().prop_map(|wrap| ShfR { wrap }),
            any::<u8>().prop_map(Lop3),
            any::<bool>().prop_map(|b_signed| Dp4a { b_signed }),
            (any::<bool>(), any::<bool>()).prop_map(|(hi, b_signed)| Dp2a { hi, b_signed }),
        ]
    }

    fn edgy() -> impl Strategy<Value = u64> {
        prop_oneof![
            any::<u64>(),
            prop::sample::select(vec![0, 1, 31, 32, 33, 63, 64, 65, 255, 256, M32, 0x8000_0000, 1 << 63, u64::MAX]),
            (0u64..80),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]

        #[test]
        fn never_panics(op in any_op(), ti in 0..ALL_TYPES.len(), s in prop::array::uniform4(edgy()), cin: bool, hi: bool) {
            let ty = ALL_TYPES[ti];
            let _ = eval_int(op, ty, s);
            let _ = add_cc(ty, s[0], s[1], cin);
            let _ = sub_cc(ty, s[0], s[1], cin);
            let _ = sub_cc_cf(ty, s[0], s[1], cin);
            let _ = mad_cc(ty, hi, s[0], s[1], s[2], cin);
            for op in [CmpOp::Eq, CmpOp::Lt, CmpOp::Lo, CmpOp::Geu, CmpOp::Nan] {
                let _ = compare_int(op, ty, s[0], s[1]);
            }
        }

        #[test]
        fn results_are_normalised(op in any_op(), ti in 9usize..14, s in prop::array::uniform4(edgy())) {
            let ty = [U32, U64, S8, S16, S32, S64][ti - 8];
            let r = eval_int(op, ty, s);
            if ty == S32 && !matches!(op, IntOp::MulWide | IntOp::MadWide | IntOp::Popc | IntOp::Clz
                | IntOp::Bfind | IntOp::BfindShiftAmt | IntOp::Cnot) {
                prop_assert_eq!(r, sext(r, 32));
            }
            if ty == U32 && !matches!(op, IntOp::MulWide | IntOp::MadWide) {
                prop_assert_eq!(r >> 32, 0);
            }
        }

        #[test]
        fn lop3_is_its_truth_table(a: u32, b: u32, c: u32, lut: u8) {
            let r = eval_int(IntOp::Lop3(lut), B32, [a as u64, b as u64, c as u64, 0]) as u32;
            for i in 0..32 {
                let idx = ((a >> i) & 1) << 2 | ((b >> i) & 1) << 1 | ((c >> i) & 1);
                prop_assert_eq!((r >> i) & 1, (lut as u32 >> idx) & 1);
            }
            // The classic constants: a = 0xF0, b = 0xCC, c = 0xAA evaluate to the LUT itself.
            prop_assert_eq!(lop3(0xF0, 0xCC, 0xAA, lut) & 0xFF, lut as u64);
        }

        #[test]
        fn add_128_via_chain(x: u128, y: u128) {
            let w = |v: u128, i: u32| (v >> (32 * i)) as u32 as u64;
            let mut cf = false;
            let mut r = 0u128;
            for i in 0..4 {
                let (d, c) = add_cc(U32, w(x, i), w(y, i), cf);
                r |= (d as u128) << (32 * i);
                cf = c;
            }
            prop_assert_eq!(r, x.wrapping_add(y));
            prop_assert_eq!(cf, x.checked_add(y).is_none());
        }

        #[test]
        fn sub_128_via_chain(x: u128, y: u128) {
            let w = |v: u128, i: u32| (v >> (32 * i)) as u32 as u64;
            // PTX borrow convention.
            let (mut borrow, mut r) = (false, 0u128);
            for i in 0..4 {
                let (d, b) = sub_cc(U32, w(x, i), w(y, i), borrow);
                r |= (d as u128) << (32 * i);
                borrow = b;
            }
            prop_assert_eq!(r, x.wrapping_sub(y));
            prop_assert_eq!(borrow, x < y);
            // Hardware carry convention, 64-bit limbs.
            let (mut cf, mut r) = (true, 0u128);
            for i in 0..2 {
                let (d, c) = sub_cc_cf(U64, (x >> (64 * i)) as u64, (y >> (64 * i)) as u64, cf);
                r |= (d as u128) << (64 * i);
                cf = c;
            }
            prop_assert_eq!(r, x.wrapping_sub(y));
            prop_assert_eq!(cf, x >= y);
        }

        #[test]
        fn mul_64x64_via_mad_chain(x: u64, y: u64) {
            // The ISA's extended-precision multiply example, with 32-bit limbs.
            let (x0, x1, y0, y1) = (x & M32, x >> 32, y & M32, y >> 32);
            let r0 = e(IntOp::MulLo, U32, x0, y0);
            let r1 = e(IntOp::MulHi, U32, x0, y0);
            let (r1, c) = mad_cc(U32, false, x1, y0, r1, false);
            let (r2, _) = mad_cc(U32, true, x1, y0, 0, c);
            let (r1, c) = mad_cc(U32, false, x0, y1, r1, false);
            let (r2, c2) = mad_cc(U32, true, x0, y1, r2, c);
            let (r3, _) = add_cc(U32, 0, 0, c2);
            let (r2, c) = mad_cc(U32, false, x1, y1, r2, false);
            let (r3, _) = mad_cc(U32, true, x1, y1, r3, c);
            let p = (r3 as u128) << 96 | (r2 as u128) << 64 | (r1 as u128) << 32 | r0 as u128;
            prop_assert_eq!(p, x as u128 * y as u128);
        }

        #[test]
        fn mul_matches_wide_arithmetic(a: i32, b: i32) {
            let p = a as i64 * b as i64;
            prop_assert_eq!(e(IntOp::MulWide, S32, a as u64, b as u64), p as u64);
            prop_assert_eq!(e(IntOp::MulHi, S32, a as u64, b as u64), (p >> 32) as u64);
            prop_assert_eq!(e(IntOp::MulLo, S32, a as u64, b as u64), p as i32 as i64 as u64);
            let up = a as u32 as u64 * b as u32 as u64;
            prop_assert_eq!(e(IntOp::MulHi, U32, a as u64, b as u64), up >> 32);
        }

        #[test]
        fn div_rem_identity(a: i32, b: i32) {
            prop_assume!(b != 0);
            let q = e(IntOp::Div, S32, a as u64, b as u64) as i32;
            let r = e(IntOp::Rem, S32, a as u64, b as u64) as i32;
            prop_assert_eq!(q.wrapping_mul(b).wrapping_add(r), a);
            prop_assert!(r == 0 || (r < 0) == (a < 0));
        }
    }
}
