//! Streams and events. Work runs when it is issued, so every stream is
//! always idle and streams run in issue order (a legal schedule of the
//! program's streams). Events read the driver's clock: simulated time in
//! timing mode, host time otherwise, never equal twice.

use crate::errors::*;
use crate::ffi::*;
use crate::state::{create, with, Event};
use std::ffi::{c_int, c_uint, c_void};

/// `CU_STREAM_LEGACY` and `CU_STREAM_PER_THREAD`, and the null stream.
fn stream_ok(d: &crate::state::Driver, s: Handle) -> Result<(), CUresult> {
    match h(s) {
        0..=2 => Ok(()),
        v if d.streams.contains_key(&v) => Ok(()),
        _ => Err(CUDA_ERROR_INVALID_HANDLE),
    }
}

fn check_stream(s: Handle) -> Result<(), CUresult> {
    with(|d| {
        stream_ok(d, s)?;
        d.healthy()
    })
}

fn record(e: Handle, s: Handle) -> Result<(), CUresult> {
    with(|d| {
        stream_ok(d, s)?;
        d.healthy()?;
        let t = d.now_ms();
        let ev = d.events.get_mut(&h(e)).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
        ev.at = Some(t);
        Ok(())
    })
}

fn elapsed(ms: *mut f32, start: Handle, end: Handle) -> Result<(), CUresult> {
    let v = with(|d| {
        let a = d.events.get(&h(start)).ok_or(CUDA_ERROR_INVALID_HANDLE)?.at;
        let b = d.events.get(&h(end)).ok_or(CUDA_ERROR_INVALID_HANDLE)?.at;
        d.healthy()?;
        match (a, b) {
            (Some(a), Some(b)) => Ok((b - a) as f32),
            _ => Err(CUDA_ERROR_INVALID_HANDLE),
        }
    })?;
    // SAFETY: out-pointer from the caller.
    unsafe { put(ms, v) }
}

fn new_stream(out: *mut Handle) -> Result<(), CUresult> {
    // SAFETY: out-pointer from the caller.
    unsafe {
        create(out, |d, s| {
            d.streams.insert(s, ());
        })
    }
}

type HostFn = Option<unsafe extern "C" fn(*mut c_void)>;
type StreamCallback = Option<unsafe extern "C" fn(Handle, CUresult, *mut c_void)>;

api! {
    fn cuStreamCreate(stream: *mut Handle, _flags: c_uint) { new_stream(stream) }
    fn cuStreamCreateWithPriority(stream: *mut Handle, _flags: c_uint, _priority: c_int) { new_stream(stream) }
    fn cuStreamDestroy_v2(stream: Handle) {
        with(|d| d.streams.remove(&h(stream)).map(|_| ()).ok_or(CUDA_ERROR_INVALID_HANDLE))
    }
    fn cuStreamSynchronize(stream: Handle) { check_stream(stream) }
    fn cuStreamQuery(stream: Handle) { check_stream(stream) }
    fn cuStreamWaitEvent(stream: Handle, event: Handle, _flags: c_uint) {
        with(|d| {
            stream_ok(d, stream)?;
            d.events.get(&h(event)).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
            d.healthy()
        })
    }
    fn cuStreamIsCapturing(stream: Handle, status: *mut c_int) {
        with(|d| stream_ok(d, stream))?;
        // SAFETY: out-pointer from the caller (CU_STREAM_CAPTURE_STATUS_NONE).
        unsafe { put(status, 0) }
    }
    fn cuStreamGetFlags(stream: Handle, flags: *mut c_uint) {
        with(|d| stream_ok(d, stream))?;
        // SAFETY: out-pointer from the caller.
        unsafe { put(flags, 0) }
    }
    fn cuStreamGetPriority(stream: Handle, priority: *mut c_int) {
        with(|d| stream_ok(d, stream))?;
        // SAFETY: out-pointer from the caller.
        unsafe { put(priority, 0) }
    }
    fn cuStreamGetId(stream: Handle, id: *mut u64) {
        with(|d| stream_ok(d, stream))?;
        // SAFETY: out-pointer from the caller.
        unsafe { put(id, h(stream) as u64) }
    }
    fn cuStreamGetCtx(stream: Handle, ctx: *mut Handle) {
        with(|d| stream_ok(d, stream))?;
        // SAFETY: out-pointer from the caller.
        unsafe { put(ctx, to_handle(crate::state::PRIMARY_CTX)) }
    }
    /// Runs `f` now: everything issued before it on any stream is done.
    fn cuLaunchHostFunc(stream: Handle, f: HostFn, data: *mut c_void) {
        check_stream(stream)?;
        let f = f.ok_or(CUDA_ERROR_INVALID_VALUE)?;
        // SAFETY: the caller's host function, called with its data outside the driver's lock.
        unsafe { f(data) };
        Ok(())
    }
    fn cuStreamAddCallback(stream: Handle, f: StreamCallback, data: *mut c_void, _flags: c_uint) {
        let status = with(|d| {
            stream_ok(d, stream)?;
            Ok(d.sticky.unwrap_or(CUDA_SUCCESS))
        })?;
        let f = f.ok_or(CUDA_ERROR_INVALID_VALUE)?;
        // SAFETY: as in cuLaunchHostFunc.
        unsafe { f(stream, status, data) };
        Ok(())
    }
    fn cuEventCreate(event: *mut Handle, _flags: c_uint) {
        // SAFETY: out-pointer from the caller.
        unsafe { create(event, |d, e| {
            d.events.insert(e, Event::default());
        }) }
    }
    fn cuEventRecord(event: Handle, stream: Handle) { record(event, stream) }
    fn cuEventRecordWithFlags(event: Handle, stream: Handle, _flags: c_uint) { record(event, stream) }
    fn cuEventQuery(event: Handle) {
        with(|d| {
            d.events.get(&h(event)).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
            d.healthy()
        })
    }
    fn cuEventSynchronize(event: Handle) {
        with(|d| {
            d.events.get(&h(event)).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
            d.healthy()
        })
    }
    fn cuEventElapsedTime(ms: *mut f32, start: Handle, end: Handle) { elapsed(ms, start, end) }
    fn cuEventElapsedTime_v2(ms: *mut f32, start: Handle, end: Handle) { elapsed(ms, start, end) }
    fn cuEventDestroy_v2(event: Handle) {
        with(|d| d.events.remove(&h(event)).map(|_| ()).ok_or(CUDA_ERROR_INVALID_HANDLE))
    }
}
