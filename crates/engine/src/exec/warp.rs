//! Warp-synchronous instructions: `bar.warp.sync`, `shfl.sync`, `vote.sync`,
//! `match.sync`, `activemask`, `redux.sync`, `elect.sync`. Each runs over the
//! lanes executing it together; a checker observer gets the lanes' member
//! masks (and shuffle sources) only when it asks ([`Observer::WANTS_SYNC`]).

// Handlers take the decoded op's fields as arguments.
#![allow(clippy::too_many_arguments)]

use super::*;
use crate::observer::{WarpSyncEvent, WarpSyncKind};
use warpsim_numerics::ScalarType;

impl<const W: usize> Warp<W> {
    /// Tells the observer about a warp-synchronous instruction, with each lane's mask.
    #[inline(never)]
    fn report_sync<O: Observer>(&self, obs: &mut O, pc: u32, kind: WarpSyncKind, exec: u64, mask: RegRef, sources: Option<&[u32]>) {
        let mut masks = [0u32; W];
        for (l, m) in masks.iter_mut().enumerate() {
            *m = self.lane_value(mask, l) as u32;
        }
        obs.warp_sync(self.index, pc, &WarpSyncEvent { kind, exec, live: self.present & !self.exited, masks: &masks, sources });
    }

    /// Each executing lane's member group: the executing lanes its member mask
    /// names (lanes 32..63 read the mask's upper half), or `None` when every
    /// lane's group is all of `exec` (the common case, `0xffffffff`), which
    /// keeps the whole-warp path. A mask naming every executing lane of its
    /// half, or not naming its own lane (undefined in PTX), keeps all of `exec`.
    #[inline(always)]
    fn member_groups(&self, mask: u32, exec: u64) -> Option<[u64; W]> {
        let masks = col32::<W>(&self.r32, mask);
        let narrow = |l: usize| {
            let half = l & !31;
            let m = (masks[l] as u64) << half;
            let own = exec & (0xFFFF_FFFFu64 << half);
            exec >> l & 1 != 0 && m >> l & 1 != 0 && own & !m != 0
        };
        if !(0..W).any(narrow) {
            return None;
        }
        let mut groups = [exec; W];
        for (l, g) in groups.iter_mut().enumerate() {
            if narrow(l) {
                *g = exec & (masks[l] as u64) << (l & !31);
            }
        }
        Some(groups)
    }

    #[inline(always)]
    pub(super) fn bar_warp_sync<O: Observer>(&mut self, obs: &mut O, pc: u32, exec: u64, mask: RegRef) {
        if O::WANTS_SYNC {
            self.report_sync(obs, pc, WarpSyncKind::BarWarpSync, exec, mask, None);
        }
    }

    #[inline(always)]
    pub(super) fn shfl<O: Observer>(&mut self, obs: &mut O, pc: u32, exec: u64, s: &Shfl) {
        let Shfl { mode, d, p, a, b, c, mask } = *s;
        let mut sources = [u32::MAX; W];
        let av = *col32::<W>(&self.r32, a);
        let bv = col32::<W>(&self.r32, b);
        let cv = col32::<W>(&self.r32, c);
        let mut o = [0u32; W];
        let mut pbits = 0u64;
        for l in 0..W {
            let lane = (l & 31) as u32;
            let half = l & !31;
            let bval = bv[l] & 0x1f;
            let clamp = cv[l] & 0x1f;
            let seg = (cv[l] >> 8) & 0x1f;
            let max_lane = (lane & seg) | (clamp & !seg);
            let min_lane = lane & seg;
            let (j, ok) = match mode {
                ShflMode::Up => {
                    let j = lane as i32 - bval as i32;
                    (j, j >= max_lane as i32)
                }
                ShflMode::Down => {
                    let j = (lane + bval) as i32;
                    (j, j <= max_lane as i32)
                }
                ShflMode::Bfly => {
                    let j = (lane ^ bval) as i32;
                    (j, j <= max_lane as i32)
                }
                ShflMode::Idx => {
                    let j = (min_lane | (bval & !seg)) as i32;
                    (j, j <= max_lane as i32)
                }
            };
            let src = if ok { half + j as usize } else { l };
            o[l] = av[src.min(W - 1)];
            pbits |= (ok as u64) << l;
            if O::WANTS_SYNC && ok {
                sources[l] = (half + j as usize) as u32;
            }
        }
        if O::WANTS_SYNC {
            self.report_sync(obs, pc, WarpSyncKind::Shfl, exec, RegRef::r32(mask), Some(&sources));
        }
        write32::<W>(&mut self.r32, d, &o, exec);
        if let Some(p) = p {
            set_pred(&mut self.preds, p, pbits, exec);
        }
    }

    #[inline(always)]
    pub(super) fn vote<O: Observer>(
        &mut self,
        obs: &mut O,
        pc: u32,
        exec: u64,
        mode: VoteMode,
        d: RegRef,
        a: u32,
        negate: bool,
        mask: u32,
    ) {
        if O::WANTS_SYNC {
            self.report_sync(obs, pc, WarpSyncKind::Vote, exec, RegRef::r32(mask), None);
        }
        let pv = (self.preds[a as usize] ^ if negate { u64::MAX } else { 0 }) & exec;
        if let Some(groups) = self.member_groups(mask, exec) {
            return self.vote_groups(mode, d, pv, exec, &groups);
        }
        let r = match mode {
            VoteMode::Ballot => {
                let mut o = [0u64; W];
                for (l, x) in o.iter_mut().enumerate() {
                    *x = (pv >> (l & !31)) & 0xFFFF_FFFF;
                }
                self.scatter(d, &o, exec);
                return;
            }
            VoteMode::All => pv == exec,
            VoteMode::Any => pv != 0,
            VoteMode::Uni => pv == exec || pv == 0,
        };
        let bits = if r { u64::MAX } else { 0 };
        match d.bank {
            Bank::Pred => set_pred(&mut self.preds, d.slot, bits, exec),
            Bank::R32 | Bank::R64 => self.scatter(d, &[bits & 1; W], exec),
        }
    }

    /// `vote` where lanes' member masks split the executing lanes into groups
    /// (`tiled_partition`): each lane votes over its own group.
    #[inline(never)]
    fn vote_groups(&mut self, mode: VoteMode, d: RegRef, pv: u64, exec: u64, groups: &[u64; W]) {
        let mut o = [0u64; W];
        let mut bits = 0u64;
        for l in 0..W {
            let (g, sel) = (groups[l], pv & groups[l]);
            let r = match mode {
                VoteMode::Ballot => {
                    o[l] = (sel >> (l & !31)) & 0xFFFF_FFFF;
                    continue;
                }
                VoteMode::All => sel == g,
                VoteMode::Any => sel != 0,
                VoteMode::Uni => sel == g || sel == 0,
            };
            o[l] = r as u64;
            bits |= (r as u64) << l;
        }
        match (mode, d.bank) {
            (VoteMode::Ballot, _) | (_, Bank::R32 | Bank::R64) => self.scatter(d, &o, exec),
            (_, Bank::Pred) => set_pred(&mut self.preds, d.slot, bits, exec),
        }
    }

    #[inline(always)]
    pub(super) fn match_sync<O: Observer>(
        &mut self,
        obs: &mut O,
        pc: u32,
        exec: u64,
        all: bool,
        d: u32,
        p: Option<u32>,
        a: RegRef,
        mask: u32,
    ) {
        if O::WANTS_SYNC {
            self.report_sync(obs, pc, WarpSyncKind::Match, exec, RegRef::r32(mask), None);
        }
        let v = self.gather(a);
        let mut o = [0u32; W];
        let mut pbits = 0u64;
        if let Some(groups) = self.member_groups(mask, exec) {
            // Each lane matches within its own member group.
            for l in 0..W {
                if exec >> l & 1 == 0 {
                    continue;
                }
                let g = groups[l];
                let mut mm = 0u64;
                for k in 0..W {
                    if g >> k & 1 != 0 && v[k] == v[l] {
                        mm |= 1 << k;
                    }
                }
                let hit = if all { (mm == g).then_some(g) } else { Some(mm) };
                o[l] = hit.map_or(0, |m| (m >> (l & !31)) as u32);
                pbits |= ((all && hit.is_some()) as u64) << l;
            }
        } else if all {
            let first = v[exec.trailing_zeros() as usize];
            let same = (0..W).all(|l| exec >> l & 1 == 0 || v[l] == first);
            for (l, x) in o.iter_mut().enumerate() {
                *x = if same { (exec >> (l & !31)) as u32 } else { 0 };
            }
            pbits = if same { u64::MAX } else { 0 };
        } else {
            // The lanes of one value share its mask: one pass over the warp
            // a distinct value (a branch-free compare the compiler vectorises).
            let mut left = exec;
            while left != 0 {
                let x = v[left.trailing_zeros() as usize];
                let mut mm = 0u64;
                for (k, &y) in v.iter().enumerate() {
                    mm |= ((y == x) as u64) << k;
                }
                mm &= exec;
                left &= !mm;
                let mut m = mm;
                while m != 0 {
                    let l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    o[l] = (mm >> (l & !31)) as u32;
                }
            }
        }
        write32::<W>(&mut self.r32, d, &o, exec);
        if let Some(p) = p {
            set_pred(&mut self.preds, p, pbits, exec);
        }
    }

    #[inline(always)]
    pub(super) fn activemask(&mut self, d: u32, exec: u64) {
        let mut o = [0u32; W];
        for (l, x) in o.iter_mut().enumerate() {
            *x = (exec >> (l & !31)) as u32;
        }
        write32::<W>(&mut self.r32, d, &o, exec);
    }

    #[inline(always)]
    pub(super) fn redux<O: Observer>(&mut self, obs: &mut O, pc: u32, exec: u64, op: ReduxOp, ty: ScalarType, d: u32, a: u32, mask: u32) {
        if O::WANTS_SYNC {
            self.report_sync(obs, pc, WarpSyncKind::Redux, exec, RegRef::r32(mask), None);
        }
        let v = *col32::<W>(&self.r32, a);
        let masks = *col32::<W>(&self.r32, mask);
        let signed = ty.is_signed();
        let reduce = |group: u64| -> u32 {
            let mut acc: Option<u32> = None;
            for l in 0..W {
                if group >> l & 1 == 0 {
                    continue;
                }
                let x = v[l];
                acc = Some(match acc {
                    None => x,
                    Some(y) => match op {
                        ReduxOp::Add => y.wrapping_add(x),
                        ReduxOp::And => y & x,
                        ReduxOp::Or => y | x,
                        ReduxOp::Xor => y ^ x,
                        ReduxOp::Min if signed => (y as i32).min(x as i32) as u32,
                        ReduxOp::Min => y.min(x),
                        ReduxOp::Max if signed => (y as i32).max(x as i32) as u32,
                        ReduxOp::Max => y.max(x),
                    },
                });
            }
            acc.unwrap_or(0)
        };
        // Each lane reduces over the executing lanes its member mask names
        // (a converged warp may hold several groups, as `labeled_partition`
        // makes); lanes 32..63 of a 64-lane machine read the mask's upper half.
        let mut o = [0u32; W];
        let mut done = 0u64;
        for l in 0..W {
            if (exec & !done) >> l & 1 == 0 {
                continue;
            }
            let half = l & !31;
            let group = (exec & ((masks[l] as u64) << half)) | (1 << l);
            let r = reduce(group);
            for k in l..W {
                if group >> k & 1 != 0 && masks[k] == masks[l] && k & !31 == half {
                    o[k] = r;
                    done |= 1 << k;
                }
            }
        }
        write32::<W>(&mut self.r32, d, &o, exec);
    }

    #[inline(always)]
    pub(super) fn elect<O: Observer>(&mut self, obs: &mut O, pc: u32, exec: u64, d: Option<u32>, p: u32, mask: u32) {
        if O::WANTS_SYNC {
            self.report_sync(obs, pc, WarpSyncKind::Elect, exec, RegRef::r32(mask), None);
        }
        let mv = self.uniform(RegRef::r32(mask), exec);
        let leader_of = |mv: u64| {
            let cand = exec & (mv | mv << 32);
            if cand == 0 {
                exec.trailing_zeros()
            } else {
                cand.trailing_zeros()
            }
        };
        let masks = col32::<W>(&self.r32, mask);
        if (0..W).all(|l| exec >> l & 1 == 0 || masks[l] as u64 == mv) {
            let leader = leader_of(mv);
            set_pred(&mut self.preds, p, 1u64 << leader, exec);
            if let Some(d) = d {
                write32::<W>(&mut self.r32, d, &[leader & 31; W], exec);
            }
            return;
        }
        // Lanes give different masks (`tiled_partition`): each group elects its own leader.
        let mut o = [0u32; W];
        let mut bits = 0u64;
        for l in 0..W {
            // A lane its mask does not name (undefined) keeps the first lane's mask.
            let own = masks[l] >> (l & 31) & 1 != 0;
            let leader = leader_of(if own { masks[l] as u64 } else { mv });
            o[l] = leader & 31;
            bits |= ((leader as usize == l) as u64) << l;
        }
        set_pred(&mut self.preds, p, bits, exec);
        if let Some(d) = d {
            write32::<W>(&mut self.r32, d, &o, exec);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::*;
    use super::*;
    use crate::observer::NoObserver;

    /// Records the warp-synchronous events it sees.
    #[derive(Default)]
    struct Syncs(Vec<(WarpSyncKind, u64, Option<Vec<u32>>)>);
    impl Observer for Syncs {
        const WANTS_SYNC: bool = true;
        fn warp_sync(&mut self, _: u32, _: u32, e: &WarpSyncEvent<'_>) {
            self.0.push((e.kind, e.exec, e.sources.map(|s| s.to_vec())));
        }
    }

    #[test]
    fn shuffles_move_values_between_lanes() {
        // r0 = lane * 10, r1 = offset, r2 = clamp word, r3 = membermask.
        let mut w = bare(5, 0, 1);
        fill32(&mut w, 0, |l| l as u32 * 10);
        fill32(&mut w, 1, |_| 1);
        fill32(&mut w, 2, |_| 0x1f);
        let mut obs = Syncs::default();
        let bfly = Shfl { mode: ShflMode::Bfly, d: 4, p: Some(0), a: 0, b: 1, c: 2, mask: 3 };
        w.shfl(&mut obs, 0, FULL, &bfly);
        assert_eq!(&col(&w, 4)[..4], &[10, 0, 30, 20]);
        assert_eq!(w.preds[0], FULL);
        let (kind, exec, sources) = &obs.0[0];
        assert_eq!((*kind, *exec, sources.as_ref().unwrap()[0]), (WarpSyncKind::Shfl, FULL, 1));
        // shfl.up by 1 with clamp 0: lane 0 has no source, keeps its value, and p says so.
        fill32(&mut w, 2, |_| 0);
        w.shfl(&mut NoObserver, 0, FULL, &Shfl { mode: ShflMode::Up, ..bfly });
        assert_eq!(&col(&w, 4)[..3], &[0, 0, 10]);
        assert_eq!(w.preds[0], FULL & !1);
    }

    #[test]
    fn votes_see_only_executing_lanes() {
        let mut w = bare(2, 0, 2);
        w.preds[0] = 0x0000_00FF;
        w.vote(&mut NoObserver, 0, 0xFF, VoteMode::All, RegRef::pred(1), 0, false, 0);
        assert_eq!(w.preds[1] & 0xFF, 0xFF);
        w.vote(&mut NoObserver, 0, FULL, VoteMode::All, RegRef::pred(1), 0, false, 0);
        assert_eq!(w.preds[1], 0);
        w.vote(&mut NoObserver, 0, FULL, VoteMode::Uni, RegRef::pred(1), 0, true, 0);
        assert_eq!(w.preds[1], 0, "not uniform");
        w.vote(&mut NoObserver, 0, 0xFFFF, VoteMode::Ballot, RegRef::r32(1), 0, false, 0);
        assert_eq!(col(&w, 1)[0], 0xFF);
        w.activemask(0, 0xF0F0);
        assert_eq!(col(&w, 0)[4], 0xF0F0);
    }

    /// Per-lane results of vote, redux, match and elect over `tiled_partition<8>`
    /// tiles: each lane's membermask (a register, 0xff << (lane & 24)) names its tile.
    #[test]
    fn tile_masks_split_collectives_per_lane() {
        let body = "
            .reg .u32 %r<16>; .reg .u64 %rd<4>; .reg .pred %p<4>;
            ld.param.u64 %rd0, [p0];
            mov.u32 %r0, %laneid; and.b32 %r1, %r0, 24; shl.b32 %r2, 255, %r1;
            rem.u32 %r3, %r0, 3; setp.eq.u32 %p0, %r3, 0;
            vote.sync.ballot.b32 %r4, %p0, %r2;
            setp.ne.u32 %p1, %r0, 5; vote.sync.all.pred %p2, %p1, %r2; selp.u32 %r5, 1, 0, %p2;
            setp.eq.u32 %p1, %r0, 5; vote.sync.any.pred %p2, %p1, %r2; selp.u32 %r6, 1, 0, %p2;
            setp.lt.u32 %p1, %r0, 8; vote.sync.uni.pred %p2, %p1, %r2; selp.u32 %r7, 1, 0, %p2;
            redux.sync.add.u32 %r8, %r0, %r2;
            match.any.sync.b32 %r9, %r3, %r2;
            setp.lt.u32 %p1, %r0, 16; selp.u32 %r10, 7, %r0, %p1;
            match.all.sync.b32 %r11|%p3, %r10, %r2; selp.u32 %r12, 1, 0, %p3;
            elect.sync %r13|%p3, %r2; selp.u32 %r14, 1, 0, %p3;
            mul.wide.u32 %rd1, %r0, 48; add.u64 %rd2, %rd0, %rd1;
            st.global.u32 [%rd2], %r4; st.global.u32 [%rd2+4], %r5; st.global.u32 [%rd2+8], %r6;
            st.global.u32 [%rd2+12], %r7; st.global.u32 [%rd2+16], %r8; st.global.u32 [%rd2+20], %r9;
            st.global.u32 [%rd2+24], %r11; st.global.u32 [%rd2+28], %r12; st.global.u32 [%rd2+32], %r13;
            st.global.u32 [%rd2+36], %r14;
            ret;";
        let r = run(body, 32, &[32 * 48], &[]);
        r.result.as_ref().unwrap();
        let out = r.u32s(0, 32 * 12);
        for l in 0..32u32 {
            let tile: Vec<u32> = (l & 24..(l & 24) + 8).collect();
            let bits = |f: &dyn Fn(u32) -> bool| tile.iter().filter(|&&k| f(k)).fold(0u32, |b, &k| b | 1 << k);
            let tile_mask = bits(&|_| true);
            let all_eq = |f: &dyn Fn(u32) -> u32| tile.iter().all(|&k| f(k) == f(tile[0]));
            let val = |k: u32| if k < 16 { 7 } else { k };
            let want = [
                bits(&|k| k % 3 == 0),
                tile.iter().all(|&k| k != 5) as u32,
                tile.contains(&5) as u32,
                all_eq(&|k| (k < 8) as u32) as u32,
                tile.iter().sum(),
                bits(&|k| k % 3 == l % 3),
                if all_eq(&val) { tile_mask } else { 0 },
                all_eq(&val) as u32,
                tile[0],
                (l == tile[0]) as u32,
            ];
            assert_eq!(out[l as usize * 12..][..10], want, "lane {l}");
        }
    }

    /// `match.any` on `W` lanes of random values (few distinct, or many),
    /// under random masks, against its definition: each lane gets the
    /// executing lanes of its value (its 32-lane half's bits), others keep theirs.
    fn match_any_is_the_lanes_of_each_value<const W: usize>() {
        let mut next = numbers(W as u64);
        for round in 0..400 {
            let mut w = bare_of::<W>(3, 0, 0);
            let distinct = if round % 4 == 3 { 1 << 20 } else { 1 + round % 5 };
            let v: Vec<u32> = (0..W).map(|_| (next() % distinct) as u32).collect();
            w.r32[..W].copy_from_slice(&v);
            w.r32[W..2 * W].fill(0xDEAD_BEEF);
            w.r32[2 * W..].fill(u32::MAX);
            let exec = next() & (u64::MAX >> (64 - W));
            w.match_sync(&mut NoObserver, 0, exec, false, 1, None, RegRef::r32(0), 2);
            for l in 0..W {
                let want = if exec >> l & 1 == 0 {
                    0xDEAD_BEEF
                } else {
                    let same = (0..W).filter(|&k| exec >> k & 1 != 0 && v[k] == v[l]).fold(0u64, |m, k| m | 1 << k);
                    (same >> (l & !31)) as u32
                };
                assert_eq!(w.r32[W + l], want, "W {W} round {round} lane {l}");
            }
        }
    }

    #[test]
    fn match_any_on_32_and_64_lanes() {
        match_any_is_the_lanes_of_each_value::<32>();
        match_any_is_the_lanes_of_each_value::<64>();
    }

    #[test]
    fn match_redux_and_elect() {
        let mut w = bare(4, 0, 2);
        fill32(&mut w, 0, |l| (l % 2) as u32);
        w.match_sync(&mut NoObserver, 0, 0xF, false, 1, None, RegRef::r32(0), 3);
        assert_eq!(&col(&w, 1)[..4], &[0b0101, 0b1010, 0b0101, 0b1010]);
        w.match_sync(&mut NoObserver, 0, 0b101, true, 1, Some(0), RegRef::r32(0), 3);
        assert_eq!((col(&w, 1)[0], w.preds[0] & 0b101), (0b101, 0b101), "all equal among lanes 0 and 2");
        fill32(&mut w, 2, |l| (l as i32 - 3) as u32);
        fill32(&mut w, 3, |_| u32::MAX);
        w.redux(&mut NoObserver, 0, 0xF0, ReduxOp::Min, ScalarType::S32, 1, 2, 3);
        assert_eq!(col(&w, 1)[4], 1, "min over lanes 4..7 only");
        w.redux(&mut NoObserver, 0, 0xF, ReduxOp::Min, ScalarType::U32, 1, 2, 3);
        assert_eq!(col(&w, 1)[0], 0, "unsigned: -3 is large");
        // Two groups in one converged warp (labeled_partition): each reduces over its mask.
        fill32(&mut w, 3, |l| if l % 2 == 0 { 0x5555_5555 } else { 0xAAAA_AAAA });
        fill32(&mut w, 2, |l| l as u32);
        w.redux(&mut NoObserver, 0, FULL, ReduxOp::Add, ScalarType::U32, 1, 2, 3);
        assert_eq!((col(&w, 1)[0], col(&w, 1)[7]), ((0..32).step_by(2).sum(), (1..32).step_by(2).sum()));
        fill32(&mut w, 3, |_| 0b1100);
        w.elect(&mut NoObserver, 0, 0b1110, Some(1), 1, 3);
        assert_eq!((w.preds[1] & 0b1110, col(&w, 1)[1]), (0b0100, 2), "the lowest executing lane in the mask");
    }
}
