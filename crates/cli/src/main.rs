//! The `warpsim` command line.
#![forbid(unsafe_code)]

mod exec;
mod occupancy_cmd;
use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Instant;
use warpsim_host::corpus::{run_case, CaseStatus};
use warpsim_host::{prepare, Dims, HostError, LaunchOptions, LaunchSummary, Module, ProgramCache};
use warpsim_launch::{load_manifest, parse_param_arg, ParamSpec};

/// mimalloc rather than the system allocator: a timing launch makes and drops
/// the register columns of every resident warp. The binary's only: the Python
/// extension compiles this file too (`warpsim_extension`), and what runs in
/// someone else's process keeps that process's allocator.
#[cfg(not(warpsim_extension))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(name = "warpsim", version, about = "Run PTX kernels on a simulated SIMT GPU, warp by warp")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// How many blocks and warps of a launch fit on an SM, and what limits them.
    Occupancy(occupancy_cmd::OccupancyArgs),
    /// Run one kernel launch described on the command line.
    Run(RunArgs),
    /// Run a whole program (built with `nvcc -cudart shared`, or Python with
    /// Numba) with warpsim as its GPU; a table of its kernels at exit.
    Exec(exec::ExecArgs),
    /// Run one launch with the checkers (as `run --check`): data races,
    /// barrier divergence and deadlock, sync-mask errors, out-of-bounds,
    /// misaligned and uninitialised accesses.
    Check(RunArgs),
    /// Run the cases of a launch manifest and check their outputs.
    Corpus(CorpusArgs),
    /// Measure simulation speed (warp instructions per second) on manifest cases.
    Bench(BenchArgs),
    /// Show the seed documents' claims on built-in kernels: warps, divergence,
    /// coalescing, bank conflicts, warp_sum, occupancy, 32 vs 64 lanes.
    Demo(warpsim::demo::DemoArgs),
    /// Show an MMA shape's fragment layout: which thread and element hold each
    /// element of A, B and C/D (m16n8k16, m16n8k8.tf32, m16n8k32.s8, m8n8k4,
    /// wmma.m16n16k16, wmma.m8n32k16.bf16, wgmma.m64n16k16, ...).
    ExplainMma {
        /// [mma.|wmma.|wgmma.]mMnNkK[.type]
        shape: String,
        /// Print an HTML fragment (tables coloured by thread) instead of text.
        #[arg(long)]
        html: bool,
    },
}

#[derive(Args)]
struct BenchArgs {
    /// The manifest (e.g. ../shared/corpus/cases.json).
    manifest: PathBuf,
    /// Cases to measure (default: all but the bug_ cases).
    #[arg(long = "case")]
    cases: Vec<String>,
    /// Launches per case and mode; the best is reported.
    #[arg(long, default_value_t = 3)]
    repeat: u32,
    /// Modes to measure, comma-separated: functional (the bare engine),
    /// metrics, check, timing (default: all four; with --metrics, --check or
    /// --mode timing alone, just that one).
    #[arg(long, value_delimiter = ',', value_enum)]
    modes: Vec<BenchMode>,
    /// Measure with the metrics observer attached (as `--modes metrics`).
    #[arg(long)]
    metrics: bool,
    /// The speed-limit binary (../shared/tools/speed-limit), run in the same
    /// invocation as the denominator of each ratio (default: $WARPSIM_SPEED_LIMIT,
    /// /tmp/speed-limit/release/speed-limit, or target/release/speed-limit
    /// beside the manifest's tools/speed-limit).
    #[arg(long, value_name = "PATH")]
    speed_limit: Option<PathBuf>,
    /// Do not run the speed-limit loop.
    #[arg(long)]
    no_speed_limit: bool,
    /// Print JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    engine: EngineArgs,
}

/// What `warpsim bench` measures a case in.
#[derive(clap::ValueEnum, Copy, Clone, Debug, PartialEq, Eq)]
enum BenchMode {
    /// The bare functional engine.
    Functional,
    /// The engine with the metrics observer.
    Metrics,
    /// The engine with the checkers.
    Check,
    /// The cycle-level timing model (`--gpu`).
    Timing,
}

impl BenchMode {
    fn name(self) -> &'static str {
        match self {
            BenchMode::Functional => "functional",
            BenchMode::Metrics => "metrics",
            BenchMode::Check => "check",
            BenchMode::Timing => "timing",
        }
    }
}

#[derive(Args, Clone)]
struct EngineArgs {
    /// Lanes per warp: 32 (NVIDIA) or 64 (AMD CDNA wavefronts).
    #[arg(long, default_value_t = 32)]
    warp_size: u32,
    /// Worker threads for running blocks in parallel (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Run blocks one after another on one thread (in timing mode, the SMs too).
    #[arg(long)]
    serial: bool,
    /// Warp instructions one block may execute before it is stopped as a
    /// runaway loop (the default, 2^24, stops one in a few seconds).
    #[arg(long, default_value_t = 1 << 24)]
    max_instructions: u64,
    /// Call stack bytes per thread for device functions that are called rather
    /// than inlined (recursion, function pointers), as cudaLimitStackSize; a
    /// call whose frame does not fit faults with "stack overflow".
    #[arg(long, value_name = "BYTES", default_value_t = warpsim_engine::DEFAULT_STACK_SIZE)]
    stack_size: u32,
    /// Stop after this many seconds of wall-clock time (exit status 124).
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<f64>,
    /// Skip the warp-level metrics (sectors, wavefronts, divergence) for speed.
    #[arg(long)]
    no_metrics: bool,
    /// Fault at an allocation's exact end. By default an access past it but
    /// within the allocation's 64 KiB page is served, as a GPU serves it, with
    /// a warning naming its place (`check` reports each as an error).
    #[arg(long)]
    strict_bounds: bool,
    /// The default since warpsim serves past-end accesses as a GPU does; kept
    /// so that older command lines still run.
    #[arg(long, hide = true, conflicts_with = "strict_bounds")]
    serve_past_end: bool,
    /// The kernel opted in to more than the default 48 KB of shared memory per
    /// block (cudaFuncAttributeMaxDynamicSharedMemorySize), up to the GPU's maximum.
    #[arg(long)]
    opt_in: bool,
    #[command(flatten)]
    checking: warpsim::checking::CheckArgs,
    #[command(flatten)]
    timing: warpsim::timing_cli::TimingArgs,
}

impl EngineArgs {
    /// Flags that would be silently ignored are refused; `records_timeline`:
    /// the command records the timeline anyway (`--report`, `--trace`).
    fn check_flags(&self, records_timeline: bool) -> Result<()> {
        use warpsim::timing_cli::Mode;
        if self.timing.timeline && self.timing.mode != Mode::Timing && !records_timeline {
            bail!("--timeline records the timing model's warp timeline: add --mode timing (or --report/--trace, which record it)");
        }
        if self.checking.lockstep && !self.checking.check {
            bail!("--lockstep changes how the checkers order a warp's lanes: it needs --check (or the check command)");
        }
        if self.timing.mode == Mode::Timing && self.warp_size != 32 && self.warp_size != self.timing.gpu.preset.warp_size {
            bail!(
                "--warp-size {} does not match --gpu {} ({} lanes per warp); timing mode runs the preset's width: \
                 leave out --warp-size, or choose a {}-lane GPU (--gpu mi300x)",
                self.warp_size,
                self.timing.gpu.preset.key,
                self.timing.gpu.preset.warp_size,
                self.warp_size
            );
        }
        Ok(())
    }

    fn options(&self) -> LaunchOptions {
        let mut o = LaunchOptions {
            warp_size: self.warp_size,
            serial: self.serial,
            max_warp_instructions_per_block: self.max_instructions,
            metrics: !self.no_metrics,
            serve_past_end: self.serve_past_end || !self.strict_bounds,
            shared_opt_in: self.opt_in,
            stack_size: self.stack_size,
            ..Default::default()
        };
        self.checking.apply(&mut o);
        self.timing.apply(&mut o);
        o
    }

    /// What `corpus` and `bench` do first: worker threads, flag checks, the `--timeout`
    /// watch (keep it while the command runs) and the launch options.
    fn start_batch(&self) -> Result<(warpsim::progress::Watch, LaunchOptions)> {
        self.init_threads()?;
        self.check_flags(false)?;
        let watch = warpsim::progress::watch(Default::default(), 0, self.timeout, true);
        Ok((watch, self.options()))
    }

    fn init_threads(&self) -> Result<()> {
        if let Some(n) = self.threads {
            rayon::ThreadPoolBuilder::new().num_threads(n.max(1)).build_global().context("setting up worker threads")?;
        }
        Ok(())
    }
}

#[derive(Args)]
struct RunArgs {
    /// The kernel file: PTX (.ptx) or CUDA source (.cu, compiled to PTX with nvcc when one is found:
    /// $WARPSIM_NVCC, on PATH, or in a .venv's nvidia-cuda-nvcc wheel; else with clang 19 or newer).
    file: PathBuf,
    /// The `.entry` to launch (optional when the file has one).
    #[arg(long)]
    kernel: Option<String>,
    /// Grid dimensions: X[,Y[,Z]].
    #[arg(long, default_value = "1")]
    grid: String,
    /// Block dimensions: X[,Y[,Z]].
    #[arg(long, default_value = "32")]
    block: String,
    /// Dynamic shared memory in bytes.
    #[arg(long, default_value_t = 0)]
    shared: u32,
    /// A kernel parameter, in order: scalars as TYPE=VALUE (u32=5, f32=1.5),
    /// buffers as NAME:DTYPE[COUNT]=INIT[:ROLE] (in:f32[1024]=unit_f32:in,
    /// out:f32[1024]=zeros:out, x:f32[256]=file:x.npy).
    #[arg(long = "param", value_name = "SPEC")]
    params: Vec<String>,
    /// Folder for output buffers (written as .npy).
    #[arg(long, default_value = "warpsim-out")]
    out: PathBuf,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
    /// Show the source lines (and PTX lines) that cost most: divergence,
    /// sectors per request above ideal, bank conflicts.
    #[arg(long)]
    lines: bool,
    /// How many lines `--lines` shows.
    #[arg(long, default_value_t = 12)]
    top: usize,
    #[command(flatten)]
    output: warpsim::reporting::ReportArgs,
    #[command(flatten)]
    engine: EngineArgs,
}

#[derive(Args)]
struct CorpusArgs {
    /// The manifest (e.g. ../shared/corpus/cases.json).
    manifest: PathBuf,
    /// Run only these cases.
    #[arg(long = "case")]
    cases: Vec<String>,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    engine: EngineArgs,
}

fn main() {
    main_from_args(std::env::args_os())
}

/// The command line on `args` (the program's name first): the `warpsim`
/// binary's, and the Python package's `warpsim` command, which includes this file.
pub(crate) fn main_from_args(args: impl IntoIterator<Item = std::ffi::OsString>) {
    let cli = Cli::parse_from(args);
    let r = match cli.command {
        Command::Occupancy(a) => occupancy_cmd::cmd_occupancy(a),
        Command::Run(a) => cmd_run(a),
        Command::Exec(a) => exec::cmd_exec(a),
        Command::Check(mut a) => {
            a.engine.checking.check = true;
            cmd_run(a)
        }
        Command::Corpus(a) => cmd_corpus(a),
        Command::Bench(a) => cmd_bench(a),
        Command::Demo(a) => warpsim::demo::cmd_demo(a),
        Command::ExplainMma { shape, html } => cmd_explain_mma(&shape, html),
    };
    if let Err(e) = r {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

fn cmd_explain_mma(shape: &str, html: bool) -> Result<()> {
    let text = if html { warpsim_report::explain::explain_html(shape) } else { warpsim_report::explain::explain(shape, 100) };
    print!("{}", text.map_err(|e| anyhow::anyhow!(e))?);
    Ok(())
}

/// A library error as one message (its sources are part of its text).
fn flat(e: HostError) -> anyhow::Error {
    anyhow::anyhow!("{e}")
}

fn parse_dims(s: &str, what: &str) -> Result<[u32; 3]> {
    let parts: Vec<&str> = s.split([',', 'x']).map(str::trim).collect();
    if parts.is_empty() || parts.len() > 3 {
        bail!("--{what} takes X[,Y[,Z]], got {s:?}");
    }
    let mut d = [1u32; 3];
    for (i, p) in parts.iter().enumerate() {
        d[i] = p.parse().with_context(|| format!("--{what}: {p:?} is not a number"))?;
        if d[i] == 0 {
            bail!("--{what}: dimensions must be at least 1");
        }
    }
    Ok(d)
}

fn cmd_run(a: RunArgs) -> Result<()> {
    a.engine.init_threads()?;
    a.engine.check_flags(a.output.report.is_some() || a.output.trace.is_some())?;
    let dims = Dims::new(parse_dims(&a.grid, "grid")?, parse_dims(&a.block, "block")?, a.shared);
    let (name, src) = warpsim::cuda::load_kernel_file(&a.file, &a.out, &a.output.clang_args)?;
    let mut module = Module::from_ptx(name, src);
    let kernel = match &a.kernel {
        Some(k) => k.clone(),
        None => match module.entries().map_err(flat)?.as_slice() {
            [one] => one.clone(),
            [] => bail!("{} has no .entry", module.name()),
            many => bail!(
                "{} has several kernels; choose one with --kernel (its C++ name or a unique prefix will do): {}",
                module.name(),
                warpsim_ir::entry_names::describe(&many.iter().map(String::as_str).collect::<Vec<_>>())
            ),
        },
    };
    let kernel = module.kernel(&kernel).map_err(flat)?;
    let params: Vec<ParamSpec> = a.params.iter().map(|p| parse_param_arg(p)).collect::<Result<_, _>>()?;
    let mut prepared = prepare(&kernel, &params).map_err(flat)?;
    let opts = a.engine.options();
    let reports = a.output.report.is_some() || a.output.trace.is_some();
    let mut run_opts = opts.clone();
    if reports {
        // One run feeds the report: the timing model drives the functional
        // engine with the metrics (and checkers) watching.
        run_opts.timing = Some(warpsim::reporting::report_timing(&opts).map_err(flat)?);
    }
    run_opts.metrics |= a.lines || a.output.needs_metrics();
    let progress = std::sync::Arc::new(warpsim_engine::Progress::default());
    run_opts.progress = Some(progress.clone());
    let nblocks = dims.grid.iter().map(|&d| d as u64).product();
    let watch = warpsim::progress::watch(progress, nblocks, a.engine.timeout, a.json);
    let t0 = Instant::now();
    let (launched, partial) = prepared.launch_keeping_partial(&dims, &run_opts);
    drop(watch);
    // A report even when the launch faults: up to the fault, with the fault shown.
    let report_fault = |fault: &str, diagnostics: Option<&[warpsim_check::Diagnostic]>| -> Result<()> {
        let (Some(html), Some(m)) = (a.output.report.as_deref(), partial.as_ref()) else { return Ok(()) };
        let wpb = dims.block.iter().product::<u32>().div_ceil(a.engine.warp_size) as u64;
        let blocks: u64 = dims.grid.iter().map(|&g| g as u64).product();
        let stats = warpsim_engine::LaunchStats { blocks, warps: blocks * wpb, ..Default::default() };
        warpsim::reporting::write_run_reports(warpsim::reporting::RunReport {
            prepared: &prepared,
            params: &params,
            dims,
            opts: &opts,
            stats: &stats,
            metrics: Some(m),
            timing: None,
            html: Some(html),
            trace: None,
            checked: warpsim::reporting::Checked { diagnostics, fault: Some(fault) },
        })?;
        eprintln!("wrote {} (up to the fault)", html.display());
        Ok(())
    };
    let s = match launched {
        Ok(s) => s,
        Err(HostError::CheckedFault { error, diagnostics }) => {
            warpsim::checking::show_fault(&error, &diagnostics, a.json, a.engine.checking.verbose)?;
            let hint = match &error {
                warpsim_engine::LaunchError::Fault(f) => fault_hint(f, &prepared, &dims),
                _ => String::new(),
            };
            let msg = format!("{error}{hint}");
            report_fault(&msg, Some(&diagnostics))?;
            bail!("{msg}")
        }
        Err(HostError::Engine(warpsim_engine::LaunchError::Fault(f))) => {
            let msg = format!("{f}{}", fault_hint(&f, &prepared, &dims));
            report_fault(&msg, None)?;
            bail!("{msg}")
        }
        Err(e) => bail!("{e}"),
    };
    let secs = t0.elapsed().as_secs_f64();
    // Device printf output, flushed at the end of the launch as the GPU does.
    if a.json {
        eprint!("{}", s.stats.printf);
    } else {
        print!("{}", s.stats.printf);
    }
    for f in &s.stats.past_end {
        eprintln!("warning: {f}\n  served: past the allocation's exact end but within its page, as a GPU serves it");
    }
    if s.stats.past_end_count > s.stats.past_end.len() as u64 {
        eprintln!("warning: {} more accesses past an allocation's end were served", s.stats.past_end_count - s.stats.past_end.len() as u64);
    }
    let mut written = prepared.save_outputs(&a.out).map_err(flat)?;
    written.extend(warpsim::reporting::write_run_reports(warpsim::reporting::RunReport {
        prepared: &prepared,
        params: &params,
        dims,
        opts: &opts,
        stats: &s.stats,
        metrics: s.metrics.as_ref(),
        timing: s.timing.as_ref(),
        html: a.output.report.as_deref(),
        trace: a.output.trace.as_deref(),
        checked: warpsim::reporting::Checked { diagnostics: s.diagnostics.as_deref(), fault: None },
    })?);
    let shown = RunShown { a: &a, kernel: kernel.name(), dims, secs, written: &written };
    match s.timing.as_ref().filter(|_| opts.timing.is_some()) {
        Some(t) => shown.timed(&s, t)?,
        None => {
            let occupancy = occupancy_cmd::launch_occupancy(&kernel, dims.block, dims.dynamic_shared_bytes, a.engine.warp_size);
            shown.functional(&s, occupancy, prepared.ctx.resident_bytes())?;
        }
    }
    warpsim::checking::verdict(s.diagnostics.as_deref())
}

/// More about a fault, in the user's terms: which buffer and element a
/// global address is, and `--shared` for shared memory past a block's size
/// when the launch gave no dynamic shared memory.
pub(crate) fn fault_hint(f: &warpsim_engine::KernelFault, prepared: &warpsim_host::Prepared, dims: &Dims) -> String {
    use warpsim_engine::fault::FaultSpace;
    use warpsim_engine::FaultKind;
    match &f.kind {
        FaultKind::OutOfBounds { space: FaultSpace::Global, addr, .. } | FaultKind::Misaligned { space: FaultSpace::Global, addr, .. } => {
            prepared.describe_address(*addr).map(|d| format!("\n  the address is {d}")).unwrap_or_default()
        }
        FaultKind::OutOfBounds { space: FaultSpace::Shared, .. } if dims.dynamic_shared_bytes == 0 => {
            "\n  the launch has no dynamic shared memory: a kernel with `extern __shared__` arrays needs --shared BYTES (the <<<grid, block, BYTES>>> of a CUDA launch)".to_string()
        }
        _ => String::new(),
    }
}

/// What `warpsim run` prints.
struct RunShown<'a> {
    a: &'a RunArgs,
    kernel: &'a str,
    dims: Dims,
    secs: f64,
    written: &'a [PathBuf],
}

impl RunShown<'_> {
    /// The JSON fields and text lines every run shows first.
    fn head(&self, s: &LaunchSummary) -> serde_json::Value {
        let st = &s.stats;
        if !self.a.json {
            println!("kernel {}: grid {:?} x block {:?}", self.kernel, self.dims.grid, self.dims.block);
            println!("  blocks               {:>14}", st.blocks);
            println!("  warps                {:>14}", st.warps);
            println!("  warp instructions    {:>14} (PTX)", st.warp_instructions);
        }
        serde_json::json!({
            "kernel": self.kernel, "grid": self.dims.grid, "block": self.dims.block,
            "blocks": st.blocks, "warps": st.warps,
            "warp_instructions": st.warp_instructions,
            "thread_instructions": st.thread_instructions,
            "threads_per_instruction": st.threads_per_instruction(),
            "sim_seconds": self.secs,
            "outputs": self.written.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
        })
    }

    /// The closing text lines: speed and the files written.
    fn tail(&self, s: &LaunchSummary) {
        let rate = warpsim::progress::rate(s.stats.warp_instructions as f64 / self.secs.max(1e-9));
        println!("  simulated in {:.3} s ({rate} warp instructions/s)", self.secs);
        for p in self.written {
            println!("  wrote {}", p.display());
        }
    }

    fn print_json(mut j: serde_json::Value, extra: serde_json::Value) -> Result<()> {
        if let (Some(o), serde_json::Value::Object(e)) = (j.as_object_mut(), extra) {
            o.extend(e);
        }
        println!("{}", serde_json::to_string_pretty(&j)?);
        Ok(())
    }

    fn timed(&self, s: &LaunchSummary, t: &warpsim_timing::TimingReport) -> Result<()> {
        let j = self.head(s);
        if self.a.json {
            let extra = serde_json::json!({
                "cycles": t.cycles, "metrics": serde_json::Value::Object(t.to_ncu_json()), "timing": t.to_json(),
            });
            return Self::print_json(j, extra);
        }
        // The same metrics rows as functional mode (one run fed both), then the timing model's.
        match s.metrics.as_ref() {
            Some(m) => {
                println!("  as SASS, about       {:>14} (moves and parameter loads folded)", m.totals.insts.warp_insts);
                print!("{}", m.render_summary());
            }
            None => println!("  threads per warp instruction {:>6.2} (PTX instructions)", s.stats.threads_per_instruction()),
        }
        print!("{}", t.render_text());
        if let Some(m) = s.metrics.as_ref().filter(|m| m.totals.insts.warp_insts != t.sass_instructions) {
            println!(
                "  (the timing model issues {} SASS-like instructions where the metrics estimate {}: its compiler model also \
                 splits 64-bit integer arithmetic and IEEE division into several instructions and unrolls short loops, \
                 as ptxas does; see crates/timing/src/decode.rs)",
                t.sass_instructions, m.totals.insts.warp_insts
            );
        }
        if self.a.lines {
            println!();
            print!("{}", t.render_lines(self.a.top));
        }
        self.tail(s);
        Ok(())
    }

    fn functional(&self, s: &LaunchSummary, occupancy: Option<(serde_json::Value, String)>, resident: u64) -> Result<()> {
        let (a, st, m) = (self.a, &s.stats, s.metrics.as_ref());
        let j = self.head(s);
        if a.json {
            let extra = serde_json::json!({
                "resident_global_bytes": resident,
                "peak_rss_bytes": peak_rss_bytes(),
                "occupancy": occupancy.as_ref().map(|(o, _)| o.clone()),
                "metrics": m.map(|m| serde_json::Value::Object(m.totals.to_ncu_json())),
                "lines": if a.lines { m.map(|m| serde_json::to_value(&m.lines).unwrap_or_default()) } else { None },
                "diagnostics": s.diagnostics.as_ref().map(|d| d.iter().map(|x| x.to_json()).collect::<Vec<_>>()),
            });
            return Self::print_json(j, extra);
        }
        println!("  thread instructions  {:>14}", st.thread_instructions);
        match m {
            Some(m) => {
                println!("  as SASS, about       {:>14} (moves and parameter loads folded)", m.totals.insts.warp_insts);
                print!("{}", m.render_summary());
            }
            None => println!("  threads per warp instruction {:>6.2} of {}", st.threads_per_instruction(), a.engine.warp_size),
        }
        if let Some((_, line)) = &occupancy {
            println!("{line}");
        }
        let rate = warpsim::progress::rate(st.warp_instructions as f64 / self.secs.max(1e-9));
        println!("  simulated in {:.3} s ({rate} warp instructions/s)", self.secs);
        if let (true, Some(m)) = (a.lines, m) {
            println!();
            print!("{}", m.render_lines(a.top));
        }
        for p in self.written {
            println!("  wrote {}", p.display());
        }
        if let Some(d) = &s.diagnostics {
            print!("\n{}", warpsim::checking::render(d, a.engine.checking.verbose));
        }
        Ok(())
    }
}

fn cmd_corpus(a: CorpusArgs) -> Result<()> {
    let (_watch, opts) = a.engine.start_batch()?;
    let manifest = load_manifest(&a.manifest)?;
    let mut cache = ProgramCache::default();
    let selected: Vec<_> = manifest.cases.iter().filter(|c| a.cases.is_empty() || a.cases.contains(&c.name)).collect();
    if selected.is_empty() {
        bail!("no case matches {:?}", a.cases);
    }
    let color = std::io::stdout().is_terminal() && !a.json;
    let mut outcomes = Vec::new();
    if !a.json {
        println!("{:<26} {:<6} {:>14} {:>8} {:>9}", "case", "status", "warp insts", "thr/inst", "seconds");
    }
    for c in selected {
        let o = run_case(c, &opts, &mut cache);
        if !a.json {
            let status = match (o.status, color) {
                (CaseStatus::Pass, true) => "\x1b[32mpass\x1b[0m  ".to_string(),
                (CaseStatus::Fail, true) => "\x1b[31mfail\x1b[0m  ".to_string(),
                (CaseStatus::Error, true) => "\x1b[33merror\x1b[0m ".to_string(),
                (s, false) => format!("{:<6}", s.name()),
            };
            println!(
                "{:<26} {} {:>14} {:>8.2} {:>9.3}",
                truncate(&o.name, 26),
                status,
                o.stats.warp_instructions,
                o.stats.threads_per_instruction(),
                o.sim_seconds
            );
            if let Some(line) = warpsim::timing_cli::corpus_line(&o, c) {
                println!("{line}");
            }
            for ch in o.checks.iter().filter(|c| !c.matched) {
                println!("    {ch}");
            }
            // A fault the checkers report as a diagnostic is printed once, as the diagnostic.
            let diagnosed = |e: &str| o.diagnostics.iter().flatten().any(|d| e.contains(&format!("at PTX line {}:", d.ptx_line())));
            if let Some(e) = o.error.as_ref().filter(|e| !diagnosed(e)) {
                for line in e.lines() {
                    println!("    {line}");
                }
            }
            for line in warpsim::checking::summary_lines(o.diagnostics.as_deref().unwrap_or_default(), a.engine.checking.verbose) {
                println!("    {line}");
            }
            // Under --check each served access is already a diagnostic.
            if o.diagnostics.is_none() {
                if let Some(f) = o.stats.past_end.first() {
                    let more = o.stats.past_end_count - 1;
                    let more = if more > 0 { format!(" (and {more} more)") } else { String::new() };
                    println!("    warning{more}: {}", f.to_string().replace('\n', "\n    "));
                    println!("      served: past the allocation's exact end but within its page, as a GPU serves it");
                }
            }
        }
        outcomes.push(o);
    }
    let pass = outcomes.iter().filter(|o| o.status == CaseStatus::Pass).count();
    let fail = outcomes.iter().filter(|o| o.status == CaseStatus::Fail).count();
    let err = outcomes.len() - pass - fail;
    if a.json {
        let j = serde_json::json!({
            "manifest": a.manifest.display().to_string(),
            "cases": outcomes.iter().map(|o| o.to_json()).collect::<Vec<_>>(),
            "summary": {"pass": pass, "fail": fail, "error": err},
        });
        println!("{}", serde_json::to_string_pretty(&j)?);
    } else {
        println!("{pass} passed, {fail} failed, {err} errors (of {})", outcomes.len());
    }
    // Cases that declare a bug (`expect_diagnostic`) may end in a fault; any other case must pass.
    let bad: Vec<_> = outcomes
        .iter()
        .zip(manifest.cases.iter().filter(|c| a.cases.is_empty() || a.cases.contains(&c.name)))
        .filter(|(o, c)| {
            o.status == CaseStatus::Fail
                || (o.status == CaseStatus::Error && c.expect_diagnostic.is_none())
                || !o.check_ok(c.expect_diagnostic.is_some())
        })
        .map(|(o, _)| o.name.clone())
        .collect();
    if !bad.is_empty() {
        bail!("{} case(s) did not pass: {}", bad.len(), bad.join(", "));
    }
    Ok(())
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        s.chars().take(n - 1).collect::<String>() + "…"
    }
}

/// The loop of `../shared/tools/speed-limit` on this machine: millions of
/// warp instructions per second with a full and a half mask.
#[derive(Clone, Copy, Debug)]
struct SpeedLimit {
    full: f64,
    half: f64,
}

/// How to build the speed-limit tool, for when it is not found.
const SPEED_LIMIT_HINT: &str = "build it with: RUSTFLAGS=\"-C target-cpu=x86-64-v3\" cargo build --release \
     --manifest-path ../shared/tools/speed-limit/Cargo.toml --target-dir /tmp/speed-limit \
     (then `warpsim bench` finds /tmp/speed-limit/release/speed-limit; or pass --speed-limit PATH)";

/// Where the speed-limit binary is: the option, the environment, then the usual build places.
fn find_speed_limit(a: &BenchArgs) -> Option<PathBuf> {
    if let Some(p) = &a.speed_limit {
        return Some(p.clone());
    }
    if let Some(p) = std::env::var_os("WARPSIM_SPEED_LIMIT") {
        return Some(PathBuf::from(p));
    }
    let mut places = vec![PathBuf::from("/tmp/speed-limit/release/speed-limit")];
    if let Some(root) = a.manifest.parent().and_then(|c| c.parent()) {
        places.push(root.join("tools/speed-limit/target/release/speed-limit"));
    }
    places.into_iter().find(|p| p.is_file())
}

/// Runs the speed-limit binary once; it prints `full N` and `half N`.
fn run_speed_limit(bin: &std::path::Path) -> Result<SpeedLimit> {
    let out = std::process::Command::new(bin).output().with_context(|| format!("running {}", bin.display()))?;
    if !out.status.success() {
        bail!("{} exited with {}", bin.display(), out.status);
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let get = |k: &str| -> Result<f64> {
        let line = text.lines().find_map(|l| l.strip_prefix(k)).with_context(|| format!("{} printed no `{k}` line", bin.display()))?;
        line.trim().parse().with_context(|| format!("{}: `{k}{line}` is not a number", bin.display()))
    };
    Ok(SpeedLimit { full: get("full ")?, half: get("half ")? })
}

/// How many times slower this CPU runs chains of f32 fma on subnormal values
/// than on normal ones. The speed-limit loop's fma operands are subnormal
/// (its registers start as small integers' bits), so where this is large
/// (Intel cores take a microcode assist per subnormal operation; AMD's Zen
/// does not) the loop's figure measures the assist, not the machine.
fn subnormal_slowdown() -> f64 {
    let chains = |x: f32| {
        let mut best = f64::INFINITY;
        for _ in 0..3 {
            let t = Instant::now();
            let mut acc = [std::hint::black_box(x); 8];
            let half = std::hint::black_box(0.5f32);
            for _ in 0..20_000 {
                for a in &mut acc {
                    *a = a.mul_add(half, x);
                }
            }
            std::hint::black_box(acc);
            best = best.min(t.elapsed().as_secs_f64());
        }
        best
    };
    // acc converges to 2x: about 2e-40 (subnormal), or 2.0.
    chains(1e-40) / chains(1.0).max(1e-9)
}

/// One case measured in one mode.
struct BenchCell {
    seconds: f64,
    warp_instructions: u64,
    cycles: Option<u64>,
}

impl BenchCell {
    fn mwips(&self) -> f64 {
        self.warp_instructions as f64 / self.seconds.max(1e-12) / 1e6
    }
}

fn cmd_bench(a: BenchArgs) -> Result<()> {
    let (_watch, base) = a.engine.start_batch()?;
    let manifest = load_manifest(&a.manifest)?;
    let modes: Vec<BenchMode> = if !a.modes.is_empty() {
        a.modes.clone()
    } else if a.metrics {
        vec![BenchMode::Metrics]
    } else if base.check {
        vec![BenchMode::Check]
    } else if base.timing.is_some() {
        vec![BenchMode::Timing]
    } else {
        vec![BenchMode::Functional, BenchMode::Metrics, BenchMode::Check, BenchMode::Timing]
    };
    let gpu = a.engine.timing.gpu.clone();
    let mode_opts = |m: BenchMode| -> LaunchOptions {
        let mut o = LaunchOptions { metrics: false, check: false, timing: None, ..base.clone() };
        match m {
            BenchMode::Functional => {}
            BenchMode::Metrics => o.metrics = true,
            BenchMode::Check => o.check = true,
            BenchMode::Timing => {
                o.warp_size = gpu.preset.warp_size;
                o.timing = Some(warpsim_host::TimingMode { gpu: gpu.clone(), timeline: false });
            }
        }
        o
    };
    // The speed-limit loop runs before and after the cases; the better run counts.
    let limit_bin = if a.no_speed_limit { None } else { find_speed_limit(&a) };
    let mut limit: Option<SpeedLimit> = None;
    let sample_limit = |limit: &mut Option<SpeedLimit>| -> Result<()> {
        if let Some(bin) = &limit_bin {
            let s = run_speed_limit(bin)?;
            *limit = Some(match *limit {
                Some(l) => SpeedLimit { full: l.full.max(s.full), half: l.half.max(s.half) },
                None => s,
            });
        }
        Ok(())
    };
    sample_limit(&mut limit)?;
    if let Some(bin) = &limit_bin {
        let slow = subnormal_slowdown();
        if slow > 3.0 {
            eprintln!(
                "note: this CPU computes f32 fma on subnormal values {slow:.0}x slower than on normal ones; the \
                 speed-limit loop as shipped computes on subnormal values, so if {} is that build, its figures (and the \
                 ratios) understate this machine; docs/speed.md (\"Subnormal floats and the speed-limit loop\") says how \
                 to build one that flushes them",
                bin.display()
            );
        }
    }
    if limit_bin.is_none() && !a.no_speed_limit {
        eprintln!("note: the speed-limit tool was not found, so no ratios; {SPEED_LIMIT_HINT}");
    }
    let mut cache = ProgramCache::default();
    let threads = if a.engine.serial { 1 } else { rayon::current_num_threads() };
    let selected: Vec<_> = manifest
        .cases
        .iter()
        .filter(|c| if a.cases.is_empty() { !c.name.starts_with("bug_") } else { a.cases.contains(&c.name) })
        .collect();
    if selected.is_empty() {
        bail!("no case matches {:?}", a.cases);
    }
    let mut table: Vec<(String, f64, Vec<BenchCell>)> = Vec::new();
    for c in selected {
        let kernel = cache.get(&c.ptx, &c.kernel).map_err(flat)?;
        let dims = Dims::new(c.grid, c.block, c.dynamic_shared_bytes);
        let mut cells = Vec::new();
        let mut tpi = 0.0;
        for &m in &modes {
            let opts = mode_opts(m);
            let mut cell = BenchCell { seconds: f64::INFINITY, warp_instructions: 0, cycles: None };
            for _ in 0..a.repeat.max(1) {
                let mut prepared = prepare(&kernel, &c.params).map_err(flat)?;
                let t0 = Instant::now();
                let s = prepared.launch(&dims, &opts).map_err(|e| anyhow::anyhow!("{} ({}): {e}", c.name, m.name()))?;
                cell.seconds = cell.seconds.min(t0.elapsed().as_secs_f64());
                cell.warp_instructions = s.stats.warp_instructions;
                cell.cycles = s.cycles();
                tpi = s.stats.threads_per_instruction();
            }
            cells.push(cell);
        }
        table.push((c.name.clone(), tpi, cells));
    }
    sample_limit(&mut limit)?;
    let func = modes.iter().position(|&m| m == BenchMode::Functional);
    if a.json {
        let rows: Vec<_> = table
            .iter()
            .map(|(name, tpi, cells)| {
                let mut modes_j = serde_json::Map::new();
                for (m, cell) in modes.iter().zip(cells) {
                    let mut j = serde_json::json!({
                        "warp_instructions": cell.warp_instructions, "seconds": cell.seconds, "mwips": cell.mwips(),
                    });
                    if let Some(l) = limit {
                        j["ratio_full"] = serde_json::json!(cell.mwips() / l.full);
                        j["ratio_half"] = serde_json::json!(cell.mwips() / l.half);
                    }
                    if let (Some(f), false) = (func, *m == BenchMode::Functional) {
                        j["time_vs_functional"] = serde_json::json!(cell.seconds / cells[f].seconds);
                    }
                    if let Some(cy) = cell.cycles {
                        j["cycles"] = serde_json::json!(cy);
                    }
                    modes_j.insert(m.name().to_string(), j);
                }
                serde_json::json!({"name": name, "threads_per_instruction": tpi, "modes": modes_j})
            })
            .collect();
        let j = serde_json::json!({
            "threads": threads,
            "gpu": gpu.preset.key,
            "speed_limit": limit.map(|l| serde_json::json!({
                "full_mwips": l.full, "half_mwips": l.half,
                "path": limit_bin.as_deref().map(|b| b.display().to_string()),
            })),
            "cases": rows,
        });
        println!("{}", serde_json::to_string_pretty(&j)?);
        return Ok(());
    }
    match limit {
        Some(l) => println!(
            "speed limit ({}, this run): full mask {:.1} M, half mask {:.1} M warp insts/s; {threads} thread(s)",
            limit_bin.as_deref().map_or_else(|| "?".into(), |b| b.display().to_string()),
            l.full,
            l.half
        ),
        None => println!("{threads} thread(s); no speed-limit figure, so no ratios"),
    }
    println!("M: million warp instructions per second; /full, /half: ratio to the loop; x fn: time over the bare engine's");
    let mut head = format!("{:<22} {:>11} {:>5}", "case", "warp insts", "thr");
    for &m in &modes {
        let h = match (m, limit.is_some(), func.is_some()) {
            (BenchMode::Functional, true, _) => format!(" | {:>7} {:>5} {:>5}", "func M", "/full", "/half"),
            (BenchMode::Functional, false, _) => format!(" | {:>7}", "func M"),
            (BenchMode::Timing, true, _) => format!(" | {:>7} {:>5} {:>11}", "time M", "/full", "cycles"),
            (BenchMode::Timing, false, _) => format!(" | {:>7} {:>11}", "time M", "cycles"),
            (m, _, true) => format!(" | {:>7} {:>5}", if m == BenchMode::Metrics { "metr M" } else { "check M" }, "x fn"),
            (m, _, false) => format!(" | {:>7}", if m == BenchMode::Metrics { "metr M" } else { "check M" }),
        };
        head.push_str(&h);
    }
    println!("{head}");
    for (name, tpi, cells) in &table {
        let insts = cells.first().map_or(0, |c| c.warp_instructions);
        let mut line = format!("{:<22} {:>11} {:>5.1}", truncate(name, 22), insts, tpi);
        for (m, cell) in modes.iter().zip(cells) {
            let r = cell.mwips();
            let s = match (m, limit) {
                (BenchMode::Functional, Some(l)) => format!(" | {r:>7.1} {:>5.2} {:>5.2}", r / l.full, r / l.half),
                (BenchMode::Functional, None) => format!(" | {r:>7.1}"),
                (BenchMode::Timing, l) => {
                    let cy = cell.cycles.map_or("-".to_string(), |c| c.to_string());
                    match l {
                        Some(l) => format!(" | {r:>7.1} {:>5.2} {cy:>11}", r / l.full),
                        None => format!(" | {r:>7.1} {cy:>11}"),
                    }
                }
                _ => match func {
                    Some(f) => format!(" | {r:>7.1} {:>5.2}", cell.seconds / cells[f].seconds),
                    None => format!(" | {r:>7.1}"),
                },
            };
            line.push_str(&s);
        }
        println!("{line}");
    }
    Ok(())
}

/// Peak resident memory of this process (Linux), for checking lazy memory.
fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}
