//! Generic addressing: where the shared and local state spaces sit inside
//! the generic address space. Defined once here, so that lowering (which
//! folds `cvta` of a symbol), the engine (which resolves every generic
//! access), and the metrics, checker and timing observers (which classify
//! addresses they are handed) cannot disagree.

use crate::Space;

/// Generic addresses `[SHARED_WINDOW, SHARED_WINDOW + WINDOW_SIZE)` map to the block's shared memory.
pub const SHARED_WINDOW: u64 = 0x1000_0000_0000;
/// Generic addresses `[LOCAL_WINDOW, LOCAL_WINDOW + WINDOW_SIZE)` map to the thread's local memory.
pub const LOCAL_WINDOW: u64 = 0x2000_0000_0000;
/// Size of each window.
pub const WINDOW_SIZE: u64 = 1 << 32;

/// The state space a generic address falls in.
#[inline]
pub fn generic_space(addr: u64) -> Space {
    if addr.wrapping_sub(SHARED_WINDOW) < WINDOW_SIZE {
        Space::Shared
    } else if addr.wrapping_sub(LOCAL_WINDOW) < WINDOW_SIZE {
        Space::Local
    } else {
        Space::Global
    }
}

/// Maps an address of `space` to its state space and the address within it
/// (identity unless `space` is [`Space::Generic`]).
#[inline]
pub fn resolve(space: Space, addr: u64) -> (Space, u64) {
    if space != Space::Generic {
        return (space, addr);
    }
    match generic_space(addr) {
        Space::Shared => (Space::Shared, addr - SHARED_WINDOW),
        Space::Local => (Space::Local, addr - LOCAL_WINDOW),
        s => (s, addr),
    }
}

/// The generic address of `offset` in `space` (shared and local get their window base).
#[inline]
pub fn window_base(space: Space) -> u64 {
    match space {
        Space::Shared => SHARED_WINDOW,
        Space::Local => LOCAL_WINDOW,
        Space::Global | Space::KernelParam | Space::Const | Space::Generic => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_resolve_to_their_spaces_and_back() {
        assert_eq!(resolve(Space::Generic, SHARED_WINDOW + 12), (Space::Shared, 12));
        assert_eq!(resolve(Space::Generic, LOCAL_WINDOW + WINDOW_SIZE - 4), (Space::Local, WINDOW_SIZE - 4));
        assert_eq!(resolve(Space::Generic, LOCAL_WINDOW + WINDOW_SIZE), (Space::Global, LOCAL_WINDOW + WINDOW_SIZE));
        assert_eq!(resolve(Space::Generic, 0x7f00_0000_0000), (Space::Global, 0x7f00_0000_0000));
        assert_eq!(resolve(Space::Shared, 8), (Space::Shared, 8));
        for s in [Space::Shared, Space::Local] {
            assert_eq!(resolve(Space::Generic, window_base(s) + 100), (s, 100));
        }
    }
}
