//! The `warpsim` command line.

mod occupancy_cmd;
use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Instant;
use warpsim::runner::{self, CaseStatus, ProgramCache, RunOptions};
use warpsim_launch::{load_manifest, parse_param_arg, ParamSpec, Role};

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
    /// Launches per case; the best is reported.
    #[arg(long, default_value_t = 3)]
    repeat: u32,
    /// Measure with the metrics observer attached (default: the bare engine).
    #[arg(long)]
    metrics: bool,
    /// Print JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    engine: EngineArgs,
}

#[derive(Args, Clone)]
struct EngineArgs {
    /// Lanes per warp: 32 (NVIDIA) or 64 (AMD CDNA wavefronts).
    #[arg(long, default_value_t = 32)]
    warp_size: u32,
    /// Worker threads for running blocks in parallel (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Run blocks one after another on one thread.
    #[arg(long)]
    serial: bool,
    /// Warp instructions one block may execute before it is stopped as a runaway loop.
    #[arg(long, default_value_t = 1 << 28)]
    max_instructions: u64,
    /// Skip the warp-level metrics (sectors, wavefronts, divergence) for speed.
    #[arg(long)]
    no_metrics: bool,
    #[command(flatten)]
    checking: warpsim::checking::CheckArgs,
    #[command(flatten)]
    timing: warpsim::timing_cli::TimingArgs,
}

impl EngineArgs {
    fn options(&self) -> RunOptions {
        let mut o = RunOptions {
            warp_size: self.warp_size,
            serial: self.serial,
            max_warp_instructions_per_block: self.max_instructions,
            metrics: !self.no_metrics,
            ..Default::default()
        };
        self.checking.apply(&mut o);
        self.timing.apply(&mut o);
        o
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
    /// The PTX file.
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
    let cli = Cli::parse();
    let r = match cli.command {
        Command::Occupancy(a) => occupancy_cmd::cmd_occupancy(a),
        Command::Run(a) => cmd_run(a),
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
    let grid = parse_dims(&a.grid, "grid")?;
    let block = parse_dims(&a.block, "block")?;
    let (name, src) = warpsim::cuda::load_kernel_file(&a.file, &a.out, &a.output.clang_args)?;
    let kernel = match &a.kernel {
        Some(k) => k.clone(),
        None => {
            let m = warpsim_ptx::parse_module(&name, &src).map_err(|e| anyhow::anyhow!("{e}"))?;
            let entries: Vec<_> = m.entries().map(|f| f.name.clone()).collect();
            match entries.as_slice() {
                [one] => one.clone(),
                [] => bail!("{name} has no .entry"),
                many => bail!("{name} has several kernels; choose one with --kernel: {}", many.join(", ")),
            }
        }
    };
    let program = warpsim_ir::compile_kernel(&name, &src, &kernel).map_err(|e| anyhow::anyhow!("{e}"))?;
    let params: Vec<ParamSpec> = a.params.iter().map(|p| parse_param_arg(p)).collect::<Result<_, _>>()?;
    let prepared = runner::prepare(std::sync::Arc::new(program), &kernel, &params).map_err(anyhow::Error::msg)?;
    let t0 = Instant::now();
    let opts = a.engine.options();
    if opts.timing.is_some() && a.output.report.is_none() && a.output.trace.is_none() {
        return warpsim::timing_cli::run_timed(&prepared, &kernel, grid, block, a.shared, &opts, &src, a.json, a.lines, a.top, &a.out);
    }
    let mut diagnostics = None;
    let (stats, metrics) = if opts.check {
        let (r, d) = prepared.launch_checked(grid, block, a.shared, &opts);
        let s = warpsim::checking::checked_result(r, &d, a.json)?;
        diagnostics = Some(d);
        (s, None)
    } else if opts.metrics || a.lines || a.output.needs_metrics() {
        let (s, m) = prepared.launch_with_metrics(grid, block, a.shared, &opts, Some(&src)).map_err(|e| anyhow::anyhow!("{e}"))?;
        (s, Some(m))
    } else {
        (prepared.launch(grid, block, a.shared, &opts).map_err(|e| anyhow::anyhow!("{e}"))?, None)
    };
    let secs = t0.elapsed().as_secs_f64();
    let occupancy = occupancy_cmd::launch_occupancy(&prepared, block, a.shared, a.engine.warp_size);
    let mut written = Vec::new();
    for (spec, base, len) in &prepared.buffers {
        if spec.role == Role::In {
            continue;
        }
        std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
        let path = a.out.join(format!("{}.npy", spec.name));
        let mut bytes = vec![0u8; *len as usize];
        prepared.mem.read(*base, &mut bytes).map_err(|e| anyhow::anyhow!("reading {}: {e:?}", spec.name))?;
        let f = std::fs::File::create(&path).with_context(|| format!("writing {}", path.display()))?;
        warpsim_launch::npy::write_npy(std::io::BufWriter::new(f), spec.dtype, &bytes)?;
        written.push(path);
    }
    written.extend(warpsim::reporting::write_run_reports(warpsim::reporting::RunReport {
        prepared: &prepared,
        params: &params,
        grid,
        block,
        shared: a.shared,
        opts: &opts,
        stats: &stats,
        metrics: metrics.as_ref(),
        html: a.output.report.as_deref(),
        trace: a.output.trace.as_deref(),
    })?);
    if a.json {
        let j = serde_json::json!({
            "kernel": kernel, "grid": grid, "block": block,
            "blocks": stats.blocks, "warps": stats.warps,
            "warp_instructions": stats.warp_instructions,
            "thread_instructions": stats.thread_instructions,
            "threads_per_instruction": stats.threads_per_instruction(),
            "sim_seconds": secs,
            "outputs": written.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
            "resident_global_bytes": prepared.mem.resident_bytes(),
            "peak_rss_bytes": peak_rss_bytes(),
            "occupancy": occupancy.as_ref().map(|(o, _)| o.clone()),
            "metrics": metrics.as_ref().map(|m| serde_json::Value::Object(m.totals.to_ncu_json())),
            "lines": if a.lines { metrics.as_ref().map(|m| serde_json::to_value(&m.lines).unwrap_or_default()) } else { None },
            "diagnostics": diagnostics.as_ref().map(|d| d.iter().map(|x| x.to_json()).collect::<Vec<_>>()),
        });
        println!("{}", serde_json::to_string_pretty(&j)?);
    } else {
        println!("kernel {kernel}: grid {grid:?} x block {block:?}");
        println!("  blocks               {:>14}", stats.blocks);
        println!("  warps                {:>14}", stats.warps);
        println!("  warp instructions    {:>14} (PTX)", stats.warp_instructions);
        println!("  thread instructions  {:>14}", stats.thread_instructions);
        match &metrics {
            Some(m) => {
                println!("  as SASS, about       {:>14} (moves and parameter loads folded)", m.totals.warp_insts);
                print!("{}", m.render_summary());
            }
            None => println!("  threads per warp instruction {:>6.2} of {}", stats.threads_per_instruction(), a.engine.warp_size),
        }
        if let Some((_, line)) = &occupancy {
            println!("{line}");
        }
        println!("  simulated in {:.3} s ({:.1} M warp instructions/s)", secs, stats.warp_instructions as f64 / secs.max(1e-9) / 1e6);
        if let (true, Some(m)) = (a.lines, &metrics) {
            println!();
            print!("{}", m.render_lines(a.top));
        }
        for p in &written {
            println!("  wrote {}", p.display());
        }
        if let Some(d) = &diagnostics {
            print!("\n{}", warpsim::checking::render(d));
        }
    }
    warpsim::checking::verdict(diagnostics.as_deref())
}

fn cmd_corpus(a: CorpusArgs) -> Result<()> {
    a.engine.init_threads()?;
    let manifest = load_manifest(&a.manifest)?;
    let opts = a.engine.options();
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
        let o = runner::run_case(c, &opts, &mut cache);
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
            if let Some(e) = &o.error {
                for line in e.lines() {
                    println!("    {line}");
                }
            }
            for line in warpsim::checking::summary_lines(o.diagnostics.as_deref().unwrap_or_default()) {
                println!("    {line}");
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
                || !warpsim::checking::case_ok(o, c.expect_diagnostic.is_some())
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

fn cmd_bench(a: BenchArgs) -> Result<()> {
    a.engine.init_threads()?;
    let manifest = load_manifest(&a.manifest)?;
    let opts = RunOptions { metrics: a.metrics, ..a.engine.options() };
    let mut cache = ProgramCache::default();
    let threads = if a.engine.serial { 1 } else { rayon::current_num_threads() };
    let mut rows = Vec::new();
    for c in manifest.cases.iter().filter(|c| if a.cases.is_empty() { !c.name.starts_with("bug_") } else { a.cases.contains(&c.name) }) {
        let program = cache.get(&c.ptx, &c.kernel).map_err(anyhow::Error::msg)?;
        let mut best = f64::INFINITY;
        let mut insts = 0;
        for _ in 0..a.repeat.max(1) {
            let prepared = runner::prepare(program.clone(), &c.kernel, &c.params).map_err(anyhow::Error::msg)?;
            let t0 = Instant::now();
            let s = if opts.check {
                prepared.launch_checked(c.grid, c.block, c.dynamic_shared_bytes, &opts).0
            } else if opts.metrics {
                prepared.launch_with_metrics(c.grid, c.block, c.dynamic_shared_bytes, &opts, None).map(|(s, _)| s)
            } else {
                prepared.launch(c.grid, c.block, c.dynamic_shared_bytes, &opts)
            }
            .map_err(|e| anyhow::anyhow!("{}: {e}", c.name))?;
            best = best.min(t0.elapsed().as_secs_f64());
            insts = s.warp_instructions;
        }
        let rate = insts as f64 / best / 1e6;
        if !a.json {
            println!("{:<26} {:>12} warp insts {:>9.4} s {:>9.1} M warp insts/s", c.name, insts, best, rate);
        }
        rows.push(serde_json::json!({"name": c.name, "warp_instructions": insts, "seconds": best, "mwips": rate}));
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&serde_json::json!({"threads": threads, "cases": rows}))?);
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
