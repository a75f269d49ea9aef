//! Warp-level metrics: everything that follows from lane masks and addresses
//! (instructions, threads per instruction, divergence, sectors per request,
//! shared-memory wavefronts and bank conflicts), computed by an engine
//! observer and reported under Nsight Compute's metric names, per launch and
//! per CUDA source line.

#![forbid(unsafe_code)]

pub mod coalesce;
pub mod observer;
pub mod report;
pub mod sass;

pub use observer::{CodeShape, InstCounts, MemCounts, MetricsObserver, PcCounters};
pub use report::{KernelModel, LaunchMetrics, LineReport, SummaryRow, Totals};
