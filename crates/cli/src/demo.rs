//! `warpsim demo`: runs the built-in kernels (`demo/kernels.cu`, compiled to
//! the `demo/kernels.ptx` built into the binary) and shows, with short
//! explanations, every claim of the seed documents: warps per block and the
//! last warp's active mask, `clock64` per warp, the cost of divergence and a
//! predicated `if`, sectors per request against stride, bank conflicts and
//! the padding that removes them, `warp_sum` with shuffles against shared
//! memory, an SM's warp slots for a 48-thread block, and the same kernel on
//! 32- and 64-lane GPUs. No GPU, no network, a few seconds.
//!
//! [`run_demo`] computes the numbers ([`DemoResults`], which is also the
//! `--json` output); [`render_text`] explains them in at most 100 columns.

use anyhow::{anyhow, Context, Result};
use serde::Serialize;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};
use warpsim_engine::LaunchStats;
use warpsim_gpu::{occupancy, GpuPreset, OccupancyInput};
use warpsim_host::{prepare, Dims, LaunchOptions, Module, Prepared, TimingMode};
use warpsim_ir::Op;
use warpsim_launch::{parse_param_arg, ParamSpec};
use warpsim_metrics::LaunchMetrics;
use warpsim_timing::{TimingGpu, TimingReport};

/// The demo kernels' PTX, generated from [`CUDA_SOURCE`] by `demo/regen.sh`.
pub const PTX: &str = include_str!("../../../demo/kernels.ptx");
/// The demo kernels' CUDA source.
pub const CUDA_SOURCE: &str = include_str!("../../../demo/kernels.cu");
/// The name the demo PTX goes by in messages.
pub const PTX_NAME: &str = "demo/kernels.ptx";

/// Block sizes of the warps table (the seed's day-21 table, plus 100).
pub const WARP_TABLE_BLOCKS: [u32; 6] = [32, 33, 48, 64, 100, 256];
/// Distinct clock64 values per block the seed measured on a Tesla T4.
const T4_DISTINCT: [(u32, u32); 5] = [(32, 1), (33, 2), (48, 2), (64, 2), (256, 8)];
/// ... and the corpus measured on the H200 (`h200_distinct_values`).
const H200_DISTINCT: [(u32, u32); 6] = [(32, 1), (33, 2), (48, 2), (64, 2), (100, 4), (256, 7)];
/// H200 cycles (sm__cycles_elapsed.avg) of div_lane_parity over div_warp_split,
/// and of div_4way_lanes over div_4way_warps (corpus).
const H200_PARITY_X: f64 = 46503.86 / 25248.95;
const H200_4WAY_X: f64 = 89251.48 / 25314.48;
/// Iterations of the divergence kernels (the corpus' div_* cases run 1024).
const DIV_ITERATIONS: u32 = 128;
/// Strides of the coalescing table, in floats.
pub const COALESCE_STRIDES: [u32; 6] = [1, 2, 4, 8, 16, 32];
/// Sectors per request the H200 gave for those strides (corpus `strided_read_*`).
const H200_SECTORS: [f64; 6] = [4.0, 8.0, 16.0, 32.0, 32.0, 32.0];
/// Useful GB/s (bytes read and written that the lanes use) of `out[i] = in[i * stride]`,
/// 32M lanes, on the H200 (`shared/reference/h200-measurements.md`).
const H200_GBPS: [f64; 6] = [2522.0, 2256.0, 1617.0, 958.0, 509.0, 448.0];
/// The seed's Tesla T4: 206 GB/s coalesced, about 15 at lanes 16 bytes apart (stride 4).
const T4_SEED_GBPS: [(u32, f64); 2] = [(1, 206.0), (4, 15.0)];
/// Lanes of the bandwidth launches: enough for a steady stream on either preset.
const BANDWIDTH_LANES: u32 = 1 << 20;
/// Strides of the bank-conflict table, in floats.
pub const BANK_STRIDES: [u32; 8] = [0, 1, 2, 4, 8, 16, 32, 33];
/// Conflict degree (wavefronts per instruction) the H200 gave (corpus `smem_stride_*`).
const H200_WAYS: [f64; 8] = [1.0, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 1.0];

// ---- results ----------------------------------------------------------------------

#[derive(Clone, Debug, Serialize)]
pub struct DemoResults {
    pub warps: Vec<WarpRow>,
    pub divergence: Divergence,
    pub coalescing: Vec<CoalesceRow>,
    pub banks: Vec<BankRow>,
    pub reduction: Reduction,
    pub occupancy: OccupancyDemo,
    pub wavefront: Vec<WavefrontRow>,
    /// The timing model's preset for the cycle figures.
    pub timing_gpu: String,
    pub seconds: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct WarpRow {
    pub threads: u32,
    pub warps: u32,
    pub lanes_in_last_warp: u32,
    /// `__activemask()` as the last thread read it.
    pub last_warp_mask: u32,
    /// Distinct `clock64()` values the block read.
    pub distinct_clock64: usize,
    /// Whether every lane of each warp read the same `clock64()` value.
    pub lanes_agree: bool,
    /// Distinct `clock64()` values on the timing model (H200 preset), where
    /// `clock64` reads the SM's cycle counter.
    pub distinct_clock64_timed: usize,
    /// The seed's Tesla T4 and the corpus's H200, where measured.
    pub t4_distinct_clock64: Option<u32>,
    pub h200_distinct_clock64: Option<u32>,
}

#[derive(Clone, Debug, Serialize)]
pub struct DivRow {
    pub kernel: String,
    pub what: String,
    pub warp_instructions: u64,
    pub threads_per_instruction: f64,
    pub divergent_branches: u64,
    /// Warp instructions relative to the uniform version of the same split.
    pub instructions_vs_uniform: f64,
    /// Cycles of the kernel on the timing model (H200 preset, launch overhead excluded).
    pub cycles: u64,
    /// Those cycles relative to the uniform version of the same split.
    pub cycles_vs_uniform: f64,
    /// The H200's cycles relative to the uniform version (corpus).
    pub h200_cycles_vs_uniform: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Divergence {
    pub blocks: u32,
    pub threads_per_block: u32,
    pub iterations: u32,
    pub rows: Vec<DivRow>,
    /// The short if/else: PTX `selp` instructions and divergent branches.
    pub short_if_selp: usize,
    pub short_if_divergent_branches: u64,
    pub short_if_branches: u64,
    pub short_if_threads_per_instruction: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct CoalesceRow {
    pub stride_floats: u32,
    pub stride_bytes: u32,
    pub sectors_per_request: f64,
    /// Bytes the warp asked for / bytes moved, in percent.
    pub bytes_used_pct: f64,
    pub h200_sectors_per_request: f64,
    /// Useful GB/s of the copy on the timing model, H200 and T4 presets
    /// ([`BANDWIDTH_LANES`] lanes, launch overhead left out).
    pub model_h200_gbps: f64,
    pub model_t4_gbps: f64,
    /// What the H200 measured (32M lanes), and the seed's T4 where it says.
    pub h200_gbps: f64,
    pub t4_seed_gbps: Option<f64>,
    /// DRAM bytes the T4 model moved per useful byte.
    pub t4_dram_bytes_per_useful: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct BankRow {
    pub stride_floats: u32,
    pub load_instructions: u64,
    pub wavefronts: u64,
    pub bank_conflicts: u64,
    /// Wavefronts per load instruction: the conflict degree.
    pub ways: f64,
    pub h200_ways: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct ReduceRow {
    pub kernel: String,
    pub warp_instructions_per_block: f64,
    pub shuffles_per_block: f64,
    pub barriers_per_block: f64,
    pub shared_instructions_per_block: f64,
    pub threads_per_instruction: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct Reduction {
    pub blocks: u32,
    pub rows: Vec<ReduceRow>,
    /// Shuffles one warp executes in `warp_sum`.
    pub shuffle_steps_per_warp: f64,
    /// Both kernels' totals agree (within float rounding).
    pub sums_agree: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct OccupancyDemo {
    pub gpu: String,
    pub block_threads: u32,
    pub warp_slots: u32,
    /// Active lanes of each warp slot when one block is resident (0: free slot).
    pub one_block_slots: Vec<u32>,
    pub blocks_per_sm: u32,
    pub warps_per_sm: u32,
    pub occupancy_pct: f64,
    pub limiter: String,
    pub idle_lanes_per_sm: u32,
    /// Warp slots a block of 33 and of 64 threads take.
    pub slots_for_33: u32,
    pub slots_for_64: u32,
}

#[derive(Clone, Debug, Serialize)]
pub struct WavefrontRow {
    pub warp_size: u32,
    pub threads: u32,
    pub warps: u64,
    pub threads_per_instruction: f64,
    pub lanes_busy_pct: f64,
    /// Lanes that hold no thread, over all warps of the block.
    pub idle_lanes: u64,
}

// ---- running ------------------------------------------------------------------------

/// The outcome of one demo launch.
struct Ran {
    stats: LaunchStats,
    metrics: LaunchMetrics,
    prepared: Prepared,
}

impl Ran {
    fn u32s(&self, buffer: &str) -> Result<Vec<u32>> {
        words(&self.prepared, buffer, u32::from_le_bytes)
    }
    fn u64s(&self, buffer: &str) -> Result<Vec<u64>> {
        words(&self.prepared, buffer, u64::from_le_bytes)
    }
    fn f32s(&self, buffer: &str) -> Result<Vec<f32>> {
        words(&self.prepared, buffer, f32::from_le_bytes)
    }
}

/// Buffer `buffer` as little-endian words of `N` bytes.
fn words<T, const N: usize>(p: &Prepared, buffer: &str, f: fn([u8; N]) -> T) -> Result<Vec<T>> {
    let bytes = p.read(buffer).map_err(|e| anyhow!("{e}"))?;
    Ok(bytes.chunks_exact(N).map(|c| f(c.try_into().expect("N bytes"))).collect())
}

/// The demo module, and progress.
struct Runner {
    module: Module,
    progress: Progress,
    gpu: Arc<TimingGpu>,
}

impl Runner {
    fn prepare(&mut self, kernel: &str, params: &[&str]) -> Result<Prepared> {
        let k = self.module.kernel(kernel).map_err(|e| anyhow!("{e}"))?;
        let specs: Vec<ParamSpec> = params.iter().map(|p| parse_param_arg(p)).collect::<Result<_, _>>()?;
        prepare(&k, &specs).map_err(|e| anyhow!("{e}"))
    }

    fn launch(&mut self, kernel: &str, grid: u32, block: u32, params: &[&str], warp_size: u32) -> Result<Ran> {
        let mut prepared = self.prepare(kernel, params)?;
        let opts = LaunchOptions { warp_size, metrics: true, ..Default::default() };
        let s = prepared.launch(&Dims::linear(grid, block), &opts).map_err(|e| anyhow!("{kernel}: {e}"))?;
        self.progress.step(kernel);
        Ok(Ran { stats: s.stats, metrics: s.metrics.context("metrics were on")?, prepared })
    }

    /// The same launch on the timing model; returns its report and the buffers.
    fn timed(&mut self, kernel: &str, grid: u32, block: u32, params: &[&str]) -> Result<(TimingReport, Prepared)> {
        let gpu = self.gpu.clone();
        self.timed_on(gpu, kernel, grid, block, params)
    }

    /// [`Runner::timed`] on another GPU preset.
    fn timed_on(&mut self, gpu: Arc<TimingGpu>, kernel: &str, grid: u32, block: u32, params: &[&str]) -> Result<(TimingReport, Prepared)> {
        let mut prepared = self.prepare(kernel, params)?;
        let opts = LaunchOptions { timing: Some(TimingMode { gpu, timeline: false }), ..Default::default() };
        let s = prepared.launch(&Dims::linear(grid, block), &opts).map_err(|e| anyhow!("{kernel}: {e}"))?;
        self.progress.step(kernel);
        Ok((s.timing.context("timing mode")?, prepared))
    }
}

/// A progress bar on standard error, only on a terminal, and only once the
/// demo has been running for a second.
struct Progress {
    bar: Option<indicatif::ProgressBar>,
    start: Instant,
    shown: bool,
}

impl Progress {
    fn new(total: u64, enabled: bool) -> Self {
        let bar = enabled.then(|| {
            let b = indicatif::ProgressBar::with_draw_target(Some(total), indicatif::ProgressDrawTarget::hidden());
            b.set_style(
                indicatif::ProgressStyle::with_template("{spinner} running demo kernels [{bar:40}] {pos}/{len} {msg}")
                    .expect("template")
                    .progress_chars("=> "),
            );
            b
        });
        Progress { bar, start: Instant::now(), shown: false }
    }

    fn step(&mut self, what: &str) {
        let Some(b) = &self.bar else { return };
        if !self.shown && self.start.elapsed() > Duration::from_secs(1) {
            b.set_draw_target(indicatif::ProgressDrawTarget::stderr());
            b.enable_steady_tick(Duration::from_millis(120));
            self.shown = true;
        }
        b.set_message(what.to_string());
        b.inc(1);
    }

    fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

fn lookup<T: Copy>(table: &[(u32, T)], k: u32) -> Option<T> {
    table.iter().find(|(x, _)| *x == k).map(|(_, v)| *v)
}

/// Runs every demo launch. `progress`: draw a bar on standard error (the
/// caller decides whether that is a terminal).
pub fn run_demo(progress: bool) -> Result<DemoResults> {
    let t0 = Instant::now();
    let launches = 2 * WARP_TABLE_BLOCKS.len() + 9 + 3 * COALESCE_STRIDES.len() + BANK_STRIDES.len() + 2 + 4;
    let gpu = Arc::new(TimingGpu::by_name("h200").map_err(|e| anyhow!("{e}"))?);
    let mut r = Runner { module: Module::from_ptx(PTX_NAME, PTX), progress: Progress::new(launches as u64, progress), gpu };
    let warps = warps_table(&mut r)?;
    let divergence = divergence(&mut r)?;
    let coalescing = coalescing(&mut r)?;
    let banks = banks(&mut r)?;
    let reduction = reduction(&mut r)?;
    let occupancy = occupancy_demo()?;
    let wavefront = wavefront(&mut r)?;
    r.progress.finish();
    Ok(DemoResults {
        warps,
        divergence,
        coalescing,
        banks,
        reduction,
        occupancy,
        wavefront,
        timing_gpu: "H200".into(),
        seconds: t0.elapsed().as_secs_f64(),
    })
}

fn probe_params(t: u32) -> [String; 3] {
    [format!("clk:u64[{t}]=zeros:out"), format!("mask:u32[{t}]=zeros:out"), format!("lane:u32[{t}]=zeros:out")]
}

fn warps_table(r: &mut Runner) -> Result<Vec<WarpRow>> {
    let mut rows = Vec::new();
    for t in WARP_TABLE_BLOCKS {
        let p = probe_params(t);
        let ran = r.launch("warp_probe", 1, t, &[&p[0], &p[1], &p[2]], 32)?;
        let clk = ran.u64s("clk")?;
        let mask = ran.u32s("mask")?;
        let warps = t.div_ceil(32);
        let distinct: BTreeSet<u64> = clk.iter().copied().collect();
        let lanes_agree = clk.chunks(32).all(|w| w.iter().all(|&c| c == w[0]));
        let (_, timed) = r.timed("warp_probe", 1, t, &[&p[0], &p[1], &p[2]])?;
        let timed_clk: BTreeSet<u64> = words(&timed, "clk", u64::from_le_bytes)?.into_iter().collect();
        rows.push(WarpRow {
            threads: t,
            warps,
            lanes_in_last_warp: t - (warps - 1) * 32,
            last_warp_mask: *mask.last().context("empty mask buffer")?,
            distinct_clock64: distinct.len(),
            lanes_agree,
            distinct_clock64_timed: timed_clk.len(),
            t4_distinct_clock64: lookup(&T4_DISTINCT, t),
            h200_distinct_clock64: lookup(&H200_DISTINCT, t),
        });
    }
    Ok(rows)
}

fn divergence(r: &mut Runner) -> Result<Divergence> {
    // The corpus' launch shape (div_* cases: 1056 blocks of 256), so the cycle ratios stand
    // beside the H200's on equal terms, with 128 of the corpus' 1024 iterations: the loop
    // dominates either way (cycle ratios 1.30x and 3.25x here, 1.31x and 3.34x at 1024), in
    // an eighth of the time.
    let (blocks, threads, iters) = (1056u32, 256u32, DIV_ITERATIONS);
    let out = format!("out:f32[{}]=zeros:out", blocks * threads);
    let it = format!("i32={iters}");
    let cases = [
        ("div_warp_split", "2 paths, split between warps", None),
        ("div_lane_parity", "2 paths, odd and even lanes", Some(H200_PARITY_X)),
        ("div_4way_warps", "4 paths, one per warp", None),
        ("div_4way_lanes", "4 paths, lane % 4 in a warp", Some(H200_4WAY_X)),
    ];
    let mut rows: Vec<DivRow> = Vec::new();
    for (i, (k, what, h200)) in cases.iter().enumerate() {
        let ran = r.launch(k, blocks, threads, &[&out, &it], 32)?;
        let (timed, _) = r.timed(k, blocks, threads, &[&out, &it])?;
        let t = &ran.metrics.totals;
        let base = if i % 2 == 0 { ran.stats.warp_instructions } else { rows[i - 1].warp_instructions };
        let base_cycles = if i % 2 == 0 { timed.kernel_cycles } else { rows[i - 1].cycles };
        rows.push(DivRow {
            kernel: k.to_string(),
            what: what.to_string(),
            warp_instructions: ran.stats.warp_instructions,
            threads_per_instruction: ran.stats.threads_per_instruction(),
            divergent_branches: t.insts.divergent_branches,
            instructions_vs_uniform: ran.stats.warp_instructions as f64 / base as f64,
            cycles: timed.kernel_cycles,
            cycles_vs_uniform: timed.kernel_cycles as f64 / base_cycles as f64,
            h200_cycles_vs_uniform: *h200,
        });
    }
    let n = 8192u32;
    let data = format!("data:f32[{n}]=unit_f32");
    let nn = format!("i32={n}");
    let ran = r.launch("branch_short", n / 256, 256, &[&data, &nn], 32)?;
    let k = ran.prepared.kernel.ir();
    let selp = k.code.iter().filter(|i| matches!(i.op, Op::Selp { .. })).count();
    Ok(Divergence {
        blocks,
        threads_per_block: threads,
        iterations: iters,
        rows,
        short_if_selp: selp,
        short_if_divergent_branches: ran.metrics.totals.insts.divergent_branches,
        short_if_branches: ran.metrics.totals.insts.branches,
        short_if_threads_per_instruction: ran.stats.threads_per_instruction(),
    })
}

fn coalescing(r: &mut Runner) -> Result<Vec<CoalesceRow>> {
    let n = 8192u32;
    let t4 = Arc::new(TimingGpu::by_name("t4").map_err(|e| anyhow!("{e}"))?);
    let h200 = r.gpu.clone();
    let mut rows = Vec::new();
    for (i, s) in COALESCE_STRIDES.into_iter().enumerate() {
        let params = [format!("in:f32[{}]=unit_f32:in", n * s), format!("out:f32[{n}]=zeros:out"), format!("i32={s}"), format!("i32={n}")];
        let ran = r.launch("strided_read", n / 256, 256, &[&params[0], &params[1], &params[2], &params[3]], 32)?;
        let t = &ran.metrics.totals;
        // The same copy, long enough for a steady stream, on both presets' timing models.
        let m = BANDWIDTH_LANES;
        let big = [
            format!("in:f32[{}]=unit_f32:in", m as u64 * s as u64),
            format!("out:f32[{m}]=zeros:out"),
            format!("i32={s}"),
            format!("i32={m}"),
        ];
        let big: Vec<&str> = big.iter().map(String::as_str).collect();
        let useful = 8.0 * m as f64;
        let gbps =
            |rep: &TimingReport, gpu: &TimingGpu| useful / (rep.kernel_cycles.max(1) as f64 / (gpu.preset.clock_mhz as f64 * 1e6)) / 1e9;
        let (on_h200, _) = r.timed_on(h200.clone(), "strided_read", m / 256, 256, &big)?;
        let (on_t4, _) = r.timed_on(t4.clone(), "strided_read", m / 256, 256, &big)?;
        rows.push(CoalesceRow {
            stride_floats: s,
            stride_bytes: 4 * s,
            sectors_per_request: t.ld.global_sectors as f64 / t.ld.global_requests.max(1) as f64,
            bytes_used_pct: 100.0 * t.ld.global_bytes as f64 / (t.ld.global_sectors * 32).max(1) as f64,
            h200_sectors_per_request: H200_SECTORS[i],
            model_h200_gbps: gbps(&on_h200, &h200),
            model_t4_gbps: gbps(&on_t4, &t4),
            h200_gbps: H200_GBPS[i],
            t4_seed_gbps: lookup(&T4_SEED_GBPS, s),
            t4_dram_bytes_per_useful: (on_t4.dram_read_bytes + on_t4.dram_write_bytes) as f64 / useful,
        });
    }
    Ok(rows)
}

fn banks(r: &mut Runner) -> Result<Vec<BankRow>> {
    let (blocks, threads, iters) = (4u32, 256u32, 32u32);
    let mut rows = Vec::new();
    for (i, s) in BANK_STRIDES.into_iter().enumerate() {
        let params = [format!("out:f32[{}]=zeros:out", blocks * threads), format!("i32={s}"), format!("i32={iters}")];
        let ran = r.launch("smem_stride", blocks, threads, &[&params[0], &params[1], &params[2]], 32)?;
        let t = &ran.metrics.totals;
        rows.push(BankRow {
            stride_floats: s,
            load_instructions: t.ld.shared_requests,
            wavefronts: t.ld.shared_wavefronts,
            bank_conflicts: t.ld.shared_wavefronts - t.ld.shared_ideal_wavefronts,
            ways: t.ld.shared_wavefronts as f64 / t.ld.shared_requests.max(1) as f64,
            h200_ways: H200_WAYS[i],
        });
    }
    Ok(rows)
}

fn reduction(r: &mut Runner) -> Result<Reduction> {
    let blocks = 64u32;
    let n = blocks * 256;
    let input = format!("in:f32[{n}]=unit_f32:in");
    let mut rows = Vec::new();
    let mut totals = Vec::new();
    let mut steps = 0.0;
    for (k, outs) in [("warp_sum_kernel", n / 32), ("block_sum_smem", blocks)] {
        let out = format!("out:f32[{outs}]=zeros:out");
        let ran = r.launch(k, blocks, 256, &[&input, &out], 32)?;
        let t = &ran.metrics.totals;
        let b = blocks as f64;
        if k == "warp_sum_kernel" {
            steps = t.shuffles as f64 / ran.stats.warps as f64;
        }
        totals.push(ran.f32s("out")?.iter().map(|&x| x as f64).sum::<f64>());
        rows.push(ReduceRow {
            kernel: k.to_string(),
            warp_instructions_per_block: ran.stats.warp_instructions as f64 / b,
            shuffles_per_block: t.shuffles as f64 / b,
            barriers_per_block: t.barriers as f64 / b,
            shared_instructions_per_block: (t.ld.shared_requests + t.st.shared_requests) as f64 / b,
            threads_per_instruction: ran.stats.threads_per_instruction(),
        });
    }
    let sums_agree = (totals[0] - totals[1]).abs() <= 1e-4 * totals[1].abs().max(1.0);
    Ok(Reduction { blocks, rows, shuffle_steps_per_warp: steps, sums_agree })
}

fn occupancy_demo() -> Result<OccupancyDemo> {
    let t4 = GpuPreset::by_name("t4").map_err(|e| anyhow!("{e}"))?;
    let block = 48;
    let o = occupancy(&t4, &OccupancyInput::new(block, 0)).map_err(|e| anyhow!("{e}"))?;
    let mut one = vec![0u32; t4.max_warps_per_sm as usize];
    for w in 0..o.warps_per_block {
        one[w as usize] = (block - w * 32).min(32);
    }
    let slots = |t: u32| occupancy(&t4, &OccupancyInput::new(t, 0)).map(|o| o.warps_per_block).unwrap_or(0);
    Ok(OccupancyDemo {
        gpu: format!("{} ({})", t4.name, t4.arch),
        block_threads: block,
        warp_slots: t4.max_warps_per_sm,
        one_block_slots: one,
        blocks_per_sm: o.blocks_per_sm,
        warps_per_sm: o.warps_per_sm,
        occupancy_pct: 100.0 * o.occupancy,
        limiter: o.limiter.to_string(),
        idle_lanes_per_sm: o.partial_warps.idle_lanes_per_sm,
        slots_for_33: slots(33),
        slots_for_64: slots(64),
    })
}

fn wavefront(r: &mut Runner) -> Result<Vec<WavefrontRow>> {
    let mut rows = Vec::new();
    for ws in [32u32, 64] {
        for t in [32u32, 256] {
            let p = probe_params(t);
            let ran = r.launch("warp_probe", 1, t, &[&p[0], &p[1], &p[2]], ws)?;
            let tpi = ran.stats.threads_per_instruction();
            rows.push(WavefrontRow {
                warp_size: ws,
                threads: t,
                warps: ran.stats.warps,
                threads_per_instruction: tpi,
                lanes_busy_pct: 100.0 * tpi / ws as f64,
                idle_lanes: ran.stats.warps * ws as u64 - t as u64,
            });
        }
    }
    Ok(rows)
}

// ---- text -------------------------------------------------------------------------------

/// Terminal styling: ANSI colour only when asked (on a terminal).
#[derive(Copy, Clone)]
pub struct Style {
    pub color: bool,
}

impl Style {
    fn wrap(self, code: &str, s: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
    fn head(self, s: &str) -> String {
        self.wrap("1;36", s)
    }
    /// A section's title between blank lines.
    fn section(self, title: &str) -> String {
        format!("\n{}\n", self.head(title))
    }
    fn good(self, s: &str) -> String {
        self.wrap("32", s)
    }
    fn bad(self, s: &str) -> String {
        self.wrap("31", s)
    }
    fn dim(self, s: &str) -> String {
        self.wrap("2", s)
    }
    /// Right-aligns `s` in `w` columns, then colours it good or bad.
    fn cell(self, s: &str, w: usize, good: bool) -> String {
        let padded = format!("{s:>w$}");
        if good {
            self.good(&padded)
        } else {
            self.bad(&padded)
        }
    }
}

/// Word-wraps `text` to 100 columns with `indent` on every line.
fn para(out: &mut String, indent: &str, text: &str) {
    let mut line = String::from(indent);
    for word in text.split_whitespace() {
        if line.len() > indent.len() && line.chars().count() + 1 + word.chars().count() > 98 {
            out.push_str(line.trim_end());
            out.push('\n');
            line = String::from(indent);
        }
        if line.len() > indent.len() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if line.len() > indent.len() {
        out.push_str(line.trim_end());
        out.push('\n');
    }
}

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or("-".into(), |v| v.to_string())
}

/// The demo's terminal output: every line at most 100 columns (without the
/// colour codes).
pub fn render_text(d: &DemoResults, st: Style) -> String {
    let mut s = String::new();
    s += &st.head("warpsim demo: the seed documents' claims, run on a simulated GPU");
    s += "\n";
    para(
        &mut s,
        "",
        "Every number below comes from running the kernels in demo/kernels.cu (compiled to PTX by clang) warp by warp \
         on a simulated 32-lane GPU; the H200 and T4 columns are what real GPUs measured.",
    );

    // 1. Warps per block.
    s += &st.section("1. A block is cut into warps of 32 consecutive threads");
    s += &format!("  {:>43}   {}\n", "", "distinct clock64() values per block");
    s += &format!(
        "  {:>7} {:>6} {:>14} {:>12}   {:>10} {:>10} {:>8}\n",
        "threads", "warps", "lanes in last", "last mask", "warpsim", "T4 (seed)", "H200"
    );
    for w in &d.warps {
        s += &format!(
            "  {:>7} {:>6} {} {:>12}   {:>10} {:>10} {:>8}\n",
            w.threads,
            w.warps,
            st.cell(&format!("{} of 32", w.lanes_in_last_warp), 14, w.lanes_in_last_warp == 32),
            format!("0x{:08x}", w.last_warp_mask),
            format!("{}{}", w.distinct_clock64, if w.lanes_agree { "" } else { " (!)" }),
            opt(w.t4_distinct_clock64),
            opt(w.h200_distinct_clock64),
        );
    }
    para(
        &mut s,
        "  ",
        "ceil(T / 32) warps; the last warp's __activemask() has one bit per thread that exists (33 threads: 0x00000001, \
         one live lane and 31 idle ones for the life of the block). Every lane of a warp read the same clock64(): one \
         instruction, 32 lanes. warpsim's functional engine counts warp instructions per block, so each warp reads its \
         own value, as on the T4; the H200, with 4 schedulers per SM, saw two of 8 warps read the same cycle.",
    );

    // 2. Divergence.
    let dv = &d.divergence;
    s += &st.section("2. Divergence: a warp runs both sides of a branch its lanes disagree on");
    s += &format!("  {} blocks of {}, {} iterations of one fma per path\n", dv.blocks, dv.threads_per_block, dv.iterations);
    s += &format!(
        "  {:<28} {:>10} {:>8} {:>9} {:>7} {:>7} {:>8} {:>6}\n",
        "paths", "warp insts", "thr/inst", "divergent", "insts x", "cycles", "cycles x", "H200 x"
    );
    for r in &dv.rows {
        s += &format!(
            "  {:<28} {:>10} {} {:>9} {} {:>7} {} {:>6}\n",
            r.what,
            r.warp_instructions,
            st.cell(&format!("{:.1}", r.threads_per_instruction), 8, r.threads_per_instruction > 31.0),
            r.divergent_branches,
            st.cell(&format!("{:.2}", r.instructions_vs_uniform), 7, r.instructions_vs_uniform < 1.1),
            r.cycles,
            st.cell(&format!("{:.2}", r.cycles_vs_uniform), 8, r.cycles_vs_uniform < 1.1),
            r.h200_cycles_vs_uniform.map_or("1.00".into(), |x| format!("{x:.2}")),
        );
    }
    para(
        &mut s,
        "  ",
        &format!(
            "Same arithmetic, split two ways: when the split falls inside a warp, the warp runs both paths with half its \
             lanes masked off each time (16 threads per instruction instead of 32), so it issues about twice the \
             instructions; four paths per warp, four times. A split on a warp boundary costs nothing: divergence is per \
             warp. Cycles come from warpsim's timing model ({} preset, launch overhead left out), on the corpus' \
             launch shape with {} iterations instead of 1024 (the ratios move by under 3%); the H200 took {:.2}x and {:.2}x the cycles for the corpus' div_* kernels (one fma per \
             path; warpsim 1.85x and 3.55x on them), whose paths are shorter than these (the seed's T4: 2.02x).",
            d.timing_gpu, DIV_ITERATIONS, H200_PARITY_X, H200_4WAY_X
        ),
    );
    para(
        &mut s,
        "  ",
        &format!(
            "A short if/else (branch_short: if (x > 0.5) x = x * 4; else x = x + 2;) is predicated: the compiler \
             computes both sides on every lane and a per-lane predicate picks one ({} selp instruction{}), so there is \
             nothing to diverge: {} divergent branches, {:.1} threads per instruction.",
            dv.short_if_selp,
            if dv.short_if_selp == 1 { "" } else { "s" },
            dv.short_if_divergent_branches,
            dv.short_if_threads_per_instruction
        ),
    );

    // 3. Coalescing.
    s += &st.section("3. Coalescing: lane i reads in[i * stride]; memory moves 32-byte sectors");
    s += &format!("  {:>14} {:>13} {:>17} {:>16} {:>8}\n", "stride", "bytes apart", "sectors/request", "bytes used", "H200");
    for c in &d.coalescing {
        s += &format!(
            "  {:>14} {:>13} {} {} {:>8}\n",
            format!("{} float{}", c.stride_floats, if c.stride_floats == 1 { "" } else { "s" }),
            c.stride_bytes,
            st.cell(&format!("{:.0}", c.sectors_per_request), 17, c.sectors_per_request <= 4.0),
            st.cell(&format!("{:.1}%", c.bytes_used_pct), 16, c.bytes_used_pct >= 99.0),
            format!("{:.0}", c.h200_sectors_per_request),
        );
    }
    para(
        &mut s,
        "  ",
        "32 floats side by side are 128 bytes: 4 sectors, one cache line, every byte used. 16 bytes apart the request \
         spans 16 sectors and only a quarter of the bytes that arrive are used; from 32 bytes apart on, every lane \
         needs a sector of its own.",
    );
    s += &format!("\n  useful GB/s of out[i] = in[i * stride], {} M lanes, timing model against real GPUs\n", BANDWIDTH_LANES >> 20);
    s += &format!(
        "  {:>14} {:>12} {:>12} {:>8} {:>12} {:>10} {:>12}\n",
        "stride", "model H200", "H200", "off", "model T4", "T4 (seed)", "T4 DRAM/use"
    );
    for c in &d.coalescing {
        let off = c.model_h200_gbps / c.h200_gbps - 1.0;
        s += &format!(
            "  {:>14} {:>12.0} {:>12.0} {} {:>12.0} {:>10} {:>12.1}\n",
            format!("{} float{}", c.stride_floats, if c.stride_floats == 1 { "" } else { "s" }),
            c.model_h200_gbps,
            c.h200_gbps,
            st.cell(&format!("{:+.0}%", off * 100.0), 8, off.abs() <= 0.15),
            c.model_t4_gbps,
            opt(c.t4_seed_gbps.map(|x| format!("{x:.0}"))),
            c.t4_dram_bytes_per_useful,
        );
    }
    let (t1, t4s) = (&d.coalescing[0], &d.coalescing[2]);
    para(
        &mut s,
        "  ",
        &format!(
            "The model's bytes are the sectors' bytes: the read side moves whole 32-byte sectors (64-byte DRAM fetches \
             on HBM) for the 4 bytes each lane uses, the write side stays coalesced. At lanes 16 bytes apart the H200 \
             model keeps {:.0}% of its coalesced rate (the H200 {:.0}%), the T4 model {:.0}% ({:.0} of {:.0} GB/s): \
             with 40 SMs and 320 GB/s the T4 is bound by the bytes it moves, and DRAM carries {:.1} bytes per useful \
             byte there against {:.1} coalesced (whose stores stay in its 4 MB L2 at this size), while the H200 is \
             held back by more than DRAM. The seed's 15 GB/s (a {:.1}x drop) is steeper than wasted sectors explain \
             (at most {:.1}x at this spread); the rest is not in the seed's text, which gives neither kernel nor launch.",
            100.0 * t4s.model_h200_gbps / t1.model_h200_gbps,
            100.0 * t4s.h200_gbps / t1.h200_gbps,
            100.0 * t4s.model_t4_gbps / t1.model_t4_gbps,
            t4s.model_t4_gbps,
            t1.model_t4_gbps,
            t4s.t4_dram_bytes_per_useful,
            t1.t4_dram_bytes_per_useful,
            206.0 / 15.0,
            t4s.t4_dram_bytes_per_useful / t1.t4_dram_bytes_per_useful.max(1e-9),
        ),
    );

    // 4. Banks.
    s += &st.section("4. Bank conflicts: lane reads s[lane * stride] from 32 banks of 4 bytes");
    s += &format!("  {:>16} {:>12} {:>12} {:>15} {:>10} {:>8}\n", "stride", "loads", "wavefronts", "bank conflicts", "way", "H200");
    for b in &d.banks {
        let label = match b.stride_floats {
            0 => "0 (broadcast)".to_string(),
            33 => "33 (32 + pad)".to_string(),
            x => x.to_string(),
        };
        s += &format!(
            "  {:>16} {:>12} {:>12} {} {} {:>8}\n",
            label,
            b.load_instructions,
            b.wavefronts,
            st.cell(&b.bank_conflicts.to_string(), 15, b.bank_conflicts == 0),
            st.cell(&format!("{:.0}-way", b.ways), 10, b.ways <= 1.0),
            format!("{:.0}-way", b.h200_ways),
        );
    }
    para(
        &mut s,
        "  ",
        "Lanes that hit different rows of one bank are served one after another: stride 2 puts two lanes on each \
         bank (2-way), stride 32 all 32 on bank 0 (32-way). Padding each 32-float row by one float (stride 33) puts \
         every lane on its own bank again; stride 0 is one word for everybody, a broadcast.",
    );

    // 5. warp_sum.
    let rd = &d.reduction;
    s += &st.section("5. warp_sum: five shuffles against a shared-memory reduction");
    s += &format!(
        "  {:<18} {:>16} {:>10} {:>10} {:>15} {:>10}\n",
        "per block of 256", "warp insts", "shuffles", "barriers", "shared insts", "thr/inst"
    );
    for r in &rd.rows {
        s += &format!(
            "  {:<18} {:>16.0} {:>10.0} {:>10.0} {:>15.0} {:>10.1}\n",
            r.kernel,
            r.warp_instructions_per_block,
            r.shuffles_per_block,
            r.barriers_per_block,
            r.shared_instructions_per_block,
            r.threads_per_instruction
        );
    }
    para(
        &mut s,
        "  ",
        &format!(
            "warp_sum takes {:.0} shuffle steps per warp (32 = 2^5), with no shared memory and no barrier; the \
             shared-memory tree needs a barrier per level and leaves more and more lanes idle. Both give the same \
             sums: {}.",
            rd.shuffle_steps_per_warp,
            if rd.sums_agree { "yes" } else { "NO" }
        ),
    );

    // 6. Occupancy picture.
    let oc = &d.occupancy;
    s += &st.section(&format!("6. Occupancy: one SM's {} warp slots, a block of {} threads", oc.warp_slots, oc.block_threads));
    s += &format!("  {} ({} lit lane, {} lane that holds no thread):\n", oc.gpu, st.good("#"), st.dim("."));
    let mut free_from = None;
    for (i, &lanes) in oc.one_block_slots.iter().enumerate() {
        if lanes == 0 {
            free_from.get_or_insert(i);
            continue;
        }
        let lit: String = "#".repeat(lanes as usize);
        let idle: String = ".".repeat(32 - lanes as usize);
        s += &format!("  slot {i:>2} |{}{}| warp {i}: {lanes} of 32 lanes\n", st.good(&lit), st.dim(&idle));
    }
    if let Some(f) = free_from {
        s += &format!("  slot {f:>2} |{}| ... slots {f} to {} free\n", " ".repeat(32), oc.warp_slots - 1);
    }
    para(
        &mut s,
        "  ",
        &format!(
            "48 threads take 2 warp slots, and the second runs 16 lanes beside 16 that were never launched. A block of \
             33 threads takes {} slots, as many as a block of 64 ({}): occupancy counts warps, not working lanes. With as \
             many blocks as fit ({}, limited by {}) the SM is {:.0}% occupied, yet {} of its lanes hold no thread.",
            oc.slots_for_33, oc.slots_for_64, oc.blocks_per_sm, oc.limiter, oc.occupancy_pct, oc.idle_lanes_per_sm
        ),
    );

    // 7. 32 vs 64 lanes.
    s += &st.section("7. The same kernel on a 32-lane GPU (NVIDIA warp) and a 64-lane GPU (AMD CDNA wavefront)");
    s +=
        &format!("  {:>10} {:>8} {:>12} {:>10} {:>12} {:>12}\n", "lanes", "threads", "warps/waves", "thr/inst", "lanes busy", "idle lanes");
    for w in &d.wavefront {
        s += &format!(
            "  {:>10} {:>8} {:>12} {:>10.1} {} {:>12}\n",
            w.warp_size,
            w.threads,
            w.warps,
            w.threads_per_instruction,
            st.cell(&format!("{:.0}%", w.lanes_busy_pct), 12, w.lanes_busy_pct >= 99.0),
            w.idle_lanes,
        );
    }
    para(
        &mut s,
        "  ",
        "A block of 32 is a full warp on NVIDIA and half a wavefront on CDNA: the same launch keeps only half the \
         lanes busy. Blocks that are multiples of 64 (256 here) are full on both.",
    );
    s += "\n";
    s += &st.dim(&format!("finished in {:.2} s. `warpsim demo --json` prints these numbers for machines.", d.seconds));
    s += "\n";
    s
}

// ---- the command ---------------------------------------------------------------------------

/// `warpsim demo`.
#[derive(clap::Args, Debug, Clone)]
pub struct DemoArgs {
    /// Print the numbers as JSON instead of the explained tables.
    #[arg(long)]
    pub json: bool,
}

/// Runs the demo and prints it (colour and progress only on a terminal).
pub fn cmd_demo(a: DemoArgs) -> Result<()> {
    use std::io::IsTerminal;
    let results = run_demo(std::io::stderr().is_terminal())?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&results)?);
    } else {
        let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
        print!("{}", render_text(&results, Style { color }));
    }
    Ok(())
}
