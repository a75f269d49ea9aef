//! Initialisation, versions, errors, `cuGetProcAddress`, the device (from
//! the GPU preset) and contexts (one primary context; the current context
//! is per thread, as in CUDA).

use crate::errors::*;
use crate::ffi::*;
use crate::state::{init, with, PRIMARY_CTX};
use std::cell::Cell;
use std::ffi::{c_char, c_int, c_uint, c_void};
use std::sync::Once;

pub type CUdevice = c_int;

/// The driver version reported (CUDA 13.0).
pub const DRIVER_VERSION: c_int = 13000;

thread_local! {
    /// The calling thread's current context (0: none).
    static CURRENT: Cell<usize> = const { Cell::new(0) };
}

fn current() -> usize {
    CURRENT.with(|c| c.get())
}

fn set_current(v: usize) {
    CURRENT.with(|c| c.set(v));
}

fn device_ok(dev: CUdevice) -> Result<(), CUresult> {
    if dev == 0 {
        Ok(())
    } else {
        Err(CUDA_ERROR_INVALID_DEVICE)
    }
}

fn ctx_ok(ctx: Handle) -> Result<(), CUresult> {
    if h(ctx) == PRIMARY_CTX {
        Ok(())
    } else {
        Err(CUDA_ERROR_INVALID_CONTEXT)
    }
}

static EXPORT_TABLE_ADVICE: Once = Once::new();

/// The advice printed when a program carries NVIDIA's runtime inside it.
pub const STATIC_RUNTIME_ADVICE: &str =
    "warpsim: this program carries NVIDIA's CUDA runtime inside it (nvcc links it statically by default), \
which needs undocumented driver tables warpsim does not provide; rebuild it with `nvcc -cudart shared` so that it uses warpsim's runtime";

/// Puts the name or string (`pick`) of `error` in `*pstr`; NULL and an error for an unknown code.
///
/// # Safety
/// `pstr` is null or valid for a write.
unsafe fn error_text(
    error: CUresult,
    pstr: *mut *const c_char,
    pick: fn(&(CUresult, &'static str, &'static str)) -> &'static str,
) -> Result<(), CUresult> {
    let e = ERRORS.iter().find(|e| e.0 == error);
    // SAFETY: as the caller guarantees; the strings are static and NUL-terminated.
    unsafe {
        match e {
            Some(e) => put(pstr, pick(e).as_ptr() as *const c_char),
            None => {
                put_opt(pstr, std::ptr::null());
                Err(CUDA_ERROR_INVALID_VALUE)
            }
        }
    }
}

extern "C" fn advise_at_exit() {
    eprintln!("{STATIC_RUNTIME_ADVICE}");
}

api! {
    fn cuInit(_flags: c_uint) { init() }
    fn cuDriverGetVersion(version: *mut c_int) {
        // SAFETY: out-pointer from the caller.
        unsafe { put(version, DRIVER_VERSION) }
    }
    fn cuGetErrorName(error: CUresult, pstr: *mut *const c_char) {
        // SAFETY: out-pointer from the caller.
        unsafe { error_text(error, pstr, |e| e.1) }
    }
    fn cuGetErrorString(error: CUresult, pstr: *mut *const c_char) {
        // SAFETY: out-pointer from the caller.
        unsafe { error_text(error, pstr, |e| e.2) }
    }
    /// NVIDIA's undocumented tables: not provided. The static runtime asks for
    /// them first, so this is where the rebuild advice is given.
    fn cuGetExportTable(table: *mut *const c_void, _id: *const c_void) {
        // Said at exit, so that it is the last thing the program prints (after its own error report).
        EXPORT_TABLE_ADVICE.call_once(|| {
            // SAFETY: registering a plain `extern "C"` function with no arguments.
            if unsafe { libc::atexit(advise_at_exit) } != 0 {
                eprintln!("{STATIC_RUNTIME_ADVICE}");
            }
        });
        // SAFETY: optional out-pointer from the caller.
        unsafe { put_opt(table, std::ptr::null()) };
        Err(CUDA_ERROR_NOT_SUPPORTED)
    }
    fn cuGetProcAddress(symbol: *const c_char, pfn: *mut *mut c_void, version: c_int, flags: u64) {
        // SAFETY: arguments as cuGetProcAddress_v2 takes them, with no status.
        match unsafe { cuGetProcAddress_v2(symbol, pfn, version, flags, std::ptr::null_mut()) } {
            0 => Ok(()),
            e => Err(e),
        }
    }
    /// Resolves a driver function by name for a CUDA version; `CUDA_ERROR_NOT_FOUND`
    /// (status "symbol not found") for what warpsim does not implement.
    fn cuGetProcAddress_v2(symbol: *const c_char, pfn: *mut *mut c_void, version: c_int, _flags: u64, status: *mut c_int) {
        // SAFETY: a C string from the caller.
        let name = unsafe { cstr(symbol) }?;
        let found = crate::procs::lookup(name, version);
        // SAFETY: out-pointers from the caller.
        unsafe {
            match found {
                Some(f) => {
                    put_opt(status, 0);
                    put(pfn, f)
                }
                None => {
                    put_opt(pfn, std::ptr::null_mut());
                    // CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND (or VERSION_NOT_SUFFICIENT for a newer ABI).
                    put_opt(status, if crate::procs::known(name) { 2 } else { 1 });
                    Err(CUDA_ERROR_NOT_FOUND)
                }
            }
        }
    }
    fn cuDeviceGet(device: *mut CUdevice, ordinal: c_int) {
        with(|_| Ok(()))?;
        device_ok(ordinal)?;
        // SAFETY: out-pointer from the caller.
        unsafe { put(device, 0) }
    }
    fn cuDeviceGetCount(count: *mut c_int) {
        with(|_| Ok(()))?;
        // SAFETY: out-pointer from the caller.
        unsafe { put(count, 1) }
    }
    fn cuDeviceGetName(name: *mut c_char, len: c_int, dev: CUdevice) {
        device_ok(dev)?;
        let n = with(|d| Ok(d.preset.name.clone()))?;
        // SAFETY: the caller's buffer of `len` bytes.
        unsafe { put_str(name, len, &n) }
    }
    fn cuDeviceGetUuid(uuid: *mut [u8; 16], dev: CUdevice) {
        device_ok(dev)?;
        let key = with(|d| Ok(d.preset.key.clone()))?;
        let mut u = *b"warpsim-\0\0\0\0\0\0\0\0";
        for (i, b) in key.bytes().take(8).enumerate() {
            u[8 + i] = b;
        }
        // SAFETY: out-pointer to a CUuuid (16 bytes).
        unsafe { put(uuid, u) }
    }
    fn cuDeviceGetUuid_v2(uuid: *mut [u8; 16], dev: CUdevice) {
        // SAFETY: as for cuDeviceGetUuid.
        match unsafe { cuDeviceGetUuid(uuid, dev) } { 0 => Ok(()), e => Err(e) }
    }
    fn cuDeviceGetLuid(_luid: *mut c_char, _mask: *mut c_uint, _dev: CUdevice) { Err(CUDA_ERROR_NOT_SUPPORTED) }
    fn cuDeviceTotalMem_v2(bytes: *mut usize, dev: CUdevice) {
        device_ok(dev)?;
        let t = with(|d| Ok(crate::state::total_mem(&d.preset)))?;
        // SAFETY: out-pointer from the caller.
        unsafe { put(bytes, t as usize) }
    }
    fn cuDeviceGetAttribute(pi: *mut c_int, attrib: c_int, dev: CUdevice) {
        device_ok(dev)?;
        let v = with(|d| crate::attrs::device_attribute(&d.preset, attrib).ok_or(CUDA_ERROR_INVALID_VALUE))?;
        // SAFETY: out-pointer from the caller.
        unsafe { put(pi, v) }
    }
    fn cuDeviceComputeCapability(major: *mut c_int, minor: *mut c_int, dev: CUdevice) {
        device_ok(dev)?;
        let (a, b) = with(|d| Ok(crate::attrs::compute_capability(&d.preset)))?;
        // SAFETY: out-pointers from the caller.
        unsafe {
            put(major, a)?;
            put(minor, b)
        }
    }
    fn cuDeviceGetPCIBusId(bus: *mut c_char, len: c_int, dev: CUdevice) {
        device_ok(dev)?;
        // SAFETY: the caller's buffer.
        unsafe { put_str(bus, len, "0000:00:00.0") }
    }
    fn cuDeviceGetByPCIBusId(dev: *mut CUdevice, _bus: *const c_char) {
        // SAFETY: out-pointer from the caller.
        unsafe { put(dev, 0) }
    }
    fn cuDeviceCanAccessPeer(can: *mut c_int, _dev: CUdevice, _peer: CUdevice) {
        // SAFETY: out-pointer from the caller.
        unsafe { put(can, 0) }
    }
    fn cuDevicePrimaryCtxRetain(pctx: *mut Handle, dev: CUdevice) {
        device_ok(dev)?;
        with(|d| {
            d.primary_active = true;
            Ok(())
        })?;
        // SAFETY: out-pointer from the caller.
        unsafe { put(pctx, to_handle(PRIMARY_CTX)) }
    }
    fn cuDevicePrimaryCtxRelease(dev: CUdevice) { device_ok(dev) }
    fn cuDevicePrimaryCtxRelease_v2(dev: CUdevice) { device_ok(dev) }
    fn cuDevicePrimaryCtxReset(dev: CUdevice) { device_ok(dev) }
    fn cuDevicePrimaryCtxReset_v2(dev: CUdevice) { device_ok(dev) }
    fn cuDevicePrimaryCtxSetFlags(dev: CUdevice, _flags: c_uint) { device_ok(dev) }
    fn cuDevicePrimaryCtxSetFlags_v2(dev: CUdevice, _flags: c_uint) { device_ok(dev) }
    fn cuDevicePrimaryCtxGetState(dev: CUdevice, flags: *mut c_uint, active: *mut c_int) {
        device_ok(dev)?;
        let a = with(|d| Ok(d.primary_active))?;
        // SAFETY: out-pointers from the caller.
        unsafe {
            put(flags, 0)?;
            put(active, a as c_int)
        }
    }
    fn cuCtxCreate_v2(pctx: *mut Handle, _flags: c_uint, dev: CUdevice) {
        device_ok(dev)?;
        set_current(PRIMARY_CTX);
        // SAFETY: out-pointer from the caller.
        unsafe { put(pctx, to_handle(PRIMARY_CTX)) }
    }
    fn cuCtxCreate_v4(pctx: *mut Handle, _params: *mut c_void, _flags: c_uint, dev: CUdevice) {
        device_ok(dev)?;
        set_current(PRIMARY_CTX);
        // SAFETY: out-pointer from the caller.
        unsafe { put(pctx, to_handle(PRIMARY_CTX)) }
    }
    fn cuCtxDestroy_v2(ctx: Handle) {
        ctx_ok(ctx)?;
        if current() == PRIMARY_CTX {
            set_current(0);
        }
        Ok(())
    }
    fn cuCtxGetCurrent(pctx: *mut Handle) {
        // SAFETY: out-pointer from the caller.
        unsafe { put(pctx, to_handle(current())) }
    }
    fn cuCtxSetCurrent(ctx: Handle) {
        if !ctx.is_null() {
            ctx_ok(ctx)?;
        }
        set_current(h(ctx));
        Ok(())
    }
    fn cuCtxPushCurrent_v2(ctx: Handle) {
        ctx_ok(ctx)?;
        set_current(PRIMARY_CTX);
        Ok(())
    }
    fn cuCtxPopCurrent_v2(pctx: *mut Handle) {
        let c = current();
        set_current(0);
        // SAFETY: optional out-pointer from the caller.
        unsafe { put_opt(pctx, to_handle(c)) };
        Ok(())
    }
    fn cuCtxGetDevice(dev: *mut CUdevice) {
        if current() == 0 {
            return Err(CUDA_ERROR_INVALID_CONTEXT);
        }
        // SAFETY: out-pointer from the caller.
        unsafe { put(dev, 0) }
    }
    fn cuCtxGetDevice_v2(dev: *mut CUdevice, ctx: Handle) {
        if !ctx.is_null() {
            ctx_ok(ctx)?;
        }
        // SAFETY: out-pointer from the caller.
        unsafe { put(dev, 0) }
    }
    fn cuCtxGetFlags(flags: *mut c_uint) {
        // SAFETY: out-pointer from the caller.
        unsafe { put(flags, 0) }
    }
    fn cuCtxSetFlags(_flags: c_uint) { Ok(()) }
    fn cuCtxGetId(ctx: Handle, id: *mut u64) {
        if !ctx.is_null() {
            ctx_ok(ctx)?;
        }
        // SAFETY: out-pointer from the caller.
        unsafe { put(id, 1) }
    }
    fn cuCtxGetApiVersion(ctx: Handle, version: *mut c_uint) {
        if !ctx.is_null() {
            ctx_ok(ctx)?;
        }
        // SAFETY: out-pointer from the caller.
        unsafe { put(version, 3020) }
    }
    fn cuCtxSynchronize() { with(|d| d.healthy()) }
    fn cuCtxSynchronize_v2(_ctx: Handle) { with(|d| d.healthy()) }
    fn cuCtxGetLimit(value: *mut usize, limit: c_int) {
        let v = match limit {
            0 => 1024,             // CU_LIMIT_STACK_SIZE
            1 => 1 << 20,          // CU_LIMIT_PRINTF_FIFO_SIZE
            2 => 8 << 20,          // CU_LIMIT_MALLOC_HEAP_SIZE
            3 => 2,                // CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH
            4 => 2048,             // CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT
            5 => 32,               // CU_LIMIT_MAX_L2_FETCH_GRANULARITY
            6 => 0,                // CU_LIMIT_PERSISTING_L2_CACHE_SIZE
            _ => return Err(CUDA_ERROR_UNSUPPORTED_LIMIT),
        };
        // SAFETY: out-pointer from the caller.
        unsafe { put(value, v) }
    }
    fn cuCtxSetLimit(limit: c_int, _value: usize) {
        if (0..=6).contains(&limit) { Ok(()) } else { Err(CUDA_ERROR_UNSUPPORTED_LIMIT) }
    }
    fn cuCtxGetCacheConfig(config: *mut c_int) {
        // SAFETY: out-pointer from the caller.
        unsafe { put(config, 0) }
    }
    fn cuCtxSetCacheConfig(_config: c_int) { Ok(()) }
    fn cuCtxGetStreamPriorityRange(least: *mut c_int, greatest: *mut c_int) {
        // SAFETY: optional out-pointers from the caller.
        unsafe {
            put_opt(least, 0);
            put_opt(greatest, -5);
        }
        Ok(())
    }
    fn cuCtxResetPersistingL2Cache() { Ok(()) }
    fn cuProfilerStart() { Ok(()) }
    fn cuProfilerStop() { Ok(()) }
}
