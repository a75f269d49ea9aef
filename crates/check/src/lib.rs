//! `warpsim check`: finds the warp-synchronous bugs that a GPU's own
//! sanitizer misses, by watching every lane, mask and byte of a simulated
//! run.
//!
//! - **Races** on shared and global memory: two accesses to the same bytes
//!   from different threads, at least one a write, not both atomic, not
//!   ordered by happens-before. Edges come from block barriers (their
//!   threads), `bar.warp.sync` (the lanes that execute it), and
//!   release/acquire through fences and atomics. Lanes of one warp are not
//!   ordered by running together (Volta and later); [`CheckOptions::lockstep`]
//!   checks as on pre-Volta GPUs, where each warp instruction is ordered
//!   after the warp's earlier ones.
//! - **Barrier divergence**: an aligned barrier (`bar.sync`,
//!   `__syncthreads()`) reached by part of a warp, or through different
//!   barrier instructions; a barrier that can never complete (**deadlock**),
//!   with which threads arrived and which did not.
//! - **Sync masks**: a `*.sync` instruction executed by a lane its mask does
//!   not name, masks that differ within one call, masks naming lanes that
//!   never arrive (diverged or beyond the block), shuffles reading a lane
//!   outside the mask or not executing the shuffle.
//! - **Memory**: out-of-bounds against each allocation's exact bounds,
//!   misaligned accesses, shared memory beyond the block's size (these stop
//!   the launch, as they do on a GPU, and are reported with their place),
//!   and reads of shared or local memory that nothing wrote.
//!
//! The checker is an observer of the functional engine; blocks run serially
//! so that one shadow of global memory sees them all.

#![forbid(unsafe_code)]

pub mod checker;
pub mod diag;
mod global;
mod hb;
pub mod plan;
mod shadow;

pub use checker::{CheckOptions, Checker};
pub use diag::{group_diagnostics, render, render_grouped, DiagGroup, DiagKind, Diagnostic, Site};

use std::sync::Arc;
use warpsim_engine::fault::FaultSpace;
use warpsim_engine::{
    launch_observed_partial, FaultKind, GlobalMemory, KernelFault, LaunchArgs, LaunchConfig, LaunchError, LaunchStats, MemAccessKind,
};
use warpsim_ir::{Kernel, Program};

/// What a checked launch gave: the launch's result (a fault stops it) and
/// what the checkers found, the fault included when it is a bug they name.
pub struct CheckReport {
    pub result: Result<LaunchStats, LaunchError>,
    pub diagnostics: Vec<Diagnostic>,
}

/// Runs a launch with the checkers attached (blocks one after another).
pub fn check_launch(a: &LaunchArgs<'_>, opts: &CheckOptions) -> CheckReport {
    let cfg = LaunchConfig { serial: true, ..a.cfg.clone() };
    let session = CheckSession::new(a.input.program, a.input.kernel, &cfg, a.input.mem, *opts);
    let (result, checker) =
        launch_observed_partial(&LaunchArgs { cfg: &cfg, ..*a }, &|| session.checker(), &|a: &mut Checker, b| a.merge(b));
    let diagnostics = session.finish(checker, result.as_ref().err());
    CheckReport { result, diagnostics }
}

/// The checkers of one launch, for a caller that runs the launch itself
/// (with other observers beside them, or on the timing model): make a
/// [`Checker`] per block (or block slot) with [`CheckSession::checker`],
/// fold them with [`Checker::merge`], then [`CheckSession::finish`].
/// Races between blocks are found only among the blocks one checker sees,
/// so the functional engine runs checked launches serially.
pub struct CheckSession {
    plan: Arc<plan::Plan>,
    opts: CheckOptions,
}

impl CheckSession {
    pub fn new(program: &Program, kernel: &Kernel, cfg: &LaunchConfig, mem: &GlobalMemory, opts: CheckOptions) -> CheckSession {
        CheckSession { plan: Arc::new(plan::Plan::new(program, kernel, cfg, mem)), opts }
    }

    pub fn checker(&self) -> Checker {
        Checker::new(self.plan.clone(), self.opts)
    }

    /// The diagnostics, with the launch's fault (if it ended in one) as the last.
    /// Out-of-bounds diagnostics for the accesses past an allocation's end
    /// the engine served (`LaunchConfig::serve_past_end`).
    pub fn served_past_end(&self, faults: &[KernelFault]) -> Vec<Diagnostic> {
        faults.iter().filter_map(|f| from_fault(f, &self.plan)).collect()
    }

    pub fn finish(&self, checker: Checker, error: Option<&LaunchError>) -> Vec<Diagnostic> {
        let mut diagnostics = checker.finish();
        if let Some(LaunchError::Fault(f)) = error {
            if let Some(d) = from_fault(f, &self.plan) {
                diagnostics.push(d);
            }
        }
        diagnostics
    }
}

pub fn from_fault(f: &KernelFault, plan: &plan::Plan) -> Option<Diagnostic> {
    let place = plan.place(f.pc);
    let site = Site {
        ptx_line: f.ptx_line,
        source_line: place.source.clone().or_else(|| f.source.clone()),
        opcode: f.opcode.clone(),
        block: f.block,
        thread: f.thread,
        warp: Some(f.warp),
        lane: f.lane,
        access: None,
    };
    let (kind, message, space, address) = match &f.kind {
        FaultKind::OutOfBounds { space, access, size, addr } => {
            let mut m = format!("{space} {access} of {size} bytes at {addr:#x} is outside every allocation");
            if *space == FaultSpace::Global {
                if let Some(near) = nearest(&plan.allocations, *addr) {
                    m = format!("{space} {access} of {size} bytes at {addr:#x}: {near}");
                }
            } else if *space == FaultSpace::Shared {
                m = format!(
                    "{space} {access} of {size} bytes at offset {addr:#x}, beyond the block's {} bytes of shared memory",
                    plan.shared_bytes
                );
            } else if *space == FaultSpace::Local {
                m = format!(
                    "{space} {access} of {size} bytes at offset {addr:#x}, beyond the thread's {} bytes of local memory",
                    plan.local_bytes
                );
            }
            (DiagKind::OutOfBounds, m, Some(space.name()), Some(*addr))
        }
        FaultKind::Misaligned { space, access, size, addr } => (
            DiagKind::Misaligned,
            format!(
                "{space} {access} of {size} bytes at {addr:#x}, which is not a multiple of {size} (accesses must be naturally aligned)"
            ),
            Some(space.name()),
            Some(*addr),
        ),
        FaultKind::Deadlock { detail } => (DiagKind::Deadlock, format!("barrier can never complete: {detail}"), None, None),
        _ => return None,
    };
    let access = match &f.kind {
        FaultKind::OutOfBounds { access, .. } | FaultKind::Misaligned { access, .. } => Some(match access {
            MemAccessKind::Load => "read",
            MemAccessKind::Store => "write",
            MemAccessKind::Atomic => "atomic",
        }),
        _ => None,
    };
    Some(Diagnostic { kind, message, site: Site { access, ..site }, other: None, space, address, count: 1 })
}

/// Describes where `addr` lies relative to the nearest allocation.
fn nearest(allocs: &[(String, u64, u64)], addr: u64) -> Option<String> {
    let mut best: Option<(u64, String)> = None;
    for (name, base, size) in allocs {
        let end = base + size;
        let (dist, text) = if addr >= end {
            (
                addr - end,
                format!(
                    "{} bytes past the end of `{name}` ({size} bytes at {base:#x}); a GPU's allocator rounds buffers up, which hides this",
                    addr - end
                ),
            )
        } else if addr < *base {
            (base - addr, format!("{} bytes before the start of `{name}` ({size} bytes at {base:#x})", base - addr))
        } else {
            (0, format!("it runs past the end of `{name}` ({size} bytes at {base:#x})"))
        };
        if best.as_ref().is_none_or(|b| dist < b.0) {
            best = Some((dist, text));
        }
    }
    best.map(|b| b.1)
}
