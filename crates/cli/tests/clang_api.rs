//! The clang path without nvcc: `tests/cu/clang_api.cu` uses
//! `__launch_bounds__`, CUDA math functions that are no single PTX
//! instruction (erff, lgammaf, atan2f, ... and double exp, log, sin, pow),
//! `cuda_fp16.h` and `cooperative_groups.h`, all from warpsim's header and
//! stand-ins; the results are checked against references computed here
//! (Rust's libm where it has the function, numerical integration for erf,
//! known values of the gamma function).
//!
//! Skipped (saying so) without clang-19 on PATH, except under CI.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;
use common::{have_clang19, npy_values, repo};

fn tmp(name: &str) -> PathBuf {
    common::scratch("clang-api", name)
}

fn run(kernel: &str, block: &str, params: &[&str], out: &Path) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_warpsim"));
    c.current_dir(repo()).env_remove("WARPSIM_CLANG").env("WARPSIM_NVCC", "none");
    c.args(["run", "crates/cli/tests/cu/clang_api.cu", "--kernel", kernel, "--grid", "1", "--block", block]);
    for p in params {
        c.args(["--param", p]);
    }
    c.arg("--out").arg(out).output().expect("running warpsim")
}

/// erf(x) by Simpson's rule on 2/sqrt(pi) e^(-t^2) (20000 intervals: ~1e-15).
fn erf(x: f64) -> f64 {
    let n = 20000;
    let h = x / n as f64;
    let f = |t: f64| (-t * t).exp();
    let mut s = f(0.0) + f(x);
    for k in 1..n {
        s += f(k as f64 * h) * if k % 2 == 1 { 4.0 } else { 2.0 };
    }
    s * h / 3.0 * 2.0 / std::f64::consts::PI.sqrt()
}

/// Gamma at multiples of 1/16 in [-4, 4): from Gamma(1/16 + k) by the recurrence, the
/// one value needed per residue found by Simpson on 2 u^(2x-1) e^(-u^2) for x in [1.5, 2.5).
fn gamma(x: f64) -> f64 {
    let mut base = x;
    while base < 1.5 {
        base += 1.0;
    }
    while base >= 2.5 {
        base -= 1.0;
    }
    let n = 200000;
    let (a, b) = (0.0, 12.0);
    let h = (b - a) / n as f64;
    let f = |u: f64| if u == 0.0 { 0.0 } else { 2.0 * u.powf(2.0 * base - 1.0) * (-u * u).exp() };
    let mut s = f(a) + f(b);
    for k in 1..n {
        s += f(a + k as f64 * h) * if k % 2 == 1 { 4.0 } else { 2.0 };
    }
    let mut g = s * h / 3.0;
    let mut y = base;
    while y > x {
        y -= 1.0;
        g /= y;
    }
    while y < x {
        g *= y;
        y += 1.0;
    }
    g
}

/// `x` rounded to binary16 (to nearest, ties to even; normal range and zero).
fn f16(x: f64) -> f64 {
    if x == 0.0 {
        return x;
    }
    let ulp = 2f64.powi((x.abs().log2().floor() as i32).max(-14) - 10);
    (x / ulp).round_ties_even() * ulp
}

/// `got` is `want` rounded to f32 within `ulps` (or within `abs` of it near zero).
fn close(got: f32, want: f64, ulps: f64, abs: f64, what: &str) {
    if want.is_nan() {
        assert!(got.is_nan(), "{what}: {got} for NaN");
        return;
    }
    if want.is_infinite() {
        assert_eq!(got as f64, want, "{what}");
        return;
    }
    let ulp = (want.abs() as f32).max(f32::MIN_POSITIVE) as f64 * f32::EPSILON as f64;
    let err = (got as f64 - want).abs();
    assert!(err <= ulps * ulp || err <= abs, "{what}: got {got}, want {want} ({:.1} ulp)", err / ulp);
}

#[test]
fn math_library_launch_bounds_half_and_cooperative_groups_on_the_clang_path() {
    if !have_clang19() {
        return;
    }
    let d = tmp("math");
    let o = run("math", "128", &["x:f32[128]=iota:in", "out:f32[2048]=zeros:out", "d:f64[512]=zeros:out"], &d);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let ptx = std::fs::read_to_string(d.join("clang_api.ptx")).unwrap();
    assert!(ptx.contains(".maxntid 128, 1, 1") && ptx.contains(".minnctapersm 4"), "__launch_bounds__ in the PTX");
    let out: Vec<f32> = npy_values(&d.join("out.npy"), f32::from_le_bytes);
    let dout: Vec<f64> = npy_values(&d.join("d.npy"), f64::from_le_bytes);
    for i in 0..128usize {
        let v = (i as f64 - 64.0) / 16.0;
        let o = &out[16 * i..16 * i + 16];
        let at = |k: usize| format!("f{k}({v})");
        close(o[0], erf(v), 2.0, 1e-12, &at(0));
        close(o[1], 1.0 - erf(v), 2.0, 1e-7, &at(1));
        let g = if v <= 0.0 && v == v.round() { f64::INFINITY } else { gamma(v) };
        close(o[2], g.abs().ln(), 2.0, 1e-6, &at(2));
        // Gamma has poles at 0 (+inf from +0) and the negative integers (NaN).
        close(
            o[3],
            if v == 0.0 {
                f64::INFINITY
            } else if g.is_infinite() {
                f64::NAN
            } else {
                g
            },
            4.0,
            0.0,
            &at(3),
        );
        close(o[4], v.atan2(-1.5), 2.0, 0.0, &at(4));
        close(o[5], v.cbrt(), 2.0, 0.0, &at(5));
        close(o[6], v.hypot(3.0), 1.0, 0.0, &at(6));
        close(o[7], v.exp_m1(), 2.0, 0.0, &at(7));
        close(o[8], v.abs().ln_1p(), 2.0, 0.0, &at(8));
        close(o[9], v.sinh(), 2.0, 0.0, &at(9));
        close(o[10], v.cosh(), 2.0, 0.0, &at(10));
        close(o[11], v.asinh(), 2.0, 0.0, &at(11));
        close(o[12], v.atan(), 2.0, 0.0, &at(12));
        close(o[13], (v / 4.0).acos(), 2.0, 0.0, &at(13));
        // fmod is exact: the float inputs' remainder.
        let (a, b) = ((v as f32 * 7.25) as f64, 1.75f64);
        assert_eq!(o[14] as f64, a % b, "{}", at(14));
        close(o[15], 0.5 * (1.0 + erf(v / std::f64::consts::SQRT_2)), 2.0, 1e-12, &at(15));
        let dd = &dout[4 * i..4 * i + 4];
        let rel =
            |got: f64, want: f64, what: &str| assert!((got - want).abs() <= 1e-13 * want.abs().max(1.0), "{what}({v}): {got} vs {want}");
        rel(dd[0], v.exp(), "exp");
        rel(dd[1], (v.abs() + 0.125).ln(), "log");
        rel(dd[2], (v * 10.0).sin() + (v * 3.0).cos(), "sin+cos");
        rel(dd[3], (v.abs() + 0.5).powf(2.5) + erf(v), "pow+erf");
    }
    // Known values, independent of the integrals above.
    let at = |v: f64| ((v * 16.0) + 64.0) as usize;
    close(out[16 * at(0.5) + 3], std::f64::consts::PI.sqrt(), 4.0, 0.0, "tgamma(1/2) = sqrt(pi)");
    close(out[16 * at(3.0) + 3], 2.0, 0.0, 0.0, "tgamma(3) = 2");
    close(out[16 * at(-0.5) + 3], -2.0 * std::f64::consts::PI.sqrt(), 4.0, 0.0, "tgamma(-1/2)");
    close(out[16 * at(1.0)], 0.842_700_792_949_714_9, 1.0, 0.0, "erf(1)");

    // cuda_fp16.h: half arithmetic rounds to binary16 at each step.
    let d = tmp("halves");
    let o = run("halves", "64", &["x:f32[64]=iota:in", "out:f32[128]=zeros:out"], &d);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out: Vec<f32> = npy_values(&d.join("out.npy"), f32::from_le_bytes);
    let h = |x: f32| f16(x as f64) as f32;
    for i in 0..64usize {
        let a = h(i as f32 / 8.0);
        let b = h(h(a * a) + 0.5);
        let fma = f16(b as f64 * a as f64 - a as f64) as f32;
        assert_eq!(out[2 * i], fma, "half fma at {i}");
        let p = h(i as f32);
        assert_eq!(out[2 * i + 1], h(p * p) + 1.0, "half2 at {i}");
    }

    // cooperative_groups.h: tiles of 16, reductions and a tile-relative ballot.
    let d = tmp("groups");
    let o = run("groups", "64", &["in:i32[64]=iota:in", "out:i32[8]=zeros:out"], &d);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out: Vec<i32> = npy_values(&d.join("out.npy"), i32::from_le_bytes);
    for t in 0..4i32 {
        let lanes = 16 * t..16 * t + 16;
        assert_eq!(out[2 * t as usize], lanes.clone().sum::<i32>(), "tile {t} sum");
        // Odd values are odd ranks: ballot 0xAAAA.
        assert_eq!(out[2 * t as usize + 1], 16 * t + 15 + 0xAAAA, "tile {t} max + ballot");
    }
}
