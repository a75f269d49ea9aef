//! The mbarrier state machine: an 8-byte object in shared memory holding the
//! pending arrival count, the expected count of the next phase, the
//! transaction count and the phase parity; `mbarrier.*` and the copies that
//! complete transactions update it with checked read-modify-writes.

use super::*;
use crate::observer::MemAccessKind;
use warpsim_ir::window::resolve as resolve_generic;

/// Layout of the 8-byte mbarrier object (opaque in PTX).
const MB_PENDING: u32 = 0;
const MB_EXPECTED: u32 = 21;
const MB_TX: u32 = 42;
const MB_FIELD: u64 = (1 << 21) - 1;
const MB_PHASE: u64 = 1 << 63;

fn mb_pending(v: u64) -> u64 {
    (v >> MB_PENDING) & MB_FIELD
}
fn mb_expected(v: u64) -> u64 {
    (v >> MB_EXPECTED) & MB_FIELD
}
fn mb_tx(v: u64) -> i64 {
    // 21-bit two's complement.
    (((v >> MB_TX) & MB_FIELD) as i64) << 43 >> 43
}
fn mb_pack(pending: u64, expected: u64, tx: i64, phase: u64) -> u64 {
    (pending & MB_FIELD) << MB_PENDING | (expected & MB_FIELD) << MB_EXPECTED | ((tx as u64) & MB_FIELD) << MB_TX | (phase & MB_PHASE)
}

/// An mbarrier operation that the object's state does not allow.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MbarrierError {
    #[error("mbarrier arrive on an object that was never initialised (mbarrier.init)")]
    ArriveUninitialised,
    #[error("mbarrier arrive of count {count} exceeds the {pending} arrivals pending in the current phase")]
    ArriveExceedsPending { count: u64, pending: u64 },
    #[error("mbarrier arrive_drop of count {count} exceeds the expected count {expected}")]
    DropExceedsExpected { count: u64, expected: u64 },
    #[error("mbarrier transaction count {tx} overflows")]
    TxOverflow { tx: i64 },
    #[error("mbarrier.arrive.noComplete would have completed the phase")]
    NoCompleteCompletes,
    #[error("transaction completed on an mbarrier that was never initialised (mbarrier.init)")]
    TxUninitialised,
    #[error("mbarrier transaction count {tx} is out of range")]
    TxOutOfRange { tx: i64 },
    #[error("mbarrier.init count {count} is outside 1..2^20-1")]
    InitCount { count: u64 },
    #[error("mbarrier at {addr:#x} is not in shared memory")]
    NotShared { addr: u64 },
}

fn mbar_complete(pending: u64, expected: u64, tx: i64, v: u64) -> u64 {
    if pending == 0 && tx == 0 {
        // Phase complete: the next phase starts with the expected count.
        mb_pack(expected, expected, 0, (v ^ MB_PHASE) & MB_PHASE)
    } else {
        mb_pack(pending, expected, tx, v)
    }
}

fn mbar_arrive(v: u64, n: u64, drop: bool, expect_tx: i64, no_complete: bool) -> Result<u64, MbarrierError> {
    let (pending, mut expected) = (mb_pending(v), mb_expected(v));
    if expected == 0 {
        return Err(MbarrierError::ArriveUninitialised);
    }
    if n > pending {
        return Err(MbarrierError::ArriveExceedsPending { count: n, pending });
    }
    if drop {
        if n > expected {
            return Err(MbarrierError::DropExceedsExpected { count: n, expected });
        }
        expected -= n;
    }
    let tx = mb_tx(v) + expect_tx;
    if tx >= 1 << 20 {
        return Err(MbarrierError::TxOverflow { tx });
    }
    let pending = pending - n;
    if no_complete && pending == 0 && tx == 0 {
        return Err(MbarrierError::NoCompleteCompletes);
    }
    Ok(mbar_complete(pending, expected, tx, v))
}

/// Completes (`delta` < 0) or expects (`delta` > 0) transaction bytes.
pub(super) fn mbar_tx(v: u64, delta: i64) -> Result<u64, MbarrierError> {
    if mb_expected(v) == 0 {
        return Err(MbarrierError::TxUninitialised);
    }
    let tx = mb_tx(v) + delta;
    if tx <= -(1 << 20) || tx >= 1 << 20 {
        return Err(MbarrierError::TxOutOfRange { tx });
    }
    Ok(mbar_complete(mb_pending(v), mb_expected(v), tx, v))
}

impl<const W: usize> Warp<W> {
    /// `cp.async.mbarrier.arrive`: the thread's earlier cp.async copies are
    /// complete, so the arrive happens now. Without `.noinc` the pending
    /// count is first raised by one, so the net effect is nothing.
    pub(super) fn cp_async_mbarrier_arrive(
        &mut self,
        ctx: &mut WarpCtx<'_>,
        pc: u32,
        exec: u64,
        noinc: bool,
        space: Space,
        addr: &Addr,
    ) -> Result<(), WarpFault> {
        if noinc {
            let addrs = self.addresses(addr);
            for l in lanes(exec) {
                self.mbar_update(ctx, pc, space, addrs[l], l, |v| mbar_arrive(v, 1, false, 0, false))?;
            }
        }
        Ok(())
    }

    /// `mbarrier.pending_count`: from a state token.
    pub(super) fn mbar_pending_count(&mut self, exec: u64, d: RegRef, state: RegRef) {
        for l in lanes(exec) {
            let s = self.lane_value(state, l);
            self.put_lane(d, l, mb_pending(s));
        }
    }

    /// `mbarrier.init/inval/arrive/expect_tx/complete_tx/test_wait/try_wait`, lane by lane.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn mbarrier<O: Observer>(
        &mut self,
        ctx: &mut WarpCtx<'_>,
        obs: &mut O,
        pc: u32,
        exec: u64,
        kind: &MbarKind,
        space: Space,
        addr: &Addr,
    ) -> Result<(), WarpFault> {
        let addrs = self.addresses(addr);
        if O::WANTS_MEMORY {
            obs.memory(self.index, pc, space, MemAccessKind::Atomic, 8, &addrs, exec);
        }
        for l in lanes(exec) {
            let a = addrs[l];
            match kind {
                MbarKind::Init { count } => {
                    let n = self.lane_value(*count, l);
                    if n == 0 || n > MB_FIELD >> 1 {
                        return Err(WarpFault::warp(pc, MbarrierError::InitCount { count: n }.into()));
                    }
                    self.mbar_update(ctx, pc, space, a, l, |_| Ok(mb_pack(n, n, 0, 0)))?;
                }
                MbarKind::Inval => {
                    self.mbar_update(ctx, pc, space, a, l, |_| Ok(0))?;
                }
                MbarKind::Arrive { state, count, drop, expect_tx, no_complete } => {
                    let n = count.map(|c| self.lane_value(c, l)).unwrap_or(1);
                    let tx = expect_tx.map(|t| self.lane_value(t, l) as u32 as i64).unwrap_or(0);
                    let old = self.mbar_update(ctx, pc, space, a, l, |v| mbar_arrive(v, n, *drop, tx, *no_complete))?;
                    if let Some(s) = state {
                        // The state token: the phase arrived on, and the arrivals it still awaited after this one.
                        let token = (old & MB_PHASE) | mb_pack(mb_pending(old) - n, mb_expected(old), mb_tx(old) + tx, 0);
                        self.put_lane(*s, l, token);
                    }
                }
                MbarKind::ExpectTx { tx } => {
                    let t = self.lane_value(*tx, l) as u32 as i64;
                    self.mbar_update(ctx, pc, space, a, l, |v| {
                        let nt = mb_tx(v) + t;
                        if nt >= 1 << 20 {
                            return Err(MbarrierError::TxOverflow { tx: nt });
                        }
                        Ok(mb_pack(mb_pending(v), mb_expected(v), nt, v))
                    })?;
                }
                MbarKind::CompleteTx { tx } => {
                    let t = self.lane_value(*tx, l) as u32 as i64;
                    self.mbar_update(ctx, pc, space, a, l, |v| mbar_tx(v, -t))?;
                }
                MbarKind::Wait { p, parity, arg } => {
                    let v = self.mem_read(ctx, pc, space, a, 8, l)?;
                    let cur = v >> 63;
                    let want = if *parity { self.lane_value(*arg, l) & 1 } else { self.lane_value(*arg, l) >> 63 };
                    // The phase the token (or parity) names has completed once the current phase differs.
                    self.put_lane(RegRef::pred(*p), l, (cur != want) as u64);
                }
            }
        }
        Ok(())
    }

    /// Read-modify-write of the mbarrier at `addr`; returns the old value.
    pub(super) fn mbar_update(
        &mut self,
        ctx: &mut WarpCtx<'_>,
        pc: u32,
        space: Space,
        addr: u64,
        lane: usize,
        f: impl FnOnce(u64) -> Result<u64, MbarrierError>,
    ) -> Result<u64, WarpFault> {
        let (sp, _) = resolve_generic(space, addr);
        if sp != Space::Shared {
            return Err(WarpFault::lane(pc, lane, MbarrierError::NotShared { addr }.into()));
        }
        let old = self.mem_read(ctx, pc, space, addr, 8, lane)?;
        let new = f(old).map_err(|e| WarpFault::lane(pc, lane, e.into()))?;
        self.mem_write(ctx, pc, space, addr, 8, new, lane)?;
        Ok(old)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mbarrier_phases() {
        let v = mb_pack(2, 2, 0, 0);
        let v = mbar_arrive(v, 1, false, 0, false).unwrap();
        assert_eq!((mb_pending(v), v >> 63), (1, 0));
        let v = mbar_arrive(v, 1, false, 0, false).unwrap();
        assert_eq!((mb_pending(v), mb_expected(v), v >> 63), (2, 2, 1), "phase 0 completed");
        // expect_tx holds the phase open until the bytes arrive.
        let v = mbar_arrive(v, 2, false, 64, false).unwrap();
        assert_eq!((mb_pending(v), mb_tx(v), v >> 63), (0, 64, 1));
        let v = mbar_tx(v, -64).unwrap();
        assert_eq!((mb_pending(v), v >> 63), (2, 0));
        // Bytes may land before they are expected.
        let v = mbar_tx(v, -16).unwrap();
        assert_eq!(mb_tx(v), -16);
        let v = mbar_arrive(v, 2, false, 16, false).unwrap();
        assert_eq!(v >> 63, 1);
        // arrive_drop lowers the count of later phases.
        let v = mbar_arrive(v, 1, true, 0, false).unwrap();
        let v = mbar_arrive(v, 1, false, 0, false).unwrap();
        assert_eq!((mb_pending(v), mb_expected(v), v >> 63), (1, 1, 0));
        assert_eq!(mbar_arrive(v, 2, false, 0, false), Err(MbarrierError::ArriveExceedsPending { count: 2, pending: 1 }));
        assert_eq!(mbar_arrive(0, 1, false, 0, false), Err(MbarrierError::ArriveUninitialised));
        assert_eq!(
            MbarrierError::ArriveExceedsPending { count: 2, pending: 1 }.to_string(),
            "mbarrier arrive of count 2 exceeds the 1 arrivals pending in the current phase"
        );
    }

    #[test]
    fn mbarrier_instructions_run_the_phases() {
        use super::super::super::testkit::*;
        use crate::observer::NoObserver;
        let mut blk = Block::new(16);
        let mut w = bare(2, 1, 1);
        fill32(&mut w, 0, |_| 2);
        let at = Addr { base: None, offset: 8 };
        let mut run = |w: &mut Warp<32>, kind: MbarKind, exec: u64| {
            let mut ctx = blk.ctx();
            w.mbarrier(&mut ctx, &mut NoObserver, 0, exec, &kind, Space::Shared, &at)
        };
        run(&mut w, MbarKind::Init { count: RegRef::r32(0) }, 1).unwrap();
        let arrive = || MbarKind::Arrive { state: Some(RegRef::r64(0)), count: None, drop: false, expect_tx: None, no_complete: false };
        run(&mut w, arrive(), 1).unwrap();
        let wait = MbarKind::Wait { p: 0, parity: false, arg: RegRef::r64(0) };
        run(&mut w, wait, 1).unwrap();
        let wait = MbarKind::Wait { p: 0, parity: false, arg: RegRef::r64(0) };
        assert_eq!(w.preds[0] & 1, 0, "one of two arrivals: phase 0 still open");
        run(&mut w, arrive(), 0b10).unwrap();
        run(&mut w, wait, 1).unwrap();
        assert_eq!(w.preds[0] & 1, 1, "both arrived: the token's phase completed");
        fill32(&mut w, 1, |_| 3);
        let too_many = MbarKind::Arrive { state: None, count: Some(RegRef::r32(1)), drop: false, expect_tx: None, no_complete: false };
        let e = run(&mut w, too_many, 0b100).unwrap_err();
        assert_eq!(e.kind, FaultKind::Mbarrier(MbarrierError::ArriveExceedsPending { count: 3, pending: 2 }));
        assert_eq!(e.lane, Some(2));
        fill32(&mut w, 0, |_| 0);
        let e = run(&mut w, MbarKind::Init { count: RegRef::r32(0) }, 1).unwrap_err();
        assert_eq!((e.kind.to_string(), e.lane), ("mbarrier.init count 0 is outside 1..2^20-1".into(), None));
    }
}
