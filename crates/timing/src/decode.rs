//! What the timing model needs to know about each instruction before it
//! runs: the registers it reads and writes (for the scoreboard), the pipe it
//! issues to and how long it holds it, its latency, which scoreboard waits
//! on it, and how many SASS issue slots it stands for.
//!
//! The GPU runs SASS, warpsim runs PTX. The compiler model here follows
//! ptxas where the corpus shows it matters:
//!
//! * moves, kernel-parameter loads and repeated loads fold away (the rule of
//!   `warpsim_metrics::sass`), as do register-pair packing, truncation and
//!   `cvta` to the global window: they take no issue slot, and their results
//!   are ready when their sources are;
//! * special registers held in the constant bank (`%ntid`, `%nctaid`, ...)
//!   are operands, the others are read with `S2R` (variable latency);
//! * 64-bit integer adds, logic and shifts are two instructions, 64-bit
//!   multiplies three, and IEEE division, square root and reciprocal, and
//!   integer division, are short instruction sequences;
//! * innermost loops of one basic block without `.pragma "nounroll"` are
//!   unrolled until the body holds about `unroll_budget` (16) instructions,
//!   at most `loop_unroll` (4) times: their loop control (the induction
//!   steps, compare and branch that only steer the loop) issues once per
//!   unrolled iteration. The corpus shows it: `gt_div_warp_split` runs 1254
//!   SASS instructions per warp where the PTX has 1817 (1024 FMAs, and loop
//!   control every 4 of them); 1241 with this rule. `gt_compute_bound`'s
//!   8-FMA body is unrolled twice (616 SASS per warp; 608 here);
//!   `gt_smem_stride`'s 17-instruction body not at all (1409; 1466 here).

use crate::preset::TimingGpu;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use warpsim_ir::op_table::{AccessKind, CacheOp, Flow, LatencyClass as L, MemAccess, MemOrder, RegRole};
use warpsim_ir::{AtomOp, Bank, Bin32, Bin64, Kernel, Op, RegRef, Space, Special};
use warpsim_metrics::sass::{folded_instructions, Folded};
use warpsim_numerics::int::IntOp;

/// Pipes of a sub-partition (each issues one warp instruction per
/// `occupancy` cycles).
pub const PIPE_FP32: u8 = 0;
pub const PIPE_INT: u8 = 1;
pub const PIPE_IMAD: u8 = 2;
pub const PIPE_FP64: u8 = 3;
pub const PIPE_SFU: u8 = 4;
pub const PIPE_CONV: u8 = 5;
pub const PIPE_TENSOR: u8 = 6;
pub const NPIPES: usize = 7;
/// No pipe (branches, barriers, S2R, ...).
pub const PIPE_NONE: u8 = 255;

/// Which scoreboard a consumer waits on.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Sb {
    /// Fixed latency (the compiler's stall counts): `wait`.
    Fixed = 0,
    /// MIO results (shared memory, shuffles, MUFU, S2R): `short_scoreboard`.
    Short = 1,
    /// L1TEX results (global, local): `long_scoreboard`.
    Long = 2,
}

/// What the instruction does, as far as timing goes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Class {
    /// Folded away: no issue slot, results ready with the sources.
    Free,
    /// Fixed-latency math on a pipe.
    Math,
    /// Variable latency outside the pipes (S2R, MUFU through MIO, ...).
    Mio,
    /// Shuffle, redux, match: a shared-memory-pipe wavefront.
    Shfl,
    /// Load/store/atomic: the space decides the path at run time.
    Mem,
    Branch,
    Barrier,
    Exit,
    /// `membar`/`fence`: waits for the warp's stores.
    Fence,
    /// An instruction this model does not know (new opcodes): it waits for
    /// all of the warp's results and holds the tensor pipe.
    Unknown,
}

/// One instruction, decoded for the timing model.
#[derive(Clone, Debug)]
pub struct TInst {
    pub class: Class,
    pub pipe: u8,
    /// A second pipe it may issue to when `pipe` is busy: ptxas turns
    /// integer adds, shifts and moves into `IMAD.IADD`/`IMAD.SHL`/`IMAD.MOV`
    /// on the FMA pipe to balance the two.
    pub alt_pipe: u8,
    /// Cycles the pipe stays busy.
    pub occupancy: u16,
    /// SASS instructions it stands for (issue cycles).
    pub slots: u16,
    pub latency: u32,
    pub sb: Sb,
    /// Registers read (scoreboard ids; constants left out).
    pub srcs: Vec<u32>,
    /// Registers written.
    pub dsts: Vec<u32>,
    /// Loop control of the single-block loop whose back edge is at this pc.
    pub loop_ctl: Option<u32>,
    /// How many times the compiler model unrolls that loop.
    pub unroll: u32,
    /// This is a loop back edge (counts iterations).
    pub back_edge: bool,
    /// A folded repeated load: its results are those of the load at this pc.
    pub alias_of: Option<u32>,
    /// Global loads with `.cg`/`.cs`/`.cv`/`.volatile`: not cached in L1.
    pub bypass_l1: bool,
    /// The op table's kind of memory access, if it accesses memory.
    pub access: Option<AccessKind>,
    /// The issue queue it waits in: [`QUEUE_NONE`], [`QUEUE_MIO`] or [`QUEUE_LSU`].
    pub queue: u8,
    /// For atomics: how the L2 or the shared-memory unit serialises them.
    pub atom: AtomKind,
    /// The first instruction of a `.func` body or the first after its return:
    /// SASS runs a `CALL`/`RET` before it (the PTX inliner removed them).
    pub call_edge: bool,
    /// Issuing it touches nothing outside its SM (no L2, DRAM or block
    /// scheduler): all but global, local, constant and generic memory
    /// accesses and asynchronous copies. SMs may issue such instructions at once (see `sim`).
    pub issue_local: bool,
    /// A plain `st.global`: in a local phase its L2 booking can wait for
    /// the in-order pass (nothing but fences and the warp's exit needs its
    /// acknowledgement; see `sim::defer`).
    pub deferrable_store: bool,
    /// How many instructions before it (in pc order) may access shared
    /// memory: it picks the slot of an SM's remembered shared-memory cost,
    /// so that a kernel's first few such instructions never share one.
    pub shared_seq: u32,
}

impl TInst {
    /// A store (atomics are not).
    #[inline]
    pub fn is_store(&self) -> bool {
        self.access == Some(AccessKind::Store)
    }

    /// A read-modify-write (`atom`, `red`).
    #[inline]
    pub fn is_atomic(&self) -> bool {
        self.access == Some(AccessKind::Atomic)
    }

    /// An asynchronous copy (`cp.async`, bulk copies): no register waits for
    /// it; it completes into the warp's outstanding-memory time that fences
    /// (and `cp.async.wait_group`) wait for.
    #[inline]
    pub fn is_async(&self) -> bool {
        self.access == Some(AccessKind::AsyncCopy)
    }
}

/// What the timing of an atomic depends on.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct AtomKind {
    /// A floating-point operation (a longer read-modify-write on the same word;
    /// on shared memory a compare-and-swap loop).
    pub float: bool,
    /// The old value is read by a later instruction (`ATOM`); otherwise `RED`.
    pub returns: bool,
    /// ptxas aggregates it per warp: an integer add (or a `RED` min, max, and,
    /// or, xor) whose address does not depend on the lane, so one lane does
    /// one operation for the warp (`VOTEU.ANY`, `POPC`/`REDUX`, one `REDG`).
    pub aggregated: bool,
}

pub const QUEUE_NONE: u8 = 0;
pub const QUEUE_MIO: u8 = 1;
pub const QUEUE_LSU: u8 = 2;

/// Scoreboard register ids: 32-bit slots, then 64-bit, then predicates.
#[derive(Copy, Clone, Debug)]
pub struct RegIds {
    pub n32: u32,
    pub n64: u32,
    pub npred: u32,
}

impl RegIds {
    pub fn id(&self, r: RegRef) -> u32 {
        match r.bank {
            Bank::R32 => r.slot,
            Bank::R64 => self.n32 + r.slot,
            Bank::Pred => self.n32 + self.n64 + r.slot,
        }
    }
    pub fn total(&self) -> usize {
        (self.n32 + self.n64 + self.npred) as usize
    }
}

/// The decoded kernel.
pub struct Decoded {
    pub insts: Vec<TInst>,
    pub regs: RegIds,
    /// Straight-line regions in the order the compiler would issue them.
    pub regions: Vec<Region>,
    /// For each pc: the region starting there, or a one-instruction region
    /// (for pcs control never enters a region at).
    pub region_at: Vec<u32>,
    /// Every region that may run with no instruction issuing (all of it
    /// folded, or loop control of an unrolled iteration) is
    /// [`Region::local`]: moving into a new region touches nothing outside
    /// the SM.
    pub quiet_regions_local: bool,
}

/// A stretch of straight-line code (part of a basic block) that the
/// compiler schedules as a unit. The warp executes it in the engine in PTX
/// order when its first instruction issues, and issues its instructions in
/// `order`.
#[derive(Clone, Debug)]
pub struct Region {
    pub start: u32,
    pub len: u32,
    /// Pcs in issue order.
    pub order: Vec<u32>,
    /// Running it in the engine touches nothing outside its block
    /// ([`Op::stays_in_block`] of each instruction).
    pub local: bool,
    /// One past the position in `order` of the last instruction that always
    /// issues (not folded, not loop control); 0 when none does.
    pub last_issuer: u32,
    /// Running it touches nothing outside its block but the global memory
    /// its plain `st.global`s write: it reads no global or constant memory,
    /// so a local phase may run it against a scratch copy of the memory and
    /// apply the writes in the in-order pass (see `sim::defer`).
    pub writes_global_only: bool,
}

/// Most instructions in one region.
pub const MAX_REGION: usize = 256;

/// Special registers the hardware reads from the constant bank (operands, no instruction).
fn special_is_constant(s: Special) -> bool {
    matches!(
        s,
        Special::Ntid(_)
            | Special::Nctaid(_)
            | Special::NWarpId
            | Special::NSmId
            | Special::WarpSize
            | Special::GridId
            | Special::DynamicSmemSize
            | Special::TotalSmemSize
    )
}

/// A kernel's decode kept between its launches: a sweep or a notebook
/// launches one kernel many times, mostly on the same GPU parameters, and a
/// small launch would otherwise spend a fifth of its time decoding. It keeps
/// the decode for the last `TimingGpu` it was asked about, and only for the
/// kernel it first saw (another kernel is decoded afresh, not kept). It knows
/// that kernel by its address, so it must not outlive it: keep it beside the
/// kernel (the host library's `Kernel` holds both).
#[derive(Default)]
pub struct DecodeCache {
    last: Mutex<Option<Kept>>,
}

struct Kept {
    /// The kernel's address: the cache belongs to one kernel, which its
    /// owner keeps alive beside it.
    kernel: usize,
    gpu: TimingGpu,
    decoded: Arc<Decoded>,
}

impl DecodeCache {
    /// `k` decoded for `gpu`, from the cache when it was decoded for the same GPU parameters.
    pub fn decoded(&self, k: &Kernel, gpu: &TimingGpu) -> Arc<Decoded> {
        let at = k as *const Kernel as usize;
        // A poisoned lock only means a decode panicked: decode afresh.
        let Ok(mut last) = self.last.lock() else { return Arc::new(decode(k, gpu)) };
        match &*last {
            Some(kept) if kept.kernel == at && kept.gpu == *gpu => kept.decoded.clone(),
            Some(kept) if kept.kernel != at => Arc::new(decode(k, gpu)),
            _ => {
                let decoded = Arc::new(decode(k, gpu));
                *last = Some(Kept { kernel: at, gpu: gpu.clone(), decoded: decoded.clone() });
                decoded
            }
        }
    }
}

/// Decodes every instruction of `k` for `gpu`.
pub fn decode(k: &Kernel, gpu: &TimingGpu) -> Decoded {
    let p = &gpu.preset;
    let t = &gpu.timing;
    let lat = &p.latencies;
    let w = p.warp_size as f64;
    let occ = |lanes: f64| -> u16 { (w / lanes.max(1e-3)).ceil().clamp(1.0, 4096.0) as u16 };
    let regs = RegIds { n32: k.n32, n64: k.n64, npred: k.npred };
    let mut constant: Vec<bool> = vec![false; regs.total()];
    for &(s, _) in &k.const32 {
        constant[regs.id(RegRef::r32(s)) as usize] = true;
    }
    for &(s, _) in &k.const64 {
        constant[regs.id(RegRef::r64(s)) as usize] = true;
    }
    for &(s, _) in &k.symbol_addrs {
        constant[regs.id(RegRef::r64(s)) as usize] = true;
    }
    let specials: HashMap<RegRef, Special> = k.specials.iter().copied().collect();
    for (r, _) in &k.specials {
        constant[regs.id(*r) as usize] = true;
    }
    let folded = folded_instructions(k);
    let uniform = uniform_registers(k, &regs, &constant, &specials);
    let mut read = vec![false; regs.total()];
    for inst in &k.code {
        inst.visit_regs(|role, x| {
            if role == RegRole::Read {
                if let Some(r) = read.get_mut(regs.id(x) as usize) {
                    *r = true;
                }
            }
        });
    }

    let math = |pipe: u8, occupancy: u16, latency: u32| (Class::Math, pipe, occupancy, 1u16, latency, Sb::Fixed);
    let fp32 = math(PIPE_FP32, occ(p.fp32_lanes_per_subpartition as f64), lat.fma);
    let fp16 = math(PIPE_FP32, occ(p.fp32_lanes_per_subpartition as f64), lat.hfma2);
    let alu = math(PIPE_INT, occ(t.int_lanes), t.alu_latency);
    let imad = math(PIPE_IMAD, occ(t.int_lanes), lat.imad);
    let fp64 = math(PIPE_FP64, occ(t.fp64_lanes), lat.dfma);
    let mufu = (Class::Math, PIPE_SFU, occ(p.sfu_lanes_per_subpartition as f64), 1u16, lat.mufu, Sb::Short);
    let conv = (Class::Math, PIPE_CONV, occ(t.conversion_lanes), 1u16, t.conversion_latency, Sb::Short);
    let slots = |c: (Class, u8, u16, u16, u32, Sb), n: u16, latency: u32| (c.0, c.1, c.2, n, latency, c.5);
    let free = (Class::Free, PIPE_NONE, 0u16, 0u16, 0u32, Sb::Fixed);

    let mut insts = Vec::with_capacity(k.code.len());
    let mut shared_seen = 0u32;
    for (pc, inst) in k.code.iter().enumerate() {
        let (class, pipe, occupancy, nslots, latency, sb) = if folded[pc] != Folded::No {
            free
        } else {
            match inst.op.latency_class() {
                L::Free => free,
                // A move from a special register the hardware reads with S2R.
                L::Move if matches!(&inst.op, Op::Mov { a, .. } if specials.get(a).is_some_and(|s| !special_is_constant(*s))) => {
                    (Class::Mio, PIPE_NONE, 0, 1, t.special_register_latency, Sb::Short)
                }
                L::Move => free,
                L::Alu => alu,
                L::Alu64 => slots(alu, 2, t.alu_latency + 2),
                L::Imad => imad,
                L::Imad64 => slots(imad, 3, lat.imad * 2),
                L::IntDiv32 => slots(imad, 18, 70),
                L::IntDiv64 => slots(imad, 60, 250),
                L::Conv => conv,
                L::Conv64 => slots(conv, 2, t.conversion_latency),
                L::Fp16 => fp16,
                L::Fp32 => fp32,
                L::Fp64 => fp64,
                L::Mufu => mufu,
                L::MufuFma => slots(mufu, 2, lat.mufu + lat.fma),
                L::FDiv32 => slots(fp32, 8, lat.mufu + 6 * lat.fma),
                L::FDiv64 => slots(fp64, 20, lat.mufu + 8 * lat.dfma),
                L::FDivFull => slots(fp32, 4, lat.mufu + 3 * lat.fma),
                L::FRcpSqrt32 => slots(fp32, 6, lat.mufu + 4 * lat.fma),
                L::FRcpSqrt64 => slots(fp64, 16, lat.mufu + 6 * lat.dfma),
                L::Vote => math(PIPE_INT, occ(t.int_lanes), t.vote_latency),
                L::Shfl => (Class::Shfl, PIPE_NONE, 0, 1, lat.shfl, Sb::Short),
                L::Match => (Class::Shfl, PIPE_NONE, 0, 1, t.match_latency, Sb::Short),
                L::Clock => (Class::Math, PIPE_NONE, 0, 1, t.clock_latency, Sb::Fixed),
                L::Mem => (Class::Mem, PIPE_NONE, 0, 1, 0, Sb::Long),
                L::Mbarrier => (Class::Mio, PIPE_NONE, 0, 1, t.special_register_latency, Sb::Short),
                L::Branch => (Class::Branch, PIPE_NONE, 0, 1, 0, Sb::Fixed),
                L::Exit => (Class::Exit, PIPE_NONE, 0, 1, 0, Sb::Fixed),
                L::Barrier => (Class::Barrier, PIPE_NONE, 0, 1, 0, Sb::Fixed),
                L::Fence => (Class::Fence, PIPE_NONE, 0, 1, 0, Sb::Fixed),
                L::Mma { work } => {
                    // m16n8k16 is the measured unit; other shapes scale with their work.
                    let mma = lat.mma.unwrap_or(32);
                    let units = (work as f64 / 2048.0).max(0.25);
                    let occ = ((t.tensor_cycles as f64 * units).ceil() as u16).max(1);
                    (Class::Math, PIPE_TENSOR, occ, 1, mma.max(occ as u32), Sb::Fixed)
                }
                L::Wgmma { n } => {
                    // HOP: m64n256k16 takes 128 cycles; smaller N less.
                    let l = (128 * n / 256).max(lat.mma.unwrap_or(32));
                    (Class::Math, PIPE_TENSOR, (l / 2).max(1) as u16, 1, l, Sb::Short)
                }
            }
        };
        let (mut srcs, mut dsts) = (Vec::new(), Vec::new());
        inst.op.visit_regs(|role, x| {
            let id = regs.id(x);
            match role {
                RegRole::Read => {
                    if !constant.get(id as usize).copied().unwrap_or(true) && !srcs.contains(&id) {
                        srcs.push(id);
                    }
                }
                RegRole::Write => {
                    if (id as usize) < regs.total() && !dsts.contains(&id) {
                        dsts.push(id);
                    }
                }
            }
        });
        if let Some(g) = inst.guard {
            let id = regs.id(RegRef::pred(g.pred));
            if !srcs.contains(&id) {
                srcs.push(id);
            }
        }
        let access = inst.op.mem_access();
        let queue = match (access, class) {
            (_, Class::Shfl) => QUEUE_MIO,
            (Some(MemAccess { kind: AccessKind::Load | AccessKind::Store | AccessKind::Atomic, space: Space::Shared, .. }), Class::Mem) => {
                QUEUE_MIO
            }
            (_, Class::Mem) => QUEUE_LSU,
            _ => QUEUE_NONE,
        };
        let bypass_l1 = matches!(inst.op, Op::Ld { .. })
            && (inst.meta.ordering == MemOrder::Volatile || inst.meta.cache.is_some_and(CacheOp::bypasses_l1));
        let alt_pipe = if pipe == PIPE_INT && inst.op.imad_alternative() { PIPE_IMAD } else { PIPE_NONE };
        let atom = match &inst.op {
            Op::Atom { op, ty, d, addr, .. } => {
                let returns = d.is_some_and(|d| read[regs.id(d) as usize]);
                let uniform_addr = addr.base.is_none_or(|b| uniform[regs.id(b) as usize]);
                let reducible = match op {
                    AtomOp::Add => true,
                    AtomOp::Min | AtomOp::Max | AtomOp::And | AtomOp::Or | AtomOp::Xor => !returns,
                    _ => false,
                };
                AtomKind { float: ty.is_float(), returns, aggregated: uniform_addr && ty.is_int() && reducible }
            }
            _ => AtomKind::default(),
        };
        let may_share = class == Class::Mem && access.is_none_or(|a| matches!(a.space, Space::Shared | Space::Generic));
        let shared_seq = shared_seen;
        shared_seen += u32::from(may_share);
        insts.push(TInst {
            class,
            pipe,
            alt_pipe,
            occupancy,
            slots: nslots,
            latency,
            sb,
            srcs,
            dsts,
            loop_ctl: None,
            unroll: 1,
            back_edge: false,
            alias_of: None,
            bypass_l1,
            access: access.map(|a| a.kind),
            queue,
            atom,
            call_edge: false,
            issue_local: false,
            deferrable_store: matches!(inst.op, Op::St { .. })
                && access.is_some_and(|a| a.kind == AccessKind::Store && a.space == Space::Global),
            shared_seq,
        });
    }
    fold_call_parameters(k, &mut insts, &regs);
    mark_call_edges(k, &mut insts);
    alias_repeated_loads(k, &folded, &mut insts);
    fold_address_offsets(k, &mut insts, &regs, &constant);
    if t.loop_unroll > 1 {
        mark_loop_control(k, &mut insts, &regs, t.loop_unroll, t.unroll_budget);
    }
    for inst in insts.iter_mut() {
        inst.issue_local = issues_locally(inst);
    }
    let (mut regions, region_at) = build_regions(k, &insts, gpu);
    for r in regions.iter_mut() {
        r.local = (r.start..r.start + r.len).all(|pc| k.code[pc as usize].op.stays_in_block());
        r.writes_global_only = (r.start..r.start + r.len).all(|pc| {
            let op = &k.code[pc as usize].op;
            insts[pc as usize].deferrable_store || (op.stays_in_block() && op.mem_access().is_none_or(|a| a.space != Space::Const))
        });
        r.last_issuer = r
            .order
            .iter()
            .rposition(|&pc| insts[pc as usize].class != Class::Free && insts[pc as usize].loop_ctl.is_none())
            .map_or(0, |i| i as u32 + 1);
    }
    let quiet_regions_local = regions.iter().all(|r| r.last_issuer > 0 || r.local);
    Decoded { insts, regs, regions, region_at, quiet_regions_local }
}

/// See [`TInst::issue_local`]: memory instructions are local when they name
/// shared memory; barriers and exits involve only the warp's block (a block
/// that drains is not: see `sim`).
fn issues_locally(ti: &TInst) -> bool {
    match ti.class {
        Class::Free
        | Class::Math
        | Class::Mio
        | Class::Shfl
        | Class::Branch
        | Class::Fence
        | Class::Unknown
        | Class::Barrier
        | Class::Exit => true,
        Class::Mem => ti.queue == QUEUE_MIO && !ti.is_async(),
    }
}

/// Instructions that stand alone in their region: their effect or value
/// depends on when they issue (clock, barriers, fences, atomics).
fn isolated(op: &Op, class: Class) -> bool {
    matches!(class, Class::Barrier | Class::Fence | Class::Unknown) || matches!(op, Op::Clock { .. } | Op::Atom { .. })
}

/// Splits the code into regions and schedules each: a list scheduler that
/// issues, among the instructions whose dependences (registers read and
/// written, memory order for stores) are met, the one with the longest
/// latency path to the end of the region first, as ptxas hoists loads
/// above the arithmetic that waits for them.
fn build_regions(k: &Kernel, insts: &[TInst], gpu: &TimingGpu) -> (Vec<Region>, Vec<u32>) {
    let n = k.code.len();
    let mut leader = vec![false; n + 1];
    if n > 0 {
        leader[0] = true;
    }
    for (pc, inst) in k.code.iter().enumerate() {
        if let Flow::Branch { targets, reconv } = inst.op.flow() {
            for &t in targets {
                leader[t as usize] = true;
            }
            if (reconv as usize) < n {
                leader[reconv as usize] = true;
            }
        }
        if inst.op.is_branch() {
            leader[pc + 1] = true;
        }
        if isolated(&inst.op, insts[pc].class) {
            leader[pc] = true;
            leader[pc + 1] = true;
        }
    }
    let mut regions = Vec::new();
    let mut region_at = vec![u32::MAX; n];
    let mut pc = 0;
    while pc < n {
        let mut end = pc + 1;
        while end < n && !leader[end] && end - pc < MAX_REGION {
            end += 1;
        }
        region_at[pc] = regions.len() as u32;
        regions.push(Region {
            start: pc as u32,
            len: (end - pc) as u32,
            order: schedule(k, insts, pc, end, gpu),
            local: false,
            last_issuer: 0,
            writes_global_only: false,
        });
        pc = end;
    }
    for (pc, r) in region_at.iter_mut().enumerate() {
        if *r == u32::MAX {
            *r = regions.len() as u32;
            regions.push(Region {
                start: pc as u32,
                len: 1,
                order: vec![pc as u32],
                local: false,
                last_issuer: 0,
                writes_global_only: false,
            });
        }
    }
    (regions, region_at)
}

/// List-schedules `start..end` (see [`build_regions`]).
fn schedule(k: &Kernel, insts: &[TInst], start: usize, end: usize, gpu: &TimingGpu) -> Vec<u32> {
    let m = end - start;
    if m <= 1 {
        return (start as u32..end as u32).collect();
    }
    let lat = &gpu.preset.latencies;
    let est = |i: &TInst, op: &Op| -> u32 {
        match i.class {
            Class::Free => 0,
            Class::Mem if i.is_store() => 1,
            Class::Mem if matches!(op, Op::Ld { space: Space::Shared, .. }) => lat.shared,
            Class::Mem => lat.l1_hit,
            _ => i.latency.max(1),
        }
    };
    // Predecessors of each instruction.
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); m];
    for j in 0..m {
        let (ij, oj) = (&insts[start + j], &k.code[start + j].op);
        let last = j == m - 1 && oj.is_branch();
        for i in 0..j {
            let ii = &insts[start + i];
            let raw = ij.srcs.iter().any(|r| ii.dsts.contains(r));
            let war = ij.dsts.iter().any(|r| ii.srcs.contains(r));
            let waw = ij.dsts.iter().any(|r| ii.dsts.contains(r));
            let alias = ij.alias_of == Some((start + i) as u32);
            let memo = ii.class == Class::Mem
                && ij.class == Class::Mem
                && (ii.is_store() || ij.is_store() || ii.is_atomic() || ij.is_atomic())
                && may_alias(&k.code[start + i].op, oj);
            if raw || war || waw || alias || memo || last {
                preds[j].push(i);
            }
        }
    }
    // Longest latency path from each instruction to the end.
    let mut prio = vec![0u64; m];
    for j in (0..m).rev() {
        let l = est(&insts[start + j], &k.code[start + j].op) as u64;
        prio[j] = prio[j].max(l);
        let pj = prio[j];
        for &i in &preds[j] {
            let li = est(&insts[start + i], &k.code[start + i].op) as u64;
            prio[i] = prio[i].max(li + pj);
        }
    }
    let mut left: Vec<usize> = preds.iter().map(|p| p.len()).collect();
    let mut succs: Vec<Vec<usize>> = vec![Vec::new(); m];
    for (j, p) in preds.iter().enumerate() {
        for &i in p {
            succs[i].push(j);
        }
    }
    let mut done = vec![false; m];
    let mut order = Vec::with_capacity(m);
    for _ in 0..m {
        let mut best: Option<usize> = None;
        for j in 0..m {
            if !done[j] && left[j] == 0 && best.is_none_or(|b| prio[j] > prio[b]) {
                best = Some(j);
            }
        }
        let b = best.expect("the dependence graph of straight-line code is acyclic");
        done[b] = true;
        order.push((start + b) as u32);
        for &s in &succs[b] {
            left[s] -= 1;
        }
    }
    order
}

/// Whether two memory instructions may touch the same bytes, as ptxas
/// judges it from their state spaces alone: global and shared (or local)
/// memory never overlap, so a global load is hoisted above shared stores;
/// a generic access, two in one space, or a copy (which reads one space
/// and writes another) keep their order.
fn may_alias(a: &Op, b: &Op) -> bool {
    match (a.mem_access(), b.mem_access()) {
        (Some(x), Some(y)) => {
            let plain = |m: &MemAccess| matches!(m.kind, AccessKind::Load | AccessKind::Store | AccessKind::Atomic);
            !plain(&x) || !plain(&y) || x.space == y.space || x.space == Space::Generic || y.space == Space::Generic
        }
        _ => true,
    }
}

/// The base register of a memory instruction's address.
fn addr_base(op: &Op) -> Option<RegRef> {
    op.lane_address().and_then(|(_, a)| a.base)
}

/// `add d, a, c` with `c` known at compile time (an immediate, a symbol's
/// address, or a register only ever set to one), whose result is used only
/// as the base of load/store addresses: SASS adds `c` in the address
/// (`LDS [R + imm]`), so the add takes no instruction of its own.
fn fold_address_offsets(k: &Kernel, insts: &mut [TInst], regs: &RegIds, constant: &[bool]) {
    // Registers whose every definition is a folded move of a constant.
    let mut konst: Vec<bool> = constant.to_vec();
    let mut defs: Vec<Vec<usize>> = vec![Vec::new(); regs.total()];
    let mut readers: Vec<Vec<usize>> = vec![Vec::new(); regs.total()];
    for (pc, ti) in insts.iter().enumerate() {
        for &d in &ti.dsts {
            defs[d as usize].push(pc);
        }
        for &r in &ti.srcs {
            readers[r as usize].push(pc);
        }
    }
    for (r, ds) in defs.iter().enumerate() {
        if !ds.is_empty()
            && ds.iter().all(|&pc| {
                matches!(k.code[pc].op, Op::Mov { .. })
                    && insts[pc].class == Class::Free
                    && insts[pc].srcs.is_empty()
                    && k.code[pc].guard.is_none()
            })
        {
            konst[r] = true;
        }
    }
    for (pc, ti) in insts.iter_mut().enumerate() {
        if ti.class != Class::Math || k.code[pc].guard.is_some() || ti.dsts.len() != 1 {
            continue;
        }
        let (a, b) = match &k.code[pc].op {
            Op::Bin32 { f: Bin32::Add, a, b, .. } => (RegRef::r32(*a), RegRef::r32(*b)),
            Op::Bin64 { f: Bin64::Add, a, b, .. } => (RegRef::r64(*a), RegRef::r64(*b)),
            Op::Int { op: IntOp::Add, s, .. } => (s[0], s[1]),
            _ => continue,
        };
        let (ka, kb) = (konst[regs.id(a) as usize], konst[regs.id(b) as usize]);
        if !(ka || kb) {
            continue;
        }
        let d = ti.dsts[0];
        let rs = &readers[d as usize];
        let only_address = !rs.is_empty()
            && rs.iter().all(|&u| {
                // `d` is the base and no other operand.
                let mut reads_of_d = 0;
                k.code[u].op.for_each_read(|x| reads_of_d += u32::from(regs.id(x) == d));
                addr_base(&k.code[u].op).is_some_and(|base| regs.id(base) == d) && reads_of_d == 1
            });
        if only_address {
            ti.class = Class::Free;
            ti.pipe = PIPE_NONE;
            ti.slots = 0;
            ti.latency = 0;
        }
    }
}

/// For each folded repeated load, the earlier load in its block with the same address.
fn alias_repeated_loads(k: &Kernel, folded: &[Folded], insts: &mut [TInst]) {
    for pc in 0..k.code.len() {
        if folded[pc] != Folded::RedundantLoad {
            continue;
        }
        let Op::Ld { space, size, n, addr, .. } = &k.code[pc].op else { continue };
        let mut q = pc;
        while q > 0 {
            q -= 1;
            if let Op::Ld { space: s2, size: z2, n: n2, addr: a2, .. } = &k.code[q].op {
                if s2 == space && z2 == size && n2 == n && a2 == addr && folded[q] == Folded::No {
                    insts[pc].alias_of = Some(q as u32);
                    break;
                }
            }
            if k.code[q].op.is_branch() {
                break;
            }
        }
    }
}

/// Finds innermost single-block loops and marks their loop control.
fn mark_loop_control(k: &Kernel, insts: &mut [TInst], regs: &RegIds, max_unroll: u32, budget: u32) {
    let n = k.code.len();
    // Branch targets (block leaders other than fall-through).
    let mut target = vec![false; n + 1];
    for inst in &k.code {
        if let Flow::Branch { targets, .. } = inst.op.flow() {
            for &t in targets {
                target[t as usize] = true;
            }
        }
    }
    for b in 0..n {
        let Op::Bra { target: h, .. } = &k.code[b].op else { continue };
        let h = *h as usize;
        let Some(guard) = k.code[b].guard else { continue };
        if h > b {
            continue;
        }
        // One basic block: no branch, barrier or exit inside, no other entry.
        if (h..b).any(|q| {
            let op = &k.code[q].op;
            op.is_branch() || matches!(op, Op::Bar { .. } | Op::Atom { .. })
        }) || (h + 1..=b).any(|q| target[q])
        {
            continue;
        }
        // `.pragma "nounroll"` between the previous instruction and the branch.
        if (h..=b).any(|q| k.code[q].meta.nounroll) {
            continue;
        }
        // Closure: instructions whose results are read, inside the loop, only by control.
        let mut ctl = vec![false; b - h + 1];
        ctl[b - h] = true;
        let gid = regs.id(RegRef::pred(guard.pred));
        let mut work = vec![gid];
        while let Some(r) = work.pop() {
            for d in h..b {
                if ctl[d - h] || !insts[d].dsts.contains(&r) {
                    continue;
                }
                if insts[d].dsts.len() != 1 || !matches!(insts[d].class, Class::Math | Class::Free) || k.code[d].guard.is_some() {
                    continue;
                }
                let only_control = (h..=b).all(|u| u == d || ctl[u - h] || !insts[u].srcs.contains(&r));
                if only_control {
                    ctl[d - h] = true;
                    for &s in &insts[d].srcs {
                        if !work.contains(&s) {
                            work.push(s);
                        }
                    }
                    // Readers of `r` that are now control may make other registers pure control.
                    work.push(r);
                }
            }
        }
        // Unrolled until the body holds about `budget` instructions, at most `max_unroll` times.
        let body: u32 = (h..=b).filter(|&q| !ctl[q - h] && insts[q].class != Class::Free).map(|q| insts[q].slots as u32).sum();
        let unroll = (budget / body.max(1)).clamp(1, max_unroll);
        if unroll < 2 {
            continue;
        }
        for q in h..=b {
            if ctl[q - h] {
                insts[q].loop_ctl = Some(b as u32);
                insts[q].unroll = unroll;
            }
        }
        insts[b].back_edge = true;
    }
}

/// Registers whose value cannot differ between the lanes of a warp, as
/// ptxas proves it: computed only from constants, kernel parameters and the
/// block's coordinates (never from `%tid`, `%laneid`, loaded data or the
/// results of atomics, shuffles and clocks).
fn uniform_registers(k: &Kernel, regs: &RegIds, constant: &[bool], specials: &HashMap<RegRef, Special>) -> Vec<bool> {
    let mut varying = vec![false; regs.total()];
    for (r, s) in specials {
        varying[regs.id(*r) as usize] = !special_is_constant(*s) && !matches!(s, Special::Ctaid(_));
    }
    let source = |op: &Op| match op {
        Op::Ld { space, .. } => !matches!(space, Space::KernelParam | Space::Const),
        _ => op.mem_access().is_some() || matches!(op, Op::Clock { .. } | Op::Shfl { .. } | Op::Vote { .. } | Op::Match { .. }),
    };
    loop {
        let mut changed = false;
        for inst in &k.code {
            let mut v = source(&inst.op);
            inst.visit_regs(|role, x| {
                if role == RegRole::Read && varying.get(regs.id(x) as usize).copied().unwrap_or(false) {
                    v = true;
                }
            });
            if !v {
                continue;
            }
            inst.op.visit_regs(|role, x| {
                let id = regs.id(x) as usize;
                if role == RegRole::Write && id < varying.len() && !constant[id] && !varying[id] {
                    varying[id] = true;
                    changed = true;
                }
            });
        }
        if !changed {
            return varying.iter().map(|&v| !v).collect();
        }
    }
}

/// Marks the instructions SASS reaches through a `CALL` or a `RET`: the
/// lowering inlines `.func` bodies, so an inlined body shows in the code as
/// a jump in PTX line order (the body is written elsewhere in the file), at
/// the call and again at the return. The mark goes on the first instruction
/// that issues from there.
fn mark_call_edges(k: &Kernel, insts: &mut [TInst]) {
    let mut pending = false;
    for (pc, ti) in insts.iter_mut().enumerate().skip(1) {
        let line = |q: usize| k.info.get(q).map_or(0, |i| i.ptx_line);
        let (a, b) = (line(pc - 1), line(pc));
        if b < a || b > a + CALL_LINE_GAP {
            pending = true;
        }
        if pending && ti.class != Class::Free {
            ti.call_edge = true;
            pending = false;
        }
    }
}

/// `.param` variables of a call sequence (`st.param` before the call,
/// `ld.param` in the callee and after the return) are local memory to the
/// engine and registers to SASS: they take no issue slot, and a load takes
/// its value from the register the matching store wrote.
fn fold_call_parameters(k: &Kernel, insts: &mut [TInst], regs: &RegIds) {
    let is_param = |pc: usize, head: &str| k.info.get(pc).is_some_and(|i| i.opcode.starts_with(head));
    for (pc, t) in insts.iter_mut().enumerate() {
        match &k.code[pc].op {
            Op::St { space: Space::Local, .. } if is_param(pc, "st.param") => {
                (t.class, t.pipe, t.slots, t.latency, t.queue) = (Class::Free, PIPE_NONE, 0, 0, QUEUE_NONE);
                t.srcs.clear();
            }
            Op::Ld { space: Space::Local, addr, .. } if is_param(pc, "ld.param") => {
                let value = (0..pc).rev().find_map(|q| match &k.code[q].op {
                    Op::St { space: Space::Local, addr: a2, s, n, .. } if a2 == addr && is_param(q, "st.param") => {
                        Some(s[..(*n as usize).clamp(1, 4)].iter().map(|r| regs.id(*r)).collect::<Vec<u32>>())
                    }
                    _ => None,
                });
                (t.class, t.pipe, t.slots, t.latency, t.queue) = (Class::Free, PIPE_NONE, 0, 0, QUEUE_NONE);
                t.srcs = value.unwrap_or_default();
            }
            _ => {}
        }
    }
}

/// PTX lines between two consecutive instructions of one function body
/// beyond which the second is taken to be in another function.
const CALL_LINE_GAP: u32 = 48;

#[cfg(test)]
mod tests {
    use super::*;

    const PTX: &str = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry a(.param .u64 p)\n{\n.reg .b32 %r<3>;\nmov.u32 %r1, %tid.x;\nadd.s32 %r2, %r1, 1;\nret;\n}\n.visible .entry b()\n{\nret;\n}\n";

    #[test]
    fn a_kernel_is_decoded_once_per_gpu_parameters() {
        let program = warpsim_ir::compile_module("t.ptx", PTX).unwrap();
        let (a, b) = (program.kernel("a").unwrap(), program.kernel("b").unwrap());
        let h200 = TimingGpu::by_name("h200").unwrap();
        let cache = DecodeCache::default();
        let first = cache.decoded(a, &h200);
        assert_eq!(first.insts.len(), a.code.len());
        assert!(Arc::ptr_eq(&first, &cache.decoded(a, &h200.clone())), "same parameters: kept");
        // A sweep that changes a parameter gets a decode for it, and keeps that one.
        let mut slower = h200.clone();
        slower.timing.alu_latency += 2;
        let changed = cache.decoded(a, &slower);
        assert!(!Arc::ptr_eq(&first, &changed));
        let latencies = |d: &Decoded| d.insts.iter().map(|i| i.latency).collect::<Vec<_>>();
        assert_ne!(latencies(&changed), latencies(&first), "the add's latency follows the parameter");
        assert!(Arc::ptr_eq(&changed, &cache.decoded(a, &slower)));
        // Another kernel is decoded for itself and does not displace the kept one.
        assert_eq!(cache.decoded(b, &slower).insts.len(), b.code.len());
        assert!(Arc::ptr_eq(&changed, &cache.decoded(a, &slower)));
    }
}
