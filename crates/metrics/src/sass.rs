//! The GPU counts SASS instructions, warpsim executes PTX. ptxas folds some
//! PTX away: moves of constants and register copies become operands or
//! vanish in register allocation, kernel parameters are read straight from
//! the constant bank, and a second load of the same address with no store in
//! between reuses the first. Metrics that Nsight Compute reports per SASS
//! instruction skip those PTX instructions, so that counts and ratios compare
//! with the hardware's; the raw PTX counts are reported beside them.

use std::collections::{HashMap, HashSet};
use warpsim_ir::op_table::MemOrder;
use warpsim_ir::{Addr, Bin32, Bin64, Guard, Kernel, Op, RegRef, Space, Tern32};

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
    /// A shared load merged into a wider one that an earlier load leads ([`Merged`]).
    MergedLoad,
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

/// For each pc, whether it is a global atomic that ptxas turns into a reduction
/// (SASS `RED`, counted under Nsight Compute's `op_red`, not `op_atom`): PTX `red`,
/// and `atom` whose result nothing that matters ever reads once dead code is gone
/// (`atomicAdd(&c, 1)` with the return value dropped, or only shuffled into a
/// value that is itself dropped). Measured on the H200: `calibration/kinds11`'s
/// `coalesced_count` counts its one `atom` per warp as 500 `op_red` requests.
pub fn reduction_atomics(k: &Kernel) -> Vec<bool> {
    let live = live_registers(k);
    k.code
        .iter()
        .map(|i| match &i.op {
            Op::Atom { space: Space::Global | Space::Generic, d, .. } => d.is_none_or(|r| !live.contains(&r)),
            _ => false,
        })
        .collect()
}

/// Registers some instruction with an effect (a store, atomic, branch, call,
/// barrier, fence, volatile load, ...) reads, directly or through pure
/// instructions that compute them: a flow-insensitive dead-code analysis.
fn live_registers(k: &Kernel) -> HashSet<RegRef> {
    let pure = |i: &warpsim_ir::Inst| match &i.op {
        Op::Ld { .. } => i.meta.ordering != MemOrder::Volatile,
        Op::Atom { .. }
        | Op::St { .. }
        | Op::Bra { .. }
        | Op::BrxIdx { .. }
        | Op::Exit
        | Op::Trap
        | Op::Call(_)
        | Op::Ret
        | Op::AssertFail { .. }
        | Op::Printf { .. }
        | Op::Bar { .. }
        | Op::BarWarpSync { .. }
        | Op::Fence
        | Op::Mma(_) => false,
        _ => true,
    };
    let mut writers: HashMap<RegRef, Vec<usize>> = HashMap::new();
    let mut live = HashSet::new();
    let mut work = Vec::new();
    for (pc, inst) in k.code.iter().enumerate() {
        if pure(inst) {
            inst.op.for_each_write(|r| writers.entry(r).or_default().push(pc));
        } else {
            mark_reads(inst, &mut live, &mut work);
        }
    }
    let mut done = vec![false; k.code.len()];
    while let Some(r) = work.pop() {
        for &pc in writers.get(&r).map(Vec::as_slice).unwrap_or_default() {
            if std::mem::replace(&mut done[pc], true) {
                continue;
            }
            mark_reads(&k.code[pc], &mut live, &mut work);
        }
    }
    live
}

/// Adds the registers `inst` reads to `live`, queueing each new one on `work`.
fn mark_reads(inst: &warpsim_ir::Inst, live: &mut HashSet<RegRef>, work: &mut Vec<RegRef>) {
    inst.visit_regs(|role, r| {
        if role == warpsim_ir::op_table::RegRole::Read && live.insert(r) {
            work.push(r);
        }
    });
}

/// A shared-memory load that ptxas merges with its neighbours into one wider SASS load:
/// scalar loads through one base register at consecutive offsets, the group's start
/// provably aligned to its width (`As[ty][k..k+4]` becomes one 128-bit load). Measured on
/// the H200: the validation corpus's `sgemm_*` kernels count exactly the wavefronts of the
/// merged loads (calibration/validation).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Merged {
    #[default]
    No,
    /// The group's first load in program order: it stands for `bytes` bytes starting
    /// `delta` bytes from its own address.
    Leads { bytes: u8, delta: i8 },
    /// Another load of a group: no SASS instruction of its own.
    Follows,
}

/// Open runs of shared loads: (base, size, guard) -> (pc, offset) of each load.
type OpenRuns = HashMap<(RegRef, u8, Option<Guard>), Vec<(usize, i64)>>;

/// For each pc, whether its shared load is merged into a wider one.
pub fn merged_shared_loads(k: &Kernel) -> Vec<Merged> {
    let align = known_alignment(k);
    let leaders = block_leaders(k);
    let mut out = vec![Merged::No; k.code.len()];
    let mut open = OpenRuns::new();
    let close = |open: &mut OpenRuns, out: &mut Vec<Merged>, only: Option<RegRef>| {
        let keys: Vec<_> = open.keys().filter(|key| only.is_none_or(|r| key.0 == r)).copied().collect();
        for key in keys {
            if let Some(loads) = open.remove(&key) {
                merge_group(&loads, key.1, align.get(&key.0).copied().unwrap_or(0), out);
            }
        }
    };
    for (pc, inst) in k.code.iter().enumerate() {
        if leaders[pc] {
            close(&mut open, &mut out, None);
        }
        match &inst.op {
            Op::Ld { space: Space::Shared, size, n: 1, addr: Addr { base: Some(base), offset }, .. }
                if inst.meta.ordering != MemOrder::Volatile && matches!(size, 4 | 8) =>
            {
                open.entry((*base, *size, inst.guard)).or_default().push((pc, *offset));
            }
            Op::Ld { .. } => {}
            op if clears_remembered_loads(op) => close(&mut open, &mut out, None),
            _ => {}
        }
        inst.op.for_each_write(|dst| close(&mut open, &mut out, Some(dst)));
    }
    close(&mut open, &mut out, None);
    out
}

/// Marks the runs of `loads` (one base register, `size` bytes each) that form aligned
/// 16- or 8-byte loads; `align` is the base register's known low zero bits.
fn merge_group(loads: &[(usize, i64)], size: u8, align: u32, out: &mut [Merged]) {
    let at: HashMap<i64, usize> = loads.iter().map(|&(pc, off)| (off, pc)).collect();
    let mut offsets: Vec<i64> = at.keys().copied().collect();
    offsets.sort_unstable();
    let mut taken = HashSet::new();
    for width in [16i64, 8] {
        let count = width / size as i64;
        if count < 2 || align < width.trailing_zeros() {
            continue;
        }
        for &start in &offsets {
            if start.rem_euclid(width) != 0 {
                continue;
            }
            let members: Option<Vec<usize>> = (0..count).map(|i| at.get(&(start + i * size as i64)).copied()).collect();
            let Some(members) = members else { continue };
            if members.iter().any(|pc| taken.contains(pc)) {
                continue;
            }
            let leader = *members.iter().min().unwrap_or(&members[0]);
            let lead_offset = loads.iter().find(|l| l.0 == leader).map_or(start, |l| l.1);
            for &pc in &members {
                taken.insert(pc);
                out[pc] =
                    if pc == leader { Merged::Leads { bytes: width as u8, delta: (start - lead_offset) as i8 } } else { Merged::Follows };
            }
        }
    }
}

/// The known low zero bits of each integer register over every definition in the kernel
/// (flow-insensitive, so a register written twice keeps the weaker fact): constants by
/// their value, sums by the weaker operand, products and shifts by adding.
fn known_alignment(k: &Kernel) -> HashMap<RegRef, u32> {
    const TOP: u32 = 64;
    let mut tz: HashMap<RegRef, u32> = HashMap::new();
    let consts: HashMap<RegRef, u64> =
        k.const32.iter().map(|&(s, v)| (RegRef::r32(s), v as u64)).chain(k.const64.iter().map(|&(s, v)| (RegRef::r64(s), v))).collect();
    let value_tz = |v: u64| if v == 0 { TOP } else { v.trailing_zeros() };
    for (&r, &v) in &consts {
        tz.insert(r, value_tz(v));
    }
    for &(r, _) in &k.specials {
        tz.insert(r, 0);
    }
    loop {
        let mut changed = false;
        for inst in &k.code {
            let get = |r: RegRef| consts.get(&r).map(|&v| value_tz(v)).unwrap_or_else(|| tz.get(&r).copied().unwrap_or(TOP));
            let (r32, r64) = (RegRef::r32, RegRef::r64);
            let fact: Option<(RegRef, u32)> = match &inst.op {
                Op::Mov { d, a } => Some((*d, get(*a))),
                Op::Bin32 { f, d, a, b } => Some((r32(*d), bin_tz(*f, get(r32(*a)), get(r32(*b)), consts.get(&r32(*b)).copied(), 32))),
                Op::Bin64 { f, d, a, b } => {
                    let f = match f {
                        Bin64::Add => Some(Bin32::Add),
                        Bin64::Sub => Some(Bin32::Sub),
                        Bin64::MulLo => Some(Bin32::MulLo),
                        Bin64::And => Some(Bin32::And),
                        Bin64::Or => Some(Bin32::Or),
                        _ => None,
                    };
                    Some((r64(*d), f.map_or(0, |f| bin_tz(f, get(r64(*a)), get(r64(*b)), None, 64))))
                }
                Op::Tern32 { f: Tern32::MadLo, d, a, b, c } => Some((r32(*d), (get(r32(*a)) + get(r32(*b))).min(get(r32(*c))).min(32))),
                Op::MulWide32 { d, a, b, .. } => Some((r64(*d), (get(r32(*a)) + get(r32(*b))).min(64))),
                Op::Extend32To64 { d, a, .. } => Some((r64(*d), get(r32(*a)).min(32))),
                Op::Trunc64To32 { d, a } => Some((r32(*d), get(r64(*a)).min(32))),
                _ => None,
            };
            let mut lower = |r: RegRef, v: u32| {
                if consts.contains_key(&r) {
                    return;
                }
                let e = tz.entry(r).or_insert(TOP);
                if v < *e {
                    *e = v;
                    changed = true;
                }
            };
            match fact {
                Some((d, v)) => lower(d, v),
                None => inst.op.for_each_write(|d| lower(d, 0)),
            }
        }
        if !changed {
            return tz;
        }
    }
}

/// Low zero bits of `a f b` from those of the operands (`b_const`: b's value when known).
fn bin_tz(f: Bin32, a: u32, b: u32, b_const: Option<u64>, bits: u32) -> u32 {
    let v = match f {
        Bin32::Add | Bin32::Sub | Bin32::Or | Bin32::Xor => a.min(b),
        Bin32::And => a.max(b),
        Bin32::MulLo => a + b,
        Bin32::Shl => match b_const {
            Some(k) if k < bits as u64 => a + k as u32,
            _ => a,
        },
        _ => 0,
    };
    v.min(bits)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Kernel `k(.param .u64 out)` with `%r<20>` and `%rd<4>` declared, running `body`, compiled.
    fn kernel_k(body: &str) -> warpsim_ir::Program {
        let ptx = format!(
            ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 out)\n{{\n    .reg .b32 %r<20>;\n    .reg .b64 %rd<4>;{body}}}\n"
        );
        warpsim_ir::compile_kernel("t.ptx", &ptx, "k").unwrap()
    }

    const BODY: &str = r#"
    .reg .f32 %f<20>;
    .shared .align 16 .b8 s[4096];
    mov.u32 %r1, %tid.x;
    shl.b32 %r2, %r1, 4;
    mov.u32 %r3, s;
    add.s32 %r4, %r3, %r2;
    shl.b32 %r5, %r1, 2;
    add.s32 %r6, %r3, %r5;
    ld.shared.f32 %f1, [%r4];
    ld.shared.f32 %f2, [%r6];
    ld.shared.f32 %f3, [%r4+4];
    ld.shared.f32 %f4, [%r4+8];
    ld.shared.f32 %f5, [%r4+12];
    ld.shared.f32 %f6, [%r6+4];
    ld.shared.f32 %f7, [%r4+256];
    ld.shared.f32 %f8, [%r4+260];
    ld.shared.f32 %f9, [%r4+264];
    st.shared.f32 [%r6], %f1;
    ld.shared.f32 %f10, [%r4+268];
    ret;
"#;

    #[test]
    fn aligned_runs_through_one_base_merge_and_others_do_not() {
        let program = kernel_k(BODY);
        let k = program.kernel("k").unwrap();
        let merged = merged_shared_loads(k);
        let loads: Vec<Merged> =
            k.code.iter().zip(&merged).filter(|(i, _)| matches!(i.op, Op::Ld { space: Space::Shared, .. })).map(|(_, m)| *m).collect();
        use Merged::*;
        assert_eq!(
            loads,
            [
                Leads { bytes: 16, delta: 0 }, // [%r4]: tid * 16 from a 16-aligned array
                No,                            // [%r6]: tid * 4 is only 4-aligned
                Follows,
                Follows,
                Follows,
                No,
                // +256..+264: three of four, then a store ends the block's run: an aligned pair.
                Leads { bytes: 8, delta: 0 },
                Follows,
                No,
                No,
            ]
        );
    }

    // ptxas turns an atom whose result is dead (directly, or only through pure
    // instructions whose results are dead) into a RED; a used result keeps the atom.
    #[test]
    fn atomics_with_dead_results_are_reductions() {
        let program = kernel_k(
            r#"
    .reg .pred %p<2>;
    .shared .align 4 .b32 s[32];
    ld.param.u64 %rd1, [out];
    atom.global.add.u32 %r1, [%rd1], 1;
    atom.global.add.u32 %r2, [%rd1+4], 1;
    shfl.sync.idx.b32 %r3|%p0, %r2, 0, 31, -1;
    atom.global.add.u32 %r4, [%rd1+8], 1;
    add.s32 %r5, %r4, 1;
    st.global.u32 [%rd1+12], %r5;
    red.global.add.u32 [%rd1+16], 1;
    atom.shared.add.u32 %r6, [s], 1;
    atom.global.exch.b32 %r7, [%rd1+20], 2;
    setp.eq.s32 %p1, %r7, 0;
    @%p1 bra DONE;
DONE:
    ret;
"#,
        );
        let k = program.kernel("k").unwrap();
        let red = reduction_atomics(k);
        let atoms: Vec<bool> = k.code.iter().zip(&red).filter(|(i, _)| matches!(i.op, Op::Atom { .. })).map(|(_, r)| *r).collect();
        // unused, only shuffled away, stored, `red`, shared (no RED form), read by a branch
        assert_eq!(atoms, [true, true, false, true, false, false]);
    }
}
