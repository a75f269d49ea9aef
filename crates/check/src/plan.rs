//! What the checkers need to know about each instruction, decoded once per
//! launch: memory-model classes (atomic, strong, volatile, release,
//! acquire), fences, exits, `.sync` forms, and each instruction's place
//! (PTX line, CUDA source line) for messages.

use warpsim_engine::{block, GlobalMemory, LaunchConfig};
use warpsim_ir::mma::{MbarKind, MmaOp, SyncKind};
use warpsim_ir::op_table::{AccessKind, Collective, FenceKind, MemOrder};
use warpsim_ir::{Inst, Kernel, Op, Program};

/// `fence.*` / `membar.*` (not proxy fences).
pub const F_FENCE: u16 = 1;
/// `exit` / `ret` from the kernel.
pub const F_EXIT: u16 = 1 << 1;
/// `atom` / `red`.
pub const F_ATOMIC: u16 = 1 << 2;
/// `ld`/`st` with `.relaxed`, `.acquire` or `.release`: morally strong, so
/// they do not race with atomics or other strong accesses.
pub const F_STRONG: u16 = 1 << 3;
/// `ld.volatile` / `st.volatile`.
pub const F_VOLATILE: u16 = 1 << 4;
/// `.release` / `.acq_rel` semantics.
pub const F_RELEASE: u16 = 1 << 5;
/// `.acquire` / `.acq_rel` semantics.
pub const F_ACQUIRE: u16 = 1 << 6;
/// A warp-synchronous instruction with a member mask (`*.sync`).
pub const F_SYNC: u16 = 1 << 7;
/// An atomic-class access that only writes (`mbarrier.init`).
pub const F_INIT: u16 = 1 << 8;
/// An asynchronous copy (`cp.async*`): its writes land when the copy
/// completes (a wait or an mbarrier), not in the issuing thread's order.
pub const F_ASYNC: u16 = 1 << 9;

/// Where an instruction is, in the user's terms.
#[derive(Clone, Debug)]
pub struct Place {
    pub ptx_line: u32,
    /// `file:line` from `.loc` (the file's base name).
    pub source: Option<String>,
    /// The opcode as written (`ld.volatile.shared.f32`).
    pub opcode: String,
}

/// The kernel's own file: the first located file that is not a header (a
/// CUDA header's intrinsic can come first, `__clang_cuda_builtin_vars.h`),
/// else the first located file.
fn home_file(program: &Program, files: impl Iterator<Item = u32>) -> Option<u32> {
    let is_header = |f: u32| {
        let name = program.files.get(&f).map_or("", String::as_str);
        let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
        base.starts_with("__clang_cuda") || [".h", ".hpp", ".cuh", ".hh", ".inc"].iter().any(|e| base.ends_with(e))
    };
    let mut first = None;
    for f in files {
        if !is_header(f) {
            return Some(f);
        }
        first = first.or(Some(f));
    }
    first
}

/// Per-launch facts shared by the checker's observers.
pub struct Plan {
    pub flags: Vec<u16>,
    pub places: Vec<Place>,
    pub warp_size: usize,
    pub block_dims: [u32; 3],
    pub grid: [u32; 3],
    pub nthreads: u32,
    pub shared_bytes: u32,
    pub local_bytes: u32,
    /// Global allocations: (name, base, size), for messages.
    pub allocations: Vec<(String, u64, u64)>,
    /// Whether every write to shared memory is seen: false when the kernel
    /// has tensor copies into shared memory (`cp.async.bulk.tensor`), whose
    /// bytes the engine does not report one by one; uninitialised-read
    /// checks of shared memory are then off.
    pub shared_writes_seen: bool,
}

impl Plan {
    pub fn new(program: &Program, kernel: &Kernel, cfg: &LaunchConfig, mem: &GlobalMemory) -> Plan {
        let mut flags = Vec::with_capacity(kernel.code.len());
        let mut places = Vec::with_capacity(kernel.code.len());
        // The user's line for each instruction: where an inlined function was
        // called (`inlined_at`, as nvcc writes it), else its own `.loc`; an
        // instruction located in another file than the kernel's (a header's
        // intrinsic, as clang writes it without `inlined_at`) takes the
        // latest line of the kernel's own file before it.
        let line_of = |pc: usize| kernel.info.get(pc).and_then(|i| i.inlined_at.filter(|l| l.line != 0).or(i.loc)).filter(|l| l.line != 0);
        let home = home_file(program, (0..kernel.code.len()).filter_map(line_of).map(|l| l.file));
        let mut last_home = None;
        for (pc, inst) in kernel.code.iter().enumerate() {
            let info = kernel.info.get(pc);
            let opcode = info.map(|i| i.opcode.clone()).unwrap_or_default();
            flags.push(classify(inst));
            let mut loc = line_of(pc);
            match loc {
                Some(l) if Some(l.file) == home => last_home = Some(l),
                Some(_) if last_home.is_some() => loc = last_home,
                _ => {}
            }
            places.push(Place {
                ptx_line: info.map_or(0, |i| i.ptx_line),
                source: program.place_of(loc, info.map_or(0, |i| i.ptx_line)).source(),
                opcode,
            });
        }
        let shared_writes_seen =
            !kernel.code.iter().any(|i| matches!(&i.op, Op::Mma(m) if matches!(**m, MmaOp::BulkTensor { load: true, .. })));
        let warp_size = cfg.warp_size.max(1) as usize;
        let nthreads: u32 = cfg.block.iter().product();
        Plan {
            flags,
            places,
            warp_size,
            block_dims: cfg.block,
            grid: cfg.grid,
            nthreads,
            shared_bytes: (kernel.dynamic_shared_offset + cfg.dynamic_shared_bytes).max(kernel.shared_static_bytes),
            local_bytes: kernel.local_bytes,
            allocations: mem.allocations().iter().map(|a| (a.name.clone(), a.base, a.size)).collect(),
            shared_writes_seen,
        }
    }

    pub fn place(&self, pc: u32) -> &Place {
        &self.places[(pc as usize).min(self.places.len().saturating_sub(1))]
    }

    /// Thread coordinates of linear thread `t` of a block.
    pub fn thread_coords(&self, t: u32) -> [u32; 3] {
        block::thread_coords(t, self.block_dims)
    }

    /// Block coordinates of linear block index `b`.
    pub fn block_coords(&self, b: u64) -> [u32; 3] {
        block::block_coords(b, self.grid)
    }

    /// Lanes of warp `w` that exist (a partial last warp has fewer).
    pub fn present(&self, w: u32) -> u64 {
        let first = w * self.warp_size as u32;
        let lanes = self.nthreads.saturating_sub(first).min(self.warp_size as u32);
        if lanes >= 64 {
            u64::MAX
        } else {
            (1u64 << lanes) - 1
        }
    }
}

/// The checker's flags of one instruction, from the op table and the
/// modifiers lowering kept.
fn classify(inst: &Inst) -> u16 {
    let meta = inst.meta;
    let release = matches!(meta.ordering, MemOrder::Release | MemOrder::AcqRel);
    let acquire = matches!(meta.ordering, MemOrder::Acquire | MemOrder::AcqRel);
    let sem = |f: &mut u16| {
        if release {
            *f |= F_RELEASE;
        }
        if acquire {
            *f |= F_ACQUIRE;
        }
    };
    let mut f = 0u16;
    if meta.fence == Some(FenceKind::Memory) {
        f |= F_FENCE | F_RELEASE | F_ACQUIRE;
    }
    if matches!(inst.op, Op::Exit) {
        f |= F_EXIT;
    }
    if let Some(c) = inst.op.collective() {
        match c {
            // `vote` without `.sync` (the pre-Volta form) has no member mask.
            Collective::Vote if matches!(inst.op, Op::Vote { .. }) && !meta.sync => {}
            Collective::Shuffle | Collective::Vote | Collective::WarpSync => f |= F_SYNC,
        }
    }
    if let Op::Mma(m) = &inst.op {
        return f | mma_flags(m);
    }
    match inst.op.mem_access().map(|a| a.kind) {
        Some(AccessKind::Atomic) => {
            f |= F_ATOMIC;
            sem(&mut f);
        }
        Some(AccessKind::Load | AccessKind::Store) => {
            if meta.ordering == MemOrder::Volatile {
                f |= F_VOLATILE;
            }
            if matches!(meta.ordering, MemOrder::Relaxed | MemOrder::Acquire | MemOrder::Release) {
                f |= F_STRONG;
                sem(&mut f);
            }
        }
        Some(AccessKind::AsyncCopy | AccessKind::Mbarrier) | None => {}
    }
    f
}

/// Flags of the tensor-core, asynchronous-copy and mbarrier forms:
/// mbarrier objects are atomics on the barrier's word whose arrivals release
/// (their default semantics) and whose waits acquire; `cp.async*` writes
/// land when the copy completes.
fn mma_flags(m: &MmaOp) -> u16 {
    match m {
        MmaOp::CpAsync { .. }
        | MmaOp::CpAsyncMbarrierArrive { .. }
        | MmaOp::Bulk { .. }
        | MmaOp::BulkTensor { .. }
        | MmaOp::Sync(SyncKind::CpAsyncCommit | SyncKind::CpAsyncWait | SyncKind::BulkCommit | SyncKind::BulkWait | SyncKind::Prefetch) => {
            F_ASYNC
        }
        MmaOp::Mbarrier { kind, .. } => {
            F_ATOMIC
                | match kind {
                    MbarKind::Init { .. } => F_INIT,
                    MbarKind::Arrive { .. } => F_RELEASE,
                    MbarKind::Wait { .. } => F_ACQUIRE,
                    MbarKind::Inval | MbarKind::ExpectTx { .. } | MbarKind::CompleteTx { .. } => 0,
                }
        }
        MmaOp::MbarPendingCount { .. } => F_ATOMIC,
        MmaOp::Mma(_)
        | MmaOp::WmmaLoad { .. }
        | MmaOp::WmmaStore { .. }
        | MmaOp::LdMatrix { .. }
        | MmaOp::StMatrix { .. }
        | MmaOp::MovMatrix { .. }
        | MmaOp::Wgmma(_)
        | MmaOp::Sync(SyncKind::WgmmaFence | SyncKind::WgmmaCommit | SyncKind::WgmmaWait | SyncKind::SetMaxNReg) => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn home_is_the_users_file_not_a_cuda_header() {
        // clang locates `threadIdx.x` in its header first, without `inlined_at`.
        let src = ".version 8.0\n.target sm_90\n.address_size 64\n\
            .file 1 \"/usr/lib/clang/19/include/__clang_cuda_builtin_vars.h\"\n.file 2 \"/home/u/k.cu\"\n\
            .visible .entry k(.param .u64 buf)\n{\n.reg .b32 %r<4>;\n\
            .loc 1 53 3\nmov.u32 %r1, %tid.x;\n.loc 2 7 5\nadd.u32 %r2, %r1, 1;\n.loc 1 53 3\nmov.u32 %r3, %tid.x;\nret;\n}\n";
        let prog = warpsim_ir::compile_kernel("t.ptx", src, "k").unwrap();
        let k = prog.kernel("k").unwrap();
        let plan = Plan::new(&prog, k, &LaunchConfig::default(), &GlobalMemory::new());
        let sources: Vec<_> = plan.places.iter().map(|p| p.source.clone()).collect();
        // The header line before the kernel's first own line stays where it is;
        // after it, header lines take the kernel's latest line.
        assert_eq!(sources[1].as_deref(), Some("k.cu:7"), "{sources:?}");
        assert_eq!(sources[2].as_deref(), Some("k.cu:7"), "{sources:?}");
    }
}
