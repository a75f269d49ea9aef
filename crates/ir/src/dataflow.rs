//! Per-thread register dataflow over a kernel's code, shared by the register
//! packing ([`crate::pack`]) and the warp slot's reset between blocks
//! ([`crate::entry_reads`]).
//!
//! Both need the same facts, so they are worked out once here: each
//! instruction's 32- and 64-bit registers as bit rows (read, written, and
//! written whatever its guard), read from the op table's slot visitor, and
//! the two fixpoints over [`crate::cfg::successors`] built on them. The
//! analysis is per thread, as PTX semantics are: a guarded write does not
//! kill (the lanes it skips keep the old value). Predicates are left out.
//!
//! The register estimate ([`crate::regs`]) keeps a liveness of its own: it
//! counts non-uniform values by width over basic blocks, and must answer
//! for every kernel, including those with functions and those too large
//! for per-instruction rows.

use crate::cfg::successors;
use crate::inst::{Bank, Op};
use crate::kernel::Kernel;
use crate::op_table::RegRole;

/// Beyond this many bits of state (instructions × registers), no analysis.
const MAX_STATE_BITS: usize = 1 << 26;

/// Sets bit `i` of a row.
#[inline]
pub(crate) fn set(row: &mut [u64], i: usize) {
    row[i / 64] |= 1 << (i % 64);
}

/// Whether bit `i` of a row is set.
#[inline]
pub(crate) fn has(row: &[u64], i: usize) -> bool {
    row[i / 64] >> (i % 64) & 1 == 1
}

/// The set bits of a row, ascending.
pub(crate) fn bits(row: &[u64]) -> Vec<usize> {
    row.iter().enumerate().flat_map(|(w, &x)| (0..64).filter(move |b| x >> b & 1 == 1).map(move |b| w * 64 + b)).collect()
}

/// A kernel's registers per instruction, as rows of `words` 64-bit words:
/// register `i` is 32-bit slot `i` below `n32`, 64-bit slot `i - n32` from there.
pub(crate) struct RegFlow {
    n32: usize,
    n: usize,
    words: usize,
    uses: Vec<u64>,
    defs: Vec<u64>,
    kills: Vec<u64>,
    succ: Vec<Vec<usize>>,
    /// Read by an instruction that reads other lanes (shuffles, votes,
    /// matches, tensor-core and matrix-movement ops).
    pub(crate) cross_lane_reads: Vec<u64>,
    /// Written by a tensor-core op.
    pub(crate) tensor_writes: Vec<u64>,
    /// Written by any instruction.
    pub(crate) written: Vec<u64>,
    /// Named by any instruction.
    pub(crate) named: Vec<u64>,
}

impl RegFlow {
    /// The rows of `k`, or `None` where the analysis does not apply: kernels
    /// with functions of their own (a frame per call) and kernels too large.
    pub(crate) fn new(k: &Kernel) -> Option<RegFlow> {
        let code = &k.code;
        let (n32, n) = (k.n32 as usize, k.n32 as usize + k.n64 as usize);
        let words = n.div_ceil(64).max(1);
        if !k.functions.is_empty() || k.frame_regs.is_some() || code.len().saturating_mul(words * 64) > MAX_STATE_BITS {
            return None;
        }
        let mut f = RegFlow {
            n32,
            n,
            words,
            uses: vec![0; words * code.len()],
            defs: vec![0; words * code.len()],
            kills: vec![0; words * code.len()],
            succ: (0..code.len()).map(|pc| successors(code, pc).into_iter().filter(|&s| s < code.len()).collect()).collect(),
            cross_lane_reads: vec![0; words],
            tensor_writes: vec![0; words],
            written: vec![0; words],
            named: vec![0; words],
        };
        for (pc, inst) in code.iter().enumerate() {
            let cross_lane = inst.op.reads_other_lanes();
            let tensor = matches!(inst.op, Op::Mma(_));
            let row = pc * words..(pc + 1) * words;
            inst.op.visit_slots(|role, bank, &slot| {
                let Some(i) = f.index(bank, slot) else { return };
                set(&mut f.named, i);
                match role {
                    RegRole::Read => {
                        set(&mut f.uses[row.clone()], i);
                        if cross_lane {
                            set(&mut f.cross_lane_reads, i);
                        }
                    }
                    RegRole::Write => {
                        set(&mut f.defs[row.clone()], i);
                        set(&mut f.written, i);
                        if tensor {
                            set(&mut f.tensor_writes, i);
                        }
                        if inst.guard.is_none() {
                            set(&mut f.kills[row.clone()], i);
                        }
                    }
                }
            });
        }
        Some(f)
    }

    /// Registers in all: 32-bit, then 64-bit.
    pub(crate) fn len(&self) -> usize {
        self.n
    }

    /// 32-bit registers (the first `n32` indices).
    pub(crate) fn n32(&self) -> usize {
        self.n32
    }

    /// Words in a row.
    pub(crate) fn words(&self) -> usize {
        self.words
    }

    /// The index of a register slot (`None`: a predicate, or out of range).
    pub(crate) fn index(&self, bank: Bank, slot: u32) -> Option<usize> {
        let i = match bank {
            Bank::R32 => slot as usize,
            Bank::R64 => self.n32 + slot as usize,
            Bank::Pred => return None,
        };
        (i < self.n).then_some(i)
    }

    /// Row `pc` of a per-instruction table.
    pub(crate) fn row<'t>(&self, table: &'t [u64], pc: usize) -> &'t [u64] {
        &table[pc * self.words..][..self.words]
    }

    /// Registers instruction `pc` reads.
    pub(crate) fn uses(&self, pc: usize) -> &[u64] {
        self.row(&self.uses, pc)
    }

    /// Registers instruction `pc` writes (guarded or not).
    pub(crate) fn defs(&self, pc: usize) -> &[u64] {
        self.row(&self.defs, pc)
    }

    /// Backward liveness to a fixpoint: per instruction, the registers live
    /// into it, `uses | (live out & !kills)`.
    pub(crate) fn live_in(&self) -> Vec<u64> {
        let (words, len) = (self.words, self.succ.len());
        let mut live_in = vec![0u64; words * len];
        let mut out = vec![0u64; words];
        let mut changed = true;
        while changed {
            changed = false;
            for pc in (0..len).rev() {
                self.live_out(&live_in, pc, &mut out);
                for w in 0..words {
                    let v = self.uses[pc * words + w] | (out[w] & !self.kills[pc * words + w]);
                    changed |= v != live_in[pc * words + w];
                    live_in[pc * words + w] = v;
                }
            }
        }
        live_in
    }

    /// Into `out`: the registers live out of instruction `pc` (live into a successor).
    pub(crate) fn live_out(&self, live_in: &[u64], pc: usize, out: &mut [u64]) {
        out.fill(0);
        for &s in &self.succ[pc] {
            for (o, &x) in out.iter_mut().zip(self.row(live_in, s)) {
                *o |= x;
            }
        }
    }

    /// Forward "definitely written" to a fixpoint: per instruction, the
    /// registers every path from the entry writes (unguarded) before it.
    pub(crate) fn written_before(&self) -> Vec<u64> {
        let (words, len) = (self.words, self.succ.len());
        // All ones until a path reaches an instruction; the entry starts with none.
        let mut ins = vec![u64::MAX; words * len];
        if len > 0 {
            ins[..words].fill(0);
        }
        let mut out = vec![0u64; words];
        let mut changed = true;
        while changed {
            changed = false;
            for pc in 0..len {
                for w in 0..words {
                    out[w] = ins[pc * words + w] | self.kills[pc * words + w];
                }
                for &s in &self.succ[pc] {
                    for w in 0..words {
                        let v = ins[s * words + w] & out[w];
                        changed |= v != ins[s * words + w];
                        ins[s * words + w] = v;
                    }
                }
            }
        }
        ins
    }
}
