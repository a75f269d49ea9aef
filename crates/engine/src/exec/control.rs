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

    /// `bra`: `exec` lanes take it, the other active lanes fall through. A
    /// divergent branch pushes the taken path, then the fall-through path (which runs first).
    #[inline(always)]
    pub(super) fn bra<O: Observer, S: SchedulePolicy>(
        &mut self,
        obs: &mut O,
        sched: &mut S,
        pc: u32,
        active: u64,
        exec: u64,
        target: Pc,
        reconv: Pc,
    ) {
        let taken = exec;
        let not_taken = active & !exec;
        obs.branch(self.index, pc, taken, not_taken);
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

    /// `brx.idx`: each lane jumps to `targets[index]`; one stack entry per distinct target.
    #[inline(always)]
    pub(super) fn brx_idx<O: Observer, S: SchedulePolicy>(
        &mut self,
        obs: &mut O,
        sched: &mut S,
        pc: u32,
        active: u64,
        exec: u64,
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
        let rest = active & !exec;
        obs.branch(self.index, pc, exec, rest);
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
            _ => None,
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
