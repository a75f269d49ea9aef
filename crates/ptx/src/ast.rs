//! The syntax tree: what the PTX file says, with byte spans into the source
//! so that every later error can point at the text. Instruction modifiers are
//! kept as written (a list of names); the lowering decides what they mean,
//! which is how "modifiers in any order" is honoured.

use warpsim_numerics::ScalarType;

/// Byte range `[start, end)` in the source.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum StateSpace {
    Reg,
    Sreg,
    Const,
    Global,
    Local,
    Param,
    Shared,
    Tex,
}

impl StateSpace {
    pub fn from_ptx(s: &str) -> Option<Self> {
        Some(match s {
            "reg" => StateSpace::Reg,
            "sreg" => StateSpace::Sreg,
            "const" => StateSpace::Const,
            "global" => StateSpace::Global,
            "local" => StateSpace::Local,
            "param" => StateSpace::Param,
            "shared" => StateSpace::Shared,
            "tex" => StateSpace::Tex,
            _ => return None,
        })
    }
}

#[derive(Clone, Debug, Default)]
pub struct Module {
    pub version: Option<String>,
    pub target: Vec<String>,
    pub address_size: Option<u32>,
    pub files: Vec<(u32, String)>,
    pub globals: Vec<VarDecl>,
    pub functions: Vec<Function>,
}

impl Module {
    pub fn function(&self, name: &str) -> Option<&Function> {
        self.functions.iter().find(|f| f.name == name && f.body.is_some())
    }

    pub fn entries(&self) -> impl Iterator<Item = &Function> {
        self.functions.iter().filter(|f| f.is_entry && f.body.is_some())
    }
}

#[derive(Clone, Debug, Default)]
pub struct Function {
    pub name: String,
    pub is_entry: bool,
    pub params: Vec<VarDecl>,
    pub rets: Vec<VarDecl>,
    /// `None` for a declaration without a body.
    pub body: Option<Vec<Statement>>,
    pub noreturn: bool,
    pub tuning: Tuning,
    pub span: Span,
}

/// An entry's performance-tuning directives (`.reqntid 128`, `.maxnreg 32`, ...).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tuning {
    pub reqntid: Option<[u32; 3]>,
    pub maxntid: Option<[u32; 3]>,
    pub minnctapersm: Option<u32>,
    pub maxnreg: Option<u32>,
    /// `.reqnctapercluster`: CTAs per cluster.
    pub reqnctapercluster: Option<[u32; 3]>,
}

/// Initialiser of a variable: a flat list of scalar values (nested braces flattened).
#[derive(Clone, Debug, PartialEq)]
pub enum InitValue {
    Int(i64),
    Float(f64),
    /// Address of a symbol, plus an offset (`generic(sym)` and `sym+4` forms).
    Symbol(String, i64),
}

#[derive(Clone, Debug)]
pub struct VarDecl {
    pub space: StateSpace,
    pub align: Option<u32>,
    pub ty: ScalarType,
    /// 1 for scalars, 2 or 4 for `.v2`/`.v4`.
    pub vector: u8,
    pub name: String,
    /// `%r<8>` declares `%r0` .. `%r7`.
    pub range: Option<u32>,
    /// Array dimensions; `None` for `[]` (extern shared, or sized by the initialiser).
    pub dims: Vec<Option<u64>>,
    pub init: Option<Vec<InitValue>>,
    pub is_extern: bool,
    /// `.attribute(.managed)`: CUDA's `__managed__`, memory the host touches too.
    pub managed: bool,
    pub span: Span,
}

impl VarDecl {
    /// Size in bytes of one declared variable (all array elements), if known.
    /// Saturates at `u64::MAX` (the lowering rejects sizes that large).
    pub fn size_bytes(&self) -> Option<u64> {
        let mut n = self.ty.bytes() as u64 * self.vector as u64;
        for d in &self.dims {
            n = n.saturating_mul((*d)?);
        }
        Some(n)
    }

    /// Natural alignment when `.align` is absent.
    pub fn alignment(&self) -> u32 {
        self.align.unwrap_or(self.ty.bytes().max(1) * self.vector as u32)
    }
}

#[derive(Clone, Debug)]
pub struct Loc {
    pub file: u32,
    pub line: u32,
    pub col: u32,
    pub inlined_at: Option<(u32, u32, u32)>,
}

#[derive(Clone, Debug)]
pub enum Statement {
    Decl(VarDecl),
    Label(String, Span),
    Inst(Instruction),
    Loc(Loc),
    /// `{ ... }`: an inline-asm scope with its own declarations.
    Scope(Vec<Statement>),
    /// `name: .branchtargets L1, L2, ...;`
    BranchTargets {
        name: String,
        targets: Vec<String>,
        span: Span,
    },
    /// `name: .callprototype ...;` (kept by name only).
    CallPrototype {
        name: String,
        span: Span,
    },
}

#[derive(Clone, Debug)]
pub struct Guard {
    pub pred: String,
    pub negate: bool,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Instruction {
    pub guard: Option<Guard>,
    pub opcode: String,
    /// Modifiers without their dots, in source order: `ld.global.v4.f32` -> `[global, v4, f32]`.
    pub mods: Vec<String>,
    pub operands: Vec<Operand>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum AddrBase {
    Name(String),
    Imm(i64),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Operand {
    /// A register, special register (`%tid.x`), variable, label or function name.
    Name(String, Span),
    Imm(i64, Span),
    /// `0fXXXXXXXX`: f32 bits.
    F32(u32, Span),
    /// `0dXXXXXXXXXXXXXXXX` or a decimal literal: f64 bits.
    F64(u64, Span),
    Addr {
        base: AddrBase,
        offset: i64,
        span: Span,
    },
    /// `{a, b, c, d}`.
    Vector(Vec<Operand>, Span),
    /// `!p`.
    Not(Box<Operand>, Span),
    /// `d|p` (shfl, setp).
    Pair(Box<Operand>, Box<Operand>, Span),
    /// `(a, b)` in `call`.
    List(Vec<Operand>, Span),
    /// `_`.
    Sink(Span),
    /// `[tensorMap, {c0, c1, ...}]` (`cp.async.bulk.tensor`): the address
    /// part (an [`Operand::Addr`]) and the coordinates (an [`Operand::Vector`]).
    TensorCoords {
        addr: Box<Operand>,
        coords: Box<Operand>,
        span: Span,
    },
}

impl Operand {
    pub fn span(&self) -> Span {
        match self {
            Operand::Name(_, s)
            | Operand::Imm(_, s)
            | Operand::F32(_, s)
            | Operand::F64(_, s)
            | Operand::Addr { span: s, .. }
            | Operand::Vector(_, s)
            | Operand::Not(_, s)
            | Operand::Pair(_, _, s)
            | Operand::List(_, s)
            | Operand::Sink(s)
            | Operand::TensorCoords { span: s, .. } => *s,
        }
    }
}
