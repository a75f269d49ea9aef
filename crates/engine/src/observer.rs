//! Observers see each executed warp instruction. The engine is generic over
//! the observer, so with [`NoObserver`] every hook compiles away: metrics,
//! the timing model and the sanitizer cost nothing when they are off.

use warpsim_ir::Space;

/// What a memory instruction did, per lane.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum MemAccessKind {
    Load,
    Store,
    Atomic,
}

pub trait Observer {
    /// A warp instruction issued at `pc` with `active` lanes, of which `exec` passed the guard.
    #[inline(always)]
    fn instruction(&mut self, _warp: u32, _pc: u32, _active: u64, _exec: u64) {}

    /// A memory instruction: for each lane in `mask`, `bytes` bytes at `addrs[lane]`
    /// (the state-space address for shared and local, the global address otherwise).
    #[inline(always)]
    fn memory(&mut self, _warp: u32, _pc: u32, _space: Space, _kind: MemAccessKind, _bytes: u32, _addrs: &[u64], _mask: u64) {}

    /// A conditional branch: lanes that took it and lanes that fell through.
    #[inline(always)]
    fn branch(&mut self, _warp: u32, _pc: u32, _taken: u64, _not_taken: u64) {}

    /// Whether `memory` wants the addresses (saves gathering them when false).
    const WANTS_MEMORY: bool = false;
}

/// The observer that observes nothing.
#[derive(Default, Clone, Copy)]
pub struct NoObserver;

impl Observer for NoObserver {}
