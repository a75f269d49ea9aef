//! Theoretical occupancy: how many blocks of a kernel fit on one SM at once.
//!
//! For NVIDIA presets this is `cudaOccMaxActiveBlocksPerMultiprocessor` of
//! `cuda_occupancy.h` (CUDA 12.2.1), step for step, with the default cache
//! configuration and partitioned global caching off:
//!
//! ```text
//! W         = ceil(block / warp_size)                       warps per block
//! warps     = max_warps_per_sm / W
//! blocks    = max_blocks_per_sm
//! regsWarp  = roundUp(regs * warp_size, register_alloc_unit)
//! registers = 0 if regsWarp * roundUp(W, schedulers) > registers_per_block
//!             else ((registers_per_sm / schedulers) / regsWarp * schedulers) / W
//! smemBlock = roundUp(static + dynamic + reserved, shared_granularity)
//! shared    = 0 if smemBlock > per-block limit (default or opt-in) + reserved
//!             else carve-out / smemBlock   (unlimited when smemBlock == 0)
//! carve-out = the preferred carve-out (100% of shared_per_sm_max unless a
//!             percentage is given, aligned up to a supported size), or the
//!             smallest supported size >= smemBlock when that is larger
//! barriers  = barriers_per_sm / barriers_per_block   (cc >= 9.0 only)
//! blocks/SM = min of the five
//! ```
//!
//! For AMD presets (`occupancy_rule: amdgpu`) the same shape carries the LLVM
//! AMDGPU rule (`AMDGPUBaseInfo.cpp`, gfx942): a wave64 needs
//! `roundUp(vgprs, 8) * 64` registers of its SIMD's 512 x 64, at most 8 waves
//! per SIMD, LDS in 512-byte granules out of 64 KiB, and a work-group of more
//! than one wave takes one of the CU's 16 barriers (single-wave groups take
//! none, so `barriers_per_block` is ignored there).
//!
//! What is an error and what is "0 blocks": the driver answers 0 when a
//! launch does not fit the current configuration, and so does
//! [`occupancy`]: registers for the whole block above `registers_per_block`,
//! or shared memory above the 48 KB default per-block limit when the kernel
//! did not opt in. [`OccupancyError`] is for what no configuration of the GPU
//! can run: an empty block, a block above `max_threads_per_block`, more
//! registers per thread than the ISA has, shared memory above the opt-in
//! maximum, or more named barriers than a block can have.

use crate::preset::{GpuPreset, OccupancyRule};
use serde::{Deserialize, Serialize};

/// What a launch asks of one SM.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct OccupancyInput {
    /// Threads per block (x * y * z).
    pub block_threads: u32,
    /// Registers per thread as ptxas allocated them (`cudaFuncAttributes::numRegs`);
    /// VGPRs (with AGPRs) per lane on AMD.
    pub regs_per_thread: u32,
    /// `.shared` bytes declared in the kernel.
    pub static_shared_bytes: u32,
    /// Dynamic shared memory of the launch.
    pub dynamic_shared_bytes: u32,
    /// Named barriers the kernel uses (`cudaFuncAttributes` counts 1 for a
    /// kernel with only `__syncthreads`). Default 1.
    pub barriers_per_block: u32,
    /// Whether the kernel raised `cudaFuncAttributeMaxDynamicSharedMemorySize`
    /// to the opt-in maximum (otherwise static + dynamic is limited to
    /// `shared_per_block_default`).
    pub opt_in_shared: bool,
    /// `cudaFuncAttributePreferredSharedMemoryCarveout` in percent of
    /// `shared_per_sm_max`; `None` is the driver's default (the largest
    /// carve-out).
    pub shared_carveout_percent: Option<u32>,
}

impl Default for OccupancyInput {
    fn default() -> Self {
        OccupancyInput {
            block_threads: 0,
            regs_per_thread: 0,
            static_shared_bytes: 0,
            dynamic_shared_bytes: 0,
            barriers_per_block: 1,
            opt_in_shared: false,
            shared_carveout_percent: None,
        }
    }
}

impl OccupancyInput {
    /// A block of `block_threads` threads with `regs_per_thread` registers,
    /// no shared memory, one barrier, no opt-in.
    pub fn new(block_threads: u32, regs_per_thread: u32) -> Self {
        OccupancyInput { block_threads, regs_per_thread, ..Default::default() }
    }

    /// Sets static and dynamic shared memory.
    pub fn shared(mut self, static_bytes: u32, dynamic_bytes: u32) -> Self {
        self.static_shared_bytes = static_bytes;
        self.dynamic_shared_bytes = dynamic_bytes;
        self
    }

    pub fn barriers(mut self, n: u32) -> Self {
        self.barriers_per_block = n;
        self
    }

    pub fn opt_in(mut self, yes: bool) -> Self {
        self.opt_in_shared = yes;
        self
    }

    pub fn carveout_percent(mut self, pct: u32) -> Self {
        self.shared_carveout_percent = Some(pct);
        self
    }
}

/// The resource that bounds blocks per SM. Ties are resolved in the order
/// `cuda_occupancy.h` sets its `limitingFactors` bits: warps, registers,
/// shared memory, blocks, barriers (all tied ones are in
/// [`Occupancy::limiters`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Limiter {
    Warps,
    Registers,
    SharedMemory,
    Blocks,
    Barriers,
}

impl Limiter {
    /// Tie-break order (see the type's documentation).
    pub const ORDER: [Limiter; 5] = [Limiter::Warps, Limiter::Registers, Limiter::SharedMemory, Limiter::Blocks, Limiter::Barriers];

    /// The JSON name: `warps`, `registers`, `shared_memory`, `blocks`, `barriers`.
    pub fn as_str(self) -> &'static str {
        match self {
            Limiter::Warps => "warps",
            Limiter::Registers => "registers",
            Limiter::SharedMemory => "shared_memory",
            Limiter::Blocks => "blocks",
            Limiter::Barriers => "barriers",
        }
    }

    /// Nsight Compute's metric for this limit.
    pub fn ncu_metric(self) -> &'static str {
        match self {
            Limiter::Warps => "launch__occupancy_limit_warps",
            Limiter::Registers => "launch__occupancy_limit_registers",
            Limiter::SharedMemory => "launch__occupancy_limit_shared_mem",
            Limiter::Blocks => "launch__occupancy_limit_blocks",
            Limiter::Barriers => "launch__occupancy_limit_barriers",
        }
    }

    fn words(self) -> &'static str {
        match self {
            Limiter::Warps => "warps",
            Limiter::Registers => "registers",
            Limiter::SharedMemory => "shared memory",
            Limiter::Blocks => "blocks",
            Limiter::Barriers => "barriers",
        }
    }
}

impl std::fmt::Display for Limiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.words())
    }
}

/// Blocks per SM each resource alone would allow; `None` means that resource
/// sets no limit (no registers, no shared memory, no barrier rule).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Limits {
    pub warps: u32,
    pub blocks: u32,
    pub registers: Option<u32>,
    pub shared_memory: Option<u32>,
    pub barriers: Option<u32>,
}

impl Limits {
    pub fn get(&self, l: Limiter) -> Option<u32> {
        match l {
            Limiter::Warps => Some(self.warps),
            Limiter::Blocks => Some(self.blocks),
            Limiter::Registers => self.registers,
            Limiter::SharedMemory => self.shared_memory,
            Limiter::Barriers => self.barriers,
        }
    }
}

/// Lanes lost to a block size that is not a multiple of the warp size: the
/// last warp still takes a whole warp slot (and a whole warp's registers).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PartialWarps {
    /// Idle lanes in each block's last warp (block of 100 on NVIDIA: 28).
    pub idle_lanes_per_block: u32,
    /// The same over all resident blocks of an SM.
    pub idle_lanes_per_sm: u32,
    /// Partially filled warps per SM (one per resident block, or 0).
    pub partial_warps_per_sm: u32,
}

/// The calculator's answer, with every intermediate a report needs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Occupancy {
    /// Preset key (`h200`).
    pub gpu: String,
    pub input: OccupancyInput,
    pub blocks_per_sm: u32,
    pub warps_per_block: u32,
    pub warps_per_sm: u32,
    pub max_warps_per_sm: u32,
    pub threads_per_sm: u32,
    /// `warps_per_sm / max_warps_per_sm`, 0..=1 (Nsight Compute's
    /// `sm__maximum_warps_per_active_cycle_pct` / 100).
    pub occupancy: f64,
    /// The binding limit (first of the tied ones in [`Limiter::ORDER`]).
    pub limiter: Limiter,
    /// Every limit equal to `blocks_per_sm`, in [`Limiter::ORDER`].
    pub limiters: Vec<Limiter>,
    pub limits: Limits,
    /// Registers allocated per warp: `roundUp(regs * warp_size, register_alloc_unit)`.
    pub registers_per_warp: u32,
    /// Registers allocated per block (`registers_per_warp * warps_per_block`).
    pub registers_per_block: u32,
    /// Warps one scheduler's share of the register file holds (`None`: no registers).
    pub register_warps_per_scheduler: Option<u32>,
    /// Shared memory allocated per block: static + dynamic + reserved, rounded up.
    pub shared_per_block: u32,
    /// Per-block shared-memory limit in force (default or opt-in, plus reserved).
    pub shared_per_block_limit: u32,
    /// The L1/shared carve-out the driver would pick for this kernel.
    pub shared_carveout_bytes: u32,
    pub partial_warps: PartialWarps,
    /// Why no block fits, when `blocks_per_sm` is 0.
    pub zero_reason: Option<String>,
}

/// A launch no configuration of the GPU can run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OccupancyError {
    #[error("a block must have at least one thread")]
    EmptyBlock,
    #[error("a block of {threads} threads is larger than the {max} threads a block may have on {gpu}")]
    BlockTooLarge { gpu: String, threads: u32, max: u32 },
    #[error("{regs} registers per thread is more than the {max} a thread can address on {gpu}")]
    TooManyRegisters { gpu: String, regs: u32, max: u32 },
    #[error(
        "{bytes} bytes of shared memory per block ({static_bytes} static + {dynamic_bytes} dynamic) is more \
         than the {max} bytes a block can have on {gpu} even with opt-in"
    )]
    SharedTooLarge { gpu: String, bytes: u64, static_bytes: u32, dynamic_bytes: u32, max: u32 },
    #[error("{barriers} named barriers per block is more than the {max} a block can use on {gpu}")]
    TooManyBarriers { gpu: String, barriers: u32, max: u32 },
    #[error("shared-memory carve-out preference {pct}% is not a percentage (0..=100)")]
    BadCarveout { pct: u32 },
}

fn round_up(x: u64, unit: u64) -> u64 {
    if unit == 0 {
        x
    } else {
        x.div_ceil(unit) * unit
    }
}

/// `cudaOccAlignUpShmemSizeVoltaPlus`: the smallest supported carve-out that
/// holds `size` (0 stays 0 where 0 is supported).
fn align_carveout(preset: &GpuPreset, size: u64) -> Option<u32> {
    preset.shared_carveouts.iter().copied().find(|&c| c as u64 >= size)
}

/// Blocks of `input` that fit on one SM of `preset` at once, and why.
pub fn occupancy(preset: &GpuPreset, input: &OccupancyInput) -> Result<Occupancy, OccupancyError> {
    let gpu = preset.key.clone();
    let b = input.block_threads;
    if b == 0 {
        return Err(OccupancyError::EmptyBlock);
    }
    if b > preset.max_threads_per_block {
        return Err(OccupancyError::BlockTooLarge { gpu, threads: b, max: preset.max_threads_per_block });
    }
    if input.regs_per_thread > preset.max_registers_per_thread {
        return Err(OccupancyError::TooManyRegisters { gpu, regs: input.regs_per_thread, max: preset.max_registers_per_thread });
    }
    let amd = preset.occupancy_rule == OccupancyRule::Amdgpu;
    if !amd && input.barriers_per_block > preset.max_barriers_per_block {
        return Err(OccupancyError::TooManyBarriers { gpu, barriers: input.barriers_per_block, max: preset.max_barriers_per_block });
    }
    if let Some(pct) = input.shared_carveout_percent {
        if pct > 100 {
            return Err(OccupancyError::BadCarveout { pct });
        }
    }
    let ws = preset.warp_size;
    let sched = preset.schedulers_per_sm;
    let w = b.div_ceil(ws);
    let mut zero_reason = None;

    // Warps and block slots.
    let lim_warps = preset.max_warps_per_sm / w;
    let lim_blocks = preset.max_blocks_per_sm;

    // Registers (cudaOccMaxBlocksPerSMRegsLimit, partitioned GC off).
    let regs_warp = round_up(input.regs_per_thread as u64 * ws as u64, preset.register_alloc_unit as u64);
    let regs_block = regs_warp * w as u64;
    let regs_assumed = regs_warp * round_up(w as u64, sched as u64);
    let (lim_regs, reg_warps_per_sched) = if let Some(per_sched) = (preset.registers_per_scheduler() as u64).checked_div(regs_warp) {
        if regs_assumed > preset.registers_per_block as u64 || regs_block > preset.registers_per_block as u64 {
            zero_reason = Some(format!(
                "{} regs/thread x {ws} lanes = {regs_warp} per {} (after rounding), and the check \
                 counts {} {}s (a block's {w} rounded up to a multiple of {sched}): {regs_assumed} registers, \
                 over the {} a block may hold",
                input.regs_per_thread,
                preset.warp_word(),
                round_up(w as u64, sched as u64),
                preset.warp_word(),
                preset.registers_per_block
            ));
            (Some(0), Some(per_sched as u32))
        } else {
            (Some(((per_sched * sched as u64) / w as u64) as u32), Some(per_sched as u32))
        }
    } else {
        (None, None) // no registers: no limit
    };

    // Shared memory (cudaOccMaxBlocksPerSMSmemLimit).
    let user_bytes = input.static_shared_bytes as u64 + input.dynamic_shared_bytes as u64;
    let reserved = preset.shared_reserved_per_block as u64;
    let smem_blk = round_up(user_bytes + reserved, preset.shared_granularity as u64);
    let optin_limit = preset.shared_per_block_optin as u64 + reserved;
    if user_bytes > preset.shared_per_block_optin as u64 || smem_blk > optin_limit {
        return Err(OccupancyError::SharedTooLarge {
            gpu,
            bytes: user_bytes,
            static_bytes: input.static_shared_bytes,
            dynamic_bytes: input.dynamic_shared_bytes,
            max: preset.shared_per_block_optin,
        });
    }
    let per_block_limit = if input.opt_in_shared { optin_limit } else { preset.shared_per_block_default as u64 + reserved };
    let preference = {
        let pct = input.shared_carveout_percent.unwrap_or(100) as u64;
        let want = pct * preset.shared_per_sm_max as u64 / 100;
        align_carveout(preset, want).unwrap_or(preset.shared_per_sm_max)
    };
    let (lim_smem, carveout) = if smem_blk > per_block_limit {
        if zero_reason.is_none() {
            zero_reason = Some(format!(
                "the block needs {smem_blk} bytes ({} static + {} dynamic + {reserved} reserved, \
                 rounded up to {}), over the {} bytes a block may have without opting in \
                 (cudaFuncAttributeMaxDynamicSharedMemorySize allows up to {})",
                input.static_shared_bytes,
                input.dynamic_shared_bytes,
                preset.shared_granularity,
                preset.shared_per_block_default,
                preset.shared_per_block_optin
            ));
        }
        (Some(0), preference)
    } else {
        let carve =
            if preference as u64 >= smem_blk { preference } else { align_carveout(preset, smem_blk).unwrap_or(preset.shared_per_sm_max) };
        // No shared memory at all: no limit.
        ((carve as u64).checked_div(smem_blk).map(|b| b as u32), carve)
    };

    // Barriers (cudaOccMaxBlocksPerSMBlockBarrierLimit on cc >= 9; one
    // hardware barrier per multi-wave work-group on AMD).
    let barriers_used = if amd { u32::from(w > 1) } else { input.barriers_per_block };
    let lim_bars = match preset.barriers_per_sm {
        Some(n) if barriers_used > 0 => Some(n / barriers_used),
        _ => None,
    };

    let limits = Limits { warps: lim_warps, blocks: lim_blocks, registers: lim_regs, shared_memory: lim_smem, barriers: lim_bars };
    let blocks = Limiter::ORDER.iter().filter_map(|&l| limits.get(l)).min().unwrap_or(0);
    let limiters: Vec<Limiter> = Limiter::ORDER.iter().copied().filter(|&l| limits.get(l) == Some(blocks)).collect();
    let limiter = limiters[0];
    if blocks == 0 && zero_reason.is_none() {
        zero_reason = Some("no block fits".to_string());
    }
    let warps_per_sm = blocks * w;
    let idle_lanes_per_block = w * ws - b;
    Ok(Occupancy {
        gpu,
        input: input.clone(),
        blocks_per_sm: blocks,
        warps_per_block: w,
        warps_per_sm,
        max_warps_per_sm: preset.max_warps_per_sm,
        threads_per_sm: blocks * b,
        occupancy: warps_per_sm as f64 / preset.max_warps_per_sm as f64,
        limiter,
        limiters,
        limits,
        registers_per_warp: regs_warp as u32,
        registers_per_block: regs_block as u32,
        register_warps_per_scheduler: reg_warps_per_sched,
        shared_per_block: smem_blk as u32,
        shared_per_block_limit: per_block_limit as u32,
        shared_carveout_bytes: carveout,
        partial_warps: PartialWarps {
            idle_lanes_per_block,
            idle_lanes_per_sm: idle_lanes_per_block * blocks,
            partial_warps_per_sm: if idle_lanes_per_block > 0 { blocks } else { 0 },
        },
        zero_reason,
    })
}

impl Occupancy {
    /// JSON (the `limiter` is lowercase: `warps`, `blocks`, `registers`,
    /// `shared_memory`, `barriers`).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("occupancy serialises")
    }

    /// Whether warp slot `slot` of scheduler `sched` holds a warp of a
    /// resident block: `Some(true)` a full warp, `Some(false)` a partial one.
    /// Warps are numbered block by block and warp `w` runs on scheduler
    /// `w % schedulers`.
    pub fn slot(&self, preset: &GpuPreset, sched: u32, slot: u32) -> Option<bool> {
        let warp = slot * preset.schedulers_per_sm + sched;
        if warp >= self.warps_per_sm {
            return None;
        }
        let last_in_block = warp % self.warps_per_block == self.warps_per_block - 1;
        Some(!(last_in_block && self.partial_warps.idle_lanes_per_block > 0))
    }

    /// A plain-words explanation, at most 100 columns wide, with a picture
    /// of the SM's warp slots (one row per scheduler: `#` a warp of a
    /// resident block with every lane, `+` a partial warp, `.` a free slot).
    pub fn render_text(&self, preset: &GpuPreset) -> String {
        crate::render::render(self, preset)
    }
}
