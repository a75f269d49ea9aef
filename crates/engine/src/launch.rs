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

use crate::exec::{BarrierArrival, StackEntry, Stop, Warp, WarpCtx, WarpFault, WarpState};
use crate::fault::{FaultKind, KernelFault};
use crate::memory::{BytesFiller, GlobalMemory};
use crate::observer::{NoObserver, Observer};
use crate::schedule::{RandomSchedule, Schedule, SchedulePlan, SchedulePolicy, Simt};
use rayon::prelude::*;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use warpsim_ir::{BarRed, Kernel, Program, RegRef, Special};

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
}

impl LaunchStats {
    fn add(&mut self, o: &LaunchStats) {
        self.blocks += o.blocks;
        self.warps += o.warps;
        self.warp_instructions += o.warp_instructions;
        self.thread_instructions += o.thread_instructions;
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

/// Runs `kernel` with parameter bytes `params` (laid out as `kernel.params` says).
pub fn launch(
    program: &Program,
    kernel: &Kernel,
    mem: &GlobalMemory,
    globals: &HashMap<String, u64>,
    params: &[u8],
    cfg: &LaunchConfig,
) -> Result<LaunchStats, LaunchError> {
    launch_observed(program, kernel, mem, globals, params, cfg, &|| NoObserver, &|_, _| {}).map(|(s, _)| s)
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
    let (r, obs) = launch_observed_partial(program, kernel, mem, globals, params, cfg, make, merge);
    r.map(|s| (s, obs))
}

/// [`launch_observed`], which also returns the observer when the launch
/// fails: what it saw up to the fault (a sanitizer reports it with the fault).
#[allow(clippy::too_many_arguments)]
pub fn launch_observed_partial<O: Observer + Send>(
    program: &Program,
    kernel: &Kernel,
    mem: &GlobalMemory,
    globals: &HashMap<String, u64>,
    params: &[u8],
    cfg: &LaunchConfig,
    make: &(dyn Fn() -> O + Sync),
    merge: &(dyn Fn(&mut O, O) + Sync),
) -> (Result<LaunchStats, LaunchError>, O) {
    if let Err(e) = validate(kernel, params, cfg) {
        return (Err(e), make());
    }
    let mut symbols = Vec::new();
    for (slot, name) in &kernel.symbol_addrs {
        match globals.get(name) {
            Some(&a) => symbols.push((*slot, a)),
            None => return (Err(LaunchError::Config(format!("global variable `{name}` was not allocated"))), make()),
        }
    }
    let (r, obs) = match cfg.schedule {
        Schedule::Simt => run_sized(kernel, mem, &symbols, params, cfg, make, merge, &Simt),
        Schedule::Random { seed } => {
            let policy = RandomSchedule::new(seed, Arc::new(SchedulePlan::new(kernel)));
            run_sized(kernel, mem, &symbols, params, cfg, make, merge, &policy)
        }
    };
    let r = r.map_err(|e| match e {
        LaunchError::Fault(mut f) => {
            let info = &kernel.info[(f.pc as usize).min(kernel.info.len().saturating_sub(1))];
            f.source = info.loc.map(|l| {
                let name = program.files.get(&l.file).map(String::as_str).unwrap_or("?");
                let short = name.rsplit('/').next().unwrap_or(name);
                format!("{short}:{}", l.line)
            });
            LaunchError::Fault(f)
        }
        e => e,
    });
    (r, obs)
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
        32 => run_blocks::<32, O, S>(kernel, mem, symbols, params, cfg, make, merge, policy),
        64 => run_blocks::<64, O, S>(kernel, mem, symbols, params, cfg, make, merge, policy),
        w => (Err(LaunchError::Config(format!("warp size {w} is not supported (32 or 64)"))), make()),
    }
}

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
    if let Some(r) = kernel.reqntid {
        if r != cfg.block {
            return Err(LaunchError::Config(format!("kernel requires a block of {r:?} (.reqntid), got {:?}", cfg.block)));
        }
    }
    if let Some(m) = kernel.maxntid {
        let max = m.iter().map(|&d| d as u64).product::<u64>();
        if threads > max {
            return Err(LaunchError::Config(format!("kernel allows at most {max} threads per block (.maxntid)")));
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
fn run_blocks<const W: usize, O: Observer + Send, S: SchedulePolicy + Clone + Sync>(
    kernel: &Kernel,
    mem: &GlobalMemory,
    symbols: &[(u32, u64)],
    params: &[u8],
    cfg: &LaunchConfig,
    make: &(dyn Fn() -> O + Sync),
    merge: &(dyn Fn(&mut O, O) + Sync),
    policy: &S,
) -> (Result<LaunchStats, LaunchError>, O) {
    let nblocks = cfg.grid.iter().map(|&d| d as u64).product::<u64>();
    let first_fault = AtomicU64::new(u64::MAX);
    let template = RegisterTemplate::<W>::new(kernel, symbols);
    let run_one = |b: u64, obs: &mut O, scratch: &mut BlockScratch<W>| -> Result<LaunchStats, (u64, KernelFault)> {
        if b > first_fault.load(Ordering::Relaxed) {
            return Ok(LaunchStats::default());
        }
        run_block::<W, O, S>(kernel, mem, &template, params, cfg, b, obs, policy, scratch).map_err(|f| {
            first_fault.fetch_min(b, Ordering::Relaxed);
            (b, f)
        })
    };
    type Acc<O, const W: usize> = (LaunchStats, O, Option<(u64, KernelFault)>, BlockScratch<W>);
    let fold = |mut acc: Acc<O, W>, b: u64| {
        match run_one(b, &mut acc.1, &mut acc.3) {
            Ok(s) => acc.0.add(&s),
            Err((bi, f)) => {
                if acc.2.as_ref().is_none_or(|(x, _)| bi < *x) {
                    acc.2 = Some((bi, f));
                }
            }
        }
        acc
    };
    let reduce = |mut a: Acc<O, W>, b: Acc<O, W>| {
        a.0.add(&b.0);
        merge(&mut a.1, b.1);
        a.2 = match (a.2, b.2) {
            (Some(x), Some(y)) => Some(if x.0 <= y.0 { x } else { y }),
            (x, y) => x.or(y),
        };
        a
    };
    let (stats, obs, fault, _) = if cfg.serial {
        (0..nblocks).fold((LaunchStats::default(), make(), None, BlockScratch::default()), fold)
    } else {
        (0..nblocks)
            .into_par_iter()
            .fold(|| (LaunchStats::default(), make(), None, BlockScratch::default()), fold)
            .reduce(|| (LaunchStats::default(), make(), None, BlockScratch::default()), reduce)
    };
    match fault {
        Some((_, f)) => (Err(LaunchError::Fault(Box::new(f))), obs),
        None => (Ok(stats), obs),
    }
}

/// Warps and shared memory reused from block to block by one worker.
struct BlockScratch<const W: usize> {
    warps: Vec<Warp<W>>,
    shared: Vec<u8>,
}

impl<const W: usize> Default for BlockScratch<W> {
    fn default() -> Self {
        BlockScratch { warps: Vec::new(), shared: Vec::new() }
    }
}

/// Register contents shared by every warp at start: constants and symbol addresses.
/// (Public, with the block helpers below, for schedulers other than the
/// functional one, such as the timing model.)
pub struct RegisterTemplate<const W: usize> {
    r32: Vec<u32>,
    r64: Vec<u64>,
}

impl<const W: usize> RegisterTemplate<W> {
    pub fn new(k: &Kernel, symbols: &[(u32, u64)]) -> Self {
        let mut r32 = vec![0u32; k.n32 as usize * W];
        let mut r64 = vec![0u64; k.n64 as usize * W];
        for &(s, v) in &k.const32 {
            r32[s as usize * W..][..W].fill(v);
        }
        for &(s, v) in &k.const64 {
            r64[s as usize * W..][..W].fill(v);
        }
        for &(s, v) in symbols {
            r64[s as usize * W..][..W].fill(v);
        }
        RegisterTemplate { r32, r64 }
    }
}

#[derive(Default, Clone)]
pub struct BarrierState {
    arrived: u32,
    /// Warps waiting, with the lanes that arrived and a pending bar.red destination.
    waiters: Vec<(usize, u64, Option<BarRed>)>,
    red_popc: u32,
    red_and: bool,
    red_or: bool,
    expected: Option<u32>,
    used: bool,
}

pub fn block_coords(b: u64, grid: [u32; 3]) -> [u32; 3] {
    let x = (b % grid[0] as u64) as u32;
    let y = ((b / grid[0] as u64) % grid[1] as u64) as u32;
    let z = (b / (grid[0] as u64 * grid[1] as u64)) as u32;
    [x, y, z]
}

pub fn thread_coords(t: u32, block: [u32; 3]) -> [u32; 3] {
    [t % block[0], (t / block[0]) % block[1], t / (block[0] * block[1])]
}

#[allow(clippy::too_many_arguments)]
fn run_block<const W: usize, O: Observer, S: SchedulePolicy + Clone>(
    kernel: &Kernel,
    mem: &GlobalMemory,
    template: &RegisterTemplate<W>,
    params: &[u8],
    cfg: &LaunchConfig,
    b: u64,
    obs: &mut O,
    policy: &S,
    scratch: &mut BlockScratch<W>,
) -> Result<LaunchStats, KernelFault> {
    let ctaid = block_coords(b, cfg.grid);
    let nthreads: u32 = cfg.block.iter().product();
    let nwarps = nthreads.div_ceil(W as u32);
    let warps = &mut scratch.warps;
    warps.truncate(nwarps as usize);
    while warps.len() < nwarps as usize {
        warps.push(Warp::<W> {
            index: 0,
            r32: Vec::new(),
            r64: Vec::new(),
            preds: Vec::new(),
            stack: Vec::new(),
            present: 0,
            exited: 0,
            local: Vec::new(),
            state: WarpState::Done,
        });
    }
    for (w, warp) in warps.iter_mut().enumerate() {
        init_warp::<W>(warp, kernel, template, cfg, ctaid, b, w as u32, nthreads);
    }
    obs.block_begin(b, nwarps);
    let mut sched = policy.clone();
    sched.block_begin(b);
    let shared = &mut scratch.shared;
    shared.clear();
    shared.resize((kernel.dynamic_shared_offset + cfg.dynamic_shared_bytes).max(kernel.shared_static_bytes) as usize, 0);
    let mut clock = (b / cfg.num_sms.max(1) as u64) * 1_000_000;
    let mut budget = cfg.max_warp_instructions_per_block;
    let mut stats = LaunchStats { blocks: 1, warps: nwarps as u64, ..Default::default() };
    let mut barriers: Vec<BarrierState> = vec![BarrierState::default(); 16];
    let fault_at = |warps: &[Warp<W>], wi: usize, f: WarpFault| -> KernelFault {
        let info = &kernel.info[(f.pc as usize).min(kernel.info.len() - 1)];
        let _ = warps;
        let thread = f.lane.map(|l| thread_coords(wi as u32 * W as u32 + l, cfg.block));
        KernelFault {
            kind: f.kind,
            block: ctaid,
            thread,
            warp: wi as u32,
            lane: f.lane,
            pc: f.pc,
            ptx_line: info.ptx_line,
            opcode: info.opcode.clone(),
            source: info.loc.map(|l| format!("file {} line {}", l.file, l.line)),
        }
    };
    const SLICE: u32 = 4096;
    loop {
        let mut progressed = false;
        for wi in 0..warps.len() {
            if warps[wi].state != WarpState::Ready {
                continue;
            }
            progressed = true;
            let stop = {
                let mut ctx = WarpCtx {
                    kernel,
                    gmem: mem,
                    shared,
                    params,
                    clock: &mut clock,
                    budget: &mut budget,
                    budget_limit: cfg.max_warp_instructions_per_block,
                    warp_instructions: &mut stats.warp_instructions,
                    thread_instructions: &mut stats.thread_instructions,
                };
                warps[wi].run_scheduled(&mut ctx, obs, &mut sched, SLICE).map_err(|f| fault_at(warps, wi, f))?
            };
            match stop {
                Stop::Yield => {}
                Stop::Exited => {
                    // Fewer live threads may complete a barrier others wait at.
                    for id in 0..barriers.len() {
                        if barriers[id].used {
                            complete_barrier(&mut barriers, id, warps);
                            if !barriers[id].used {
                                obs.barrier_complete(id as u32);
                            }
                        }
                    }
                }
                Stop::Barrier(a) => {
                    arrive(&mut barriers, wi, a, warps);
                    if !barriers[a.id as usize].used {
                        obs.barrier_complete(a.id);
                    }
                }
            }
        }
        if warps.iter().all(|w| w.state == WarpState::Done) {
            return Ok(stats);
        }
        if !progressed {
            return Err(deadlock(kernel, warps, &barriers, ctaid, nthreads));
        }
    }
}

#[allow(clippy::too_many_arguments)]
pub fn init_warp<const W: usize>(
    warp: &mut Warp<W>,
    kernel: &Kernel,
    template: &RegisterTemplate<W>,
    cfg: &LaunchConfig,
    ctaid: [u32; 3],
    block_linear: u64,
    w: u32,
    nthreads: u32,
) {
    let first = w * W as u32;
    let lanes = (nthreads - first).min(W as u32);
    let present = if lanes as usize >= 64 { u64::MAX } else { (1u64 << lanes) - 1 };
    warp.index = w;
    warp.r32.clone_from(&template.r32);
    warp.r64.clone_from(&template.r64);
    warp.preds.clear();
    warp.preds.resize(kernel.npred as usize, 0);
    warp.stack.clear();
    warp.stack.push(StackEntry { pc: 0, mask: present, rpc: warpsim_ir::cfg::NO_RECONV });
    warp.present = present;
    warp.exited = 0;
    warp.local.clear();
    warp.state = WarpState::Ready;
    let mut tid = [[0u32; 3]; W];
    if cfg.block[1] == 1 && cfg.block[2] == 1 {
        for (l, t) in tid.iter_mut().enumerate() {
            t[0] = first + l as u32;
        }
    } else {
        for (l, t) in tid.iter_mut().enumerate() {
            *t = thread_coords(first + l as u32, cfg.block);
        }
    }
    for &(r, sp) in &kernel.specials {
        let value = |lane: u32| -> u64 {
            let l32 = lane & 31;
            match sp {
                Special::Tid(d) => tid[lane as usize][d as usize] as u64,
                Special::Ntid(d) => cfg.block[d as usize] as u64,
                Special::Ctaid(d) => ctaid[d as usize] as u64,
                Special::Nctaid(d) => cfg.grid[d as usize] as u64,
                Special::LaneId => lane as u64,
                Special::WarpId => w as u64,
                Special::NWarpId => cfg.max_warps_per_sm as u64,
                Special::SmId => block_linear % cfg.num_sms.max(1) as u64,
                Special::NSmId => cfg.num_sms as u64,
                Special::LanemaskEq => 1u64 << l32,
                Special::LanemaskLe => (2u64 << l32) - 1,
                Special::LanemaskLt => (1u64 << l32) - 1,
                Special::LanemaskGe => (0xFFFF_FFFFu64 << l32) & 0xFFFF_FFFF,
                Special::LanemaskGt => (0xFFFF_FFFEu64 << l32) & 0xFFFF_FFFF,
                Special::WarpSize => W as u64,
                Special::GridId => 1,
                Special::DynamicSmemSize => cfg.dynamic_shared_bytes as u64,
                Special::TotalSmemSize => (kernel.dynamic_shared_offset + cfg.dynamic_shared_bytes) as u64,
            }
        };
        write_lanes::<W>(warp, r, value);
    }
}

fn write_lanes<const W: usize>(warp: &mut Warp<W>, r: RegRef, value: impl Fn(u32) -> u64) {
    let base = r.slot as usize * W;
    match r.bank {
        warpsim_ir::Bank::R32 => {
            for l in 0..W {
                warp.r32[base + l] = value(l as u32) as u32;
            }
        }
        warpsim_ir::Bank::R64 => {
            for l in 0..W {
                warp.r64[base + l] = value(l as u32);
            }
        }
        warpsim_ir::Bank::Pred => {}
    }
}

pub fn live_threads<const W: usize>(warps: &[Warp<W>]) -> u32 {
    warps.iter().map(|w| (w.present & !w.exited).count_ones()).sum()
}

pub fn arrive<const W: usize>(barriers: &mut [BarrierState], wi: usize, a: BarrierArrival, warps: &mut [Warp<W>]) {
    let id = a.id as usize;
    let bar = &mut barriers[id];
    bar.used = true;
    bar.arrived += a.threads;
    if let Some(c) = a.count {
        bar.expected = Some(c);
    }
    if let Some((r, bits)) = a.red {
        bar.red_popc += bits.count_ones();
        bar.red_and &= bits == a.exec;
        bar.red_or |= bits != 0;
        if bar.waiters.is_empty() && bar.arrived == a.threads {
            // first arrival initialises and/or
            bar.red_and = bits == a.exec;
            bar.red_or = bits != 0;
        }
        bar.waiters.push((wi, a.exec, Some(r)));
    } else if a.wait {
        bar.waiters.push((wi, a.exec, None));
    }
    complete_barrier(barriers, id, warps);
}

pub fn complete_barrier<const W: usize>(barriers: &mut [BarrierState], id: usize, warps: &mut [Warp<W>]) {
    let bar = &mut barriers[id];
    if !bar.used || bar.arrived == 0 {
        return;
    }
    let expected = bar.expected.unwrap_or_else(|| live_threads(warps));
    if bar.arrived < expected {
        return;
    }
    let (popc, all, any) = (bar.red_popc, bar.red_and, bar.red_or);
    for (wi, exec, red) in std::mem::take(&mut bar.waiters) {
        let w = &mut warps[wi];
        w.state = WarpState::Ready;
        if let Some(r) = red {
            match r {
                BarRed::Popc { d } => write_masked::<W>(w, d, popc as u64, exec),
                BarRed::And { d } => write_masked::<W>(w, d, all as u64, exec),
                BarRed::Or { d } => write_masked::<W>(w, d, any as u64, exec),
            }
        }
    }
    *bar = BarrierState::default();
}

fn write_masked<const W: usize>(w: &mut Warp<W>, d: RegRef, v: u64, exec: u64) {
    let base = d.slot as usize * W;
    for l in 0..W {
        if exec >> l & 1 != 0 {
            match d.bank {
                warpsim_ir::Bank::R32 => w.r32[base + l] = v as u32,
                warpsim_ir::Bank::R64 => w.r64[base + l] = v,
                warpsim_ir::Bank::Pred => {
                    let p = &mut w.preds[d.slot as usize];
                    *p = (*p & !(1 << l)) | ((v & 1) << l);
                }
            }
        }
    }
}

pub fn deadlock<const W: usize>(
    kernel: &Kernel,
    warps: &[Warp<W>],
    barriers: &[BarrierState],
    ctaid: [u32; 3],
    nthreads: u32,
) -> KernelFault {
    let (id, bar) = barriers.iter().enumerate().find(|(_, b)| b.used && b.arrived > 0).unwrap_or((0, &barriers[0]));
    let expected = bar.expected.unwrap_or_else(|| live_threads(warps));
    let mut waiting = Vec::new();
    let mut elsewhere = Vec::new();
    let mut pc = 0u32;
    for (wi, w) in warps.iter().enumerate() {
        let arrived: u64 = bar.waiters.iter().filter(|x| x.0 == wi).map(|x| x.1).fold(0, |a, b| a | b);
        if arrived != 0 {
            waiting.push(format!("warp {wi} lanes {arrived:#x}"));
            if let Some(top) = w.stack.last() {
                pc = top.pc.saturating_sub(1);
            }
        }
        let missing = w.present & !w.exited & !arrived;
        if missing != 0 {
            let at = w.stack.iter().rev().find(|e| e.mask & missing != 0).map(|e| e.pc);
            let line = at.and_then(|p| kernel.info.get(p as usize)).map(|i| i.ptx_line).unwrap_or(0);
            elsewhere.push(format!("warp {wi} lanes {missing:#x} (held at PTX line {line})"));
        }
    }
    let info = &kernel.info[(pc as usize).min(kernel.info.len() - 1)];
    KernelFault {
        kind: FaultKind::Deadlock {
            detail: format!(
                "barrier {id} expects {expected} of the block's {nthreads} threads, {} arrived; arrived: {}; not arrived: {}",
                bar.arrived,
                if waiting.is_empty() { "none".into() } else { waiting.join(", ") },
                if elsewhere.is_empty() { "none".into() } else { elsewhere.join(", ") },
            ),
        },
        block: ctaid,
        thread: None,
        warp: 0,
        lane: None,
        pc,
        ptx_line: info.ptx_line,
        opcode: info.opcode.clone(),
        source: info.loc.map(|l| format!("file {} line {}", l.file, l.line)),
    }
}
