//! The cycle model: a block scheduler over all SMs, four sub-partition
//! schedulers per SM issuing at most one warp instruction per cycle each,
//! per-warp scoreboards, pipes with per-class occupancy, the shared-memory
//! (MIO) and L1 (LSU) pipes with their queues, and the memory system of
//! [`crate::mem`].
//!
//! It drives the functional engine one warp instruction at a time
//! (`Warp::run(ctx, obs, 1)`), so results stay exact; before each issue it
//! sets the warp's clock to the SM's cycle, so `clock64` reads simulated
//! cycles. Idle cycles are skipped: when no warp of an SM can issue, the SM
//! jumps to the earliest time one can.
//!
//! SMs are simulated in turn, one quantum of cycles at a time, in index
//! order, on one thread: the result depends only on the launch, never on the
//! machine or the thread count.

use crate::decode::{decode, Class, Decoded, Sb, NPIPES, PIPE_NONE, QUEUE_LSU, QUEUE_MIO};
use crate::mem::{Bandwidth, Cache, Lookup};
use crate::preset::{SchedulerPolicy, TimingGpu};
use crate::report::{Reason, Span, TimingReport, NREASONS};
use std::collections::{HashMap, VecDeque};
use warpsim_engine::block::{Block, RegisterTemplate, Stop, WarpState};
use warpsim_engine::{
    resolve_symbols, validate, with_source_file, GlobalMemory, LaunchConfig, LaunchError, LaunchStats, MemAccessKind, NoObserver, Observer,
};
use warpsim_gpu::{occupancy, OccupancyInput};
use warpsim_ir::window::{generic_space, LOCAL_WINDOW, SHARED_WINDOW};
use warpsim_ir::{Kernel, Program, Space};

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
}

impl Default for TimingOptions {
    fn default() -> Self {
        TimingOptions { regs_per_thread: None, timeline: false, timeline_limit: 4_000_000, max_warp_instructions_per_block: 1 << 28 }
    }
}

const NONE16: u16 = u16::MAX;

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum WS {
    Ready,
    Barrier,
    Done,
}

/// Timing state of a resident warp.
struct WarpT {
    live: bool,
    block: u16,
    widx: u16,
    smsp: u8,
    age: u64,
    state: WS,
    /// Earliest issue of `next` as far as its own dependences go.
    ready_at: u64,
    /// Why it waits until `ready_at`.
    reason: Reason,
    /// What held it back the last time it was ready but did not issue.
    blocked: Reason,
    next: u32,
    /// Stall cycles are accounted up to here.
    acct: u64,
    start: u64,
    store_ack: u64,
    /// Results of an unknown instruction: nothing issues before this.
    fence_until: u64,
    loop_pc: u32,
    loop_iter: u32,
    ready: Vec<u64>,
    kind: Vec<Sb>,
    /// The region being issued, the position in its order, and whether the
    /// engine has executed it yet.
    region: u32,
    pos: u32,
    executed: bool,
    /// The engine reported the warp exited / at a barrier while executing the region.
    stop: Stop,
    /// Memory accesses and the branch outcome captured while executing the region.
    caps: Vec<MemRec>,
    branch: (u64, u64),
}

impl WarpT {
    fn empty() -> Self {
        WarpT {
            live: false,
            block: 0,
            widx: 0,
            smsp: 0,
            age: 0,
            state: WS::Done,
            ready_at: 0,
            reason: Reason::NoInstruction,
            blocked: Reason::NotSelected,
            next: 0,
            acct: 0,
            start: 0,
            store_ack: 0,
            fence_until: 0,
            loop_pc: u32::MAX,
            loop_iter: 0,
            ready: Vec::new(),
            kind: Vec::new(),
            region: 0,
            pos: 0,
            executed: false,
            stop: Stop::Yield,
            caps: Vec::new(),
            branch: (0, 0),
        }
    }
}

/// A resident block: the engine's block, the observer that sees it (one per
/// slot, so the blocks an observer sees run one after another), its warps' slots.
struct BlockT<'a, const W: usize, O> {
    live: bool,
    eng: Block<'a, W>,
    obs: O,
    slots: Vec<u16>,
    remaining: u32,
    end: u64,
}

struct Smsp {
    warps: Vec<u16>,
    last: u16,
    pipe_free: [u64; NPIPES],
    issue_free: u64,
    mio_q: VecDeque<u64>,
    lsu_q: VecDeque<u64>,
    issue_cycles: u64,
    span: Option<Span>,
}

struct Sm<'a, const W: usize, O> {
    id: u32,
    now: u64,
    blocks: Vec<BlockT<'a, W, O>>,
    warps: Vec<WarpT>,
    smsp: Vec<Smsp>,
    resident: u32,
    /// Blocks whose last warp has drained: (time, block slot).
    frees: Vec<(u64, u16)>,
    mio_free: u64,
    l1_free: u64,
    l1: Cache,
    port: Bandwidth,
    age: u64,
    active_cycles: u64,
    warp_cycles: u64,
    /// Set when the SM has nothing left to do.
    idle: bool,
}

/// One memory instruction's access, captured from the engine.
#[derive(Clone)]
struct MemRec {
    pc: u32,
    space: Space,
    bytes: u32,
    mask: u64,
    n: u8,
    addrs: [u64; 64],
}

/// The observer the engine reports a region's memory accesses and branch to.
struct Cap<'a> {
    recs: &'a mut Vec<MemRec>,
    branch: (u64, u64),
}

impl Observer for Cap<'_> {
    const WANTS_MEMORY: bool = true;
    #[inline]
    fn memory(&mut self, _warp: u32, pc: u32, space: Space, _kind: MemAccessKind, bytes: u32, addrs: &[u64], mask: u64) {
        let n = addrs.len().min(64);
        let mut r = MemRec { pc, space, bytes, mask, n: n as u8, addrs: [0; 64] };
        r.addrs[..n].copy_from_slice(&addrs[..n]);
        self.recs.push(r);
    }
    #[inline]
    fn branch(&mut self, _warp: u32, _pc: u32, taken: u64, not_taken: u64) {
        self.branch = (taken, not_taken);
    }
}

/// Counters of the whole launch.
pub(crate) struct Stats {
    pub stall: [u64; NREASONS],
    pub pc_issue: Vec<u64>,
    pub pc_stall: Vec<[u64; NREASONS]>,
    /// L2 sectors (read and written) and DRAM bytes read per pc.
    pub pc_l2: Vec<u64>,
    pub pc_dram: Vec<u64>,
    pub sass_insts: u64,
    pub warp_insts: u64,
    pub thread_insts: u64,
    pub l2_read_sectors: u64,
    pub l2_write_sectors: u64,
    pub l2_read_hits: u64,
    pub l1_sectors: u64,
    pub l1_hits: u64,
    pub dram_read_bytes: u64,
    pub shared_wavefronts: u64,
    pub warps_launched: u64,
    pub spans: Vec<Span>,
    pub spans_dropped: bool,
}

/// Everything shared by all SMs.
struct Gpu<'a, const W: usize> {
    g: &'a TimingGpu,
    kernel: &'a Kernel,
    dec: &'a Decoded,
    mem: &'a GlobalMemory,
    params: &'a [u8],
    cfg: &'a LaunchConfig,
    template: &'a RegisterTemplate<W>,
    nwarps: u32,
    blocks_per_sm: u32,
    nblocks: u64,
    next_block: u64,
    l2: Cache,
    l2_bw: Bandwidth,
    dram: Bandwidth,
    st: Stats,
    opts: &'a TimingOptions,
    // Latencies (cycles).
    lat_l1: u64,
    lat_l2: u64,
    lat_dram: u64,
    lat_shared: u64,
    end: u64,
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
    ptx_source: Option<&str>,
) -> Result<(LaunchStats, TimingReport), LaunchError> {
    let launch = TimedLaunch { program, kernel, mem, globals, params, shape, gpu, opts, ptx_source };
    simulate_observed(&launch, &|| NoObserver, &|_, _| {}).0
}

/// What a timed launch runs, and on what.
#[derive(Clone, Copy)]
pub struct TimedLaunch<'a> {
    pub program: &'a Program,
    pub kernel: &'a Kernel,
    pub mem: &'a GlobalMemory,
    pub globals: &'a HashMap<String, u64>,
    pub params: &'a [u8],
    pub shape: &'a LaunchShape,
    pub gpu: &'a TimingGpu,
    pub opts: &'a TimingOptions,
    /// The PTX text, for pragmas the decoder reads from it.
    pub ptx_source: Option<&'a str>,
}

/// [`simulate`] with user observers that see the same events as in a
/// functional launch: one observer per resident block slot, made by `make`
/// (the blocks one observer sees run one after another) and folded into one
/// by `merge`. The observer comes back also when the launch fails.
pub fn simulate_observed<O: Observer>(
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
        .map(|(s, mut rep)| {
            rep.fill_lines(l.program, l.kernel);
            (s, rep)
        })
        .map_err(|e| with_source_file(l.program, l.kernel, e));
    (r, obs)
}

/// Registers per thread when ptxas' figure is not known: the estimate of
/// `warpsim_ir::regs` (liveness and a simulated allocation).
pub fn estimate_registers(k: &Kernel) -> u32 {
    warpsim_ir::regs::estimate_registers(k).regs_per_thread
}

fn run<const W: usize, O: Observer>(
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
fn timed<const W: usize, O: Observer>(
    l: &TimedLaunch<'_>,
    make: &dyn Fn() -> O,
    observers: &mut Vec<O>,
) -> Result<(LaunchStats, TimingReport), LaunchError> {
    let TimedLaunch { kernel, mem, globals, params, shape, gpu, opts, ptx_source, .. } = *l;
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
        ..Default::default()
    };
    validate(kernel, params, &cfg)?;
    let symbols = resolve_symbols(kernel, globals)?;
    let template = RegisterTemplate::<W>::new(kernel, &symbols);
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

    let dec = decode(kernel, gpu, ptx_source);
    let dec = &dec;
    let nblocks = shape.grid.iter().map(|&d| d as u64).product::<u64>();
    let n = kernel.code.len();
    let mut gg = Gpu {
        g: gpu,
        kernel,
        dec,
        mem,
        params,
        cfg: &cfg,
        template: &template,
        nwarps,
        blocks_per_sm: occ.blocks_per_sm,
        nblocks,
        next_block: 0,
        l2: Cache::new(p.l2_bytes, gpu.timing.l2_ways),
        l2_bw: Bandwidth::new(gpu.timing.l2_bytes_per_cycle),
        dram: Bandwidth::new(gpu.dram_bytes_per_cycle()),
        st: Stats {
            stall: [0; NREASONS],
            pc_issue: vec![0; n],
            pc_stall: vec![[0; NREASONS]; n],
            pc_l2: vec![0; n],
            pc_dram: vec![0; n],
            sass_insts: 0,
            warp_insts: 0,
            thread_insts: 0,
            l2_read_sectors: 0,
            l2_write_sectors: 0,
            l2_read_hits: 0,
            l1_sectors: 0,
            l1_hits: 0,
            dram_read_bytes: 0,
            shared_wavefronts: 0,
            warps_launched: 0,
            spans: Vec::new(),
            spans_dropped: false,
        },
        opts,
        lat_l1: p.latencies.l1_hit as u64,
        lat_l2: p.latencies.l2_hit as u64,
        lat_dram: gpu.dram_latency() as u64,
        lat_shared: p.latencies.shared as u64,
        end: 0,
    };
    let nsmsp = p.schedulers_per_sm as usize;
    let nsm = p.sm_count as usize;
    let mut sms: Vec<Sm<W, O>> = (0..nsm)
        .map(|i| Sm {
            id: i as u32,
            now: 0,
            blocks: Vec::new(),
            warps: (0..p.max_warps_per_sm).map(|_| WarpT::empty()).collect(),
            smsp: (0..nsmsp)
                .map(|_| Smsp {
                    warps: Vec::new(),
                    last: NONE16,
                    pipe_free: [0; NPIPES],
                    issue_free: 0,
                    mio_q: VecDeque::new(),
                    lsu_q: VecDeque::new(),
                    issue_cycles: 0,
                    span: None,
                })
                .collect(),
            resident: 0,
            frees: Vec::new(),
            mio_free: 0,
            l1_free: 0,
            l1: Cache::new(0, 1),
            port: Bandwidth::new(gpu.timing.l2_port_bytes_per_cycle),
            age: 0,
            active_cycles: 0,
            warp_cycles: 0,
            idle: true,
        })
        .collect();
    let r = drive(&mut sms, &mut gg, make, l1_bytes);
    for sm in sms.iter_mut() {
        observers.extend(sm.blocks.drain(..).map(|b| b.obs));
    }
    r?;
    let mut rep = TimingReport::new(gpu, occ, l1_bytes);
    let st = &mut gg.st;
    rep.kernel_cycles = gg.end;
    rep.cycles = gg.end + p.launch_overhead_cycles as u64;
    rep.sm_active_cycles = sms.iter().map(|s| s.active_cycles).sum();
    rep.warp_active_cycles = sms.iter().map(|s| s.warp_cycles).sum();
    rep.issue_cycles = sms.iter().flat_map(|s| s.smsp.iter()).map(|x| x.issue_cycles).sum();
    rep.stall = st.stall;
    rep.sass_instructions = st.sass_insts;
    rep.warp_instructions = st.warp_insts;
    rep.thread_instructions = st.thread_insts;
    rep.l2_read_sectors = st.l2_read_sectors;
    rep.l2_write_sectors = st.l2_write_sectors;
    rep.l2_read_hits = st.l2_read_hits;
    rep.l1_sectors = st.l1_sectors;
    rep.l1_hits = st.l1_hits;
    rep.dram_read_bytes = st.dram_read_bytes;
    rep.dram_write_bytes = gg.l2.evicted_dirty_sectors * 32;
    rep.shared_wavefronts = st.shared_wavefronts;
    rep.warps = st.warps_launched;
    rep.blocks = gg.nblocks;
    rep.pc_issue = std::mem::take(&mut st.pc_issue);
    rep.pc_stall = std::mem::take(&mut st.pc_stall);
    rep.pc_l2 = std::mem::take(&mut st.pc_l2);
    rep.pc_dram = std::mem::take(&mut st.pc_dram);
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
        blocks: gg.nblocks,
        warps: gg.nblocks * nwarps as u64,
        warp_instructions: st.warp_insts,
        thread_instructions: st.thread_insts,
    };
    Ok((stats, rep))
}

/// First wave of blocks, then every SM in turn, one quantum of cycles at a time, until all are idle.
fn drive<'a, const W: usize, O: Observer>(
    sms: &mut [Sm<'a, W, O>],
    gg: &mut Gpu<'a, W>,
    make: &dyn Fn() -> O,
    l1_bytes: u64,
) -> Result<(), LaunchError> {
    let gpu = gg.g;
    // First wave: round robin over SMs, as many blocks per SM as fit.
    let launch = gpu.timing.block_launch_cycles as u64;
    for round in 0..gg.blocks_per_sm {
        for sm in sms.iter_mut() {
            if gg.next_block >= gg.nblocks {
                break;
            }
            if sm.blocks.is_empty() {
                sm.l1 = Cache::new(l1_bytes, gpu.timing.l1_ways);
            }
            let id = gg.next_block;
            gg.next_block += 1;
            let at = launch + round as u64 * gpu.timing.block_dispatch_cycles as u64;
            sm.launch_block(gg, make, id, at)?;
        }
    }
    let q = gpu.timing.quantum_cycles as u64;
    let mut t = 0u64;
    loop {
        let end = t + q;
        let mut next = u64::MAX;
        for sm in sms.iter_mut() {
            if sm.idle {
                continue;
            }
            sm.run_until(end, gg, make)?;
            if !sm.idle {
                next = next.min(sm.now);
            }
        }
        if next == u64::MAX {
            break;
        }
        // Skip quanta in which nothing happens anywhere.
        t = end.max(next - next % q);
        gg.l2_bw.retire(t);
        gg.dram.retire(t);
        for sm in sms.iter_mut() {
            sm.port.retire(t);
        }
    }
    Ok(())
}

#[inline]
fn reason_of(sb: Sb) -> Reason {
    match sb {
        Sb::Fixed => Reason::Wait,
        Sb::Short => Reason::ShortScoreboard,
        Sb::Long => Reason::LongScoreboard,
    }
}

impl<'a, const W: usize, O: Observer> Sm<'a, W, O> {
    /// Places block `id` on this SM; its warps may issue from `at`.
    fn launch_block(&mut self, gg: &mut Gpu<'a, W>, make: &dyn Fn() -> O, id: u64, at: u64) -> Result<(), LaunchError> {
        let dec = gg.dec;
        let bslot = match self.blocks.iter().position(|b| !b.live) {
            Some(i) => i,
            None => {
                self.blocks.push(BlockT {
                    live: false,
                    eng: Block::new(gg.kernel, gg.cfg, gg.template, gg.params),
                    obs: make(),
                    slots: Vec::new(),
                    remaining: 0,
                    end: 0,
                });
                self.blocks.len() - 1
            }
        };
        if self.resident == 0 {
            // The SM becomes active now (its idle time before is not counted).
            self.now = self.now.max(at.saturating_sub(gg.g.timing.block_replace_cycles as u64));
        }
        self.idle = false;
        self.resident += 1;
        let nw = gg.nwarps as usize;
        let nregs = dec.regs.total();
        {
            let b = &mut self.blocks[bslot];
            b.live = true;
            b.remaining = nw as u32;
            b.end = at;
            b.eng.begin(id, &mut b.obs);
            b.slots.clear();
        }
        let nsmsp = self.smsp.len();
        let mut slot = 0usize;
        for wi in 0..nw {
            while self.warps[slot].live {
                slot += 1;
            }
            let w = &mut self.warps[slot];
            w.live = true;
            w.block = bslot as u16;
            w.widx = wi as u16;
            w.smsp = (slot % nsmsp) as u8;
            w.age = self.age;
            self.age += 1;
            w.state = WS::Ready;
            w.ready_at = at;
            w.reason = Reason::NoInstruction;
            w.blocked = Reason::NotSelected;
            w.acct = at;
            w.start = at;
            w.store_ack = 0;
            w.fence_until = 0;
            w.loop_pc = u32::MAX;
            w.loop_iter = 0;
            w.ready.clear();
            w.ready.resize(nregs, 0);
            w.kind.clear();
            w.kind.resize(nregs, Sb::Fixed);
            w.region = dec.region_at.first().copied().unwrap_or(0);
            w.pos = 0;
            w.executed = false;
            w.stop = Stop::Yield;
            w.caps.clear();
            self.blocks[bslot].slots.push(slot as u16);
            self.smsp[slot % nsmsp].warps.push(slot as u16);
            gg.st.warps_launched += 1;
            self.advance(gg, slot, at)?;
            if self.warps[slot].ready_at < at {
                self.warps[slot].ready_at = at;
            }
            self.warps[slot].reason = Reason::NoInstruction;
        }
        Ok(())
    }

    /// Runs this SM up to (not including) cycle `end`.
    fn run_until(&mut self, end: u64, gg: &mut Gpu<'a, W>, make: &dyn Fn() -> O) -> Result<(), LaunchError> {
        while self.now < end {
            let t = self.now;
            // Blocks that finished: free their slots, start the next blocks.
            if !self.frees.is_empty() {
                let mut i = 0;
                while i < self.frees.len() {
                    if self.frees[i].0 <= t {
                        let (ft, b) = self.frees.swap_remove(i);
                        self.blocks[b as usize].live = false;
                        self.resident -= 1;
                        gg.end = gg.end.max(ft);
                        if gg.next_block < gg.nblocks {
                            let id = gg.next_block;
                            gg.next_block += 1;
                            self.launch_block(gg, make, id, ft + gg.g.timing.block_replace_cycles as u64)?;
                        }
                    } else {
                        i += 1;
                    }
                }
            }
            if self.resident == 0 {
                self.idle = true;
                self.now = u64::MAX;
                return Ok(());
            }
            let mut issued = false;
            let mut next = u64::MAX;
            for s in 0..self.smsp.len() {
                let (did, nxt) = self.schedule(s, t, gg)?;
                issued |= did;
                next = next.min(nxt);
            }
            for &(ft, _) in &self.frees {
                next = next.min(ft);
            }
            if next == u64::MAX && !issued {
                // Nothing can ever issue: every live warp waits at a barrier.
                return Err(self.deadlock());
            }
            let to = if issued { t + 1 } else { next.max(t + 1) };
            self.active_cycles += to - t;
            self.now = to;
        }
        Ok(())
    }

    fn deadlock(&self) -> LaunchError {
        let b = self.blocks.iter().find(|b| b.live).expect("a resident block");
        LaunchError::Fault(Box::new(b.eng.deadlock()))
    }

    /// Whether warp `ws` can issue at `t`; otherwise the earliest time it might, and why not.
    #[inline]
    fn check(&self, s: usize, ws: u16, t: u64, gg: &Gpu<'a, W>) -> Result<(), (u64, Reason)> {
        let dec = gg.dec;
        let w = &self.warps[ws as usize];
        if w.state != WS::Ready {
            return Err((u64::MAX, Reason::Barrier));
        }
        if w.ready_at > t {
            return Err((w.ready_at, w.reason));
        }
        let ti = &dec.insts[w.next as usize];
        let sp = &self.smsp[s];
        if ti.pipe != PIPE_NONE && sp.pipe_free[ti.pipe as usize] > t {
            let alt = if ti.alt_pipe != PIPE_NONE { sp.pipe_free[ti.alt_pipe as usize] } else { u64::MAX };
            if alt > t {
                return Err((sp.pipe_free[ti.pipe as usize].min(alt), Reason::MathPipeThrottle));
            }
        }
        // Queues hold only entries that have not started (popped in `schedule`).
        match ti.queue {
            QUEUE_MIO if sp.mio_q.len() >= gg.g.timing.mio_queue_depth as usize => {
                Err((sp.mio_q.front().copied().unwrap_or(t + 1), Reason::MioThrottle))
            }
            QUEUE_LSU if sp.lsu_q.len() >= gg.g.timing.lsu_queue_depth as usize => {
                Err((sp.lsu_q.front().copied().unwrap_or(t + 1), Reason::LgThrottle))
            }
            _ => Ok(()),
        }
    }

    /// Sub-partition `s` at cycle `t`: issues one warp instruction if a warp
    /// can; returns whether it did and the earliest cycle it might next.
    fn schedule(&mut self, s: usize, t: u64, gg: &mut Gpu<'a, W>) -> Result<(bool, u64), LaunchError> {
        {
            let sp = &mut self.smsp[s];
            if sp.warps.is_empty() {
                return Ok((false, u64::MAX));
            }
            if sp.issue_free > t {
                return Ok((false, sp.issue_free));
            }
            while sp.mio_q.front().is_some_and(|&x| x <= t) {
                sp.mio_q.pop_front();
            }
            while sp.lsu_q.front().is_some_and(|&x| x <= t) {
                sp.lsu_q.pop_front();
            }
        }
        let nw = self.smsp[s].warps.len();
        let last = self.smsp[s].last;
        let start = match gg.g.timing.scheduler {
            SchedulerPolicy::Gto => {
                if last != NONE16 && self.check(s, last, t, gg).is_ok() {
                    return self.issue(s, last, t, gg).map(|_| (true, t + 1));
                }
                0
            }
            SchedulerPolicy::Lrr => self.smsp[s].warps.iter().position(|&x| x == last).map(|i| i + 1).unwrap_or(0),
        };
        let mut next = u64::MAX;
        let mut pick = NONE16;
        for k in 0..nw {
            let ws = self.smsp[s].warps[(start + k) % nw];
            match self.check(s, ws, t, gg) {
                Ok(()) => {
                    if pick == NONE16 {
                        pick = ws;
                    } else {
                        self.warps[ws as usize].blocked = Reason::NotSelected;
                    }
                }
                Err((at, why)) => {
                    next = next.min(at);
                    if self.warps[ws as usize].ready_at <= t {
                        self.warps[ws as usize].blocked = why;
                    }
                }
            }
        }
        if pick != NONE16 {
            self.issue(s, pick, t, gg)?;
            return Ok((true, t + 1));
        }
        Ok((false, next))
    }

    /// Stall cycles of warp `ws` up to `t`, by reason, also per pc.
    #[inline]
    fn account(&mut self, ws: usize, t: u64, gg: &mut Gpu<'a, W>) {
        let w = &mut self.warps[ws];
        if t <= w.acct {
            return;
        }
        let pc = w.next as usize;
        let split = w.ready_at.clamp(w.acct, t);
        if split > w.acct {
            let d = split - w.acct;
            gg.st.stall[w.reason as usize] += d;
            if let Some(p) = gg.st.pc_stall.get_mut(pc) {
                p[w.reason as usize] += d;
            }
        }
        if t > split {
            let d = t - split;
            gg.st.stall[w.blocked as usize] += d;
            if let Some(p) = gg.st.pc_stall.get_mut(pc) {
                p[w.blocked as usize] += d;
            }
        }
        w.acct = t;
    }

    /// Issues warp `ws`'s next instruction at `t`.
    fn issue(&mut self, s: usize, ws: u16, t: u64, gg: &mut Gpu<'a, W>) -> Result<(), LaunchError> {
        let dec = gg.dec;
        let wsu = ws as usize;
        self.account(wsu, t, gg);
        if !self.warps[wsu].executed {
            self.execute_region(wsu, t, gg)?;
        }
        let pc = self.warps[wsu].next;
        let ti = &dec.insts[pc as usize];
        let class = ti.class;
        let slots = ti.slots.max(1) as u64;
        // Issue bookkeeping.
        {
            let sp = &mut self.smsp[s];
            sp.issue_free = t + slots;
            sp.issue_cycles += slots;
            sp.last = ws;
            if gg.opts.timeline {
                let w = &self.warps[wsu];
                let gw = self.blocks[w.block as usize].eng.id() * gg.nwarps as u64 + w.widx as u64;
                match &mut sp.span {
                    Some(cur) if cur.warp == gw && cur.end_cycle + 1 == t => {
                        cur.end_cycle = t + slots - 1;
                        cur.instructions += 1;
                    }
                    cur => {
                        if let Some(old) = cur.take() {
                            if gg.st.spans.len() < gg.opts.timeline_limit {
                                gg.st.spans.push(old);
                            } else {
                                gg.st.spans_dropped = true;
                            }
                        }
                        *cur = Some(Span {
                            sm: self.id,
                            subpartition: s as u32,
                            warp: gw,
                            block: self.blocks[w.block as usize].eng.id(),
                            warp_in_block: w.widx as u32,
                            start_cycle: t,
                            end_cycle: t + slots - 1,
                            pc,
                            instructions: 1,
                        });
                    }
                }
            }
        }
        gg.st.sass_insts += slots;
        gg.st.stall[Reason::Selected as usize] += slots;
        gg.st.pc_issue[pc as usize] += slots;
        if let Some(p) = gg.st.pc_stall.get_mut(pc as usize) {
            p[Reason::Selected as usize] += slots;
        }
        self.warps[wsu].acct = t + slots;
        // When results are ready.
        let mut done = t + ti.latency as u64 + (slots - 1);
        let mut sb = ti.sb;
        let mut extra_ready = 0u64;
        let mut extra_reason = Reason::Wait;
        match class {
            Class::Math => {
                if ti.pipe != PIPE_NONE {
                    let sp = &mut self.smsp[s];
                    let p = if sp.pipe_free[ti.pipe as usize] > t && ti.alt_pipe != PIPE_NONE { ti.alt_pipe } else { ti.pipe };
                    sp.pipe_free[p as usize] = t + ti.occupancy as u64 * slots;
                }
            }
            Class::Mio => {}
            Class::Shfl => {
                let start = self.mio_free.max(t);
                let per = gg.g.timing.shared_wavefronts_per_cycle as u64;
                self.mio_free = start + 1u64.div_ceil(per);
                self.smsp[s].mio_q.push_back(start);
                done = start + ti.latency as u64;
            }
            Class::Mem => {
                // Every access the instruction made (an async copy reads and writes).
                done = t + 1;
                let (l2_before, dram_before) = (gg.st.l2_read_sectors + gg.st.l2_write_sectors, gg.st.dram_read_bytes);
                let mut shared_only = true;
                while let Some(i) = self.warps[wsu].caps.iter().position(|r| r.pc == pc) {
                    let rec = self.warps[wsu].caps.swap_remove(i);
                    shared_only &= rec.space == Space::Shared;
                    done = done.max(self.memory(s, wsu, pc, t, &rec, gg));
                }
                if ti.is_store {
                    sb = Sb::Fixed;
                } else if shared_only {
                    sb = Sb::Short;
                }
                if ti.is_async {
                    let w = &mut self.warps[wsu];
                    w.store_ack = w.store_ack.max(done);
                }
                gg.st.pc_l2[pc as usize] += gg.st.l2_read_sectors + gg.st.l2_write_sectors - l2_before;
                gg.st.pc_dram[pc as usize] += gg.st.dram_read_bytes - dram_before;
            }
            Class::Branch => {
                let (taken, not_taken) = self.warps[wsu].branch;
                if taken != 0 && (not_taken != 0 || gg.g.timing.branch_cycles > 0) {
                    extra_ready = t + gg.g.timing.branch_cycles as u64;
                    extra_reason = Reason::BranchResolving;
                }
            }
            Class::Fence => {
                extra_ready = self.warps[wsu].store_ack;
                extra_reason = Reason::Membar;
            }
            Class::Unknown => {
                self.smsp[s].pipe_free[crate::decode::PIPE_TENSOR as usize] = t + ti.occupancy as u64;
                self.warps[wsu].fence_until = done;
            }
            Class::Barrier | Class::Exit | Class::Free => {}
        }
        {
            let w = &mut self.warps[wsu];
            for &d in &ti.dsts {
                w.ready[d as usize] = done;
                w.kind[d as usize] = sb;
            }
            if ti.back_edge {
                w.loop_iter = w.loop_iter.wrapping_add(1);
            }
            w.pos += 1;
        }
        // A barrier or exit the engine reported takes effect when it issues.
        let last = self.warps[wsu].pos >= dec.regions[self.warps[wsu].region as usize].len;
        match (class, self.warps[wsu].stop) {
            (Class::Barrier, Stop::Barrier(a)) => {
                self.warps[wsu].stop = Stop::Yield;
                let bslot = self.warps[wsu].block as usize;
                let widx = self.warps[wsu].widx as usize;
                if a.wait {
                    self.warps[wsu].state = WS::Barrier;
                    self.warps[wsu].reason = Reason::Barrier;
                } else {
                    self.advance(gg, wsu, t)?;
                }
                {
                    let b = &mut self.blocks[bslot];
                    b.eng.arrive(widx, a, &mut b.obs);
                }
                // Released warps (this one too, if it completed the barrier) move on.
                return self.release(bslot, t, gg);
            }
            (_, Stop::Exited) if last => {
                return self.retire(s, wsu, t, gg);
            }
            _ => {}
        }
        self.advance(gg, wsu, t)?;
        let w = &mut self.warps[wsu];
        if w.state == WS::Ready {
            let floor = (t + slots).max(extra_ready);
            if w.ready_at < floor {
                w.ready_at = floor;
                w.reason = if extra_ready > t + slots { extra_reason } else { Reason::Wait };
            }
        }
        Ok(())
    }

    /// Runs the warp's current region in the engine at time `t` (in PTX
    /// order), capturing its memory accesses and its branch.
    fn execute_region(&mut self, wsu: usize, t: u64, gg: &mut Gpu<'a, W>) -> Result<(), LaunchError> {
        let dec = gg.dec;
        let w = &mut self.warps[wsu];
        let b = &mut self.blocks[w.block as usize];
        let widx = w.widx as usize;
        let len = dec.regions[w.region as usize].len;
        w.caps.clear();
        // clock64 reads the SM's cycle.
        b.eng.set_clock(t);
        let before = b.eng.stats().clone();
        let mut obs = (Cap { recs: &mut w.caps, branch: (0, 0) }, &mut b.obs);
        let r = b.eng.run_warp(widx, len, gg.mem, &mut obs);
        w.branch = obs.0.branch;
        gg.st.warp_insts += b.eng.stats().warp_instructions - before.warp_instructions;
        gg.st.thread_insts += b.eng.stats().thread_instructions - before.thread_instructions;
        w.executed = true;
        w.stop = r.map_err(|f| LaunchError::Fault(Box::new(f)))?;
        Ok(())
    }

    /// Warps of block `bslot` that the engine released from a barrier.
    fn release(&mut self, bslot: usize, t: u64, gg: &mut Gpu<'a, W>) -> Result<(), LaunchError> {
        let lat = gg.g.timing.barrier_latency as u64;
        let nw = self.blocks[bslot].slots.len();
        for wi in 0..nw {
            let ws = self.blocks[bslot].slots[wi] as usize;
            if self.warps[ws].live && self.warps[ws].state == WS::Barrier && self.blocks[bslot].eng.state(wi) == WarpState::Ready {
                let w = &mut self.warps[ws];
                w.state = WS::Ready;
                if w.ready_at < t + lat {
                    w.ready_at = t + lat;
                }
                w.reason = Reason::Barrier;
                self.advance(gg, ws, t)?;
            }
        }
        Ok(())
    }

    /// A warp exited: it drains its stores, leaves its sub-partition, and
    /// maybe completes barriers (fewer live threads) and its block.
    fn retire(&mut self, s: usize, wsu: usize, t: u64, gg: &mut Gpu<'a, W>) -> Result<(), LaunchError> {
        let done = (t + 1).max(self.warps[wsu].store_ack);
        {
            let w = &mut self.warps[wsu];
            w.state = WS::Done;
            w.live = false;
            if done > t + 1 {
                gg.st.stall[Reason::Drain as usize] += done - t - 1;
                if let Some(p) = gg.st.pc_stall.get_mut(w.next as usize) {
                    p[Reason::Drain as usize] += done - t - 1;
                }
            }
            self.warp_cycles += done - w.start;
        }
        let sp = &mut self.smsp[s];
        if let Some(i) = sp.warps.iter().position(|&x| x as usize == wsu) {
            sp.warps.remove(i);
        }
        if sp.last as usize == wsu {
            sp.last = NONE16;
        }
        let bslot = self.warps[wsu].block as usize;
        {
            let b = &mut self.blocks[bslot];
            b.end = b.end.max(done);
            b.remaining -= 1;
            b.eng.exited(&mut b.obs);
        }
        let b = &self.blocks[bslot];
        if b.remaining == 0 {
            self.frees.push((b.end, bslot as u16));
        }
        self.release(bslot, t, gg)
    }

    /// Moves the warp past the folded (and unrolled-away) instructions that
    /// follow, into the next region when this one is done, and finds when the
    /// next instruction that issues can.
    fn advance(&mut self, gg: &mut Gpu<'a, W>, wsu: usize, t: u64) -> Result<(), LaunchError> {
        let dec = gg.dec;
        loop {
            let (region, pos) = (self.warps[wsu].region as usize, self.warps[wsu].pos);
            if pos >= dec.regions[region].len {
                // Region done: the engine must have run it; follow control flow.
                if !self.warps[wsu].executed {
                    self.execute_region(wsu, t, gg)?;
                }
                if let Stop::Exited = self.warps[wsu].stop {
                    let s = self.warps[wsu].smsp as usize;
                    return self.retire(s, wsu, t, gg);
                }
                match self.next_region(wsu, gg) {
                    Some(r) => {
                        let w = &mut self.warps[wsu];
                        w.region = r;
                        w.pos = 0;
                        w.executed = false;
                        w.stop = Stop::Yield;
                        continue;
                    }
                    None => {
                        let s = self.warps[wsu].smsp as usize;
                        return self.retire(s, wsu, t, gg);
                    }
                }
            }
            let pc = dec.regions[region].order[pos as usize];
            let ti = &dec.insts[pc as usize];
            let w = &mut self.warps[wsu];
            let free = match ti.class {
                Class::Free => true,
                _ => match ti.loop_ctl {
                    Some(l) => {
                        if w.loop_pc != l {
                            w.loop_pc = l;
                            w.loop_iter = 0;
                        }
                        #[allow(clippy::manual_is_multiple_of)]
                        let skip = w.loop_iter % ti.unroll != 0;
                        skip
                    }
                    None => false,
                },
            };
            if !free {
                // The next instruction to issue: when its sources are ready.
                w.next = pc;
                let mut at = w.fence_until;
                let mut why = Reason::Wait;
                for &r in &ti.srcs {
                    let x = w.ready[r as usize];
                    if x > at {
                        at = x;
                        why = reason_of(w.kind[r as usize]);
                    }
                }
                if at > w.ready_at {
                    w.ready_at = at;
                    w.reason = why;
                }
                return Ok(());
            }
            // Folded: no issue slot, results ready with the sources.
            let mut at = 0u64;
            let mut kind = Sb::Fixed;
            if let Some(src_pc) = ti.alias_of {
                for &r in &dec.insts[src_pc as usize].dsts {
                    if w.ready[r as usize] > at {
                        at = w.ready[r as usize];
                        kind = w.kind[r as usize];
                    }
                }
            }
            for &r in &ti.srcs {
                if w.ready[r as usize] > at {
                    at = w.ready[r as usize];
                    kind = w.kind[r as usize];
                }
            }
            for &d in &ti.dsts {
                w.ready[d as usize] = at;
                w.kind[d as usize] = kind;
            }
            if ti.back_edge {
                w.loop_iter = w.loop_iter.wrapping_add(1);
            }
            w.pos += 1;
        }
    }

    /// The region the warp continues with after the engine ran the current
    /// one (`None` when every lane has exited).
    fn next_region(&mut self, wsu: usize, gg: &mut Gpu<'a, W>) -> Option<u32> {
        let w = &self.warps[wsu];
        let pc = self.blocks[w.block as usize].eng.next_pc(w.widx as usize, gg.mem)?;
        Some(gg.dec.region_at[pc as usize])
    }

    /// Timing of a memory instruction; returns when its results are ready.
    fn memory(&mut self, s: usize, wsu: usize, pc: u32, t: u64, cap: &MemRec, gg: &mut Gpu<'a, W>) -> u64 {
        let dec = gg.dec;
        let ti = &dec.insts[pc as usize];
        let bytes = cap.bytes.max(1);
        // Split lanes by state space.
        let (mut shared, mut local, mut global) = (0u64, 0u64, 0u64);
        match cap.space {
            Space::Shared => shared = cap.mask,
            Space::Local => local = cap.mask,
            Space::KernelParam => return t + 1,
            Space::Global | Space::Const => global = cap.mask,
            Space::Generic => {
                let mut m = cap.mask;
                while m != 0 {
                    let l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    let a = cap.addrs[l];
                    match generic_space(a) {
                        Space::Shared => shared |= 1 << l,
                        Space::Local => local |= 1 << l,
                        _ => global |= 1 << l,
                    }
                }
            }
        }
        let mut done = t + 1;
        let n = cap.n as usize;
        if shared != 0 {
            let mut a = [0u64; 64];
            for (i, x) in a.iter_mut().enumerate().take(n) {
                *x = if cap.space == Space::Generic { cap.addrs[i].wrapping_sub(SHARED_WINDOW) } else { cap.addrs[i] };
            }
            let c = warpsim_metrics::coalesce::shared_cost(&a[..n], shared, bytes);
            let mut wf = c.wavefronts.max(1) as u64;
            if ti.is_atomic {
                // Lanes on the same word serialise.
                wf = wf.max(same_address_degree(&a[..n], shared));
            }
            gg.st.shared_wavefronts += wf;
            let per = gg.g.timing.shared_wavefronts_per_cycle as u64;
            let start = self.mio_free.max(t);
            self.mio_free = start + wf.div_ceil(per);
            self.smsp[s].mio_q.push_back(start);
            let lat = if ti.is_atomic { gg.g.preset.latencies.shared_atomic as u64 + gg.lat_shared } else { gg.lat_shared };
            done = done.max(self.mio_free - 1 + lat);
        }
        if local != 0 || global != 0 {
            let mut sectors: [u64; 160] = [0; 160];
            let mut ns = 0usize;
            let mut push = |sectors: &mut [u64; 160], a: u64| {
                let last = a + bytes as u64 - 1;
                let mut x = a >> 5;
                while x <= last >> 5 && ns < 160 {
                    sectors[ns] = x;
                    ns += 1;
                    x += 1;
                }
            };
            let mut m = global;
            while m != 0 {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                push(&mut sectors, cap.addrs[l]);
            }
            if local != 0 {
                // Local memory: per-warp interleaved, in its own address range.
                let w = &self.warps[wsu];
                let gw = self.blocks[w.block as usize].eng.id() * gg.nwarps as u64 + w.widx as u64;
                let base = (1u64 << 62) + gw * (gg.kernel.local_bytes as u64).max(4) * W as u64;
                let mut m = local;
                while m != 0 {
                    let l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    let off = if cap.space == Space::Generic { cap.addrs[l].wrapping_sub(LOCAL_WINDOW) } else { cap.addrs[l] };
                    push(&mut sectors, base + (off / 4) * 4 * W as u64 + l as u64 * 4 + off % 4);
                }
            }
            let secs = &mut sectors[..ns];
            secs.sort_unstable();
            let mut k = 0;
            for i in 0..secs.len() {
                if i == 0 || secs[i] != secs[k - 1] {
                    secs[k] = secs[i];
                    k += 1;
                }
            }
            let secs = &secs[..k];
            let lines = if secs.is_empty() { 0 } else { 1 + secs.windows(2).filter(|w| w[0] >> 2 != w[1] >> 2).count() as u64 };
            let per = gg.g.timing.l1_lines_per_cycle as u64;
            let data_cycles = (k as u64 * 32).div_ceil(gg.g.preset.l1_bytes_per_cycle.max(1) as u64);
            let t1 = self.l1_free.max(t);
            self.l1_free = t1 + lines.div_ceil(per).max(data_cycles).max(1);
            self.smsp[s].lsu_q.push_back(t1);
            let half = gg.lat_l2 / 2;
            if ti.is_store {
                let mut ack = t1;
                for &sec in secs {
                    self.l1.invalidate(sec);
                    let arrive = self.port.book(t1, 32) + half;
                    let served = gg.l2_bw.book(arrive, 32);
                    gg.l2.write(sec, served);
                    gg.st.l2_write_sectors += 1;
                    ack = ack.max(served + half);
                }
                let w = &mut self.warps[wsu];
                w.store_ack = w.store_ack.max(ack);
                done = done.max(t + 1);
            } else {
                let mut ready = t1 + gg.lat_l1;
                let bypass = ti.bypass_l1 || ti.is_atomic;
                for (i, &sec) in secs.iter().enumerate() {
                    let issue = t1 + (i as u64) / 4;
                    gg.st.l1_sectors += 1;
                    let hit = if bypass {
                        None
                    } else {
                        match self.l1.access(sec) {
                            Lookup::Hit(r) => Some(r),
                            Lookup::Miss => None,
                        }
                    };
                    let r = match hit {
                        Some(r) => {
                            gg.st.l1_hits += 1;
                            r.max(issue + gg.lat_l1)
                        }
                        None => {
                            let r = self.l2_read(sec, issue, gg);
                            if !bypass {
                                self.l1.fill(sec, r);
                            }
                            r
                        }
                    };
                    ready = ready.max(r);
                }
                if ti.is_atomic {
                    // Lanes on the same address serialise at the L2.
                    let deg = same_address_degree(&cap.addrs[..n], global | local);
                    ready += deg.saturating_sub(1) * 2;
                    let w = &mut self.warps[wsu];
                    w.store_ack = w.store_ack.max(ready);
                    gg.st.l2_write_sectors += k as u64;
                }
                done = done.max(ready);
            }
        }
        done
    }

    /// A sector read from the L2 leaving the L1 at `t`; returns when its data is back.
    fn l2_read(&mut self, sec: u64, t: u64, gg: &mut Gpu<'a, W>) -> u64 {
        let half = gg.lat_l2 / 2;
        let at_l2 = t + half;
        gg.st.l2_read_sectors += 1;
        let have = match gg.l2.access(sec) {
            Lookup::Hit(r) => {
                gg.st.l2_read_hits += 1;
                r.max(at_l2)
            }
            Lookup::Miss => {
                let fetch = gg.g.timing.dram_fetch_bytes as u64;
                let per = (fetch / 32).max(1);
                let first = sec - sec % per;
                let served = gg.dram.book(at_l2, fetch);
                let r = served + gg.lat_dram.saturating_sub(gg.lat_l2);
                gg.st.dram_read_bytes += fetch;
                gg.l2.fill(sec, r);
                for x in first..first + per {
                    if x != sec {
                        gg.l2.fill(x, r);
                    }
                }
                r
            }
        };
        let out = gg.l2_bw.book(have, 32);
        let port = self.port.book(out, 32);
        port + half
    }
}

/// The most active lanes addressing one location.
fn same_address_degree(addrs: &[u64], mask: u64) -> u64 {
    let mut v: Vec<u64> = (0..addrs.len()).filter(|&l| mask >> l & 1 != 0).map(|l| addrs[l]).collect();
    v.sort_unstable();
    let mut best = 0;
    let mut run = 0;
    for i in 0..v.len() {
        run = if i > 0 && v[i] == v[i - 1] { run + 1 } else { 1 };
        best = best.max(run);
    }
    best as u64
}
