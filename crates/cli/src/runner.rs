//! Runs one launch (a corpus case or a `warpsim run` command line): compiles
//! the kernel, allocates and initialises buffers lazily, launches, and checks
//! or returns the outputs.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;
use warpsim_check::{CheckOptions, Diagnostic};
use warpsim_engine::{alloc_module_globals, launch, launch_observed, GlobalMemory, LaunchConfig, LaunchError, LaunchStats, Schedule};
use warpsim_ir::Program;
use warpsim_launch::{check::Checker, BufferInit, Case, CheckResult, Init, NamedInit, ParamSpec, Role};
use warpsim_metrics::{LaunchMetrics, MetricsObserver};

/// Engine settings that are not part of a case.
#[derive(Clone, Debug)]
pub struct RunOptions {
    pub warp_size: u32,
    pub num_sms: u32,
    pub serial: bool,
    pub max_warp_instructions_per_block: u64,
    /// Gather warp-level metrics (sectors, wavefronts, divergence) while running.
    pub metrics: bool,
    /// The order in which the lane groups of a warp run.
    pub schedule: Schedule,
    /// Run the checkers (`warpsim check`): races, barriers, sync masks, bounds, uninitialised reads.
    pub check: bool,
    /// Check as on pre-Volta GPUs (lanes of a warp in lockstep).
    pub lockstep: bool,
    /// Timing mode: run on the cycle model of this GPU instead of the functional scheduler.
    pub timing: Option<TimingMode>,
}

/// Timing mode settings (`--mode timing --gpu NAME|FILE`).
#[derive(Clone, Debug)]
pub struct TimingMode {
    pub gpu: std::sync::Arc<warpsim_timing::TimingGpu>,
    /// Record the per-sub-partition warp timeline.
    pub timeline: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        let d = LaunchConfig::default();
        RunOptions {
            warp_size: 32,
            num_sms: d.num_sms,
            serial: false,
            max_warp_instructions_per_block: d.max_warp_instructions_per_block,
            metrics: false,
            schedule: Schedule::Simt,
            check: false,
            lockstep: false,
            timing: None,
        }
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CaseStatus {
    Pass,
    Fail,
    Error,
}

impl CaseStatus {
    pub fn name(self) -> &'static str {
        match self {
            CaseStatus::Pass => "pass",
            CaseStatus::Fail => "fail",
            CaseStatus::Error => "error",
        }
    }
}

/// What happened to one case.
#[derive(Clone, Debug)]
pub struct CaseOutcome {
    pub name: String,
    pub status: CaseStatus,
    pub outputs_match: bool,
    pub error: Option<String>,
    pub stats: LaunchStats,
    pub sim_seconds: f64,
    pub checks: Vec<CheckResult>,
    pub metrics: Option<LaunchMetrics>,
    /// What the checkers found (`--check`).
    pub diagnostics: Option<Vec<Diagnostic>>,
    /// Timing mode: cycles, occupancy, stalls, traffic.
    pub timing: Option<warpsim_timing::TimingReport>,
}

impl CaseOutcome {
    /// The JSON object `warpsim corpus --json` prints for this case.
    pub fn to_json(&self) -> serde_json::Value {
        let mut j = serde_json::json!({
            "name": self.name,
            "status": self.status.name(),
            "outputs_match": self.outputs_match,
            "error": self.error,
            "warp_instructions": self.stats.warp_instructions,
            "thread_instructions": self.stats.thread_instructions,
            "sim_seconds": self.sim_seconds,
            "checks": self.checks.iter().map(|c| serde_json::json!({
                "buffer": c.buffer, "method": c.method.name(), "matched": c.matched, "message": c.message,
            })).collect::<Vec<_>>(),
            "metrics": match &self.metrics {
                Some(m) => serde_json::Value::Object(m.totals.to_ncu_json()),
                None => serde_json::json!({
                    "smsp__inst_executed.sum": self.stats.warp_instructions,
                    "smsp__thread_inst_executed.sum": self.stats.thread_instructions,
                    "smsp__thread_inst_executed_per_inst_executed.ratio": self.stats.threads_per_instruction(),
                }),
            },
        });
        if let (Some(d), Some(o)) = (&self.diagnostics, j.as_object_mut()) {
            o.insert("diagnostics".into(), d.iter().map(Diagnostic::to_json).collect());
        }
        if let Some(t) = &self.timing {
            // `cycles` compares with the H200's `sm__cycles_elapsed.max`; the timing metrics join the others.
            j["cycles"] = serde_json::json!(t.cycles);
            if let Some(m) = j["metrics"].as_object_mut() {
                m.extend(t.to_ncu_json());
            }
            j["timing"] = t.to_json();
        }
        j
    }
}

/// PTX files compiled once per kernel.
#[derive(Default)]
pub struct ProgramCache {
    sources: HashMap<PathBuf, String>,
    programs: HashMap<(PathBuf, String), std::sync::Arc<Program>>,
}

impl ProgramCache {
    pub fn get(&mut self, path: &Path, kernel: &str) -> Result<std::sync::Arc<Program>, String> {
        let key = (path.to_path_buf(), kernel.to_string());
        if let Some(p) = self.programs.get(&key) {
            return Ok(p.clone());
        }
        if !self.sources.contains_key(path) {
            let src = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
            self.sources.insert(path.to_path_buf(), src);
        }
        let src = &self.sources[path];
        let name = path.display().to_string();
        let prog = warpsim_ir::compile_kernel(&name, src, kernel).map_err(|e| e.to_string())?;
        let prog = std::sync::Arc::new(prog);
        self.programs.insert(key, prog.clone());
        Ok(prog)
    }
}

/// A prepared launch: program, memory with buffers allocated, parameter bytes.
pub struct Prepared {
    pub program: std::sync::Arc<Program>,
    pub kernel: String,
    pub mem: GlobalMemory,
    pub globals: HashMap<String, u64>,
    pub params: Vec<u8>,
    /// (buffer, base address, byte length).
    pub buffers: Vec<(warpsim_launch::BufferSpec, u64, u64)>,
}

/// Compiles the kernel and lays out memory and parameters for `params`.
pub fn prepare(program: std::sync::Arc<Program>, kernel: &str, params: &[ParamSpec]) -> Result<Prepared, String> {
    let k = program.kernel(kernel).ok_or_else(|| format!("no kernel `{kernel}`"))?;
    if k.params.len() != params.len() {
        return Err(format!("kernel `{kernel}` takes {} parameters, {} given", k.params.len(), params.len()));
    }
    let mut mem = GlobalMemory::new();
    let globals = alloc_module_globals(&program, &mut mem);
    let mut bytes = vec![0u8; k.param_bytes as usize];
    let mut buffers = Vec::new();
    for (i, (spec, kp)) in params.iter().zip(&k.params).enumerate() {
        let slot = &mut bytes[kp.offset as usize..(kp.offset + kp.size) as usize];
        match spec {
            ParamSpec::Scalar(s) => {
                let v = s.to_le_bytes();
                let n = v.len().min(slot.len());
                slot[..n].copy_from_slice(&v[..n]);
            }
            ParamSpec::Buffer(b) => {
                if kp.size != 8 {
                    return Err(format!("parameter {i} (`{}`) is {} bytes, but a buffer is passed as a 64-bit address", kp.name, kp.size));
                }
                let init = BufferInit::from_spec(b).map_err(|e| e.to_string())?;
                let len = init.byte_len();
                // Zero-filled allocations need no filler: untouched bytes read as zero.
                let filler = if b.init == Init::Named(NamedInit::Zeros) { None } else { Some(init.into_filler()) };
                let base = mem.alloc(&b.name, len, filler);
                slot.copy_from_slice(&base.to_le_bytes());
                buffers.push((b.clone(), base, len));
            }
        }
    }
    Ok(Prepared { program, kernel: kernel.to_string(), mem, globals, params: bytes, buffers })
}

impl Prepared {
    pub fn launch(
        &self,
        grid: [u32; 3],
        block: [u32; 3],
        dynamic_shared_bytes: u32,
        opts: &RunOptions,
    ) -> Result<LaunchStats, LaunchError> {
        if opts.timing.is_some() {
            return self.launch_timed(grid, block, dynamic_shared_bytes, opts, None, None).map(|(s, _)| s);
        }
        let cfg = self.config(grid, block, dynamic_shared_bytes, opts);
        let k = self.program.kernel(&self.kernel).expect("prepared kernel");
        launch(&self.program, k, &self.mem, &self.globals, &self.params, &cfg)
    }

    /// Launches on the timing model of `opts.timing` (the H200 unless set).
    /// `regs`: registers per thread as ptxas allocated them, if known
    /// (estimated from the PTX otherwise); `ptx_source` lets the compiler
    /// model see `.pragma "nounroll"`.
    pub fn launch_timed(
        &self,
        grid: [u32; 3],
        block: [u32; 3],
        dynamic_shared_bytes: u32,
        opts: &RunOptions,
        regs: Option<u32>,
        ptx_source: Option<&str>,
    ) -> Result<(LaunchStats, warpsim_timing::TimingReport), LaunchError> {
        let mode = match &opts.timing {
            Some(m) => m.clone(),
            None => TimingMode {
                gpu: std::sync::Arc::new(warpsim_timing::TimingGpu::by_name("h200").map_err(|e| LaunchError::Config(e.to_string()))?),
                timeline: false,
            },
        };
        let k = self.program.kernel(&self.kernel).expect("prepared kernel");
        let shape = warpsim_timing::LaunchShape { grid, block, dynamic_shared_bytes };
        let topts = warpsim_timing::TimingOptions {
            regs_per_thread: regs,
            timeline: mode.timeline,
            max_warp_instructions_per_block: opts.max_warp_instructions_per_block,
            ..Default::default()
        };
        warpsim_timing::simulate(&self.program, k, &self.mem, &self.globals, &self.params, &shape, &mode.gpu, &topts, ptx_source)
    }

    fn config(&self, grid: [u32; 3], block: [u32; 3], dynamic_shared_bytes: u32, opts: &RunOptions) -> LaunchConfig {
        LaunchConfig {
            grid,
            block,
            dynamic_shared_bytes,
            warp_size: opts.warp_size,
            num_sms: opts.num_sms,
            serial: opts.serial,
            max_warp_instructions_per_block: opts.max_warp_instructions_per_block,
            schedule: opts.schedule,
            ..Default::default()
        }
    }

    /// Launches with the checkers attached (blocks run serially): the
    /// launch's result, and what the checkers found (a fault that is a
    /// checked bug, such as an out-of-bounds store, among them).
    pub fn launch_checked(
        &self,
        grid: [u32; 3],
        block: [u32; 3],
        dynamic_shared_bytes: u32,
        opts: &RunOptions,
    ) -> (Result<LaunchStats, LaunchError>, Vec<Diagnostic>) {
        let cfg = self.config(grid, block, dynamic_shared_bytes, opts);
        let k = self.program.kernel(&self.kernel).expect("prepared kernel");
        let r = warpsim_check::check_launch(
            &self.program,
            k,
            &self.mem,
            &self.globals,
            &self.params,
            &cfg,
            &CheckOptions { lockstep: opts.lockstep },
        );
        (r.result, r.diagnostics)
    }

    /// Launches with the metrics observer attached.
    pub fn launch_with_metrics(
        &self,
        grid: [u32; 3],
        block: [u32; 3],
        dynamic_shared_bytes: u32,
        opts: &RunOptions,
        ptx_source: Option<&str>,
    ) -> Result<(LaunchStats, LaunchMetrics), LaunchError> {
        let cfg = self.config(grid, block, dynamic_shared_bytes, opts);
        let k = self.program.kernel(&self.kernel).expect("prepared kernel");
        let n = k.code.len();
        let (stats, obs) = launch_observed(
            &self.program,
            k,
            &self.mem,
            &self.globals,
            &self.params,
            &cfg,
            &|| MetricsObserver::new(n),
            &|a: &mut MetricsObserver, b| a.merge(b),
        )?;
        Ok((stats, LaunchMetrics::build(&self.program, k, obs.per_pc, opts.warp_size, ptx_source)))
    }

    /// Streams `len` bytes of an allocation into `f`, a chunk at a time.
    pub fn read_chunks(&self, base: u64, len: u64, mut f: impl FnMut(&[u8]) -> Result<(), String>) -> Result<(), String> {
        let mut buf = vec![0u8; (1usize << 20).min(len as usize)];
        let mut off = 0u64;
        while off < len {
            let n = (len - off).min(buf.len() as u64) as usize;
            self.mem.read(base + off, &mut buf[..n]).map_err(|e| format!("{e:?}"))?;
            f(&buf[..n])?;
            off += n as u64;
        }
        Ok(())
    }
}

/// Runs one corpus case and checks every expected output.
pub fn run_case(case: &Case, opts: &RunOptions, cache: &mut ProgramCache) -> CaseOutcome {
    let mut out = CaseOutcome {
        name: case.name.clone(),
        status: CaseStatus::Error,
        outputs_match: false,
        error: None,
        stats: LaunchStats::default(),
        sim_seconds: 0.0,
        checks: Vec::new(),
        metrics: None,
        diagnostics: None,
        timing: None,
    };
    let prepared = match cache.get(&case.ptx, &case.kernel).and_then(|p| prepare(p, &case.kernel, &case.params)) {
        Ok(p) => p,
        Err(e) => {
            out.error = Some(e);
            return out;
        }
    };
    let t0 = Instant::now();
    let r = if opts.timing.is_some() {
        // ptxas' register count, where the manifest records it (the corpus: `h200.num_regs`).
        let regs = case.h200.as_ref().and_then(|h| h.get("num_regs")).and_then(|v| v.as_u64()).map(|v| v as u32);
        let src = cache.sources.get(&case.ptx).map(String::as_str);
        prepared.launch_timed(case.grid, case.block, case.dynamic_shared_bytes, opts, regs, src).map(|(s, t)| {
            out.timing = Some(t);
            s
        })
    } else if opts.check {
        let (r, d) = prepared.launch_checked(case.grid, case.block, case.dynamic_shared_bytes, opts);
        out.diagnostics = Some(d);
        r
    } else if opts.metrics {
        prepared.launch_with_metrics(case.grid, case.block, case.dynamic_shared_bytes, opts, None).map(|(s, m)| {
            out.metrics = Some(m);
            s
        })
    } else {
        prepared.launch(case.grid, case.block, case.dynamic_shared_bytes, opts)
    };
    out.sim_seconds = t0.elapsed().as_secs_f64();
    match r {
        Ok(s) => out.stats = s,
        Err(e) => {
            out.error = Some(e.to_string());
            return out;
        }
    }
    let mut all = true;
    for (spec, base, len) in &prepared.buffers {
        if spec.role == Role::In {
            continue;
        }
        let Some(exp) = case.expect.get(&spec.name) else { continue };
        let res = Checker::new(&spec.name, exp, spec.dtype, *len, case.block_threads()).map_err(|e| e.to_string()).and_then(|mut c| {
            prepared.read_chunks(*base, *len, |chunk| c.update(chunk).map_err(|e| e.to_string()))?;
            c.finish().map_err(|e| e.to_string())
        });
        match res {
            Ok(r) => {
                all &= r.matched;
                out.checks.push(r);
            }
            Err(e) => {
                out.error = Some(e);
                return out;
            }
        }
    }
    out.outputs_match = all;
    out.status = if all { CaseStatus::Pass } else { CaseStatus::Fail };
    out
}
