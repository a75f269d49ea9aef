//! Kernel launches: `k<<<g, b, s, st>>>(args)` is `__cudaPushCallConfiguration(g, b, s, st)`
//! then, inside the host stub, `__cudaPopCallConfiguration` and `__cudaLaunchKernel(handle, g,
//! b, args, s, st)` (`cudaLaunchKernel(stub, ...)` in older builds). The argument array goes to
//! `cuLaunchKernel` as it is: `args[i]` points at argument i. Also function attributes and
//! occupancy, which work on the same handles.

use std::cell::RefCell;
use std::ffi::{c_int, c_uint, c_void};

use crate::context;
use crate::driver::{cu, Handle};
use crate::error::{entry_points, non_null, CudaErrorT, Error, INVALID_CONFIGURATION, INVALID_VALUE};
use crate::graph::{self, copy_args, Op};
use crate::register::function;

/// `dim3`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dim3 {
    pub x: c_uint,
    pub y: c_uint,
    pub z: c_uint,
}

#[derive(Clone, Copy)]
struct Config {
    grid: Dim3,
    block: Dim3,
    shared: usize,
    stream: usize,
}

thread_local! {
    static CONFIGS: RefCell<Vec<Config>> = const { RefCell::new(Vec::new()) };
}

/// `CU_STREAM_PER_THREAD`: the per-thread default stream, as the `_ptsz` entry points mean it.
const STREAM_PER_THREAD: usize = 2;

/// # Safety
/// Callable from C with any argument.
#[no_mangle]
pub unsafe extern "C" fn __warpsim___cudaPushCallConfiguration(grid: Dim3, block: Dim3, shared: usize, stream: Handle) -> c_uint {
    let c = Config { grid, block, shared, stream: stream as usize };
    match CONFIGS.try_with(|s| s.borrow_mut().push(c)) {
        Ok(()) => 0,
        Err(_) => 1,
    }
}

entry_points! {
    /// # Safety
    /// The pointers are null or writable (`stream` points at a `cudaStream_t`).
    fn __warpsim___cudaPopCallConfiguration(grid: *mut Dim3, block: *mut Dim3, shared: *mut usize, stream: *mut c_void) {
        let c = CONFIGS.try_with(|s| s.borrow_mut().pop()).ok().flatten().ok_or(Error(INVALID_CONFIGURATION))?;
        // SAFETY: each pointer is checked for null; the caller gives writable slots.
        unsafe {
            non_null(grid)?.write(c.grid);
            non_null(block)?.write(c.block);
            non_null(shared)?.write(c.shared);
            non_null(stream.cast::<usize>())?.write(c.stream);
        }
        Ok(())
    }
}

/// Checks a launch's shape against the device, as the runtime does before the driver sees it.
fn check_shape(grid: Dim3, block: Dim3) -> Result<(), Error> {
    let l = context::limits(context::current_device())?;
    let b = [block.x, block.y, block.z];
    let g = [grid.x, grid.y, grid.z];
    let threads = b.iter().map(|&v| u64::from(v)).product::<u64>();
    let fits = |v: &[u32; 3], max: &[u32; 3]| v.iter().zip(max).all(|(&v, &m)| v >= 1 && v <= m);
    // CUDA 13 answers cudaErrorInvalidValue here, not cudaErrorInvalidConfiguration
    // (recorded on the H200: tests/programs/h200/runtime_api.stdout).
    if !fits(&b, &l.max_block) || !fits(&g, &l.max_grid) || threads > u64::from(l.max_threads) {
        return Err(Error(INVALID_VALUE));
    }
    Ok(())
}

fn launch(func: *const c_void, grid: Dim3, block: Dim3, args: *mut *mut c_void, shared: usize, stream: Handle) -> Result<(), Error> {
    let f = function(func)?;
    check_shape(grid, block)?;
    let shared = c_uint::try_from(shared).map_err(|_| Error(INVALID_VALUE))?;
    // SAFETY: `args` as the caller of the launch promises.
    let op = || Ok(Op::Launch { func: f as usize, grid, block, shared, params: unsafe { copy_args(f, args) }? });
    if graph::record(stream, op)? {
        return Ok(());
    }
    cu!(cuLaunchKernel(f, grid.x, grid.y, grid.z, block.x, block.y, block.z, shared, stream, args, std::ptr::null_mut()))
}

entry_points! {
    /// Also `__cudaLaunchKernel` (CUDA 13's host stubs, with the handle of `__cudaGetKernel`).
    ///
    /// # Safety
    /// `func` is a registered host stub (or its kernel handle); `args` points at one pointer per
    /// kernel parameter, each to a value of that parameter's type.
    fn __warpsim_cudaLaunchKernel(func: *const c_void, grid: Dim3, block: Dim3, args: *mut *mut c_void, shared: usize, stream: Handle) {
        launch(func, grid, block, args, shared, stream)
    }

    /// The per-thread-default-stream launch (`--default-stream per-thread`); also `cudaLaunchKernel_ptsz`.
    ///
    /// # Safety
    /// As [`__warpsim_cudaLaunchKernel`].
    fn __warpsim___cudaLaunchKernel_ptsz(
        kernel: *const c_void, grid: Dim3, block: Dim3, args: *mut *mut c_void, shared: usize, stream: Handle,
    ) {
        let stream = if stream.is_null() { STREAM_PER_THREAD as Handle } else { stream };
        launch(kernel, grid, block, args, shared, stream)
    }
}

/// `struct cudaFuncAttributes` (driver_types.h, CUDA 13).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct FuncAttributes {
    pub shared_size_bytes: usize,
    pub const_size_bytes: usize,
    pub local_size_bytes: usize,
    pub max_threads_per_block: c_int,
    pub num_regs: c_int,
    pub ptx_version: c_int,
    pub binary_version: c_int,
    pub cache_mode_ca: c_int,
    pub max_dynamic_shared_size_bytes: c_int,
    pub preferred_shmem_carveout: c_int,
    pub cluster_dim_must_be_set: c_int,
    pub required_cluster_width: c_int,
    pub required_cluster_height: c_int,
    pub required_cluster_depth: c_int,
    pub cluster_scheduling_policy_preference: c_int,
    pub non_portable_cluster_size_allowed: c_int,
    pub device_node_update_status: c_int,
    pub shared_memory_mode: c_int,
    pub reserved: [c_int; 14],
}

fn func_attribute(f: Handle, attr: c_int) -> Result<c_int, Error> {
    let mut v = 0;
    cu!(cuFuncGetAttribute(&mut v, attr, f))?;
    Ok(v)
}

entry_points! {
    /// # Safety
    /// `attr` is null or points at a writable `cudaFuncAttributes`.
    fn __warpsim_cudaFuncGetAttributes(attr: *mut FuncAttributes, func: *const c_void) -> attr {
        let f = function(func)?;
        let a = |n| func_attribute(f, n);
        // Attributes a driver may not know read as 0, as for an older driver.
        let opt = |n| func_attribute(f, n).unwrap_or(0);
        let v = FuncAttributes {
            max_threads_per_block: a(0)?,
            shared_size_bytes: a(1)?.max(0) as usize,
            const_size_bytes: a(2)?.max(0) as usize,
            local_size_bytes: a(3)?.max(0) as usize,
            num_regs: a(4)?,
            ptx_version: a(5)?,
            binary_version: a(6)?,
            cache_mode_ca: opt(7),
            max_dynamic_shared_size_bytes: opt(8),
            preferred_shmem_carveout: opt(9),
            cluster_dim_must_be_set: opt(10),
            required_cluster_width: opt(11),
            required_cluster_height: opt(12),
            required_cluster_depth: opt(13),
            non_portable_cluster_size_allowed: opt(14),
            cluster_scheduling_policy_preference: opt(15),
            device_node_update_status: opt(16),
            shared_memory_mode: opt(17),
            reserved: [0; 14],
        };
        Ok(v)
    }

    /// # Safety
    /// `func` is a registered host stub.
    fn __warpsim_cudaFuncSetAttribute(func: *const c_void, attr: c_int, value: c_int) {
        cu!(cuFuncSetAttribute(function(func)?, attr, value))
    }

    /// # Safety
    /// `func` is a registered host stub.
    fn __warpsim_cudaFuncSetCacheConfig(func: *const c_void, config: c_int) {
        cu!(cuFuncSetCacheConfig(function(func)?, config))
    }

    /// # Safety
    /// `blocks` is null or writable; `func` is a registered host stub.
    fn __warpsim_cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
        blocks: *mut c_int, func: *const c_void, block_size: c_int, dynamic_shared: usize, flags: c_uint,
    ) -> blocks {
        let f = function(func)?;
        let mut n = 0;
        cu!(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&mut n, f, block_size, dynamic_shared, flags))?;
        Ok(n)
    }
}

/// # Safety
/// As [`__warpsim_cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags`].
#[no_mangle]
pub unsafe extern "C" fn __warpsim_cudaOccupancyMaxActiveBlocksPerMultiprocessor(
    blocks: *mut c_int,
    func: *const c_void,
    block_size: c_int,
    dynamic_shared: usize,
) -> CudaErrorT {
    // SAFETY: the same contract.
    unsafe { __warpsim_cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(blocks, func, block_size, dynamic_shared, 0) }
}
