//! Tensor-core fragments: each lane's registers holding pieces of a matrix
//! (the PTX ISA's fragment layouts, in `warpsim_ir::mma`), gathered into
//! row-major matrices, multiplied with the tensor cores' rounding
//! (`warpsim_numerics::tensor`), and scattered back; plus the matrix loads
//! and stores (`wmma.load/store`, `ldmatrix`, `stmatrix`, `movmatrix`).

// Handlers take the decoded op's fields as arguments.
#![allow(clippy::too_many_arguments)]

use super::*;
use crate::observer::MemAccessKind;
use warpsim_numerics::{tensor, ScalarType};

/// The numerics type of an MMA element type.
fn scalar(ty: MmaType) -> ScalarType {
    match ty {
        MmaType::F16 => ScalarType::F16,
        MmaType::BF16 => ScalarType::BF16,
        MmaType::TF32 => ScalarType::TF32,
        MmaType::F32 => ScalarType::F32,
        MmaType::F64 => ScalarType::F64,
        MmaType::S8 => ScalarType::S8,
        MmaType::U8 => ScalarType::U8,
        MmaType::S32 => ScalarType::S32,
    }
}

fn elem_mask(ty: MmaType) -> u64 {
    if ty.bits() >= 64 {
        u64::MAX
    } else {
        (1u64 << ty.bits()) - 1
    }
}

impl<const W: usize> Warp<W> {
    /// One lane's element `slot` of a fragment held in `regs`.
    fn frag_elem(&self, regs: &[RegRef], ty: MmaType, lane: usize, slot: u32) -> u64 {
        let per = ty.per_reg();
        let r = regs[(slot / per) as usize];
        (self.lane_value(r, lane) >> ((slot % per) * ty.bits())) & elem_mask(ty)
    }

    /// Writes a whole fragment: `val(lane, slot)` gives each element's raw bits.
    fn write_frag(&mut self, regs: &[RegRef], ty: MmaType, slots: u32, lanes: usize, val: impl Fn(usize, u32) -> u64) {
        let per = ty.per_reg();
        for (ri, &r) in regs.iter().enumerate() {
            for lane in 0..lanes {
                let mut v = 0u64;
                for sub in 0..per {
                    let slot = ri as u32 * per + sub;
                    if slot < slots {
                        v |= (val(lane, slot) & elem_mask(ty)) << (sub * ty.bits());
                    }
                }
                self.put_lane(r, lane, v);
            }
        }
    }

    /// Gathers operand `f` of the warp into a row-major matrix of raw bits.
    fn gather_frag(&self, f: Frag, regs: &[RegRef], lane_base: u32) -> Vec<u64> {
        let (_, cols) = f.shape.dims(f.mat);
        let (rows, _) = f.shape.dims(f.mat);
        let mut m = vec![0u64; (rows * cols) as usize];
        for lane in 0..32u32 {
            for slot in 0..f.distinct() {
                let (r, c) = f.pos(lane_base + lane, slot);
                m[(r * cols + c) as usize] = self.frag_elem(regs, f.ty, lane as usize, slot);
            }
        }
        m
    }

    /// `wmma.load` (`kind` Load) or `wmma.store` (Store) of fragment `frag` in
    /// `regs`: both walk its elements slot by slot, one memory access per lane.
    pub(super) fn wmma_access<O: Observer>(
        &mut self,
        ctx: &mut WarpCtx<'_>,
        obs: &mut O,
        pc: u32,
        exec: u64,
        kind: MemAccessKind,
        frag: Frag,
        col_major: bool,
        space: Space,
        addr: &Addr,
        stride: Option<RegRef>,
        regs: &[RegRef],
    ) -> Result<(), WarpFault> {
        let (base, ld) = self.wmma_base(frag, col_major, addr, stride, exec);
        let bytes = frag.ty.bytes();
        let n = frag.slots() as usize;
        let load = kind == MemAccessKind::Load;
        let mut vals = if load { vec![0u64; 32 * n] } else { Vec::new() };
        for slot in 0..frag.slots() {
            let mut addrs = [0u64; W];
            for lane in 0..32 {
                let (r, c) = frag.pos(lane as u32, slot);
                let off = if col_major { c as u64 * ld + r as u64 } else { r as u64 * ld + c as u64 };
                addrs[lane] = base.wrapping_add(off * bytes as u64);
                if load {
                    vals[lane * n + slot as usize] = self.mem_read(ctx, pc, space, addrs[lane], bytes, lane)?;
                } else {
                    let v = self.frag_elem(regs, frag.ty, lane, slot);
                    self.mem_write(ctx, pc, space, addrs[lane], bytes, v, lane)?;
                }
            }
            if O::WANTS_MEMORY {
                obs.memory(self.index, pc, space, kind, bytes, &addrs, exec);
            }
        }
        if load {
            self.write_frag(regs, frag.ty, frag.slots(), 32, |lane, slot| vals[lane * n + slot as usize]);
        }
        Ok(())
    }

    /// `ldmatrix` (`kind` Load) or `stmatrix`: lane i < 8 * `num` holds the
    /// address of row i of the 8x8 b16 matrices; `regs` holds one element
    /// pair of each matrix per lane.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn matrix_access<O: Observer>(
        &mut self,
        ctx: &mut WarpCtx<'_>,
        obs: &mut O,
        pc: u32,
        kind: MemAccessKind,
        num: u8,
        trans: bool,
        space: Space,
        addr: &Addr,
        regs: &[RegRef],
    ) -> Result<(), WarpFault> {
        let addrs = self.addresses(addr);
        let rows = 8 * num as usize;
        if O::WANTS_MEMORY {
            obs.memory(self.index, pc, space, kind, 16, &addrs, (1u64 << rows) - 1);
        }
        if kind == MemAccessKind::Load {
            // m[matrix][row][col]
            let mut m = vec![[[0u16; 8]; 8]; num as usize];
            for (row_lane, &a) in addrs.iter().enumerate().take(rows) {
                for c in 0..8 {
                    m[row_lane / 8][row_lane % 8][c] = self.mem_read(ctx, pc, space, a + 2 * c as u64, 2, row_lane)? as u16;
                }
            }
            for (k, &r) in regs.iter().enumerate() {
                for lane in 0..32 {
                    let (g, t) = (lane / 4, lane % 4);
                    let e = |j: usize| if trans { m[k][2 * t + j][g] } else { m[k][g][2 * t + j] } as u64;
                    self.put_lane(r, lane, e(0) | e(1) << 16);
                }
            }
            return Ok(());
        }
        for (k, &r) in regs.iter().enumerate() {
            for lane in 0..32 {
                let (g, t) = (lane / 4, lane % 4);
                let v = self.lane_value(r, lane);
                for j in 0..2 {
                    let e = (v >> (16 * j)) & 0xFFFF;
                    // Element (g, 2t + j) of matrix k; `.trans` stores the transpose.
                    let (row, col) = if trans { (2 * t + j, g) } else { (g, 2 * t + j) };
                    let row_lane = 8 * k + row;
                    self.mem_write(ctx, pc, space, addrs[row_lane] + 2 * col as u64, 2, e, row_lane)?;
                }
            }
        }
        Ok(())
    }

    pub(super) fn movmatrix(&mut self, d: RegRef, a: RegRef) {
        let src: Vec<u64> = (0..32).map(|l| self.lane_value(a, l)).collect();
        let elem = |row: usize, col: usize| (src[row * 4 + col / 2] >> (16 * (col % 2))) & 0xFFFF;
        for lane in 0..32 {
            let (g, t) = (lane / 4, lane % 4);
            self.put_lane(d, lane, elem(2 * t, g) | elem(2 * t + 1, g) << 16);
        }
    }

    /// wmma: the (uniform) base address and the leading dimension in elements.
    fn wmma_base(&self, frag: Frag, col_major: bool, addr: &Addr, stride: Option<RegRef>, exec: u64) -> (u64, u64) {
        let base = self.addresses(addr)[exec.trailing_zeros() as usize];
        let (rows, cols) = frag.shape.dims(frag.mat);
        let ld = match stride {
            Some(r) => self.uniform(r, exec) as u32 as u64,
            None => {
                if col_major {
                    rows as u64
                } else {
                    cols as u64
                }
            }
        };
        (base, ld)
    }

    pub(super) fn mma_sync(&mut self, m: &MmaSync) {
        let s = m.shape;
        let f = |mat, ty| Frag { family: m.family, shape: s, mat, ty };
        let a = self.gather_frag(f(Mat::A, m.atype), &m.a, 0);
        let b = self.gather_frag(f(Mat::B, m.btype), &m.b, 0);
        let c = self.gather_frag(f(Mat::C, m.ctype), &m.c, 0);
        // wmma's m16n16k8 tf32 runs as two k4 steps on the H200 (each rounded).
        let chunk = if m.family == Family::Wmma && m.atype == MmaType::TF32 { 4 } else { s.k };
        let mut d = c;
        let mut ct = m.ctype;
        for k0 in (0..s.k).step_by(chunk as usize) {
            let sub = Shape { m: s.m, n: s.n, k: chunk };
            let a_part: Vec<u64> =
                (0..s.m).flat_map(|i| (k0..k0 + chunk).map(move |kk| (i, kk))).map(|(i, kk)| a[(i * s.k + kk) as usize]).collect();
            let b_part = b[(k0 * s.n) as usize..((k0 + chunk) * s.n) as usize].to_vec();
            d = matmul(sub, m.atype, m.btype, ct, m.dtype, m.satfinite, &a_part, &b_part, Some(&d), false);
            ct = m.dtype;
        }
        let df = f(Mat::C, m.dtype);
        let n = s.n;
        self.write_frag(&m.d, m.dtype, df.slots(), 32, |lane, slot| {
            let (r, c) = df.pos(lane as u32, slot);
            d[(r * n + c) as usize]
        });
    }

    pub(super) fn wgmma(&mut self, ctx: &mut WarpCtx<'_>, pc: u32, exec: u64, w: &Wgmma) -> Result<(), WarpFault> {
        let s = w.shape;
        let rank = self.index % WARPGROUP_WARPS;
        let (m, n, k) = (s.m, s.n, s.k);
        let eb = w.atype.bytes();
        let first = exec.trailing_zeros() as usize;
        let desc = |me: &Self, r: RegRef| -> Result<MatrixDesc, WarpFault> {
            let d = MatrixDesc::decode(me.lane_value(r, first));
            if d.base_offset != 0 && d.swizzle != 0 {
                return Err(unsupported(pc, "wgmma matrix descriptors with a non-zero base offset are not supported"));
            }
            Ok(d)
        };
        // A: M x K, of which this warp needs rows 16*rank ..
        let mut a = vec![0u64; (m * k) as usize];
        match &w.a {
            WgmmaA::Regs(regs) => {
                let f = Frag { family: Family::Wgmma, shape: s, mat: Mat::A, ty: w.atype };
                for lane in 0..32u32 {
                    for slot in 0..f.distinct() {
                        let (r, c) = f.pos(32 * rank + lane, slot);
                        a[(r * k + c) as usize] = self.frag_elem(regs, w.atype, lane as usize, slot);
                    }
                }
            }
            WgmmaA::Desc(r) => {
                let d = desc(self, *r)?;
                for row in 16 * rank..16 * rank + 16 {
                    for kk in 0..k {
                        let addr = d.address(row, kk, eb, !w.trans_a) as u64;
                        a[(row * k + kk) as usize] = self.mem_read(ctx, pc, Space::Shared, addr, eb, first)?;
                    }
                }
            }
        }
        let db = desc(self, w.b_desc)?;
        let mut b = vec![0u64; (k * n) as usize];
        for nn in 0..n {
            for kk in 0..k {
                let addr = db.address(nn, kk, eb, !w.trans_b) as u64;
                b[(kk * n + nn) as usize] = self.mem_read(ctx, pc, Space::Shared, addr, eb, first)?;
            }
        }
        let scale_d = match w.scale_d {
            Err(c) => c,
            Ok((p, neg)) => (self.preds[p as usize] >> first & 1 != 0) != neg,
        };
        let df = Frag { family: Family::Wgmma, shape: s, mat: Mat::C, ty: w.dtype };
        let dmat = if scale_d {
            let mut c = vec![0u64; (m * n) as usize];
            for lane in 0..32u32 {
                for slot in 0..df.distinct() {
                    let (r, cc) = df.pos(32 * rank + lane, slot);
                    c[(r * n + cc) as usize] = self.frag_elem(&w.d, w.dtype, lane as usize, slot);
                }
            }
            Some(c)
        } else {
            None
        };
        // Only this warp's rows matter; the others are computed from zeros and ignored.
        let neg = w.neg_a != w.neg_b;
        let d = matmul(s, w.atype, w.btype, w.dtype, w.dtype, w.satfinite, &a, &b, dmat.as_deref(), neg);
        self.write_frag(&w.d, w.dtype, df.slots(), 32, |lane, slot| {
            let (r, c) = df.pos(32 * rank + lane as u32, slot);
            d[(r * n + c) as usize]
        });
        Ok(())
    }
}

/// D = A * B + C (C absent: zero; `negate`: D = -(A * B) + C), every element
/// computed exactly and rounded once (see the module docs). Matrices are
/// row-major raw bits.
#[allow(clippy::too_many_arguments)]
fn matmul(
    s: Shape,
    at: MmaType,
    bt: MmaType,
    ct: MmaType,
    dt: MmaType,
    satfinite: bool,
    a: &[u64],
    b: &[u64],
    c: Option<&[u64]>,
    negate: bool,
) -> Vec<u64> {
    let (m, n, k) = (s.m as usize, s.n as usize, s.k as usize);
    let mut d = vec![0u64; m * n];
    if dt.is_int() {
        for i in 0..m {
            for j in 0..n {
                let mut acc: i64 = c.map(|c| tensor::operand_int(scalar(ct), c[i * n + j])).unwrap_or(0);
                for kk in 0..k {
                    let p = tensor::operand_int(scalar(at), a[i * k + kk]) * tensor::operand_int(scalar(bt), b[kk * n + j]);
                    acc += if negate { -p } else { p };
                }
                let v = if satfinite { acc.clamp(i32::MIN as i64, i32::MAX as i64) } else { acc as i32 as i64 };
                d[i * n + j] = v as u32 as u64;
            }
        }
        return d;
    }
    let av: Vec<f64> = a.iter().map(|&x| tensor::operand_f64(scalar(at), x)).collect();
    let bv: Vec<f64> = b.iter().map(|&x| tensor::operand_f64(scalar(bt), x)).collect();
    for i in 0..m {
        for j in 0..n {
            let c0 = c.map(|c| tensor::operand_f64(scalar(ct), c[i * n + j])).unwrap_or(0.0);
            let v = if dt == MmaType::F64 {
                // An fma chain in k order.
                let mut acc = c0;
                for kk in 0..k {
                    let x = if negate { -av[i * k + kk] } else { av[i * k + kk] };
                    acc = x.mul_add(bv[kk * n + j], acc);
                }
                acc
            } else {
                // Exact products, summed as the tensor cores do.
                let mut terms = Vec::with_capacity(k + 1);
                terms.push(c0);
                for kk in 0..k {
                    let p = av[i * k + kk] * bv[kk * n + j];
                    terms.push(if negate { -p } else { p });
                }
                d[i * n + j] =
                    if dt == MmaType::F32 { tensor::tensor_core_sum_f32(&terms) as u64 } else { tensor::round_sum(&terms, scalar(dt)) };
                continue;
            };
            d[i * n + j] = tensor::encode(scalar(dt), v);
        }
    }
    d
}

#[cfg(test)]
mod tests {
    use super::super::super::testkit::*;
    use super::*;

    #[test]
    fn integer_matmul_wraps_or_saturates() {
        let s = Shape { m: 1, n: 2, k: 2 };
        // A = [127, 127] (s8), B = [[127, -128], [127, -128]] (s8), C = [i32::MAX - 1, 5].
        let a = [127u64, 127];
        let b = [127u64, 0x80, 127, 0x80];
        let c = [(i32::MAX - 1) as u32 as u64, 5];
        let sat = matmul(s, MmaType::S8, MmaType::S8, MmaType::S32, MmaType::S32, true, &a, &b, Some(&c), false);
        assert_eq!(sat, [i32::MAX as u32 as u64, (5 - 2 * 127 * 128) as u32 as u64]);
        let wrap = matmul(s, MmaType::S8, MmaType::S8, MmaType::S32, MmaType::S32, false, &a, &b, Some(&c), false);
        assert_eq!(wrap[0], ((i32::MAX - 1) as i64 + 2 * 127 * 127) as i32 as u32 as u64);
    }

    #[test]
    fn f16_products_accumulate_in_f32_toward_zero() {
        let s = Shape { m: 1, n: 1, k: 2 };
        let one = 0x3C00u64; // f16 1.0
        let tiny = 0x0001u64; // f16 2^-24
        let d = matmul(s, MmaType::F16, MmaType::F16, MmaType::F32, MmaType::F32, false, &[one, tiny], &[one, one], None, false);
        assert_eq!(d, [1f32.to_bits() as u64], "1 + 2^-24 truncates to 1");
        let neg = matmul(s, MmaType::F16, MmaType::F16, MmaType::F32, MmaType::F32, false, &[one, one], &[one, one], None, true);
        assert_eq!(neg, [(-2f32).to_bits() as u64]);
    }

    #[test]
    fn movmatrix_transposes_an_8x8_tile() {
        let mut w = bare(2, 0, 0);
        // Element (row, col) = 8 * row + col; lane 4g + t holds (g, 2t) and (g, 2t + 1).
        fill32(&mut w, 0, |l| {
            let (g, t) = (l as u32 / 4, l as u32 % 4);
            (8 * g + 2 * t) | (8 * g + 2 * t + 1) << 16
        });
        w.movmatrix(RegRef::r32(1), RegRef::r32(0));
        let d = col(&w, 1);
        // Lane 4g + t now holds (2t, g) and (2t + 1, g) of the original.
        assert_eq!(d[1], (2 * 8) | ((3 * 8) << 16));
        assert_eq!(d[4 * 7 + 3], (6 * 8 + 7) | ((7 * 8 + 7) << 16));
    }
}
