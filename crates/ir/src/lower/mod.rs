//! Lowering: syntax tree to decoded kernel.
//!
//! Names become register slots (allocated on first use, so `%r<100000>` costs
//! nothing until used), immediates become constant registers, `.func` calls
//! are inlined (recursive, address-taken and too-large functions get code of
//! their own: `calls.rs`), labels become program counters, and
//! every branch gets its reconvergence point from the post-dominator tree.
//! Each PTX instruction is matched once (`instruction.rs` dispatches on the
//! opcode to one file per family); anything not understood is an error
//! naming the instruction and its line. Modifiers the engine does not need
//! (ordering, scope, cache operator, `.pragma "nounroll"`) are kept in each
//! instruction's [`InstMeta`](crate::op_table::InstMeta).

use crate::cfg::{immediate_post_dominators, NO_RECONV};
use crate::error::LowerError;
use crate::inst::*;
use crate::kernel::*;
use crate::op_table::{FenceKind, InstMeta};
use std::collections::HashMap;
use warpsim_numerics::float::{FloatOp, TestpClass};
use warpsim_numerics::int::{IntOp, PrmtMode};
use warpsim_numerics::{BoolOp, CmpOp, FMode, Rounding, ScalarType};
use warpsim_ptx::ast::{self, AddrBase, Function, Instruction, Module, Operand, Span, StateSpace, Statement};

// One file per role: scopes and names, operands, the opcode dispatch, and
// one per instruction family (tensor-core forms in `mma`).
mod arith;
mod calls;
mod control;
mod convert;
mod instruction;
mod memory;
mod mma;
mod operands;
mod scope;
mod warp;

pub use crate::window::{LOCAL_WINDOW, SHARED_WINDOW};

const MAX_INLINE_DEPTH: usize = 32;
/// `.func` calls inlined into one kernel: a call tree of modest depth can
/// still be exponential in size (each level calling the next twice).
const MAX_INLINED_CALLS: u32 = 1 << 16;
/// Statements lowered for one kernel, inlined bodies included.
const MAX_LOWERED_STATEMENTS: u64 = 1 << 24;
/// Module-level `.global`/`.const` bytes, all variables together (their
/// initial images are allocated here).
const MAX_GLOBAL_BYTES: u64 = 1 << 30;

type LResult<T> = Result<T, LowerError>;

/// Lowers module-level variables and every kernel of the module.
pub fn lower_program(m: &Module, file: &str, src: &str) -> LResult<Program> {
    let mut p = lower_globals(m, file, src)?;
    let lines = LineIndex::new(src);
    let calls = calls::ModuleCalls::new(m);
    for f in m.entries() {
        p.kernels.push(lower_kernel(m, f, file, src, &lines, &calls)?);
    }
    Ok(p)
}

/// Lowers module-level variables and the one kernel `name`.
pub fn lower_program_kernel(m: &Module, file: &str, src: &str, name: &str) -> LResult<Option<Program>> {
    let Some(f) = m.entries().find(|f| f.name == name) else {
        return Ok(None);
    };
    let mut p = lower_globals(m, file, src)?;
    p.kernels.push(lower_kernel(m, f, file, src, &LineIndex::new(src), &calls::ModuleCalls::new(m))?);
    Ok(Some(p))
}

/// Byte offsets of line starts, so that the line of each instruction is a
/// binary search rather than a scan from the top of the file.
struct LineIndex {
    starts: Vec<u32>,
}

impl LineIndex {
    fn new(src: &str) -> Self {
        let mut starts = vec![0u32];
        starts.extend(src.bytes().enumerate().filter(|&(_, b)| b == b'\n').map(|(i, _)| i as u32 + 1));
        LineIndex { starts }
    }

    /// 1-based line of byte `offset`.
    fn line(&self, offset: u32) -> u32 {
        self.starts.partition_point(|&s| s <= offset) as u32
    }
}

fn lower_globals(m: &Module, file: &str, src: &str) -> LResult<Program> {
    let mut p = Program { source_name: file.to_string(), ..Default::default() };
    let mut total = 0u64;
    for (i, name) in &m.files {
        p.files.insert(*i, name.clone());
    }
    let mut all: Vec<(&ast::VarDecl, String)> = m.globals.iter().map(|g| (g, g.name.clone())).collect();
    for f in &m.functions {
        scoped_globals(f.body.as_deref().unwrap_or(&[]), &mut all);
    }
    for (g, name) in all {
        let is_const = match g.space {
            StateSpace::Global => false,
            StateSpace::Const => true,
            StateSpace::Shared => continue, // module-level shared: laid out per kernel
            _ => continue,
        };
        let size = match g.size_bytes() {
            Some(s) => s,
            None if g.is_extern => continue,
            None => return Err(LowerError::new(file, src, g.span, "array size unknown")),
        };
        total = total.saturating_add(size);
        if total > MAX_GLOBAL_BYTES {
            return Err(LowerError::new(
                file,
                src,
                g.span,
                format!("module variables too large: more than {MAX_GLOBAL_BYTES} bytes in all"),
            ));
        }
        let elem = (g.ty.bytes() as usize).min(16);
        let mut init = vec![0u8; size as usize];
        let mut relocs = Vec::new();
        if let Some(vals) = &g.init {
            for (k, v) in vals.iter().enumerate() {
                let off = k * elem;
                if off + elem > init.len() {
                    break;
                }
                // 128 bits: `.b128` elements are 16 bytes wide (integers sign-extend).
                let bits: u128 = match v {
                    ast::InitValue::Int(i) => *i as i128 as u128,
                    ast::InitValue::Float(f) => match g.ty {
                        ScalarType::F32 => (*f as f32).to_bits() as u128,
                        ScalarType::F16 => half::f16::from_f64(*f).to_bits() as u128,
                        ScalarType::BF16 => half::bf16::from_f64(*f).to_bits() as u128,
                        _ => f.to_bits() as u128,
                    },
                    // A function's address is known now; a variable's at allocation.
                    ast::InitValue::Symbol(s, add) if m.function(s).is_some() => {
                        calls::function_index(m, s).map_or(0, function_addr).wrapping_add(*add as u64) as u128
                    }
                    ast::InitValue::Symbol(s, add) => {
                        relocs.push((off as u64, s.clone(), *add));
                        0
                    }
                };
                init[off..off + elem].copy_from_slice(&bits.to_le_bytes()[..elem]);
            }
        }
        p.globals.push(GlobalVar { name, is_const, size, align: g.alignment(), init, relocs, managed: g.managed });
    }
    Ok(p)
}

/// The program-wide name of a `.global`/`.const` variable declared inside a
/// function: its name and byte offset (`@` cannot occur in a PTX name, so it
/// clashes with no module variable nor with another scope's).
fn scoped_global_name(d: &ast::VarDecl) -> String {
    format!("{}@{}", d.name, d.span.start)
}

/// Function-scoped `.global`/`.const` variables (nested scopes included):
/// they live for the whole program like module ones.
fn scoped_globals<'m>(stmts: &'m [Statement], out: &mut Vec<(&'m ast::VarDecl, String)>) {
    for s in stmts {
        match s {
            Statement::Decl(d) if matches!(d.space, StateSpace::Global | StateSpace::Const) && !d.is_extern => {
                out.push((d, scoped_global_name(d)))
            }
            Statement::Scope(inner) => scoped_globals(inner, out),
            _ => {}
        }
    }
}

#[derive(Clone, Debug)]
enum Sym {
    /// A register and its declared type.
    #[allow(dead_code)]
    Reg(RegRef, ScalarType),
    Shared(u32),
    /// Per-thread local memory offset (`.local` and call `.param` variables).
    Local(u32),
    KParam(u32),
    Global(String),
    BranchTargets(Vec<String>),
    /// A `.reg .v2`/`.v4` vector register of this many elements; element `k`
    /// is the scalar register named `name.x`/`.y`/`.z`/`.w`.
    Vector(u8),
}

/// Element names of a vector register (`r.x`, `r.y`, `r.z`, `r.w`).
const VECTOR_ELEMS: [&str; 4] = ["x", "y", "z", "w"];

#[derive(Default)]
struct Scope {
    names: HashMap<String, Sym>,
    /// `%r<8>` declarations, resolved on first use: prefix -> (declaration
    /// order, type, count). Keyed by prefix so that a use costs a few hash
    /// look-ups however many ranges the scope declares.
    ranges: HashMap<String, Vec<(u32, ScalarType, u32)>>,
    n_ranges: u32,
}

impl Scope {
    fn declare_range(&mut self, prefix: &str, ty: ScalarType, count: u32) {
        self.ranges.entry(prefix.to_string()).or_default().push((self.n_ranges, ty, count));
        self.n_ranges += 1;
    }

    /// The type of `name` if it is `prefix` + a number below the count of a
    /// range declared here (the earliest such declaration wins).
    fn range_type(&self, name: &str) -> Option<ScalarType> {
        if self.ranges.is_empty() {
            return None;
        }
        let digits = name.bytes().rev().take_while(|b| b.is_ascii_digit()).count();
        let mut best: Option<(u32, ScalarType)> = None;
        // The number is the tail of the trailing digits (at most 10 of them fit a u32).
        for split in name.len() - digits.min(10)..name.len() {
            let num = &name[split..];
            if num.len() > 1 && num.starts_with('0') {
                continue;
            }
            let (Ok(k), Some(list)) = (num.parse::<u32>(), self.ranges.get(&name[..split])) else {
                continue;
            };
            if let Some(&(order, ty, _)) = list.iter().find(|r| k < r.2) {
                if best.is_none_or(|b| order < b.0) {
                    best = Some((order, ty));
                }
            }
        }
        best.map(|b| b.1)
    }
}

struct Frame {
    /// Label namespace of this inlined instance.
    prefix: String,
    /// Label that `ret` jumps to (None in the kernel itself).
    ret_label: Option<String>,
}

struct Lowerer<'a> {
    m: &'a Module,
    file: &'a str,
    src: &'a str,
    lines: &'a LineIndex,
    /// Statements lowered so far (see `MAX_LOWERED_STATEMENTS`).
    statements: u64,
    code: Vec<Inst>,
    info: Vec<InstInfo>,
    /// (pc, label keys) of branches to patch once all labels are known.
    fixups: Vec<(usize, Vec<String>, Span)>,
    labels: HashMap<String, Pc>,
    scopes: Vec<Scope>,
    frames: Vec<Frame>,
    call_stack: Vec<String>,
    inline_counter: u32,
    n32: u32,
    n64: u32,
    npred: u32,
    declared32: u32,
    const32: HashMap<u32, u32>,
    const64: HashMap<u64, u32>,
    specials: HashMap<Special, RegRef>,
    symbol_addrs: HashMap<String, u32>,
    params: Vec<KernelParam>,
    param_bytes: u32,
    shared_bytes: u32,
    extern_shared: Vec<(String, u32)>,
    local_bytes: u32,
    cur_loc: Option<SourceLoc>,
    cur_inlined: Option<SourceLoc>,
    cc: Option<u32>,
    /// Constant registers holding extern-shared addresses: (register, offset past the array start).
    extern_patches: Vec<(RegRef, i64)>,
    /// Byte offset where the previous instruction statement ended (pragmas
    /// are skipped by the parser and found in the text between statements).
    prev_inst_end: u32,
    /// A `.pragma "nounroll"` was seen since the previous instruction.
    pending_nounroll: bool,
    /// Some vector register was declared (operands are then checked for one).
    has_vectors: bool,
    /// Offset of the reserved shared memory (`%reserved_smem_offset_*`), once used.
    reserved_smem: Option<u32>,
    /// The module's call graph (which functions get code of their own).
    calls: &'a calls::ModuleCalls,
    /// Functions with code of their own in this kernel, by index.
    real_fns: Vec<calls::RealFn>,
    real_by_name: HashMap<String, u32>,
    /// The real function being lowered (`None`: the kernel).
    current_real: Option<u32>,
    /// Calls whose caller's frame size is known only at the end: (pc, caller).
    frame_patches: Vec<(usize, Option<u32>)>,
    /// Frame-pointer registers (64-bit, 32-bit), once a real function exists.
    fp: Option<(RegRef, RegRef)>,
}

/// Bytes of shared memory `%reserved_smem_offset_*` name (the 1 KiB per
/// block that sm_80 and later reserve for the system).
const RESERVED_SMEM_BYTES: u32 = 1024;

/// `x` rounded up to a multiple of `a`; `None` past `u32::MAX`.
fn align_up(x: u32, a: u32) -> Option<u32> {
    let a = a.max(1);
    x.div_ceil(a).checked_mul(a)
}

/// Lays out `size` bytes aligned to `align` after `*used` bytes; returns the offset.
fn place(used: &mut u32, size: Option<u64>, align: u32) -> Option<u32> {
    let off = align_up(*used, align)?;
    let size = u32::try_from(size?).ok()?;
    *used = off.checked_add(size)?;
    Some(off)
}

fn lower_kernel(m: &Module, f: &Function, file: &str, src: &str, lines: &LineIndex, calls: &calls::ModuleCalls) -> LResult<Kernel> {
    if let Some(c) = f.tuning.reqnctapercluster.filter(|c| c.iter().map(|&n| n as u64).product::<u64>() > 1) {
        let msg = format!(
            "`.reqnctapercluster {}, {}, {}`: clusters of more than one CTA are not modelled (warpsim runs clusters of one CTA)",
            c[0], c[1], c[2]
        );
        return Err(LowerError::new(file, src, f.span, msg));
    }
    let mut l = Lowerer {
        m,
        file,
        src,
        lines,
        statements: 0,
        code: Vec::new(),
        info: Vec::new(),
        fixups: Vec::new(),
        labels: HashMap::new(),
        scopes: vec![Scope::default()],
        frames: vec![Frame { prefix: String::new(), ret_label: None }],
        call_stack: vec![f.name.clone()],
        inline_counter: 0,
        n32: 0,
        n64: 0,
        npred: 0,
        declared32: 0,
        const32: HashMap::new(),
        const64: HashMap::new(),
        specials: HashMap::new(),
        symbol_addrs: HashMap::new(),
        params: Vec::new(),
        param_bytes: 0,
        shared_bytes: 0,
        extern_shared: Vec::new(),
        local_bytes: 0,
        cur_loc: None,
        cur_inlined: None,
        has_vectors: false,
        reserved_smem: None,
        cc: None,
        extern_patches: Vec::new(),
        prev_inst_end: f.span.start,
        pending_nounroll: false,
        calls,
        real_fns: Vec::new(),
        real_by_name: HashMap::new(),
        current_real: None,
        frame_patches: Vec::new(),
        fp: None,
    };
    // Module-level names: globals, consts, shared.
    for g in &m.globals {
        match g.space {
            StateSpace::Global | StateSpace::Const => {
                l.scopes[0].names.insert(g.name.clone(), Sym::Global(g.name.clone()));
            }
            StateSpace::Shared => l.declare_shared(g)?,
            _ => {}
        }
    }
    // Kernel parameters.
    l.scopes.push(Scope::default());
    for p in &f.params {
        let size = p.size_bytes().unwrap_or(0);
        let Some(off) = place(&mut l.param_bytes, Some(size), p.alignment()) else {
            return l.err(p.span, "kernel parameters too large");
        };
        let size = size as u32;
        l.params.push(KernelParam { name: p.name.clone(), offset: off, size, ty: p.ty });
        l.scopes.last_mut().unwrap().names.insert(p.name.clone(), Sym::KParam(off));
    }
    let body = f.body.as_ref().expect("entries have bodies");
    l.scope_statements(body)?;
    // Falling off the end is an exit.
    l.push(Op::Exit, None, f.span, "ret");
    // Functions that are called rather than inlined follow the kernel's code.
    l.finish_real_calls()?;
    // Resolve labels.
    for (pc, keys, span) in std::mem::take(&mut l.fixups) {
        let mut pcs = Vec::with_capacity(keys.len());
        for k in &keys {
            match l.labels.get(k) {
                Some(&t) => pcs.push(t),
                None => {
                    let shown = k.rsplit(':').next().unwrap_or(k);
                    return Err(LowerError::new(file, src, span, format!("undefined label `{shown}`")));
                }
            }
        }
        match &mut l.code[pc].op {
            Op::Bra { target, .. } => *target = pcs[0],
            Op::BrxIdx { targets, .. } => *targets = pcs.into_boxed_slice(),
            _ => {}
        }
    }
    let ipdom = immediate_post_dominators(&l.code);
    for (pc, inst) in l.code.iter_mut().enumerate() {
        match &mut inst.op {
            Op::Bra { reconv, .. } | Op::BrxIdx { reconv, .. } => *reconv = ipdom[pc],
            _ => {}
        }
    }
    let dynamic_shared_offset = {
        let a = l.extern_shared.iter().map(|e| e.1).max().unwrap_or(16).max(16);
        match align_up(l.shared_bytes, a) {
            Some(o) => o,
            None => return l.err(f.span, "shared memory too large"),
        }
    };
    // Extern shared addresses are known only now that the static layout is complete.
    let mut const32: Vec<(u32, u32)> = l.const32.iter().map(|(v, s)| (*s, *v)).collect();
    let mut const64: Vec<(u32, u64)> = l.const64.iter().map(|(v, s)| (*s, *v)).collect();
    for (r, off) in &l.extern_patches {
        let v = (dynamic_shared_offset as i64).wrapping_add(*off) as u64;
        match r.bank {
            Bank::R64 => const64.push((r.slot, v)),
            _ => const32.push((r.slot, v as u32)),
        }
    }
    let _ = NO_RECONV;
    let mut kernel = Kernel {
        name: f.name.clone(),
        code: l.code,
        info: l.info,
        n32: l.n32,
        n64: l.n64,
        npred: l.npred,
        const32,
        const64,
        specials: l.specials.into_iter().map(|(s, r)| (r, s)).collect(),
        symbol_addrs: l.symbol_addrs.into_iter().map(|(n, s)| (s, n)).collect(),
        params: l.params,
        param_bytes: l.param_bytes,
        shared_static_bytes: l.shared_bytes,
        dynamic_shared_offset,
        local_bytes: l.local_bytes,
        tuning: f.tuning,
        declared_regs32: l.declared32,
        functions: l.real_fns.into_iter().map(|f| f.info).collect(),
        frame_regs: l.fp.map(|(a, b)| (a.slot, b.slot)),
        entry_reads: crate::entry_reads::EntryReads::All,
        lane_private: false,
        forward_only: false,
        packed: None,
    };
    kernel.entry_reads = crate::entry_reads::entry_reads(&kernel);
    kernel.lane_private = !kernel.code.iter().any(|i| i.op.reads_other_lanes());
    kernel.forward_only = kernel.code.iter().enumerate().all(|(pc, i)| match &i.op {
        Op::Bra { target, .. } => *target as usize > pc,
        Op::BrxIdx { targets, .. } => targets.iter().all(|&t| t as usize > pc),
        Op::Call(_) => false,
        _ => true,
    });
    kernel.packed = crate::pack::pack_registers(&kernel).map(Box::new);
    Ok(kernel)
}

// Extern shared arrays start where the static layout ends, which is only known at
// the end of lowering; until then their symbol carries this marker offset.
const EXTERN_SHARED: u32 = u32::MAX;

/// Operand type classes, for choosing banks and immediates.
fn bank_of(ty: ScalarType) -> Bank {
    match ty.bits() {
        1 => Bank::Pred,
        64 => Bank::R64,
        _ => Bank::R32,
    }
}

/// An instruction being lowered, for its error messages.
#[derive(Copy, Clone)]
struct At<'s> {
    file: &'s str,
    src: &'s str,
    span: Span,
    /// The opcode with its modifiers.
    full: &'s str,
    nops: usize,
}

impl At<'_> {
    /// `Err` unless the instruction has at least `n` operands.
    fn nops(self, n: usize) -> LResult<()> {
        if self.nops < n {
            Err(LowerError::new(self.file, self.src, self.span, format!("`{}` expects {n} operands, found {}", self.full, self.nops)))
        } else {
            Ok(())
        }
    }

    /// The instruction is not supported (`what` says which part of it).
    fn unsupported(self, what: &str) -> LResult<()> {
        Err(LowerError::new(self.file, self.src, self.span, format!("unsupported instruction `{}`{what}", self.full)))
    }
}

impl<'a> Lowerer<'a> {
    fn at<'s>(&self, i: &Instruction, full: &'s str) -> At<'s>
    where
        'a: 's,
    {
        At { file: self.file, src: self.src, span: i.span, full, nops: i.operands.len() }
    }

    fn err<T>(&self, span: Span, msg: impl Into<String>) -> LResult<T> {
        Err(LowerError::new(self.file, self.src, span, msg))
    }

    fn line_of(&self, span: Span) -> u32 {
        self.lines.line(span.start)
    }

    /// Appends `op`, lowered from the instruction `at`.
    fn emit(&mut self, at: At<'_>, guard: Option<Guard>, op: Op) {
        self.push(op, guard, at.span, at.full);
    }

    fn push(&mut self, op: Op, guard: Option<Guard>, span: Span, opcode: &str) -> usize {
        let mut meta = InstMeta::from_opcode(opcode);
        meta.fence = match op {
            Op::Fence => Some(meta.fence.unwrap_or(FenceKind::NoOrdering)),
            _ => None,
        };
        meta.nounroll = std::mem::take(&mut self.pending_nounroll);
        self.code.push(Inst { op, guard, meta });
        self.info.push(InstInfo {
            ptx_line: self.line_of(span),
            loc: self.cur_loc,
            inlined_at: self.cur_inlined,
            opcode: opcode.to_string(),
        });
        self.code.len() - 1
    }
}

fn elem_type(bits: u32) -> ScalarType {
    match bits {
        8 => ScalarType::B8,
        16 => ScalarType::B16,
        32 => ScalarType::B32,
        _ => ScalarType::B64,
    }
}

fn double_width(ty: ScalarType) -> ScalarType {
    use ScalarType::*;
    match ty {
        U16 => U32,
        S16 => S32,
        U32 => U64,
        S32 => S64,
        B16 => B32,
        B32 => B64,
        t => t,
    }
}

/// Modifiers of one instruction, classified.
struct Mods {
    raw: Vec<String>,
    types: Vec<ScalarType>,
    rnd: Option<Rounding>,
    ftz: bool,
    sat: bool,
    vec: u8,
    cmp: Option<CmpOp>,
    boolop: Option<BoolOp>,
}

impl Mods {
    fn parse(mods: &[String]) -> Mods {
        let mut m = Mods { raw: mods.to_vec(), types: Vec::new(), rnd: None, ftz: false, sat: false, vec: 1, cmp: None, boolop: None };
        for s in mods {
            if let Some(t) = ScalarType::from_ptx(s) {
                m.types.push(t);
            } else if let Some(r) = Rounding::from_ptx(s) {
                m.rnd = Some(r);
            } else {
                match s.as_str() {
                    "ftz" => m.ftz = true,
                    "sat" | "satfinite" => m.sat = true,
                    "v2" => m.vec = 2,
                    "v4" => m.vec = 4,
                    "v8" => m.vec = 8,
                    "and" | "or" | "xor" if m.cmp.is_some() => m.boolop = BoolOp::from_ptx(s),
                    _ => {
                        if m.cmp.is_none() {
                            if let Some(c) = CmpOp::from_ptx(s) {
                                m.cmp = Some(c);
                            }
                        }
                    }
                }
            }
        }
        m
    }

    fn has(&self, s: &str) -> bool {
        self.raw.iter().any(|m| m == s)
    }

    /// The value of the first of `names` (space-separated, in order of
    /// precedence) that the instruction has: `values[i]` for the i-th name.
    fn pick<T: Copy, const N: usize>(&self, names: &str, values: [T; N]) -> Option<T> {
        debug_assert_eq!(names.split(' ').count(), N, "{names}");
        names.split(' ').zip(values).find(|(m, _)| self.has(m)).map(|(_, v)| v)
    }

    /// The instruction's (last) type suffix.
    fn ty(&self) -> Option<ScalarType> {
        self.types.last().copied()
    }
}

#[cfg(test)]
mod tests;
