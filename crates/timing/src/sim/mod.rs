//! The cycle model: it places blocks on SMs and, per SM, runs four
//! sub-partition schedulers, each issuing at most one warp instruction per
//! cycle, over per-warp scoreboards, pipes and the memory path.
//!
//! Components, each with a spec (immutable, from the preset), its state and
//! its counters:
//! - [`place`]: SM placement and the block scheduler (first wave, refills);
//! - [`sched`]: the sub-partition warp scheduler (GTO or LRR);
//! - [`issue`]: issue of one warp instruction (scoreboard, pipes, stalls);
//! - [`lsu`]: the memory path (MIO and LSU queues, L1, L2, DRAM over [`crate::mem`]).
//!
//! It drives the engine's blocks through their stepping API
//! ([`warpsim_engine::Block`]): a warp's region runs functionally when its
//! first instruction issues, with the block's clock set to the SM's cycle
//! (so `clock64` reads simulated cycles); barrier arrivals and exits take
//! effect when their instruction issues. Idle cycles are skipped: when no
//! warp of an SM can issue, the SM jumps to the earliest time one can.
//!
//! SMs are simulated in turn, one quantum of cycles at a time, in index
//! order: the result depends only on the launch, never on the machine or the
//! thread count. After its turn, an SM may run on through the next quanta
//! in local phases, run by the pass itself or by a worker beside it
//! ([`drive`]), up to its horizon, the first cycle at which it might touch
//! anything outside itself (a warp may issue a global or local access, or
//! run a region that reads or writes global memory), or a block that
//! replaces one that drained may issue (the block scheduler, outside the
//! SM, says which block that is: the phase frees the drained block's slots
//! and keeps them for the pass, see [`Sm::free_reserving`]); the pass in SM
//! order then finishes each quantum as the one-thread model would. What an
//! SM did before its horizon read and wrote only its own state, so the
//! cycles are those of the one-thread model, for any thread count. Plain
//! global stores, and regions whose only outside effect is writing global
//! memory, run in local phases with their writes and L2 bookings logged
//! per quantum and replayed at the SM's turn in that quantum ([`defer`]).

mod defer;
mod drive;
mod issue;
mod lsu;
mod place;
mod sched;

use crate::decode::{decode, DecodeCache, Decoded};
use crate::preset::{TimingGpu, TimingParams};
use crate::report::{Reason, TimingReport};
use issue::{IssueCounters, WarpT};
use lsu::{MemCounters, MemSpec, MemSystem, SmMem};
use place::{BlockT, Placer};
use sched::{SchedSpec, Smsp};
use std::collections::HashMap;
use warpsim_engine::block::RegisterTemplate;
use warpsim_engine::{
    place_past_end, resolve_symbols, validate, with_source_file, GlobalMemory, LaunchConfig, LaunchError, LaunchInput, LaunchStats,
    NoObserver, Observer,
};
use warpsim_gpu::{occupancy, OccupancyInput};
use warpsim_ir::{Kernel, Program};

/// Grid, block and dynamic shared memory of a launch.
#[derive(Clone, Debug)]
pub struct LaunchShape {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_shared_bytes: u32,
}

/// Settings of one timed launch.
#[derive(Clone, Debug)]
pub struct TimingOptions {
    /// Registers per thread as ptxas allocated them (`cudaFuncAttributes::numRegs`);
    /// `None`: estimated from the PTX.
    pub regs_per_thread: Option<u32>,
    /// Record which warp issued on each cycle of each sub-partition ([`Span`]s).
    pub timeline: bool,
    /// Most spans kept when `timeline` is on.
    pub timeline_limit: usize,
    /// Warp instructions one block may execute before it is stopped as runaway.
    pub max_warp_instructions_per_block: u64,
    /// Call stack bytes per thread (`LaunchConfig::stack_size`).
    pub stack_size: u32,
    /// Its `stop` flag ends the launch at the next quantum in `LaunchError::Stopped`.
    pub progress: Option<std::sync::Arc<warpsim_engine::Progress>>,
    /// Serve accesses past an allocation's exact end within its page (`LaunchConfig::serve_past_end`).
    pub serve_past_end: bool,
    /// Simulate on the calling thread only: no local phases on rayon's
    /// threads (`LaunchConfig::serial`; the cycles are the same either way).
    pub serial: bool,
    /// Let an SM run on past its turn in local phases (the default). Off,
    /// the pass runs every SM quantum by quantum in order: the same cycles,
    /// slower; the reference the model's tests hold local phases to.
    pub local_phases: bool,
}

impl Default for TimingOptions {
    fn default() -> Self {
        TimingOptions {
            regs_per_thread: None,
            timeline: false,
            timeline_limit: 4_000_000,
            max_warp_instructions_per_block: 1 << 28,
            stack_size: warpsim_engine::DEFAULT_STACK_SIZE,
            progress: None,
            serve_past_end: false,
            serial: false,
            local_phases: true,
        }
    }
}

/// Everything shared by all SMs: the launch, the specs, the block
/// scheduler, the memory system beyond the SMs, the launch's counters.
struct Gpu<'a, const W: usize> {
    kernel: &'a Kernel,
    dec: &'a Decoded,
    mem: &'a GlobalMemory,
    params: &'a [u8],
    cfg: &'a LaunchConfig,
    template: &'a RegisterTemplate<W>,
    opts: &'a TimingOptions,
    nwarps: u32,
    place: Placer,
    /// The preset's timing parameters.
    timing: &'a TimingParams,
    sched: SchedSpec,
    memsys: MemSystem,
    st: IssueCounters,
    /// Device `printf` output and served past-end accesses, collected as regions run.
    output: LaunchStats,
    /// When the last block finished.
    end: u64,
    /// Warps track `next_local` and SMs their horizon: in local phases,
    /// and in the pass when workers run them.
    local: bool,
    /// A local phase works out its ready warps' `next_local` as it starts
    /// (on one thread: the pass does not track it).
    refresh_local: bool,
    /// Local phases run plain global stores and regions that only write
    /// global memory, deferring their effects on memory and the L2 ([`defer`]).
    defer_stores: bool,
    /// A worker's scratch copy of the memory, for the regions of
    /// `defer_stores`; `Some` only in workers (so: in a local phase).
    scratch: Option<Box<GlobalMemory>>,
}

/// One SM: its resident blocks and warps, sub-partitions, and memory pipes.
struct Sm<'a, const W: usize, O> {
    id: u32,
    now: u64,
    blocks: Vec<BlockT<'a, W, O>>,
    warps: Vec<WarpT>,
    smsp: Vec<Smsp>,
    mem: SmMem,
    resident: u32,
    /// Blocks whose last warp has drained: (time, block slot).
    frees: Vec<(u64, u16)>,
    age: u64,
    active_cycles: u64,
    warp_cycles: u64,
    /// Set when the SM has nothing left to do.
    idle: bool,
    /// In a local phase: the first cycle at which a warp whose next issue
    /// is not local may issue, or a block that replaces a drained one may
    /// (kept up to date by `issue` and `free_reserving`).
    horizon: u64,
    /// Blocks a local phase saw drain while blocks were left to start: when
    /// their successors may issue, the block slot each takes and the end of
    /// the phase's quantum; their warps' slots, `nwarps` each, in
    /// `launch_slots` (see [`Sm::free_reserving`]).
    launches: Vec<(u64, u16, u64)>,
    launch_slots: Vec<u16>,
    /// The error a local phase ended in, and the end of that phase's
    /// quantum: returned at the SM's turn in that quantum.
    pending: Option<(u64, LaunchError)>,
    /// What its local phase left for the in-order pass ([`defer`]): the
    /// log being written, and those of earlier quanta waiting for the pass.
    deferred: defer::Deferred,
    logged: std::collections::VecDeque<defer::Deferred>,
    /// Replayed logs, emptied, for later quanta to fill (no allocation per quantum).
    spare_logs: Vec<defer::Deferred>,
    /// In a local phase, the cycle `cycle` stops at as at a free (`u64::MAX`:
    /// none): the earlier of `ack_floor` and `launch_floor`.
    stop_at: u64,
    /// The earliest drain of a block whose end waits for the replay of
    /// deferred acknowledgements (cleared by the replay).
    ack_floor: u64,
    /// The first issue of a block that replaces a drained one in slots a
    /// local phase kept (cleared when the pass starts it).
    launch_floor: u64,
    /// Local phases it skips before trying one again, and the next such
    /// count (see [`drive`]).
    local_skip: u32,
    local_backoff: u32,
}

/// Runs `kernel` on the timing model of `gpu`.
#[allow(clippy::too_many_arguments)]
pub fn simulate(
    program: &Program,
    kernel: &Kernel,
    mem: &GlobalMemory,
    globals: &HashMap<String, u64>,
    params: &[u8],
    shape: &LaunchShape,
    gpu: &TimingGpu,
    opts: &TimingOptions,
) -> Result<(LaunchStats, TimingReport), LaunchError> {
    let launch = TimedLaunch { input: LaunchInput { program, kernel, mem, globals, params }, shape, gpu, opts, decode: None };
    simulate_observed(&launch, &|| NoObserver, &|_, _| {}).0
}

/// What a timed launch runs, and on what.
#[derive(Clone, Copy)]
pub struct TimedLaunch<'a> {
    pub input: LaunchInput<'a>,
    pub shape: &'a LaunchShape,
    pub gpu: &'a TimingGpu,
    pub opts: &'a TimingOptions,
    /// The kernel's decode kept from earlier launches (`None`: decode it for this one).
    pub decode: Option<&'a DecodeCache>,
}

/// [`simulate`] with user observers that see the same events as in a
/// functional launch: one observer per resident block slot, made by `make`
/// (the blocks one observer sees run one after another) and folded into one
/// by `merge`. The observer comes back also when the launch fails.
pub fn simulate_observed<O: Observer + Send>(
    l: &TimedLaunch<'_>,
    make: &dyn Fn() -> O,
    merge: &dyn Fn(&mut O, O),
) -> (Result<(LaunchStats, TimingReport), LaunchError>, O) {
    let (r, obs) = match l.gpu.preset.warp_size {
        32 => run::<32, O>(l, make, merge),
        64 => run::<64, O>(l, make, merge),
        w => (Err(LaunchError::Config(format!("warp size {w} is not supported (32 or 64)"))), make()),
    };
    let r = r
        .map(|(mut s, mut rep)| {
            place_past_end(l.input.program, l.input.kernel, &mut s);
            rep.fill_lines(l.input.program, l.input.kernel);
            (s, rep)
        })
        .map_err(|e| with_source_file(l.input.program, l.input.kernel, e));
    (r, obs)
}

/// Registers per thread when ptxas' figure is not known: the estimate of
/// `warpsim_ir::regs` (liveness and a simulated allocation).
pub fn estimate_registers(k: &Kernel) -> u32 {
    warpsim_ir::regs::estimate_registers(k).regs_per_thread
}

fn run<const W: usize, O: Observer + Send>(
    l: &TimedLaunch<'_>,
    make: &dyn Fn() -> O,
    merge: &dyn Fn(&mut O, O),
) -> (Result<(LaunchStats, TimingReport), LaunchError>, O) {
    let mut observers = Vec::new();
    let r = timed::<W, O>(l, make, &mut observers);
    let mut obs = make();
    for o in observers {
        merge(&mut obs, o);
    }
    (r, obs)
}

/// The timed launch; hands back the observers of every block slot in `observers`.
fn timed<const W: usize, O: Observer + Send>(
    l: &TimedLaunch<'_>,
    make: &dyn Fn() -> O,
    observers: &mut Vec<O>,
) -> Result<(LaunchStats, TimingReport), LaunchError> {
    let TimedLaunch { input: LaunchInput { kernel, mem, globals, params, .. }, shape, gpu, opts, decode: kept } = *l;
    let p = &gpu.preset;
    let cfg = LaunchConfig {
        grid: shape.grid,
        block: shape.block,
        dynamic_shared_bytes: shape.dynamic_shared_bytes,
        warp_size: W as u32,
        num_sms: p.sm_count,
        max_warps_per_sm: p.max_warps_per_sm,
        max_warp_instructions_per_block: opts.max_warp_instructions_per_block,
        serial: true,
        stack_size: opts.stack_size,
        serve_past_end: opts.serve_past_end,
        ..Default::default()
    };
    validate(kernel, params, &cfg)?;
    // The engine's blocks run the packed form; decoding and the register estimate keep PTX numbering.
    let symbols = resolve_symbols(kernel.for_engine(), globals)?;
    let template = RegisterTemplate::<W>::new(kernel.for_engine(), &symbols);
    let nthreads: u32 = shape.block.iter().product();
    let nwarps = nthreads.div_ceil(W as u32);
    let regs = opts.regs_per_thread.unwrap_or_else(|| estimate_registers(kernel));
    let static_shared = kernel.dynamic_shared_offset.max(kernel.shared_static_bytes);
    let shared_total = static_shared + shape.dynamic_shared_bytes;
    let input = OccupancyInput {
        block_threads: nthreads,
        regs_per_thread: regs,
        static_shared_bytes: static_shared,
        dynamic_shared_bytes: shape.dynamic_shared_bytes,
        barriers_per_block: 1,
        opt_in_shared: shared_total > p.shared_per_block_default,
        shared_carveout_percent: None,
    };
    let occ = occupancy(p, &input).map_err(|e| LaunchError::Config(format!("occupancy: {e}")))?;
    if occ.blocks_per_sm == 0 {
        return Err(LaunchError::Config(format!(
            "no block of this kernel fits on an SM of the {}: {}",
            p.name,
            occ.zero_reason.clone().unwrap_or_default()
        )));
    }
    // The driver picks the smallest carve-out that keeps the occupancy; L1 gets the rest.
    let need = occ.blocks_per_sm as u64 * occ.shared_per_block as u64;
    let carve = p.shared_carveouts.iter().map(|&c| c as u64).find(|&c| c >= need).unwrap_or(p.shared_per_sm_max as u64);
    let l1_bytes = p.l1_bytes.saturating_sub(carve).max(gpu.timing.l1_min_bytes);

    let dec = match kept {
        Some(cache) => cache.decoded(kernel, gpu),
        None => std::sync::Arc::new(decode(kernel, gpu)),
    };
    let dec = &*dec;
    let nblocks = shape.grid.iter().map(|&d| d as u64).product::<u64>();
    let n = kernel.code.len();
    let mut gg = Gpu {
        kernel,
        dec,
        mem,
        params,
        cfg: &cfg,
        template: &template,
        opts,
        nwarps,
        place: Placer::new(occ.blocks_per_sm, l1_bytes, nblocks, (p.max_warps_per_sm, p.schedulers_per_sm)),
        timing: &gpu.timing,
        sched: SchedSpec::new(gpu),
        memsys: MemSystem::new(MemSpec::new(gpu), gpu, n),
        st: IssueCounters::new(n),
        output: LaunchStats::default(),
        end: 0,
        local: false,
        refresh_local: false,
        defer_stores: false,
        scratch: None,
    };
    let nsm = p.sm_count as usize;
    // SMs that get a block: the first wave goes round the SMs in order, and
    // later blocks go where one finished, so with fewer blocks than SMs the
    // rest never get one (and would be most of a small launch's time).
    let busy_sms = usize::try_from(nblocks).unwrap_or(usize::MAX).clamp(1, nsm.max(1));
    let mut sms: Vec<Sm<W, O>> = (0..busy_sms)
        .map(|i| Sm {
            id: i as u32,
            now: 0,
            blocks: Vec::new(),
            // Made when its first block is placed ([`place::first_wave`]).
            warps: Vec::new(),
            smsp: Vec::new(),
            mem: SmMem::unbuilt(gpu),
            resident: 0,
            frees: Vec::new(),
            age: 0,
            active_cycles: 0,
            warp_cycles: 0,
            idle: true,
            horizon: 0,
            launches: Vec::new(),
            launch_slots: Vec::new(),
            pending: None,
            deferred: Default::default(),
            logged: Default::default(),
            spare_logs: Vec::new(),
            stop_at: u64::MAX,
            ack_floor: u64::MAX,
            launch_floor: u64::MAX,
            local_skip: 0,
            local_backoff: 1,
        })
        .collect();
    // Contexts for local phases, the pass's own on one thread, else one per
    // worker: their counters are summed into the launch's. The timeline's
    // spans are kept in issue order up to a cap, so a timeline runs in order only.
    // No more threads than SMs that get a block: a worker beside a one-block
    // launch would only cost its start (tens of microseconds, more than such a launch).
    let threads = if opts.timeline || opts.serial { 1 } else { rayon::current_num_threads().min(busy_sms) };
    let local = opts.local_phases && !opts.timeline;
    gg.local = local && threads > 1;
    gg.defer_stores = local;
    let mut locals: Vec<Gpu<W>> = if local {
        (0..threads.max(2) - 1).map(|_| Gpu { local: true, refresh_local: threads == 1, ..gg.worker() }).collect()
    } else {
        Vec::new()
    };
    let r = drive::drive(&mut sms, &mut gg, &mut locals, threads > 1, make);
    for w in &mut locals {
        gg.st.merge(&w.st);
        gg.memsys.st.merge(&w.memsys.st);
        gg.output.printf.push_str(&w.output.printf);
        gg.end = gg.end.max(w.end);
    }
    for sm in sms.iter_mut() {
        observers.extend(sm.blocks.drain(..).map(|b| b.obs));
        place::keep_warp_slots(std::mem::take(&mut sm.warps));
    }
    if let Err(LaunchError::Fault(mut f)) = r {
        // What ran before the fault: counts and device printf output.
        let mut ran = std::mem::take(&mut gg.output);
        ran.warp_instructions = gg.st.warp_insts;
        ran.thread_instructions = gg.st.thread_insts;
        f.ran = Some(Box::new(ran));
        return Err(LaunchError::Fault(f));
    }
    r?;
    let mut rep = TimingReport::new(gpu, occ, l1_bytes);
    let st = &mut gg.st;
    // Issue slots are `Selected` cycles (per pc counted as they happen).
    st.stall[Reason::Selected as usize] += st.sass_insts;
    let ms: &mut MemCounters = &mut gg.memsys.st;
    rep.kernel_cycles = gg.end;
    rep.cycles = gg.end + p.launch_overhead_cycles as u64;
    rep.sm_active_cycles = sms.iter().map(|s| s.active_cycles).sum();
    rep.warp_active_cycles = sms.iter().map(|s| s.warp_cycles).sum();
    rep.issue_cycles = sms.iter().flat_map(|s| s.smsp.iter()).map(|x| x.issue_cycles).sum();
    rep.stall = st.stall;
    rep.sass_instructions = st.sass_insts;
    rep.warp_instructions = st.warp_insts;
    rep.thread_instructions = st.thread_insts;
    rep.l2_read_sectors = ms.l2_read_sectors;
    rep.l2_write_sectors = ms.l2_write_sectors;
    rep.l2_read_hits = ms.l2_read_hits;
    rep.l1_sectors = ms.l1_sectors;
    rep.l1_hits = ms.l1_hits;
    rep.dram_read_bytes = ms.dram_read_bytes;
    rep.dram_write_bytes = gg.memsys.l2.evicted_dirty_sectors * 32;
    rep.shared_wavefronts = ms.shared_wavefronts;
    rep.warps = st.warps_launched;
    rep.blocks = nblocks;
    rep.pc_issue = st.pc_stall.iter().map(|p| p[Reason::Selected as usize]).collect();
    rep.pc_stall = std::mem::take(&mut st.pc_stall);
    rep.pc_l2 = std::mem::take(&mut ms.pc_l2);
    rep.pc_dram = std::mem::take(&mut ms.pc_dram);
    if gg.opts.timeline {
        for sm in sms.iter_mut() {
            for sp in sm.smsp.iter_mut() {
                if let Some(s) = sp.span.take() {
                    st.spans.push(s);
                }
            }
        }
        st.spans.sort_by_key(|s| (s.sm, s.subpartition, s.start_cycle));
        rep.timeline = Some(std::mem::take(&mut st.spans));
        rep.timeline_truncated = st.spans_dropped;
    }
    let stats = LaunchStats {
        blocks: nblocks,
        warps: nblocks * nwarps as u64,
        warp_instructions: st.warp_insts,
        thread_instructions: st.thread_insts,
        printf: std::mem::take(&mut gg.output.printf),
        past_end: std::mem::take(&mut gg.output.past_end),
        past_end_count: gg.output.past_end_count,
    };
    Ok((stats, rep))
}

impl<'a, const W: usize> Gpu<'a, W> {
    /// A worker's context for local phases: the launch and specs, fresh
    /// counters, and no memory system state beyond the spec (a local phase
    /// touches none).
    fn worker(&self) -> Gpu<'a, W> {
        let n = self.kernel.code.len();
        Gpu {
            place: Placer::new(self.place.blocks_per_sm, self.place.l1_bytes, 0, self.place.sm_shape),
            sched: self.sched.clone(),
            memsys: MemSystem::counters_only(self.memsys.spec.clone(), n),
            st: IssueCounters::new(n),
            output: LaunchStats::default(),
            end: 0,
            scratch: self.defer_stores.then(|| Box::new(self.mem.same_layout())),
            ..*self
        }
    }
}

impl<'a, const W: usize, O: Observer> Sm<'a, W, O> {
    /// With no block resident the SM goes idle for good; says whether it did.
    fn idle_if_empty(&mut self) -> bool {
        if self.resident == 0 {
            self.idle = true;
            self.now = u64::MAX;
        }
        self.resident == 0
    }

    /// Runs this SM up to (not including) cycle `end`.
    fn run_until(&mut self, end: u64, gg: &mut Gpu<'a, W>, make: &dyn Fn() -> O) -> Result<(), LaunchError> {
        while self.now < end {
            let t = self.now;
            // Blocks that finished: free their slots, start the next blocks.
            self.free_finished(t, gg, make)?;
            if self.idle_if_empty() {
                return Ok(());
            }
            self.cycles(end, false, gg)?;
        }
        Ok(())
    }

    /// The first cycle the pass must visit this SM at (`u64::MAX`: never):
    /// its own time, or the start of the earliest quantum whose local phase
    /// left something for the pass.
    fn next_visit(&self, q: u64) -> u64 {
        let left = self.deferred_until().min(self.launches_until()).min(self.pending.as_ref().map_or(u64::MAX, |p| p.0));
        let at = if self.idle { u64::MAX } else { self.now };
        if left == u64::MAX {
            at
        } else {
            at.min(left.saturating_sub(q))
        }
    }

    /// Runs this SM up to `end` or its horizon, whichever comes first,
    /// touching nothing outside it but `gg`'s counters and end time. Blocks
    /// that drain free their slots here as in [`Sm::run_until`]: with
    /// `frees_local` (no block left to start) the SM may go idle; otherwise
    /// their successors' slots are kept for the in-order pass to start them
    /// in, and the phase stops before they may issue, or when no block is left.
    fn run_local(&mut self, end: u64, frees_local: bool, gg: &mut Gpu<'a, W>) -> Result<(), LaunchError> {
        self.log_quantum(end);
        // (Floors that earlier phases left stand until the pass clears them.)
        self.horizon = self.stop_at;
        let dec = gg.dec;
        for w in self.warps.iter_mut().filter(|w| w.live && w.is_ready()) {
            if gg.refresh_local {
                let r = &dec.regions[w.region as usize];
                w.next_local = issue::next_is_local(w, gg, r, &dec.insts[w.next as usize], w.pos);
            }
            if !w.next_local {
                self.horizon = self.horizon.min(w.ready_at);
            }
        }
        while self.now < end.min(self.horizon) {
            let t = self.now;
            if frees_local {
                self.free_drained(t, gg);
                if self.idle_if_empty() {
                    return Ok(());
                }
            } else {
                self.free_reserving(t, end, gg);
                if self.resident == 0 {
                    // Idle or not: the pass knows whether a block is left.
                    return Ok(());
                }
            }
            self.cycles(end, true, gg)?;
        }
        Ok(())
    }

    /// Cycles from `now` on while `now` is before `end` (and, with `local`,
    /// before the horizon) and no block's slot is due to be freed: the
    /// callers' per-cycle loop without a call, its prologue and the frees'
    /// look-up each cycle (a free is due only at the cycle its block drains,
    /// which `cycle` never steps over).
    #[inline(never)]
    fn cycles(&mut self, end: u64, local: bool, gg: &mut Gpu<'a, W>) -> Result<(), LaunchError> {
        loop {
            let frees_due = self.cycle(self.now, gg)?;
            let stop = if local { end.min(self.horizon) } else { end };
            if self.now >= stop || frees_due <= self.now {
                return Ok(());
            }
        }
    }

    /// Cycle `t`: each sub-partition issues if it can; moves `now` on to
    /// the next cycle at which one might. Returns when the first block
    /// waiting to be freed drains, or `stop_at` (`u64::MAX`: none).
    #[inline(always)]
    fn cycle(&mut self, t: u64, gg: &mut Gpu<'a, W>) -> Result<u64, LaunchError> {
        {
            let mut issued = false;
            // Sub-partitions that cannot issue yet are passed over in a
            // tight loop (one load each); the others schedule in turn.
            let (mut s, mut next) = sched::next_due(&self.smsp, 0, t, u64::MAX);
            while s < self.smsp.len() {
                let (did, nxt) = self.schedule(s, t, gg)?;
                issued |= did;
                (s, next) = sched::next_due(&self.smsp, s + 1, t, next.min(nxt));
            }
            let mut frees_due = self.stop_at;
            for &(ft, _) in &self.frees {
                frees_due = frees_due.min(ft);
            }
            next = next.min(frees_due);
            if next == u64::MAX && !issued {
                // Nothing can ever issue: every live warp waits at a barrier.
                return Err(self.deadlock());
            }
            let to = if issued { t + 1 } else { next.max(t + 1) };
            self.active_cycles += to - t;
            self.now = to;
            Ok(frees_due)
        }
    }

    fn deadlock(&self) -> LaunchError {
        let b = self.blocks.iter().find(|b| b.live).expect("a resident block");
        LaunchError::Fault(Box::new(b.eng.deadlock()))
    }
}
