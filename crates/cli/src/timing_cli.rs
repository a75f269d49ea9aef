//! Timing mode on the command line: `--mode timing --gpu NAME|FILE
//! [--timeline]` on `run`, `corpus` and `bench` (flattened into their engine
//! options), and the corpus table's cycles line.

use std::sync::Arc;
use warpsim_host::corpus::CaseOutcome;
use warpsim_host::{LaunchOptions, TimingMode};
use warpsim_timing::TimingGpu;

#[derive(clap::ValueEnum, Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum Mode {
    /// Outputs and warp-level metrics, blocks in parallel.
    #[default]
    Functional,
    /// Cycles on a model of the GPU (`--gpu`): SMs, schedulers, pipes, caches, DRAM.
    Timing,
}

fn parse_gpu(s: &str) -> Result<Arc<TimingGpu>, warpsim_gpu::PresetError> {
    TimingGpu::resolve(s).map(Arc::new)
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
    pub fn apply(&self, o: &mut LaunchOptions) {
        if self.mode == Mode::Timing {
            o.warp_size = self.gpu.preset.warp_size;
            o.timing = Some(TimingMode { gpu: self.gpu.clone(), timeline: self.timeline });
        }
    }
}

/// The line `warpsim corpus --mode timing` prints under a case: its cycles,
/// and the H200's where the manifest has them.
pub fn corpus_line(o: &CaseOutcome, case: &warpsim_launch::Case) -> Option<String> {
    let t = o.timing.as_ref()?;
    let hw = if t.gpu == "h200" { case.h200.as_ref().and_then(|h| h.get("ncu")?.get("sm__cycles_elapsed.max")?.as_f64()) } else { None };
    let vs = hw.map(|h| format!(" (H200: {h:.0}, {:+.1}%)", (t.cycles as f64 / h - 1.0) * 100.0)).unwrap_or_default();
    Some(format!("    {} cycles on {}{vs}", t.cycles, t.gpu))
}
