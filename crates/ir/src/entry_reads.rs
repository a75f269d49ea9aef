//! Registers a thread may read before it writes them.
//!
//! The engine runs block after block in the same warp slots. A register that
//! every path from the kernel's entry writes before reading it needs no reset
//! between blocks: whatever the last block left there is overwritten before
//! any lane sees it. So a warp slot resets only the registers found here, to
//! their initial values (zero, or a constant's), instead of copying the whole
//! register file.
//!
//! The analysis is per thread, as PTX semantics are: a forward "definitely
//! written" dataflow over [`crate::cfg::successors`], where a guarded write
//! does not count (the lanes it skips keep the old value). Lanes also read
//! each other's registers in warp collectives (`shfl` reads a source lane
//! that may not have reached its write) and tensor-core ops (fragments), so
//! every register those read is reset too. Kernels with calls of their own
//! functions (a frame per call) are not analysed: everything is reset.

use crate::cfg::successors;
use crate::inst::{Bank, RegRef};
use crate::kernel::Kernel;
use crate::op_table::RegRole;

/// What a warp slot must reset before it runs a new block's warp.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EntryReads {
    /// Every register (the analysis did not apply).
    All,
    /// These 32- and 64-bit register slots, ascending; the rest are written before read.
    Slots { r32: Vec<u32>, r64: Vec<u32> },
}

/// Beyond this many bits of dataflow state (instructions × registers), reset everything.
const MAX_STATE_BITS: usize = 1 << 26;

/// The registers of `k` some thread may read before writing them, among
/// those the kernel writes at all (one it never writes keeps its initial
/// value: constants, symbol addresses, special registers set at warp start).
pub fn entry_reads(k: &Kernel) -> EntryReads {
    let code = &k.code;
    let (n32, n) = (k.n32 as usize, k.n32 as usize + k.n64 as usize);
    let words = n.div_ceil(64).max(1);
    if !k.functions.is_empty() || k.frame_regs.is_some() || code.len().saturating_mul(words * 64) > MAX_STATE_BITS {
        return EntryReads::All;
    }
    let index = |r: RegRef| -> Option<usize> {
        let i = match r.bank {
            Bank::R32 => r.slot as usize,
            Bank::R64 => n32 + r.slot as usize,
            Bank::Pred => return None,
        };
        (i < n).then_some(i)
    };
    let set = |row: &mut [u64], i: usize| row[i / 64] |= 1 << (i % 64);
    let has = |row: &[u64], i: usize| row[i / 64] >> (i % 64) & 1 == 1;

    let mut written = vec![0u64; words];
    let mut reset = vec![0u64; words];
    // Per instruction, the registers it writes whatever its guard (none when guarded).
    let mut kills = vec![0u64; words * code.len()];
    for (pc, inst) in code.iter().enumerate() {
        let cross_lane = inst.op.reads_other_lanes();
        inst.op.visit_regs(|role, r| {
            let Some(i) = index(r) else { return };
            match role {
                RegRole::Write => {
                    set(&mut written, i);
                    if inst.guard.is_none() {
                        set(&mut kills[pc * words..][..words], i);
                    }
                }
                RegRole::Read if cross_lane => set(&mut reset, i),
                RegRole::Read => {}
            }
        });
    }

    // `ins[pc]`: registers written on every path from the entry to `pc`
    // (all ones until a path reaches it); the entry starts with none.
    let mut ins = vec![u64::MAX; words * code.len()];
    if !code.is_empty() {
        ins[..words].fill(0);
    }
    let mut out = vec![0u64; words];
    let mut changed = true;
    while changed {
        changed = false;
        for pc in 0..code.len() {
            for w in 0..words {
                out[w] = ins[pc * words + w] | kills[pc * words + w];
            }
            for s in successors(code, pc) {
                if s >= code.len() {
                    continue;
                }
                for w in 0..words {
                    let v = ins[s * words + w] & out[w];
                    changed |= v != ins[s * words + w];
                    ins[s * words + w] = v;
                }
            }
        }
    }
    for (pc, inst) in code.iter().enumerate() {
        let row = &ins[pc * words..][..words];
        inst.op.visit_regs(|role, r| {
            if let (RegRole::Read, Some(i)) = (role, index(r)) {
                if !has(row, i) {
                    set(&mut reset, i);
                }
            }
        });
    }
    let slots =
        |lo: usize, hi: usize| -> Vec<u32> { (lo..hi).filter(|&i| has(&reset, i) && has(&written, i)).map(|i| (i - lo) as u32).collect() };
    EntryReads::Slots { r32: slots(0, n32), r64: slots(n32, n) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How many 32- and 64-bit registers a kernel of `body` resets (`usize::MAX` each: all).
    fn resets(body: &str) -> (usize, usize) {
        let regs = ".reg .pred %p<2>;\n.reg .b32 %r<4>;\n.reg .b64 %rd<4>;";
        let src = format!(".version 7.8\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 p)\n{{\n{regs}\n{body}\n}}\n");
        let prog = crate::compile_kernel("t.ptx", &src, "k").expect("compiles");
        match entry_reads(prog.kernel("k").unwrap()) {
            EntryReads::All => (usize::MAX, usize::MAX),
            EntryReads::Slots { r32, r64 } => (r32.len(), r64.len()),
        }
    }

    #[test]
    fn straight_line_code_writes_before_reading() {
        let body = "ld.param.u64 %rd1, [p];\nmov.u32 %r1, %tid.x;\nadd.s32 %r2, %r1, 1;\nmul.wide.s32 %rd2, %r2, 4;\nadd.s64 %rd3, %rd1, %rd2;\nst.global.u32 [%rd3], %r2;\nret;";
        assert_eq!(resets(body), (0, 0));
    }

    #[test]
    fn a_read_on_some_path_before_any_write_is_reset() {
        // %r2 is written only when %p1 holds, then read on both paths: a branch
        // around the write, or a guarded write (which does not count as written either).
        for write in ["@%p1 bra L;\nmov.u32 %r2, 7;\nL:", "@%p1 mov.u32 %r2, 7;"] {
            let body = format!("mov.u32 %r1, %tid.x;\nsetp.eq.s32 %p1, %r1, 0;\n{write}\nadd.s32 %r3, %r2, 1;\nld.param.u64 %rd1, [p];\nst.global.u32 [%rd1], %r3;\nret;");
            assert_eq!(resets(&body), (1, 0), "{write}");
        }
    }

    #[test]
    fn a_loop_carried_value_written_before_the_loop_is_not_reset() {
        let count_up =
            "L:\nadd.s32 %r1, %r1, 1;\nsetp.lt.s32 %p1, %r1, 10;\n@%p1 bra L;\nld.param.u64 %rd1, [p];\nst.global.u32 [%rd1], %r1;\nret;";
        assert_eq!(resets(&format!("mov.u32 %r1, 0;\n{count_up}")), (0, 0));
        // Without the write before the loop, the first iteration reads it.
        assert_eq!(resets(count_up), (1, 0));
    }

    #[test]
    fn shuffle_sources_are_reset_as_other_lanes_read_them() {
        let body =
            "mov.u32 %r1, %tid.x;\nshfl.sync.idx.b32 %r2, %r1, 0, 31, -1;\nld.param.u64 %rd1, [p];\nst.global.u32 [%rd1], %r2;\nret;";
        assert_eq!(resets(body), (1, 0));
    }

    /// `Kernel::lane_private`: set unless some instruction reads another lane's
    /// registers (a collective, a tensor-core op, a call).
    #[test]
    fn lanes_are_private_without_collectives() {
        let private = |body: &str| {
            let regs = ".reg .pred %p<2>;\n.reg .b32 %r<4>;\n.reg .b64 %rd<4>;";
            let src =
                format!(".version 7.8\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 p)\n{{\n{regs}\n{body}\nret;\n}}\n");
            crate::compile_kernel("t.ptx", &src, "k").expect("compiles").kernel("k").unwrap().lane_private
        };
        assert!(private("mov.u32 %r1, %tid.x;\nadd.s32 %r2, %r1, 1;"));
        assert!(!private("mov.u32 %r1, %tid.x;\nshfl.sync.idx.b32 %r2, %r1, 0, 31, -1;"));
        assert!(!private("setp.eq.s32 %p1, %r1, 0;\nvote.sync.ballot.b32 %r2, %p1, -1;"));
        assert!(!private("activemask.b32 %r1;"));
    }
}
