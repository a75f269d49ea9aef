//! The workspace's one pseudo-random generator (SplitMix64): the choices of
//! random schedules, and the inputs of randomized tests in every crate, the
//! same stream for the same seed on any host.

/// SplitMix64: small, fast, and good enough for schedules and tests.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number below `n` (not 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// The numbers of a [`SplitMix64`] seeded with `seed`, as a closure.
pub fn numbers(seed: u64) -> impl FnMut() -> u64 {
    let mut rng = SplitMix64::new(seed);
    move || rng.next_u64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stream_is_splitmix64() {
        // The first outputs for seed 0 in the published reference (Vigna's splitmix64.c).
        let mut next = numbers(0);
        assert_eq!(next(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(next(), 0x6E78_9E6A_A1B9_65F4);
        let mut r = SplitMix64::new(7);
        assert!((0..100).all(|_| r.below(3) < 3));
    }
}
