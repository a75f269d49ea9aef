//! Issue of one warp instruction: the warp's scoreboard (when each register
//! is ready, and whether a fixed-latency, short or long scoreboard holds
//! it), the pipes it occupies, stall accounting by reason, and the warp's
//! walk through the decoded regions. The engine executes a region when its
//! first instruction issues; barrier arrivals and exits take effect when
//! their own instruction issues.

use super::sched::{Smsp, NONE16};
use super::{Gpu, Sm};
use crate::decode::{Class, Region, Sb, TInst, PIPE_NONE, QUEUE_NONE};
use crate::report::{Reason, Span, NREASONS};
use warpsim_engine::block::{Stop, WarpState};
use warpsim_engine::{LaunchError, MemAccessKind, Observer};
use warpsim_ir::Space;

/// Issue and stall counters of the launch.
#[derive(Default)]
pub(super) struct IssueCounters {
    pub(super) stall: [u64; NREASONS],
    pub(super) pc_stall: Vec<[u64; NREASONS]>,
    pub(super) sass_insts: u64,
    pub(super) warp_insts: u64,
    pub(super) thread_insts: u64,
    pub(super) warps_launched: u64,
    pub(super) spans: Vec<Span>,
    pub(super) spans_dropped: bool,
}

impl IssueCounters {
    /// Adds `o`'s counts (not its spans: a launch with a timeline runs on one thread).
    pub(super) fn merge(&mut self, o: &IssueCounters) {
        for (a, b) in self.stall.iter_mut().zip(&o.stall) {
            *a += b;
        }
        for (a, b) in self.pc_stall.iter_mut().zip(&o.pc_stall) {
            for (x, y) in a.iter_mut().zip(b) {
                *x += y;
            }
        }
        self.sass_insts += o.sass_insts;
        self.warp_insts += o.warp_insts;
        self.thread_insts += o.thread_insts;
        self.warps_launched += o.warps_launched;
    }

    /// Counters for a kernel of `n` instructions.
    pub(super) fn new(n: usize) -> Self {
        IssueCounters { pc_stall: vec![[0; NREASONS]; n], ..Default::default() }
    }
}

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub(super) enum WS {
    Ready,
    Barrier,
    Done,
}

/// Timing state of a resident warp. The fields the scheduler reads every
/// cycle come first, in one cache line (`repr(C)` keeps the order), with the
/// next instruction's pipes and queue copied in, so a scan touches nothing else.
#[repr(C)]
pub(super) struct WarpT {
    pub(super) state: WS,
    /// Why it waits until `ready_at`.
    pub(super) reason: Reason,
    /// What held it back the last time it was ready but did not issue.
    pub(super) blocked: Reason,
    /// `pipe`, `alt_pipe` and `queue` of the instruction at `next`.
    pub(super) next_pipe: u8,
    pub(super) next_alt_pipe: u8,
    pub(super) next_queue: u8,
    /// Issuing `next` touches nothing outside the SM (see [`Sm::horizon`]).
    pub(super) next_local: bool,
    pub(super) live: bool,
    /// Kept for a block that a local phase saw replace a drained one (see [`Sm::free_reserving`]).
    pub(super) reserved: bool,
    pub(super) smsp: u8,
    /// Earliest issue of `next` as far as its own dependences go.
    pub(super) ready_at: u64,
    pub(super) next: u32,
    pub(super) block: u16,
    pub(super) widx: u16,
    /// Stall cycles are accounted up to here.
    pub(super) acct: u64,
    /// The first scan of its sub-partition in the current period (since its
    /// last issue, barrier release or start: status and `ready_at` fixed), see [`Sm::settle`].
    pub(super) seen_from: u64,
    pub(super) age: u64,
    pub(super) start: u64,
    pub(super) store_ack: u64,
    /// Results of an unknown instruction: nothing issues before this.
    pub(super) fence_until: u64,
    pub(super) loop_pc: u32,
    pub(super) loop_iter: u32,
    /// Per register: when its value is ready and from which scoreboard, as
    /// `ready << 2 | kind` (one load per source).
    pub(super) ready: Vec<u64>,
    /// The region being issued, the position in its order, and whether the
    /// engine has executed it yet.
    pub(super) region: u32,
    pub(super) pos: u32,
    pub(super) executed: bool,
    /// In a local phase: stores whose acknowledgement the in-order pass
    /// works out are outstanding (see `defer`).
    pub(super) ack_pending: bool,
    /// The engine reported the warp exited / at a barrier while executing the region.
    pub(super) stop: Stop,
    /// Memory accesses and the branch outcome captured while executing the
    /// region: one record per access, its lane addresses in `cap_addrs`.
    pub(super) caps: Vec<MemRec>,
    pub(super) cap_addrs: Vec<u64>,
    pub(super) branch: (u64, u64),
}

impl WarpT {
    pub(super) fn empty() -> Self {
        WarpT {
            live: false,
            reserved: false,
            block: 0,
            widx: 0,
            smsp: 0,
            age: 0,
            state: WS::Done,
            ready_at: 0,
            reason: Reason::NoInstruction,
            blocked: Reason::NotSelected,
            next: 0,
            next_pipe: PIPE_NONE,
            next_alt_pipe: PIPE_NONE,
            next_queue: QUEUE_NONE,
            next_local: false,
            acct: 0,
            seen_from: u64::MAX,
            start: 0,
            store_ack: 0,
            ack_pending: false,
            fence_until: 0,
            loop_pc: u32::MAX,
            loop_iter: 0,
            ready: Vec::new(),
            region: 0,
            pos: 0,
            executed: false,
            stop: Stop::Yield,
            caps: Vec::new(),
            cap_addrs: Vec::new(),
            branch: (0, 0),
        }
    }

    /// [`WarpT::empty`], keeping `w`'s buffers (emptied) for the warps it will hold.
    pub(super) fn emptied(w: WarpT) -> Self {
        let WarpT { mut ready, mut caps, mut cap_addrs, .. } = w;
        ready.clear();
        caps.clear();
        cap_addrs.clear();
        WarpT { ready, caps, cap_addrs, ..WarpT::empty() }
    }

    /// Moves past `ti` (issued or folded): its results are ready at `at`, from a `kind` unit.
    fn advance(&mut self, ti: &TInst, at: u64, kind: Sb) {
        self.advance_packed(ti, pack(at, kind));
    }

    /// [`WarpT::advance`] with the ready time and scoreboard packed.
    #[inline]
    fn advance_packed(&mut self, ti: &TInst, v: u64) {
        for &d in &ti.dsts {
            self.ready[d as usize] = v;
        }
        if ti.back_edge {
            self.loop_iter = self.loop_iter.wrapping_add(1);
        }
        self.pos += 1;
    }

    /// Starts warp `widx` of the block in slot `block` on sub-partition `smsp` at `at`, in region `region`;
    /// its warps have `lanes` lanes.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn start(&mut self, block: u16, widx: u16, smsp: u8, age: u64, at: u64, nregs: usize, region: u32, lanes: usize) {
        let w = self;
        w.live = true;
        w.block = block;
        w.widx = widx;
        w.smsp = smsp;
        w.age = age;
        w.state = WS::Ready;
        w.ready_at = at;
        w.reason = Reason::NoInstruction;
        w.blocked = Reason::NotSelected;
        w.acct = at;
        w.start = at;
        w.store_ack = 0;
        w.ack_pending = false;
        w.fence_until = 0;
        w.loop_pc = u32::MAX;
        w.loop_iter = 0;
        w.ready.clear();
        w.ready.resize(nregs, pack(0, Sb::Fixed));
        w.region = region;
        w.pos = 0;
        w.executed = false;
        w.stop = Stop::Yield;
        w.caps.clear();
        w.cap_addrs.clear();
        if w.cap_addrs.capacity() == 0 {
            // A slot's first warp: room for a few accesses at once, not a
            // vector grown access by access (small launches use each slot
            // once), but no more: an H200 launch has 8,448 slots to fill.
            w.caps.reserve(4);
            w.cap_addrs.reserve(2 * lanes);
        }
    }

    /// Not waiting at a barrier (nor retired).
    #[inline]
    pub(super) fn is_ready(&self) -> bool {
        self.state == WS::Ready
    }
}

/// Whether warp `w`'s next instruction `ti`, at `pos` in region `r`, may
/// issue in a local phase (see [`set_next`]).
#[inline(always)]
pub(super) fn next_is_local<const W: usize>(w: &WarpT, gg: &Gpu<'_, W>, r: &Region, ti: &TInst, pos: u32) -> bool {
    let d = gg.defer_stores;
    (ti.issue_local || (d && ti.deferrable_store))
        && (w.executed || r.local || (d && r.writes_global_only))
        && (pos + 1 < r.last_issuer || gg.dec.quiet_regions_local)
        && !(w.ack_pending && ti.class == Class::Fence)
}

/// One memory instruction's access, captured from the engine: its lanes'
/// addresses are `len` entries of the warp's address pool from `off` (the
/// first `n` the engine's, zeros up to the mask's highest lane).
#[derive(Clone, Copy)]
pub(super) struct MemRec {
    pub(super) pc: u32,
    pub(super) space: Space,
    pub(super) bytes: u32,
    pub(super) mask: u64,
    pub(super) n: u8,
    pub(super) len: u8,
    pub(super) off: u32,
}

impl MemRec {
    /// The record's lane addresses in `pool`.
    #[inline]
    pub(super) fn addrs<'p>(&self, pool: &'p [u64]) -> &'p [u64] {
        &pool[self.off as usize..self.off as usize + self.len as usize]
    }
}

/// The observer the engine reports a region's memory accesses and branch to.
struct Cap<'a> {
    recs: &'a mut Vec<MemRec>,
    pool: &'a mut Vec<u64>,
    branch: (u64, u64),
}

impl Observer for Cap<'_> {
    const WANTS_MEMORY: bool = true;
    #[inline]
    fn memory(&mut self, _warp: u32, pc: u32, space: Space, _kind: MemAccessKind, bytes: u32, addrs: &[u64], mask: u64) {
        let n = addrs.len().min(64);
        let len = n.max(64 - mask.leading_zeros() as usize);
        let off = self.pool.len();
        self.pool.extend_from_slice(&addrs[..n]);
        self.pool.resize(off + len, 0);
        self.recs.push(MemRec { pc, space, bytes, mask, n: n as u8, len: len as u8, off: off as u32 });
    }
    #[inline]
    fn branch(&mut self, _warp: u32, _pc: u32, taken: u64, not_taken: u64) {
        self.branch = (taken, not_taken);
    }
}

/// A register's ready time and scoreboard in one word (times saturate at 2^62).
#[inline]
fn pack(at: u64, kind: Sb) -> u64 {
    at.min(u64::MAX >> 2) << 2 | kind as u64
}

/// Why a warp waits on a register, by its packed scoreboard kind (`x & 3`:
/// fixed, short, long; 3 is not packed): one load, no branches.
const REASON_OF_KIND: [Reason; 4] = [Reason::Wait, Reason::ShortScoreboard, Reason::LongScoreboard, Reason::LongScoreboard];

/// Why a warp waits on a register whose packed ready time and scoreboard is `x`.
#[inline]
fn reason_of_packed(x: u64) -> Reason {
    REASON_OF_KIND[(x & 3) as usize]
}

/// Ends warp `w`'s current period at `t` and starts the next: its
/// `blocked` becomes what the last scan of its sub-partition `sp` in the
/// period said of it, if that scan saw it ready (a scan used to write it
/// for every ready warp it passed; only the last such write was ever
/// read). `issuing`: the warp issues now, picked by the scan at `t` if
/// there was one, which does not count.
#[inline]
pub(super) fn settle(w: &mut WarpT, sp: &Smsp, t: u64, issuing: bool) {
    let rec = if issuing && sp.scan().t == t { sp.prev_scan() } else { sp.scan() };
    if rec.seq >= w.seen_from && rec.t >= w.ready_at {
        w.blocked = if w.state == WS::Ready { rec.blocked(w.next_pipe, w.next_alt_pipe, w.next_queue) } else { Reason::Barrier };
    }
    w.seen_from = sp.scans + 1;
}

/// Stall cycles of warp `w` up to `t`, by reason, also per pc, and its
/// issue of `slots` cycles at `t` in its pc's `Selected` count (the launch
/// total is the issue-slot count): one look-up of the pc's row.
#[inline]
fn account_issue(w: &mut WarpT, t: u64, slots: u64, st: &mut IssueCounters) {
    let row = st.pc_stall.get_mut(w.next as usize);
    if t > w.acct {
        let split = w.ready_at.clamp(w.acct, t);
        let (d0, d1) = (split - w.acct, t - split);
        st.stall[w.reason as usize] += d0;
        st.stall[w.blocked as usize] += d1;
        if let Some(p) = row {
            p[w.reason as usize] += d0;
            p[w.blocked as usize] += d1;
            p[Reason::Selected as usize] += slots;
        }
    } else if let Some(p) = row {
        p[Reason::Selected as usize] += slots;
    }
    w.acct = t + slots;
}

/// Makes `ti` (at `pc`, position `pos` of region `r`) warp `w`'s next
/// instruction to issue: its pipes and queue, whether it is local, and when
/// its sources are ready (and, behind a `CALL` or `RET`, the branch has
/// resolved); lowers the SM's `horizon` in a local phase.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn set_next<const W: usize>(w: &mut WarpT, horizon: &mut u64, gg: &Gpu<'_, W>, r: &Region, ti: &TInst, pc: u32, pos: u32, t: u64) {
    w.next = pc;
    w.next_pipe = ti.pipe;
    w.next_alt_pipe = ti.alt_pipe;
    w.next_queue = ti.queue;
    // Local: the instruction itself, the region's run in the
    // engine (at the first issue), and what follows it (a warp
    // that may leave the region can start a quiet one, or exit).
    // With deferred stores (see `defer`): a plain `st.global` and a region
    // that only writes global memory too, but not a fence that needs a
    // pending acknowledgement.
    if gg.local {
        w.next_local = next_is_local(w, gg, r, ti, pos);
    }
    let mut at = w.fence_until;
    let mut why = Reason::Wait;
    if ti.call_edge {
        at = at.max(t + gg.timing.call_latency as u64);
        why = Reason::BranchResolving;
    }
    // The latest source (the first of equals) says why.
    let mut latest = 0u64;
    for &r in &ti.srcs {
        let x = w.ready[r as usize];
        if x >> 2 > at {
            at = x >> 2;
            latest = x;
        }
    }
    if latest != 0 {
        why = reason_of_packed(latest);
    }
    if at > w.ready_at {
        w.ready_at = at;
        w.reason = why;
    }
    if gg.local && !w.next_local {
        // It does not issue again in this cycle.
        *horizon = (*horizon).min(w.ready_at.max(t + 1));
    }
}

impl<'a, const W: usize, O: Observer> Sm<'a, W, O> {
    /// Issues warp `ws`'s next instruction at `t`.
    pub(super) fn issue(&mut self, s: usize, ws: u16, t: u64, gg: &mut Gpu<'a, W>) -> Result<(), LaunchError> {
        let dec = gg.dec;
        let wsu = ws as usize;
        let (pc, ti, slots, executed);
        {
            let (w, sp) = (&mut self.warps[wsu], &mut self.smsp[s]);
            pc = w.next;
            ti = &dec.insts[pc as usize];
            let call = if ti.call_edge { gg.timing.call_slots as u64 } else { 0 };
            slots = ti.slots.max(1) as u64 + call;
            sp.wake_now();
            settle(w, sp, t, true);
            account_issue(w, t, slots, &mut gg.st);
            // Issue bookkeeping (the launch's `Selected` stalls are its issue slots, filled in at the end).
            sp.issue_free = t + slots + if call > 0 { gg.timing.call_fetch_cycles as u64 } else { 0 };
            sp.issue_cycles += slots;
            sp.last = ws;
            executed = w.executed;
        }
        gg.st.sass_insts += slots;
        if !executed {
            self.execute_region(wsu, t, gg)?;
        }
        let class = ti.class;
        if gg.opts.timeline {
            self.timeline_span(s, wsu, t, slots, pc, gg);
        }
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
                let start = self.mem.shuffle(&mut self.smsp[s].q, &gg.memsys.spec, t);
                done = start + ti.latency as u64;
            }
            Class::Mem => (done, sb) = self.issue_memory(s, wsu, t, ti, pc, gg),
            Class::Branch => {
                let (taken, not_taken) = self.warps[wsu].branch;
                if taken != 0 && (not_taken != 0 || gg.timing.branch_cycles as u64 > 0) {
                    extra_ready = t + gg.timing.branch_cycles as u64;
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
        let w = &mut self.warps[wsu];
        w.advance(ti, done, sb);
        // A barrier or exit the engine reported takes effect when it issues.
        match (class, w.stop) {
            (Class::Barrier, Stop::Barrier(a)) => {
                w.stop = Stop::Yield;
                let bslot = w.block as usize;
                let widx = w.widx as usize;
                if a.wait {
                    w.state = WS::Barrier;
                    w.reason = Reason::Barrier;
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
            (_, Stop::Exited) if w.pos >= dec.regions[w.region as usize].len => {
                return self.retire(s, wsu, t, gg);
            }
            _ => {}
        }
        self.advance_issued(gg, wsu, t)?;
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

    /// Every access a memory instruction made (an async copy reads and
    /// writes): when its results are ready, and which scoreboard holds them.
    #[inline(never)]
    fn issue_memory(&mut self, s: usize, wsu: usize, t: u64, ti: &TInst, pc: u32, gg: &mut Gpu<'a, W>) -> (u64, Sb) {
        let mut done = t + 1;
        let mut sb = ti.sb;
        let (l2_before, dram_before) = (gg.memsys.st.l2_sectors(), gg.memsys.st.dram_read_bytes);
        let mut shared_only = true;
        let pool = std::mem::take(&mut self.warps[wsu].cap_addrs);
        while let Some(i) = self.warps[wsu].caps.iter().position(|r| r.pc == pc) {
            let rec = self.warps[wsu].caps.swap_remove(i);
            let at = if rec.space == Space::Shared {
                // (What `memory` does for a `.shared` access, without its split by space.)
                if rec.mask != 0 {
                    let a = &rec.addrs(&pool)[..rec.n as usize];
                    self.shared_memory(s, wsu, t, ti, pc, a, rec.mask, rec.bytes.max(1), gg)
                } else {
                    t + 1
                }
            } else {
                shared_only = false;
                self.memory(s, wsu, t, &rec, rec.addrs(&pool), gg)
            };
            done = done.max(at);
        }
        self.warps[wsu].cap_addrs = pool;
        if ti.is_store() {
            sb = Sb::Fixed;
        } else if shared_only {
            sb = Sb::Short;
        }
        if ti.is_async() {
            let w = &mut self.warps[wsu];
            w.store_ack = w.store_ack.max(done);
        }
        let ms = &mut gg.memsys.st;
        ms.pc_l2[pc as usize] += ms.l2_sectors() - l2_before;
        ms.pc_dram[pc as usize] += ms.dram_read_bytes - dram_before;
        (done, sb)
    }

    /// Extends or starts sub-partition `s`'s timeline span for warp `wsu` issuing `pc` at `t`.
    #[cold]
    #[inline(never)]
    fn timeline_span(&mut self, s: usize, wsu: usize, t: u64, slots: u64, pc: u32, gg: &mut Gpu<'a, W>) {
        let sp = &mut self.smsp[s];
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

    /// Runs the warp's current region in the engine at time `t` (in PTX
    /// order), capturing its memory accesses and its branch. Out of line:
    /// once per region, and `issue` keeps fewer registers live without it.
    #[inline(never)]
    fn execute_region(&mut self, wsu: usize, t: u64, gg: &mut Gpu<'a, W>) -> Result<(), LaunchError> {
        let dec = gg.dec;
        let w = &mut self.warps[wsu];
        let b = &mut self.blocks[w.block as usize];
        let widx = w.widx as usize;
        let len = dec.regions[w.region as usize].len;
        w.caps.clear();
        w.cap_addrs.clear();
        // clock64 reads the SM's cycle.
        b.eng.set_clock(t);
        let before = (b.eng.stats().warp_instructions, b.eng.stats().thread_instructions);
        let mut obs = (Cap { recs: &mut w.caps, pool: &mut w.cap_addrs, branch: (0, 0) }, &mut b.obs);
        // In a local phase, a region that writes global memory runs against the scratch copy (`defer`).
        let scratch = gg.scratch.as_deref().filter(|_| !dec.regions[w.region as usize].local);
        let r = b.eng.run_warp(widx, len, scratch.unwrap_or(gg.mem), &mut obs);
        w.branch = obs.0.branch;
        if let (Some(s), Ok(_)) = (scratch, &r) {
            for rec in w.caps.iter().filter(|c| dec.insts[c.pc as usize].deferrable_store) {
                self.deferred.read_back(s, rec.addrs(&w.cap_addrs), rec.mask, rec.bytes);
            }
        }
        gg.st.warp_insts += b.eng.stats().warp_instructions - before.0;
        gg.st.thread_insts += b.eng.stats().thread_instructions - before.1;
        // Past-end notes of a deferred region join the launch's in order, with its writes.
        b.eng.drain_output(if scratch.is_some() { &mut self.deferred.output } else { &mut gg.output });
        w.executed = true;
        w.stop = r.map_err(LaunchError::Fault)?;
        Ok(())
    }

    /// Warps of block `bslot` that the engine released from a barrier.
    fn release(&mut self, bslot: usize, t: u64, gg: &mut Gpu<'a, W>) -> Result<(), LaunchError> {
        let nw = self.blocks[bslot].slots.len();
        let lat = gg.timing.barrier_latency as u64 + (gg.timing.barrier_cycles_per_warp * nw as f64).round() as u64;
        for wi in 0..nw {
            let ws = self.blocks[bslot].slots[wi] as usize;
            if self.warps[ws].live && self.warps[ws].state == WS::Barrier && self.blocks[bslot].eng.state(wi) == WarpState::Ready {
                let w = &mut self.warps[ws];
                settle(w, &self.smsp[w.smsp as usize], t, false);
                w.state = WS::Ready;
                self.smsp[w.smsp as usize].wake_now();
                if w.ready_at < t + lat {
                    w.ready_at = t + lat;
                }
                w.reason = Reason::Barrier;
                self.advance(gg, ws, t)?;
            }
        }
        Ok(())
    }

    /// Warp slot `wsu`, retired at `t`, drains at `done` (its stores
    /// acknowledged): the wait counts as `Drain` stalls at its last pc, the
    /// warp was active until then, and its block ends no earlier.
    pub(super) fn drained(&mut self, wsu: usize, t: u64, done: u64, gg: &mut Gpu<'a, W>) {
        let w = &self.warps[wsu];
        if done > t + 1 {
            gg.st.stall[Reason::Drain as usize] += done - t - 1;
            if let Some(p) = gg.st.pc_stall.get_mut(w.next as usize) {
                p[Reason::Drain as usize] += done - t - 1;
            }
        }
        self.warp_cycles += done - w.start;
        let b = &mut self.blocks[w.block as usize];
        b.end = b.end.max(done);
    }

    /// A warp exited: it drains its stores, leaves its sub-partition, and
    /// maybe completes barriers (fewer live threads) and its block.
    fn retire(&mut self, s: usize, wsu: usize, t: u64, gg: &mut Gpu<'a, W>) -> Result<(), LaunchError> {
        let done = (t + 1).max(self.warps[wsu].store_ack);
        let w = &mut self.warps[wsu];
        w.state = WS::Done;
        w.live = false;
        let pending = w.ack_pending;
        if pending {
            // Its drain is worked out when its stores are acknowledged (`defer`).
            self.deferred.retire(wsu, t);
            let b = &mut self.blocks[w.block as usize];
            b.acks_pending += 1;
            // `store_ack` holds its pending stores' floors until the replay.
            b.end_floor = b.end_floor.max(done);
        } else {
            self.drained(wsu, t, done, gg);
        }
        let sp = &mut self.smsp[s];
        sp.wake_now();
        if let Some(i) = sp.warps.iter().position(|&x| x as usize == wsu) {
            sp.warps.remove(i);
        }
        if sp.last as usize == wsu {
            sp.last = NONE16;
        }
        let bslot = self.warps[wsu].block as usize;
        {
            let b = &mut self.blocks[bslot];
            b.remaining -= 1;
            b.eng.exited(&mut b.obs);
        }
        let b = &self.blocks[bslot];
        if b.remaining == 0 {
            if b.acks_pending > 0 {
                // Its end is known in the in-order pass, which fills it in;
                // nothing it does happens before its floor, which the
                // local phase runs up to (and `cycle` does not step over).
                self.frees.push((u64::MAX, bslot as u16));
                let floor = b.end.max(b.end_floor);
                self.deferred.floor = self.deferred.floor.min(floor);
                self.ack_floor = self.ack_floor.min(floor);
                self.stop_at = self.stop_at.min(floor);
                self.horizon = self.horizon.min(floor);
            } else {
                // Freed at `b.end`, in a local phase too (`free_reserving`).
                self.frees.push((b.end, bslot as u16));
            }
        }
        self.release(bslot, t, gg)
    }

    /// [`Sm::advance`] after an issue, inline while the warp stays in its
    /// region (the region's end, rarer, goes out of line).
    #[inline(always)]
    fn advance_issued(&mut self, gg: &mut Gpu<'a, W>, wsu: usize, t: u64) -> Result<(), LaunchError> {
        if self.advance_in_region(gg, wsu, t) {
            return Ok(());
        }
        self.advance(gg, wsu, t)
    }

    /// Moves the warp past the folded (and unrolled-away) instructions that
    /// follow, into the next region when this one is done, and finds when the
    /// next instruction that issues can.
    #[inline(never)]
    pub(super) fn advance(&mut self, gg: &mut Gpu<'a, W>, wsu: usize, t: u64) -> Result<(), LaunchError> {
        loop {
            if self.advance_in_region(gg, wsu, t) {
                return Ok(());
            }
            if !self.leave_region(gg, wsu, t)? {
                return Ok(());
            }
        }
    }

    /// [`Sm::advance`] within the warp's region: moves past folded and
    /// unrolled-away instructions to the next one that issues (`true`), or
    /// to the region's end (`false`).
    #[inline(always)]
    fn advance_in_region(&mut self, gg: &Gpu<'a, W>, wsu: usize, t: u64) -> bool {
        let dec = gg.dec;
        let w = &mut self.warps[wsu];
        let r = &dec.regions[w.region as usize];
        loop {
            let pos = w.pos;
            if pos >= r.len {
                return false;
            }
            let pc = r.order[pos as usize];
            let ti = &dec.insts[pc as usize];
            let free = match ti.class {
                Class::Free => true,
                _ => match ti.loop_ctl {
                    Some(l) => {
                        if w.loop_pc != l {
                            w.loop_pc = l;
                            w.loop_iter = 0;
                        }
                        // Unroll factors are small powers of two: no division.
                        let u = ti.unroll;
                        #[allow(clippy::manual_is_multiple_of)]
                        let skip = if u.is_power_of_two() { w.loop_iter & (u - 1) != 0 } else { w.loop_iter % u != 0 };
                        skip
                    }
                    None => false,
                },
            };
            if !free {
                set_next(w, &mut self.horizon, gg, r, ti, pc, pos, t);
                return true;
            }
            // Folded: no issue slot, results ready with the sources (the
            // latest packed time, the first of equals; none: 0, fixed).
            let mut v = 0u64;
            // A folded load's results are also those of the load it repeats.
            let alias = ti.alias_of.map_or(&[][..], |src_pc| &dec.insts[src_pc as usize].dsts[..]);
            for &r in alias.iter().chain(&ti.srcs) {
                let x = w.ready[r as usize];
                if x >> 2 > v >> 2 {
                    v = x;
                }
            }
            w.advance_packed(ti, v);
        }
    }

    /// The warp is past its region's last instruction: the engine must have
    /// run it; follow control flow into the next region (`true`) or retire
    /// the warp (`false`).
    #[inline(never)]
    fn leave_region(&mut self, gg: &mut Gpu<'a, W>, wsu: usize, t: u64) -> Result<bool, LaunchError> {
        if !self.warps[wsu].executed {
            self.execute_region(wsu, t, gg)?;
        }
        if let Stop::Exited = self.warps[wsu].stop {
            let s = self.warps[wsu].smsp as usize;
            self.retire(s, wsu, t, gg)?;
            return Ok(false);
        }
        match self.next_region(wsu, gg) {
            Some(r) => {
                let w = &mut self.warps[wsu];
                w.region = r;
                w.pos = 0;
                w.executed = false;
                w.stop = Stop::Yield;
                Ok(true)
            }
            None => {
                let s = self.warps[wsu].smsp as usize;
                self.retire(s, wsu, t, gg)?;
                Ok(false)
            }
        }
    }

    /// The region the warp continues with after the engine ran the current
    /// one (`None` when every lane has exited).
    fn next_region(&mut self, wsu: usize, gg: &mut Gpu<'a, W>) -> Option<u32> {
        let w = &self.warps[wsu];
        let pc = self.blocks[w.block as usize].eng.next_pc(w.widx as usize, gg.mem)?;
        Some(gg.dec.region_at[pc as usize])
    }
}
