//! Memory: device allocations, host-pinned, managed and registered memory,
//! copies and sets (the `Async` forms run at once: streams run in issue
//! order), pointer attributes. Copies take unified addresses: device memory
//! is the simulator's, everything else (host-backed memory included) the
//! program's own.

use crate::errors::*;
use crate::ffi::*;
use crate::state::{with, Driver, Mapped, MappedKind, PRIMARY_CTX};
use std::ffi::{c_int, c_uint, c_void};
pub use warpsim_cuda_abi::{Memcpy2D, Memcpy3D};
use warpsim_host::DevicePtr;

pub type CUdeviceptr = u64;

const CU_MEMORYTYPE_HOST: c_uint = 1;
const CU_MEMORYTYPE_DEVICE: c_uint = 2;

impl Driver {
    fn in_reserved(&self, p: u64) -> bool {
        self.reserved.is_some_and(|r| p >= r.base && p < r.base + r.len)
    }

    /// The host address of unified address `p` for `n` bytes, when host memory holds it.
    fn host_addr(&self, p: u64, n: u64) -> Result<Option<u64>, CUresult> {
        if let Some((base, m)) = self.mapped_at(p) {
            if p + n > base + m.len {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            return Ok(Some(m.host + (p - base)));
        }
        if self.is_device(p, n) {
            return Ok(None);
        }
        if self.in_reserved(p) || p < 4096 {
            // Device addresses no allocation holds (or a null pointer): not host memory either.
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        Ok(Some(p))
    }

    /// Reads `n` bytes at unified address `p`.
    pub fn read_any(&self, p: u64, n: u64) -> Result<Vec<u8>, CUresult> {
        match self.host_addr(p, n)? {
            // SAFETY: a host address the program passed for `n` bytes.
            Some(h) => Ok(unsafe { bytes(h as *const c_void, n as usize) }?.to_vec()),
            None => self.ctx.read_vec(DevicePtr(p), n, "device memory").map_err(|_| CUDA_ERROR_INVALID_VALUE),
        }
    }

    /// Writes `data` at unified address `p`.
    pub fn write_any(&self, p: u64, data: &[u8]) -> Result<(), CUresult> {
        match self.host_addr(p, data.len() as u64)? {
            Some(h) => {
                // SAFETY: a host address the program passed for `data.len()` bytes.
                unsafe { bytes_mut(h as *mut c_void, data.len()) }?.copy_from_slice(data);
                Ok(())
            }
            None => self.ctx.write(DevicePtr(p), data).map_err(|_| CUDA_ERROR_INVALID_VALUE),
        }
    }

    pub fn copy(&mut self, dst: u64, src: u64, n: u64) -> Result<(), CUresult> {
        self.healthy()?;
        if n == 0 {
            return Ok(());
        }
        // Both sides are checked before any byte moves: a range too short is an error, not a fault.
        self.host_addr(dst, n)?;
        self.host_addr(src, n)?;
        let data = self.read_any(src, n)?;
        self.write_any(dst, &data)
    }

    /// Whether `p` can be the device side of a copy with an explicit direction (`cuMemcpyDtoH`,
    /// `HtoD`, `DtoD`): device memory, or host memory mapped into the device's address space.
    /// Any other pointer is refused, as the driver refuses it, instead of being read as host memory.
    fn device_side(&self, p: u64) -> Result<(), CUresult> {
        if self.mapped_at(p).is_some() || self.in_reserved(p) || self.ctx.memory().find(p).is_some() {
            Ok(())
        } else {
            Err(CUDA_ERROR_INVALID_VALUE)
        }
    }

    fn set(&mut self, dst: u64, pattern: &[u8], count: u64) -> Result<(), CUresult> {
        self.healthy()?;
        let data: Vec<u8> = pattern.iter().copied().cycle().take(pattern.len() * count as usize).collect();
        self.write_any(dst, &data)
    }
}

/// `CUmemorytype`: arrays are out of scope.
const CU_MEMORYTYPE_ARRAY: c_uint = 3;
const CU_MEMORYTYPE_UNIFIED: c_uint = 4;

/// The unified address of one side of a copy: the host or device pointer its memory type names.
fn side(call: &str, kind: c_uint, host: u64, device: u64, array: *mut c_void) -> Result<u64, CUresult> {
    match kind {
        CU_MEMORYTYPE_HOST => Ok(host),
        CU_MEMORYTYPE_DEVICE | CU_MEMORYTYPE_UNIFIED => Ok(device),
        CU_MEMORYTYPE_ARRAY => {
            let _ = array;
            eprintln!("warpsim: {call}: CUDA arrays are not supported (warpsim runs linear device memory only)");
            Err(CUDA_ERROR_NOT_SUPPORTED)
        }
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    }
}

/// The byte offsets, from each side's start, of every row a 3D copy moves: (source, destination).
fn rows(c: &Memcpy3D) -> Result<Vec<(u64, u64)>, CUresult> {
    let w = c.width_in_bytes;
    let multi = c.depth > 1;
    if (c.height > 1 || multi) && (c.src_pitch < w || c.dst_pitch < w) {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    if multi && (c.src_height < c.height || c.dst_height < c.height) {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let at = |x: usize, y: usize, z: usize, pitch: usize, height: usize| -> Option<u64> {
        let row = z.checked_mul(height)?.checked_add(y)?;
        (row as u64).checked_mul(pitch as u64)?.checked_add(x as u64)
    };
    let mut out = Vec::with_capacity(c.height.saturating_mul(c.depth).min(1 << 20));
    for z in 0..c.depth {
        for y in 0..c.height {
            let s = at(c.src_x_in_bytes, c.src_y + y, c.src_z + z, c.src_pitch, c.src_height).ok_or(CUDA_ERROR_INVALID_VALUE)?;
            let d = at(c.dst_x_in_bytes, c.dst_y + y, c.dst_z + z, c.dst_pitch, c.dst_height).ok_or(CUDA_ERROR_INVALID_VALUE)?;
            out.push((s, d));
        }
    }
    Ok(out)
}

impl Driver {
    /// A 2D or 3D copy between pitched linear memories (host, device or unified).
    fn copy_3d(&mut self, call: &str, c: &Memcpy3D) -> Result<(), CUresult> {
        self.healthy()?;
        let src = side(call, c.src_memory_type, c.src_host as u64, c.src_device, c.src_array)?;
        let dst = side(call, c.dst_memory_type, c.dst_host as u64, c.dst_device, c.dst_array)?;
        if c.width_in_bytes == 0 || c.height == 0 || c.depth == 0 {
            return Ok(());
        }
        let w = c.width_in_bytes as u64;
        for (s, d) in rows(c)? {
            let data = self.read_any(src.wrapping_add(s), w)?;
            self.write_any(dst.wrapping_add(d), &data)?;
        }
        Ok(())
    }

    /// Sets `height` rows of `width` elements (`pattern` each) `pitch` bytes apart.
    fn set_2d(&mut self, dst: u64, pitch: usize, pattern: &[u8], width: usize, height: usize) -> Result<(), CUresult> {
        self.healthy()?;
        let row = width.checked_mul(pattern.len()).ok_or(CUDA_ERROR_INVALID_VALUE)?;
        if height > 1 && pitch < row {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        if row == pitch {
            return self.set(dst, pattern, (width * height) as u64);
        }
        for y in 0..height as u64 {
            self.set(dst + y * pitch as u64, pattern, width as u64)?;
        }
        Ok(())
    }
}

/// # Safety
/// `c` is null or a `CUDA_MEMCPY2D`.
unsafe fn copy_2d(call: &str, c: *const Memcpy2D) -> Result<(), CUresult> {
    if c.is_null() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    // SAFETY: the caller's parameter struct.
    let c = Memcpy3D::from(unsafe { &c.read_unaligned() });
    with(|d| d.copy_3d(call, &c))
}

/// # Safety
/// `c` is null or a `CUDA_MEMCPY3D`.
unsafe fn copy_3d(call: &str, c: *const Memcpy3D) -> Result<(), CUresult> {
    if c.is_null() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    // SAFETY: the caller's parameter struct.
    let c = unsafe { c.read_unaligned() };
    with(|d| d.copy_3d(call, &c))
}

fn set_2d(dst: u64, pitch: usize, pattern: &[u8], width: usize, height: usize) -> Result<(), CUresult> {
    with(|d| d.set_2d(dst, pitch, pattern, width, height))
}

fn copy(dst: u64, src: u64, n: usize) -> Result<(), CUresult> {
    with(|d| d.copy(dst, src, n as u64))
}

/// A copy with an explicit direction: each side `true` in `device` must be a device pointer.
fn copy_directed(dst: u64, src: u64, n: usize, device: (bool, bool)) -> Result<(), CUresult> {
    with(|d| {
        if n > 0 {
            if device.0 {
                d.device_side(dst)?;
            }
            if device.1 {
                d.device_side(src)?;
            }
        }
        d.copy(dst, src, n as u64)
    })
}

fn set(dst: u64, pattern: &[u8], count: usize) -> Result<(), CUresult> {
    with(|d| d.set(dst, pattern, count as u64))
}

api! {
    fn cuMemAlloc_v2(dptr: *mut CUdeviceptr, bytesize: usize) {
        let p = with(|d| {
            d.healthy()?;
            d.alloc(bytesize as u64, "cuMemAlloc")
        })?;
        // SAFETY: out-pointer from the caller.
        unsafe { put(dptr, p) }
    }
    fn cuMemAllocAsync(dptr: *mut CUdeviceptr, bytesize: usize, _stream: Handle) {
        // SAFETY: as for cuMemAlloc.
        match unsafe { cuMemAlloc_v2(dptr, bytesize) } { 0 => Ok(()), e => Err(e) }
    }
    /// Rows 512 bytes apart or a multiple of that (`CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT` is finer;
    /// the driver pads pitched rows to 512 bytes).
    fn cuMemAllocPitch_v2(dptr: *mut CUdeviceptr, pitch: *mut usize, width: usize, height: usize, elem: c_uint) {
        if ![4, 8, 16].contains(&elem) || width == 0 || height == 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let row = width.div_ceil(512).checked_mul(512).ok_or(CUDA_ERROR_INVALID_VALUE)?;
        let bytes = row.checked_mul(height).ok_or(CUDA_ERROR_OUT_OF_MEMORY)?;
        let p = with(|d| {
            d.healthy()?;
            d.alloc(bytes as u64, "cuMemAllocPitch")
        })?;
        // SAFETY: out-pointers from the caller.
        unsafe {
            put(pitch, row)?;
            put(dptr, p)
        }
    }
    fn cuMemFree_v2(dptr: CUdeviceptr) {
        with(|d| {
            d.healthy()?;
            if dptr == 0 { return Ok(()); }
            d.free(dptr)
        })
    }
    fn cuMemFreeAsync(dptr: CUdeviceptr, _stream: Handle) {
        with(|d| {
            d.healthy()?;
            d.free(dptr)
        })
    }
    fn cuMemGetInfo_v2(free: *mut usize, total: *mut usize) {
        let (used, all) = with(|d| Ok((d.ctx.resident_bytes(), crate::state::total_mem(&d.preset))))?;
        // SAFETY: out-pointers from the caller.
        unsafe {
            put(free, all.saturating_sub(used) as usize)?;
            put(total, all as usize)
        }
    }
    fn cuMemGetAddressRange_v2(pbase: *mut CUdeviceptr, psize: *mut usize, dptr: CUdeviceptr) {
        let (b, s) = with(|d| d.allocation_of(dptr).ok_or(CUDA_ERROR_NOT_FOUND))?;
        // SAFETY: optional out-pointers from the caller.
        unsafe {
            put_opt(pbase, b);
            put_opt(psize, s as usize);
        }
        Ok(())
    }
    fn cuMemAllocHost_v2(pp: *mut *mut c_void, bytesize: usize) {
        let p = with(|d| d.alloc_mapped(bytesize as u64, MappedKind::Pinned))?;
        // SAFETY: out-pointer from the caller.
        unsafe { put(pp, p as *mut c_void) }
    }
    fn cuMemHostAlloc(pp: *mut *mut c_void, bytesize: usize, _flags: c_uint) {
        let p = with(|d| d.alloc_mapped(bytesize as u64, MappedKind::Pinned))?;
        // SAFETY: out-pointer from the caller.
        unsafe { put(pp, p as *mut c_void) }
    }
    fn cuMemFreeHost(p: *mut c_void) {
        with(|d| d.free(p as u64))
    }
    fn cuMemAllocManaged(dptr: *mut CUdeviceptr, bytesize: usize, _flags: c_uint) {
        let p = with(|d| {
            d.healthy()?;
            d.alloc_mapped(bytesize as u64, MappedKind::Managed)
        })?;
        // SAFETY: out-pointer from the caller.
        unsafe { put(dptr, p) }
    }
    fn cuMemHostGetDevicePointer_v2(pdptr: *mut CUdeviceptr, p: *mut c_void, _flags: c_uint) {
        let dev = with(|d| {
            let host = p as u64;
            if let Some((base, m)) = d.mapped_at(host).filter(|(_, m)| m.kind != MappedKind::Registered) {
                return Ok(base + (host - base).min(m.len));
            }
            let reg = d.mapped.iter().find(|(_, m)| m.kind == MappedKind::Registered && host >= m.host && host < m.host + m.len);
            reg.map(|(&dev, m)| dev + (host - m.host)).ok_or(CUDA_ERROR_INVALID_VALUE)
        })?;
        // SAFETY: out-pointer from the caller.
        unsafe { put(pdptr, dev) }
    }
    fn cuMemHostGetFlags(pflags: *mut c_uint, p: *mut c_void) {
        with(|d| d.mapped_at(p as u64).map(|_| ()).ok_or(CUDA_ERROR_INVALID_VALUE))?;
        // SAFETY: out-pointer from the caller.
        unsafe { put(pflags, 0x2) }
    }
    fn cuMemHostRegister_v2(p: *mut c_void, bytesize: usize, _flags: c_uint) {
        with(|d| {
            let host = p as u64;
            if d.mapped.values().any(|m| host < m.host + m.len && m.host < host + bytesize as u64) {
                return Err(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
            }
            let dev = d.alloc(bytesize as u64, "registered")?;
            d.mapped.insert(dev, Mapped { host, len: bytesize as u64, kind: MappedKind::Registered });
            Ok(())
        })
    }
    fn cuMemHostUnregister(p: *mut c_void) {
        with(|d| {
            let dev = d.mapped.iter().find(|(_, m)| m.kind == MappedKind::Registered && m.host == p as u64).map(|(&k, _)| k);
            let dev = dev.ok_or(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED)?;
            d.mapped.remove(&dev);
            d.ctx.free(DevicePtr(dev)).map_err(|_| CUDA_ERROR_INVALID_VALUE)
        })
    }
    fn cuMemcpy(dst: CUdeviceptr, src: CUdeviceptr, n: usize) { copy(dst, src, n) }
    fn cuMemcpyAsync(dst: CUdeviceptr, src: CUdeviceptr, n: usize, _stream: Handle) { copy(dst, src, n) }
    fn cuMemcpyHtoD_v2(dst: CUdeviceptr, src: *const c_void, n: usize) { copy_directed(dst, src as u64, n, (true, false)) }
    fn cuMemcpyHtoDAsync_v2(dst: CUdeviceptr, src: *const c_void, n: usize, _stream: Handle) { copy_directed(dst, src as u64, n, (true, false)) }
    fn cuMemcpyDtoH_v2(dst: *mut c_void, src: CUdeviceptr, n: usize) { copy_directed(dst as u64, src, n, (false, true)) }
    fn cuMemcpyDtoHAsync_v2(dst: *mut c_void, src: CUdeviceptr, n: usize, _stream: Handle) { copy_directed(dst as u64, src, n, (false, true)) }
    fn cuMemcpyDtoD_v2(dst: CUdeviceptr, src: CUdeviceptr, n: usize) { copy_directed(dst, src, n, (true, true)) }
    fn cuMemcpyDtoDAsync_v2(dst: CUdeviceptr, src: CUdeviceptr, n: usize, _stream: Handle) { copy_directed(dst, src, n, (true, true)) }
    fn cuMemsetD8_v2(dst: CUdeviceptr, v: u8, n: usize) { set(dst, &[v], n) }
    fn cuMemsetD8Async(dst: CUdeviceptr, v: u8, n: usize, _stream: Handle) { set(dst, &[v], n) }
    fn cuMemsetD16_v2(dst: CUdeviceptr, v: u16, n: usize) { set(dst, &v.to_le_bytes(), n) }
    fn cuMemsetD16Async(dst: CUdeviceptr, v: u16, n: usize, _stream: Handle) { set(dst, &v.to_le_bytes(), n) }
    fn cuMemsetD32_v2(dst: CUdeviceptr, v: c_uint, n: usize) { set(dst, &v.to_le_bytes(), n) }
    fn cuMemsetD32Async(dst: CUdeviceptr, v: c_uint, n: usize, _stream: Handle) { set(dst, &v.to_le_bytes(), n) }
    fn cuMemcpy2D_v2(c: *const Memcpy2D) {
        // SAFETY: the caller's parameter struct.
        unsafe { copy_2d("cuMemcpy2D", c) }
    }
    fn cuMemcpy2DUnaligned_v2(c: *const Memcpy2D) {
        // SAFETY: the caller's parameter struct.
        unsafe { copy_2d("cuMemcpy2DUnaligned", c) }
    }
    fn cuMemcpy2DAsync_v2(c: *const Memcpy2D, _stream: Handle) {
        // SAFETY: the caller's parameter struct.
        unsafe { copy_2d("cuMemcpy2DAsync", c) }
    }
    fn cuMemcpy3D_v2(c: *const Memcpy3D) {
        // SAFETY: the caller's parameter struct.
        unsafe { copy_3d("cuMemcpy3D", c) }
    }
    fn cuMemcpy3DAsync_v2(c: *const Memcpy3D, _stream: Handle) {
        // SAFETY: the caller's parameter struct.
        unsafe { copy_3d("cuMemcpy3DAsync", c) }
    }
    fn cuMemsetD2D8_v2(dst: CUdeviceptr, pitch: usize, v: u8, width: usize, height: usize) { set_2d(dst, pitch, &[v], width, height) }
    fn cuMemsetD2D8Async(dst: CUdeviceptr, pitch: usize, v: u8, width: usize, height: usize, _stream: Handle) {
        set_2d(dst, pitch, &[v], width, height)
    }
    fn cuMemsetD2D16_v2(dst: CUdeviceptr, pitch: usize, v: u16, width: usize, height: usize) {
        set_2d(dst, pitch, &v.to_le_bytes(), width, height)
    }
    fn cuMemsetD2D16Async(dst: CUdeviceptr, pitch: usize, v: u16, width: usize, height: usize, _stream: Handle) {
        set_2d(dst, pitch, &v.to_le_bytes(), width, height)
    }
    fn cuMemsetD2D32_v2(dst: CUdeviceptr, pitch: usize, v: c_uint, width: usize, height: usize) {
        set_2d(dst, pitch, &v.to_le_bytes(), width, height)
    }
    fn cuMemsetD2D32Async(dst: CUdeviceptr, pitch: usize, v: c_uint, width: usize, height: usize, _stream: Handle) {
        set_2d(dst, pitch, &v.to_le_bytes(), width, height)
    }
    fn cuMemPrefetchAsync(_dptr: CUdeviceptr, _count: usize, _device: c_int, _stream: Handle) { with(|d| d.healthy()) }
    fn cuMemPrefetchAsync_v2(_dptr: CUdeviceptr, _count: usize, _location: u64, _flags: c_uint, _stream: Handle) { with(|d| d.healthy()) }
    fn cuMemAdvise(_dptr: CUdeviceptr, _count: usize, _advice: c_int, _device: c_int) { with(|d| d.healthy()) }
    fn cuMemAdvise_v2(_dptr: CUdeviceptr, _count: usize, _advice: c_int, _location: u64) { with(|d| d.healthy()) }
    /// One attribute; for host memory the driver does not know, `CUDA_ERROR_INVALID_VALUE`.
    fn cuPointerGetAttribute(data: *mut c_void, attribute: c_int, ptr: CUdeviceptr) {
        let v = with(|d| pointer_attribute(d, attribute, ptr))?;
        let v = v.ok_or(CUDA_ERROR_INVALID_VALUE)?;
        // SAFETY: `data` holds the attribute's type; each is written at its own width.
        unsafe { write_attr(data, attribute, v) }
    }
    /// Several attributes; unregistered host memory answers as the driver does
    /// (memory type 0, no context, success).
    fn cuPointerGetAttributes(n: c_uint, attributes: *mut c_int, data: *mut *mut c_void, ptr: CUdeviceptr) {
        if n > 0 && (attributes.is_null() || data.is_null()) {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        for i in 0..n as usize {
            // SAFETY: the caller passes `n` attributes and `n` output pointers.
            let (a, out) = unsafe { (*attributes.add(i), *data.add(i)) };
            let v = with(|d| pointer_attribute(d, a, ptr))?;
            // SAFETY: as in cuPointerGetAttribute.
            unsafe { write_attr(out, a, v.unwrap_or(0))? };
        }
        Ok(())
    }
    fn cuPointerSetAttribute(_value: *const c_void, _attribute: c_int, ptr: CUdeviceptr) {
        with(|d| d.allocation_of(ptr).map(|_| ()).ok_or(CUDA_ERROR_INVALID_VALUE))
    }
}

/// The value of pointer attribute `a` for `ptr`; `None` for memory the driver does not know.
fn pointer_attribute(d: &Driver, a: c_int, ptr: u64) -> Result<Option<u64>, CUresult> {
    let mapped = d.mapped_at(ptr).or_else(|| {
        let reg = d.mapped.iter().find(|(_, m)| m.kind == MappedKind::Registered && ptr >= m.host && ptr < m.host + m.len);
        reg.map(|(&dev, m)| (dev, *m))
    });
    let device = d.allocation_of(ptr).filter(|_| mapped.is_none());
    if mapped.is_none() && device.is_none() {
        return Ok(None);
    }
    let (base, size) = match (mapped, device) {
        (Some((dev, m)), _) if m.kind == MappedKind::Registered => (dev, m.len),
        (Some((dev, m)), _) => (dev, m.len),
        (None, Some(x)) => x,
        (None, None) => return Ok(None),
    };
    let managed = mapped.is_some_and(|(_, m)| m.kind == MappedKind::Managed);
    let host_memory = mapped.is_some_and(|(_, m)| m.kind != MappedKind::Managed);
    let host_ptr = mapped.map(|(dev, m)| if m.kind == MappedKind::Registered && ptr >= m.host { ptr } else { m.host + (ptr - dev) });
    Ok(match a {
        1 => Some(PRIMARY_CTX as u64),
        2 => Some(if host_memory { CU_MEMORYTYPE_HOST } else { CU_MEMORYTYPE_DEVICE } as u64),
        3 => Some(if mapped.is_some_and(|(_, m)| m.kind == MappedKind::Registered) && ptr >= mapped.map_or(0, |x| x.1.host) {
            mapped.map_or(ptr, |(dev, m)| dev + (ptr - m.host))
        } else {
            ptr
        }),
        4 => host_ptr.or(Some(0)),
        6 => Some(1),
        7 => Some(base),
        8 => Some(managed as u64),
        9 => Some(0),
        11 => Some(base),
        12 => Some(size),
        13 => Some(1),
        _ => Some(0),
    })
}

/// Writes attribute `a`'s value at the width its type has.
///
/// # Safety
/// `out` points at storage of the attribute's type.
unsafe fn write_attr(out: *mut c_void, a: c_int, v: u64) -> Result<(), CUresult> {
    // SAFETY: the caller guarantees the storage; the width follows cuda.h's table of types.
    unsafe {
        match a {
            // CUcontext, device/host pointers, buffer id, range start and size: 64 bits.
            1 | 3 | 4 | 7 | 11 | 12 | 17 | 18 | 19 | 20 => put(out as *mut u64, v),
            // CUmemorytype, bools, ordinals, flags: 32 bits.
            _ => put(out as *mut u32, v as u32),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(w: usize, h: usize, d: usize) -> Memcpy3D {
        let mut c = Memcpy3D::from(&Memcpy2D {
            src_x_in_bytes: 0,
            src_y: 0,
            src_memory_type: CU_MEMORYTYPE_HOST,
            src_host: std::ptr::null(),
            src_device: 0,
            src_array: std::ptr::null_mut(),
            src_pitch: 0,
            dst_x_in_bytes: 0,
            dst_y: 0,
            dst_memory_type: CU_MEMORYTYPE_DEVICE,
            dst_host: std::ptr::null_mut(),
            dst_device: 0,
            dst_array: std::ptr::null_mut(),
            dst_pitch: 0,
            width_in_bytes: w,
            height: h,
        });
        c.depth = d;
        c
    }

    #[test]
    fn rows_step_by_pitch_and_slices_by_pitch_times_height() {
        let mut c = params(8, 2, 2);
        (c.src_pitch, c.src_height, c.dst_pitch, c.dst_height) = (8, 2, 512, 4);
        (c.dst_x_in_bytes, c.dst_y, c.dst_z) = (4, 1, 1);
        assert_eq!(rows(&c), Ok(vec![(0, 4 + 512 * 5), (8, 4 + 512 * 6), (16, 4 + 512 * 9), (24, 4 + 512 * 10)]));
        c.dst_pitch = 4;
        assert_eq!(rows(&c), Err(CUDA_ERROR_INVALID_VALUE), "a pitch under the width");
        let mut one = params(100, 1, 1);
        (one.src_pitch, one.dst_pitch) = (0, 0);
        assert_eq!(rows(&one), Ok(vec![(0, 0)]), "one row needs no pitch");
    }

    #[test]
    fn an_array_side_is_refused_naming_the_call() {
        assert_eq!(side("cuMemcpy2D", CU_MEMORYTYPE_ARRAY, 0, 0, std::ptr::null_mut()), Err(CUDA_ERROR_NOT_SUPPORTED));
        assert_eq!(side("cuMemcpy2D", CU_MEMORYTYPE_HOST, 7, 9, std::ptr::null_mut()), Ok(7));
        assert_eq!(side("cuMemcpy2D", CU_MEMORYTYPE_UNIFIED, 7, 9, std::ptr::null_mut()), Ok(9));
        assert_eq!(side("cuMemcpy2D", 9, 7, 9, std::ptr::null_mut()), Err(CUDA_ERROR_INVALID_VALUE));
    }
}
