//! Kernel launches: the same `warpsim_host::launch` as `warpsim run`, with
//! host-backed memory copied in and out around it, device `printf` written
//! to the C `stdout` stream, faults made sticky errors, and one summary line
//! per launch for `warpsim exec`.

use crate::errors::*;
use crate::state::Driver;
use std::io::Write;
use std::time::Instant;
use warpsim_engine::block::thread_coords;
use warpsim_engine::{FaultKind, KernelFault, LaunchError};
use warpsim_host::{Dims, HostError, Kernel, LaunchSummary};

extern "C" {
    /// glibc's `stdout` stream: device output goes through it so that it
    /// interleaves with the program's own buffered `printf` as on a GPU.
    static mut stdout: *mut libc::FILE;
}

/// Writes device `printf` output to the C `stdout` stream and flushes it.
pub fn write_stdout(text: &str) {
    if text.is_empty() {
        return;
    }
    // SAFETY: `stdout` is glibc's stream, valid for the life of the process; fwrite and
    // fflush lock it.
    unsafe {
        let out = stdout;
        libc::fwrite(text.as_ptr() as *const libc::c_void, 1, text.len(), out);
        libc::fflush(out);
    }
}

/// The error a GPU gives for a kernel fault.
pub fn fault_code(f: &KernelFault) -> CUresult {
    match f.kind {
        FaultKind::OutOfBounds { .. } => CUDA_ERROR_ILLEGAL_ADDRESS,
        FaultKind::Misaligned { .. } => CUDA_ERROR_MISALIGNED_ADDRESS,
        FaultKind::AssertFailed { .. } => CUDA_ERROR_ASSERT,
        FaultKind::BudgetExceeded { .. } => CUDA_ERROR_LAUNCH_TIMEOUT,
        FaultKind::Unsupported(_) => CUDA_ERROR_NOT_SUPPORTED,
        FaultKind::Deadlock { .. } | FaultKind::Trap | FaultKind::Mbarrier(_) | FaultKind::StackOverflow { .. } => CUDA_ERROR_LAUNCH_FAILED,
    }
}

/// The last launch as the driver saw it: its `WARPSIM_SUMMARY` line and, when it
/// completed, what it produced (metrics, per-line counters, timing, diagnostics), for a
/// reader in the same process (the Python package's `warpsim.last_launch()`).
#[derive(Clone)]
pub struct LastLaunch {
    /// Which launch of the process it was (1, 2, ...).
    pub number: u64,
    /// The `WARPSIM_SUMMARY` line's object.
    pub line: serde_json::Value,
    pub kernel: Kernel,
    pub dims: Dims,
    pub secs: f64,
    /// Device memory in use after the launch.
    pub resident: u64,
    /// Whether it ran on the timing model.
    pub timing: bool,
    /// None when the launch faulted.
    pub summary: Option<LaunchSummary>,
}

impl Driver {
    /// Which allocation a global address is in or near, in words.
    fn describe(&self, addr: u64) -> String {
        let allocs = self.ctx.memory().allocations();
        let near = allocs.iter().min_by_key(|a| if addr < a.base { a.base - addr } else { addr.saturating_sub(a.base + a.size) });
        match near {
            Some(a) if addr >= a.base && addr < a.base + a.size => {
                format!("\n  the address is byte {} of the {}-byte allocation at {:#x}", addr - a.base, a.size, a.base)
            }
            Some(a) if addr >= a.base => {
                format!(
                    "\n  the address is {} bytes past the end of the {}-byte allocation at {:#x}",
                    addr - a.base - a.size,
                    a.size,
                    a.base
                )
            }
            Some(a) => format!("\n  the address is {} bytes before the {}-byte allocation at {:#x}", a.base - addr, a.size, a.base),
            None => String::new(),
        }
    }

    /// Runs kernel `f` with parameter bytes from `params` (given the kernel's layout);
    /// `stack` is the host call stack when call sites are wanted.
    pub fn launch(
        &mut self,
        f: usize,
        dims: Dims,
        stack: Option<&crate::callsite::Stack>,
        params: impl FnOnce(&Kernel) -> Result<Vec<u8>, CUresult>,
    ) -> Result<(), CUresult> {
        self.healthy()?;
        let kernel = self.kernel(f)?;
        let site = stack.and_then(|s| crate::callsite::name(s, kernel.name()));
        let from = site.as_deref().map(|s| format!(", from {s}")).unwrap_or_default();
        let bytes = params(&kernel)?;
        let mut opts = self.opts.clone();
        opts.shared_opt_in = self.funcs.get(&f).is_some_and(|x| x.max_dynamic_shared as u32 > self.preset.shared_per_block_default);
        self.mapped_to_device();
        // As `warpsim run`: a progress line on a terminal once a launch runs over a second.
        let watch = self.settings.progress.then(|| {
            let p = std::sync::Arc::new(warpsim_engine::Progress::default());
            opts.progress = Some(p.clone());
            warpsim::progress::watch(p, dims.grid.iter().map(|&g| g as u64).product(), None, false)
        });
        let t0 = Instant::now();
        let (r, partial) = warpsim_host::launch_keeping_partial(&mut self.ctx, &kernel, &dims, &bytes, &opts);
        let secs = t0.elapsed().as_secs_f64();
        drop(watch);
        self.mapped_to_host();
        self.launches += 1;
        let name = kernel.name().to_string();
        match r {
            Ok(s) => {
                write_stdout(&s.stats.printf);
                for p in &s.stats.past_end {
                    eprintln!("warpsim: warning: {p}\n  served: past the allocation's exact end but within its page, as a GPU serves it");
                }
                if let Some(d) = s.diagnostics.as_deref().filter(|d| !d.is_empty()) {
                    eprint!(
                        "warpsim check: kernel `{name}` (launch {}{from}):\n{}",
                        self.launches,
                        warpsim_check::render_grouped(d, false)
                    );
                }
                if let Some(c) = s.cycles() {
                    self.sim_ms += c as f64 / (self.preset.clock_mhz as f64 * 1e3);
                }
                let line = self.record(&name, &dims, secs, Some(&s), None, site.as_deref());
                self.trace(&kernel, &dims, &s, site.as_deref());
                self.report_page(&kernel, &dims, &s, site.as_deref(), None);
                let (timing, resident) = (self.settings.timing && self.opts.timing.is_some(), self.ctx.resident_bytes());
                self.last = Some(LastLaunch { number: self.launches, line, kernel, dims, secs, resident, timing, summary: Some(s) });
                Ok(())
            }
            Err(HostError::Refused(e)) => {
                eprintln!("warpsim: kernel `{name}`: {e}");
                Err(if e.error_name() == "cudaErrorLaunchOutOfResources" {
                    CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
                } else {
                    CUDA_ERROR_INVALID_VALUE
                })
            }
            Err(HostError::Engine(LaunchError::Config(m))) | Err(HostError::CheckedFault { error: LaunchError::Config(m), .. }) => {
                eprintln!("warpsim: kernel `{name}`: invalid launch: {m}");
                Err(CUDA_ERROR_INVALID_VALUE)
            }
            Err(HostError::Engine(LaunchError::Fault(fault))) => {
                let line = self.fault(&kernel, &dims, secs, &fault, partial, None, site.as_deref());
                self.last_faulted(line, kernel, dims, secs);
                Ok(())
            }
            Err(HostError::CheckedFault { error: LaunchError::Fault(fault), diagnostics }) => {
                let line = self.fault(&kernel, &dims, secs, &fault, partial, Some(diagnostics), site.as_deref());
                self.last_faulted(line, kernel, dims, secs);
                Ok(())
            }
            Err(e) => {
                eprintln!("warpsim: kernel `{name}`: {e}");
                Err(CUDA_ERROR_LAUNCH_FAILED)
            }
        }
    }

    fn last_faulted(&mut self, line: serde_json::Value, kernel: Kernel, dims: Dims, secs: f64) {
        let resident = self.ctx.resident_bytes();
        self.last = Some(LastLaunch { number: self.launches, line, kernel, dims, secs, resident, timing: false, summary: None });
    }

    /// A faulted launch: its device `printf` output up to the fault, the GPU's message
    /// and warpsim's on stderr, and the sticky error; its report page and trace mark up
    /// to the fault (`partial`: the metrics of what ran). Returns its summary line.
    #[allow(clippy::too_many_arguments)]
    fn fault(
        &mut self,
        kernel: &Kernel,
        dims: &Dims,
        secs: f64,
        fault: &KernelFault,
        partial: Option<warpsim_metrics::LaunchMetrics>,
        diags: Option<Vec<warpsim_check::Diagnostic>>,
        site: Option<&str>,
    ) -> serde_json::Value {
        let name = kernel.name().to_string();
        let code = fault_code(fault);
        let ran = fault.ran.as_deref().cloned().unwrap_or_default();
        // The GPU flushes the launch's printf buffer at the synchronisation that reports the fault.
        write_stdout(&ran.printf);
        if let FaultKind::AssertFailed { .. } = &fault.kind {
            for l in assert_lines(fault, dims.block, self.opts.warp_size) {
                eprintln!("{l}");
            }
        }
        let hint = fault.address().map(|a| self.describe(a)).unwrap_or_default();
        let from = site.map(|s| format!("\n  launched from {s}")).unwrap_or_default();
        eprintln!("warpsim: kernel `{name}` faulted: {fault}{hint}{from}");
        if let Some(d) = diags.as_deref().filter(|d| !d.is_empty()) {
            eprint!("{}", warpsim_check::render_grouped(d, false));
        }
        self.sticky = Some(code);
        let msg = format!("{fault}{hint}");
        let s = LaunchSummary { stats: ran, metrics: partial, diagnostics: diags, timing: None };
        self.trace_fault(kernel.name(), &msg);
        self.report_page(kernel, dims, &s, site, Some(&msg));
        self.record(&name, dims, secs, Some(&s), Some(fault.to_string()), site)
    }

    /// The launch's summary line, appended to `WARPSIM_SUMMARY` when that is set.
    fn record(
        &self,
        name: &str,
        dims: &Dims,
        secs: f64,
        s: Option<&LaunchSummary>,
        fault: Option<String>,
        site: Option<&str>,
    ) -> serde_json::Value {
        let mut j = summary_json(name, dims, secs, s, fault);
        if let Some(site) = site {
            j["call_site"] = site.into();
        }
        let Some(path) = &self.settings.summary else { return j };
        let line = format!("{j}\n");
        let written = std::fs::OpenOptions::new().create(true).append(true).open(path).and_then(|mut f| f.write_all(line.as_bytes()));
        if let Err(e) = written {
            eprintln!("warpsim: WARPSIM_SUMMARY={path}: {e}");
        }
        j
    }

    /// Keeps the launch's timeline for `WARPSIM_TRACE` (written at exit, the
    /// launches one after another on one time axis).
    fn trace(&mut self, kernel: &Kernel, _dims: &Dims, s: &LaunchSummary, _site: Option<&str>) {
        if let (Some(t), true) = (s.timing.as_ref(), self.settings.trace.is_some()) {
            let mut j = warpsim_report::trace::chrome_trace(&warpsim::reporting::timeline_of(t, 400_000), kernel.name());
            let shift = self.trace_cycles as f64 / 1000.0;
            let first = !self.traces.iter().any(|e| e.get("ph").and_then(|p| p.as_str()) == Some("M"));
            if let Some(ev) = j.get_mut("traceEvents").and_then(|e| e.as_array_mut()) {
                for e in ev.iter_mut() {
                    if let Some(ts) = e.get("ts").and_then(|v| v.as_f64()) {
                        e["ts"] = (ts + shift).into();
                    }
                    // Metadata events repeat per launch; keep the first launch's.
                    if first || e.get("ph").and_then(|p| p.as_str()) != Some("M") {
                        self.traces.push(e.take());
                    }
                }
            }
            self.trace_cycles += t.cycles;
        }
    }

    /// A faulted launch in `WARPSIM_TRACE`: an instant event with the fault after the
    /// launches before it (the timing model keeps no timeline of a launch it did not finish).
    fn trace_fault(&mut self, kernel: &str, msg: &str) {
        if self.settings.trace.is_none() {
            return;
        }
        self.traces.push(serde_json::json!({
            "name": format!("{kernel} faulted (launch {})", self.launches), "ph": "i", "s": "g",
            "ts": self.trace_cycles as f64 / 1000.0, "pid": 0, "tid": 0, "args": {"fault": msg},
        }));
    }

    /// Writes the launch's page of `WARPSIM_REPORT` (FILE-N.html, the first
    /// [`report_limit`] launches, listed in FILE.html); `fault`: the launch ended in
    /// it and the page shows what ran up to it.
    fn report_page(&mut self, kernel: &Kernel, dims: &Dims, s: &LaunchSummary, site: Option<&str>, fault: Option<&str>) {
        let (Some(path), Some(m)) = (self.settings.report.clone(), &s.metrics) else { return };
        if self.reported.len() >= report_limit() {
            return;
        }
        let timing = s.timing.as_ref();
        let rep = warpsim::reporting::build_report(
            kernel.program(),
            kernel.name(),
            dims.grid,
            dims.block,
            dims.dynamic_shared_bytes,
            self.opts.warp_size,
            &s.stats,
            m,
            timing,
            timing.map(|t| warpsim::reporting::timeline_of(t, 400_000)),
            format!(
                "{}: launch {} of the program{}.",
                match (timing, fault) {
                    (Some(t), _) => format!("From the timing model ({} preset)", t.gpu.to_uppercase()),
                    (None, Some(_)) => "Up to the fault (no cycles: the launch did not finish)".to_string(),
                    // `--check` runs the functional engine (blocks one after another).
                    (None, None) => "A functional run (no cycles: the checkers ran on the functional engine)".to_string(),
                },
                self.launches,
                site.map(|s| format!(", from {s}")).unwrap_or_default()
            ),
            warpsim::reporting::Checked { diagnostics: s.diagnostics.as_deref(), fault },
        );
        let page = path.strip_suffix(".html").unwrap_or(&path).to_string() + &format!("-{}.html", self.launches);
        if let Err(e) = std::fs::write(&page, warpsim_report::html(&rep)) {
            eprintln!("warpsim: writing {page}: {e}");
            return;
        }
        let shown = warpsim_ir::entry_names::display_name(kernel.name()).unwrap_or_else(|| kernel.name().to_string());
        let label = if fault.is_some() { format!("{shown} (faulted)") } else { shown };
        self.reported.push((label, page));
        let items: String = self
            .reported
            .iter()
            .map(|(k, p)| {
                let file = std::path::Path::new(p).file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
                format!("<li><a href=\"{}\">{}</a></li>\n", warpsim_report::svg::esc(&file), warpsim_report::svg::esc(k))
            })
            .collect();
        let index = format!(
            "<!doctype html><meta charset=\"utf-8\"><title>warpsim exec report</title><h1>warpsim exec: launches</h1><ol>\n{items}</ol>\n\
             <p>Pages for the first {} launches at most (WARPSIM_REPORT_LAUNCHES, <code>warpsim exec --report-launches N</code>).</p>\n",
            report_limit()
        );
        if let Err(e) = std::fs::write(&path, index) {
            eprintln!("warpsim: writing {path}: {e}");
        }
    }

    /// Writes `WARPSIM_TRACE` (at exit).
    pub fn write_trace(&self) {
        let Some(path) = &self.settings.trace else { return };
        let j = serde_json::json!({"traceEvents": self.traces, "displayTimeUnit": "ns",
            "otherData": {"producer": "warpsim exec", "note": "one cycle drawn as one nanosecond; launches one after another"}});
        if let Err(e) = std::fs::write(path, j.to_string()) {
            eprintln!("warpsim: writing {path}: {e}");
        }
    }
}

/// Launches with a page in `WARPSIM_REPORT` unless `WARPSIM_REPORT_LAUNCHES` says otherwise.
pub const MAX_REPORTED: usize = 20;

/// Launches with a page in `WARPSIM_REPORT`: `WARPSIM_REPORT_LAUNCHES` (`warpsim exec
/// --report-launches N`), else [`MAX_REPORTED`].
pub fn report_limit() -> usize {
    std::env::var("WARPSIM_REPORT_LAUNCHES").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(MAX_REPORTED)
}

/// The GPU's message for a failing device `assert`, once per thread that called it
/// together (the warp's lanes in `lanes`), in thread order as the H200 prints them.
pub fn assert_lines(fault: &KernelFault, block: [u32; 3], warp_size: u32) -> Vec<String> {
    let FaultKind::AssertFailed { message, file, line, function, lanes } = &fault.kind else { return Vec::new() };
    let b = fault.block;
    let mut m = if *lanes == 0 { fault.lane.map_or(0, |l| 1u64 << l) } else { *lanes };
    let mut out = Vec::new();
    while m != 0 {
        let lane = m.trailing_zeros();
        m &= m - 1;
        let tid = fault.warp * warp_size + lane;
        let [x, y, z] = thread_coords(tid, block);
        out.push(format!(
            "{file}:{line}: {function}: block: [{},{},{}], thread: [{x},{y},{z}] Assertion `{message}` failed.",
            b[0], b[1], b[2]
        ));
    }
    out
}

/// One launch's summary line: what `warpsim exec`'s table and JSON add up.
pub fn summary_json(name: &str, dims: &Dims, secs: f64, s: Option<&LaunchSummary>, fault: Option<String>) -> serde_json::Value {
    let mut j = serde_json::json!({
        "kernel": name, "grid": dims.grid, "block": dims.block, "shared": dims.dynamic_shared_bytes, "sim_seconds": secs,
        "fault": fault,
    });
    let Some(s) = s else { return j };
    let st = &s.stats;
    let o = j.as_object_mut().expect("an object");
    let mut put = |k: &str, v: serde_json::Value| {
        o.insert(k.to_string(), v);
    };
    put("blocks", st.blocks.into());
    put("warp_instructions", st.warp_instructions.into());
    put("thread_instructions", st.thread_instructions.into());
    put("threads_per_instruction", st.threads_per_instruction().into());
    if let Some(m) = &s.metrics {
        let t = &m.totals;
        put("divergent_branches", t.insts.divergent_branches.into());
        put("global_requests", (t.ld.global_requests + t.st.global_requests).into());
        put("global_sectors", (t.ld.global_sectors + t.st.global_sectors).into());
        put("shared_wavefronts", (t.ld.shared_wavefronts + t.st.shared_wavefronts).into());
        let conflicts =
            (t.ld.shared_wavefronts + t.st.shared_wavefronts).saturating_sub(t.ld.shared_ideal_wavefronts + t.st.shared_ideal_wavefronts);
        put("bank_conflicts", conflicts.into());
    }
    put("cycles", s.cycles().into());
    put("diagnostics", s.diagnostics.as_ref().map(|d| d.len()).into());
    j
}
