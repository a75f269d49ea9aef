//! Timing mode on the command line: `--mode timing --gpu NAME|FILE
//! [--timeline]` on `run`, `corpus` and `bench` (flattened into their engine
//! options), and what `run` prints for a timed launch.

use crate::runner::{CaseOutcome, Prepared, RunOptions, TimingMode};
use anyhow::{Context, Result};
use std::path::Path;
use std::sync::Arc;
use warpsim_launch::Role;
use warpsim_timing::TimingGpu;

#[derive(clap::ValueEnum, Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum Mode {
    /// Outputs and warp-level metrics, blocks in parallel.
    #[default]
    Functional,
    /// Cycles on a model of the GPU (`--gpu`): SMs, schedulers, pipes, caches, DRAM.
    Timing,
}

fn parse_gpu(s: &str) -> Result<Arc<TimingGpu>, String> {
    TimingGpu::resolve(s).map(Arc::new).map_err(|e| e.to_string())
}

/// The timing-mode options.
#[derive(clap::Args, Clone, Debug)]
pub struct TimingArgs {
    /// `functional` (outputs, warp-level metrics) or `timing` (cycles on the `--gpu` model).
    #[arg(long, value_enum, default_value_t = Mode::Functional)]
    pub mode: Mode,
    /// The GPU for timing mode: t4, a100, h100, h200, mi300x, or a preset JSON
    /// file (a warpsim-gpu preset with an optional "timing" object).
    #[arg(long, default_value = "h200", value_parser = parse_gpu)]
    pub gpu: Arc<TimingGpu>,
    /// Timing mode: record which warp issued on each sub-partition, cycle by cycle (JSON `timing.timeline`).
    #[arg(long)]
    pub timeline: bool,
}

impl TimingArgs {
    /// Sets timing mode (and the preset's warp width) in `o`.
    pub fn apply(&self, o: &mut RunOptions) {
        if self.mode == Mode::Timing {
            o.warp_size = self.gpu.preset.warp_size;
            o.timing = Some(TimingMode { gpu: self.gpu.clone(), timeline: self.timeline });
        }
    }
}

/// What `warpsim run` shows for a timed launch (`opts.timing` set).
#[allow(clippy::too_many_arguments)]
pub fn run_timed(
    prepared: &Prepared,
    kernel: &str,
    grid: [u32; 3],
    block: [u32; 3],
    shared: u32,
    opts: &RunOptions,
    src: &str,
    json: bool,
    lines: bool,
    top: usize,
    out: &Path,
) -> Result<()> {
    let t0 = std::time::Instant::now();
    let (stats, t) = prepared.launch_timed(grid, block, shared, opts, None, Some(src)).map_err(|e| anyhow::anyhow!("{e}"))?;
    let secs = t0.elapsed().as_secs_f64();
    let mut written = Vec::new();
    for (spec, base, len) in &prepared.buffers {
        if spec.role == Role::In {
            continue;
        }
        std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
        let path = out.join(format!("{}.npy", spec.name));
        let mut bytes = vec![0u8; *len as usize];
        prepared.mem.read(*base, &mut bytes).map_err(|e| anyhow::anyhow!("reading {}: {e:?}", spec.name))?;
        let f = std::fs::File::create(&path).with_context(|| format!("writing {}", path.display()))?;
        warpsim_launch::npy::write_npy(std::io::BufWriter::new(f), spec.dtype, &bytes)?;
        written.push(path);
    }
    if json {
        let j = serde_json::json!({
            "kernel": kernel, "grid": grid, "block": block,
            "blocks": stats.blocks, "warps": stats.warps,
            "warp_instructions": stats.warp_instructions,
            "thread_instructions": stats.thread_instructions,
            "threads_per_instruction": stats.threads_per_instruction(),
            "sim_seconds": secs,
            "outputs": written.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
            "cycles": t.cycles,
            "metrics": serde_json::Value::Object(t.to_ncu_json()),
            "timing": t.to_json(),
        });
        println!("{}", serde_json::to_string_pretty(&j)?);
    } else {
        println!("kernel {kernel}: grid {grid:?} x block {block:?}");
        println!("  blocks               {:>14}", stats.blocks);
        println!("  warps                {:>14}", stats.warps);
        println!("  warp instructions    {:>14} (PTX)", stats.warp_instructions);
        println!("  threads per warp instruction {:>6.2}", stats.threads_per_instruction());
        print!("{}", t.render_text());
        if lines {
            println!();
            print!("{}", t.render_lines(top));
        }
        println!("  simulated in {:.3} s ({:.1} M warp instructions/s)", secs, stats.warp_instructions as f64 / secs.max(1e-9) / 1e6);
        for p in &written {
            println!("  wrote {}", p.display());
        }
    }
    Ok(())
}

/// The line `warpsim corpus --mode timing` prints under a case: its cycles,
/// and the H200's where the manifest has them.
pub fn corpus_line(o: &CaseOutcome, case: &warpsim_launch::Case) -> Option<String> {
    let t = o.timing.as_ref()?;
    let hw = if t.gpu == "h200" { case.h200.as_ref().and_then(|h| h.get("ncu")?.get("sm__cycles_elapsed.max")?.as_f64()) } else { None };
    let vs = hw.map(|h| format!(" (H200: {h:.0}, {:+.1}%)", (t.cycles as f64 / h - 1.0) * 100.0)).unwrap_or_default();
    Some(format!("    {} cycles on {}{vs}", t.cycles, t.gpu))
}
