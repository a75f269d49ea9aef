//! The functional SIMT engine: runs a decoded kernel over a grid of blocks,
//! warp by warp, with lane masks, a SIMT stack for divergence, block
//! barriers, and shared, local, parameter and (lazily paged) global memory.
//! Observers (metrics, timing, sanitizer) watch the instruction stream.
//! [`block::Block`] owns a block's execution; the functional launcher and
//! the timing model both drive it through its stepping API.

/// `Display` for a field-less enum whose `name()` is its text.
macro_rules! display_as_name {
    ($t:ty) => {
        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

pub mod block;
pub mod exec;
pub mod fault;
pub mod launch;
pub mod memory;
pub mod observer;
pub mod rng;
pub mod schedule;
pub mod spare;

pub use block::{Block, RegisterTemplate, Step};
pub use fault::{FaultKind, KernelFault};
pub use launch::{
    alloc_module_globals, launch, launch_observed, launch_observed_partial, place_past_end, resolve_symbols, validate, with_source_file,
    LaunchArgs, LaunchConfig, LaunchError, LaunchInput, LaunchStats, Progress, DEFAULT_STACK_SIZE,
};
pub use memory::{Filler, GlobalMemory};
pub use observer::{BarrierEvent, MemAccessKind, NoObserver, Observer, WarpSyncEvent, WarpSyncKind};
pub use schedule::Schedule;
