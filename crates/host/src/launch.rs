//! One kernel launch with the observers its options switch on: the
//! functional engine (bare, with metrics or with the checkers) or the timing
//! model, and what it produced.

use crate::{Context, HostError, Kernel};
use std::sync::Arc;
use warpsim_check::{CheckOptions, CheckSession, Checker, Diagnostic};
use warpsim_engine::{LaunchArgs, LaunchConfig, LaunchError, LaunchInput, LaunchStats, NoObserver, Observer, Progress, Schedule};
use warpsim_gpu::{GpuPreset, LaunchRequest};
use warpsim_metrics::{LaunchMetrics, MetricsObserver};
use warpsim_timing::{TimingGpu, TimingReport};

/// Grid, block and dynamic shared memory of a launch.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Dims {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_shared_bytes: u32,
}

impl Dims {
    pub fn new(grid: [u32; 3], block: [u32; 3], dynamic_shared_bytes: u32) -> Dims {
        Dims { grid, block, dynamic_shared_bytes }
    }

    /// A one-dimensional launch.
    pub fn linear(grid: u32, block: u32) -> Dims {
        Dims::new([grid, 1, 1], [block, 1, 1], 0)
    }
}

/// How to run a launch and which observers watch it.
#[derive(Clone, Debug)]
pub struct LaunchOptions {
    pub warp_size: u32,
    pub num_sms: u32,
    pub serial: bool,
    pub max_warp_instructions_per_block: u64,
    /// Gather warp-level metrics (sectors, wavefronts, divergence) while running.
    pub metrics: bool,
    /// The order in which the lane groups of a warp run.
    pub schedule: Schedule,
    /// Run the checkers: races, barriers, sync masks, bounds, uninitialised reads.
    pub check: bool,
    /// Check as on pre-Volta GPUs (lanes of a warp in lockstep).
    pub lockstep: bool,
    /// Timing mode: run on the cycle model of this GPU instead of the functional scheduler.
    pub timing: Option<TimingMode>,
    /// Serve accesses past an allocation's end within its page, as a GPU does
    /// (`LaunchConfig::serve_past_end`), keeping each in the stats to warn
    /// about; on by default. Off: they fault at the exact end.
    pub serve_past_end: bool,
    /// The GPU whose driver limits a launch must meet: the timing model's in
    /// timing mode; else this one; else the H200 (the MI300X for 64-lane warps).
    pub limits: Option<Arc<GpuPreset>>,
    /// The kernel opted in to more shared memory per block than the default
    /// (`cudaFuncAttributeMaxDynamicSharedMemorySize`).
    pub shared_opt_in: bool,
    /// Counters of blocks and warp instructions done, for a progress line
    /// (functional engine), and the flag that stops a launch (either engine).
    pub progress: Option<Arc<Progress>>,
    /// Call stack bytes per thread for functions called rather than inlined (`cudaLimitStackSize`).
    pub stack_size: u32,
}

/// Timing mode settings.
#[derive(Clone, Debug)]
pub struct TimingMode {
    pub gpu: Arc<TimingGpu>,
    /// Record the per-sub-partition warp timeline.
    pub timeline: bool,
}

impl TimingMode {
    /// The timing model of a built-in preset.
    pub fn preset(name: &str, timeline: bool) -> Result<TimingMode, HostError> {
        Ok(TimingMode { gpu: Arc::new(TimingGpu::by_name(name)?), timeline })
    }
}

impl Default for LaunchOptions {
    fn default() -> Self {
        let d = LaunchConfig::default();
        LaunchOptions {
            warp_size: 32,
            num_sms: d.num_sms,
            serial: false,
            max_warp_instructions_per_block: d.max_warp_instructions_per_block,
            metrics: false,
            schedule: Schedule::Simt,
            check: false,
            lockstep: false,
            timing: None,
            serve_past_end: true,
            limits: None,
            shared_opt_in: false,
            progress: None,
            stack_size: d.stack_size,
        }
    }
}

impl LaunchOptions {
    /// `Err` when the GPU's driver would refuse this launch of `kernel`.
    pub fn check_limits(&self, kernel: &Kernel, dims: &Dims) -> Result<(), HostError> {
        let preset = match (&self.timing, &self.limits) {
            (Some(t), _) => &t.gpu.preset,
            (None, Some(p)) => &**p,
            (None, None) => GpuPreset::named(if self.warp_size == 64 { "mi300x" } else { "h200" })?,
        };
        let request = LaunchRequest {
            grid: dims.grid,
            block: dims.block,
            static_shared_bytes: kernel.ir().shared_static_bytes,
            dynamic_shared_bytes: dims.dynamic_shared_bytes,
            regs_per_thread: kernel.regs_per_thread(),
            opt_in_shared: self.shared_opt_in,
        };
        preset.check_launch(&request).map_err(|e| HostError::Refused(Box::new(e)))
    }

    fn config(&self, dims: &Dims) -> LaunchConfig {
        LaunchConfig {
            grid: dims.grid,
            block: dims.block,
            dynamic_shared_bytes: dims.dynamic_shared_bytes,
            warp_size: self.warp_size,
            num_sms: self.num_sms,
            serial: self.serial,
            max_warp_instructions_per_block: self.max_warp_instructions_per_block,
            schedule: self.schedule,
            serve_past_end: self.serve_past_end,
            progress: self.progress.clone(),
            stack_size: self.stack_size,
            ..Default::default()
        }
    }
}

/// What one launch produced, by observer.
#[derive(Clone, Debug, Default)]
pub struct LaunchSummary {
    pub stats: LaunchStats,
    /// With `metrics`.
    pub metrics: Option<LaunchMetrics>,
    /// With `check`: what the checkers found.
    pub diagnostics: Option<Vec<Diagnostic>>,
    /// In timing mode: cycles, occupancy, stalls, traffic.
    pub timing: Option<TimingReport>,
}

impl LaunchSummary {
    /// Cycles on the timing model, in timing mode.
    pub fn cycles(&self) -> Option<u64> {
        self.timing.as_ref().map(|t| t.cycles)
    }
}

/// Launches `kernel` over `ctx`'s memory (its program loaded there) with
/// parameter block `params`, once, with every observer `opts` switches on
/// watching that one run: the metrics (`metrics`), the checkers (`check`; a
/// fault then comes back as [`HostError::CheckedFault`] with the findings),
/// on the functional engine or, with `timing` set, on the timing model.
pub fn launch(ctx: &mut Context, kernel: &Kernel, dims: &Dims, params: &[u8], opts: &LaunchOptions) -> Result<LaunchSummary, HostError> {
    launch_keeping_partial(ctx, kernel, dims, params, opts).0
}

/// [`launch`], and when it faults, the metrics of the part that ran (with
/// `metrics`), for a report up to the fault.
pub fn launch_keeping_partial(
    ctx: &mut Context,
    kernel: &Kernel,
    dims: &Dims,
    params: &[u8],
    opts: &LaunchOptions,
) -> (Result<LaunchSummary, HostError>, Option<LaunchMetrics>) {
    let mut partial = None;
    let r = launch_inner(ctx, kernel, dims, params, opts, &mut partial);
    (r, partial)
}

fn launch_inner(
    ctx: &mut Context,
    kernel: &Kernel,
    dims: &Dims,
    params: &[u8],
    opts: &LaunchOptions,
    partial: &mut Option<LaunchMetrics>,
) -> Result<LaunchSummary, HostError> {
    opts.check_limits(kernel, dims)?;
    let k = kernel.ir();
    let program = kernel.program();
    let (shape, merged) = if opts.metrics {
        let m = kernel.metrics_model();
        (m.shape.clone(), m.merged.clone())
    } else {
        (Default::default(), std::sync::Arc::from(Vec::new()))
    };
    let metrics = |obs: MetricsObserver| LaunchMetrics::build(program, k, kernel.metrics_model(), obs.into_per_pc(), opts.warp_size, None);
    let merge_metrics = |a: &mut MetricsObserver, b| a.merge(b);
    let mut out = LaunchSummary::default();
    let run = Run { kernel, dims, params, opts };
    if opts.check {
        let cfg = opts.config(dims);
        let session = CheckSession::new(program, k, &cfg, ctx.memory(), CheckOptions { lockstep: opts.lockstep });
        let (r, checker) = if opts.metrics {
            let (r, (checker, m)) = observe(
                ctx,
                run,
                &|| (session.checker(), MetricsObserver::new(shape.clone(), merged.clone())),
                &|a: &mut (Checker, MetricsObserver), b| {
                    a.0.merge(b.0);
                    a.1.merge(b.1);
                },
            );
            out.metrics = Some(metrics(m));
            (r, checker)
        } else {
            observe(ctx, run, &|| session.checker(), &|a: &mut Checker, b| a.merge(b))
        };
        let mut diagnostics = session.finish(checker, r.as_ref().err());
        if let Ok((stats, _)) = &r {
            diagnostics.extend(session.served_past_end(&stats.past_end));
        }
        match r {
            Ok((stats, timing)) => (out.stats, out.timing) = (stats, timing),
            Err(error) => {
                *partial = out.metrics.take();
                return Err(HostError::CheckedFault { error, diagnostics });
            }
        }
        out.diagnostics = Some(diagnostics);
    } else if opts.metrics {
        let (r, m) = observe(ctx, run, &|| MetricsObserver::new(shape.clone(), merged.clone()), &merge_metrics);
        match r {
            Ok(st) => (out.stats, out.timing) = st,
            Err(e) => {
                *partial = Some(metrics(m));
                return Err(e.into());
            }
        }
        out.metrics = Some(metrics(m));
    } else if opts.timing.is_some() {
        (out.stats, out.timing) = observe(ctx, run, &|| NoObserver, &|_, _| {}).0?;
    } else {
        let globals = ctx.load(kernel).clone();
        let cfg = opts.config(dims);
        let input = LaunchInput { program, kernel: k, mem: ctx.memory(), globals: &globals, params };
        out.stats = warpsim_engine::launch(&LaunchArgs { input, cfg: &cfg })?;
    }
    Ok(out)
}

/// One launch of [`launch`]: the kernel, its shape, parameter bytes and options.
#[derive(Clone, Copy)]
struct Run<'a> {
    kernel: &'a Kernel,
    dims: &'a Dims,
    params: &'a [u8],
    opts: &'a LaunchOptions,
}

/// One run with observer `O` (one per block, or per resident block slot on
/// the timing model, from `make`, folded by `merge`), functional or timed
/// by `opts.timing`. The observer comes back also when the launch fails.
/// Checked functional launches run their blocks one after another.
fn observe<O: Observer + Send>(
    ctx: &mut Context,
    run: Run<'_>,
    make: &(dyn Fn() -> O + Sync),
    merge: &(dyn Fn(&mut O, O) + Sync),
) -> (Result<(LaunchStats, Option<TimingReport>), LaunchError>, O) {
    let Run { kernel, dims, params, opts } = run;
    let globals = ctx.load(kernel).clone();
    let input = LaunchInput { program: kernel.program(), kernel: kernel.ir(), mem: ctx.memory(), globals: &globals, params };
    match &opts.timing {
        Some(mode) => {
            let shape = warpsim_timing::LaunchShape { grid: dims.grid, block: dims.block, dynamic_shared_bytes: dims.dynamic_shared_bytes };
            let topts = warpsim_timing::TimingOptions {
                regs_per_thread: Some(kernel.regs_or_estimate()),
                timeline: mode.timeline,
                max_warp_instructions_per_block: opts.max_warp_instructions_per_block,
                stack_size: opts.stack_size,
                progress: opts.progress.clone(),
                serve_past_end: opts.serve_past_end,
                serial: opts.serial,
                ..Default::default()
            };
            let l =
                warpsim_timing::TimedLaunch { input, shape: &shape, gpu: &mode.gpu, opts: &topts, decode: Some(kernel.timing_decode()) };
            let (r, o) = warpsim_timing::simulate_observed(&l, make, merge);
            (r.map(|(s, t)| (s, Some(t))), o)
        }
        None => {
            let cfg = LaunchConfig { serial: opts.serial || opts.check, ..opts.config(dims) };
            let args = LaunchArgs { input, cfg: &cfg };
            let (r, o) = warpsim_engine::launch_observed_partial(&args, make, merge);
            (r.map(|s| (s, None)), o)
        }
    }
}

/// A functional launch with any observer (a pair of observers is one): one
/// per block from `make`, folded by `merge`.
pub fn launch_observed<O: Observer + Send>(
    ctx: &mut Context,
    kernel: &Kernel,
    dims: &Dims,
    params: &[u8],
    opts: &LaunchOptions,
    make: &(dyn Fn() -> O + Sync),
    merge: &(dyn Fn(&mut O, O) + Sync),
) -> Result<(LaunchStats, O), HostError> {
    opts.check_limits(kernel, dims)?;
    let globals = ctx.load(kernel).clone();
    let r =
        warpsim_engine::launch_observed(kernel.program(), kernel.ir(), ctx.memory(), &globals, params, &opts.config(dims), make, merge)?;
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Module;

    #[test]
    fn launches_the_driver_refuses_are_refused_in_every_mode() {
        let src = ".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\nret;\n}\n";
        let k = Module::from_ptx("t.ptx", src).kernel("k").unwrap();
        let timing = LaunchOptions { timing: Some(TimingMode::preset("h200", false).unwrap()), ..Default::default() };
        for opts in [LaunchOptions::default(), LaunchOptions { check: true, ..Default::default() }, timing] {
            let mut ctx = Context::new();
            let mut go = |dims: Dims, opts: &LaunchOptions| launch(&mut ctx, &k, &dims, &[], opts).map(|_| ()).map_err(|e| e.to_string());
            assert!(go(Dims::linear(1, 2048), &opts).unwrap_err().contains("cudaErrorInvalidValue"));
            let big = Dims::new([1, 1, 1], [32, 1, 1], 100_000);
            assert!(go(big, &opts).unwrap_err().contains("without opt-in"));
            assert!(go(Dims::new([1, 1, 1], [32, 1, 1], 1_000_000), &opts).unwrap_err().contains("even with opt-in"));
            assert_eq!(go(big, &LaunchOptions { shared_opt_in: true, ..opts.clone() }), Ok(()));
        }
    }
}
