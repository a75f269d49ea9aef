//! CUDA source in: `warpsim run kernel.cu` compiles with clang and the header
//! warpsim ships. Every demo kernel gives the same results through the `.cu`
//! path as from the committed PTX, a few kernels of our own
//! (`tests/cu/*.cu`) compute the right answers, compile errors are clang's,
//! and, with no clang at all, the message says how to install it and that
//! `.ptx` always works (tested without clang).
//!
//! The tests that need clang skip (saying so) without clang-19 on PATH,
//! except under CI (`CI` set), where `.ci/run` installs it and they must run.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;
use common::{have_clang19, npy, npy_values, repo, warpsim_with_nvcc};

fn tmp(name: &str) -> PathBuf {
    common::scratch("cuda-path", name)
}

fn warpsim(args: &[&str], out: &Path) -> Output {
    warpsim_with_nvcc(args, out, "none")
}

/// Launch arguments for every kernel in demo/kernels.cu.
const DEMO_LAUNCHES: &[(&str, &str, &str, &[&str])] = &[
    ("warp_probe", "1", "48", &["clk:u64[48]=zeros:out", "mask:u32[48]=zeros:out", "lane:u32[48]=zeros:out"]),
    ("div_lane_parity", "4", "256", &["out:f32[1024]=zeros:out", "i32=16"]),
    ("div_warp_split", "4", "256", &["out:f32[1024]=zeros:out", "i32=16"]),
    ("div_4way_lanes", "4", "256", &["out:f32[1024]=zeros:out", "i32=16"]),
    ("div_4way_warps", "4", "256", &["out:f32[1024]=zeros:out", "i32=16"]),
    ("branch_short", "4", "256", &["data:f32[1024]=unit_f32", "i32=1000"]),
    ("strided_read", "4", "256", &["in:f32[4096]=unit_f32:in", "out:f32[1024]=zeros:out", "i32=4", "i32=1024"]),
    ("smem_stride", "2", "256", &["out:f32[512]=zeros:out", "i32=32", "i32=8"]),
    ("warp_sum_kernel", "4", "256", &["in:f32[1024]=unit_f32:in", "out:f32[32]=zeros:out"]),
    ("block_sum_smem", "4", "256", &["in:f32[1024]=unit_f32:in", "out:f32[4]=zeros:out"]),
    ("tour", "4", "256", &["in:f32[4096]=unit_f32:in", "out:f32[1024]=zeros:out", "i32=4"]),
];

fn run_args<'a>(file: &'a str, k: &'a str, grid: &'a str, block: &'a str, params: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec!["run", file, "--kernel", k, "--grid", grid, "--block", block, "--json"];
    for p in params {
        v.push("--param");
        v.push(p);
    }
    v
}

#[test]
fn every_demo_kernel_runs_the_same_from_cu_and_from_the_committed_ptx() {
    let ptx = std::fs::read_to_string(repo().join("demo/kernels.ptx")).unwrap();
    let entries: Vec<&str> = ptx.lines().filter_map(|l| l.strip_prefix(".visible .entry ")).map(|l| l.trim_end_matches('(')).collect();
    let listed: Vec<&str> = DEMO_LAUNCHES.iter().map(|l| l.0).collect();
    assert_eq!(entries, listed, "every demo kernel must be in DEMO_LAUNCHES");
    if !have_clang19() {
        return;
    }
    demo_kernels_match_the_committed_ptx(Path::new("none"), "cu");
}

/// The README's examples run `demo/kernels.cu` with whichever compiler warpsim finds; with
/// nvcc (which `.ci/run` installs) every demo kernel gives the committed PTX's results too.
#[test]
fn every_demo_kernel_runs_the_same_compiled_by_nvcc() {
    let Some(nvcc) = warpsim::cuda::nvcc_in_venv(&repo().join(".venv")) else {
        assert!(std::env::var_os("CI").is_none(), "CI must have nvcc in .venv (.ci/run installs it)");
        eprintln!("SKIPPED: no nvcc in .venv");
        return;
    };
    demo_kernels_match_the_committed_ptx(&nvcc, "nvcc");
}

fn demo_kernels_match_the_committed_ptx(nvcc: &Path, tag: &str) {
    for (k, grid, block, params) in DEMO_LAUNCHES {
        let (a, b) = (tmp(&format!("{k}-{tag}")), tmp(&format!("{k}-{tag}-ptx")));
        let from_cu = warpsim_with_nvcc(&run_args("demo/kernels.cu", k, grid, block, params), &a, nvcc);
        assert!(from_cu.status.success(), "{k} from .cu: {}", String::from_utf8_lossy(&from_cu.stderr));
        let from_ptx = warpsim(&run_args("demo/kernels.ptx", k, grid, block, params), &b);
        assert!(from_ptx.status.success(), "{k} from .ptx: {}", String::from_utf8_lossy(&from_ptx.stderr));
        let (ja, jb): (serde_json::Value, serde_json::Value) =
            (serde_json::from_slice(&from_cu.stdout).unwrap(), serde_json::from_slice(&from_ptx.stdout).unwrap());
        if tag == "cu" {
            // The same compiler as the committed PTX: the same instructions.
            assert_eq!(ja["warp_instructions"], jb["warp_instructions"], "{k}");
            assert_eq!(ja["thread_instructions"], jb["thread_instructions"], "{k}");
        }
        assert!(a.join("kernels.ptx").is_file(), "{k}: the compiled PTX is kept in the output folder");
        for p in params.iter().filter(|p| !p.ends_with(":in") && p.contains(':')) {
            let name = p.split(':').next().unwrap();
            assert_eq!(npy(&a.join(format!("{name}.npy"))), npy(&b.join(format!("{name}.npy"))), "{k} ({tag}): {name}");
        }
    }
}

#[test]
fn committed_demo_ptx_is_what_regen_sh_makes() {
    if !have_clang19() {
        return;
    }
    let out = tmp("regen").join("kernels.ptx");
    let o = Command::new("bash").arg(repo().join("demo/regen.sh")).arg(&out).env("CLANG", "clang-19").output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let fresh = std::fs::read_to_string(&out).unwrap();
    let committed = std::fs::read_to_string(repo().join("demo/kernels.ptx")).unwrap();
    assert!(fresh == committed, "demo/kernels.ptx is stale: run demo/regen.sh and commit it");
}

#[test]
fn own_kernels_compute_the_right_answers() {
    if !have_clang19() {
        return;
    }
    let cu = |f: &str| format!("crates/cli/tests/cu/{f}");

    // saxpy, written for nvcc (cuda_runtime.h, a C++ name, found as the only entry).
    let d = tmp("saxpy");
    let file = cu("saxpy.cu");
    let mut args = vec!["run", file.as_str(), "--grid", "4", "--block", "256"];
    for p in ["i32=1000", "f32=2.5", "x:f32[1024]=unit_f32:in", "y:f32[1024]=iota"] {
        args.extend(["--param", p]);
    }
    let o = warpsim(&args, &d);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let y = npy_values(&d.join("y.npy"), f32::from_le_bytes);
    let unit = |i: u32| warpsim_launch::unit_f32(i as u64);
    for (i, &v) in y.iter().enumerate() {
        let want = if i < 1000 { 2.5 * unit(i as u32) + i as f32 } else { i as f32 };
        assert_eq!(v, want, "y[{i}]");
    }

    // A shared-memory histogram with atomics.
    let d = tmp("histogram");
    let file = cu("histogram.cu");
    let o = warpsim(&run_args(&file, "histogram", "8", "128", &["in:u32[5000]=hash_u32:in", "bins:u32[16]=zeros:out", "i32=5000"]), &d);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let bins = npy_values(&d.join("bins.npy"), u32::from_le_bytes);
    let mut want = [0u32; 16];
    for i in 0..5000u32 {
        want[(warpsim_launch::hash_u32(i as u64) & 15) as usize] += 1;
    }
    assert_eq!(bins, want);

    // The warp-level API.
    let d = tmp("warp_api");
    let file = cu("warp_api.cu");
    let o = warpsim(
        &run_args(
            &file,
            "warp_api",
            "1",
            "64",
            &["in:u32[64]=iota:in", "out:u32[256]=zeros:out", "wide:u64[64]=zeros:out", "d:f64[64]=zeros:out", "counts:i32[4]=zeros:out"],
        ),
        &d,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = npy_values(&d.join("out.npy"), u32::from_le_bytes);
    for t in 0..64u32 {
        let w = t / 32 * 32;
        assert_eq!(out[4 * t as usize], 16, "popc(ballot) of odd values");
        let same: u32 = (0..32).filter(|l| (w + l) & 3 == t & 3).map(|l| 1u32 << l).sum();
        assert_eq!(out[4 * t as usize + 1], same, "match_any t={t}");
        assert_eq!(out[4 * t as usize + 2], (w..w + 32).sum::<u32>(), "reduce_add t={t}");
        assert_eq!(out[4 * t as usize + 3], u32::MAX, "activemask");
    }
    let wide = npy_values(&d.join("wide.npy"), u64::from_le_bytes);
    for t in 0..64u64 {
        let p = t ^ 1;
        assert_eq!(wide[t as usize], (p << 32) | p);
    }
    let dd = npy_values(&d.join("d.npy"), f64::from_le_bytes);
    for (t, &v) in dd.iter().enumerate() {
        let src = if t % 32 == 31 { t } else { t + 1 };
        assert_eq!(v, src as f64 * 0.5, "shfl_down of a double, t={t}");
    }
    let counts: Vec<i32> = npy_values(&d.join("counts.npy"), i32::from_le_bytes);
    assert_eq!(counts, [32, 63, -1, -64]);

    // Fast math, within the .approx bounds.
    let d = tmp("fastmath");
    let file = cu("fastmath.cu");
    let o = warpsim(&run_args(&file, "fastmath", "1", "64", &["x:f32[64]=unit_f32:in", "y:f32[256]=zeros:out"]), &d);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let y = npy_values(&d.join("y.npy"), f32::from_le_bytes);
    for i in 0..64u32 {
        let x = unit(i) as f64;
        let want = [x.exp(), (x + 1.0).ln(), x.sin() + x.cos(), x.sqrt() / (x + 1.0).sqrt()];
        for (k, w) in want.iter().enumerate() {
            let got = y[4 * i as usize + k] as f64;
            assert!((got - w).abs() <= 1e-5 * w.abs().max(1.0), "fastmath[{i}][{k}]: {got} vs {w}");
        }
    }
}

#[test]
fn compile_errors_are_clangs_with_their_place() {
    if !have_clang19() {
        return;
    }
    let o = warpsim(&["run", "crates/cli/tests/cu/bad.cu"], &tmp("bad"));
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("could not compile crates/cli/tests/cu/bad.cu"), "{err}");
    assert!(err.contains("bad.cu:2:") && err.contains("undefined_thing"), "{err}");
    assert!(!err.contains("warpsim-cuda-"), "temporary folders leak into the message: {err}");
}

#[test]
fn without_clang_the_message_says_how_to_install_it_and_ptx_still_works() {
    // A PATH with no clang on it (the tests never need clang for this).
    let empty = tmp("empty-path");
    let run = |file: &str, out: &Path| {
        Command::new(env!("CARGO_BIN_EXE_warpsim"))
            .current_dir(repo())
            .env("PATH", &empty)
            .env_remove("WARPSIM_CLANG")
            .env("WARPSIM_NVCC", "none")
            .args(["run", file, "--kernel", "warp_probe", "--block", "48"])
            .args(["--param", "clk:u64[48]=zeros:out", "--param", "mask:u32[48]=zeros:out", "--param", "lane:u32[48]=zeros:out"])
            .arg("--out")
            .arg(out)
            .output()
            .unwrap()
    };
    let o = run("demo/kernels.cu", &tmp("noclang-cu"));
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    for needle in [
        "cannot compile demo/kernels.cu: no clang on PATH",
        "clang-19",
        "sudo apt-get install clang-19",
        "WARPSIM_CLANG",
        "PTX input always works",
    ] {
        assert!(err.contains(needle), "no {needle:?} in:\n{err}");
    }
    assert!(err.lines().all(|l| l.chars().count() <= 100), "{err}");
    // The same kernel as PTX runs without clang.
    let o = run("demo/kernels.ptx", &tmp("noclang-ptx"));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // WARPSIM_CLANG naming something that is not clang is an error that says so.
    let o = Command::new(env!("CARGO_BIN_EXE_warpsim"))
        .current_dir(repo())
        .env("WARPSIM_CLANG", "/nonexistent/clang-99")
        .args(["run", "demo/kernels.cu", "--kernel", "warp_probe"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("WARPSIM_CLANG is /nonexistent/clang-99"));
}
