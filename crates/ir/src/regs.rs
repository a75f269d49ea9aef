//! Registers per thread, estimated the way ptxas would allocate them.
//!
//! PTX does not say how many registers a kernel needs; ptxas decides, and
//! occupancy depends on it. This module estimates that number from a lowered
//! [`Kernel`] in four steps:
//!
//! 1. **Uniform values.** From sm_75 on, ptxas keeps warp-uniform integer
//!    values (kernel parameters, `%ntid`, loop bounds derived from them) in
//!    *uniform* registers or reads them straight from the constant bank;
//!    neither counts in `numRegs`. A fixpoint marks a register uniform when
//!    every definition is an integer/bitwise/move operation (or a `.param` /
//!    `.const` load) whose sources are uniform, whose guard is uniform, and
//!    which is not one of several definitions inside a divergent region (a
//!    branch on a non-uniform predicate, up to its reconvergence point).
//!    Floating-point results, other loads, shuffles, votes, clocks and atomics
//!    are never uniform (the uniform datapath has no such instructions).
//!    Constant registers (immediates) and module-symbol addresses are sources,
//!    not live values; so are the special registers, of which `%tid`,
//!    `%ctaid`, `%laneid`, `%warpid`, `%smid` and the lane masks are
//!    non-uniform (ptxas reads them with `S2R` into ordinary registers, and
//!    the `mov` that reads them defines an ordinary PTX register).
//! 2. **Liveness.** A backward dataflow over [`Kernel::code`] (successors
//!    from [`crate::cfg::successors`]) of the non-uniform registers, weighted
//!    by width: an `R32` slot is 1 register, an `R64` slot 2, predicates 0
//!    (they live in the 7 predicate registers). A guarded definition does not
//!    kill (the lanes it skips keep the old value). The pressure at an
//!    instruction is the larger of its live-in set and its live-out set plus
//!    its definitions (a result needs a register even when it is dead); a
//!    uniform or symbol 64-bit address used as the base of a global, generic
//!    or local access needs a register pair for that one instruction
//!    (`LDC.64 R2, c[..]; STG [R2.64]`). The peak is
//!    [`RegisterEstimate::max_live_32bit`].
//! 3. **Allocation.** ptxas does not pack values as tightly as the peak
//!    suggests: its SASS for the corpus leaves gaps (`gt_warp_sum` peaks at
//!    about 6 live registers but uses R0..R11). The estimate colours the
//!    interference graph greedily in program order, each value at the lowest
//!    register aligned to its width (pairs for 64-bit values, quads for
//!    `.v4` load results), with `R1` reserved (the stack pointer) and a
//!    register that has just fallen free left alone for [`REUSE_DELAY`]
//!    instructions, as ptxas' allocator does to keep its scheduler free to
//!    reorder. The registers spanned are [`RegisterEstimate::allocated`].
//! 4. **Reported count.** ptxas on sm_90 reports the highest register used
//!    plus 1 plus [`RESERVED`] (2): true of every corpus kernel's SASS. So
//!    `regs = allocated + 2`, at least [`MIN_REGS`] (8, the smallest count
//!    the corpus shows), at most 255 or `.maxnreg`.
//!
//! **Accuracy.** Against the H200 driver's `num_regs` for the 15 corpus
//! kernels in `shared/corpus/cases.json` (8..20 registers), plus the 4
//! `gt_bug_*` kernels of the same file compiled with ptxas 13.0
//! (`-arch=sm_90 -v`: 8, 10, 10, 10), the test `corpus_register_estimates`
//! in `tests/regs_corpus.rs` prints the table. Measured: mean absolute error
//! 0.89 registers over the 19 kernels (1.00 over the 15 with driver
//! figures); 12 of 19 exact; worst `gt_warp_probe` (14 estimated, 18
//! actual) and `gt_compute_bound` (12 vs 9, 33%). The test asserts a looser
//! bound, so that small changes to lowering do not break it: every kernel
//! within 5 registers and 40%, mean error at most 1.5. [`REUSE_DELAY`] (8)
//! is the one fitted parameter (7 gives a mean error of 1.11, 10 gives 0.95
//! with a worst error of 6; without the delay the best constant overhead
//! gives 1.8). The corpus kernels are small: expect larger errors on large,
//! unrolled kernels, where ptxas' scheduling (loads hoisted to hide
//! latency) and spilling decide. Where the real figure is known
//! (`cudaFuncGetAttributes`, `ptxas -v`), use it.

use crate::cfg::successors;
use crate::inst::{Bank, Inst, Op, RegRef, Space};
use crate::kernel::{Kernel, Special};
use crate::op_table::{Flow as Control, RegRole};

/// Registers ptxas counts beyond the highest one a kernel uses (sm_90).
pub const RESERVED: u32 = 2;
/// The fewest registers ptxas reports for a kernel on sm_90 (the corpus'
/// smallest kernels all report 8).
pub const MIN_REGS: u32 = 8;
/// Instructions a register stays unused after its value's last use before
/// the simulated allocator hands it out again (fitted to the corpus).
pub const REUSE_DELAY: usize = 8;
/// The most registers a thread can have.
pub const MAX_REGS: u32 = 255;
/// Used instead of the allocation for kernels too large for the
/// interference graph: `regs = max_live + FALLBACK_OVERHEAD` (the constant
/// that fits the corpus best, mean absolute error 2.1).
pub const FALLBACK_OVERHEAD: u32 = 7;

/// The estimate and the figures it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegisterEstimate {
    /// Registers per thread ptxas would probably allocate.
    pub regs_per_thread: u32,
    /// Peak of simultaneously live non-uniform 32-bit registers (a 64-bit
    /// value counts 2).
    pub max_live_32bit: u32,
    /// Registers the simulated allocation spans (highest register + 1).
    pub allocated: u32,
    /// The instruction where the peak of live values occurs.
    pub peak_pc: Option<u32>,
    /// How the estimate was made, for reports.
    pub method: &'static str,
}

/// [`RegisterEstimate::method`] of the normal estimate.
pub const METHOD: &str = "simulated allocation of non-uniform PTX values (R1 reserved, pairs aligned, \
                          8-instruction reuse delay) + 2, min 8";
/// [`RegisterEstimate::method`] for kernels too large to allocate.
pub const METHOD_FALLBACK: &str = "peak of live non-uniform PTX values (R32 = 1, R64 = 2) + 7, min 8";

/// Estimates the registers per thread ptxas would allocate for `kernel`.
pub fn estimate_registers(kernel: &Kernel) -> RegisterEstimate {
    let a = Analysis::new(kernel);
    let uniform = a.uniform_registers();
    let flow = a.flow(&uniform);
    let (max_live, peak_pc) = flow.peak;
    let (allocated, method) = match a.allocate(&flow) {
        Some(span) => (span, METHOD),
        None => ((max_live + FALLBACK_OVERHEAD).saturating_sub(RESERVED), METHOD_FALLBACK),
    };
    let cap = kernel.tuning.maxnreg.map_or(MAX_REGS, |m| m.clamp(1, MAX_REGS));
    let regs = (allocated + RESERVED).max(MIN_REGS).min(cap);
    RegisterEstimate { regs_per_thread: regs, max_live_32bit: max_live, allocated, peak_pc, method }
}

// ---- register sets ----------------------------------------------------------

/// Dense index of a 32- or 64-bit register: R32 slots first, then R64.
struct Index {
    n32: usize,
    n64: usize,
}

impl Index {
    fn of(&self, r: RegRef) -> Option<usize> {
        match r.bank {
            Bank::R32 if (r.slot as usize) < self.n32 => Some(r.slot as usize),
            Bank::R64 if (r.slot as usize) < self.n64 => Some(self.n32 + r.slot as usize),
            _ => None,
        }
    }
    fn len(&self) -> usize {
        self.n32 + self.n64
    }
    fn weight(&self, i: usize) -> u32 {
        if i < self.n32 {
            1
        } else {
            2
        }
    }
}

#[derive(Clone, PartialEq, Eq)]
struct BitSet(Vec<u64>);

impl BitSet {
    fn new(n: usize) -> Self {
        BitSet(vec![0; n.div_ceil(64)])
    }
    fn insert(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }
    fn remove(&mut self, i: usize) {
        self.0[i / 64] &= !(1 << (i % 64));
    }
    fn contains(&self, i: usize) -> bool {
        self.0[i / 64] >> (i % 64) & 1 == 1
    }
    fn union_with(&mut self, o: &BitSet) {
        for (a, b) in self.0.iter_mut().zip(&o.0) {
            *a |= b;
        }
    }
    fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(w, &bits)| crate::set_bits(bits).map(move |t| w * 64 + t))
    }
}

// ---- what each instruction reads and writes ---------------------------------

/// Registers an instruction reads and writes (any bank; predicates included
/// so that the uniformity analysis can follow them).
#[derive(Default)]
struct DefUse {
    defs: Vec<RegRef>,
    uses: Vec<RegRef>,
    /// Address base of a global/generic/local access (needs a register pair).
    addr_base: Option<RegRef>,
    /// Whether the result can be a uniform value when its sources are.
    uniform_capable: bool,
}

fn r32(s: u32) -> RegRef {
    RegRef::r32(s)
}
fn r64(s: u32) -> RegRef {
    RegRef::r64(s)
}
fn pred(s: u32) -> RegRef {
    RegRef::pred(s)
}

fn def_use(inst: &Inst) -> DefUse {
    let mut du = DefUse::default();
    inst.visit_regs(|role, r| match role {
        RegRole::Read => du.uses.push(r),
        RegRole::Write => du.defs.push(r),
    });
    if let Some((space, a)) = inst.op.lane_address() {
        if matches!(space, Space::Global | Space::Generic | Space::Local) {
            du.addr_base = a.base;
        }
    }
    du.uniform_capable = inst.op.uniform_capable();
    du
}

// ---- the analysis -------------------------------------------------------------

struct Analysis<'k> {
    kernel: &'k Kernel,
    idx: Index,
    npred: usize,
    du: Vec<DefUse>,
    /// Registers that are sources only: constants, specials, symbol addresses.
    source_only: Vec<bool>,
    /// Of those, the uniform ones (all but per-lane specials).
    source_uniform: Vec<bool>,
    /// Symbol-address registers.
    symbol: Vec<bool>,
}

impl<'k> Analysis<'k> {
    fn new(kernel: &'k Kernel) -> Self {
        let idx = Index { n32: kernel.n32 as usize, n64: kernel.n64 as usize };
        let n = idx.len();
        let mut source_only = vec![false; n];
        let mut source_uniform = vec![false; n];
        let mut symbol = vec![false; n];
        let mut mark = |r: RegRef, uniform: bool, sym: bool| {
            if let Some(i) = idx.of(r) {
                source_only[i] = true;
                source_uniform[i] = uniform;
                symbol[i] |= sym;
            }
        };
        for &(s, _) in &kernel.const32 {
            mark(r32(s), true, false);
        }
        for &(s, _) in &kernel.const64 {
            mark(r64(s), true, false);
        }
        for &(s, _) in &kernel.symbol_addrs {
            mark(r64(s), true, true);
        }
        for &(r, sp) in &kernel.specials {
            // `%ntid`, `%nctaid`, ... are constant-bank operands; ptxas reads
            // `%tid`, `%ctaid`, `%laneid`, ... with S2R into ordinary registers.
            let uniform = !matches!(
                sp,
                Special::Tid(_)
                    | Special::Ctaid(_)
                    | Special::WarpId
                    | Special::SmId
                    | Special::LaneId
                    | Special::LanemaskEq
                    | Special::LanemaskLe
                    | Special::LanemaskLt
                    | Special::LanemaskGe
                    | Special::LanemaskGt
            );
            mark(r, uniform, false);
        }
        let du = kernel.code.iter().map(def_use).collect();
        Analysis { kernel, idx, npred: kernel.npred as usize, du, source_only, source_uniform, symbol }
    }

    /// Uniformity of every 32/64-bit register (by [`Index`]); predicates are
    /// tracked internally.
    fn uniform_registers(&self) -> Vec<bool> {
        let code = &self.kernel.code;
        let n = self.idx.len();
        // Optimistic start: everything uniform, then knock values down.
        let uni: Vec<bool> = self.source_only.iter().zip(&self.source_uniform).map(|(&src, &u)| !src || u).collect();
        let mut uni = uni;
        let mut uni_pred = vec![true; self.npred];
        let mut ndefs = vec![0u32; n];
        for du in &self.du {
            for d in &du.defs {
                if let Some(i) = self.idx.of(*d) {
                    ndefs[i] += 1;
                }
            }
        }
        let is_uni = |uni: &[bool], up: &[bool], r: RegRef| -> bool {
            match r.bank {
                Bank::Pred => up.get(r.slot as usize).copied().unwrap_or(false),
                _ => self.idx.of(r).is_some_and(|i| uni[i]),
            }
        };
        loop {
            let mut changed = false;
            // Divergent regions under the current predicate uniformity.
            let divergent = self.divergent_pcs(&uni, &uni_pred);
            for (pc, du) in self.du.iter().enumerate() {
                let guard_ok = code[pc].guard.is_none_or(|g| is_uni(&uni, &uni_pred, pred(g.pred)));
                let srcs_ok = du.uses.iter().all(|&r| is_uni(&uni, &uni_pred, r));
                let ok = du.uniform_capable && guard_ok && srcs_ok;
                for &d in &du.defs {
                    let keep = match d.bank {
                        Bank::Pred => ok,
                        _ => {
                            let i = self.idx.of(d);
                            ok && !(divergent[pc] && i.is_some_and(|i| ndefs[i] > 1))
                        }
                    };
                    if keep {
                        continue;
                    }
                    match d.bank {
                        Bank::Pred => {
                            if let Some(u) = uni_pred.get_mut(d.slot as usize) {
                                if *u {
                                    *u = false;
                                    changed = true;
                                }
                            }
                        }
                        _ => {
                            if let Some(i) = self.idx.of(d) {
                                if uni[i] {
                                    uni[i] = false;
                                    changed = true;
                                }
                            }
                        }
                    }
                }
            }
            if !changed {
                return uni;
            }
        }
    }

    /// Instructions inside a divergent region: reachable from a branch on a
    /// non-uniform predicate (or index) before its reconvergence point.
    fn divergent_pcs(&self, uni: &[bool], uni_pred: &[bool]) -> Vec<bool> {
        let code = &self.kernel.code;
        let n = code.len();
        let mut div = vec![false; n];
        // Visit marks, one generation per branch (no per-branch allocation).
        let mut seen = vec![0u32; n];
        let mut generation = 0u32;
        for (pc, inst) in code.iter().enumerate() {
            let Control::Branch { reconv, .. } = inst.op.flow() else { continue };
            // `brx.idx` diverges on a non-uniform index, `bra` on a non-uniform guard.
            let divergent = if let Op::BrxIdx { index, .. } = &inst.op {
                !self.idx.of(*index).is_some_and(|i| uni[i])
            } else {
                inst.guard.is_some_and(|g| !uni_pred.get(g.pred as usize).copied().unwrap_or(false))
            };
            if !divergent {
                continue;
            }
            let stop = reconv as usize; // NO_RECONV is beyond every pc
            generation += 1;
            let mut stack: Vec<usize> = successors(code, pc).into_iter().filter(|&s| s < n && s != stop).collect();
            while let Some(p) = stack.pop() {
                if seen[p] == generation {
                    continue;
                }
                seen[p] = generation;
                div[p] = true;
                for s in successors(code, p) {
                    if s < n && s != stop && seen[s] != generation {
                        stack.push(s);
                    }
                }
            }
        }
        div
    }

    /// Basic blocks as `[start, end)` ranges and their successor blocks.
    fn blocks(&self) -> (Vec<(usize, usize)>, Vec<Vec<usize>>) {
        let code = &self.kernel.code;
        let n = code.len();
        let leader = crate::cfg::block_leaders(code);
        let starts: Vec<usize> = (0..n).filter(|&pc| leader[pc]).collect();
        let mut block_of = vec![0usize; n];
        let mut ranges = Vec::with_capacity(starts.len());
        for (b, &st) in starts.iter().enumerate() {
            let end = starts.get(b + 1).copied().unwrap_or(n);
            ranges.push((st, end));
            block_of[st..end].fill(b);
        }
        let succ = ranges
            .iter()
            .map(|&(_, end)| {
                let mut v: Vec<usize> = successors(code, end - 1).into_iter().filter(|&s| s < n).map(|s| block_of[s]).collect();
                v.sort_unstable();
                v.dedup();
                v
            })
            .collect();
        (ranges, succ)
    }

    /// Backward liveness of the non-uniform registers (block-level sets, then
    /// one walk per block), and everything the estimate needs from it.
    fn flow(&self, uniform: &[bool]) -> Flow {
        let code = &self.kernel.code;
        let n = code.len();
        let nr = self.idx.len();
        let tracked = |r: RegRef| -> Option<usize> { self.idx.of(r).filter(|&i| !uniform[i] && !self.source_only[i]) };
        let uses: Vec<Vec<usize>> = self.du.iter().map(|du| du.uses.iter().filter_map(|&r| tracked(r)).collect()).collect();
        let defs: Vec<Vec<usize>> = self.du.iter().map(|du| du.defs.iter().filter_map(|&r| tracked(r)).collect()).collect();
        let step = |cur: &mut BitSet, pc: usize| {
            if code[pc].guard.is_none() {
                for &d in &defs[pc] {
                    cur.remove(d);
                }
            }
            for &u in &uses[pc] {
                cur.insert(u);
            }
        };
        let (ranges, succ) = self.blocks();
        let nb = ranges.len();
        let mut live_in = vec![BitSet::new(nr); nb];
        loop {
            let mut changed = false;
            for b in (0..nb).rev() {
                let mut cur = BitSet::new(nr);
                for &s in &succ[b] {
                    cur.union_with(&live_in[s]);
                }
                for pc in (ranges[b].0..ranges[b].1).rev() {
                    step(&mut cur, pc);
                }
                if cur != live_in[b] {
                    live_in[b] = cur;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        let weight = |s: &BitSet| -> u32 { s.iter().map(|i| self.idx.weight(i)).sum() };
        let mut f = Flow {
            defs: Vec::new(),
            died: vec![Vec::new(); n],
            peak: (0, None),
            edges: Vec::new(),
            temps: Vec::new(),
            entry_live: live_in.first().map(|s| s.iter().collect()).unwrap_or_default(),
            too_big: false,
        };
        for b in 0..nb {
            let mut cur = BitSet::new(nr);
            for &s in &succ[b] {
                cur.union_with(&live_in[s]);
            }
            for pc in (ranges[b].0..ranges[b].1).rev() {
                // `cur` is live-out here.
                let mut after = weight(&cur);
                for (k, &d) in defs[pc].iter().enumerate() {
                    if !cur.contains(d) && !defs[pc][..k].contains(&d) {
                        after += self.idx.weight(d);
                    }
                }
                if f.edges.len() < MAX_EDGES {
                    for &d in &defs[pc] {
                        for v in cur.iter().chain(defs[pc].iter().copied()) {
                            if v != d {
                                f.edges.push((d as u32, v as u32));
                            }
                        }
                    }
                } else {
                    f.too_big = true;
                }
                for &i in uses[pc].iter().chain(&defs[pc]) {
                    if !cur.contains(i) && !f.died[pc].contains(&i) {
                        f.died[pc].push(i);
                    }
                }
                step(&mut cur, pc);
                // `cur` is live-in here.
                let inn = weight(&cur);
                let mut p = inn.max(after);
                // A uniform or symbol 64-bit address base is materialised in a
                // pair for the one access that needs it.
                let mat = self.du[pc].addr_base.and_then(|b| {
                    let i = self.idx.of(b)?;
                    ((uniform[i] || self.symbol[i]) && !cur.contains(i)).then(|| self.idx.weight(i))
                });
                if let Some(w) = mat {
                    p = p.max(inn + w);
                    let conflicts: Vec<usize> = cur.iter().chain(defs[pc].iter().copied()).collect();
                    f.temps.push((pc, w, conflicts));
                }
                if p > f.peak.0 {
                    f.peak = (p, Some(pc as u32));
                }
            }
        }
        f.defs = defs;
        f
    }

    /// Simulated allocation: greedy colouring of the interference graph in
    /// program order, each value at the lowest free register aligned to its
    /// width (pairs for 64-bit values, quads for `.v4` load results), with
    /// `R1` reserved for the stack pointer and a register that just fell
    /// free left alone for [`REUSE_DELAY`] instructions. Returns the
    /// registers spanned (highest register used + 1), or `None` when the
    /// kernel is too large for the graph.
    fn allocate(&self, f: &Flow) -> Option<u32> {
        if f.too_big {
            return None;
        }
        let code = &self.kernel.code;
        let n = code.len();
        let nr = self.idx.len();
        // Nodes: vector-load groups first, then single values, then the
        // momentary address pairs.
        let mut node_of = vec![usize::MAX; nr];
        let mut width: Vec<u32> = Vec::new();
        let mut order_pc: Vec<usize> = Vec::new();
        for (pc, inst) in code.iter().enumerate() {
            if let Op::Ld { n: k, d, .. } = &inst.op {
                if *k > 1 {
                    let fresh: Vec<usize> = d
                        .iter()
                        .flatten()
                        .filter_map(|&r| self.idx.of(r))
                        .filter(|&i| node_of[i] == usize::MAX && f.defs[pc].contains(&i))
                        .collect();
                    if fresh.len() > 1 {
                        let id = width.len();
                        width.push(u32::from(*k).next_power_of_two().min(4));
                        order_pc.push(pc);
                        for i in fresh {
                            node_of[i] = id;
                        }
                    }
                }
            }
        }
        let mut first_def = vec![usize::MAX; nr];
        for pc in (0..n).rev() {
            for &d in &f.defs[pc] {
                first_def[d] = pc;
            }
        }
        let add_value = |i: usize, node_of: &mut Vec<usize>, width: &mut Vec<u32>, order_pc: &mut Vec<usize>| {
            if node_of[i] == usize::MAX {
                node_of[i] = width.len();
                width.push(self.idx.weight(i));
                order_pc.push(if first_def[i] == usize::MAX { 0 } else { first_def[i] });
            }
        };
        for &i in &f.entry_live {
            add_value(i, &mut node_of, &mut width, &mut order_pc);
        }
        for &(a, b) in &f.edges {
            add_value(a as usize, &mut node_of, &mut width, &mut order_pc);
            add_value(b as usize, &mut node_of, &mut width, &mut order_pc);
        }
        for d in f.defs.iter().flatten() {
            add_value(*d, &mut node_of, &mut width, &mut order_pc);
        }
        let mut adj: Vec<Vec<u32>> = vec![Vec::new(); width.len()];
        let edge = |a: usize, b: usize, adj: &mut Vec<Vec<u32>>| {
            if a != b && a != usize::MAX && b != usize::MAX {
                adj[a].push(b as u32);
                adj[b].push(a as u32);
            }
        };
        for &(a, b) in &f.edges {
            edge(node_of[a as usize], node_of[b as usize], &mut adj);
        }
        for (k, &a) in f.entry_live.iter().enumerate() {
            for &b in &f.entry_live[k + 1..] {
                edge(node_of[a], node_of[b], &mut adj);
            }
        }
        for pc in 0..n {
            for q in pc.saturating_sub(REUSE_DELAY)..pc {
                for &v in &f.died[q] {
                    for &d in &f.defs[pc] {
                        edge(node_of[d], node_of[v], &mut adj);
                    }
                }
            }
        }
        for (pc, w, conflicts) in &f.temps {
            let t = width.len();
            width.push(*w);
            order_pc.push(*pc);
            adj.push(Vec::new());
            for &v in conflicts {
                edge(t, node_of[v], &mut adj);
            }
        }
        for a in adj.iter_mut() {
            a.sort_unstable();
            a.dedup();
        }
        let mut order: Vec<usize> = (0..width.len()).collect();
        order.sort_by_key(|&v| (order_pc[v], v));
        let mut slot = vec![u32::MAX; width.len()];
        let mut span = 2; // R0 and R1 at least
        let mut taken: Vec<(u32, u32)> = Vec::new();
        for v in order {
            let w = width[v];
            taken.clear();
            taken.push((1, 2)); // R1: the stack pointer
            for &u in &adj[v] {
                let u = u as usize;
                if slot[u] != u32::MAX {
                    taken.push((slot[u], slot[u] + width[u]));
                }
            }
            let mut s = 0;
            while taken.iter().any(|&(a, b)| s < b && a < s + w) {
                s += w;
            }
            slot[v] = s;
            span = span.max(s + w);
        }
        Some(span)
    }
}

/// Interference edges above this many make [`Analysis::allocate`] give up
/// (the estimate falls back to pressure plus a constant).
const MAX_EDGES: usize = 1 << 23;

/// What the backward walk found.
struct Flow {
    /// Tracked definitions per instruction.
    defs: Vec<Vec<usize>>,
    /// Tracked values whose last use (or dead definition) is at each instruction.
    died: Vec<Vec<usize>>,
    /// Peak weighted pressure and its instruction.
    peak: (u32, Option<u32>),
    /// (definition, value live across it).
    edges: Vec<(u32, u32)>,
    /// Momentary address pairs: (instruction, width, values they conflict with).
    temps: Vec<(usize, u32, Vec<usize>)>,
    /// Values live into the entry (read before any definition).
    entry_live: Vec<usize>,
    /// Whether `edges` hit [`MAX_EDGES`].
    too_big: bool,
}
