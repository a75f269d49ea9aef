//! Replays instruction results recorded on an NVIDIA H200 (sm_90, driver
//! 580) by `tools/ptx_probe.py` against this crate.
//!
//! `tests/data/hw_sm90.txt` holds, for each PTX instruction form, operand
//! vectors (special values first, then seeded random ones) and the GPU's
//! result. Every form is mapped to this crate's entry points; results must
//! match bit for bit, except the `.approx` forms, which must lie within the
//! error the PTX ISA allows for them (this crate uses host math there) and
//! match exactly on special values (zeros, infinities, NaNs).

use warpsim_numerics::cvt::{cvt_pack_x2_with, cvt_with};
use warpsim_numerics::float::{compare_float_x2, eval_float, testp, FloatOp, TestpClass};
use warpsim_numerics::fp::Fmt;
use warpsim_numerics::int::{add_cc, eval_int, mad_cc, sub_cc, sub_cc_cf, IntOp, PrmtMode};
use warpsim_numerics::{compare, CmpOp, FMode, Rounding, ScalarType};

const DATA: &str = include_str!("data/hw_sm90.txt");

/// How closely an approximate result must match.
#[derive(Copy, Clone, Debug)]
enum Tol {
    Exact,
    /// Not compared: the ISA defines the result differently from what the
    /// recorded GPU computes (see the call site).
    Skip,
    /// Approximate: `ulps` units in the last place, or an absolute error.
    Approx {
        ulps: u64,
        abs: f64,
    },
}

struct Eval {
    outs: Vec<u64>,
    widths: Vec<u32>,
    tol: Tol,
    fmt: Option<Fmt>,
}

fn ty(s: &str) -> ScalarType {
    ScalarType::from_ptx(s).unwrap_or_else(|| panic!("bad type {s}"))
}

fn mask(v: u64, w: u32) -> u64 {
    if w >= 64 {
        v
    } else {
        v & ((1u64 << w) - 1)
    }
}

fn rounding(mods: &[&str]) -> Option<Rounding> {
    mods.iter().find_map(|m| Rounding::from_ptx(m))
}

fn fmode(mods: &[&str]) -> FMode {
    FMode { rnd: rounding(mods), ftz: mods.contains(&"ftz"), sat: mods.contains(&"sat") }
}

fn int_width(t: ScalarType) -> u32 {
    t.bits().max(16)
}

fn eval(name: &str, ins: &[u64]) -> Option<Eval> {
    let parts: Vec<&str> = name.split('.').collect();
    let op = parts[0];
    let last = *parts.last().unwrap();
    let exact = |outs: Vec<u64>, widths: Vec<u32>| Some(Eval { outs, widths, tol: Tol::Exact, fmt: None });
    let a = ins.first().copied().unwrap_or(0);
    let b = ins.get(1).copied().unwrap_or(0);
    let c = ins.get(2).copied().unwrap_or(0);
    let d = ins.get(3).copied().unwrap_or(0);

    // Carry-chain pseudo-forms: outputs (result, probe of the carry flag).
    if matches!(op, "addcc" | "subcc" | "addc" | "subc" | "subcc_addc" | "addcc_subc" | "madcc" | "madc") {
        let t = ty(last);
        let w = t.bits();
        let all = mask(u64::MAX, w);
        let (r, e) = match op {
            "addcc" => {
                let (r, cf) = add_cc(t, a, b, false);
                (r, cf as u64)
            }
            "subcc" => {
                let (r, borrow) = sub_cc(t, a, b, false);
                (r, if borrow { all } else { 0 })
            }
            "addc" => {
                let (r, cf) = add_cc(t, a, b, c & 1 == 1);
                (r, cf as u64)
            }
            "subc" => {
                let (r, borrow) = sub_cc(t, a, b, c & 1 == 1);
                (r, if borrow { all } else { 0 })
            }
            "subcc_addc" => {
                let (r, cf) = sub_cc_cf(t, a, b, true);
                (r, cf as u64)
            }
            "addcc_subc" => {
                let (r, cf) = add_cc(t, a, b, false);
                (r, sub_cc_cf(t, 0, 0, cf).0)
            }
            "madcc" => {
                let (r, cf) = mad_cc(t, parts[1] == "hi", a, b, c, false);
                (r, cf as u64)
            }
            _ => {
                let (r, cf) = mad_cc(t, parts[1] == "hi", a, b, c, d & 1 == 1);
                (r, cf as u64)
            }
        };
        return exact(vec![r, e], vec![w, w]);
    }

    if op == "setp" {
        let t = ty(last);
        let cmp = CmpOp::from_ptx(parts[1]).unwrap();
        let ftz = parts.contains(&"ftz");
        let r = match t {
            ScalarType::F16x2 | ScalarType::BF16x2 => {
                let (p, q) = compare_float_x2(cmp, t, ftz, a, b);
                p as u64 | (q as u64) << 1
            }
            _ => compare(cmp, t, ftz, a, b) as u64,
        };
        return exact(vec![r], vec![32]);
    }

    if op == "testp" {
        let class = match parts[1] {
            "finite" => TestpClass::Finite,
            "infinite" => TestpClass::Infinite,
            "number" => TestpClass::Number,
            "notanumber" => TestpClass::NotANumber,
            "normal" => TestpClass::Normal,
            "subnormal" => TestpClass::Subnormal,
            _ => return None,
        };
        return exact(vec![testp(class, ty(last), a) as u64], vec![32]);
    }

    if op == "cvt" {
        let n = parts.len();
        let (dst, src) = (ty(parts[n - 2]), ty(parts[n - 1]));
        let mods = &parts[1..n - 2];
        let m = fmode(mods);
        let relu = mods.contains(&"relu");
        let satfinite = mods.contains(&"satfinite");
        if matches!(dst, ScalarType::F16x2 | ScalarType::BF16x2) {
            let r = cvt_pack_x2_with(dst, m, relu, satfinite, f32::from_bits(a as u32), f32::from_bits(b as u32));
            return exact(vec![r as u64], vec![32]);
        }
        let r = cvt_with(dst, src, m, relu, satfinite, a);
        let w = if dst.is_float() { dst.bits() } else { int_width(dst) };
        return exact(vec![r], vec![w]);
    }

    if op == "lop3" {
        let lut = u8::from_str_radix(last.trim_start_matches("0x"), 16).unwrap();
        return exact(vec![eval_int(IntOp::Lop3(lut), ScalarType::B32, [a, b, c, 0])], vec![32]);
    }

    let t = ScalarType::from_ptx(last);
    if let Some(t) = t.filter(|t| t.is_float()) {
        let mods = &parts[1..parts.len() - 1];
        let m = fmode(mods);
        let approx = mods.contains(&"approx");
        let fop = match op {
            "add" => FloatOp::Add,
            "sub" => FloatOp::Sub,
            "mul" => FloatOp::Mul,
            "fma" | "mad" if mods.contains(&"relu") => FloatOp::FmaRelu,
            "fma" | "mad" => FloatOp::Fma,
            "div" if approx => FloatOp::DivApprox,
            "div" if mods.contains(&"full") => FloatOp::DivFull,
            "div" => FloatOp::Div,
            "rcp" if approx => FloatOp::RcpApprox,
            "rcp" => FloatOp::Rcp,
            "sqrt" if approx => FloatOp::SqrtApprox,
            "sqrt" => FloatOp::Sqrt,
            "rsqrt" => FloatOp::RsqrtApprox,
            "sin" => FloatOp::SinApprox,
            "cos" => FloatOp::CosApprox,
            "lg2" => FloatOp::Lg2Approx,
            "ex2" => FloatOp::Ex2Approx,
            "tanh" => FloatOp::TanhApprox,
            "abs" => FloatOp::Abs,
            "neg" => FloatOp::Neg,
            "min" if mods.contains(&"xorsign") && mods.contains(&"NaN") => FloatOp::MinNanXorsignAbs,
            "max" if mods.contains(&"xorsign") && mods.contains(&"NaN") => FloatOp::MaxNanXorsignAbs,
            "min" if mods.contains(&"xorsign") => FloatOp::MinXorsignAbs,
            "max" if mods.contains(&"xorsign") => FloatOp::MaxXorsignAbs,
            "min" if mods.contains(&"NaN") => FloatOp::MinNan,
            "max" if mods.contains(&"NaN") => FloatOp::MaxNan,
            "min" => FloatOp::Min,
            "max" => FloatOp::Max,
            "copysign" => FloatOp::Copysign,
            _ => return None,
        };
        let r = eval_float(fop, t, m, [a, b, c]);
        let fmt = Fmt::of(t);
        let tol = match fop {
            // The ISA bounds the error in [-100pi, 100pi] only; the hardware's
            // range reduction makes larger arguments differ from true sin/cos.
            FloatOp::SinApprox | FloatOp::CosApprox if Fmt::of(t).to_f64(a).abs() > 100.0 * std::f64::consts::PI => Tol::Skip,
            FloatOp::SinApprox | FloatOp::CosApprox => {
                let big = Fmt::of(t).to_f64(a).abs() > 2.0 * std::f64::consts::PI;
                Tol::Approx { ulps: 2, abs: 2f64.powf(if big { -14.7 } else { -20.5 }) }
            }
            // Coarse: only the upper 32 bits of the result are computed.
            FloatOp::RcpApprox | FloatOp::RsqrtApprox if Fmt::of(t) == Fmt::F64 => Tol::Approx { ulps: 1 << 32, abs: 0.0 },
            FloatOp::Lg2Approx => Tol::Approx { ulps: 2, abs: 2f64.powf(-22.0) },
            FloatOp::Ex2Approx if fmt == Fmt::F32 => Tol::Approx { ulps: 3, abs: 0.0 },
            FloatOp::TanhApprox if fmt == Fmt::F32 => Tol::Approx { ulps: 1 << 13, abs: 0.0 },
            FloatOp::Ex2Approx | FloatOp::TanhApprox => Tol::Approx { ulps: 2, abs: 0.0 },
            FloatOp::RsqrtApprox | FloatOp::RcpApprox | FloatOp::SqrtApprox | FloatOp::DivApprox | FloatOp::DivFull => {
                Tol::Approx { ulps: 2, abs: 0.0 }
            }
            _ => Tol::Exact,
        };
        let w = if matches!(t, ScalarType::F16x2 | ScalarType::BF16x2) { 32 } else { fmt.bits() };
        return Some(Eval { outs: vec![r], widths: vec![w], tol, fmt: Some(fmt) });
    }

    // Packed 16-bit integer min/max.
    if matches!(last, "s16x2" | "u16x2") && matches!(op, "min" | "max") {
        let relu = parts.contains(&"relu");
        let iop = IntOp::MinMax16x2 { max: op == "max", signed: last == "s16x2", relu };
        return Some(Eval { outs: vec![eval_int(iop, ScalarType::B32, [a, b, c, d])], widths: vec![32], tol: Tol::Exact, fmt: None });
    }

    // Integer forms.
    let t = t?;
    let w = int_width(t);
    let mods = &parts[1..parts.len() - 1];
    let (iop, ty_, outw) = match op {
        "add" if mods.contains(&"sat") => (IntOp::AddSat, t, w),
        "sub" if mods.contains(&"sat") => (IntOp::SubSat, t, w),
        "add" => (IntOp::Add, t, w),
        "sub" => (IntOp::Sub, t, w),
        "mul" => match parts[1] {
            "lo" => (IntOp::MulLo, t, w),
            "hi" => (IntOp::MulHi, t, w),
            _ => (IntOp::MulWide, t, 2 * t.bits()),
        },
        "mad" => match parts[1] {
            "lo" => (IntOp::MadLo, t, w),
            "hi" if mods.contains(&"sat") => (IntOp::MadHiSat, t, w),
            "hi" => (IntOp::MadHi, t, w),
            _ => (IntOp::MadWide, t, 2 * t.bits()),
        },
        "mul24" => (if parts[1] == "lo" { IntOp::Mul24Lo } else { IntOp::Mul24Hi }, t, 32),
        "mad24" => match (parts[1], mods.contains(&"sat")) {
            ("lo", _) => (IntOp::Mad24Lo, t, 32),
            (_, true) => (IntOp::Mad24HiSat, t, 32),
            _ => (IntOp::Mad24Hi, t, 32),
        },
        "sad" => (IntOp::Sad, t, w),
        "div" => (IntOp::Div, t, w),
        "rem" => (IntOp::Rem, t, w),
        "abs" => (IntOp::Abs, t, w),
        "neg" => (IntOp::Neg, t, w),
        "min" if mods.contains(&"relu") => (IntOp::MinRelu, t, w),
        "max" if mods.contains(&"relu") => (IntOp::MaxRelu, t, w),
        "min" => (IntOp::Min, t, w),
        "max" => (IntOp::Max, t, w),
        "szext" => (IntOp::Szext { wrap: mods.contains(&"wrap") }, t, 32),
        "fns" => (IntOp::Fns, t, 32),
        "popc" => (IntOp::Popc, t, 32),
        "clz" => (IntOp::Clz, t, 32),
        "bfind" if mods.contains(&"shiftamt") => (IntOp::BfindShiftAmt, t, 32),
        "bfind" => (IntOp::Bfind, t, 32),
        "brev" => (IntOp::Brev, t, w),
        "bfe" => (IntOp::Bfe, t, w),
        "bfi" => (IntOp::Bfi, t, w),
        "shl" => (IntOp::Shl, t, w),
        "shr" => (IntOp::Shr, t, w),
        "shf" => {
            let wrap = parts[2] == "wrap";
            (if parts[1] == "l" { IntOp::ShfL { wrap } } else { IntOp::ShfR { wrap } }, t, 32)
        }
        "and" => (IntOp::And, t, w),
        "or" => (IntOp::Or, t, w),
        "xor" => (IntOp::Xor, t, w),
        "not" => (IntOp::Not, t, w),
        "cnot" => (IntOp::Cnot, t, w),
        _ => return None,
    };
    let r = eval_int(iop, ty_, [a, b, c, d]);
    // sm_90 has no 64-bit bfe/bfi instruction; the compiler's emulation reads
    // more than the low 8 bits of the position and length operands, where the
    // ISA (followed here) reads only those.
    let (pos_len_hi, _) = match iop {
        IntOp::Bfe => ((b | c) >> 8 != 0, ()),
        IntOp::Bfi => ((c | d) >> 8 != 0, ()),
        _ => (false, ()),
    };
    let tol = if pos_len_hi && t.bits() == 64 { Tol::Skip } else { Tol::Exact };
    Some(Eval { outs: vec![r], widths: vec![outw], tol, fmt: None })
}

/// Integer forms whose type is not the last name component.
fn eval_special_int(name: &str, ins: &[u64]) -> Option<Eval> {
    let parts: Vec<&str> = name.split('.').collect();
    if !matches!(parts[0], "prmt" | "dp4a" | "dp2a") {
        return None;
    }
    let (a, b, c) = (ins[0], ins[1], ins[2]);
    let r = match parts[0] {
        "prmt" => {
            let mode = match parts.get(2).copied() {
                None => PrmtMode::Default,
                Some("f4e") => PrmtMode::F4e,
                Some("b4e") => PrmtMode::B4e,
                Some("rc8") => PrmtMode::Rc8,
                Some("ecl") => PrmtMode::Ecl,
                Some("ecr") => PrmtMode::Ecr,
                Some("rc16") => PrmtMode::Rc16,
                _ => return None,
            };
            eval_int(IntOp::Prmt(mode), ScalarType::B32, [a, b, c, 0])
        }
        "dp4a" => eval_int(IntOp::Dp4a { b_signed: parts[2] == "s32" }, ty(parts[1]), [a, b, c, 0]),
        "dp2a" => eval_int(IntOp::Dp2a { hi: parts[1] == "hi", b_signed: parts[3] == "s32" }, ty(parts[2]), [a, b, c, 0]),
        _ => return None,
    };
    Some(Eval { outs: vec![r], widths: vec![32], tol: Tol::Exact, fmt: None })
}

/// Distance in units in the last place between two finite values of `fmt`.
fn ulp_diff(fmt: Fmt, x: u64, y: u64) -> u64 {
    let key = |v: u64| -> i128 {
        let mag = (v & !fmt.sign() & fmt.mask()) as i128;
        if fmt.is_neg(v) {
            -mag
        } else {
            mag
        }
    };
    (key(x) - key(y)).unsigned_abs() as u64
}

fn close(fmt: Fmt, tol: Tol, ours: u64, hw: u64) -> bool {
    let Tol::Approx { ulps, abs } = tol else {
        return ours == hw || matches!(tol, Tol::Skip);
    };
    if ours == hw {
        return true;
    }
    let special = |v: u64| fmt.is_nan(v) || fmt.is_inf(v);
    if special(ours) || special(hw) {
        return false;
    }
    if ulp_diff(fmt, ours, hw) <= ulps {
        return true;
    }
    (fmt.to_f64(ours) - fmt.to_f64(hw)).abs() <= abs
}

fn lanes_close(e: &Eval, ours: u64, hw: u64, w: u32) -> bool {
    match e.fmt {
        Some(fmt) if w == 32 && fmt.bits() == 16 => {
            (0..2).all(|i| close(fmt, e.tol, (ours >> (16 * i)) & 0xFFFF, (hw >> (16 * i)) & 0xFFFF))
        }
        Some(fmt) => close(fmt, e.tol, ours, hw),
        None => ours == hw || matches!(e.tol, Tol::Skip),
    }
}

#[test]
fn matches_recorded_gpu_results() {
    let mut name = "";
    let mut failures: Vec<String> = Vec::new();
    let mut unsupported: Vec<String> = Vec::new();
    let mut forms = 0;
    let mut vectors = 0;
    for line in DATA.lines() {
        if let Some(n) = line.strip_prefix('@') {
            name = n;
            forms += 1;
            continue;
        }
        let toks: Vec<&str> = line.split_whitespace().collect();
        let (ins_t, out_t) = toks.split_at(toks.len() - 1);
        let ins: Vec<u64> = ins_t.iter().map(|t| u64::from_str_radix(t, 16).unwrap()).collect();
        let hw: Vec<u64> = out_t[0].split(',').map(|t| u64::from_str_radix(t, 16).unwrap()).collect();
        let e = match eval_special_int(name, &ins).or_else(|| eval(name, &ins)) {
            Some(e) => e,
            None => {
                if unsupported.last().map(String::as_str) != Some(name) {
                    unsupported.push(name.to_string());
                }
                continue;
            }
        };
        vectors += 1;
        for (k, (&o, &h)) in e.outs.iter().zip(&hw).enumerate() {
            let w = e.widths[k];
            let ours = mask(o, w);
            if !lanes_close(&e, ours, h, w) {
                failures.push(format!("{name} {ins_t:?}: ours {ours:x}, gpu {h:x} (output {k})"));
            }
        }
    }
    assert!(unsupported.is_empty(), "forms without a mapping: {unsupported:?}");
    assert!(forms > 800 && vectors > 50_000, "{forms} forms, {vectors} vectors");
    if !failures.is_empty() {
        let mut by_form: std::collections::BTreeMap<&str, Vec<&String>> = Default::default();
        for f in &failures {
            by_form.entry(f.split(' ').next().unwrap()).or_default().push(f);
        }
        let mut msg = format!("{} mismatches in {} forms:\n", failures.len(), by_form.len());
        for (form, fs) in &by_form {
            msg += &format!("{form}: {} mismatches\n", fs.len());
            for f in fs.iter().take(4) {
                msg += &format!("    {f}\n");
            }
        }
        panic!("{msg}");
    }
}
