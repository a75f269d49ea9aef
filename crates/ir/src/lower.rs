//! Lowering: syntax tree to decoded kernel.
//!
//! Names become register slots (allocated on first use, so `%r<100000>` costs
//! nothing until used), immediates become constant registers, `.func` calls
//! are inlined (recursion is reported), labels become program counters, and
//! every branch gets its reconvergence point from the post-dominator tree.
//! Each PTX instruction is matched here, once; anything not understood is an
//! error naming the instruction and its line.

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

/// Tensor-core, matrix-movement, asynchronous-copy and mbarrier instructions.
#[path = "lower_mma.rs"]
mod lower_mma;

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
    for f in m.entries() {
        p.kernels.push(lower_kernel(m, f, file, src, &lines)?);
    }
    Ok(p)
}

/// Lowers module-level variables and the one kernel `name`.
pub fn lower_program_kernel(m: &Module, file: &str, src: &str, name: &str) -> LResult<Option<Program>> {
    let Some(f) = m.entries().find(|f| f.name == name) else {
        return Ok(None);
    };
    let mut p = lower_globals(m, file, src)?;
    p.kernels.push(lower_kernel(m, f, file, src, &LineIndex::new(src))?);
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
    for g in &m.globals {
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
                    ast::InitValue::Symbol(s, add) => {
                        relocs.push((off as u64, s.clone(), *add));
                        0
                    }
                };
                init[off..off + elem].copy_from_slice(&bits.to_le_bytes()[..elem]);
            }
        }
        p.globals.push(GlobalVar { name: g.name.clone(), is_const, size, align: g.alignment(), init, relocs });
    }
    Ok(p)
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
}

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
}

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

fn lower_kernel(m: &Module, f: &Function, file: &str, src: &str, lines: &LineIndex) -> LResult<Kernel> {
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
        cc: None,
        extern_patches: Vec::new(),
        prev_inst_end: 0,
        pending_nounroll: false,
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
    Ok(Kernel {
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
        reqntid: f.reqntid,
        maxntid: f.maxntid,
        minnctapersm: f.minnctapersm,
        maxnreg: f.maxnreg,
        declared_regs32: l.declared32,
    })
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

impl<'a> Lowerer<'a> {
    fn err<T>(&self, span: Span, msg: impl Into<String>) -> LResult<T> {
        Err(LowerError::new(self.file, self.src, span, msg))
    }

    fn line_of(&self, span: Span) -> u32 {
        self.lines.line(span.start)
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

    fn declare_shared(&mut self, d: &ast::VarDecl) -> LResult<()> {
        if d.is_extern || d.size_bytes().is_none() {
            self.extern_shared.push((d.name.clone(), d.alignment()));
            self.scopes[0].names.insert(d.name.clone(), Sym::Shared(EXTERN_SHARED));
            return Ok(());
        }
        let Some(off) = place(&mut self.shared_bytes, d.size_bytes(), d.alignment()) else {
            return self.err(d.span, "shared memory too large");
        };
        self.scopes.last_mut().unwrap().names.insert(d.name.clone(), Sym::Shared(off));
        Ok(())
    }

    fn alloc_reg(&mut self, ty: ScalarType) -> RegRef {
        match bank_of(ty) {
            Bank::Pred => {
                self.npred += 1;
                RegRef::pred(self.npred - 1)
            }
            Bank::R64 => {
                self.n64 += 1;
                RegRef::r64(self.n64 - 1)
            }
            Bank::R32 => {
                self.n32 += 1;
                RegRef::r32(self.n32 - 1)
            }
        }
    }

    fn lookup(&mut self, name: &str) -> Option<Sym> {
        for i in (0..self.scopes.len()).rev() {
            if let Some(s) = self.scopes[i].names.get(name) {
                return Some(s.clone());
            }
            // `%r<N>` ranges.
            if let Some(ty) = self.scopes[i].range_type(name) {
                let r = self.alloc_reg(ty);
                if r.bank != Bank::Pred {
                    self.declared32 += if r.bank == Bank::R64 { 2 } else { 1 };
                }
                self.scopes[i].names.insert(name.to_string(), Sym::Reg(r, ty));
                return Some(Sym::Reg(r, ty));
            }
        }
        None
    }

    /// Lowers a function body. Nested `{ }` scopes are walked with an explicit
    /// stack rather than recursion, so that only inlined calls (at most
    /// `MAX_INLINE_DEPTH`) deepen the native stack.
    fn scope_statements(&mut self, stmts: &[Statement]) -> LResult<()> {
        self.open_block(stmts);
        let mut open: Vec<std::slice::Iter<'_, Statement>> = vec![stmts.iter()];
        while let Some(it) = open.last_mut() {
            let Some(s) = it.next() else {
                open.pop();
                if !open.is_empty() {
                    self.scopes.pop();
                }
                continue;
            };
            match s {
                Statement::Decl(d) => self.declare(d)?,
                Statement::Label(name, span) => {
                    let key = format!("{}{}", self.frames.last().unwrap().prefix, name);
                    if self.labels.insert(key, self.code.len() as Pc).is_some() {
                        return self.err(*span, format!("label `{name}` defined twice"));
                    }
                }
                Statement::Loc(loc) => {
                    self.cur_loc = Some(SourceLoc { file: loc.file, line: loc.line, col: loc.col });
                    self.cur_inlined = loc.inlined_at.map(|(file, line, col)| SourceLoc { file, line, col });
                }
                Statement::Scope(inner) => {
                    self.scopes.push(Scope::default());
                    self.open_block(inner);
                    open.push(inner.iter());
                }
                Statement::BranchTargets { .. } | Statement::CallPrototype { .. } => {}
                Statement::Inst(i) => {
                    self.note_pragmas(i.span);
                    self.instruction(i)?
                }
            }
        }
        Ok(())
    }

    /// Records the pragmas written between the previous instruction and the
    /// one at `span` (the parser skips `.pragma` statements).
    fn note_pragmas(&mut self, span: Span) {
        let (start, end) = (self.prev_inst_end as usize, span.start as usize);
        if start < end {
            if let Some(gap) = self.src.get(start..end) {
                if gap.contains(".pragma") && gap.contains("nounroll") {
                    self.pending_nounroll = true;
                }
            }
        }
        self.prev_inst_end = span.end;
    }

    /// Entering a block: count its statements and declare its branch-target
    /// lists (labels are visible before their definition).
    fn open_block(&mut self, stmts: &[Statement]) {
        self.statements += stmts.len() as u64;
        for s in stmts {
            if let Statement::BranchTargets { name, targets, .. } = s {
                let prefix = self.frames.last().unwrap().prefix.clone();
                let keys = targets.iter().map(|t| format!("{prefix}{t}")).collect();
                self.scopes.last_mut().unwrap().names.insert(name.clone(), Sym::BranchTargets(keys));
            }
        }
    }

    fn declare(&mut self, d: &ast::VarDecl) -> LResult<()> {
        match d.space {
            StateSpace::Reg => {
                if d.vector != 1 {
                    return self.err(d.span, "vector registers are not supported");
                }
                if d.ty == ScalarType::B128 {
                    return self.err(d.span, "128-bit registers are not supported");
                }
                let scope = self.scopes.last_mut().unwrap();
                match d.range {
                    Some(n) => scope.declare_range(&d.name, d.ty, n),
                    None => {
                        let r = self.alloc_reg(d.ty);
                        if r.bank != Bank::Pred {
                            self.declared32 += if r.bank == Bank::R64 { 2 } else { 1 };
                        }
                        self.scopes.last_mut().unwrap().names.insert(d.name.clone(), Sym::Reg(r, d.ty));
                    }
                }
            }
            StateSpace::Shared => self.declare_shared(d)?,
            StateSpace::Local | StateSpace::Param => {
                let Some(size) = d.size_bytes() else {
                    return self.err(d.span, "local array without a size");
                };
                let Some(off) = place(&mut self.local_bytes, Some(size), d.alignment()) else {
                    return self.err(d.span, "local memory too large");
                };
                self.scopes.last_mut().unwrap().names.insert(d.name.clone(), Sym::Local(off));
            }
            StateSpace::Global | StateSpace::Const => {
                return self.err(d.span, "function-scoped .global/.const variables are not supported; declare them at module level");
            }
            _ => return self.err(d.span, "unsupported state space in a declaration"),
        }
        Ok(())
    }

    // ---- operands -------------------------------------------------------------

    fn const_reg(&mut self, ty: ScalarType, bits: u64) -> RegRef {
        match bank_of(ty) {
            Bank::R64 => {
                if let Some(&s) = self.const64.get(&bits) {
                    return RegRef::r64(s);
                }
                let r = self.alloc_reg(ScalarType::B64);
                self.const64.insert(bits, r.slot);
                r
            }
            _ => {
                let v = bits as u32;
                if let Some(&s) = self.const32.get(&v) {
                    return RegRef::r32(s);
                }
                let r = self.alloc_reg(ScalarType::B32);
                self.const32.insert(v, r.slot);
                r
            }
        }
    }

    fn zero32(&mut self) -> RegRef {
        self.const_reg(ScalarType::B32, 0)
    }

    fn special(&mut self, name: &str) -> Option<(RegRef, ScalarType)> {
        let dim = |s: &str| match s {
            "x" => Some(0u8),
            "y" => Some(1),
            "z" => Some(2),
            _ => None,
        };
        let sp = if let Some((base, c)) = name.split_once('.') {
            let d = dim(c)?;
            match base {
                "%tid" => Special::Tid(d),
                "%ntid" => Special::Ntid(d),
                "%ctaid" => Special::Ctaid(d),
                "%nctaid" => Special::Nctaid(d),
                _ => return None,
            }
        } else {
            match name {
                "%laneid" => Special::LaneId,
                "%warpid" => Special::WarpId,
                "%nwarpid" => Special::NWarpId,
                "%smid" => Special::SmId,
                "%nsmid" => Special::NSmId,
                "%lanemask_eq" => Special::LanemaskEq,
                "%lanemask_le" => Special::LanemaskLe,
                "%lanemask_lt" => Special::LanemaskLt,
                "%lanemask_ge" => Special::LanemaskGe,
                "%lanemask_gt" => Special::LanemaskGt,
                "WARP_SZ" => Special::WarpSize,
                "%gridid" => Special::GridId,
                "%dynamic_smem_size" => Special::DynamicSmemSize,
                "%total_smem_size" => Special::TotalSmemSize,
                _ => return None,
            }
        };
        let ty = if sp == Special::GridId { ScalarType::U64 } else { ScalarType::U32 };
        if let Some(r) = self.specials.get(&sp) {
            return Some((*r, ty));
        }
        let r = self.alloc_reg(ty);
        self.specials.insert(sp, r);
        Some((r, ty))
    }

    fn clock_kind(name: &str) -> Option<ClockKind> {
        Some(match name {
            "%clock" => ClockKind::Clock32,
            "%clock64" => ClockKind::Clock64,
            "%globaltimer" => ClockKind::GlobalTimer,
            "%globaltimer_lo" => ClockKind::GlobalTimerLo,
            "%globaltimer_hi" => ClockKind::GlobalTimerHi,
            _ => return None,
        })
    }

    /// Address of a variable as a register value (for `mov r, var`).
    fn symbol_value(&mut self, name: &str, offset: i64, ty: ScalarType, span: Span) -> LResult<RegRef> {
        match self.lookup(name) {
            Some(Sym::Shared(off)) => {
                if off == EXTERN_SHARED {
                    // A constant register of its own, filled once the layout is known.
                    let r = self.alloc_reg(if bank_of(ty) == Bank::R64 { ScalarType::B64 } else { ScalarType::B32 });
                    self.extern_patches.push((r, offset));
                    Ok(r)
                } else {
                    Ok(self.const_reg(ty, (off as i64).wrapping_add(offset) as u64))
                }
            }
            Some(Sym::Local(off)) => Ok(self.const_reg(ty, (off as i64).wrapping_add(offset) as u64)),
            Some(Sym::KParam(off)) => Ok(self.const_reg(ty, (off as i64).wrapping_add(offset) as u64)),
            Some(Sym::Global(g)) => {
                let slot = match self.symbol_addrs.get(&g) {
                    Some(&s) => s,
                    None => {
                        let r = self.alloc_reg(ScalarType::B64);
                        self.symbol_addrs.insert(g.clone(), r.slot);
                        r.slot
                    }
                };
                if offset == 0 {
                    Ok(RegRef::r64(slot))
                } else {
                    let d = self.alloc_reg(ScalarType::B64);
                    let k = self.const_reg(ScalarType::B64, offset as u64);
                    self.push(Op::Bin64 { f: Bin64::Add, d: d.slot, a: slot, b: k.slot }, None, span, "mov");
                    Ok(d)
                }
            }
            Some(Sym::Reg(..)) | Some(Sym::BranchTargets(_)) | None => self.err(span, format!("`{name}` is not a variable")),
        }
    }

    /// A source operand of type `ty`, as a register.
    fn src(&mut self, op: &Operand, ty: ScalarType) -> LResult<RegRef> {
        match op {
            Operand::Name(name, span) => {
                if let Some(sym) = self.lookup(name) {
                    return match sym {
                        Sym::Reg(r, _) => Ok(r),
                        _ => self.symbol_value(name, 0, ty, *span),
                    };
                }
                if let Some((r, _)) = self.special(name) {
                    return Ok(r);
                }
                if let Some(k) = Self::clock_kind(name) {
                    let cty = if k == ClockKind::Clock64 || k == ClockKind::GlobalTimer { ScalarType::U64 } else { ScalarType::U32 };
                    let d = self.alloc_reg(cty);
                    self.push(Op::Clock { kind: k, d }, None, *span, "mov");
                    return Ok(d);
                }
                self.err(*span, format!("unknown register or symbol `{name}`"))
            }
            Operand::Imm(v, span) => {
                if ty == ScalarType::Pred {
                    let r = self.alloc_reg(ScalarType::Pred);
                    let (a, b) = (r.slot, r.slot);
                    // p = (v != 0): xor p,p gives 0; not of that gives 1.
                    self.push(Op::PredLogic { op: PredOp::Xor, d: r.slot, a, b }, None, *span, "mov.pred");
                    if *v != 0 {
                        self.push(Op::PredLogic { op: PredOp::Not, d: r.slot, a: r.slot, b: r.slot }, None, *span, "mov.pred");
                    }
                    return Ok(r);
                }
                let bits = match ty {
                    ScalarType::F32 => (*v as f32).to_bits() as u64,
                    ScalarType::F64 => (*v as f64).to_bits(),
                    _ => *v as u64,
                };
                Ok(self.const_reg(ty, bits))
            }
            Operand::F32(b, _) => {
                let bits = match ty {
                    ScalarType::F64 => (f32::from_bits(*b) as f64).to_bits(),
                    ScalarType::F16 => half::f16::from_f32(f32::from_bits(*b)).to_bits() as u64,
                    ScalarType::BF16 => half::bf16::from_f32(f32::from_bits(*b)).to_bits() as u64,
                    _ => *b as u64,
                };
                Ok(self.const_reg(ty, bits))
            }
            Operand::F64(b, _) => {
                let f = f64::from_bits(*b);
                let bits = match ty {
                    ScalarType::F32 => (f as f32).to_bits() as u64,
                    ScalarType::F16 => half::f16::from_f64(f).to_bits() as u64,
                    ScalarType::BF16 => half::bf16::from_f64(f).to_bits() as u64,
                    ScalarType::F64 => *b,
                    _ => f as i64 as u64,
                };
                Ok(self.const_reg(ty, bits))
            }
            Operand::Addr { base: AddrBase::Name(n), offset, span } => self.symbol_value(n, *offset, ty, *span),
            _ => self.err(op.span(), "expected a register or constant"),
        }
    }

    /// A destination register.
    fn dst(&mut self, op: &Operand) -> LResult<RegRef> {
        match op {
            Operand::Name(name, span) => match self.lookup(name) {
                Some(Sym::Reg(r, _)) => Ok(r),
                _ if self.special(name).is_some() => self.err(*span, format!("`{name}` is read-only")),
                _ => self.err(*span, format!("unknown register `{name}`")),
            },
            Operand::Sink(_) => Ok(self.alloc_sink()),
            _ => self.err(op.span(), "expected a destination register"),
        }
    }

    fn alloc_sink(&mut self) -> RegRef {
        // A fresh scratch register per use keeps things simple.
        self.alloc_reg(ScalarType::B64)
    }

    fn dst_pred(&mut self, op: &Operand) -> LResult<u32> {
        match op {
            Operand::Sink(_) => Ok(self.alloc_reg(ScalarType::Pred).slot),
            _ => {
                let r = self.dst(op)?;
                if r.bank != Bank::Pred {
                    return self.err(op.span(), "expected a predicate register");
                }
                Ok(r.slot)
            }
        }
    }

    /// A predicate source, possibly negated with `!`.
    fn src_pred(&mut self, op: &Operand) -> LResult<(u32, bool)> {
        match op {
            Operand::Not(inner, _) => {
                let (p, n) = self.src_pred(inner)?;
                Ok((p, !n))
            }
            _ => {
                let r = self.src(op, ScalarType::Pred)?;
                if r.bank != Bank::Pred {
                    return self.err(op.span(), "expected a predicate");
                }
                Ok((r.slot, false))
            }
        }
    }

    fn r32(&mut self, op: &Operand, ty: ScalarType) -> LResult<u32> {
        let r = self.src(op, ty)?;
        self.want_bank(op, r, Bank::R32)
    }

    fn r64(&mut self, op: &Operand, ty: ScalarType) -> LResult<u32> {
        let r = self.src(op, ty)?;
        self.want_bank(op, r, Bank::R64)
    }

    fn want_bank(&self, op: &Operand, r: RegRef, bank: Bank) -> LResult<u32> {
        if r.bank != bank {
            let want = match bank {
                Bank::R32 => "a register of at most 32 bits",
                Bank::R64 => "a 64-bit register",
                Bank::Pred => "a predicate",
            };
            return self.err(op.span(), format!("operand size mismatch: expected {want}"));
        }
        Ok(r.slot)
    }

    fn d32(&mut self, op: &Operand) -> LResult<u32> {
        let r = self.dst(op)?;
        self.want_bank(op, r, Bank::R32)
    }

    fn d64(&mut self, op: &Operand) -> LResult<u32> {
        let r = self.dst(op)?;
        self.want_bank(op, r, Bank::R64)
    }

    /// The address of a memory operand and the space it names, refining `space`.
    fn address(&mut self, op: &Operand, space: Space) -> LResult<(Space, Addr)> {
        let Operand::Addr { base, offset, span } = op else {
            return self.err(op.span(), "expected an address `[...]`");
        };
        match base {
            AddrBase::Imm(v) => Ok((space, Addr { base: None, offset: v.wrapping_add(*offset) })),
            AddrBase::Name(name) => match self.lookup(name) {
                Some(Sym::Reg(r, _)) => {
                    if r.bank == Bank::Pred {
                        return self.err(*span, "a predicate cannot be an address");
                    }
                    let space = if space == Space::KernelParam && self.frames.len() > 1 { Space::Local } else { space };
                    Ok((space, Addr { base: Some(r), offset: *offset }))
                }
                Some(Sym::Shared(off)) => {
                    let base_off = if off == EXTERN_SHARED {
                        let r = self.symbol_value(name, 0, ScalarType::U32, *span)?;
                        return Ok(match space {
                            Space::Generic => {
                                let g = self.alloc_reg(ScalarType::B64);
                                let w = self.alloc_reg(ScalarType::B64);
                                self.push(Op::Extend32To64 { signed: false, d: w.slot, a: r.slot }, None, *span, "cvta");
                                let k = self.const_reg(ScalarType::B64, SHARED_WINDOW);
                                self.push(Op::Bin64 { f: Bin64::Add, d: g.slot, a: w.slot, b: k.slot }, None, *span, "cvta");
                                (Space::Generic, Addr { base: Some(g), offset: *offset })
                            }
                            _ => (Space::Shared, Addr { base: Some(r), offset: *offset }),
                        });
                    } else {
                        off as i64
                    };
                    match space {
                        Space::Generic => {
                            Ok((Space::Generic, Addr { base: None, offset: (SHARED_WINDOW as i64 + base_off).wrapping_add(*offset) }))
                        }
                        _ => Ok((Space::Shared, Addr { base: None, offset: base_off.wrapping_add(*offset) })),
                    }
                }
                Some(Sym::Local(off)) => match space {
                    Space::Generic => {
                        Ok((Space::Generic, Addr { base: None, offset: (LOCAL_WINDOW as i64 + off as i64).wrapping_add(*offset) }))
                    }
                    _ => Ok((Space::Local, Addr { base: None, offset: (off as i64).wrapping_add(*offset) })),
                },
                Some(Sym::KParam(off)) => Ok((Space::KernelParam, Addr { base: None, offset: (off as i64).wrapping_add(*offset) })),
                Some(Sym::Global(_)) => {
                    let r = self.symbol_value(name, 0, ScalarType::U64, *span)?;
                    let sp = if space == Space::Const {
                        Space::Const
                    } else if space == Space::Generic {
                        Space::Generic
                    } else {
                        Space::Global
                    };
                    Ok((sp, Addr { base: Some(r), offset: *offset }))
                }
                Some(Sym::BranchTargets(_)) => self.err(*span, "a branch-target list is not an address"),
                None => self.err(*span, format!("unknown symbol `{name}` in address")),
            },
        }
    }

    // ---- instructions -----------------------------------------------------------

    // Kept out of line: its locals would otherwise sit in every frame of the
    // `call` -> `scope_statements` recursion.
    #[inline(never)]
    fn instruction(&mut self, i: &Instruction) -> LResult<()> {
        let guard = match &i.guard {
            None => None,
            Some(g) => match self.lookup(&g.pred) {
                Some(Sym::Reg(r, _)) if r.bank == Bank::Pred => Some(Guard { pred: r.slot, negate: g.negate }),
                _ => return self.err(g.span, format!("`{}` is not a predicate register", g.pred)),
            },
        };
        let full = if i.mods.is_empty() { i.opcode.clone() } else { format!("{}.{}", i.opcode, i.mods.join(".")) };
        let mods = Mods::parse(&i.mods);
        let ops = &i.operands;
        let span = i.span;
        let nops = |n: usize| -> LResult<()> {
            if ops.len() < n {
                Err(LowerError::new(self.file, self.src, span, format!("`{full}` expects {n} operands, found {}", ops.len())))
            } else {
                Ok(())
            }
        };
        let unsupported = |what: &str| -> LResult<()> {
            Err(LowerError::new(self.file, self.src, span, format!("unsupported instruction `{full}`{what}")))
        };
        let ty = mods.ty();
        macro_rules! emit {
            ($op:expr) => {{
                let op = $op;
                self.push(op, guard, span, &full);
            }};
        }
        match i.opcode.as_str() {
            "mov" => {
                nops(2)?;
                let ty = ty.unwrap_or(ScalarType::B32);
                match (&ops[0], &ops[1]) {
                    (Operand::Vector(..), Operand::Vector(..)) => return unsupported(": vector to vector"),
                    (d, Operand::Vector(parts, _)) => {
                        let d = self.dst(d)?;
                        let n = parts.len();
                        if !(n == 2 || n == 4) {
                            return self.err(ops[1].span(), "a packed move takes 2 or 4 elements");
                        }
                        let elem_bits = (ty.bits() as usize / n) as u8;
                        let ety = elem_type(elem_bits as u32);
                        let mut p = [RegRef::r32(0); 4];
                        for (k, part) in parts.iter().enumerate() {
                            p[k] = self.src(part, ety)?;
                        }
                        emit!(Op::Pack { d, parts: p, n: n as u8, elem_bits });
                    }
                    (Operand::Vector(parts, _), a) => {
                        let n = parts.len();
                        if !(n == 2 || n == 4) {
                            return self.err(ops[0].span(), "an unpacking move takes 2 or 4 elements");
                        }
                        let a = self.src(a, ty)?;
                        let elem_bits = (ty.bits() as usize / n) as u8;
                        let mut ds = [None; 4];
                        for (k, part) in parts.iter().enumerate() {
                            ds[k] = match part {
                                Operand::Sink(_) => None,
                                p => Some(self.dst(p)?),
                            };
                        }
                        emit!(Op::Unpack { ds, a, n: n as u8, elem_bits });
                    }
                    (d, a) => {
                        if let Operand::Name(n, s) = a {
                            if let Some(k) = Self::clock_kind(n) {
                                let d = self.dst(d)?;
                                let _ = s;
                                emit!(Op::Clock { kind: k, d });
                                return Ok(());
                            }
                        }
                        let d = self.dst(d)?;
                        if d.bank == Bank::Pred {
                            let (a, neg) = self.src_pred(a)?;
                            emit!(Op::PredLogic { op: if neg { PredOp::Not } else { PredOp::Mov }, d: d.slot, a, b: a });
                            return Ok(());
                        }
                        let a = self.src(a, ty)?;
                        emit!(self.move_between(d, a));
                    }
                }
            }
            "add" | "sub" | "mul" | "mad" | "fma" | "div" | "rem" | "abs" | "neg" | "min" | "max" => {
                let ty = self.need_ty(ty, span, &full)?;
                if mods.has("cc") || (i.opcode == "mad" && mods.has("cc")) {
                    return self.carry_op(i, &mods, ty, guard, &full);
                }
                if ty.is_float() {
                    self.float_arith(i, &mods, ty, guard, &full)?;
                } else {
                    self.int_arith(i, &mods, ty, guard, &full)?;
                }
            }
            "addc" | "subc" | "madc" => {
                let ty = self.need_ty(ty, span, &full)?;
                return self.carry_op(i, &mods, ty, guard, &full);
            }
            "mul24" | "mad24" | "sad" | "popc" | "clz" | "bfind" | "brev" | "bfe" | "bfi" | "prmt" | "shf" | "cnot" | "lop3" | "dp4a"
            | "dp2a" => {
                let ty = self.need_ty(ty, span, &full)?;
                self.int_misc(i, &mods, ty, guard, &full)?;
            }
            "and" | "or" | "xor" | "not" => {
                let ty = self.need_ty(ty, span, &full)?;
                if ty == ScalarType::Pred {
                    let n = if i.opcode == "not" { 2 } else { 3 };
                    nops(n)?;
                    let d = self.dst_pred(&ops[0])?;
                    let (a, na) = self.src_pred(&ops[1])?;
                    let (b, nb) = if n == 3 { self.src_pred(&ops[2])? } else { (a, false) };
                    if na || nb {
                        return self.err(span, "negated predicate operands are only allowed in setp/selp");
                    }
                    let op = match i.opcode.as_str() {
                        "and" => PredOp::And,
                        "or" => PredOp::Or,
                        "xor" => PredOp::Xor,
                        _ => PredOp::Not,
                    };
                    emit!(Op::PredLogic { op, d, a, b });
                } else {
                    self.int_misc(i, &mods, ty, guard, &full)?;
                }
            }
            "shl" | "shr" => {
                let ty = self.need_ty(ty, span, &full)?;
                nops(3)?;
                if ty.bits() == 64 {
                    let d = self.d64(&ops[0])?;
                    let a = self.r64(&ops[1], ty)?;
                    let b = self.r32(&ops[2], ScalarType::U32)?;
                    emit!(Op::Shift64 { left: i.opcode == "shl", signed: ty.is_signed(), d, a, b });
                } else if ty.bits() == 32 {
                    let d = self.d32(&ops[0])?;
                    let a = self.r32(&ops[1], ty)?;
                    let b = self.r32(&ops[2], ScalarType::U32)?;
                    let f = match (i.opcode.as_str(), ty.is_signed()) {
                        ("shl", _) => Bin32::Shl,
                        ("shr", true) => Bin32::ShrS,
                        _ => Bin32::ShrU,
                    };
                    emit!(Op::Bin32 { f, d, a, b });
                } else {
                    let op = if i.opcode == "shl" { IntOp::Shl } else { IntOp::Shr };
                    let d = self.dst(&ops[0])?;
                    let a = self.src(&ops[1], ty)?;
                    let b = self.src(&ops[2], ScalarType::U32)?;
                    let z = self.zero32();
                    emit!(Op::Int { op, ty, d, s: [a, b, z, z] });
                }
            }
            "setp" => self.setp(i, &mods, guard, &full)?,
            "set" => self.set(i, &mods, guard, &full)?,
            "selp" => {
                nops(4)?;
                let ty = self.need_ty(ty, span, &full)?;
                let d = self.dst(&ops[0])?;
                let a = self.src(&ops[1], ty)?;
                let b = self.src(&ops[2], ty)?;
                let (c, negate) = self.src_pred(&ops[3])?;
                emit!(Op::Selp { d, a, b, c, negate });
            }
            "slct" => {
                nops(4)?;
                let (dty, cty) = (mods.types.first().copied(), mods.types.get(1).copied());
                let (Some(dty), Some(cty)) = (dty, cty) else { return unsupported(": slct needs two types") };
                let d = self.dst(&ops[0])?;
                let a = self.src(&ops[1], dty)?;
                let b = self.src(&ops[2], dty)?;
                let c = self.src(&ops[3], cty)?;
                emit!(Op::Slct { cty, ftz: mods.ftz, d, a, b, c });
            }
            "testp" => {
                nops(2)?;
                let ty = self.need_ty(ty, span, &full)?;
                let class = if mods.has("finite") {
                    TestpClass::Finite
                } else if mods.has("infinite") {
                    TestpClass::Infinite
                } else if mods.has("number") {
                    TestpClass::Number
                } else if mods.has("notanumber") {
                    TestpClass::NotANumber
                } else if mods.has("normal") {
                    TestpClass::Normal
                } else if mods.has("subnormal") {
                    TestpClass::Subnormal
                } else {
                    return unsupported(": unknown testp class");
                };
                let p = self.dst_pred(&ops[0])?;
                let a = self.src(&ops[1], ty)?;
                emit!(Op::Testp { class, ty, p, a });
            }
            "copysign" | "rcp" | "sqrt" | "rsqrt" | "sin" | "cos" | "lg2" | "ex2" | "tanh" => {
                let ty = self.need_ty(ty, span, &full)?;
                self.float_arith(i, &mods, ty, guard, &full)?;
            }
            "cvt" => self.cvt(i, &mods, guard, &full)?,
            "cvta" => {
                nops(2)?;
                let to_generic = !mods.has("to");
                let d = self.dst(&ops[0])?;
                let a = self.src(&ops[1], ty.unwrap_or(ScalarType::U64))?;
                let window = if mods.has("shared") {
                    SHARED_WINDOW
                } else if mods.has("local") {
                    LOCAL_WINDOW
                } else {
                    0
                };
                if window == 0 {
                    emit!(self.move_between(d, a));
                } else {
                    emit!(Op::Cvta { to_generic, window, d, a });
                }
            }
            "ld" | "ldu" => self.load(i, &mods, guard, &full)?,
            "st" => self.store(i, &mods, guard, &full)?,
            "atom" | "red" => self.atom(i, &mods, guard, &full)?,
            "prefetch" | "prefetchu" | "membar" | "fence" | "nanosleep" | "pmevent" | "discard" | "applypriority" => {
                emit!(Op::Fence)
            }
            "bra" => {
                nops(1)?;
                let Operand::Name(label, s) = &ops[0] else {
                    return self.err(ops[0].span(), "expected a label");
                };
                let key = format!("{}{}", self.frames.last().unwrap().prefix, label);
                let pc = self.push(Op::Bra { target: 0, reconv: NO_RECONV }, guard, span, &full);
                self.fixups.push((pc, vec![key], *s));
            }
            "brx" => {
                nops(2)?;
                let index = self.src(&ops[0], ScalarType::U32)?;
                let Operand::Name(list, s) = &ops[1] else {
                    return self.err(ops[1].span(), "expected a .branchtargets label");
                };
                let Some(Sym::BranchTargets(keys)) = self.lookup(list) else {
                    return self.err(*s, format!("`{list}` is not a .branchtargets list"));
                };
                let pc = self.push(Op::BrxIdx { index, targets: Box::new([]), reconv: NO_RECONV }, guard, span, &full);
                self.fixups.push((pc, keys, *s));
            }
            "call" => self.call(i, guard, &full)?,
            "ret" => {
                let ret_label = self.frames.last().unwrap().ret_label.clone();
                match ret_label {
                    Some(key) => {
                        let pc = self.push(Op::Bra { target: 0, reconv: NO_RECONV }, guard, span, &full);
                        self.fixups.push((pc, vec![key], span));
                    }
                    None => emit!(Op::Exit),
                }
            }
            "exit" => emit!(Op::Exit),
            "trap" => emit!(Op::Trap),
            "bar" | "barrier" => self.barrier(i, &mods, guard, &full)?,
            "shfl" => {
                if !mods.has("sync") {
                    return unsupported(": use shfl.sync (the form without .sync is removed since sm_70)");
                }
                nops(5)?;
                let mode = if mods.has("up") {
                    ShflMode::Up
                } else if mods.has("down") {
                    ShflMode::Down
                } else if mods.has("bfly") {
                    ShflMode::Bfly
                } else if mods.has("idx") {
                    ShflMode::Idx
                } else {
                    return unsupported(": missing mode");
                };
                let (d, p) = match &ops[0] {
                    Operand::Pair(d, p, _) => (self.d32(d)?, Some(self.dst_pred(p)?)),
                    d => (self.d32(d)?, None),
                };
                let a = self.r32(&ops[1], ScalarType::B32)?;
                let b = self.r32(&ops[2], ScalarType::B32)?;
                let c = self.r32(&ops[3], ScalarType::B32)?;
                let mask = self.r32(&ops[4], ScalarType::B32)?;
                emit!(Op::Shfl { mode, d, p, a, b, c, mask });
            }
            "vote" => {
                let mode = if mods.has("all") {
                    VoteMode::All
                } else if mods.has("any") {
                    VoteMode::Any
                } else if mods.has("uni") {
                    VoteMode::Uni
                } else if mods.has("ballot") {
                    VoteMode::Ballot
                } else {
                    return unsupported(": missing mode");
                };
                nops(2)?;
                let d = self.dst(&ops[0])?;
                let (a, negate) = self.src_pred(&ops[1])?;
                let mask = if mods.has("sync") {
                    nops(3)?;
                    self.r32(&ops[2], ScalarType::B32)?
                } else {
                    self.const_reg(ScalarType::B32, 0xFFFF_FFFF).slot
                };
                emit!(Op::Vote { mode, d, a, negate, mask });
            }
            "match" => {
                nops(3)?;
                let ty = self.need_ty(ty, span, &full)?;
                let all = mods.has("all");
                let (d, p) = match &ops[0] {
                    Operand::Pair(d, p, _) => (self.d32(d)?, Some(self.dst_pred(p)?)),
                    d => (self.d32(d)?, None),
                };
                let a = self.src(&ops[1], ty)?;
                let mask = self.r32(&ops[2], ScalarType::B32)?;
                emit!(Op::Match { all, ty, d, p, a, mask });
            }
            "activemask" => {
                nops(1)?;
                let d = self.d32(&ops[0])?;
                emit!(Op::Activemask { d });
            }
            "redux" => {
                nops(3)?;
                let ty = self.need_ty(ty, span, &full)?;
                let op = if mods.has("add") {
                    ReduxOp::Add
                } else if mods.has("min") {
                    ReduxOp::Min
                } else if mods.has("max") {
                    ReduxOp::Max
                } else if mods.has("and") {
                    ReduxOp::And
                } else if mods.has("or") {
                    ReduxOp::Or
                } else if mods.has("xor") {
                    ReduxOp::Xor
                } else {
                    return unsupported(": missing operation");
                };
                if ty.is_float() || ty.bits() != 32 {
                    return unsupported(": only 32-bit integer redux is supported");
                }
                let d = self.d32(&ops[0])?;
                let a = self.r32(&ops[1], ty)?;
                let mask = self.r32(&ops[2], ScalarType::B32)?;
                emit!(Op::Redux { op, ty, d, a, mask });
            }
            "mma" | "wmma" | "ldmatrix" | "stmatrix" | "movmatrix" | "cp" | "mbarrier" | "wgmma" | "setmaxnreg" => {
                return self.lower_mma(i, &mods, guard, &full);
            }
            "elect" => {
                nops(2)?;
                let (d, p) = match &ops[0] {
                    Operand::Pair(d, p, _) => {
                        let d = match &**d {
                            Operand::Sink(_) => None,
                            d => Some(self.d32(d)?),
                        };
                        (d, self.dst_pred(p)?)
                    }
                    p => (None, self.dst_pred(p)?),
                };
                let mask = self.r32(&ops[1], ScalarType::B32)?;
                emit!(Op::ElectSync { d, p, mask });
            }
            _ => return unsupported(""),
        }
        Ok(())
    }

    fn need_ty(&self, ty: Option<ScalarType>, span: Span, full: &str) -> LResult<ScalarType> {
        match ty {
            Some(t) => Ok(t),
            None => self.err(span, format!("`{full}` has no type suffix")),
        }
    }

    fn move_between(&mut self, d: RegRef, a: RegRef) -> Op {
        match (d.bank, a.bank) {
            (Bank::R64, Bank::R32) => Op::Extend32To64 { signed: false, d: d.slot, a: a.slot },
            (Bank::R32, Bank::R64) => Op::Trunc64To32 { d: d.slot, a: a.slot },
            _ => Op::Mov { d, a },
        }
    }

    fn int_arith(&mut self, i: &Instruction, mods: &Mods, ty: ScalarType, guard: Option<Guard>, full: &str) -> LResult<()> {
        let ops = &i.operands;
        let span = i.span;
        let o = i.opcode.as_str();
        let wide = mods.has("wide");
        let hi = mods.has("hi");
        let sat = mods.sat;
        let arity = match o {
            "abs" | "neg" => 2,
            "mad" => 4,
            _ => 3,
        };
        if ops.len() < arity {
            return self.err(span, format!("`{full}` expects {arity} operands"));
        }
        let op = match (o, wide, hi, sat) {
            ("add", _, _, true) => IntOp::AddSat,
            ("add", ..) => IntOp::Add,
            ("sub", _, _, true) => IntOp::SubSat,
            ("sub", ..) => IntOp::Sub,
            ("mul", true, ..) => IntOp::MulWide,
            ("mul", _, true, _) => IntOp::MulHi,
            ("mul", ..) => IntOp::MulLo,
            ("mad", true, ..) => IntOp::MadWide,
            ("mad", _, true, true) => IntOp::MadHiSat,
            ("mad", _, true, _) => IntOp::MadHi,
            ("mad", ..) => IntOp::MadLo,
            ("div", ..) => IntOp::Div,
            ("rem", ..) => IntOp::Rem,
            ("abs", ..) => IntOp::Abs,
            ("neg", ..) => IntOp::Neg,
            ("min", ..) => IntOp::Min,
            ("max", ..) => IntOp::Max,
            _ => return self.err(span, format!("unsupported instruction `{full}`")),
        };
        // Fast paths.
        let b32 = ty.bits() == 32;
        let b64 = ty.bits() == 64;
        let fast32 = match op {
            IntOp::Add => Some(Bin32::Add),
            IntOp::Sub => Some(Bin32::Sub),
            IntOp::MulLo => Some(Bin32::MulLo),
            IntOp::Min => Some(if ty.is_signed() { Bin32::MinS } else { Bin32::MinU }),
            IntOp::Max => Some(if ty.is_signed() { Bin32::MaxS } else { Bin32::MaxU }),
            _ => None,
        };
        if b32 && fast32.is_some() && !mods.has("relu") {
            let d = self.d32(&ops[0])?;
            let a = self.r32(&ops[1], ty)?;
            let b = self.r32(&ops[2], ty)?;
            self.push(Op::Bin32 { f: fast32.unwrap(), d, a, b }, guard, span, full);
            return Ok(());
        }
        let fast64 = match op {
            IntOp::Add => Some(Bin64::Add),
            IntOp::Sub => Some(Bin64::Sub),
            IntOp::MulLo => Some(Bin64::MulLo),
            _ => None,
        };
        if b64 && fast64.is_some() {
            let d = self.d64(&ops[0])?;
            let a = self.r64(&ops[1], ty)?;
            let b = self.r64(&ops[2], ty)?;
            self.push(Op::Bin64 { f: fast64.unwrap(), d, a, b }, guard, span, full);
            return Ok(());
        }
        if b32 && op == IntOp::MulWide {
            let d = self.d64(&ops[0])?;
            let a = self.r32(&ops[1], ty)?;
            let b = self.r32(&ops[2], ty)?;
            self.push(Op::MulWide32 { signed: ty.is_signed(), d, a, b }, guard, span, full);
            return Ok(());
        }
        if b32 && op == IntOp::MadLo {
            let d = self.d32(&ops[0])?;
            let a = self.r32(&ops[1], ty)?;
            let b = self.r32(&ops[2], ty)?;
            let c = self.r32(&ops[3], ty)?;
            self.push(Op::Tern32 { f: Tern32::MadLo, d, a, b, c }, guard, span, full);
            return Ok(());
        }
        let d = self.dst(&ops[0])?;
        let wide_ty = if op == IntOp::MulWide || op == IntOp::MadWide { double_width(ty) } else { ty };
        let mut s = [self.zero32(); 4];
        for k in 1..arity {
            let t = if k == 3 && op == IntOp::MadWide { wide_ty } else { ty };
            s[k - 1] = self.src(&ops[k], t)?;
        }
        self.push(Op::Int { op, ty, d, s }, guard, span, full);
        Ok(())
    }

    fn carry_op(&mut self, i: &Instruction, mods: &Mods, ty: ScalarType, guard: Option<Guard>, full: &str) -> LResult<()> {
        let ops = &i.operands;
        let (kind, arity) = match i.opcode.as_str() {
            "add" | "addc" => (CarryKind::Add, 3),
            "sub" | "subc" => (CarryKind::Sub, 3),
            "mad" | "madc" if mods.has("hi") => (CarryKind::MadHi, 4),
            "mad" | "madc" => (CarryKind::MadLo, 4),
            _ => return self.err(i.span, format!("unsupported instruction `{full}`")),
        };
        if ops.len() < arity {
            return self.err(i.span, format!("`{full}` expects {arity} operands"));
        }
        let carry_in = i.opcode.ends_with('c');
        let carry_out = mods.has("cc");
        let cc = match self.cc {
            Some(c) => c,
            None => {
                let r = self.alloc_reg(ScalarType::Pred);
                self.cc = Some(r.slot);
                r.slot
            }
        };
        let d = self.dst(&ops[0])?;
        let z = self.zero32();
        let mut s = [z; 3];
        for k in 1..arity {
            s[k - 1] = self.src(&ops[k], ty)?;
        }
        self.push(Op::IntCarry { kind, ty, d, s, cc, carry_in, carry_out }, guard, i.span, full);
        Ok(())
    }

    fn int_misc(&mut self, i: &Instruction, mods: &Mods, ty: ScalarType, guard: Option<Guard>, full: &str) -> LResult<()> {
        let ops = &i.operands;
        let span = i.span;
        let (op, arity) = match i.opcode.as_str() {
            "mul24" => (if mods.has("hi") { IntOp::Mul24Hi } else { IntOp::Mul24Lo }, 3),
            "mad24" => (if mods.has("hi") { IntOp::Mad24Hi } else { IntOp::Mad24Lo }, 4),
            "sad" => (IntOp::Sad, 4),
            "popc" => (IntOp::Popc, 2),
            "clz" => (IntOp::Clz, 2),
            "bfind" => (if mods.has("shiftamt") { IntOp::BfindShiftAmt } else { IntOp::Bfind }, 2),
            "brev" => (IntOp::Brev, 2),
            "bfe" => (IntOp::Bfe, 4),
            "bfi" => (IntOp::Bfi, 5),
            "prmt" => {
                let m = if mods.has("f4e") {
                    PrmtMode::F4e
                } else if mods.has("b4e") {
                    PrmtMode::B4e
                } else if mods.has("rc8") {
                    PrmtMode::Rc8
                } else if mods.has("ecl") {
                    PrmtMode::Ecl
                } else if mods.has("ecr") {
                    PrmtMode::Ecr
                } else if mods.has("rc16") {
                    PrmtMode::Rc16
                } else {
                    PrmtMode::Default
                };
                (IntOp::Prmt(m), 4)
            }
            "shf" => {
                let wrap = mods.has("wrap");
                (if mods.has("l") { IntOp::ShfL { wrap } } else { IntOp::ShfR { wrap } }, 4)
            }
            "and" => (IntOp::And, 3),
            "or" => (IntOp::Or, 3),
            "xor" => (IntOp::Xor, 3),
            "not" => (IntOp::Not, 2),
            "cnot" => (IntOp::Cnot, 2),
            "lop3" => {
                if ops.len() < 5 {
                    return self.err(span, format!("`{full}` expects 5 operands"));
                }
                let Operand::Imm(lut, _) = ops[4] else {
                    return self.err(ops[4].span(), "lop3 needs an immediate lookup table");
                };
                (IntOp::Lop3(lut as u8), 4)
            }
            "dp4a" | "dp2a" => {
                let b_signed = mods.types.get(1).is_some_and(|t| t.is_signed());
                let op = if i.opcode == "dp4a" { IntOp::Dp4a { b_signed } } else { IntOp::Dp2a { hi: mods.has("hi"), b_signed } };
                (op, 4)
            }
            _ => return self.err(span, format!("unsupported instruction `{full}`")),
        };
        if ops.len() < arity {
            return self.err(span, format!("`{full}` expects {arity} operands"));
        }
        let ty = match op {
            IntOp::Dp4a { .. } | IntOp::Dp2a { .. } => mods.types[0],
            _ => ty,
        };
        // Fast bitwise paths.
        if matches!(op, IntOp::And | IntOp::Or | IntOp::Xor) && (ty.bits() == 32 || ty.bits() == 64) {
            if ty.bits() == 32 {
                let f = match op {
                    IntOp::And => Bin32::And,
                    IntOp::Or => Bin32::Or,
                    _ => Bin32::Xor,
                };
                let d = self.d32(&ops[0])?;
                let a = self.r32(&ops[1], ty)?;
                let b = self.r32(&ops[2], ty)?;
                self.push(Op::Bin32 { f, d, a, b }, guard, span, full);
            } else {
                let f = match op {
                    IntOp::And => Bin64::And,
                    IntOp::Or => Bin64::Or,
                    _ => Bin64::Xor,
                };
                let d = self.d64(&ops[0])?;
                let a = self.r64(&ops[1], ty)?;
                let b = self.r64(&ops[2], ty)?;
                self.push(Op::Bin64 { f, d, a, b }, guard, span, full);
            }
            return Ok(());
        }
        let d = self.dst(&ops[0])?;
        let mut s = [self.zero32(); 4];
        for k in 1..arity {
            // Operand types: shift/position/length operands are u32.
            let t = match (op, k) {
                (IntOp::Bfe, 2 | 3) | (IntOp::Bfi, 3 | 4) | (IntOp::ShfL { .. } | IntOp::ShfR { .. }, 3) => ScalarType::U32,
                (IntOp::Prmt(_), _) => ScalarType::B32,
                (IntOp::Dp4a { .. } | IntOp::Dp2a { .. }, _) => ScalarType::B32,
                (IntOp::Sad, 3) => ty,
                _ => ty,
            };
            s[k - 1] = self.src(&ops[k], t)?;
        }
        self.push(Op::Int { op, ty, d, s }, guard, span, full);
        Ok(())
    }

    fn float_arith(&mut self, i: &Instruction, mods: &Mods, ty: ScalarType, guard: Option<Guard>, full: &str) -> LResult<()> {
        let ops = &i.operands;
        let span = i.span;
        let approx = mods.has("approx");
        let (op, arity) = match i.opcode.as_str() {
            "add" => (FloatOp::Add, 3),
            "sub" => (FloatOp::Sub, 3),
            "mul" => (FloatOp::Mul, 3),
            "fma" | "mad" => (FloatOp::Fma, 4),
            "div" if approx => (FloatOp::DivApprox, 3),
            "div" if mods.has("full") => (FloatOp::DivFull, 3),
            "div" => (FloatOp::Div, 3),
            "rcp" if approx => (FloatOp::RcpApprox, 2),
            "rcp" => (FloatOp::Rcp, 2),
            "sqrt" if approx => (FloatOp::SqrtApprox, 2),
            "sqrt" => (FloatOp::Sqrt, 2),
            "rsqrt" => (FloatOp::RsqrtApprox, 2),
            "sin" => (FloatOp::SinApprox, 2),
            "cos" => (FloatOp::CosApprox, 2),
            "lg2" => (FloatOp::Lg2Approx, 2),
            "ex2" => (FloatOp::Ex2Approx, 2),
            "tanh" => (FloatOp::TanhApprox, 2),
            "abs" => (FloatOp::Abs, 2),
            "neg" => (FloatOp::Neg, 2),
            "min" if mods.has("NaN") => (FloatOp::MinNan, 3),
            "max" if mods.has("NaN") => (FloatOp::MaxNan, 3),
            "min" => (FloatOp::Min, 3),
            "max" => (FloatOp::Max, 3),
            "copysign" => (FloatOp::Copysign, 3),
            _ => return self.err(span, format!("unsupported instruction `{full}`")),
        };
        if ops.len() < arity {
            return self.err(span, format!("`{full}` expects {arity} operands"));
        }
        if matches!(op, FloatOp::Div | FloatOp::Rcp | FloatOp::Sqrt) && mods.rnd.is_none() && ty == ScalarType::F64 {
            return self.err(span, format!("`{full}` needs a rounding modifier (.rn, .rz, .rm or .rp)"));
        }
        let mode = FMode { rnd: mods.rnd, ftz: mods.ftz, sat: mods.sat };
        let plain = !mode.ftz && !mode.sat && matches!(mode.rnd, None | Some(Rounding::Rn));
        if plain && ty == ScalarType::F32 {
            let fast2 = match op {
                FloatOp::Add => Some(Bin32::AddF),
                FloatOp::Sub => Some(Bin32::SubF),
                FloatOp::Mul => Some(Bin32::MulF),
                FloatOp::Min => Some(Bin32::MinF),
                FloatOp::Max => Some(Bin32::MaxF),
                _ => None,
            };
            if let Some(f) = fast2 {
                if !mods.has("relu") && !mods.has("xorsign") {
                    let d = self.d32(&ops[0])?;
                    let a = self.r32(&ops[1], ty)?;
                    let b = self.r32(&ops[2], ty)?;
                    self.push(Op::Bin32 { f, d, a, b }, guard, span, full);
                    return Ok(());
                }
            }
            if op == FloatOp::Fma {
                let d = self.d32(&ops[0])?;
                let a = self.r32(&ops[1], ty)?;
                let b = self.r32(&ops[2], ty)?;
                let c = self.r32(&ops[3], ty)?;
                self.push(Op::Tern32 { f: Tern32::FmaF, d, a, b, c }, guard, span, full);
                return Ok(());
            }
        }
        if plain && ty == ScalarType::F64 {
            let fast2 = match op {
                FloatOp::Add => Some(Bin64::AddF),
                FloatOp::Sub => Some(Bin64::SubF),
                FloatOp::Mul => Some(Bin64::MulF),
                _ => None,
            };
            if let Some(f) = fast2 {
                let d = self.d64(&ops[0])?;
                let a = self.r64(&ops[1], ty)?;
                let b = self.r64(&ops[2], ty)?;
                self.push(Op::Bin64 { f, d, a, b }, guard, span, full);
                return Ok(());
            }
            if op == FloatOp::Fma {
                let d = self.d64(&ops[0])?;
                let a = self.r64(&ops[1], ty)?;
                let b = self.r64(&ops[2], ty)?;
                let c = self.r64(&ops[3], ty)?;
                self.push(Op::FmaF64 { d, a, b, c }, guard, span, full);
                return Ok(());
            }
        }
        let d = self.dst(&ops[0])?;
        let z = self.zero32();
        let mut s = [z; 3];
        for k in 1..arity {
            s[k - 1] = self.src(&ops[k], ty)?;
        }
        self.push(Op::Float { op, ty, mode, d, s }, guard, span, full);
        Ok(())
    }

    fn cmp_and_combine(&mut self, i: &Instruction, mods: &Mods, first_src: usize) -> LResult<(CmpOp, Option<(BoolOp, u32, bool)>)> {
        let Some(cmp) = mods.cmp else {
            return self.err(i.span, "missing comparison operator");
        };
        let combine = match mods.boolop {
            Some(b) => {
                let Some(c) = i.operands.get(first_src + 2) else {
                    return self.err(i.span, "a boolean combine needs a predicate operand `c`");
                };
                let (c, neg) = self.src_pred(c)?;
                Some((b, c, neg))
            }
            None => None,
        };
        Ok((cmp, combine))
    }

    fn setp(&mut self, i: &Instruction, mods: &Mods, guard: Option<Guard>, full: &str) -> LResult<()> {
        let ops = &i.operands;
        if ops.len() < 3 {
            return self.err(i.span, format!("`{full}` expects at least 3 operands"));
        }
        let ty = self.need_ty(mods.ty(), i.span, full)?;
        let (cmp, combine) = self.cmp_and_combine(i, mods, 1)?;
        let (p, q) = match &ops[0] {
            Operand::Pair(p, q, _) => (self.dst_pred(p)?, Some(self.dst_pred(q)?)),
            p => (self.dst_pred(p)?, None),
        };
        let a = self.src(&ops[1], ty)?;
        let b = self.src(&ops[2], ty)?;
        self.push(Op::Setp { cmp, ty, ftz: mods.ftz, p, q, a, b, combine }, guard, i.span, full);
        Ok(())
    }

    fn set(&mut self, i: &Instruction, mods: &Mods, guard: Option<Guard>, full: &str) -> LResult<()> {
        let ops = &i.operands;
        if ops.len() < 3 || mods.types.len() < 2 {
            return self.err(i.span, format!("`{full}` expects a destination type, a source type and 3 operands"));
        }
        let (dty, ty) = (mods.types[0], mods.types[1]);
        let (cmp, combine) = self.cmp_and_combine(i, mods, 1)?;
        let d = self.dst(&ops[0])?;
        let a = self.src(&ops[1], ty)?;
        let b = self.src(&ops[2], ty)?;
        self.push(Op::Set { cmp, ty, dty, ftz: mods.ftz, d, a, b, combine }, guard, i.span, full);
        Ok(())
    }

    fn cvt(&mut self, i: &Instruction, mods: &Mods, guard: Option<Guard>, full: &str) -> LResult<()> {
        let ops = &i.operands;
        if ops.len() < 2 || mods.types.len() < 2 {
            return self.err(i.span, format!("`{full}` expects two types and two operands"));
        }
        let (dty, sty) = (mods.types[0], mods.types[1]);
        let mode = FMode { rnd: mods.rnd, ftz: mods.ftz, sat: mods.sat };
        if matches!(dty, ScalarType::F16x2 | ScalarType::BF16x2) {
            if ops.len() < 3 || sty != ScalarType::F32 {
                return self.err(i.span, format!("unsupported instruction `{full}`: packed cvt takes two f32 sources"));
            }
            let d = self.d32(&ops[0])?;
            let a = self.r32(&ops[1], sty)?;
            let b = self.r32(&ops[2], sty)?;
            self.push(Op::CvtPack { dty, mode, d, a, b }, guard, i.span, full);
            return Ok(());
        }
        let d = self.dst(&ops[0])?;
        let a = self.src(&ops[1], sty)?;
        let plain = !mode.sat && !mode.ftz && mode.rnd.is_none();
        if plain && d.bank == Bank::R64 && a.bank == Bank::R32 && dty.is_int() && sty.is_int() && sty.bits() == 32 {
            self.push(Op::Extend32To64 { signed: sty.is_signed(), d: d.slot, a: a.slot }, guard, i.span, full);
            return Ok(());
        }
        if plain && d.bank == Bank::R32 && a.bank == Bank::R64 && dty.is_int() && sty.is_int() && dty.bits() == 32 {
            self.push(Op::Trunc64To32 { d: d.slot, a: a.slot }, guard, i.span, full);
            return Ok(());
        }
        self.push(Op::Cvt { dty, sty, mode, d, a }, guard, i.span, full);
        Ok(())
    }

    fn mem_space(&self, mods: &Mods, opcode: &str) -> Space {
        if opcode == "ldu" {
            return Space::Global;
        }
        if mods.has("global") {
            Space::Global
        } else if mods.has("shared") || mods.has("shared::cta") {
            Space::Shared
        } else if mods.has("local") {
            Space::Local
        } else if mods.has("param") {
            Space::KernelParam
        } else if mods.has("const") {
            Space::Const
        } else {
            Space::Generic
        }
    }

    fn load(&mut self, i: &Instruction, mods: &Mods, guard: Option<Guard>, full: &str) -> LResult<()> {
        let ops = &i.operands;
        if ops.len() < 2 {
            return self.err(i.span, format!("`{full}` expects 2 operands"));
        }
        let ty = self.need_ty(mods.ty(), i.span, full)?;
        if ty.bits() > 64 {
            return self.err(i.span, format!("unsupported instruction `{full}`: 128-bit loads"));
        }
        let space = self.mem_space(mods, &i.opcode);
        let (space, addr) = self.address(&ops[1], space)?;
        let mut d = [None; 4];
        let n = match &ops[0] {
            Operand::Vector(parts, _) => {
                if parts.len() > 4 || parts.len() != mods.vec as usize {
                    return self.err(ops[0].span(), "vector size does not match .v2/.v4");
                }
                for (k, p) in parts.iter().enumerate() {
                    d[k] = match p {
                        Operand::Sink(_) => None,
                        p => Some(self.dst(p)?),
                    };
                }
                parts.len()
            }
            p => {
                if mods.vec > 1 {
                    return self.err(p.span(), "a vector load needs a `{...}` destination");
                }
                d[0] = Some(self.dst(p)?);
                1
            }
        };
        for r in d.iter().flatten() {
            if r.bank == Bank::R32 && ty.bits() > 32 {
                return self.err(ops[0].span(), "destination register narrower than the loaded type");
            }
            if r.bank == Bank::Pred {
                return self.err(ops[0].span(), "cannot load into a predicate");
            }
        }
        let size = ty.bytes() as u8;
        self.push(Op::Ld { space, size, signed: ty.is_signed(), n: n as u8, d, addr }, guard, i.span, full);
        Ok(())
    }

    fn store(&mut self, i: &Instruction, mods: &Mods, guard: Option<Guard>, full: &str) -> LResult<()> {
        let ops = &i.operands;
        if ops.len() < 2 {
            return self.err(i.span, format!("`{full}` expects 2 operands"));
        }
        let ty = self.need_ty(mods.ty(), i.span, full)?;
        if ty.bits() > 64 {
            return self.err(i.span, format!("unsupported instruction `{full}`: 128-bit stores"));
        }
        let space = self.mem_space(mods, "st");
        let (space, addr) = self.address(&ops[0], space)?;
        if space == Space::KernelParam {
            return self.err(i.span, "kernel parameters are read-only");
        }
        let mut s = [self.zero32(); 4];
        let n = match &ops[1] {
            Operand::Vector(parts, _) => {
                if parts.len() > 4 || parts.len() != mods.vec as usize {
                    return self.err(ops[1].span(), "vector size does not match .v2/.v4");
                }
                for (k, p) in parts.iter().enumerate() {
                    s[k] = self.src(p, ty)?;
                }
                parts.len()
            }
            p => {
                s[0] = self.src(p, ty)?;
                1
            }
        };
        self.push(Op::St { space, size: ty.bytes() as u8, n: n as u8, s, addr }, guard, i.span, full);
        Ok(())
    }

    fn atom(&mut self, i: &Instruction, mods: &Mods, guard: Option<Guard>, full: &str) -> LResult<()> {
        let ops = &i.operands;
        let is_red = i.opcode == "red";
        let op = if mods.has("add") {
            AtomOp::Add
        } else if mods.has("min") {
            AtomOp::Min
        } else if mods.has("max") {
            AtomOp::Max
        } else if mods.has("inc") {
            AtomOp::Inc
        } else if mods.has("dec") {
            AtomOp::Dec
        } else if mods.has("and") {
            AtomOp::And
        } else if mods.has("or") {
            AtomOp::Or
        } else if mods.has("xor") {
            AtomOp::Xor
        } else if mods.has("exch") {
            AtomOp::Exch
        } else if mods.has("cas") {
            AtomOp::Cas
        } else {
            return self.err(i.span, format!("unsupported instruction `{full}`: missing operation"));
        };
        let ty = self.need_ty(mods.ty(), i.span, full)?;
        if mods.vec > 1 || ty.bits() > 64 || ty.bits() < 16 {
            return self.err(i.span, format!("unsupported instruction `{full}`"));
        }
        let first = if is_red { 0 } else { 1 };
        let need = first + if op == AtomOp::Cas { 3 } else { 2 };
        if ops.len() < need {
            return self.err(i.span, format!("`{full}` expects {need} operands"));
        }
        let d = if is_red { None } else { Some(self.dst(&ops[0])?) };
        let space = self.mem_space(mods, "atom");
        let (space, addr) = self.address(&ops[first], space)?;
        let b = self.src(&ops[first + 1], ty)?;
        let c = if op == AtomOp::Cas { self.src(&ops[first + 2], ty)? } else { self.zero32() };
        self.push(Op::Atom { space, op, ty, d, addr, b, c }, guard, i.span, full);
        Ok(())
    }

    fn barrier(&mut self, i: &Instruction, mods: &Mods, guard: Option<Guard>, full: &str) -> LResult<()> {
        let ops = &i.operands;
        if mods.has("warp") {
            if ops.is_empty() {
                return self.err(i.span, "bar.warp.sync needs a mask");
            }
            let mask = self.src(&ops[0], ScalarType::B32)?;
            self.push(Op::BarWarpSync { mask }, guard, i.span, full);
            return Ok(());
        }
        if mods.has("cluster") {
            return self.err(i.span, format!("unsupported instruction `{full}`: cluster barriers"));
        }
        let aligned = i.opcode == "bar" || mods.has("aligned");
        if mods.has("red") {
            // bar.red.op.type d, a{, b}, {!}c
            if ops.len() < 3 {
                return self.err(i.span, format!("`{full}` expects 3 or 4 operands"));
            }
            let d = self.dst(&ops[0])?;
            let kind = if mods.has("popc") {
                BarRed::Popc { d }
            } else if mods.has("and") {
                BarRed::And { d }
            } else if mods.has("or") {
                BarRed::Or { d }
            } else {
                return self.err(i.span, format!("unsupported instruction `{full}`"));
            };
            let id = self.src(&ops[1], ScalarType::U32)?;
            let (count, pidx) = if ops.len() >= 4 { (Some(self.src(&ops[2], ScalarType::U32)?), 3) } else { (None, 2) };
            let p = self.src_pred(&ops[pidx])?;
            self.push(Op::Bar { kind: BarKind::Red(kind), id, count, aligned, pred: Some(p) }, guard, i.span, full);
            return Ok(());
        }
        let kind = if mods.has("arrive") { BarKind::Arrive } else { BarKind::Sync };
        let id = match ops.first() {
            Some(o) => self.src(o, ScalarType::U32)?,
            None => self.zero32(),
        };
        let count = match ops.get(1) {
            Some(o) => Some(self.src(o, ScalarType::U32)?),
            None => None,
        };
        if kind == BarKind::Arrive && count.is_none() {
            return self.err(i.span, "bar.arrive needs a thread count");
        }
        self.push(Op::Bar { kind, id, count, aligned, pred: None }, guard, i.span, full);
        Ok(())
    }

    fn call(&mut self, i: &Instruction, guard: Option<Guard>, full: &str) -> LResult<()> {
        // call{.uni} (rets), name, (args){, prototype};
        let ops = &i.operands;
        let mut k = 0;
        let rets: &[Operand] = match ops.first() {
            Some(Operand::List(r, _)) => {
                k = 1;
                r
            }
            _ => &[],
        };
        let Some(Operand::Name(callee, cspan)) = ops.get(k) else {
            return self.err(i.span, "call needs a function name");
        };
        let args: &[Operand] = match ops.get(k + 1) {
            Some(Operand::List(a, _)) => a,
            _ => &[],
        };
        if ops.len() > k + 2 || self.lookup(callee).is_some() {
            return self.err(*cspan, "indirect calls through a function pointer are not supported");
        }
        let m = self.m;
        let Some(f) = m.function(callee) else {
            let known = m.functions.iter().any(|f| &f.name == callee);
            let msg = if known {
                format!("`{callee}` is declared without a body (external functions cannot be simulated)")
            } else {
                format!("unknown function `{callee}`")
            };
            return self.err(*cspan, msg);
        };
        if self.call_stack.iter().any(|n| n == callee) {
            return self.err(*cspan, format!("recursive call to `{callee}` is not supported"));
        }
        if self.call_stack.len() >= MAX_INLINE_DEPTH {
            return self.err(*cspan, "calls nested too deeply");
        }
        let body = f.body.as_ref().unwrap();
        let cost = (body.len() + f.params.len() + f.rets.len()) as u64;
        if self.inline_counter >= MAX_INLINED_CALLS || self.statements + cost > MAX_LOWERED_STATEMENTS {
            return self.err(*cspan, format!("inlining `{callee}` makes the kernel too large (too many calls in its call tree)"));
        }
        if f.params.len() != args.len() || f.rets.len() != rets.len() {
            return self.err(i.span, format!("`{callee}` takes {} arguments and {} results", f.params.len(), f.rets.len()));
        }
        // A guarded call: branch around the inlined body.
        self.inline_counter += 1;
        let prefix = format!("{}@{}:", callee, self.inline_counter);
        // `#` cannot appear in a PTX label, so no label of the callee can clash.
        let end_key = format!("{prefix}#end");
        if let Some(g) = guard {
            let pc = self.push(Op::Bra { target: 0, reconv: NO_RECONV }, Some(Guard { pred: g.pred, negate: !g.negate }), i.span, full);
            self.fixups.push((pc, vec![end_key.clone()], i.span));
        }
        let mut scope = Scope::default();
        self.statements += (f.params.len() + f.rets.len()) as u64;
        for (decl, arg) in f.params.iter().chain(f.rets.iter()).zip(args.iter().chain(rets.iter())) {
            let Operand::Name(an, aspan) = arg else {
                return self.err(arg.span(), "call arguments must be named variables or registers");
            };
            let sym = match self.lookup(an) {
                Some(s @ (Sym::Local(_) | Sym::Reg(..))) => s,
                Some(_) | None => return self.err(*aspan, format!("`{an}` is not a local .param variable or register")),
            };
            scope.names.insert(decl.name.clone(), sym);
        }
        let module_scope = std::mem::take(&mut self.scopes[0]);
        let saved_scopes = std::mem::replace(&mut self.scopes, vec![module_scope, scope]);
        // Module scope was moved into the new stack; restore it after.
        self.frames.push(Frame { prefix: prefix.clone(), ret_label: Some(end_key.clone()) });
        self.call_stack.push(callee.clone());
        // Pragmas are looked for in the callee's own text while inlining it.
        let resume_at = std::mem::replace(&mut self.prev_inst_end, f.span.start);
        let r = self.scope_statements(body);
        self.prev_inst_end = resume_at;
        self.call_stack.pop();
        self.frames.pop();
        let mut inner = std::mem::replace(&mut self.scopes, saved_scopes);
        self.scopes[0] = std::mem::take(&mut inner[0]);
        r?;
        self.labels.insert(end_key, self.code.len() as Pc);
        Ok(())
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

    /// The instruction's (last) type suffix.
    fn ty(&self) -> Option<ScalarType> {
        self.types.last().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = ".version 8.0\n.target sm_80\n.address_size 64\n";

    fn compile(src: &str) -> Result<Program, String> {
        crate::compile_module("t.ptx", src).map_err(|e| e.to_string())
    }

    fn kernel(body: &str) -> String {
        format!("{HEAD}.visible .entry k()\n{{\n.reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n{body}\n}}\n")
    }

    #[test]
    fn line_index_finds_lines() {
        let ix = LineIndex::new("a\nbc\n\nd");
        let lines: Vec<u32> = (0..7).map(|o| ix.line(o)).collect();
        assert_eq!(lines, [1, 1, 2, 2, 2, 3, 4]);
        assert_eq!(ix.line(1000), 4);
        assert_eq!(LineIndex::new("").line(0), 1);
    }

    // Each instruction's line used to be found by counting newlines from the
    // top of the file: quadratic, minutes for a 10 MB kernel.
    #[test]
    fn instruction_lines_are_right() {
        let p = compile(&kernel("\n\tadd.s32 %r1, %r1, 1;\r\n\n\tret;")).unwrap();
        let lines: Vec<u32> = p.kernels[0].info.iter().map(|i| i.ptx_line).collect();
        assert_eq!(lines, [9, 11, 4]);
    }

    // Fuzz-style finds: layout arithmetic overflowed (a debug-build panic, a
    // silent wrap in release).
    #[test]
    fn huge_alignments_and_sizes_are_errors() {
        let e = compile(&kernel(".shared .align 4 .b8 a[5];\n.shared .align 4294967295 .b8 b[1];\nret;")).unwrap_err();
        assert!(e.contains("shared memory too large"), "{e}");
        let e = compile(&kernel(".shared .b8 a[4294967295];\n.shared .b8 b[4294967295];\nret;")).unwrap_err();
        assert!(e.contains("shared memory too large"), "{e}");
        let e = compile(&kernel(".local .u64 a[0x4000000000000000];\nret;")).unwrap_err();
        assert!(e.contains("local memory too large"), "{e}");
        let e = compile(&kernel(".local .u64 a[0x10000][0x10000][0x10000][0x10000];\nret;")).unwrap_err();
        assert!(e.contains("local memory too large"), "{e}");
        let e = compile(&format!("{HEAD}.visible .entry k(.param .b8 a[4294967295], .param .b8 b[2])\n{{\nret;\n}}\n")).unwrap_err();
        assert!(e.contains("kernel parameters too large"), "{e}");
        let e = compile(&format!("{HEAD}.visible .entry k(.param .b8 a[2147483649], .param .align 2147483648 .b8 b)\n{{\nret;\n}}\n"))
            .unwrap_err();
        assert!(e.contains("kernel parameters too large"), "{e}");
        let src = format!("{HEAD}.shared .b8 s[4294967290];\n.extern .shared .align 16 .b8 d[];\n.visible .entry k()\n{{\nret;\n}}\n");
        let e = compile(&src).unwrap_err();
        assert!(e.contains("shared memory too large"), "{e}");
    }

    #[test]
    fn huge_globals_are_errors_not_allocations() {
        let e = compile(&format!("{HEAD}.global .b8 g[0x100000000000];\n")).unwrap_err();
        assert!(e.contains("module variables too large"), "{e}");
        let e = compile(&format!("{HEAD}.global .b8 a[0x30000000];\n.global .b8 b[0x30000000];\n")).unwrap_err();
        assert!(e.starts_with("t.ptx:5:1: error: module variables too large"), "{e}");
        let e = compile(&format!("{HEAD}.global .v4 .b64 g[0x7fffffffffffffff];\n")).unwrap_err();
        assert!(e.contains("module variables too large"), "{e}");
    }

    #[test]
    fn offsets_wrap_instead_of_overflowing() {
        let src = format!(
            "{HEAD}.extern .shared .b8 dyn[];\n.visible .entry k(.param .u64 p)\n{{\n.reg .b64 %rd<4>;\n.shared .b8 s[4];\n.local .b8 l[4];\n\
             mov.u64 %rd1, dyn+0x7fffffffffffffff;\nmov.u64 %rd1, s+0x7fffffffffffffff;\nmov.u64 %rd1, l+0x7fffffffffffffff;\n\
             mov.u64 %rd1, p+0x7fffffffffffffff;\nld.shared.u8 %rd2, [s+0x7fffffffffffffff];\nld.u8 %rd2, [s+0x7fffffffffffffff];\n\
             ld.local.u8 %rd2, [l+0x7fffffffffffffff];\nld.u8 %rd2, [l+0x7fffffffffffffff];\nld.param.u8 %rd2, [p+0x7fffffffffffffff];\n\
             ld.u8 %rd2, [0x7fffffffffffffff+0x7fffffffffffffff];\nret;\n}}\n"
        );
        let p = compile(&src).unwrap();
        assert_eq!(p.kernels[0].code.len(), 4 + 6 + 2);
    }

    // `.b128` elements are 16 bytes: the initialiser used to slice 16 bytes
    // out of a u64's 8 and panic.
    #[test]
    fn b128_initialisers() {
        let p = compile(&format!("{HEAD}.global .b128 g[2] = {{-2, 0x1234}};\n")).unwrap();
        let init = &p.globals[0].init;
        assert_eq!(init.len(), 32);
        assert_eq!(u128::from_le_bytes(init[..16].try_into().unwrap()), -2i128 as u128);
        assert_eq!(u128::from_le_bytes(init[16..].try_into().unwrap()), 0x1234);
    }

    // The end-of-call label of an inlined function used the key `$end`, which a
    // label of the callee could also have: a branch to that label jumped out.
    #[test]
    fn callee_label_named_like_the_call_end() {
        let src = format!(
            "{HEAD}.func f()\n{{\n.reg .pred %p;\nsetp.eq.u32 %p, 1, 1;\n@%p bra $end;\ntrap;\n$end:\nret;\n}}\n\
             .visible .entry k()\n{{\ncall f;\nexit;\n}}\n"
        );
        let p = compile(&src).unwrap();
        let k = &p.kernels[0];
        let trap = k.code.iter().position(|i| matches!(i.op, Op::Trap)).unwrap();
        let Op::Bra { target, .. } = k.code[trap - 1].op else { panic!("{:?}", k.code) };
        assert_eq!(target as usize, trap + 1, "the branch goes to the callee's own `$end`");
    }

    // Register ranges used to be scanned one by one on every name look-up:
    // quadratic in a module with many `%x<N>` declarations.
    #[test]
    fn register_ranges_by_prefix() {
        let mut sc = Scope::default();
        sc.declare_range("%a", ScalarType::B32, 100);
        sc.declare_range("%a1", ScalarType::B64, 4);
        sc.declare_range("%r", ScalarType::B16, u32::MAX);
        assert_eq!(sc.range_type("%a12"), Some(ScalarType::B32)); // both match: the first declared wins
        assert_eq!(sc.range_type("%a13"), Some(ScalarType::B32));
        assert_eq!(sc.range_type("%a100"), None);
        assert_eq!(sc.range_type("%a10"), Some(ScalarType::B32));
        assert_eq!(sc.range_type("%a1"), Some(ScalarType::B32));
        assert_eq!(sc.range_type("%a"), None);
        assert_eq!(sc.range_type("%a01"), None); // no leading zeros
        assert_eq!(sc.range_type("%a0"), Some(ScalarType::B32));
        assert_eq!(sc.range_type("%r4294967294"), Some(ScalarType::B16));
        assert_eq!(sc.range_type("%r4294967295"), None);
        assert_eq!(sc.range_type("%r99999999999999999999"), None);
        assert_eq!(sc.range_type(&format!("%r{}", "9".repeat(100_000))), None);
        let mut sc = Scope::default();
        sc.declare_range("%a1", ScalarType::B64, 4);
        sc.declare_range("%a", ScalarType::B32, 100);
        assert_eq!(sc.range_type("%a12"), Some(ScalarType::B64));
        assert_eq!(sc.range_type("%a14"), Some(ScalarType::B32));
    }

    #[test]
    fn inlining_budget() {
        let mut src = String::from(HEAD);
        src.push_str(".func f20()\n{\nret;\n}\n");
        for i in (0..20).rev() {
            src.push_str(&format!(".func f{i}()\n{{\ncall f{n};\ncall f{n};\n}}\n", n = i + 1));
        }
        src.push_str(".visible .entry k()\n{\ncall f0;\n}\n");
        let e = compile(&src).unwrap_err();
        assert!(e.contains("inlining `f") && e.contains("makes the kernel too large"), "{e}");
        // A modest tree (2^10 bodies) is fine.
        let small = src.replace(".func f10()\n{\ncall f11;\ncall f11;\n}", ".func f10()\n{\nret;\n}");
        let p = compile(&small).unwrap();
        assert!(p.kernels[0].code.len() > 1024);
    }
}
