//! Errors as the runtime reports them: `cudaError_t` codes, the driver's `CUresult` mapped onto
//! them, the per-thread "last error" that `cudaGetLastError` returns and clears, and the names
//! and messages of `cudaGetErrorName` / `cudaGetErrorString`.
//!
//! A kernel fault is sticky in the driver (every later call returns it); the runtime only
//! passes that on, and records it as the thread's last error like any other failure.

use std::cell::Cell;
use std::ffi::{c_char, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::codes::ERRORS;
use crate::driver::CUresult;

pub type CudaErrorT = i32;

pub const SUCCESS: i32 = 0;
pub const INVALID_VALUE: i32 = 1;
pub const INVALID_CONFIGURATION: i32 = 9;
pub const INVALID_SYMBOL: i32 = 13;
pub const INVALID_MEMCPY_DIRECTION: i32 = 21;
pub const INSUFFICIENT_DRIVER: i32 = 35;
pub const INVALID_DEVICE_FUNCTION: i32 = 98;
pub const INVALID_RESOURCE_HANDLE: i32 = 400;
pub const NO_DEVICE: i32 = 100;
pub const INVALID_DEVICE: i32 = 101;
pub const NOT_READY: i32 = 600;
pub const NOT_SUPPORTED: i32 = 801;
pub const UNKNOWN: i32 = 999;

/// A runtime error code (never `cudaSuccess`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{} ({})", name(self.0).to_string_lossy(), self.0)]
pub struct Error(pub CudaErrorT);

/// The runtime's code for a driver result. The runtime's enumerators carry the driver's
/// numbers wherever both have the error (`CUDA_ERROR_ILLEGAL_ADDRESS` and
/// `cudaErrorIllegalAddress` are both 700); a driver code with no runtime twin is `cudaErrorUnknown`.
pub fn from_driver(r: CUresult) -> Result<(), Error> {
    match r {
        0 => Ok(()),
        // CUDA_ERROR_NOT_FOUND: what the runtime asked for by name is a symbol.
        500 => Err(Error(500)),
        r if ERRORS.binary_search_by_key(&r, |e| e.0).is_ok() => Err(Error(r)),
        _ => Err(Error(UNKNOWN)),
    }
}

/// `cudaGetErrorName`'s answer.
pub fn name(code: CudaErrorT) -> &'static CStr {
    ERRORS.binary_search_by_key(&code, |e| e.0).map_or(c"unrecognized error code", |i| ERRORS[i].1)
}

/// `cudaGetErrorString`'s answer.
pub fn message(code: CudaErrorT) -> &'static CStr {
    ERRORS.binary_search_by_key(&code, |e| e.0).map_or(c"unrecognized error code", |i| ERRORS[i].2)
}

thread_local! {
    static LAST: Cell<CudaErrorT> = const { Cell::new(SUCCESS) };
}

/// Runs the body of an exported function: a panic becomes `cudaErrorUnknown` instead of
/// unwinding into C, and a failure becomes the thread's last error (`cudaErrorNotReady`, the
/// answer of a query, does not).
pub fn api(f: impl FnOnce() -> Result<(), Error>) -> CudaErrorT {
    let code = match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => SUCCESS,
        Ok(Err(e)) => e.0,
        Err(_) => UNKNOWN,
    };
    if code != SUCCESS && code != NOT_READY {
        LAST.set(code);
    }
    code
}

/// [`api`] for a function that answers through one output pointer: null is
/// `cudaErrorInvalidValue`, else the answer of `f` is written there.
///
/// # Safety
/// `out` is null or valid for a write of a `T`.
pub unsafe fn answer<T>(out: *mut T, f: impl FnOnce() -> Result<T, Error>) -> CudaErrorT {
    api(|| {
        let out = non_null(out)?;
        let v = f()?;
        // SAFETY: checked non-null; writable as the caller promises.
        unsafe { out.write(v) };
        Ok(())
    })
}

/// Defines C entry points (`#[no_mangle] pub unsafe extern "C"`, each with its doc and
/// `# Safety` section) whose body runs under [`api`]:
/// * `fn NAME(ARGS) { BODY }`: the body gives `Result<(), Error>`;
/// * `fn NAME(ARGS) -> OUT { BODY }`: the body gives `Result<T, Error>`, which [`answer`]
///   writes through the pointer argument `OUT` (null: `cudaErrorInvalidValue`).
///
/// The name is written out (`__warpsim_cudaMalloc`) so that build.rs finds it.
macro_rules! entry_points {
    () => {};
    ($(#[$m:meta])* fn $name:ident($($a:ident: $t:ty),* $(,)?) -> $out:ident $body:block $($rest:tt)*) => {
        $(#[$m])*
        #[no_mangle]
        pub unsafe extern "C" fn $name($($a: $t),*) -> $crate::error::CudaErrorT {
            // SAFETY: the output pointer is null or writable, as the caller promises.
            unsafe { $crate::error::answer($out, || $body) }
        }
        $crate::error::entry_points! { $($rest)* }
    };
    ($(#[$m:meta])* fn $name:ident($($a:ident: $t:ty),* $(,)?) $body:block $($rest:tt)*) => {
        $(#[$m])*
        #[no_mangle]
        pub unsafe extern "C" fn $name($($a: $t),*) -> $crate::error::CudaErrorT {
            $crate::error::api(|| $body)
        }
        $crate::error::entry_points! { $($rest)* }
    };
}
pub(crate) use entry_points;

/// One line on stderr naming a call warpsim does not provide and why, and `cudaErrorNotSupported`.
pub fn refuse(call: &str, why: &str) -> Error {
    eprintln!("warpsim: {call}: {why}");
    Error(NOT_SUPPORTED)
}

/// C entry points warpsim does not provide, each refused with one line naming the call
/// ([`refuse`]) instead of the program failing to load for want of the symbol. Their
/// arguments are not read. Each row is the entry point (prefixed as build.rs expects), `: WHY;`;
/// the line names the call as CUDA does, the entry point less its prefix.
macro_rules! refused {
    ($($(#[$m:meta])* fn $name:ident: $why:expr;)*) => {$(
        $(#[$m])*
        #[no_mangle]
        pub extern "C" fn $name() -> $crate::error::CudaErrorT {
            let call = stringify!($name).trim_start_matches("__warpsim_");
            $crate::error::api(|| Err($crate::error::refuse(call, $why)))
        }
    )*};
}
pub(crate) use refused;

/// A null output pointer is `cudaErrorInvalidValue`.
pub fn non_null<T>(p: *mut T) -> Result<*mut T, Error> {
    if p.is_null() {
        Err(Error(INVALID_VALUE))
    } else {
        Ok(p)
    }
}

#[no_mangle]
pub extern "C" fn __warpsim_cudaGetLastError() -> CudaErrorT {
    LAST.replace(SUCCESS)
}

#[no_mangle]
pub extern "C" fn __warpsim_cudaPeekAtLastError() -> CudaErrorT {
    LAST.get()
}

#[no_mangle]
pub extern "C" fn __warpsim_cudaGetErrorName(code: CudaErrorT) -> *const c_char {
    name(code).as_ptr()
}

#[no_mangle]
pub extern "C" fn __warpsim_cudaGetErrorString(code: CudaErrorT) -> *const c_char {
    message(code).as_ptr()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_sorted_so_lookups_find_every_code() {
        assert!(ERRORS.windows(2).all(|w| w[0].0 < w[1].0));
        for &(code, n, m) in ERRORS {
            assert_eq!((name(code), message(code)), (n, m));
        }
        assert_eq!(name(11).to_bytes(), b"unrecognized error code");
    }

    #[test]
    fn driver_results_keep_their_numbers_and_unknown_ones_become_unknown() {
        assert_eq!(from_driver(0), Ok(()));
        assert_eq!(from_driver(700), Err(Error(700)));
        assert_eq!(name(700).to_bytes(), b"cudaErrorIllegalAddress");
        assert_eq!(from_driver(710).map_err(|e| message(e.0).to_bytes()), Err(&b"device-side assert triggered"[..]));
        assert_eq!(from_driver(916), Err(Error(UNKNOWN)));
    }

    #[test]
    fn failures_become_the_last_error_until_it_is_read() {
        assert_eq!(api(|| Err(Error(700))), 700);
        assert_eq!(api(|| Ok(())), SUCCESS);
        assert_eq!(api(|| Err(Error(NOT_READY))), NOT_READY);
        assert_eq!(__warpsim_cudaPeekAtLastError(), 700);
        assert_eq!(__warpsim_cudaGetLastError(), 700);
        assert_eq!(__warpsim_cudaGetLastError(), SUCCESS);
        assert_eq!(api(|| panic!("inside")), UNKNOWN);
    }
}
