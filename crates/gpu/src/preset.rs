//! GPU presets: one JSON data file per GPU (`presets/*.json`), embedded in
//! the binary with `include_str!`, plus [`GpuPreset::from_file`] for a
//! user's own. A preset is the immutable *spec* half of the design's
//! spec/state/stats split: the occupancy calculator and the timing model read
//! it, nothing writes it.
//!
//! Units: bytes for memory sizes, 32-bit registers for register counts,
//! cycles of the SM clock for latencies. On AMD presets an "SM" is a compute
//! unit, a "scheduler" a SIMD, a "warp" a wavefront and "shared memory" the
//! LDS; the field names keep NVIDIA's words so that every consumer reads one
//! shape.

use serde::{Deserialize, Deserializer, Serialize};
use std::path::Path;

/// The largest latency a preset may give, in cycles.
pub const MAX_LATENCY_CYCLES: u32 = 100_000;

/// Who makes the GPU.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Vendor {
    Nvidia,
    Amd,
}

/// Which occupancy algorithm applies.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OccupancyRule {
    /// `cudaOccMaxActiveBlocksPerMultiprocessor` of `cuda_occupancy.h`.
    Cuda,
    /// LLVM AMDGPU (`AMDGPUBaseInfo.cpp`): waves per SIMD from VGPRs,
    /// work-groups per CU limited by barriers when they have several waves.
    Amdgpu,
}

/// Latencies in SM cycles, for the timing model. Where a figure was not
/// measured for this GPU the preset's `notes` say where it comes from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Latencies {
    /// Global load that hits in L1.
    pub l1_hit: u32,
    /// Shared-memory load without bank conflicts.
    pub shared: u32,
    /// Global load that misses L1 and hits L2.
    pub l2_hit: u32,
    /// Global load that misses L2.
    pub dram: u32,
    /// Dependent FFMA / FADD / IADD3.
    pub fma: u32,
    /// IMAD, FMNMX.
    pub imad: u32,
    /// HFMA2 (packed half).
    pub hfma2: u32,
    /// DFMA (double).
    pub dfma: u32,
    /// MUFU (transcendentals: ex2, lg2, rsqrt, sin, cos, rcp).
    pub mufu: u32,
    /// SHFL.
    pub shfl: u32,
    /// Shared-memory atomic without contention.
    pub shared_atomic: u32,
    /// Global atomic without contention.
    pub global_atomic: u32,
    /// `mma.sync.m16n8k16` f16 -> f32; `None` where unknown.
    pub mma: Option<u32>,
}

/// One GPU's parameters. See `presets/h200.json` for a commented example
/// (the `notes` field names the source of every figure).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuPreset {
    /// Short lowercase identifier (`h200`); [`GpuPreset::by_name`] accepts it.
    pub key: String,
    /// Marketing name (`NVIDIA H200 SXM`).
    pub name: String,
    /// Other names [`GpuPreset::by_name`] accepts (case-insensitive).
    #[serde(default)]
    pub aliases: Vec<String>,
    /// `sm_75`, `sm_80`, `sm_90`, `gfx942`.
    pub arch: String,
    pub vendor: Vendor,
    pub occupancy_rule: OccupancyRule,
    /// Lanes per warp: 32 on NVIDIA, 64 (wave64) on CDNA.
    pub warp_size: u32,
    /// SMs (NVIDIA) or CUs (AMD) on the chip.
    pub sm_count: u32,
    /// Warp schedulers (sub-partitions, SMSPs) per SM; SIMDs per CU on AMD.
    /// Warp `w` of an SM runs on scheduler `w % schedulers_per_sm`.
    pub schedulers_per_sm: u32,
    pub max_warps_per_sm: u32,
    /// Resident blocks per SM (hardware block slots).
    pub max_blocks_per_sm: u32,
    pub max_threads_per_block: u32,
    /// 32-bit registers per SM, split evenly over the schedulers.
    pub registers_per_sm: u32,
    /// Registers one block may hold (`regsPerBlock`), checked with the
    /// block's warps rounded up to a multiple of the schedulers.
    pub registers_per_block: u32,
    /// Registers one thread may use (255 on NVIDIA; 512 VGPR+AGPR on CDNA3).
    pub max_registers_per_thread: u32,
    /// Registers per warp are `regs_per_thread * warp_size` rounded up to
    /// this (256 on NVIDIA; 8 VGPRs x 64 lanes = 512 on CDNA3). Each warp's
    /// allocation comes from its own scheduler's share of the file.
    pub register_alloc_unit: u32,
    /// Shared memory per SM at the largest carve-out.
    pub shared_per_sm_max: u32,
    /// Carve-outs the L1/shared split can take, ascending, in bytes.
    pub shared_carveouts: Vec<u32>,
    /// Shared memory per block without opt-in (static + dynamic).
    pub shared_per_block_default: u32,
    /// Shared memory per block with `cudaFuncAttributeMaxDynamicSharedMemorySize`.
    pub shared_per_block_optin: u32,
    /// A block's shared memory is rounded up to a multiple of this.
    pub shared_granularity: u32,
    /// Shared memory the driver reserves per block (1 KB from Ampere on);
    /// counted in the block's allocation and added to the per-block limit.
    pub shared_reserved_per_block: u32,
    pub shared_banks: u32,
    pub shared_bank_bytes: u32,
    /// Named barriers a block can use (`bar.sync 0..15` on NVIDIA).
    pub max_barriers_per_block: u32,
    /// Barriers per SM for the barrier limit (`2 x max_blocks_per_sm` on
    /// cc >= 9.0, 16 per CU on CDNA3); `None` where there is no such limit.
    pub barriers_per_sm: Option<u32>,
    /// Unified L1 + shared data cache per SM (NVIDIA) or the vector L1 (AMD).
    pub l1_bytes: u64,
    pub l2_bytes: u64,
    /// Memory transaction unit (32-byte sectors on NVIDIA).
    pub sector_bytes: u32,
    /// Cache line.
    pub line_bytes: u32,
    pub dram_bandwidth_gbps: f64,
    /// SM clock used to convert cycles to time.
    pub clock_mhz: u32,
    pub fp32_lanes_per_subpartition: u32,
    pub sfu_lanes_per_subpartition: u32,
    pub ldst_units_per_subpartition: u32,
    /// L1 / shared-memory return bandwidth per SM.
    pub l1_bytes_per_cycle: u32,
    pub latencies: Latencies,
    /// SM cycles from launch to the first warp issuing plus teardown, as
    /// `sm__cycles_elapsed` counts them.
    pub launch_overhead_cycles: u32,
    /// Where the figures come from. In the file it may be a string or an
    /// array of lines (joined with spaces).
    #[serde(deserialize_with = "string_or_lines")]
    pub notes: String,
}

fn string_or_lines<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Notes {
        One(String),
        Lines(Vec<String>),
    }
    Ok(match Notes::deserialize(d)? {
        Notes::One(s) => s,
        Notes::Lines(v) => v.join(" "),
    })
}

/// Why a preset could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum PresetError {
    #[error("no GPU preset named `{name}`; known presets: {known}")]
    Unknown { name: String, known: String },
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("{origin}: line {line}, column {column}: {msg}")]
    Json { origin: String, line: usize, column: usize, msg: String },
    #[error("{origin}: {field}: {msg}")]
    Invalid { origin: String, field: &'static str, msg: String },
}

impl PresetError {
    /// A JSON error at its line and column of `origin`.
    pub fn json(origin: &str, e: &serde_json::Error) -> PresetError {
        PresetError::Json { origin: origin.to_string(), line: e.line(), column: e.column(), msg: e.to_string() }
    }
}

/// A preset file's text and its name for errors (what every preset format's `from_file` reads).
pub fn read_preset_file(path: &Path) -> Result<(String, String), PresetError> {
    let shown = path.display().to_string();
    let src = std::fs::read_to_string(path).map_err(|source| PresetError::Io { path: shown.clone(), source })?;
    Ok((src, shown))
}

/// The built-in GPUs' keys, each with the text of `presets/<key>.json` beside the
/// calling crate's `src/` (`include_str!` resolves the path where the macro is called):
/// one list for every crate that ships a file per built-in GPU (this one's presets,
/// `warpsim-timing`'s timing sections), so they cannot name different GPUs.
#[macro_export]
macro_rules! builtin_preset_files {
    () => {
        [
            ("t4", include_str!("../presets/t4.json")),
            ("a100", include_str!("../presets/a100.json")),
            ("h100", include_str!("../presets/h100.json")),
            ("h200", include_str!("../presets/h200.json")),
            ("mi300x", include_str!("../presets/mi300x.json")),
        ]
    };
}

/// `[(name, value), ...]` for the listed fields of `$s`, each named as a preset
/// file spells it (`$prefix` then the field's name): the lists that range checks
/// walk and report errors by, with each field written once.
#[macro_export]
macro_rules! preset_fields {
    ($prefix:literal, $s:expr => $($field:ident),+ $(,)?) => {
        [$((concat!($prefix, stringify!($field)), $s.$field)),+]
    };
}

/// The presets shipped with warpsim, in the order [`GpuPreset::names`] lists them.
const BUILTIN: [(&str, &str); 5] = builtin_preset_files!();

impl GpuPreset {
    /// Keys of the built-in presets: `t4`, `a100`, `h100`, `h200`, `mi300x`.
    pub fn names() -> Vec<&'static str> {
        BUILTIN.iter().map(|(k, _)| *k).collect()
    }

    /// All built-in presets.
    pub fn builtin() -> Vec<GpuPreset> {
        Self::parsed().to_vec()
    }

    /// The built-in presets, parsed once per process (a launch checks its
    /// limits against one, and parsing them all costs far more than a small launch).
    fn parsed() -> &'static [GpuPreset] {
        static PARSED: std::sync::OnceLock<Vec<GpuPreset>> = std::sync::OnceLock::new();
        PARSED.get_or_init(|| {
            BUILTIN
                .iter()
                .map(|(k, src)| Self::from_json_str(src, &format!("presets/{k}.json")).expect("built-in presets are valid"))
                .collect()
        })
    }

    /// A built-in preset by key or alias, case-insensitively: `h200`, `H200`,
    /// `h100`, `a100`, `t4`, `mi300x`, `cdna3`, `gfx942`, ...
    pub fn by_name(name: &str) -> Result<GpuPreset, PresetError> {
        Self::named(name).cloned()
    }

    /// [`GpuPreset::by_name`], borrowed from the parsed built-ins.
    pub fn named(name: &str) -> Result<&'static GpuPreset, PresetError> {
        let want = name.trim().to_ascii_lowercase();
        Self::parsed()
            .iter()
            .find(|p| p.key == want || p.aliases.iter().any(|a| a.to_ascii_lowercase() == want))
            .ok_or_else(|| PresetError::Unknown { name: name.to_string(), known: Self::names().join(", ") })
    }

    /// A user's preset file (same format as `presets/*.json`).
    pub fn from_file(path: impl AsRef<Path>) -> Result<GpuPreset, PresetError> {
        let (src, shown) = read_preset_file(path.as_ref())?;
        Self::from_json_str(&src, &shown)
    }

    /// Parses and validates a preset; `origin` names it in errors.
    pub fn from_json_str(src: &str, origin: &str) -> Result<GpuPreset, PresetError> {
        let p: GpuPreset = serde_json::from_str(src).map_err(|e| PresetError::json(origin, &e))?;
        p.validate(origin)?;
        Ok(p)
    }

    /// Checks the invariants the occupancy calculator and the engine rely on.
    pub fn validate(&self, origin: &str) -> Result<(), PresetError> {
        let bad = |field: &'static str, msg: String| Err(PresetError::Invalid { origin: origin.to_string(), field, msg });
        let positive: [(&'static str, u64); 14] = [
            ("warp_size", self.warp_size.into()),
            ("sm_count", self.sm_count.into()),
            ("schedulers_per_sm", self.schedulers_per_sm.into()),
            ("max_warps_per_sm", self.max_warps_per_sm.into()),
            ("max_blocks_per_sm", self.max_blocks_per_sm.into()),
            ("max_threads_per_block", self.max_threads_per_block.into()),
            ("registers_per_sm", self.registers_per_sm.into()),
            ("registers_per_block", self.registers_per_block.into()),
            ("max_registers_per_thread", self.max_registers_per_thread.into()),
            ("register_alloc_unit", self.register_alloc_unit.into()),
            ("shared_granularity", self.shared_granularity.into()),
            ("shared_banks", self.shared_banks.into()),
            ("shared_bank_bytes", self.shared_bank_bytes.into()),
            ("clock_mhz", self.clock_mhz.into()),
        ];
        for (field, v) in positive {
            if v == 0 {
                return bad(field, "must be greater than 0".into());
            }
        }
        if self.key.is_empty() || self.key != self.key.to_ascii_lowercase() {
            return bad("key", format!("`{}` must be a non-empty lowercase identifier", self.key));
        }
        if !matches!(self.warp_size, 32 | 64) {
            return bad("warp_size", format!("{} is not 32 or 64", self.warp_size));
        }
        if self.max_warps_per_sm % self.schedulers_per_sm != 0 {
            return bad(
                "max_warps_per_sm",
                format!("{} is not a multiple of schedulers_per_sm ({})", self.max_warps_per_sm, self.schedulers_per_sm),
            );
        }
        if self.registers_per_sm % self.schedulers_per_sm != 0 {
            return bad("registers_per_sm", "must split evenly over the schedulers".into());
        }
        if self.max_threads_per_block > self.max_warps_per_sm * self.warp_size {
            return bad("max_threads_per_block", "a full block would not fit on one SM".into());
        }
        if self.shared_carveouts.is_empty() {
            return bad("shared_carveouts", "needs at least one carve-out".into());
        }
        if self.shared_carveouts.windows(2).any(|w| w[0] >= w[1]) {
            return bad("shared_carveouts", "must be strictly ascending".into());
        }
        if *self.shared_carveouts.last().unwrap() != self.shared_per_sm_max {
            return bad("shared_carveouts", "the largest carve-out must equal shared_per_sm_max".into());
        }
        if self.shared_per_block_default > self.shared_per_block_optin {
            return bad("shared_per_block_default", "exceeds shared_per_block_optin".into());
        }
        if self.shared_per_block_optin as u64 + self.shared_reserved_per_block as u64 > self.shared_per_sm_max as u64 {
            return bad("shared_per_block_optin", "plus the reserved bytes exceeds shared_per_sm_max".into());
        }
        if self.barriers_per_sm == Some(0) {
            return bad("barriers_per_sm", "use null for no barrier limit".into());
        }
        if !(self.dram_bandwidth_gbps.is_finite() && self.dram_bandwidth_gbps > 0.0) {
            return bad("dram_bandwidth_gbps", "must be a positive number".into());
        }
        // Physical ranges: far beyond any GPU built, but bounded, so that a
        // typo (a latency of 10^9 cycles) is an error and not a timing run
        // that books a billion cycles of memory traffic.
        let l = &self.latencies;
        let latencies = preset_fields!("latencies.", l =>
            l1_hit, shared, l2_hit, dram, fma, imad, hfma2, dfma, mufu, shfl, shared_atomic, global_atomic);
        for (field, v) in latencies.into_iter().chain([("latencies.mma", l.mma.unwrap_or(1))]) {
            if !(1..=MAX_LATENCY_CYCLES).contains(&v) {
                return bad(field, format!("{v} cycles is outside 1..={MAX_LATENCY_CYCLES} (measured GPUs: 2 to about 1000)"));
            }
        }
        let ranges: [(&'static str, u64, u64); 9] = [
            ("sm_count", self.sm_count.into(), 4096),
            ("schedulers_per_sm", self.schedulers_per_sm.into(), 64),
            ("max_warps_per_sm", self.max_warps_per_sm.into(), 1024),
            ("max_blocks_per_sm", self.max_blocks_per_sm.into(), 1024),
            ("max_threads_per_block", self.max_threads_per_block.into(), 65536),
            ("registers_per_sm", self.registers_per_sm.into(), 1 << 24),
            ("clock_mhz", self.clock_mhz.into(), 100_000),
            ("shared_per_sm_max", self.shared_per_sm_max.into(), 1 << 30),
            ("launch_overhead_cycles", self.launch_overhead_cycles.into(), 100_000_000),
        ];
        for (field, v, max) in ranges {
            if v > max {
                return bad(field, format!("{v} is more than {max}, beyond any GPU"));
            }
        }
        if self.dram_bandwidth_gbps > 1e6 {
            return bad("dram_bandwidth_gbps", format!("{} GB/s is more than 10^6, beyond any GPU", self.dram_bandwidth_gbps));
        }
        Ok(())
    }

    /// Warp slots per scheduler (`max_warps_per_sm / schedulers_per_sm`).
    pub fn warp_slots_per_scheduler(&self) -> u32 {
        self.max_warps_per_sm / self.schedulers_per_sm
    }

    /// Registers in one scheduler's share of the register file.
    pub fn registers_per_scheduler(&self) -> u32 {
        self.registers_per_sm / self.schedulers_per_sm
    }

    /// Threads resident per SM at full occupancy.
    pub fn max_threads_per_sm(&self) -> u32 {
        self.max_warps_per_sm * self.warp_size
    }

    /// The word for a warp on this GPU (`warp`, or `wave` on AMD).
    pub fn warp_word(&self) -> &'static str {
        match self.vendor {
            Vendor::Nvidia => "warp",
            Vendor::Amd => "wave",
        }
    }

    /// The word for an SM on this GPU (`SM`, or `CU` on AMD).
    pub fn sm_word(&self) -> &'static str {
        match self.vendor {
            Vendor::Nvidia => "SM",
            Vendor::Amd => "CU",
        }
    }

    /// The word for a scheduler (`scheduler`, or `SIMD` on AMD).
    pub fn scheduler_word(&self) -> &'static str {
        match self.vendor {
            Vendor::Nvidia => "scheduler",
            Vendor::Amd => "SIMD",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_outside_physical_ranges_name_their_field() {
        let mut p = GpuPreset::by_name("h200").unwrap();
        p.latencies.dram = 1_000_000_000;
        let e = p.validate("mine.json").unwrap_err().to_string();
        assert!(e.contains("latencies.dram") && e.contains("1000000000"), "{e}");
        let mut p = GpuPreset::by_name("h200").unwrap();
        p.sm_count = 1 << 20;
        assert!(p.validate("mine.json").unwrap_err().to_string().contains("sm_count"));
        assert!(GpuPreset::builtin().iter().all(|p| p.validate("builtin").is_ok()));
    }

    #[test]
    fn built_in_presets_are_parsed_once() {
        let (a, b) = (GpuPreset::named("h200").unwrap(), GpuPreset::named(" H200 ").unwrap());
        assert!(std::ptr::eq(a, b), "a second look-up parsed the presets again");
        assert_eq!(GpuPreset::by_name("h200").unwrap(), *a);
        // A changed copy leaves the built-in as it was.
        let mut mine = GpuPreset::by_name("h200").unwrap();
        mine.sm_count = 1;
        assert_eq!(GpuPreset::named("h200").unwrap().sm_count, 132);
    }
}
