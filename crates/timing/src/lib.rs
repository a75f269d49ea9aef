//! warpsim's cycle-level timing model.
//!
//! The same warp instruction stream the functional engine executes drives a
//! model of the GPU: a block scheduler that fills SMs up to the occupancy
//! limit and starts the next blocks as others finish; per SM, sub-partitions
//! whose schedulers issue at most one warp instruction per cycle (greedy-
//! then-oldest or loose round-robin), with a scoreboard per warp and pipes
//! with per-class latency and occupancy; the shared-memory pipe (one bank
//! wavefront per cycle, shuffles included) and the L1 pipe with their
//! queues; sectored L1 per SM, one L2, DRAM with latency and bandwidth.
//! Latency hiding comes out of it: a warp waits for its own results, other
//! warps issue meanwhile.
//!
//! ```text
//! launch --> block scheduler --> SM 0..N (simulated in turn, one quantum of cycles at a time)
//!              sub-partition x4: pick a warp (GTO/LRR) whose sources are ready and whose pipe is free
//!                 --> engine: Block::run_warp(w, region)   (clock64 reads the SM cycle)
//!                 --> results ready at issue + latency (ALU), + bank wavefronts (shared),
//!                     + L1 / L2 / DRAM path with bandwidth (global)
//! ```
//!
//! Components (`sim/`): `place` (SM placement, block scheduler), `sched`
//! (sub-partition warp scheduler), `issue` (scoreboard, pipes, stalls) and
//! `lsu` (memory path), each with a spec from the preset, state and counters.
//! User observers ([`simulate_observed`]) see the same events as in a
//! functional launch, so metrics and the checker can share a timed run.
//!
//! Cycles are reported as Nsight Compute's `sm__cycles_elapsed.max` counts
//! them: the kernel's span plus the preset's launch overhead.
//!
//! On a 64-lane (AMD CDNA) preset, warps are 64-lane wavefronts: occupancy,
//! wavefront formation and divergence use 64 lanes, a wave instruction
//! occupies a 16-lane SIMD pipe for 4 cycles, and PTX's 32-bit lane masks
//! (`%laneid`, `shfl`, `vote.ballot`, `activemask`) apply per half-wavefront,
//! as the functional engine defines (`docs/semantics.md`).

pub mod decode;
pub mod mem;
pub mod preset;
pub mod report;
pub mod sim;

pub use decode::DecodeCache;
pub use preset::{SchedulerPolicy, TimingGpu, TimingParams};
pub use report::{LineTiming, Reason, Span, TimingReport};
pub use sim::{estimate_registers, simulate, simulate_observed, LaunchShape, TimedLaunch, TimingOptions};
