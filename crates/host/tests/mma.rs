//! Tensor cores, warpgroups and asynchronous copies (issue 6), checked
//! against a real GPU and against float64 references.
//!
//! **GPU ground truth.** `tests/mma/gpu/mma_gpu.cu` holds our own kernels for
//! every family (mma.sync in each shape and type, ldmatrix/stmatrix/
//! movmatrix, wmma GEMMs in every shape and type, wmma fragment probes,
//! cp.async with src-size, an mbarrier producer/consumer pipeline with
//! arrive_drop and token waits, cp.async.bulk, wgmma with every swizzle mode,
//! transposes, A from registers, bf16 and negation, and a TMA
//! (`cp.async.bulk.tensor`) + mbarrier + wgmma GEMM with out-of-bounds
//! tiles). nvcc 13.0 compiled it for sm_80 and sm_90a
//! (`mma_gpu.sm_80.ptx`, `mma_gpu.sm_90a.ptx`), an H200 ran it on inputs
//! that are a deterministic function of their index ([`mix`] below, the same
//! in the .cu file), and `tests/mma/golden/*.bin` are the outputs it gave.
//! Here warpsim runs the same PTX on the same inputs:
//!
//! * integers, data movement (ldmatrix, stmatrix, movmatrix, cp.async,
//!   bulk copies, the mbarrier pipeline) and wmma fragment contents match
//!   the GPU bit for bit;
//! * floating-point results match the GPU within the bounds below, and
//!   match a float64 reference within the tolerance of each input type.
//!
//! **Accumulation.** The PTX ISA leaves the tensor cores' summation
//! unspecified; warpsim models what the H200 does (see
//! `crates/engine/src/exec_mma.rs`): f32 accumulators align C and the exact
//! products to the largest exponent, truncate each at 2^(emax-26), add them
//! exactly and round toward zero. With f16 and bf16 inputs this matches the
//! GPU bit for bit ([`F16_BF16_ULP`] = 0) in every mma, wmma and wgmma test
//! here; with tf32 inputs most results are bit-identical and the others
//! differ by about one ulp of the largest partial sum (see [`check_f32`]). f16 accumulators (round to nearest), f64
//! mma (an fma chain) and integer forms are bit-exact. Every result is also
//! checked against a float64 reference: relative error (to the sum of the
//! magnitudes of the terms) under 1e-5, far inside the 1e-3 for f16
//! inputs with f32 accumulation.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use warpsim_host::{prepare, DevicePtr, Dims, Kernel, LaunchOptions, Prepared};
use warpsim_ir::mma::TensorMap;
use warpsim_ir::Program;
use warpsim_launch::{BufferSpec, Dtype, Init, ParamSpec, Role, ScalarParam, Value};
use warpsim_numerics::{cvt::cvt, FMode, ScalarType};

/// Largest difference, in units in the last place, between warpsim and the
/// H200 for f32 accumulators with f16 or bf16 inputs: none.
const F16_BF16_ULP: Option<u32> = Some(0);
/// With tf32 inputs the bound is relative to the terms' magnitude (see [`check_f32`]).
const TF32_ULP: Option<u32> = None;
/// f16 accumulators: bit-exact.
const F16_ACC_EXACT: bool = true;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/mma")
}

// ---- inputs (the same functions as mma_gpu.cu) -------------------------------------------

fn mix(i: u32, seed: u32) -> u32 {
    let mut x = i.wrapping_mul(0x9E37_79B1) ^ seed.wrapping_mul(0x85EB_CA77).wrapping_add(0x1656_67B1);
    x ^= x >> 16;
    x = x.wrapping_mul(0x7FEB_352D);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846C_A68B);
    x ^= x >> 16;
    x
}
fn gen_f16(i: u32, s: u32) -> f32 {
    ((mix(i, s) & 2047) as i32 - 1024) as f32 / 1024.0
}
fn gen_bf16(i: u32, s: u32) -> f32 {
    ((mix(i, s) & 255) as i32 - 128) as f32 / 128.0
}
fn gen_f32(i: u32, s: u32) -> f32 {
    ((mix(i, s) & 0xFF_FFFF) as i32 - 0x80_0000) as f32 / 8_388_608.0
}
fn gen_f64(i: u32, s: u32) -> f64 {
    (mix(i, s) as f64 - 2_147_483_648.0) / 2_147_483_648.0 + mix(i, s ^ 0x5555) as f64 / 9_007_199_254_740_992.0
}
fn f16_bits(v: f32) -> u16 {
    cvt(ScalarType::F16, ScalarType::F32, FMode::RN, v.to_bits() as u64) as u16
}
fn f16_val(b: u16) -> f64 {
    f64::from_bits(cvt(ScalarType::F64, ScalarType::F16, FMode::RN, b as u64))
}
fn bf16_val(b: u16) -> f64 {
    f32::from_bits((b as u32) << 16) as f64
}
fn vec_f16(n: usize, s: u32) -> Vec<u16> {
    (0..n as u32).map(|i| f16_bits(gen_f16(i, s))).collect()
}
fn vec_bf16(n: usize, s: u32) -> Vec<u16> {
    (0..n as u32).map(|i| (gen_bf16(i, s).to_bits() >> 16) as u16).collect()
}
fn vec_f32(n: usize, s: u32) -> Vec<f32> {
    (0..n as u32).map(|i| gen_f32(i, s)).collect()
}
fn vec_f64(n: usize, s: u32) -> Vec<f64> {
    (0..n as u32).map(|i| gen_f64(i, s)).collect()
}
fn vec_u8(n: usize, s: u32) -> Vec<u8> {
    (0..n as u32).map(|i| mix(i, s) as u8).collect()
}
fn vec_i32(n: usize, s: u32) -> Vec<i32> {
    (0..n as u32).map(|i| mix(i, s) as i32).collect()
}

// ---- bytes -------------------------------------------------------------------------------

trait Bytes {
    fn bytes(&self) -> Vec<u8>;
}
macro_rules! bytes_of {
    ($($t:ty),*) => {$(
        impl Bytes for Vec<$t> {
            fn bytes(&self) -> Vec<u8> {
                self.iter().flat_map(|x| x.to_le_bytes()).collect()
            }
        }
    )*};
}
bytes_of!(u8, u16, u32, i32, f32, f64);

fn from_bytes<T: Copy, const N: usize>(b: &[u8], f: fn([u8; N]) -> T) -> Vec<T> {
    b.chunks_exact(N).map(|c| f(c.try_into().unwrap())).collect()
}
fn as_f32(b: &[u8]) -> Vec<f32> {
    from_bytes(b, f32::from_le_bytes)
}
fn as_u16(b: &[u8]) -> Vec<u16> {
    from_bytes(b, u16::from_le_bytes)
}

fn golden(name: &str) -> Vec<u8> {
    let p = root().join("golden").join(format!("{name}.bin"));
    std::fs::read(&p).unwrap_or_else(|e| panic!("reading {}: {e}", p.display()))
}

// ---- running the nvcc PTX ------------------------------------------------------------------

fn program(arch: &str) -> Arc<Program> {
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<Program>>>> = OnceLock::new();
    let mut c = CACHE.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    c.entry(arch.to_string())
        .or_insert_with(|| {
            let path = root().join("gpu").join(format!("mma_gpu.{arch}.ptx"));
            let src = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
            Arc::new(warpsim_ir::compile_module(&path.display().to_string(), &src).unwrap_or_else(|e| panic!("compiling {arch}: {e}")))
        })
        .clone()
}

/// A kernel argument: a buffer (bytes) or a 32-bit integer.
enum Arg {
    Buf(Vec<u8>),
    Zeros(usize),
    I32(i32),
    /// A 128-byte by-value parameter (a tensor map), filled in by a patch.
    Blob,
}

fn buffer(i: usize, data: &[u8]) -> ParamSpec {
    ParamSpec::Buffer(BufferSpec {
        name: format!("p{i}"),
        dtype: Dtype::U8,
        count: data.len().max(1) as u64,
        init: Init::Values(if data.is_empty() { vec![Value::Bits(0)] } else { data.iter().map(|&b| Value::Bits(b as u64)).collect() }),
        role: Role::Inout,
    })
}

struct Run {
    p: Prepared,
}

impl Run {
    /// Bytes of buffer argument `i`.
    fn buf(&self, i: usize) -> Vec<u8> {
        self.p.read(&format!("p{i}")).unwrap_or_else(|e| panic!("{e}"))
    }
}

/// The one runner: lays out `args` for `kernel` of `program`, lets `patch`
/// adjust the prepared launch (by-value parameters, extra allocations), runs
/// `grid` blocks of `block` threads; errors (launch or fault) as text.
fn run_args(
    program: Arc<Program>,
    kernel: &str,
    args: Vec<Arg>,
    grid: [u32; 3],
    block: u32,
    max_insts: u64,
    patch: impl FnOnce(&mut Prepared),
) -> Result<Run, String> {
    let specs: Vec<ParamSpec> = args
        .iter()
        .enumerate()
        .map(|(i, a)| match a {
            Arg::Buf(b) => buffer(i, b),
            Arg::Zeros(n) => buffer(i, &vec![0u8; *n]),
            Arg::I32(v) => ParamSpec::Scalar(ScalarParam { name: None, ty: Dtype::I32, bits: *v as u32 as u64 }),
            Arg::Blob => ParamSpec::Scalar(ScalarParam { name: None, ty: Dtype::U64, bits: 0 }),
        })
        .collect();
    let k = Kernel::from_program(program, kernel).map_err(|e| e.to_string())?;
    let mut p = prepare(&k, &specs).map_err(|e| e.to_string())?;
    patch(&mut p);
    let opts = LaunchOptions { max_warp_instructions_per_block: max_insts, ..Default::default() };
    p.launch(&Dims::new(grid, [block, 1, 1], 0), &opts).map_err(|e| e.to_string())?;
    Ok(Run { p })
}

/// A kernel of the nvcc PTX for `arch`.
fn launch(arch: &str, kernel: &str, args: Vec<Arg>, grid: [u32; 3], block: u32, patch: impl FnOnce(&mut Prepared)) -> Run {
    run_args(program(arch), kernel, args, grid, block, 1 << 26, patch).unwrap_or_else(|e| panic!("running {kernel} ({arch}): {e}"))
}

fn one_warp(arch: &str, kernel: &str, args: Vec<Arg>) -> Run {
    launch(arch, kernel, args, [1, 1, 1], 32, |_| {})
}

/// One warp computing D = A * B + C with `kernel(a, b, c, d)`: D's bytes.
fn mma_d(arch: &str, kernel: &str, a: Vec<u8>, b: Vec<u8>, c: Vec<u8>, d_bytes: usize) -> Vec<u8> {
    one_warp(arch, kernel, vec![Arg::Buf(a), Arg::Buf(b), Arg::Buf(c), Arg::Zeros(d_bytes)]).buf(3)
}

/// Allocates `data` in the launch's context; returns its address.
fn alloc_with(p: &mut Prepared, name: &str, data: &[u8]) -> u64 {
    let ptr = p.ctx.alloc(name, data.len() as u64, None);
    p.ctx.write(ptr, data).unwrap();
    ptr.0
}

// ---- comparisons -------------------------------------------------------------------------

/// Distance in ulps between two f32 (or f16 widened) values of the same type.
fn ulps32(a: f32, b: f32) -> u32 {
    let key = |x: f32| {
        let i = x.to_bits() as i32;
        if i < 0 {
            i32::MIN.wrapping_sub(i) as i64
        } else {
            i as i64
        }
    };
    (key(a) - key(b)).unsigned_abs() as u32
}
fn ulps16(a: u16, b: u16) -> u32 {
    let key = |x: u16| {
        if x & 0x8000 != 0 {
            -((x & 0x7FFF) as i32)
        } else {
            x as i32
        }
    };
    (key(a) - key(b)).unsigned_abs()
}

/// Checks f32 results against the GPU and a float64 reference. `max_ulp`
/// bounds the distance from the GPU in ulps of the result (0: bit-exact);
/// when `None` (tf32), the distance is bounded by 2^-22 times the sum of the
/// magnitudes of the terms (one ulp of the largest partial sum, or so). The
/// relative error against float64 is scaled by that sum too and must stay
/// under `rel`.
fn check_f32(what: &str, got: &[f32], gpu: &[f32], reference: &[(f64, f64)], max_ulp: Option<u32>, rel: f64) {
    assert_eq!(got.len(), gpu.len(), "{what}: length");
    let mut worst_ulp = 0;
    let mut worst_rel = 0.0f64;
    let mut exact = 0;
    for i in 0..got.len() {
        let (r, scale) = reference[i];
        let u = ulps32(got[i], gpu[i]);
        worst_ulp = worst_ulp.max(u);
        exact += (u == 0) as usize;
        match max_ulp {
            Some(m) => assert!(u <= m, "{what}[{i}]: warpsim {} vs GPU {} ({u} ulp)", got[i], gpu[i]),
            None => {
                let d = (got[i] as f64 - gpu[i] as f64).abs();
                assert!(d <= scale * 2f64.powi(-22), "{what}[{i}]: warpsim {} vs GPU {} (terms of magnitude {scale})", got[i], gpu[i]);
            }
        }
        let e = (got[i] as f64 - r).abs() / scale.max(1e-30);
        worst_rel = worst_rel.max(e);
        assert!(e < rel, "{what}[{i}]: warpsim {} vs float64 {r} (relative error {e:.3e})", got[i]);
    }
    eprintln!(
        "{what}: {exact} of {} results bit-identical to the H200 (max {worst_ulp} ulp), max relative error {worst_rel:.2e} vs float64",
        got.len()
    );
}

/// Reference D = A * B + C (value, sum of |terms|) for element accessors.
fn reference(
    m: usize,
    n: usize,
    k: usize,
    a: impl Fn(usize, usize) -> f64,
    b: impl Fn(usize, usize) -> f64,
    c: impl Fn(usize, usize) -> f64,
) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(m * n);
    for i in 0..m {
        for j in 0..n {
            let mut s = c(i, j);
            let mut mag = s.abs();
            for kk in 0..k {
                let p = a(i, kk) * b(kk, j);
                s += p;
                mag += p.abs();
            }
            out.push((s, mag));
        }
    }
    out
}

fn tf32(x: f32) -> f64 {
    f32::from_bits(x.to_bits() & 0xFFFF_E000) as f64
}

// ---- mma.sync ------------------------------------------------------------------------------

/// Element type of an mma.sync A or B operand in its input buffer.
#[derive(Copy, Clone)]
enum In {
    F16,
    Bf16,
    /// Full f32 values; the tensor cores read their top 19 bits.
    Tf32,
}

impl In {
    /// `n` inputs from `seed`: their bytes, and the value the tensor cores read from each.
    fn gen(self, n: usize, seed: u32) -> (Vec<u8>, Vec<f64>) {
        match self {
            In::F16 => {
                let v = vec_f16(n, seed);
                (v.bytes(), v.iter().map(|&x| f16_val(x)).collect())
            }
            In::Bf16 => {
                let v = vec_bf16(n, seed);
                (v.bytes(), v.iter().map(|&x| bf16_val(x)).collect())
            }
            In::Tf32 => {
                let v = vec_f32(n, seed);
                (v.bytes(), v.iter().map(|&x| tf32(x)).collect())
            }
        }
    }
}

/// mma.sync m16n8kK with f32 accumulators: (architectures, kernel, golden, K,
/// input type, seeds of A, B and C, bound in ulps from the GPU).
type MmaF32Case = (&'static [&'static str], &'static str, &'static str, usize, In, [u32; 3], Option<u32>);
const MMA_F32: [MmaF32Case; 5] = [
    (&["sm_80", "sm_90a"], "_Z11k_mma_16816ILi0EEvPKtS1_PKfPf", "mma_m16n8k16_f16", 16, In::F16, [1, 2, 3], F16_BF16_ULP),
    (&["sm_80", "sm_90a"], "_Z11k_mma_16816ILi1EEvPKtS1_PKfPf", "mma_m16n8k16_bf16", 16, In::Bf16, [1, 2, 3], F16_BF16_ULP),
    (&["sm_80"], "_Z14k_mma_1688_f16PKtS0_PKfPf", "mma_m16n8k8_f16", 8, In::F16, [7, 8, 9], F16_BF16_ULP),
    (&["sm_80"], "_Z15k_mma_1688_tf32PKjS0_PKfPf", "mma_m16n8k8_tf32", 8, In::Tf32, [10, 11, 12], TF32_ULP),
    (&["sm_80"], "_Z15k_mma_1684_tf32PKjS0_PKfPf", "mma_m16n8k4_tf32", 4, In::Tf32, [10, 11, 12], TF32_ULP),
];

#[test]
fn mma_f32_accumulators_match_the_gpu() {
    for (arches, kernel, name, k, ty, [sa, sb, sc], ulp) in MMA_F32 {
        // A is 16 x K row-major, B K x 8 column-major (at least K = 8 elements deep), C 16 x 8.
        let ((a, av), (b, bv)) = (ty.gen(16 * k.max(8), sa), ty.gen(8 * k.max(8), sb));
        let c = vec_f32(128, sc);
        let refr = reference(16, 8, k, |i, kk| av[i * k + kk], |kk, n| bv[n * k + kk], |i, j| c[i * 8 + j] as f64);
        for arch in arches {
            let d = mma_d(arch, kernel, a.clone(), b.clone(), c.bytes(), 512);
            check_f32(&format!("{name} {arch}"), &as_f32(&d), &as_f32(&golden(name)), &refr, ulp, 1e-6);
        }
    }
}

#[test]
fn mma_f16_accumulators_match_the_gpu() {
    let (a, b, c) = (vec_f16(256, 4), vec_f16(128, 5), vec_f16(128, 6));
    let d = mma_d("sm_80", "_Z18k_mma_16816_f16accPKtS0_S0_Pt", a.bytes(), b.bytes(), c.bytes(), 256);
    let got = as_u16(&d);
    let gpu = as_u16(&golden("mma_m16n8k16_f16acc"));
    let refr = reference(16, 8, 16, |i, k| f16_val(a[i * 16 + k]), |k, n| f16_val(b[n * 16 + k]), |i, j| f16_val(c[i * 8 + j]));
    let mut worst = 0;
    for i in 0..got.len() {
        let u = ulps16(got[i], gpu[i]);
        worst = worst.max(u);
        assert!(!F16_ACC_EXACT || u == 0, "[{i}] warpsim {} vs GPU {}", f16_val(got[i]), f16_val(gpu[i]));
        let (v, mag) = refr[i];
        assert!((f16_val(got[i]) - v).abs() <= mag * 1e-3 + 1e-3, "[{i}] vs float64 {v}");
    }
    eprintln!("mma f16 accumulators: max {worst} ulp from the H200");
}

/// Integer forms and f64 (an fma chain): bit for bit.
#[test]
fn mma_integers_and_f64_match_the_gpu_exactly() {
    let (a, b, c) = (vec_u8(512, 13).bytes(), vec_u8(256, 14).bytes(), vec_i32(128, 15).bytes());
    let c2: Vec<i32> = vec_i32(128, 16).into_iter().map(|x| x >> 8).collect();
    let f64s = [vec_f64(32, 17).bytes(), vec_f64(32, 18).bytes(), vec_f64(64, 19).bytes()];
    for (kernel, [a, b, c], out, name) in [
        ("_Z14k_mma_16832_s8ILi0EEvPKhS1_PKiPi", [&a, &b, &c], 512, "mma_m16n8k32_s8"),
        ("_Z14k_mma_16832_s8ILi1EEvPKhS1_PKiPi", [&a, &b, &c], 512, "mma_m16n8k32_s8_sat"),
        ("_Z16k_mma_16816_u8s8PKhS0_PKiPi", [&a, &b, &c2.bytes()], 512, "mma_m16n8k16_u8s8"),
        ("_Z15k_mma_8816_s8u8PKhS0_PKiPi", [&a, &b, &c2.bytes()], 256, "mma_m8n8k16_s8u8"),
        ("_Z13k_mma_884_f64PKdS0_S0_Pd", [&f64s[0], &f64s[1], &f64s[2]], 512, "mma_m8n8k4_f64"),
    ] {
        let d = mma_d("sm_80", kernel, a.clone(), b.clone(), c.clone(), out);
        assert_eq!(d, golden(name), "{name}");
    }
}

#[test]
fn ldmatrix_stmatrix_movmatrix_match_the_gpu() {
    let input: Vec<u16> = (0..256u32).map(|i| (i.wrapping_mul(0x0101) ^ 0x5A00) as u16).collect();
    let r = one_warp("sm_80", "_Z10k_ldmatrixPKtPj", vec![Arg::Buf(input.bytes()), Arg::Zeros(6 * 32 * 4 * 4)]);
    assert_eq!(r.buf(1), golden("ldmatrix"));
    let r = one_warp("sm_90a", "_Z10k_stmatrixPtPj", vec![Arg::Zeros(6 * 256 * 2), Arg::Zeros(128)]);
    assert_eq!(r.buf(0), golden("stmatrix"));
    assert_eq!(r.buf(1), golden("movmatrix"));
}

// ---- wmma ----------------------------------------------------------------------------------

#[test]
fn wmma_fragments_are_laid_out_as_on_the_gpu() {
    // Each probe loads a matrix whose cells hold their own index and dumps
    // every lane's fragment: warpsim's fragments must equal the H200's.
    let idx16: Vec<u16> = (0..1024).map(|i| i as u16).collect();
    let idx32f: Vec<u32> = (0..1024).map(|i| 0x3F80_0000 + i).collect();
    let idx8: Vec<u8> = (0..1024).map(|i| i as u8).collect();
    let idx64f: Vec<f64> = (0..1024).map(|i| i as f64).collect();
    let idxi: Vec<i32> = (0..1024).collect();
    // (kernel template arguments, golden file, source kind, leading dimension)
    let probes: [(&str, &str, &str, i32); 27] = [
        ("7k_probeIN6nvcuda4wmma8matrix_aELi16ELi16ELi16E6__halfNS1_9row_majorES3_EvPKT5_jPh", "probe_f16_m16n16k16_a_row", "16", 16),
        ("7k_probeIN6nvcuda4wmma8matrix_aELi16ELi16ELi16E6__halfNS1_9col_majorES3_EvPKT5_jPh", "probe_f16_m16n16k16_a_col", "16", 16),
        ("7k_probeIN6nvcuda4wmma8matrix_bELi16ELi16ELi16E6__halfNS1_9row_majorES3_EvPKT5_jPh", "probe_f16_m16n16k16_b_row", "16", 16),
        ("7k_probeIN6nvcuda4wmma8matrix_bELi16ELi16ELi16E6__halfNS1_9col_majorES3_EvPKT5_jPh", "probe_f16_m16n16k16_b_col", "16", 16),
        ("7k_probeIN6nvcuda4wmma8matrix_aELi32ELi8ELi16E6__halfNS1_9row_majorES3_EvPKT5_jPh", "probe_f16_m32n8k16_a_row", "16", 16),
        ("7k_probeIN6nvcuda4wmma8matrix_bELi32ELi8ELi16E6__halfNS1_9row_majorES3_EvPKT5_jPh", "probe_f16_m32n8k16_b_row", "16", 8),
        ("7k_probeIN6nvcuda4wmma8matrix_aELi8ELi32ELi16E6__halfNS1_9row_majorES3_EvPKT5_jPh", "probe_f16_m8n32k16_a_row", "16", 16),
        ("7k_probeIN6nvcuda4wmma8matrix_bELi8ELi32ELi16E6__halfNS1_9col_majorES3_EvPKT5_jPh", "probe_f16_m8n32k16_b_col", "16", 16),
        ("11k_probe_accILi16ELi16ELi16EfLb0EEvPKT2_jPh", "probe_f32_m16n16k16_c_row", "f32", 16),
        ("11k_probe_accILi16ELi16ELi16EfLb1EEvPKT2_jPh", "probe_f32_m16n16k16_c_col", "f32", 16),
        ("11k_probe_accILi16ELi16ELi16E6__halfLb0EEvPKT2_jPh", "probe_f16_m16n16k16_c_row", "16", 16),
        ("11k_probe_accILi32ELi8ELi16EfLb0EEvPKT2_jPh", "probe_f32_m32n8k16_c_row", "f32", 8),
        ("11k_probe_accILi8ELi32ELi16EfLb0EEvPKT2_jPh", "probe_f32_m8n32k16_c_row", "f32", 32),
        (
            "7k_probeIN6nvcuda4wmma8matrix_aELi16ELi16ELi16E13__nv_bfloat16NS1_9row_majorES3_EvPKT5_jPh",
            "probe_bf16_m16n16k16_a_row",
            "16",
            16,
        ),
        (
            "7k_probeIN6nvcuda4wmma8matrix_bELi16ELi16ELi16E13__nv_bfloat16NS1_9col_majorES3_EvPKT5_jPh",
            "probe_bf16_m16n16k16_b_col",
            "16",
            16,
        ),
        (
            "7k_probeIN6nvcuda4wmma8matrix_aELi32ELi8ELi16E13__nv_bfloat16NS1_9row_majorES3_EvPKT5_jPh",
            "probe_bf16_m32n8k16_a_row",
            "16",
            16,
        ),
        (
            "7k_probeIN6nvcuda4wmma8matrix_bELi8ELi32ELi16E13__nv_bfloat16NS1_9row_majorES3_EvPKT5_jPh",
            "probe_bf16_m8n32k16_b_row",
            "16",
            32,
        ),
        (
            "7k_probeIN6nvcuda4wmma8matrix_aELi16ELi16ELi8ENS1_9precision4tf32ENS1_9row_majorEfEvPKT5_jPh",
            "probe_tf32_m16n16k8_a_row",
            "f32",
            8,
        ),
        (
            "7k_probeIN6nvcuda4wmma8matrix_aELi16ELi16ELi8ENS1_9precision4tf32ENS1_9col_majorEfEvPKT5_jPh",
            "probe_tf32_m16n16k8_a_col",
            "f32",
            16,
        ),
        (
            "7k_probeIN6nvcuda4wmma8matrix_bELi16ELi16ELi8ENS1_9precision4tf32ENS1_9row_majorEfEvPKT5_jPh",
            "probe_tf32_m16n16k8_b_row",
            "f32",
            16,
        ),
        (
            "7k_probeIN6nvcuda4wmma8matrix_bELi16ELi16ELi8ENS1_9precision4tf32ENS1_9col_majorEfEvPKT5_jPh",
            "probe_tf32_m16n16k8_b_col",
            "f32",
            8,
        ),
        ("7k_probeIN6nvcuda4wmma8matrix_aELi16ELi16ELi16EaNS1_9row_majorEaEvPKT5_jPh", "probe_s8_m16n16k16_a_row", "8", 16),
        ("7k_probeIN6nvcuda4wmma8matrix_bELi16ELi16ELi16EaNS1_9col_majorEaEvPKT5_jPh", "probe_s8_m16n16k16_b_col", "8", 16),
        ("11k_probe_accILi16ELi16ELi16EiLb0EEvPKT2_jPh", "probe_s32_m16n16k16_c_row", "i32", 16),
        ("7k_probeIN6nvcuda4wmma8matrix_aELi8ELi8ELi4EdNS1_9row_majorEdEvPKT5_jPh", "probe_f64_m8n8k4_a_row", "f64", 4),
        ("7k_probeIN6nvcuda4wmma8matrix_bELi8ELi8ELi4EdNS1_9col_majorEdEvPKT5_jPh", "probe_f64_m8n8k4_b_col", "f64", 4),
        ("11k_probe_accILi8ELi8ELi4EdLb0EEvPKT2_jPh", "probe_f64_m8n8k4_c_row", "f64", 8),
    ];
    for arch in ["sm_80", "sm_90a"] {
        for (mangled, name, kind, ld) in probes {
            let src = match kind {
                "16" => idx16.bytes(),
                "f32" => idx32f.bytes(),
                "8" => idx8.clone(),
                "f64" => idx64f.bytes(),
                _ => idxi.bytes(),
            };
            let want = golden(name);
            let r = one_warp(arch, &format!("_Z{mangled}"), vec![Arg::Buf(src), Arg::I32(ld), Arg::Zeros(8 + 32 * 512)]);
            let got = r.buf(2);
            assert_eq!(&got[..want.len()], &want[..], "{name} {arch}");
        }
    }
}

struct WmmaCase {
    kernel: &'static str,
    golden: &'static str,
    /// Element type name of A/B and of C/D.
    ab: &'static str,
    acc: &'static str,
    seeds: [u32; 3],
    a_col: bool,
    b_col: bool,
    c_col: bool,
}

#[test]
fn wmma_gemms_match_the_gpu() {
    let cases = [
        WmmaCase {
            kernel: "_Z11k_wmma_gemmIt6__halffLi16ELi16ELi16EN6nvcuda4wmma9row_majorENS2_9col_majorELb0ELb0EEvPKT_S7_PKT1_PS8_iii",
            golden: "wmma_f16_m16n16k16_rc",
            ab: "f16",
            acc: "f32",
            seeds: [20, 21, 22],
            a_col: false,
            b_col: true,
            c_col: false,
        },
        WmmaCase {
            kernel: "_Z11k_wmma_gemmIt6__halffLi16ELi16ELi16EN6nvcuda4wmma9col_majorENS2_9row_majorELb1ELb0EEvPKT_S7_PKT1_PS8_iii",
            golden: "wmma_f16_m16n16k16_cr_ccol",
            ab: "f16",
            acc: "f32",
            seeds: [23, 24, 25],
            a_col: true,
            b_col: false,
            c_col: true,
        },
        WmmaCase {
            kernel: "_Z11k_wmma_gemmIt6__halfS0_Li32ELi8ELi16EN6nvcuda4wmma9row_majorES3_Lb0ELb0EEvPKT_S6_PKT1_PS7_iii",
            golden: "wmma_f16_m32n8k16_rr_f16acc",
            ab: "f16",
            acc: "f16",
            seeds: [26, 27, 28],
            a_col: false,
            b_col: false,
            c_col: false,
        },
        WmmaCase {
            kernel: "_Z11k_wmma_gemmIt6__halffLi8ELi32ELi16EN6nvcuda4wmma9col_majorES3_Lb0ELb0EEvPKT_S6_PKT1_PS7_iii",
            golden: "wmma_f16_m8n32k16_cc",
            ab: "f16",
            acc: "f32",
            seeds: [29, 30, 31],
            a_col: true,
            b_col: true,
            c_col: false,
        },
        WmmaCase {
            kernel: "_Z11k_wmma_gemmIt13__nv_bfloat16fLi16ELi16ELi16EN6nvcuda4wmma9row_majorENS2_9col_majorELb0ELb0EEvPKT_S7_PKT1_PS8_iii",
            golden: "wmma_bf16_m16n16k16_rc",
            ab: "bf16",
            acc: "f32",
            seeds: [32, 33, 34],
            a_col: false,
            b_col: true,
            c_col: false,
        },
        WmmaCase {
            kernel: "_Z11k_wmma_gemmIt13__nv_bfloat16fLi32ELi8ELi16EN6nvcuda4wmma9row_majorES3_Lb0ELb0EEvPKT_S6_PKT1_PS7_iii",
            golden: "wmma_bf16_m32n8k16_rr",
            ab: "bf16",
            acc: "f32",
            seeds: [35, 36, 37],
            a_col: false,
            b_col: false,
            c_col: false,
        },
        WmmaCase {
            kernel:
                "_Z11k_wmma_gemmIfN6nvcuda4wmma9precision4tf32EfLi16ELi16ELi8ENS1_9row_majorENS1_9col_majorELb0ELb1EEvPKT_S8_PKT1_PS9_iii",
            golden: "wmma_tf32_m16n16k8_rc",
            ab: "tf32",
            acc: "f32",
            seeds: [38, 39, 40],
            a_col: false,
            b_col: true,
            c_col: false,
        },
        WmmaCase {
            kernel: "_Z11k_wmma_gemmIhaiLi16ELi16ELi16EN6nvcuda4wmma9row_majorENS1_9col_majorELb0ELb0EEvPKT_S6_PKT1_PS7_iii",
            golden: "wmma_s8_m16n16k16_rc",
            ab: "s8",
            acc: "s32",
            seeds: [41, 42, 43],
            a_col: false,
            b_col: true,
            c_col: false,
        },
        WmmaCase {
            kernel: "_Z11k_wmma_gemmIdddLi8ELi8ELi4EN6nvcuda4wmma9row_majorENS1_9col_majorELb0ELb0EEvPKT_S6_PKT1_PS7_iii",
            golden: "wmma_f64_m8n8k4_rc",
            ab: "f64",
            acc: "f64",
            seeds: [44, 45, 46],
            a_col: false,
            b_col: true,
            c_col: false,
        },
    ];
    const N: usize = 64;
    for arch in ["sm_80", "sm_90a"] {
        for w in &cases {
            let [sa, sb, sc] = w.seeds;
            let (a, b): (Vec<u8>, Vec<u8>) = match w.ab {
                "f16" => (vec_f16(4096, sa).bytes(), vec_f16(4096, sb).bytes()),
                "bf16" => (vec_bf16(4096, sa).bytes(), vec_bf16(4096, sb).bytes()),
                "tf32" => (vec_f32(4096, sa).bytes(), vec_f32(4096, sb).bytes()),
                "s8" => (vec_u8(4096, sa), vec_u8(4096, sb)),
                _ => (vec_f64(4096, sa).bytes(), vec_f64(4096, sb).bytes()),
            };
            let c: Vec<u8> = match w.acc {
                "f32" => vec_f32(4096, sc).bytes(),
                "f16" => vec_f16(4096, sc).bytes(),
                "s32" => vec_i32(4096, sc).into_iter().map(|x| x >> 12).collect::<Vec<_>>().bytes(),
                _ => vec_f64(4096, sc).bytes(),
            };
            let out_bytes = c.len();
            let r = launch(
                arch,
                w.kernel,
                vec![
                    Arg::Buf(a.clone()),
                    Arg::Buf(b.clone()),
                    Arg::Buf(c.clone()),
                    Arg::Zeros(out_bytes),
                    Arg::I32(64),
                    Arg::I32(64),
                    Arg::I32(64),
                ],
                [1, 1, 1],
                128,
                |_| {},
            );
            let got = r.buf(3);
            let gpu = golden(w.golden);
            let what = format!("{} {arch}", w.golden);
            let elem = |v: &[u8], ty: &str, i: usize| -> f64 {
                match ty {
                    "f16" => f16_val(u16::from_le_bytes([v[2 * i], v[2 * i + 1]])),
                    "bf16" => bf16_val(u16::from_le_bytes([v[2 * i], v[2 * i + 1]])),
                    "tf32" | "f32" => f32::from_le_bytes(v[4 * i..4 * i + 4].try_into().unwrap()) as f64,
                    "s8" => v[i] as i8 as f64,
                    "s32" => i32::from_le_bytes(v[4 * i..4 * i + 4].try_into().unwrap()) as f64,
                    _ => f64::from_le_bytes(v[8 * i..8 * i + 8].try_into().unwrap()),
                }
            };
            match w.acc {
                "s32" | "f64" => assert_eq!(got, gpu, "{what}"),
                "f32" => {
                    // The tf32 kernel converts its fragments with cvt.rna.tf32.f32 (__float_to_tf32).
                    let tf = |x: f64| {
                        f32::from_bits(cvt(ScalarType::TF32, ScalarType::F32, FMode::RN, (x as f32).to_bits() as u64) as u32) as f64
                    };
                    let av = |i: usize, k: usize| {
                        let v = elem(&a, w.ab, if w.a_col { k * N + i } else { i * N + k });
                        if w.ab == "tf32" {
                            tf(v)
                        } else {
                            v
                        }
                    };
                    let bv = |k: usize, n: usize| {
                        let v = elem(&b, w.ab, if w.b_col { n * N + k } else { k * N + n });
                        if w.ab == "tf32" {
                            tf(v)
                        } else {
                            v
                        }
                    };
                    let ix = |i: usize, j: usize| if w.c_col { j * N + i } else { i * N + j };
                    let refr = reference(N, N, N, av, bv, |i, j| elem(&c, "f32", ix(i, j)));
                    // Compare in the stored order.
                    let refr: Vec<(f64, f64)> = (0..N * N).map(|p| if w.c_col { refr[(p % N) * N + p / N] } else { refr[p] }).collect();
                    let ulp = if w.ab == "tf32" { TF32_ULP } else { F16_BF16_ULP };
                    check_f32(&what, &as_f32(&got), &as_f32(&gpu), &refr, ulp, 1e-5);
                }
                _ => {
                    // f16 accumulators, rounded after each of the four 16-deep instructions.
                    let (g, h) = (as_u16(&got), as_u16(&gpu));
                    let worst = (0..g.len()).map(|i| ulps16(g[i], h[i])).max().unwrap();
                    assert!(!F16_ACC_EXACT || worst == 0, "{what}: {worst} ulp from the GPU");
                    eprintln!("{what}: max {worst} ulp from the H200");
                }
            }
        }
    }
}

// ---- asynchronous copies and mbarriers -----------------------------------------------------

#[test]
fn cp_async_with_src_size_matches_the_gpu() {
    let (g16, g8, g4) = (vec_u8(128 * 16, 50), vec_u8(128 * 8, 51), vec_u8(128 * 4, 52));
    let r = launch(
        "sm_80",
        "_Z10k_cp_asyncPKhS0_S0_Ph",
        vec![Arg::Buf(g16), Arg::Buf(g8), Arg::Buf(g4), Arg::Zeros(128 * 28)],
        [1, 1, 1],
        128,
        |_| {},
    );
    assert_eq!(r.buf(3), golden("cp_async"));
}

#[test]
fn mbarrier_pipeline_matches_the_gpu() {
    for arch in ["sm_80", "sm_90a"] {
        let input = vec_f32(256, 53);
        let r = launch(
            arch,
            "_Z15k_mbar_pipelinePKfPfPi",
            vec![Arg::Buf(input.bytes()), Arg::Zeros(512), Arg::Zeros(4)],
            [1, 1, 1],
            128,
            |_| {},
        );
        assert_eq!(r.buf(1), golden("mbar_pipeline"), "{arch}");
        assert_eq!(r.buf(2), vec![0u8; 4], "no wait gave up");
    }
}

#[test]
fn bulk_copies_match_the_gpu() {
    let input = vec_f32(1024, 54);
    let r = launch("sm_90a", "_Z6k_bulkPKfPfPi", vec![Arg::Buf(input.bytes()), Arg::Zeros(4096), Arg::Zeros(4)], [1, 1, 1], 128, |_| {});
    assert_eq!(r.buf(1), golden("bulk"));
    assert_eq!(r.buf(2), vec![0u8; 4]);
}

// ---- Hopper: wgmma and TMA ------------------------------------------------------------------

#[test]
fn wgmma_every_swizzle_and_operand_form_matches_the_gpu() {
    // (golden, swizzle, trans-a, trans-b, A in registers, bf16, negate A)
    let cases = [
        ("wgmma_sw128", "1", 0, 0, 0, 0, 0),
        ("wgmma_sw64", "2", 0, 0, 0, 0, 0),
        ("wgmma_sw32", "3", 0, 0, 0, 0, 0),
        ("wgmma_interleave", "0", 0, 0, 0, 0, 0),
        ("wgmma_sw128_tb", "1", 0, 1, 0, 0, 0),
        ("wgmma_sw64_tb", "2", 0, 1, 0, 0, 0),
        ("wgmma_sw32_tb", "3", 0, 1, 0, 0, 0),
        ("wgmma_interleave_tb", "0", 0, 1, 0, 0, 0),
        ("wgmma_sw128_ta", "1", 1, 0, 0, 0, 0),
        ("wgmma_sw128_areg", "1", 0, 0, 1, 0, 0),
        ("wgmma_sw128_bf16", "1", 0, 0, 0, 1, 0),
        ("wgmma_sw128_nega", "1", 0, 0, 0, 0, 1),
    ];
    for (name, swz, ta, tb, areg, bf, nega) in cases {
        let kernel = format!("_Z7k_wgmmaILi{swz}ELi{ta}ELi{tb}ELi{areg}ELi{bf}ELi{nega}EEvPKtS1_PKfPf");
        let a = if bf == 1 { vec_bf16(4096, 60) } else { vec_f16(4096, 60) };
        let b = if bf == 1 { vec_bf16(4096, 61) } else { vec_f16(4096, 61) };
        let c = vec_f32(4096, 62);
        let r = launch(
            "sm_90a",
            &kernel,
            vec![Arg::Buf(a.bytes()), Arg::Buf(b.bytes()), Arg::Buf(c.bytes()), Arg::Zeros(4096 * 4)],
            [1, 1, 1],
            128,
            |_| {},
        );
        let val = |x: u16| if bf == 1 { bf16_val(x) } else { f16_val(x) };
        let sign = if nega == 1 { -1.0 } else { 1.0 };
        let refr = reference(
            64,
            64,
            64,
            |i, k| sign * val(if ta == 1 && areg == 0 { a[k * 64 + i] } else { a[i * 64 + k] }),
            |k, n| val(if tb == 1 { b[k * 64 + n] } else { b[n * 64 + k] }),
            |i, j| c[i * 64 + j] as f64,
        );
        check_f32(name, &as_f32(&r.buf(3)), &as_f32(&golden(name)), &refr, F16_BF16_ULP, 1e-5);
    }
}

#[test]
fn tma_tensor_copies_feed_wgmma_as_on_the_gpu() {
    const MT: usize = 120;
    const NT: usize = 112;
    let a = vec_f16(MT * 64, 70);
    let b = vec_f16(NT * 64, 71);
    let kernel = "_Z11k_tma_wgmma14CUtensorMap_stS_PfiiPi";
    let k = program("sm_90a").kernel(kernel).unwrap().clone();
    let (a2, b2) = (a.bytes(), b.bytes());
    let r = launch(
        "sm_90a",
        kernel,
        vec![Arg::Blob, Arg::Blob, Arg::Zeros(MT * NT * 4), Arg::I32(MT as i32), Arg::I32(NT as i32), Arg::Zeros(4)],
        [2, 2, 1],
        128,
        |p| {
            // The tensors, and warpsim-encoded tensor maps for them in the by-value parameters.
            for (pi, data, rows) in [(0, &a2, MT), (1, &b2, NT)] {
                let base = alloc_with(p, &format!("tensor{pi}"), data);
                let map = TensorMap::tiled(base, 2, &[64, rows as u64], &[128], &[64, 64], 128);
                let off = k.params[pi].offset as usize;
                p.args.bytes_mut()[off..off + 128].copy_from_slice(&map.encode());
            }
        },
    );
    assert_eq!(r.buf(5), vec![0u8; 4], "the mbarrier wait completed");
    let refr = reference(MT, NT, 64, |i, kk| f16_val(a[i * 64 + kk]), |kk, n| f16_val(b[n * 64 + kk]), |_, _| 0.0);
    check_f32("tma_wgmma", &as_f32(&r.buf(2)), &as_f32(&golden("tma_wgmma")), &refr, F16_BF16_ULP, 1e-5);
}

// ---- hand-written PTX: semantics the GPU kernels above do not reach --------------------------

const HEAD: &str = ".version 8.0\n.target sm_90a\n.address_size 64\n";

/// Compiles `src` and runs `kernel`; errors (front end or launch) as text.
fn try_src(src: &str, kernel: &str, args: Vec<Arg>, block: u32, max_insts: u64, patch: impl FnOnce(&mut Prepared)) -> Result<Run, String> {
    let prog = warpsim_ir::compile_kernel("t.ptx", src, kernel).map_err(|e| e.to_string())?;
    run_args(Arc::new(prog), kernel, args, [1, 1, 1], block, max_insts, patch)
}

fn run_src(src: &str, kernel: &str, args: Vec<Arg>, block: u32) -> Run {
    try_src(src, kernel, args, block, 1 << 24, |_| {}).unwrap_or_else(|e| panic!("{kernel}: {e}"))
}

/// Kernel `k(.param .u64 out)` with `%p<4>`, `%r<8>` and `%rd<8>` declared: `body`, then `ret`.
fn out_kernel(body: &str) -> String {
    format!("{HEAD}.visible .entry k(.param .u64 out)\n{{\n.reg .pred %p<4>;\n.reg .b32 %r<8>;\n.reg .b64 %rd<8>;\n{body}ret;\n}}\n")
}

fn u32s(b: &[u8]) -> Vec<u32> {
    from_bytes(b, u32::from_le_bytes)
}

#[test]
fn mbarrier_phases_tokens_and_transactions() {
    // Lane 0 drives one mbarrier through four phases and records what each wait saw.
    let src = out_kernel(
        ".shared .align 8 .b64 bar;
ld.param.u64 %rd1, [out];
mov.u32 %r1, %tid.x;
setp.ne.u32 %p1, %r1, 0;
@%p1 bra DONE;
mbarrier.init.shared::cta.b64 [bar], 3;
mbarrier.arrive.shared::cta.b64 %rd2, [bar];
mbarrier.test_wait.shared::cta.b64 %p2, [bar], %rd2;
selp.u32 %r2, 1, 0, %p2;
st.global.u32 [%rd1], %r2;
mbarrier.pending_count.b64 %r3, %rd2;
st.global.u32 [%rd1+4], %r3;
mbarrier.arrive.release.cta.shared::cta.b64 %rd3, [bar], 2;
mbarrier.test_wait.shared::cta.b64 %p2, [bar], %rd2;
selp.u32 %r2, 1, 0, %p2;
st.global.u32 [%rd1+8], %r2;
mbarrier.test_wait.parity.shared::cta.b64 %p2, [bar], 0;
selp.u32 %r2, 1, 0, %p2;
st.global.u32 [%rd1+12], %r2;
mbarrier.test_wait.parity.shared::cta.b64 %p2, [bar], 1;
selp.u32 %r2, 1, 0, %p2;
st.global.u32 [%rd1+16], %r2;
mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [bar], 64;
mbarrier.arrive.shared::cta.b64 _, [bar], 3;
mbarrier.try_wait.parity.shared::cta.b64 %p2, [bar], 1;
selp.u32 %r2, 1, 0, %p2;
st.global.u32 [%rd1+20], %r2;
mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [bar], 64;
mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 %p2, [bar], 1, 1000;
selp.u32 %r2, 1, 0, %p2;
st.global.u32 [%rd1+24], %r2;
mbarrier.arrive_drop.shared::cta.b64 _, [bar];
mbarrier.arrive.shared::cta.b64 _, [bar], 2;
mbarrier.test_wait.parity.shared::cta.b64 %p2, [bar], 0;
selp.u32 %r2, 1, 0, %p2;
st.global.u32 [%rd1+28], %r2;
mbarrier.arrive.expect_tx.shared::cta.b64 %rd4, [bar], 16;
mbarrier.pending_count.b64 %r3, %rd4;
st.global.u32 [%rd1+32], %r3;
mbarrier.arrive.shared::cta.b64 _, [bar];
mbarrier.test_wait.parity.shared::cta.b64 %p2, [bar], 1;
selp.u32 %r2, 1, 0, %p2;
st.global.u32 [%rd1+36], %r2;
mbarrier.complete_tx.shared::cta.b64 [bar], 16;
mbarrier.test_wait.parity.shared::cta.b64 %p2, [bar], 1;
selp.u32 %r2, 1, 0, %p2;
st.global.u32 [%rd1+40], %r2;
mbarrier.inval.shared::cta.b64 [bar];
DONE:
",
    );
    let r = run_src(&src, "k", vec![Arg::Zeros(44)], 32);
    // 0: phase 0 open after one of three arrivals; 1: two still pending; 2: token wait done
    // after the rest arrive; 3,4: parity 0 done, parity 1 not; 5: all arrived but 64
    // transaction bytes outstanding; 6: done once they complete; 7: arrive_drop + 2 arrivals
    // complete phase 2 (parity 0); 8: phase 3 expects 2 (one dropped), 1 left after the first;
    // 9: not complete while 16 bytes are outstanding; 10: complete after them.
    assert_eq!(u32s(&r.buf(0)), [0, 2, 1, 1, 0, 0, 1, 1, 1, 0, 1]);
}

#[test]
fn a_wait_that_can_never_complete_ends_in_the_budget_fault() {
    let src = format!(
        "{HEAD}.visible .entry k()
{{
.reg .pred %p<2>;
.shared .align 8 .b64 bar;
mbarrier.init.shared.b64 [bar], 64;
mbarrier.arrive.shared.b64 _, [bar];
SPIN:
mbarrier.try_wait.parity.shared.b64 %p1, [bar], 0;
@!%p1 bra SPIN;
ret;
}}
"
    );
    let e = try_src(&src, "k", vec![], 32, 1 << 16, |_| {}).err().expect("the wait never completes");
    assert!(e.contains("instruction budget exceeded"), "{e}");
    // Arriving more than the pending count is a clear error.
    let src = src.replace("mbarrier.arrive.shared.b64 _, [bar];", "mbarrier.arrive.shared.b64 _, [bar], 65;");
    let e = try_src(&src, "k", vec![], 1, 1 << 16, |_| {}).err().unwrap();
    assert!(e.contains("exceeds the 64 arrivals pending"), "{e}");
}

#[test]
fn cp_async_ignore_src_and_zero_fill() {
    let src = format!(
        "{HEAD}.visible .entry k(.param .u64 in, .param .u64 out)
{{
.reg .pred %p<2>;
.reg .b32 %r<8>;
.reg .b64 %rd<8>;
.shared .align 16 .b8 s[512];
ld.param.u64 %rd1, [in];
ld.param.u64 %rd2, [out];
mov.u32 %r1, %tid.x;
shl.b32 %r2, %r1, 4;
mov.u32 %r3, s;
add.s32 %r3, %r3, %r2;
cvt.u64.u32 %rd3, %r2;
add.s64 %rd4, %rd1, %rd3;
and.b32 %r4, %r1, 1;
setp.eq.u32 %p1, %r4, 1;
cp.async.cg.shared.global.L2::128B [%r3], [%rd4], 16, %p1;
cp.async.commit_group;
cp.async.wait_group 0;
bar.sync 0;
ld.shared.v4.u32 {{%r4, %r5, %r6, %r7}}, [%r3];
add.s64 %rd5, %rd2, %rd3;
st.global.v4.u32 [%rd5], {{%r4, %r5, %r6, %r7}};
ret;
}}
"
    );
    let input = vec_u8(512, 80);
    let r = run_src(&src, "k", vec![Arg::Buf(input.clone()), Arg::Zeros(512)], 32);
    let out = r.buf(1);
    for t in 0..32 {
        let want: &[u8] = if t % 2 == 1 { &[0; 16] } else { &input[t * 16..t * 16 + 16] };
        assert_eq!(&out[t * 16..t * 16 + 16], want, "thread {t}");
    }
}

#[test]
fn tensor_copies_in_3d_with_out_of_bounds_boxes() {
    // Load a 4 x 3 x 2 box whose origin (-1, 1, 0) hangs off the tensor
    // (7 x 5 x 3 u32, padded rows) into shared memory, then store it back
    // into a second tensor at (5, 3, 2), where only part of it lands.
    let src = format!(
        "{HEAD}.visible .entry k(.param .align 64 .b8 src_map[128], .param .align 64 .b8 dst_map[128], .param .u64 dump)
{{
.reg .pred %p<2>;
.reg .b32 %r<8>;
.reg .b64 %rd<8>;
.shared .align 128 .b8 box[128];
.shared .align 8 .b64 bar;
mov.u64 %rd1, src_map;
mov.u64 %rd2, dst_map;
ld.param.u64 %rd3, [dump];
mov.u32 %r1, -1;
mov.u32 %r2, 1;
mov.u32 %r3, 0;
mbarrier.init.shared::cta.b64 [bar], 1;
mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], 96;
cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [box], [%rd1, {{%r1, %r2, %r3}}], [bar];
WAIT:
mbarrier.try_wait.parity.shared::cta.b64 %p1, [bar], 0;
@!%p1 bra WAIT;
mov.u32 %r4, 0;
COPY:
mov.u32 %r5, box;
add.s32 %r5, %r5, %r4;
ld.shared.u32 %r6, [%r5];
cvt.u64.u32 %rd4, %r4;
add.s64 %rd5, %rd3, %rd4;
st.global.u32 [%rd5], %r6;
add.s32 %r4, %r4, 4;
setp.lt.u32 %p1, %r4, 96;
@%p1 bra COPY;
fence.proxy.async.shared::cta;
mov.u32 %r1, 5;
mov.u32 %r2, 3;
mov.u32 %r3, 2;
cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%rd2, {{%r1, %r2, %r3}}], [box];
cp.async.bulk.commit_group;
cp.async.bulk.wait_group.read 0;
ret;
}}
"
    );
    let (x, y, z) = (7u64, 5u64, 3u64);
    let row = 8u64; // elements per padded row
    let src_data: Vec<u32> = (0..row * y * z).map(|i| 1000 + i as u32).collect();
    let dst_elems = row * y * z;
    let kernel_args = vec![Arg::Blob, Arg::Blob, Arg::Zeros(96)];
    let mut dst_base = 0;
    let src_bytes = src_data.bytes();
    let k = warpsim_ir::compile_kernel("t.ptx", &src, "k").unwrap();
    let offs: Vec<usize> = k.kernels[0].params.iter().map(|p| p.offset as usize).collect();
    let r = try_src(&src, "k", kernel_args, 1, 1 << 20, |p| {
        let sb = alloc_with(p, "src", &src_bytes);
        dst_base = p.ctx.alloc("dst", dst_elems * 4, None).0;
        let strides = [row * 4, row * y * 4];
        let m = TensorMap::tiled(sb, 4, &[x, y, z], &strides, &[4, 3, 2], 0);
        p.args.bytes_mut()[offs[0]..offs[0] + 128].copy_from_slice(&m.encode());
        let m = TensorMap::tiled(dst_base, 4, &[x, y, z], &strides, &[4, 3, 2], 0);
        p.args.bytes_mut()[offs[1]..offs[1] + 128].copy_from_slice(&m.encode());
    })
    .unwrap();
    let got = u32s(&r.buf(2));
    let mut want = Vec::new();
    for bz in 0..2i64 {
        for by in 0..3i64 {
            for bx in 0..4i64 {
                let (cx, cy, cz) = (bx - 1, by + 1, bz);
                let inside = cx >= 0 && (cx as u64) < x && (cy as u64) < y && (cz as u64) < z;
                want.push(if inside { src_data[(cz as u64 * row * y + cy as u64 * row + cx as u64) as usize] } else { 0 });
            }
        }
    }
    assert_eq!(got, want, "the loaded box, zeros outside the tensor");
    let mut dst = vec![0u8; dst_elems as usize * 4];
    r.p.ctx.read(DevicePtr(dst_base), &mut dst, "dst").unwrap();
    let dst = u32s(&dst);
    for (i, &v) in dst.iter().enumerate() {
        let (cz, cy, cx) = (i as u64 / (row * y), i as u64 / row % y, i as u64 % row);
        let (bx, by, bz) = (cx as i64 - 5, cy as i64 - 3, cz as i64 - 2);
        let in_box = (0..4).contains(&bx) && (0..3).contains(&by) && (0..2).contains(&bz) && cx < x;
        let expect = if in_box { want[(bz * 12 + by * 4 + bx) as usize] } else { 0 };
        assert_eq!(v, expect, "dst ({cx},{cy},{cz})");
    }
}

#[test]
fn tensor_maps_not_in_warpsims_encoding_are_named() {
    let src = format!(
        "{HEAD}.visible .entry k(.param .align 64 .b8 m[128])
{{
.reg .b32 %r<4>;
.reg .b64 %rd<4>;
.shared .align 128 .b8 box[128];
.shared .align 8 .b64 bar;
mov.u64 %rd1, m;
cvta.param.u64 %rd2, %rd1;
mov.u32 %r1, 0;
mbarrier.init.shared::cta.b64 [bar], 1;
cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes [box], [%rd2, {{%r1}}], [bar];
ret;
}}
"
    );
    let e = try_src(&src, "k", vec![Arg::Blob], 1, 1 << 20, |p| p.args.bytes_mut()[..8].copy_from_slice(&[0xAB; 8])).err().unwrap();
    assert!(e.contains("not in warpsim's encoding") && e.contains("opaque"), "{e}");
}

#[test]
fn unsupported_shapes_and_types_are_named() {
    let body =
        |inst: &str| format!("{HEAD}.visible .entry k()\n{{\n.reg .b32 %r<40>;\n.reg .b64 %rd<4>;\n.reg .f64 %fd<8>;\n{inst}\nret;\n}}\n");
    for (inst, needle) in [
        ("mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32 {%r0,%r1,%r2,%r3,%r4,%r5,%r6,%r7}, {%r8,%r9}, {%r10,%r11}, {%r12,%r13,%r14,%r15,%r16,%r17,%r18,%r19};", "m8n8k4 .f16 form"),
        ("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f16 {%r0,%r1,%r2,%r3}, {%r4,%r5,%r6,%r7}, {%r8,%r9}, {%r10,%r11};", "is not supported"),
        ("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%r0,%r1,%r2,%r3}, {%r4,%r5,%r6,%r7}, {%r8,%r9}, {%r10,%r11,%r12,%r13};", ".e4m3 elements are not supported"),
        ("mma.sync.aligned.m16n8k64.row.col.s32.s4.s4.s32 {%r0,%r1,%r2,%r3}, {%r4,%r5,%r6,%r7}, {%r8,%r9}, {%r10,%r11,%r12,%r13};", ".s4 elements are not supported"),
        ("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%fd0,%fd1,%fd2,%fd3}, {%fd4}, {%fd5}, {%fd6,%fd7,%fd0,%fd1};", "is not supported"),
        ("wmma.load.a.sync.aligned.row.m8n8k32.s4 {%r0}, [%rd1];", ".s4 elements are not supported"),
        ("wmma.load.a.sync.aligned.row.m16n8k16.f16 {%r0,%r1,%r2,%r3}, [%rd1];", "wmma A fragment of .f16 for m16n8k16"),
        ("ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8 {%r0,%r1}, [%rd1];", "only the .m8n8 .b16 shape"),
        ("cp.async.bulk.tensor.2d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2, %r3}], [%r4], {%r5};", "only the .tile mode"),
        ("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%r1], [%rd1], 16, [%r2], %r3;", "multicast"),
        ("wgmma.mma_async.sync.aligned.m64n8k16.f32.e4m3.e4m3 {%r0,%r1,%r2,%r3}, %rd1, %rd2, 1;", ".e4m3 elements are not supported"),
        ("wgmma.mma_async.sync.aligned.m64n12k16.f32.f16.f16 {%r0,%r1,%r2,%r3,%r4,%r5}, %rd1, %rd2, 1, 1, 1, 0, 0;", "wgmma m64n12k16"),
        ("wgmma.mma_async.sp.sync.aligned.m64n8k32.f32.f16.f16 {%r0,%r1,%r2,%r3}, %rd1, %rd2, %r5, 0, 1, 1, 1, 0, 0;", "sparse wgmma"),
        ("mma.sync.aligned.m16n8k16.row.col.satfinite.f32.f16.f16.f32 {%r0,%r1,%r2,%r3}, {%r4,%r5,%r6,%r7}, {%r8,%r9}, {%r10,%r11,%r12,%r13};", ".satfinite with floating-point"),
        ("cp.async.bulk.global.shared::cta.bulk_group.cp_mask [%rd1], [%r1], 16, %rd2;", ".cp_mask"),
        ("tensormap.replace.tile.global_address.global.b1024.b64 [%rd1], %rd2;", "unsupported instruction `tensormap"),
    ] {
        let e = warpsim_ir::compile_module("t.ptx", &body(inst)).err().unwrap_or_else(|| panic!("`{inst}` compiled")).to_string();
        assert!(e.contains(needle), "`{inst}`: {e}");
        assert!(e.starts_with("t.ptx:9:"), "the error points at the line: {e}");
    }
}

#[test]
fn warp_collectives_need_every_lane() {
    let src = format!(
        "{HEAD}.visible .entry k()
{{
.reg .b32 %r<20>;
mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {{%r0,%r1,%r2,%r3}}, {{%r4,%r5,%r6,%r7}}, {{%r8,%r9}}, {{%r10,%r11,%r12,%r13}};
ret;
}}
"
    );
    assert!(try_src(&src, "k", vec![], 32, 1 << 20, |_| {}).is_ok());
    let e = try_src(&src, "k", vec![], 16, 1 << 20, |_| {}).err().unwrap();
    assert!(e.contains("must be executed by all 32 lanes") && e.contains("0x0000ffff"), "{e}");
}

#[test]
fn elect_setmaxnreg_and_fences_run() {
    let src = out_kernel(
        "ld.param.u64 %rd1, [out];
setmaxnreg.inc.sync.aligned.u32 232;
fence.proxy.async.shared::cta;
fence.mbarrier_init.release.cluster;
wgmma.fence.sync.aligned;
elect.sync %r1|%p1, 0xffffffff;
@!%p1 bra DONE;
st.global.u32 [%rd1], %r1;
DONE:
wgmma.commit_group.sync.aligned;
wgmma.wait_group.sync.aligned 0;
setmaxnreg.dec.sync.aligned.u32 40;
",
    );
    let r = run_src(&src, "k", vec![Arg::Buf(vec![0xFF; 4])], 128);
    assert_eq!(u32s(&r.buf(0)), [0], "lane 0 was elected and wrote its lane id");
}

/// One generated wgmma kernel: the operands are laid out in shared memory
/// (warpsim's [`MatrixDesc::address`], validated on the H200 above for
/// m64n64k16) for shapes, types and layouts beyond the GPU kernels'.
struct WgCase {
    n: u32,
    /// "f16", "bf16", "tf32", "s8", "u8s8"
    ab: &'static str,
    /// "f32", "f16", "s32"
    d: &'static str,
    a_regs: bool,
    swizzle: u32,
    trans_a: bool,
    trans_b: bool,
}

fn wgmma_generated(c: &WgCase) {
    use warpsim_ir::mma::{Family, Frag, Mat, MatrixDesc, MmaType, Shape};
    let (k, eb, at, bt) = match c.ab {
        "f16" => (16, 2, MmaType::F16, MmaType::F16),
        "bf16" => (16, 2, MmaType::BF16, MmaType::BF16),
        "tf32" => (8, 4, MmaType::TF32, MmaType::TF32),
        "s8" => (32, 1, MmaType::S8, MmaType::S8),
        _ => (32, 1, MmaType::U8, MmaType::S8),
    };
    let dt = MmaType::from_ptx(c.d).unwrap();
    let (m, n) = (64u32, c.n);
    let shape = Shape { m, n, k };
    // Element values (as f64) and their raw bits.
    let elem = |i: u32, seed: u32, t: MmaType| -> (f64, u64) {
        match t {
            MmaType::F16 => {
                let b = f16_bits(gen_f16(i, seed));
                (f16_val(b), b as u64)
            }
            MmaType::BF16 => {
                let b = (gen_bf16(i, seed).to_bits() >> 16) as u16;
                (bf16_val(b), b as u64)
            }
            MmaType::TF32 => {
                let f = gen_f32(i, seed);
                (tf32(f), f.to_bits() as u64)
            }
            MmaType::S8 => (mix(i, seed) as u8 as i8 as f64, mix(i, seed) as u8 as u64),
            _ => (mix(i, seed) as u8 as f64, mix(i, seed) as u8 as u64),
        }
    };
    let a: Vec<(f64, u64)> = (0..m * k).map(|i| elem(i, 90, at)).collect(); // a[row * k + kk]
    let b: Vec<(f64, u64)> = (0..k * n).map(|i| elem(i, 91, bt)).collect(); // b[kk * n + col]
                                                                            // Shared-memory image: A at 0 (when from a descriptor), B after it.
    let s = c.swizzle;
    let layout = |rows_mn: u32, kmajor: bool| -> (u32, u32) {
        // (LBO, SBO) for an operand with `rows_mn` M or N rows.
        let t = 16 / eb;
        if kmajor {
            if s == 0 {
                (128, (k / t) * 128)
            } else {
                (16, 8 * s)
            }
        } else if s == 0 {
            ((rows_mn / t) * 128, 128)
        } else {
            let atom = s / eb; // elements of M/N per swizzle row
            (8 * s, rows_mn.div_ceil(atom) * 8 * s)
        }
    };
    // Each region's span: the largest address its elements reach.
    let span = |d: &MatrixDesc, rows: u32, kmajor: bool| -> u32 {
        let mut hi = 0;
        for r in 0..rows {
            for kk in 0..k {
                hi = hi.max(d.address(r, kk, eb, kmajor) + eb);
            }
        }
        (hi - d.start).next_multiple_of(1024)
    };
    let (alb, asb) = layout(64, !c.trans_a);
    let da = MatrixDesc { start: 0, lbo: alb, sbo: asb, base_offset: 0, swizzle: s };
    let a_bytes = if c.a_regs { 0 } else { span(&da, 64, !c.trans_a) };
    let (blb, bsb) = layout(n, !c.trans_b);
    let b_bytes = span(&MatrixDesc { start: a_bytes, lbo: blb, sbo: bsb, base_offset: 0, swizzle: s }, n, !c.trans_b);
    let img_len = (a_bytes + b_bytes) as usize;
    let mut img = vec![0u8; img_len];
    let put = |img: &mut Vec<u8>, addr: u32, v: u64| {
        for j in 0..eb as usize {
            img[addr as usize + j] = (v >> (8 * j)) as u8;
        }
    };
    if !c.a_regs {
        for r in 0..m {
            for kk in 0..k {
                put(&mut img, da.address(r, kk, eb, !c.trans_a), a[(r * k + kk) as usize].1);
            }
        }
    }
    let db = MatrixDesc { start: a_bytes, lbo: blb, sbo: bsb, base_offset: 0, swizzle: s };
    for col in 0..n {
        for kk in 0..k {
            put(&mut img, db.address(col, kk, eb, !c.trans_b), b[(kk * n + col) as usize].1);
        }
    }
    let enc = |d: &MatrixDesc| -> u64 {
        let mode = match d.swizzle {
            128 => 1u64,
            64 => 2,
            32 => 3,
            _ => 0,
        };
        (d.start as u64 >> 4) | ((d.lbo as u64 >> 4) << 16) | ((d.sbo as u64 >> 4) << 32) | (mode << 62)
    };
    // Per-thread A registers and C/D registers.
    let af = Frag { family: Family::Wgmma, shape, mat: Mat::A, ty: at };
    let df = Frag { family: Family::Wgmma, shape, mat: Mat::C, ty: dt };
    let (na, nd) = (af.regs() as usize, df.regs() as usize);
    let mut areg = vec![0u32; 128 * na];
    for t in 0..128u32 {
        for slot in 0..af.slots() {
            let (r, kk) = af.pos(t, slot);
            let per = at.per_reg();
            areg[(t as usize) * na + (slot / per) as usize] |= (a[(r * k + kk) as usize].1 as u32) << ((slot % per) * at.bits());
        }
    }
    let cval = |i: u32| -> (f64, u64) {
        match dt {
            MmaType::F32 => {
                let f = gen_f32(i, 92);
                (f as f64, f.to_bits() as u64)
            }
            MmaType::F16 => {
                let h = f16_bits(gen_f16(i, 92));
                (f16_val(h), h as u64)
            }
            _ => {
                let v = (mix(i, 92) as i32) >> 8;
                (v as f64, v as u32 as u64)
            }
        }
    };
    let mut creg = vec![0u32; 128 * nd];
    for t in 0..128u32 {
        for slot in 0..df.slots() {
            let (r, col) = df.pos(t, slot);
            let per = dt.per_reg();
            creg[(t as usize) * nd + (slot / per) as usize] |= (cval(r * n + col).1 as u32) << ((slot % per) * dt.bits());
        }
    }
    // The kernel.
    let regs = |p: &str, n: usize| (0..n).map(|i| format!("%{p}{i}")).collect::<Vec<_>>().join(",");
    let types = match c.ab {
        "u8s8" => format!("{}.u8.s8", c.d),
        t => format!("{}.{t}.{t}", c.d),
    };
    let a_op = if c.a_regs { format!("{{{}}}", regs("a", na)) } else { "%rd10".to_string() };
    let imms = match (c.ab, c.a_regs) {
        ("s8" | "u8s8", _) => String::new(),
        ("tf32", _) => ", 1, 1".into(),
        (_, true) => format!(", 1, 1, {}", c.trans_b as u32),
        (_, false) => format!(", 1, 1, {}, {}", c.trans_a as u32, c.trans_b as u32),
    };
    let loads = |p: &str, n: usize, base: &str| (0..n).map(|i| format!("ld.global.u32 %{p}{i}, [{base}+{}];\n", 4 * i)).collect::<String>();
    let stores = (0..nd).map(|i| format!("st.global.u32 [%rd9+{}], %c{i};\n", 4 * i)).collect::<String>();
    let src = format!(
        "{HEAD}.visible .entry k(.param .u64 img, .param .u64 areg, .param .u64 creg, .param .u64 out, .param .u64 da, .param .u64 db)
{{
.reg .pred %p<4>;
.reg .b32 %r<16>;
.reg .b32 %a<{na}>;
.reg .b32 %c<{nd}>;
.reg .b64 %rd<16>;
.shared .align 1024 .b8 smem[{img_len}];
ld.param.u64 %rd1, [img];
ld.param.u64 %rd2, [areg];
ld.param.u64 %rd3, [creg];
ld.param.u64 %rd4, [out];
ld.param.u64 %rd10, [da];
ld.param.u64 %rd11, [db];
mov.u32 %r1, %tid.x;
shl.b32 %r2, %r1, 4;
COPY:
setp.ge.u32 %p1, %r2, {img_len};
@%p1 bra COPIED;
cvt.u64.u32 %rd5, %r2;
add.s64 %rd6, %rd1, %rd5;
ld.global.v4.u32 {{%r3, %r4, %r5, %r6}}, [%rd6];
mov.u32 %r7, smem;
add.s32 %r7, %r7, %r2;
st.shared.v4.u32 [%r7], {{%r3, %r4, %r5, %r6}};
add.s32 %r2, %r2, 2048;
bra COPY;
COPIED:
bar.sync 0;
fence.proxy.async.shared::cta;
mul.wide.u32 %rd7, %r1, {na4};
add.s64 %rd7, %rd2, %rd7;
mul.wide.u32 %rd8, %r1, {nd4};
add.s64 %rd9, %rd4, %rd8;
add.s64 %rd8, %rd3, %rd8;
{aload}{cload}setp.ne.u32 %p2, %r1, 9999;
wgmma.fence.sync.aligned;
wgmma.mma_async.sync.aligned.m64n{n}k{k}.{types} {{{d}}}, {a_op}, %rd11, %p2{imms};
wgmma.commit_group.sync.aligned;
wgmma.wait_group.sync.aligned 0;
{stores}ret;
}}
",
        na4 = 4 * na,
        nd4 = 4 * nd,
        aload = if c.a_regs { loads("a", na, "%rd7") } else { String::new() },
        cload = loads("c", nd, "%rd8"),
        d = regs("c", nd),
    );
    let descs = [enc(&da), enc(&db)];
    let r = try_src(
        &src,
        "k",
        vec![Arg::Buf(img), Arg::Buf(areg.bytes()), Arg::Buf(creg.bytes()), Arg::Zeros(128 * nd * 4), Arg::Blob, Arg::Blob],
        128,
        1 << 24,
        |p| {
            let k = p.kernel.ir();
            for (i, d) in descs.iter().enumerate() {
                let off = k.params[4 + i].offset as usize;
                p.args.bytes_mut()[off..off + 8].copy_from_slice(&d.to_le_bytes());
            }
        },
    )
    .unwrap_or_else(|e| panic!("{}: {e}\n{src}", c.ab));
    let out = u32s(&r.buf(3));
    let what = format!("wgmma m64n{n}k{k} .{types} a_regs={} swizzle={s} trans_a={} trans_b={}", c.a_regs, c.trans_a, c.trans_b);
    for t in 0..128u32 {
        for slot in 0..df.slots() {
            let (row, col) = df.pos(t, slot);
            let per = dt.per_reg();
            let raw = (out[(t as usize) * nd + (slot / per) as usize] >> ((slot % per) * dt.bits())) as u64;
            let mut want = cval(row * n + col).0;
            let mut mag = want.abs();
            for kk in 0..k {
                let p = a[(row * k + kk) as usize].0 * b[(kk * n + col) as usize].0;
                want += p;
                mag += p.abs();
            }
            let got = match dt {
                MmaType::F32 => f32::from_bits(raw as u32) as f64,
                MmaType::F16 => f16_val(raw as u16),
                _ => raw as u32 as i32 as f64,
            };
            let tol = match dt {
                MmaType::F32 => mag * 1e-6,
                MmaType::F16 => mag * 1e-3,
                _ => 0.0,
            };
            let want = if dt == MmaType::S32 { want as i64 as i32 as f64 } else { want };
            assert!((got - want).abs() <= tol, "{what}: thread {t} element {slot} = D[{row}][{col}]: {got} vs float64 {want}");
        }
    }
}

#[test]
fn wgmma_shapes_types_and_layouts_against_float64() {
    for c in [
        WgCase { n: 8, ab: "f16", d: "f32", a_regs: false, swizzle: 128, trans_a: false, trans_b: false },
        WgCase { n: 256, ab: "f16", d: "f32", a_regs: true, swizzle: 64, trans_a: false, trans_b: true },
        WgCase { n: 64, ab: "f16", d: "f16", a_regs: false, swizzle: 32, trans_a: false, trans_b: false },
        WgCase { n: 24, ab: "bf16", d: "f32", a_regs: false, swizzle: 0, trans_a: false, trans_b: true },
        WgCase { n: 40, ab: "f16", d: "f32", a_regs: false, swizzle: 128, trans_a: true, trans_b: false },
        WgCase { n: 16, ab: "tf32", d: "f32", a_regs: false, swizzle: 128, trans_a: false, trans_b: false },
        WgCase { n: 16, ab: "tf32", d: "f32", a_regs: true, swizzle: 0, trans_a: false, trans_b: false },
        WgCase { n: 32, ab: "s8", d: "s32", a_regs: false, swizzle: 0, trans_a: false, trans_b: false },
        WgCase { n: 8, ab: "u8s8", d: "s32", a_regs: true, swizzle: 32, trans_a: false, trans_b: false },
    ] {
        wgmma_generated(&c);
    }
}

// ---- clang-19 --------------------------------------------------------------------------------

/// `tests/mma/clang_mma.cu` compiled by clang-19 (skipped, saying so, without it).
fn clang_ptx() -> Option<String> {
    static PTX: OnceLock<Option<String>> = OnceLock::new();
    PTX.get_or_init(|| {
        let out = std::env::temp_dir().join(format!("warpsim-mma-{}.ptx", std::process::id()));
        let r = std::process::Command::new("clang-19")
            .args(["--cuda-device-only", "-nocudainc", "-nocudalib", "--cuda-gpu-arch=sm_80", "--cuda-feature=+ptx70", "-O2", "-S", "-o"])
            .arg(&out)
            .arg(root().join("clang_mma.cu"))
            .output();
        match r {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                eprintln!("SKIPPED: clang-19 is not on PATH (apt-get install clang-19)");
                None
            }
            Err(e) => panic!("running clang-19: {e}"),
            Ok(o) => {
                assert!(o.status.success(), "clang-19 failed:\n{}", String::from_utf8_lossy(&o.stderr));
                let text = std::fs::read_to_string(&out).unwrap();
                let _ = std::fs::remove_file(&out);
                Some(text)
            }
        }
    })
    .clone()
}

#[test]
fn clang_wmma_and_mma_kernels_against_float64() {
    let Some(ptx) = clang_ptx() else { return };
    for needle in [
        "wmma.load.a.sync.aligned.row.m16n16k16.f16",
        "wmma.mma.sync.aligned.col.col.m16n16k16.f32.bf16.bf16.f32",
        "m16n16k8.f32.tf32.tf32.f32",
        "ldmatrix.sync.aligned.m8n8.x4",
        "cp.async.mbarrier.arrive.noinc",
    ] {
        assert!(ptx.contains(needle), "clang's PTX has no `{needle}`");
    }
    let a16 = vec_f16(256, 100);
    let b16 = vec_f16(256, 101);
    let c32 = vec_f32(256, 102);
    // wmma f16: A row-major, B column-major, C/D row-major.
    let r = run_src(&ptx, "wmma_f16", vec![Arg::Buf(a16.bytes()), Arg::Buf(b16.bytes()), Arg::Buf(c32.bytes()), Arg::Zeros(1024)], 32);
    let refr = reference(16, 16, 16, |i, k| f16_val(a16[i * 16 + k]), |k, n| f16_val(b16[n * 16 + k]), |i, j| c32[i * 16 + j] as f64);
    check_ref("clang wmma_f16", &as_f32(&r.buf(3)), &refr, |p| p);
    // bf16: A, B, C, D all column-major.
    let (abf, bbf) = (vec_bf16(256, 103), vec_bf16(256, 104));
    let r = run_src(&ptx, "wmma_bf16", vec![Arg::Buf(abf.bytes()), Arg::Buf(bbf.bytes()), Arg::Buf(c32.bytes()), Arg::Zeros(1024)], 32);
    let refr = reference(16, 16, 16, |i, k| bf16_val(abf[k * 16 + i]), |k, n| bf16_val(bbf[n * 16 + k]), |i, j| c32[j * 16 + i] as f64);
    check_ref("clang wmma_bf16", &as_f32(&r.buf(3)), &refr, |p| (p % 16) * 16 + p / 16);
    // tf32: A 16x8 row-major, B 8x16 row-major (full f32 inputs: their top 19 bits count).
    let (at, bt) = (vec_f32(128, 105), vec_f32(128, 106));
    let r = run_src(&ptx, "wmma_tf32", vec![Arg::Buf(at.bytes()), Arg::Buf(bt.bytes()), Arg::Buf(c32.bytes()), Arg::Zeros(1024)], 32);
    let refr = reference(16, 16, 8, |i, k| tf32(at[i * 8 + k]), |k, n| tf32(bt[k * 16 + n]), |i, j| c32[i * 16 + j] as f64);
    check_ref("clang wmma_tf32", &as_f32(&r.buf(3)), &refr, |p| p);
    // cp.async + mbarrier + ldmatrix + mma.sync m16n8k16.
    let bt16 = vec_f16(128, 107);
    let r = run_src(
        &ptx,
        "mma_pipeline",
        vec![Arg::Buf(a16.bytes()), Arg::Buf(bt16.bytes()), Arg::Buf(c32[..128].to_vec().bytes()), Arg::Zeros(512)],
        32,
    );
    let refr = reference(16, 8, 16, |i, k| f16_val(a16[i * 16 + k]), |k, n| f16_val(bt16[n * 16 + k]), |i, j| c32[i * 8 + j] as f64);
    check_ref("clang mma_pipeline", &as_f32(&r.buf(3)), &refr, |p| p);
}

/// Results (stored at `stored(p)` for logical row-major position p) against a float64 reference.
fn check_ref(what: &str, got: &[f32], reference: &[(f64, f64)], stored: impl Fn(usize) -> usize) {
    for (p, &(r, mag)) in reference.iter().enumerate() {
        let g = got[stored(p)] as f64;
        assert!((g - r).abs() <= mag * 1e-6, "{what}[{p}]: {g} vs float64 {r}");
    }
}
