//! The timing model against the H200 (`warpsim corpus --mode timing --gpu h200`):
//! simulated cycles beside `sm__cycles_elapsed.max` for every non-bug case,
//! the ratios the seed documents are about, and the T4 divergence ratio.
//!
//! Done-when bounds (issue 4), asserted here:
//! * ratios of the H200's cycles within 15%: div_lane_parity / div_warp_split
//!   (1.84), div_4way_lanes / div_4way_warps (3.52), compute_bound_b100 /
//!   compute_bound_b128 (1.24), smem_stride_32 / smem_stride_1 (13.2),
//!   strided_read_4 / strided_read_1 (1.45);
//! * mean absolute error over the non-bug cases at most 20%, no case off by
//!   more than a factor of 2;
//! * on the T4 preset, div_lane_parity costs about twice div_warp_split
//!   (the seed measured 2.02x), within 15%.
//!
//! `cargo test --profile quick-release -p warpsim --test timing_corpus -- --nocapture`
//! prints the calibration table.
//!
//! The calibration as of this writing (H200 preset, `h200.num_regs` registers):
//!
//! ```text
//! case                         H200    warpsim    error
//! warp_probe_1                 3595       3425    -4.7%
//! warp_probe_31                3297       3426    +3.9%
//! warp_probe_32                2983       3426   +14.9%
//! warp_probe_33                3144       3427    +9.0%
//! warp_probe_48                3085       3428   +11.1%
//! warp_probe_64                3007       3432   +14.1%
//! warp_probe_100               3085       3441   +11.5%
//! warp_probe_256               2951       3487   +18.2%
//! warp_probe_1024              3551       3679    +3.6%
//! div_lane_parity             46682      46154    -1.1%
//! div_warp_split              25366      24895    -1.9%
//! div_4way_lanes              89486      88528    -1.1%
//! div_4way_warps              25417      24937    -1.9%
//! branch_short                10088       9528    -5.6%
//! strided_read_1               9144       8966    -1.9%
//! strided_read_2               9959      10043    +0.8%
//! strided_read_4              13213      12219    -7.5%
//! strided_read_8              20150      20363    +1.1%
//! strided_read_16             34745      35707    +2.8%
//! strided_read_32             39509      35723    -9.6%
//! copy_f4                      7995       6805   -14.9%
//! smem_stride_0               10216      10428    +2.1%
//! smem_stride_1               10253      10428    +1.7%
//! smem_stride_2               12160      11855    -2.5%
//! smem_stride_4               20328      20009    -1.6%
//! smem_stride_8               36740      36393    -0.9%
//! smem_stride_16              69516      69161    -0.5%
//! smem_stride_32             135019     134697    -0.2%
//! smem_stride_33              10296      10428    +1.3%
//! warp_sum                     4786       4405    -8.0%
//! block_sum_smem               5325       4780   -10.2%
//! votes                        4891       4408    -9.9%
//! warp_scan                    5750       4412   -23.3%
//! shfl_xor_bcast               4713       4396    -6.7%
//! compute_bound_b96           35887      35303    -1.6%
//! compute_bound_b100          44368      43533    -1.9%
//! compute_bound_b128          35724      34702    -2.9%
//! mean absolute error 5.8%, worst factor 1.30
//! div_lane_parity / div_warp_split: warpsim 1.85, H200 1.84 (seed 1.84), +0.7%
//! div_4way_lanes / div_4way_warps: warpsim 3.55, H200 3.52 (seed 3.52), +0.8%
//! compute_bound_b100 / compute_bound_b128: warpsim 1.25, H200 1.24 (seed 1.24), +1.0%
//! smem_stride_32 / smem_stride_1: warpsim 12.92, H200 13.17 (seed 13.2), -1.9%
//! strided_read_4 / strided_read_1: warpsim 1.36, H200 1.44 (seed 1.45), -5.7%
//! ```

mod common;
use common::manifest;
use std::collections::HashMap;
use std::sync::Arc;
use warpsim_host::corpus::{run_case, CaseStatus};
use warpsim_host::{LaunchOptions as RunOptions, ProgramCache, TimingMode};

fn timing(gpu: &str) -> RunOptions {
    let gpu = warpsim_timing::TimingGpu::by_name(gpu).unwrap();
    RunOptions { timing: Some(TimingMode { gpu: Arc::new(gpu), timeline: false }), warp_size: 32, ..Default::default() }
}

fn hw_cycles(case: &warpsim_launch::Case) -> Option<f64> {
    case.h200.as_ref()?.get("ncu")?.get("sm__cycles_elapsed.max")?.as_f64()
}

/// Simulated cycles of the named cases (all non-bug cases when empty).
fn simulate(opts: &RunOptions, names: &[&str]) -> Vec<(String, u64, Option<f64>)> {
    let m = manifest();
    let mut cache = ProgramCache::default();
    let mut out = Vec::new();
    for case in m.cases.iter().filter(|c| if names.is_empty() { !c.name.starts_with("bug_") } else { names.contains(&c.name.as_str()) }) {
        let o = run_case(case, opts, &mut cache);
        assert_eq!(o.status, CaseStatus::Pass, "{}: {:?} {:?}", o.name, o.error, o.checks);
        let t = o.timing.as_ref().expect("timing mode reports cycles");
        out.push((case.name.clone(), t.cycles, hw_cycles(case)));
    }
    out
}

#[test]
fn h200_cycles_meet_the_calibration_bounds() {
    let rows = simulate(&timing("h200"), &[]);
    let mut sim = HashMap::new();
    let mut hw = HashMap::new();
    let mut errs = Vec::new();
    println!("{:<22} {:>10} {:>10} {:>8}", "case", "H200", "warpsim", "error");
    for (name, cycles, h) in &rows {
        let h = h.unwrap_or_else(|| panic!("{name}: no H200 cycles in the manifest"));
        let err = *cycles as f64 / h - 1.0;
        println!("{name:<22} {h:>10.0} {cycles:>10} {:>+7.1}%", err * 100.0);
        sim.insert(name.as_str(), *cycles as f64);
        hw.insert(name.as_str(), h);
        errs.push((name.clone(), err));
    }
    assert!(rows.len() >= 37, "only {} non-bug cases", rows.len());
    let mae = errs.iter().map(|e| e.1.abs()).sum::<f64>() / errs.len() as f64;
    let worst = errs.iter().map(|e| (e.1 + 1.0).max(1.0 / (e.1 + 1.0))).fold(1.0, f64::max);
    println!("mean absolute error {:.1}%, worst factor {:.2}", mae * 100.0, worst);
    let mut bad = Vec::new();
    for (a, b, seed) in [
        ("div_lane_parity", "div_warp_split", 1.84),
        ("div_4way_lanes", "div_4way_warps", 3.52),
        ("compute_bound_b100", "compute_bound_b128", 1.24),
        ("smem_stride_32", "smem_stride_1", 13.2),
        ("strided_read_4", "strided_read_1", 1.45),
    ] {
        let r = sim[a] / sim[b];
        let rh = hw[a] / hw[b];
        let e = r / rh - 1.0;
        println!("{a} / {b}: warpsim {r:.2}, H200 {rh:.2} (seed {seed}), {:+.1}%", e * 100.0);
        if e.abs() > 0.15 {
            bad.push(format!("{a}/{b} = {r:.2}, H200 {rh:.2}"));
        }
    }
    assert!(bad.is_empty(), "ratios off by more than 15%: {bad:?}");
    assert!(mae <= 0.20, "mean absolute error {:.1}% above 20%", mae * 100.0);
    for (name, e) in &errs {
        assert!((0.5..=2.0).contains(&(e + 1.0)), "{name} is off by more than a factor of 2 ({:+.1}%)", e * 100.0);
    }
}

#[test]
fn t4_lane_parity_split_costs_about_twice_the_warp_split() {
    let rows = simulate(&timing("t4"), &["div_lane_parity", "div_warp_split"]);
    let c: HashMap<_, _> = rows.iter().map(|r| (r.0.as_str(), r.1 as f64)).collect();
    let ratio = c["div_lane_parity"] / c["div_warp_split"];
    println!("T4: div_lane_parity / div_warp_split = {ratio:.2} (seed: 2.02)");
    assert!((ratio / 2.02 - 1.0).abs() <= 0.15, "T4 ratio {ratio:.2}, the seed measured 2.02");
}

#[test]
fn the_same_launch_gives_the_same_cycles() {
    let opts = timing("h200");
    let names = ["block_sum_smem", "branch_short", "votes"];
    let a = simulate(&opts, &names);
    let b = simulate(&opts, &names);
    assert_eq!(a, b);
    // Whatever the worker threads (the functional engine's pool is not used by the timing model).
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let c = pool.install(|| simulate(&opts, &names));
    assert_eq!(a, c);
}

#[test]
fn bug_cases_in_timing_mode_end_in_a_result_or_a_clear_error() {
    let m = manifest();
    let mut cache = ProgramCache::default();
    let opts = timing("h200");
    for case in m.cases.iter().filter(|c| c.name.starts_with("bug_")) {
        let o = run_case(case, &opts, &mut cache);
        if let Some(e) = &o.error {
            assert!(e.contains("PTX line"), "{}: error without a place: {e}", o.name);
        }
        match case.name.as_str() {
            "bug_oob" => {
                assert_eq!(o.status, CaseStatus::Pass, "{:?}", o.error);
                assert!(o.stats.past_end[0].to_string().contains("out-of-bounds global store"));
            }
            "bug_divergent_barrier" => assert!(o.error.as_deref().unwrap_or("").contains("barrier can never complete")),
            _ => assert_eq!(o.status, CaseStatus::Pass, "{}: {:?}", o.name, o.error),
        }
    }
}

#[test]
fn every_preset_runs_the_corpus_kernels() {
    for gpu in ["t4", "a100", "h100", "mi300x"] {
        let mut opts = timing(gpu);
        opts.warp_size = opts.timing.as_ref().unwrap().gpu.preset.warp_size;
        let rows = simulate(&opts, &["warp_sum", "block_sum_smem", "smem_stride_2", "strided_read_2"]);
        for (name, cycles, _) in rows {
            assert!(cycles > 0, "{gpu} {name}");
        }
    }
}
