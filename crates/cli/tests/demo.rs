//! `warpsim demo`: its numbers (masks, clock64 agreement, sectors per request,
//! conflict degrees, divergence, occupancy) against the corpus findings in
//! `../shared/corpus/README.md` and the H200's measurements in
//! `../shared/corpus/cases.json`; its terminal output (every section, at most
//! 100 columns, no colour off a terminal) and its `--json`.

mod common;
use common::{corpus_dir, manifest};
use std::process::Command;
use warpsim::demo::{run_demo, DemoResults};

fn findings() -> String {
    let p = corpus_dir().join("README.md");
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("reading {}: {e}", p.display()));
    let start = text.find("## Findings worth knowing").expect("the corpus README has its findings");
    text[start..].to_string()
}

/// The finding (one bullet, joined onto one line) that contains `needle`.
fn finding(needle: &str) -> String {
    let f = findings();
    let bullets: Vec<String> = f.split("\n- ").map(|b| b.split_whitespace().collect::<Vec<_>>().join(" ")).collect();
    bullets.into_iter().find(|b| b.contains(needle)).unwrap_or_else(|| panic!("no finding mentions {needle:?}"))
}

/// The decimal numbers in `s`, in order.
fn numbers(s: &str) -> Vec<f64> {
    s.split(|c: char| !(c.is_ascii_digit() || c == '.')).filter_map(|w| w.trim_end_matches('.').parse::<f64>().ok()).collect()
}

fn demo() -> &'static DemoResults {
    static D: std::sync::OnceLock<DemoResults> = std::sync::OnceLock::new();
    D.get_or_init(|| run_demo(false).expect("the demo runs"))
}

#[test]
fn warps_and_masks_match_the_findings_and_the_h200() {
    let d = demo();
    let row = |t: u32| d.warps.iter().find(|w| w.threads == t).unwrap();
    let blocks: Vec<u32> = d.warps.iter().map(|w| w.threads).collect();
    assert_eq!(blocks, [32, 33, 48, 64, 100, 256]);
    // "A block of T threads has ceil(T/32) warps; the last warp's activemask is the
    // low T mod 32 bits (0x00000001 for 33 threads, 0x0000ffff for 48)."
    let f = finding("activemask");
    assert!(f.contains("ceil(T/32) warps"), "{f}");
    for (mask, t) in [("0x00000001", 33), ("0x0000ffff", 48)] {
        assert!(f.contains(&format!("`{mask}` for {t}")), "{f}");
        assert_eq!(format!("0x{:08x}", row(t).last_warp_mask), mask);
    }
    let m = manifest();
    for w in &d.warps {
        assert_eq!(w.warps, w.threads.div_ceil(32), "{} threads", w.threads);
        let rem = w.threads % 32;
        let want = if rem == 0 { u32::MAX } else { (1u32 << rem) - 1 };
        assert_eq!(w.last_warp_mask, want, "{} threads", w.threads);
        assert!(w.lanes_agree, "{} threads: lanes of a warp read different clock64 values", w.threads);
        // The H200's masks, byte for byte: the last thread's mask in expected/warp_probe_T.mask.bin.
        let case = m.case(&format!("warp_probe_{}", w.threads)).unwrap();
        let bin = corpus_dir().join(format!("expected/warp_probe_{}.mask.bin", w.threads));
        let bytes = std::fs::read(&bin).unwrap_or_else(|e| panic!("{}: {e}", bin.display()));
        let last = u32::from_le_bytes(bytes[bytes.len() - 4..].try_into().unwrap());
        assert_eq!(w.last_warp_mask, last, "{}", case.name);
        // Distinct clock64 values: one per warp here; the H200 saw at most as many.
        assert_eq!(w.distinct_clock64 as u32, w.warps);
        let h200 = w.h200_distinct_clock64.expect("the corpus measured every row");
        assert!(h200 <= w.warps && h200 >= w.warps.div_ceil(2), "{} threads: H200 {h200}", w.threads);
    }
    // The seed's T4 table: 1, 2, 2, 2, 8 distinct values for 32, 33, 48, 64, 256 threads.
    for (t, n) in [(32, 1), (33, 2), (48, 2), (64, 2), (256, 8)] {
        assert_eq!(row(t).t4_distinct_clock64, Some(n));
        assert_eq!(row(t).distinct_clock64 as u32, n, "{t} threads");
    }
    // "Partial warps: blocks of 100 threads run 25 threads per warp instruction."
    let f = finding("Partial warps");
    assert!(f.contains("blocks of 100 threads run 25 threads per warp instruction"), "{f}");
    assert_eq!((row(100).warps, row(100).lanes_in_last_warp), (4, 4));
}

#[test]
fn sectors_per_request_match_the_findings() {
    let d = demo();
    // "lane i reading in[i * stride] gives 4, 8, 16, 32, 32, 32 sectors per request
    // for strides 1, 2, 4, 8, 16, 32 floats."
    let f = finding("sectors");
    let (sectors, strides) = f.split_once("sectors per request for strides").expect("the coalescing finding");
    let want: Vec<f64> = numbers(sectors.rsplit("gives").next().unwrap());
    let strides: Vec<f64> = numbers(strides.split("floats").next().unwrap());
    assert_eq!(want, [4.0, 8.0, 16.0, 32.0, 32.0, 32.0], "{f}");
    assert_eq!(strides.len(), want.len());
    let got: Vec<(f64, f64)> = d.coalescing.iter().map(|c| (c.stride_floats as f64, c.sectors_per_request)).collect();
    let want: Vec<(f64, f64)> = strides.into_iter().zip(want).collect();
    assert_eq!(got, want);
    for c in &d.coalescing {
        assert_eq!(c.sectors_per_request, c.h200_sectors_per_request);
    }
    // The seed: "16 bytes apart ... only a quarter of the bytes that arrive are ever used".
    let s4 = d.coalescing.iter().find(|c| c.stride_bytes == 16).unwrap();
    assert_eq!((s4.sectors_per_request, s4.bytes_used_pct), (16.0, 25.0));
}

#[test]
fn bank_conflict_degrees_match_the_findings_and_the_h200() {
    let d = demo();
    // "wavefronts = instructions x (conflict degree) and conflicts = wavefronts -
    // instructions; stride 33 and stride 0 (broadcast) have no conflicts; stride 32 is 32-way."
    let f = finding("Banks");
    assert!(f.contains("stride 33 and stride 0 (broadcast) have no conflicts") && f.contains("stride 32 is 32-way"), "{f}");
    let m = manifest();
    for b in &d.banks {
        assert_eq!(b.wavefronts as f64, b.load_instructions as f64 * b.ways, "stride {}", b.stride_floats);
        assert_eq!(b.bank_conflicts, b.wavefronts - b.load_instructions);
        let want = match b.stride_floats {
            0 | 33 => 1.0,
            s => s.min(32) as f64,
        };
        assert_eq!(b.ways, want, "stride {}", b.stride_floats);
        // The H200's own degree: wavefronts / shared load instructions of smem_stride_S.
        let ncu = m.case(&format!("smem_stride_{}", b.stride_floats)).unwrap().h200_ncu();
        let h200 = ncu["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"] / ncu["smsp__sass_inst_executed_op_shared_ld.sum"];
        assert_eq!(b.ways, h200, "stride {}", b.stride_floats);
        assert_eq!(b.h200_ways, h200);
    }
}

#[test]
fn divergence_matches_the_findings() {
    let d = demo();
    let dv = &d.divergence;
    // "div_lane_parity ... runs 16.1 threads per warp instruction against 32; four paths
    // inside each warp take 3.52x and run 8.1 threads per instruction."
    let f = finding("Divergence");
    let n = numbers(&f);
    assert!(n.contains(&16.1) && n.contains(&8.1) && n.contains(&1.84), "{f}");
    let row = |k: &str| dv.rows.iter().find(|r| r.kernel == k).unwrap();
    assert_eq!(row("div_warp_split").threads_per_instruction, 32.0);
    assert_eq!(row("div_4way_warps").threads_per_instruction, 32.0);
    assert_eq!(row("div_warp_split").divergent_branches, 0);
    let parity = row("div_lane_parity");
    assert!((parity.threads_per_instruction - 16.1).abs() < 0.5, "{}", parity.threads_per_instruction);
    assert!(parity.divergent_branches > 0);
    assert!((1.8..2.1).contains(&parity.instructions_vs_uniform), "{}", parity.instructions_vs_uniform);
    let four = row("div_4way_lanes");
    assert!((four.threads_per_instruction - 8.1).abs() < 0.3, "{}", four.threads_per_instruction);
    assert!((3.5..4.1).contains(&four.instructions_vs_uniform), "{}", four.instructions_vs_uniform);
    assert!((parity.h200_cycles_vs_uniform.unwrap() - 1.84).abs() < 0.01);
    // Cycles from the timing model: splitting inside warps costs, on a warp boundary it does not.
    assert!(row("div_warp_split").cycles > 0);
    assert!(parity.cycles_vs_uniform > 1.2, "lane parity: {}x the cycles", parity.cycles_vs_uniform);
    assert!(four.cycles_vs_uniform > parity.cycles_vs_uniform, "4-way: {}x", four.cycles_vs_uniform);
    assert!((0.9..1.1).contains(&row("div_4way_warps").cycles_vs_uniform));
    // The seed's short if/else is predicated: a selp and no divergent branch.
    assert!(dv.short_if_selp >= 1);
    assert_eq!(dv.short_if_divergent_branches, 0);
    assert_eq!(dv.short_if_threads_per_instruction, 32.0);
}

#[test]
fn warp_sum_and_occupancy_and_wavefronts() {
    let d = demo();
    let r = &d.reduction;
    assert_eq!(r.shuffle_steps_per_warp, 5.0, "the seed's warp_sum is five shuffle steps");
    assert!(r.sums_agree);
    let ws = &r.rows[0];
    assert_eq!((ws.barriers_per_block, ws.shared_instructions_per_block), (0.0, 0.0));
    assert!(r.rows[1].barriers_per_block > 0.0 && r.rows[1].shared_instructions_per_block > 0.0);

    // The seed's picture: a 48-thread block fills two of a T4 SM's 32 slots, the
    // first with 32 lanes lit, the second with 16 lit beside 16 grey.
    let o = &d.occupancy;
    assert_eq!(o.warp_slots, 32);
    assert_eq!(o.one_block_slots[..3], [32, 16, 0]);
    assert!(o.one_block_slots[2..].iter().all(|&l| l == 0));
    assert_eq!((o.slots_for_33, o.slots_for_64), (2, 2), "33 threads take as many slots as 64");
    assert_eq!((o.blocks_per_sm, o.warps_per_sm, o.occupancy_pct), (16, 32, 100.0));
    assert_eq!(o.idle_lanes_per_sm, 16 * 16);

    // A block of 32 is a full warp on 32 lanes and half a wavefront on 64.
    let w = |ws: u32, t: u32| d.wavefront.iter().find(|r| r.warp_size == ws && r.threads == t).unwrap();
    assert_eq!((w(32, 32).warps, w(32, 32).lanes_busy_pct), (1, 100.0));
    assert_eq!((w(64, 32).warps, w(64, 32).lanes_busy_pct, w(64, 32).idle_lanes), (1, 50.0, 32));
    assert_eq!((w(32, 256).warps, w(64, 256).warps), (8, 4));
    assert_eq!(w(64, 256).lanes_busy_pct, 100.0);
}

#[test]
fn demo_command_prints_every_section_in_100_columns_and_json() {
    let o = Command::new(env!("CARGO_BIN_EXE_warpsim")).arg("demo").output().expect("running warpsim demo");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(!text.contains('\x1b'), "colour codes off a terminal");
    for l in text.lines() {
        assert!(l.chars().count() <= 100, "line of {} columns:\n{l}", l.chars().count());
    }
    for needle in [
        "1. A block is cut into warps",
        "0x00000001",
        "2. Divergence",
        "predicated",
        "3. Coalescing",
        "4. Bank conflicts",
        "33 (32 + pad)",
        "5. warp_sum",
        "6. Occupancy",
        "slot  1 |################................|",
        "7. The same kernel on a 32-lane GPU",
        "half a wavefront",
    ] {
        assert!(text.contains(needle), "no {needle:?} in the demo's output:\n{text}");
    }
    let o = Command::new(env!("CARGO_BIN_EXE_warpsim")).args(["demo", "--json"]).output().unwrap();
    assert!(o.status.success());
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).expect("demo --json is JSON");
    let d = demo();
    assert_eq!(j["warps"][1]["last_warp_mask"], 1);
    assert_eq!(j["coalescing"].as_array().unwrap().len(), d.coalescing.len());
    assert_eq!(j["banks"][6]["ways"], 32.0);
    assert_eq!(j["occupancy"]["one_block_slots"][1], 16);
    assert_eq!(j["reduction"]["shuffle_steps_per_warp"], 5.0);
    // How long it took is reported, not asserted (speed is measured by benchmarks, not unit tests).
    assert!(j["seconds"].as_f64().is_some_and(|s| s > 0.0));
}
