use super::*;
use crate::compile_module;

const HEAD: &str = ".version 8.0\n.target sm_80\n.address_size 64\n";

fn kernel(body: &str) -> crate::Kernel {
    let src = format!("{HEAD}.visible .entry k(.param .u64 p)\n{{\n.reg .b32 %r<8>;\n.reg .b64 %rd<8>;\n.reg .pred %p<4>;\n{body}\n}}\n");
    compile_module("t.ptx", &src).unwrap().kernels.remove(0)
}

#[test]
fn nounroll_is_recorded_on_the_next_instruction() {
    let k = kernel("mov.u32 %r1, 0;\n$L1:\n.pragma \"nounroll\";\nadd.s32 %r1, %r1, 1;\nsetp.lt.s32 %p1, %r1, 10;\n@%p1 bra $L1;\nret;");
    let flagged: Vec<bool> = k.code.iter().map(|i| i.meta.nounroll).collect();
    assert_eq!(flagged.iter().filter(|&&f| f).count(), 1, "{flagged:?}");
    assert!(matches!(k.code.iter().find(|i| i.meta.nounroll).unwrap().op, Op::Int { .. } | Op::Bin32 { .. }));
    let k = kernel("mov.u32 %r1, 0;\n// nounroll in a comment\nret;");
    assert!(k.code.iter().all(|i| !i.meta.nounroll));
}

#[test]
fn modifiers_are_kept() {
    let k = kernel(
        "ld.param.u64 %rd1, [p];\nld.global.cg.u32 %r1, [%rd1];\nld.relaxed.gpu.global.u32 %r2, [%rd1];\n\
         st.volatile.global.u32 [%rd1], %r1;\natom.acq_rel.sys.global.add.u32 %r3, [%rd1], 1;\n\
         fence.proxy.async;\nmembar.gl;\nfence.acq_rel.cta;\nnanosleep.u32 10;\nvote.sync.any.pred %p1, %p2, -1;\nret;",
    );
    let m: Vec<InstMeta> = k.code.iter().map(|i| i.meta).collect();
    assert_eq!(m[1].cache, Some(CacheOp::Cg));
    assert_eq!((m[2].ordering, m[2].scope), (MemOrder::Relaxed, Some(MemScope::Gpu)));
    assert_eq!(m[3].ordering, MemOrder::Volatile);
    assert_eq!((m[4].ordering, m[4].scope), (MemOrder::AcqRel, Some(MemScope::Sys)));
    assert_eq!(m[5].fence, Some(FenceKind::Proxy));
    assert_eq!(m[6].fence, Some(FenceKind::Memory));
    assert_eq!(m[7].fence, Some(FenceKind::Memory));
    assert_eq!(m[8].fence, Some(FenceKind::NoOrdering));
    assert!(m[9].sync && m[9].fence.is_none());
}

#[test]
fn collective_set() {
    let k = kernel(
        "activemask.b32 %r1;\nshfl.sync.bfly.b32 %r2, %r1, 1, 31, -1;\nvote.sync.ballot.b32 %r3, %p1, -1;\n\
         redux.sync.add.u32 %r4, %r1, -1;\nbar.warp.sync -1;\nadd.s32 %r5, %r1, %r2;\nbar.sync 0;\nret;",
    );
    let c: Vec<bool> = k.code.iter().map(|i| i.op.is_warp_collective()).collect();
    assert_eq!(c, [true, true, true, true, true, false, false, false, false]);
}

#[test]
fn registers_and_memory_of_a_store_and_an_atomic() {
    let k = kernel("ld.param.u64 %rd1, [p];\nst.global.v2.u32 [%rd1+8], {%r1, %r2};\natom.global.add.u32 %r3, [%rd1], %r4;\nret;");
    let mut reads = Vec::new();
    k.code[1].op.for_each_read(|r| reads.push(r));
    assert_eq!(reads.len(), 3);
    let mut writes = 0;
    k.code[1].op.for_each_write(|_| writes += 1);
    assert_eq!(writes, 0);
    let st = k.code[1].op.mem_access().unwrap();
    assert_eq!((st.kind, st.space, st.lane_bytes), (AccessKind::Store, Space::Global, 8));
    let at = k.code[2].op.mem_access().unwrap();
    assert_eq!((at.kind, at.lane_bytes), (AccessKind::Atomic, 4));
    assert_eq!(k.code[2].op.latency_class(), LatencyClass::Mem);
    assert_eq!(LatencyClass::Mem.unit(), Unit::Lsu);
}
