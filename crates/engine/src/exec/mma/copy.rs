//! Asynchronous copies (`cp.async`, `cp.async.bulk`, `cp.async.bulk.tensor`),
//! which complete at issue (see the parent module), signalling their
//! mbarrier then; and the tensor-map box walk of tensor copies.

// Handlers take the decoded op's fields as arguments.
#![allow(clippy::too_many_arguments)]

use super::mbarrier::mbar_tx;
use super::*;
use crate::observer::MemAccessKind;

impl<const W: usize> Warp<W> {
    /// `cp.async`: `size` bytes per lane, of which `src_size` (or none, with `ignore_src`) come from the source.
    pub(super) fn cp_async<O: Observer>(
        &mut self,
        ctx: &mut WarpCtx<'_>,
        obs: &mut O,
        pc: u32,
        exec: u64,
        size: u8,
        dst: &Addr,
        dst_space: Space,
        src: &Addr,
        src_space: Space,
        src_size: Option<RegRef>,
        ignore_src: Option<(u32, bool)>,
    ) -> Result<(), WarpFault> {
        let da = self.addresses(dst);
        let sa = self.addresses(src);
        let size = size as u64;
        if O::WANTS_MEMORY {
            obs.memory(self.index, pc, src_space, MemAccessKind::Load, size as u32, &sa, exec);
            obs.memory(self.index, pc, dst_space, MemAccessKind::Store, size as u32, &da, exec);
        }
        for l in lanes(exec) {
            let mut n = match src_size {
                Some(r) => self.lane_value(r, l).min(size),
                None => size,
            };
            if let Some((p, neg)) = ignore_src {
                if (self.preds[p as usize] >> l & 1 != 0) != neg {
                    n = 0;
                }
            }
            for o in 0..size {
                let v = if o < n { self.mem_read(ctx, pc, src_space, sa[l] + o, 1, l)? } else { 0 };
                self.mem_write(ctx, pc, dst_space, da[l] + o, 1, v, l)?;
            }
        }
        Ok(())
    }

    /// `cp.async.bulk` (non-tensor): `size` bytes per lane, completing transactions on `mbar`.
    pub(super) fn bulk_copy<O: Observer>(
        &mut self,
        ctx: &mut WarpCtx<'_>,
        obs: &mut O,
        pc: u32,
        exec: u64,
        dir: BulkDir,
        dst: &Addr,
        src: &Addr,
        size: RegRef,
        mbar: Option<&Addr>,
    ) -> Result<(), WarpFault> {
        let (ds, ss) = match dir {
            BulkDir::GlobalToShared => (Space::Shared, Space::Global),
            BulkDir::SharedToGlobal => (Space::Global, Space::Shared),
            BulkDir::SharedToShared => (Space::Shared, Space::Shared),
        };
        let da = self.addresses(dst);
        let sa = self.addresses(src);
        let ma = mbar.map(|a| self.addresses(a));
        for l in lanes(exec) {
            let n = self.lane_value(size, l);
            if !n.is_multiple_of(16) || !da[l].is_multiple_of(16) || !sa[l].is_multiple_of(16) {
                return Err(WarpFault::lane(
                    pc,
                    l,
                    FaultKind::Unsupported(format!(
                        "cp.async.bulk needs 16-byte aligned addresses and a size that is a multiple of 16 (size {n}, dst {:#x}, src {:#x})",
                        da[l], sa[l]
                    )),
                ));
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
        Ok(())
    }

    /// `cp.async.bulk.tensor`: one box of the tensor map per lane.
    pub(super) fn bulk_tensor(
        &mut self,
        ctx: &mut WarpCtx<'_>,
        pc: u32,
        exec: u64,
        load: bool,
        dims: u8,
        smem: &Addr,
        tmap: RegRef,
        coords: &[RegRef],
        mbar: Option<&Addr>,
    ) -> Result<(), WarpFault> {
        let sa = self.addresses(smem);
        let ma = mbar.map(|a| self.addresses(a));
        for l in lanes(exec) {
            let map = self.tensor_map(ctx, pc, self.lane_value(tmap, l), l)?;
            if map.rank != dims as u32 {
                return Err(unsupported(pc, format!("a {dims}d tensor copy with a tensor map of rank {}", map.rank)));
            }
            let origin: Vec<i64> = coords.iter().map(|&c| self.lane_value(c, l) as u32 as i32 as i64).collect();
            self.tensor_copy(ctx, pc, &map, &origin, sa[l], load, l)?;
            if let Some(ma) = &ma {
                let n = map.box_bytes() as i64;
                self.mbar_update(ctx, pc, Space::Shared, ma[l], l, |v| mbar_tx(v, -n))?;
            }
        }
        Ok(())
    }

    /// Copies `n` bytes (a multiple of 8 when both addresses are 8-aligned, else byte by byte).
    pub(super) fn mem_copy(
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
}

#[cfg(test)]
mod tests {
    use super::super::super::testkit::*;
    use super::*;

    #[test]
    fn copies_move_bytes_and_check_alignment() {
        let mut blk = Block::new(64);
        let mut w = bare(2, 0, 0);
        for (i, b) in blk.shared[..16].iter_mut().enumerate() {
            *b = i as u8 + 1;
        }
        let mut ctx = blk.ctx();
        w.mem_copy(&mut ctx, 0, Space::Shared, 32, Space::Shared, 0, 16, 0).unwrap();
        w.mem_copy(&mut ctx, 0, Space::Shared, 49, Space::Shared, 1, 3, 0).unwrap();
        assert_eq!(&blk.shared[32..52], &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 0, 2, 3, 4]);
        // cp.async.bulk needs 16-byte sizes.
        fill32(&mut w, 0, |_| 8);
        let at = |o: i64| Addr { base: None, offset: o };
        let mut ctx = blk.ctx();
        let e =
            w.bulk_copy(&mut ctx, &mut crate::observer::NoObserver, 0, 1, BulkDir::SharedToShared, &at(32), &at(0), RegRef::r32(0), None);
        assert!(matches!(e, Err(WarpFault { lane: Some(0), kind: FaultKind::Unsupported(_), .. })));
    }
}
