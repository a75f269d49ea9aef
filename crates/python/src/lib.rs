//! `warpsim._warpsim`, the compiled half of the Python package: PTX modules,
//! launches on NumPy arrays through the same host library as `warpsim run`,
//! the `warpsim` command (the CLI's own `main`, included from
//! `crates/cli/src/main.rs`), and, by linking `warpsim-cuda`, the CUDA driver
//! API that `warpsim.numba` points Numba at (a cdylib exports the
//! `#[no_mangle]` functions of its dependencies). It also takes the driver's
//! soname, `libcuda.so.1` (build.rs), which is how `cuda.bindings` finds it.
//!
//! Every entry point catches panics and turns them, like every warpsim error,
//! into a Python exception (`warpsim.Error` and its subclasses).

mod layout;
mod run;

use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use std::panic::{catch_unwind, AssertUnwindSafe};

// The command line, compiled once more inside the extension so that the
// wheel's `warpsim` command is the binary's own code (nothing is copied).
#[path = "../../cli/src/main.rs"]
#[allow(dead_code, clippy::all)]
mod cli_app;

// `warpsim run`'s occupancy line and JSON, shared with `launch`'s results.
#[path = "../../cli/src/occupancy_cmd.rs"]
#[allow(dead_code)]
mod occupancy_cmd;

/// Keeps warpsim-cuda's code in the link: the linker takes an rlib's object
/// only when something refers to it, and `cuGetProcAddress`'s table refers to
/// every driver function, so all of them are in the extension and exported.
#[used]
static DRIVER: unsafe extern "C" fn(
    *const std::ffi::c_char,
    *mut *mut std::ffi::c_void,
    std::ffi::c_int,
    u64,
    *mut std::ffi::c_int,
) -> warpsim_cuda::errors::CUresult = warpsim_cuda::api_core::cuGetProcAddress_v2;

pyo3::create_exception!(_warpsim, Error, PyException, "Every error warpsim raises.");
pyo3::create_exception!(_warpsim, PtxError, Error, "The PTX (or CUDA source) does not parse or compile, or has no such kernel.");
pyo3::create_exception!(_warpsim, LaunchError, Error, "The launch is refused: its shape, its arguments or the GPU's limits.");
pyo3::create_exception!(_warpsim, KernelFault, Error, "The kernel faulted while running (out of bounds, misaligned, deadlock, trap, ...).");
pyo3::create_exception!(_warpsim, ArgumentError, LaunchError, "An argument does not fit the kernel's parameter.");

/// Runs `f`, turning a panic into `warpsim.Error` instead of unwinding into Python.
pub(crate) fn guarded<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => {
            let what = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(Error::new_err(format!("internal error in warpsim (please report it): {what}")))
        }
    }
}

/// The `warpsim` command on `argv` (the program's name first); returns its exit status.
#[pyfunction]
fn main(argv: Vec<std::ffi::OsString>) -> PyResult<i32> {
    guarded(|| {
        // The command exits the process itself on error; success returns here.
        cli_app::main_from_args(argv);
        use std::io::Write;
        let _ = std::io::stdout().flush();
        Ok(0)
    })
}

/// Compiles a `.cu` file to PTX as `warpsim run` does (nvcc, else clang),
/// keeping the PTX in `out_dir`; a `.ptx` file is read. Returns (name, PTX text,
/// the compiler's path or None), saying nothing on stderr (`Module(verbose=True)` does).
#[pyfunction]
#[pyo3(signature = (path, out_dir, clang_args = Vec::new()))]
fn load_kernel_file(
    py: Python<'_>,
    path: std::path::PathBuf,
    out_dir: std::path::PathBuf,
    clang_args: Vec<String>,
) -> PyResult<(String, String, Option<String>)> {
    guarded(|| {
        py.detach(|| warpsim::cuda::kernel_file_ptx(&path, &out_dir, &clang_args))
            .map(|(name, ptx, compiler)| (name, ptx, compiler.map(|c| c.display().to_string())))
            .map_err(|e| PtxError::new_err(format!("{e:#}")))
    })
}

/// `warpsim occupancy`'s numbers as a dict: blocks and warps per SM of `gpu`
/// for blocks of `block` threads, `regs` registers per thread, `shared` bytes.
#[pyfunction]
#[pyo3(signature = (block, regs, gpu = "h200", shared = 0, static_shared = 0, opt_in = false))]
fn occupancy<'py>(
    py: Python<'py>,
    block: u32,
    regs: u32,
    gpu: &str,
    shared: u32,
    static_shared: u32,
    opt_in: bool,
) -> PyResult<Bound<'py, PyAny>> {
    guarded(|| {
        let preset = occupancy_cmd::load_preset(gpu).map_err(|e| LaunchError::new_err(format!("{e:#}")))?;
        let input = warpsim_gpu::OccupancyInput::new(block, regs).shared(static_shared, shared).opt_in(opt_in);
        let o = warpsim_gpu::occupancy(&preset, &input).map_err(|e| LaunchError::new_err(e.to_string()))?;
        let mut j = o.to_json();
        if let Some(m) = j.as_object_mut() {
            m.insert("gpu".into(), preset.key.clone().into());
            m.insert("regs_per_thread".into(), regs.into());
            m.insert("regs_estimated".into(), false.into());
        }
        run::json_to_py(py, &j)
    })
}

/// The GPU presets built in.
#[pyfunction]
fn presets() -> Vec<String> {
    warpsim_gpu::GpuPreset::names().iter().map(|s| s.to_string()).collect()
}

#[pymodule]
fn _warpsim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("Error", py.get_type::<Error>())?;
    m.add("PtxError", py.get_type::<PtxError>())?;
    m.add("LaunchError", py.get_type::<LaunchError>())?;
    m.add("KernelFault", py.get_type::<KernelFault>())?;
    m.add("ArgumentError", py.get_type::<ArgumentError>())?;
    m.add_class::<run::Module>()?;
    m.add_class::<run::Launch>()?;
    m.add_function(wrap_pyfunction!(main, m)?)?;
    m.add_function(wrap_pyfunction!(load_kernel_file, m)?)?;
    m.add_function(wrap_pyfunction!(occupancy, m)?)?;
    m.add_function(wrap_pyfunction!(presets, m)?)?;
    m.add_function(wrap_pyfunction!(run::launch, m)?)?;
    m.add_function(wrap_pyfunction!(run::driver_last_launch, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
