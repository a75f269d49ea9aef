//! Device functions that are called rather than inlined: recursion and
//! function pointers, through `warpsim run` in functional, check and timing
//! modes, and the stack-size limit (`--stack-size`) that ends runaway
//! recursion with a fault.
//!
//! The PTX tests need no compiler. `tests/cu/recursion.cu` is compiled with
//! nvcc (skipped, saying so, when there is none: see `nvcc()`) and with
//! clang-19 (skipped without it), except under CI, where both must run.

use std::path::{Path, PathBuf};
use std::process::Output;

mod common;
use common::{have_clang19, npy_values, repo};

fn tmp(name: &str) -> PathBuf {
    common::scratch("calls", name)
}

/// nvcc: `$WARPSIM_NVCC`, else the wheel in `.venv` or `/tmp/nvenv`.
fn nvcc() -> Option<PathBuf> {
    let found = std::env::var_os("WARPSIM_NVCC")
        .filter(|p| !p.is_empty() && p != "none")
        .map(PathBuf::from)
        .or_else(|| [repo().join(".venv"), PathBuf::from("/tmp/nvenv")].iter().find_map(|v| warpsim::cuda::nvcc_in_venv(v)));
    if found.is_none() {
        assert!(std::env::var_os("CI").is_none(), "CI must have nvcc (.ci/run installs the wheel)");
        eprintln!("SKIPPED: no nvcc (pip install nvidia-cuda-nvcc nvidia-cuda-runtime nvidia-cuda-crt nvidia-cuda-cccl)");
    }
    found
}

/// `warpsim ARGS --out OUT` with the compiler `nvcc` names (`none`: clang).
fn warpsim(args: &[&str], nvcc: &str, out: &Path) -> Output {
    common::warpsim_with_nvcc(args, out, nvcc)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn fib(n: i32) -> i32 {
    if n < 2 {
        n
    } else {
        fib(n - 1) + fib(n - 2)
    }
}

/// `tree_sum` over recursion.cu's tree.
fn tree_sum(i: i32) -> i32 {
    const TREE: [(i32, i32, i32); 7] = [(1, 2, 10), (3, 4, 20), (5, 6, 30), (-1, -1, 1), (-1, -1, 2), (-1, -1, 3), (-1, -1, 4)];
    if i < 0 {
        return 0;
    }
    let (l, r, v) = TREE[i as usize];
    v + tree_sum(l) + tree_sum(r)
}

fn frames(up: Option<&[i32; 4]>, d: i32) -> i32 {
    let mine = [d * 10, d * 10 + 1, d * 10 + 2, d * 10 + 3];
    let below = if d == 0 { 0 } else { frames(Some(&mine), d - 1) };
    below + mine[(d & 3) as usize] + up.map_or(0, |u| u[(d & 3) as usize])
}

/// What recursion.cu's kernel writes for 64 threads.
fn recursion_expected(extra: i32) -> Vec<i32> {
    let mut v = Vec::new();
    for t in 0..64i32 {
        let op = match t % 3 {
            0 => t + 3,
            1 => t * 3,
            _ => t.max(3),
        };
        v.extend([fib(t % 12), tree_sum(t % 7), frames(None, t % 5 + extra), op]);
    }
    v
}

fn recursion_args<'a>(extra: &'a str, more: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec!["run", "crates/cli/tests/cu/recursion.cu", "--kernel", "recursion", "--grid", "1", "--block", "64"];
    a.extend(["--param", "out:i32[256]=zeros:out", "--param", extra]);
    a.extend(more);
    a
}

/// recursion.cu in functional, check and timing modes, then past the stack.
fn recursion_cu(compiler: &str, tag: &str) {
    for (mode, more) in [("functional", &[][..]), ("check", &["--check"][..]), ("timing", &["--mode", "timing"][..])] {
        let d = tmp(&format!("{tag}-{mode}"));
        let o = warpsim(&recursion_args("i32=0", more), compiler, &d);
        assert!(o.status.success(), "{tag} {mode}: {}{}", text(&o.stdout), text(&o.stderr));
        assert_eq!(npy_values(&d.join("out.npy"), i32::from_le_bytes), recursion_expected(0), "{tag} {mode}");
        if mode == "check" {
            assert!(text(&o.stdout).contains("no problems found"), "{tag}: {}", text(&o.stdout));
        }
    }
    // 100 more frames than the kernel needs do not fit the default 1 KiB.
    let d = tmp(&format!("{tag}-overflow"));
    let o = warpsim(&recursion_args("i32=100", &[]), compiler, &d);
    let err = text(&o.stderr);
    assert!(!o.status.success(), "{tag}: {}", text(&o.stdout));
    assert!(err.contains("stack overflow: call depth") && err.contains("--stack-size"), "{tag}: {err}");
    assert!(err.contains("recursion.cu"), "{tag}: the source line: {err}");
    let o = warpsim(&recursion_args("i32=100", &["--stack-size", "65536"]), compiler, &d);
    assert!(o.status.success(), "{tag}: {}", text(&o.stderr));
    assert_eq!(npy_values(&d.join("out.npy"), i32::from_le_bytes), recursion_expected(100), "{tag} with a 64 KiB stack");
}

#[test]
fn recursion_and_function_pointers_compiled_by_nvcc() {
    let Some(nvcc) = nvcc() else { return };
    recursion_cu(&nvcc.display().to_string(), "nvcc");
}

#[test]
fn recursion_and_function_pointers_compiled_by_clang() {
    if !have_clang19() {
        return;
    }
    recursion_cu("none", "clang");
}

/// `fact` by real recursion in hand-written PTX (what clang and nvcc make).
const FACT_PTX: &str = include_str!("ptx/fact.ptx");

#[test]
fn recursive_ptx_runs_in_every_mode_and_overflows_clearly() {
    let d = tmp("fact");
    let ptx = d.join("fact.ptx");
    std::fs::write(&ptx, FACT_PTX).unwrap();
    let ptx = ptx.display().to_string();
    let want: Vec<i32> = (0..128i32).map(|t| (1..=(t % 13).max(1)).product()).collect();
    for more in [&[][..], &["--check"][..], &["--mode", "timing"][..]] {
        let mut args = vec!["run", ptx.as_str(), "--grid", "1", "--block", "128", "--param", "out:i32[128]=zeros:out", "--param", "u32=13"];
        args.extend(more);
        let o = warpsim(&args, "none", &d);
        assert!(o.status.success(), "{more:?}: {}", text(&o.stderr));
        assert_eq!(npy_values(&d.join("out.npy"), i32::from_le_bytes), want, "{more:?}");
    }
    // Depths up to 99 need ~3 KiB of stack at 32 bytes a frame.
    for more in [&[][..], &["--mode", "timing"][..]] {
        let mut args =
            vec!["run", ptx.as_str(), "--grid", "1", "--block", "128", "--param", "out:i32[128]=zeros:out", "--param", "u32=100"];
        args.extend(more);
        let o = warpsim(&args, "none", &d);
        let err = text(&o.stderr);
        assert!(!o.status.success() && err.contains("stack overflow: call depth") && err.contains("--stack-size"), "{more:?}: {err}");
        args.extend(["--stack-size", "4096"]);
        let o = warpsim(&args, "none", &d);
        assert!(o.status.success(), "{more:?}: {}", text(&o.stderr));
        // 13! overflows i32 as on the GPU: compare wrapping products.
        let want: Vec<i32> = (0..128i32).map(|t| (1..=(t % 100).max(1)).fold(1i32, |a, b| a.wrapping_mul(b))).collect();
        assert_eq!(npy_values(&d.join("out.npy"), i32::from_le_bytes), want, "{more:?}");
    }
}
