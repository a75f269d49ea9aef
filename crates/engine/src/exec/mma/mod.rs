//! Executing tensor-core, matrix-movement, asynchronous-copy and mbarrier
//! instructions ([`Op::Mma`]). A child module of `exec`, so that it uses the
//! warp's register and memory helpers directly: `fragment` (fragments,
//! `mma`/`wmma`/`wgmma`, matrix loads and stores), `mbarrier` (the mbarrier
//! state machine), `copy` (asynchronous, bulk and tensor copies); the
//! rounding arithmetic is `warpsim_numerics::tensor`.
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

// Handlers take the decoded op's fields as arguments.
#![allow(clippy::too_many_arguments)]

use super::*;
use crate::observer::MemAccessKind;
use warpsim_ir::mma::*;

mod copy;
mod fragment;
mod mbarrier;

pub use mbarrier::MbarrierError;

/// A fault of the whole warp: something the engine cannot do.
fn unsupported(pc: u32, msg: impl Into<String>) -> WarpFault {
    WarpFault::warp(pc, FaultKind::Unsupported(msg.into()))
}

impl<const W: usize> Warp<W> {
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
                self.wmma_access(ctx, obs, pc, exec, MemAccessKind::Load, *frag, *col_major, *space, addr, *stride, d)?;
            }
            MmaOp::WmmaStore { frag, col_major, space, addr, stride, s } => {
                self.need_full_warp(pc, exec, "wmma.store")?;
                self.wmma_access(ctx, obs, pc, exec, MemAccessKind::Store, *frag, *col_major, *space, addr, *stride, s)?;
            }
            MmaOp::LdMatrix { num, trans, space, addr, d } => {
                self.need_full_warp(pc, exec, "ldmatrix")?;
                self.matrix_access(ctx, obs, pc, MemAccessKind::Load, *num, *trans, *space, addr, d)?;
            }
            MmaOp::StMatrix { num, trans, space, addr, s } => {
                self.need_full_warp(pc, exec, "stmatrix")?;
                self.matrix_access(ctx, obs, pc, MemAccessKind::Store, *num, *trans, *space, addr, s)?;
            }
            MmaOp::MovMatrix { d, a } => {
                self.need_full_warp(pc, exec, "movmatrix")?;
                self.movmatrix(*d, *a);
            }
            MmaOp::CpAsync { size, dst, dst_space, src, src_space, src_size, ignore_src } => {
                self.cp_async(ctx, obs, pc, exec, *size, dst, *dst_space, src, *src_space, *src_size, *ignore_src)?
            }
            MmaOp::CpAsyncMbarrierArrive { noinc, space, addr } => self.cp_async_mbarrier_arrive(ctx, pc, exec, *noinc, *space, addr)?,
            MmaOp::Mbarrier { kind, space, addr } => self.mbarrier(ctx, obs, pc, exec, kind, *space, addr)?,
            MmaOp::MbarPendingCount { d, state } => self.mbar_pending_count(exec, *d, *state),
            MmaOp::Bulk { dir, dst, src, size, mbar } => self.bulk_copy(ctx, obs, pc, exec, *dir, dst, src, *size, mbar.as_ref())?,
            MmaOp::BulkTensor { load, dims, smem, tmap, coords, mbar } => {
                self.bulk_tensor(ctx, pc, exec, *load, *dims, smem, *tmap, coords, mbar.as_ref())?
            }
            MmaOp::Wgmma(w) => {
                self.need_full_warp(pc, exec, "wgmma.mma_async")?;
                self.wgmma(ctx, pc, exec, w)?;
            }
            MmaOp::Sync(_) => {}
        }
        Ok(())
    }

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

    fn mem_read(&mut self, ctx: &WarpCtx<'_>, pc: u32, space: Space, addr: u64, size: u32, lane: usize) -> Result<u64, WarpFault> {
        self.load(ctx, space, addr, size, lane).map_err(|kind| WarpFault::lane(pc, lane, kind))
    }

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
        self.store(ctx, space, addr, size, v, lane).map_err(|kind| WarpFault::lane(pc, lane, kind))
    }
}
