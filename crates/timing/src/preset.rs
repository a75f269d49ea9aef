//! The timing model's view of a GPU: a [`GpuPreset`] (limits, sizes,
//! latencies, the occupancy rule; from `warpsim-gpu`) plus the parameters
//! only a cycle model needs ([`TimingParams`]: pipe widths, queue depths,
//! bandwidths, the scheduler policy).
//!
//! Presets are data files. The built-in ones are the five GPU presets of
//! `warpsim-gpu` with the timing sections in `crates/timing/presets/*.json`.
//! A user's preset (`--gpu FILE`) is a `warpsim-gpu` preset file with an
//! optional `"timing": { ... }` object; fields missing from it take the
//! built-in values of the preset with the same `key`, or, for a new GPU,
//! values derived from the preset itself ([`TimingParams::derived`]).

use serde::{Deserialize, Serialize};
use std::path::Path;
use warpsim_gpu::{GpuPreset, PresetError, Vendor};

/// How a sub-partition picks among its eligible warps.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SchedulerPolicy {
    /// Greedy-then-oldest: keep issuing the warp that issued last while it
    /// can, otherwise the oldest eligible warp.
    Gto,
    /// Loose round-robin: the next eligible warp after the one that issued last.
    Lrr,
}

/// Parameters of the cycle model that a [`GpuPreset`] does not carry.
/// Cycles are SM cycles; "lanes" are per sub-partition (a warp instruction
/// occupies a pipe for `warp_size / lanes` cycles).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TimingParams {
    pub scheduler: SchedulerPolicy,
    /// INT32 lanes (IADD3, LOP3, shifts, compares, IMAD on the FMA-heavy half).
    pub int_lanes: f64,
    /// FP64 lanes (DFMA, DADD, DMUL); fractions are allowed (T4: 2 per SM).
    pub fp64_lanes: f64,
    /// Conversion (I2F/F2I/F2F) lanes.
    pub conversion_lanes: f64,
    /// Cycles a `mma.sync` occupies the tensor pipe of its sub-partition.
    pub tensor_cycles: u32,
    /// Latency of integer/logic ALU results (IADD3, LOP3, ISETP, SEL).
    pub alu_latency: u32,
    /// Latency of conversions (I2F, F2I, F2F).
    pub conversion_latency: u32,
    /// `S2R`: reading `%tid`, `%ctaid`, `%laneid`, ... (variable latency, short scoreboard).
    pub special_register_latency: u32,
    /// `CS2R`: reading the clock.
    pub clock_latency: u32,
    /// Latency of `vote`, `activemask`, `elect`.
    pub vote_latency: u32,
    /// Latency of `match.any/all.sync` (serialised in the MIO unit).
    pub match_latency: u32,
    /// Cycles a warp waits after a taken or divergent branch before it issues again.
    pub branch_cycles: u32,
    /// Cycles from the last warp arriving at a barrier to the waiting warps issuing again.
    pub barrier_latency: u32,
    /// Instructions each sub-partition may have waiting for the shared-memory
    /// (MIO) pipe before it stops issuing to it (`mio_throttle`).
    pub mio_queue_depth: u32,
    /// Instructions each sub-partition may have waiting for the L1 (LSU)
    /// pipe before it stops issuing to it (`lg_throttle`).
    pub lsu_queue_depth: u32,
    /// Shared-memory wavefronts (bank passes) per cycle per SM; shuffles take one.
    pub shared_wavefronts_per_cycle: u32,
    /// L1 tag lookups (distinct 128-byte lines) per cycle per SM.
    pub l1_lines_per_cycle: u32,
    /// L1 associativity.
    pub l1_ways: u32,
    /// L1 capacity when the shared-memory carve-out leaves less (bytes).
    pub l1_min_bytes: u64,
    /// L2 associativity.
    pub l2_ways: u32,
    /// Aggregate L2 bandwidth in bytes per SM cycle (all slices).
    pub l2_bytes_per_cycle: f64,
    /// Bandwidth of one SM's port to the L2 in bytes per cycle.
    pub l2_port_bytes_per_cycle: f64,
    /// L2 miss latency as the SM sees it, overriding `latencies.dram` when set
    /// (the H200 corpus runs with cold caches show about 690 cycles).
    pub dram_latency: Option<u32>,
    /// Fraction of the theoretical DRAM bandwidth that streams reach.
    pub dram_efficiency: f64,
    /// Bytes DRAM returns per L2 miss (HBM: 64, two sectors).
    pub dram_fetch_bytes: u32,
    /// Extra L2-miss latency, in cycles, when DRAM has been fully busy for
    /// the last few hundred cycles; in proportion to that load below it
    /// (queues in the memory controllers). 0: latency does not grow with load.
    pub dram_queue_cycles: f64,
    /// Cycles from the kernel starting to the first wave of blocks issuing.
    pub block_launch_cycles: u32,
    /// Cycles from a block finishing to the next block's warps issuing on
    /// that SM (the block scheduler learns of the free slot, dispatches, and
    /// the SM sets the block up).
    pub block_replace_cycles: u32,
    /// Cycles between the starts of a block's warps: the SM starts one warp
    /// per sub-partition in turn, this many cycles apart, the block's last
    /// group of sub-partition-many warps first (0: all warps start together).
    pub warp_launch_cycles: u32,
    /// Cycles between the block scheduler's successive block dispatches to
    /// the same SM in the first wave.
    pub block_dispatch_cycles: u32,
    /// The compiler model: ptxas unrolls innermost single-block loops without
    /// `.pragma "nounroll"` at most this many times, so their loop control
    /// (induction step, compare, branch) issues once per unrolled iteration.
    /// 1 turns it off.
    pub loop_unroll: u32,
    /// ... until the unrolled body holds about this many instructions.
    pub unroll_budget: u32,
    /// The L1's traffic with the L2, per instruction: cycles of the SM's
    /// load/store pipe per 128-byte line and per 32-byte sector that a load
    /// misses in the L1 for ...
    pub l2_load_line_cycles: f64,
    pub l2_load_sector_cycles: f64,
    /// ... and that a store writes through to the L2 (partial sectors as whole ones).
    pub l2_store_line_cycles: f64,
    pub l2_store_sector_cycles: f64,
    /// Atomic units of the L2 (one per slice): each performs one sector's
    /// atomic operation per `atomic_unit_cycles`; lanes of one request on the
    /// same word are separate operations, lanes on distinct words of a sector
    /// one.
    pub l2_atomic_units: u32,
    /// Bytes of consecutive addresses that go to one atomic unit.
    pub l2_atomic_chunk_bytes: u32,
    /// How chunks are spread over the units. With `l2_atomic_window_units`
    /// 0 they are taken in turn (chunk index modulo the units). Otherwise the
    /// chunks of each `l2_atomic_window_bytes` window fold by XOR onto that
    /// many units (a power of two), and each next window starts that many
    /// units further on: a hot set within one window reaches only those units.
    pub l2_atomic_window_bytes: u32,
    pub l2_atomic_window_units: u32,
    /// Cycles an atomic unit takes per operation (integer or float).
    pub atomic_unit_cycles: f64,
    /// Cycles between two float operations on the same word (a longer
    /// read-modify-write; integer ones follow each other at the unit's rate).
    pub atomic_float_word_cycles: f64,
    /// Shared-memory float atomics are compare-and-swap loops: cycles per lane
    /// on one address (each round lets one lane through) ...
    pub shared_cas_cycles: u32,
    /// ... and per extra bank wavefront of one instruction.
    pub shared_cas_conflict_cycles: u32,
    /// A `.func` call (`CALL`) and its return (`RET`): cycles the warp waits
    /// after each before its next instruction ...
    pub call_latency: u32,
    /// ... SASS instructions each stands for (argument moves included) ...
    pub call_slots: u32,
    /// ... and cycles its sub-partition issues nothing (instruction fetch redirect).
    pub call_fetch_cycles: u32,
    /// Cycles a barrier's release takes per warp of the block, beyond `barrier_latency`.
    pub barrier_cycles_per_warp: f64,
    /// Cycles of one timing quantum: SMs are simulated in turn up to a common
    /// time, so the shared L2 and DRAM see requests at most this far out of
    /// time order (bandwidth is booked in time buckets, so order matters
    /// little); longer quanta keep an SM's warps in the host's caches.
    pub quantum_cycles: u32,
}

impl Default for TimingParams {
    fn default() -> Self {
        TimingParams {
            scheduler: SchedulerPolicy::Gto,
            int_lanes: 16.0,
            fp64_lanes: 16.0,
            conversion_lanes: 16.0,
            tensor_cycles: 16,
            alu_latency: 4,
            conversion_latency: 6,
            special_register_latency: 23,
            clock_latency: 6,
            vote_latency: 5,
            match_latency: 64,
            branch_cycles: 0,
            barrier_latency: 20,
            mio_queue_depth: 16,
            lsu_queue_depth: 16,
            shared_wavefronts_per_cycle: 1,
            l1_lines_per_cycle: 1,
            l1_ways: 4,
            l1_min_bytes: 16384,
            l2_ways: 16,
            l2_bytes_per_cycle: 2800.0,
            l2_port_bytes_per_cycle: 64.0,
            dram_latency: None,
            dram_efficiency: 0.9,
            dram_fetch_bytes: 64,
            dram_queue_cycles: 0.0,
            block_launch_cycles: 100,
            block_replace_cycles: 300,
            block_dispatch_cycles: 0,
            warp_launch_cycles: 0,
            loop_unroll: 4,
            unroll_budget: 16,
            l2_load_line_cycles: 0.0,
            l2_load_sector_cycles: 0.0,
            l2_store_line_cycles: 0.0,
            l2_store_sector_cycles: 0.0,
            l2_atomic_units: 64,
            l2_atomic_chunk_bytes: 1024,
            l2_atomic_window_bytes: 32768,
            l2_atomic_window_units: 0,
            atomic_unit_cycles: 1.5,
            atomic_float_word_cycles: 3.5,
            shared_cas_cycles: 96,
            shared_cas_conflict_cycles: 18,
            call_latency: 28,
            call_slots: 2,
            call_fetch_cycles: 4,
            barrier_cycles_per_warp: 0.0,
            quantum_cycles: 512,
        }
    }
}

impl TimingParams {
    /// Values for a GPU without a built-in timing section, from its preset.
    pub fn derived(p: &GpuPreset) -> TimingParams {
        let mut t = TimingParams { int_lanes: (p.fp32_lanes_per_subpartition as f64 / 2.0).max(1.0), ..Default::default() };
        t.fp64_lanes = t.int_lanes;
        t.conversion_lanes = p.sfu_lanes_per_subpartition.max(1) as f64 * 4.0;
        if p.vendor == Vendor::Amd {
            t.scheduler = SchedulerPolicy::Lrr;
            t.loop_unroll = 1;
        }
        t
    }

    fn check(&self, origin: &str) -> Result<(), PresetError> {
        let bad = |field: &'static str, msg: &str| Err(PresetError::Invalid { origin: origin.to_string(), field, msg: msg.to_string() });
        let positive = warpsim_gpu::preset_fields!("timing.", self =>
            int_lanes, fp64_lanes, conversion_lanes, l2_bytes_per_cycle, l2_port_bytes_per_cycle, dram_efficiency,
            atomic_unit_cycles, atomic_float_word_cycles);
        for (f, v) in positive {
            if !(v.is_finite() && v > 0.0) {
                return bad(f, "must be a positive number");
            }
        }
        if !(self.dram_queue_cycles.is_finite() && (0.0..=1e6).contains(&self.dram_queue_cycles)) {
            return bad("timing.dram_queue_cycles", "must be a number of cycles from 0 to 1000000");
        }
        if self.dram_efficiency > 1.0 {
            return bad("timing.dram_efficiency", "is a fraction of the peak (at most 1)");
        }
        let at_least_one = warpsim_gpu::preset_fields!("timing.", self =>
            l1_ways, l2_ways, shared_wavefronts_per_cycle, l1_lines_per_cycle, loop_unroll, quantum_cycles, mio_queue_depth,
            lsu_queue_depth, l2_atomic_units, l2_atomic_chunk_bytes);
        for (f, v) in at_least_one {
            if v == 0 {
                return bad(f, "must be at least 1");
            }
        }
        let l2_costs = warpsim_gpu::preset_fields!("timing.", self =>
            l2_load_line_cycles, l2_load_sector_cycles, l2_store_line_cycles, l2_store_sector_cycles);
        for (f, v) in l2_costs {
            if !(v.is_finite() && (0.0..=1000.0).contains(&v)) {
                return bad(f, "must be a number of cycles from 0 to 1000");
            }
        }
        if !(self.barrier_cycles_per_warp.is_finite() && (0.0..=1000.0).contains(&self.barrier_cycles_per_warp)) {
            return bad("timing.barrier_cycles_per_warp", "must be a number of cycles from 0 to 1000");
        }
        if self.l2_atomic_window_units != 0 {
            let w = self.l2_atomic_window_units;
            if !w.is_power_of_two() || w > self.l2_atomic_units {
                return bad("timing.l2_atomic_window_units", "must be 0 (no windows) or a power of two up to l2_atomic_units");
            }
            let (wb, cb) = (self.l2_atomic_window_bytes, self.l2_atomic_chunk_bytes);
            if cb == 0 || wb < cb || wb % cb != 0 || !(wb / cb).is_power_of_two() {
                return bad("timing.l2_atomic_window_bytes", "must be a power-of-two multiple of l2_atomic_chunk_bytes");
            }
        }
        if self.atomic_unit_cycles > 1e6 || self.atomic_float_word_cycles > 1e6 {
            return bad("timing.atomic_unit_cycles", "is outside the physical range");
        }
        if !self.dram_fetch_bytes.is_power_of_two() || self.dram_fetch_bytes < 32 {
            return bad("timing.dram_fetch_bytes", "must be a power of two of at least 32");
        }
        // Cycle counts in physical ranges (see warpsim_gpu::preset::MAX_LATENCY_CYCLES): the
        // model books memory traffic per cycle bucket up to the latest arrival.
        let max = warpsim_gpu::preset::MAX_LATENCY_CYCLES;
        let cycles = warpsim_gpu::preset_fields!("timing.", self =>
            tensor_cycles, alu_latency, conversion_latency, special_register_latency, clock_latency, vote_latency, match_latency,
            branch_cycles, barrier_latency, block_launch_cycles, block_replace_cycles, block_dispatch_cycles, warp_launch_cycles,
            mio_queue_depth, lsu_queue_depth, shared_cas_cycles, shared_cas_conflict_cycles, call_latency, call_slots,
            call_fetch_cycles, l2_atomic_units);
        for (f, v) in cycles.into_iter().chain([("timing.dram_latency", self.dram_latency.unwrap_or(0))]) {
            if v > max {
                return Err(PresetError::Invalid {
                    origin: origin.to_string(),
                    field: f,
                    msg: format!("{v} is more than {max}, outside the physical range"),
                });
            }
        }
        Ok(())
    }
}

/// A GPU for the timing model.
#[derive(Clone, Debug, PartialEq)]
pub struct TimingGpu {
    pub preset: GpuPreset,
    pub timing: TimingParams,
}

/// Built-in timing sections, by preset key.
const BUILTIN: [(&str, &str); 5] = warpsim_gpu::builtin_preset_files!();

/// Merges the JSON object `over` into `base` (objects field by field).
fn merge(base: &mut serde_json::Value, over: &serde_json::Value) {
    match (base, over) {
        (serde_json::Value::Object(b), serde_json::Value::Object(o)) => {
            for (k, v) in o {
                match b.get_mut(k) {
                    Some(x) if x.is_object() && v.is_object() => merge(x, v),
                    _ => {
                        b.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (b, o) => *b = o.clone(),
    }
}

fn json_err(origin: &str, e: serde_json::Error) -> PresetError {
    PresetError::Json { origin: origin.to_string(), line: e.line(), column: e.column(), msg: e.to_string() }
}

impl TimingGpu {
    /// The built-in timing section for a preset key (`None` for an unknown GPU).
    fn builtin_section(key: &str) -> Option<serde_json::Value> {
        let src = BUILTIN.iter().find(|(k, _)| *k == key)?.1;
        let v: serde_json::Value = serde_json::from_str(src).expect("built-in timing presets are valid JSON");
        Some(v.get("timing").cloned().unwrap_or(serde_json::Value::Null))
    }

    fn assemble(preset: GpuPreset, section: Option<&serde_json::Value>, origin: &str) -> Result<TimingGpu, PresetError> {
        let mut v = serde_json::to_value(TimingParams::derived(&preset)).expect("serialisable");
        if let Some(b) = Self::builtin_section(&preset.key) {
            if b.is_object() {
                merge(&mut v, &b);
            }
        }
        if let Some(s) = section {
            if !s.is_object() {
                return Err(PresetError::Invalid { origin: origin.to_string(), field: "timing", msg: "must be an object".into() });
            }
            merge(&mut v, s);
        }
        let timing: TimingParams = serde_json::from_value(v).map_err(|e| json_err(origin, e))?;
        timing.check(origin)?;
        Ok(TimingGpu { preset, timing })
    }

    /// A built-in GPU by key or alias (`h200`, `H100`, `a100`, `t4`, `mi300x`, `cdna3`, ...).
    pub fn by_name(name: &str) -> Result<TimingGpu, PresetError> {
        let p = GpuPreset::by_name(name)?;
        let origin = format!("presets/{}.json", p.key);
        Self::assemble(p, None, &origin)
    }

    /// A preset file: a `warpsim-gpu` preset with an optional `"timing"` object.
    pub fn from_file(path: impl AsRef<Path>) -> Result<TimingGpu, PresetError> {
        let path = path.as_ref();
        let shown = path.display().to_string();
        let src = std::fs::read_to_string(path).map_err(|source| PresetError::Io { path: shown.clone(), source })?;
        Self::from_json_str(&src, &shown)
    }

    /// Parses a preset with an optional `"timing"` object.
    pub fn from_json_str(src: &str, origin: &str) -> Result<TimingGpu, PresetError> {
        let mut v: serde_json::Value = serde_json::from_str(src).map_err(|e| json_err(origin, e))?;
        let section = v.as_object_mut().and_then(|o| o.remove("timing"));
        let preset = GpuPreset::from_json_str(&v.to_string(), origin)?;
        Self::assemble(preset, section.as_ref(), origin)
    }

    /// `--gpu` on the command line: a built-in name, or a path to a preset file.
    pub fn resolve(name_or_path: &str) -> Result<TimingGpu, PresetError> {
        let p = Path::new(name_or_path);
        if name_or_path.ends_with(".json") || p.is_file() {
            Self::from_file(p)
        } else {
            Self::by_name(name_or_path)
        }
    }

    /// DRAM latency (L2 miss, as seen from the SM).
    pub fn dram_latency(&self) -> u32 {
        self.timing.dram_latency.unwrap_or(self.preset.latencies.dram)
    }

    /// Peak DRAM bytes per SM cycle that streams reach.
    pub fn dram_bytes_per_cycle(&self) -> f64 {
        self.preset.dram_bandwidth_gbps * 1e9 / (self.preset.clock_mhz as f64 * 1e6) * self.timing.dram_efficiency
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timing_cycle_counts_outside_physical_ranges_name_their_field() {
        let mut t = TimingGpu::by_name("h200").unwrap();
        assert!(t.timing.check("h200").is_ok());
        t.timing.dram_latency = Some(1_000_000_000);
        let e = t.timing.check("mine.json").unwrap_err().to_string();
        assert!(e.contains("timing.dram_latency"), "{e}");
    }
}
