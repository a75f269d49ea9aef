//! `--report report.html` and `--trace trace.json` for `warpsim run`: fills a
//! [`warpsim_report::Report`] from the metrics observer, the occupancy
//! calculator and the warp timeline, and writes the files.

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use warpsim_check::Diagnostic;
use warpsim_engine::LaunchStats;
use warpsim_gpu::{occupancy, GpuPreset, OccupancyInput};
use warpsim_host::{Dims, HostError, LaunchOptions, Prepared, TimingMode};
use warpsim_ir::{Kernel, Program};
use warpsim_launch::ParamSpec;
use warpsim_metrics::{LaunchMetrics, PcCounters};
use warpsim_report::{BranchRow, DiagnosticGroupView, IssueSpan, LineRow, MemRow, OccupancyView, Report, SlotView, SummaryItem, Timeline};
use warpsim_timing::TimingReport;

/// The most issue spans a report or trace keeps (every SM's, in time order).
const TIMELINE_SPANS: usize = 400_000;

/// The GPU preset pictures are drawn for: the H200 for 32-lane warps, the
/// MI300X for 64-lane wavefronts.
pub fn preset_for_warp_size(warp_size: u32) -> GpuPreset {
    let name = if warp_size == 64 { "mi300x" } else { "h200" };
    GpuPreset::by_name(name).expect("built-in preset")
}

/// `file:line` of the instruction at `pc` (the CUDA line from `.loc`, else `ptx:N`).
pub fn place(program: &Program, k: &Kernel, pc: usize) -> String {
    program.source_place(k, pc as u32).map(|p| p.to_string()).unwrap_or_default()
}

/// The occupancy stepper for blocks of `block_threads` on `preset`: as many
/// resident blocks as the calculator allows (registers not counted: ptxas
/// decides them, and PTX does not say), each warp's lanes lit or grey.
/// `max_blocks` caps the resident blocks drawn (the seed's picture shows one).
pub fn occupancy_view(
    preset: &GpuPreset,
    block_threads: u32,
    static_shared: u32,
    dynamic_shared: u32,
    max_blocks: Option<u32>,
) -> Option<OccupancyView> {
    let o = occupancy(preset, &OccupancyInput::new(block_threads, 0).shared(static_shared, dynamic_shared)).ok()?;
    let ws = preset.warp_size;
    let blocks = max_blocks.map_or(o.blocks_per_sm, |m| m.min(o.blocks_per_sm));
    let mut slots = Vec::new();
    for b in 0..blocks {
        for w in 0..o.warps_per_block {
            let lanes = (block_threads - w * ws).min(ws);
            slots.push(SlotView { block: Some(b), warp_in_block: w, active_lanes: lanes });
        }
    }
    while slots.len() < preset.max_warps_per_sm as usize {
        slots.push(SlotView { block: None, warp_in_block: 0, active_lanes: 0 });
    }
    let idle = o.warps_per_block * ws - block_threads;
    let shown = if blocks < o.blocks_per_sm {
        format!("{} of the {} resident blocks the occupancy calculator allows are drawn", blocks, o.blocks_per_sm)
    } else {
        format!(
            "{} blocks fit ({:.0}% occupancy, limited by {}), {} of {} slots used",
            o.blocks_per_sm,
            o.occupancy * 100.0,
            o.limiter,
            o.warps_per_sm,
            o.max_warps_per_sm
        )
    };
    Some(OccupancyView {
        gpu: format!("{} ({})", preset.key.to_uppercase(), preset.arch),
        warp_size: ws,
        schedulers: preset.schedulers_per_sm,
        slots,
        caption: format!(
            "{} ({}): {} warp slots per SM. A block of {block_threads} threads takes {} slot{}; {}. {} \
             Registers are not counted (ptxas allocates them; PTX does not say).",
            preset.key.to_uppercase(),
            preset.arch,
            preset.max_warps_per_sm,
            o.warps_per_block,
            if o.warps_per_block == 1 { "" } else { "s" },
            shown,
            if idle > 0 {
                format!("The last warp of each block has {idle} grey lanes that hold no thread and stay idle for the life of the block.")
            } else {
                "Every lane of every warp holds a thread.".to_string()
            }
        ),
    })
}

/// What the report says of checking and faults.
#[derive(Default, Clone, Copy)]
pub struct Checked<'a> {
    /// With `--check`: the findings (empty: none).
    pub diagnostics: Option<&'a [Diagnostic]>,
    /// The fault that ended the launch, if it did not finish.
    pub fault: Option<&'a str>,
}

/// Whether `file` is a CUDA toolkit or compiler header rather than the user's
/// code: its rows fold away in the report.
pub fn is_toolkit_header(file: &str) -> bool {
    let base = file.rsplit('/').next().unwrap_or(file);
    let in_toolkit = ["/cuda/include/", "/nvidia/cu", "/targets/x86_64-linux/include/", "/lib/clang/", "/crt/", "/cub/", "/cuda/std/"]
        .iter()
        .any(|d| file.contains(d));
    in_toolkit
        || base.starts_with("__clang_cuda")
        || base == "warpsim_cuda.h"
        || (base.ends_with(".h") || base.ends_with(".hpp"))
            && ["cuda_", "sm_", "device_", "cooperative_groups", "math_functions"].iter().any(|p| base.starts_with(p))
}

/// Builds the report of one launch.
#[allow(clippy::too_many_arguments)]
pub fn build_report(
    program: &Program,
    kernel: &str,
    grid: [u32; 3],
    block: [u32; 3],
    dynamic_shared: u32,
    warp_size: u32,
    stats: &LaunchStats,
    m: &LaunchMetrics,
    timing: Option<&TimingReport>,
    timeline: Option<Timeline>,
    timeline_note: String,
    checked: Checked<'_>,
) -> Report {
    let k = program.kernel(kernel).expect("kernel");
    let t = &m.totals;
    let threads: u32 = block.iter().product();
    let wpb = threads.div_ceil(warp_size);
    let last = threads - (wpb - 1) * warp_size;
    let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    let mut summary = vec![
        SummaryItem::new("kernel", kernel, program.source_name.clone()),
        SummaryItem::new("grid x block", format!("{grid:?} x {block:?}"), format!("{} blocks of {threads} threads", stats.blocks)),
        SummaryItem::new(
            "warps per block",
            wpb.to_string(),
            format!("ceil({threads} / {warp_size}); the last warp has {last} of {warp_size} lanes"),
        ),
        SummaryItem::new("warps", stats.warps.to_string(), ""),
        SummaryItem::new(
            "warp instructions",
            t.ptx_warp_insts.to_string(),
            format!("PTX; about {} as SASS (moves and parameter loads folded)", t.insts.warp_insts),
        ),
    ];
    summary.extend(t.summary_rows().into_iter().map(|r| SummaryItem::new(r.label, r.value, r.detail)));
    if let Some(tr) = timing {
        summary.push(SummaryItem::new(
            "cycles",
            tr.cycles.to_string(),
            format!(
                "timing model, {} preset (sm__cycles_elapsed.max, {} of launch overhead included); {:.1}% achieved occupancy, \
                 issue slots busy {:.1}%",
                tr.gpu.to_uppercase(),
                tr.launch_overhead_cycles,
                tr.achieved_occupancy_pct(),
                tr.issue_active_pct()
            ),
        ));
    }
    let stalls: std::collections::HashMap<&str, u64> =
        timing.map(|t| t.lines.iter().map(|l| (l.line.as_str(), l.stalls.iter().map(|s| s.1).sum::<u64>())).collect()).unwrap_or_default();

    let lines = m
        .lines
        .iter()
        .map(|l| {
            let (c, mem) = (&l.counters.insts, &l.counters.mem);
            LineRow {
                place: l.place.clone(),
                text: l.text.clone(),
                ptx_lines: {
                    let mut v = l.ptx_lines.clone();
                    v.sort_unstable();
                    v
                },
                warp_insts: c.warp_insts,
                threads_per_inst: l.threads_per_inst(),
                branches: c.branches,
                divergent_branches: c.divergent_branches,
                sectors_per_request: (mem.global_requests > 0)
                    .then(|| (ratio(mem.global_sectors, mem.global_requests), ratio(mem.global_ideal_sectors, mem.global_requests))),
                bank_conflicts: (mem.shared_requests > 0)
                    .then(|| (l.bank_conflicts(), ratio(mem.shared_wavefronts, mem.shared_ideal_wavefronts))),
                stall_cycles: if timing.is_some() { Some(stalls.get(l.place.as_str()).copied().unwrap_or(0)) } else { None },
                in_header: l.file.as_deref().is_some_and(is_toolkit_header),
            }
        })
        .collect();

    let mut branches = Vec::new();
    let mut memory = Vec::new();
    for (pc, PcCounters { insts: c, mem }) in m.per_pc.iter().enumerate() {
        if c.branches > 0 {
            branches.push(BranchRow {
                place: place(program, k, pc),
                ptx_line: k.info[pc].ptx_line,
                executions: c.branches,
                divergent: c.divergent_branches,
                threads_per_exec: ratio(c.thread_insts, c.warp_insts),
            });
        }
        // Global requests cost sectors, shared ones wavefronts.
        for (space, requests, cost, ideal) in [
            ("global", mem.global_requests, mem.global_sectors, mem.global_ideal_sectors),
            ("shared", mem.shared_requests, mem.shared_wavefronts, mem.shared_ideal_wavefronts),
        ] {
            if requests > 0 {
                memory.push(MemRow {
                    place: place(program, k, pc),
                    ptx_line: k.info[pc].ptx_line,
                    op: k.info[pc].opcode.clone(),
                    space: space.into(),
                    requests,
                    per_request: ratio(cost, requests),
                    ideal_per_request: ratio(ideal, requests),
                });
            }
        }
    }
    let preset = preset_for_warp_size(warp_size);
    Report {
        title: format!("warpsim report: {kernel}"),
        subtitle: format!("{} — grid {grid:?}, block {block:?}, {warp_size}-lane warps", program.source_name),
        warp_size,
        summary,
        lines,
        branches,
        memory,
        occupancy: occupancy_view(&preset, threads, k.shared_static_bytes, dynamic_shared, None),
        timeline,
        timeline_note,
        fault: checked.fault.map(str::to_string),
        diagnostics: checked.diagnostics.map(|d| {
            warpsim_check::group_diagnostics(d)
                .0
                .iter()
                .map(|g| DiagnosticGroupView { heading: g.heading(), places: g.diags.iter().map(|d| d.to_string()).collect() })
                .collect()
        }),
        advice: checked
            .diagnostics
            .map(|d| warpsim_check::group_diagnostics(d).1.into_iter().map(|(k, a)| (k.title().to_string(), a.to_string())).collect())
            .unwrap_or_default(),
        notes: vec!["Counts follow from lane masks and addresses alone and match Nsight Compute's on the corpus (requests, sectors, \
             wavefronts, bank conflicts); instruction counts are PTX instructions, which ptxas turns into somewhat fewer SASS ones."
            .into()],
    }
}

/// What `warpsim run` hands over for `--report` and `--trace`.
pub struct RunReport<'a> {
    pub prepared: &'a Prepared,
    pub params: &'a [ParamSpec],
    pub dims: Dims,
    pub opts: &'a LaunchOptions,
    pub stats: &'a LaunchStats,
    pub metrics: Option<&'a LaunchMetrics>,
    /// The timing model's report of the same run, with its timeline.
    pub timing: Option<&'a TimingReport>,
    pub html: Option<&'a Path>,
    pub trace: Option<&'a Path>,
    pub checked: Checked<'a>,
}

/// Writes the HTML report and/or the trace; returns the paths written.
pub fn write_run_reports(r: RunReport<'_>) -> Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    if r.html.is_none() && r.trace.is_none() {
        return Ok(written);
    }
    let p = r.prepared;
    let (timing, timeline, note) = match r.timing {
        Some(t) => {
            let tl = timeline_of(t, TIMELINE_SPANS);
            let note = format!(
                "From the timing model ({} preset), in the same run as the rest of this report: each bar is a run of cycles in which \
                 one sub-partition issued for one warp; gaps are cycles with no warp ready. {} cycles in all, every SM{}; scroll \
                 the picture, hover a bar for its warp.",
                t.gpu.to_uppercase(),
                t.kernel_cycles,
                if tl.truncated { format!(" (only the first {} issue spans were kept)", tl.spans.len()) } else { String::new() }
            );
            if tl.truncated && r.trace.is_some() {
                eprintln!(
                    "warning: the trace and the report's timeline keep the first {} issue spans of the launch (every SM, in time \
                     order); later cycles are left out",
                    tl.spans.len()
                );
            }
            (Some(t), Some(tl), note)
        }
        None => (None, None, "No timeline: this launch did not run on the timing model.".to_string()),
    };
    if let Some(path) = r.trace {
        let t = timeline.as_ref().context("no timeline to write as a trace")?;
        let j = warpsim_report::trace::chrome_trace(t, p.kernel.name());
        std::fs::write(path, serde_json::to_string(&j)?).with_context(|| format!("writing {}", path.display()))?;
        written.push(path.to_path_buf());
    }
    if let Some(path) = r.html {
        let m = r.metrics.context("the report needs the metrics (leave out --no-metrics)")?;
        let d = &r.dims;
        let rep = build_report(
            p.kernel.program(),
            p.kernel.name(),
            d.grid,
            d.block,
            d.dynamic_shared_bytes,
            r.opts.warp_size,
            r.stats,
            m,
            timing,
            timeline,
            note,
            r.checked,
        );
        std::fs::write(path, warpsim_report::html(&rep)).with_context(|| format!("writing {}", path.display()))?;
        written.push(path.to_path_buf());
    }
    Ok(written)
}

/// The timing mode a launch with `--report` or `--trace` runs in: the
/// user's `--mode timing --gpu`, else the default preset for the warp size,
/// with the timeline recorded. The report's metrics, cycles and timeline all
/// come from that one run.
pub fn report_timing(opts: &LaunchOptions) -> Result<TimingMode, HostError> {
    Ok(match &opts.timing {
        Some(m) => TimingMode { gpu: m.gpu.clone(), timeline: true },
        None => TimingMode::preset(&preset_for_warp_size(opts.warp_size).key, true)?,
    })
}

/// The timing model's spans as a report timeline, every SM's: the first
/// `max_spans` in time order (`truncated` says whether any were left out).
pub fn timeline_of(t: &TimingReport, max_spans: usize) -> Timeline {
    let mut spans: Vec<_> = t.timeline.as_deref().unwrap_or(&[]).iter().collect();
    spans.sort_by_key(|s| (s.start_cycle, s.sm, s.subpartition));
    let mut out = Vec::new();
    let mut truncated = t.timeline_truncated;
    for s in spans {
        if out.len() >= max_spans {
            truncated = true;
            break;
        }
        out.push(IssueSpan {
            sm: s.sm,
            subpartition: s.subpartition,
            block: s.block,
            warp: s.warp_in_block,
            start: s.start_cycle,
            end: s.end_cycle + 1,
            label: format!("{} instruction{}", s.instructions, if s.instructions == 1 { "" } else { "s" }),
        });
    }
    let cycles = out.iter().map(|s| s.end).max().unwrap_or(0);
    Timeline {
        source: format!("warpsim timing model, {} preset", t.gpu.to_uppercase()),
        cycles,
        subpartitions_per_sm: t.schedulers_per_sm,
        spans: out,
        truncated,
    }
}

/// The `warpsim run` options this module serves (flattened into its arguments).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ReportArgs {
    /// Write a self-contained HTML report (summary, per-line table, SVG pictures) to this file.
    #[arg(long, value_name = "FILE.html")]
    pub report: Option<PathBuf>,
    /// Write the warp timeline as Chrome Trace Event JSON (ui.perfetto.dev, chrome://tracing).
    #[arg(long, value_name = "FILE.json")]
    pub trace: Option<PathBuf>,
    /// An extra flag for clang when the kernel is a .cu file (repeatable), e.g. --clang-arg=-O0.
    #[arg(long = "clang-arg", value_name = "FLAG", allow_hyphen_values = true)]
    pub clang_args: Vec<String>,
}

impl ReportArgs {
    /// Whether the launch must gather metrics for these outputs.
    pub fn needs_metrics(&self) -> bool {
        self.report.is_some()
    }
}
