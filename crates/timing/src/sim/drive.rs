//! The launch's quanta: the in-order pass on the calling thread, local
//! phases on workers beside it.
//!
//! The one-thread model runs SM 0 to the end of a quantum, then SM 1, and
//! so on, then the next quantum. Here the calling thread runs exactly that
//! pass, while each worker takes SMs the pass has not reached in this
//! quantum, or has passed and released for the next, and runs their local
//! phase (exact: see the module header of `sim`). Each SM-quantum's local
//! phase is claimed once, by a worker or by the pass itself, which then
//! simply runs the whole quantum in order; the pass waits only on an SM a
//! worker holds. Workers take the SM the pass will reach last, so the two
//! meet in the middle and the in-order work of one quantum overlaps the
//! local phases of the next. Cycles are those of the one-thread model.

use super::{place, Gpu, Sm};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};
use warpsim_engine::{LaunchError, Observer};

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
/// at a time, until all are idle; with `workers`, local phases on them.
pub(super) fn drive<'a, const W: usize, O: Observer + Send>(
    sms: &mut [Sm<'a, W, O>],
    gg: &mut Gpu<'a, W>,
    workers: &mut [Gpu<'a, W>],
    make: &dyn Fn() -> O,
) -> Result<(), LaunchError> {
    place::first_wave(sms, gg, make)?;
    let q = gg.timing.quantum_cycles as u64;
    let local = !workers.is_empty();
    let slots: Vec<Slot<W, O>> =
        sms.iter_mut().map(|sm| Slot { ready: AtomicBool::new(local && !sm.idle), sm: Mutex::new((sm, q)) }).collect();
    let exhausted = AtomicBool::new(gg.place.next_block >= gg.place.nblocks);
    let finished = AtomicBool::new(false);
    std::thread::scope(|s| {
        for g in workers.iter_mut() {
            let (slots, exhausted, finished) = (&slots, &exhausted, &finished);
            s.spawn(move || local_phases(slots, g, exhausted, finished));
        }
        let r = in_order(&slots, gg, make, q, local, &exhausted);
        finished.store(true, Ordering::Release);
        r
    })
}

/// The one-thread model's pass: each SM to the quantum's end in index order.
fn in_order<'a, const W: usize, O: Observer>(
    slots: &[Slot<'_, 'a, W, O>],
    gg: &mut Gpu<'a, W>,
    make: &dyn Fn() -> O,
    q: u64,
    local: bool,
    exhausted: &AtomicBool,
) -> Result<(), LaunchError> {
    let mut t = 0u64;
    loop {
        let end = t + q;
        let mut next = u64::MAX;
        for slot in slots {
            // Unclaimed, the local phase is run here, in order.
            slot.ready.store(false, Ordering::Release);
            let mut guard = slot.lock();
            let (sm, local_end) = &mut *guard;
            if !sm.deferred.is_empty() {
                sm.replay(gg);
            }
            if let Some(e) = sm.pending.take() {
                return Err(e);
            }
            sm.launch_reserved(gg)?;
            if sm.idle {
                continue;
            }
            sm.mem.port.retire(t);
            sm.run_until(end, gg, make)?;
            // The block scheduler only ever runs out.
            exhausted.store(gg.place.next_block >= gg.place.nblocks, Ordering::Release);
            if sm.idle {
                continue;
            }
            next = next.min(sm.now);
            *local_end = end + q;
            drop(guard);
            slot.ready.store(local, Ordering::Release);
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

/// A worker: local phases of the ready SM the pass will reach last, until
/// the pass is done; when none is ready it spins, then yields, then sleeps
/// 50 us at a time. A phase that covers under a twentieth of its cycles
/// (memory-bound stretches: its cost, and the SM's state moving between
/// cores, outweigh it) makes that SM skip its next `local_backoff` phases
/// (doubling up to 64, reset by one that pays); skipping changes nothing
/// but the speed.
fn local_phases<'a, const W: usize, O: Observer + Send>(
    slots: &[Slot<'_, 'a, W, O>],
    g: &mut Gpu<'a, W>,
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
        let (sm, end) = &mut *guard;
        let end = *end;
        if sm.idle || sm.pending.is_some() || sm.now >= end {
            continue;
        }
        if sm.local_skip > 0 {
            sm.local_skip -= 1;
            continue;
        }
        let from = sm.now;
        if let Err(e) = sm.run_local(end, exhausted.load(Ordering::Acquire), g) {
            sm.pending = Some(e);
        }
        // (An SM that went idle covered the rest of the quantum.)
        if (sm.now.min(end) - from) * 20 < end - from {
            sm.local_skip = sm.local_backoff;
            sm.local_backoff = (sm.local_backoff * 2).min(64);
        } else {
            sm.local_backoff = 1;
        }
    }
}
