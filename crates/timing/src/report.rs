//! What a timed launch reports: cycles as `sm__cycles_elapsed.max` counts
//! them, achieved occupancy, issue-slot utilisation, warp stall reasons
//! under Nsight Compute's names, L2 and DRAM traffic; per source line; and,
//! when asked, a timeline of which warp issued on each sub-partition.

use crate::preset::TimingGpu;
use serde::Serialize;
use serde_json::{json, Map, Value};
use warpsim_gpu::Occupancy;
use warpsim_ir::{Kernel, Program};

/// Why a warp did not issue in a cycle (or `Selected`: it did). The names
/// are Nsight Compute's (`smsp__pcsamp_warps_issue_stalled_*`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Reason {
    Selected = 0,
    NotSelected,
    Wait,
    ShortScoreboard,
    LongScoreboard,
    MathPipeThrottle,
    MioThrottle,
    LgThrottle,
    Barrier,
    BranchResolving,
    Drain,
    Membar,
    NoInstruction,
}

pub const NREASONS: usize = 13;

impl Reason {
    pub const ALL: [Reason; NREASONS] = [
        Reason::Selected,
        Reason::NotSelected,
        Reason::Wait,
        Reason::ShortScoreboard,
        Reason::LongScoreboard,
        Reason::MathPipeThrottle,
        Reason::MioThrottle,
        Reason::LgThrottle,
        Reason::Barrier,
        Reason::BranchResolving,
        Reason::Drain,
        Reason::Membar,
        Reason::NoInstruction,
    ];

    /// Nsight Compute's name.
    pub fn name(self) -> &'static str {
        match self {
            Reason::Selected => "selected",
            Reason::NotSelected => "not_selected",
            Reason::Wait => "wait",
            Reason::ShortScoreboard => "short_scoreboard",
            Reason::LongScoreboard => "long_scoreboard",
            Reason::MathPipeThrottle => "math_pipe_throttle",
            Reason::MioThrottle => "mio_throttle",
            Reason::LgThrottle => "lg_throttle",
            Reason::Barrier => "barrier",
            Reason::BranchResolving => "branch_resolving",
            Reason::Drain => "drain",
            Reason::Membar => "membar",
            Reason::NoInstruction => "no_instructions",
        }
    }
}

/// Cycles `start_cycle..=end_cycle` on which one warp issued on one
/// sub-partition, without another warp issuing in between.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Span {
    pub sm: u32,
    pub subpartition: u32,
    /// Global warp index: block linear index x warps per block + warp in block.
    pub warp: u64,
    /// The block's linear index in the grid, and the warp's index in it.
    pub block: u64,
    pub warp_in_block: u32,
    pub start_cycle: u64,
    pub end_cycle: u64,
    /// Pc of the first instruction issued in the span.
    pub pc: u32,
    pub instructions: u32,
}

/// Timing of one CUDA source line (or PTX line without `.loc`).
#[derive(Clone, Debug, Serialize)]
pub struct LineTiming {
    /// `file:line`, or `ptx:LINE`.
    pub line: String,
    pub issued: u64,
    /// Warp-cycles stalled at this line's instructions, by reason name.
    pub stalls: Vec<(String, u64)>,
    /// Warp-cycles spent at this line (issued + stalled).
    pub warp_cycles: u64,
    /// L2 sectors its loads and stores moved (`lts__t_sectors_op_read` + `_write`).
    pub l2_sectors: u64,
    /// DRAM bytes its loads' L2 misses read.
    pub dram_bytes: u64,
}

/// Everything a timed launch measured.
#[derive(Clone, Debug)]
pub struct TimingReport {
    pub gpu: String,
    /// Cycles as `sm__cycles_elapsed.max` counts them (launch overhead included).
    pub cycles: u64,
    /// From the first block starting to the last block finishing.
    pub kernel_cycles: u64,
    pub launch_overhead_cycles: u64,
    pub clock_mhz: u32,
    pub sm_count: u32,
    /// What the preset calls an SM: `SM` (NVIDIA) or `CU` (AMD).
    pub sm_word: &'static str,
    pub schedulers_per_sm: u32,
    pub max_warps_per_sm: u32,
    pub blocks_per_sm: u32,
    pub theoretical_occupancy: f64,
    pub l1_bytes: u64,
    pub sm_active_cycles: u64,
    pub warp_active_cycles: u64,
    pub issue_cycles: u64,
    pub stall: [u64; NREASONS],
    pub sass_instructions: u64,
    pub warp_instructions: u64,
    pub thread_instructions: u64,
    pub l1_sectors: u64,
    pub l1_hits: u64,
    pub l2_read_sectors: u64,
    pub l2_read_hits: u64,
    pub l2_write_sectors: u64,
    pub dram_read_bytes: u64,
    pub dram_write_bytes: u64,
    pub shared_wavefronts: u64,
    pub warps: u64,
    pub blocks: u64,
    /// Issue cycles per pc.
    pub pc_issue: Vec<u64>,
    /// Stall warp-cycles per pc and reason.
    pub pc_stall: Vec<[u64; NREASONS]>,
    /// L2 sectors and DRAM bytes per pc.
    pub pc_l2: Vec<u64>,
    pub pc_dram: Vec<u64>,
    pub lines: Vec<LineTiming>,
    pub timeline: Option<Vec<Span>>,
    pub timeline_truncated: bool,
}

impl TimingReport {
    pub(crate) fn new(g: &TimingGpu, occ: Occupancy, l1_bytes: u64) -> Self {
        let p = &g.preset;
        TimingReport {
            gpu: p.key.clone(),
            cycles: 0,
            kernel_cycles: 0,
            launch_overhead_cycles: p.launch_overhead_cycles as u64,
            clock_mhz: p.clock_mhz,
            sm_count: p.sm_count,
            sm_word: p.sm_word(),
            schedulers_per_sm: p.schedulers_per_sm,
            max_warps_per_sm: p.max_warps_per_sm,
            blocks_per_sm: occ.blocks_per_sm,
            theoretical_occupancy: occ.occupancy,
            l1_bytes,
            sm_active_cycles: 0,
            warp_active_cycles: 0,
            issue_cycles: 0,
            stall: [0; NREASONS],
            sass_instructions: 0,
            warp_instructions: 0,
            thread_instructions: 0,
            l1_sectors: 0,
            l1_hits: 0,
            l2_read_sectors: 0,
            l2_read_hits: 0,
            l2_write_sectors: 0,
            dram_read_bytes: 0,
            dram_write_bytes: 0,
            shared_wavefronts: 0,
            warps: 0,
            blocks: 0,
            pc_issue: Vec::new(),
            pc_stall: Vec::new(),
            pc_l2: Vec::new(),
            pc_dram: Vec::new(),
            lines: Vec::new(),
            timeline: None,
            timeline_truncated: false,
        }
    }

    fn subpartitions(&self) -> f64 {
        (self.sm_count as f64 * self.schedulers_per_sm as f64).max(1.0)
    }

    /// Achieved occupancy: warps resident per active cycle over the maximum, percent.
    pub fn achieved_occupancy_pct(&self) -> f64 {
        if self.sm_active_cycles == 0 {
            return 0.0;
        }
        self.warp_active_cycles as f64 / self.sm_active_cycles as f64 / self.max_warps_per_sm as f64 * 100.0
    }

    /// Issue-slot utilisation: cycles a sub-partition issued over its active cycles, percent.
    pub fn issue_active_pct(&self) -> f64 {
        if self.sm_active_cycles == 0 {
            return 0.0;
        }
        self.issue_cycles as f64 / (self.sm_active_cycles as f64 * self.schedulers_per_sm as f64) * 100.0
    }

    /// Time of the launch at the preset's clock, nanoseconds.
    pub fn time_ns(&self) -> f64 {
        self.cycles as f64 * 1000.0 / self.clock_mhz as f64
    }

    /// The launch's metrics under Nsight Compute's names.
    pub fn to_ncu_json(&self) -> Map<String, Value> {
        let mut m = Map::new();
        let sp = self.subpartitions();
        m.insert("sm__cycles_elapsed.max".into(), json!(self.cycles));
        m.insert("sm__cycles_active.avg".into(), json!(self.sm_active_cycles as f64 / self.sm_count as f64));
        m.insert("gpu__time_duration.sum".into(), json!(self.time_ns()));
        m.insert("sm__warps_active.avg.pct_of_peak_sustained_active".into(), json!(self.achieved_occupancy_pct()));
        m.insert("sm__maximum_warps_per_active_cycle_pct".into(), json!(self.theoretical_occupancy * 100.0));
        m.insert("smsp__warps_active.avg".into(), json!(self.warp_active_cycles as f64 / sp));
        m.insert("smsp__issue_active.avg.pct_of_peak_sustained_active".into(), json!(self.issue_active_pct()));
        m.insert("smsp__inst_executed.sum".into(), json!(self.sass_instructions));
        for r in Reason::ALL {
            let v = self.stall[r as usize];
            m.insert(format!("smsp__warps_issue_stalled_{}.avg", r.name()), json!(v as f64 / sp));
            m.insert(format!("smsp__average_warp_latency_issue_stalled_{}.ratio", r.name()), json!(v as f64 / self.warps.max(1) as f64));
        }
        m.insert("lts__t_sectors_op_read.sum".into(), json!(self.l2_read_sectors));
        m.insert("lts__t_sectors_op_write.sum".into(), json!(self.l2_write_sectors));
        m.insert("lts__t_sector_op_read_hit_rate.pct".into(), json!(pct(self.l2_read_hits, self.l2_read_sectors)));
        m.insert("l1tex__t_sector_hit_rate.pct".into(), json!(pct(self.l1_hits, self.l1_sectors)));
        m.insert("dram__bytes_read.sum".into(), json!(self.dram_read_bytes));
        m.insert("dram__bytes_write.sum".into(), json!(self.dram_write_bytes));
        m
    }

    /// The report as JSON: `cycles`, the metrics, per-line timing, the timeline if recorded.
    pub fn to_json(&self) -> Value {
        json!({
            "gpu": self.gpu,
            "cycles": self.cycles,
            "kernel_cycles": self.kernel_cycles,
            "launch_overhead_cycles": self.launch_overhead_cycles,
            "blocks_per_sm": self.blocks_per_sm,
            "l1_bytes": self.l1_bytes,
            "sass_instructions": self.sass_instructions,
            "metrics": Value::Object(self.to_ncu_json()),
            "lines": self.lines,
            "timeline": self.timeline,
            "timeline_truncated": self.timeline_truncated,
        })
    }

    /// Sums per-pc figures into source lines (heaviest first).
    pub(crate) fn fill_lines(&mut self, program: &Program, k: &Kernel) {
        type Sums = (u64, [u64; NREASONS], u64, u64);
        let add = |to: &mut Sums, from: &Sums| {
            to.0 += from.0;
            to.2 += from.2;
            to.3 += from.3;
            for r in 0..NREASONS {
                to.1[r] += from.1[r];
            }
        };
        // Each pc's row: its line's name, a file's base name (or `ptx`, for
        // pcs without a source line) and the line, so that files of one
        // name in different folders share a row. Rows are made by sorting
        // pcs by name, then put in the order of each row's first pc.
        let n = self.pc_issue.len().min(k.info.len());
        let mut last_file: Option<(u32, &str)> = None;
        let mut named: Vec<((&str, u32), u32)> = Vec::with_capacity(n);
        for (pc, info) in k.info[..n].iter().enumerate() {
            let name = match info.loc {
                Some(l) if l.line > 0 => {
                    let base = match last_file {
                        Some((f, base)) if f == l.file => base,
                        _ => {
                            let name = program.files.get(&l.file).map(String::as_str).unwrap_or("?");
                            let base = name.rsplit('/').next().unwrap_or(name);
                            last_file = Some((l.file, base));
                            base
                        }
                    };
                    (base, l.line)
                }
                _ => ("ptx", info.ptx_line),
            };
            named.push((name, pc as u32));
        }
        named.sort_unstable();
        let mut rows: Vec<(u32, (&str, u32), Sums)> = Vec::new();
        for &(name, pc) in &named {
            let pc = pc as usize;
            let sums = (
                self.pc_issue[pc],
                self.pc_stall[pc],
                self.pc_l2.get(pc).copied().unwrap_or(0),
                self.pc_dram.get(pc).copied().unwrap_or(0),
            );
            match rows.last_mut() {
                Some(row) if row.1 == name => add(&mut row.2, &sums),
                _ => rows.push((pc as u32, name, sums)),
            }
        }
        rows.sort_unstable_by_key(|row| row.0);
        let mut lines: Vec<LineTiming> = rows
            .into_iter()
            .filter(|(_, _, (issued, st, _, _))| *issued > 0 || st.iter().any(|&x| x > 0))
            .map(|(_, (base, line), (issued, st, l2_sectors, dram_bytes))| {
                let line = format!("{base}:{line}");
                let mut stalls: Vec<(String, u64)> = Reason::ALL
                    .iter()
                    .filter(|r| **r != Reason::Selected && st[**r as usize] > 0)
                    .map(|r| (r.name().to_string(), st[*r as usize]))
                    .collect();
                stalls.sort_by_key(|x| std::cmp::Reverse(x.1));
                let warp_cycles = st.iter().sum::<u64>();
                LineTiming { line, issued, stalls, warp_cycles, l2_sectors, dram_bytes }
            })
            .collect();
        lines.sort_by_key(|l| std::cmp::Reverse(l.warp_cycles));
        self.lines = lines;
    }

    /// A terminal summary.
    pub fn render_text(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let _ = writeln!(s, "  timing on {} ({} {}s at {} MHz)", self.gpu, self.sm_count, self.sm_word, self.clock_mhz);
        let _ = writeln!(
            s,
            "  cycles               {:>14} (sm__cycles_elapsed.max: {} of the kernel + {} launch overhead), {:.2} us",
            self.cycles,
            self.kernel_cycles,
            self.launch_overhead_cycles,
            self.time_ns() / 1000.0
        );
        let _ = writeln!(
            s,
            "  occupancy            {:>13.1}% achieved, {:.1}% theoretical ({} blocks/SM)",
            self.achieved_occupancy_pct(),
            self.theoretical_occupancy * 100.0,
            self.blocks_per_sm
        );
        let _ = writeln!(
            s,
            "  issue slots busy     {:>13.1}%  ({} SASS-equivalent instructions)",
            self.issue_active_pct(),
            self.sass_instructions
        );
        let total: u64 = self.stall.iter().sum::<u64>().max(1);
        let mut reasons: Vec<(Reason, u64)> = Reason::ALL.iter().map(|&r| (r, self.stall[r as usize])).filter(|x| x.1 > 0).collect();
        reasons.sort_by_key(|x| std::cmp::Reverse(x.1));
        let _ = write!(s, "  warp states          ");
        for (i, (r, v)) in reasons.iter().take(6).enumerate() {
            let _ = write!(s, "{}{} {:.1}%", if i > 0 { ", " } else { "" }, r.name(), *v as f64 * 100.0 / total as f64);
        }
        let _ = writeln!(s);
        let _ = writeln!(
            s,
            "  L1 hit rate          {:>13.1}%   L2: {} sectors read ({:.1}% hits), {} written",
            pct(self.l1_hits, self.l1_sectors),
            self.l2_read_sectors,
            pct(self.l2_read_hits, self.l2_read_sectors),
            self.l2_write_sectors
        );
        let _ = writeln!(s, "  DRAM                 {:>14} bytes read, {} written", self.dram_read_bytes, self.dram_write_bytes);
        s
    }

    /// The `top` heaviest lines.
    pub fn render_lines(&self, top: usize) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let total: u64 = self.lines.iter().map(|l| l.warp_cycles).sum::<u64>().max(1);
        let _ = writeln!(
            s,
            "  {:<28} {:>7} {:>12} {:>10} {:>12}  top stall reasons (warp-cycles)",
            "line", "share", "issued", "L2 sect", "DRAM bytes"
        );
        for l in self.lines.iter().take(top) {
            let reasons: Vec<String> = l.stalls.iter().take(3).map(|(n, v)| format!("{n} {v}")).collect();
            let _ = writeln!(
                s,
                "  {:<28} {:>6.1}% {:>12} {:>10} {:>12}  {}",
                l.line,
                l.warp_cycles as f64 * 100.0 / total as f64,
                l.issued,
                l.l2_sectors,
                l.dram_bytes,
                reasons.join(", ")
            );
        }
        s
    }
}

fn pct(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 * 100.0 / b as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_of_one_file_name_share_a_row_in_first_pc_order() {
        // Two files named x.cu in two folders, a line of a.cu, and PTX without `.loc`.
        let src = ".version 8.0\n.target sm_90\n.address_size 64\n.file 1 \"/p/x.cu\"\n.file 2 \"/q/x.cu\"\n.file 3 \"/p/a.cu\"\n\
                   .visible .entry k()\n{\n.reg .b32 %r<6>;\n\
                   .loc 3 7 0\nadd.s32 %r1, %r0, 3;\n.loc 1 5 0\nadd.s32 %r2, %r1, 1;\n.loc 3 7 0\nadd.s32 %r3, %r2, 1;\n\
                   .loc 2 5 0\nadd.s32 %r4, %r3, 1;\n.loc 1 0 0\nadd.s32 %r5, %r4, 1;\nret;\n}\n";
        let program = warpsim_ir::compile_module("t.ptx", src).unwrap();
        let k = program.kernel("k").unwrap();
        let gpu = TimingGpu::by_name("h200").unwrap();
        let input = warpsim_gpu::OccupancyInput {
            block_threads: 32,
            regs_per_thread: 8,
            static_shared_bytes: 0,
            dynamic_shared_bytes: 0,
            barriers_per_block: 1,
            opt_in_shared: false,
            shared_carveout_percent: None,
        };
        let mut rep = TimingReport::new(&gpu, warpsim_gpu::occupancy(&gpu.preset, &input).unwrap(), 0);
        let n = k.code.len();
        // Every pc issued once, no stalls: rows in the order of their first pc.
        rep.pc_issue = vec![1; n];
        rep.pc_stall = vec![[0; NREASONS]; n];
        rep.fill_lines(&program, k);
        let rows: Vec<(&str, u64)> = rep.lines.iter().map(|l| (l.line.as_str(), l.issued)).collect();
        assert_eq!(rows[..2], [("a.cu:7", 2), ("x.cu:5", 2)], "{rows:?}");
        assert!(rows[2..].iter().all(|r| r.0.starts_with("ptx:")), "{rows:?}");
        assert_eq!(rows.iter().map(|r| r.1).sum::<u64>(), n as u64);
        // Pc p stalled p+1 cycles: heaviest first.
        rep.pc_stall = (0..n).map(|pc| std::array::from_fn(|r| if r == Reason::Wait as usize { pc as u64 + 1 } else { 0 })).collect();
        rep.fill_lines(&program, k);
        let cycles: Vec<(&str, u64)> = rep.lines.iter().map(|l| (l.line.as_str(), l.warp_cycles)).collect();
        assert_eq!(cycles.iter().find(|r| r.0 == "x.cu:5").map(|r| r.1), Some(2 + 4), "{cycles:?}");
        assert!(cycles.windows(2).all(|w| w[0].1 >= w[1].1), "{cycles:?}");
    }
}
