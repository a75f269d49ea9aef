//! Integer, float, comparison and conversion instructions: one lane loop per
//! op over register columns. The plain 32/64-bit forms (`Bin32`, `Bin64`,
//! `Tern32`, ...) are fast paths monomorphised per operation; everything else
//! goes lane by lane through `warpsim-numerics`.

// Handlers take the decoded op's fields as arguments.
#![allow(clippy::too_many_arguments)]

use super::*;
use warpsim_numerics::{self as num, zext, ScalarType};

#[inline(always)]
fn canon_f32(x: f32) -> u32 {
    if x.is_nan() {
        0x7FFF_FFFF
    } else {
        x.to_bits()
    }
}

/// The fast paths below compute what `warpsim-numerics` computes for the
/// same operation with default modifiers (a test checks it); f64 NaN results
/// carry operand payloads, so those lanes go to the general path.
#[inline(always)]
pub fn bin32_lane(f: Bin32, p: u32, q: u32) -> u32 {
    match f {
        Bin32::Add => p.wrapping_add(q),
        Bin32::Sub => p.wrapping_sub(q),
        Bin32::MulLo => p.wrapping_mul(q),
        Bin32::And => p & q,
        Bin32::Or => p | q,
        Bin32::Xor => p ^ q,
        Bin32::Shl => {
            if q > 31 {
                0
            } else {
                p << q
            }
        }
        Bin32::ShrU => {
            if q > 31 {
                0
            } else {
                p >> q
            }
        }
        Bin32::ShrS => ((p as i32) >> q.min(31)) as u32,
        Bin32::MinS => (p as i32).min(q as i32) as u32,
        Bin32::MinU => p.min(q),
        Bin32::MaxS => (p as i32).max(q as i32) as u32,
        Bin32::MaxU => p.max(q),
        Bin32::AddF => canon_f32(f32::from_bits(p) + f32::from_bits(q)),
        Bin32::SubF => canon_f32(f32::from_bits(p) - f32::from_bits(q)),
        Bin32::MulF => canon_f32(f32::from_bits(p) * f32::from_bits(q)),
        Bin32::MinF => min_f32(p, q),
        Bin32::MaxF => max_f32(p, q),
    }
}

#[inline(always)]
pub fn bin64_lane(f: Bin64, p: u64, q: u64) -> u64 {
    use num::float::FloatOp;
    let float = |op: FloatOp, r: f64| {
        if r.is_nan() {
            num::float::eval_float(op, ScalarType::F64, num::FMode::RN, [p, q, 0])
        } else {
            r.to_bits()
        }
    };
    match f {
        Bin64::Add => p.wrapping_add(q),
        Bin64::Sub => p.wrapping_sub(q),
        Bin64::MulLo => p.wrapping_mul(q),
        Bin64::And => p & q,
        Bin64::Or => p | q,
        Bin64::Xor => p ^ q,
        Bin64::AddF => float(FloatOp::Add, f64::from_bits(p) + f64::from_bits(q)),
        Bin64::SubF => float(FloatOp::Sub, f64::from_bits(p) - f64::from_bits(q)),
        Bin64::MulF => float(FloatOp::Mul, f64::from_bits(p) * f64::from_bits(q)),
    }
}

#[inline(always)]
pub fn fma_f64_lane(a: u64, b: u64, c: u64) -> u64 {
    let r = f64::from_bits(a).mul_add(f64::from_bits(b), f64::from_bits(c));
    if r.is_nan() {
        num::float::eval_float(num::float::FloatOp::Fma, ScalarType::F64, num::FMode::RN, [a, b, c])
    } else {
        r.to_bits()
    }
}

/// `fma.rn.f32`, one lane (the column version is [`fma_f32_columns`]).
#[inline(always)]
pub fn fma_f32_lane(a: u32, b: u32, c: u32) -> u32 {
    canon_f32(f32::from_bits(a).mul_add(f32::from_bits(b), f32::from_bits(c)))
}

#[inline(always)]
fn min_f32(a: u32, b: u32) -> u32 {
    let (x, y) = (f32::from_bits(a), f32::from_bits(b));
    if x.is_nan() && y.is_nan() {
        0x7FFF_FFFF
    } else if x.is_nan() {
        b
    } else if y.is_nan() || x < y {
        a
    } else if y < x {
        b
    } else {
        a | b
    }
}

#[inline(always)]
fn max_f32(a: u32, b: u32) -> u32 {
    let (x, y) = (f32::from_bits(a), f32::from_bits(b));
    if x.is_nan() && y.is_nan() {
        0x7FFF_FFFF
    } else if x.is_nan() {
        b
    } else if y.is_nan() || x > y {
        a
    } else if y > x {
        b
    } else {
        a & b
    }
}

/// [`map_cols`] of `$lane` over columns `$a` and `$b` into `$d`: one loop per
/// listed variant of `$op`, each with the operation a constant, so each is
/// specialised and vectorised.
macro_rules! each_op {
    ($f:expr, $op:ident, $lane:ident, $r:expr, $d:expr, $a:expr, $b:expr, $exec:expr; $($v:ident),* $(; $($w:ident => $e:expr),*)?) => {
        match $f {
            $($op::$v => map_cols::<_, W, 2>($r, $d, [$a, $b], $exec, |[p, q]| $lane($op::$v, p, q)),)*
            $($($op::$w => $e,)*)?
        }
    };
}

/// An f32 operation over columns, with what [`canon_f32`] does to a NaN
/// result: the raw results go into the column at once (the NaN test runs
/// beside the stores, off the dependent instruction's path), and only a
/// column that got a NaN is fixed afterwards.
#[inline(always)]
fn map_f32<const W: usize, const N: usize>(r: &mut [u32], d: u32, src: [u32; N], mask: u64, f: impl Fn([f32; N]) -> f32) {
    if map_cols_flagged::<u32, W, N>(
        r,
        d,
        src,
        mask,
        |x| f(x.map(f32::from_bits)).to_bits(),
        |v| ((v & 0x7fff_ffff > 0x7f80_0000) as u32).wrapping_neg(),
    ) {
        canon_nans::<W>(&mut r[d as usize * W..][..W], mask);
    }
}

/// The canonical NaN in place of any NaN in the lanes of `mask`.
#[cold]
fn canon_nans<const W: usize>(col: &mut [u32], mask: u64) {
    for (l, v) in col.iter_mut().enumerate() {
        if mask >> l & 1 != 0 {
            *v = canon_f32(f32::from_bits(*v));
        }
    }
}

#[inline(always)]
fn fma_lanes<const W: usize>(a: &[u32; W], b: &[u32; W], c: &[u32; W], out: &mut [u32; W]) {
    for l in 0..W {
        out[l] = canon_f32(f32::from_bits(a[l]).mul_add(f32::from_bits(b[l]), f32::from_bits(c[l])));
    }
}

/// [`fma_lanes`] compiled with hardware fma.
///
/// # Safety
/// The CPU must support the `fma` and `avx2` features.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma,avx2")]
unsafe fn fma_lanes_hw<const W: usize>(a: &[u32; W], b: &[u32; W], c: &[u32; W], out: &mut [u32; W]) {
    fma_lanes::<W>(a, b, c, out)
}

#[inline(always)]
fn fma_f32_columns<const W: usize>(a: &[u32; W], b: &[u32; W], c: &[u32; W], out: &mut [u32; W]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("fma") && std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports the features the function is compiled for (checked just above).
            unsafe { fma_lanes_hw::<W>(a, b, c, out) };
            return;
        }
    }
    fma_lanes::<W>(a, b, c, out)
}

/// Bit `l` set where `m[l]` is all ones (each lane all ones or zero).
#[inline(always)]
fn pack_lane_masks<const W: usize>(m: &[u32; W]) -> u64 {
    #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
    {
        use std::arch::x86_64::{_mm256_castsi256_ps, _mm256_loadu_si256, _mm256_movemask_ps};
        let mut bits = 0u64;
        for (c, chunk) in m.chunks_exact(8).enumerate() {
            // SAFETY: AVX2 is enabled at compile time, and the load reads the chunk's 8 lanes.
            let b = unsafe { _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_loadu_si256(chunk.as_ptr().cast()))) };
            bits |= (b as u8 as u64) << (8 * c);
        }
        bits
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "avx2")))]
    {
        let mut bits = 0u64;
        for (l, &v) in m.iter().enumerate() {
            bits |= ((v & 1) as u64) << l;
        }
        bits
    }
}

/// `mul.wide.s32`: the 64-bit product of two signed 32-bit values, from the
/// unsigned product (AVX2 multiplies four lanes at a time unsigned, `vpmuludq`,
/// but has no signed 64-bit multiply: LLVM left the signed form scalar).
/// `sext(a) = a - 2^32 [a < 0]`, so modulo 2^64 the product is
/// `a * b - 2^32 (b [a < 0] + a [b < 0])`, of which only the low 32 bits of the sum count.
#[inline(always)]
fn mul_wide_s32(a: u32, b: u32) -> u64 {
    let fix = (b & ((a as i32 >> 31) as u32)).wrapping_add(a & ((b as i32 >> 31) as u32));
    (a as u64 * b as u64).wrapping_sub((fix as u64) << 32)
}

#[inline]
fn combine_bits(op: num::BoolOp, a: u64, b: u64) -> u64 {
    match op {
        num::BoolOp::And => a & b,
        num::BoolOp::Or => a | b,
        num::BoolOp::Xor => a ^ b,
    }
}

impl<const W: usize> Warp<W> {
    #[inline(always)]
    pub(super) fn mov(&mut self, d: RegRef, a: RegRef, exec: u64) {
        match (d.bank, a.bank) {
            (Bank::R32, Bank::R32) => map_cols::<_, W, 1>(&mut self.r32, d.slot, [a.slot], exec, |[x]| x),
            (Bank::R64, Bank::R64) => map_cols::<_, W, 1>(&mut self.r64, d.slot, [a.slot], exec, |[x]| x),
            _ => {
                let v = self.gather(a);
                self.scatter(d, &v, exec);
            }
        }
    }

    #[inline(always)]
    pub(super) fn bin32(&mut self, f: Bin32, d: u32, a: u32, b: u32, exec: u64) {
        let r = &mut self.r32;
        each_op!(f, Bin32, bin32_lane, r, d, a, b, exec;
            Add, Sub, MulLo, And, Or, Xor, Shl, ShrU, ShrS, MinS, MinU, MaxS, MaxU, MinF, MaxF;
            AddF => map_f32::<W, 2>(r, d, [a, b], exec, |[p, q]| p + q),
            SubF => map_f32::<W, 2>(r, d, [a, b], exec, |[p, q]| p - q),
            MulF => map_f32::<W, 2>(r, d, [a, b], exec, |[p, q]| p * q));
    }

    #[inline(always)]
    pub(super) fn bin64(&mut self, f: Bin64, d: u32, a: u32, b: u32, exec: u64) {
        each_op!(f, Bin64, bin64_lane, &mut self.r64, d, a, b, exec; Add, Sub, MulLo, And, Or, Xor, AddF, SubF, MulF);
    }

    #[inline(always)]
    pub(super) fn tern32(&mut self, f: Tern32, d: u32, a: u32, b: u32, c: u32, exec: u64) {
        match f {
            Tern32::MadLo => map_cols::<_, W, 3>(&mut self.r32, d, [a, b, c], exec, |[x, y, z]| x.wrapping_mul(y).wrapping_add(z)),
            // Built with hardware fma (the workspace's x86-64-v3): inline, straight into the column.
            Tern32::FmaF if cfg!(target_feature = "fma") => map_f32::<W, 3>(&mut self.r32, d, [a, b, c], exec, |[x, y, z]| x.mul_add(y, z)),
            Tern32::FmaF => {
                let mut o = [0u32; W];
                fma_f32_columns::<W>(col32::<W>(&self.r32, a), col32::<W>(&self.r32, b), col32::<W>(&self.r32, c), &mut o);
                write32::<W>(&mut self.r32, d, &o, exec);
            }
        }
    }

    #[inline(always)]
    pub(super) fn fma_f64(&mut self, d: u32, a: u32, b: u32, c: u32, exec: u64) {
        let x = col64::<W>(&self.r64, a);
        let y = col64::<W>(&self.r64, b);
        let z = col64::<W>(&self.r64, c);
        let mut o = [0u64; W];
        for l in 0..W {
            o[l] = fma_f64_lane(x[l], y[l], z[l]);
        }
        write64::<W>(&mut self.r64, d, &o, exec);
    }

    #[inline(always)]
    pub(super) fn shift64(&mut self, shl: bool, signed: bool, d: u32, a: u32, b: u32, exec: u64) {
        let x = col64::<W>(&self.r64, a);
        let y = col32::<W>(&self.r32, b);
        let mut o = [0u64; W];
        for l in 0..W {
            let s = y[l];
            o[l] = if shl {
                if s > 63 {
                    0
                } else {
                    x[l] << s
                }
            } else if signed {
                ((x[l] as i64) >> s.min(63)) as u64
            } else if s > 63 {
                0
            } else {
                x[l] >> s
            };
        }
        write64::<W>(&mut self.r64, d, &o, exec);
    }

    #[inline(always)]
    pub(super) fn mul_wide32(&mut self, signed: bool, d: u32, a: u32, b: u32, exec: u64) {
        let x = col32::<W>(&self.r32, a);
        let y = col32::<W>(&self.r32, b);
        let mut o = [0u64; W];
        if signed {
            for l in 0..W {
                o[l] = mul_wide_s32(x[l], y[l]);
            }
        } else {
            for l in 0..W {
                o[l] = x[l] as u64 * y[l] as u64;
            }
        }
        write64::<W>(&mut self.r64, d, &o, exec);
    }

    #[inline(always)]
    pub(super) fn extend32(&mut self, signed: bool, d: u32, a: u32, exec: u64) {
        let x = col32::<W>(&self.r32, a);
        let mut o = [0u64; W];
        for l in 0..W {
            o[l] = if signed { x[l] as i32 as i64 as u64 } else { x[l] as u64 };
        }
        write64::<W>(&mut self.r64, d, &o, exec);
    }

    #[inline(always)]
    pub(super) fn trunc64(&mut self, d: u32, a: u32, exec: u64) {
        let x = col64::<W>(&self.r64, a);
        let mut o = [0u32; W];
        for l in 0..W {
            o[l] = x[l] as u32;
        }
        write32::<W>(&mut self.r32, d, &o, exec);
    }

    #[inline(always)]
    pub(super) fn int(&mut self, op: num::int::IntOp, ty: ScalarType, d: RegRef, s: &[RegRef; 4], exec: u64) {
        let s0 = self.gather(s[0]);
        let s1 = self.gather(s[1]);
        let s2 = self.gather(s[2]);
        let s3 = self.gather(s[3]);
        let mut o = [0u64; W];
        for l in 0..W {
            if exec >> l & 1 != 0 {
                o[l] = num::int::eval_int(op, ty, [s0[l], s1[l], s2[l], s3[l]]);
            }
        }
        self.scatter(d, &o, exec);
    }

    #[inline(always)]
    pub(super) fn int_carry(
        &mut self,
        kind: CarryKind,
        ty: ScalarType,
        d: RegRef,
        s: &[RegRef; 3],
        cc: u32,
        carry_in: bool,
        carry_out: bool,
        exec: u64,
    ) {
        let s0 = self.gather(s[0]);
        let s1 = self.gather(s[1]);
        let s2 = self.gather(s[2]);
        let ccv = self.preds[cc as usize];
        let mut o = [0u64; W];
        let mut carry = 0u64;
        for l in 0..W {
            if exec >> l & 1 == 0 {
                continue;
            }
            let cin = carry_in && ccv >> l & 1 != 0;
            // CC.CF is a carry for add and mad, and NOT borrow for sub (as the hardware keeps it).
            let (v, c) = match kind {
                CarryKind::Add => num::int::add_cc(ty, s0[l], s1[l], cin),
                CarryKind::Sub => num::int::sub_cc_cf(ty, s0[l], s1[l], if carry_in { ccv >> l & 1 != 0 } else { true }),
                CarryKind::MadLo => num::int::mad_cc(ty, false, s0[l], s1[l], s2[l], cin),
                CarryKind::MadHi => num::int::mad_cc(ty, true, s0[l], s1[l], s2[l], cin),
            };
            o[l] = v;
            carry |= (c as u64) << l;
        }
        self.scatter(d, &o, exec);
        if carry_out {
            set_pred(&mut self.preds, cc, carry, exec);
        }
    }

    #[inline(always)]
    pub(super) fn float(&mut self, op: num::float::FloatOp, ty: ScalarType, mode: num::FMode, d: RegRef, s: &[RegRef; 3], exec: u64) {
        let s0 = self.gather(s[0]);
        let s1 = self.gather(s[1]);
        let s2 = self.gather(s[2]);
        let mut o = [0u64; W];
        for l in 0..W {
            if exec >> l & 1 != 0 {
                o[l] = num::float::eval_float(op, ty, mode, [s0[l], s1[l], s2[l]]);
            }
        }
        self.scatter(d, &o, exec);
    }

    #[inline(always)]
    pub(super) fn setp(&mut self, s: &Setp, exec: u64) {
        let Setp { cmp, ty, ftz, p, q, a, b, combine } = *s;
        let bits = self.compare(cmp, ty, ftz, a, b, exec);
        let (pv, qv) = match combine {
            None => (bits, !bits),
            Some((bop, c, neg)) => {
                let cv = self.preds[c as usize] ^ if neg { u64::MAX } else { 0 };
                (combine_bits(bop, bits, cv), combine_bits(bop, !bits, cv))
            }
        };
        set_pred(&mut self.preds, p, pv, exec);
        if let Some(q) = q {
            set_pred(&mut self.preds, q, qv, exec);
        }
    }

    #[inline(always)]
    pub(super) fn set(&mut self, s: &Set, exec: u64) {
        let Set { cmp, ty, dty, ftz, d, a, b, combine } = *s;
        let bits = self.compare(cmp, ty, ftz, a, b, exec);
        let bits = match combine {
            None => bits,
            Some((bop, c, neg)) => {
                let cv = self.preds[c as usize] ^ if neg { u64::MAX } else { 0 };
                combine_bits(bop, bits, cv)
            }
        };
        let t = if dty == ScalarType::F32 { 0x3F80_0000u64 } else { u64::MAX };
        let mut o = [0u64; W];
        for (l, x) in o.iter_mut().enumerate() {
            *x = if bits >> l & 1 != 0 { t } else { 0 };
        }
        self.scatter(d, &o, exec);
    }

    #[inline(always)]
    pub(super) fn selp(&mut self, d: RegRef, a: RegRef, b: RegRef, c: u32, negate: bool, exec: u64) {
        let pv = self.preds[c as usize] ^ if negate { u64::MAX } else { 0 };
        match (d.bank, a.bank, b.bank) {
            (Bank::R32, Bank::R32, Bank::R32) => {
                let x = col32::<W>(&self.r32, a.slot);
                let y = col32::<W>(&self.r32, b.slot);
                let mut o = [0u32; W];
                for l in 0..W {
                    o[l] = if pv >> l & 1 != 0 { x[l] } else { y[l] };
                }
                write32::<W>(&mut self.r32, d.slot, &o, exec);
            }
            _ => {
                let x = self.gather(a);
                let y = self.gather(b);
                let mut o = [0u64; W];
                for l in 0..W {
                    o[l] = if pv >> l & 1 != 0 { x[l] } else { y[l] };
                }
                self.scatter(d, &o, exec);
            }
        }
    }

    #[inline(always)]
    pub(super) fn slct(&mut self, cty: ScalarType, ftz: bool, d: RegRef, a: RegRef, b: RegRef, c: RegRef, exec: u64) {
        let x = self.gather(a);
        let y = self.gather(b);
        let z = self.gather(c);
        let mut o = [0u64; W];
        for l in 0..W {
            let ge = if cty == ScalarType::F32 {
                let mut f = f32::from_bits(z[l] as u32);
                if ftz && f.is_subnormal() {
                    f = 0.0;
                }
                f >= 0.0 || (f == 0.0)
            } else {
                (z[l] as u32 as i32) >= 0
            };
            o[l] = if ge { x[l] } else { y[l] };
        }
        self.scatter(d, &o, exec);
    }

    #[inline(always)]
    pub(super) fn testp(&mut self, class: num::float::TestpClass, ty: ScalarType, p: u32, a: RegRef, exec: u64) {
        let x = self.gather(a);
        let mut bits = 0u64;
        for (l, v) in x.iter().enumerate() {
            bits |= (num::float::testp(class, ty, *v) as u64) << l;
        }
        set_pred(&mut self.preds, p, bits, exec);
    }

    #[inline(always)]
    pub(super) fn pred_logic(&mut self, op: PredOp, d: u32, a: u32, b: u32, exec: u64) {
        let (x, y) = (self.preds[a as usize], self.preds[b as usize]);
        let v = match op {
            PredOp::And => x & y,
            PredOp::Or => x | y,
            PredOp::Xor => x ^ y,
            PredOp::Not => !x,
            PredOp::Mov => x,
            PredOp::AndNot => x & !y,
        };
        set_pred(&mut self.preds, d, v, exec);
    }

    #[inline(always)]
    /// `flags`: `.relu`, `.satfinite`.
    pub(super) fn cvt(&mut self, dty: ScalarType, sty: ScalarType, mode: num::FMode, flags: (bool, bool), d: RegRef, a: RegRef, exec: u64) {
        use num::Rounding::{Rn, Rz, Rzi};
        use ScalarType::{F32, S32, U32};
        if (d.bank, a.bank, mode.ftz, mode.sat, flags) == (Bank::R32, Bank::R32, false, false, (false, false)) {
            // The common 32-bit int <-> f32 conversions, as Rust's `as` does them: round to
            // nearest even to float; truncate, saturate and NaN to 0 to int (a test checks them).
            let near = matches!(mode.rnd, None | Some(Rn));
            let trunc = matches!(mode.rnd, None | Some(Rz | Rzi));
            let r = &mut self.r32;
            match (dty, sty) {
                (F32, S32) if near => return map_cols::<_, W, 1>(r, d.slot, [a.slot], exec, |[x]| (x as i32 as f32).to_bits()),
                (F32, U32) if near => return map_cols::<_, W, 1>(r, d.slot, [a.slot], exec, |[x]| (x as f32).to_bits()),
                (S32, F32) if trunc => return map_cols::<_, W, 1>(r, d.slot, [a.slot], exec, |[x]| f32::from_bits(x) as i32 as u32),
                (U32, F32) if trunc => return map_cols::<_, W, 1>(r, d.slot, [a.slot], exec, |[x]| f32::from_bits(x) as u32),
                _ => {}
            }
        }
        let x = self.gather(a);
        let mut o = [0u64; W];
        for l in 0..W {
            if exec >> l & 1 != 0 {
                o[l] = num::cvt::cvt_with(dty, sty, mode, flags.0, flags.1, x[l]);
            }
        }
        self.scatter(d, &o, exec);
    }

    #[inline(always)]
    pub(super) fn cvt_pack(&mut self, dty: ScalarType, mode: num::FMode, flags: (bool, bool), d: u32, a: u32, b: u32, exec: u64) {
        let x = *col32::<W>(&self.r32, a);
        let y = *col32::<W>(&self.r32, b);
        let mut o = [0u32; W];
        for l in 0..W {
            if exec >> l & 1 != 0 {
                o[l] = num::cvt::cvt_pack_x2_with(dty, mode, flags.0, flags.1, f32::from_bits(x[l]), f32::from_bits(y[l]));
            }
        }
        write32::<W>(&mut self.r32, d, &o, exec);
    }

    /// `cvt.rn.satfinite.e4m3x2|e5m2x2.f32|f16x2`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn cvt_to_f8x2(&mut self, fmt: num::fp8::F8, relu: bool, from_f16x2: bool, d: u32, a: u32, b: u32, exec: u64) {
        let x = *col32::<W>(&self.r32, a);
        let y = *col32::<W>(&self.r32, b);
        let mut o = [0u32; W];
        for l in 0..W {
            if exec >> l & 1 != 0 {
                o[l] = if from_f16x2 {
                    num::fp8::f8x2_from_f16x2(fmt, relu, x[l])
                } else {
                    num::fp8::f8x2_from_f32(fmt, relu, f32::from_bits(x[l]), f32::from_bits(y[l]))
                } as u32;
            }
        }
        write32::<W>(&mut self.r32, d, &o, exec);
    }

    /// `cvt.rn.f16x2.e4m3x2|e5m2x2`.
    pub(super) fn cvt_f8x2_to_f16x2(&mut self, fmt: num::fp8::F8, relu: bool, d: u32, a: u32, exec: u64) {
        let x = *col32::<W>(&self.r32, a);
        let mut o = [0u32; W];
        for l in 0..W {
            if exec >> l & 1 != 0 {
                o[l] = num::fp8::f16x2_from_f8x2(fmt, relu, x[l] as u16);
            }
        }
        write32::<W>(&mut self.r32, d, &o, exec);
    }

    #[inline(always)]
    pub(super) fn pack(&mut self, d: RegRef, parts: &[RegRef; 4], n: u8, elem_bits: u8, exec: u64) {
        let mut o = [0u64; W];
        for k in 0..n as usize {
            let v = self.gather(parts[k]);
            for l in 0..W {
                o[l] |= zext(v[l], elem_bits as u32) << (k as u32 * elem_bits as u32);
            }
        }
        self.scatter(d, &o, exec);
    }

    #[inline(always)]
    pub(super) fn unpack(&mut self, ds: &[Option<RegRef>; 4], a: RegRef, n: u8, elem_bits: u8, exec: u64) {
        let v = self.gather(a);
        for k in 0..n as usize {
            if let Some(dk) = ds[k] {
                let mut o = [0u64; W];
                for l in 0..W {
                    o[l] = zext(v[l] >> (k as u32 * elem_bits as u32), elem_bits as u32);
                }
                self.scatter(dk, &o, exec);
            }
        }
    }

    /// `%clock`, `%clock64`, `%globaltimer`: the block's instruction counter `now`.
    #[inline(always)]
    pub(super) fn clock(&mut self, kind: ClockKind, d: RegRef, now: u64, exec: u64) {
        let v = match kind {
            ClockKind::Clock32 => now & 0xFFFF_FFFF,
            ClockKind::Clock64 => now,
            ClockKind::GlobalTimer => now,
            ClockKind::GlobalTimerLo => now & 0xFFFF_FFFF,
            ClockKind::GlobalTimerHi => now >> 32,
        };
        self.scatter(d, &[v; W], exec);
    }

    /// Bit `l` set where lane `l`'s comparison holds. The vectorised forms are
    /// inlined into the run loop (a call costs a third of a setp); the rest go
    /// lane by lane out of line.
    #[inline(always)]
    fn compare(&self, cmp: num::CmpOp, ty: ScalarType, ftz: bool, a: RegRef, b: RegRef, exec: u64) -> u64 {
        use num::CmpOp::*;
        let bits;
        macro_rules! fast {
            ($col:ident, $reg:ident, $conv:expr) => {{
                let x = $col::<W>(&self.$reg, a.slot);
                let y = $col::<W>(&self.$reg, b.slot);
                let f = $conv;
                // Lane masks (all ones where true), then packed: both vectorise.
                let mut m = [0u32; W];
                macro_rules! go {
                    ($op:tt) => {{
                        for l in 0..W {
                            m[l] = ((f(x[l]) $op f(y[l])) as u32).wrapping_neg();
                        }
                        bits = pack_lane_masks(&m);
                    }};
                }
                match cmp {
                    Eq => go!(==),
                    Ne => go!(!=),
                    Lt | Lo => go!(<),
                    Le | Ls => go!(<=),
                    Gt | Hi => go!(>),
                    Ge | Hs => go!(>=),
                    _ => unreachable!(),
                }
                return bits;
            }};
        }
        let simple = matches!(cmp, Eq | Ne | Lt | Le | Gt | Ge | Lo | Ls | Hi | Hs);
        if simple && a.bank == b.bank {
            match (ty, a.bank) {
                (ScalarType::S32, Bank::R32) => fast!(col32, r32, |v: u32| v as i32),
                (ScalarType::U32 | ScalarType::B32, Bank::R32) => fast!(col32, r32, |v: u32| v),
                (ScalarType::S64, Bank::R64) => fast!(col64, r64, |v: u64| v as i64),
                (ScalarType::U64 | ScalarType::B64, Bank::R64) => fast!(col64, r64, |v: u64| v),
                (ScalarType::F32, Bank::R32) if !ftz && cmp != Ne => fast!(col32, r32, f32::from_bits),
                (ScalarType::F64, Bank::R64) if cmp != Ne => fast!(col64, r64, f64::from_bits),
                _ => {}
            }
        }
        self.compare_lanes(cmp, ty, ftz, a, b, exec)
    }

    /// [`Self::compare`] lane by lane, for every type, operator and bank.
    #[inline(never)]
    fn compare_lanes(&self, cmp: num::CmpOp, ty: ScalarType, ftz: bool, a: RegRef, b: RegRef, exec: u64) -> u64 {
        let x = self.gather(a);
        let y = self.gather(b);
        let mut bits = 0u64;
        for l in 0..W {
            if exec >> l & 1 != 0 {
                bits |= (num::compare(cmp, ty, ftz, x[l], y[l]) as u64) << l;
            }
        }
        bits
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::*;
    use super::*;

    #[test]
    fn mul_wide_s32_equals_the_signed_product() {
        let mut rng = numbers(0x51de);
        let edges = [0u32, 1, 2, 0x7fff_ffff, 0x8000_0000, 0x8000_0001, u32::MAX, u32::MAX - 1, 0xffff, 0x1_0000];
        let pairs = edges.iter().flat_map(|&a| edges.iter().map(move |&b| (a, b)));
        for (a, b) in pairs.chain((0..100_000).map(|_| (rng() as u32, (rng() >> 32) as u32))) {
            assert_eq!(mul_wide_s32(a, b), ((a as i32 as i64) * (b as i32 as i64)) as u64, "{a:#x} * {b:#x}");
        }
    }

    /// The chunked column maps against a lane-by-lane reference: full, partial
    /// and empty masks, the destination one of the sources, 32 and 64 lanes.
    #[test]
    fn column_maps_equal_lane_by_lane() {
        fn check<const W: usize>() {
            let mut next = numbers(0x9E37_79B9_7F4A_7C15u64);
            let f = |[x, y, z]: [u32; 3]| x.wrapping_mul(y) ^ z.rotate_left(5);
            for _ in 0..200 {
                let mut r: Vec<u32> = (0..4 * W).map(|_| next() as u32).collect();
                let before = r.clone();
                let (d, src) = ((next() % 4) as u32, [(next() % 4) as u32, (next() % 4) as u32, (next() % 4) as u32]);
                let mask = match next() % 3 {
                    0 => full_mask::<W>(),
                    1 => 0,
                    _ => next() & full_mask::<W>(),
                };
                map_cols::<u32, W, 3>(&mut r, d, src, mask, f);
                for l in 0..W {
                    let want = if mask >> l & 1 == 1 { f(src.map(|s| before[s as usize * W + l])) } else { before[d as usize * W + l] };
                    assert_eq!(r[d as usize * W + l], want, "lane {l} of {d} from {src:?}, mask {mask:#x}");
                }
                for (i, (&a, &b)) in r.iter().zip(&before).enumerate() {
                    assert!(i / W == d as usize || a == b, "column {} changed", i / W);
                }
            }
        }
        check::<32>();
        check::<64>();
    }

    /// The f32 column ops (raw results, NaNs fixed afterwards) against the
    /// lane functions, on operands rich in NaNs, infinities and zeros, with
    /// full, partial and empty masks and a destination that is a source.
    #[test]
    fn f32_column_ops_equal_lane_by_lane() {
        let mut next = numbers(0x0F32_0F32);
        let special = [0x7FC0_0000u32, 0xFFC0_0001, 0x7F80_0001, 0x7F80_0000, 0xFF80_0000, 0, 0x8000_0000, 0x3F80_0000, 1];
        for round in 0..3000 {
            let mut w = bare(4, 0, 0);
            for v in w.r32.iter_mut() {
                *v = if next().is_multiple_of(3) { special[next() as usize % special.len()] } else { next() as u32 };
            }
            let before = w.r32.clone();
            let (d, a, b, c) = ((next() % 4) as u32, (next() % 4) as u32, (next() % 4) as u32, (next() % 4) as u32);
            let mask = match round % 3 {
                0 => FULL,
                1 => 0,
                _ => next() & FULL,
            };
            let op = round / 3 % 4;
            let lane = |l: usize| {
                let x = |s: u32| before[s as usize * 32 + l];
                match op {
                    0 => bin32_lane(Bin32::AddF, x(a), x(b)),
                    1 => bin32_lane(Bin32::SubF, x(a), x(b)),
                    2 => bin32_lane(Bin32::MulF, x(a), x(b)),
                    _ => fma_f32_lane(x(a), x(b), x(c)),
                }
            };
            match op {
                0 => w.bin32(Bin32::AddF, d, a, b, mask),
                1 => w.bin32(Bin32::SubF, d, a, b, mask),
                2 => w.bin32(Bin32::MulF, d, a, b, mask),
                _ => w.tern32(Tern32::FmaF, d, a, b, c, mask),
            }
            for l in 0..32 {
                let want = if mask >> l & 1 == 1 { lane(l) } else { before[d as usize * 32 + l] };
                assert_eq!(col(&w, d)[l], want, "op {op} lane {l}, mask {mask:#x}");
            }
        }
    }

    /// The 32-bit int <-> f32 fast paths of `cvt` against `cvt_with`, lane by lane.
    #[test]
    fn cvt_fast_paths_equal_the_general_conversion() {
        use num::Rounding::*;
        use ScalarType::{F32, S32, U32};
        let mut next = numbers(0xC0_FFEE);
        let special = [
            0x7FC0_0000u32,
            0xFF80_0000,
            0x7F80_0000,
            0x4F00_0000,
            0xCF00_0001,
            0x4F80_0000,
            0xBF7F_FFFF,
            0x3F00_0000,
            0x8000_0000,
            1,
            0xFFFF_FFFF,
            0x8000_0000,
            16_777_217,
        ];
        let modes = [None, Some(Rn), Some(Rz), Some(Rzi), Some(Rni), Some(Rmi)];
        for round in 0..600 {
            let mut w = bare(2, 0, 0);
            for v in w.r32.iter_mut() {
                *v = if next().is_multiple_of(4) { special[next() as usize % special.len()] } else { next() as u32 };
            }
            let before = w.r32.clone();
            let (dty, sty) = [(F32, S32), (F32, U32), (S32, F32), (U32, F32)][round % 4];
            let rnd = modes[round / 4 % modes.len()];
            let mode = num::FMode { rnd, ftz: false, sat: false };
            let mask = if round % 3 == 0 { FULL } else { next() & FULL };
            w.cvt(dty, sty, mode, (false, false), RegRef::r32(1), RegRef::r32(0), mask);
            for l in 0..32 {
                let want = if mask >> l & 1 == 1 {
                    num::cvt::cvt_with(dty, sty, mode, false, false, before[l] as u64) as u32
                } else {
                    before[32 + l]
                };
                assert_eq!(col(&w, 1)[l], want, "{dty:?} <- {sty:?} {rnd:?} of {:#x}", before[l]);
            }
        }
    }

    #[test]
    fn bin32_writes_only_executing_lanes() {
        let mut w = bare(3, 0, 0);
        fill32(&mut w, 0, |l| l as u32);
        fill32(&mut w, 1, |_| 10);
        fill32(&mut w, 2, |_| 7);
        w.bin32(Bin32::Add, 2, 0, 1, 0xFF);
        let d = col(&w, 2);
        assert_eq!(&d[..8], &[10, 11, 12, 13, 14, 15, 16, 17]);
        assert!(d[8..].iter().all(|&v| v == 7), "lanes outside exec keep their value");
        // Full mask: the plain copy path.
        w.bin32(Bin32::Shl, 2, 0, 1, FULL);
        assert_eq!(col(&w, 2)[3], 3 << 10);
    }

    #[test]
    fn shifts_clamp_as_ptx_says() {
        assert_eq!(bin32_lane(Bin32::Shl, 1, 32), 0);
        assert_eq!(bin32_lane(Bin32::ShrU, 0x8000_0000, 40), 0);
        assert_eq!(bin32_lane(Bin32::ShrS, -8i32 as u32, 40), u32::MAX);
        let mut w = bare(1, 2, 0);
        w.r64[..32].fill(u64::MAX);
        fill32(&mut w, 0, |l| 60 + l as u32);
        w.shift64(false, true, 1, 0, 0, FULL);
        assert_eq!(w.r64[32 + 10], u64::MAX, "arithmetic shift by 70 keeps the sign");
        w.shift64(true, false, 1, 0, 0, FULL);
        assert_eq!((w.r64[32], w.r64[32 + 10]), (u64::MAX << 60, 0));
    }

    /// The column fast path of `compare` (lane masks packed per 8 lanes)
    /// against `num::compare` lane by lane, for every lane of the warp.
    #[test]
    fn compare_fast_path_equals_lane_by_lane() {
        use num::CmpOp::*;
        let mut w = bare(2, 2, 0);
        let mut next = numbers(0x2545_F491_4F6C_DD1Du64);
        let types = [
            (ScalarType::S32, 0u32),
            (ScalarType::U32, 0),
            (ScalarType::F32, 0),
            (ScalarType::S64, 1),
            (ScalarType::U64, 1),
            (ScalarType::F64, 1),
        ];
        for round in 0..20 {
            for l in 0..32 {
                // Small values, so that equal pairs happen too.
                let (x, y) = (next() % 5, next() % 5);
                w.r32[l] = (x as u32).wrapping_sub(2);
                w.r32[32 + l] = if round % 2 == 0 { (y as f32).to_bits() } else { (y as u32).wrapping_sub(2) };
                w.r64[l] = x.wrapping_sub(2);
                w.r64[32 + l] = if round % 2 == 0 { (y as f64).to_bits() } else { y.wrapping_sub(2) };
            }
            for (ty, bank) in types {
                let reg = |s| if bank == 0 { RegRef::r32(s) } else { RegRef { bank: Bank::R64, slot: s } };
                // lo/ls/hi/hs are the unsigned forms (PTX allows them on unsigned types only).
                let unsigned = matches!(ty, ScalarType::U32 | ScalarType::U64);
                for cmp in [Eq, Lt, Le, Gt, Ge, Lo, Ls, Hi, Hs].into_iter().filter(|c| unsigned || !matches!(c, Lo | Ls | Hi | Hs)) {
                    let got = w.compare(cmp, ty, false, reg(0), reg(1), FULL);
                    for l in 0..32 {
                        let (x, y) = if bank == 0 { (w.r32[l] as u64, w.r32[32 + l] as u64) } else { (w.r64[l], w.r64[32 + l]) };
                        assert_eq!(got >> l & 1 == 1, num::compare(cmp, ty, false, x, y), "{cmp:?} {ty:?} lane {l}");
                    }
                }
            }
        }
    }

    #[test]
    fn setp_fast_and_general_paths_agree() {
        let mut w = bare(2, 0, 2);
        let vals = [1.0f32, -0.0, f32::NAN, 3.5, f32::MIN_POSITIVE / 4.0];
        fill32(&mut w, 0, |l| vals[l % 5].to_bits());
        fill32(&mut w, 1, |_| 0f32.to_bits());
        let a = RegRef::r32(0);
        let b = RegRef::r32(1);
        // `lt` without ftz takes the column fast path; with ftz, the general one.
        let lt = Setp { cmp: num::CmpOp::Lt, ty: ScalarType::F32, ftz: false, p: 0, q: None, a: b, b: a, combine: None };
        w.setp(&lt, FULL);
        w.setp(&Setp { ftz: true, p: 1, ..lt }, FULL);
        let lanes = |p: u64| (0..5).map(|l| p >> l & 1).collect::<Vec<_>>();
        assert_eq!(lanes(w.preds[0]), [1, 0, 0, 1, 1]);
        assert_eq!(lanes(w.preds[1]), [1, 0, 0, 1, 0], "ftz flushes the subnormal to zero");
        // `ne` is ordered (false for NaN): the general path.
        w.setp(&Setp { cmp: num::CmpOp::Ne, q: Some(1), ..lt }, FULL);
        assert_eq!(lanes(w.preds[0]), [1, 0, 0, 1, 1]);
        assert_eq!(lanes(w.preds[1]), [0, 1, 1, 0, 0], "q is the complement");
    }

    #[test]
    fn carry_chain_adds_across_registers() {
        // {hi, lo} = {0, 0xFFFF_FFFF} + {0, 1}, as add.cc then addc.
        let mut w = bare(6, 0, 1);
        fill32(&mut w, 0, |_| u32::MAX);
        fill32(&mut w, 1, |_| 1);
        let r = RegRef::r32;
        w.int_carry(CarryKind::Add, ScalarType::U32, r(4), &[r(0), r(1), r(1)], 0, false, true, FULL);
        w.int_carry(CarryKind::Add, ScalarType::U32, r(5), &[r(2), r(3), r(3)], 0, true, false, FULL);
        assert_eq!((col(&w, 4)[0], col(&w, 5)[0]), (0, 1));
    }

    #[test]
    fn pack_unpack_and_selp() {
        let mut w = bare(4, 1, 1);
        fill32(&mut w, 0, |l| l as u32);
        fill32(&mut w, 1, |_| 0xAB);
        let r = RegRef::r32;
        w.pack(RegRef::r64(0), &[r(0), r(1), r(0), r(0)], 2, 32, FULL);
        assert_eq!(w.r64[5], 0xAB_0000_0005);
        w.unpack(&[Some(r(2)), Some(r(3)), None, None], RegRef::r64(0), 2, 32, FULL);
        assert_eq!((col(&w, 2)[5], col(&w, 3)[5]), (5, 0xAB));
        w.preds[0] = 0b10;
        w.selp(r(2), r(0), r(1), 0, false, FULL);
        assert_eq!(&col(&w, 2)[..3], &[0xAB, 1, 0xAB]);
        w.selp(r(2), r(0), r(1), 0, true, FULL);
        assert_eq!(&col(&w, 2)[..3], &[0, 0xAB, 2]);
    }

    #[test]
    fn cvt_and_clock() {
        let mut w = bare(2, 1, 0);
        fill32(&mut w, 0, |l| (l as f32 + 0.5).to_bits());
        w.cvt(
            ScalarType::S32,
            ScalarType::F32,
            num::FMode { rnd: Some(num::Rounding::Rni), ftz: false, sat: false },
            (false, false),
            RegRef::r32(1),
            RegRef::r32(0),
            FULL,
        );
        assert_eq!(&col(&w, 1)[..4], &[0, 2, 2, 4], "round to nearest even");
        w.clock(ClockKind::Clock32, RegRef::r32(1), 0x1_0000_0005, FULL);
        w.clock(ClockKind::GlobalTimerHi, RegRef::r64(0), 0x1_0000_0005, FULL);
        assert_eq!((col(&w, 1)[0], w.r64[0]), (5, 1));
    }
}
