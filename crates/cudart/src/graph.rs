//! Stream capture and graphs, minimally: between `cudaStreamBeginCapture` and
//! `cudaStreamEndCapture` the kernel launches, 1D copies and sets issued to the capturing
//! stream are recorded instead of run (a launch's argument values are copied then, as the
//! runtime does; a copy keeps its pointers); the graph that ends the capture is instantiated
//! as it is and `cudaGraphLaunch` replays its work in issue order on the stream it is given.
//! Anything else issued to a capturing stream, and graphs built node by node, are refused
//! with one line naming the call (`cudaErrorNotSupported`).

use std::collections::HashMap;
use std::ffi::{c_int, c_uint, c_void};
use std::sync::{Mutex, MutexGuard};

use crate::driver::{cu, Handle};
use crate::error::{entry_points, refuse, Error, INVALID_VALUE};
use crate::launch::Dim3;

/// `cudaErrorStreamCaptureUnsupported`, `cudaErrorStreamCaptureUnmatched`.
const CAPTURE_UNSUPPORTED: i32 = 900;
const CAPTURE_UNMATCHED: i32 = 903;

/// One piece of recorded work.
#[derive(Clone, Debug)]
pub enum Op {
    Launch { func: usize, grid: Dim3, block: Dim3, shared: c_uint, params: Vec<Vec<u8>> },
    Copy { dst: usize, src: usize, count: usize, kind: c_int },
    Set { dst: usize, value: c_int, count: usize },
}

#[derive(Default)]
struct Graphs {
    /// Work recorded so far, by capturing stream.
    capturing: HashMap<usize, Vec<Op>>,
    graphs: HashMap<usize, Vec<Op>>,
    execs: HashMap<usize, Vec<Op>>,
    next: usize,
}

static GRAPHS: Mutex<Option<Graphs>> = Mutex::new(None);

fn graphs() -> MutexGuard<'static, Option<Graphs>> {
    GRAPHS.lock().unwrap_or_else(|e| e.into_inner())
}

fn with<T>(f: impl FnOnce(&mut Graphs) -> T) -> T {
    f(graphs().get_or_insert_with(Graphs::default))
}

impl Graphs {
    fn handle(&mut self) -> usize {
        self.next += 16;
        0x6a00_0000 + self.next
    }
}

/// Whether `stream` is capturing (cheap when nothing is).
pub fn capturing(stream: Handle) -> bool {
    graphs().as_ref().is_some_and(|g| g.capturing.contains_key(&(stream as usize)))
}

/// Records `op` on `stream` if it is capturing; `false` when it is not (run the work now).
pub fn record(stream: Handle, op: impl FnOnce() -> Result<Op, Error>) -> Result<bool, Error> {
    if !capturing(stream) {
        return Ok(false);
    }
    let op = op()?;
    with(|g| g.capturing.get_mut(&(stream as usize)).map(|ops| ops.push(op)));
    Ok(true)
}

/// Refuses work that cannot be recorded, issued to a capturing stream.
pub fn refuse_if_capturing(call: &str, stream: Handle) -> Result<(), Error> {
    if capturing(stream) {
        return Err(refuse(call, "only kernel launches, 1D copies and sets can be captured into a graph here"));
    }
    Ok(())
}

/// The argument values of a launch of `func`, one buffer per parameter (sizes from the driver).
///
/// # Safety
/// `args` points at one pointer per kernel parameter, each to a value of that parameter's size.
pub unsafe fn copy_args(func: Handle, args: *mut *mut c_void) -> Result<Vec<Vec<u8>>, Error> {
    let mut params = Vec::new();
    for i in 0.. {
        let (mut offset, mut size) = (0usize, 0usize);
        if cu!(cuFuncGetParamInfo(func, i, &mut offset, &mut size)).is_err() {
            break;
        }
        if args.is_null() {
            return Err(Error(INVALID_VALUE));
        }
        // SAFETY: argument i of `size` bytes, as the caller promises.
        let v = unsafe { std::slice::from_raw_parts((*args.add(i)).cast::<u8>(), size) };
        params.push(v.to_vec());
    }
    Ok(params)
}

/// Runs recorded work on `stream`, in order.
fn replay(ops: &[Op], stream: Handle) -> Result<(), Error> {
    for op in ops {
        match op {
            Op::Launch { func, grid, block, shared, params } => {
                let mut ptrs: Vec<*mut c_void> = params.iter().map(|p| p.as_ptr() as *mut c_void).collect();
                let (g, b) = (grid, block);
                cu!(cuLaunchKernel(
                    *func as Handle,
                    g.x,
                    g.y,
                    g.z,
                    b.x,
                    b.y,
                    b.z,
                    *shared,
                    stream,
                    ptrs.as_mut_ptr(),
                    std::ptr::null_mut()
                ))?;
            }
            // SAFETY: the pointers the capture recorded, valid while the graph is used (as CUDA asks).
            Op::Copy { dst, src, count, kind } => unsafe {
                crate::memory::copy(*dst as *mut c_void, *src as *const c_void, *count, *kind, Some(stream))?
            },
            Op::Set { dst, value, count } => cu!(cuMemsetD8Async(*dst as u64, *value as u8, *count, stream))?,
        }
    }
    Ok(())
}

entry_points! {
    /// # Safety
    /// `stream` is a stream of this process.
    fn __warpsim_cudaStreamBeginCapture(stream: Handle, _mode: c_int) {
        crate::context::ensure()?;
        // The legacy default stream cannot capture.
        if stream.is_null() || stream as usize == 1 {
            return Err(Error(CAPTURE_UNSUPPORTED));
        }
        with(|g| match g.capturing.entry(stream as usize) {
            std::collections::hash_map::Entry::Occupied(_) => Err(Error(CAPTURE_UNSUPPORTED)),
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(Vec::new());
                Ok(())
            }
        })
    }

    /// # Safety
    /// `graph` is null or writable.
    fn __warpsim_cudaStreamEndCapture(stream: Handle, graph: *mut Handle) -> graph {
        with(|g| {
            let ops = g.capturing.remove(&(stream as usize)).ok_or(Error(CAPTURE_UNMATCHED))?;
            let h = g.handle();
            g.graphs.insert(h, ops);
            Ok(h as Handle)
        })
    }

    /// # Safety
    /// `exec` is null or writable.
    fn __warpsim_cudaGraphInstantiate(exec: *mut Handle, graph: Handle, _flags: u64) -> exec {
        with(|g| {
            let ops = g.graphs.get(&(graph as usize)).cloned().ok_or(Error(INVALID_VALUE))?;
            let h = g.handle();
            g.execs.insert(h, ops);
            Ok(h as Handle)
        })
    }

    /// # Safety
    /// `stream` is a stream of this process or a default stream.
    fn __warpsim_cudaGraphLaunch(exec: Handle, stream: Handle) {
        crate::context::ensure()?;
        refuse_if_capturing("cudaGraphLaunch", stream)?;
        let ops = with(|g| g.execs.get(&(exec as usize)).cloned()).ok_or(Error(INVALID_VALUE))?;
        replay(&ops, stream)
    }

    /// # Safety
    /// Any value.
    fn __warpsim_cudaGraphExecDestroy(exec: Handle) {
        with(|g| g.execs.remove(&(exec as usize)).map(|_| ()).ok_or(Error(INVALID_VALUE)))
    }

    /// # Safety
    /// Any value.
    fn __warpsim_cudaGraphDestroy(graph: Handle) {
        with(|g| g.graphs.remove(&(graph as usize)).map(|_| ()).ok_or(Error(INVALID_VALUE)))
    }
}

/// # Safety
/// As [`__warpsim_cudaGraphInstantiate`].
#[no_mangle]
pub unsafe extern "C" fn __warpsim_cudaGraphInstantiateWithFlags(exec: *mut Handle, graph: Handle, flags: u64) -> crate::error::CudaErrorT {
    // SAFETY: the same contract.
    unsafe { __warpsim_cudaGraphInstantiate(exec, graph, flags) }
}
