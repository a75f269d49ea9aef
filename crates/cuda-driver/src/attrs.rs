//! `cuDeviceGetAttribute` from the GPU preset: the limits warpsim models come
//! from the preset, the rest are the values a GPU of that generation reports.

use std::ffi::c_int;
use warpsim_gpu::GpuPreset;

/// (major, minor) from the preset's `sm_XY` (9.0 for an AMD preset, whose PTX is compiled for sm_90).
pub fn compute_capability(p: &GpuPreset) -> (c_int, c_int) {
    let digits: String = p.arch.strip_prefix("sm_").unwrap_or("90").chars().take_while(|c| c.is_ascii_digit()).collect();
    match digits.parse::<c_int>() {
        Ok(v) if v >= 10 => (v / 10, v % 10),
        _ => (9, 0),
    }
}

/// The value of `CUdevice_attribute` `a`; `None` for an unknown attribute.
pub fn device_attribute(p: &GpuPreset, a: c_int) -> Option<c_int> {
    let (major, minor) = compute_capability(p);
    let dims = p.max_block_dims();
    let grid = p.max_grid_dims();
    let i = |v: u64| v.min(c_int::MAX as u64) as c_int;
    Some(match a {
        1 => i(p.max_threads_per_block as u64),
        2..=4 => i(dims[(a - 2) as usize] as u64),
        5..=7 => i(grid[(a - 5) as usize] as u64),
        8 => i(p.shared_per_block_default as u64),
        9 => 65536,
        10 => i(p.warp_size as u64),
        11 => c_int::MAX,
        12 => i(p.registers_per_block as u64),
        13 => i(p.clock_mhz as u64 * 1000),
        14 => 512,
        15 => 1,
        16 => i(p.sm_count as u64),
        17 | 18 => 0,
        19 => 1,
        20 => 0,
        21..=29 | 42..=49 | 52..=74 | 77 => 65536,
        30 => 512,
        31 => 1,
        32 => 1,
        33 | 34 | 50 => 0,
        35 => 0,
        36 => 2_619_000,
        // Global memory bus width in bits: the H200's as its driver reports it
        // (tests/programs/h200/runtime_api.stdout: 6016), the others' from their data sheets.
        37 => match p.key.as_str() {
            "h200" => 6016,
            "h100" | "a100" => 5120,
            "t4" => 256,
            "mi300x" => 8192,
            _ => 6016,
        },
        38 => i(p.l2_bytes),
        39 => i(p.max_threads_per_sm() as u64),
        40 => 2,
        41 => 1,
        51 => 32,
        75 => major,
        76 => minor,
        78..=80 => 1,
        81 => i(p.shared_per_sm_max as u64),
        82 => i(p.registers_per_sm as u64),
        83 => 1,
        84 | 85 => 0,
        86 => 0,
        87 => 2,
        88 => 0,
        89 => 1,
        90 => 1,
        91 => 0,
        92..=94 => 0,
        95 => 1,
        96 => 0,
        97 => i(p.shared_per_block_optin as u64),
        98 => 0,
        99 => 1,
        100 | 101 => 0,
        102 => 1,
        103 => 1,
        104 | 105 => 0,
        106 => i(p.max_blocks_per_sm as u64),
        107 => 0,
        108 => i(p.l2_bytes * 3 / 4),
        109 => 134_213_632,
        110 => 0,
        111 => i(p.shared_reserved_per_block as u64),
        112..=114 => 0,
        115 => 1,
        116..=119 => 0,
        120 => (major >= 9) as c_int,
        121..=124 => 0,
        125 => 1,
        126 => 4,
        127 => (major >= 9) as c_int,
        128..=161 => 0,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_come_from_the_preset() {
        let h200 = GpuPreset::by_name("h200").unwrap();
        assert_eq!(compute_capability(&h200), (9, 0));
        assert_eq!(device_attribute(&h200, 16), Some(132), "SMs");
        assert_eq!(device_attribute(&h200, 10), Some(32), "warp size");
        assert_eq!(device_attribute(&h200, 97), Some(h200.shared_per_block_optin as c_int));
        let t4 = GpuPreset::by_name("t4").unwrap();
        assert_eq!((device_attribute(&t4, 75), device_attribute(&t4, 76)), (Some(7), Some(5)));
        assert_eq!(device_attribute(&h200, 9999), None);
    }
}
