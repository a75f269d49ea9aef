//! Global stores in local phases. A region whose only effect outside its
//! block is writing global memory with plain `st.global`s
//! ([`Region::writes_global_only`](crate::decode::Region)) runs in a local
//! phase against the worker's scratch copy of the memory (same
//! allocations, so the same faults; it reads no global or constant memory,
//! so it computes what it would against the real one); the bytes it wrote
//! are read back at once and logged. Its stores' L2 bookings are logged
//! too (sector and arrival), and the warp's store acknowledgement is
//! unknown (`ack_pending`) until the in-order pass. Each quantum's phase
//! keeps its own log. When the in-order pass reaches the SM in a quantum,
//! before anything else of the SM runs, [`Sm::replay_until`] applies the
//! writes of the logs of that quantum and earlier ones and books the L2 in
//! log order: every SM before it has finished the quantum and none after it
//! has started its in-order work, so memory and the L2 see the one-thread
//! model's sequence. Logs of later quanta (an SM that ran ahead) wait for
//! their own turns.
//!
//! What needs an acknowledgement waits: a fence is not local while its
//! warp's is pending; a warp that retires with one pending is logged and
//! its drain (stall counts, active cycles, its block's end) worked out in
//! the replay; a block whose last warp retires with a drain pending ends
//! the SM's local phase (its end decides when its slot frees) at its
//! floor: a store's sectors reach the L2 at their logged arrivals, so none
//! is acknowledged before its latest arrival plus half the L2 latency, and
//! until then nothing the block's end does can happen.

use super::issue::WS;
use super::{Gpu, Sm};
use warpsim_engine::launch::MAX_PAST_END_KEPT;
use warpsim_engine::{GlobalMemory, LaunchStats, Observer};

/// What an SM's local phase left for the in-order pass, in order.
pub(super) struct Deferred {
    /// Global memory written: (address, bytes, value), `bytes` 1, 2, 4 or 8.
    writes: Vec<(u64, u32, u64)>,
    /// Stores whose L2 booking waits: (warp slot, when the L1 passed them
    /// on, end of their sectors in `secs`).
    stores: Vec<(u16, u64, u32)>,
    /// (sector, arrival at the L2) of each store, in order.
    secs: Vec<(u64, u64)>,
    /// Warps that retired with their acknowledgement pending: (slot, time).
    retires: Vec<(u16, u64)>,
    /// Past-end stores the regions noted (the launch keeps the first few, in order).
    pub(super) output: LaunchStats,
    /// The end of the quantum whose local phase logged it: the pass replays
    /// it at the SM's turn in that quantum.
    pub(super) until: u64,
    /// The earliest floor of the drains its retires leave pending (`u64::MAX`: none).
    pub(super) floor: u64,
}

impl Default for Deferred {
    fn default() -> Self {
        Deferred {
            writes: Vec::new(),
            stores: Vec::new(),
            secs: Vec::new(),
            retires: Vec::new(),
            output: LaunchStats::default(),
            until: 0,
            floor: u64::MAX,
        }
    }
}

impl Deferred {
    pub(super) fn is_empty(&self) -> bool {
        self.writes.is_empty() && self.stores.is_empty() && self.retires.is_empty() && self.output.past_end_count == 0
    }

    /// A sector of the store being logged reaches the L2 at `arrive`.
    #[inline]
    pub(super) fn sector(&mut self, sec: u64, arrive: u64) {
        self.secs.push((sec, arrive));
    }

    /// The store whose sectors were just logged, by warp slot `w`, left the L1 at `t1`.
    pub(super) fn store(&mut self, w: usize, t1: u64) {
        self.stores.push((w as u16, t1, self.secs.len() as u32));
    }

    pub(super) fn retire(&mut self, w: usize, t: u64) {
        self.retires.push((w as u16, t));
    }

    /// Logs what a store of `bytes` per lane at `addrs` (lanes in `mask`)
    /// left in `scratch`, lane by lane in `bytes`' 8-byte (or smaller) pieces.
    pub(super) fn read_back(&mut self, scratch: &GlobalMemory, addrs: &[u64], mask: u64, bytes: u32) {
        let piece = bytes.clamp(1, 8);
        let mut m = mask;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            let Some(&a) = addrs.get(l) else { break };
            let mut off = 0;
            while off < bytes {
                let at = a + off as u64;
                // (Past an allocation's end but within its page: served.)
                if let Some(v) = scratch.load(at, piece).ok().or_else(|| scratch.load_past_end(at, piece)) {
                    self.writes.push((at, piece, v));
                }
                off += piece;
            }
        }
    }
}

impl<'a, const W: usize, O: Observer> Sm<'a, W, O> {
    /// Logs what follows for the local phase of the quantum that ends at
    /// `until`: the log of an earlier quantum is set aside for its own replay.
    pub(super) fn log_quantum(&mut self, until: u64) {
        if self.deferred.until == until {
            return;
        }
        if !self.deferred.is_empty() {
            let spare = self.spare_logs.pop().unwrap_or_default();
            let d = std::mem::replace(&mut self.deferred, spare);
            self.logged.push_back(d);
        }
        self.deferred.until = until;
    }

    /// Whether a local phase left anything for the pass to replay.
    pub(super) fn has_deferred(&self) -> bool {
        !self.logged.is_empty() || !self.deferred.is_empty()
    }

    /// The end of the earliest quantum whose log waits for its replay (`u64::MAX`: none).
    pub(super) fn deferred_until(&self) -> u64 {
        match self.logged.front() {
            Some(d) => d.until,
            None if !self.deferred.is_empty() => self.deferred.until,
            None => u64::MAX,
        }
    }

    /// Replays, in order, the logs of local phases of quanta that end by
    /// `end` (the pass is at this SM's turn in the quantum that ends at `end`).
    pub(super) fn replay_until(&mut self, end: u64, gg: &mut Gpu<'a, W>) {
        while self.logged.front().is_some_and(|d| d.until <= end) {
            let mut d = self.logged.pop_front().expect("a log");
            self.replay(&mut d, gg);
            self.spare_logs.push(d);
        }
        if self.deferred.until <= end && !self.deferred.is_empty() {
            let until = self.deferred.until;
            let mut d = std::mem::take(&mut self.deferred);
            self.replay(&mut d, gg);
            // (Keeps the log's buffers.)
            d.until = until;
            self.deferred = d;
        }
        // The floors of drains in logs still waiting stand.
        self.ack_floor = self.logged.iter().map(|d| d.floor).min().unwrap_or(u64::MAX).min(self.deferred.floor);
        self.stop_at = self.ack_floor.min(self.launch_floor);
    }

    /// Applies one local phase's log (see the module header) and empties
    /// it (its buffers kept), its floor included.
    fn replay(&mut self, d: &mut Deferred, gg: &mut Gpu<'a, W>) {
        for &(a, n, v) in &d.writes {
            // The scratch copy has the same allocations: this cannot fault.
            if gg.mem.store(a, n, v).is_err() {
                gg.mem.store_past_end(a, n, v);
            }
        }
        d.writes.clear();
        if d.output.past_end_count > 0 {
            let o = &mut d.output;
            gg.output.past_end_count += std::mem::take(&mut o.past_end_count);
            let room = MAX_PAST_END_KEPT.saturating_sub(gg.output.past_end.len());
            gg.output.past_end.extend(std::mem::take(&mut o.past_end).into_iter().take(room));
        }
        let half = gg.memsys.spec.lat_l2 / 2;
        let mut from = 0usize;
        for &(w, t1, end) in &d.stores {
            let mut ack = t1;
            for &(sec, arrive) in &d.secs[from..end as usize] {
                let served = gg.memsys.l2_bw.book(arrive, 32);
                gg.memsys.l2.write(sec, served);
                ack = ack.max(served + half);
            }
            from = end as usize;
            let w = &mut self.warps[w as usize];
            w.store_ack = w.store_ack.max(ack);
            w.ack_pending = false;
        }
        d.stores.clear();
        d.secs.clear();
        let mut retires = std::mem::take(&mut d.retires);
        for &(ws, t) in &retires {
            let w = &self.warps[ws as usize];
            debug_assert!(w.state == WS::Done);
            let (done, bslot) = ((t + 1).max(w.store_ack), w.block as usize);
            self.drained(ws as usize, t, done, gg);
            let b = &mut self.blocks[bslot];
            b.acks_pending -= 1;
            if b.remaining == 0 && b.acks_pending == 0 {
                if let Some(f) = self.frees.iter_mut().find(|f| f.1 as usize == bslot) {
                    f.0 = b.end;
                }
            }
        }
        retires.clear();
        d.retires = retires;
        d.floor = u64::MAX;
    }
}
