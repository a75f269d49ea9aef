//! Running small PTX kernels on the timing model.

use std::collections::HashMap;
use warpsim_engine::GlobalMemory;
use warpsim_timing::{simulate, LaunchShape, TimingGpu, TimingOptions, TimingReport};

pub const HEAD: &str = ".version 8.0\n.target sm_90\n.address_size 64\n";

/// A launch's result: its report and its buffers' final contents.
#[allow(dead_code)]
pub struct Ran {
    pub report: TimingReport,
    pub buffers: Vec<Vec<u8>>,
}

/// Runs `entry` of `src` with a 64-bit pointer parameter per buffer in
/// `buffers` (initial bytes), then `scalars` (32-bit each).
#[allow(clippy::too_many_arguments)]
pub fn run(
    src: &str,
    entry: &str,
    grid: u32,
    block: u32,
    buffers: &[Vec<u8>],
    scalars: &[u32],
    gpu: &TimingGpu,
    opts: &TimingOptions,
) -> Ran {
    let program = warpsim_ir::compile_module("test.ptx", src).unwrap_or_else(|e| panic!("{e}"));
    let k = program.kernel(entry).unwrap();
    let mut mem = GlobalMemory::new();
    let mut params = Vec::new();
    let mut bases = Vec::new();
    for (i, b) in buffers.iter().enumerate() {
        let base = mem.alloc(&format!("b{i}"), b.len().max(8) as u64, None);
        mem.write(base, b).unwrap();
        params.extend_from_slice(&base.to_le_bytes());
        bases.push(base);
    }
    for s in scalars {
        params.extend_from_slice(&s.to_le_bytes());
    }
    let shape = LaunchShape { grid: [grid, 1, 1], block: [block, 1, 1], dynamic_shared_bytes: 0 };
    let (_, report) = simulate(&program, k, &mem, &HashMap::new(), &params, &shape, gpu, opts).unwrap_or_else(|e| panic!("{e}"));
    let buffers = buffers
        .iter()
        .zip(&bases)
        .map(|(b, &base)| {
            let mut out = vec![0u8; b.len()];
            mem.read(base, &mut out).unwrap();
            out
        })
        .collect();
    Ran { report, buffers }
}

pub fn h200() -> TimingGpu {
    TimingGpu::by_name("h200").unwrap()
}

pub fn opts() -> TimingOptions {
    TimingOptions { regs_per_thread: Some(32), ..Default::default() }
}

#[allow(dead_code)]
pub fn u64s(b: &[u8]) -> Vec<u64> {
    b.chunks(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect()
}
