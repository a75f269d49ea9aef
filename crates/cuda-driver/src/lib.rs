//! A CUDA driver library (`libcuda.so.1`) whose GPU is warpsim: programs
//! built with `nvcc -cudart shared` (through warpsim's runtime library),
//! `cuda.bindings` and Numba load it in place of NVIDIA's driver, and every
//! kernel they launch runs on the simulator, through the same
//! `warpsim_host::launch` as `warpsim run`.
//!
//! Built from NVIDIA's public headers only (`cuda.h`, `cudaTypedefs.h`):
//! each function has its cuda.h ABI name (`cuMemAlloc_v2`, ...) and is also
//! reachable through `cuGetProcAddress(_v2)`; what is not implemented is
//! answered `CUDA_ERROR_NOT_FOUND` there. NVIDIA's undocumented tables
//! (`cuGetExportTable`) are not provided: a program carrying NVIDIA's runtime
//! statically gets one message saying to rebuild with `nvcc -cudart shared`.
//!
//! # Options: the environment (what `warpsim exec` sets)
//! * `WARPSIM_GPU=NAME`: the device is this preset (default `h200`).
//! * `WARPSIM_MODE=timing`: launches run on the timing model; events read simulated time.
//! * `WARPSIM_CHECK=1`: launches run with the checkers; findings on stderr as `warpsim check` words them,
//!   with the launch's host call site (`function (file:line)`, see callsite.rs).
//! * `WARPSIM_STRICT_BOUNDS=1`: an access past an allocation's exact end faults. By default one
//!   within the allocation's 64 KiB page is served, as a GPU serves it, with a warning on stderr.
//! * `WARPSIM_SUMMARY=FILE`: one JSON line per launch is appended (kernel, grid,
//!   block, warp instructions, threads per instruction, divergent branches,
//!   sectors and requests, bank conflicts, cycles in timing mode, diagnostics, fault).
//! * `WARPSIM_TRACE=FILE.json`: the timing model's timelines of all launches, written at exit.
//!   A launch that faults adds an instant event with its fault.
//! * `WARPSIM_PROGRESS=0`: no progress line for launches over a second (shown only when stderr is a terminal).
//! * `WARPSIM_REPORT=FILE.html`: an HTML page per launch (FILE-N.html; a faulted launch's page shows
//!   what ran up to the fault) for the first `WARPSIM_REPORT_LAUNCHES` launches (default 20), listed in FILE.html.
//!
//! # Semantics
//! * One device, one primary context; the current context is per thread.
//! * Launches are synchronous and streams run in issue order (a legal
//!   schedule); `Async` calls complete before they return.
//! * Device memory lives in an address range reserved from the host
//!   (`PROT_NONE`, `MAP_FIXED_NOREPLACE`), so host and device pointers never
//!   overlap. Managed and pinned host memory is host memory mapped at a
//!   device address: the program touches it directly; each launch copies it
//!   into the simulated memory before and back after.
//! * A kernel fault prints warpsim's message (block, thread, line, address)
//!   on stderr and becomes a sticky error (`CUDA_ERROR_ILLEGAL_ADDRESS`,
//!   `CUDA_ERROR_ASSERT`, ...) that every later call returns, as on a GPU.
//! * Device `printf` goes to the C `stdout` stream (so it interleaves with the
//!   program's own `printf`), flushed after each launch.
//! * Every exported function catches panics (`CUDA_ERROR_UNKNOWN`).

pub mod api_core;
pub mod api_mem;
pub mod api_module;
pub mod api_pool;
pub mod api_stream;
pub mod attrs;
pub mod callsite;
pub mod errors;
mod ffi;
pub mod launch;
pub mod procs;
pub mod reserve;
pub mod state;
