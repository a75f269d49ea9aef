//! Control flow: branches (the SIMT stack's pushes), exit, and block
//! barriers, which stop the warp so that its block can collect arrivals.

// Handlers take the decoded op's fields as arguments.
#![allow(clippy::too_many_arguments)]

use super::*;
use crate::observer::BarrierEvent;

impl<const W: usize> Warp<W> {
    /// Removes `lanes` from every mask (they exited).
    pub(super) fn exit_lanes(&mut self, lanes: u64) {
        self.exited |= lanes;
        for e in self.stack.iter_mut() {
            e.mask &= !lanes;
        }
    }

    /// `bra`: `taken` lanes go to `target`, `not_taken` ones fall through. A
    /// divergent branch pushes the taken path, then the fall-through path (which runs first).
    #[inline(always)]
    pub(super) fn bra<S: SchedulePolicy>(&mut self, sched: &mut S, pc: u32, taken: u64, not_taken: u64, target: Pc, reconv: Pc) {
        let top = self.stack.last_mut().unwrap();
        if not_taken == 0 {
            top.pc = target;
        } else if taken != 0 {
            top.pc = reconv;
            self.stack.push(StackEntry { pc: target, mask: taken, rpc: reconv });
            self.stack.push(StackEntry { pc: pc + 1, mask: not_taken, rpc: reconv });
            if S::ACTIVE {
                sched.diverged(self.index, pc, &mut self.stack);
            }
        }
    }

    /// `brx.idx`: each `exec` lane jumps to `targets[index]` (one stack entry
    /// per distinct target), the `rest` fall through.
    #[inline(always)]
    pub(super) fn brx_idx<S: SchedulePolicy>(
        &mut self,
        sched: &mut S,
        pc: u32,
        exec: u64,
        rest: u64,
        index: RegRef,
        targets: &[Pc],
        reconv: Pc,
    ) -> Result<(), WarpFault> {
        let idx = self.gather(index);
        let mut groups: Vec<(u32, u64)> = Vec::new();
        let mut m = exec;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            let i = idx[l] as usize;
            let Some(&t) = targets.get(i) else {
                return Err(WarpFault::lane(
                    pc,
                    l,
                    FaultKind::Unsupported(format!("brx.idx index {i} out of range (list has {})", targets.len())),
                ));
            };
            match groups.iter_mut().find(|g| g.0 == t) {
                Some(g) => g.1 |= 1 << l,
                None => groups.push((t, 1 << l)),
            }
        }
        let top = self.stack.last_mut().unwrap();
        if groups.len() == 1 && rest == 0 {
            top.pc = groups[0].0;
        } else {
            top.pc = reconv;
            if rest != 0 {
                self.stack.push(StackEntry { pc: pc + 1, mask: rest, rpc: reconv });
            }
            for (t, mask) in groups.into_iter().rev() {
                self.stack.push(StackEntry { pc: t, mask, rpc: reconv });
            }
            if S::ACTIVE {
                sched.diverged(self.index, pc, &mut self.stack);
            }
        }
        Ok(())
    }

    /// `bar.sync`, `bar.arrive`, `bar.red`: the warp stops and its block records the arrival.
    #[inline(always)]
    pub(super) fn bar<O: Observer>(
        &mut self,
        obs: &mut O,
        pc: u32,
        exec: u64,
        kind: BarKind,
        id: RegRef,
        count: Option<RegRef>,
        pred: Option<(u32, bool)>,
        aligned: bool,
    ) -> Result<Stop, WarpFault> {
        let bid = self.uniform(id, exec) as u32;
        let cnt = count.map(|c| self.uniform(c, exec) as u32);
        let red = match (kind, pred) {
            (BarKind::Red(r), Some((p, neg))) => {
                let v = self.preds[p as usize] ^ if neg { u64::MAX } else { 0 };
                Some((r, v & exec))
            }
            (BarKind::Red(_), None) | (BarKind::Sync | BarKind::Arrive, _) => None,
        };
        let wait = !matches!(kind, BarKind::Arrive);
        let arrival = BarrierArrival { id: bid, count: cnt, threads: exec.count_ones(), wait, red, exec };
        if bid > 15 {
            return Err(WarpFault::warp(pc, FaultKind::Unsupported(format!("barrier id {bid} is above 15"))));
        }
        let live = self.present & !self.exited;
        obs.barrier(self.index, pc, &BarrierEvent { id: bid, count: cnt, exec, live, wait, aligned });
        if wait {
            self.state = WarpState::AtBarrier;
        }
        Ok(Stop::Barrier(arrival))
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::*;
    use super::*;
    use crate::observer::NoObserver;

    #[test]
    fn divergent_branch_pushes_both_paths_fall_through_on_top() {
        let mut w = bare(0, 0, 0);
        w.stack[0].pc = 5; // the run loop has moved past the branch at 4
        w.bra(&mut Simt, 4, 0xFFFF, FULL & !0xFFFF, 10, 12);
        assert_eq!(
            w.stack,
            [
                StackEntry { pc: 12, mask: FULL, rpc: NO_RECONV },
                StackEntry { pc: 10, mask: 0xFFFF, rpc: 12 },
                StackEntry { pc: 5, mask: 0xFFFF_0000, rpc: 12 },
            ]
        );
    }

    #[test]
    fn uniform_branches_leave_the_stack_alone() {
        let mut w = bare(0, 0, 0);
        w.stack[0].pc = 5;
        w.bra(&mut Simt, 4, FULL, 0, 10, 12);
        assert_eq!(w.stack, [StackEntry { pc: 10, mask: FULL, rpc: NO_RECONV }]);
        w.bra(&mut Simt, 10, 0, FULL, 2, 12);
        assert_eq!(w.stack[0].pc, 10, "not taken by anyone: falls through");
    }

    #[test]
    fn indirect_branch_groups_lanes_by_target() {
        let mut w = bare(1, 0, 0);
        fill32(&mut w, 0, |l| (l % 3) as u32);
        w.stack[0].pc = 1;
        w.brx_idx(&mut Simt, 0, FULL, 0, RegRef::r32(0), &[7, 8, 7], 9).unwrap();
        let lanes_of = |t: u32| w.stack.iter().find(|e| e.pc == t).unwrap().mask;
        assert_eq!(w.stack.len(), 3);
        assert_eq!(lanes_of(7) | lanes_of(8), FULL);
        assert_eq!(lanes_of(8), 0x9249_2492);
        fill32(&mut w, 0, |_| 3);
        let e = w.brx_idx(&mut Simt, 0, 1, FULL & !1, RegRef::r32(0), &[7, 8, 7], 9).unwrap_err();
        assert_eq!(e.kind, FaultKind::Unsupported("brx.idx index 3 out of range (list has 3)".into()));
    }

    #[test]
    fn exit_removes_lanes_everywhere() {
        let mut w = bare(0, 0, 0);
        w.stack.push(StackEntry { pc: 3, mask: 0xF0, rpc: 9 });
        w.exit_lanes(0x30);
        assert_eq!((w.stack[0].mask, w.stack[1].mask, w.exited), (FULL & !0x30, 0xC0, 0x30));
    }

    #[test]
    fn barriers_stop_the_warp() {
        let mut w = bare(2, 0, 1);
        fill32(&mut w, 0, |_| 3);
        let s = w.bar(&mut NoObserver, 0, FULL, BarKind::Arrive, RegRef::r32(0), None, None, true).unwrap();
        assert!(matches!(s, Stop::Barrier(BarrierArrival { id: 3, wait: false, threads: 32, .. })));
        assert_eq!(w.state, WarpState::Ready, "bar.arrive does not wait");
        w.preds[0] = 0b101;
        let s = w
            .bar(&mut NoObserver, 0, 0xF, BarKind::Red(BarRed::Popc { d: RegRef::r32(1) }), RegRef::r32(0), None, Some((0, false)), true)
            .unwrap();
        assert!(matches!(s, Stop::Barrier(BarrierArrival { red: Some((BarRed::Popc { .. }, 0b101)), wait: true, .. })));
        assert_eq!(w.state, WarpState::AtBarrier);
        fill32(&mut w, 1, |_| 16);
        assert!(w.bar(&mut NoObserver, 0, FULL, BarKind::Sync, RegRef::r32(1), None, None, true).is_err());
    }
}
