//! A lowered kernel and program: code, per-instruction source information,
//! register file shape, and the memory layout the engine must set up.

use crate::inst::{CallSlot, Inst, Pc, RegRef};
use std::collections::BTreeMap;
use warpsim_numerics::ScalarType;

/// A CUDA source position from `.loc`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SourceLoc {
    pub file: u32,
    pub line: u32,
    pub col: u32,
}

/// What the engine needs to say about one instruction in messages and reports.
#[derive(Clone, Debug, Default)]
pub struct InstInfo {
    /// 1-based line in the PTX file.
    pub ptx_line: u32,
    /// The `.loc` in force, if any.
    pub loc: Option<SourceLoc>,
    /// Where the inlined function containing this instruction was called.
    pub inlined_at: Option<SourceLoc>,
    /// The opcode with modifiers, as written (`ld.global.f32`).
    pub opcode: String,
}

/// Values that special registers hold; filled per warp at launch.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Special {
    Tid(u8),
    Ntid(u8),
    Ctaid(u8),
    Nctaid(u8),
    LaneId,
    WarpId,
    NWarpId,
    SmId,
    NSmId,
    LanemaskEq,
    LanemaskLe,
    LanemaskLt,
    LanemaskGe,
    LanemaskGt,
    WarpSize,
    GridId,
    DynamicSmemSize,
    TotalSmemSize,
}

#[derive(Clone, Debug)]
pub struct KernelParam {
    pub name: String,
    pub offset: u32,
    pub size: u32,
    pub ty: ScalarType,
}

#[derive(Clone, Debug)]
pub struct Kernel {
    pub name: String,
    pub code: Vec<Inst>,
    pub info: Vec<InstInfo>,
    pub n32: u32,
    pub n64: u32,
    pub npred: u32,
    /// Constant registers (immediates) and their values.
    pub const32: Vec<(u32, u32)>,
    pub const64: Vec<(u32, u64)>,
    pub specials: Vec<(RegRef, Special)>,
    /// 64-bit registers holding the address of a module-level global or const variable.
    pub symbol_addrs: Vec<(u32, String)>,
    pub params: Vec<KernelParam>,
    pub param_bytes: u32,
    pub shared_static_bytes: u32,
    /// Where `extern .shared` arrays start (the static size rounded up to their alignment).
    pub dynamic_shared_offset: u32,
    /// Per-thread local memory (`.local` variables and call parameters).
    pub local_bytes: u32,
    /// `.reqntid`, `.maxntid`, `.minnctapersm`, `.maxnreg` as written.
    pub tuning: warpsim_ptx::Tuning,
    /// Registers declared in PTX (not counting constants), a lower bound on ptxas' allocation.
    pub declared_regs32: u32,
    /// Functions lowered as code of their own (after the kernel's), which
    /// `Op::Call` enters; empty when every call was inlined.
    pub functions: Vec<FuncInfo>,
    /// The frame-pointer registers (a 64-bit and a 32-bit slot) that a
    /// function's `.local` and `.param` addresses are relative to; the
    /// engine sets them on call and return.
    pub frame_regs: Option<(u32, u32)>,
    /// The registers a warp slot resets between blocks (see [`crate::entry_reads`]).
    pub entry_reads: crate::entry_reads::EntryReads,
    /// Whether no instruction reads another lane's registers
    /// ([`Op::reads_other_lanes`](crate::Op::reads_other_lanes)). Then a lane's
    /// registers are seen by that lane alone, and the engine may write those of
    /// lanes that are absent or have exited (whole columns, no blend).
    pub lane_private: bool,
    /// Whether every branch goes forward and no function is called, so that
    /// a warp runs each instruction at most once: its time goes to the run
    /// loop's per-run work more than to any instruction's, and the engine
    /// runs more kinds of instruction without ending a run.
    pub forward_only: bool,
    /// This kernel with registers whose values are never live together
    /// sharing one column ([`crate::pack`]): what the engine runs. The same
    /// code and pcs; only register slots, counts and initial values differ.
    /// `None` where packing does not apply or saves nothing.
    pub packed: Option<Box<Kernel>>,
}

impl Kernel {
    /// The form the engine runs: [`Kernel::packed`] where there is one.
    pub fn for_engine(&self) -> &Kernel {
        self.packed.as_deref().unwrap_or(self)
    }
}

/// Where function addresses (`mov.u64 %rd, f;`) live: a range no data
/// address reaches (below the global heap, above the local window).
pub const FUNCTION_ADDR_BASE: u64 = 0x3000_0000_0000;
/// Bytes between two functions' addresses.
pub const FUNCTION_ADDR_STRIDE: u64 = 16;

/// The address of the module's `index`-th function.
pub fn function_addr(index: usize) -> u64 {
    FUNCTION_ADDR_BASE + index as u64 * FUNCTION_ADDR_STRIDE
}

/// A function with code of its own in a kernel.
#[derive(Clone, Debug)]
pub struct FuncInfo {
    pub name: String,
    /// Its first instruction.
    pub entry: Pc,
    /// Its `.param` and `.local` bytes (a frame per call).
    pub frame_bytes: u32,
    /// Its parameters and results, as the callee sees them.
    pub params: Vec<CallSlot>,
    pub rets: Vec<CallSlot>,
    /// Register slots its code writes (32-bit, 64-bit, predicate), as
    /// half-open ranges: a call saves them for its lanes and the return
    /// restores them, so that a recursive call leaves the caller's values.
    pub saved: [(u32, u32); 3],
    /// Its address as a function pointer.
    pub addr: u64,
}

/// A module-level `.global` or `.const` variable.
#[derive(Clone, Debug)]
pub struct GlobalVar {
    pub name: String,
    pub is_const: bool,
    pub size: u64,
    pub align: u32,
    pub init: Vec<u8>,
    /// `(byte offset, symbol, addend)`: initialisers that hold another variable's address.
    pub relocs: Vec<(u64, String, i64)>,
    /// CUDA's `__managed__` (`.attribute(.managed)`): the driver gives it host-visible memory.
    pub managed: bool,
}

#[derive(Clone, Debug, Default)]
pub struct Program {
    /// The PTX file name used in messages.
    pub source_name: String,
    pub kernels: Vec<Kernel>,
    pub globals: Vec<GlobalVar>,
    /// `.file` index -> path.
    pub files: BTreeMap<u32, String>,
}

impl Program {
    pub fn kernel(&self, name: &str) -> Option<&Kernel> {
        self.kernels.iter().find(|k| k.name == name)
    }

    /// Where instruction `pc` of `kernel` came from: its `.loc` line, else
    /// its PTX line. `None` when `pc` is past the end of the code.
    pub fn source_place(&self, kernel: &Kernel, pc: u32) -> Option<SourcePlace<'_>> {
        let info = kernel.info.get(pc as usize)?;
        Some(self.place_of(info.loc, info.ptx_line))
    }

    /// The place of a `.loc` position (`None`: PTX line only).
    pub fn place_of(&self, loc: Option<SourceLoc>, ptx_line: u32) -> SourcePlace<'_> {
        let loc = loc.filter(|l| l.line > 0);
        SourcePlace { file: loc.map(|l| self.files.get(&l.file).map_or("?", String::as_str)), line: loc.map_or(0, |l| l.line), ptx_line }
    }
}

/// An instruction's place in the user's terms; displays as `file:line`
/// (the file's base name) when the PTX has line information for it, else
/// as `ptx:LINE`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SourcePlace<'p> {
    /// The `.file` path of the `.loc` in force (`"?"` for an unknown file index).
    pub file: Option<&'p str>,
    /// The `.loc` line (0 when there is none).
    pub line: u32,
    /// 1-based line in the PTX file.
    pub ptx_line: u32,
}

impl SourcePlace<'_> {
    /// The source file's base name.
    pub fn short_file(&self) -> Option<&str> {
        self.file.map(|f| f.rsplit(['/', '\\']).next().unwrap_or(f))
    }

    /// `file:line` when the place has a source line.
    pub fn source(&self) -> Option<String> {
        self.short_file().map(|f| format!("{f}:{}", self.line))
    }
}

impl std::fmt::Display for SourcePlace<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.short_file() {
            Some(file) => write!(f, "{file}:{}", self.line),
            None => write!(f, "ptx:{}", self.ptx_line),
        }
    }
}
