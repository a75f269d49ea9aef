//! GPU presets and the occupancy calculator.
//!
//! * [`GpuPreset`]: one GPU's limits, sizes and latencies, read from a JSON
//!   data file (`presets/{t4,a100,h100,h200,mi300x}.json` are built in;
//!   [`GpuPreset::from_file`] reads a user's own). [`GpuPreset::by_name`]
//!   accepts keys and aliases case-insensitively.
//! * [`occupancy()`]: blocks per SM for a kernel and launch shape, exactly as
//!   `cudaOccMaxActiveBlocksPerMultiprocessor` computes it on NVIDIA GPUs
//!   and as LLVM's AMDGPU backend does on CDNA3, with the limiting resource,
//!   every limit's value, the carve-out, and lanes lost to partial warps.
//!   [`Occupancy::render_text`] explains it in words and a picture of the
//!   warp slots; [`Occupancy`] serialises to JSON.
//!
//! ```
//! use warpsim_gpu::{occupancy, GpuPreset, Limiter, OccupancyInput};
//! let a100 = GpuPreset::by_name("A100").unwrap();
//! let o = occupancy(&a100, &OccupancyInput::new(256, 64)).unwrap();
//! assert_eq!((o.blocks_per_sm, o.warps_per_sm, o.limiter), (4, 32, Limiter::Registers));
//! assert_eq!(o.occupancy, 0.5);
//! ```

#![forbid(unsafe_code)]

pub mod occupancy;
pub mod preset;
pub mod refusal;
mod render;

pub use occupancy::{occupancy, Limiter, Limits, Occupancy, OccupancyError, OccupancyInput, PartialWarps};
pub use preset::{read_preset_file, GpuPreset, Latencies, OccupancyRule, PresetError, Vendor};
pub use refusal::{LaunchRefused, LaunchRequest};
pub use render::WIDTH as RENDER_WIDTH;
