//! The driver's state: one simulated device and context, what the program
//! loaded and allocated, and the objects it holds handles to. One global
//! mutex guards it all; launches run while it is held.

use crate::errors::*;
use crate::reserve::{self, Reserved};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;
use warpsim_gpu::GpuPreset;
use warpsim_host::{Context, DevicePtr, Kernel, LaunchOptions, Module, TimingMode};

/// What the environment asks of the driver (see the crate header).
#[derive(Clone, Debug, Default)]
pub struct Settings {
    pub gpu: String,
    pub timing: bool,
    pub check: bool,
    /// Fault at an allocation's exact end instead of serving past it (`WARPSIM_STRICT_BOUNDS=1`).
    pub strict_bounds: bool,
    pub summary: Option<String>,
    pub report: Option<String>,
    pub trace: Option<String>,
    /// A progress line on stderr for launches that run over a second, when stderr is a
    /// terminal (`WARPSIM_PROGRESS=0` turns it off).
    pub progress: bool,
}

impl Settings {
    pub fn from_env() -> Settings {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        Settings {
            gpu: var("WARPSIM_GPU").unwrap_or_else(|| "h200".into()),
            timing: var("WARPSIM_MODE").is_some_and(|m| m == "timing"),
            check: var("WARPSIM_CHECK").is_some_and(|v| v != "0"),
            strict_bounds: var("WARPSIM_STRICT_BOUNDS").is_some_and(|v| v != "0"),
            summary: var("WARPSIM_SUMMARY"),
            report: var("WARPSIM_REPORT"),
            trace: var("WARPSIM_TRACE"),
            progress: var("WARPSIM_PROGRESS").is_none_or(|v| v != "0") && std::io::IsTerminal::is_terminal(&std::io::stderr()),
        }
    }
}

/// Host memory the device sees at `dev`: managed and pinned allocations
/// (host and device address are one) and registered host ranges. Between
/// launches the host bytes are the truth; each launch copies them in before
/// and back after (launches are synchronous).
#[derive(Copy, Clone, Debug)]
pub struct Mapped {
    pub host: u64,
    pub len: u64,
    pub kind: MappedKind,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum MappedKind {
    Managed,
    Pinned,
    Registered,
}

/// One PTX unit of a module (a `-rdc` image or a link of several PTX inputs has one per
/// input, each linked with what it uses of the others), parsed on first use.
pub struct Unit {
    pub host: Module,
}

pub struct ModuleState {
    pub units: Vec<Unit>,
    /// Kernel name -> function handle.
    pub functions: HashMap<String, usize>,
    /// Module variables by name: (address, bytes), allocated when the first kernel using one
    /// compiles. One object per name across the units (a `__device__` variable one unit defines
    /// and another uses); a variable declared inside a function is its unit's own.
    pub globals: HashMap<String, (u64, u64)>,
}

/// The module-wide key of variable `name` of unit `unit` (function-scoped variables, whose
/// program names hold an `@`, stay per unit).
fn global_key(unit: usize, name: &str) -> String {
    if name.contains('@') {
        format!("{unit}:{name}")
    } else {
        name.to_string()
    }
}

pub struct Func {
    pub module: usize,
    pub unit: usize,
    pub name: String,
    pub kernel: Option<Kernel>,
    pub max_dynamic_shared: i32,
}

#[derive(Default)]
pub struct Event {
    /// Milliseconds on the driver's clock when last recorded.
    pub at: Option<f64>,
}

#[derive(Default)]
pub struct Linker {
    /// The inputs: (name for messages, PTX).
    pub ptx: Vec<(String, String)>,
    pub blob: Vec<u8>,
    /// `CU_JIT_ERROR_LOG_BUFFER` and its size in bytes (0 if none given).
    pub error_log: (usize, usize),
}

/// Per-kernel summary line fields, as `WARPSIM_SUMMARY` writes them.
pub struct Driver {
    pub settings: Settings,
    pub preset: Arc<GpuPreset>,
    pub opts: LaunchOptions,
    pub ctx: Context,
    pub reserved: Option<Reserved>,
    pub mapped: BTreeMap<u64, Mapped>,
    pub modules: HashMap<usize, ModuleState>,
    pub funcs: HashMap<usize, Func>,
    pub streams: HashMap<usize, ()>,
    pub events: HashMap<usize, Event>,
    pub linkers: HashMap<usize, Linker>,
    next_handle: usize,
    /// The fault of an earlier launch: every later call returns it.
    pub sticky: Option<CUresult>,
    pub launches: u64,
    /// Timing mode: simulated milliseconds so far (launch after launch).
    pub sim_ms: f64,
    pub t0: Instant,
    last_ms: f64,
    pub primary_active: bool,
    /// `WARPSIM_TRACE`: the events of all launches so far, and the cycles they span.
    pub traces: Vec<serde_json::Value>,
    pub trace_cycles: u64,
    /// `WARPSIM_REPORT`: (kernel, page) per launch reported.
    pub reported: Vec<(String, String)>,
    /// The last launch, for an in-process reader (`warpsim.last_launch()` in Python).
    pub last: Option<crate::launch::LastLaunch>,
}

/// The primary context's handle (there is one device and one context).
pub const PRIMARY_CTX: usize = 0x5157_0000;

/// Memory the preset's GPU has, about as its driver reports it.
pub fn total_mem(preset: &GpuPreset) -> u64 {
    match preset.key.as_str() {
        "t4" => 15_642_329_088,
        "a100" => 85_097_971_712,
        "h100" => 84_943_110_144,
        "mi300x" => 205_822_885_888,
        _ => 150_110_011_392,
    }
}

impl Driver {
    fn new() -> Result<Driver, CUresult> {
        let settings = Settings::from_env();
        // A built-in name or a preset file with an optional timing section.
        let timing_gpu = warpsim_timing::TimingGpu::resolve(&settings.gpu).map_err(|e| {
            eprintln!("warpsim: WARPSIM_GPU: {e}");
            CUDA_ERROR_NO_DEVICE
        })?;
        let preset = timing_gpu.preset.clone();
        let mut opts = LaunchOptions {
            warp_size: preset.warp_size,
            metrics: settings.summary.is_some() || settings.report.is_some(),
            check: settings.check,
            serve_past_end: !settings.strict_bounds,
            limits: Some(Arc::new(preset.clone())),
            ..Default::default()
        };
        if settings.timing || settings.report.is_some() || settings.trace.is_some() {
            let timeline = settings.trace.is_some() || settings.report.is_some();
            opts.timing = Some(TimingMode { gpu: Arc::new(timing_gpu), timeline });
        }
        if opts.check {
            // The checkers run on the functional engine.
            opts.timing = None;
        }
        if settings.trace.is_some() {
            // SAFETY: registering a plain `extern "C"` function with no arguments.
            unsafe { libc::atexit(write_trace_at_exit) };
        }
        crate::callsite::WANTED.store(settings.check || settings.report.is_some(), std::sync::atomic::Ordering::Relaxed);
        let reserved = reserve::reserve();
        let ctx = match reserved {
            Some(r) => Context::with_base(r.base),
            None => Context::new(),
        };
        Ok(Driver {
            settings,
            preset: Arc::new(preset),
            opts,
            ctx,
            reserved,
            mapped: BTreeMap::new(),
            modules: HashMap::new(),
            funcs: HashMap::new(),
            streams: HashMap::new(),
            events: HashMap::new(),
            linkers: HashMap::new(),
            next_handle: 0x5157_1000,
            sticky: None,
            launches: 0,
            last: None,
            sim_ms: 0.0,
            t0: Instant::now(),
            last_ms: 0.0,
            primary_active: false,
            traces: Vec::new(),
            trace_cycles: 0,
            reported: Vec::new(),
        })
    }

    /// A fresh handle value (never reused, never null, distinct across kinds).
    pub fn handle(&mut self) -> usize {
        self.next_handle += 16;
        self.next_handle
    }

    /// `Err` with the sticky error of an earlier faulted launch.
    pub fn healthy(&self) -> Result<(), CUresult> {
        match self.sticky {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// The clock events read: simulated time in timing mode, host time
    /// otherwise; strictly increasing, so elapsed times are never zero.
    pub fn now_ms(&mut self) -> f64 {
        let t = if self.opts.timing.is_some() { self.sim_ms } else { self.t0.elapsed().as_secs_f64() * 1e3 };
        self.last_ms = t.max(self.last_ms + 1e-3);
        self.last_ms
    }

    /// Device memory: `len` bytes, zeroed.
    pub fn alloc(&mut self, len: u64, name: &str) -> Result<u64, CUresult> {
        let p = self.ctx.alloc(name, len.max(1), None);
        if let Some(r) = self.reserved {
            if p.0 + len > r.base + r.len {
                let _ = self.ctx.free(p);
                return Err(CUDA_ERROR_OUT_OF_MEMORY);
            }
        }
        Ok(p.0)
    }

    /// Host memory at a device address: managed or pinned.
    pub fn alloc_mapped(&mut self, len: u64, kind: MappedKind) -> Result<u64, CUresult> {
        if self.reserved.is_none() {
            return Err(CUDA_ERROR_NOT_SUPPORTED);
        }
        let p = self.alloc(len, if kind == MappedKind::Managed { "managed" } else { "host" })?;
        if !reserve::map_host(p, len) {
            let _ = self.ctx.free(DevicePtr(p));
            return Err(CUDA_ERROR_OUT_OF_MEMORY);
        }
        self.mapped.insert(p, Mapped { host: p, len, kind });
        Ok(p)
    }

    /// Frees device or mapped memory at its base.
    pub fn free(&mut self, p: u64) -> Result<(), CUresult> {
        if let Some(m) = self.mapped.get(&p).copied() {
            if m.kind == MappedKind::Registered {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            self.mapped.remove(&p);
            reserve::unmap_host(p, m.len);
        }
        self.ctx.free(DevicePtr(p)).map_err(|_| CUDA_ERROR_INVALID_VALUE)
    }

    /// The mapped range holding device address `p`, and the offset in it.
    pub fn mapped_at(&self, p: u64) -> Option<(u64, Mapped)> {
        let (&base, m) = self.mapped.range(..=p).next_back()?;
        (p - base < m.len).then_some((base, *m))
    }

    /// Whether device memory (not host-backed) holds `[p, p + len)`.
    pub fn is_device(&self, p: u64, len: u64) -> bool {
        self.mapped_at(p).is_none() && self.ctx.memory().find_range(p, p + len.max(1)).is_some()
    }

    /// The device allocation holding `p`: (base, bytes).
    pub fn allocation_of(&self, p: u64) -> Option<(u64, u64)> {
        self.ctx.memory().find(p).map(|a| (a.base, a.size))
    }

    /// Copies the host bytes of every mapped range into the simulated memory.
    pub fn mapped_to_device(&self) {
        for (&dev, m) in &self.mapped {
            // SAFETY: `m.host` is memory of `m.len` bytes that this library mapped or the
            // program registered as live.
            let bytes = unsafe { std::slice::from_raw_parts(m.host as *const u8, m.len as usize) };
            let _ = self.ctx.write(DevicePtr(dev), bytes);
        }
    }

    /// Copies the simulated bytes of every mapped range back to the host.
    pub fn mapped_to_host(&self) {
        for (&dev, m) in &self.mapped {
            // SAFETY: as in `mapped_to_device`; nothing else touches the memory during the call.
            let bytes = unsafe { std::slice::from_raw_parts_mut(m.host as *mut u8, m.len as usize) };
            let _ = self.ctx.read(DevicePtr(dev), bytes, "mapped memory");
        }
    }

    /// The compiled kernel of function `f` (compiled on first use, with the module's
    /// variables shared among all its kernels).
    pub fn kernel(&mut self, f: usize) -> Result<Kernel, CUresult> {
        let func = self.funcs.get(&f).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
        if let Some(k) = &func.kernel {
            return Ok(k.clone());
        }
        let (m, u, name) = (func.module, func.unit, func.name.clone());
        let unit = self.modules.get_mut(&m).and_then(|m| m.units.get_mut(u)).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
        let k = unit.host.kernel(&name).map_err(|e| {
            eprintln!("warpsim: cannot run kernel `{name}`: {e}");
            CUDA_ERROR_INVALID_PTX
        })?;
        let globals = self.alloc_globals(m, u, &k);
        self.ctx.bind_globals(&k, globals);
        if let Some(func) = self.funcs.get_mut(&f) {
            func.kernel = Some(k.clone());
        }
        Ok(k)
    }

    /// A module variable of module `m`: (address, bytes). The first kernel of
    /// a unit declaring it is compiled for the variable list.
    pub fn global(&mut self, m: usize, name: &str) -> Result<(u64, u64), CUresult> {
        let module = self.modules.get(&m).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
        if let Some(&g) = module.globals.get(name) {
            return Ok(g);
        }
        let decl = |src: &str| src.contains(name);
        let units: Vec<usize> = (0..module.units.len()).filter(|&u| decl(module.units[u].host.source())).collect();
        for unit in units {
            let entries = self.modules[&m].units[unit].host.entries().map_err(|_| CUDA_ERROR_INVALID_PTX)?;
            for e in entries {
                let f = self.function(m, unit, &e);
                if self.kernel(f).is_ok() {
                    break;
                }
            }
            if let Some(&g) = self.modules[&m].globals.get(name) {
                return Ok(g);
            }
        }
        Err(CUDA_ERROR_NOT_FOUND)
    }

    /// The function handle of kernel `name` of unit `unit` of module `m` (made once).
    pub fn function(&mut self, m: usize, unit: usize, name: &str) -> usize {
        if let Some(&f) = self.modules.get(&m).and_then(|s| s.functions.get(name)) {
            return f;
        }
        let f = self.handle();
        self.funcs.insert(f, Func { module: m, unit, name: name.to_string(), kernel: None, max_dynamic_shared: 0 });
        if let Some(s) = self.modules.get_mut(&m) {
            s.functions.insert(name.to_string(), f);
        }
        f
    }
}

impl Driver {
    /// The addresses of `kernel`'s module variables (it is a kernel of unit `u` of module `m`),
    /// allocating those the module has not yet (as the engine does for a program); a
    /// `__managed__` one gets managed memory, which the host code reads and writes directly.
    fn alloc_globals(&mut self, m: usize, u: usize, kernel: &Kernel) -> HashMap<String, u64> {
        let p = kernel.program();
        let mut known = self.modules.get_mut(&m).map(|s| std::mem::take(&mut s.globals)).unwrap_or_default();
        let mut fresh = Vec::new();
        let mut host_backed = Vec::new();
        for g in &p.globals {
            let key = global_key(u, &g.name);
            if known.contains_key(&key) {
                continue;
            }
            let managed = if g.managed { self.alloc_mapped(g.size.max(1), MappedKind::Managed).ok() } else { None };
            let a = match managed {
                Some(a) => {
                    // SAFETY: `alloc_mapped` mapped `size` bytes of host memory at `a`.
                    unsafe { std::ptr::copy_nonoverlapping(g.init.as_ptr(), a as *mut u8, g.init.len().min(g.size as usize)) };
                    host_backed.push(g.name.clone());
                    a
                }
                None => {
                    let filler: Arc<dyn warpsim_engine::Filler> = Arc::new(warpsim_engine::memory::BytesFiller(g.init.clone()));
                    self.ctx.alloc(&g.name, g.size.max(1), Some(filler)).0
                }
            };
            known.insert(key, (a, g.size));
            fresh.push(g);
        }
        for g in fresh {
            let Some(&(base, size)) = known.get(&global_key(u, &g.name)) else { continue };
            for (off, sym, add) in &g.relocs {
                if let Some(&(a, _)) = known.get(&global_key(u, sym)) {
                    let bytes = a.wrapping_add(*add as u64).to_le_bytes();
                    if host_backed.contains(&g.name) {
                        if off + 8 <= size {
                            // SAFETY: inside the variable's mapped host memory (checked above).
                            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), (base + off) as *mut u8, 8) };
                        }
                    } else {
                        let _ = self.ctx.write(DevicePtr(base + off), &bytes);
                    }
                }
            }
        }
        let bound = p.globals.iter().filter_map(|g| Some((g.name.clone(), known.get(&global_key(u, &g.name))?.0))).collect();
        if let Some(s) = self.modules.get_mut(&m) {
            s.globals = known;
        }
        bound
    }
}

static DRIVER: Mutex<Option<Driver>> = Mutex::new(None);

/// Writes `WARPSIM_TRACE` when the program exits (unless a launch is still running).
extern "C" fn write_trace_at_exit() {
    if let Ok(g) = DRIVER.try_lock() {
        if let Some(d) = g.as_ref() {
            d.write_trace();
        }
    }
}

/// The driver's state, made on first use (by `cuInit`).
pub fn lock() -> MutexGuard<'static, Option<Driver>> {
    DRIVER.lock().unwrap_or_else(|e| e.into_inner())
}

/// Creates the state if need be (`cuInit`).
pub fn init() -> Result<(), CUresult> {
    let mut g = lock();
    if g.is_none() {
        *g = Some(Driver::new()?);
    }
    Ok(())
}

/// Makes a new object with `make` (given its handle) and puts the handle in `*out`.
///
/// # Safety
/// `out` is null or valid for a write of a handle.
pub unsafe fn create(out: *mut crate::ffi::Handle, make: impl FnOnce(&mut Driver, usize)) -> Result<(), CUresult> {
    let v = with(|d| {
        let v = d.handle();
        make(d, v);
        Ok(v)
    })?;
    // SAFETY: as the caller guarantees.
    unsafe { crate::ffi::put(out, crate::ffi::to_handle(v)) }
}

/// Runs `f` on the initialised state.
pub fn with<R>(f: impl FnOnce(&mut Driver) -> Result<R, CUresult>) -> Result<R, CUresult> {
    let mut g = lock();
    match g.as_mut() {
        Some(d) => f(d),
        None => Err(CUDA_ERROR_NOT_INITIALIZED),
    }
}
