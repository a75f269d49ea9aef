//! Every kernel of the corpus lowers, and branches get reconvergence points.

use std::path::PathBuf;
use warpsim_ir::{cfg::NO_RECONV, Op};

#[test]
fn corpus_kernels_lower() {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/kernels.ptx");
    let src = std::fs::read_to_string(&p).expect("../shared/corpus/kernels.ptx");
    let prog = warpsim_ir::compile_module("kernels.ptx", &src).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(prog.kernels.len(), 19);
    let k = prog.kernel("gt_block_sum_smem").unwrap();
    assert_eq!(k.shared_static_bytes, 1024);
    assert_eq!(k.params.len(), 2);
    // if-then branches reconverge at their target label.
    let mut n = 0;
    for inst in &k.code {
        if let Op::Bra { target, reconv } = inst.op {
            if inst.guard.is_some() {
                assert_eq!(target, reconv);
                assert_ne!(reconv, NO_RECONV);
                n += 1;
            }
        }
    }
    assert!(n >= 7);
}

#[test]
fn unsupported_instruction_is_named_with_its_line() {
    let src = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n  .reg .b32 %r<2>;\n  vabsdiff.u32.u32.u32 %r0, %r0, %r1;\n  ret;\n}\n";
    let e = warpsim_ir::compile_kernel("t.ptx", src, "k").unwrap_err().to_string();
    assert!(e.starts_with("t.ptx:7:3: error: unsupported instruction `vabsdiff.u32.u32.u32`"), "{e}");
}
