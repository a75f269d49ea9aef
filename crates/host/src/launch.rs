//! One kernel launch with the observers its options switch on: the
//! functional engine (bare, with metrics or with the checkers) or the timing
//! model, and what it produced.

use crate::{Context, HostError, Kernel};
use std::sync::Arc;
use warpsim_check::{CheckOptions, CheckSession, Checker, Diagnostic};
use warpsim_engine::{LaunchConfig, LaunchError, LaunchStats, NoObserver, Observer, Schedule};
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
    /// (`LaunchConfig::serve_past_end`).
    pub serve_past_end: bool,
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
            serve_past_end: false,
        }
    }
}

impl LaunchOptions {
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
    let k = kernel.ir();
    let program = kernel.program();
    let n = k.code.len();
    let metrics = |obs: MetricsObserver| LaunchMetrics::build(program, k, obs.per_pc, opts.warp_size, None);
    let merge_metrics = |a: &mut MetricsObserver, b| a.merge(b);
    let mut out = LaunchSummary::default();
    if opts.check {
        let cfg = opts.config(dims);
        let session = CheckSession::new(program, k, &cfg, ctx.memory(), CheckOptions { lockstep: opts.lockstep });
        let (r, checker) = if opts.metrics {
            let (r, (checker, m)) = observe(
                ctx,
                kernel,
                dims,
                params,
                opts,
                &|| (session.checker(), MetricsObserver::new(n)),
                &|a: &mut (Checker, MetricsObserver), b| {
                    a.0.merge(b.0);
                    a.1.merge(b.1);
                },
            );
            out.metrics = Some(metrics(m));
            (r, checker)
        } else {
            observe(ctx, kernel, dims, params, opts, &|| session.checker(), &|a: &mut Checker, b| a.merge(b))
        };
        let mut diagnostics = session.finish(checker, r.as_ref().err());
        if let Ok((stats, _)) = &r {
            diagnostics.extend(session.served_past_end(&stats.past_end));
        }
        match r {
            Ok((stats, timing)) => (out.stats, out.timing) = (stats, timing),
            Err(error) => return Err(HostError::CheckedFault { error, diagnostics }),
        }
        out.diagnostics = Some(diagnostics);
    } else if opts.metrics {
        let (r, m) = observe(ctx, kernel, dims, params, opts, &|| MetricsObserver::new(n), &merge_metrics);
        (out.stats, out.timing) = r?;
        out.metrics = Some(metrics(m));
    } else if opts.timing.is_some() {
        (out.stats, out.timing) = observe(ctx, kernel, dims, params, opts, &|| NoObserver, &|_, _| {}).0?;
    } else {
        let globals = ctx.load(kernel).clone();
        out.stats = warpsim_engine::launch(program, k, ctx.memory(), &globals, params, &opts.config(dims))?;
    }
    Ok(out)
}

/// One run with observer `O` (one per block, or per resident block slot on
/// the timing model, from `make`, folded by `merge`), functional or timed
/// by `opts.timing`. The observer comes back also when the launch fails.
/// Checked functional launches run their blocks one after another.
fn observe<O: Observer + Send>(
    ctx: &mut Context,
    kernel: &Kernel,
    dims: &Dims,
    params: &[u8],
    opts: &LaunchOptions,
    make: &(dyn Fn() -> O + Sync),
    merge: &(dyn Fn(&mut O, O) + Sync),
) -> (Result<(LaunchStats, Option<TimingReport>), LaunchError>, O) {
    let globals = ctx.load(kernel).clone();
    let (program, k, mem) = (kernel.program(), kernel.ir(), ctx.memory());
    match &opts.timing {
        Some(mode) => {
            let shape = warpsim_timing::LaunchShape { grid: dims.grid, block: dims.block, dynamic_shared_bytes: dims.dynamic_shared_bytes };
            let topts = warpsim_timing::TimingOptions {
                regs_per_thread: kernel.regs_per_thread(),
                timeline: mode.timeline,
                max_warp_instructions_per_block: opts.max_warp_instructions_per_block,
                ..Default::default()
            };
            let l = warpsim_timing::TimedLaunch {
                program,
                kernel: k,
                mem,
                globals: &globals,
                params,
                shape: &shape,
                gpu: &mode.gpu,
                opts: &topts,
                ptx_source: kernel.source(),
            };
            let (r, o) = warpsim_timing::simulate_observed(&l, make, merge);
            (r.map(|(s, t)| (s, Some(t))), o)
        }
        None => {
            let cfg = LaunchConfig { serial: opts.serial || opts.check, ..opts.config(dims) };
            let (r, o) = warpsim_engine::launch_observed_partial(program, k, mem, &globals, params, &cfg, make, merge);
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
    let globals = ctx.load(kernel).clone();
    let r =
        warpsim_engine::launch_observed(kernel.program(), kernel.ir(), ctx.memory(), &globals, params, &opts.config(dims), make, merge)?;
    Ok(r)
}
