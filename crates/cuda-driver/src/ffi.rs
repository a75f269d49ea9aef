//! What every exported function shares: the `api!` macro (C ABI, `#[no_mangle]`,
//! panics caught and turned into `CUDA_ERROR_UNKNOWN`), out-pointer writes,
//! C strings and handle conversions.

use crate::errors::*;
use std::ffi::{c_char, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

pub type Handle = *mut c_void;

/// Runs an exported function's body; a panic becomes `CUDA_ERROR_UNKNOWN`.
pub fn guard(f: impl FnOnce() -> Result<(), CUresult>) -> CUresult {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => CUDA_SUCCESS,
        Ok(Err(e)) => e,
        Err(_) => CUDA_ERROR_UNKNOWN,
    }
}

/// Declares exported driver functions with cuda.h's names and signatures.
macro_rules! api {
    ($( $(#[doc = $d:literal])* fn $name:ident($($a:ident: $t:ty),* $(,)?) $body:block )*) => {$(
        $(#[doc = $d])*
        ///
        /// # Safety
        /// Pointer arguments are as cuda.h documents them for this function.
        #[no_mangle]
        pub unsafe extern "C" fn $name($($a: $t),*) -> $crate::errors::CUresult {
            $crate::ffi::guard(move || $body)
        }
    )*};
}
pub(crate) use api;

/// Writes `v` through the out-pointer `p` (null: `CUDA_ERROR_INVALID_VALUE`).
///
/// # Safety
/// `p` is null or valid for a write of `T`.
pub unsafe fn put<T>(p: *mut T, v: T) -> Result<(), CUresult> {
    if p.is_null() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    // SAFETY: the caller guarantees `p` is valid; unaligned writes are allowed.
    unsafe { p.write_unaligned(v) };
    Ok(())
}

/// Like [`put`], ignoring a null pointer (optional outputs).
///
/// # Safety
/// As for [`put`].
pub unsafe fn put_opt<T>(p: *mut T, v: T) {
    if !p.is_null() {
        // SAFETY: as for `put`.
        unsafe { p.write_unaligned(v) };
    }
}

/// A C string argument.
///
/// # Safety
/// `p` is null or a NUL-terminated string.
pub unsafe fn cstr<'a>(p: *const c_char) -> Result<&'a str, CUresult> {
    if p.is_null() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    // SAFETY: the caller guarantees a NUL-terminated string.
    unsafe { CStr::from_ptr(p) }.to_str().map_err(|_| CUDA_ERROR_INVALID_VALUE)
}

/// Copies `s` into the caller's buffer of `len` bytes, NUL-terminated.
///
/// # Safety
/// `buf` is valid for `len` bytes.
pub unsafe fn put_str(buf: *mut c_char, len: i32, s: &str) -> Result<(), CUresult> {
    if buf.is_null() || len <= 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let n = s.len().min(len as usize - 1);
    // SAFETY: `n + 1 <= len` bytes are written.
    unsafe {
        std::ptr::copy_nonoverlapping(s.as_ptr(), buf as *mut u8, n);
        *buf.add(n) = 0;
    }
    Ok(())
}

/// `len` bytes of the program's memory at `p`.
///
/// # Safety
/// `p` is valid for reads of `len` bytes for the returned lifetime.
pub unsafe fn bytes<'a>(p: *const c_void, len: usize) -> Result<&'a [u8], CUresult> {
    if len == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    // SAFETY: the caller guarantees `len` readable bytes.
    Ok(unsafe { std::slice::from_raw_parts(p as *const u8, len) })
}

/// `len` writable bytes of the program's memory at `p`.
///
/// # Safety
/// `p` is valid for writes of `len` bytes for the returned lifetime.
pub unsafe fn bytes_mut<'a>(p: *mut c_void, len: usize) -> Result<&'a mut [u8], CUresult> {
    if len == 0 {
        return Ok(&mut []);
    }
    if p.is_null() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    // SAFETY: the caller guarantees `len` writable bytes.
    Ok(unsafe { std::slice::from_raw_parts_mut(p as *mut u8, len) })
}

pub fn h(p: Handle) -> usize {
    p as usize
}

pub fn to_handle(v: usize) -> Handle {
    v as Handle
}
