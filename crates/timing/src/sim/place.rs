//! SM placement and the block scheduler: the first wave goes round robin
//! over the SMs, as many blocks per SM as occupancy allows; afterwards a
//! block starts on an SM when one of its blocks has drained. Kept apart so
//! the placement policy can change without touching issue or memory timing.

use super::issue::WarpT;
use super::sched::Smsp;
use super::{Gpu, Sm};
use crate::mem::Cache;
use crate::report::Reason;
use warpsim_engine::block::Block;
use warpsim_engine::spare::Spare;
use warpsim_engine::{LaunchError, Observer};

/// The block scheduler: which block starts next.
pub(super) struct Placer {
    /// Blocks per SM (occupancy), and the L1 left by the shared-memory carve-out.
    pub(super) blocks_per_sm: u32,
    pub(super) l1_bytes: u64,
    /// An SM's warp slots and sub-partitions, made with its first block.
    pub(super) sm_shape: (u32, u32),
    pub(super) nblocks: u64,
    pub(super) next_block: u64,
}

impl Placer {
    pub(super) fn new(blocks_per_sm: u32, l1_bytes: u64, nblocks: u64, sm_shape: (u32, u32)) -> Self {
        Placer { blocks_per_sm, l1_bytes, sm_shape, nblocks, next_block: 0 }
    }

    /// The next block to start, if any is left.
    fn take(&mut self) -> Option<u64> {
        (self.next_block < self.nblocks).then(|| {
            self.next_block += 1;
            self.next_block - 1
        })
    }
}

/// A resident block: the engine's block, the observer that sees it (one per
/// slot, so the blocks an observer sees run one after another), its warps' slots.
pub(super) struct BlockT<'a, const W: usize, O> {
    pub(super) live: bool,
    pub(super) eng: Block<'a, W>,
    pub(super) obs: O,
    pub(super) slots: Vec<u16>,
    /// Warps not yet retired.
    pub(super) remaining: u32,
    /// When its last warp drains.
    pub(super) end: u64,
    /// Its warps that retired in a local phase with their drain not yet known (`defer`).
    pub(super) acks_pending: u32,
    /// The earliest those warps can drain (their acknowledgements' floors).
    pub(super) end_floor: u64,
    /// Kept for a block that a local phase saw replace a drained one (see [`Sm::free_reserving`]).
    pub(super) reserved: bool,
}

/// First wave: round robin over SMs, as many blocks per SM as fit.
pub(super) fn first_wave<'a, const W: usize, O: Observer>(
    sms: &mut [Sm<'a, W, O>],
    gg: &mut Gpu<'a, W>,
    make: &dyn Fn() -> O,
) -> Result<(), LaunchError> {
    for round in 0..gg.place.blocks_per_sm {
        for sm in sms.iter_mut() {
            if gg.place.next_block >= gg.place.nblocks {
                break;
            }
            if sm.blocks.is_empty() {
                // An SM's state is made only if a block runs there: a small
                // launch's SMs would otherwise be most of its time.
                let (warp_slots, smsps) = gg.place.sm_shape;
                sm.warps = spare_warp_slots(warp_slots as usize);
                sm.smsp = (0..smsps).map(|_| Smsp::new()).collect();
                sm.mem.l1 = Cache::reused(gg.place.l1_bytes, gg.timing.l1_ways);
            }
            let Some(id) = gg.place.take() else { break };
            let at = gg.timing.block_launch_cycles as u64 + round as u64 * gg.timing.block_dispatch_cycles as u64;
            sm.launch_block(gg, make, id, at)?;
        }
    }
    Ok(())
}

/// The warp slots of finished launches' SMs, for the next launch's SMs:
/// each slot's scoreboard and capture buffers keep their capacity (a
/// slot's first warp would otherwise allocate them). At most 16 MiB.
static SPARE_SLOTS: Spare<Vec<WarpT>> = Spare::new(16 << 20);

/// Bytes of an SM's warp slots' buffers.
fn slot_bytes(warps: &[WarpT]) -> usize {
    warps
        .iter()
        .map(|w| w.ready.capacity() * 8 + w.cap_addrs.capacity() * 8 + w.caps.capacity() * std::mem::size_of::<super::issue::MemRec>())
        .sum()
}

/// `n` empty warp slots, from a finished launch's SM if one is kept.
fn spare_warp_slots(n: usize) -> Vec<WarpT> {
    let mut warps: Vec<WarpT> = SPARE_SLOTS.take().unwrap_or_default().into_iter().take(n).map(WarpT::emptied).collect();
    warps.resize_with(n, WarpT::empty);
    warps
}

/// Keeps a finished launch's SM's warp slots for a later launch, if there is room.
pub(super) fn keep_warp_slots(warps: Vec<WarpT>) {
    if !warps.is_empty() {
        let bytes = slot_bytes(&warps);
        // No room: they are freed.
        let _ = SPARE_SLOTS.keep(warps, bytes);
    }
}

impl<'a, const W: usize, O: Observer> Sm<'a, W, O> {
    /// Places block `id` on this SM; its warps may issue from `at`.
    pub(super) fn launch_block(&mut self, gg: &mut Gpu<'a, W>, make: &dyn Fn() -> O, id: u64, at: u64) -> Result<(), LaunchError> {
        let bslot = match self.free_block_slot() {
            Some(i) => i,
            None => {
                self.blocks.push(BlockT {
                    live: false,
                    eng: Block::new(gg.kernel.for_engine(), gg.cfg, gg.template, gg.params),
                    obs: make(),
                    slots: Vec::new(),
                    remaining: 0,
                    end: 0,
                    acks_pending: 0,
                    end_floor: 0,
                    reserved: false,
                });
                self.blocks.len() - 1
            }
        };
        self.start_block(gg, id, at, bslot, None)
    }

    /// The first block slot neither in use nor kept.
    fn free_block_slot(&self) -> Option<usize> {
        self.blocks.iter().position(|b| !b.live && !b.reserved)
    }

    /// The first warp slot from `from` on neither in use nor kept.
    fn free_warp_slot(&self, mut from: usize) -> usize {
        while self.warps[from].live || self.warps[from].reserved {
            from += 1;
        }
        from
    }

    /// Starts block `id` in block slot `bslot`, its warps in the first free
    /// warp slots, or those kept in `launch_slots` from `kept`; they may issue from `at`.
    fn start_block(&mut self, gg: &mut Gpu<'a, W>, id: u64, at: u64, bslot: usize, kept: Option<usize>) -> Result<(), LaunchError> {
        let dec = gg.dec;
        if self.resident == 0 {
            // The SM becomes active now (its idle time before is not counted).
            self.now = self.now.max(at.saturating_sub(gg.timing.block_replace_cycles as u64));
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
            b.end_floor = at;
            b.eng.begin(id, &mut b.obs);
            b.slots.clear();
        }
        let nsmsp = self.smsp.len();
        let groups = nw.div_ceil(nsmsp.max(1));
        let mut slot = 0usize;
        for wi in 0..nw {
            // Warps start one group of sub-partition-many at a time, the last group first.
            let at = at + gg.timing.warp_launch_cycles as u64 * ((wi % nsmsp) + (groups - 1 - wi / nsmsp)) as u64;
            slot = match kept {
                Some(k) => self.launch_slots[k + wi] as usize,
                None => self.free_warp_slot(slot),
            };
            let region = dec.region_at.first().copied().unwrap_or(0);
            self.warps[slot].start(bslot as u16, wi as u16, (slot % nsmsp) as u8, self.age, at, nregs, region, W);
            self.age += 1;
            self.blocks[bslot].slots.push(slot as u16);
            let sp = &mut self.smsp[slot % nsmsp];
            let was_empty = sp.warps.is_empty();
            sp.warps.push(slot as u16);
            self.warps[slot].seen_from = sp.scans + 1;
            gg.st.warps_launched += 1;
            self.advance(gg, slot, at)?;
            let w = &mut self.warps[slot];
            if w.ready_at < at {
                w.ready_at = at;
            }
            w.reason = Reason::NoInstruction;
            // Nothing changes for the warps already there: the sub-partition
            // need not scan before the new one can issue (so a launch that
            // the in-order pass makes late is the same as one made at once).
            self.smsp[slot % nsmsp].wake_at(self.warps[slot].ready_at, was_empty);
        }
        Ok(())
    }

    /// [`Sm::free_finished`] once no block is left to start: frees the slots
    /// of blocks that have drained by `t`. It touches only this SM and the
    /// launch's end time (a maximum, so `gg` may be a worker's), so local
    /// phases run it; with nothing to start, the order of the frees does not matter.
    pub(super) fn free_drained(&mut self, t: u64, gg: &mut Gpu<'a, W>) {
        let mut i = 0;
        while self.next_drained(&mut i, t, gg).is_some() {}
    }

    /// Frees the slot of the next block in `frees`, from `*i` on, that has
    /// drained by `t`, and returns its drain time; `*i` resumes the scan.
    fn next_drained(&mut self, i: &mut usize, t: u64, gg: &mut Gpu<'a, W>) -> Option<u64> {
        while *i < self.frees.len() {
            if self.frees[*i].0 <= t {
                let (ft, b) = self.frees.swap_remove(*i);
                self.blocks[b as usize].live = false;
                self.resident -= 1;
                gg.end = gg.end.max(ft);
                return Some(ft);
            }
            *i += 1;
        }
        None
    }

    /// [`Sm::free_finished`] in a local phase with blocks left to start:
    /// frees the slots of blocks that have drained by `t`, and keeps, for
    /// each, the block and warp slots its successor takes, as
    /// `launch_block` would pick them now; the in-order pass starts the
    /// successors there ([`Sm::launch_reserved`]), or gives the slots back
    /// if no block is left by then. A successor cannot issue before `at`,
    /// and nothing else sees it before (a launch does not make its
    /// sub-partitions scan sooner), so the phase runs on up to `at`.
    /// `until` is the end of the quantum whose local phase this is: the pass
    /// starts the successors at the SM's turn in that quantum.
    pub(super) fn free_reserving(&mut self, t: u64, until: u64, gg: &mut Gpu<'a, W>) {
        let mut i = 0;
        let nw = gg.nwarps as usize;
        while let Some(ft) = self.next_drained(&mut i, t, gg) {
            // With blocks left to start, every freed slot is kept at once,
            // so the first free one is the one just freed.
            let bslot = self.free_block_slot().expect("the block slot just freed");
            self.blocks[bslot].reserved = true;
            let mut slot = 0;
            for _ in 0..nw {
                slot = self.free_warp_slot(slot);
                self.warps[slot].reserved = true;
                self.launch_slots.push(slot as u16);
            }
            let at = ft + gg.timing.block_replace_cycles as u64;
            self.launches.push((at, bslot as u16, until));
            self.horizon = self.horizon.min(at);
            // (Not stepped over: the pass starts the block at `at` at the latest.)
            self.launch_floor = self.launch_floor.min(at);
            self.stop_at = self.stop_at.min(at);
        }
    }

    /// Starts the blocks that local phases of quanta ending by `end` kept
    /// slots for, in their order, while blocks are left; gives back the
    /// slots of the others.
    pub(super) fn launch_reserved(&mut self, end: u64, gg: &mut Gpu<'a, W>) -> Result<(), LaunchError> {
        let nw = gg.nwarps as usize;
        let n = self.launches.iter().take_while(|l| l.2 <= end).count();
        if n == 0 {
            return Ok(());
        }
        for k in 0..n {
            let (at, bslot, _) = self.launches[k];
            self.blocks[bslot as usize].reserved = false;
            for &s in &self.launch_slots[k * nw..(k + 1) * nw] {
                self.warps[s as usize].reserved = false;
            }
            if let Some(id) = gg.place.take() {
                self.start_block(gg, id, at, bslot as usize, Some(k * nw))?;
            }
        }
        self.launches.drain(..n);
        self.launch_slots.drain(..n * nw);
        self.launch_floor = self.launches.iter().map(|l| l.0).min().unwrap_or(u64::MAX);
        self.stop_at = self.ack_floor.min(self.launch_floor);
        Ok(())
    }

    /// The end of the earliest quantum whose kept slots wait for the pass (`u64::MAX`: none).
    pub(super) fn launches_until(&self) -> u64 {
        self.launches.first().map_or(u64::MAX, |l| l.2)
    }

    /// Frees the slots of blocks that have drained by `t` and starts the next blocks in them.
    pub(super) fn free_finished(&mut self, t: u64, gg: &mut Gpu<'a, W>, make: &dyn Fn() -> O) -> Result<(), LaunchError> {
        let mut i = 0;
        while let Some(ft) = self.next_drained(&mut i, t, gg) {
            if let Some(id) = gg.place.take() {
                self.launch_block(gg, make, id, ft + gg.timing.block_replace_cycles as u64)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_warp_slots_come_back_empty_with_their_buffers() {
        let mut warps: Vec<WarpT> = (0..8).map(|_| WarpT::empty()).collect();
        for (i, w) in warps.iter_mut().enumerate() {
            w.start(0, i as u16, 0, 1, 5, 12, 0, 32);
            w.cap_addrs.extend([1, 2, 3]);
        }
        keep_warp_slots(warps);
        // These slots or another test's: each comes back as `WarpT::empty` would make it.
        for n in [4, 8, 16] {
            let got = spare_warp_slots(n);
            assert_eq!(got.len(), n);
            for w in &got {
                assert!(!w.live && !w.reserved && !w.is_ready() && w.ready_at == 0 && w.next == 0);
                assert!(w.ready.is_empty() && w.caps.is_empty() && w.cap_addrs.is_empty());
            }
            keep_warp_slots(got);
        }
    }
}
