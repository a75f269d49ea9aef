//! How a warp's addresses become memory traffic.
//!
//! Global (and local) accesses: the active lanes' byte ranges are covered by
//! 32-byte sectors; a request is one warp instruction; tags are distinct
//! 128-byte lines (Nsight Compute's definitions, `reference/hardware.md` §3).
//! Shared accesses: 32 banks of 4 bytes; 32-bit accesses are served in one
//! phase of 32 lanes, 64-bit in two phases of 16, 128-bit in four of 8; in a
//! phase, lanes reading the same word share it (broadcast) and the phase
//! takes as many wavefronts as the most distinct words any one bank holds
//! (§4).

/// Traffic of one global or local warp access.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct GlobalCost {
    pub sectors: u32,
    /// Distinct 128-byte lines.
    pub lines: u32,
    /// Bytes the active lanes asked for.
    pub bytes_requested: u32,
    /// Sectors a perfectly coalesced access of the same distinct bytes would need.
    pub ideal_sectors: u32,
}

/// Counts distinct values of a small list (sorting only when needed).
fn distinct(v: &mut [u64]) -> u32 {
    if v.is_empty() {
        return 0;
    }
    if !v.windows(2).all(|w| w[0] <= w[1]) {
        v.sort_unstable();
    }
    1 + v.windows(2).filter(|w| w[0] != w[1]).count() as u32
}

/// Sectors, lines and bytes for `bytes` per lane at `addrs[lane]`, lanes in `mask`.
pub fn global_cost(addrs: &[u64], mask: u64, bytes: u32) -> GlobalCost {
    if let Some(c) = ascending_global_cost(addrs, mask, bytes) {
        return c;
    }
    // Up to 64 lanes; a lane's naturally aligned access (at most 16 bytes)
    // touches one sector, a misaligned one two.
    let mut secs = [0u64; 160];
    let mut starts = [0u64; 64];
    let (mut n, mut ns) = (0usize, 0usize);
    let mut m = mask;
    while m != 0 {
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        let Some(&a) = addrs.get(l) else { break };
        let last = a + bytes.max(1) as u64 - 1;
        let mut s = a >> 5;
        while s <= last >> 5 && n < secs.len() {
            secs[n] = s;
            n += 1;
            s += 1;
        }
        starts[ns] = a;
        ns += 1;
    }
    let secs = &mut secs[..n];
    let sectors = distinct(secs);
    // `secs` is sorted now: lines are runs of equal `sector / 4`.
    let lines = if secs.is_empty() { 0 } else { 1 + secs.windows(2).filter(|w| w[0] >> 2 != w[1] >> 2).count() as u32 };
    let unique_lanes = distinct(&mut starts[..ns]);
    GlobalCost { sectors, lines, bytes_requested: mask.count_ones() * bytes, ideal_sectors: (unique_lanes * bytes).div_ceil(32) }
}

/// [`global_cost`] without lists, when the active lanes' addresses do not
/// decrease and each lane's access is naturally aligned (one sector): the
/// distinct sectors, lines and lanes are then the changes along the lanes.
/// `None` otherwise.
fn ascending_global_cost(addrs: &[u64], mask: u64, bytes: u32) -> Option<GlobalCost> {
    if !bytes.is_power_of_two() || bytes > 32 {
        return None;
    }
    let (mut sectors, mut lines, mut unique) = (0u32, 0u32, 0u32);
    let (mut prev, mut prev_sector, mut prev_line) = (None::<u64>, u64::MAX, u64::MAX);
    let mut m = mask;
    while m != 0 {
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        let &a = addrs.get(l)?;
        if a & (bytes as u64 - 1) != 0 || prev.is_some_and(|p| a < p) {
            return None;
        }
        unique += (prev != Some(a)) as u32;
        prev = Some(a);
        let s = a >> 5;
        sectors += (s != prev_sector) as u32;
        lines += (s >> 2 != prev_line) as u32;
        (prev_sector, prev_line) = (s, s >> 2);
    }
    Some(GlobalCost { sectors, lines, bytes_requested: mask.count_ones() * bytes, ideal_sectors: (unique * bytes).div_ceil(32) })
}

/// [`global_cost`] in closed form when every active lane `l` accesses `bytes`
/// (a power of two, 2 to 32) at `base + l * bytes`, `base` aligned to `bytes`
/// (a coalesced access, whatever its mask): the lanes then fill sectors and
/// lines in lane order, so a sector (line) is a group of `32 / bytes`
/// (`128 / bytes`) lane positions counted from the first active lane's line,
/// and the counts are the groups the mask touches. `None` otherwise.
pub fn unit_stride_global_cost(addrs: &[u64], mask: u64, bytes: u32) -> Option<GlobalCost> {
    let n = addrs.len();
    if mask == 0 || mask & !lane_bits(n) != 0 || !bytes.is_power_of_two() || !(2..=32).contains(&bytes) {
        return None;
    }
    let b = bytes as u64;
    let first = mask.trailing_zeros() as usize;
    let last = 63 - mask.leading_zeros() as usize;
    let a0 = *addrs.get(first)?;
    // The last active lane first: a strided access fails here, before the lane loop.
    if a0 % b != 0 || *addrs.get(last)? != a0.wrapping_add((last - first) as u64 * b) {
        return None;
    }
    let base = a0.wrapping_sub(first as u64 * b);
    let ok = match <&[u64; 32]>::try_from(addrs) {
        // A 32-lane warp: a fixed length, so the loop unrolls.
        Ok(a) => on_stride(a.as_slice(), mask, base, b),
        Err(_) => on_stride(addrs, mask, base, b),
    };
    // Lane positions from the first active lane's line start; at most 128 of them.
    let shift = (a0 % 128 / b) as u32;
    if !ok || shift as usize + (last - first) >= 128 || a0.checked_add((last - first) as u64 * b + b).is_none() {
        return None;
    }
    let m = ((mask >> first) as u128) << shift;
    let (sectors, lines) = match bytes {
        2 => (groups_touched::<16>(m), groups_touched::<64>(m)),
        4 => (groups_touched::<8>(m), groups_touched::<32>(m)),
        8 => (groups_touched::<4>(m), groups_touched::<16>(m)),
        16 => (groups_touched::<2>(m), groups_touched::<8>(m)),
        _ => (groups_touched::<1>(m), groups_touched::<4>(m)),
    };
    let unique = mask.count_ones();
    Some(GlobalCost { sectors, lines, bytes_requested: unique * bytes, ideal_sectors: (unique * bytes).div_ceil(32) })
}

/// Whether every lane `l` in `mask` holds `base + l * b` (branch-free: it vectorises).
#[inline(always)]
fn on_stride(addrs: &[u64], mask: u64, base: u64, b: u64) -> bool {
    let mut off = 0u64;
    for (l, &a) in addrs.iter().enumerate() {
        let d = a ^ base.wrapping_add(l as u64 * b);
        off |= if mask >> l & 1 != 0 { d } else { 0 };
    }
    off == 0
}

/// How many of the aligned `G`-bit groups of `m` (`G` a power of two, at most 128) have a bit set.
#[inline(always)]
fn groups_touched<const G: u32>(m: u128) -> u32 {
    // Or each group's bits into its lowest bit, then count the lowest bits
    // (constant shifts: the loops unroll).
    let (mut x, mut low) = (m, 1u128);
    let mut s = 1;
    while s < G {
        x |= x >> s;
        s <<= 1;
    }
    let mut s = G;
    while s < 128 {
        low |= low << s;
        s <<= 1;
    }
    (x & low).count_ones()
}

/// Local memory is interleaved across the lanes of a warp, 4 bytes at a time:
/// the same offset in every lane is one coalesced line. Maps per-lane offsets
/// to the addresses that interleaving gives, for [`global_cost`].
pub fn local_addresses(offsets: &[u64], out: &mut [u64]) {
    let w = offsets.len() as u64;
    for (l, (o, a)) in offsets.iter().zip(out.iter_mut()).enumerate() {
        *a = (o / 4) * 4 * w + l as u64 * 4 + o % 4;
    }
}

/// Wavefronts of one shared-memory warp access.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct SharedCost {
    pub wavefronts: u32,
    /// Wavefronts without bank conflicts (one per phase with an active lane).
    pub ideal_wavefronts: u32,
}

impl SharedCost {
    pub fn conflicts(&self) -> u32 {
        self.wavefronts - self.ideal_wavefronts
    }
}

/// [`phased_cost`] of one phase of at most 64 lanes, one word per lane (the
/// common 32-bit access), without gathering the words first.
fn one_word_phase(addrs: &[u64], mask: u64) -> SharedCost {
    let mask = mask & lane_bits(addrs.len());
    if mask == 0 {
        return SharedCost::default();
    }
    let full = mask == lane_bits(addrs.len());
    let (mut lo, mut hi) = (u64::MAX, 0u64);
    if full {
        // Every lane: a plain min and max (vectorised).
        for &a in addrs {
            lo = lo.min(a / 4);
            hi = hi.max(a / 4);
        }
    } else {
        for (l, &a) in addrs.iter().enumerate() {
            let on = mask >> l & 1 != 0;
            lo = if on { lo.min(a / 4) } else { lo };
            hi = if on { hi.max(a / 4) } else { hi };
        }
    }
    // Words within 32 of each other sit in distinct banks: one wavefront (broadcasts included).
    if hi - lo < 32 {
        return SharedCost { wavefronts: 1, ideal_wavefronts: 1 };
    }
    let (row0, row1) = (lo / 32, hi / 32);
    let wavefronts = if row1 - row0 < 64 {
        // One bitset of rows (word / 32) per bank.
        let mut rows = [0u64; 32];
        for (l, &a) in addrs.iter().enumerate() {
            if full || mask >> l & 1 != 0 {
                let w = a / 4;
                rows[(w % 32) as usize] |= 1 << (w / 32 - row0);
            }
        }
        rows.iter().fold(0, |m, r| m.max(r.count_ones()))
    } else {
        let mut words = [0u64; 64];
        let mut k = 0;
        for (l, &a) in addrs.iter().enumerate() {
            if mask >> l & 1 != 0 {
                words[k] = a / 4;
                k += 1;
            }
        }
        max_words_per_bank(&mut words[..k])
    };
    SharedCost { wavefronts, ideal_wavefronts: 1 }
}

/// The most distinct words any one bank must serve.
fn max_words_per_bank(words: &mut [u64]) -> u32 {
    let (lo, hi) = words.iter().fold((u64::MAX, 0), |(lo, hi), &w| (lo.min(w / 32), hi.max(w / 32)));
    if hi - lo < 64 {
        // Rows (word / 32) within 64 of each other: one bitset of rows per bank.
        let mut rows = [0u64; 32];
        for &w in words.iter() {
            rows[(w % 32) as usize] |= 1 << (w / 32 - lo);
        }
        return rows.iter().map(|r| r.count_ones()).max().unwrap_or(0);
    }
    let mut keyed: Vec<u64> = words.iter().map(|&w| ((w % 32) << 58) | (w & ((1 << 58) - 1))).collect();
    keyed.sort_unstable();
    keyed.dedup();
    let mut best = 0;
    let mut run = 0;
    for i in 0..keyed.len() {
        run = if i > 0 && keyed[i] >> 58 == keyed[i - 1] >> 58 { run + 1 } else { 1 };
        best = best.max(run);
    }
    best
}

/// Wavefronts of a shared-memory store or atomic of `bytes` per lane at shared offsets
/// `addrs[lane]`, lanes in `mask`: phases of 32 / (bytes / 4) lanes (half-warps for 64-bit,
/// quarter-warps for 128-bit), as the H200 counts them (calibration/micro, group `mem11`).
pub fn shared_cost(addrs: &[u64], mask: u64, bytes: u32) -> SharedCost {
    phased_cost(addrs, mask, bytes, lanes_per_store_phase(bytes))
}

/// Wavefronts of a shared-memory load: the H200 takes 32- and 64-bit loads a whole warp at a
/// time and 128-bit loads a half-warp at a time, so a broadcast 64-bit load is one wavefront
/// where the same store is two (calibration/micro, group `mem11`: `sld_v2_s0` against
/// `sst_v2_s0`). Conflicts are counted against the store phases' ideal, never below zero.
pub fn shared_load_cost(addrs: &[u64], mask: u64, bytes: u32) -> SharedCost {
    let lanes = if bytes > 8 { 16 } else { 32 };
    let mut cost = phased_cost(addrs, mask, bytes, lanes);
    cost.ideal_wavefronts = phased_cost_ideal(addrs, mask, lanes_per_store_phase(bytes)).min(cost.wavefronts);
    cost
}

fn lanes_per_store_phase(bytes: u32) -> usize {
    (32 / (bytes / 4).max(1) as usize).max(1)
}

/// Phases of `lanes_per_phase` lanes with an active lane.
fn phased_cost_ideal(addrs: &[u64], mask: u64, lanes_per_phase: usize) -> u32 {
    (0..addrs.len()).step_by(lanes_per_phase).filter(|&start| mask >> start & lane_bits(lanes_per_phase) != 0).count() as u32
}

fn lane_bits(n: usize) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

fn phased_cost(addrs: &[u64], mask: u64, bytes: u32, lanes_per_phase: usize) -> SharedCost {
    let words_per_lane = (bytes / 4).max(1) as usize;
    if words_per_lane == 1 && addrs.len() <= lanes_per_phase.min(64) {
        return one_word_phase(addrs, mask);
    }
    let mut cost = SharedCost::default();
    let n = addrs.len();
    let mut start = 0;
    while start < n {
        let end = (start + lanes_per_phase).min(n);
        // Words of this phase's active lanes; a bank serves one distinct word per wavefront.
        let mut words = [0u64; 64];
        let mut k = 0;
        for (l, &a) in addrs.iter().enumerate().take(end).skip(start) {
            if mask >> l & 1 == 0 {
                continue;
            }
            let w0 = a / 4;
            for w in w0..w0 + words_per_lane as u64 {
                if k < words.len() {
                    words[k] = w;
                    k += 1;
                }
            }
        }
        if k > 0 {
            cost.wavefronts += max_words_per_bank(&mut words[..k]);
            cost.ideal_wavefronts += 1;
        }
        start = end;
    }
    cost
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn lanes(f: impl Fn(u64) -> u64) -> Vec<u64> {
        (0..32).map(f).collect()
    }

    pub(crate) use warpsim_engine::rng::numbers;

    #[test]
    fn strides_of_4_byte_loads_give_the_corpus_sector_counts() {
        // The corpus: strides 1, 2, 4, 8, 16, 32 floats -> 4, 8, 16, 32, 32, 32 sectors.
        for (stride, want) in [(1, 4), (2, 8), (4, 16), (8, 32), (16, 32), (32, 32)] {
            let a = lanes(|l| 0x1000 + l * 4 * stride);
            assert_eq!(global_cost(&a, u32::MAX as u64, 4).sectors, want, "stride {stride}");
        }
    }

    #[test]
    fn every_stride_0_to_33_for_4_8_16_byte_accesses() {
        for bytes in [4u32, 8, 16] {
            for stride in 0..=33u64 {
                let a = lanes(|l| 0x10000 + l * bytes as u64 * stride);
                let c = global_cost(&a, u32::MAX as u64, bytes);
                // Reference: a set of sector numbers.
                let mut set = std::collections::BTreeSet::new();
                for &x in &a {
                    for s in (x >> 5)..=((x + bytes as u64 - 1) >> 5) {
                        set.insert(s);
                    }
                }
                assert_eq!(c.sectors as usize, set.len(), "bytes {bytes} stride {stride}");
                if stride == 0 {
                    assert_eq!(c.sectors, 1);
                    assert_eq!(c.ideal_sectors, 1);
                }
                if stride == 1 {
                    assert_eq!(c.sectors, 32 * bytes / 32);
                }
                // Shared: phases of 32 / (bytes/4) lanes.
                let s = shared_cost(&a.iter().map(|x| x - 0x10000).collect::<Vec<_>>(), u32::MAX as u64, bytes);
                let phases = bytes / 4;
                assert_eq!(s.ideal_wavefronts, phases);
                if stride == 0 {
                    assert_eq!(s.wavefronts, phases, "broadcast");
                }
                let words = stride * bytes as u64 / 4;
                let want_degree = if stride == 0 {
                    1
                } else {
                    // lanes of a phase hitting one bank: gcd rule
                    let lanes = 32 / phases as u64;
                    let mut max = 0;
                    for bank in 0..32u64 {
                        let mut set = std::collections::BTreeSet::new();
                        for l in 0..lanes {
                            for w in 0..(bytes as u64 / 4) {
                                let word = l * words + w;
                                if word % 32 == bank {
                                    set.insert(word);
                                }
                            }
                        }
                        max = max.max(set.len() as u32);
                    }
                    max
                };
                assert_eq!(s.wavefronts, want_degree * phases, "shared bytes {bytes} stride {stride}");
            }
        }
    }

    #[test]
    fn ascending_accesses_cost_as_the_general_count() {
        let mut next = numbers(0x2545_F491_4F6C_DD1Du64);
        for round in 0..4000 {
            let bytes = [1u32, 2, 4, 8, 16][round % 5];
            let step = [0u64, 1, 1, 2, 8, 33][round % 6] * bytes as u64;
            let mut a = 0x7f00_0000_1000u64 + next() % 64 * bytes as u64;
            let addrs: Vec<u64> = (0..32)
                .map(|_| {
                    a += if next().is_multiple_of(4) { bytes as u64 * (next() % 3) } else { step };
                    a
                })
                .collect();
            let mask = if round % 3 == 0 { u32::MAX as u64 } else { next() & u32::MAX as u64 };
            let Some(fast) = ascending_global_cost(&addrs, mask, bytes) else { panic!("ascending and aligned: {addrs:?}") };
            // The general count, from sorted lists.
            let mut secs: Vec<u64> = (0..32).filter(|l| mask >> l & 1 != 0).map(|l| addrs[l] >> 5).collect();
            secs.sort_unstable();
            let lines = secs.windows(2).filter(|w| w[0] >> 2 != w[1] >> 2).count() as u32 + !secs.is_empty() as u32;
            secs.dedup();
            let mut starts: Vec<u64> = (0..32).filter(|l| mask >> l & 1 != 0).map(|l| addrs[l]).collect();
            starts.dedup();
            let want = GlobalCost {
                sectors: secs.len() as u32,
                lines,
                bytes_requested: mask.count_ones() * bytes,
                ideal_sectors: (starts.len() as u32 * bytes).div_ceil(32),
            };
            assert_eq!(fast, want, "{addrs:?} {mask:#x} {bytes}");
        }
    }

    /// Unit-stride accesses of every width, offset and mask cost as the
    /// general count; a lane off the stride (or a misaligned base) is refused.
    #[test]
    fn unit_stride_accesses_cost_as_the_general_count() {
        let mut next = numbers(0x853C_49E6_748F_EA9Bu64);
        for round in 0..20000 {
            let bytes = [2u32, 4, 8, 16, 32][round % 5];
            let n = if round % 7 == 0 { 64 } else { 32 };
            let base = 0x7f00_0000_0000u64 + next() % 512 * bytes as u64;
            let mut addrs: Vec<u64> = (0..n as u64).map(|l| base + l * bytes as u64).collect();
            let mask = match round % 4 {
                0 => u64::MAX >> (64 - n),
                1 => (u64::MAX >> (64 - n)) >> (next() % n as u64),
                _ => next() & (u64::MAX >> (64 - n)),
            };
            let want = global_cost(&addrs, mask, bytes);
            let got = unit_stride_global_cost(&addrs, mask, bytes);
            if mask == 0 {
                assert_eq!(got, None);
                continue;
            }
            assert_eq!(got, Some(want), "{base:#x} {mask:#x} {bytes}");
            // One active lane moved: refused (or, if it moved onto its own place, equal).
            let l = (next() % n as u64) as usize;
            if mask >> l & 1 != 0 && mask.count_ones() > 1 {
                addrs[l] += bytes as u64 * (1 + next() % 3);
                assert_eq!(unit_stride_global_cost(&addrs, mask, bytes), None, "moved lane {l}");
                // An inactive lane's address does not matter.
                addrs[l] -= bytes as u64 * 1000;
                let off = mask & !(1 << l);
                assert_eq!(unit_stride_global_cost(&addrs, off, bytes), Some(global_cost(&addrs, off, bytes)));
            }
        }
        // A misaligned base, one-byte lanes and a mask past the lanes are refused.
        let a: Vec<u64> = (0..32).map(|l| 0x1002 + l * 4).collect();
        assert_eq!(unit_stride_global_cost(&a, u32::MAX as u64, 4), None);
        let a: Vec<u64> = (0..32).map(|l| 0x1000 + l).collect();
        assert_eq!(unit_stride_global_cost(&a, u32::MAX as u64, 1), None);
        let a: Vec<u64> = (0..32).map(|l| 0x1000 + l * 4).collect();
        assert_eq!(unit_stride_global_cost(&a, u64::MAX, 4), None);
    }

    #[test]
    fn one_word_phases_equal_gathering_the_words() {
        let mut next = numbers(0x9E37_79B9_7F4A_7C15u64);
        for round in 0..4000 {
            let spread = [4u64, 128, 256, 8192, 1 << 20][round % 5];
            let a: Vec<u64> = (0..32).map(|_| next() % spread * 4).collect();
            let mask = if round % 3 == 0 { u32::MAX as u64 } else { next() & u32::MAX as u64 };
            let mut words: Vec<u64> = (0..32).filter(|l| mask >> l & 1 != 0).map(|l| a[l] / 4).collect();
            let want = if words.is_empty() { 0 } else { max_words_per_bank(&mut words) };
            let got = one_word_phase(&a, mask);
            assert_eq!(got.wavefronts, want, "{a:?} {mask:#x}");
            assert_eq!(got.ideal_wavefronts, (mask != 0) as u32);
        }
    }

    #[test]
    fn bank_conflicts_follow_the_corpus() {
        // lane reads s[lane * stride]: stride 1 and 33 conflict-free, 2 two-way, 32 32-way, 0 broadcast.
        for (stride, degree) in [(0, 1), (1, 1), (2, 2), (4, 4), (8, 8), (16, 16), (32, 32), (33, 1)] {
            let a = lanes(|l| l * 4 * stride);
            let c = shared_cost(&a, u32::MAX as u64, 4);
            assert_eq!(c.wavefronts, degree, "stride {stride}");
            assert_eq!(c.conflicts(), degree - 1);
        }
    }

    #[test]
    fn partial_masks_count_only_active_lanes() {
        let a = lanes(|l| 0x2000 + l * 4);
        assert_eq!(global_cost(&a, 0x1, 4).sectors, 1);
        assert_eq!(global_cost(&a, 0xFFFF, 4).sectors, 2);
        assert_eq!(global_cost(&a, 0x8000_0001, 4).sectors, 2);
        assert_eq!(global_cost(&a, 0, 4), GlobalCost::default());
        // Half a warp with 32-way stride only conflicts 16 ways.
        let s = lanes(|l| l * 128);
        assert_eq!(shared_cost(&s, 0xFFFF, 4).wavefronts, 16);
        assert_eq!(shared_cost(&s, 0, 4).wavefronts, 0);
    }

    #[test]
    fn misaligned_vectors_straddle_sectors() {
        // 8-byte accesses at 4-byte offsets: each lane straddles two words; 16-byte at 8.
        let a = lanes(|l| 0x3004 + l * 8);
        assert_eq!(global_cost(&a, u32::MAX as u64, 8).sectors, 9);
        let b = lanes(|l| 0x3008 + l * 16);
        assert_eq!(global_cost(&b, u32::MAX as u64, 16).sectors, 17);
    }

    #[test]
    fn vector_accesses_are_split_into_phases() {
        // 128-bit loads of consecutive float4: 4 phases of 8 lanes, no conflict.
        let a = lanes(|l| l * 16);
        let c = shared_cost(&a, u32::MAX as u64, 16);
        assert_eq!((c.wavefronts, c.ideal_wavefronts), (4, 4));
        // 64-bit with stride 32 words: lanes of a half-warp all on banks 0/1 -> 16-way.
        let b = lanes(|l| l * 128);
        assert_eq!(shared_cost(&b, u32::MAX as u64, 8).wavefronts, 32);
    }

    #[test]
    fn loads_take_64_bit_words_a_warp_at_a_time_and_128_bit_a_half_warp() {
        // The H200's counts per instruction (calibration/micro, mem11): broadcast loads of
        // 4, 8, 16 bytes take 1, 1, 2 wavefronts; the same stores 1, 2, 4.
        let same = lanes(|_| 0x40);
        for (bytes, load, store) in [(4, 1, 1), (8, 1, 2), (16, 2, 4)] {
            let l = shared_load_cost(&same, u32::MAX as u64, bytes);
            assert_eq!((l.wavefronts, l.conflicts()), (load, 0), "load of {bytes} bytes");
            assert_eq!(shared_cost(&same, u32::MAX as u64, bytes).wavefronts, store, "store of {bytes} bytes");
        }
        // Consecutive and strided: loads and stores agree (s1: 1/2/4, s32: 32 with 31/30/28 conflicts).
        for (stride, bytes, wf, conflicts) in [(1, 4, 1, 0), (1, 8, 2, 0), (1, 16, 4, 0), (2, 8, 4, 2), (32, 8, 32, 30), (32, 16, 32, 28)] {
            let a = lanes(|l| l * stride * bytes as u64);
            let l = shared_load_cost(&a, u32::MAX as u64, bytes);
            let s = shared_cost(&a, u32::MAX as u64, bytes);
            assert_eq!((l.wavefronts, l.conflicts()), (wf, conflicts), "load stride {stride} bytes {bytes}");
            assert_eq!((s.wavefronts, s.conflicts()), (wf, conflicts), "store stride {stride} bytes {bytes}");
        }
        assert_eq!(shared_load_cost(&same, 0, 8), SharedCost::default());
    }

    #[test]
    fn local_memory_is_interleaved() {
        let off = [8u64; 32];
        let mut a = [0u64; 32];
        local_addresses(&off, &mut a);
        assert_eq!(global_cost(&a, u32::MAX as u64, 4).sectors, 4);
    }
}
