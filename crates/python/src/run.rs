//! Modules and launches for Python: arguments (NumPy arrays as byte buffers,
//! scalars as typed bits) laid out by the host library's `prepare`, one
//! `warpsim_host::launch`, arrays written back in place, and the results in
//! the words and numbers of `warpsim run` (`--json`, the terminal table, `--report`).

use crate::layout::{array_bytes, element_layout, lay_out, options, raise_for, scalar_type, written_read_only, Input, Raise};
use crate::{guarded, ArgumentError, Error, KernelFault, LaunchError, PtxError};
use pyo3::prelude::*;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};
use warpsim_engine::{LaunchError as EngineError, Progress};
use warpsim_host::{Dims, HostError, Kernel, LaunchOptions, LaunchSummary, Prepared};
use warpsim_launch::ScalarParam;

/// A `serde_json` value as the Python object `json.loads` makes of it.
pub(crate) fn json_to_py<'py>(py: Python<'py>, v: &serde_json::Value) -> PyResult<Bound<'py, PyAny>> {
    py.import("json")?.call_method1("loads", (v.to_string(),))
}

/// A host-library error as the Python exception for its kind, with warpsim's message.
fn host_error(e: HostError) -> PyErr {
    let msg = e.to_string();
    match raise_for(&e) {
        Raise::Ptx => PtxError::new_err(msg),
        Raise::Argument => ArgumentError::new_err(msg),
        Raise::Fault => KernelFault::new_err(msg),
        Raise::Launch => LaunchError::new_err(msg),
        Raise::Other => Error::new_err(msg),
    }
}

/// A kernel's `.entry` name, C++ signature and (name, PTX type, bytes) per parameter.
type KernelInfo = (String, Option<String>, Vec<(String, String, u32)>);

/// A PTX module: its text, its kernels compiled on first use.
#[pyclass(module = "warpsim._warpsim", frozen)]
pub struct Module {
    inner: Mutex<warpsim_host::Module>,
}

impl Module {
    fn kernel(&self, name: &str) -> PyResult<Kernel> {
        let mut m = self.inner.lock().map_err(|_| Error::new_err("module lock poisoned"))?;
        m.kernel(name).map_err(host_error)
    }
}

#[pymethods]
impl Module {
    /// A module from PTX text; `name` is what messages call it (a file name).
    #[new]
    fn new(name: String, ptx: String) -> Module {
        Module { inner: Mutex::new(warpsim_host::Module::from_ptx(name, ptx)) }
    }

    #[getter]
    fn name(&self) -> PyResult<String> {
        Ok(self.inner.lock().map_err(|_| Error::new_err("module lock poisoned"))?.name().to_string())
    }

    #[getter]
    fn ptx(&self) -> PyResult<String> {
        Ok(self.inner.lock().map_err(|_| Error::new_err("module lock poisoned"))?.source().to_string())
    }

    /// The `.entry` names, in source order.
    fn entries(&self) -> PyResult<Vec<String>> {
        guarded(|| self.inner.lock().map_err(|_| Error::new_err("module lock poisoned"))?.entries().map_err(host_error))
    }

    /// Kernel `name` (mangled, C++ name or unique prefix): its `.entry` name, its
    /// C++ signature when the name is mangled, and (name, PTX type, bytes) per parameter.
    fn kernel_info(&self, name: &str) -> PyResult<KernelInfo> {
        guarded(|| {
            let k = self.kernel(name)?;
            let params = k.ir().params.iter().map(|p| (p.name.clone(), p.ty.name().to_string(), p.size)).collect();
            Ok((k.name().to_string(), warpsim_ir::entry_names::demangle(k.name()), params))
        })
    }
}

/// An array's memory, as its `__array_interface__` describes it (NumPy's
/// protocol; the buffer protocol is not in Python's stable ABI before 3.11).
struct View<'py> {
    /// Keeps the array, and so its memory, alive.
    _array: Bound<'py, PyAny>,
    ptr: usize,
    len: usize,
    readonly: bool,
}

impl<'py> View<'py> {
    fn of(array: Bound<'py, PyAny>, name: &str) -> PyResult<View<'py>> {
        let bad = |why: &dyn std::fmt::Display| ArgumentError::new_err(format!("`{name}`: {why}"));
        let iface = array.getattr("__array_interface__").map_err(|_| bad(&"not an array (no __array_interface__)"))?;
        let (ptr, readonly): (usize, bool) = iface.get_item("data")?.extract()?;
        let shape: Vec<usize> = iface.get_item("shape")?.extract()?;
        let strided = !iface.get_item("strides")?.is_none();
        let typestr: String = iface.get_item("typestr")?.extract()?;
        let len = array_bytes(&typestr, &shape, strided, ptr).map_err(|e| bad(&e))?;
        Ok(View { _array: array, ptr, len, readonly })
    }

    fn bytes(&self) -> &[u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: NumPy's array interface says `len` bytes at `ptr` (C-contiguous) belong to
        // the array, which `_array` keeps alive; the GIL is held while the slice is used, so
        // no Python code resizes or frees it meanwhile.
        unsafe { std::slice::from_raw_parts(self.ptr as *const u8, self.len) }
    }

    /// Reads the device bytes at `ptr` into the array.
    fn write_back(&self, ctx: &warpsim_host::Context, ptr: warpsim_host::DevicePtr, name: &str) -> PyResult<()> {
        if self.readonly {
            return Err(ArgumentError::new_err(format!("`{name}` is read-only")));
        }
        if self.len == 0 {
            return Ok(());
        }
        // SAFETY: as in `bytes`, and the array is writable (checked above); nothing else
        // refers to its bytes while the GIL is held.
        let out = unsafe { std::slice::from_raw_parts_mut(self.ptr as *mut u8, self.len) };
        ctx.read(ptr, out, name).map_err(host_error)
    }
}

/// One argument from Python (a tuple made by `warpsim.Module.launch`): an
/// array's view, which keeps it alive, or a scalar's bits.
struct Arg<'py> {
    view: Option<View<'py>>,
    name: String,
    dtype: String,
    bits: u64,
}

fn parse_args<'py>(args: &[Bound<'py, PyAny>]) -> PyResult<Vec<Arg<'py>>> {
    args.iter()
        .map(|a| {
            let (kind, name, dtype, payload): (String, String, String, Bound<'py, PyAny>) = a.extract()?;
            match kind.as_str() {
                "buffer" => Ok(Arg { view: Some(View::of(payload, &name)?), name, dtype, bits: 0 }),
                "scalar" => Ok(Arg { view: None, name, dtype, bits: payload.extract()? }),
                _ => Err(ArgumentError::new_err(format!("unknown argument kind {kind:?}"))),
            }
        })
        .collect()
}

/// The launch's inputs over the arguments' bytes.
fn inputs<'a>(args: &'a [Arg<'_>]) -> PyResult<Vec<Input<'a>>> {
    args.iter()
        .map(|Arg { view, name, dtype, bits }| match view {
            Some(v) => {
                let (dtype, count) = element_layout(dtype, v.len as u64);
                Ok(Input::Buffer { name: name.clone(), dtype, count, bytes: v.bytes(), readonly: v.readonly })
            }
            None => {
                let ty = scalar_type(dtype).ok_or_else(|| ArgumentError::new_err(format!("`{name}`: unknown scalar type {dtype:?}")))?;
                Ok(Input::Scalar(ScalarParam { name: Some(name.clone()), ty, bits: *bits }))
            }
        })
        .collect()
}

/// Launches `kernel` of `module` over `args` (tuples made by `warpsim.Module.launch`):
/// copies the arrays in, runs, and writes the writable ones back in place.
#[pyfunction]
#[pyo3(signature = (module, kernel, grid, block, args, shared = 0, mode = "functional", gpu = "h200", check = false,
    max_instructions = 1 << 24, opt_in = false, report = false, lockstep = false, progress = false, strict_bounds = false,
    on_progress = None))]
#[allow(clippy::too_many_arguments)]
pub fn launch(
    py: Python<'_>,
    module: &Module,
    kernel: &str,
    grid: [u32; 3],
    block: [u32; 3],
    args: Vec<Bound<'_, PyAny>>,
    shared: u32,
    mode: &str,
    gpu: &str,
    check: bool,
    max_instructions: u64,
    opt_in: bool,
    report: bool,
    lockstep: bool,
    progress: bool,
    strict_bounds: bool,
    on_progress: Option<Bound<'_, PyAny>>,
) -> PyResult<Launch> {
    guarded(|| {
        let k = module.kernel(kernel)?;
        let parsed = parse_args(&args)?;
        let inputs = inputs(&parsed)?;
        let mut prepared = lay_out(&k, &inputs).map_err(host_error)?;
        let o = options(gpu, mode, report).map_err(|e| LaunchError::new_err(e.to_string()))?;
        let watch = Arc::new(Progress::default());
        let opts = LaunchOptions {
            warp_size: o.limits.warp_size,
            max_warp_instructions_per_block: max_instructions,
            metrics: true,
            check,
            lockstep,
            timing: o.timing,
            limits: Some(o.limits),
            shared_opt_in: opt_in,
            progress: Some(watch.clone()),
            serve_past_end: !strict_bounds,
            ..Default::default()
        };
        let dims = Dims::new(grid, block, shared);
        let nblocks = grid.iter().map(|&d| d as u64).product();
        let t0 = Instant::now();
        // `on_progress(blocks done, blocks, warp instructions, seconds)`, called on this
        // thread as the launch runs (Python's tqdm bar), replaces the CLI's progress line.
        let seen = watch.clone();
        let mut tick = || match &on_progress {
            Some(f) => {
                let load = |a: &std::sync::atomic::AtomicU64| a.load(std::sync::atomic::Ordering::Relaxed);
                f.call1((load(&seen.blocks), nblocks, load(&seen.warp_instructions), t0.elapsed().as_secs_f64())).map(|_| ())
            }
            None => Ok(()),
        };
        let quiet = !progress || on_progress.is_some();
        let r = interruptible(py, &watch.clone(), &mut tick, || {
            let _bar = warpsim::progress::watch(watch, nblocks, None, quiet);
            prepared.launch(&dims, &opts)
        })?;
        let secs = t0.elapsed().as_secs_f64();
        let summary = match r {
            Ok(s) => s,
            Err(e) => return Err(launch_error(py, e, &prepared, &dims)),
        };
        // A read-only array the kernel wrote is an error (its new contents would be lost).
        if let Some(name) = written_read_only(&prepared, &inputs).map_err(host_error)? {
            return Err(ArgumentError::new_err(format!(
                "`{name}` is a read-only array, but the kernel wrote to it; pass a writable array (e.g. `arr.copy()`) \
                 to get its new contents"
            )));
        }
        let views = parsed.iter().filter_map(|a| a.view.as_ref());
        for (b, view) in prepared.buffers.iter().zip(views).filter(|(_, v)| !v.readonly) {
            view.write_back(&prepared.ctx, b.ptr, &b.spec.name)?;
        }
        let resident = prepared.ctx.resident_bytes();
        Ok(Launch { kernel: prepared.kernel.clone(), dims, summary, secs, resident, timing_mode: mode == "timing" })
    })
}

/// Which launch of the process, its summary line, and its results unless it faulted.
type DriverLaunch<'py> = (u64, Bound<'py, PyAny>, Option<Launch>);

/// The in-process CUDA driver's last launch (Numba's, cuda.bindings'): which launch of
/// the process it was, its `WARPSIM_SUMMARY` line, and, unless it faulted, its results as
/// `launch` gives them; None before the first.
#[pyfunction]
pub fn driver_last_launch<'py>(py: Python<'py>) -> PyResult<Option<DriverLaunch<'py>>> {
    guarded(|| {
        // Without the GIL: a launch on another thread holds the driver until it ends.
        let last = py.detach(|| warpsim_cuda::state::lock().as_ref().and_then(|d| d.last.clone()));
        let Some(l) = last else { return Ok(None) };
        let line = json_to_py(py, &l.line)?;
        let launch = l.summary.map(|summary| Launch {
            kernel: l.kernel,
            dims: l.dims,
            summary,
            secs: l.secs,
            resident: l.resident,
            timing_mode: l.timing,
        });
        Ok(Some((l.number, line, launch)))
    })
}

/// How often a launch's caller looks for Python signals (Ctrl-C) while it runs.
const SIGNAL_POLL: Duration = Duration::from_millis(50);

/// Runs `f`, a launch watched by `progress`, on a thread of its own without
/// the GIL, while this thread (the main one, which Python's signal handlers
/// run on) checks for signals and calls `tick` (a progress bar) every
/// [`SIGNAL_POLL`]. When a handler or `tick` raises
/// (Ctrl-C: `KeyboardInterrupt`), the launch is told to stop, and its
/// exception comes back once the launch has stopped (within a slice of
/// instructions per running block).
fn interruptible<T: Send>(
    py: Python<'_>,
    progress: &Progress,
    tick: &mut dyn FnMut() -> PyResult<()>,
    f: impl FnOnce() -> T + Send,
) -> PyResult<T> {
    let done = (Mutex::new(None), Condvar::new());
    std::thread::scope(|s| {
        s.spawn(|| {
            let r = catch_unwind(AssertUnwindSafe(f));
            if let Ok(mut slot) = done.0.lock() {
                *slot = Some(r);
            }
            done.1.notify_all();
        });
        // The result, once there, waiting at most one poll for it.
        let take = || {
            let slot = done.0.lock().unwrap_or_else(|e| e.into_inner());
            let (mut slot, _) = done.1.wait_timeout_while(slot, SIGNAL_POLL, |r| r.is_none()).unwrap_or_else(|e| e.into_inner());
            slot.take()
        };
        let mut interrupted = None;
        let r = loop {
            if let Some(r) = py.detach(take) {
                break r;
            }
            if interrupted.is_none() {
                if let Err(e) = py.check_signals().and_then(|()| tick()) {
                    progress.stop.store(true, std::sync::atomic::Ordering::Relaxed);
                    interrupted = Some(e);
                }
            }
        };
        match (interrupted, r) {
            (Some(e), _) => Err(e),
            (None, Ok(v)) => Ok(v),
            // `guarded` turns the panic into `warpsim.Error`.
            (None, Err(p)) => std::panic::resume_unwind(p),
        }
    })
}

/// A launch's error as the Python exception for its kind; a fault names the
/// array and element of its address, as `warpsim run` does.
fn launch_error(py: Python<'_>, e: HostError, prepared: &Prepared, dims: &Dims) -> PyErr {
    let (fault, diagnostics) = match &e {
        HostError::Engine(EngineError::Fault(f)) => (f, None),
        HostError::CheckedFault { error: EngineError::Fault(f), diagnostics } => (f, Some(diagnostics)),
        _ => return host_error(e),
    };
    let msg = format!("{fault}{}", crate::cli_app::fault_hint(fault, prepared, dims));
    let err = KernelFault::new_err(msg);
    let d: Vec<serde_json::Value> = diagnostics.map(|d| d.iter().map(|x| x.to_json()).collect()).unwrap_or_default();
    if let Ok(v) = json_to_py(py, &serde_json::Value::Array(d)) {
        let _ = err.value(py).setattr("diagnostics", v);
    }
    err
}

/// What one launch produced: the numbers of `warpsim run --json`, its
/// terminal table and its HTML report.
#[pyclass(module = "warpsim._warpsim", frozen)]
pub struct Launch {
    kernel: Kernel,
    dims: Dims,
    summary: LaunchSummary,
    secs: f64,
    resident: u64,
    timing_mode: bool,
}

impl Launch {
    fn warp_size(&self) -> u32 {
        self.summary.metrics.as_ref().map_or(32, |m| m.totals.warp_size)
    }

    /// The timing model's report in timing mode (a functional launch's report run is not timing mode).
    fn timed(&self) -> Option<&warpsim_timing::TimingReport> {
        self.summary.timing.as_ref().filter(|_| self.timing_mode)
    }

    /// The table `warpsim run` prints for this launch.
    fn text(&self) -> String {
        let (s, k) = (&self.summary, &self.kernel);
        let st = &s.stats;
        let mut out = format!("kernel {}: grid {:?} x block {:?}\n", k.name(), self.dims.grid, self.dims.block);
        out += &format!("  blocks               {:>14}\n", st.blocks);
        out += &format!("  warps                {:>14}\n", st.warps);
        out += &format!("  warp instructions    {:>14} (PTX)\n", st.warp_instructions);
        if self.timed().is_none() {
            out += &format!("  thread instructions  {:>14}\n", st.thread_instructions);
        }
        if let Some(m) = &s.metrics {
            out += &format!("  as SASS, about       {:>14} (moves and parameter loads folded)\n", m.totals.insts.warp_insts);
            out += &m.render_summary();
        }
        match self.timed() {
            Some(t) => out += &t.render_text(),
            None => {
                let occ = crate::occupancy_cmd::launch_occupancy(k, self.dims.block, self.dims.dynamic_shared_bytes, self.warp_size());
                if let Some((_, line)) = occ {
                    out += &line;
                    out.push('\n');
                }
            }
        }
        let rate = warpsim::progress::rate(st.warp_instructions as f64 / self.secs.max(1e-9));
        out += &format!("  simulated in {:.3} s ({rate} warp instructions/s)\n", self.secs);
        if let Some(d) = &s.diagnostics {
            out += &format!("\n{}", warpsim::checking::render(d, false));
        }
        out
    }

    /// `warpsim run --json` (less `outputs` and `peak_rss_bytes`, which belong to a process).
    fn json(&self) -> serde_json::Value {
        let (s, k) = (&self.summary, &self.kernel);
        let st = &s.stats;
        let mut j = serde_json::json!({
            "kernel": k.name(), "grid": self.dims.grid, "block": self.dims.block,
            "blocks": st.blocks, "warps": st.warps,
            "warp_instructions": st.warp_instructions,
            "thread_instructions": st.thread_instructions,
            "threads_per_instruction": st.threads_per_instruction(),
            "sim_seconds": self.secs,
        });
        let m = s.metrics.as_ref();
        let extra = match self.timed() {
            Some(t) => serde_json::json!({
                "cycles": t.cycles, "metrics": serde_json::Value::Object(t.to_ncu_json()), "timing": t.to_json(),
            }),
            None => {
                let occ = crate::occupancy_cmd::launch_occupancy(k, self.dims.block, self.dims.dynamic_shared_bytes, self.warp_size());
                serde_json::json!({
                    "resident_global_bytes": self.resident,
                    "occupancy": occ.map(|(o, _)| o),
                    "metrics": m.map(|m| serde_json::Value::Object(m.totals.to_ncu_json())),
                    "diagnostics": s.diagnostics.as_ref().map(|d| d.iter().map(|x| x.to_json()).collect::<Vec<_>>()),
                })
            }
        };
        if let (Some(o), serde_json::Value::Object(e)) = (j.as_object_mut(), extra) {
            o.extend(e);
            o.insert("lines".into(), m.map(|m| serde_json::to_value(&m.lines).unwrap_or_default()).unwrap_or_default());
            if let Some(d) = &s.diagnostics {
                o.insert("diagnostics".into(), d.iter().map(|x| x.to_json()).collect::<Vec<_>>().into());
            }
        }
        j
    }
}

#[pymethods]
impl Launch {
    /// The numbers of `warpsim run --json` as a dict (plus `lines`, the per-line rows).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        guarded(|| json_to_py(py, &self.json()))
    }

    /// Cycles on the timing model (timing mode), else None.
    #[getter]
    fn cycles(&self) -> Option<u64> {
        self.timed().map(|t| t.cycles)
    }

    /// The device `printf` output of the launch.
    #[getter]
    fn printf(&self) -> String {
        self.summary.stats.printf.clone()
    }

    /// Global accesses past an allocation's exact end that were served as a
    /// GPU serves them: (how many, the first ones with their place).
    #[getter]
    fn past_end(&self) -> (u64, Vec<String>) {
        let s = &self.summary.stats;
        (s.past_end_count, s.past_end.iter().map(|f| f.to_string()).collect())
    }

    /// The table `warpsim run` prints for this launch.
    fn summary(&self) -> PyResult<String> {
        guarded(|| Ok(self.text()))
    }

    /// The self-contained HTML report `warpsim run --report` writes.
    fn html(&self) -> PyResult<String> {
        guarded(|| {
            let (s, k) = (&self.summary, &self.kernel);
            let m = s.metrics.as_ref().ok_or_else(|| Error::new_err("the launch gathered no metrics"))?;
            let (timeline, note) = match s.timing.as_ref().filter(|t| t.timeline.is_some()) {
                Some(t) => (
                    Some(warpsim::reporting::timeline_of(t, 400_000)),
                    format!("From the timing model ({} preset), in the same run as the rest of this report.", t.gpu.to_uppercase()),
                ),
                None => (None, "No timeline: launch with report=True (or mode=\"timing\", report=True) to record one.".to_string()),
            };
            let rep = warpsim::reporting::build_report(
                k.program(),
                k.name(),
                self.dims.grid,
                self.dims.block,
                self.dims.dynamic_shared_bytes,
                self.warp_size(),
                &s.stats,
                m,
                s.timing.as_ref(),
                timeline,
                note,
                warpsim::reporting::Checked { diagnostics: s.diagnostics.as_deref(), fault: None },
            );
            Ok(warpsim_report::html(&rep))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::tests::{f32_bytes, n, scale_kernel};

    /// The scale kernel over 32 threads of which `active` have an element, as `launch` runs it.
    fn launched(active: u32, mode: &str, check: bool) -> Launch {
        let (zeros, x) = (vec![0u8; 128], f32_bytes(&[1.5; 32]));
        let (dtype, count) = element_layout("f32", 128);
        let inputs = [
            Input::Buffer { name: "out".into(), dtype, count, bytes: &zeros, readonly: false },
            Input::Buffer { name: "x".into(), dtype, count, bytes: &x, readonly: true },
            n(active),
        ];
        let mut prepared = lay_out(&scale_kernel(), &inputs).unwrap();
        let o = options("h200", mode, false).unwrap();
        let opts = LaunchOptions { metrics: true, check, timing: o.timing, limits: Some(o.limits), ..Default::default() };
        let dims = Dims::new([1, 1, 1], [32, 1, 1], 0);
        let summary = prepared.launch(&dims, &opts).unwrap();
        let resident = prepared.ctx.resident_bytes();
        Launch { kernel: prepared.kernel.clone(), dims, summary, secs: 0.5, resident, timing_mode: mode == "timing" }
    }

    #[test]
    fn results_carry_warpsim_runs_numbers() {
        let (full, half) = (launched(32, "functional", false), launched(16, "functional", false));
        let (jf, jh) = (full.json(), half.json());
        assert_eq!(jf["kernel"], "_Z5scalePfPKfi");
        assert_eq!((jf["blocks"].as_u64(), jf["warps"].as_u64()), (Some(1), Some(1)));
        // Half the lanes skip the loads and stores: fewer threads per instruction.
        assert_eq!(jf["threads_per_instruction"].as_f64(), Some(32.0));
        let tpi = jh["threads_per_instruction"].as_f64().unwrap();
        assert!(tpi < 32.0 && tpi > 16.0, "{tpi}");
        assert!(jf["metrics"].as_object().is_some_and(|m| !m.is_empty()));
        assert!(jf["occupancy"].is_object() && jf["cycles"].is_null() && jf["diagnostics"].is_null());
        assert!(jf["lines"].as_array().is_some_and(|l| !l.is_empty()), "per-line rows");
        let text = full.text();
        let insts = jf["warp_instructions"].as_u64().unwrap();
        assert!(text.contains(&format!("warp instructions    {insts:>14} (PTX)")), "{text}");
        assert!(text.contains("thread instructions") && text.contains("simulated in 0.500 s"), "{text}");
    }

    #[test]
    fn timed_and_checked_results_carry_cycles_and_diagnostics() {
        let t = launched(32, "timing", false);
        let j = t.json();
        let cycles = j["cycles"].as_u64().unwrap();
        assert_eq!(t.cycles(), Some(cycles));
        assert!(cycles > 0 && j["timing"].is_object());
        assert!(!t.text().contains("thread instructions"), "the timing model's table has no thread instructions");
        let c = launched(32, "functional", true);
        assert!(c.json()["diagnostics"].is_array());
        assert_eq!(c.cycles(), None);
    }
}
