//! Memory: device, managed and pinned host allocations, copies and sets (synchronous and on
//! streams), copies to and from `__device__` / `__constant__` symbols, and pointer attributes.
//! Each is the driver call of the same meaning in the current context.

use std::ffi::{c_int, c_uint, c_void};

use crate::context;
use crate::driver::{cu, CUdeviceptr, Handle};
use crate::error::{answer, api, non_null, CudaErrorT, Error, INVALID_MEMCPY_DIRECTION, INVALID_VALUE};
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

/// # Safety
/// `p` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn __warpsim_cudaMalloc(p: *mut *mut c_void, size: usize) -> CudaErrorT {
    // SAFETY: `p` is null or writable, as the caller promises.
    unsafe {
        answer(p, || {
            context::ensure()?;
            let mut d = 0;
            if size > 0 {
                cu!(cuMemAlloc_v2(&mut d, size))?;
            }
            Ok(d as usize as *mut c_void)
        })
    }
}

/// # Safety
/// `p` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn __warpsim_cudaMallocManaged(p: *mut *mut c_void, size: usize, flags: c_uint) -> CudaErrorT {
    // SAFETY: `p` is null or writable, as the caller promises.
    unsafe {
        answer(p, || {
            context::ensure()?;
            if size == 0 {
                return Err(Error(INVALID_VALUE));
            }
            let mut d = 0;
            cu!(cuMemAllocManaged(&mut d, size, flags))?;
            Ok(d as usize as *mut c_void)
        })
    }
}

/// # Safety
/// `p` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn __warpsim_cudaHostAlloc(p: *mut *mut c_void, size: usize, flags: c_uint) -> CudaErrorT {
    // SAFETY: `p` is null or writable, as the caller promises.
    unsafe {
        answer(p, || {
            context::ensure()?;
            let mut h = std::ptr::null_mut();
            cu!(cuMemHostAlloc(&mut h, size, flags))?;
            Ok(h)
        })
    }
}

/// # Safety
/// `p` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn __warpsim_cudaMallocHost(p: *mut *mut c_void, size: usize) -> CudaErrorT {
    // SAFETY: the same contract.
    unsafe { __warpsim_cudaHostAlloc(p, size, 0) }
}

/// # Safety
/// `p` is null or a live device allocation.
#[no_mangle]
pub unsafe extern "C" fn __warpsim_cudaFree(p: *mut c_void) -> CudaErrorT {
    api(|| {
        context::ensure()?;
        if p.is_null() {
            return Ok(());
        }
        cu!(cuMemFree_v2(dptr(p)))
    })
}

/// # Safety
/// `p` is null or a live pinned host allocation.
#[no_mangle]
pub unsafe extern "C" fn __warpsim_cudaFreeHost(p: *mut c_void) -> CudaErrorT {
    api(|| {
        context::ensure()?;
        if p.is_null() {
            return Ok(());
        }
        cu!(cuMemFreeHost(p))
    })
}

/// # Safety
/// `device` is null or writable; `host` is a mapped pinned allocation.
#[no_mangle]
pub unsafe extern "C" fn __warpsim_cudaHostGetDevicePointer(device: *mut *mut c_void, host: *mut c_void, flags: c_uint) -> CudaErrorT {
    // SAFETY: `device` is null or writable, as the caller promises.
    unsafe {
        answer(device, || {
            context::ensure()?;
            let mut d = 0;
            cu!(cuMemHostGetDevicePointer_v2(&mut d, host, flags))?;
            Ok(d as usize as *mut c_void)
        })
    }
}

/// # Safety
/// The pointers are null or writable.
#[no_mangle]
pub unsafe extern "C" fn __warpsim_cudaMemGetInfo(free: *mut usize, total: *mut usize) -> CudaErrorT {
    api(|| {
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
    })
}

/// A copy of `count` bytes of `kind` on `stream` (`None`: synchronous).
///
/// # Safety
/// `dst` and `src` are valid for `count` bytes in the spaces `kind` names.
unsafe fn copy(dst: *mut c_void, src: *const c_void, count: usize, kind: c_int, stream: Option<Handle>) -> Result<(), Error> {
    context::ensure()?;
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

/// # Safety
/// `dst` and `src` are valid for `count` bytes in the spaces `kind` names.
#[no_mangle]
pub unsafe extern "C" fn __warpsim_cudaMemcpy(dst: *mut c_void, src: *const c_void, count: usize, kind: c_int) -> CudaErrorT {
    // SAFETY: as the caller promises.
    api(|| unsafe { copy(dst, src, count, kind, None) })
}

/// # Safety
/// As [`__warpsim_cudaMemcpy`], and the ranges stay valid until the stream reaches the copy.
#[no_mangle]
pub unsafe extern "C" fn __warpsim_cudaMemcpyAsync(
    dst: *mut c_void,
    src: *const c_void,
    count: usize,
    kind: c_int,
    stream: Handle,
) -> CudaErrorT {
    // SAFETY: as the caller promises.
    api(|| unsafe { copy(dst, src, count, kind, Some(stream)) })
}

/// # Safety
/// `p` is a device range of `count` bytes.
#[no_mangle]
pub unsafe extern "C" fn __warpsim_cudaMemset(p: *mut c_void, value: c_int, count: usize) -> CudaErrorT {
    api(|| {
        context::ensure()?;
        cu!(cuMemsetD8_v2(dptr(p), value as u8, count))
    })
}

/// # Safety
/// `p` is a device range of `count` bytes.
#[no_mangle]
pub unsafe extern "C" fn __warpsim_cudaMemsetAsync(p: *mut c_void, value: c_int, count: usize, stream: Handle) -> CudaErrorT {
    api(|| {
        context::ensure()?;
        cu!(cuMemsetD8Async(dptr(p), value as u8, count, stream))
    })
}

/// The copy direction into a symbol: from the host or from the device.
fn to_symbol_kind(kind: c_int) -> Result<c_int, Error> {
    match kind {
        HOST_TO_DEVICE | DEVICE_TO_DEVICE | DEFAULT => Ok(kind),
        _ => Err(Error(INVALID_MEMCPY_DIRECTION)),
    }
}

fn from_symbol_kind(kind: c_int) -> Result<c_int, Error> {
    match kind {
        DEVICE_TO_HOST | DEVICE_TO_DEVICE | DEFAULT => Ok(kind),
        _ => Err(Error(INVALID_MEMCPY_DIRECTION)),
    }
}

/// # Safety
/// `symbol` is a registered variable's host shadow; `src` is valid for `count` bytes.
#[no_mangle]
pub unsafe extern "C" fn __warpsim_cudaMemcpyToSymbol(
    sym: *const c_void,
    src: *const c_void,
    count: usize,
    offset: usize,
    kind: c_int,
) -> CudaErrorT {
    api(|| {
        let kind = to_symbol_kind(kind)?;
        let d = symbol_range(sym, count, offset)?;
        // SAFETY: the symbol's range is checked; src as the caller promises.
        unsafe { copy(d as usize as *mut c_void, src, count, kind, None) }
    })
}

/// # Safety
/// As [`__warpsim_cudaMemcpyToSymbol`].
#[no_mangle]
pub unsafe extern "C" fn __warpsim_cudaMemcpyToSymbolAsync(
    sym: *const c_void,
    src: *const c_void,
    count: usize,
    offset: usize,
    kind: c_int,
    stream: Handle,
) -> CudaErrorT {
    api(|| {
        let kind = to_symbol_kind(kind)?;
        let d = symbol_range(sym, count, offset)?;
        // SAFETY: the symbol's range is checked; src as the caller promises.
        unsafe { copy(d as usize as *mut c_void, src, count, kind, Some(stream)) }
    })
}

/// # Safety
/// `symbol` is a registered variable's host shadow; `dst` is valid for `count` bytes.
#[no_mangle]
pub unsafe extern "C" fn __warpsim_cudaMemcpyFromSymbol(
    dst: *mut c_void,
    sym: *const c_void,
    count: usize,
    offset: usize,
    kind: c_int,
) -> CudaErrorT {
    api(|| {
        let kind = from_symbol_kind(kind)?;
        let s = symbol_range(sym, count, offset)?;
        // SAFETY: the symbol's range is checked; dst as the caller promises.
        unsafe { copy(dst, s as usize as *const c_void, count, kind, None) }
    })
}

/// # Safety
/// As [`__warpsim_cudaMemcpyFromSymbol`].
#[no_mangle]
pub unsafe extern "C" fn __warpsim_cudaMemcpyFromSymbolAsync(
    dst: *mut c_void,
    sym: *const c_void,
    count: usize,
    offset: usize,
    kind: c_int,
    stream: Handle,
) -> CudaErrorT {
    api(|| {
        let kind = from_symbol_kind(kind)?;
        let s = symbol_range(sym, count, offset)?;
        // SAFETY: the symbol's range is checked; dst as the caller promises.
        unsafe { copy(dst, s as usize as *const c_void, count, kind, Some(stream)) }
    })
}

/// # Safety
/// `p` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn __warpsim_cudaGetSymbolAddress(p: *mut *mut c_void, sym: *const c_void) -> CudaErrorT {
    // SAFETY: `p` is null or writable, as the caller promises.
    unsafe {
        answer(p, || {
            let (d, _) = symbol(sym)?;
            Ok(d as usize as *mut c_void)
        })
    }
}

/// # Safety
/// `size` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn __warpsim_cudaGetSymbolSize(size: *mut usize, sym: *const c_void) -> CudaErrorT {
    // SAFETY: `size` is null or writable, as the caller promises.
    unsafe {
        answer(size, || {
            let (_, n) = symbol(sym)?;
            Ok(n)
        })
    }
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

/// # Safety
/// `attributes` is null or points at a writable `cudaPointerAttributes`.
#[no_mangle]
pub unsafe extern "C" fn __warpsim_cudaPointerGetAttributes(attributes: *mut PointerAttributes, p: *const c_void) -> CudaErrorT {
    // SAFETY: `attributes` is null or writable, as the caller promises.
    unsafe {
        answer(attributes, || {
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
        })
    }
}
