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

use crate::dataflow::{has, RegFlow};
use crate::kernel::Kernel;

/// What a warp slot must reset before it runs a new block's warp.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EntryReads {
    /// Every register (the analysis did not apply).
    All,
    /// These 32- and 64-bit register slots, ascending; the rest are written before read.
    Slots { r32: Vec<u32>, r64: Vec<u32> },
}

/// The registers of `k` some thread may read before writing them, among
/// those the kernel writes at all (one it never writes keeps its initial
/// value: constants, symbol addresses, special registers set at warp start).
pub fn entry_reads(k: &Kernel) -> EntryReads {
    let Some(f) = RegFlow::new(k) else { return EntryReads::All };
    // Read where some path has not written them, or read from other lanes.
    let written_before = f.written_before();
    let mut reset = f.cross_lane_reads.clone();
    for pc in 0..k.code.len() {
        for ((r, &u), &w) in reset.iter_mut().zip(f.uses(pc)).zip(f.row(&written_before, pc)) {
            *r |= u & !w;
        }
    }
    let slots = |lo: usize, hi: usize| -> Vec<u32> {
        (lo..hi).filter(|&i| has(&reset, i) && has(&f.written, i)).map(|i| (i - lo) as u32).collect()
    };
    EntryReads::Slots { r32: slots(0, f.n32()), r64: slots(f.n32(), f.len()) }
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
