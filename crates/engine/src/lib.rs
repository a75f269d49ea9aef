//! The functional SIMT engine: runs a decoded kernel over a grid of blocks,
//! warp by warp, with lane masks, a SIMT stack for divergence, block
//! barriers, and shared, local, parameter and (lazily paged) global memory.
//! Observers (metrics, timing, sanitizer) watch the instruction stream.

pub mod exec;
pub mod fault;
pub mod launch;
pub mod memory;
pub mod observer;
pub mod schedule;

pub use fault::{FaultKind, KernelFault};
pub use launch::{alloc_module_globals, launch, launch_observed, launch_observed_partial, LaunchConfig, LaunchError, LaunchStats};
/// Block-level pieces for schedulers other than the functional one.
pub mod block {
    pub use crate::launch::{
        arrive, block_coords, complete_barrier, deadlock, init_warp, live_threads, thread_coords, validate, BarrierState, RegisterTemplate,
    };
}
pub use memory::{Filler, GlobalMemory};
pub use observer::{BarrierEvent, MemAccessKind, NoObserver, Observer, WarpSyncEvent, WarpSyncKind};
pub use schedule::Schedule;
