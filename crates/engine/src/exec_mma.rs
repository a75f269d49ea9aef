//! Executing tensor-core, matrix-movement, asynchronous-copy and mbarrier
//! instructions ([`Op::Mma`]). A child module of `exec`, so that it uses the
//! warp's register and memory helpers directly.
//!
//! # Semantics in the functional engine
//!
//! * **Warp-collective instructions** (`mma`, `wmma.*`, `ldmatrix`,
//!   `stmatrix`, `movmatrix`) gather the fragments of all 32 lanes, compute,
//!   and scatter the results; all 32 lanes must execute them (PTX's
//!   `.aligned`), else the launch stops with an error naming the lanes.
//! * **Accumulation** follows what an H200 does, recorded in
//!   `tests/mma/golden` (the PTX ISA leaves it unspecified). For f32
//!   accumulators (f16, bf16 and tf32 inputs) each instruction computes the
//!   K products exactly, aligns C and the products to the largest exponent
//!   among them, truncates each to 26 bits below it (2^(emax-26)), adds them
//!   exactly and rounds the sum toward zero: this reproduces every f16 and
//!   bf16 result of the H200 bit for bit, and tf32 results nearly (a few
//!   percent differ in the last bits: the tf32 datapath's alignment is not
//!   quite this). wmma's m16n16k8 tf32 runs as two k4 steps, as on the H200.
//!   f16 accumulators: the exact sum rounded to nearest even (bit-exact).
//!   f64 `mma` is an IEEE fma chain over k in order, starting from C
//!   (bit-exact). Integer forms are exact (wrapping, or clamped with
//!   `.satfinite`). tf32 operands use the top 19 bits of each f32 (the low
//!   13 mantissa bits are ignored, as on the hardware).
//! * **Asynchronous copies complete at issue**: `cp.async`, `cp.async.bulk`
//!   and `cp.async.bulk.tensor` copy when the instruction executes, and
//!   signal their mbarrier (`complete_tx`) then; `commit_group`/`wait_group`
//!   have nothing left to wait for. That is one legal outcome of the PTX
//!   memory model (a program may not observe the copy before its wait).
//! * **mbarrier phases are modelled exactly**: an 8-byte object in shared
//!   memory holding the pending arrival count, the expected count for the
//!   next phase, the transaction count and the phase parity. `test_wait` and
//!   `try_wait` return false until the phase completes; a loop waiting on a
//!   phase that never completes ends in the instruction-budget fault.
//! * **wgmma** (a warpgroup: four consecutive warps, the first a multiple of
//!   4). Warp w of the warpgroup owns rows 16w..16w+15 of D, which depend
//!   only on its own A rows (its registers, or rows 16w.. of the A
//!   descriptor's matrix) and on B in shared memory. So each warp computes
//!   its 16 rows when it issues `wgmma.mma_async` (reading shared memory
//!   then; a program may not modify it before `wgmma.wait_group`), and the
//!   four warps together produce exactly the warpgroup's D, in whatever
//!   order the scheduler runs them.

#![allow(clippy::needless_range_loop)]

use super::*;
use warpsim_ir::mma::*;

/// Layout of the 8-byte mbarrier object (opaque in PTX).
const MB_PENDING: u32 = 0;
const MB_EXPECTED: u32 = 21;
const MB_TX: u32 = 42;
const MB_FIELD: u64 = (1 << 21) - 1;
const MB_PHASE: u64 = 1 << 63;

fn mb_pending(v: u64) -> u64 {
    (v >> MB_PENDING) & MB_FIELD
}
fn mb_expected(v: u64) -> u64 {
    (v >> MB_EXPECTED) & MB_FIELD
}
fn mb_tx(v: u64) -> i64 {
    // 21-bit two's complement.
    (((v >> MB_TX) & MB_FIELD) as i64) << 43 >> 43
}
fn mb_pack(pending: u64, expected: u64, tx: i64, phase: u64) -> u64 {
    (pending & MB_FIELD) << MB_PENDING | (expected & MB_FIELD) << MB_EXPECTED | ((tx as u64) & MB_FIELD) << MB_TX | (phase & MB_PHASE)
}

/// A value of an MMA element type as f64 (or i64 for integers, via `as f64` exactness below).
fn decode(ty: MmaType, raw: u64) -> f64 {
    match ty {
        MmaType::F16 => half::f16::from_bits(raw as u16).to_f64(),
        MmaType::BF16 => half::bf16::from_bits(raw as u16).to_f64(),
        // The tensor cores read the sign, exponent and top 10 mantissa bits.
        MmaType::TF32 => f32::from_bits(raw as u32 & 0xFFFF_E000) as f64,
        MmaType::F32 => f32::from_bits(raw as u32) as f64,
        MmaType::F64 => f64::from_bits(raw),
        MmaType::S8 => raw as u8 as i8 as f64,
        MmaType::U8 => raw as u8 as f64,
        MmaType::S32 => raw as u32 as i32 as f64,
    }
}

fn decode_int(ty: MmaType, raw: u64) -> i64 {
    match ty {
        MmaType::S8 => raw as u8 as i8 as i64,
        MmaType::U8 => raw as u8 as i64,
        _ => raw as u32 as i32 as i64,
    }
}

/// Rounds an exact (f64) result to the accumulator type: raw bits.
fn encode(ty: MmaType, v: f64) -> u64 {
    match ty {
        // (Not half::f16::from_f64, which rounds through f32.)
        MmaType::F16 => num::cvt::cvt(ScalarType::F16, ScalarType::F64, num::FMode::RN, v.to_bits()),
        MmaType::F32 => {
            if v.is_nan() {
                0x7FFF_FFFF
            } else {
                (v as f32).to_bits() as u64
            }
        }
        MmaType::F64 => v.to_bits(),
        _ => (v as f32).to_bits() as u64,
    }
}

fn elem_mask(ty: MmaType) -> u64 {
    if ty.bits() >= 64 {
        u64::MAX
    } else {
        (1u64 << ty.bits()) - 1
    }
}

fn unsupported(pc: u32, msg: impl Into<String>) -> WarpFault {
    WarpFault { pc, lane: None, kind: FaultKind::Unsupported(msg.into()) }
}

impl<const W: usize> Warp<W> {
    /// All 32 lanes of the warp must execute a warp-collective instruction.
    fn need_full_warp(&self, pc: u32, exec: u64, what: &str) -> Result<(), WarpFault> {
        if W != 32 {
            return Err(unsupported(pc, format!("{what} needs a 32-lane warp (this GPU preset has {W}-lane warps)")));
        }
        if exec != 0xFFFF_FFFF {
            return Err(unsupported(
                pc,
                format!("{what} must be executed by all 32 lanes of the warp (.aligned), but only lanes {exec:#010x} executed it"),
            ));
        }
        Ok(())
    }

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

    fn mem_read(&mut self, ctx: &WarpCtx<'_>, pc: u32, space: Space, addr: u64, size: u32, lane: usize) -> Result<u64, WarpFault> {
        let local = ctx.kernel.local_bytes;
        self.load(ctx, space, addr, size, lane, local).map_err(|kind| WarpFault { pc, lane: Some(lane as u32), kind })
    }

    #[allow(clippy::too_many_arguments)]
    fn mem_write(
        &mut self,
        ctx: &mut WarpCtx<'_>,
        pc: u32,
        space: Space,
        addr: u64,
        size: u32,
        v: u64,
        lane: usize,
    ) -> Result<(), WarpFault> {
        let local = ctx.kernel.local_bytes;
        self.store(ctx, space, addr, size, v, lane, local).map_err(|kind| WarpFault { pc, lane: Some(lane as u32), kind })
    }

    /// Copies `n` bytes (a multiple of 8 when both addresses are 8-aligned, else byte by byte).
    #[allow(clippy::too_many_arguments)]
    fn mem_copy(
        &mut self,
        ctx: &mut WarpCtx<'_>,
        pc: u32,
        dst_space: Space,
        dst: u64,
        src_space: Space,
        src: u64,
        n: u64,
        lane: usize,
    ) -> Result<(), WarpFault> {
        let step = if n.is_multiple_of(8) && dst.is_multiple_of(8) && src.is_multiple_of(8) { 8 } else { 1 };
        let mut o = 0;
        while o < n {
            let v = self.mem_read(ctx, pc, src_space, src + o, step, lane)?;
            self.mem_write(ctx, pc, dst_space, dst + o, step, v, lane)?;
            o += step as u64;
        }
        Ok(())
    }

    /// Runs one [`MmaOp`] for the lanes in `exec`.
    pub(super) fn exec_mma<O: Observer>(
        &mut self,
        ctx: &mut WarpCtx<'_>,
        obs: &mut O,
        pc: u32,
        exec: u64,
        op: &MmaOp,
    ) -> Result<(), WarpFault> {
        match op {
            MmaOp::Mma(m) => {
                let what = if m.family == Family::Wmma { "wmma.mma" } else { "mma.sync" };
                self.need_full_warp(pc, exec, what)?;
                self.mma_sync(m);
            }
            MmaOp::WmmaLoad { frag, col_major, space, addr, stride, d } => {
                self.need_full_warp(pc, exec, "wmma.load")?;
                let (base, ld) = self.wmma_base(*frag, *col_major, addr, *stride, exec);
                let bytes = frag.ty.bytes();
                let mut vals = vec![0u64; 32 * frag.slots() as usize];
                for slot in 0..frag.slots() {
                    let mut addrs = [0u64; W];
                    for lane in 0..32 {
                        let (r, c) = frag.pos(lane as u32, slot);
                        let off = if *col_major { c as u64 * ld + r as u64 } else { r as u64 * ld + c as u64 };
                        addrs[lane] = base.wrapping_add(off * bytes as u64);
                        vals[lane * frag.slots() as usize + slot as usize] = self.mem_read(ctx, pc, *space, addrs[lane], bytes, lane)?;
                    }
                    if O::WANTS_MEMORY {
                        obs.memory(self.index, pc, *space, MemAccessKind::Load, bytes, &addrs, exec);
                    }
                }
                let n = frag.slots() as usize;
                self.write_frag(d, frag.ty, frag.slots(), 32, |lane, slot| vals[lane * n + slot as usize]);
            }
            MmaOp::WmmaStore { frag, col_major, space, addr, stride, s } => {
                self.need_full_warp(pc, exec, "wmma.store")?;
                let (base, ld) = self.wmma_base(*frag, *col_major, addr, *stride, exec);
                let bytes = frag.ty.bytes();
                for slot in 0..frag.slots() {
                    let mut addrs = [0u64; W];
                    for lane in 0..32 {
                        let (r, c) = frag.pos(lane as u32, slot);
                        let off = if *col_major { c as u64 * ld + r as u64 } else { r as u64 * ld + c as u64 };
                        addrs[lane] = base.wrapping_add(off * bytes as u64);
                        let v = self.frag_elem(s, frag.ty, lane, slot);
                        self.mem_write(ctx, pc, *space, addrs[lane], bytes, v, lane)?;
                    }
                    if O::WANTS_MEMORY {
                        obs.memory(self.index, pc, *space, MemAccessKind::Store, bytes, &addrs, exec);
                    }
                }
            }
            MmaOp::LdMatrix { num, trans, space, addr, d } => {
                self.need_full_warp(pc, exec, "ldmatrix")?;
                let addrs = self.addresses(addr);
                let rows = 8 * *num as usize;
                if O::WANTS_MEMORY {
                    obs.memory(self.index, pc, *space, MemAccessKind::Load, 16, &addrs, (1u64 << rows) - 1);
                }
                // m[matrix][row][col]
                let mut m = vec![[[0u16; 8]; 8]; *num as usize];
                for (row_lane, &a) in addrs.iter().enumerate().take(rows) {
                    for c in 0..8 {
                        m[row_lane / 8][row_lane % 8][c] = self.mem_read(ctx, pc, *space, a + 2 * c as u64, 2, row_lane)? as u16;
                    }
                }
                for (k, &r) in d.iter().enumerate() {
                    for lane in 0..32 {
                        let (g, t) = (lane / 4, lane % 4);
                        let e = |j: usize| if *trans { m[k][2 * t + j][g] } else { m[k][g][2 * t + j] } as u64;
                        self.put_lane(r, lane, e(0) | e(1) << 16);
                    }
                }
            }
            MmaOp::StMatrix { num, trans, space, addr, s } => {
                self.need_full_warp(pc, exec, "stmatrix")?;
                let addrs = self.addresses(addr);
                let rows = 8 * *num as usize;
                if O::WANTS_MEMORY {
                    obs.memory(self.index, pc, *space, MemAccessKind::Store, 16, &addrs, (1u64 << rows) - 1);
                }
                for (k, &r) in s.iter().enumerate() {
                    for lane in 0..32 {
                        let (g, t) = (lane / 4, lane % 4);
                        let v = self.lane_value(r, lane);
                        for j in 0..2 {
                            let e = (v >> (16 * j)) & 0xFFFF;
                            // Element (g, 2t + j) of matrix k; `.trans` stores the transpose.
                            let (row, col) = if *trans { (2 * t + j, g) } else { (g, 2 * t + j) };
                            let row_lane = 8 * k + row;
                            self.mem_write(ctx, pc, *space, addrs[row_lane] + 2 * col as u64, 2, e, row_lane)?;
                        }
                    }
                }
            }
            MmaOp::MovMatrix { d, a } => {
                self.need_full_warp(pc, exec, "movmatrix")?;
                let src: Vec<u64> = (0..32).map(|l| self.lane_value(*a, l)).collect();
                let elem = |row: usize, col: usize| (src[row * 4 + col / 2] >> (16 * (col % 2))) & 0xFFFF;
                for lane in 0..32 {
                    let (g, t) = (lane / 4, lane % 4);
                    self.put_lane(*d, lane, elem(2 * t, g) | elem(2 * t + 1, g) << 16);
                }
            }
            MmaOp::CpAsync { size, dst, dst_space, src, src_space, src_size, ignore_src } => {
                let da = self.addresses(dst);
                let sa = self.addresses(src);
                let size = *size as u64;
                if O::WANTS_MEMORY {
                    obs.memory(self.index, pc, *src_space, MemAccessKind::Load, size as u32, &sa, exec);
                    obs.memory(self.index, pc, *dst_space, MemAccessKind::Store, size as u32, &da, exec);
                }
                let mut m = exec;
                while m != 0 {
                    let l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    let mut n = match src_size {
                        Some(r) => self.lane_value(*r, l).min(size),
                        None => size,
                    };
                    if let Some((p, neg)) = ignore_src {
                        if (self.preds[*p as usize] >> l & 1 != 0) != *neg {
                            n = 0;
                        }
                    }
                    for o in 0..size {
                        let v = if o < n { self.mem_read(ctx, pc, *src_space, sa[l] + o, 1, l)? } else { 0 };
                        self.mem_write(ctx, pc, *dst_space, da[l] + o, 1, v, l)?;
                    }
                }
            }
            MmaOp::CpAsyncMbarrierArrive { noinc, space, addr } => {
                // The thread's earlier cp.async copies are complete: the
                // arrive happens now. Without .noinc the pending count is
                // first raised by one, so the net effect is nothing.
                if *noinc {
                    let addrs = self.addresses(addr);
                    let mut m = exec;
                    while m != 0 {
                        let l = m.trailing_zeros() as usize;
                        m &= m - 1;
                        self.mbar_update(ctx, pc, *space, addrs[l], l, |v| mbar_arrive(v, 1, false, 0, false))?;
                    }
                }
            }
            MmaOp::Mbarrier { kind, space, addr } => self.mbarrier(ctx, obs, pc, exec, kind, *space, addr)?,
            MmaOp::MbarPendingCount { d, state } => {
                let mut m = exec;
                while m != 0 {
                    let l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    let s = self.lane_value(*state, l);
                    self.put_lane(*d, l, mb_pending(s));
                }
            }
            MmaOp::Bulk { dir, dst, src, size, mbar } => {
                let (ds, ss) = match dir {
                    BulkDir::GlobalToShared => (Space::Shared, Space::Global),
                    BulkDir::SharedToGlobal => (Space::Global, Space::Shared),
                    BulkDir::SharedToShared => (Space::Shared, Space::Shared),
                };
                let da = self.addresses(dst);
                let sa = self.addresses(src);
                let ma = mbar.as_ref().map(|a| self.addresses(a));
                let mut m = exec;
                while m != 0 {
                    let l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    let n = self.lane_value(*size, l);
                    if !n.is_multiple_of(16) || !da[l].is_multiple_of(16) || !sa[l].is_multiple_of(16) {
                        return Err(WarpFault {
                            pc,
                            lane: Some(l as u32),
                            kind: FaultKind::Unsupported(format!(
                                "cp.async.bulk needs 16-byte aligned addresses and a size that is a multiple of 16 (size {n}, dst {:#x}, src {:#x})",
                                da[l], sa[l]
                            )),
                        });
                    }
                    if O::WANTS_MEMORY {
                        let mut one = [0u64; W];
                        one[l] = sa[l];
                        obs.memory(self.index, pc, ss, MemAccessKind::Load, n as u32, &one, 1 << l);
                        one[l] = da[l];
                        obs.memory(self.index, pc, ds, MemAccessKind::Store, n as u32, &one, 1 << l);
                    }
                    self.mem_copy(ctx, pc, ds, da[l], ss, sa[l], n, l)?;
                    if let Some(ma) = &ma {
                        self.mbar_update(ctx, pc, Space::Shared, ma[l], l, |v| mbar_tx(v, -(n as i64)))?;
                    }
                }
            }
            MmaOp::BulkTensor { load, dims, smem, tmap, coords, mbar } => {
                let sa = self.addresses(smem);
                let ma = mbar.as_ref().map(|a| self.addresses(a));
                let mut m = exec;
                while m != 0 {
                    let l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    let map = self.tensor_map(ctx, pc, self.lane_value(*tmap, l), l)?;
                    if map.rank != *dims as u32 {
                        return Err(unsupported(pc, format!("a {dims}d tensor copy with a tensor map of rank {}", map.rank)));
                    }
                    let origin: Vec<i64> = coords.iter().map(|&c| self.lane_value(c, l) as u32 as i32 as i64).collect();
                    self.tensor_copy(ctx, pc, &map, &origin, sa[l], *load, l)?;
                    if let Some(ma) = &ma {
                        let n = map.box_bytes() as i64;
                        self.mbar_update(ctx, pc, Space::Shared, ma[l], l, |v| mbar_tx(v, -n))?;
                    }
                }
            }
            MmaOp::Wgmma(w) => {
                self.need_full_warp(pc, exec, "wgmma.mma_async")?;
                self.wgmma(ctx, pc, exec, w)?;
            }
            MmaOp::Sync(_) => {}
        }
        Ok(())
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

    fn mma_sync(&mut self, m: &MmaSync) {
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

    #[allow(clippy::too_many_arguments)]
    fn mbarrier<O: Observer>(
        &mut self,
        ctx: &mut WarpCtx<'_>,
        obs: &mut O,
        pc: u32,
        exec: u64,
        kind: &MbarKind,
        space: Space,
        addr: &Addr,
    ) -> Result<(), WarpFault> {
        let addrs = self.addresses(addr);
        if O::WANTS_MEMORY {
            obs.memory(self.index, pc, space, MemAccessKind::Atomic, 8, &addrs, exec);
        }
        let mut m = exec;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            let a = addrs[l];
            match kind {
                MbarKind::Init { count } => {
                    let n = self.lane_value(*count, l);
                    if n == 0 || n > MB_FIELD >> 1 {
                        return Err(unsupported(pc, format!("mbarrier.init count {n} is outside 1..2^20-1")));
                    }
                    self.mbar_update(ctx, pc, space, a, l, |_| Ok(mb_pack(n, n, 0, 0)))?;
                }
                MbarKind::Inval => {
                    self.mbar_update(ctx, pc, space, a, l, |_| Ok(0))?;
                }
                MbarKind::Arrive { state, count, drop, expect_tx, no_complete } => {
                    let n = count.map(|c| self.lane_value(c, l)).unwrap_or(1);
                    let tx = expect_tx.map(|t| self.lane_value(t, l) as u32 as i64).unwrap_or(0);
                    let old = self.mbar_update(ctx, pc, space, a, l, |v| mbar_arrive(v, n, *drop, tx, *no_complete))?;
                    if let Some(s) = state {
                        // The state token: the phase arrived on, and the arrivals it still awaited after this one.
                        let token = (old & MB_PHASE) | mb_pack(mb_pending(old) - n, mb_expected(old), mb_tx(old) + tx, 0);
                        self.put_lane(*s, l, token);
                    }
                }
                MbarKind::ExpectTx { tx } => {
                    let t = self.lane_value(*tx, l) as u32 as i64;
                    self.mbar_update(ctx, pc, space, a, l, |v| {
                        let nt = mb_tx(v) + t;
                        if nt >= 1 << 20 {
                            return Err(format!("mbarrier transaction count {nt} overflows"));
                        }
                        Ok(mb_pack(mb_pending(v), mb_expected(v), nt, v))
                    })?;
                }
                MbarKind::CompleteTx { tx } => {
                    let t = self.lane_value(*tx, l) as u32 as i64;
                    self.mbar_update(ctx, pc, space, a, l, |v| mbar_tx(v, -t))?;
                }
                MbarKind::Wait { p, parity, arg } => {
                    let v = self.mem_read(ctx, pc, space, a, 8, l)?;
                    let cur = v >> 63;
                    let want = if *parity { self.lane_value(*arg, l) & 1 } else { self.lane_value(*arg, l) >> 63 };
                    // The phase the token (or parity) names has completed once the current phase differs.
                    self.put_lane(RegRef::pred(*p), l, (cur != want) as u64);
                }
            }
        }
        Ok(())
    }

    /// Read-modify-write of the mbarrier at `addr`; returns the old value.
    fn mbar_update(
        &mut self,
        ctx: &mut WarpCtx<'_>,
        pc: u32,
        space: Space,
        addr: u64,
        lane: usize,
        f: impl FnOnce(u64) -> Result<u64, String>,
    ) -> Result<u64, WarpFault> {
        let (sp, _) = resolve_generic(space, addr);
        if sp != Space::Shared {
            return Err(WarpFault {
                pc,
                lane: Some(lane as u32),
                kind: FaultKind::Unsupported(format!("mbarrier at {addr:#x} is not in shared memory")),
            });
        }
        let old = self.mem_read(ctx, pc, space, addr, 8, lane)?;
        let new = f(old).map_err(|msg| WarpFault { pc, lane: Some(lane as u32), kind: FaultKind::Unsupported(msg) })?;
        self.mem_write(ctx, pc, space, addr, 8, new, lane)?;
        Ok(old)
    }

    /// Reads and decodes the tensor map at `addr`: a kernel-parameter offset
    /// (from `mov` of a `.param` symbol, with or without `cvta.param`) or a
    /// global address.
    fn tensor_map(&mut self, ctx: &WarpCtx<'_>, pc: u32, addr: u64, lane: usize) -> Result<TensorMap, WarpFault> {
        let mut b = [0u8; 128];
        if addr < ctx.params.len() as u64 {
            if addr + 128 > ctx.params.len() as u64 || !addr.is_multiple_of(64) {
                return Err(unsupported(pc, format!("tensor map at parameter offset {addr} is not a 64-byte aligned 128-byte parameter")));
            }
            b.copy_from_slice(&ctx.params[addr as usize..addr as usize + 128]);
        } else {
            for k in 0..16 {
                let v = self.mem_read(ctx, pc, Space::Generic, addr + 8 * k, 8, lane)?;
                b[8 * k as usize..8 * k as usize + 8].copy_from_slice(&v.to_le_bytes());
            }
        }
        TensorMap::decode(&b).map_err(|m| unsupported(pc, m.to_string()))
    }

    /// Copies one box between the tensor and shared memory at `smem`.
    #[allow(clippy::too_many_arguments)]
    fn tensor_copy(
        &mut self,
        ctx: &mut WarpCtx<'_>,
        pc: u32,
        t: &TensorMap,
        origin: &[i64],
        smem: u64,
        load: bool,
        lane: usize,
    ) -> Result<(), WarpFault> {
        let rank = t.rank as usize;
        let eb = t.elem_bytes as u64;
        let row_bytes = t.box_dims[0] as u64 * eb;
        if t.swizzle != 0 && row_bytes != t.swizzle as u64 {
            return Err(unsupported(
                pc,
                format!("tensor copies with a {}-byte swizzle need {}-byte box rows (this box has {row_bytes})", t.swizzle, t.swizzle),
            ));
        }
        let swz_mask = (t.swizzle as u64 / 16).saturating_sub(1);
        let total: u64 = t.box_dims[..rank].iter().map(|&d| d as u64).product();
        let nan: u64 = match t.elem_bytes {
            2 => 0x7FFF,
            4 => 0x7FFF_FFFF,
            8 => 0x7FF8_0000_0000_0000,
            _ => 0,
        };
        for idx in 0..total {
            // Box index, innermost dimension first.
            let mut rem = idx;
            let mut inside = true;
            let mut gaddr = t.address;
            for d in 0..rank {
                let i = rem % t.box_dims[d] as u64;
                rem /= t.box_dims[d] as u64;
                let c = origin[d] + i as i64;
                if c < 0 || c as u64 >= t.dims[d] {
                    inside = false;
                } else {
                    gaddr = gaddr.wrapping_add(c as u64 * t.strides[d]);
                }
            }
            let mut s = smem.wrapping_add(idx * eb);
            s ^= ((s >> 7) & swz_mask) << 4;
            if load {
                let v = if inside {
                    self.mem_read(ctx, pc, Space::Global, gaddr, t.elem_bytes, lane)?
                } else if t.nan_fill {
                    nan
                } else {
                    0
                };
                self.mem_write(ctx, pc, Space::Shared, s, t.elem_bytes, v, lane)?;
            } else if inside {
                let v = self.mem_read(ctx, pc, Space::Shared, s, t.elem_bytes, lane)?;
                self.mem_write(ctx, pc, Space::Global, gaddr, t.elem_bytes, v, lane)?;
            }
        }
        Ok(())
    }

    fn wgmma(&mut self, ctx: &mut WarpCtx<'_>, pc: u32, exec: u64, w: &Wgmma) -> Result<(), WarpFault> {
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
                let mut acc: i64 = c.map(|c| decode_int(ct, c[i * n + j])).unwrap_or(0);
                for kk in 0..k {
                    let p = decode_int(at, a[i * k + kk]) * decode_int(bt, b[kk * n + j]);
                    acc += if negate { -p } else { p };
                }
                let v = if satfinite { acc.clamp(i32::MIN as i64, i32::MAX as i64) } else { acc as i32 as i64 };
                d[i * n + j] = v as u32 as u64;
            }
        }
        return d;
    }
    let av: Vec<f64> = a.iter().map(|&x| decode(at, x)).collect();
    let bv: Vec<f64> = b.iter().map(|&x| decode(bt, x)).collect();
    for i in 0..m {
        for j in 0..n {
            let c0 = c.map(|c| decode(ct, c[i * n + j])).unwrap_or(0.0);
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
                d[i * n + j] = if dt == MmaType::F32 { tensor_core_sum_f32(&terms) as u64 } else { round_sum(&terms, dt) };
                continue;
            };
            d[i * n + j] = encode(dt, v);
        }
    }
    d
}

/// The exact sum of `terms` as (hi, lo): `hi` within one f64 ulp of the sum
/// and `lo` carrying the sign of the remainder (0 when `hi` is exact).
/// Shewchuk's exact summation with non-overlapping partials (Python's
/// `math.fsum`).
fn exact_sum(terms: &[f64]) -> (f64, f64) {
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

/// Rounds the exact sum of `terms` once to `dt` (round to nearest even).
fn round_sum(terms: &[f64], dt: MmaType) -> u64 {
    let (hi, lo) = exact_sum(terms);
    // `hi` rounds like the exact sum unless it sits exactly on a tie of the
    // narrower format; then the remainder's sign decides.
    if lo != 0.0 && is_tie(hi, dt) {
        let b = hi.to_bits();
        let away = (lo > 0.0) == (hi > 0.0);
        let nudged = if hi == 0.0 { f64::from_bits(1).copysign(lo) } else { f64::from_bits(if away { b + 1 } else { b - 1 }) };
        return encode(dt, nudged);
    }
    encode(dt, hi)
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
/// products `terms` (see the module docs): aligned to the largest exponent,
/// truncated to 2^(emax - 26), added exactly, rounded toward zero to f32.
fn tensor_core_sum_f32(terms: &[f64]) -> u32 {
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

/// Whether `x` lies exactly halfway between two neighbours of type `dt`.
fn is_tie(x: f64, dt: MmaType) -> bool {
    match dt {
        MmaType::F32 => {
            let f = x as f32;
            if f as f64 == x || !f.is_finite() || f == 0.0 {
                return false;
            }
            let other = if (f as f64).abs() < x.abs() { f32::from_bits(f.to_bits() + 1) } else { f32::from_bits(f.to_bits() - 1) };
            (x - f as f64).abs() == (other as f64 - x).abs()
        }
        MmaType::F16 => {
            let h = half::f16::from_bits(encode(MmaType::F16, x) as u16);
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

fn mbar_complete(pending: u64, expected: u64, tx: i64, v: u64) -> u64 {
    if pending == 0 && tx == 0 {
        // Phase complete: the next phase starts with the expected count.
        mb_pack(expected, expected, 0, (v ^ MB_PHASE) & MB_PHASE)
    } else {
        mb_pack(pending, expected, tx, v)
    }
}

fn mbar_arrive(v: u64, n: u64, drop: bool, expect_tx: i64, no_complete: bool) -> Result<u64, String> {
    let (pending, mut expected) = (mb_pending(v), mb_expected(v));
    if expected == 0 {
        return Err("mbarrier arrive on an object that was never initialised (mbarrier.init)".into());
    }
    if n > pending {
        return Err(format!("mbarrier arrive of count {n} exceeds the {pending} arrivals pending in the current phase"));
    }
    if drop {
        if n > expected {
            return Err(format!("mbarrier arrive_drop of count {n} exceeds the expected count {expected}"));
        }
        expected -= n;
    }
    let tx = mb_tx(v) + expect_tx;
    if tx >= 1 << 20 {
        return Err(format!("mbarrier transaction count {tx} overflows"));
    }
    let pending = pending - n;
    if no_complete && pending == 0 && tx == 0 {
        return Err("mbarrier.arrive.noComplete would have completed the phase".into());
    }
    Ok(mbar_complete(pending, expected, tx, v))
}

fn mbar_tx(v: u64, delta: i64) -> Result<u64, String> {
    if mb_expected(v) == 0 {
        return Err("transaction completed on an mbarrier that was never initialised (mbarrier.init)".into());
    }
    let tx = mb_tx(v) + delta;
    if tx <= -(1 << 20) || tx >= 1 << 20 {
        return Err(format!("mbarrier transaction count {tx} is out of range"));
    }
    Ok(mbar_complete(mb_pending(v), mb_expected(v), tx, v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mbarrier_phases() {
        let v = mb_pack(2, 2, 0, 0);
        let v = mbar_arrive(v, 1, false, 0, false).unwrap();
        assert_eq!((mb_pending(v), v >> 63), (1, 0));
        let v = mbar_arrive(v, 1, false, 0, false).unwrap();
        assert_eq!((mb_pending(v), mb_expected(v), v >> 63), (2, 2, 1), "phase 0 completed");
        // expect_tx holds the phase open until the bytes arrive.
        let v = mbar_arrive(v, 2, false, 64, false).unwrap();
        assert_eq!((mb_pending(v), mb_tx(v), v >> 63), (0, 64, 1));
        let v = mbar_tx(v, -64).unwrap();
        assert_eq!((mb_pending(v), v >> 63), (2, 0));
        // Bytes may land before they are expected.
        let v = mbar_tx(v, -16).unwrap();
        assert_eq!(mb_tx(v), -16);
        let v = mbar_arrive(v, 2, false, 16, false).unwrap();
        assert_eq!(v >> 63, 1);
        // arrive_drop lowers the count of later phases.
        let v = mbar_arrive(v, 1, true, 0, false).unwrap();
        let v = mbar_arrive(v, 1, false, 0, false).unwrap();
        assert_eq!((mb_pending(v), mb_expected(v), v >> 63), (1, 1, 0));
        assert!(mbar_arrive(v, 2, false, 0, false).unwrap_err().contains("exceeds"));
        assert!(mbar_arrive(0, 1, false, 0, false).unwrap_err().contains("never initialised"));
    }

    #[test]
    fn tensor_core_f32_sums_truncate() {
        let f = |t: &[f64]| f32::from_bits(tensor_core_sum_f32(t));
        // Round toward zero, not to nearest.
        assert_eq!(f(&[1.0, 2f64.powi(-24) * 1.5]), 1.0);
        assert_eq!(f(&[-1.0, -(2f64.powi(-24) * 1.5)]), -1.0);
        // Terms far below the largest one are dropped before adding.
        assert_eq!(f(&[1.0, 2f64.powi(-27), 2f64.powi(-27), 2f64.powi(-27), 2f64.powi(-27)]), 1.0);
        assert_eq!(f(&[1.0, 2f64.powi(-26), 2f64.powi(-26)]), 1.0 + 2f32.powi(-23) * 0.0 + 2f32.powi(-23) * 0.0);
        assert_eq!(f(&[1.0, 2f64.powi(-25), 2f64.powi(-25), 2f64.powi(-25), 2f64.powi(-25)]), 1.0 + 2f32.powi(-23));
        assert_eq!(f(&[0.0, -0.0]).to_bits(), 0);
        assert_eq!(f(&[-0.0, -0.0]).to_bits(), 0x8000_0000);
        assert!(f(&[f64::INFINITY, -f64::INFINITY]).is_nan());
        assert_eq!(f(&[1e300, 1e300]), f32::MAX);
    }

    #[test]
    fn exact_sums_round_once() {
        let f32_of = |t: &[f64]| f32::from_bits(round_sum(t, MmaType::F32) as u32);
        // 1 + 2^-24 + 2^-60: just above the f32 tie between 1 and 1 + 2^-23.
        assert_eq!(f32_of(&[1.0, 2f64.powi(-24), 2f64.powi(-60)]), 1.0 + 2f32.powi(-23));
        assert_eq!(f32_of(&[1.0, 2f64.powi(-24), -2f64.powi(-60)]), 1.0);
        assert_eq!(f32_of(&[1.0, 2f64.powi(-24)]), 1.0, "an exact tie rounds to even");
        assert_eq!(f32_of(&[-1.0, -2f64.powi(-24), -2f64.powi(-60)]), -1.0 - 2f32.powi(-23));
        assert_eq!(f32_of(&[1e30, 1.0, -1e30]), 1.0);
        assert_eq!(f32_of(&[]), 0.0);
        assert!(f32_of(&[f64::INFINITY, 1.0]).is_infinite());
        let h = |t: &[f64]| half::f16::from_bits(round_sum(t, MmaType::F16) as u16).to_f64();
        assert_eq!(h(&[1.0, 2f64.powi(-11), 2f64.powi(-70)]), 1.0 + 2f64.powi(-10));
        assert_eq!(h(&[1.0, 2f64.powi(-11)]), 1.0);
    }
}
