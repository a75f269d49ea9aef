//! One thread block in execution: its warps, barriers, shared and local
//! memory, instruction budget and clock, behind a stepping API.
//!
//! Block semantics (warp start-up, barrier arrival and completion, deadlock
//! detection, fault places) live here once; schedulers only decide which
//! warp goes next. The functional launcher ([`crate::launch`]) runs warps
//! round-robin with [`Block::run_warp`]; the timing model issues them cycle
//! by cycle and applies a barrier arrival ([`Block::arrive`]) or an exit
//! ([`Block::exited`]) when the instruction issues in its own time.

use crate::exec::{StackEntry, Warp, WarpCtx, WarpFault};
use crate::fault::{FaultKind, KernelFault};
use crate::launch::{LaunchConfig, LaunchStats};
use crate::memory::GlobalMemory;
use crate::observer::{NoObserver, Observer};
use crate::schedule::{SchedulePolicy, Simt};
use crate::spare::Spare;
use warpsim_ir::entry_reads::EntryReads;
use warpsim_ir::{BarRed, Kernel, RegRef, Special};

pub use crate::exec::{BarrierArrival, Stop, WarpState};

/// Named barriers per block (`bar.sync 0..15`).
const BARRIERS: usize = 16;

/// Register contents shared by every warp at start: constants and symbol addresses.
pub struct RegisterTemplate<const W: usize> {
    r32: Vec<u32>,
    r64: Vec<u64>,
}

impl<const W: usize> RegisterTemplate<W> {
    /// `symbols`: register slot and address of each `.global` variable the kernel names.
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

/// What one [`Block::step`] did.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Issued the instruction at `pc`; the warp can issue again.
    Issued { pc: u32 },
    /// Issued the barrier instruction at `pc`. The arrival takes effect at
    /// [`Block::arrive`]; with `arrival.wait` the warp then waits for the barrier.
    Barrier { pc: u32, arrival: BarrierArrival },
    /// Every lane has exited, after issuing the instruction at `pc` if one issued.
    /// Barriers may now complete with fewer threads: call [`Block::exited`].
    Exited { pc: Option<u32> },
    /// Nothing issued: the warp waits at `barrier` (`None`: its arrival is still pending).
    Waiting { barrier: Option<u32> },
    /// Nothing issued: the warp has exited.
    Done,
}

#[derive(Default, Clone)]
struct BarrierState {
    arrived: u32,
    /// Warps waiting, with the lanes that arrived and a pending bar.red destination.
    waiters: Vec<(usize, u64, Option<BarRed>)>,
    red_popc: u32,
    red_and: bool,
    red_or: bool,
    expected: Option<u32>,
    used: bool,
}

/// Warps of dropped blocks, for the blocks made next: a launch that makes
/// a block for each of an SM's slots (the cycle model) would otherwise
/// allocate, and fault in, every warp's register columns, stack and local
/// memory anew. Kept warps hold no values: their columns are emptied, so a
/// new block copies the whole register template into them as into a new
/// warp (nothing depends on what ran before). One list per warp width
/// (each a dropped block's `Vec<Warp<W>>`), of at most 32 MiB.
static SPARE_WARPS: [Spare<Box<dyn std::any::Any + Send>>; 2] = [Spare::new(32 << 20), Spare::new(32 << 20)];

/// The kept-warp list for warps of `W` lanes (32 or 64; none for others).
fn spare_warps<const W: usize>() -> Option<&'static Spare<Box<dyn std::any::Any + Send>>> {
    match W {
        32 => Some(&SPARE_WARPS[0]),
        64 => Some(&SPARE_WARPS[1]),
        _ => None,
    }
}

/// Bytes a warp's buffers hold.
fn warp_bytes<const W: usize>(w: &Warp<W>) -> usize {
    w.r32.capacity() * 4 + w.r64.capacity() * 8 + w.local.capacity() + w.preds.capacity() * 8
}

/// A dropped block's warps, if any are kept.
fn take_spare_warps<const W: usize>() -> Vec<Warp<W>> {
    spare_warps::<W>().and_then(Spare::take).and_then(|list| list.downcast::<Vec<Warp<W>>>().ok()).map(|b| *b).unwrap_or_default()
}

/// Keeps `warps` (emptied of values) for a later block, if there is room.
fn keep_spare_warps<const W: usize>(mut warps: Vec<Warp<W>>) {
    let Some(spare) = spare_warps::<W>().filter(|_| !warps.is_empty()) else { return };
    for w in warps.iter_mut() {
        w.r32.clear();
        w.r64.clear();
        w.local.clear();
        w.past_end.clear();
        w.printed.clear();
        w.calls.clear();
    }
    let bytes = warps.iter().map(warp_bytes).sum();
    // No room: they are freed.
    let _ = spare.keep(Box::new(warps), bytes);
}

/// One block of a launch; reused from block to block (`begin`) to keep its buffers.
pub struct Block<'a, const W: usize> {
    kernel: &'a Kernel,
    cfg: &'a LaunchConfig,
    template: &'a RegisterTemplate<W>,
    params: &'a [u8],
    id: u64,
    ctaid: [u32; 3],
    nthreads: u32,
    warps: Vec<Warp<W>>,
    barriers: Vec<BarrierState>,
    /// Whether some warp arrived at a barrier since `begin`: until one does, every barrier is
    /// in its default state, so neither `begin` nor a warp's exit has any to look at.
    arrivals: bool,
    shared: Vec<u8>,
    clock: u64,
    budget: u64,
    stats: LaunchStats,
    /// Local memory bytes per lane (see [`WarpCtx::local_bytes`]).
    local_bytes: u32,
    /// Warps (bit `w`) whose register columns `begin` left for their first run to set
    /// ([`Block::init_registers`]): a cycle model starts many blocks' warps long before
    /// each runs, and registers written then would have left the host's caches by then.
    registers_pending: u64,
    /// Kept warps ([`SPARE_WARPS`]) that `begin` takes before making new ones.
    spare: Vec<Warp<W>>,
}

/// The block's warps go back to [`SPARE_WARPS`] for the next block made.
impl<const W: usize> Drop for Block<'_, W> {
    fn drop(&mut self) {
        let mut warps = std::mem::take(&mut self.warps);
        warps.append(&mut self.spare);
        keep_spare_warps(warps);
    }
}

impl<'a, const W: usize> Block<'a, W> {
    /// A block of `kernel` launched as `cfg` says with parameter bytes `params`; [`Block::begin`] starts it.
    pub fn new(kernel: &'a Kernel, cfg: &'a LaunchConfig, template: &'a RegisterTemplate<W>, params: &'a [u8]) -> Self {
        let nthreads = cfg.block.iter().product();
        Block {
            kernel,
            cfg,
            template,
            params,
            id: 0,
            ctaid: [0; 3],
            nthreads,
            warps: Vec::new(),
            barriers: vec![BarrierState::default(); BARRIERS],
            arrivals: false,
            shared: Vec::new(),
            clock: 0,
            budget: 0,
            stats: LaunchStats::default(),
            // Called functions' frames take up to the stack size past the kernel's own.
            local_bytes: kernel.local_bytes.saturating_add(if kernel.functions.is_empty() { 0 } else { cfg.stack_size }),
            registers_pending: 0,
            spare: take_spare_warps::<W>(),
        }
    }

    /// Starts block `id` (linear index): fresh warps, barriers, shared memory
    /// and budget; the clock at the functional engine's per-SM offset.
    pub fn begin<O: Observer>(&mut self, id: u64, obs: &mut O) {
        let cfg = self.cfg;
        let nwarps = self.nthreads.div_ceil(W as u32) as usize;
        self.id = id;
        self.ctaid = block_coords(id, cfg.grid);
        self.warps.truncate(nwarps);
        while self.warps.len() < nwarps {
            if let Some(w) = self.spare.pop() {
                self.warps.push(w);
                continue;
            }
            self.warps.push(Warp::<W> {
                index: 0,
                r32: Vec::new(),
                r64: Vec::new(),
                preds: Vec::new(),
                stack: Vec::new(),
                present: 0,
                exited: 0,
                local: Vec::new(),
                state: WarpState::Done,
                past_end: Vec::new(),
                printed: String::new(),
                calls: Vec::new(),
            });
        }
        for w in 0..nwarps {
            self.init_warp(w as u32);
        }
        // (A block has at most 32 warps; any past 64 would start their registers now.)
        self.registers_pending = if nwarps >= 64 { u64::MAX } else { (1 << nwarps) - 1 };
        for w in 64..nwarps {
            self.init_registers(w as u32);
        }
        obs.block_begin(id, nwarps as u32);
        let k = self.kernel;
        self.shared.clear();
        self.shared.resize((k.dynamic_shared_offset + cfg.dynamic_shared_bytes).max(k.shared_static_bytes) as usize, 0);
        if std::mem::take(&mut self.arrivals) {
            self.barriers.fill(BarrierState::default());
        }
        self.clock = (id / cfg.num_sms.max(1) as u64) * 1_000_000;
        self.budget = cfg.max_warp_instructions_per_block;
        self.stats = LaunchStats { blocks: 1, warps: nwarps as u64, ..Default::default() };
    }

    /// The block's linear index.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The block's coordinates in the grid (`%ctaid`).
    pub fn ctaid(&self) -> [u32; 3] {
        self.ctaid
    }

    pub fn warp_count(&self) -> usize {
        self.warps.len()
    }

    /// Warps, warp and thread instructions executed so far.
    pub fn stats(&self) -> &LaunchStats {
        &self.stats
    }

    /// Moves the block's device `printf` output and served past-end accesses
    /// into `into`, as a cycle model that runs warps region by region
    /// collects them (a no-op when there are none).
    pub fn drain_output(&mut self, into: &mut LaunchStats) {
        if !self.stats.printf.is_empty() {
            into.printf.push_str(&std::mem::take(&mut self.stats.printf));
        }
        if self.stats.past_end_count > 0 {
            into.past_end_count += std::mem::take(&mut self.stats.past_end_count);
            let room = crate::launch::MAX_PAST_END_KEPT.saturating_sub(into.past_end.len());
            into.past_end.extend(std::mem::take(&mut self.stats.past_end).into_iter().take(room));
        }
    }

    pub fn state(&self, w: usize) -> WarpState {
        self.warps[w].state
    }

    /// Whether every warp has exited.
    pub fn all_done(&self) -> bool {
        self.warps.iter().all(|w| w.state == WarpState::Done)
    }

    /// What `clock`/`clock64` read next (each warp instruction ticks it once).
    pub fn clock(&self) -> u64 {
        self.clock
    }

    /// Sets the clock, as a cycle model does to the SM's cycle before an issue.
    pub fn set_clock(&mut self, cycle: u64) {
        self.clock = cycle;
    }

    /// Runs warp `w` (which must be ready) until it exits, reaches a barrier
    /// or has issued `slice` instructions. A barrier's arrival is left to
    /// [`Block::arrive`], an exit's effect on barriers to [`Block::exited`].
    #[inline]
    pub fn run_warp<O: Observer>(&mut self, w: usize, slice: u32, mem: &GlobalMemory, obs: &mut O) -> Result<Stop, Box<KernelFault>> {
        self.run_warp_scheduled(w, slice, mem, obs, &mut Simt)
    }

    /// [`Block::run_warp`] with the warp's lane groups ordered by `sched`
    /// (independent thread scheduling; [`Simt`] is the SIMT stack's order).
    pub fn run_warp_scheduled<O: Observer, S: SchedulePolicy>(
        &mut self,
        w: usize,
        slice: u32,
        mem: &GlobalMemory,
        obs: &mut O,
        sched: &mut S,
    ) -> Result<Stop, Box<KernelFault>> {
        if self.registers_pending_for(w) {
            self.registers_pending &= !(1 << w);
            self.init_registers(w as u32);
        }
        let mut ctx = WarpCtx {
            kernel: self.kernel,
            gmem: mem,
            shared: &mut self.shared,
            params: self.params,
            clock: &mut self.clock,
            budget: &mut self.budget,
            budget_limit: self.cfg.max_warp_instructions_per_block,
            serve_past_end: self.cfg.serve_past_end,
            warp_instructions: &mut self.stats.warp_instructions,
            thread_instructions: &mut self.stats.thread_instructions,
            local_bytes: self.local_bytes,
            stack_size: self.cfg.stack_size,
        };
        let r = self.warps[w].run_scheduled(&mut ctx, obs, sched, slice);
        if !self.warps[w].past_end.is_empty() {
            self.keep_past_end(w);
        }
        if !self.warps[w].printed.is_empty() {
            let p = std::mem::take(&mut self.warps[w].printed);
            self.stats.printf.push_str(&p);
        }
        match r {
            Ok(s) => Ok(s),
            Err(f) => Err(Box::new(self.fault(w, f))),
        }
    }

    /// Moves warp `w`'s served past-end accesses into the block's stats, placed.
    #[cold]
    fn keep_past_end(&mut self, w: usize) {
        let list = std::mem::take(&mut self.warps[w].past_end);
        self.stats.past_end_count += list.len() as u64;
        let room = crate::launch::MAX_PAST_END_KEPT.saturating_sub(self.stats.past_end.len());
        for f in list.into_iter().take(room) {
            let placed = self.fault(w, f);
            self.stats.past_end.push(placed);
        }
    }

    /// Issues one instruction of warp `w` and says what it did or why it could not.
    pub fn step<O: Observer>(&mut self, w: usize, mem: &GlobalMemory, obs: &mut O) -> Result<Step, Box<KernelFault>> {
        match self.warps[w].state {
            WarpState::Done => return Ok(Step::Done),
            WarpState::AtBarrier => {
                let barrier = self.barriers.iter().position(|b| b.waiters.iter().any(|x| x.0 == w)).map(|b| b as u32);
                return Ok(Step::Waiting { barrier });
            }
            WarpState::Ready => {}
        }
        let mut track = (IssuedPc(None), obs);
        let stop = self.run_warp(w, 1, mem, &mut track)?;
        let pc = track.0 .0;
        Ok(match (stop, pc) {
            (Stop::Exited, pc) => Step::Exited { pc },
            (Stop::Barrier(arrival), Some(pc)) => Step::Barrier { pc, arrival },
            (Stop::Yield, Some(pc)) => Step::Issued { pc },
            // A stop without an instruction cannot happen; report the warp's state.
            (Stop::Barrier(_) | Stop::Yield, None) => Step::Waiting { barrier: None },
        })
    }

    /// Warp `w`'s registers are still to be set (at its first run).
    #[inline(always)]
    fn registers_pending_for(&self, w: usize) -> bool {
        w < 64 && self.registers_pending >> w & 1 != 0
    }

    /// The pc warp `w` issues next, after popping the SIMT stack entries that
    /// are done and retiring lanes that ran off the end; `None` once every lane has exited.
    pub fn next_pc(&mut self, w: usize, mem: &GlobalMemory) -> Option<u32> {
        // Nothing to settle: the stack top has lanes, is not at its
        // reconvergence point and is inside the code (what the run loop
        // tests before it would run an instruction).
        if let Some(t) = self.warps[w].stack.last() {
            if !t.is_done() && (t.pc as usize) < self.kernel.code.len() && !self.registers_pending_for(w) {
                return Some(t.pc);
            }
        }
        // A zero-instruction slice does exactly that settling.
        let _ = self.run_warp(w, 0, mem, &mut NoObserver);
        self.warps[w].stack.last().map(|e| e.pc)
    }

    /// Warp `w`'s barrier arrival takes effect; the barrier completes (and
    /// releases its waiters) when every expected thread has arrived.
    pub fn arrive<O: Observer>(&mut self, w: usize, a: BarrierArrival, obs: &mut O) {
        let id = a.id as usize;
        self.arrivals = true;
        let bar = &mut self.barriers[id];
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
            bar.waiters.push((w, a.exec, Some(r)));
        } else if a.wait {
            bar.waiters.push((w, a.exec, None));
        }
        self.complete_barrier(id);
        if !self.barriers[id].used {
            obs.barrier_complete(a.id);
        }
    }

    /// A warp exited: barriers expecting every live thread may now complete.
    pub fn exited<O: Observer>(&mut self, obs: &mut O) {
        if !self.arrivals {
            return;
        }
        for id in 0..self.barriers.len() {
            if self.barriers[id].used {
                self.complete_barrier(id);
                if !self.barriers[id].used {
                    obs.barrier_complete(id as u32);
                }
            }
        }
    }

    /// The fault for a block where no warp can go on: the first barrier
    /// waited at, who arrived, and where the others are held.
    pub fn deadlock(&self) -> KernelFault {
        let (kernel, warps, barriers) = (self.kernel, &self.warps, &self.barriers);
        let (id, bar) = barriers.iter().enumerate().find(|(_, b)| b.used && b.arrived > 0).unwrap_or((0, &barriers[0]));
        let expected = bar.expected.unwrap_or_else(|| self.live_threads());
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
                    "barrier {id} expects {expected} of the block's {} threads, {} arrived; arrived: {}; not arrived: {}",
                    self.nthreads,
                    bar.arrived,
                    if waiting.is_empty() { "none".into() } else { waiting.join(", ") },
                    if elsewhere.is_empty() { "none".into() } else { elsewhere.join(", ") },
                ),
            },
            block: self.ctaid,
            thread: None,
            warp: 0,
            lane: None,
            pc,
            ptx_line: info.ptx_line,
            opcode: info.opcode.clone(),
            source: info.loc.map(|l| format!("file {} line {}", l.file, l.line)),
            ran: None,
        }
    }

    fn fault(&self, w: usize, f: WarpFault) -> KernelFault {
        let info = &self.kernel.info[(f.pc as usize).min(self.kernel.info.len() - 1)];
        KernelFault {
            kind: f.kind,
            block: self.ctaid,
            thread: f.lane.map(|l| thread_coords(w as u32 * W as u32 + l, self.cfg.block)),
            warp: w as u32,
            lane: f.lane,
            pc: f.pc,
            ptx_line: info.ptx_line,
            opcode: info.opcode.clone(),
            source: info.loc.map(|l| format!("file {} line {}", l.file, l.line)),
            ran: None,
        }
    }

    fn live_threads(&self) -> u32 {
        self.warps.iter().map(|w| (w.present & !w.exited).count_ones()).sum()
    }

    fn complete_barrier(&mut self, id: usize) {
        let live = self.live_threads();
        let bar = &mut self.barriers[id];
        if !bar.used || bar.arrived == 0 {
            return;
        }
        if bar.arrived < bar.expected.unwrap_or(live) {
            return;
        }
        let (popc, all, any) = (bar.red_popc, bar.red_and, bar.red_or);
        for (wi, exec, red) in std::mem::take(&mut bar.waiters) {
            let w = &mut self.warps[wi];
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

    /// Warp `w`'s lanes, SIMT stack and state, as `begin` starts it (its
    /// registers wait for [`Block::init_registers`]).
    fn init_warp(&mut self, w: u32) {
        let kernel = self.kernel;
        let warp = &mut self.warps[w as usize];
        let first = w * W as u32;
        let lanes = (self.nthreads - first).min(W as u32);
        let present = if lanes as usize >= 64 { u64::MAX } else { (1u64 << lanes) - 1 };
        warp.index = w;
        warp.preds.clear();
        warp.preds.resize(kernel.npred as usize, 0);
        warp.stack.clear();
        warp.stack.push(StackEntry { pc: 0, mask: present, rpc: warpsim_ir::cfg::NO_RECONV });
        warp.present = present;
        warp.exited = 0;
        warp.local.clear();
        warp.calls.clear();
        warp.state = WarpState::Ready;
    }

    /// Warp `w`'s register columns at the start: the template's values, then the specials.
    /// Out of line: it runs once per warp per block, beside the run loop.
    #[cold]
    #[inline(never)]
    fn init_registers(&mut self, w: u32) {
        let (kernel, cfg, template) = (self.kernel, self.cfg, self.template);
        let (ctaid, block_linear) = (self.ctaid, self.id);
        let warp = &mut self.warps[w as usize];
        let first = w * W as u32;
        let lanes = (self.nthreads - first).min(W as u32);
        match &kernel.entry_reads {
            // A full warp slot that ran this kernel before: only registers some thread may read
            // before writing them start again (a partial warp's absent lanes are never written,
            // but another lane's `shfl` can read them, so it starts whole).
            EntryReads::Slots { r32, r64 }
                if lanes as usize == W && warp.r32.len() == template.r32.len() && warp.r64.len() == template.r64.len() =>
            {
                for &s in r32 {
                    let c = s as usize * W..(s as usize + 1) * W;
                    warp.r32[c.clone()].copy_from_slice(&template.r32[c]);
                }
                for &s in r64 {
                    let c = s as usize * W..(s as usize + 1) * W;
                    warp.r64[c.clone()].copy_from_slice(&template.r64[c]);
                }
            }
            _ => {
                warp.r32.clone_from(&template.r32);
                warp.r64.clone_from(&template.r64);
            }
        }
        let one_d = cfg.block[1] == 1 && cfg.block[2] == 1;
        for &(r, sp) in &kernel.specials {
            // One lane loop per kind of special, so that the loops hold no `match`.
            let uniform = match sp {
                Special::Tid(0) if one_d => {
                    write_lanes::<W>(warp, r, |lane| (first + lane) as u64);
                    continue;
                }
                Special::Tid(_) if one_d => 0,
                Special::Tid(d) => {
                    write_lanes::<W>(warp, r, |lane| thread_coords(first + lane, cfg.block)[d as usize] as u64);
                    continue;
                }
                Special::LaneId => {
                    write_lanes::<W>(warp, r, |lane| lane as u64);
                    continue;
                }
                Special::LanemaskEq => {
                    write_lanes::<W>(warp, r, |lane| 1u64 << (lane & 31));
                    continue;
                }
                Special::LanemaskLe => {
                    write_lanes::<W>(warp, r, |lane| (2u64 << (lane & 31)) - 1);
                    continue;
                }
                Special::LanemaskLt => {
                    write_lanes::<W>(warp, r, |lane| (1u64 << (lane & 31)) - 1);
                    continue;
                }
                Special::LanemaskGe => {
                    write_lanes::<W>(warp, r, |lane| (0xFFFF_FFFFu64 << (lane & 31)) & 0xFFFF_FFFF);
                    continue;
                }
                Special::LanemaskGt => {
                    write_lanes::<W>(warp, r, |lane| (0xFFFF_FFFEu64 << (lane & 31)) & 0xFFFF_FFFF);
                    continue;
                }
                Special::Ntid(d) => cfg.block[d as usize] as u64,
                Special::Ctaid(d) => ctaid[d as usize] as u64,
                Special::Nctaid(d) => cfg.grid[d as usize] as u64,
                Special::WarpId => w as u64,
                Special::NWarpId => cfg.max_warps_per_sm as u64,
                Special::SmId => block_linear % cfg.num_sms.max(1) as u64,
                Special::NSmId => cfg.num_sms as u64,
                Special::WarpSize => W as u64,
                Special::GridId => 1,
                Special::DynamicSmemSize => cfg.dynamic_shared_bytes as u64,
                Special::TotalSmemSize => (kernel.dynamic_shared_offset + cfg.dynamic_shared_bytes) as u64,
            };
            write_lanes::<W>(warp, r, |_| uniform);
        }
    }
}

/// Block coordinates of linear block index `b`.
pub fn block_coords(b: u64, grid: [u32; 3]) -> [u32; 3] {
    let x = (b % grid[0] as u64) as u32;
    let y = ((b / grid[0] as u64) % grid[1] as u64) as u32;
    let z = (b / (grid[0] as u64 * grid[1] as u64)) as u32;
    [x, y, z]
}

/// Thread coordinates of linear thread index `t` within a block.
pub fn thread_coords(t: u32, block: [u32; 3]) -> [u32; 3] {
    [t % block[0], (t / block[0]) % block[1], t / (block[0] * block[1])]
}

/// Writes `value(lane)` to every lane of register `r` (one bounds check, then a loop that vectorises).
#[inline(always)]
fn write_lanes<const W: usize>(warp: &mut Warp<W>, r: RegRef, value: impl Fn(u32) -> u64) {
    let col = r.slot as usize * W..(r.slot as usize + 1) * W;
    match r.bank {
        warpsim_ir::Bank::R32 => {
            for (l, x) in warp.r32[col].iter_mut().enumerate() {
                *x = value(l as u32) as u32;
            }
        }
        warpsim_ir::Bank::R64 => {
            for (l, x) in warp.r64[col].iter_mut().enumerate() {
                *x = value(l as u32);
            }
        }
        warpsim_ir::Bank::Pred => {}
    }
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

/// Remembers the pc of the instruction a step issued.
struct IssuedPc(Option<u32>);

impl Observer for IssuedPc {
    #[inline(always)]
    fn instruction(&mut self, _warp: u32, pc: u32, _active: u64, _exec: u64) {
        self.0 = Some(pc);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = ".version 8.0\n.target sm_90\n.address_size 64\n";

    /// `body` as kernel `k(.param .u64 out)` of a `threads`-thread block.
    fn kernel(body: &str) -> warpsim_ir::Program {
        let src = format!(
            "{HEADER}.visible .entry k(.param .u64 out)\n{{\n    .reg .pred %p<2>; .reg .b32 %r<8>; .reg .b64 %rd<4>;\n{body}\n}}\n"
        );
        warpsim_ir::compile_kernel("t.ptx", &src, "k").unwrap_or_else(|e| panic!("{e}"))
    }

    fn cfg(threads: u32) -> LaunchConfig {
        LaunchConfig { block: [threads, 1, 1], ..Default::default() }
    }

    /// What a test block borrows: kernel `k` of `body`, its launch shape and parameter bytes.
    struct Fixture {
        prog: warpsim_ir::Program,
        cfg: LaunchConfig,
        params: Vec<u8>,
        template: RegisterTemplate<32>,
    }

    impl Fixture {
        fn new(body: &str, cfg: LaunchConfig, params: u64) -> Fixture {
            let prog = kernel(body);
            let template = RegisterTemplate::new(prog.kernel("k").unwrap(), &[]);
            Fixture { prog, cfg, params: params.to_le_bytes().to_vec(), template }
        }

        fn block(&self) -> Block<'_, 32> {
            Block::new(self.prog.kernel("k").unwrap(), &self.cfg, &self.template, &self.params)
        }
    }

    #[derive(Default)]
    struct Seen {
        begins: Vec<(u64, u32)>,
        completes: Vec<u32>,
    }
    impl Observer for Seen {
        fn block_begin(&mut self, block: u64, warps: u32) {
            self.begins.push((block, warps));
        }
        fn barrier_complete(&mut self, id: u32) {
            self.completes.push(id);
        }
    }

    const STORE_TID: &str = "    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r1;
    ret;";

    /// Memory with a 64-word `out`, its address, and [`STORE_TID`] in a 64-thread block.
    fn store_tid_64() -> (GlobalMemory, u64, Fixture) {
        let mut mem = GlobalMemory::new();
        let out = mem.alloc("out", 64 * 4, None);
        let fx = Fixture::new(STORE_TID, cfg(64), out);
        (mem, out, fx)
    }

    #[test]
    fn steps_one_instruction_at_a_time_and_exits() {
        let (mem, out, fx) = store_tid_64();
        let mut b = fx.block();
        let mut seen = Seen::default();
        b.begin(0, &mut seen);
        assert_eq!((b.warp_count(), &seen.begins[..]), (2, &[(0, 2)][..]));
        // Warp 1 first, then warp 0: any order the scheduler picks.
        for w in [1, 0] {
            let mut pcs = Vec::new();
            loop {
                match b.step(w, &mem, &mut seen).unwrap() {
                    Step::Issued { pc } => pcs.push(pc),
                    Step::Exited { pc } => {
                        pcs.extend(pc);
                        break;
                    }
                    s => panic!("unexpected {s:?}"),
                }
            }
            // Six instructions in order, `ret` last.
            assert_eq!(pcs, (0..6).collect::<Vec<_>>());
            assert_eq!(b.step(w, &mem, &mut seen).unwrap(), Step::Done);
        }
        assert!(b.all_done());
        assert_eq!(b.stats().warp_instructions, 12);
        let mut bytes = vec![0u8; 64 * 4];
        mem.read(out, &mut bytes).unwrap();
        assert_eq!(u32::from_le_bytes(bytes[63 * 4..].try_into().unwrap()), 63);
    }

    /// Runs every warp of `b` to its exit.
    fn run_to_exit(b: &mut Block<'_, 32>, mem: &GlobalMemory) {
        for w in 0..b.warp_count() {
            while !matches!(b.step(w, mem, &mut NoObserver).unwrap(), Step::Exited { .. } | Step::Done) {}
        }
    }

    #[test]
    fn a_dropped_blocks_warps_come_back_holding_no_values() {
        let (mem, out, fx) = store_tid_64();
        {
            let mut b = fx.block();
            b.begin(0, &mut NoObserver);
            run_to_exit(&mut b, &mem);
            assert!(b.warps.iter().all(|w| !w.r32.is_empty()));
        }
        // This block's warps or another test's: none holds a value.
        for _ in 0..4 {
            let kept = take_spare_warps::<32>();
            assert!(kept.iter().all(|w| w.r32.is_empty() && w.r64.is_empty() && w.local.is_empty() && w.calls.is_empty()));
            keep_spare_warps(kept);
        }
        // A block made from kept warps runs as a new one.
        mem.write(out, &[0xFF; 64 * 4]).unwrap();
        let mut b = fx.block();
        b.begin(1, &mut NoObserver);
        run_to_exit(&mut b, &mem);
        let mut bytes = vec![0u8; 64 * 4];
        mem.read(out, &mut bytes).unwrap();
        assert!(bytes.chunks(4).enumerate().all(|(i, c)| c == (i as u32).to_le_bytes()));
    }

    #[test]
    fn a_barrier_waits_until_every_warp_has_arrived() {
        let mem = GlobalMemory::new();
        let fx = Fixture::new("    bar.sync 0;\n    ret;", cfg(64), 0);
        let mut b = fx.block();
        let mut seen = Seen::default();
        b.begin(3, &mut seen);
        let Step::Barrier { pc: 0, arrival } = b.step(0, &mem, &mut seen).unwrap() else { panic!("no barrier") };
        assert!(arrival.wait && arrival.id == 0 && arrival.threads == 32);
        // Executed, not yet arrived: the model decides when the arrival counts.
        assert_eq!(b.step(0, &mem, &mut seen).unwrap(), Step::Waiting { barrier: None });
        b.arrive(0, arrival, &mut seen);
        assert_eq!(b.step(0, &mem, &mut seen).unwrap(), Step::Waiting { barrier: Some(0) });
        assert!(seen.completes.is_empty());
        let Step::Barrier { arrival, .. } = b.step(1, &mem, &mut seen).unwrap() else { panic!("no barrier") };
        b.arrive(1, arrival, &mut seen);
        assert_eq!(seen.completes, [0]);
        assert_eq!((b.state(0), b.state(1)), (WarpState::Ready, WarpState::Ready));
        assert_eq!(b.step(0, &mem, &mut seen).unwrap(), Step::Exited { pc: Some(1) });
    }

    #[test]
    fn an_exit_completes_a_barrier_the_exited_warp_never_reaches() {
        let mem = GlobalMemory::new();
        let fx = Fixture::new(
            "    mov.u32 %r1, %tid.x;
    setp.ge.u32 %p1, %r1, 32;
    @%p1 bra DONE;
    bar.sync 0;
DONE:
    ret;",
            cfg(64),
            0,
        );
        let mut b = fx.block();
        let mut seen = Seen::default();
        b.begin(0, &mut seen);
        let a = loop {
            if let Step::Barrier { arrival, .. } = b.step(0, &mem, &mut seen).unwrap() {
                break arrival;
            }
        };
        b.arrive(0, a, &mut seen);
        assert_eq!(b.state(0), WarpState::AtBarrier);
        assert_eq!(b.run_warp(1, 100, &mem, &mut seen).unwrap(), Stop::Exited);
        b.exited(&mut seen);
        assert_eq!((b.state(0), &seen.completes[..]), (WarpState::Ready, &[0][..]));
    }

    #[test]
    fn a_barrier_no_one_else_reaches_is_a_deadlock() {
        let mem = GlobalMemory::new();
        let fx = Fixture::new("    bar.sync 0, 64;\n    ret;", cfg(32), 0);
        let mut b = fx.block();
        b.begin(0, &mut NoObserver);
        let Step::Barrier { arrival, .. } = b.step(0, &mem, &mut NoObserver).unwrap() else { panic!("no barrier") };
        b.arrive(0, arrival, &mut NoObserver);
        assert_eq!(b.state(0), WarpState::AtBarrier);
        let f = b.deadlock();
        assert!(matches!(&f.kind, FaultKind::Deadlock { detail } if detail.contains("expects 64")), "{f}");
    }

    #[test]
    fn a_fault_names_its_block_and_thread() {
        let mem = GlobalMemory::new();
        let fx = Fixture::new(STORE_TID, LaunchConfig { grid: [4, 1, 1], ..cfg(32) }, 16); // no buffer there
        let mut b = fx.block();
        b.begin(2, &mut NoObserver);
        let f = b.run_warp(0, 100, &mem, &mut NoObserver).unwrap_err();
        assert!(matches!(f.kind, FaultKind::OutOfBounds { .. }), "{f}");
        assert_eq!((f.block, f.thread, f.warp), ([2, 0, 0], Some([0, 0, 0]), 0));
        // The faulting store ticked the clock too.
        assert_eq!(b.clock(), 5 + (2 / fx.cfg.num_sms as u64) * 1_000_000);
    }

    #[test]
    fn set_clock_is_what_clock64_reads() {
        let mut mem = GlobalMemory::new();
        let out = mem.alloc("out", 8, None);
        let fx = Fixture::new(
            "    ld.param.u64 %rd1, [out];
    mov.u64 %rd2, %clock64;
    st.global.u64 [%rd1], %rd2;
    ret;",
            cfg(1),
            out,
        );
        let mut b = fx.block();
        b.begin(0, &mut NoObserver);
        b.set_clock(1000);
        assert_eq!(b.run_warp(0, 10, &mem, &mut NoObserver).unwrap(), Stop::Exited);
        let mut v = [0u8; 8];
        mem.read(out, &mut v).unwrap();
        let c = u64::from_le_bytes(v);
        assert!((1000..1010).contains(&c), "{c}");
    }
    /// A warp slot that ran one block starts the next as a fresh one would:
    /// registers read before written (on some path, or by another lane's
    /// `shfl`) start from their initial values, not the last block's.
    #[test]
    fn a_reused_warp_slot_starts_like_a_fresh_one() {
        // Each kernel starts with %rd1 = out, %r1 = %tid.x, %r4 = %ctaid.x.
        let start = "    ld.param.u64 %rd1, [out];\n    mov.u32 %r1, %tid.x;\n    mov.u32 %r4, %ctaid.x;\n";
        let stale_paths = "    setp.ne.s32 %p1, %r4, 0;
    @%p1 bra SKIP;
    mov.u32 %r2, 99;
    mov.u32 %r3, 77;
SKIP:
    shfl.sync.idx.b32 %r5, %r3, 31, 31, -1;
    add.s32 %r6, %r2, %r5;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r6;
    ret;";
        // Every lane writes %r3 before reading it itself, but lanes 0-15 (first) read lane 31's.
        let other_lane = "    setp.ge.u32 %p1, %r1, 16;
    @%p1 bra LATE;
    mov.u32 %r3, 5;
    shfl.sync.idx.b32 %r5, %r3, 31, 31, 0x0000ffff;
    bra.uni DONE;
LATE:
    add.s32 %r3, %r4, 1000;
    shfl.sync.idx.b32 %r5, %r3, 31, 31, 0xffff0000;
DONE:
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r5;
    ret;";
        for body in [stale_paths, other_lane] {
            let run = |b: &mut Block<'_, 32>, id: u64, mem: &GlobalMemory| {
                b.begin(id, &mut NoObserver);
                while !b.all_done() {
                    for w in 0..b.warp_count() {
                        if b.state(w) != WarpState::Done {
                            b.run_warp(w, 1000, mem, &mut NoObserver).unwrap();
                        }
                    }
                }
            };
            let read = |mem: &GlobalMemory, out: u64| {
                let mut v = vec![0u8; 64 * 4];
                mem.read(out, &mut v).unwrap();
                v
            };
            let mut mem = GlobalMemory::new();
            let out = mem.alloc("out", 64 * 4, None);
            let fx = Fixture::new(&format!("{start}{body}"), LaunchConfig { grid: [2, 1, 1], ..cfg(64) }, out);
            let mut fresh = fx.block();
            run(&mut fresh, 1, &mem);
            let want = read(&mem, out);
            let mut reused = fx.block();
            run(&mut reused, 0, &mem);
            run(&mut reused, 1, &mem);
            assert_eq!(read(&mem, out), want, "{body}");
        }
    }

    /// A warp's registers start at its first run, from the block begun last
    /// (a cycle model may start a block and run its warps much later, in any order).
    #[test]
    fn registers_start_at_the_first_run_from_the_block_begun_last() {
        let body = "    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    mov.u32 %r4, %ctaid.x;
    mad.lo.s32 %r6, %r4, 1000, %r1;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r6;
    ret;";
        let mut mem = GlobalMemory::new();
        let out = mem.alloc("out", 64 * 4, None);
        let fx = Fixture::new(body, LaunchConfig { grid: [8, 1, 1], ..cfg(64) }, out);
        let mut b = fx.block();
        b.begin(5, &mut NoObserver);
        b.begin(3, &mut NoObserver);
        for w in [1, 0] {
            b.run_warp(w, 1000, &mem, &mut NoObserver).unwrap();
        }
        let mut v = vec![0u8; 64 * 4];
        mem.read(out, &mut v).unwrap();
        let got: Vec<u32> = v.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
        assert_eq!(got, (0..64).map(|t| 3000 + t).collect::<Vec<u32>>());
    }
}
