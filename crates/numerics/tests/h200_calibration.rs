//! Replays the IEEE and approximate f32/f64 golden vectors recorded on the
//! H200 (`calibration/numerics/golden/`, described by its `index.json`:
//! 8192 f32 and ~3600 f64 inputs per op, special values included) against
//! this crate. IEEE-rounded ops (add, mul, fma, div, rcp, sqrt in every
//! rounding mode, ftz, NaN payloads) must match bit for bit; the `.approx` ones
//! must lie within the ulps documented in docs/semantics.md. The CUDA-level
//! ops of the index (`a / b`, `sqrtf`, `__fdividef`) are the PTX nvcc emits
//! for them (calibration/numerics/numerics.ptx); libdevice functions
//! (`expf`, `logf`, `sinf`) are not PTX instructions and are left out.

use std::path::PathBuf;
use warpsim_numerics::float::{eval_float, FloatOp};
use warpsim_numerics::{FMode, Rounding, ScalarType};

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../calibration/numerics/golden")
}

fn read(name: &str, f64s: bool) -> Vec<u64> {
    let b = std::fs::read(dir().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    if f64s {
        b.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect()
    } else {
        b.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap()) as u64).collect()
    }
}

/// Distance in units in the last place between two finite values of one sign convention.
fn ulps(a: u64, b: u64, f64s: bool) -> u64 {
    let key = |x: u64| -> i64 {
        if f64s {
            let v = x as i64;
            if v < 0 {
                i64::MIN - v
            } else {
                v
            }
        } else {
            let v = x as u32 as i32 as i64;
            if v < 0 {
                i32::MIN as i64 - v
            } else {
                v
            }
        }
    };
    key(a).abs_diff(key(b))
}

fn is_nan(x: u64, f64s: bool) -> bool {
    if f64s {
        f64::from_bits(x).is_nan()
    } else {
        f32::from_bits(x as u32).is_nan()
    }
}

/// (op name in the index, operation, rounding, ftz, allowed ulps or None for exact).
#[allow(clippy::type_complexity)]
const OPS: &[(&str, FloatOp, Option<Rounding>, bool, Option<u64>)] = &[
    ("div_rn_f32", FloatOp::Div, Some(Rounding::Rn), false, None),
    ("div_rn_ftz_f32", FloatOp::Div, Some(Rounding::Rn), true, None),
    ("div_rz_f32", FloatOp::Div, Some(Rounding::Rz), false, None),
    ("div_rm_f32", FloatOp::Div, Some(Rounding::Rm), false, None),
    ("div_rp_f32", FloatOp::Div, Some(Rounding::Rp), false, None),
    ("div_operator_f32", FloatOp::Div, Some(Rounding::Rn), false, None),
    ("div_full_f32", FloatOp::DivFull, None, false, Some(2)),
    ("div_full_ftz_f32", FloatOp::DivFull, None, true, Some(2)),
    ("div_approx_f32", FloatOp::DivApprox, None, false, Some(2)),
    ("fdividef_f32", FloatOp::DivApprox, None, false, Some(2)),
    ("rcp_rn_f32", FloatOp::Rcp, Some(Rounding::Rn), false, None),
    ("rcp_rn_ftz_f32", FloatOp::Rcp, Some(Rounding::Rn), true, None),
    ("rcp_approx_f32", FloatOp::RcpApprox, None, false, Some(1)),
    ("rcp_approx_ftz_f32", FloatOp::RcpApprox, None, true, Some(1)),
    ("sqrt_rn_f32", FloatOp::Sqrt, Some(Rounding::Rn), false, None),
    ("sqrt_rn_ftz_f32", FloatOp::Sqrt, Some(Rounding::Rn), true, None),
    ("sqrtf_default", FloatOp::Sqrt, Some(Rounding::Rn), false, None),
    ("sqrt_approx_f32", FloatOp::SqrtApprox, None, false, Some(2)),
    ("add_rn_f32", FloatOp::Add, Some(Rounding::Rn), false, None),
    ("add_rn_ftz_f32", FloatOp::Add, Some(Rounding::Rn), true, None),
    ("add_rz_f32", FloatOp::Add, Some(Rounding::Rz), false, None),
    ("add_rm_f32", FloatOp::Add, Some(Rounding::Rm), false, None),
    ("add_rp_f32", FloatOp::Add, Some(Rounding::Rp), false, None),
    ("mul_rn_f32", FloatOp::Mul, Some(Rounding::Rn), false, None),
    ("mul_rn_ftz_f32", FloatOp::Mul, Some(Rounding::Rn), true, None),
    ("mul_rz_f32", FloatOp::Mul, Some(Rounding::Rz), false, None),
    ("mul_rm_f32", FloatOp::Mul, Some(Rounding::Rm), false, None),
    ("mul_rp_f32", FloatOp::Mul, Some(Rounding::Rp), false, None),
    ("fma_rn_f32", FloatOp::Fma, Some(Rounding::Rn), false, None),
    ("fma_rn_ftz_f32", FloatOp::Fma, Some(Rounding::Rn), true, None),
    ("fma_rz_f32", FloatOp::Fma, Some(Rounding::Rz), false, None),
    ("fma_rm_f32", FloatOp::Fma, Some(Rounding::Rm), false, None),
    ("fma_rp_f32", FloatOp::Fma, Some(Rounding::Rp), false, None),
    ("div_rn_f64", FloatOp::Div, Some(Rounding::Rn), false, None),
    ("add_rn_f64", FloatOp::Add, Some(Rounding::Rn), false, None),
    ("add_rz_f64", FloatOp::Add, Some(Rounding::Rz), false, None),
    ("add_rm_f64", FloatOp::Add, Some(Rounding::Rm), false, None),
    ("add_rp_f64", FloatOp::Add, Some(Rounding::Rp), false, None),
    ("mul_rn_f64", FloatOp::Mul, Some(Rounding::Rn), false, None),
    ("mul_rz_f64", FloatOp::Mul, Some(Rounding::Rz), false, None),
    ("mul_rm_f64", FloatOp::Mul, Some(Rounding::Rm), false, None),
    ("mul_rp_f64", FloatOp::Mul, Some(Rounding::Rp), false, None),
    ("fma_rn_f64", FloatOp::Fma, Some(Rounding::Rn), false, None),
    ("fma_rz_f64", FloatOp::Fma, Some(Rounding::Rz), false, None),
    ("fma_rm_f64", FloatOp::Fma, Some(Rounding::Rm), false, None),
    ("fma_rp_f64", FloatOp::Fma, Some(Rounding::Rp), false, None),
    ("div_operator_f64", FloatOp::Div, Some(Rounding::Rn), false, None),
    ("rcp_rn_f64", FloatOp::Rcp, Some(Rounding::Rn), false, None),
    ("sqrt_rn_f64", FloatOp::Sqrt, Some(Rounding::Rn), false, None),
    ("sqrt_default_f64", FloatOp::Sqrt, Some(Rounding::Rn), false, None),
];

#[test]
fn h200_golden_vectors() {
    let index: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir().join("index.json")).unwrap()).unwrap();
    let mut failures = Vec::new();
    for &(name, op, rnd, ftz, tol) in OPS {
        let entry = index["ops"].as_array().unwrap().iter().find(|o| o["op"] == name).unwrap_or_else(|| panic!("{name} not in index"));
        let f64s = entry["dtype"] == "f64";
        let input = read(entry["input"].as_str().unwrap(), f64s);
        let want = read(entry["output"].as_str().unwrap(), f64s);
        let binary = entry["input"].as_str().unwrap().contains("binary");
        let ty = if f64s { ScalarType::F64 } else { ScalarType::F32 };
        let m = FMode { rnd, ftz, sat: false };
        let (mut bad, mut worst, mut first) = (0usize, 0u64, None);
        for (k, &w) in want.iter().enumerate() {
            // The recorded fma is a * b + a.
            let c = if op == FloatOp::Fma { input[2 * k] } else { 0 };
            let s = if binary { [input[2 * k], input[2 * k + 1], c] } else { [input[k], 0, 0] };
            let got = eval_float(op, ty, m, s);
            let ok = match tol {
                None => got == w,
                Some(u) => (is_nan(got, f64s) && is_nan(w, f64s)) || (!is_nan(got, f64s) && !is_nan(w, f64s) && ulps(got, w, f64s) <= u),
            };
            if !ok {
                bad += 1;
                if !is_nan(got, f64s) && !is_nan(w, f64s) {
                    worst = worst.max(ulps(got, w, f64s));
                }
                first.get_or_insert((s, got, w));
            }
        }
        if bad > 0 {
            failures.push(format!("{name}: {bad} of {} differ (worst {worst} ulps); first {:x?}", want.len(), first.unwrap()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
