//! Register columns for the engine: PTX registers whose values are never
//! live at the same time share one column.
//!
//! Compilers write PTX with a new virtual register for nearly every value, so
//! a kernel declares many more registers than a thread ever holds at once
//! (an unrolled GEMM declares hundreds of `%f`, holding a few dozen). The
//! engine keeps a lane column per register per warp, and a timing launch
//! holds every resident warp's columns together: the columns are most of
//! what such a launch touches. Here a kernel gets a copy whose registers are
//! renumbered onto as few columns as their live ranges allow; only the
//! engine runs it ([`Kernel::for_engine`](crate::Kernel::for_engine)). The
//! timing model's scoreboard, the register estimate, metrics and the checker
//! keep the PTX numbering of the original, so renaming cannot add a
//! dependence or change a count.
//!
//! The analysis is per thread, as PTX semantics are: a backward liveness
//! over [`crate::cfg::successors`], where a guarded write does not kill (the
//! lanes it skips keep the old value). Two registers interfere when one is
//! written where the other is live afterwards, when one instruction writes
//! both or reads one and writes the other, or when both are live at the
//! kernel's entry (their initial values differ). Sharing is sound under SIMT
//! execution because the engine writes a register only for the lanes that
//! execute the write: a lane waiting on the other side of a branch keeps
//! its values, and each lane sees its own thread's sequence of values.
//!
//! Not packed: registers read by instructions that read other lanes
//! (shuffles, votes, matches: an undefined read of a lane that has not
//! written keeps seeing what it saw before), every register a tensor-core,
//! matrix-movement, asynchronous-copy or mbarrier op reads or writes
//! (fragments spread over lanes and warps; each keeps a column of its own),
//! and whole kernels with calls of their own functions (a frame per call).

use crate::dataflow::{bits, has, set, RegFlow};
use crate::inst::{Bank, Op};
use crate::kernel::Kernel;

/// Beyond this many registers (the interference matrix), the kernel is not packed.
const MAX_REGS: usize = 1 << 13;

/// `k` with its 32- and 64-bit registers packed onto fewer columns, or
/// `None` where packing does not apply or would save no column.
pub fn pack_registers(k: &Kernel) -> Option<Kernel> {
    let code = &k.code;
    let n = k.n32 as usize + k.n64 as usize;
    if n == 0 || n > MAX_REGS || code.iter().any(|i| matches!(i.op, Op::Call(_))) {
        return None;
    }
    let f = RegFlow::new(k)?;
    let (n32, words) = (f.n32(), f.words());
    // Registers other lanes read, and tensor-core results: a column each.
    let pinned: Vec<u64> = f.cross_lane_reads.iter().zip(&f.tensor_writes).map(|(a, b)| a | b).collect();
    let live_in = f.live_in();

    // Interference, one row per register (both directions set).
    let mut clash = vec![0u64; words * n];
    let edge = |clash: &mut [u64], a: usize, b: usize| {
        if a != b {
            set(&mut clash[a * words..][..words], b);
            set(&mut clash[b * words..][..words], a);
        }
    };
    let mut out = vec![0u64; words];
    for pc in 0..code.len() {
        let d = f.defs(pc);
        if d.iter().all(|&x| x == 0) {
            continue;
        }
        // Live after this instruction, and its own reads and writes.
        f.live_out(&live_in, pc, &mut out);
        for ((o, &u), &x) in out.iter_mut().zip(f.uses(pc)).zip(d) {
            *o |= u | x;
        }
        let others = bits(&out);
        for a in bits(d) {
            for &b in &others {
                edge(&mut clash, a, b);
            }
        }
    }
    if let Some(entry) = live_in.get(..words) {
        let at_entry = bits(entry);
        for (x, &a) in at_entry.iter().enumerate() {
            for &b in &at_entry[x + 1..] {
                edge(&mut clash, a, b);
            }
        }
    }

    // Colour greedily, pinned registers first (a column each), then in
    // register order (close to program order in compiler output).
    const UNSET: u32 = u32::MAX;
    let mut column = vec![UNSET; n];
    let mut columns = [0u32; 2];
    let bank_of = |i: usize| usize::from(i >= n32);
    for i in (0..n).filter(|&i| has(&pinned, i)) {
        column[i] = columns[bank_of(i)];
        columns[bank_of(i)] += 1;
    }
    let own = columns;
    let mut taken: Vec<bool> = Vec::new();
    for i in (0..n).filter(|&i| has(&f.named, i) && !has(&pinned, i)) {
        taken.clear();
        taken.resize(columns[bank_of(i)] as usize + 1, false);
        taken[..own[bank_of(i)] as usize].fill(true);
        for j in bits(&clash[i * words..][..words]) {
            if bank_of(j) == bank_of(i) && column[j] != UNSET {
                taken[column[j] as usize] = true;
            }
        }
        let c = taken.iter().position(|&t| !t).unwrap_or(taken.len()) as u32;
        column[i] = c;
        columns[bank_of(i)] = columns[bank_of(i)].max(c + 1);
    }
    if columns[0] as usize * 4 + columns[1] as usize * 8 >= k.n32 as usize * 4 + k.n64 as usize * 8 {
        return None;
    }
    // Registers no instruction names keep no column; any slot will do.
    let map = |bank: Bank, slot: u32| -> u32 {
        match f.index(bank, slot) {
            Some(i) if column[i] != UNSET => column[i],
            Some(_) => 0,
            None => slot,
        }
    };

    // Each slot's new number from the original op, so that a field visited
    // twice (wgmma's accumulators, read then written) is renamed once.
    let mut p = k.clone();
    let mut renamed = Vec::new();
    for (inst, orig) in p.code.iter_mut().zip(&k.code) {
        renamed.clear();
        orig.op.visit_slots(|_, bank, &slot| renamed.push(map(bank, slot)));
        let mut next = renamed.iter();
        inst.op.visit_slots_mut(|_, _, slot| {
            if let Some(&s) = next.next() {
                *slot = s;
            }
        });
    }
    // Initial values (constants, symbol addresses, special registers) only
    // of the registers live at entry: one column holds one of those.
    let live_at_entry = |bank: Bank, slot: u32| f.index(bank, slot).is_some_and(|i| live_in.get(..words).is_some_and(|e| has(e, i)));
    p.const32 = k.const32.iter().filter(|&&(s, _)| live_at_entry(Bank::R32, s)).map(|&(s, v)| (map(Bank::R32, s), v)).collect();
    p.const64 = k.const64.iter().filter(|&&(s, _)| live_at_entry(Bank::R64, s)).map(|&(s, v)| (map(Bank::R64, s), v)).collect();
    p.symbol_addrs =
        k.symbol_addrs.iter().filter(|(s, _)| live_at_entry(Bank::R64, *s)).map(|(s, name)| (map(Bank::R64, *s), name.clone())).collect();
    p.specials = k
        .specials
        .iter()
        .filter(|(r, _)| r.bank == Bank::Pred || live_at_entry(r.bank, r.slot))
        .map(|&(mut r, sp)| {
            r.slot = map(r.bank, r.slot);
            (r, sp)
        })
        .collect();
    p.n32 = columns[0];
    p.n64 = columns[1];
    p.packed = None;
    p.entry_reads = crate::entry_reads::entry_reads(&p);
    Some(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::op_table::RegRole;

    fn kernel(body: &str, regs: &str) -> Kernel {
        let src = format!(".version 7.8\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 p)\n{{\n{regs}\n{body}\n}}\n");
        let prog = crate::compile_kernel("t.ptx", &src, "k").expect("compiles");
        prog.kernel("k").unwrap().clone()
    }

    /// The 32-bit registers instruction `pc` of `k` reads and writes.
    fn slots32(k: &Kernel, pc: usize) -> (Vec<u32>, Vec<u32>) {
        let (mut r, mut w) = (Vec::new(), Vec::new());
        k.code[pc].op.visit_slots(|role, bank, &s| match (bank, role) {
            (Bank::R32, RegRole::Read) => r.push(s),
            (Bank::R32, RegRole::Write) => w.push(s),
            _ => {}
        });
        (r, w)
    }

    /// The pcs of the instructions whose opcode starts with `prefix`.
    fn pcs(k: &Kernel, prefix: &str) -> Vec<usize> {
        (0..k.code.len()).filter(|&pc| k.info[pc].opcode.starts_with(prefix)).collect()
    }

    #[test]
    fn a_chain_of_temporaries_shares_a_few_columns() {
        let body = (2..40).map(|i| format!("add.u32 %r{i}, %r{}, %r1;\n", i - 1)).collect::<String>();
        let k = kernel(
            &format!("mov.u32 %r1, %tid.x;\n{body}ld.param.u64 %rd1, [p];\nst.global.u32 [%rd1], %r39;\nret;"),
            ".reg .b32 %r<40>;\n.reg .b64 %rd<2>;",
        );
        let p = k.packed.as_deref().expect("packs");
        // `%r1`, the chain's last value and the next: three columns.
        assert!(k.n32 >= 40);
        assert_eq!(p.n32, 3);
    }

    #[test]
    fn values_live_together_keep_their_own_columns() {
        let defs = (2..10).map(|i| format!("mul.lo.u32 %r{i}, %r1, {i};\n")).collect::<String>();
        let sum = (3..10).map(|i| format!("add.u32 %r2, %r2, %r{i};\n")).collect::<String>();
        let k = kernel(
            &format!("mov.u32 %r1, %tid.x;\n{defs}{sum}ld.param.u64 %rd1, [p];\nst.global.u32 [%rd1], %r2;\nret;"),
            ".reg .b32 %r<10>;\n.reg .b64 %rd<2>;",
        );
        let p = k.packed.as_deref().expect("packs");
        // `%r2..%r9` are all live after the last `mul`: eight distinct columns.
        let mut cols: Vec<u32> = pcs(p, "mul.lo").into_iter().flat_map(|pc| slots32(p, pc).1).collect();
        assert_eq!(cols.len(), 8);
        cols.sort_unstable();
        cols.dedup();
        assert_eq!(cols.len(), 8, "{cols:?}");
    }

    #[test]
    fn shuffle_sources_keep_a_column_of_their_own() {
        let body = "mov.u32 %r1, %tid.x;\nadd.u32 %r2, %r1, 1;\nshfl.sync.bfly.b32 %r3, %r2, 1, 31, -1;\nadd.u32 %r4, %r3, 2;\nadd.u32 %r5, %r4, 3;\nld.param.u64 %rd1, [p];\nst.global.u32 [%rd1], %r5;\nret;";
        let k = kernel(body, ".reg .b32 %r<6>;\n.reg .b64 %rd<2>;");
        let p = k.packed.as_deref().expect("packs");
        let shfl = pcs(p, "shfl")[0];
        let src = slots32(p, shfl).0[0];
        // Only the `add` that makes the source writes its column.
        let writers: Vec<usize> = (0..p.code.len()).filter(|&pc| slots32(p, pc).1.contains(&src)).collect();
        assert_eq!(writers, vec![shfl - 1]);
    }

    #[test]
    fn tensor_core_operands_are_written_only_where_they_were() {
        let body = "mov.u32 %r1, %tid.x;\nadd.u32 %r2, %r1, 1;\nadd.u32 %r3, %r2, 2;\nmul.lo.u32 %r4, %r3, 3;\n\
                    mov.b32 %f5, 0f3F800000;\nmov.b32 %f6, %f5;\nmov.b32 %f7, %f5;\nmov.b32 %f8, %f5;\n\
                    mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%f1,%f2,%f3,%f4}, {%r2,%r3}, {%r4}, {%f5,%f6,%f7,%f8};\n\
                    add.f32 %f9, %f1, %f2;\nadd.f32 %f10, %f9, %f3;\nadd.f32 %f11, %f10, %f4;\n\
                    ld.param.u64 %rd1, [p];\nst.global.f32 [%rd1], %f11;\nret;";
        let k = kernel(body, ".reg .b32 %r<6>;\n.reg .f32 %f<12>;\n.reg .b64 %rd<2>;");
        let p = k.packed.as_deref().expect("packs");
        let mma = pcs(p, "mma")[0];
        let (reads, writes) = slots32(p, mma);
        for col in reads.iter().chain(&writes) {
            // Where the packed kernel writes this column, the original wrote the same register.
            let before = (0..k.code.len()).filter(|&pc| slots32(p, pc).1.contains(col)).collect::<Vec<_>>();
            let orig = slots32(&k, mma);
            let i = reads.iter().chain(&writes).position(|c| c == col).unwrap();
            let reg = *orig.0.iter().chain(&orig.1).nth(i).unwrap();
            let writers = (0..k.code.len()).filter(|&pc| slots32(&k, pc).1.contains(&reg)).collect::<Vec<_>>();
            assert_eq!(before, writers, "column {col}");
        }
    }

    #[test]
    fn kernels_with_calls_are_not_packed() {
        // Recursive, so lowering cannot inline it.
        let src = ".version 7.8\n.target sm_90\n.address_size 64\n.func (.reg .b32 r) f(.reg .b32 a)\n{\n.reg .pred q;\n.reg .b32 t;\nsetp.eq.u32 q, a, 0;\n@q bra Z;\n\
                   sub.u32 t, a, 1;\ncall (r), f, (t);\nret;\nZ:\nmov.u32 r, 0;\nret;\n}\n\
                   .visible .entry k(.param .u64 p)\n{\n.reg .b32 %r<4>;\n.reg .b64 %rd<2>;\nmov.u32 %r1, %tid.x;\nadd.u32 %r2, %r1, 1;\n\
                   call (%r3), f, (%r2);\nld.param.u64 %rd1, [p];\nst.global.u32 [%rd1], %r3;\nret;\n}\n";
        let prog = crate::compile_kernel("t.ptx", src, "k").expect("compiles");
        let k = prog.kernel("k").unwrap();
        assert!(k.code.iter().any(|i| matches!(i.op, Op::Call(_))), "the call stays a call");
        assert!(k.packed.is_none());
    }
}
