//! Happens-before for the threads of one block, as vector clocks.
//!
//! A thread's clock is its warp's instruction counter (`tau`): it grows with
//! every warp instruction, so each access of a thread has a later time than
//! the thread's earlier ones. What thread `t` knows of thread `u` (the
//! latest time of `u` ordered before `t`'s present) is the largest of
//!
//! - `snapshot(t)[u]`: a vector clock shared by every thread released by the
//!   same barrier completion (a barrier makes all participants know the
//!   same), copied privately when `t` acquires from an atomic or fence;
//! - `wk[t][lane u]` for `u` in `t`'s own warp: what `bar.warp.sync` taught;
//! - in lockstep mode (pre-Volta), everything the warp did before its
//!   current instruction, for `u` in `t`'s own warp.
//!
//! Snapshots also carry what `t` knows of threads of *other* blocks
//! (`foreign`), learnt through release/acquire on global memory.

use std::collections::BTreeMap;
use std::sync::Arc;

/// Vector clocks of other blocks' threads: block -> clock per thread.
pub type Foreign = BTreeMap<u32, Arc<Vec<u32>>>;

pub struct Hb {
    /// Lanes per warp, and its log2.
    pub w: usize,
    pub shift: u32,
    /// Thread slots (warps x lanes).
    pub n: usize,
    pub lockstep: bool,
    snap_of: Vec<u32>,
    /// Snapshot `i`'s clocks: `arena[i * n..(i + 1) * n]`.
    arena: Vec<u32>,
    foreign: Vec<Option<Arc<Foreign>>>,
    refs: Vec<u32>,
    free: Vec<u32>,
    /// `wk[t * w + l]`: what thread `t` knows of lane `l` of its warp.
    wk: Vec<u32>,
    /// Per warp, the lanes whose `wk` row may be nonzero (the others are all
    /// zero: a barrier has nothing of theirs to join or clear).
    wk_dirty: Vec<u64>,
    /// A barrier's joined clocks, kept between barriers (no allocation per barrier).
    scratch: Vec<u32>,
}

/// One group of lanes that arrived at a barrier.
#[derive(Copy, Clone, Debug)]
pub struct Arrival {
    pub warp: u32,
    pub lanes: u64,
    pub tau: u32,
    pub wait: bool,
    pub pc: u32,
}

/// `row[l] = f(row[l])` for each lane `l` of `lanes`: a whole row with
/// plain stores, else lane by lane (the select the compiler makes of a
/// partial row is a masked vector store, microcoded and slow on AMD CPUs).
#[inline(always)]
fn set_lanes(row: &mut [u32], lanes: u64, f: impl Fn(u32) -> u32) {
    let n = row.len();
    if (1..=64).contains(&n) && lanes & (u64::MAX >> (64 - n)) == u64::MAX >> (64 - n) {
        row.iter_mut().for_each(|x| *x = f(*x));
    } else {
        for l in warpsim_ir::set_bits(lanes) {
            if let Some(x) = row.get_mut(l) {
                *x = f(*x);
            }
        }
    }
}

/// Whether `ids[l] == id` for every lane `l` of `lanes` (lanes past the
/// row ignored): a whole row compared at once, else lane by lane.
#[inline(always)]
fn lanes_hold(ids: &[u32], lanes: u64, id: u32) -> bool {
    let n = ids.len();
    if (1..=64).contains(&n) && lanes & (u64::MAX >> (64 - n)) == u64::MAX >> (64 - n) {
        ids.iter().fold(0, |diff, &x| diff | (x ^ id)) == 0
    } else {
        warpsim_ir::set_bits(lanes).all(|l| ids.get(l).is_none_or(|&x| x == id))
    }
}

/// The threads (slots) of `lanes` of warp `warp`.
fn threads(warp: u32, lanes: u64, w: usize) -> impl Iterator<Item = usize> {
    let base = warp as usize * w;
    warpsim_ir::set_bits(lanes).map(move |l| base + l)
}

impl Hb {
    pub fn new(lockstep: bool) -> Hb {
        Hb {
            w: 32,
            shift: 5,
            n: 0,
            lockstep,
            snap_of: Vec::new(),
            arena: Vec::new(),
            foreign: Vec::new(),
            refs: Vec::new(),
            free: Vec::new(),
            wk: Vec::new(),
            wk_dirty: Vec::new(),
            scratch: Vec::new(),
        }
    }

    /// Starts a block of `nwarps` warps of `w` lanes: nobody knows anything.
    pub fn reset(&mut self, nwarps: usize, w: usize) {
        self.w = w;
        self.shift = w.trailing_zeros();
        self.n = nwarps * w;
        self.snap_of.clear();
        self.snap_of.resize(self.n, 0);
        self.arena.clear();
        self.arena.resize(self.n, 0);
        self.foreign.clear();
        self.foreign.push(None);
        self.refs.clear();
        self.refs.push(u32::MAX / 2);
        self.free.clear();
        if self.wk.len() == self.n * w && self.wk_dirty.len() == nwarps {
            // The same shape as the last block: only the rows it wrote need clearing.
            for (warp, d) in self.wk_dirty.iter_mut().enumerate() {
                for l in warpsim_ir::set_bits(std::mem::take(d)) {
                    let t = warp * w + l;
                    self.wk[t * w..t * w + w].fill(0);
                }
            }
        } else {
            self.wk.clear();
            self.wk.resize(self.n * w, 0);
            self.wk_dirty.clear();
            self.wk_dirty.resize(nwarps, 0);
        }
    }

    #[inline(always)]
    fn vc(&self, id: u32) -> &[u32] {
        &self.arena[id as usize * self.n..(id as usize + 1) * self.n]
    }

    /// Whether `u`'s access at time `tau` happens before `t`'s present (same block).
    #[inline(always)]
    pub fn knows(&self, t: usize, u: usize, tau: u32) -> bool {
        if (t ^ u) >> self.shift == 0 && (self.lockstep || self.wk[t * self.w + (u & (self.w - 1))] >= tau) {
            return true;
        }
        self.arena[self.snap_of[t] as usize * self.n + u] >= tau
    }

    /// Whether `u`'s access at time `tau` is in `t`'s snapshot (a barrier,
    /// atomic or fence ordered it before `t`'s present): enough for
    /// [`Hb::knows`], without its own-warp terms.
    #[inline(always)]
    pub fn snap_knows(&self, t: usize, u: usize, tau: u32) -> bool {
        u < self.n && self.snap_of.get(t).and_then(|&s| self.arena.get(s as usize * self.n + u)).is_some_and(|&x| x >= tau)
    }

    /// The clocks of the snapshot every thread of `lanes` of the warp whose
    /// first thread is `base` holds, when they all hold one (a barrier's).
    #[inline(always)]
    pub fn shared_snap(&self, base: usize, lanes: u64) -> Option<&[u32]> {
        let ids = self.snap_of.get(base..base + self.w)?;
        let s = *ids.get(lanes.trailing_zeros() as usize)?;
        if !lanes_hold(ids, lanes, s) {
            return None;
        }
        self.arena.get(s as usize * self.n..(s as usize + 1) * self.n)
    }

    /// Whether thread `u` of block `block` at time `tau` happens before `t`'s present.
    #[inline]
    pub fn knows_foreign(&self, t: usize, block: u32, u: usize, tau: u32) -> bool {
        match &self.foreign[self.snap_of[t] as usize] {
            Some(f) => f.get(&block).is_some_and(|vc| vc.get(u).is_some_and(|&x| x >= tau)),
            None => false,
        }
    }

    fn new_snap(&mut self, vc: &[u32], foreign: Option<Arc<Foreign>>) -> u32 {
        let n = self.n;
        let id = match self.free.pop() {
            Some(i) => i,
            None => {
                self.arena.resize(self.arena.len() + n, 0);
                self.foreign.push(None);
                self.refs.push(0);
                (self.refs.len() - 1) as u32
            }
        };
        self.arena[id as usize * n..(id as usize + 1) * n].copy_from_slice(vc);
        self.foreign[id as usize] = foreign;
        self.refs[id as usize] = 0;
        id
    }

    fn set_snap(&mut self, t: usize, id: u32) {
        let old = self.snap_of[t];
        if old == id {
            return;
        }
        self.refs[id as usize] += 1;
        self.unref(old);
        self.snap_of[t] = id;
    }

    fn unref(&mut self, id: u32) {
        let r = &mut self.refs[id as usize];
        *r = r.saturating_sub(1);
        if *r == 0 && id != 0 {
            self.foreign[id as usize] = None;
            self.free.push(id);
        }
    }

    /// The join of the snapshots of `threads` (clocks and foreign map), or
    /// `Ok(id)` when they all share snapshot `id`.
    fn join_snaps(&self, threads: impl Iterator<Item = usize>) -> Result<u32, (Vec<u32>, Option<Arc<Foreign>>)> {
        let mut ids: Vec<u32> = Vec::new();
        for t in threads {
            let id = self.snap_of[t];
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        if ids.len() <= 1 {
            return Ok(ids.first().copied().unwrap_or(0));
        }
        let mut vc = self.vc(ids[0]).to_vec();
        let mut foreign: Option<Foreign> = None;
        for &id in &ids {
            max_into(&mut vc, self.vc(id));
            if let Some(f) = &self.foreign[id as usize] {
                merge_foreign(foreign.get_or_insert_with(Default::default), f, u32::MAX);
            }
        }
        Err((vc, foreign.map(Arc::new)))
    }

    /// Whether every thread of `lanes` of warp `warp` holds snapshot `id`.
    #[inline(always)]
    fn all_hold(&self, warp: u32, lanes: u64, id: u32) -> bool {
        let base = warp as usize * self.w;
        let Some(ids) = self.snap_of.get(base..base + self.w) else { return false };
        lanes_hold(ids, lanes, id)
    }

    /// The lanes of `lanes` of warp `warp` whose `wk` row may be nonzero.
    #[inline(always)]
    fn dirty_lanes(&self, warp: u32, lanes: u64) -> u64 {
        self.wk_dirty.get(warp as usize).map_or(lanes, |d| d & lanes)
    }

    /// A barrier completed: every arrival's knowledge (and its own time)
    /// becomes known to every arrival that waits. (A warp's lanes go
    /// together: one snapshot for all of them is the common case.)
    pub fn barrier(&mut self, arrivals: &[Arrival]) {
        let w = self.w;
        let first =
            arrivals.first().map_or(0, |a| self.snap_of.get(a.warp as usize * w + a.lanes.trailing_zeros() as usize).copied().unwrap_or(0));
        let (mut vc, foreign) = if arrivals.iter().all(|a| self.all_hold(a.warp, a.lanes, first)) {
            let mut vc = std::mem::take(&mut self.scratch);
            vc.clear();
            vc.extend_from_slice(self.vc(first));
            (vc, self.foreign[first as usize].clone())
        } else {
            match self.join_snaps(arrivals.iter().flat_map(|a| threads(a.warp, a.lanes, w))) {
                Ok(id) => (self.vc(id).to_vec(), self.foreign[id as usize].clone()),
                Err(x) => x,
            }
        };
        for a in arrivals {
            let base = a.warp as usize * w;
            set_lanes(&mut vc[base..base + w], a.lanes, |x| x.max(a.tau));
            for t in threads(a.warp, self.dirty_lanes(a.warp, a.lanes), w) {
                max_into(&mut vc[base..base + w], &self.wk[t * w..t * w + w]);
            }
        }
        let id = self.new_snap(&vc, foreign);
        self.scratch = vc;
        self.refs[id as usize] = 1; // held while assigning
        for a in arrivals.iter().filter(|a| a.wait) {
            let base = a.warp as usize * w;
            let old = self.snap_of.get(base + a.lanes.trailing_zeros() as usize).copied().unwrap_or(0);
            let k = a.lanes.count_ones();
            if old != id && self.refs[old as usize] >= k && self.all_hold(a.warp, a.lanes, old) {
                // Every lane moves from one snapshot to the new one: what `set_snap` does lane by lane.
                set_lanes(&mut self.snap_of[base..base + w], a.lanes, |_| id);
                self.refs[id as usize] += k;
                let r = &mut self.refs[old as usize];
                *r -= k;
                if *r == 0 && old != 0 {
                    self.foreign[old as usize] = None;
                    self.free.push(old);
                }
            } else {
                for t in threads(a.warp, a.lanes, w) {
                    self.set_snap(t, id);
                }
            }
            for t in threads(a.warp, self.dirty_lanes(a.warp, a.lanes), w) {
                self.wk[t * w..t * w + w].fill(0);
            }
            if let Some(d) = self.wk_dirty.get_mut(a.warp as usize) {
                *d &= !a.lanes;
            }
        }
        self.unref(id);
    }

    /// `bar.warp.sync` by `lanes` of warp `warp` at time `tau`.
    pub fn warp_sync(&mut self, warp: u32, lanes: u64, tau: u32) {
        let w = self.w;
        let base = warp as usize * w;
        if let Err((vc, foreign)) = self.join_snaps(threads(warp, lanes, w)) {
            let id = self.new_snap(&vc, foreign);
            self.refs[id as usize] = 1;
            for t in threads(warp, lanes, w) {
                self.set_snap(t, id);
            }
            self.unref(id);
        }
        let mut j = [0u32; 64];
        let j = &mut j[..w];
        for t in threads(warp, lanes, w) {
            max_into(j, &self.wk[t * w..t * w + w]);
            j[t - base] = j[t - base].max(tau);
        }
        for t in threads(warp, lanes, w) {
            self.wk[t * w..t * w + w].copy_from_slice(j);
        }
        if let Some(d) = self.wk_dirty.get_mut(warp as usize) {
            *d |= lanes;
        }
    }

    /// Whether thread `t`'s `wk` row may be nonzero.
    #[cfg(test)]
    fn dirty(&self, t: usize) -> bool {
        self.wk_dirty.get(t >> self.shift).is_none_or(|d| d >> (t & (self.w - 1)) & 1 != 0)
    }

    /// Thread `t` (block `block`) releases at time `tau` into `rel`: what it
    /// knows (including its own accesses up to `tau`) joins `rel`.
    pub fn release(&self, t: usize, tau: u32, block: u32, rel: &mut Foreign) {
        let w = self.w;
        let id = self.snap_of[t];
        let e = rel.entry(block).or_insert_with(|| Arc::new(vec![0; self.n]));
        let v = Arc::make_mut(e);
        if v.len() < self.n {
            v.resize(self.n, 0);
        }
        max_into(v, self.vc(id));
        let base = t & !(w - 1);
        max_into(&mut v[base..base + w], &self.wk[t * w..t * w + w]);
        v[t] = v[t].max(tau);
        if let Some(f) = &self.foreign[id as usize] {
            merge_foreign(rel, f, block);
        }
    }

    /// Thread `t` (block `block`) acquires `rel`.
    pub fn acquire(&mut self, t: usize, block: u32, rel: &Foreign) {
        let id = self.snap_of[t];
        let cur = self.vc(id);
        let cur_foreign = &self.foreign[id as usize];
        let own = rel.get(&block).filter(|v| v.iter().zip(cur).any(|(a, b)| a > b));
        let others_new = rel.iter().any(|(b, v)| {
            *b != block
                && !cur_foreign
                    .as_ref()
                    .and_then(|f| f.get(b))
                    .is_some_and(|c| Arc::ptr_eq(c, v) || (c.len() >= v.len() && v.iter().zip(c.iter()).all(|(x, y)| x <= y)))
        });
        if own.is_none() && !others_new {
            return;
        }
        let mut vc = cur.to_vec();
        if let Some(v) = own {
            max_into(&mut vc, v);
        }
        let mut f: Foreign = cur_foreign.as_deref().cloned().unwrap_or_default();
        merge_foreign(&mut f, rel, block);
        let foreign = if f.is_empty() { None } else { Some(Arc::new(f)) };
        let nid = self.new_snap(&vc, foreign);
        self.set_snap(t, nid);
    }
}

#[inline]
fn max_into(dst: &mut [u32], src: &[u32]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d = (*d).max(*s);
    }
}

/// `dst |= src` for every block but `skip`.
fn merge_foreign(dst: &mut Foreign, src: &Foreign, skip: u32) {
    for (b, v) in src {
        if *b == skip {
            continue;
        }
        match dst.get_mut(b) {
            Some(d) if Arc::ptr_eq(d, v) => {}
            Some(d) => {
                let d = Arc::make_mut(d);
                if d.len() < v.len() {
                    d.resize(v.len(), 0);
                }
                max_into(d, v);
            }
            None => {
                dst.insert(*b, v.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whole rows and partial ones, against lane by lane.
    #[test]
    fn set_lanes_sets_the_lanes() {
        for n in [1usize, 31, 32, 33, 64] {
            for lanes in [0u64, 1, 0x8000_0001, u32::MAX as u64, u64::MAX, u64::MAX >> 1, 0xF0F0_F0F0_F0F0_F0F0] {
                let mut fast: Vec<u32> = (0..n as u32).collect();
                let mut slow = fast.clone();
                set_lanes(&mut fast, lanes, |x| x * 3 + 1);
                for (l, x) in slow.iter_mut().enumerate() {
                    if lanes >> l & 1 != 0 {
                        *x = *x * 3 + 1;
                    }
                }
                assert_eq!(fast, slow, "n {n} lanes {lanes:#x}");
            }
        }
    }

    /// Whole rows and partial ones, against lane by lane.
    #[test]
    fn lanes_hold_matches_lane_by_lane() {
        let mut next = warpsim_engine::rng::numbers(0x9E37_79B9_7F4A_7C15u64);
        for n in [1usize, 31, 32, 33, 64] {
            for round in 0..400 {
                let ids: Vec<u32> = (0..n).map(|_| if next().is_multiple_of(8) { 1 } else { 0 }).collect();
                let lanes = match round % 4 {
                    0 => u64::MAX,
                    1 => u64::MAX >> (64 - n),
                    2 => next(),
                    _ => next() & next(),
                };
                for id in [0, 1] {
                    let slow = (0..n).all(|l| lanes >> l & 1 == 0 || ids[l] == id);
                    assert_eq!(lanes_hold(&ids, lanes, id), slow, "n {n} lanes {lanes:#x} id {id}");
                }
            }
        }
    }

    impl Hb {
        /// [`Hb::barrier`] thread by thread (before its per-warp paths).
        fn barrier_by_thread(&mut self, arrivals: &[Arrival]) {
            let w = self.w;
            let (mut vc, foreign) = match self.join_snaps(arrivals.iter().flat_map(|a| threads(a.warp, a.lanes, w))) {
                Ok(id) => (self.vc(id).to_vec(), self.foreign[id as usize].clone()),
                Err(x) => x,
            };
            for a in arrivals {
                let base = a.warp as usize * w;
                for t in threads(a.warp, a.lanes, w) {
                    vc[t] = vc[t].max(a.tau);
                    if self.dirty(t) {
                        max_into(&mut vc[base..base + w], &self.wk[t * w..t * w + w]);
                    }
                }
            }
            let id = self.new_snap(&vc, foreign);
            self.refs[id as usize] = 1;
            for a in arrivals.iter().filter(|a| a.wait) {
                for t in threads(a.warp, a.lanes, w) {
                    self.set_snap(t, id);
                    if self.dirty(t) {
                        self.wk[t * w..t * w + w].fill(0);
                    }
                }
                if let Some(d) = self.wk_dirty.get_mut(a.warp as usize) {
                    *d &= !a.lanes;
                }
            }
            self.unref(id);
        }
    }

    /// Barriers of whole and partial warps, waiting or not, between warp
    /// barriers and acquires: the per-warp barrier leaves every clock,
    /// snapshot and reference count as the thread-by-thread one does.
    #[test]
    fn barrier_by_warp_equals_thread_by_thread() {
        let mut next = warpsim_engine::rng::numbers(0x2545_F491_4F6C_DD1Du64);
        for round in 0..200 {
            let nw = 1 + round % 4;
            let (mut fast, mut slow) = (Hb::new(false), Hb::new(false));
            fast.reset(nw, 32);
            slow.reset(nw, 32);
            let mut tau = 1u32;
            for _ in 0..12 {
                tau += 1 + (next() % 3) as u32;
                let warp = (next() % nw as u64) as u32;
                match next() % 4 {
                    0 => {
                        let lanes = next() & u32::MAX as u64 | 1;
                        fast.warp_sync(warp, lanes, tau);
                        slow.warp_sync(warp, lanes, tau);
                    }
                    1 => {
                        let t = (next() % (nw as u64 * 32)) as usize;
                        let mut rel = Foreign::new();
                        rel.insert(0, Arc::new((0..nw * 32).map(|_| (next() % 8) as u32).collect()));
                        fast.acquire(t, 0, &rel);
                        slow.acquire(t, 0, &rel);
                    }
                    _ => {
                        let mut arrivals = Vec::new();
                        for warp in 0..nw as u32 {
                            if next().is_multiple_of(5) {
                                continue;
                            }
                            let lanes = if next().is_multiple_of(2) { u32::MAX as u64 } else { next() & u32::MAX as u64 | 2 };
                            let t = tau + (next() % 4) as u32;
                            arrivals.push(Arrival { warp, lanes, tau: t, wait: !next().is_multiple_of(4), pc: 0 });
                        }
                        fast.barrier(&arrivals);
                        slow.barrier_by_thread(&arrivals);
                    }
                }
                assert_eq!(fast.snap_of, slow.snap_of, "round {round}");
                assert_eq!(fast.refs, slow.refs, "round {round}");
                assert_eq!(fast.free, slow.free, "round {round}");
                assert_eq!(fast.arena, slow.arena, "round {round}");
                assert_eq!(fast.wk, slow.wk, "round {round}");
                assert_eq!(fast.wk_dirty, slow.wk_dirty, "round {round}");
            }
        }
    }
}
