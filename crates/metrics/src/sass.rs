//! The GPU counts SASS instructions, warpsim executes PTX. ptxas folds some
//! PTX away: moves of constants and register copies become operands or
//! vanish in register allocation, kernel parameters are read straight from
//! the constant bank, and a second load of the same address with no store in
//! between reuses the first. Metrics that Nsight Compute reports per SASS
//! instruction skip those PTX instructions, so that counts and ratios compare
//! with the hardware's; the raw PTX counts are reported beside them.

use std::collections::HashSet;
use warpsim_ir::op_table::MemOrder;
use warpsim_ir::{Kernel, Op, RegRef, Space};

/// Why a PTX instruction has no SASS counterpart of its own.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Folded {
    /// Kept: it becomes a SASS instruction.
    No,
    /// A move of a constant or a register copy.
    Move,
    /// A kernel-parameter load (constant-bank operand).
    ParamLoad,
    /// A load of an address already loaded in the same basic block with no store since.
    RedundantLoad,
}

/// For each pc, whether ptxas would fold the instruction away.
pub fn folded_instructions(k: &Kernel) -> Vec<Folded> {
    let consts: HashSet<RegRef> = k
        .const32
        .iter()
        .map(|&(s, _)| RegRef::r32(s))
        .chain(k.const64.iter().map(|&(s, _)| RegRef::r64(s)))
        .chain(k.symbol_addrs.iter().map(|&(s, _)| RegRef::r64(s)))
        .collect();
    let specials: HashSet<RegRef> = k.specials.iter().map(|&(r, _)| r).collect();
    let leaders = block_leaders(k);
    let mut out = vec![Folded::No; k.code.len()];
    // (space, base, offset, size, n) of loads seen in the current block.
    let mut seen: Vec<(Space, Option<RegRef>, i64, u8, u8)> = Vec::new();
    for (pc, inst) in k.code.iter().enumerate() {
        if leaders[pc] {
            seen.clear();
        }
        let volatile = inst.meta.ordering == MemOrder::Volatile;
        match &inst.op {
            Op::Mov { d, a } if d.bank == a.bank && !specials.contains(a) => {
                let _ = consts.contains(a);
                out[pc] = Folded::Move;
            }
            Op::PredLogic { op: warpsim_ir::PredOp::Mov, .. } => out[pc] = Folded::Move,
            Op::Ld { space: Space::KernelParam, .. } => out[pc] = Folded::ParamLoad,
            Op::Ld { space, size, n, addr, d, .. } => {
                let key = (*space, addr.base, addr.offset, *size, *n);
                if !volatile && inst.guard.is_none() && matches!(space, Space::Global | Space::Generic | Space::Const) {
                    if seen.contains(&key) {
                        out[pc] = Folded::RedundantLoad;
                    } else {
                        seen.push(key);
                    }
                }
                // A load that overwrites a base register invalidates loads through it.
                for r in d.iter().flatten() {
                    seen.retain(|s| s.1 != Some(*r));
                }
            }
            op if clears_remembered_loads(op) => seen.clear(),
            op => op.for_each_write(|dst| seen.retain(|s| s.1 != Some(dst))),
        }
    }
    out
}

/// Whether an op may change memory or order it, so that a later load of a
/// remembered address must load again.
fn clears_remembered_loads(op: &Op) -> bool {
    op.mem_access().is_some() || matches!(op, Op::Bar { .. } | Op::BarWarpSync { .. } | Op::Fence | Op::Mma(_))
}

fn block_leaders(k: &Kernel) -> Vec<bool> {
    let n = k.code.len();
    let mut l = vec![false; n + 1];
    if n > 0 {
        l[0] = true;
    }
    for pc in 0..n {
        if k.code[pc].op.is_branch() {
            l[pc + 1] = true;
            for s in warpsim_ir::cfg::successors(&k.code, pc) {
                l[s] = true;
            }
        }
    }
    l
}
