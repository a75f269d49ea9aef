//! The calibration microbenchmarks (`calibration/micro`), run through the
//! timing model with the launch shape, arguments and register counts they
//! had on the H200, against the cycles Nsight Compute measured there
//! (`sm__cycles_elapsed.max`). One test per mechanism; each states its
//! tolerance. The PTX is the device's own `nvcc -ptx` of `micro.cu`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::OnceLock;
use warpsim_engine::GlobalMemory;
use warpsim_launch::{load_manifest, BufferInit, Case, Manifest, ParamSpec};
use warpsim_timing::{simulate, LaunchShape, TimingGpu, TimingOptions};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../calibration/micro")
}

fn manifest() -> &'static Manifest {
    static M: OnceLock<Manifest> = OnceLock::new();
    M.get_or_init(|| load_manifest(root().join("cases.json")).expect("calibration/micro/cases.json (gen_cases.py writes it)"))
}

fn program() -> &'static warpsim_ir::Program {
    static P: OnceLock<warpsim_ir::Program> = OnceLock::new();
    P.get_or_init(|| {
        let src = std::fs::read_to_string(root().join("ptx/micro.ptx")).unwrap();
        warpsim_ir::compile_module("micro.ptx", &src).unwrap_or_else(|e| panic!("{e}"))
    })
}

/// The model's cycles for micro case `name`, and the H200's.
pub fn cycles(name: &str, gpu: &TimingGpu) -> (u64, f64) {
    let case: &Case = manifest().case(name).unwrap_or_else(|| panic!("no micro case {name}"));
    let k = program().kernel(&case.kernel).unwrap();
    let mut mem = GlobalMemory::new();
    // Each parameter at the offset the kernel declares (an i64 after an i32 is 8-aligned).
    let mut params = vec![0u8; k.param_bytes as usize];
    for (p, kp) in case.params.iter().zip(&k.params) {
        let bytes = match p {
            ParamSpec::Scalar(s) => s.to_le_bytes(),
            ParamSpec::Struct(s) => s.layout().0,
            ParamSpec::Buffer(b) => {
                let init = BufferInit::from_spec(b).unwrap();
                mem.alloc(&b.name, init.byte_len().max(8), Some(init.into_filler())).to_le_bytes().to_vec()
            }
        };
        let at = kp.offset as usize;
        params[at..at + bytes.len()].copy_from_slice(&bytes);
    }
    let h200 = case.h200.as_ref().unwrap();
    let regs = h200["num_regs"].as_u64().map(|r| r as u32);
    let opts = TimingOptions { regs_per_thread: regs, ..Default::default() };
    let shape = LaunchShape { grid: case.grid, block: case.block, dynamic_shared_bytes: 0 };
    let (_, rep) = simulate(program(), k, &mem, &HashMap::new(), &params, &shape, gpu, &opts).unwrap_or_else(|e| panic!("{name}: {e}"));
    (rep.cycles, case.ncu_metric("sm__cycles_elapsed.max").unwrap())
}

/// Runs each case and checks the model within `tol` (a fraction) of the H200.
fn check(cases: &[&str], tol: f64) {
    let gpu = TimingGpu::by_name("h200").unwrap();
    let mut bad = Vec::new();
    for &name in cases {
        let (got, want) = cycles(name, &gpu);
        let r = got as f64 / want;
        println!("{name:<36} model {got:>9} H200 {want:>9.0}  x{r:.3}");
        if (r - 1.0).abs() > tol {
            bad.push(format!("{name}: {got} cycles, the H200 {want} (x{r:.2})"));
        }
    }
    assert!(bad.is_empty(), "outside {:.0}%: {bad:#?}", tol * 100.0);
}

#[test]
fn same_address_atomics_serialise_at_the_l2() {
    // One word for the grid, one per warp, per lane; int, float; RED and ATOM;
    // compiler-aggregated (atom_) and not (atomdyn_). Within 25%.
    check(
        &[
            "atomdyn_g_same_add_i32_red",
            "atomdyn_g_same_add_i32_ret",
            "atomdyn_g_same_max_i32_red",
            "atomdyn_g_same_add_f32_red",
            "atomdyn_g_same_add_i32_red_grid8",
            "atomdyn_g_same_add_i32_red_grid33",
            "atomdyn_g_same_add_i32_red_grid132",
            "atom_g_same_add_i32_red",
            "atom_g_same_add_i32_ret",
            "atom_g_same_max_i32_ret",
            "atom_g_same_add_f32_red",
            "atomdyn_g_warp_add_i32_red",
            "atom_g_warp_add_f32_red",
            "atomdyn_g_lane_add_i32_red",
            "atom_g_lane32B_add_i32_red",
        ],
        0.25,
    );
}

#[test]
fn hot_arrays_spread_over_the_atomic_units_by_window() {
    // Every block adding into the same 256 words, 8 B to 1 KB apart (2 KB to
    // 256 KB), and one word per block (528 words): 512-byte chunks, each 32 KB
    // window folded onto 32 of the 80 units. Within 25%.
    check(
        &[
            "atomspread_s2_b2_it16",
            "atomspread_s8_b2_it16",
            "atomspread_s32_b4_it1",
            "atomspread_s64_b2_it16",
            "atomspread_s256_b2_it16",
            "atomspread_s256_b4_it16",
            "atomdyn_g_block_add_i32_red",
        ],
        0.25,
    );
}

#[test]
fn shared_atomics_serialise_by_word_and_bank() {
    // Integer: old value needed (ret) or not (red); float: a compare-and-swap loop. Within 25%.
    check(
        &[
            "atomdyn_s_warp_add_i32_ret",
            "atomdyn_s_warp_add_i32_red",
            "atomdyn_s_lane_conflict32_add_i32_red",
            "atom_s_lane_add_f32_red",
            "atom_s_warp_add_f32_red",
            "atom_s_block_add_f32_red",
        ],
        0.25,
    );
}

#[test]
fn calls_cost_a_call_and_a_return() {
    // `__noinline__` device functions against inlined code, one warp per SM. Within 20%.
    check(&["call_noinline1_1warp", "call_inline1_1warp"], 0.2);
}

#[test]
fn barrier_cost_grows_with_the_warps_of_the_block() {
    // 4096 barriers, one block per SM. Within 10%.
    check(&["barrier_w1", "barrier_w2"], 0.1);
}

#[test]
fn local_arrays_go_through_l1_and_l2() {
    // An insertion sort of 32 keys in a per-thread local array. Within 15%.
    check(&["local_sort32"], 0.15);
}

#[test]
fn pipes_issue_at_their_rates() {
    // f64 FMA (16 lanes per sub-partition), MUFU ex2 (4 lanes), dependent and 8 independent chains. Within 15%.
    check(&["dfma_dep_w1", "dfma_ind8_w4", "mufu_ex2_ind8_w4", "dfma_dep_w16"], 0.15);
}

#[test]
fn scattered_l2_traffic_costs_per_line_and_sector() {
    // Strided reads and writes of an L2-resident 8 MiB span: every lane its own sector
    // (32 bytes apart). Within 20%.
    check(&["bw_read_l2_s8", "bw_write_l2_s8"], 0.2);
}

/// The heavier configs of each mechanism (minutes at the test profile's
/// optimisation): `cargo test --profile quick-release -p warpsim-timing --test micro -- --ignored`.
#[test]
#[ignore]
fn every_mechanism_on_its_full_configs() {
    check(&["call_noinline1", "call_noinline8", "call_inline1", "call_inline8"], 0.25);
    check(&["barrier_w4", "barrier_w8", "barrier_w16", "barrier_w32"], 0.1);
    check(&["local_dyn16", "local_reg16"], 0.2);
    check(&["dfma_ind8_w16", "dfma_ind8_w64", "mufu_ex2_ind8_w32", "fma_ind8_w32", "fma_ind8_w64"], 0.15);
    check(&["bw_read_l2_s1", "bw_read_l2_s32", "bw_write_l2_s1", "bw_write_l2_s32"], 0.2);
}
