//! Independent thread scheduling, simulated.
//!
//! Since Volta the lanes of a warp are not in lockstep: the hardware may run
//! the diverged groups of a warp in any order and interleave them, and may
//! even run the lanes of a converged group apart between two
//! warp-synchronous points. The default schedule ([`Schedule::Simt`]) is the
//! classic SIMT stack (fall-through path first, then the taken path, every
//! group of lanes in lockstep), which hides code that relies on lockstep.
//! [`Schedule::Random`] shows it: from a seed it
//!
//! - runs the paths of each divergent branch in a random order,
//! - at each memory instruction, may switch to another group of lanes that
//!   waits for the same reconvergence point (interleaving the groups), and
//! - may split the group running a memory instruction into two random
//!   groups of lanes that run apart up to the end of the straight-line code
//!   they are in (the next label, branch, barrier or warp-synchronous
//!   instruction), where they meet again.
//!
//! Warp-synchronous instructions (`shfl.sync`, `vote.sync`, `bar.warp.sync`,
//! ...) and barriers always see their whole group: splits end before them.
//! The same seed gives the same run (each block seeds its own generator from
//! the seed and its index, so parallel and serial runs agree).
//!
//! The policy is a [`SchedulePolicy`], a type parameter of the run loop beside
//! the observer: observers only observe, and with [`Simt`] every scheduling
//! hook compiles away.

use crate::exec::{StackEntry, CALL_RPC};
use crate::rng::SplitMix64;
use std::sync::Arc;
use warpsim_ir::op_table::{Flow, LatencyClass};
use warpsim_ir::{Kernel, Op, Space};

/// Decides the order in which the lane groups of a warp run: may reorder or
/// split the entries of a warp's SIMT stack before it issues.
pub trait SchedulePolicy {
    /// Whether the policy ever changes a stack; when false the run loop never calls it.
    const ACTIVE: bool;

    /// Block `block` (linear index) starts; the calls that follow are its warps'.
    #[inline(always)]
    fn block_begin(&mut self, _block: u64) {}

    /// Before a warp issues the instruction at `pc` of its top stack entry:
    /// may reorder or split the entries. Returns whether it changed the stack.
    #[inline(always)]
    fn schedule(&mut self, _warp: u32, _pc: u32, _stack: &mut Vec<StackEntry>) -> bool {
        false
    }

    /// A divergent branch at `pc` just pushed one entry per path.
    #[inline(always)]
    fn diverged(&mut self, _warp: u32, _pc: u32, _stack: &mut Vec<StackEntry>) {}
}

/// The SIMT stack as it is: fall-through path first, lockstep groups. Free.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Simt;

impl SchedulePolicy for Simt {
    const ACTIVE: bool = false;
}

/// The order in which the lane groups of a warp run (a launch's setting).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Schedule {
    /// The SIMT stack: deterministic, lockstep within each group of lanes.
    #[default]
    Simt,
    /// Independent thread scheduling with random choices from `seed`.
    Random { seed: u64 },
}

const NONE: u32 = u32::MAX;

/// What an instruction is to a split group of lanes.
enum Point<'a> {
    /// Control flow to these targets: the group must not run it, nor past a target, apart.
    Branch(&'a [u32]),
    /// Its result depends on which lanes run together (or it ends them): splits end before it.
    Stop,
    /// A memory access in this space: a place to switch or split groups.
    Memory(Space),
    Plain,
}

/// Derived from the op table: control flow, warp collectives, barriers and
/// clock reads stop a split group; per-lane memory accesses (not the
/// tensor-core family, which runs warp-wide) are switch points.
fn point(op: &Op) -> Point<'_> {
    let facts = op.facts();
    match facts.flow {
        Flow::Branch { targets, .. } => return Point::Branch(targets),
        Flow::Exit => return Point::Stop,
        Flow::Next => {}
    }
    if facts.collective.is_some() || matches!(facts.latency, LatencyClass::Barrier | LatencyClass::Clock) {
        return Point::Stop;
    }
    match (facts.lane_address, op) {
        (_, Op::Mma(_)) | (None, _) => Point::Plain,
        (Some((space, _)), _) => Point::Memory(space),
    }
}

/// Per instruction: where a group split at this memory instruction meets again.
#[derive(Debug)]
pub struct SchedulePlan {
    split_end: Vec<u32>,
    code_len: u32,
}

impl SchedulePlan {
    pub fn new(kernel: &Kernel) -> Self {
        let code = &kernel.code;
        let n = code.len();
        // `stop[q]`: a split group must not run code[q] apart from the others
        // (a label others may jump to, control flow, or anything whose result
        // depends on which lanes run together).
        let mut stop = vec![false; n + 1];
        stop[n] = true;
        for (pc, inst) in code.iter().enumerate() {
            match point(&inst.op) {
                Point::Branch(targets) => {
                    stop[pc] = true;
                    for &t in targets {
                        if let Some(s) = stop.get_mut(t as usize) {
                            *s = true;
                        }
                    }
                }
                Point::Stop => stop[pc] = true,
                Point::Memory(_) | Point::Plain => {}
            }
        }
        let mut next_stop = vec![n as u32; n + 1];
        for q in (0..n).rev() {
            next_stop[q] = if stop[q] { q as u32 } else { next_stop[q + 1] };
        }
        let split_end = code
            .iter()
            .enumerate()
            .map(|(pc, inst)| match point(&inst.op) {
                Point::Memory(space) if !matches!(space, Space::KernelParam | Space::Const) && !stop[pc] => next_stop[pc + 1],
                Point::Memory(_) | Point::Branch(_) | Point::Stop | Point::Plain => NONE,
            })
            .collect();
        SchedulePlan { split_end, code_len: n as u32 }
    }

    fn is_switch_point(&self, pc: u32) -> bool {
        self.split_end.get(pc as usize).is_some_and(|&e| e != NONE)
    }
}

/// The random choices of [`Schedule::Random`]. Clone one per block (cheap:
/// the plan is shared); [`SchedulePolicy::block_begin`] seeds it.
#[derive(Clone, Debug)]
pub struct RandomSchedule {
    seed: u64,
    plan: Arc<SchedulePlan>,
    rng: SplitMix64,
    /// The warp whose stack was just changed: its next instruction issues as is.
    fresh: Option<u32>,
}

impl RandomSchedule {
    pub fn new(seed: u64, plan: Arc<SchedulePlan>) -> Self {
        RandomSchedule { seed, plan, rng: SplitMix64::new(seed), fresh: None }
    }

    /// The contiguous entries at the top of `stack` that wait for the same
    /// reconvergence point as the top one (independent groups of lanes that
    /// may run in any order); how many.
    fn siblings(&self, stack: &[StackEntry]) -> usize {
        let Some(top) = stack.last() else { return 0 };
        // A called function's entry ends the run: its caller's groups wait below it.
        stack
            .iter()
            .rev()
            .take_while(|e| e.rpc == top.rpc && e.rpc != CALL_RPC && e.pc < self.plan.code_len && e.pc != e.rpc && e.mask != 0)
            .count()
    }
}

impl SchedulePolicy for RandomSchedule {
    const ACTIVE: bool = true;

    fn block_begin(&mut self, block: u64) {
        self.rng = SplitMix64::new(self.seed ^ block.wrapping_mul(0xD1B5_4A32_D192_ED03));
        self.fresh = None;
    }

    fn schedule(&mut self, warp: u32, pc: u32, stack: &mut Vec<StackEntry>) -> bool {
        if self.fresh.take() == Some(warp) || !self.plan.is_switch_point(pc) {
            return false;
        }
        let n = stack.len();
        // Switch to another group waiting for the same reconvergence point.
        let k = self.siblings(stack);
        if k > 1 {
            let r = self.rng.below(k);
            if r > 0 {
                stack.swap(n - 1, n - 1 - r);
                self.fresh = Some(warp);
                return true;
            }
        }
        // Split the group: two random sets of lanes run apart to the end of this straight-line code.
        let top = stack[n - 1];
        if top.mask.count_ones() >= 2 && self.rng.next_u64() & 1 == 0 {
            let end = self.plan.split_end[pc as usize];
            let mut a = top.mask & self.rng.next_u64();
            if a == 0 || a == top.mask {
                // Make both sides non-empty: one random lane goes alone.
                let lanes = top.mask.count_ones() as usize;
                let mut m = top.mask;
                for _ in 0..self.rng.below(lanes) {
                    m &= m - 1;
                }
                a = 1u64 << m.trailing_zeros();
            }
            let b = top.mask & !a;
            if top.rpc == end {
                stack[n - 1] = StackEntry { pc, mask: b, rpc: end };
            } else {
                stack[n - 1] = StackEntry { pc: end, mask: top.mask, rpc: top.rpc };
                stack.push(StackEntry { pc, mask: b, rpc: end });
            }
            stack.push(StackEntry { pc, mask: a, rpc: end });
            self.fresh = Some(warp);
            return true;
        }
        false
    }

    fn diverged(&mut self, _warp: u32, _pc: u32, stack: &mut Vec<StackEntry>) {
        // Run the paths in a random order (Fisher-Yates over the new entries).
        let k = self.siblings(stack);
        let n = stack.len();
        for i in (1..k).rev() {
            let j = self.rng.below(i + 1);
            stack.swap(n - 1 - i, n - 1 - j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> Arc<SchedulePlan> {
        let src = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n.reg .b32 %r<4>; .reg .b64 %rd<2>;\nld.param.u64 %rd1, [p];\nld.global.u32 %r1, [%rd1];\nst.global.u32 [%rd1], %r1;\nret;\n}\n";
        let prog = warpsim_ir::compile_kernel("t.ptx", src, "k").unwrap();
        Arc::new(SchedulePlan::new(prog.kernel("k").unwrap()))
    }

    /// Four sibling groups waiting for pc 3, each at a memory instruction.
    fn siblings() -> Vec<StackEntry> {
        let mut s = vec![StackEntry { pc: 3, mask: 0xF, rpc: u32::MAX }];
        s.extend((0..4).map(|i| StackEntry { pc: 1, mask: 1 << i, rpc: 3 }));
        s
    }

    #[test]
    fn the_same_seed_and_block_give_the_same_order() {
        const { assert!(!Simt::ACTIVE && RandomSchedule::ACTIVE) };
        let p = plan();
        let order = |seed: u64, block: u64| {
            let mut r = RandomSchedule::new(seed, p.clone());
            r.block_begin(block);
            let mut s = siblings();
            r.diverged(0, 0, &mut s);
            s.iter().map(|e| e.mask).collect::<Vec<_>>()
        };
        assert_eq!(order(7, 2), order(7, 2));
        let mut seen = std::collections::HashSet::new();
        for seed in 0..16 {
            let o = order(seed, 0);
            let mut sorted = o.clone();
            sorted.sort();
            assert_eq!(sorted, [1, 2, 4, 8, 0xF], "a permutation of the groups");
            seen.insert(o);
        }
        assert!(seen.len() > 1, "different seeds give different orders");
    }

    #[test]
    fn splits_happen_only_at_memory_instructions() {
        let p = plan();
        assert!(p.is_switch_point(1) && !p.is_switch_point(0) && !p.is_switch_point(3));
        let mut r = RandomSchedule::new(1, p);
        r.block_begin(0);
        let mut s = vec![StackEntry { pc: 3, mask: 0xF, rpc: u32::MAX }];
        assert!(!r.schedule(0, 3, &mut s), "ret is no switch point");
        assert_eq!(s.len(), 1);
        let mut changed = false;
        for _ in 0..8 {
            let mut s = vec![StackEntry { pc: 1, mask: 0xF, rpc: u32::MAX }];
            if r.schedule(0, 1, &mut s) {
                changed = true;
                let lanes: u64 = s.iter().filter(|e| e.pc == 1).map(|e| e.mask).fold(0, |a, m| a | m);
                assert_eq!(lanes, 0xF, "a split keeps every lane");
            }
            r.fresh = None;
        }
        assert!(changed);
    }
}
