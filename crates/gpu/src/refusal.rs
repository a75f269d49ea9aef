//! Launches the driver refuses: the checks `cuLaunchKernel` makes against the
//! device before any block runs (block and grid dimensions, shared memory per
//! block with and without opt-in, registers per block), each answered with the
//! CUDA runtime's error name, so that warpsim refuses in every mode what a GPU
//! would refuse.

use crate::occupancy::{occupancy, OccupancyError, OccupancyInput};
use crate::preset::{GpuPreset, Vendor};

/// What a launch asks of the device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchRequest {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub static_shared_bytes: u32,
    pub dynamic_shared_bytes: u32,
    /// Registers per thread where known (a manifest's or ptxas's count).
    pub regs_per_thread: Option<u32>,
    /// `cudaFuncAttributeMaxDynamicSharedMemorySize` raised to the opt-in maximum.
    pub opt_in_shared: bool,
}

/// Why the driver would refuse a launch; the message starts with the runtime's error name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LaunchRefused {
    #[error("cudaErrorInvalidValue: block dimension {axis} is {size}, more than the {max} {gpu} allows")]
    BlockDim { gpu: String, axis: char, size: u32, max: u32 },
    #[error("cudaErrorInvalidValue: a block of {threads} threads is more than the {max} a block may have on {gpu}")]
    BlockTooLarge { gpu: String, threads: u64, max: u32 },
    #[error("cudaErrorInvalidValue: grid dimension {axis} is {size}, more than the {max} {gpu} allows")]
    GridDim { gpu: String, axis: char, size: u32, max: u32 },
    #[error(
        "cudaErrorInvalidValue: {bytes} bytes of shared memory per block ({static_bytes} static + {dynamic_bytes} dynamic) \
         is more than the {max} bytes a block may have on {gpu}, even with opt-in"
    )]
    SharedOverMax { gpu: String, bytes: u64, static_bytes: u32, dynamic_bytes: u32, max: u32 },
    #[error(
        "cudaErrorInvalidValue: {bytes} bytes of shared memory per block ({static_bytes} static + {dynamic_bytes} dynamic) \
         is more than the {default} bytes a block may have on {gpu} without opt-in; a kernel raises its limit (up to {max}) \
         with cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes): pass --opt-in to launch as if it had"
    )]
    SharedWithoutOptIn { gpu: String, bytes: u64, static_bytes: u32, dynamic_bytes: u32, default: u32, max: u32 },
    #[error("cudaErrorLaunchOutOfResources: {0}")]
    Resources(String),
}

impl LaunchRefused {
    /// The CUDA runtime's name of the error. CUDA 13 answers a block or grid
    /// over the limits with `cudaErrorInvalidValue` (recorded on the H200:
    /// `tests/programs/h200/runtime_api.stdout`), where older runtimes said
    /// `cudaErrorInvalidConfiguration`.
    pub fn error_name(&self) -> &'static str {
        match self {
            LaunchRefused::BlockDim { .. }
            | LaunchRefused::BlockTooLarge { .. }
            | LaunchRefused::GridDim { .. }
            | LaunchRefused::SharedOverMax { .. }
            | LaunchRefused::SharedWithoutOptIn { .. } => "cudaErrorInvalidValue",
            LaunchRefused::Resources(_) => "cudaErrorLaunchOutOfResources",
        }
    }
}

impl GpuPreset {
    /// Largest block dimensions (x, y, z): 1024, 1024, 64 on NVIDIA; 1024 each on AMD.
    pub fn max_block_dims(&self) -> [u32; 3] {
        match self.vendor {
            Vendor::Nvidia => [1024, 1024, 64],
            Vendor::Amd => [1024, 1024, 1024],
        }
    }

    /// Largest grid dimensions (x, y, z): 2^31 - 1, 65535, 65535 on NVIDIA
    /// (compute capability 3.0 on); 2^31 - 1 each on AMD (HIP's limits).
    pub fn max_grid_dims(&self) -> [u32; 3] {
        match self.vendor {
            Vendor::Nvidia => [i32::MAX as u32, 65535, 65535],
            Vendor::Amd => [i32::MAX as u32; 3],
        }
    }

    /// `Err` when the driver of this GPU would refuse the launch.
    pub fn check_launch(&self, r: &LaunchRequest) -> Result<(), LaunchRefused> {
        let gpu = self.name.clone();
        for (i, axis) in ['x', 'y', 'z'].into_iter().enumerate() {
            if r.block[i] > self.max_block_dims()[i] {
                return Err(LaunchRefused::BlockDim { gpu, axis, size: r.block[i], max: self.max_block_dims()[i] });
            }
        }
        let threads: u64 = r.block.iter().map(|&d| d as u64).product();
        if threads > self.max_threads_per_block as u64 {
            return Err(LaunchRefused::BlockTooLarge { gpu, threads, max: self.max_threads_per_block });
        }
        for (i, axis) in ['x', 'y', 'z'].into_iter().enumerate() {
            if r.grid[i] > self.max_grid_dims()[i] {
                return Err(LaunchRefused::GridDim { gpu, axis, size: r.grid[i], max: self.max_grid_dims()[i] });
            }
        }
        let bytes = r.static_shared_bytes as u64 + r.dynamic_shared_bytes as u64;
        let (static_bytes, dynamic_bytes) = (r.static_shared_bytes, r.dynamic_shared_bytes);
        if bytes > self.shared_per_block_optin as u64 {
            return Err(LaunchRefused::SharedOverMax { gpu, bytes, static_bytes, dynamic_bytes, max: self.shared_per_block_optin });
        }
        if !r.opt_in_shared && bytes > self.shared_per_block_default as u64 {
            let (default, max) = (self.shared_per_block_default, self.shared_per_block_optin);
            return Err(LaunchRefused::SharedWithoutOptIn { gpu, bytes, static_bytes, dynamic_bytes, default, max });
        }
        if let Some(regs) = r.regs_per_thread.filter(|&n| n > 0) {
            let input = OccupancyInput::new(threads as u32, regs).opt_in(true);
            match occupancy(self, &input) {
                Err(e @ OccupancyError::TooManyRegisters { .. }) => return Err(LaunchRefused::Resources(e.to_string())),
                Ok(o) if o.limits.registers == Some(0) => {
                    return Err(LaunchRefused::Resources(o.zero_reason.unwrap_or_else(|| "too many registers per block".into())))
                }
                _ => {}
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(block: [u32; 3], dynamic: u32) -> LaunchRequest {
        LaunchRequest {
            grid: [1, 1, 1],
            block,
            static_shared_bytes: 0,
            dynamic_shared_bytes: dynamic,
            regs_per_thread: None,
            opt_in_shared: false,
        }
    }

    #[test]
    fn the_driver_refuses_what_the_gpu_cannot_run() {
        let h200 = GpuPreset::by_name("h200").unwrap();
        assert_eq!(h200.check_launch(&req([1024, 1, 1], 48 << 10)), Ok(()));
        let e = h200.check_launch(&req([1025, 1, 1], 0)).unwrap_err();
        assert_eq!(e.error_name(), "cudaErrorInvalidValue", "{e}");
        assert!(matches!(h200.check_launch(&req([1, 1, 65], 0)), Err(LaunchRefused::BlockDim { axis: 'z', .. })));
        assert!(matches!(h200.check_launch(&req([64, 32, 1], 0)), Err(LaunchRefused::BlockTooLarge { threads: 2048, .. })));
        let e = h200.check_launch(&req([32, 1, 1], 1_000_000)).unwrap_err();
        assert!(matches!(e, LaunchRefused::SharedOverMax { .. }) && e.to_string().starts_with("cudaErrorInvalidValue"), "{e}");
        let e = h200.check_launch(&req([32, 1, 1], 100_000)).unwrap_err();
        assert!(matches!(e, LaunchRefused::SharedWithoutOptIn { .. }) && e.to_string().contains("--opt-in"), "{e}");
        assert_eq!(h200.check_launch(&LaunchRequest { opt_in_shared: true, ..req([32, 1, 1], 100_000) }), Ok(()));
        let grid = LaunchRequest { grid: [1, 65536, 1], ..req([32, 1, 1], 0) };
        assert!(matches!(h200.check_launch(&grid), Err(LaunchRefused::GridDim { axis: 'y', .. })));
        let regs = LaunchRequest { regs_per_thread: Some(255), ..req([1024, 1, 1], 0) };
        assert_eq!(h200.check_launch(&regs).unwrap_err().error_name(), "cudaErrorLaunchOutOfResources");
    }
}
