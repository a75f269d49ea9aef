//! The sub-partition warp scheduler: each cycle it picks one warp whose next
//! instruction can issue (sources ready, pipe free, queue not full), greedy
//! then oldest (GTO) or loose round robin (LRR), and hands it to issue. Kept
//! apart from issue so the policy is one small piece.
//!
//! A scan reads no warp state: each sub-partition mirrors, per position in
//! its age-ordered warp list, what the scan needs (when the next instruction
//! is ready, its pipes and queue, whether the warp waits at a barrier) and
//! keeps bitmasks over positions of 64 warps each (ready by the last scan,
//! waiting, at a barrier, per pipe and queue). Issue, barrier release and
//! warp start update the mirror of the warps they change ([`Sm::sync`]); a
//! scan is then a few mask operations per 64 warps, whatever its outcome,
//! with the same pick, stall reasons and next wake-up as a walk over the
//! warps in age order.

use super::lsu::Queues;
use super::{Gpu, Sm};
use crate::decode::{NPIPES, PIPE_NONE, QUEUE_LSU, QUEUE_MIO};
use crate::preset::{SchedulerPolicy, TimingGpu};
use crate::report::{Reason, Span};
use warpsim_engine::{LaunchError, Observer};

/// No warp.
pub(super) const NONE16: u16 = u16::MAX;

/// Scheduler parameters from the preset.
pub(super) struct SchedSpec {
    pub(super) policy: SchedulerPolicy,
    /// Entries the MIO (shared memory, shuffles) and LSU (L1) queues hold before issue throttles.
    pub(super) mio_queue_depth: usize,
    pub(super) lsu_queue_depth: usize,
}

impl SchedSpec {
    pub(super) fn new(gpu: &TimingGpu) -> Self {
        let t = &gpu.timing;
        SchedSpec { policy: t.scheduler, mio_queue_depth: t.mio_queue_depth as usize, lsu_queue_depth: t.lsu_queue_depth as usize }
    }
}

/// Masks over 64 positions of a sub-partition's warp list.
#[derive(Clone, Default)]
struct Chunk {
    /// Next instruction ready by the last scan (`le`) or later (`pend`,
    /// the earliest of them at or after `pend_min`).
    le: u64,
    pend: u64,
    pend_min: u64,
    /// Waiting at a barrier.
    bar: u64,
    /// Next instruction's pipe, per pipe; its alternative pipe, per pipe, or none.
    pipe: [u64; NPIPES],
    alt: [u64; NPIPES],
    alt_none: u64,
    /// Next instruction waits in the MIO or the LSU queue.
    mio: u64,
    lsu: u64,
}

/// A scan's split of one chunk's positions: can issue, held by a busy pipe,
/// by a full MIO or LSU queue.
#[derive(Clone, Copy, Default)]
struct Class4 {
    ok: u64,
    thr: u64,
    qm: u64,
    ql: u64,
}

/// What a scan needs of one warp (by position).
#[derive(Clone, Copy)]
struct Mirror {
    ready_at: u64,
    pipe: u8,
    alt: u8,
    queue: u8,
    barrier: bool,
}

/// One sub-partition: its warps, scheduler state, pipes and queues, issue counters.
pub(super) struct Smsp {
    /// Warp slots of the SM assigned here, oldest first.
    pub(super) warps: Vec<u16>,
    /// Per position: the mirror of the warp, and what held it back the last
    /// time it was ready but did not issue.
    mirror: Vec<Mirror>,
    pub(super) blocked: Vec<Reason>,
    chunks: Vec<Chunk>,
    /// The time `le`/`pend` are split at.
    split_t: u64,
    /// The warp that issued last.
    pub(super) last: u16,
    /// Its position.
    pub(super) last_pos: u16,
    /// When each pipe and the issue slot are free again.
    pub(super) pipe_free: [u64; NPIPES],
    pub(super) issue_free: u64,
    pub(super) q: Queues,
    /// Cycles with an issue, and the timeline span being extended.
    pub(super) issue_cycles: u64,
    pub(super) span: Option<Span>,
    /// No warp here can issue before this cycle (from the last scan that
    /// found none), until something changes a warp here: an issue, a barrier
    /// release, a warp starting or retiring ([`Smsp::wake_now`]).
    pub(super) wake: u64,
}

/// Bit `k % 64` of chunk `k / 64`.
#[inline]
fn at(k: usize) -> (usize, u64) {
    (k / 64, 1u64 << (k % 64))
}

impl Smsp {
    pub(super) fn new() -> Self {
        Smsp {
            warps: Vec::new(),
            mirror: Vec::new(),
            blocked: Vec::new(),
            chunks: Vec::new(),
            split_t: 0,
            last: NONE16,
            last_pos: 0,
            pipe_free: [0; NPIPES],
            issue_free: 0,
            q: Queues::default(),
            issue_cycles: 0,
            span: None,
            wake: 0,
        }
    }

    /// Something changed one of this sub-partition's warps: scan it again.
    #[inline]
    pub(super) fn wake_now(&mut self) {
        self.wake = 0;
    }

    /// Appends warp slot `ws` (the youngest); returns its position. Its
    /// mirror is set by the next [`Smsp::set`].
    pub(super) fn push(&mut self, ws: u16) -> usize {
        let k = self.warps.len();
        self.warps.push(ws);
        self.mirror.push(Mirror { ready_at: u64::MAX, pipe: PIPE_NONE, alt: PIPE_NONE, queue: 0, barrier: true });
        self.blocked.push(Reason::NotSelected);
        if self.chunks.len() * 64 <= k {
            self.chunks.push(Chunk { pend_min: u64::MAX, ..Chunk::default() });
        }
        self.mark(k);
        k
    }

    /// Removes position `k` (later warps move up one); returns nothing.
    pub(super) fn remove(&mut self, k: usize) {
        self.warps.remove(k);
        self.mirror.remove(k);
        self.blocked.remove(k);
        for c in self.chunks.iter_mut() {
            *c = Chunk { pend_min: u64::MAX, ..Chunk::default() };
        }
        for k in 0..self.warps.len() {
            self.mark(k);
        }
    }

    /// Sets the mirror of position `k`.
    #[inline]
    pub(super) fn set(&mut self, k: usize, ready_at: u64, barrier: bool, pipe: u8, alt: u8, queue: u8) {
        let m = self.mirror[k];
        if (m.pipe, m.alt, m.queue) != (pipe, alt, queue) {
            self.unmark(k);
            self.mirror[k] = Mirror { ready_at, pipe, alt, queue, barrier };
            self.mark(k);
            return;
        }
        // Same pipes and queue (the common case): only the time and the barrier bit move.
        self.mirror[k].ready_at = ready_at;
        self.mirror[k].barrier = barrier;
        let (c, b) = at(k);
        let split = self.split_t;
        let ch = &mut self.chunks[c];
        if ready_at <= split {
            ch.le |= b;
            ch.pend &= !b;
        } else {
            ch.le &= !b;
            ch.pend |= b;
            ch.pend_min = ch.pend_min.min(ready_at);
        }
        if barrier {
            ch.bar |= b;
        } else {
            ch.bar &= !b;
        }
    }

    /// Clears position `k`'s bits.
    #[inline]
    fn unmark(&mut self, k: usize) {
        let m = self.mirror[k];
        let (c, b) = at(k);
        let ch = &mut self.chunks[c];
        ch.le &= !b;
        ch.pend &= !b;
        ch.bar &= !b;
        if (m.pipe as usize) < NPIPES {
            ch.pipe[m.pipe as usize] &= !b;
        }
        if (m.alt as usize) < NPIPES {
            ch.alt[m.alt as usize] &= !b;
        }
        ch.alt_none &= !b;
        ch.mio &= !b;
        ch.lsu &= !b;
    }

    /// Sets position `k`'s bits from its mirror.
    #[inline]
    fn mark(&mut self, k: usize) {
        let m = self.mirror[k];
        let (c, b) = at(k);
        let split = self.split_t;
        let ch = &mut self.chunks[c];
        if m.ready_at <= split {
            ch.le |= b;
        } else {
            ch.pend |= b;
            ch.pend_min = ch.pend_min.min(m.ready_at);
        }
        if m.barrier {
            ch.bar |= b;
        }
        if (m.pipe as usize) < NPIPES {
            ch.pipe[m.pipe as usize] |= b;
        }
        if (m.alt as usize) < NPIPES {
            ch.alt[m.alt as usize] |= b;
        } else {
            ch.alt_none |= b;
        }
        match m.queue {
            QUEUE_MIO => ch.mio |= b,
            QUEUE_LSU => ch.lsu |= b,
            _ => {}
        }
    }

    /// Moves the split to `t` (not earlier than the last): warps ready by `t` join `le`.
    #[inline]
    fn split_at(&mut self, t: u64) {
        self.split_t = t;
        for (c, ch) in self.chunks.iter_mut().enumerate() {
            if ch.pend_min > t {
                continue;
            }
            let mut m = ch.pend;
            let mut min = u64::MAX;
            while m != 0 {
                let b = m.trailing_zeros() as usize;
                m &= m - 1;
                let r = self.mirror[c * 64 + b].ready_at;
                if r <= t {
                    ch.pend &= !(1 << b);
                    ch.le |= 1 << b;
                } else {
                    min = min.min(r);
                }
            }
            ch.pend_min = min;
        }
    }

    /// Whether position `k` can issue at `t` (the scan's test of one warp).
    #[inline]
    fn can_issue(&self, k: usize, t: u64, spec: &SchedSpec) -> bool {
        let m = &self.mirror[k];
        if m.barrier || m.ready_at > t {
            return false;
        }
        if m.pipe != PIPE_NONE && self.pipe_free[m.pipe as usize] > t && (m.alt == PIPE_NONE || self.pipe_free[m.alt as usize] > t) {
            return false;
        }
        match m.queue {
            QUEUE_MIO => self.q.mio.len() < spec.mio_queue_depth,
            QUEUE_LSU => self.q.lsu.len() < spec.lsu_queue_depth,
            _ => true,
        }
    }

    /// The scan at `t`: the position of the warp to issue (the first that
    /// can, from position `start` round), or else the earliest cycle one
    /// might. Every other warp ready by `t` records what held it back.
    fn scan(&mut self, t: u64, start: usize, spec: &SchedSpec) -> Result<usize, u64> {
        self.split_at(t);
        let mut busy = 0u32;
        for (p, &f) in self.pipe_free.iter().enumerate() {
            busy |= ((f > t) as u32) << p;
        }
        let mio_full = self.q.mio.len() >= spec.mio_queue_depth;
        let lsu_full = self.q.lsu.len() >= spec.lsu_queue_depth;
        let n = self.warps.len();
        let start = if start >= n { 0 } else { start };
        // Who can issue, per chunk; then the pick in rotation order from `start`.
        let mut pick = usize::MAX;
        let (sc, sb) = (start / 64, start % 64);
        let nch = self.chunks.len();
        let classify = |ch: &Chunk| -> Class4 {
            let (mut on_busy, mut alt_busy) = (0u64, ch.alt_none);
            let mut bits = busy;
            while bits != 0 {
                let p = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                on_busy |= ch.pipe[p];
                alt_busy |= ch.alt[p];
            }
            let ready = ch.le & !ch.bar;
            let thr = ready & on_busy & alt_busy;
            let qm = if mio_full { ready & !thr & ch.mio } else { 0 };
            let ql = if lsu_full { ready & !thr & ch.lsu } else { 0 };
            Class4 { ok: ready & !thr & !qm & !ql, thr, qm, ql }
        };
        let one;
        if nch == 1 {
            // One chunk (up to 64 warps: every built-in GPU).
            one = classify(&self.chunks[0]);
            let hi = one.ok & (!0u64 << sb);
            let ok = if hi != 0 { hi } else { one.ok };
            if ok != 0 {
                pick = ok.trailing_zeros() as usize;
            }
        } else {
            one = Class4::default();
            for i in 0..=nch {
                let c = (sc + i) % nch;
                let mut ok = classify(&self.chunks[c]).ok;
                if i == 0 {
                    ok &= !0u64 << sb;
                } else if i == nch {
                    ok &= !(!0u64 << sb);
                }
                if ok != 0 {
                    pick = c * 64 + ok.trailing_zeros() as usize;
                    break;
                }
            }
        }
        let mut next = u64::MAX;
        for c in 0..nch {
            let Class4 { ok, thr, qm, ql } = if nch == 1 { one } else { classify(&self.chunks[c]) };
            let ch = &self.chunks[c];
            let mine = if pick / 64 == c { 1u64 << (pick % 64) } else { 0 };
            let base = c * 64;
            let put = |m: u64, r: Reason, blocked: &mut [Reason]| {
                let mut m = m;
                while m != 0 {
                    blocked[base + m.trailing_zeros() as usize] = r;
                    m &= m - 1;
                }
            };
            put(ch.le & ch.bar, Reason::Barrier, &mut self.blocked);
            put(thr, Reason::MathPipeThrottle, &mut self.blocked);
            put(qm, Reason::MioThrottle, &mut self.blocked);
            put(ql, Reason::LgThrottle, &mut self.blocked);
            put(ok & !mine, Reason::NotSelected, &mut self.blocked);
            if pick != usize::MAX {
                continue;
            }
            // Nothing issues: when each warp might.
            let mut m = ch.pend & !ch.bar;
            while m != 0 {
                next = next.min(self.mirror[base + m.trailing_zeros() as usize].ready_at);
                m &= m - 1;
            }
            let mut m = thr;
            while m != 0 {
                let w = &self.mirror[base + m.trailing_zeros() as usize];
                let alt = if w.alt != PIPE_NONE { self.pipe_free[w.alt as usize] } else { u64::MAX };
                next = next.min(self.pipe_free[w.pipe as usize].min(alt));
                m &= m - 1;
            }
            if qm != 0 {
                next = next.min(self.q.mio.front().copied().unwrap_or(t + 1));
            }
            if ql != 0 {
                next = next.min(self.q.lsu.front().copied().unwrap_or(t + 1));
            }
        }
        if pick != usize::MAX {
            Ok(pick)
        } else {
            Err(next)
        }
    }
}

impl<'a, const W: usize, O: Observer> Sm<'a, W, O> {
    /// Copies what the scan reads of warp `ws` into its sub-partition's mirror.
    #[inline]
    pub(super) fn sync(&mut self, ws: usize) {
        let w = &self.warps[ws];
        if !w.live {
            return;
        }
        let bar = !w.is_ready();
        self.smsp[w.smsp as usize].set(w.spos as usize, w.ready_at, bar, w.next_pipe, w.next_alt_pipe, w.next_queue);
    }

    /// Checks the mirror of sub-partition `s` against its warps (debug builds).
    #[cfg(debug_assertions)]
    fn verify_mirror(&self, s: usize) {
        let sp = &self.smsp[s];
        for (k, &ws) in sp.warps.iter().enumerate() {
            let w = &self.warps[ws as usize];
            let m = &sp.mirror[k];
            assert!(w.live && w.spos as usize == k, "warp {ws} at position {k}");
            assert!(sp.last != ws || sp.last_pos as usize == k, "last warp {ws} at {k}");
            assert_eq!(
                (m.ready_at, m.barrier, m.pipe, m.alt, m.queue),
                (w.ready_at, !w.is_ready(), w.next_pipe, w.next_alt_pipe, w.next_queue),
                "mirror of warp {ws}"
            );
        }
    }

    /// Sub-partition `s` at cycle `t`: issues one warp instruction if a warp
    /// can; returns whether it did and the earliest cycle it might next.
    pub(super) fn schedule(&mut self, s: usize, t: u64, gg: &mut Gpu<'a, W>) -> Result<(bool, u64), LaunchError> {
        {
            let sp = &mut self.smsp[s];
            if sp.warps.is_empty() {
                return Ok((false, u64::MAX));
            }
            if sp.issue_free > t {
                return Ok((false, sp.issue_free));
            }
            if sp.wake > t {
                // The scan would find what the last one did: nothing before `wake`.
                return Ok((false, sp.wake));
            }
            sp.q.pop_started(t);
        }
        #[cfg(debug_assertions)]
        self.verify_mirror(s);
        let last = self.smsp[s].last;
        let lastpos = if last != NONE16 { self.smsp[s].last_pos as usize } else { usize::MAX };
        let start = match gg.sched.policy {
            SchedulerPolicy::Gto => {
                if lastpos != usize::MAX && self.smsp[s].can_issue(lastpos, t, &gg.sched) {
                    return self.issue(s, last, t, gg).map(|_| (true, t + 1));
                }
                0
            }
            SchedulerPolicy::Lrr => lastpos.wrapping_add(1),
        };
        match self.smsp[s].scan(t, start, &gg.sched) {
            Ok(k) => {
                let ws = self.smsp[s].warps[k];
                self.issue(s, ws, t, gg)?;
                Ok((true, t + 1))
            }
            Err(next) => {
                self.smsp[s].wake = next;
                Ok((false, next))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scan as a walk over the warps in rotation order (the model's
    /// definition): the pick, the next wake-up, and the reasons recorded.
    fn walk(sp: &Smsp, t: u64, start: usize, spec: &SchedSpec, blocked: &mut [Reason]) -> Result<usize, u64> {
        let n = sp.warps.len();
        let start = if start >= n { 0 } else { start };
        let (mut pick, mut next) = (None, u64::MAX);
        for k in (start..n).chain(0..start) {
            let m = sp.mirror[k];
            let r: Result<(), (u64, Reason)> = if m.barrier {
                Err((u64::MAX, Reason::Barrier))
            } else if m.ready_at > t {
                Err((m.ready_at, Reason::Wait))
            } else if m.pipe != PIPE_NONE && sp.pipe_free[m.pipe as usize] > t && {
                let alt = if m.alt != PIPE_NONE { sp.pipe_free[m.alt as usize] } else { u64::MAX };
                alt > t
            } {
                let alt = if m.alt != PIPE_NONE { sp.pipe_free[m.alt as usize] } else { u64::MAX };
                Err((sp.pipe_free[m.pipe as usize].min(alt), Reason::MathPipeThrottle))
            } else if m.queue == QUEUE_MIO && sp.q.mio.len() >= spec.mio_queue_depth {
                Err((sp.q.mio.front().copied().unwrap_or(t + 1), Reason::MioThrottle))
            } else if m.queue == QUEUE_LSU && sp.q.lsu.len() >= spec.lsu_queue_depth {
                Err((sp.q.lsu.front().copied().unwrap_or(t + 1), Reason::LgThrottle))
            } else {
                Ok(())
            };
            match r {
                Ok(()) if pick.is_none() => pick = Some(k),
                Ok(()) => blocked[k] = Reason::NotSelected,
                Err((at, why)) => {
                    next = next.min(at);
                    if m.ready_at <= t {
                        blocked[k] = why;
                    }
                }
            }
        }
        pick.ok_or(next)
    }

    #[test]
    fn mask_scan_matches_the_walk_over_warps() {
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let mut rnd = move |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let spec = SchedSpec { policy: SchedulerPolicy::Gto, mio_queue_depth: 2, lsu_queue_depth: 3 };
        let pipes = [0u8, 1, 2, 4, PIPE_NONE];
        for round in 0..60 {
            // Up to 150 warps: one, two and three chunks.
            let n = 1 + rnd(if round % 3 == 0 { 150 } else { 20 }) as usize;
            let mut sp = Smsp::new();
            for ws in 0..n {
                sp.push(ws as u16);
            }
            let mut t = rnd(50);
            let mut reference = sp.blocked.clone();
            for _ in 0..200 {
                // Change some warps, some pipes and queues, move time on.
                for _ in 0..1 + rnd(4) {
                    let k = rnd(sp.warps.len() as u64) as usize;
                    let (p, a) = (pipes[rnd(5) as usize], pipes[rnd(5) as usize]);
                    sp.set(k, t + rnd(30), rnd(8) == 0, p, a, rnd(3) as u8);
                }
                for p in sp.pipe_free.iter_mut() {
                    if rnd(3) == 0 {
                        *p = t + rnd(6);
                    }
                }
                sp.q.mio = (0..rnd(4)).map(|i| t + i).collect();
                sp.q.lsu = (0..rnd(5)).map(|i| t + 1 + i).collect();
                if sp.warps.len() > 1 && rnd(20) == 0 {
                    let k = rnd(sp.warps.len() as u64) as usize;
                    sp.remove(k);
                    reference.remove(k);
                }
                t += rnd(4);
                let start = rnd(sp.warps.len() as u64 + 2) as usize;
                let want = walk(&sp, t, start, &spec, &mut reference);
                let got = sp.scan(t, start, &spec);
                assert_eq!(got, want, "round {round}, t {t}, start {start}");
                assert_eq!(sp.blocked, reference, "round {round}, t {t}");
            }
        }
    }
}
