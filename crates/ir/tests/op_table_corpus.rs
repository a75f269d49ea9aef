//! The op table on the corpus kernels: every register an op names is in its
//! kernel's register file, no op writes a constant register, per-lane memory
//! ops describe their access, branch targets are in the code, and each
//! `.pragma "nounroll"` of the source is recorded on exactly one instruction.

use std::path::PathBuf;
use warpsim_ir::op_table::{Flow, LatencyClass, RegRole};
use warpsim_ir::{Bank, RegRef};

#[test]
fn the_table_describes_the_corpus_consistently() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus");
    let src = std::fs::read_to_string(dir.join("kernels.ptx")).expect("shared/corpus/kernels.ptx");
    let prog = warpsim_ir::compile_module("kernels.ptx", &src).unwrap_or_else(|e| panic!("{e}"));
    let mut nounroll = 0;
    let mut insts = 0;
    for k in &prog.kernels {
        let in_file = |r: RegRef| match r.bank {
            Bank::R32 => r.slot < k.n32,
            Bank::R64 => r.slot < k.n64,
            Bank::Pred => r.slot < k.npred,
        };
        let constant = |r: RegRef| match r.bank {
            Bank::R32 => k.const32.iter().any(|&(s, _)| s == r.slot),
            Bank::R64 => k.const64.iter().any(|&(s, _)| s == r.slot) || k.symbol_addrs.iter().any(|(s, _)| *s == r.slot),
            Bank::Pred => false,
        };
        for (pc, inst) in k.code.iter().enumerate() {
            insts += 1;
            inst.visit_regs(|role, r| {
                assert!(in_file(r), "{} pc {pc}: {r:?} outside the register file", k.name);
                if role == RegRole::Write {
                    assert!(!constant(r), "{} pc {pc}: writes constant register {r:?}", k.name);
                }
            });
            if let Some((space, _)) = inst.op.lane_address() {
                let a = inst.op.mem_access().expect("per-lane memory ops describe their access");
                assert_eq!(a.space, space);
                assert!(a.lane_bytes > 0);
                assert_eq!(inst.op.latency_class(), LatencyClass::Mem);
            }
            if let Flow::Branch { targets, reconv } = inst.op.flow() {
                assert!(targets.iter().all(|&t| (t as usize) < k.code.len()));
                assert!(reconv as usize <= k.code.len() || reconv == warpsim_ir::cfg::NO_RECONV);
            }
            nounroll += usize::from(inst.meta.nounroll);
        }
    }
    assert!(insts > 100);
    assert_eq!(nounroll, src.matches(".pragma \"nounroll\"").count());
}
