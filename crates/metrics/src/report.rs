//! Turning per-instruction counters into what users read: launch totals
//! under Nsight Compute's metric names, and per-source-line costs.

use crate::observer::{CodeShape, InstCounts, MemCounts, PcCounters};
use crate::sass::{folded_instructions, merged_shared_loads, reduction_atomics, Folded, Merged};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use warpsim_ir::op_table::{AccessKind, Collective, LatencyClass, MemAccess};
use warpsim_ir::{Kernel, Op, Program, SourceLoc, Space};

/// What kind of work an instruction is, for sorting counters into metrics.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum InstKind {
    Load,
    Store,
    Atomic,
    Barrier,
    Shuffle,
    Vote,
    Branch,
    Other,
}

pub fn inst_kind(op: &Op) -> InstKind {
    if op.lane_address().is_some() {
        return match op.mem_access() {
            Some(MemAccess { kind: AccessKind::Load, space: Space::KernelParam, .. }) | None => InstKind::Other,
            Some(MemAccess { kind, .. }) => match kind {
                AccessKind::Load => InstKind::Load,
                AccessKind::Store => InstKind::Store,
                AccessKind::Atomic => InstKind::Atomic,
                AccessKind::AsyncCopy | AccessKind::Mbarrier => InstKind::Other,
            },
        };
    }
    if let Some(c) = op.collective() {
        return match c {
            Collective::Shuffle => InstKind::Shuffle,
            Collective::Vote => InstKind::Vote,
            Collective::WarpSync => InstKind::Barrier,
        };
    }
    match op.latency_class() {
        LatencyClass::Barrier => InstKind::Barrier,
        LatencyClass::Branch => InstKind::Branch,
        _ => InstKind::Other,
    }
}

/// Whole-launch totals.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Totals {
    pub warp_size: u32,
    /// PTX instructions executed (every one).
    pub ptx_warp_insts: u64,
    pub ptx_thread_insts: u64,
    /// Instructions that become SASS instructions (see [`crate::sass`]): what
    /// Nsight Compute counts.
    pub insts: InstCounts,
    /// The memory traffic of loads and of stores.
    pub ld: MemCounts,
    pub st: MemCounts,
    pub global_atom_requests: u64,
    pub global_atom_sectors: u64,
    /// Global atomics that run as reductions (SASS `RED`: [`crate::sass::reduction_atomics`]).
    pub global_red_requests: u64,
    pub global_red_sectors: u64,
    pub shared_atom_insts: u64,
    pub atomics: u64,
    pub barriers: u64,
    pub shuffles: u64,
    pub votes: u64,
}

/// One row of a launch summary: what, how much, and what it means.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct SummaryRow {
    pub label: String,
    pub value: String,
    pub detail: String,
}

impl SummaryRow {
    fn new(label: impl Into<String>, value: impl Into<String>, detail: impl Into<String>) -> SummaryRow {
        SummaryRow { label: label.into(), value: value.into(), detail: detail.into() }
    }
}

impl Totals {
    fn add_pc(&mut self, kind: InstKind, folded: Folded, reduction: bool, c: &PcCounters) {
        self.ptx_warp_insts += c.insts.warp_insts;
        self.ptx_thread_insts += c.insts.thread_insts;
        if folded != Folded::No {
            return;
        }
        self.insts.add(&c.insts);
        match kind {
            InstKind::Load => self.ld.add(&c.mem),
            InstKind::Store => self.st.add(&c.mem),
            InstKind::Atomic => {
                self.atomics += c.insts.warp_insts;
                if reduction {
                    self.global_red_requests += c.mem.global_requests;
                    self.global_red_sectors += c.mem.global_sectors;
                } else {
                    self.global_atom_requests += c.mem.global_requests;
                    self.global_atom_sectors += c.mem.global_sectors;
                }
                self.shared_atom_insts += c.mem.shared_requests;
            }
            InstKind::Barrier => self.barriers += c.insts.warp_insts,
            InstKind::Shuffle => self.shuffles += c.insts.warp_insts,
            InstKind::Vote => self.votes += c.insts.warp_insts,
            InstKind::Branch | InstKind::Other => {}
        }
    }

    /// The warp-level instructions that ran, as `3 atomics, 1 barriers`; `None` if none did.
    pub fn warp_level(&self) -> Option<String> {
        let counts = [
            ("atomics", self.atomics),
            ("barriers (bar.sync, __syncthreads)", self.barriers),
            ("shuffles", self.shuffles),
            ("votes", self.votes),
        ];
        let extras: Vec<String> = counts.iter().filter(|(_, n)| *n > 0).map(|(k, n)| format!("{n} {k}")).collect();
        (!extras.is_empty()).then(|| extras.join(", "))
    }

    pub fn threads_per_inst(&self) -> f64 {
        ratio(self.insts.thread_insts, self.insts.warp_insts)
    }

    /// The launch's metrics in words, one vocabulary (Nsight Compute's) for the
    /// terminal and the HTML report alike.
    pub fn summary_rows(&self) -> Vec<SummaryRow> {
        let w = self.warp_size;
        let mut rows = vec![SummaryRow::new(
            "threads per warp instruction",
            format!("{:.2} of {w}", self.threads_per_inst()),
            format!("{:.1}% of lanes busy", 100.0 * self.threads_per_inst() / w.max(1) as f64),
        )];
        if self.insts.branch_targets > 0 {
            rows.push(SummaryRow::new(
                "branches",
                format!("{} executed, {} divergent", self.insts.branches, self.insts.divergent_branches),
                format!("branch efficiency {:.1}%: the share of branch targets all active lanes agreed on", self.branch_uniform_pct()),
            ));
        }
        for (what, d) in [("global loads", &self.ld), ("global stores", &self.st)] {
            let (req, sec, ideal) = (d.global_requests, d.global_sectors, d.global_ideal_sectors);
            if req > 0 {
                rows.push(SummaryRow::new(
                    what,
                    format!("{:.2} sectors/request", ratio(sec, req)),
                    format!(
                        "{req} requests, {sec} sectors; ideal {:.2} sectors/request, {:.0}% of the sectors' bytes used",
                        ratio(ideal, req),
                        100.0 * ratio(ideal, sec).min(1.0)
                    ),
                ));
            }
        }
        for (what, d) in [("shared loads", &self.ld), ("shared stores", &self.st)] {
            let (n, wf, ideal) = (d.shared_requests, d.shared_wavefronts, d.shared_ideal_wavefronts);
            if n > 0 {
                rows.push(SummaryRow::new(
                    what,
                    format!("{} bank conflicts", wf.saturating_sub(ideal)),
                    format!("{n} requests, {wf} wavefronts, ideal {ideal}: {:.2}-way on average", ratio(wf, ideal)),
                ));
            }
        }
        if self.ld.local_requests + self.st.local_requests > 0 {
            rows.push(SummaryRow::new(
                "local memory",
                format!("{} requests", self.ld.local_requests + self.st.local_requests),
                format!("{} sectors", self.ld.local_sectors + self.st.local_sectors),
            ));
        }
        if let Some(wl) = self.warp_level() {
            rows.push(SummaryRow::new("other warp instructions", wl, "counted per warp, as Nsight Compute counts instructions"));
        }
        rows
    }

    pub fn branch_uniform_pct(&self) -> f64 {
        if self.insts.branch_targets == 0 {
            0.0
        } else {
            100.0 * (1.0 - self.insts.divergent_branches as f64 / self.insts.branch_targets as f64)
        }
    }

    /// The metrics object of `warpsim corpus --json`: Nsight Compute's names
    /// where one exists, `warpsim__...` for the rest.
    pub fn to_ncu_json(&self) -> Map<String, Value> {
        let mut m = Map::new();
        let mut put = |k: &str, v: Value| {
            m.insert(k.to_string(), v);
        };
        put("smsp__inst_executed.sum", json!(self.insts.warp_insts));
        put("smsp__thread_inst_executed.sum", json!(self.insts.thread_insts));
        put("smsp__thread_inst_executed_per_inst_executed.ratio", json!(round2(self.threads_per_inst())));
        put(
            "smsp__thread_inst_executed_per_inst_executed.pct",
            json!(round2(100.0 * self.threads_per_inst() / self.warp_size.max(1) as f64)),
        );
        put("smsp__thread_inst_executed_pred_on.sum", json!(self.insts.pred_on_threads));
        put("warpsim__ptx_inst_executed.sum", json!(self.ptx_warp_insts));
        put("warpsim__ptx_thread_inst_executed.sum", json!(self.ptx_thread_insts));
        put("smsp__sass_branch_targets.sum", json!(self.insts.branch_targets));
        put("smsp__sass_branch_targets_threads_divergent.sum", json!(self.insts.divergent_branches));
        put("smsp__sass_average_branch_targets_threads_uniform.pct", json!(round2(self.branch_uniform_pct())));
        put("l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum", json!(self.global_atom_requests));
        put("l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum", json!(self.global_atom_sectors));
        put("l1tex__t_requests_pipe_lsu_mem_global_op_red.sum", json!(self.global_red_requests));
        put("l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum", json!(self.global_red_sectors));
        // Loads and stores have the same metrics, named by `op_ld` / `op_st`.
        for (op, d) in [("ld", &self.ld), ("st", &self.st)] {
            put(&format!("l1tex__t_requests_pipe_lsu_mem_global_op_{op}.sum"), json!(d.global_requests));
            put(&format!("l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum"), json!(d.global_sectors));
            put(
                &format!("l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_{op}.ratio"),
                json!(round2(ratio(d.global_sectors, d.global_requests))),
            );
            put(
                &format!("smsp__sass_average_data_bytes_per_sector_mem_global_op_{op}.pct"),
                json!(round2(100.0 * ratio(d.global_bytes, d.global_sectors * 32))),
            );
            put(&format!("l1tex__t_requests_pipe_lsu_mem_local_op_{op}.sum"), json!(d.local_requests));
            put(&format!("l1tex__t_sectors_pipe_lsu_mem_local_op_{op}.sum"), json!(d.local_sectors));
            put(&format!("smsp__sass_inst_executed_op_global_{op}.sum"), json!(d.global_requests));
            put(&format!("smsp__sass_inst_executed_op_shared_{op}.sum"), json!(d.shared_requests));
            put(&format!("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum"), json!(d.shared_wavefronts));
            put(
                &format!("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum"),
                json!(d.shared_wavefronts - d.shared_ideal_wavefronts),
            );
            put(&format!("warpsim__global_{op}_lines.sum"), json!(d.global_lines));
            put(&format!("warpsim__global_{op}_bytes_requested.sum"), json!(d.global_bytes));
            put(&format!("warpsim__global_{op}_bytes_moved.sum"), json!(d.global_sectors * 32));
        }
        put("warpsim__inst_executed_op_atomic.sum", json!(self.atomics));
        put("warpsim__inst_executed_op_barrier.sum", json!(self.barriers));
        put("warpsim__inst_executed_op_shfl.sum", json!(self.shuffles));
        put("warpsim__inst_executed_op_vote.sum", json!(self.votes));
        m
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// Costs of one CUDA source line (or of PTX without line info, one PTX line).
#[derive(Clone, Debug, serde::Serialize)]
pub struct LineReport {
    /// `file:line` of the CUDA source, or `ptx:line`.
    pub place: String,
    pub file: Option<String>,
    pub line: u32,
    /// The line's text, when the source file could be read.
    pub text: Option<String>,
    pub ptx_lines: Vec<u32>,
    pub counters: PcCounters,
}

impl LineReport {
    pub fn threads_per_inst(&self) -> f64 {
        ratio(self.counters.insts.thread_insts, self.counters.insts.warp_insts)
    }
    pub fn excess_sectors(&self) -> u64 {
        self.counters.mem.global_sectors.saturating_sub(self.counters.mem.global_ideal_sectors)
    }
    pub fn bank_conflicts(&self) -> u64 {
        self.counters.mem.shared_wavefronts - self.counters.mem.shared_ideal_wavefronts
    }
    /// Issue slots lost to inactive lanes, in warp instructions.
    pub fn idle_lane_slots(&self, warp_size: u32) -> f64 {
        self.counters.insts.warp_insts as f64 - self.counters.insts.thread_insts as f64 / warp_size as f64
    }
}

/// Everything the metrics say about one launch.
#[derive(Clone, Debug, serde::Serialize)]
pub struct LaunchMetrics {
    pub totals: Totals,
    /// Per source line (CUDA, from `.loc`), in source order.
    pub lines: Vec<LineReport>,
    /// Per PTX instruction.
    #[serde(skip)]
    pub per_pc: Vec<PcCounters>,
}

/// What a launch's metrics need of its kernel's code, worked out once per
/// kernel: the observer's view of the code ([`CodeShape`]), the SASS model
/// (folded instructions, merged shared loads, reduction atomics), each
/// instruction's kind, and the source files `.loc` names, read on first use.
/// A program of many small launches pays for these once, not per launch.
pub struct KernelModel {
    pub shape: Arc<CodeShape>,
    pub merged: Arc<[Merged]>,
    folded: Vec<Folded>,
    reductions: Vec<bool>,
    kinds: Vec<InstKind>,
    /// Source files by `.loc` file number, their lines (`None`: unreadable).
    sources: Mutex<BTreeMap<u32, Option<Arc<Vec<String>>>>>,
}

impl KernelModel {
    pub fn of(kernel: &Kernel) -> KernelModel {
        let merged = merged_shared_loads(kernel);
        let folded = folded_instructions(kernel);
        KernelModel {
            shape: Arc::new(CodeShape::of(kernel)),
            folded: folded.iter().zip(&merged).map(|(&f, &m)| if m == Merged::Follows { Folded::MergedLoad } else { f }).collect(),
            merged: merged.into(),
            reductions: reduction_atomics(kernel),
            kinds: kernel.code.iter().map(|i| inst_kind(&i.op)).collect(),
            sources: Mutex::new(BTreeMap::new()),
        }
    }

    /// The lines of source file `file` of `program`, read once.
    fn source(&self, program: &Program, file: u32) -> Option<Arc<Vec<String>>> {
        let mut sources = self.sources.lock().unwrap_or_else(|e| e.into_inner());
        sources
            .entry(file)
            .or_insert_with(|| program.files.get(&file).and_then(|n| read_source(n, &program.source_name)).map(Arc::new))
            .clone()
    }
}

impl LaunchMetrics {
    /// The metrics of a launch of `kernel` (whose [`KernelModel`] is `model`)
    /// from its observer's counters. A model that cannot be `kernel`'s (made
    /// for code of another length) is not used: the kernel's own is made.
    /// Counters past the kernel's last pc are left out.
    pub fn build(
        program: &Program,
        kernel: &Kernel,
        model: &KernelModel,
        per_pc: Vec<PcCounters>,
        warp_size: u32,
        ptx_source: Option<&str>,
    ) -> Self {
        let own;
        let model = if model.kinds.len() == kernel.code.len() {
            model
        } else {
            own = KernelModel::of(kernel);
            &own
        };
        let mut totals = Totals { warp_size, ..Default::default() };
        let mut by_line: BTreeMap<(Option<u32>, u32), LineReport> = BTreeMap::new();
        let ptx_lines: Option<Vec<&str>> = ptx_source.map(|s| s.lines().collect());
        for (pc, c) in per_pc.iter().enumerate().take(kernel.code.len().min(kernel.info.len())) {
            totals.add_pc(model.kinds[pc], model.folded[pc], model.reductions[pc], c);
            if c.insts.warp_insts == 0 {
                continue;
            }
            let info = &kernel.info[pc];
            let key = match info.loc {
                Some(SourceLoc { file, line, .. }) if line > 0 => (Some(file), line),
                _ => (None, info.ptx_line),
            };
            let entry = by_line.entry(key).or_insert_with(|| {
                let (file, text) = match key.0 {
                    Some(f) => {
                        let name = program.files.get(&f).cloned();
                        let lines = model.source(program, f);
                        (name, lines.as_ref().and_then(|l| l.get(key.1 as usize - 1).map(|s| s.trim().to_string())))
                    }
                    None => (None, ptx_lines.as_ref().and_then(|l| l.get(key.1 as usize - 1).map(|s| s.trim().to_string()))),
                };
                let place = program.place_of(info.loc, info.ptx_line).to_string();
                LineReport { place, file, line: key.1, text, ptx_lines: Vec::new(), counters: PcCounters::default() }
            });
            entry.counters.add(c);
            if !entry.ptx_lines.contains(&info.ptx_line) {
                entry.ptx_lines.push(info.ptx_line);
            }
        }
        LaunchMetrics { totals, lines: by_line.into_values().collect(), per_pc }
    }

    /// Plain-words summary for the terminal: the rows of [`Totals::summary_rows`].
    pub fn render_summary(&self) -> String {
        self.totals.summary_rows().iter().map(|r| format!("  {:<29} {}  ({})\n", r.label, r.value, r.detail)).collect()
    }

    /// The source lines that cost most: divergence, excess sectors, bank conflicts.
    pub fn render_lines(&self, top: usize) -> String {
        let w = self.totals.warp_size;
        let mut rows: Vec<&LineReport> = self.lines.iter().collect();
        let score = |l: &LineReport| l.idle_lane_slots(w) + l.excess_sectors() as f64 + l.bank_conflicts() as f64;
        rows.sort_by(|a, b| score(b).total_cmp(&score(a)).then(a.line.cmp(&b.line)));
        let mut s = String::new();
        s += &format!(
            "{:<20} {:>11} {:>8} {:>8} {:>11} {:>9}  {}\n",
            "line", "warp insts", "thr/inst", "diverg.", "sect/req", "conflicts", "source"
        );
        for l in rows.into_iter().take(top) {
            let (c, m) = (&l.counters.insts, &l.counters.mem);
            let sect = if m.global_requests > 0 {
                format!("{:.1} ({:.1})", ratio(m.global_sectors, m.global_requests), ratio(m.global_ideal_sectors, m.global_requests))
            } else {
                "-".into()
            };
            let text = l.text.as_deref().unwrap_or("");
            let text: String = text.chars().take(25).collect();
            s += &format!(
                "{:<20} {:>11} {:>8.1} {:>8} {:>11} {:>9}  {}\n",
                trunc(&l.place, 20),
                c.warp_insts,
                l.threads_per_inst(),
                c.divergent_branches,
                sect,
                l.bank_conflicts(),
                text
            );
            let mut ptx: Vec<u32> = l.ptx_lines.clone();
            ptx.sort_unstable();
            let list: Vec<String> = ptx.iter().map(u32::to_string).collect();
            let mut shown = format!("    PTX lines {}", list.join(" "));
            if shown.len() > 98 {
                shown.truncate(95);
                shown += "...";
            }
            s += &shown;
            s += "\n";
        }
        s
    }
}

fn trunc(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let tail: String = s.chars().rev().take(n - 1).collect::<Vec<_>>().into_iter().rev().collect();
        format!("…{tail}")
    }
}

fn short_name(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}

/// Reads a `.file` source: as written, or beside the PTX file.
fn read_source(name: &str, ptx_path: &str) -> Option<Vec<String>> {
    let direct = std::fs::read_to_string(name).ok();
    let beside = || {
        let dir = std::path::Path::new(ptx_path).parent()?;
        std::fs::read_to_string(dir.join(short_name(name))).ok()
    };
    direct.or_else(beside).map(|t| t.lines().map(str::to_string).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_kernels_model_or_extra_counters_do_not_break_the_metrics() {
        // Kernel `a` stores a value; `b` only returns.
        let ptx = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry a(.param .u64 p)\n{\n.reg .b32 %r<3>;\n.reg .b64 %rd<3>;\nld.param.u64 %rd1, [p];\ncvta.to.global.u64 %rd2, %rd1;\nmov.u32 %r1, %tid.x;\nadd.s32 %r2, %r1, 1;\nst.global.u32 [%rd2], %r2;\nret;\n}\n.visible .entry b()\n{\nret;\n}\n";
        let program = warpsim_ir::compile_module("t.ptx", ptx).unwrap();
        let ran = |n: usize| {
            let mut c = PcCounters::default();
            (c.insts.warp_insts, c.insts.thread_insts, c.insts.pred_on_threads) = (1, 32, 32);
            vec![c; n]
        };
        let (a, b) = (program.kernel("a").unwrap(), program.kernel("b").unwrap());
        let right = LaunchMetrics::build(&program, a, &KernelModel::of(a), ran(a.code.len()), 32, None);
        assert!(right.totals.ptx_warp_insts > 0);
        let wrong = LaunchMetrics::build(&program, a, &KernelModel::of(b), ran(a.code.len() + 3), 32, None);
        assert_eq!(wrong.totals, right.totals);
        assert_eq!(wrong.lines.len(), right.lines.len());
    }
}
