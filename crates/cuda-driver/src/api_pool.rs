//! Stream-ordered allocation (`cuMemAllocFromPoolAsync`, `cuMemFreeAsync`) and memory
//! pools, as cuda.h declares them. Streams run in issue order, so a pool allocation is a
//! device allocation made at once and freed at once; a pool keeps only its attributes.
//! Numba's array transfers (through cuda.core) allocate this way.

use crate::api_core::CUdevice;
use crate::api_mem::{cuMemAllocAsync, CUdeviceptr};
use crate::errors::*;
use crate::ffi::*;
use crate::state::with;
use std::collections::HashMap;
use std::ffi::{c_int, c_void};
use std::sync::Mutex;

/// `CUmemPool_attribute` values (cuda.h): 1-3 are `int`, 4-8 `cuuint64_t`.
const ATTR_RELEASE_THRESHOLD: c_int = 4;
const ATTR_LAST_U64: c_int = 8;
/// `CU_MEM_ACCESS_FLAGS_PROT_READWRITE`.
const ACCESS_READWRITE: c_int = 3;

/// The device's default pool: a fixed handle.
static DEFAULT_POOL: u8 = 0;

fn default_pool() -> Handle {
    std::ptr::addr_of!(DEFAULT_POOL) as Handle
}

/// Attributes of every pool by handle (the default one included, made on first use).
static POOLS: Mutex<Option<HashMap<usize, [u64; 9]>>> = Mutex::new(None);

fn with_pool<T>(pool: Handle, f: impl FnOnce(&mut [u64; 9]) -> T) -> Result<T, CUresult> {
    let mut g = POOLS.lock().unwrap_or_else(|e| e.into_inner());
    let pools = g.get_or_insert_with(|| HashMap::from([(default_pool() as usize, [0; 9])]));
    pools.get_mut(&(pool as usize)).map(f).ok_or(CUDA_ERROR_INVALID_VALUE)
}

fn check_device(dev: CUdevice) -> Result<(), CUresult> {
    with(|d| {
        d.healthy()?;
        if dev == 0 {
            Ok(())
        } else {
            Err(CUDA_ERROR_INVALID_DEVICE)
        }
    })
}

api! {
    fn cuDeviceGetDefaultMemPool(pool: *mut Handle, dev: CUdevice) {
        check_device(dev)?;
        // SAFETY: out-pointer from the caller.
        unsafe { put(pool, default_pool()) }
    }
    fn cuDeviceGetMemPool(pool: *mut Handle, dev: CUdevice) {
        check_device(dev)?;
        // SAFETY: out-pointer from the caller.
        unsafe { put(pool, default_pool()) }
    }
    fn cuDeviceSetMemPool(dev: CUdevice, pool: Handle) {
        check_device(dev)?;
        with_pool(pool, |_| ())
    }
    fn cuMemPoolCreate(pool: *mut Handle, _props: *const c_void) {
        let token = Box::into_raw(Box::new(0u8)) as Handle;
        let mut g = POOLS.lock().unwrap_or_else(|e| e.into_inner());
        g.get_or_insert_with(|| HashMap::from([(default_pool() as usize, [0; 9])])).insert(token as usize, [0; 9]);
        // SAFETY: out-pointer from the caller.
        unsafe { put(pool, token) }
    }
    fn cuMemPoolDestroy(pool: Handle) {
        if pool == default_pool() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let mut g = POOLS.lock().unwrap_or_else(|e| e.into_inner());
        match g.as_mut().and_then(|p| p.remove(&(pool as usize))) {
            // SAFETY: `pool` came from `Box::into_raw` in cuMemPoolCreate and is removed once.
            Some(_) => { drop(unsafe { Box::from_raw(pool as *mut u8) }); Ok(()) }
            None => Err(CUDA_ERROR_INVALID_VALUE),
        }
    }
    fn cuMemPoolGetAttribute(pool: Handle, attr: c_int, value: *mut c_void) {
        if !(1..=ATTR_LAST_U64).contains(&attr) {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let v = with_pool(pool, |a| a[attr as usize])?;
        if attr == 7 || attr == 5 {
            // Memory in use or reserved: what the device holds now.
            let used = with(|d| Ok(d.ctx.resident_bytes()))?;
            // SAFETY: a `cuuint64_t` out-pointer for these attributes.
            return unsafe { put(value as *mut u64, used) };
        }
        // SAFETY: the attribute's type, as cuda.h gives it.
        unsafe { if attr < ATTR_RELEASE_THRESHOLD { put(value as *mut c_int, v as c_int) } else { put(value as *mut u64, v) } }
    }
    fn cuMemPoolSetAttribute(pool: Handle, attr: c_int, value: *mut c_void) {
        if !(1..=ATTR_LAST_U64).contains(&attr) || value.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        // SAFETY: the attribute's type, as cuda.h gives it.
        let v = unsafe { if attr < ATTR_RELEASE_THRESHOLD { (value as *const c_int).read_unaligned() as u64 } else { (value as *const u64).read_unaligned() } };
        with_pool(pool, |a| a[attr as usize] = v)
    }
    fn cuMemPoolTrimTo(pool: Handle, _min_bytes: usize) {
        with_pool(pool, |_| ())
    }
    fn cuMemPoolSetAccess(pool: Handle, _map: *const c_void, _count: usize) {
        with_pool(pool, |_| ())
    }
    fn cuMemPoolGetAccess(flags: *mut c_int, pool: Handle, _location: *mut c_void) {
        with_pool(pool, |_| ())?;
        // SAFETY: out-pointer from the caller.
        unsafe { put(flags, ACCESS_READWRITE) }
    }
    fn cuMemAllocFromPoolAsync(dptr: *mut CUdeviceptr, bytesize: usize, pool: Handle, stream: Handle) {
        with_pool(pool, |_| ())?;
        // SAFETY: as for cuMemAllocAsync.
        match unsafe { cuMemAllocAsync(dptr, bytesize, stream) } { 0 => Ok(()), e => Err(e) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pools_keep_their_attributes_and_refuse_strangers() {
        let mut p: Handle = std::ptr::null_mut();
        // SAFETY: valid out-pointers and attribute types.
        unsafe {
            assert_eq!(cuMemPoolCreate(&mut p, std::ptr::null()), CUDA_SUCCESS);
            let mut t: u64 = 1 << 30;
            assert_eq!(cuMemPoolSetAttribute(p, ATTR_RELEASE_THRESHOLD, (&mut t as *mut u64).cast()), CUDA_SUCCESS);
            let mut back: u64 = 0;
            assert_eq!(cuMemPoolGetAttribute(p, ATTR_RELEASE_THRESHOLD, (&mut back as *mut u64).cast()), CUDA_SUCCESS);
            assert_eq!(back, 1 << 30);
            assert_eq!(cuMemPoolGetAttribute(p, 99, (&mut back as *mut u64).cast()), CUDA_ERROR_INVALID_VALUE);
            assert_eq!(cuMemPoolDestroy(p), CUDA_SUCCESS);
            assert_eq!(cuMemPoolDestroy(p), CUDA_ERROR_INVALID_VALUE);
            assert_eq!(cuMemPoolTrimTo(0x1234 as Handle, 0), CUDA_ERROR_INVALID_VALUE);
            assert_eq!(cuMemPoolDestroy(default_pool()), CUDA_ERROR_INVALID_VALUE);
        }
    }
}
