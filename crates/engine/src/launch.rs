//! A kernel launch in the functional engine: blocks split into warps of
//! consecutive thread ids, warps run round-robin within their block until
//! they exit or meet a barrier, blocks run in parallel on rayon's pool.
//!
//! Blocks are independent except through global memory, so running them in
//! parallel gives the same outputs as a serial run for kernels without
//! inter-block races (atomics whose order is visible in the output, such as
//! float `atomicAdd`, can differ between runs, as on a real GPU). When a block
//! faults, the error reported is the one of the lowest faulting block index:
//! every lower block still runs to completion, so the report is deterministic.

use crate::block::{Block, RegisterTemplate, Stop, WarpState};
use crate::fault::KernelFault;
use crate::memory::{BytesFiller, GlobalMemory};
use crate::observer::{NoObserver, Observer};
use crate::schedule::{RandomSchedule, Schedule, SchedulePlan, SchedulePolicy, Simt};
use rayon::prelude::*;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use warpsim_ir::{Kernel, Program};

/// How a launch is shaped and limited.
#[derive(Clone, Debug)]
pub struct LaunchConfig {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_shared_bytes: u32,
    /// Lanes per warp: 32 (NVIDIA) or 64 (AMD CDNA wavefronts).
    pub warp_size: u32,
    /// SMs of the simulated GPU (for `%smid`, `%nsmid` and clock counters).
    pub num_sms: u32,
    /// Maximum resident warps per SM (`%nwarpid`).
    pub max_warps_per_sm: u32,
    /// Warp instructions one block may execute before the launch is stopped as runaway.
    pub max_warp_instructions_per_block: u64,
    /// Run blocks one after another on the calling thread.
    pub serial: bool,
    /// The order in which the lane groups of a warp run (the SIMT stack's,
    /// or a random independent-thread schedule).
    pub schedule: Schedule,
    /// Serve global accesses past an allocation's exact end that stay within
    /// its 64 KiB page, as a GPU does (its allocations are carved from larger
    /// pages), keeping each in [`LaunchStats::past_end`]; off, they fault.
    pub serve_past_end: bool,
    /// Counters a progress display reads while the launch runs (updated once per block).
    pub progress: Option<Arc<Progress>>,
    /// Bytes of call stack per thread for functions that are called rather
    /// than inlined (recursion, function pointers): CUDA's
    /// `cudaLimitStackSize`. A call whose frame does not fit faults.
    pub stack_size: u32,
}

/// CUDA's default `cudaLimitStackSize`: 1 KiB per thread.
pub const DEFAULT_STACK_SIZE: u32 = 1024;
/// The largest call stack per thread warpsim gives (local memory is
/// allocated per lane: 256 MiB for a block of 1024 threads).
pub const MAX_STACK_SIZE: u32 = 256 * 1024;

/// Blocks and warp instructions finished so far, for a progress line; and a
/// stop request from whoever watches the launch (Ctrl-C in Python).
#[derive(Debug, Default)]
pub struct Progress {
    pub blocks: AtomicU64,
    pub warp_instructions: AtomicU64,
    /// Set: running blocks stop after their current slice, the rest do not
    /// start, and the launch ends in [`LaunchError::Stopped`].
    pub stop: AtomicBool,
}

impl Progress {
    /// Whether [`Progress::stop`] is set.
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

impl Default for LaunchConfig {
    fn default() -> Self {
        LaunchConfig {
            grid: [1, 1, 1],
            block: [1, 1, 1],
            dynamic_shared_bytes: 0,
            warp_size: 32,
            num_sms: 132,
            max_warps_per_sm: 64,
            max_warp_instructions_per_block: 1 << 28,
            serial: false,
            schedule: Schedule::Simt,
            serve_past_end: false,
            progress: None,
            stack_size: DEFAULT_STACK_SIZE,
        }
    }
}

/// Totals of a launch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LaunchStats {
    pub blocks: u64,
    pub warps: u64,
    pub warp_instructions: u64,
    pub thread_instructions: u64,
    /// Global accesses past an allocation's exact end that a GPU would serve
    /// (within the allocation's 64 KiB page granule; beyond it they fault):
    /// each was served; the first [`MAX_PAST_END_KEPT`] are kept with their place.
    pub past_end: Vec<KernelFault>,
    pub past_end_count: u64,
    /// Device `printf` output, blocks in order (see `exec::printf`).
    pub printf: String,
}

/// Past-end accesses kept with their place in [`LaunchStats::past_end`].
pub const MAX_PAST_END_KEPT: usize = 64;

impl LaunchStats {
    fn add(&mut self, o: &LaunchStats) {
        self.blocks += o.blocks;
        self.warps += o.warps;
        self.warp_instructions += o.warp_instructions;
        self.thread_instructions += o.thread_instructions;
        self.past_end_count += o.past_end_count;
        self.printf.push_str(&o.printf);
        let room = MAX_PAST_END_KEPT.saturating_sub(self.past_end.len());
        self.past_end.extend(o.past_end.iter().take(room).cloned());
    }

    /// Threads per warp instruction (Nsight Compute's warp execution efficiency numerator).
    pub fn threads_per_instruction(&self) -> f64 {
        if self.warp_instructions == 0 {
            0.0
        } else {
            self.thread_instructions as f64 / self.warp_instructions as f64
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error("{0}")]
    Fault(Box<KernelFault>),
    #[error("invalid launch: {0}")]
    Config(String),
    /// [`Progress::stop`] was set before the launch finished.
    #[error("the launch was stopped before it finished")]
    Stopped,
}

/// Allocates the module's `.global` and `.const` variables; returns name -> address.
pub fn alloc_module_globals(program: &Program, mem: &mut GlobalMemory) -> HashMap<String, u64> {
    let mut addrs = HashMap::new();
    for g in &program.globals {
        let base = mem.alloc(&g.name, g.size.max(1), Some(Arc::new(BytesFiller(g.init.clone()))));
        addrs.insert(g.name.clone(), base);
    }
    for g in &program.globals {
        for (off, sym, add) in &g.relocs {
            if let Some(&a) = addrs.get(sym) {
                let v = a.wrapping_add(*add as u64);
                let _ = mem.store(addrs[&g.name] + off, 8, v);
            }
        }
    }
    addrs
}

/// What one launch runs: a kernel of `program` over device memory `mem`,
/// with the module's variables at `globals` and parameter bytes `params` (laid
/// out as `kernel.params` says); a functional launch ([`LaunchArgs`]) and a
/// timed one (`warpsim_timing::TimedLaunch`) alike.
#[derive(Clone, Copy)]
pub struct LaunchInput<'a> {
    pub program: &'a Program,
    pub kernel: &'a Kernel,
    pub mem: &'a GlobalMemory,
    pub globals: &'a HashMap<String, u64>,
    pub params: &'a [u8],
}

/// A functional launch: `input` in the shape `cfg`.
#[derive(Clone, Copy)]
pub struct LaunchArgs<'a> {
    pub input: LaunchInput<'a>,
    pub cfg: &'a LaunchConfig,
}

/// Runs a launch without observers.
pub fn launch(a: &LaunchArgs<'_>) -> Result<LaunchStats, LaunchError> {
    launch_observed_partial(a, &|| NoObserver, &|_, _| {}).0
}

/// [`launch`] with one observer per block, made by `make` and folded into one by `merge`.
#[allow(clippy::too_many_arguments)]
pub fn launch_observed<O: Observer + Send>(
    program: &Program,
    kernel: &Kernel,
    mem: &GlobalMemory,
    globals: &HashMap<String, u64>,
    params: &[u8],
    cfg: &LaunchConfig,
    make: &(dyn Fn() -> O + Sync),
    merge: &(dyn Fn(&mut O, O) + Sync),
) -> Result<(LaunchStats, O), LaunchError> {
    let (r, obs) = launch_observed_partial(&LaunchArgs { input: LaunchInput { program, kernel, mem, globals, params }, cfg }, make, merge);
    r.map(|s| (s, obs))
}

/// [`launch_observed`], which also returns the observer when the launch
/// fails: what it saw up to the fault (a sanitizer reports it with the fault).
pub fn launch_observed_partial<O: Observer + Send>(
    a: &LaunchArgs<'_>,
    make: &(dyn Fn() -> O + Sync),
    merge: &(dyn Fn(&mut O, O) + Sync),
) -> (Result<LaunchStats, LaunchError>, O) {
    let LaunchArgs { input: LaunchInput { program, kernel, mem, globals, params }, cfg } = *a;
    if let Err(e) = validate(kernel, params, cfg) {
        return (Err(e), make());
    }
    // The engine runs the packed form; pcs, and so every observer's view, are the same.
    let run = kernel.for_engine();
    let symbols = match resolve_symbols(run, globals) {
        Ok(s) => s,
        Err(e) => return (Err(e), make()),
    };
    let (r, obs) = match cfg.schedule {
        Schedule::Simt => run_sized(run, mem, &symbols, params, cfg, make, merge, &Simt),
        Schedule::Random { seed } => {
            let policy = RandomSchedule::new(seed, Arc::new(SchedulePlan::new(run)));
            run_sized(run, mem, &symbols, params, cfg, make, merge, &policy)
        }
    };
    let r = r.map(|mut s| {
        place_past_end(program, kernel, &mut s);
        s
    });
    (r.map_err(|e| with_source_file(program, kernel, e)), obs)
}

/// The source places (`file:line`, file names from the program) of the served past-end accesses.
pub fn place_past_end(program: &Program, kernel: &Kernel, stats: &mut LaunchStats) {
    for f in &mut stats.past_end {
        let pc = f.pc.min(kernel.info.len().saturating_sub(1) as u32);
        f.source = program.source_place(kernel, pc).and_then(|p| p.source());
    }
}

/// Register slot and address of each `.global` variable the kernel names.
pub fn resolve_symbols(kernel: &Kernel, globals: &HashMap<String, u64>) -> Result<Vec<(u32, u64)>, LaunchError> {
    kernel
        .symbol_addrs
        .iter()
        .map(|(slot, name)| match globals.get(name) {
            Some(&a) => Ok((*slot, a)),
            None => Err(LaunchError::Config(format!("global variable `{name}` was not allocated"))),
        })
        .collect()
}

/// A fault's source place as `file:line`, with the file name from the program.
pub fn with_source_file(program: &Program, kernel: &Kernel, e: LaunchError) -> LaunchError {
    match e {
        LaunchError::Fault(mut f) => {
            let pc = f.pc.min(kernel.info.len().saturating_sub(1) as u32);
            f.source = program.source_place(kernel, pc).and_then(|p| p.source());
            LaunchError::Fault(f)
        }
        e => e,
    }
}

#[allow(clippy::too_many_arguments)]
fn run_sized<O: Observer + Send, S: SchedulePolicy + Clone + Sync>(
    kernel: &Kernel,
    mem: &GlobalMemory,
    symbols: &[(u32, u64)],
    params: &[u8],
    cfg: &LaunchConfig,
    make: &(dyn Fn() -> O + Sync),
    merge: &(dyn Fn(&mut O, O) + Sync),
    policy: &S,
) -> (Result<LaunchStats, LaunchError>, O) {
    match cfg.warp_size {
        32 => run_blocks::<32, O, S>(kernel, mem, &RegisterTemplate::new(kernel, symbols), params, cfg, make, merge, policy),
        64 => run_blocks::<64, O, S>(kernel, mem, &RegisterTemplate::new(kernel, symbols), params, cfg, make, merge, policy),
        w => (Err(LaunchError::Config(format!("warp size {w} is not supported (32 or 64)"))), make()),
    }
}

/// Checks a launch's shape against the hardware limits and the kernel's, and its parameter bytes.
pub fn validate(kernel: &Kernel, params: &[u8], cfg: &LaunchConfig) -> Result<(), LaunchError> {
    let threads = cfg.block.iter().map(|&d| d as u64).product::<u64>();
    if cfg.grid.contains(&0) || cfg.block.contains(&0) {
        return Err(LaunchError::Config("grid and block dimensions must be at least 1".into()));
    }
    if threads > 1024 {
        return Err(LaunchError::Config(format!("a block of {threads} threads exceeds the limit of 1024")));
    }
    if cfg.block[2] > 64 || cfg.grid[1] > 65535 || cfg.grid[2] > 65535 || cfg.grid[0] > i32::MAX as u32 {
        return Err(LaunchError::Config("launch dimensions exceed the hardware limits".into()));
    }
    if cfg.stack_size > MAX_STACK_SIZE {
        return Err(LaunchError::Config(format!(
            "a call stack of {} bytes per thread is above warpsim's limit of {MAX_STACK_SIZE} (--stack-size)",
            cfg.stack_size
        )));
    }
    if let Some(r) = kernel.tuning.reqntid {
        if r != cfg.block {
            return Err(LaunchError::Config(format!(
                "cudaErrorInvalidValue (CUDA_ERROR_INVALID_VALUE): kernel requires a block of {r:?} (.reqntid), got {:?}",
                cfg.block
            )));
        }
    }
    if let Some(m) = kernel.tuning.maxntid {
        let max = m.iter().map(|&d| d as u64).product::<u64>();
        if threads > max {
            // As the driver refuses a block over the kernel's maxThreadsPerBlock
            // (__launch_bounds__), and warpsim's driver returns for this error.
            return Err(LaunchError::Config(format!(
                "cudaErrorInvalidValue (CUDA_ERROR_INVALID_VALUE): a block of {threads} threads is more than the {max} \
                 the kernel allows (.maxntid, from __launch_bounds__)"
            )));
        }
    }
    if params.len() < kernel.param_bytes as usize {
        return Err(LaunchError::Config(format!(
            "kernel `{}` takes {} bytes of parameters, {} given",
            kernel.name,
            kernel.param_bytes,
            params.len()
        )));
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn run_blocks<'a, const W: usize, O: Observer + Send, S: SchedulePolicy + Clone + Sync>(
    kernel: &'a Kernel,
    mem: &GlobalMemory,
    template: &'a RegisterTemplate<W>,
    params: &'a [u8],
    cfg: &'a LaunchConfig,
    make: &(dyn Fn() -> O + Sync),
    merge: &(dyn Fn(&mut O, O) + Sync),
    policy: &S,
) -> (Result<LaunchStats, LaunchError>, O) {
    let nblocks = cfg.grid.iter().map(|&d| d as u64).product::<u64>();
    let first_fault = AtomicU64::new(u64::MAX);
    let new_block = || Block::<W>::new(kernel, cfg, template, params);
    let stop = cfg.progress.as_deref();
    let stopped = || stop.is_some_and(Progress::stopped);
    let run_one = |b: u64, obs: &mut O, block: &mut Block<'_, W>| -> Result<LaunchStats, (u64, Box<KernelFault>)> {
        if b > first_fault.load(Ordering::Relaxed) || stopped() {
            return Ok(LaunchStats::default());
        }
        let r = run_block::<W, O, S>(block, mem, b, obs, policy, &stopped).map_err(|f| {
            first_fault.fetch_min(b, Ordering::Relaxed);
            (b, f)
        });
        if let (Some(p), Ok(s)) = (&cfg.progress, &r) {
            p.blocks.fetch_add(1, Ordering::Relaxed);
            p.warp_instructions.fetch_add(s.warp_instructions, Ordering::Relaxed);
        }
        r
    };
    type Acc<'b, O, const W: usize> = (LaunchStats, O, Option<(u64, Box<KernelFault>)>, Block<'b, W>);
    let fold = |mut acc: Acc<'a, O, W>, b: u64| {
        match run_one(b, &mut acc.1, &mut acc.3) {
            Ok(s) => acc.0.add(&s),
            Err((bi, mut f)) => {
                // The faulting block's part counts and prints, in block order.
                if let Some(ran) = f.ran.take() {
                    acc.0.add(&ran);
                }
                if acc.2.as_ref().is_none_or(|(x, _)| bi < *x) {
                    acc.2 = Some((bi, f));
                }
            }
        }
        acc
    };
    let reduce = |mut a: Acc<'a, O, W>, b: Acc<'a, O, W>| {
        a.0.add(&b.0);
        merge(&mut a.1, b.1);
        a.2 = match (a.2, b.2) {
            (Some(x), Some(y)) => Some(if x.0 <= y.0 { x } else { y }),
            (x, y) => x.or(y),
        };
        a
    };
    // Once stopped, the blocks not yet started are not visited at all (a huge grid would
    // otherwise take as long to skip as the blocks it has left): one flag load per block.
    let (stats, obs, fault, _) = if cfg.serial {
        (0..nblocks).take_while(|_| !stopped()).fold((LaunchStats::default(), make(), None, new_block()), fold)
    } else {
        (0..nblocks)
            .into_par_iter()
            .take_any_while(|_| !stopped())
            .fold(|| (LaunchStats::default(), make(), None, new_block()), fold)
            .reduce(|| (LaunchStats::default(), make(), None, new_block()), reduce)
    };
    match fault {
        Some((_, mut f)) => {
            f.ran = Some(Box::new(stats));
            (Err(LaunchError::Fault(f)), obs)
        }
        None if stopped() => (Err(LaunchError::Stopped), obs),
        None => (Ok(stats), obs),
    }
}

/// One block, functionally: warps run round-robin, each up to a slice of
/// instructions, until every warp has exited or none can go on, or until
/// `stopped` (the launch then reports [`LaunchError::Stopped`]).
fn run_block<'a, const W: usize, O: Observer, S: SchedulePolicy + Clone>(
    block: &mut Block<'a, W>,
    mem: &GlobalMemory,
    b: u64,
    obs: &mut O,
    policy: &S,
    stopped: &dyn Fn() -> bool,
) -> Result<LaunchStats, Box<KernelFault>> {
    const SLICE: u32 = 4096;
    block.begin(b, obs);
    let mut sched = policy.clone();
    sched.block_begin(b);
    loop {
        let mut progressed = false;
        for wi in 0..block.warp_count() {
            if block.state(wi) != WarpState::Ready {
                continue;
            }
            progressed = true;
            // A fault keeps what the block did up to it (counts, printf output).
            let r = block.run_warp_scheduled(wi, SLICE, mem, obs, &mut sched).map_err(|mut f| {
                f.ran = Some(Box::new(block.stats().clone()));
                f
            })?;
            match r {
                Stop::Yield => {}
                // Fewer live threads may complete a barrier others wait at.
                Stop::Exited => block.exited(obs),
                Stop::Barrier(a) => block.arrive(wi, a, obs),
            }
        }
        if block.all_done() {
            return Ok(block.stats().clone());
        }
        if !progressed {
            let mut f = Box::new(block.deadlock());
            f.ran = Some(Box::new(block.stats().clone()));
            return Err(f);
        }
        if stopped() {
            return Ok(block.stats().clone());
        }
    }
}

#[cfg(test)]
mod tests;
