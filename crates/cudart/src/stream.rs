//! Streams and events: the runtime's handles are the driver's (`cudaStream_t` is `CUstream`,
//! `cudaEvent_t` is `CUevent`) and their flags carry the driver's numbers, so each call is the
//! driver call in the current context.

use std::ffi::{c_float, c_int, c_uint, c_void};

use crate::context;
use crate::driver::{cu, Handle};
use crate::error::{entry_points, refused, CudaErrorT};
use crate::graph;

/// `cudaHostFn_t`.
type HostFn = Option<unsafe extern "C" fn(*mut c_void)>;

entry_points! {
    /// # Safety
    /// `stream` is null or writable.
    fn __warpsim_cudaStreamCreateWithPriority(stream: *mut Handle, flags: c_uint, priority: c_int) -> stream {
        context::ensure()?;
        let mut s = std::ptr::null_mut();
        match priority {
            0 => cu!(cuStreamCreate(&mut s, flags))?,
            p => cu!(cuStreamCreateWithPriority(&mut s, flags, p))?,
        }
        Ok(s)
    }

    /// # Safety
    /// `stream` is a stream of this process.
    fn __warpsim_cudaStreamDestroy(stream: Handle) { context::ensure()?; cu!(cuStreamDestroy_v2(stream)) }

    /// # Safety
    /// `stream` is a stream of this process or a default stream.
    fn __warpsim_cudaStreamSynchronize(stream: Handle) {
        context::ensure()?;
        graph::refuse_if_capturing("cudaStreamSynchronize", stream)?;
        cu!(cuStreamSynchronize(stream))
    }

    /// # Safety
    /// `stream` is a stream of this process or a default stream.
    fn __warpsim_cudaStreamQuery(stream: Handle) { context::ensure()?; cu!(cuStreamQuery(stream)) }

    /// # Safety
    /// `stream` and `event` are handles of this process.
    fn __warpsim_cudaStreamWaitEvent(stream: Handle, event: Handle, flags: c_uint) {
        context::ensure()?;
        graph::refuse_if_capturing("cudaStreamWaitEvent", stream)?;
        cu!(cuStreamWaitEvent(stream, event, flags))
    }

    /// `cudaStreamCaptureStatusActive` between `cudaStreamBeginCapture` and `...EndCapture`.
    ///
    /// # Safety
    /// `status` is null or writable; `stream` is a stream of this process or a default stream.
    fn __warpsim_cudaStreamIsCapturing(stream: Handle, status: *mut c_int) -> status {
        context::ensure()?;
        if graph::capturing(stream) {
            return Ok(1);
        }
        let mut v = 0;
        cu!(cuStreamIsCapturing(stream, &mut v))?;
        Ok(v)
    }

    /// # Safety
    /// `f` is a function the stream may call with `data` once it reaches this point.
    fn __warpsim_cudaLaunchHostFunc(stream: Handle, f: HostFn, data: *mut c_void) {
        context::ensure()?;
        graph::refuse_if_capturing("cudaLaunchHostFunc", stream)?;
        cu!(cuLaunchHostFunc(stream, f, data))
    }

    /// # Safety
    /// `event` is null or writable.
    fn __warpsim_cudaEventCreateWithFlags(event: *mut Handle, flags: c_uint) -> event {
        context::ensure()?;
        let mut e = std::ptr::null_mut();
        cu!(cuEventCreate(&mut e, flags))?;
        Ok(e)
    }

    /// # Safety
    /// `event` and `stream` are handles of this process.
    fn __warpsim_cudaEventRecord(event: Handle, stream: Handle) {
        context::ensure()?;
        graph::refuse_if_capturing("cudaEventRecord", stream)?;
        cu!(cuEventRecord(event, stream))
    }

    /// # Safety
    /// `event` is an event of this process.
    fn __warpsim_cudaEventQuery(event: Handle) { context::ensure()?; cu!(cuEventQuery(event)) }

    /// # Safety
    /// `event` is an event of this process.
    fn __warpsim_cudaEventSynchronize(event: Handle) { context::ensure()?; cu!(cuEventSynchronize(event)) }

    /// # Safety
    /// `ms` is null or writable; the events are events of this process.
    fn __warpsim_cudaEventElapsedTime(ms: *mut c_float, start: Handle, end: Handle) -> ms {
        context::ensure()?;
        let mut v = 0.0;
        match cu!(cuEventElapsedTime_v2(&mut v, start, end)) {
            Err(e) if e.0 == crate::error::NOT_SUPPORTED => cu!(cuEventElapsedTime(&mut v, start, end))?,
            r => r?,
        }
        Ok(v)
    }

    /// # Safety
    /// `event` is an event of this process.
    fn __warpsim_cudaEventDestroy(event: Handle) { context::ensure()?; cu!(cuEventDestroy_v2(event)) }
}

/// # Safety
/// `stream` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn __warpsim_cudaStreamCreateWithFlags(stream: *mut Handle, flags: c_uint) -> CudaErrorT {
    // SAFETY: the same contract.
    unsafe { __warpsim_cudaStreamCreateWithPriority(stream, flags, 0) }
}

/// # Safety
/// `stream` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn __warpsim_cudaStreamCreate(stream: *mut Handle) -> CudaErrorT {
    // SAFETY: the same contract.
    unsafe { __warpsim_cudaStreamCreateWithPriority(stream, 0, 0) }
}

/// # Safety
/// `event` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn __warpsim_cudaEventCreate(event: *mut Handle) -> CudaErrorT {
    // SAFETY: the same contract.
    unsafe { __warpsim_cudaEventCreateWithFlags(event, 0) }
}

/// Why the graph calls beyond capture and replay are refused.
const GRAPHS: &str = "only graphs captured from a stream are supported (no nodes added by hand, no updates)";

refused! {
    fn __warpsim_cudaStreamGetCaptureInfo: GRAPHS;
    fn __warpsim_cudaGraphCreate: GRAPHS;
    fn __warpsim_cudaGraphInstantiateWithParams: GRAPHS;
    fn __warpsim_cudaGraphUpload: GRAPHS;
    fn __warpsim_cudaGraphAddKernelNode: GRAPHS;
    fn __warpsim_cudaGraphAddMemcpyNode: GRAPHS;
    fn __warpsim_cudaGraphAddMemsetNode: GRAPHS;
    fn __warpsim_cudaGraphGetNodes: GRAPHS;
}
