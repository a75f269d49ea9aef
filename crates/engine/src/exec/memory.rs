//! Loads, stores and atomics in every state space, and address generation.
//! A global access whose active lanes are aligned and fall in one allocation
//! (the common case, checked once per instruction) goes straight to that
//! allocation; anything else goes lane by lane through the checked path,
//! which reports the first faulting lane.

// Handlers take the decoded op's fields as arguments.
#![allow(clippy::too_many_arguments)]

use super::*;
use crate::fault::{FaultSpace, MemAccessKind};
use crate::memory::{MemFault, WarpSpan};
use warpsim_ir::window::resolve as resolve_generic;
use warpsim_numerics::{self as num, sext, zext, ScalarType};

impl<const W: usize> Warp<W> {
    /// Each lane's address `base register + offset`. Built whole (no fill
    /// then overwrite, which LLVM left as 32 scalar stores): `warp_span` reads
    /// the array back a vector at a time, and a vector load from scalar stores
    /// waits for them to retire (store forwarding fails).
    #[inline]
    pub(super) fn addresses(&self, a: &Addr) -> [u64; W] {
        let off = a.offset as u64;
        match a.base {
            None => [off; W],
            Some(r) if r.bank == Bank::R64 => {
                let c = col64::<W>(&self.r64, r.slot);
                std::array::from_fn(|l| c[l].wrapping_add(off))
            }
            Some(r) => {
                // 32-bit addresses (shared, local) wrap at 32 bits: `[%r+512]` with %r = base - 512.
                let c = col32::<W>(&self.r32, r.slot);
                std::array::from_fn(|l| c[l].wrapping_add(off as u32) as u64)
            }
        }
    }

    /// Each lane's address, told to `obs` as an access of `bytes` per lane.
    #[inline(always)]
    fn observed_addresses<O: Observer>(
        &self,
        obs: &mut O,
        pc: u32,
        space: Space,
        access: MemAccessKind,
        bytes: u32,
        addr: &Addr,
        exec: u64,
    ) -> [u64; W] {
        let base = self.addresses(addr);
        if O::WANTS_MEMORY {
            obs.memory(self.index, pc, space, access, bytes, &base, exec);
        }
        base
    }

    #[inline(always)]
    pub(super) fn cvta(&mut self, to_generic: bool, window: u64, d: RegRef, a: RegRef, exec: u64) {
        let v = self.gather(a);
        let mut o = [0u64; W];
        for l in 0..W {
            o[l] = if to_generic { v[l].wrapping_add(window) } else { v[l].wrapping_sub(window) };
        }
        self.scatter(d, &o, exec);
    }

    /// `ld.param` of `n` elements of `size` bytes at constant offset `offset`
    /// into the `d` registers' `lanes`, when every element lies in `params`
    /// (kernel parameters are uniform: one read, broadcast). `false`, with
    /// nothing written, when one does not: `ld` then faults as it names.
    #[inline(always)]
    pub(super) fn ld_param(
        &mut self,
        params: &[u8],
        size: u8,
        signed: bool,
        n: u8,
        d: &[Option<RegRef>; 4],
        offset: i64,
        lanes: u64,
    ) -> bool {
        let size = size as usize;
        if !matches!(size, 1 | 2 | 4 | 8) {
            return false;
        }
        let Some(bytes) = usize::try_from(offset).ok().and_then(|o| params.get(o..)?.get(..size * n as usize)) else {
            return false;
        };
        for (dk, b) in d.iter().zip(bytes.chunks_exact(size)) {
            if let Some(dk) = *dk {
                let raw = read_le(b);
                self.broadcast(dk, if signed { sext(raw, size as u32 * 8) } else { raw }, lanes);
            }
        }
        true
    }

    #[inline(always)]
    pub(super) fn ld<O: Observer>(
        &mut self,
        ctx: &WarpCtx<'_>,
        obs: &mut O,
        pc: u32,
        space: Space,
        size: u8,
        signed: bool,
        n: u8,
        d: &[Option<RegRef>; 4],
        addr: &Addr,
        exec: u64,
    ) -> Result<(), WarpFault> {
        let size = size as u32;
        if space == Space::KernelParam && addr.base.is_none() {
            // `ld.param` at a constant offset: kernel parameters are uniform, so one read is broadcast to every lane.
            for k in 0..n as usize {
                let off = (addr.offset as u64).wrapping_add(k as u64 * size as u64);
                // Straight from the parameter bytes; `load` says why an access is out of bounds.
                let raw = match usize::try_from(off).ok().and_then(|o| ctx.params.get(o..)?.get(..size as usize)) {
                    Some(bytes) => read_le(bytes),
                    _ => self.load(ctx, space, off, size, 0).map_err(|kind| WarpFault::warp(pc, kind))?,
                };
                if let Some(dk) = d[k] {
                    self.broadcast(dk, if signed { sext(raw, size * 8) } else { raw }, exec);
                }
            }
            return Ok(());
        }
        let base = self.observed_addresses(obs, pc, space, MemAccessKind::Load, size * n as u32, addr, exec);
        if let (Space::Shared, 1, 4, Some(dk)) = (space, n, size, d[0]) {
            if dk.bank == Bank::R32 && exec != 0 && shared_words_ok::<W>(ctx.shared.len(), &base, exec) {
                // Every active lane reads an aligned word inside the block's shared memory; an
                // inactive lane reads the first active lane's and keeps its register. Straight
                // into the column: a lane array copied in after scalar writes stalls the copy.
                let first = base[exec.trailing_zeros() as usize];
                let sh = ctx.shared.as_ptr();
                let col: &mut [u32; W] = (&mut self.r32[dk.slot as usize * W..][..W]).try_into().unwrap();
                for l in 0..W {
                    let on = exec >> l & 1 != 0;
                    let a = if on { base[l] } else { first } as usize;
                    // SAFETY: `shared_words_ok` checked `a + 4 <= shared.len()` for every active lane's address.
                    let v = u32::from_le(unsafe { (sh.add(a) as *const u32).read_unaligned() });
                    col[l] = if on { v } else { col[l] };
                }
                return Ok(());
            }
        }
        // PTX vectors have 1, 2 or 4 elements; anything else takes the checked path.
        if matches!(n, 1 | 2 | 4) {
            if let Some(span) = self.one_allocation(ctx, space, &base, exec, size * n as u32, vector_align(size, n)) {
                match n {
                    1 => self.global_load::<1>(span, &base, size, signed, d, exec),
                    2 => self.global_load::<2>(span, &base, size, signed, d, exec),
                    _ => self.global_load::<4>(span, &base, size, signed, d, exec),
                }
                return Ok(());
            }
        }
        self.lane_by_lane(pc, space, MemAccessKind::Load, &base, size, n, exec, |w, l, k, a| {
            let raw = w.load(ctx, space, a, size, l)?;
            if let Some(dk) = d[k] {
                w.put_lane(dk, l, if signed { sext(raw, size * 8) } else { raw })
            }
            Ok(())
        })
    }

    #[inline(always)]
    pub(super) fn st<O: Observer>(
        &mut self,
        ctx: &mut WarpCtx<'_>,
        obs: &mut O,
        pc: u32,
        space: Space,
        size: u8,
        n: u8,
        s: &[RegRef; 4],
        addr: &Addr,
        exec: u64,
    ) -> Result<(), WarpFault> {
        let size = size as u32;
        let base = self.observed_addresses(obs, pc, space, MemAccessKind::Store, size * n as u32, addr, exec);
        if let (Space::Shared, 1, 4) = (space, n, size) {
            if s[0].bank == Bank::R32 && shared_words_ok::<W>(ctx.shared.len(), &base, exec) {
                // Aligned words inside shared memory; lanes in order, so the highest lane's value stays.
                let col = col32::<W>(&self.r32, s[0].slot);
                let sh = ctx.shared.as_mut_ptr();
                let mut m = exec;
                while m != 0 {
                    let l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    // SAFETY: `shared_words_ok` checked `base[l] + 4 <= shared.len()` for every active lane.
                    unsafe { (sh.add(base[l] as usize) as *mut u32).write_unaligned(col[l].to_le()) };
                }
                return Ok(());
            }
        }
        // PTX vectors have 1, 2 or 4 elements; anything else takes the checked path.
        if matches!(n, 1 | 2 | 4) {
            if let Some(span) = self.one_allocation(ctx, space, &base, exec, size * n as u32, vector_align(size, n)) {
                match n {
                    1 => self.global_store::<1>(span, &base, size, s, exec),
                    2 => self.global_store::<2>(span, &base, size, s, exec),
                    _ => self.global_store::<4>(span, &base, size, s, exec),
                }
                return Ok(());
            }
        }
        self.lane_by_lane(pc, space, MemAccessKind::Store, &base, size, n, exec, |w, l, k, a| {
            let v = w.lane_value(s[k], l);
            w.store(ctx, space, a, size, v, l)
        })
    }

    /// A global load of `N`-element vectors whose active lanes `one_allocation` placed in `span`.
    #[inline(always)]
    fn global_load<const N: usize>(
        &mut self,
        WarpSpan { alloc, page }: WarpSpan<'_>,
        base: &[u64; W],
        size: u32,
        signed: bool,
        d: &[Option<RegRef>; 4],
        exec: u64,
    ) {
        // Elements that fill 32-bit registers as they are (no sign to extend) load as 32-bit
        // words; a full warp's go straight into the register columns when those are distinct.
        let words32 = size == 4 || (size < 4 && !signed);
        if words32 && d[..N].iter().all(|r| r.is_some_and(|r| r.bank == Bank::R32)) {
            let slots: [usize; N] = std::array::from_fn(|k| d[k].map_or(0, |r| r.slot as usize));
            if exec == full_mask::<W>() {
                if let Ok(cols) = self.r32.as_chunks_mut::<W>().0.get_disjoint_mut(slots) {
                    // SAFETY: `one_allocation` checked that every active lane's `N * size` bytes lie in
                    // `alloc` (in `page` when `Some`) and that its address is a multiple of the vector's size.
                    return unsafe { alloc.load_vectors::<W, N, u32>(base, exec, size, page, cols) };
                }
            }
            let mut v = [[0u32; W]; N];
            // SAFETY: as above.
            unsafe { alloc.load_vectors::<W, N, u32>(base, exec, size, page, v.each_mut()) };
            for (k, v) in v.iter().enumerate() {
                write32::<W>(&mut self.r32, slots[k] as u32, v, exec);
            }
            return;
        }
        let mut v = [[0u64; W]; N];
        // SAFETY: as above.
        unsafe { alloc.load_vectors::<W, N, u64>(base, exec, size, page, v.each_mut()) };
        for (k, v) in v.iter_mut().enumerate() {
            let Some(dk) = d[k] else { continue };
            if signed {
                for x in v.iter_mut() {
                    *x = sext(*x, size * 8);
                }
            }
            self.scatter(dk, v, exec);
        }
    }

    /// A global store of `N`-element vectors whose active lanes `one_allocation` placed in `span`.
    #[inline(always)]
    fn global_store<const N: usize>(&self, WarpSpan { alloc, page }: WarpSpan<'_>, base: &[u64; W], size: u32, s: &[RegRef; 4], exec: u64) {
        // The register columns themselves when the elements share a bank (no copy, no widening).
        if s[..N].iter().all(|r| r.bank == Bank::R32) {
            // SAFETY: as for loads, `one_allocation` checked bounds and alignment for every active lane.
            unsafe { alloc.store_vectors::<W, N, u32>(base, exec, size, page, std::array::from_fn(|k| col32::<W>(&self.r32, s[k].slot))) }
        } else if s[..N].iter().all(|r| r.bank == Bank::R64) {
            // SAFETY: as above.
            unsafe { alloc.store_vectors::<W, N, u64>(base, exec, size, page, std::array::from_fn(|k| col64::<W>(&self.r64, s[k].slot))) }
        } else {
            let v: [[u64; W]; N] = std::array::from_fn(|k| self.gather(s[k]));
            // SAFETY: as above.
            unsafe { alloc.store_vectors::<W, N, u64>(base, exec, size, page, std::array::from_fn(|k| &v[k])) }
        }
    }

    /// The checked path of a load or store: lane by lane, lowest first, the
    /// lane's vector alignment checked, then `element(warp, lane, k, address)`
    /// for each of its `n` elements; the first faulting lane ends the access.
    #[inline(always)]
    fn lane_by_lane(
        &mut self,
        pc: u32,
        space: Space,
        access: MemAccessKind,
        base: &[u64; W],
        size: u32,
        n: u8,
        exec: u64,
        mut element: impl FnMut(&mut Self, usize, usize, u64) -> Result<(), FaultKind>,
    ) -> Result<(), WarpFault> {
        for l in lanes(exec) {
            vector_aligned(space, base[l], size, n, access).map_err(|kind| WarpFault::lane(pc, l, kind))?;
            for k in 0..n as usize {
                let a = base[l].wrapping_add(k as u64 * size as u64);
                element(self, l, k, a).map_err(|kind| WarpFault::lane(pc, l, kind))?;
            }
        }
        Ok(())
    }

    #[inline(always)]
    pub(super) fn atom<O: Observer>(
        &mut self,
        ctx: &mut WarpCtx<'_>,
        obs: &mut O,
        pc: u32,
        space: Space,
        op: AtomOp,
        ty: ScalarType,
        d: Option<RegRef>,
        addr: &Addr,
        b: RegRef,
        c: RegRef,
        exec: u64,
    ) -> Result<(), WarpFault> {
        let size = ty.bytes();
        let base = self.observed_addresses(obs, pc, space, MemAccessKind::Atomic, size, addr, exec);
        for l in lanes(exec) {
            let bv = self.lane_value(b, l);
            let cv = self.lane_value(c, l);
            let old = self.atomic(ctx, space, base[l], op, ty, bv, cv, l).map_err(|kind| WarpFault::lane(pc, l, kind))?;
            if let Some(dr) = d {
                let v = if ty.is_signed() { sext(old, size * 8) } else { old };
                self.put_lane(dr, l, v)
            }
        }
        Ok(())
    }

    /// For a global access: where every active lane's bytes lie when all are
    /// aligned and in one allocation (allocations lie above the shared and local windows).
    #[inline(always)]
    fn one_allocation<'m>(
        &self,
        ctx: &WarpCtx<'m>,
        space: Space,
        base: &[u64; W],
        exec: u64,
        bytes: u32,
        align: u32,
    ) -> Option<WarpSpan<'m>> {
        if !matches!(space, Space::Global | Space::Generic) {
            return None;
        }
        ctx.gmem.warp_span(base, exec, bytes, align)
    }

    fn local_slot(&mut self, off: u64, size: u32, lane: usize, local_bytes: u32, access: MemAccessKind) -> Result<usize, FaultKind> {
        if !off.is_multiple_of(size as u64) {
            return Err(FaultKind::Misaligned { space: FaultSpace::Local, access, size, addr: off });
        }
        if off + size as u64 > local_bytes as u64 {
            return Err(FaultKind::OutOfBounds { space: FaultSpace::Local, access, size, addr: off });
        }
        if self.local.is_empty() {
            self.local.resize(local_bytes as usize * W, 0);
        }
        Ok(lane * local_bytes as usize + off as usize)
    }

    /// Records a served access past an allocation's end, at the instruction
    /// being executed (the stack top was advanced past it).
    #[cold]
    fn note_past_end(&mut self, lane: usize, kind: FaultKind) {
        let pc = self.stack.last().map_or(0, |t| t.pc.saturating_sub(1));
        self.past_end.push(WarpFault { pc, lane: Some(lane as u32), kind });
    }

    /// One lane's load of `size` bytes, checked.
    pub(super) fn load(&mut self, ctx: &WarpCtx<'_>, space: Space, addr: u64, size: u32, lane: usize) -> Result<u64, FaultKind> {
        let (space, addr) = resolve_generic(space, addr);
        let access = MemAccessKind::Load;
        match space {
            Space::Global | Space::Const | Space::Generic => {
                let fs = if space == Space::Const { FaultSpace::Const } else { FaultSpace::Global };
                ctx.gmem.load(addr, size).or_else(|f| {
                    let kind = mem_fault(f, fs, access);
                    let served = ctx.serve_past_end && matches!(f, MemFault::OutOfBounds { .. });
                    match ctx.gmem.load_past_end(addr, size).filter(|_| served) {
                        Some(v) => {
                            self.note_past_end(lane, kind);
                            Ok(v)
                        }
                        None => Err(kind),
                    }
                })
            }
            Space::Shared => {
                let i = shared_index(ctx.shared.len(), addr, size, access)?;
                Ok(read_le(&ctx.shared[i..i + size as usize]))
            }
            Space::Local => {
                let i = self.local_slot(addr, size, lane, ctx.local_bytes, access)?;
                Ok(read_le(&self.local[i..i + size as usize]))
            }
            Space::KernelParam => {
                if addr + size as u64 > ctx.params.len() as u64 {
                    return Err(FaultKind::OutOfBounds { space: FaultSpace::Param, access, size, addr });
                }
                Ok(read_le(&ctx.params[addr as usize..addr as usize + size as usize]))
            }
        }
    }

    /// One lane's store of the low `size` bytes of `v`, checked.
    pub(super) fn store(
        &mut self,
        ctx: &mut WarpCtx<'_>,
        space: Space,
        addr: u64,
        size: u32,
        v: u64,
        lane: usize,
    ) -> Result<(), FaultKind> {
        let (space, addr) = resolve_generic(space, addr);
        let access = MemAccessKind::Store;
        match space {
            Space::Global | Space::Generic => ctx.gmem.store(addr, size, v).or_else(|f| {
                let kind = mem_fault(f, FaultSpace::Global, access);
                if ctx.serve_past_end && matches!(f, MemFault::OutOfBounds { .. }) && ctx.gmem.store_past_end(addr, size, v) {
                    self.note_past_end(lane, kind);
                    Ok(())
                } else {
                    Err(kind)
                }
            }),
            Space::Const | Space::KernelParam => Err(FaultKind::Unsupported("store to a read-only state space".into())),
            Space::Shared => {
                let i = shared_index(ctx.shared.len(), addr, size, access)?;
                write_le(&mut ctx.shared[i..i + size as usize], v);
                Ok(())
            }
            Space::Local => {
                let i = self.local_slot(addr, size, lane, ctx.local_bytes, access)?;
                write_le(&mut self.local[i..i + size as usize], v);
                Ok(())
            }
        }
    }

    fn atomic(
        &mut self,
        ctx: &mut WarpCtx<'_>,
        space: Space,
        addr: u64,
        op: AtomOp,
        ty: ScalarType,
        b: u64,
        c: u64,
        lane: usize,
    ) -> Result<u64, FaultKind> {
        let (space, addr) = resolve_generic(space, addr);
        let size = ty.bytes();
        let access = MemAccessKind::Atomic;
        let f = |old: u64| atom_apply(op, ty, old, b, c);
        match space {
            Space::Global | Space::Generic => {
                let r = match size {
                    2 => ctx.gmem.rmw16(addr, |o| f(o as u64) as u16).map(|v| v as u64),
                    4 => ctx.gmem.rmw32(addr, |o| f(o as u64) as u32).map(|v| v as u64),
                    _ => ctx.gmem.rmw64(addr, f),
                };
                r.map_err(|e| mem_fault(e, FaultSpace::Global, access))
            }
            Space::Shared => {
                let i = shared_index(ctx.shared.len(), addr, size, access)?;
                let old = read_le(&ctx.shared[i..i + size as usize]);
                let new = f(old);
                write_le(&mut ctx.shared[i..i + size as usize], new);
                Ok(old)
            }
            Space::Local => {
                let i = self.local_slot(addr, size, lane, ctx.local_bytes, access)?;
                let old = read_le(&self.local[i..i + size as usize]);
                let new = f(old);
                write_le(&mut self.local[i..i + size as usize], new);
                Ok(old)
            }
            Space::Const | Space::KernelParam => Err(FaultKind::Unsupported("atomic on a read-only state space".into())),
        }
    }
}

/// The alignment a vector access of `n` elements of `size` bytes needs: its
/// whole size (a `v4.f32` 16 bytes), as on the GPU.
#[inline(always)]
fn vector_align(size: u32, n: u8) -> u32 {
    (size * n as u32).next_power_of_two()
}

/// A vector access (`n` > 1) faults unless its address is a multiple of the
/// whole vector's size; element alignment is checked per element after this.
#[inline(always)]
fn vector_aligned(space: Space, addr: u64, size: u32, n: u8, access: MemAccessKind) -> Result<(), FaultKind> {
    if n <= 1 {
        return Ok(());
    }
    let align = vector_align(size, n);
    let (sp, a) = resolve_generic(space, addr);
    let space = match sp {
        Space::Global | Space::Generic => FaultSpace::Global,
        Space::Const => FaultSpace::Const,
        Space::Shared => FaultSpace::Shared,
        Space::Local => FaultSpace::Local,
        Space::KernelParam => return Ok(()),
    };
    if a.is_multiple_of(align as u64) {
        Ok(())
    } else {
        Err(FaultKind::Misaligned { space, access, size: align, addr: a })
    }
}

/// Whether every active lane's 4-byte word at `base[l]` is aligned and inside
/// `len` bytes of shared memory (then no lane can fault).
#[inline(always)]
fn shared_words_ok<const W: usize>(len: usize, base: &[u64; W], exec: u64) -> bool {
    let mut bad = 0u64;
    for l in 0..W {
        let a = base[l];
        let out = (a & 3 != 0) | (a >= (len as u64).saturating_sub(3));
        bad |= (out as u64) & (exec >> l);
    }
    bad == 0
}

#[inline]
fn shared_index(len: usize, addr: u64, size: u32, access: MemAccessKind) -> Result<usize, FaultKind> {
    if !addr.is_multiple_of(size as u64) {
        return Err(FaultKind::Misaligned { space: FaultSpace::Shared, access, size, addr });
    }
    if addr + size as u64 > len as u64 {
        return Err(FaultKind::OutOfBounds { space: FaultSpace::Shared, access, size, addr });
    }
    Ok(addr as usize)
}

/// A little-endian value of 1, 2, 4 or 8 bytes (fixed-size reads: no `memcpy` call per lane).
#[inline(always)]
fn read_le(b: &[u8]) -> u64 {
    match b.len() {
        1 => b[0] as u64,
        2 => u16::from_le_bytes([b[0], b[1]]) as u64,
        4 => u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as u64,
        8 => u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
        n => {
            let mut x = [0u8; 8];
            x[..n].copy_from_slice(b);
            u64::from_le_bytes(x)
        }
    }
}

/// Writes the low `dst.len()` bytes of `v`, little-endian (fixed-size writes for 1, 2, 4 and 8).
#[inline(always)]
fn write_le(dst: &mut [u8], v: u64) {
    match dst.len() {
        1 => dst[0] = v as u8,
        2 => dst.copy_from_slice(&(v as u16).to_le_bytes()),
        4 => dst.copy_from_slice(&(v as u32).to_le_bytes()),
        8 => dst.copy_from_slice(&v.to_le_bytes()),
        n => dst.copy_from_slice(&v.to_le_bytes()[..n]),
    }
}

fn mem_fault(f: MemFault, space: FaultSpace, access: MemAccessKind) -> FaultKind {
    match f {
        MemFault::OutOfBounds { addr, size } => FaultKind::OutOfBounds { space, access, size, addr },
        MemFault::Misaligned { addr, size } => FaultKind::Misaligned { space, access, size, addr },
    }
}

/// The new value an atomic stores, given the old one.
pub fn atom_apply(op: AtomOp, ty: ScalarType, old: u64, b: u64, c: u64) -> u64 {
    let bits = ty.bits();
    let signed = ty.is_signed();
    let float = ty.is_float();
    let mask = zext(u64::MAX, bits);
    let v = match op {
        AtomOp::Add if float => match ty {
            ScalarType::F32 => (f32::from_bits(old as u32) + f32::from_bits(b as u32)).to_bits() as u64,
            ScalarType::F64 => (f64::from_bits(old) + f64::from_bits(b)).to_bits(),
            _ => num::float::eval_float(num::float::FloatOp::Add, ty, num::FMode::RN, [old, b, 0]),
        },
        AtomOp::Add => old.wrapping_add(b),
        AtomOp::Min | AtomOp::Max if float => {
            let fo = if op == AtomOp::Min { num::float::FloatOp::Min } else { num::float::FloatOp::Max };
            num::float::eval_float(fo, ty, num::FMode::RN, [old, b, 0])
        }
        AtomOp::Min | AtomOp::Max => {
            let (x, y) =
                if signed { (sext(old, bits) as i64, sext(b, bits) as i64) } else { (zext(old, bits) as i64, zext(b, bits) as i64) };
            let less = if signed { x < y } else { (x as u64) < (y as u64) };
            let pick_old = if op == AtomOp::Min { less } else { !less };
            if pick_old {
                old
            } else {
                b
            }
        }
        AtomOp::Inc => {
            let (o, bb) = (zext(old, bits), zext(b, bits));
            if o >= bb {
                0
            } else {
                o + 1
            }
        }
        AtomOp::Dec => {
            let (o, bb) = (zext(old, bits), zext(b, bits));
            if o == 0 || o > bb {
                bb
            } else {
                o - 1
            }
        }
        AtomOp::And => old & b,
        AtomOp::Or => old | b,
        AtomOp::Xor => old ^ b,
        AtomOp::Exch => b,
        AtomOp::Cas => {
            if zext(old, bits) == zext(b, bits) {
                c
            } else {
                old
            }
        }
    };
    v & mask
}

#[cfg(test)]
mod tests {
    use super::super::testkit::*;
    use super::*;

    const REGS: &str = ".reg .pred %p<4>; .reg .b32 %r<8>; .reg .b64 %rd<8>;\n";

    /// `ld.param` broadcasts one read to the lanes its guard lets through, in
    /// both register banks; one past the parameters' end faults as a param access.
    #[test]
    fn param_loads_broadcast_under_a_guard() {
        let guarded = "    mov.u32 %r2, 5;\n    mov.u64 %rd5, 7;\n    and.b32 %r3, %r1, 1;\n    setp.eq.u32 %p1, %r3, 1;\n\
                       @%p1 ld.param.u32 %r2, [p0];\n    @!%p1 ld.param.u64 %rd5, [p0];\n\
                       cvt.u32.u64 %r4, %rd5;\n    add.u32 %r2, %r2, %r4;\n";
        let r = run_src(&per_thread("", guarded, "%r2"), 40, &[160], &[]);
        r.result.as_ref().unwrap();
        let base = r.bufs[0] as u32;
        for (t, &v) in r.u32s(0, 40).iter().enumerate() {
            let want = if t % 2 == 1 { base.wrapping_add(7) } else { 5u32.wrapping_add(base) };
            assert_eq!(v, want, "thread {t}");
        }
        let past = run_src(&per_thread("", "    ld.param.u32 %r2, [p0+8];\n", "%r2"), 32, &[128], &[]);
        let msg = past.fault().to_string();
        assert!(msg.contains("param"), "{msg}");
    }

    #[test]
    fn global_loads_and_stores_fast_and_checked() {
        // out[t] = in[t] * 2, then out[32 + t] = in[t ^ 1] via per-lane (unsorted) addresses.
        let body = format!(
            "{REGS}ld.param.u64 %rd1, [p0]; ld.param.u64 %rd2, [p1];
            mov.u32 %r1, %tid.x; mul.wide.u32 %rd3, %r1, 4;
            add.s64 %rd4, %rd1, %rd3; ld.global.u32 %r2, [%rd4]; shl.b32 %r3, %r2, 1;
            add.s64 %rd5, %rd2, %rd3; st.global.u32 [%rd5], %r3;
            xor.b32 %r4, %r1, 1; mul.wide.u32 %rd6, %r4, 4; add.s64 %rd6, %rd1, %rd6;
            ld.global.u32 %r5, [%rd6]; st.global.u32 [%rd5+128], %r5; ret;"
        );
        let init: Vec<u32> = (0..32).map(|i| i * 10).collect();
        let r = run(&body, 32, &[128, 256], &init);
        r.result.as_ref().unwrap();
        let out = r.u32s(1, 64);
        assert_eq!(out[..4], [0, 20, 40, 60]);
        assert_eq!(out[32..36], [10, 0, 30, 20]);
    }

    #[test]
    fn misaligned_and_out_of_bounds_faults_name_space_and_access() {
        let body = format!("{REGS}ld.param.u64 %rd1, [p0]; ld.global.u32 %r1, [%rd1+2]; ret;");
        let r = run(&body, 1, &[64], &[]);
        let f = r.fault();
        assert_eq!(f.kind, FaultKind::Misaligned { space: FaultSpace::Global, access: MemAccessKind::Load, size: 4, addr: r.bufs[0] + 2 });
        assert_eq!(f.lane, Some(0));
        let body = format!(
            "{REGS}.shared .align 4 .b8 s[16];
            mov.u32 %r1, %tid.x; shl.b32 %r2, %r1, 2; mov.u32 %r3, s; add.u32 %r3, %r3, %r2;
            st.shared.u32 [%r3], %r1; ret;"
        );
        let r = run(&body, 8, &[], &[]);
        let f = r.fault();
        assert!(matches!(f.kind, FaultKind::OutOfBounds { space: FaultSpace::Shared, access: MemAccessKind::Store, size: 4, .. }), "{f}");
        assert_eq!(f.lane, Some(4), "the first lane past the end");
        assert!(f.to_string().starts_with("out-of-bounds shared store of 4 bytes at address 0x10"), "{f}");
    }

    #[test]
    fn vector_accesses_need_the_whole_vectors_alignment() {
        // `reinterpret_cast<const float4*>(in + 1)[i]`: each f32 is aligned, the float4 is not.
        let body = format!("{REGS}.reg .f32 %f<4>; ld.param.u64 %rd1, [p0]; ld.global.v4.f32 {{%f0, %f1, %f2, %f3}}, [%rd1+4]; ret;");
        let r = run(&body, 32, &[1024], &[]);
        let f = r.fault();
        assert_eq!(f.kind, FaultKind::Misaligned { space: FaultSpace::Global, access: MemAccessKind::Load, size: 16, addr: r.bufs[0] + 4 });
        let body = format!("{REGS}ld.param.u64 %rd1, [p0]; st.global.v4.u32 [%rd1+4], {{%r1, %r1, %r1, %r1}}; ret;");
        let f = run(&body, 1, &[1024], &[]).fault().kind.clone();
        assert!(matches!(f, FaultKind::Misaligned { access: MemAccessKind::Store, size: 16, .. }), "{f}");
        let body = format!("{REGS}.shared .align 16 .b8 s[64]; mov.u32 %r3, s; st.shared.v2.u32 [%r3+4], {{%r1, %r1}}; ret;");
        let f = run(&body, 1, &[], &[]).fault().kind.clone();
        assert!(matches!(f, FaultKind::Misaligned { space: FaultSpace::Shared, size: 8, .. }), "{f}");
        let ok = format!("{REGS}.reg .f32 %f<4>; ld.param.u64 %rd1, [p0]; ld.global.v4.f32 {{%f0, %f1, %f2, %f3}}, [%rd1+16]; ret;");
        run(&ok, 32, &[1024], &[]).result.as_ref().unwrap();
    }

    #[test]
    fn shared_atomics_and_local_memory() {
        let body = format!(
            "{REGS}.shared .align 4 .b32 c; .local .align 4 .b32 x[2];
            ld.param.u64 %rd1, [p0]; mov.u32 %r1, %tid.x;
            atom.shared.add.u32 %r2, [c], 1;
            st.local.u32 [x+4], %r1; ld.local.u32 %r3, [x+4];
            bar.sync 0;
            ld.shared.u32 %r4, [c]; add.u32 %r4, %r4, %r3;
            mul.wide.u32 %rd2, %r1, 4; add.s64 %rd2, %rd1, %rd2; st.global.u32 [%rd2], %r4; ret;"
        );
        let r = run(&body, 40, &[160], &[]);
        r.result.as_ref().unwrap();
        let out = r.u32s(0, 40);
        assert_eq!((out[0], out[39]), (40, 79), "40 increments, then each thread's own local value");
    }

    #[test]
    fn atomic_update_rules() {
        use ScalarType as T;
        assert_eq!(atom_apply(AtomOp::Inc, T::U32, 5, 5, 0), 0, "inc wraps at the bound");
        assert_eq!(atom_apply(AtomOp::Inc, T::U32, 4, 5, 0), 5);
        assert_eq!(atom_apply(AtomOp::Dec, T::U32, 0, 5, 0), 5, "dec of 0 reloads the bound");
        assert_eq!(atom_apply(AtomOp::Cas, T::B32, 7, 7, 9), 9);
        assert_eq!(atom_apply(AtomOp::Cas, T::B32, 7, 8, 9), 7);
        assert_eq!(atom_apply(AtomOp::Min, T::S32, -1i32 as u32 as u64, 3, 0), 0xFFFF_FFFF);
        assert_eq!(atom_apply(AtomOp::Max, T::U32, -1i32 as u32 as u64, 3, 0), 0xFFFF_FFFF);
        assert_eq!(atom_apply(AtomOp::Add, T::F32, 1f32.to_bits() as u64, 2f32.to_bits() as u64, 0), 3f32.to_bits() as u64);
    }
}
