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

impl MemAccessKind {
    /// `load`, `store` or `atomic`.
    pub fn name(self) -> &'static str {
        match self {
            MemAccessKind::Load => "load",
            MemAccessKind::Store => "store",
            MemAccessKind::Atomic => "atomic",
        }
    }
}

display_as_name!(MemAccessKind);

/// Watches a launch. Every hook has an empty default; the lane-group order
/// (independent thread scheduling) is not an observer's business but a
/// [`crate::schedule::SchedulePolicy`]'s.
pub trait Observer {
    /// Block `block` (linear index) starts, with `warps` warps; the hooks that
    /// follow, up to the next `block_begin`, are its instructions. (Blocks
    /// that one observer sees run one after another.)
    #[inline(always)]
    fn block_begin(&mut self, _block: u64, _warps: u32) {}

    /// A warp instruction issued at `pc` with `active` lanes, of which `exec` passed the guard.
    #[inline(always)]
    fn instruction(&mut self, _warp: u32, _pc: u32, _active: u64, _exec: u64) {}

    /// An instruction with a guard predicate is about to execute with `active`
    /// lanes, of which `exec` passed the guard (before `instruction`). An
    /// instruction without a guard executes all its `active` lanes.
    ///
    /// It takes no pc, so the run loop need not work one out per instruction:
    /// the calls come in order, one per guarded instruction of the straight run
    /// that [`Observer::straight_run`] reports next (its last instruction
    /// included), so an observer that knows which pcs are guarded finds each
    /// call's pc there.
    #[inline(always)]
    fn guard(&mut self, _active: u64, _exec: u64) {}

    /// The `count` instructions at `pc..pc + count` issued one after another
    /// with the same `active` lanes (a straight-line run, its last one possibly
    /// a branch or memory instruction); called after `instruction` for each of
    /// them and before the last one's other hooks. An observer that counts
    /// instructions per pc can count a run here once instead of per instruction.
    #[inline(always)]
    fn straight_run(&mut self, _warp: u32, _pc: u32, _count: u32, _active: u64) {}

    /// A memory instruction: for each lane in `mask`, `bytes` bytes at `addrs[lane]`
    /// (the state-space address for shared and local, the global address otherwise).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)] // one argument per fact; every observer implements it
    fn memory(&mut self, _warp: u32, _pc: u32, _space: Space, _kind: MemAccessKind, _bytes: u32, _addrs: &[u64], _mask: u64) {}

    /// A branch: lanes that took it and lanes that fell through. Every `bra`
    /// that [`Observer::straight_run`] counts calls it (an observer may count
    /// a `bra`'s executions there); a `brx.idx` whose index is out of range
    /// faults first.
    #[inline(always)]
    fn branch(&mut self, _warp: u32, _pc: u32, _taken: u64, _not_taken: u64) {}

    /// Whether `memory` wants the addresses (saves gathering them when false).
    const WANTS_MEMORY: bool = false;

    /// A fence-class instruction (`fence`, `membar`, and the no-op
    /// `prefetch`/`nanosleep` family that decodes alike) executed by `exec`.
    #[inline(always)]
    fn fence(&mut self, _warp: u32, _pc: u32, _exec: u64) {}

    /// Whether `warp_sync` wants its per-lane masks and shuffle sources
    /// (saves gathering them when false).
    const WANTS_SYNC: bool = false;

    /// A warp-synchronous instruction (`bar.warp.sync`, `shfl.sync`,
    /// `vote.sync`, `match.sync`, `redux.sync`, `elect.sync`) executed by one
    /// group of lanes; called only when [`Observer::WANTS_SYNC`].
    #[inline(always)]
    fn warp_sync(&mut self, _warp: u32, _pc: u32, _event: &WarpSyncEvent<'_>) {}

    /// A block barrier instruction (`bar.sync`, `bar.arrive`, `bar.red`,
    /// `barrier.sync`) executed by one group of lanes of a warp.
    #[inline(always)]
    fn barrier(&mut self, _warp: u32, _pc: u32, _event: &BarrierEvent) {}

    /// Barrier `id` of the current block completed: every thread that arrived
    /// since its previous completion is released.
    #[inline(always)]
    fn barrier_complete(&mut self, _id: u32) {}
}

/// Which warp-synchronous instruction.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum WarpSyncKind {
    BarWarpSync,
    Shfl,
    Vote,
    Match,
    Redux,
    Elect,
}

/// One group of lanes executing a warp-synchronous instruction.
#[derive(Copy, Clone, Debug)]
pub struct WarpSyncEvent<'a> {
    pub kind: WarpSyncKind,
    /// Lanes executing it (active and passing the guard).
    pub exec: u64,
    /// Lanes of the warp that exist and have not exited.
    pub live: u64,
    /// Each lane's `membermask` operand; on a 64-lane warp it names lanes of
    /// the lane's own half (bit i = lane i + 32 for lanes 32..63).
    pub masks: &'a [u32],
    /// For shuffles: each lane's source lane (within the warp), or
    /// `u32::MAX` where the source is out of range and the lane keeps its value.
    pub sources: Option<&'a [u32]>,
}

/// One group of lanes arriving at a block barrier.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct BarrierEvent {
    pub id: u32,
    /// The thread count operand (`bar.sync a, b`), if any.
    pub count: Option<u32>,
    /// Lanes arriving (active and passing the guard).
    pub exec: u64,
    /// Lanes of the warp that exist and have not exited.
    pub live: u64,
    /// Whether they wait (`bar.sync`, `bar.red`) or only arrive (`bar.arrive`).
    pub wait: bool,
    /// `.aligned` (and every `bar`): all threads of a warp must execute it together.
    pub aligned: bool,
}

/// The observer that observes nothing.
#[derive(Default, Clone, Copy)]
pub struct NoObserver;

impl Observer for NoObserver {}

/// Calls `$forward!` with every hook's name and arguments (and the
/// `WANTS_*` constant that gates it, if any), so that the observers that pass
/// every hook on (pairs, borrows) list the hooks once.
macro_rules! with_hooks {
    ($forward:ident) => {
        $forward! {
            block_begin(block: u64, warps: u32);
            instruction(warp: u32, pc: u32, active: u64, exec: u64);
            guard(active: u64, exec: u64);
            straight_run(warp: u32, pc: u32, count: u32, active: u64);
            memory(warp: u32, pc: u32, space: Space, kind: MemAccessKind, bytes: u32, addrs: &[u64], mask: u64) if WANTS_MEMORY;
            branch(warp: u32, pc: u32, taken: u64, not_taken: u64);
            fence(warp: u32, pc: u32, exec: u64);
            warp_sync(warp: u32, pc: u32, event: &WarpSyncEvent<'_>) if WANTS_SYNC;
            barrier(warp: u32, pc: u32, event: &BarrierEvent);
            barrier_complete(id: u32);
        }
    };
}

/// A pair's hooks: each goes to the first observer, then the second (a
/// gated hook only to those that want it).
macro_rules! pair_hooks {
    ($($hook:ident($($arg:ident: $ty:ty),*) $(if $wants:ident)?;)*) => {$(
        #[inline(always)]
        #[allow(clippy::too_many_arguments)]
        fn $hook(&mut self, $($arg: $ty),*) {
            if true $(&& A::$wants)? {
                self.0.$hook($($arg),*);
            }
            if true $(&& B::$wants)? {
                self.1.$hook($($arg),*);
            }
        }
    )*};
}

/// A borrowed observer's hooks: each goes to the observer lent.
macro_rules! borrowed_hooks {
    ($($hook:ident($($arg:ident: $ty:ty),*) $(if $wants:ident)?;)*) => {$(
        #[inline(always)]
        #[allow(clippy::too_many_arguments)]
        fn $hook(&mut self, $($arg: $ty),*) {
            (**self).$hook($($arg),*)
        }
    )*};
}

/// Two observers watching one launch: every hook goes to both, in order, so
/// metrics, checker, timing and trace can share a single execution.
/// Nest pairs for more (`(a, (b, c))`).
impl<A: Observer, B: Observer> Observer for (A, B) {
    const WANTS_MEMORY: bool = A::WANTS_MEMORY || B::WANTS_MEMORY;
    const WANTS_SYNC: bool = A::WANTS_SYNC || B::WANTS_SYNC;

    with_hooks!(pair_hooks);
}

/// A borrowed observer observes: a block's owner can lend its observer to a
/// pair (the timing model pairs its capture with the user's observers).
impl<O: Observer> Observer for &mut O {
    const WANTS_MEMORY: bool = O::WANTS_MEMORY;
    const WANTS_SYNC: bool = O::WANTS_SYNC;

    with_hooks!(borrowed_hooks);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Count {
        insts: u32,
        mem: u32,
    }
    impl Observer for Count {
        const WANTS_MEMORY: bool = true;
        fn instruction(&mut self, _: u32, _: u32, _: u64, _: u64) {
            self.insts += 1;
        }
        fn memory(&mut self, _: u32, _: u32, _: Space, _: MemAccessKind, _: u32, _: &[u64], _: u64) {
            self.mem += 1;
        }
    }

    #[test]
    fn a_pair_feeds_both_and_asks_for_what_either_wants() {
        let mut pair = (Count::default(), (NoObserver, Count::default()));
        pair.instruction(0, 1, 1, 1);
        pair.memory(0, 1, Space::Global, MemAccessKind::Load, 4, &[0], 1);
        assert_eq!((pair.0.insts, pair.0.mem, pair.1 .1.insts, pair.1 .1.mem), (1, 1, 1, 1));
        const { assert!(<(NoObserver, Count) as Observer>::WANTS_MEMORY) };
        const { assert!(!<(NoObserver, NoObserver) as Observer>::WANTS_SYNC) };
    }
}
