//! The device's address range, taken from the host's address space so that
//! device and host pointers never overlap (the engine's global window starts
//! at 0x7f00_0000_0000, where Linux also puts host `mmap`s), and host memory
//! mapped at device addresses (managed and mapped allocations the program
//! touches directly).

use warpsim_engine::memory::GLOBAL_BASE;

/// Bytes of address space reserved for the device.
pub const RESERVE_BYTES: u64 = 1 << 36;
/// Candidate bases are this far apart, from `GLOBAL_BASE` up.
const STEP: u64 = 1 << 32;

/// A reserved range: `PROT_NONE`, no memory behind it until mapped.
#[derive(Copy, Clone, Debug)]
pub struct Reserved {
    pub base: u64,
    pub len: u64,
}

/// Reserves [`RESERVE_BYTES`] at the first free place at or above the engine's
/// global base; `None` when the address space has no such hole.
pub fn reserve() -> Option<Reserved> {
    for i in 0.. {
        let base = GLOBAL_BASE + i * STEP;
        if base.checked_add(RESERVE_BYTES).is_none_or(|end| end > 0x7fff_ffff_f000) {
            return None;
        }
        // SAFETY: MAP_FIXED_NOREPLACE never replaces an existing mapping; a PROT_NONE
        // anonymous mapping has no memory behind it.
        let p = unsafe {
            libc::mmap(
                base as *mut libc::c_void,
                RESERVE_BYTES as usize,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_FIXED_NOREPLACE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            continue;
        }
        if p as u64 != base {
            // A kernel without MAP_FIXED_NOREPLACE took it as a hint: give it back.
            // SAFETY: `p` is the mapping just made, of this length.
            unsafe { libc::munmap(p, RESERVE_BYTES as usize) };
            continue;
        }
        return Some(Reserved { base, len: RESERVE_BYTES });
    }
    None
}

fn page_round(len: u64) -> usize {
    len.max(1).div_ceil(4096) as usize * 4096
}

/// Puts read-write host memory at `[addr, addr + len)`, inside the reservation.
pub fn map_host(addr: u64, len: u64) -> bool {
    // SAFETY: the range lies in the reservation this library made and no one else maps
    // (the engine hands each address out once); MAP_FIXED replaces only our PROT_NONE pages.
    let p = unsafe {
        libc::mmap(
            addr as *mut libc::c_void,
            page_round(len),
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
            -1,
            0,
        )
    };
    p as u64 == addr
}

/// Returns host memory mapped by [`map_host`] to the reservation.
pub fn unmap_host(addr: u64, len: u64) {
    // SAFETY: as for `map_host`: the range is ours; it goes back to PROT_NONE.
    unsafe {
        libc::mmap(
            addr as *mut libc::c_void,
            page_round(len),
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_FIXED,
            -1,
            0,
        );
    }
}
