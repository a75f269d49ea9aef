//! The launch's quanta: the in-order pass, and local phases ahead of it.
//!
//! The one-thread model runs SM 0 to the end of a quantum, then SM 1, and
//! so on, then the next quantum. The calling thread runs exactly that pass.
//! After an SM's turn in a quantum, the SM may run on alone, in local
//! phases (exact: see the module header of `sim`), through the next
//! quanta, while it touches nothing outside itself; what those phases left
//! for the pass (deferred stores, kept block slots, an error) waits for the
//! SM's turn in the quantum that left it, and a turn that finds the SM
//! already past the quantum's end only replays.
//!
//! With workers, each takes SMs the pass has passed and released, the one
//! the pass will reach last first, and runs them one quantum ahead; the
//! pass runs in order what no worker took and waits only on an SM a worker
//! holds. So the pass's in-order work of one quantum overlaps the local
//! phases of the next.
//!
//! On one thread, the pass itself runs an SM up to [`AHEAD_QUANTA`] ahead
//! right after its turn, if that turn ran fewer than [`RUN_AHEAD_BELOW`]
//! warp instructions (the engine's count: a warp's region runs at its
//! first issue). A visit of a quantum, a few hundred cycles of each of
//! 132 SMs, evicts the SM's warps and shared memory from the host's caches
//! before its next visit; an SM that issues little per visit (bank
//! conflicts, long waits) pays that miss for little work, and running it
//! ahead pays it once for several quanta. One that issues much has already
//! paid it off, and the phases' bookkeeping would cost more than it saves.
//! The bound sits between the two: turns of 512-1,023 warp instructions
//! (`smem_stride_4/8`, 4- and 8-way conflicts) run 1.5-1.9x faster ahead on
//! the same host instructions; busier turns (`smem_stride_0` 1,024-4,095,
//! `compute_bound_*` 2,048-4,095) run 3-5% slower ahead (docs/speed.md,
//! twenty-ninth pass).
//! Either way the cycles are those of the one-thread model.

use super::{place, Gpu, Sm};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};
use warpsim_engine::{LaunchError, Observer};

/// How many quanta past its turn the pass runs an SM on one thread.
const AHEAD_QUANTA: u64 = 16;

/// On one thread, an SM runs ahead after a turn that ran fewer warp
/// instructions than this in the engine.
const RUN_AHEAD_BELOW: u64 = 1200;

/// One SM as the pass and the workers share it.
struct Slot<'s, 'a, const W: usize, O> {
    /// Its next local phase may run and nobody has claimed it.
    ready: AtomicBool,
    /// The SM, and where its next local phase ends.
    sm: Mutex<(&'s mut Sm<'a, W, O>, u64)>,
}

impl<'s, 'a, const W: usize, O> Slot<'s, 'a, W, O> {
    fn lock(&self) -> MutexGuard<'_, (&'s mut Sm<'a, W, O>, u64)> {
        // A worker that panicked leaves the SM as it was; the panic reaches
        // the caller when the scope joins.
        self.sm.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The first wave of blocks, then every SM in turn, one quantum of cycles
/// at a time, until all are idle. With `locals`, local phases run: in
/// workers, one per context, if `workers`, else in the pass's own context.
pub(super) fn drive<'a, const W: usize, O: Observer + Send>(
    sms: &mut [Sm<'a, W, O>],
    gg: &mut Gpu<'a, W>,
    locals: &mut [Gpu<'a, W>],
    workers: bool,
    make: &dyn Fn() -> O,
) -> Result<(), LaunchError> {
    place::first_wave(sms, gg, make)?;
    let q = gg.timing.quantum_cycles as u64;
    let (own, workers) = match locals {
        [own] if !workers => (Some(own), &mut [][..]),
        all => (None, all),
    };
    let release = !workers.is_empty();
    // Workers may start on the first quantum at once.
    let slots: Vec<Slot<W, O>> =
        sms.iter_mut().map(|sm| Slot { ready: AtomicBool::new(release && !sm.idle), sm: Mutex::new((sm, q)) }).collect();
    let exhausted = AtomicBool::new(gg.place.next_block >= gg.place.nblocks);
    let finished = AtomicBool::new(false);
    std::thread::scope(|s| {
        for g in workers.iter_mut() {
            let (slots, exhausted, finished) = (&slots, &exhausted, &finished);
            s.spawn(move || local_phases(slots, g, q, exhausted, finished));
        }
        let pass = Pass { q, exhausted: &exhausted, release };
        let r = pass.run(&slots, gg, own, make);
        finished.store(true, Ordering::Release);
        r
    })
}

/// What the in-order pass shares with the workers.
struct Pass<'p> {
    q: u64,
    exhausted: &'p AtomicBool,
    /// Release each SM to the workers after its turn.
    release: bool,
}

impl Pass<'_> {
    /// The one-thread model's pass: each SM to the quantum's end in index
    /// order; then, with workers, the SM is released to them, or, with
    /// `own`, runs ahead in it after a thin turn (see the module header).
    fn run<'a, const W: usize, O: Observer>(
        &self,
        slots: &[Slot<'_, 'a, W, O>],
        gg: &mut Gpu<'a, W>,
        mut own: Option<&mut Gpu<'a, W>>,
        make: &dyn Fn() -> O,
    ) -> Result<(), LaunchError> {
        let q = self.q;
        let mut t = 0u64;
        loop {
            let end = t + q;
            let mut next = u64::MAX;
            for slot in slots {
                // Unclaimed, its phases wait for this turn.
                slot.ready.store(false, Ordering::Release);
                let mut guard = slot.lock();
                let (sm, local_end) = &mut *guard;
                if sm.has_deferred() {
                    sm.replay_until(end, gg);
                }
                if sm.pending.as_ref().is_some_and(|p| p.0 <= end) {
                    return Err(sm.pending.take().expect("an error").1);
                }
                sm.launch_reserved(end, gg)?;
                let before = gg.st.warp_insts;
                if !sm.idle {
                    sm.mem.port.retire(t);
                    sm.run_until(end, gg, make)?;
                    // The block scheduler only ever runs out.
                    self.exhausted.store(gg.place.next_block >= gg.place.nblocks, Ordering::Release);
                }
                if !sm.idle && self.release {
                    *local_end = end + q;
                    next = next.min(sm.next_visit(q));
                    drop(guard);
                    slot.ready.store(true, Ordering::Release);
                    continue;
                }
                if let Some(g) = own.as_deref_mut() {
                    if gg.st.warp_insts - before < RUN_AHEAD_BELOW {
                        run_ahead(sm, end + AHEAD_QUANTA * q, q, self.exhausted, g);
                    }
                }
                next = next.min(sm.next_visit(q));
            }
            if next == u64::MAX {
                return Ok(());
            }
            if gg.opts.progress.as_ref().is_some_and(|p| p.stopped()) {
                return Err(LaunchError::Stopped);
            }
            // Skip quanta in which nothing happens anywhere.
            t = end.max(next - next % q);
            gg.memsys.retire(t);
        }
    }
}

/// Local phases of `sm` through the quanta after its turn, up to the one
/// that ends at `to`, while each covers its quantum. A phase that covers
/// under a twentieth of its cycles (memory-bound stretches: its cost
/// outweighs it) makes that SM skip its next `local_backoff` chances
/// (doubling up to 64, reset by one that pays); skipping changes nothing
/// but the speed.
fn run_ahead<'a, const W: usize, O: Observer>(sm: &mut Sm<'a, W, O>, to: u64, q: u64, exhausted: &AtomicBool, g: &mut Gpu<'a, W>) {
    let from = sm.now;
    if sm.idle || sm.pending.is_some() || from >= to {
        return;
    }
    if sm.local_skip > 0 {
        sm.local_skip -= 1;
        return;
    }
    // The quantum `now` is in: its turn has passed (the SM ran to its end).
    let mut end = (from / q + 1) * q;
    while end <= to && !sm.idle {
        if let Err(e) = sm.run_local(end, exhausted.load(Ordering::Acquire), g) {
            sm.pending = Some((end, e));
            break;
        }
        if sm.now < end {
            // At its horizon.
            break;
        }
        end += q;
    }
    // (An SM that went idle covered the rest.)
    if (sm.now.min(to) - from) * 20 < to - from {
        sm.local_skip = sm.local_backoff;
        sm.local_backoff = (sm.local_backoff * 2).min(64);
    } else {
        sm.local_backoff = 1;
    }
}

/// A worker: local phases ahead of the ready SM the pass will reach last
/// ([`run_ahead`]), until the pass is done; when none is ready it spins,
/// then yields, then sleeps 50 us at a time.
fn local_phases<'a, const W: usize, O: Observer + Send>(
    slots: &[Slot<'_, 'a, W, O>],
    g: &mut Gpu<'a, W>,
    q: u64,
    exhausted: &AtomicBool,
    finished: &AtomicBool,
) {
    let mut spins = 0u32;
    while !finished.load(Ordering::Acquire) {
        let claimed = slots.iter().rev().find(|s| s.ready.load(Ordering::Relaxed) && s.ready.swap(false, Ordering::AcqRel));
        let Some(slot) = claimed else {
            // Spin briefly, then yield, then sleep: a pass in a long
            // in-order stretch should not have a core taken from it.
            spins += 1;
            if spins < 64 {
                std::hint::spin_loop();
            } else if spins < 2048 {
                std::thread::yield_now();
            } else {
                std::thread::sleep(std::time::Duration::from_micros(50));
            }
            continue;
        };
        spins = 0;
        let mut guard = slot.lock();
        let (sm, to) = &mut *guard;
        run_ahead(sm, *to, q, exhausted, g);
    }
}
