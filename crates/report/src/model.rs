//! What a report shows: plain data, serialisable.

use serde::Serialize;

/// Everything one report page shows.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Report {
    /// `warpsim report: <kernel>`.
    pub title: String,
    /// One line under the title (file, launch shape).
    pub subtitle: String,
    pub warp_size: u32,
    /// The launch summary, in order.
    pub summary: Vec<SummaryItem>,
    /// Per source line (or PTX line where the PTX has no line info), in source order.
    pub lines: Vec<LineRow>,
    /// Every branch instruction that ran.
    pub branches: Vec<BranchRow>,
    /// Every global or shared memory instruction that ran.
    pub memory: Vec<MemRow>,
    pub occupancy: Option<OccupancyView>,
    pub timeline: Option<Timeline>,
    /// Where the timeline comes from, or why there is none.
    pub timeline_note: String,
    /// Free-standing remarks shown at the end.
    pub notes: Vec<String>,
    /// The fault that ended the launch; the rest of the report covers the part that ran.
    pub fault: Option<String>,
    /// With `--check`: the checkers' findings grouped by source line and kind
    /// (`None`: the launch was not checked).
    pub diagnostics: Option<Vec<DiagnosticGroupView>>,
    /// One paragraph of advice per kind of finding.
    pub advice: Vec<(String, String)>,
}

/// The checkers' findings of one kind on one source line.
#[derive(Clone, Debug, Default, Serialize)]
pub struct DiagnosticGroupView {
    /// `Data race at kernel.cu:42: 3 places, 96 times`.
    pub heading: String,
    /// Each place in full (threads, instructions, addresses).
    pub places: Vec<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct SummaryItem {
    pub label: String,
    pub value: String,
    /// A short explanation, shown beside the value.
    pub note: String,
}

impl SummaryItem {
    pub fn new(label: impl Into<String>, value: impl Into<String>, note: impl Into<String>) -> Self {
        SummaryItem { label: label.into(), value: value.into(), note: note.into() }
    }
}

/// Costs of one source line.
#[derive(Clone, Debug, Default, Serialize)]
pub struct LineRow {
    /// `kernels.cu:42` or `ptx:118`.
    pub place: String,
    pub text: Option<String>,
    pub ptx_lines: Vec<u32>,
    pub warp_insts: u64,
    /// Active lanes per warp instruction (of `Report::warp_size`).
    pub threads_per_inst: f64,
    pub branches: u64,
    pub divergent_branches: u64,
    /// Global sectors per request: (actual, ideal), where the line touches global memory.
    pub sectors_per_request: Option<(f64, f64)>,
    /// Shared memory: (bank conflicts, wavefronts per instruction / ideal), where the line touches it.
    pub bank_conflicts: Option<(u64, f64)>,
    /// Warp-cycles stalled on this line, from the timing model.
    pub stall_cycles: Option<u64>,
    /// The line is in a CUDA toolkit header (folded away under the user's lines).
    pub in_header: bool,
}

/// One branch instruction.
#[derive(Clone, Debug, Serialize)]
pub struct BranchRow {
    pub place: String,
    pub ptx_line: u32,
    pub executions: u64,
    pub divergent: u64,
    /// Active lanes per execution.
    pub threads_per_exec: f64,
}

/// One memory instruction.
#[derive(Clone, Debug, Serialize)]
pub struct MemRow {
    pub place: String,
    pub ptx_line: u32,
    /// The PTX opcode (`ld.global.f32`).
    pub op: String,
    /// `global` (sectors per request) or `shared` (wavefronts per request).
    pub space: String,
    pub requests: u64,
    pub per_request: f64,
    pub ideal_per_request: f64,
}

/// One warp slot of the occupancy stepper.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct SlotView {
    /// Resident block in this slot (its index among the SM's blocks), if any.
    pub block: Option<u32>,
    pub warp_in_block: u32,
    /// Lanes that hold a thread (the rest were never launched).
    pub active_lanes: u32,
}

/// An SM's warp slots, each warp's lanes lit or grey.
#[derive(Clone, Debug, Serialize)]
pub struct OccupancyView {
    /// `H200 (sm_90)`.
    pub gpu: String,
    pub warp_size: u32,
    pub schedulers: u32,
    pub slots: Vec<SlotView>,
    /// One sentence under the picture.
    pub caption: String,
}

/// A run of consecutive cycles in which one sub-partition issued for one warp.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IssueSpan {
    pub sm: u32,
    pub subpartition: u32,
    /// The block's linear index in the grid.
    pub block: u64,
    /// Warp index within its block.
    pub warp: u32,
    /// First cycle and one past the last.
    pub start: u64,
    pub end: u64,
    /// What issued (an opcode, or `n instructions`).
    pub label: String,
}

/// Which warp issued on each sub-partition, cycle by cycle.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Timeline {
    /// What produced it (`timing model (crates/timing), H200 preset`).
    pub source: String,
    /// Cycles covered.
    pub cycles: u64,
    pub subpartitions_per_sm: u32,
    pub spans: Vec<IssueSpan>,
    /// Spans left out to keep the files small, if any.
    pub truncated: bool,
}

impl Timeline {
    /// Merges adjacent spans of the same warp on the same sub-partition.
    pub fn coalesce(&mut self) {
        self.spans.sort_by_key(|s| (s.sm, s.subpartition, s.start));
        let mut out: Vec<IssueSpan> = Vec::with_capacity(self.spans.len());
        for s in self.spans.drain(..) {
            if let Some(last) = out.last_mut() {
                if last.sm == s.sm
                    && last.subpartition == s.subpartition
                    && last.block == s.block
                    && last.warp == s.warp
                    && last.end == s.start
                {
                    last.end = s.end;
                    if last.label != s.label {
                        last.label = String::new();
                    }
                    continue;
                }
            }
            out.push(s);
        }
        for s in &mut out {
            if s.label.is_empty() {
                s.label = format!("{} instructions", s.end - s.start);
            }
        }
        self.spans = out;
    }

    /// SMs that appear, ascending.
    pub fn sms(&self) -> Vec<u32> {
        let mut v: Vec<u32> = self.spans.iter().map(|s| s.sm).collect();
        v.sort_unstable();
        v.dedup();
        v
    }
}
