//! Kernel faults: what went wrong, and where, in the user's terms (block,
//! thread, PTX line and instruction, CUDA source line, address).

use std::fmt;

pub use crate::exec::MbarrierError;
pub use crate::observer::MemAccessKind;

/// The state space a faulting access resolved to (generic addresses resolved).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum FaultSpace {
    Global,
    Const,
    Shared,
    Local,
    /// The kernel's parameter buffer.
    Param,
}

impl FaultSpace {
    /// The PTX name of the space (`global`, `const`, `shared`, `local`, `param`).
    pub fn name(self) -> &'static str {
        match self {
            FaultSpace::Global => "global",
            FaultSpace::Const => "const",
            FaultSpace::Shared => "shared",
            FaultSpace::Local => "local",
            FaultSpace::Param => "param",
        }
    }
}

display_as_name!(FaultSpace);

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FaultKind {
    #[error("out-of-bounds {space} {access} of {size} bytes at address {addr:#x}")]
    OutOfBounds { space: FaultSpace, access: MemAccessKind, size: u32, addr: u64 },
    #[error("misaligned {space} {access} of {size} bytes at address {addr:#x}")]
    Misaligned { space: FaultSpace, access: MemAccessKind, size: u32, addr: u64 },
    /// A barrier that can never complete.
    #[error("barrier can never complete: {detail}")]
    Deadlock { detail: String },
    /// The launch ran past its warp-instruction budget (a runaway loop?).
    #[error("instruction budget exceeded: one block ran {limit} warp instructions (a runaway loop?); if the kernel needs more, raise the limit with --max-instructions N (or set --timeout SECONDS)")]
    BudgetExceeded { limit: u64 },
    #[error("trap instruction executed")]
    Trap,
    /// A call's frame does not fit the per-thread stack (runaway recursion?).
    #[error("stack overflow: call depth {depth} does not fit the {stack_size}-byte stack of each thread (runaway recursion?); if the kernel needs more, raise it with --stack-size BYTES")]
    StackOverflow { depth: u32, stack_size: u32 },
    /// A device `assert` failed (`__assertfail`), as CUDA reports it; `lanes`
    /// are the warp's lanes that called it together (the GPU prints the
    /// message once for each of them).
    #[error("device assert failed: {file}:{line}: {function}: Assertion `{message}` failed.")]
    AssertFailed { message: String, file: String, line: u32, function: String, lanes: u64 },
    /// An mbarrier operation the object's state does not allow.
    #[error(transparent)]
    Mbarrier(#[from] MbarrierError),
    /// Something the engine cannot do for this launch (bad configuration).
    #[error("{0}")]
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
    /// What the launch did before the fault ended it: the counts of the
    /// blocks that ran (the faulting one up to the fault) and their device
    /// `printf` output, in block order. Set by the launch, `None` within a block.
    pub ran: Option<Box<crate::launch::LaunchStats>>,
}

impl KernelFault {
    pub fn address(&self) -> Option<u64> {
        match self.kind {
            FaultKind::OutOfBounds { addr, .. } | FaultKind::Misaligned { addr, .. } => Some(addr),
            FaultKind::Deadlock { .. }
            | FaultKind::BudgetExceeded { .. }
            | FaultKind::Trap
            | FaultKind::StackOverflow { .. }
            | FaultKind::AssertFailed { .. }
            | FaultKind::Mbarrier(_)
            | FaultKind::Unsupported(_) => None,
        }
    }
}

impl fmt::Display for KernelFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.kind)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_read_as_before() {
        let k = FaultKind::OutOfBounds { space: FaultSpace::Shared, access: MemAccessKind::Store, size: 4, addr: 0x40 };
        assert_eq!(k.to_string(), "out-of-bounds shared store of 4 bytes at address 0x40");
        let k = FaultKind::Misaligned { space: FaultSpace::Global, access: MemAccessKind::Atomic, size: 8, addr: 0x7 };
        assert_eq!(k.to_string(), "misaligned global atomic of 8 bytes at address 0x7");
        let f = KernelFault {
            kind: FaultKind::Trap,
            block: [1, 0, 0],
            thread: Some([3, 0, 0]),
            warp: 0,
            lane: Some(3),
            pc: 2,
            ptx_line: 9,
            opcode: "trap".into(),
            source: None,
            ran: None,
        };
        assert_eq!(f.to_string(), "trap instruction executed\n  in block (1,0,0), thread (3,0,0), warp 0 lane 3\n  at PTX line 9: `trap`");
        assert_eq!(f.address(), None);
    }
}
