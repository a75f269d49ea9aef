//! Kernel faults: what went wrong, and where, in the user's terms (block,
//! thread, PTX line and instruction, CUDA source line, address).

use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FaultKind {
    OutOfBounds {
        space: &'static str,
        access: &'static str,
        size: u32,
        addr: u64,
    },
    Misaligned {
        space: &'static str,
        access: &'static str,
        size: u32,
        addr: u64,
    },
    /// A barrier that can never complete.
    Deadlock {
        detail: String,
    },
    /// The launch ran past its warp-instruction budget (a runaway loop?).
    BudgetExceeded {
        limit: u64,
    },
    Trap,
    /// Something the engine cannot do for this launch (bad configuration).
    Unsupported(String),
}

/// A fault with its place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelFault {
    pub kind: FaultKind,
    pub block: [u32; 3],
    /// Thread index within the block, if one thread is to blame.
    pub thread: Option<[u32; 3]>,
    pub warp: u32,
    pub lane: Option<u32>,
    pub pc: u32,
    pub ptx_line: u32,
    pub opcode: String,
    /// `file:line` from `.loc`, if the PTX has line info.
    pub source: Option<String>,
}

impl KernelFault {
    pub fn address(&self) -> Option<u64> {
        match self.kind {
            FaultKind::OutOfBounds { addr, .. } | FaultKind::Misaligned { addr, .. } => Some(addr),
            _ => None,
        }
    }
}

impl fmt::Display for KernelFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            FaultKind::OutOfBounds { space, access, size, addr } => {
                write!(f, "out-of-bounds {space} {access} of {size} bytes at address {addr:#x}")?
            }
            FaultKind::Misaligned { space, access, size, addr } => {
                write!(f, "misaligned {space} {access} of {size} bytes at address {addr:#x}")?
            }
            FaultKind::Deadlock { detail } => write!(f, "barrier can never complete: {detail}")?,
            FaultKind::BudgetExceeded { limit } => write!(
                f,
                "instruction budget exceeded ({limit} warp instructions in one block): a runaway loop? raise it with --max-instructions"
            )?,
            FaultKind::Trap => write!(f, "trap instruction executed")?,
            FaultKind::Unsupported(m) => write!(f, "{m}")?,
        }
        let [bx, by, bz] = self.block;
        write!(f, "\n  in block ({bx},{by},{bz})")?;
        if let Some([tx, ty, tz]) = self.thread {
            write!(f, ", thread ({tx},{ty},{tz})")?;
        }
        write!(f, ", warp {}", self.warp)?;
        if let Some(l) = self.lane {
            write!(f, " lane {l}")?;
        }
        write!(f, "\n  at PTX line {}: `{}`", self.ptx_line, self.opcode)?;
        if let Some(s) = &self.source {
            write!(f, "\n  source: {s}")?;
        }
        Ok(())
    }
}

impl std::error::Error for KernelFault {}
