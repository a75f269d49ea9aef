//! Memory: device, managed and pinned host allocations, copies and sets (synchronous and on
//! streams), copies to and from `__device__` / `__constant__` symbols, and pointer attributes.
//! Each is the driver call of the same meaning in the current context.

use std::ffi::{c_int, c_uint, c_void};

use crate::context;
use crate::driver::{cu, CUdeviceptr, Handle};
use crate::error::{entry_points, non_null, CudaErrorT, Error, INVALID_MEMCPY_DIRECTION, INVALID_VALUE};
use crate::graph::{self, Op};
use crate::register::{symbol, symbol_range};

/// `cudaMemcpyKind`.
const HOST_TO_HOST: c_int = 0;
const HOST_TO_DEVICE: c_int = 1;
const DEVICE_TO_HOST: c_int = 2;
const DEVICE_TO_DEVICE: c_int = 3;
const DEFAULT: c_int = 4;

fn dptr<T>(p: *const T) -> CUdeviceptr {
    p as usize as CUdeviceptr
}

entry_points! {
    /// # Safety
    /// `p` is null or writable.
    fn __warpsim_cudaMalloc(p: *mut *mut c_void, size: usize) -> p {
        context::ensure()?;
        let mut d = 0;
        if size > 0 {
            cu!(cuMemAlloc_v2(&mut d, size))?;
        }
        Ok(d as usize as *mut c_void)
    }

    /// # Safety
    /// `p` is null or writable.
    fn __warpsim_cudaMallocManaged(p: *mut *mut c_void, size: usize, flags: c_uint) -> p {
        context::ensure()?;
        if size == 0 {
            return Err(Error(INVALID_VALUE));
        }
        let mut d = 0;
        cu!(cuMemAllocManaged(&mut d, size, flags))?;
        Ok(d as usize as *mut c_void)
    }

    /// # Safety
    /// `p` is null or writable.
    fn __warpsim_cudaHostAlloc(p: *mut *mut c_void, size: usize, flags: c_uint) -> p {
        context::ensure()?;
        let mut h = std::ptr::null_mut();
        cu!(cuMemHostAlloc(&mut h, size, flags))?;
        Ok(h)
    }

    /// # Safety
    /// `p` is null or a live device allocation.
    fn __warpsim_cudaFree(p: *mut c_void) {
        context::ensure()?;
        if p.is_null() {
            return Ok(());
        }
        cu!(cuMemFree_v2(dptr(p)))
    }

    /// # Safety
    /// `p` is null or a live pinned host allocation.
    fn __warpsim_cudaFreeHost(p: *mut c_void) {
        context::ensure()?;
        if p.is_null() {
            return Ok(());
        }
        cu!(cuMemFreeHost(p))
    }

    /// # Safety
    /// `device` is null or writable; `host` is a mapped pinned allocation.
    fn __warpsim_cudaHostGetDevicePointer(device: *mut *mut c_void, host: *mut c_void, flags: c_uint) -> device {
        context::ensure()?;
        let mut d = 0;
        cu!(cuMemHostGetDevicePointer_v2(&mut d, host, flags))?;
        Ok(d as usize as *mut c_void)
    }

    /// # Safety
    /// The pointers are null or writable.
    fn __warpsim_cudaMemGetInfo(free: *mut usize, total: *mut usize) {
        let (f, t) = (non_null(free)?, non_null(total)?);
        context::ensure()?;
        let (mut a, mut b) = (0, 0);
        cu!(cuMemGetInfo_v2(&mut a, &mut b))?;
        // SAFETY: checked non-null.
        unsafe {
            f.write(a);
            t.write(b);
        }
        Ok(())
    }
}

/// # Safety
/// `p` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn __warpsim_cudaMallocHost(p: *mut *mut c_void, size: usize) -> CudaErrorT {
    // SAFETY: the same contract.
    unsafe { __warpsim_cudaHostAlloc(p, size, 0) }
}

/// A copy of `count` bytes of `kind` on `stream` (`None`: synchronous).
///
/// # Safety
/// `dst` and `src` are valid for `count` bytes in the spaces `kind` names.
pub(crate) unsafe fn copy(dst: *mut c_void, src: *const c_void, count: usize, kind: c_int, stream: Option<Handle>) -> Result<(), Error> {
    context::ensure()?;
    if let Some(s) = stream {
        if graph::record(s, || Ok(Op::Copy { dst: dst as usize, src: src as usize, count, kind }))? {
            return Ok(());
        }
    }
    if count == 0 {
        return Ok(());
    }
    match (kind, stream) {
        (HOST_TO_HOST, _) => {
            if let Some(s) = stream {
                cu!(cuStreamSynchronize(s))?;
            }
            // SAFETY: both are host ranges of count bytes, as the caller promises.
            unsafe { std::ptr::copy(src.cast::<u8>(), dst.cast::<u8>(), count) };
            Ok(())
        }
        (HOST_TO_DEVICE, None) => cu!(cuMemcpyHtoD_v2(dptr(dst), src, count)),
        (DEVICE_TO_HOST, None) => cu!(cuMemcpyDtoH_v2(dst, dptr(src), count)),
        (DEVICE_TO_DEVICE, None) => cu!(cuMemcpyDtoD_v2(dptr(dst), dptr(src), count)),
        (DEFAULT, None) => cu!(cuMemcpy(dptr(dst), dptr(src), count)),
        (HOST_TO_DEVICE, Some(s)) => cu!(cuMemcpyHtoDAsync_v2(dptr(dst), src, count, s)),
        (DEVICE_TO_HOST, Some(s)) => cu!(cuMemcpyDtoHAsync_v2(dst, dptr(src), count, s)),
        (DEVICE_TO_DEVICE, Some(s)) => cu!(cuMemcpyDtoDAsync_v2(dptr(dst), dptr(src), count, s)),
        (DEFAULT, Some(s)) => cu!(cuMemcpyAsync(dptr(dst), dptr(src), count, s)),
        _ => Err(Error(INVALID_MEMCPY_DIRECTION)),
    }
}

entry_points! {
    /// # Safety
    /// `dst` and `src` are valid for `count` bytes in the spaces `kind` names.
    fn __warpsim_cudaMemcpy(dst: *mut c_void, src: *const c_void, count: usize, kind: c_int) {
        // SAFETY: as the caller promises.
        unsafe { copy(dst, src, count, kind, None) }
    }

    /// # Safety
    /// As [`__warpsim_cudaMemcpy`], and the ranges stay valid until the stream reaches the copy.
    fn __warpsim_cudaMemcpyAsync(dst: *mut c_void, src: *const c_void, count: usize, kind: c_int, stream: Handle) {
        // SAFETY: as the caller promises.
        unsafe { copy(dst, src, count, kind, Some(stream)) }
    }

    /// # Safety
    /// `p` is a device range of `count` bytes.
    fn __warpsim_cudaMemset(p: *mut c_void, value: c_int, count: usize) {
        context::ensure()?;
        cu!(cuMemsetD8_v2(dptr(p), value as u8, count))
    }

    /// # Safety
    /// `p` is a device range of `count` bytes.
    fn __warpsim_cudaMemsetAsync(p: *mut c_void, value: c_int, count: usize, stream: Handle) {
        context::ensure()?;
        if graph::record(stream, || Ok(Op::Set { dst: p as usize, value, count }))? {
            return Ok(());
        }
        cu!(cuMemsetD8Async(dptr(p), value as u8, count, stream))
    }

    /// # Safety
    /// `symbol` is a registered variable's host shadow; `src` is valid for `count` bytes.
    fn __warpsim_cudaMemcpyToSymbol(sym: *const c_void, src: *const c_void, count: usize, offset: usize, kind: c_int) {
        // SAFETY: as the caller promises.
        unsafe { symbol_copy(sym, src.cast_mut(), count, offset, kind, true, None) }
    }

    /// # Safety
    /// As [`__warpsim_cudaMemcpyToSymbol`].
    fn __warpsim_cudaMemcpyToSymbolAsync(
        sym: *const c_void, src: *const c_void, count: usize, offset: usize, kind: c_int, stream: Handle,
    ) {
        // SAFETY: as the caller promises.
        unsafe { symbol_copy(sym, src.cast_mut(), count, offset, kind, true, Some(stream)) }
    }

    /// # Safety
    /// `symbol` is a registered variable's host shadow; `dst` is valid for `count` bytes.
    fn __warpsim_cudaMemcpyFromSymbol(dst: *mut c_void, sym: *const c_void, count: usize, offset: usize, kind: c_int) {
        // SAFETY: as the caller promises.
        unsafe { symbol_copy(sym, dst, count, offset, kind, false, None) }
    }

    /// # Safety
    /// As [`__warpsim_cudaMemcpyFromSymbol`].
    fn __warpsim_cudaMemcpyFromSymbolAsync(
        dst: *mut c_void, sym: *const c_void, count: usize, offset: usize, kind: c_int, stream: Handle,
    ) {
        // SAFETY: as the caller promises.
        unsafe { symbol_copy(sym, dst, count, offset, kind, false, Some(stream)) }
    }

    /// # Safety
    /// `p` is null or writable.
    fn __warpsim_cudaGetSymbolAddress(p: *mut *mut c_void, sym: *const c_void) -> p {
        let (d, _) = symbol(sym)?;
        Ok(d as usize as *mut c_void)
    }

    /// # Safety
    /// `size` is null or writable.
    fn __warpsim_cudaGetSymbolSize(size: *mut usize, sym: *const c_void) -> size {
        let (_, n) = symbol(sym)?;
        Ok(n)
    }
}

/// A copy of `count` bytes between a symbol's range at `offset` and `other`: into the symbol
/// (from the host or the device) when `into` is set, else out of it (to the host or the device).
///
/// # Safety
/// `other` is valid for `count` bytes in the space `kind` names.
unsafe fn symbol_copy(
    sym: *const c_void,
    other: *mut c_void,
    count: usize,
    offset: usize,
    kind: c_int,
    into: bool,
    stream: Option<Handle>,
) -> Result<(), Error> {
    let host_side = if into { HOST_TO_DEVICE } else { DEVICE_TO_HOST };
    if ![host_side, DEVICE_TO_DEVICE, DEFAULT].contains(&kind) {
        return Err(Error(INVALID_MEMCPY_DIRECTION));
    }
    let s = symbol_range(sym, count, offset)? as usize as *mut c_void;
    let (dst, src) = if into { (s, other.cast_const()) } else { (other, s.cast_const()) };
    // SAFETY: the symbol's range is checked; `other` as the caller promises.
    unsafe { copy(dst, src, count, kind, stream) }
}

/// `struct cudaPointerAttributes` (driver_types.h, CUDA 13).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PointerAttributes {
    pub kind: c_int,
    pub device: c_int,
    pub device_pointer: *mut c_void,
    pub host_pointer: *mut c_void,
    pub locality_domain_ordinal: i64,
    pub reserved: [i64; 7],
}

fn pointer_attribute<T: Default>(attr: c_int, p: CUdeviceptr) -> Result<T, Error> {
    let mut v = T::default();
    cu!(cuPointerGetAttribute((&mut v as *mut T).cast(), attr, p))?;
    Ok(v)
}

entry_points! {
    /// # Safety
    /// `attributes` is null or points at a writable `cudaPointerAttributes`.
    fn __warpsim_cudaPointerGetAttributes(attributes: *mut PointerAttributes, p: *const c_void) -> attributes {
        context::ensure()?;
        let d = dptr(p);
        // CU_POINTER_ATTRIBUTE_MEMORY_TYPE: CU_MEMORYTYPE_HOST 1, DEVICE 2, UNIFIED 4.
        let v = match pointer_attribute::<c_uint>(2, d) {
            Err(_) => PointerAttributes {
                kind: 0,
                device: -2,
                device_pointer: std::ptr::null_mut(),
                host_pointer: p.cast_mut(),
                locality_domain_ordinal: -1,
                reserved: [0; 7],
            },
            Ok(memory) => {
                let managed = pointer_attribute::<c_int>(8, d).unwrap_or(0) != 0;
                let kind = match (managed, memory) {
                    (true, _) => 3,
                    (false, 1) => 1,
                    _ => 2,
                };
                let device = pointer_attribute::<c_int>(9, d).unwrap_or(context::current_device());
                let device_pointer = pointer_attribute::<CUdeviceptr>(3, d).unwrap_or(0) as usize as *mut c_void;
                let host_pointer = match kind {
                    2 => std::ptr::null_mut(),
                    _ => pointer_attribute::<usize>(4, d).unwrap_or(p as usize) as *mut c_void,
                };
                PointerAttributes { kind, device, device_pointer, host_pointer, locality_domain_ordinal: -1, reserved: [0; 7] }
            }
        };
        Ok(v)
    }
}
