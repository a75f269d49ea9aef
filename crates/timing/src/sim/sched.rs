//! The sub-partition warp scheduler: each cycle it picks one warp whose next
//! instruction can issue (sources ready, pipe free, queue not full), greedy
//! then oldest (GTO) or loose round robin (LRR), and hands it to issue. Kept
//! apart from issue so the policy is one small piece.

use super::issue::WarpT;
use super::lsu::Queues;
use super::{Gpu, Sm};
use crate::decode::{NPIPES, PIPE_NONE, QUEUE_LSU, QUEUE_MIO};
use crate::preset::{SchedulerPolicy, TimingGpu};
use crate::report::{Reason, Span};
use warpsim_engine::{LaunchError, Observer};

/// No warp.
pub(super) const NONE16: u16 = u16::MAX;

/// Scheduler parameters from the preset.
#[derive(Clone)]
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

/// One sub-partition: its warps, scheduler state, pipes and queues, issue counters.
pub(super) struct Smsp {
    /// No warp here issues before this cycle: what [`Sm::schedule`] would
    /// return until something changes a warp here (0: unknown, schedule).
    /// `Sm::cycle` reads only this of a sub-partition that cannot issue.
    pub(super) not_before: u64,
    /// Warp slots of the SM assigned here, oldest first.
    pub(super) warps: Vec<u16>,
    /// The warp that issued last.
    pub(super) last: u16,
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
    /// Full scans so far, and what the last two saw (see [`Scan`]): the
    /// last in `recs[scans % 2]`, the one before in the other.
    pub(super) scans: u64,
    recs: [Scan; 2],
}

/// What a full scan of the warps saw: enough to say, later and only for
/// the warps whose stalls are accounted, why each ready warp did not issue
/// (the scan itself stops at the warp it picks). The pipes' free times are
/// copied (a few vector moves) and compared only when a warp's stall is settled.
#[derive(Clone, Copy, Default)]
pub(super) struct Scan {
    /// Its number (from 1; 0: none), its cycle.
    pub(super) seq: u64,
    pub(super) t: u64,
    /// When each pipe was free again, as seen by the scan (busy: after `t`).
    pipe_free: [u64; NPIPES],
    /// The MIO queue was full, the LSU queue was full.
    ctx: u16,
}

const MIO_FULL: u16 = 1;
const LSU_FULL: u16 = 2;

impl Scan {
    /// Why a ready warp whose next instruction uses these pipes and queue
    /// did not issue in this scan (the old per-warp check's reasons).
    #[inline]
    pub(super) fn blocked(&self, pipe: u8, alt: u8, queue: u8) -> Reason {
        let busy = |p: u8| (p as usize) < NPIPES && self.pipe_free[p as usize] > self.t;
        if busy(pipe) && (alt == PIPE_NONE || busy(alt)) {
            return Reason::MathPipeThrottle;
        }
        match queue {
            QUEUE_MIO if self.ctx & MIO_FULL != 0 => Reason::MioThrottle,
            QUEUE_LSU if self.ctx & LSU_FULL != 0 => Reason::LgThrottle,
            _ => Reason::NotSelected,
        }
    }
}

impl Smsp {
    pub(super) fn new() -> Self {
        Smsp {
            not_before: 0,
            warps: Vec::new(),
            last: NONE16,
            pipe_free: [0; NPIPES],
            issue_free: 0,
            q: Queues::default(),
            issue_cycles: 0,
            span: None,
            wake: 0,
            scans: 0,
            recs: [Scan::default(); 2],
        }
    }

    /// Something changed one of this sub-partition's warps: scan it again.
    #[inline]
    pub(super) fn wake_now(&mut self) {
        self.wake = 0;
        self.not_before = 0;
    }

    /// A warp that cannot issue before `at` joined (`alone`: the list was
    /// empty, so what `wake` held no longer applies): scan again by then.
    #[inline]
    pub(super) fn wake_at(&mut self, at: u64, alone: bool) {
        self.wake = if alone { at } else { self.wake.min(at) };
        self.not_before = self.not_before.min(at);
    }

    /// The last full scan.
    #[inline]
    pub(super) fn scan(&self) -> &Scan {
        &self.recs[(self.scans & 1) as usize]
    }

    /// The full scan before the last.
    #[inline]
    pub(super) fn prev_scan(&self) -> &Scan {
        &self.recs[(!self.scans & 1) as usize]
    }

    /// Records a full scan at `t` (queues already popped), over the older record.
    #[inline]
    fn record_scan(&mut self, t: u64, spec: &SchedSpec) {
        let mut ctx = 0u16;
        if self.q.mio_len() >= spec.mio_queue_depth {
            ctx |= MIO_FULL;
        }
        if self.q.lsu_len() >= spec.lsu_queue_depth {
            ctx |= LSU_FULL;
        }
        self.scans += 1;
        self.recs[(self.scans & 1) as usize] = Scan { seq: self.scans, t, pipe_free: self.pipe_free, ctx };
    }
}

/// The first sub-partition from `from` on that may issue at `t` (each
/// one's `not_before` read at its turn, as an issue may wake later ones),
/// or `smsp.len()`; `next` lowered by the `not_before` of those passed over.
#[inline(always)]
pub(super) fn next_due(smsp: &[Smsp], from: usize, t: u64, mut next: u64) -> (usize, u64) {
    let mut s = from;
    while let Some(sp) = smsp.get(s) {
        if sp.not_before <= t {
            break;
        }
        next = next.min(sp.not_before);
        s += 1;
    }
    (s, next)
}

/// Whether warp `w` of sub-partition `sp` can issue at `t`; otherwise the
/// earliest time it might, and why not.
#[inline(always)]
fn check_warp(w: &WarpT, sp: &Smsp, t: u64, sched: &SchedSpec) -> Result<(), (u64, Reason)> {
    if !w.is_ready() {
        return Err((u64::MAX, Reason::Barrier));
    }
    if w.ready_at > t {
        return Err((w.ready_at, w.reason));
    }
    if w.next_pipe != PIPE_NONE && sp.pipe_free[w.next_pipe as usize] > t {
        let alt = if w.next_alt_pipe != PIPE_NONE { sp.pipe_free[w.next_alt_pipe as usize] } else { u64::MAX };
        if alt > t {
            return Err((sp.pipe_free[w.next_pipe as usize].min(alt), Reason::MathPipeThrottle));
        }
    }
    // Queues hold only entries that have not started (popped in `schedule`).
    match w.next_queue {
        QUEUE_MIO if sp.q.mio_len() >= sched.mio_queue_depth => Err((sp.q.mio_front().unwrap_or(t + 1), Reason::MioThrottle)),
        QUEUE_LSU if sp.q.lsu_len() >= sched.lsu_queue_depth => Err((sp.q.lsu_front().unwrap_or(t + 1), Reason::LgThrottle)),
        _ => Ok(()),
    }
}

impl<'a, const W: usize, O: Observer> Sm<'a, W, O> {
    /// Whether warp `ws` can issue at `t`; otherwise the earliest time it might, and why not.
    #[inline(always)]
    fn check(&self, s: usize, ws: u16, t: u64, gg: &Gpu<'a, W>) -> Result<(), (u64, Reason)> {
        check_warp(&self.warps[ws as usize], &self.smsp[s], t, &gg.sched)
    }

    /// Sub-partition `s` at cycle `t`: issues one warp instruction if a warp
    /// can; returns whether it did and the earliest cycle it might next.
    pub(super) fn schedule(&mut self, s: usize, t: u64, gg: &mut Gpu<'a, W>) -> Result<(bool, u64), LaunchError> {
        {
            let sp = &mut self.smsp[s];
            // Each holds until something changes a warp here (`wake_now`):
            // the warp list, `issue_free` (an issue) and `wake` change only then.
            let not_before = if sp.warps.is_empty() {
                u64::MAX
            } else if sp.issue_free > t {
                sp.issue_free
            } else {
                // The scan would find what the last one did: nothing before `wake`.
                sp.wake
            };
            if not_before > t {
                sp.not_before = not_before;
                return Ok((false, not_before));
            }
            sp.q.pop_started(t);
        }
        let nw = self.smsp[s].warps.len();
        let last = self.smsp[s].last;
        let mut next = u64::MAX;
        let mut pick = NONE16;
        let start = match gg.sched.policy {
            // Greedy: the last warp again if it can (no scan recorded).
            SchedulerPolicy::Gto if last != NONE16 && self.check(s, last, t, gg).is_ok() => {
                pick = last;
                None
            }
            SchedulerPolicy::Gto => Some(0),
            SchedulerPolicy::Lrr => Some(self.smsp[s].warps.iter().position(|&x| x == last).map(|i| i + 1).unwrap_or(0)),
        };
        // The first warp that can issue; the others' stall reasons are
        // settled from the scan's record when they issue (`Sm::settle`).
        // Two straight passes (from `start` to the end, then the front) over
        // the sub-partition's list, borrowed once.
        if let Some(start) = start {
            let start = start.min(nw);
            {
                let (warps, sp, sched) = (&self.warps, &self.smsp[s], &gg.sched);
                let (front, back) = sp.warps.split_at(start);
                'scan: for part in [back, front] {
                    for &ws in part {
                        let Some(w) = warps.get(ws as usize) else { continue };
                        match check_warp(w, sp, t, sched) {
                            Ok(()) => {
                                pick = ws;
                                break 'scan;
                            }
                            Err((at, _)) => next = next.min(at),
                        }
                    }
                }
            }
            self.smsp[s].record_scan(t, &gg.sched);
        }
        // One call site: `issue` is large.
        if pick != NONE16 {
            self.issue(s, pick, t, gg)?;
            return Ok((true, t + 1));
        }
        let sp = &mut self.smsp[s];
        sp.wake = next;
        sp.not_before = next;
        Ok((false, next))
    }
}
