//! CUDA kernels of our own (`tests/cuda/*.cu`), compiled to PTX with clang-19
//! when the tests run, executed by warpsim, and checked against references
//! computed here in Rust: bit for bit for integers, and for floats wherever
//! the kernel's order of operations is reproduced exactly (everywhere but the
//! `.approx` instructions, which are held to the PTX ISA's error bounds): the
//! kernels are compiled with `-ffp-contract=off`, so fmas are only those
//! written as `fmaf`. Each file is compiled twice, `-O2` and `-O0 -g`, and
//! both builds must give the same results.
//!
//! `tests/cuda/warpsim_cuda.h` supplies the CUDA definitions (clang builtins
//! and inline PTX) in place of the CUDA toolkit's headers and libdevice.
//!
//! The tests skip (with a message) only when `clang-19` is not on PATH; CI
//! installs it (`.ci/run`). The PTX goes to a directory under the system
//! temporary directory, never into the repository.
//!
//! NaN results follow NVIDIA's hardware, as `warpsim-numerics` documents it
//! (recorded on a GPU): f32 arithmetic, `abs`, `neg`, `min`/`max` of two NaNs
//! and conversions into f16/f32 give the canonical NaN (`0x7fffffff`,
//! `0x7fff`), except f64 -> f32 and f32 -> f64, which keep the sign and
//! payload (quietened); an f64 NaN produced from non-NaN operands is
//! `0xfff8000000000000`. `min`/`max` order -0.0 below +0.0.

mod common;
use common::{BUILDS, CLANG};
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock};

use warpsim_engine::LaunchStats;
use warpsim_host::{prepare, Dims, Kernel, LaunchOptions as RunOptions, Prepared};
use warpsim_launch::{BufferSpec, Dtype, Init, NamedInit, ParamSpec, Role, ScalarParam, Value};

// ---- compiling ------------------------------------------------------------------

std::thread_local! {
    /// The build the current test is checking, for failure messages.
    static BUILD: std::cell::Cell<&'static str> = const { std::cell::Cell::new("") };
}

struct Ptx {
    build: &'static str,
    path: PathBuf,
    text: String,
}

impl Ptx {
    /// The text of one `.entry` (up to the next entry or function).
    fn entry(&self, kernel: &str) -> &str {
        let start = self.text.find(&format!(".entry {kernel}(")).unwrap_or_else(|| panic!("no .entry {kernel} in {}", self.path.display()));
        let rest = &self.text[start + 1..];
        let end = [rest.find(".entry "), rest.find(".func ")].into_iter().flatten().min().unwrap_or(rest.len());
        &self.text[start..start + 1 + end]
    }

    /// Checks that clang emitted the instructions a test is about (in the
    /// optimised build; the unoptimised one differs in form).
    fn assert_has(&self, kernel: &str, needles: &[&str]) {
        if self.build != BUILDS[0].0 {
            return;
        }
        let body = self.entry(kernel);
        for n in needles {
            assert!(body.contains(n), "clang's PTX for `{kernel}` has no `{n}`; the test would not exercise it:\n{body}");
        }
    }
}

fn cuda_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/cuda")
}

/// `<tmp>/warpsim-cuda-kernels/<pid>`; directories that earlier runs left
/// there more than an hour ago are removed.
fn out_dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let parent = std::env::temp_dir().join("warpsim-cuda-kernels");
        if let Ok(entries) = std::fs::read_dir(&parent) {
            for e in entries.flatten() {
                let old =
                    e.metadata().and_then(|m| m.modified()).ok().and_then(|t| t.elapsed().ok()).is_some_and(|age| age.as_secs() > 3600);
                if old {
                    let _ = std::fs::remove_dir_all(e.path());
                }
            }
        }
        let d = parent.join(std::process::id().to_string());
        std::fs::create_dir_all(&d).unwrap_or_else(|e| panic!("creating {}: {e}", d.display()));
        d
    })
}

/// Whether clang-19 can be run; `false` only when it is not on PATH.
fn have_clang() -> bool {
    static HAVE: OnceLock<bool> = OnceLock::new();
    *HAVE.get_or_init(|| match Command::new(CLANG).arg("--version").output() {
        Ok(o) => {
            assert!(o.status.success(), "`{CLANG} --version` failed: {}", String::from_utf8_lossy(&o.stderr));
            true
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(e) => panic!("running {CLANG}: {e}"),
    })
}

/// Compiles `tests/cuda/<file>` to PTX in every build of [`BUILDS`], once per
/// test process; `None` (after saying so) when clang-19 is not installed.
fn cuda(file: &str) -> Option<Vec<Arc<Ptx>>> {
    static CACHE: OnceLock<Mutex<HashMap<String, Vec<Arc<Ptx>>>>> = OnceLock::new();
    if !have_clang() {
        eprintln!(
            "SKIPPED: {CLANG} is not on PATH, so the CUDA kernel tests cannot compile {file} (CI installs it; apt-get install clang-19)"
        );
        return None;
    }
    let mut cache = CACHE.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = cache.get(file) {
        return Some(p.clone());
    }
    let src = cuda_dir().join(file);
    let mut builds = Vec::new();
    for (build, flags) in BUILDS {
        let out = out_dir().join(format!("{}.{build}.ptx", file.trim_end_matches(".cu")));
        let text = common::clang_ptx(&src, &out, flags);
        builds.push(Arc::new(Ptx { build, path: out, text }));
    }
    cache.insert(file.to_string(), builds.clone());
    Some(builds)
}

/// `for ptx in cuda_or_skip!("file.cu") { ... }` runs the body for each
/// build; the test returns (passes, having said why) without clang-19.
macro_rules! cuda_or_skip {
    ($file:expr) => {
        match cuda($file) {
            Some(builds) => builds.into_iter().inspect(|p| BUILD.with(|b| b.set(p.build))),
            None => return,
        }
    };
}

// ---- parameters and launching ------------------------------------------------------

trait Elem: Copy {
    const DTYPE: Dtype;
    fn bits(self) -> u64;
    fn from_le(b: &[u8]) -> Self;
}

macro_rules! elem {
    ($t:ty, $d:expr, $bits:expr, $from:expr) => {
        impl Elem for $t {
            const DTYPE: Dtype = $d;
            fn bits(self) -> u64 {
                #[allow(clippy::redundant_closure_call)]
                ($bits)(self)
            }
            fn from_le(b: &[u8]) -> Self {
                #[allow(clippy::redundant_closure_call)]
                ($from)(b.try_into().unwrap())
            }
        }
    };
}
elem!(u8, Dtype::U8, |x: u8| x as u64, u8::from_le_bytes);
elem!(u16, Dtype::U16, |x: u16| x as u64, u16::from_le_bytes);
elem!(i16, Dtype::I16, |x: i16| x as u16 as u64, i16::from_le_bytes);
elem!(u32, Dtype::U32, |x: u32| x as u64, u32::from_le_bytes);
elem!(i32, Dtype::I32, |x: i32| x as u32 as u64, i32::from_le_bytes);
elem!(u64, Dtype::U64, |x: u64| x, u64::from_le_bytes);
elem!(f32, Dtype::F32, |x: f32| x.to_bits() as u64, f32::from_le_bytes);
elem!(f64, Dtype::F64, |x: f64| x.to_bits(), f64::from_le_bytes);

/// A buffer holding exactly `data`.
fn buf<T: Elem>(name: &str, data: &[T]) -> ParamSpec {
    ParamSpec::Buffer(BufferSpec {
        name: name.into(),
        dtype: T::DTYPE,
        count: data.len() as u64,
        init: Init::Values(data.iter().map(|x| Value::Bits(x.bits())).collect()),
        role: Role::Inout,
    })
}

/// A zero-filled buffer of `count` elements.
fn zeros<T: Elem>(name: &str, count: usize) -> ParamSpec {
    ParamSpec::Buffer(BufferSpec {
        name: name.into(),
        dtype: T::DTYPE,
        count: count as u64,
        init: Init::Named(NamedInit::Zeros),
        role: Role::Inout,
    })
}

fn scalar<T: Elem>(v: T) -> ParamSpec {
    ParamSpec::Scalar(ScalarParam { name: None, ty: T::DTYPE, bits: v.bits() })
}

struct Out {
    p: Prepared,
    stats: LaunchStats,
}

impl Out {
    fn read<T: Elem>(&self, what: &str, addr: u64, count: usize) -> Vec<T> {
        let mut bytes = vec![0u8; count * std::mem::size_of::<T>()];
        self.p.ctx.read(warpsim_host::DevicePtr(addr), &mut bytes, what).unwrap_or_else(|e| panic!("{e}"));
        bytes.chunks_exact(std::mem::size_of::<T>()).map(T::from_le).collect()
    }

    /// A buffer parameter's contents.
    fn get<T: Elem>(&self, name: &str) -> Vec<T> {
        let b = self.p.buffer(name).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(b.spec.dtype.size_bytes(), std::mem::size_of::<T>(), "buffer `{name}` is {}", b.spec.dtype);
        self.read(name, b.ptr.0, b.len as usize / std::mem::size_of::<T>())
    }

    /// A module-level `.global` variable's first `count` elements.
    fn global<T: Elem>(&self, name: &str, count: usize) -> Vec<T> {
        let addr = *self.p.globals().get(name).unwrap_or_else(|| panic!("no global `{name}`"));
        self.read(name, addr, count)
    }
}

struct Launch {
    grid: [u32; 3],
    block: [u32; 3],
    dynamic_shared: u32,
    opts: RunOptions,
}

impl Launch {
    fn new(grid: u32, block: u32) -> Launch {
        Launch { grid: [grid, 1, 1], block: [block, 1, 1], dynamic_shared: 0, opts: RunOptions::default() }
    }
}

/// Compiles `kernel` from `ptx`, lays out `params`, lets `patch` adjust the
/// prepared launch (parameter bytes a `ParamSpec` cannot express), launches.
fn run_with(ptx: &Ptx, kernel: &str, params: &[ParamSpec], l: &Launch, patch: impl FnOnce(&mut Prepared)) -> Out {
    BUILD.with(|b| b.set(ptx.build));
    let name = ptx.path.display().to_string();
    let prog = warpsim_ir::compile_kernel(&name, &ptx.text, kernel).unwrap_or_else(|e| panic!("compiling `{kernel}`: {e}"));
    let k = Kernel::from_program(Arc::new(prog), kernel).unwrap_or_else(|e| panic!("{e}"));
    let mut p = prepare(&k, params).unwrap_or_else(|e| panic!("preparing `{kernel}`: {e}"));
    patch(&mut p);
    let dims = Dims::new(l.grid, l.block, l.dynamic_shared);
    let stats = p.launch(&dims, &l.opts).unwrap_or_else(|e| panic!("launching `{kernel}`: {e}")).stats;
    Out { p, stats }
}

fn run(ptx: &Ptx, kernel: &str, params: &[ParamSpec], l: &Launch) -> Out {
    run_with(ptx, kernel, params, l, |_| {})
}

/// Asserts `got == want` element by element, listing the first mismatches.
fn check<T: Elem + std::fmt::Debug>(what: &str, got: &[T], want: &[T]) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let bad: Vec<usize> = (0..got.len()).filter(|&i| got[i].bits() != want[i].bits()).collect();
    if !bad.is_empty() {
        let shown: Vec<String> = bad
            .iter()
            .take(12)
            .map(|&i| format!("  [{i}] got {:?} (0x{:x}), want {:?} (0x{:x})", got[i], got[i].bits(), want[i], want[i].bits()))
            .collect();
        panic!("{what} ({} build): {} of {} elements differ:\n{}", BUILD.with(|b| b.get()), bad.len(), got.len(), shown.join("\n"));
    }
}

/// Deterministic inputs (xorshift32).
struct Rng(u32);

impl Rng {
    fn next(&mut self) -> u32 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.0 = x;
        x
    }
    /// Uniform in [-1, 1), multiples of 2^-23.
    fn unit(&mut self) -> f32 {
        (self.next() >> 8) as f32 / (1u32 << 23) as f32 - 1.0
    }
    fn u32s(&mut self, n: usize) -> Vec<u32> {
        (0..n).map(|_| self.next()).collect()
    }
    fn units(&mut self, n: usize, scale: f32) -> Vec<f32> {
        (0..n).map(|_| self.unit() * scale).collect()
    }
}

const CANON_NAN32: u32 = 0x7fff_ffff;
const GEN_NAN64: u64 = 0xfff8_0000_0000_0000;

/// An f32 arithmetic result as the GPU gives it: NaNs canonical.
fn gpu32(x: f32) -> f32 {
    if x.is_nan() {
        f32::from_bits(CANON_NAN32)
    } else {
        x
    }
}

/// PTX `min`/`max` (f32 and f64): a NaN operand gives the other one, -0.0 < +0.0.
fn ptx_min32(a: f32, b: f32) -> f32 {
    ptx_minmax32(a, b, false)
}

fn ptx_max32(a: f32, b: f32) -> f32 {
    ptx_minmax32(a, b, true)
}

/// Two NaNs give the canonical NaN; otherwise as [`ptx_minmax64`] (exact in f64).
fn ptx_minmax32(a: f32, b: f32, max: bool) -> f32 {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => f32::from_bits(CANON_NAN32),
        (true, false) => b,
        (false, true) => a,
        _ => ptx_minmax64(a as f64, b as f64, max) as f32,
    }
}

// ---- basic.cu -----------------------------------------------------------------------

#[test]
fn vector_add() {
    for ptx in cuda_or_skip!("basic.cu") {
        let n = 1000;
        let mut r = Rng(1);
        let a = r.units(n, 100.0);
        let b = r.units(n, 1.0);
        // c has room past n: those elements must stay untouched.
        let out = run(&ptx, "vector_add", &[buf("a", &a), buf("b", &b), zeros::<f32>("c", 1024), scalar(n as i32)], &Launch::new(4, 256));
        let mut want: Vec<f32> = (0..n).map(|i| a[i] + b[i]).collect();
        want.resize(1024, 0.0);
        check("vector_add c", &out.get::<f32>("c"), &want);
    }
}

#[test]
fn saxpy_with_fmaf() {
    for ptx in cuda_or_skip!("basic.cu") {
        ptx.assert_has("saxpy", &["fma.rn.f32"]);
        let n = 777;
        let mut r = Rng(2);
        let x = r.units(n, 3.0);
        let y = r.units(n, 5.0);
        let a = 1.7f32;
        let out = run(&ptx, "saxpy", &[scalar(a), buf("x", &x), buf("y", &y), scalar(n as i32)], &Launch::new(7, 128));
        let want: Vec<f32> = (0..n).map(|i| a.mul_add(x[i], y[i])).collect();
        check("saxpy y", &out.get::<f32>("y"), &want);
    }
}

#[test]
fn grid_stride_loop() {
    for ptx in cuda_or_skip!("basic.cu") {
        ptx.assert_has("grid_stride", &["%nctaid.x"]);
        let n = 10_000;
        let input = Rng(3).u32s(n);
        let out = run(&ptx, "grid_stride", &[buf("in", &input), zeros::<u32>("out", n), scalar(n as u32)], &Launch::new(4, 128));
        let want: Vec<u32> = (0..n).map(|i| input[i].wrapping_mul(3).wrapping_add(i as u32 ^ 0x55)).collect();
        check("grid_stride out", &out.get::<u32>("out"), &want);
    }
}

#[test]
fn index_3d_grid_and_blocks() {
    for ptx in cuda_or_skip!("basic.cu") {
        ptx.assert_has("index3d", &["%tid.z", "%ctaid.z", "%ntid.y", "%nctaid.y"]);
        let (grid, block) = ([3u32, 2, 2], [4u32, 3, 2]);
        let total = (grid.iter().product::<u32>() * block.iter().product::<u32>()) as usize;
        let l = Launch { grid, block, dynamic_shared: 0, opts: RunOptions::default() };
        let out = run(&ptx, "index3d", &[zeros::<u32>("out", total)], &l);
        let mut want = vec![0u32; total];
        for bz in 0..grid[2] {
            for by in 0..grid[1] {
                for bx in 0..grid[0] {
                    for tz in 0..block[2] {
                        for ty in 0..block[1] {
                            for tx in 0..block[0] {
                                let b = (bz * grid[1] + by) * grid[0] + bx;
                                let t = (tz * block[1] + ty) * block[0] + tx;
                                let g = (b * block.iter().product::<u32>() + t) as usize;
                                want[g] = (bx << 20) | (by << 16) | (bz << 12) | (tx << 8) | (ty << 4) | tz;
                            }
                        }
                    }
                }
            }
        }
        check("index3d out", &out.get::<u32>("out"), &want);
    }
}

#[test]
fn transpose_2d_through_padded_shared_memory() {
    for ptx in cuda_or_skip!("basic.cu") {
        ptx.assert_has("transpose", &["%tid.y", "%ctaid.y", "bar.sync", "st.shared", "ld.shared"]);
        let (w, h) = (70usize, 45usize);
        let input = Rng(4).u32s(w * h);
        let l = Launch {
            grid: [w.div_ceil(16) as u32, h.div_ceil(16) as u32, 1],
            block: [16, 16, 1],
            dynamic_shared: 0,
            opts: RunOptions::default(),
        };
        let out = run(&ptx, "transpose", &[buf("in", &input), zeros::<u32>("out", w * h), scalar(w as i32), scalar(h as i32)], &l);
        let mut want = vec![0u32; w * h];
        for r in 0..h {
            for c in 0..w {
                want[c * h + r] = input[r * w + c];
            }
        }
        check("transpose out", &out.get::<u32>("out"), &want);
    }
}

#[test]
fn dynamic_shared_memory_after_static() {
    for ptx in cuda_or_skip!("basic.cu") {
        ptx.assert_has("dyn_shared_reverse", &["bar.sync"]);
        assert!(ptx.text.contains(".extern .shared"), "no extern shared array in {}", ptx.path.display());
        let (blocks, n) = (3usize, 128usize);
        let input = Rng(5).units(blocks * n, 10.0);
        let mut l = Launch::new(blocks as u32, n as u32);
        l.dynamic_shared = (n * 4) as u32;
        let out = run(&ptx, "dyn_shared_reverse", &[buf("in", &input), zeros::<f32>("out", blocks * n)], &l);
        let mut want = vec![0f32; blocks * n];
        for b in 0..blocks {
            let bias = input[b * n] * 0.5;
            for t in 0..n {
                want[b * n + t] = input[b * n + n - 1 - t] + bias;
            }
        }
        check("dyn_shared_reverse out", &out.get::<f32>("out"), &want);
    }
}

// ---- reduce.cu ----------------------------------------------------------------------

#[test]
fn block_reduction_in_shared_memory() {
    for ptx in cuda_or_skip!("reduce.cu") {
        ptx.assert_has("block_reduce", &["bar.sync", "st.shared.f32", "ld.shared.f32"]);
        let n = 3000usize;
        let input = Rng(6).units(n, 4.0);
        let (block, blocks) = (256usize, n.div_ceil(512));
        let out = run(
            &ptx,
            "block_reduce",
            &[buf("in", &input), zeros::<f32>("out", blocks), scalar(n as u32)],
            &Launch::new(blocks as u32, block as u32),
        );
        let want: Vec<f32> = (0..blocks)
            .map(|b| {
                let mut s: Vec<f32> = (0..block)
                    .map(|t| {
                        let i = b * block * 2 + t;
                        let mut v = 0.0f32;
                        if i < n {
                            v = input[i];
                        }
                        if i + block < n {
                            v += input[i + block];
                        }
                        v
                    })
                    .collect();
                let mut stride = block / 2;
                while stride > 0 {
                    for t in 0..stride {
                        s[t] += s[t + stride];
                    }
                    stride /= 2;
                }
                s[0]
            })
            .collect();
        check("block_reduce out", &out.get::<f32>("out"), &want);
    }
}

#[test]
fn warp_reduction_with_shfl_down() {
    for ptx in cuda_or_skip!("reduce.cu") {
        ptx.assert_has("warp_reduce", &["shfl.sync.down.b32"]);
        let n = 128;
        let input = Rng(7).units(n, 2.0);
        let out = run(&ptx, "warp_reduce", &[buf("in", &input), zeros::<f32>("out", n)], &Launch::new(2, 64));
        let mut want = input.clone();
        for w in want.chunks_mut(32) {
            for off in [16, 8, 4, 2, 1] {
                let v = w.to_vec();
                for l in 0..32 {
                    // A source lane past 31 gives the lane its own value.
                    let src = if l + off < 32 { v[l + off] } else { v[l] };
                    w[l] = v[l] + src;
                }
            }
        }
        check("warp_reduce out", &out.get::<f32>("out"), &want);
    }
}

#[test]
fn warp_allreduce_with_shfl_xor() {
    for ptx in cuda_or_skip!("reduce.cu") {
        ptx.assert_has("warp_allreduce_xor", &["shfl.sync.bfly.b32"]);
        let n = 96;
        let input: Vec<i32> = Rng(8).u32s(n).into_iter().map(|x| x as i32).collect();
        let out = run(&ptx, "warp_allreduce_xor", &[buf("in", &input), zeros::<i32>("out", n)], &Launch::new(1, 96));
        let want: Vec<i32> = input.chunks(32).flat_map(|w| vec![w.iter().fold(0i32, |a, &x| a.wrapping_add(x)); 32]).collect();
        check("warp_allreduce_xor out", &out.get::<i32>("out"), &want);
    }
}

#[test]
fn inclusive_warp_scan_with_shfl_up() {
    for ptx in cuda_or_skip!("reduce.cu") {
        ptx.assert_has("warp_scan", &["shfl.sync.up.b32"]);
        let n = 128;
        let input: Vec<i32> = Rng(9).u32s(n).into_iter().map(|x| (x % 2001) as i32 - 1000).collect();
        let out = run(&ptx, "warp_scan", &[buf("in", &input), zeros::<i32>("out", n)], &Launch::new(2, 64));
        let want: Vec<i32> = input
            .chunks(32)
            .flat_map(|w| {
                w.iter().scan(0i32, |acc, &x| {
                    *acc = acc.wrapping_add(x);
                    Some(*acc)
                })
            })
            .collect();
        check("warp_scan out", &out.get::<i32>("out"), &want);
    }
}

#[test]
fn segmented_scan_with_width_8_shuffles() {
    for ptx in cuda_or_skip!("reduce.cu") {
        // width 8: c = (32 - 8) << 8 | clamp: 0x1800 for up, 0x181f for idx.
        ptx.assert_has("segmented_scan8", &["shfl.sync.up.b32", "shfl.sync.idx.b32"]);
        let n = 64;
        let input: Vec<i32> = Rng(10).u32s(n).into_iter().map(|x| (x % 100) as i32).collect();
        let out =
            run(&ptx, "segmented_scan8", &[buf("in", &input), zeros::<i32>("scan", n), zeros::<i32>("total", n)], &Launch::new(1, 64));
        let mut scan = vec![0i32; n];
        let mut total = vec![0i32; n];
        for (s, seg) in input.chunks(8).enumerate() {
            let mut acc = 0;
            for (k, x) in seg.iter().enumerate() {
                acc += x;
                scan[s * 8 + k] = acc;
            }
            total[s * 8..s * 8 + 8].fill(acc);
        }
        check("segmented_scan8 scan", &out.get::<i32>("scan"), &scan);
        check("segmented_scan8 total", &out.get::<i32>("total"), &total);
    }
}

#[test]
fn ballot_any_all_popc() {
    for ptx in cuda_or_skip!("reduce.cu") {
        ptx.assert_has("votes", &["vote.sync.ballot.b32", "vote.sync.any.pred", "vote.sync.all.pred", "popc.b32"]);
        let mut r = Rng(11);
        // Warp 0: all positive. Warp 1: mixed, one below -1000. Warp 2: mixed
        // with a zero. Warp 3: all negative, none below -1000.
        let mut input = Vec::new();
        for w in 0..4 {
            for l in 0..32 {
                let x = (r.next() % 900) as i32 + 1;
                input.push(match w {
                    0 => x,
                    1 if l == 17 => -5000,
                    1 => {
                        if r.next() & 1 == 0 {
                            x
                        } else {
                            -x
                        }
                    }
                    2 if l == 3 => 0,
                    2 => {
                        if l % 3 == 0 {
                            -x
                        } else {
                            x
                        }
                    }
                    _ => -x,
                });
            }
        }
        let out = run(&ptx, "votes", &[buf("in", &input), zeros::<u32>("out", 4 * 128)], &Launch::new(1, 128));
        let mut want = Vec::new();
        for w in input.chunks(32) {
            let b = w.iter().enumerate().fold(0u32, |m, (l, &x)| m | ((x > 0) as u32) << l);
            let any = w.iter().any(|&x| x < -1000) as u32;
            let all = w.iter().all(|&x| x != 0) as u32;
            for _ in 0..32 {
                want.extend([b, any, all, b.count_ones()]);
            }
        }
        check("votes out", &out.get::<u32>("out"), &want);
    }
}

#[test]
fn ballot_in_divergent_code_with_activemask() {
    for ptx in cuda_or_skip!("reduce.cu") {
        ptx.assert_has("votes_divergent", &["activemask.b32", "vote.sync.ballot.b32"]);
        let n = 64;
        let input: Vec<i32> = Rng(12).u32s(n).into_iter().map(|x| x as i32).collect();
        let out = run(&ptx, "votes_divergent", &[buf("in", &input), zeros::<u32>("out", 2 * n)], &Launch::new(1, 64));
        let taken: u32 = (0..32).filter(|l| l % 3 != 0).fold(0, |m, l| m | 1 << l);
        let mut want = Vec::new();
        for w in input.chunks(32) {
            let b = (0..32).filter(|&l| taken >> l & 1 == 1 && w[l] & 1 == 1).fold(0u32, |m, l| m | 1 << l);
            for l in 0..32 {
                want.extend(if l % 3 != 0 { [taken, b] } else { [0xdead, 0xbeef] });
            }
        }
        check("votes_divergent out", &out.get::<u32>("out"), &want);
    }
}

#[test]
fn match_any_sync() {
    for ptx in cuda_or_skip!("reduce.cu") {
        ptx.assert_has("match_any", &["match.any.sync.b32"]);
        let n = 64;
        let mut r = Rng(13);
        let keys: Vec<u32> = (0..n).map(|i| if i >= 32 { r.next() % 3 } else { r.next() % 7 * 1000 }).collect();
        let out = run(&ptx, "match_any", &[buf("keys", &keys), zeros::<u32>("out", n)], &Launch::new(1, 64));
        let want: Vec<u32> = keys
            .chunks(32)
            .flat_map(|w| w.iter().map(|k| (0..32).filter(|&j| w[j] == *k).fold(0u32, |m, j| m | 1 << j)).collect::<Vec<_>>())
            .collect();
        check("match_any out", &out.get::<u32>("out"), &want);
    }
}

// ---- atomics.cu ---------------------------------------------------------------------

fn hash32(mut x: u32) -> u32 {
    x ^= x >> 16;
    x = x.wrapping_mul(0x7feb352d);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846ca68b);
    x ^= x >> 16;
    x
}

#[test]
fn histogram_with_shared_and_global_atomic_add() {
    for ptx in cuda_or_skip!("atomics.cu") {
        ptx.assert_has("histogram", &["atom.shared.add.u32", "atom.global.add.u32"]);
        let n = 5000u32;
        let (blocks, block) = (3usize, 128usize);
        let threads = blocks * block;
        let out = run(
            &ptx,
            "histogram",
            &[scalar(n), zeros::<u32>("bins", 64), zeros::<u32>("counter", 1), zeros::<u32>("ticket", threads)],
            &Launch::new(blocks as u32, block as u32),
        );
        let mut bins = vec![0u32; 64];
        for k in 0..n {
            bins[(hash32(k) % 64) as usize] += 1;
        }
        check("histogram bins", &out.get::<u32>("bins"), &bins);
        check("histogram counter", &out.get::<u32>("counter"), &[threads as u32]);
        // Tickets are handed out in some order, each exactly once.
        let mut tickets = out.get::<u32>("ticket");
        tickets.sort_unstable();
        check("histogram tickets (sorted)", &tickets, &(0..threads as u32).collect::<Vec<_>>());
    }
}

#[test]
fn lock_free_float_max_with_atomic_cas() {
    for ptx in cuda_or_skip!("atomics.cu") {
        assert!(ptx.text.contains("atom.cas.b32") || ptx.text.contains("atom.global.cas.b32"), "no atom.cas in {}", ptx.path.display());
        ptx.assert_has("cas_max", &["call.uni"]);
        let (blocks, block) = (4usize, 64usize);
        let input = Rng(14).units(blocks * block, 100.0);
        let init = vec![f32::NEG_INFINITY; 1 + blocks];
        let out = run(&ptx, "cas_max", &[buf("in", &input), buf("result", &init)], &Launch::new(blocks as u32, block as u32));
        let mut want = vec![input.iter().copied().fold(f32::NEG_INFINITY, f32::max)];
        want.extend(input.chunks(block).map(|c| c.iter().copied().fold(f32::NEG_INFINITY, f32::max)));
        check("cas_max result", &out.get::<f32>("result"), &want);
    }
}

// ---- intops.cu ----------------------------------------------------------------------

/// `bfe.u32` / `bfe.s32` per the PTX ISA (position and length use 8 bits).
fn bfe(a: u32, pos: u32, len: u32, signed: bool) -> u32 {
    let (pos, len) = (pos & 0xff, len & 0xff);
    let sbit = if signed && len > 0 { a >> (pos + len - 1).min(31) & 1 } else { 0 };
    let mut d = 0;
    for i in 0..32 {
        let bit = if i < len && pos + i <= 31 { a >> (pos + i) & 1 } else { sbit };
        d |= bit << i;
    }
    d
}

/// `bfi.b32 d, a, b, pos, len`: `a`'s low bits inserted into `b`.
fn bfi(a: u32, b: u32, pos: u32, len: u32) -> u32 {
    let (pos, len) = (pos & 0xff, len & 0xff);
    let mut d = b;
    let mut i = 0;
    while i < len && pos + i <= 31 {
        d = (d & !(1 << (pos + i))) | ((a >> i & 1) << (pos + i));
        i += 1;
    }
    d
}

/// `prmt.b32` default mode.
fn prmt(a: u32, b: u32, s: u32) -> u32 {
    let bytes = ((b as u64) << 32 | a as u64).to_le_bytes();
    let mut d = 0u32;
    for k in 0..4 {
        let sel = s >> (4 * k) & 0xf;
        let byte = bytes[(sel & 7) as usize];
        let byte = if sel & 8 != 0 {
            if byte & 0x80 != 0 {
                0xff
            } else {
                0
            }
        } else {
            byte
        };
        d |= (byte as u32) << (8 * k);
    }
    d
}

fn int_ops_ref(a: u32, b: u32, d: i32) -> [u32; 40] {
    let mut o = [0u32; 40];
    o[0] = ((a as u64 * b as u64) >> 32) as u32;
    o[1] = ((a as i32 as i64 * b as i32 as i64) >> 32) as u32;
    o[2] = a.reverse_bits();
    o[3] = a.leading_zeros();
    o[4] = if a == 0 { 0 } else { a.trailing_zeros() + 1 };
    o[5] = a.count_ones();
    o[6] = prmt(a, b, b & 0x7777);
    o[7] = bfe(a, b & 31, (b >> 5) & 63, false);
    o[8] = bfe(a, (b >> 11) & 31, (b >> 16) & 31, true);
    o[9] = bfi(a, b, (b >> 21) & 31, (b >> 26) & 31);
    o[10] = ((((b as u64) << 32 | a as u64) << ((b >> 24) & 31)) >> 32) as u32;
    o[11] = a << (b & 31);
    o[12] = a >> (b & 31);
    o[13] = ((a as i32) >> (b & 31)) as u32;
    o[14] = (a as i32).max(b as i32) as u32;
    o[15] = a.min(b);
    o[16] = (a as i32).wrapping_abs() as u32;
    let ud = d as u32;
    o[17] = a / ud;
    o[18] = a % ud;
    let sa = if a == 0x8000_0000 && d == -1 { 0 } else { a as i32 };
    o[19] = (sa / d) as u32;
    o[20] = (sa % d) as u32;
    let x = (a as u64) << 32 | b as u64;
    let y = d as i64 as u64;
    let m = x.wrapping_mul(0x9e3779b97f4a7c15).wrapping_add(y);
    o[21] = m as u32;
    o[22] = (m >> 32) as u32;
    let q = x / (y | 1);
    o[23] = q as u32;
    o[24] = (q >> 32) as u32;
    let r = x % (y | 1);
    o[25] = r as u32;
    o[26] = (r >> 32) as u32;
    let sx = x as i64;
    let sd = d as i64 * 0x10001;
    let (sq, sr) = (sx / sd, sx % sd);
    o[27] = sq as u32;
    o[28] = (sq as u64 >> 32) as u32;
    o[29] = sr as u32;
    o[30] = (sr as u64 >> 32) as u32;
    let w = a as u64 * b as u64;
    o[31] = w as u32;
    o[32] = (w >> 32) as u32;
    let h = ((x as u128 * m as u128) >> 64) as u64;
    o[33] = h as u32;
    o[34] = (h >> 32) as u32;
    o[35] = x.leading_zeros();
    o[36] = m.count_ones();
    o[37] = x.reverse_bits() as u32;
    o[38] = (sx >> (b & 63)) as u32;
    o[39] = (x >> (a & 63) >> 7) as u32;
    o
}

#[test]
fn integer_intrinsics_64_bit_arithmetic_and_division() {
    for ptx in cuda_or_skip!("intops.cu") {
        ptx.assert_has(
            "int_ops",
            &[
                "mul.hi.u32",
                "mul.hi.s32",
                "brev.b32",
                "clz.b32",
                "popc.b32",
                "prmt.b32",
                "bfe.u32",
                "bfe.s32",
                "bfi.b32",
                "shf.l.wrap.b32",
                "div.u32",
                "div.s32",
                "div.u64",
                "div.s64",
                "mul.wide.u32",
                "mul.hi.u64",
                "clz.b64",
                "popc.b64",
                "brev.b64",
            ],
        );
        let edge_u = [0u32, 1, 2, 0x7fff_ffff, 0x8000_0000, 0xffff_ffff, 0x8000_0001, 0xdead_beef, 31, 32, 33, 0x0001_0000];
        let edge_d = [1i32, -1, 2, -2, 3, -7, 0x7fff_ffff, i32::MIN, 65536, -65537, 1000, -3];
        let mut r = Rng(15);
        let n = 200usize;
        let mut a = Vec::new();
        let mut b = Vec::new();
        let mut d = Vec::new();
        for i in 0..n {
            if i < edge_u.len() * edge_u.len() / 2 {
                a.push(edge_u[i % edge_u.len()]);
                b.push(edge_u[(i / edge_u.len() + i) % edge_u.len()]);
            } else {
                a.push(r.next());
                b.push(r.next());
            }
            let dv = if i % 3 == 0 { edge_d[i / 3 % edge_d.len()] } else { (r.next() as i32) >> (r.next() % 31) };
            d.push(if dv == 0 { 5 } else { dv });
        }
        let out = run(
            &ptx,
            "int_ops",
            &[buf("a", &a), buf("b", &b), buf("d", &d), zeros::<u32>("out", 40 * 256), scalar(n as u32)],
            &Launch::new(4, 64),
        );
        let mut want = vec![0u32; 40 * 256];
        for i in 0..n {
            want[40 * i..40 * i + 40].copy_from_slice(&int_ops_ref(a[i], b[i], d[i]));
        }
        let got = out.get::<u32>("out");
        // Report by operation, which says more than a flat index.
        for k in 0..40 {
            let g: Vec<u32> = (0..256).map(|i| got[40 * i + k]).collect();
            let w: Vec<u32> = (0..256).map(|i| want[40 * i + k]).collect();
            let bad: Vec<String> = (0..n)
                .filter(|&i| g[i] != w[i])
                .take(6)
                .map(|i| format!("a=0x{:x} b=0x{:x} d={}: got 0x{:x}, want 0x{:x}", a[i], b[i], d[i], g[i], w[i]))
                .collect();
            assert!(bad.is_empty(), "int_ops o[{k}] differs ({} build of intops.cu):\n{}", ptx.build, bad.join("\n"));
        }
        check("int_ops out", &got, &want);
    }
}

// ---- floatops.cu ---------------------------------------------------------------------

/// f32 -> f16 bits, round to nearest even; NaN gives the canonical 0x7fff.
fn f32_to_f16_rn(f: f32) -> u16 {
    f64_to_f16_rn(f as f64)
}

/// f64 -> f16 bits, round to nearest even (one rounding, from the exact
/// value); NaN gives the canonical 0x7fff.
fn f64_to_f16_rn(x: f64) -> u16 {
    if x.is_nan() {
        return 0x7fff;
    }
    let sign = if x.is_sign_negative() { 0x8000 } else { 0 };
    let v = x.abs();
    if v.is_infinite() {
        return sign | 0x7c00;
    }
    let bits = if v < 2f64.powi(-14) {
        // Subnormal (a result of 1024 is the smallest normal, also right).
        (v * 2f64.powi(24)).round_ties_even() as u32
    } else {
        let e = ((v.to_bits() >> 52) & 0x7ff) as i32 - 1023;
        let r = (v * 2f64.powi(10 - e)).round_ties_even() as u32; // 1024..=2048
        let biased = e + 15;
        if biased >= 31 {
            0x7c00
        } else {
            ((biased as u32) << 10) + (r - 1024)
        }
    };
    sign | bits.min(0x7c00) as u16
}

/// f16 bits -> f32 (exact); NaN gives the canonical NaN.
fn f16_to_f32(h: u16) -> f32 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let e = (h >> 10) & 0x1f;
    let m = (h & 0x3ff) as f64;
    let v = match e {
        0 => m * 2f64.powi(-24),
        31 if m == 0.0 => f64::INFINITY,
        31 => return f32::from_bits(CANON_NAN32),
        _ => (1024.0 + m) * 2f64.powi(e as i32 - 25),
    };
    (sign * v) as f32
}

fn float_conv_ref(f: f32, k: i32) -> [u32; 16] {
    let mut o = [0u32; 16];
    // Float to integer saturates and maps NaN to 0, as Rust's `as` does.
    o[0] = f.round_ties_even() as i32 as u32;
    o[1] = f.trunc() as i32 as u32;
    o[2] = f.floor() as i32 as u32;
    o[3] = f.ceil() as i32 as u32;
    o[4] = f.round_ties_even() as u32;
    o[5] = f as i32 as u32;
    o[6] = f as u32;
    o[7] = (k as f32).to_bits();
    o[8] = (k as u32 as f32).to_bits();
    let h = f32_to_f16_rn(f);
    o[9] = h as u32;
    o[10] = f16_to_f32(h).to_bits();
    let db = (f as f64).to_bits(); // NaN payload kept, quietened
    o[11] = db as u32;
    o[12] = (db >> 32) as u32;
    // f64 -> f32 keeps a NaN's sign and top payload bits (quiet), on the GPU
    // as with Rust's `as` on x86.
    o[13] = (((f as f64) * 1.000000001) as f32).to_bits();
    o[14] = gpu32(f.round_ties_even()).to_bits();
    o[15] = gpu32(f.floor() + f.ceil() * 2.0 + f.trunc() * 4.0).to_bits();
    o
}

#[test]
fn float_conversions_rounding_half_and_double() {
    for ptx in cuda_or_skip!("floatops.cu") {
        ptx.assert_has(
            "float_conv",
            &[
                "cvt.rni.s32.f32",
                "cvt.rzi.s32.f32",
                "cvt.rmi.s32.f32",
                "cvt.rpi.s32.f32",
                "cvt.rni.u32.f32",
                "cvt.rzi.u32.f32",
                "cvt.rn.f32.s32",
                "cvt.rn.f32.u32",
                "cvt.rn.f16.f32",
                "cvt.f32.f16",
                "cvt.f64.f32",
                "cvt.rn.f32.f64",
                "cvt.rni.f32.f32",
                "cvt.rmi.f32.f32",
                "cvt.rpi.f32.f32",
                "cvt.rzi.f32.f32",
            ],
        );
        let mut fs: Vec<f32> = vec![
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.5,
            -1.5,
            2.5,
            -2.5,
            0.49999997,
            -0.49999997,
            1e-40,
            -1e-40,
            3e9,
            -3e9,
            4.5e9,
            2147483520.0,
            -2147483648.0,
            65504.0,
            65519.99,
            65520.0,
            -65520.0,
            5.9604645e-8,
            2.9802322e-8,
            3.0e-8,
            6.1035156e-5,
            6.100e-5,
            1.0009766,
            f32::from_bits(0x3f80_1000), // 1 + 2^-11: an f16 tie, to 1.0
            f32::from_bits(0x3f80_3000), // 1 + 3 * 2^-11: an f16 tie, up
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::MAX,
            f32::MIN_POSITIVE,
            16777217.0,
            -7.75,
            123456.79,
        ];
        fs.push(f32::from_bits(0x7fc0_0000));
        let mut r = Rng(16);
        while fs.len() < 100 {
            let scale = [1.0, 100.0, 1e5, 1e-3, 70000.0][fs.len() % 5];
            fs.push(r.unit() * scale);
        }
        let ks: Vec<i32> = (0..100)
            .map(|i| match i {
                0 => i32::MIN,
                1 => i32::MAX,
                2 => 16777217,
                3 => 16777219,
                4 => -1,
                5 => -16777217,
                6 => 0,
                _ => r.next() as i32 >> (i % 31),
            })
            .collect();
        let n = fs.len();
        let out =
            run(&ptx, "float_conv", &[buf("f", &fs), buf("k", &ks), zeros::<u32>("out", 16 * 128), scalar(n as u32)], &Launch::new(2, 64));
        let got = out.get::<u32>("out");
        for k in 0..16 {
            let bad: Vec<String> = (0..n)
                .filter(|&i| got[16 * i + k] != float_conv_ref(fs[i], ks[i])[k])
                .take(6)
                .map(|i| {
                    format!(
                        "f={:e} (0x{:08x}) k={}: got 0x{:x}, want 0x{:x}",
                        fs[i],
                        fs[i].to_bits(),
                        ks[i],
                        got[16 * i + k],
                        float_conv_ref(fs[i], ks[i])[k]
                    )
                })
                .collect();
            assert!(bad.is_empty(), "float_conv o[{k}] differs ({} build of floatops.cu):\n{}", ptx.build, bad.join("\n"));
        }
        let mut want = vec![0u32; 16 * 128];
        for i in 0..n {
            want[16 * i..16 * i + 16].copy_from_slice(&float_conv_ref(fs[i], ks[i]));
        }
        check("float_conv out", &got, &want);
    }
}

fn ptx_min64(a: f64, b: f64) -> f64 {
    ptx_minmax64(a, b, false)
}

fn ptx_max64(a: f64, b: f64) -> f64 {
    ptx_minmax64(a, b, true)
}

/// Equal operands (zeros of either sign): `min` picks the negative one, `max` the positive.
fn ptx_minmax64(a: f64, b: f64, max: bool) -> f64 {
    if a == b {
        if a.is_sign_negative() != max {
            a
        } else {
            b
        }
    } else if max {
        a.max(b)
    } else {
        a.min(b)
    }
}

/// An f64 result computed from non-NaN operands: a NaN is the GPU's 0xfff8...
fn gpu64(x: f64) -> f64 {
    if x.is_nan() {
        f64::from_bits(GEN_NAN64)
    } else {
        x
    }
}

fn double_ref(a: f64, b: f64, c: f64) -> [f64; 10] {
    [
        gpu64(a + b),
        gpu64(a - b),
        gpu64(a * b),
        gpu64(a / b),
        a.abs().sqrt(),
        gpu64(a.mul_add(b, c)),
        ptx_min64(a, b),
        ptx_max64(a, c),
        gpu64((gpu64(a * b) + c) * (a - c)),
        b.copysign(a) / 3.0,
    ]
}

#[test]
fn double_precision_arithmetic() {
    for ptx in cuda_or_skip!("floatops.cu") {
        ptx.assert_has(
            "double_arith",
            &["add.rn.f64", "sub.rn.f64", "mul.rn.f64", "div.rn.f64", "sqrt.rn.f64", "fma.rn.f64", "min.f64", "max.f64"],
        );
        // No NaN inputs (which NaN propagates is the hardware's choice); NaNs
        // produced here (inf - inf, 0 / 0, inf * 0) are checked.
        let special =
            [0.0, -0.0, 1.0, -1.0, f64::INFINITY, f64::NEG_INFINITY, 1e-310, -2.5e-320, f64::MAX, f64::MIN_POSITIVE, 3.0, 1.0 / 3.0];
        let mut r = Rng(17);
        let mut a = Vec::new();
        let mut b = Vec::new();
        let mut c = Vec::new();
        for i in 0..160 {
            if i < special.len() * special.len() {
                a.push(special[i % special.len()]);
                b.push(special[i / special.len()]);
                c.push(special[(i * 7) % special.len()]);
            } else {
                let f = |r: &mut Rng| (r.next() as u64) << 32 | r.next() as u64;
                // Random finite doubles of moderate exponent, and random mantissas near 1.
                let g = |r: &mut Rng| f64::from_bits(f(r) & 0x800f_ffff_ffff_ffff | (0x3f0u64 + (r.next() % 32) as u64) << 52);
                a.push(g(&mut r));
                b.push(g(&mut r));
                c.push(g(&mut r));
            }
        }
        let n = a.len();
        let out = run(
            &ptx,
            "double_arith",
            &[buf("a", &a), buf("b", &b), buf("c", &c), zeros::<f64>("out", 10 * 192), scalar(n as u32)],
            &Launch::new(3, 64),
        );
        let got = out.get::<f64>("out");
        for k in 0..10 {
            let bad: Vec<String> = (0..n)
                .filter(|&i| got[10 * i + k].to_bits() != double_ref(a[i], b[i], c[i])[k].to_bits())
                .take(6)
                .map(|i| {
                    format!(
                        "a={:e} b={:e} c={:e}: got {:e} (0x{:016x}), want {:e} (0x{:016x})",
                        a[i],
                        b[i],
                        c[i],
                        got[10 * i + k],
                        got[10 * i + k].to_bits(),
                        double_ref(a[i], b[i], c[i])[k],
                        double_ref(a[i], b[i], c[i])[k].to_bits()
                    )
                })
                .collect();
            assert!(bad.is_empty(), "double_arith o[{k}] differs ({} build of floatops.cu):\n{}", ptx.build, bad.join("\n"));
        }
        let mut want = vec![0f64; 10 * 192];
        for i in 0..n {
            want[10 * i..10 * i + 10].copy_from_slice(&double_ref(a[i], b[i], c[i]));
        }
        check("double_arith out", &got, &want);
    }
}

fn float_math_ref(a: f32, b: f32) -> [f32; 12] {
    // clang lowers copysignf(a, b) to abs/neg/selp: a NaN `a` gives the canonical NaN.
    let copysign = if a.is_nan() { f32::from_bits(CANON_NAN32) } else { a.abs().copysign(b) };
    [
        ptx_min32(a, b),
        ptx_max32(a, b),
        gpu32(a.abs()),
        copysign,
        gpu32(a.abs().sqrt()),
        gpu32(a / b),
        gpu32(a * b - a),
        gpu32(a.mul_add(b, -a)),
        gpu32(a.sqrt()),
        gpu32((a + b) * (a - b)),
        gpu32(1.0 / b),
        gpu32(-a),
    ]
}

#[test]
fn float_min_max_abs_copysign_sqrt_div() {
    for ptx in cuda_or_skip!("floatops.cu") {
        ptx.assert_has(
            "float_math",
            &["min.f32", "max.f32", "abs.f32", "sqrt.rn.f32", "div.rn.f32", "fma.rn.f32", "rcp.rn.f32", "neg.f32"],
        );
        let special = [
            0.0f32,
            -0.0,
            1.0,
            -1.0,
            2.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::from_bits(0x7fc0_0000),
            1e-40,
            -3e-39,
            f32::MAX,
            f32::MIN_POSITIVE,
            0.1,
        ];
        let mut r = Rng(18);
        let mut a = Vec::new();
        let mut b = Vec::new();
        for i in 0..256 {
            if i < special.len() * special.len() {
                a.push(special[i % special.len()]);
                b.push(special[i / special.len()]);
            } else {
                a.push(r.unit() * 1000.0);
                b.push(r.unit() * [1.0, 1e-3, 1e30][i % 3]);
            }
        }
        let n = a.len();
        let out =
            run(&ptx, "float_math", &[buf("a", &a), buf("b", &b), zeros::<f32>("out", 12 * n), scalar(n as u32)], &Launch::new(4, 64));
        let got = out.get::<f32>("out");
        for k in 0..12 {
            let bad: Vec<String> = (0..n)
                .filter(|&i| got[12 * i + k].to_bits() != float_math_ref(a[i], b[i])[k].to_bits())
                .take(6)
                .map(|i| {
                    format!(
                        "a={:e} b={:e}: got {:e} (0x{:08x}), want {:e} (0x{:08x})",
                        a[i],
                        b[i],
                        got[12 * i + k],
                        got[12 * i + k].to_bits(),
                        float_math_ref(a[i], b[i])[k],
                        float_math_ref(a[i], b[i])[k].to_bits()
                    )
                })
                .collect();
            assert!(bad.is_empty(), "float_math o[{k}] differs ({} build of floatops.cu):\n{}", ptx.build, bad.join("\n"));
        }
    }
}

// ---- control.cu ----------------------------------------------------------------------

fn mix(a: u32, b: u32) -> u32 {
    let mut h = a.wrapping_mul(0x9e3779b1) ^ b;
    if h & 1 != 0 {
        h = (h >> 3).wrapping_mul(5);
    } else {
        h = h.wrapping_add(b << 7);
    }
    h ^ (h >> 13)
}

#[test]
fn noinline_device_function_call() {
    for ptx in cuda_or_skip!("control.cu") {
        ptx.assert_has("call_device_fn", &["call.uni"]);
        assert!(ptx.text.contains(".func"), "clang inlined the __noinline__ functions: no .func in {}", ptx.path.display());
        let n = 128;
        let input = Rng(19).u32s(n);
        let out = run(&ptx, "call_device_fn", &[buf("in", &input), zeros::<u32>("out", n), zeros::<f32>("fout", n)], &Launch::new(2, 64));
        let want: Vec<u32> = (0..n)
            .map(|i| {
                let v = input[i];
                let r = mix(v, i as u32);
                if v & 2 != 0 {
                    mix(r, 7)
                } else {
                    r
                }
            })
            .collect();
        check("call_device_fn out", &out.get::<u32>("out"), &want);
        let fwant: Vec<f32> = (0..n).map(|i| ((input[i] & 0xff) as f32).mul_add(0.5, i as f32)).collect();
        check("call_device_fn fout", &out.get::<f32>("fout"), &fwant);
    }
}

#[test]
fn divergent_while_loop_with_lane_dependent_trip_count() {
    for ptx in cuda_or_skip!("control.cu") {
        ptx.assert_has("divergent_loop", &["activemask.b32", "bar.warp.sync"]);
        let n = 128;
        let mut r = Rng(20);
        // Warp 2 runs the same start for all lanes (no divergence); the others diverge.
        let input: Vec<u32> = (0..n).map(|i| if i / 32 == 2 { 27 } else { r.next() % 200 + 1 }).collect();
        let out = run(
            &ptx,
            "divergent_loop",
            &[
                buf("in", &input),
                zeros::<u32>("steps", n),
                zeros::<u32>("peak", n),
                zeros::<u32>("active_sum", n),
                zeros::<u32>("after", n),
            ],
            &Launch::new(2, 64),
        );
        let collatz = |mut x: u32| {
            let (mut s, mut m) = (0u32, x);
            while x != 1 {
                x = if x & 1 == 1 { 3 * x + 1 } else { x / 2 };
                s += 1;
                m = m.max(x);
            }
            (s, m)
        };
        let steps: Vec<u32> = input.iter().map(|&x| collatz(x).0).collect();
        let peak: Vec<u32> = input.iter().map(|&x| collatz(x).1).collect();
        // Iteration k runs with the lanes whose trip count exceeds k (warpsim's
        // SIMT stack: the loop's exits wait at its post-dominator).
        let active_sum: Vec<u32> = (0..n)
            .map(|i| {
                let w = &steps[i / 32 * 32..i / 32 * 32 + 32];
                (0..steps[i]).map(|k| w.iter().filter(|&&s| s > k).count() as u32).sum()
            })
            .collect();
        check("divergent_loop steps", &out.get::<u32>("steps"), &steps);
        check("divergent_loop peak", &out.get::<u32>("peak"), &peak);
        check("divergent_loop active_sum", &out.get::<u32>("active_sum"), &active_sum);
        check("divergent_loop after", &out.get::<u32>("after"), &vec![0xffff_ffff; n]);
    }
}

#[test]
fn per_thread_array_in_local_memory() {
    for ptx in cuda_or_skip!("control.cu") {
        ptx.assert_has("local_array", &[".local", "st.local", "ld.local"]);
        let n = 96;
        let input = Rng(21).u32s(n);
        let out = run(&ptx, "local_array", &[buf("in", &input), zeros::<u32>("out", n)], &Launch::new(3, 32));
        let want: Vec<u32> = input
            .iter()
            .map(|&v| {
                let mut buf: Vec<u32> = (0..16u32).map(|k| v.wrapping_mul(k + 1) ^ k).collect();
                let (idx, mut acc) = ((v % 16) as usize, 0u32);
                for k in 0..8 {
                    acc = acc.wrapping_add(buf[(idx + k * 5) % 16]);
                    buf[(idx * 3 + k) % 16] ^= acc;
                }
                acc ^ buf[idx] ^ buf[((v >> 4) % 16) as usize]
            })
            .collect();
        check("local_array out", &out.get::<u32>("out"), &want);
    }
}

#[test]
fn clock64_advances() {
    for ptx in cuda_or_skip!("control.cu") {
        ptx.assert_has("clock_advances", &["%clock64"]);
        let n = 64;
        let out = run(&ptx, "clock_advances", &[zeros::<u64>("t", 2 * n)], &Launch::new(1, n as u32));
        let t = out.get::<u64>("t");
        for i in 0..n {
            assert!(t[2 * i + 1] > t[2 * i], "thread {i}: clock64 went from {} to {}", t[2 * i], t[2 * i + 1]);
        }
    }
}

// ---- wave64.cu ------------------------------------------------------------------------

/// With 64-lane warps (AMD CDNA presets) threads 0..63 of a block form one
/// wavefront: `%laneid` runs 0..63 and `%warpid` is shared. PTX's lane
/// masks are 32 bits wide, so warpsim applies 32-lane semantics per
/// half-wavefront: a mask operand or result (`ballot`, `activemask`,
/// `match`) covers the 32 lanes of the caller's half (bit k = lane
/// `half * 32 + k`), and shuffles stay within the half.
#[test]
fn warp_size_64_forms_one_wavefront_of_64_lanes() {
    for ptx in cuda_or_skip!("wave64.cu") {
        ptx.assert_has("lane_info", &["%laneid", "%warpid", "vote.sync.ballot.b32"]);
        let n = 128usize;
        let params = [zeros::<u32>("lane", n), zeros::<u32>("warp", n), zeros::<u32>("ballot", n)];
        let mut l = Launch::new(1, n as u32);
        l.opts.warp_size = 64;
        let out = run(&ptx, "lane_info", &params, &l);
        check("wave64 lane", &out.get::<u32>("lane"), &(0..n as u32).map(|t| t % 64).collect::<Vec<_>>());
        check("wave64 warp", &out.get::<u32>("warp"), &(0..n as u32).map(|t| t / 64).collect::<Vec<_>>());
        // ballot(lane < 40): the low half sees its 32 lanes all set, the high
        // half sees lanes 32..39, as bits 0..7.
        check(
            "wave64 ballot",
            &out.get::<u32>("ballot"),
            &(0..n).map(|t| if t % 64 < 32 { 0xffff_ffff } else { 0xff }).collect::<Vec<_>>(),
        );
        assert_eq!(out.stats.warps, 2, "{:?}", out.stats);

        // The same kernel with 32-lane warps: twice the warps, each instruction
        // issued twice as often for the same thread instructions.
        let out32 = run(&ptx, "lane_info", &params, &Launch::new(1, n as u32));
        check("wave32 lane", &out32.get::<u32>("lane"), &(0..n as u32).map(|t| t % 32).collect::<Vec<_>>());
        check("wave32 warp", &out32.get::<u32>("warp"), &(0..n as u32).map(|t| t / 32).collect::<Vec<_>>());
        check("wave32 ballot", &out32.get::<u32>("ballot"), &vec![0xffff_ffff; n]);
        assert_eq!(out32.stats.warps, 4, "{:?}", out32.stats);
        assert_eq!(out32.stats.warp_instructions, 2 * out.stats.warp_instructions, "{:?} vs {:?}", out32.stats, out.stats);
        assert_eq!(out32.stats.thread_instructions, out.stats.thread_instructions, "{:?} vs {:?}", out32.stats, out.stats);
    }
}

// ---- misc.cu --------------------------------------------------------------------------

#[test]
fn float4_vector_loads_and_stores() {
    for ptx in cuda_or_skip!("misc.cu") {
        ptx.assert_has("float4_copy_scale", &["ld.global.nc.v4.f32", "st.global.v4.f32"]);
        let n = 4 * 96;
        let input = Rng(22).units(n, 50.0);
        let s = -1.5f32;
        let out = run(&ptx, "float4_copy_scale", &[buf("in", &input), zeros::<f32>("out", n), scalar(s)], &Launch::new(3, 32));
        let want: Vec<f32> = input.chunks(4).flat_map(|v| [v[0] * s, v[1] + s, v[2] - s, v[0] * s * v[3]]).collect();
        check("float4_copy_scale out", &out.get::<f32>("out"), &want);
    }
}

#[test]
fn bytes_and_shorts() {
    for ptx in cuda_or_skip!("misc.cu") {
        ptx.assert_has("bytes_and_shorts", &["ld.global.u16", "ld.global.s8", "st.global.u16", "st.global.u8"]);
        let n = 128;
        let mut r = Rng(23);
        let b: Vec<u8> = (0..n).map(|_| r.next() as u8).collect();
        let h: Vec<i16> = (0..n).map(|_| r.next() as i16).collect();
        let out = run(
            &ptx,
            "bytes_and_shorts",
            &[buf("b", &b), buf("h", &h), zeros::<i16>("out16", n), zeros::<u8>("out8", n), zeros::<i32>("out32", n)],
            &Launch::new(2, 64),
        );
        let (x, y) = (|i: usize| b[i] as i32, |i: usize| h[i] as i32);
        check("bytes_and_shorts out16", &out.get::<i16>("out16"), &(0..n).map(|i| (y(i) * 3 - x(i)) as i16).collect::<Vec<_>>());
        check("bytes_and_shorts out8", &out.get::<u8>("out8"), &(0..n).map(|i| (x(i) * 7 + (y(i) >> 2)) as u8).collect::<Vec<_>>());
        check("bytes_and_shorts out32", &out.get::<i32>("out32"), &(0..n).map(|i| b[i] as i8 as i32 + y(i)).collect::<Vec<_>>());
    }
}

#[test]
fn switch_with_constant_and_global_tables() {
    for ptx in cuda_or_skip!("misc.cu") {
        ptx.assert_has("switch_table", &["ld.const", "ld.global"]);
        let n = 128;
        let input: Vec<i32> = Rng(24).u32s(n).into_iter().map(|x| x as i32 >> 8).collect();
        let out = run(&ptx, "switch_table", &[buf("in", &input), zeros::<i32>("out", n)], &Launch::new(2, 64));
        let lut = [3, 1, 4, 1, 5, 9, 2, 6];
        let table = [10, 20, 30, 40];
        let want: Vec<i32> = input
            .iter()
            .map(|&x| match x & 7 {
                0 => x.wrapping_mul(2),
                1 => x + 100,
                2 => x ^ 0x55,
                3 => x.wrapping_neg(),
                4 => x >> 1,
                5 => x.wrapping_mul(x),
                6 => 7,
                _ => lut[(x & 7) as usize] + table[(x & 3) as usize],
            })
            .collect();
        check("switch_table out", &out.get::<i32>("out"), &want);
    }
}

#[test]
fn struct_passed_by_value_and_constant_array() {
    for ptx in cuda_or_skip!("misc.cu") {
        ptx.assert_has("struct_param", &["ld.param.v2.u32", "ld.param.u8", "ld.param.f64", "ld.const.f32"]);
        let n = 64;
        let input = Rng(25).units(n, 8.0);
        let (scale, offset, shift, bias) = (0.75f32, -9i32, 2u8, 1e-3f64);
        // struct Params { float scale; int offset; unsigned char shift; double bias; }: 24 bytes.
        let mut bytes = [0u8; 24];
        bytes[0..4].copy_from_slice(&scale.to_le_bytes());
        bytes[4..8].copy_from_slice(&offset.to_le_bytes());
        bytes[8] = shift;
        bytes[16..24].copy_from_slice(&bias.to_le_bytes());
        let out =
            run_with(&ptx, "struct_param", &[scalar(0u64), buf("in", &input), zeros::<f64>("out", n)], &Launch::new(1, n as u32), |p| {
                let k = p.kernel.ir();
                assert_eq!(k.params[0].size, 24, "{:?}", k.params[0]);
                let off = k.params[0].offset as usize;
                p.args.bytes_mut()[off..off + 24].copy_from_slice(&bytes);
            });
        let coeffs = [0.5f32, -1.25, 2.0, 0.125];
        let want: Vec<f64> =
            (0..n).map(|i| bias + ((input[i] * scale + coeffs[i & 3]) as f64 + ((i as i32 + offset) >> shift) as f64)).collect();
        check("struct_param out", &out.get::<f64>("out"), &want);
    }
}

#[test]
fn wide_float_and_double_atomics() {
    for ptx in cuda_or_skip!("misc.cu") {
        ptx.assert_has(
            "atomics_wide",
            &[
                "atom.global.add.u64",
                "atom.global.add.f32",
                "atom.global.add.f64",
                "atom.global.min.s32",
                "atom.global.max.s32",
                "atom.global.exch.b32",
            ],
        );
        let n = 256;
        let input = Rng(26).u32s(n);
        let out = run(
            &ptx,
            "atomics_wide",
            &[
                buf("in", &input),
                zeros::<f32>("fsum", 1),
                zeros::<f64>("dsum", 1),
                buf("minmax", &[i32::MAX, i32::MIN]),
                buf("last", &[-1i32; 4]),
            ],
            &Launch::new(4, 64),
        );
        let sum = input.iter().fold(0u64, |a, &v| a.wrapping_add((v as u64) << 20));
        check("g_sum", &out.global::<u64>("g_sum", 1), &[sum]);
        check("fsum", &out.get::<f32>("fsum"), &[n as f32 * 0.25]);
        // Integers below 2^16, 256 of them: every partial sum is exact.
        check("dsum", &out.get::<f64>("dsum"), &[input.iter().map(|&v| (v & 0xffff) as f64).sum::<f64>()]);
        let s: Vec<i32> = input.iter().map(|&v| v as i32).collect();
        check("minmax", &out.get::<i32>("minmax"), &[*s.iter().min().unwrap(), *s.iter().max().unwrap()]);
        // Each slot ends holding one of the threads that wrote it.
        for (slot, &t) in out.get::<i32>("last").iter().enumerate() {
            assert!(t >= 0 && (input[t as usize] & 3) as usize == slot, "last[{slot}] = {t}");
        }
    }
}

// ---- half.cu --------------------------------------------------------------------------

/// An f16 operation as the GPU does it: exact in f64, rounded once to f16.
fn f16_op(a: u16, b: u16, op: impl Fn(f64, f64) -> f64) -> u16 {
    f64_to_f16_rn(op(f16_to_f32(a) as f64, f16_to_f32(b) as f64))
}

/// f32 -> bf16 bits, round to nearest even; NaN gives the canonical 0x7fff.
fn f32_to_bf16_rn(f: f32) -> u16 {
    if f.is_nan() {
        return 0x7fff;
    }
    let x = f.to_bits();
    ((x + 0x7fff + (x >> 16 & 1)) >> 16) as u16
}

#[test]
fn half_precision_f16x2_f16_and_bf16() {
    for ptx in cuda_or_skip!("half.cu") {
        ptx.assert_has("half_math", &["mul.rn.f16x2", "add.rn.f16x2", "mul.rn.f16", "add.rn.f16", "cvt.f32.f16", "cvt.rn.bf16.f32"]);
        let special: [u16; 12] = [0x0000, 0x8000, 0x3c00, 0xbc00, 0x7bff, 0xfbff, 0x0001, 0x83ff, 0x7c00, 0xfc00, 0x7e00, 0x3555];
        let mut r = Rng(27);
        let n = 256;
        let mut a = Vec::new();
        let mut b = Vec::new();
        for i in 0..2 * n {
            if i < special.len() * special.len() {
                a.push(special[i % special.len()]);
                b.push(special[i / special.len()]);
            } else {
                // Finite halves of every magnitude.
                let finite = |x: u32| {
                    let h = x as u16;
                    if h & 0x7c00 == 0x7c00 {
                        h ^ 0x4000
                    } else {
                        h
                    }
                };
                a.push(finite(r.next()));
                b.push(finite(r.next()));
            }
        }
        let mut f = vec![
            0.0f32,
            -0.0,
            1.0,
            f32::MAX,
            f32::INFINITY,
            f32::from_bits(0x7fc0_0000),
            f32::from_bits(0x3f80_8000),
            f32::from_bits(0x3f81_8000),
            1e-40,
        ];
        while f.len() < n {
            f.push(f32::from_bits(r.next()));
        }
        let out = run(
            &ptx,
            "half_math",
            &[
                buf("a", &a),
                buf("b", &b),
                zeros::<u16>("c", 2 * n),
                zeros::<u16>("d", n),
                zeros::<f32>("e", n),
                buf("f", &f),
                zeros::<u16>("bf", n),
            ],
            &Launch::new(4, 64),
        );
        let c: Vec<u16> = (0..2 * n)
            .map(|k| {
                let m = f16_op(a[k], b[k], |x, y| x * y);
                f16_op(a[k], m, |x, y| x + y)
            })
            .collect();
        let d: Vec<u16> = (0..n)
            .map(|i| {
                let m = f16_op(a[2 * i], b[2 * i + 1], |x, y| x * y);
                f16_op(m, 0xbe00, |x, y| x + y)
            })
            .collect();
        let e: Vec<f32> = (0..n).map(|i| gpu32(f16_to_f32(a[2 * i + 1]) * f16_to_f32(b[2 * i]))).collect();
        let bf: Vec<u16> = f.iter().map(|&x| f32_to_bf16_rn(x)).collect();
        check("half_math c (f16x2)", &out.get::<u16>("c"), &c);
        check("half_math d (f16)", &out.get::<u16>("d"), &d);
        check("half_math e (f16 -> f32)", &out.get::<f32>("e"), &e);
        check("half_math bf (f32 -> bf16)", &out.get::<u16>("bf"), &bf);
    }
}

// ---- approximate float instructions ------------------------------------------------------

/// The spacing of f32 values at `x` (a normal magnitude).
fn ulp32(x: f64) -> f64 {
    2f64.powi(x.abs().log2().floor() as i32 - 23)
}

#[test]
fn approximate_float_instructions_within_ptx_bounds() {
    for ptx in cuda_or_skip!("floatops.cu") {
        ptx.assert_has(
            "float_approx",
            &[
                "div.approx.f32",
                "ex2.approx.f32",
                "lg2.approx.f32",
                "sin.approx.f32",
                "cos.approx.f32",
                "rsqrt.approx.f32",
                "sqrt.approx.f32",
                "rcp.approx.ftz.f32",
            ],
        );
        // Finite, normal inputs: a in [-2pi, 2pi], b positive in [2^-20, 2^20].
        let mut r = Rng(28);
        let n = 256;
        let a: Vec<f32> = (0..n).map(|_| r.unit() * std::f32::consts::TAU).collect();
        let b: Vec<f32> = (0..n).map(|_| 2f32.powf(r.unit() * 20.0)).collect();
        let out =
            run(&ptx, "float_approx", &[buf("a", &a), buf("b", &b), zeros::<f32>("out", 8 * n), scalar(n as u32)], &Launch::new(4, 64));
        let got = out.get::<f32>("out");
        // (name, exact value, allowed error): the PTX ISA's bounds.
        for i in 0..n {
            let (x, y) = (a[i] as f64, b[i] as f64);
            let lg2 = y.log2();
            let cases = [
                ("div.approx", x / y, 2.0 * ulp32(x / y)),
                ("ex2.approx", x.exp2(), 2.0 * ulp32(x.exp2())),
                ("lg2.approx", lg2, if y > 0.5 && y < 2.0 { 2f64.powi(-22) } else { lg2.abs() * 2f64.powi(-22) }),
                ("sin.approx", x.sin(), 2f64.powf(-20.5)),
                ("cos.approx", x.cos(), 2f64.powf(-20.5)),
                ("rsqrt.approx", 1.0 / y.sqrt(), 2f64.powf(-22.9) / y.sqrt()),
                ("sqrt.approx", y.sqrt(), 2f64.powi(-23) * y.sqrt() + ulp32(y.sqrt()) / 2.0),
                ("rcp.approx.ftz", 1.0 / y, ulp32(1.0 / y)),
            ];
            for (k, (name, exact, tol)) in cases.iter().enumerate() {
                let g = got[8 * i + k] as f64;
                assert!(
                    (g - exact).abs() <= *tol,
                    "{name} ({} build) of a={:e} b={:e}: got {g:e}, exact {exact:e}, error {:e} > {tol:e}",
                    ptx.build,
                    a[i],
                    b[i],
                    (g - exact).abs()
                );
            }
        }
    }
}
