//! PTX forms found missing by running ZLUDA's PTX test suite (issue 11), each
//! run end to end on a small kernel of our own: one input buffer of bytes in,
//! one output buffer of bytes out, one thread unless a test says otherwise.

use warpsim_host::{launch, Args, Context, DevicePtr, Dims, Kernel, LaunchOptions, Module};

const HEAD: &str = ".version 8.0\n.target sm_90\n.address_size 64\n";

/// Runs kernel `k(.param .u64 in, .param .u64 out)` of `ptx` with `input`
/// and an output of `out_len` zero bytes; returns the output.
fn run_with(ptx: &str, input: &[u8], out_len: usize, threads: u32) -> Vec<u8> {
    let kernel = kernel_k(ptx);
    let mut ctx = Context::new();
    let inp = ctx.alloc("in", input.len().max(1) as u64, None);
    ctx.write(inp, input).unwrap();
    let out = ctx.alloc("out", out_len as u64, None);
    ctx.write(out, &vec![0; out_len]).unwrap();
    let args = in_out_args(&kernel, inp, out);
    launch(&mut ctx, &kernel, &Dims::linear(1, threads), args.bytes(), &LaunchOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    ctx.read_vec(out, out_len as u64, "out").unwrap()
}

/// Kernel `k` of the module `ptx` (after [`HEAD`]).
fn kernel_k(ptx: &str) -> Kernel {
    Module::from_ptx("t.ptx", format!("{HEAD}{ptx}")).kernel("k").unwrap_or_else(|e| panic!("{e}"))
}

/// The arguments `(in, out)` of `kernel`.
fn in_out_args(kernel: &Kernel, inp: DevicePtr, out: DevicePtr) -> Args {
    let mut args = Args::new(kernel);
    args.set_ptr(0, inp).unwrap();
    args.set_ptr(1, out).unwrap();
    args
}

/// Kernel `k(.param .u64 in, .param .u64 out)` with `in` in `a` and `out`
/// in `b` (both `.u64`), declaring `regs`, running `body`.
fn in_out(regs: &str, body: &str) -> String {
    format!(
        "\n.visible .entry k(.param .u64 in, .param .u64 out)\n{{\n    .reg .u64 a, b;\n    {regs}\n    ld.param.u64 a, [in];\n    ld.param.u64 b, [out];{body}\n    ret;\n}}"
    )
}

/// `ld.global.{ty} R, [a+4k]` for each register `R` of `regs`: consecutive
/// words of `in`, as lines of a kernel body for [`in_out`].
fn load_words(ty: &str, regs: &[&str]) -> String {
    regs.iter().enumerate().map(|(k, r)| format!("\n    ld.global.{ty} {r}, {};", word("a", k))).collect()
}

/// Each of `steps` (instructions that leave a result in `r`) followed by
/// `st.global.{ty} [b+4k], r`: the k-th result in the k-th word of `out`.
fn store_each(ty: &str, steps: &[&str]) -> String {
    steps.iter().enumerate().map(|(k, s)| format!("\n    {s}\n    st.global.{ty} {}, r;", word("b", k))).collect()
}

/// The words a kernel stores that declares `regs`, loads each `(register,
/// value)` of `inputs` as a `ty` word ([`load_words`]), then runs `steps`,
/// storing each one's `r` as a `ty` word ([`store_each`]).
fn step_results(regs: &str, ty: &str, inputs: &[(&str, u32)], steps: &[&str]) -> Vec<u32> {
    let (names, values): (Vec<&str>, Vec<u32>) = inputs.iter().copied().unzip();
    let ptx = in_out(regs, &(load_words(ty, &names) + &store_each(ty, steps)));
    words(&run(&ptx, &bytes(&values), 4 * steps.len()))
}

/// The address of word `k` after register `base`: `[base]`, `[base+4]`, ...
fn word(base: &str, k: usize) -> String {
    match k {
        0 => format!("[{base}]"),
        _ => format!("[{base}+{}]", 4 * k),
    }
}

/// Launch options of timing mode on the H200's model.
fn timing() -> LaunchOptions {
    LaunchOptions { timing: Some(warpsim_host::TimingMode::preset("h200", false).unwrap()), ..Default::default() }
}

fn run(ptx: &str, input: &[u8], out_len: usize) -> Vec<u8> {
    run_with(ptx, input, out_len, 1)
}

fn words(b: &[u8]) -> Vec<u32> {
    b.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()
}

fn bytes(w: &[u32]) -> Vec<u8> {
    w.iter().flat_map(|x| x.to_le_bytes()).collect()
}

// `.reg .v2`/`.v4` registers: loaded and stored whole, read and written by
// element (`r.y`), moved whole, passed to and returned from a function.
#[test]
fn vector_registers() {
    let ptx = "
.func (.reg .v2 .b32 o) swap(.reg .v2 .b32 i)
{
    mov.v2.b32 o, {i.y, i.x};
    ret;
}
.visible .entry k(.param .u64 in, .param .u64 out)
{
    .reg .u64 a, b;
    .reg .v4 .u32 v;
    .reg .v2 .b32 p, q;
    .reg .v4 .u16 h;
    .reg .u32 s;
    ld.param.u64 a, [in];
    ld.param.u64 b, [out];
    ld.global.v4.u32 v, [a];
    add.u32 s, v.x, v.w;
    mov.u32 v.z, s;
    mov.v2.b32 p, {v.x, v.y};
    call (q), swap, (p);
    mov.v4.u32 {v.x, v.y, v.z, v.w}, {v.y, v.z, v.w, v.x};
    st.global.v4.u32 [b], v;
    st.global.v2.b32 [b+16], q;
    mov.v4.u16 h, {1, 2, 3, 4};
    mov.b64 a, h;
    st.global.u64 [b+24], a;
    ret;
}";
    let out = run(ptx, &bytes(&[1, 2, 3, 4]), 32);
    assert_eq!(words(&out), [2, 5, 4, 1, 2, 1, 0x0002_0001, 0x0004_0003]);
}

// `r + k` as a source operand (ptxas accepts it and adds).
#[test]
fn register_plus_constant_operand() {
    let ptx = "
.visible .entry k(.param .u64 in, .param .u64 out)
{
    .local .align 8 .b8 buf[8];
    .reg .u64 a, b, v;
    .reg .u32 w;
    ld.param.u64 a, [in];
    ld.param.u64 b, [out];
    ld.global.u64 v, [a];
    st.local.u64 [buf], v + 5;
    ld.local.u64 v, [buf];
    st.global.u64 [b], v;
    ld.global.u32 w, [a+8];
    st.global.u32 [b+8], w + 7;
    ret;
}";
    let out = run(ptx, &bytes(&[40, 0, 100]), 12);
    assert_eq!(words(&out), [45, 0, 107]);
}

// `.global`/`.const` variables declared inside a function, with initialisers:
// program-wide like module variables, visible in their scope only.
#[test]
fn function_scoped_globals() {
    let ptx = "
.global .b32 t[2] = {100, 200};
.visible .entry k(.param .u64 in, .param .u64 out)
{
    .global .b32 t[4] = {1, 2, 3, 4};
    .shared .b32 s[4];
    .reg .u64 b;
    .reg .b32 x, y;
    ld.param.u64 b, [out];
    cp.async.ca.shared.global [s], [t], 16, 12;
    cp.async.commit_group;
    cp.async.wait_group 0;
    ld.shared.b32 x, [s+8];
    ld.shared.b32 y, [s+12];
    st.global.b32 [b], x;
    st.global.b32 [b+4], y;
    {
        .const .b32 t = 7;
        ld.const.b32 x, [t];
        st.global.b32 [b+8], x;
    }
    ld.global.b32 x, [t+4];
    st.global.b32 [b+12], x;
    ret;
}";
    let out = run(ptx, &[], 16);
    assert_eq!(words(&out), [3, 0, 7, 2]);
}

// `bmsk.clamp` and `bmsk.wrap`.
#[test]
fn bmsk() {
    let steps = ["bmsk.clamp.b32 r, p, n;", "bmsk.wrap.b32 r, p, n;", "bmsk.clamp.b32 r, 4, 40;"];
    let got = step_results(".reg .u32 p, n, r;", "u32", &[("p", 36), ("n", 12)], &steps);
    assert_eq!(got, [0, 0xFFF0, 0xFFFF_FFF0]);
}

// `.relu` and `.satfinite` on conversions to f16/bf16 (and the packed x2
// forms): negative results become +0, out-of-range ones the largest finite.
#[test]
fn cvt_relu_and_satfinite() {
    let packed = ["cvt.rn.relu.f16x2.f32 r, x, y;", "cvt.rn.satfinite.f16x2.f32 r, y, x;", "cvt.rn.relu.bf16x2.f32 r, y, x;"];
    let halves = "
    cvt.rn.relu.f16.f32 h, x;
    st.global.b16 [b+12], h;
    cvt.rn.satfinite.f16.f32 h, y;
    st.global.b16 [b+14], h;";
    let ptx = in_out(".reg .f32 x, y; .reg .b32 r; .reg .b16 h;", &(load_words("f32", &["x", "y"]) + &store_each("b32", &packed) + halves));
    let out = run(&ptx, &bytes(&[(-1.0f32).to_bits(), 1e6f32.to_bits()]), 16);
    assert_eq!(words(&out), [0x0000_7C00, 0x7BFF_BC00, 0x4974_0000, 0x7BFF_0000]);
}

// `fma.rn.relu` on f16 and bf16 (nvcc's `__hfma_relu`): a negative result becomes +0.
#[test]
fn fma_relu_clamps_negative_results_to_zero() {
    let ptx = in_out(
        ".reg .b16 x, y, z, r;",
        "
    ld.global.b16 x, [a];
    ld.global.b16 y, [a+2];
    ld.global.b16 z, [a+4];
    fma.rn.relu.f16 r, x, y, z;
    st.global.b16 [b], r;
    fma.rn.relu.f16 r, x, x, z;
    st.global.b16 [b+2], r;
    mov.b16 x, 0x3F80;
    mov.b16 y, 0xBF80;
    mov.b16 z, 0x3F00;
    fma.rn.relu.bf16 r, x, y, z;
    st.global.b16 [b+4], r;
    fma.rn.relu.bf16 r, x, x, z;
    st.global.b16 [b+6], r;",
    );
    // f16: 1 * -1 + 0.5 and 1 * 1 + 0.5; bf16 the same.
    let out = run(&ptx, &bytes(&[0xBC00_3C00, 0x3800]), 8);
    assert_eq!(words(&out), [0x3E00_0000, 0x3FC0_0000]);
}

// `cvt.pack.sat`: two s32 values saturated to 8 or 16 bits and packed, the
// rest of the word from c.
#[test]
fn cvt_pack_saturating() {
    let steps = ["cvt.pack.sat.u8.s32.b32 r, x, y, z;", "cvt.pack.sat.s8.s32.b32 r, y, x, z;", "cvt.pack.sat.s16.s32 r, x, y;"];
    let got = step_results(".reg .b32 x, y, z, r;", "b32", &[("x", 300), ("y", (-5i32) as u32), ("z", 0x1234_5678)], &steps);
    assert_eq!(got, [0x5678_FF00, 0x5678_FB7F, 0x012C_FFFB]);
}

// fp8 conversions: f32 pairs and f16x2 to e4m3x2/e5m2x2 (round to nearest
// even, saturating), and back to f16x2 (exact).
#[test]
fn fp8_conversions() {
    let body = "
    cvt.rn.satfinite.e4m3x2.f32 h, x, y;
    st.global.b16 [b], h;
    cvt.rn.f16x2.e4m3x2 r, h;
    st.global.b32 [b+4], r;
    cvt.rn.satfinite.relu.e5m2x2.f32 h, y, x;
    st.global.b16 [b+2], h;
    cvt.rn.relu.f16x2.e5m2x2 r, 0x3CBC;
    st.global.b32 [b+8], r;
    mov.b32 r, 0x3C00C000;
    cvt.rn.satfinite.e5m2x2.f16x2 h, r;
    st.global.b16 [b+12], h;";
    let ptx = in_out(".reg .f32 x, y; .reg .b16 h; .reg .b32 r;", &(load_words("f32", &["x", "y"]) + body));
    // 1.1875 ties to 1.25 in e4m3 (0x3A); -600 saturates to -448 (0xFE).
    let out = run(&ptx, &bytes(&[1.1875f32.to_bits(), (-600f32).to_bits()]), 16);
    assert_eq!(words(&out), [0x003D_3AFE, 0x3D00_DF00, 0x3C00_0000, 0x3CC0]);
}

// An access past an allocation's exact end but within its page is served (a
// GPU's allocations are carved from larger pages) and reported with its
// place; beyond the page it faults.
#[test]
fn past_the_end_within_the_page() {
    let ptx = in_out(
        ".reg .u32 x;",
        "
    st.global.u32 [a+4], 77;
    ld.global.u32 x, [a+4];
    st.global.u32 [b], x;",
    );
    let kernel = kernel_k(&ptx);
    let mut ctx = Context::new();
    let inp = ctx.alloc("in", 4, None);
    let out = ctx.alloc("out", 4, None);
    let args = in_out_args(&kernel, inp, out);
    // With exact bounds it faults; by default it is served as a GPU serves it, and kept to warn about.
    let strict = LaunchOptions { serve_past_end: false, ..Default::default() };
    let e = launch(&mut ctx, &kernel, &Dims::linear(1, 1), args.bytes(), &strict).unwrap_err();
    assert!(e.to_string().contains("out-of-bounds global store"), "{e}");
    let serve = LaunchOptions::default();
    let s = launch(&mut ctx, &kernel, &Dims::linear(1, 1), args.bytes(), &serve).unwrap();
    assert_eq!(ctx.read_vec(out, 4, "out").unwrap(), 77u32.to_le_bytes());
    assert_eq!(s.stats.past_end_count, 2);
    let w = s.stats.past_end[0].to_string();
    assert!(w.contains("out-of-bounds global store of 4 bytes") && w.contains("PTX line 11"), "{w}");
    // The cycle model serves and keeps them the same way.
    let mut ctx2 = Context::new();
    let inp2 = ctx2.alloc("in", 4, None);
    let out2 = ctx2.alloc("out", 4, None);
    let args2 = in_out_args(&kernel, inp2, out2);
    let s = launch(&mut ctx2, &kernel, &Dims::linear(1, 1), args2.bytes(), &timing()).unwrap();
    assert_eq!(ctx2.read_vec(out2, 4, "out").unwrap(), 77u32.to_le_bytes());
    assert_eq!(s.stats.past_end_count, 2);
    assert!(s.stats.past_end[0].to_string().contains("PTX line 11"));
    // 64 KiB on: past the page, a fault.
    let far = ptx.replace("[a+4]", "[a+65536]");
    let kernel = kernel_k(&far);
    let e = launch(&mut ctx, &kernel, &Dims::linear(1, 1), args.bytes(), &serve).unwrap_err();
    assert!(e.to_string().contains("out-of-bounds global store"), "{e}");
}

// `check` still reports a served past-the-end access as out of bounds.
#[test]
fn past_the_end_is_reported_by_check() {
    let ptx = "
.visible .entry k(.param .u64 in, .param .u64 out)
{
    .reg .u64 a;
    .reg .u32 x;
    ld.param.u64 a, [in];
    ld.global.u32 x, [a+8];
    ret;
}";
    let kernel = kernel_k(ptx);
    let mut ctx = Context::new();
    let inp = ctx.alloc("in", 8, None);
    let args = in_out_args(&kernel, inp, inp);
    let opts = LaunchOptions { check: true, ..Default::default() };
    let s = launch(&mut ctx, &kernel, &Dims::linear(1, 1), args.bytes(), &opts).unwrap();
    let d = s.diagnostics.unwrap();
    assert!(d.iter().any(|x| x.kind == warpsim_check::DiagKind::OutOfBounds), "{d:?}");
}

// Device printf as nvcc calls it: `vprintf(format, args)` with the arguments
// in a local buffer, each at its alignment; output in lane order, flushed at
// the end of the launch.
#[test]
fn device_printf() {
    let ptx = r#"
.extern .func (.param .b32 func_retval0) vprintf
(
    .param .b64 vprintf_param_0,
    .param .b64 vprintf_param_1
)
;
.global .align 1 .b8 $str[20] = {116, 37, 100, 32, 37, 46, 50, 102, 32, 37, 115, 32, 37, 120, 32, 37, 37, 10, 0, 0};
.global .align 1 .b8 $name[3] = {111, 107, 0};
.visible .entry k(.param .u64 in, .param .u64 out)
{
    .local .align 8 .b8 __local_depot0[32];
    .reg .b64 %SP, %SPL, %rd<8>;
    .reg .b32 %r<4>;
    .reg .f64 %fd1;
    mov.u64 %SPL, __local_depot0;
    cvta.local.u64 %SP, %SPL;
    add.u64 %rd1, %SP, 0;
    add.u64 %rd2, %SPL, 0;
    mov.u32 %r1, %tid.x;
    st.local.u32 [%rd2], %r1;
    cvt.rn.f64.u32 %fd1, %r1;
    st.local.f64 [%rd2+8], %fd1;
    mov.u64 %rd5, $name;
    cvta.global.u64 %rd6, %rd5;
    st.local.u64 [%rd2+16], %rd6;
    st.local.u32 [%rd2+24], 255;
    mov.u64 %rd3, $str;
    cvta.global.u64 %rd4, %rd3;
    {
    .param .b64 param0;
    st.param.b64 [param0], %rd4;
    .param .b64 param1;
    st.param.b64 [param1], %rd1;
    .param .b32 retval0;
    call.uni (retval0), vprintf, (param0, param1);
    ld.param.b32 %r2, [retval0];
    }
    ld.param.u64 %rd7, [out];
    cvta.to.global.u64 %rd7, %rd7;
    mul.wide.u32 %rd6, %r1, 4;
    add.s64 %rd7, %rd7, %rd6;
    st.global.u32 [%rd7], %r2;
    ret;
}"#;
    let kernel = kernel_k(ptx);
    let mut ctx = Context::new();
    let out = ctx.alloc("out", 8, None);
    let mut args = Args::new(&kernel);
    args.set_ptr(1, out).unwrap();
    let s = launch(&mut ctx, &kernel, &Dims::linear(1, 2), args.bytes(), &LaunchOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.stats.printf, "t0 0.00 ok ff %\nt1 1.00 ok ff %\n");
    // Timing mode prints the same (it was lost there once).
    let s = launch(&mut ctx, &kernel, &Dims::linear(1, 2), args.bytes(), &timing()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.stats.printf, "t0 0.00 ok ff %\nt1 1.00 ok ff %\n");
    // vprintf's return value (the 4 arguments it parsed) is written, so check finds nothing.
    let checked = LaunchOptions { check: true, ..Default::default() };
    let s = launch(&mut ctx, &kernel, &Dims::linear(1, 2), args.bytes(), &checked).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.diagnostics.as_deref(), Some(&[][..]), "{:?}", s.diagnostics);
    // CUDA's printf returns the number of arguments it parsed.
    assert_eq!(words(&ctx.read_vec(out, 8, "out").unwrap()), [4, 4]);
}

// Device assert: `__assertfail(message, file, line, function, 1)` ends the
// launch with a fault naming the thread, file, line and expression.
#[test]
fn device_assert() {
    let ptx = r#"
.extern .func __assertfail
(
    .param .b64 __assertfail_param_0,
    .param .b64 __assertfail_param_1,
    .param .b32 __assertfail_param_2,
    .param .b64 __assertfail_param_3,
    .param .b64 __assertfail_param_4
)
;
.global .align 1 .b8 $str[6] = {120, 32, 62, 32, 49, 0};
.global .align 1 .b8 $str1[5] = {97, 46, 99, 117, 0};
.global .align 1 .b8 __unnamed_1[2] = {107, 0};
.visible .entry k(.param .u64 in, .param .u64 out)
{
    .reg .pred %p<2>;
    .reg .b32 %r<3>;
    .reg .b64 %rd<8>;
    mov.u32 %r1, %tid.x;
    setp.gt.u32 %p1, %r1, 1;
    @%p1 bra $L__BB0_2;
    mov.u64 %rd1, $str;
    cvta.global.u64 %rd2, %rd1;
    mov.u64 %rd3, $str1;
    cvta.global.u64 %rd4, %rd3;
    mov.u64 %rd5, __unnamed_1;
    cvta.global.u64 %rd6, %rd5;
    mov.b32 %r2, 7;
    mov.u64 %rd7, 1;
    {
    .param .b64 param0;
    st.param.b64 [param0], %rd2;
    .param .b64 param1;
    st.param.b64 [param1], %rd4;
    .param .b32 param2;
    st.param.b32 [param2], %r2;
    .param .b64 param3;
    st.param.b64 [param3], %rd6;
    .param .b64 param4;
    st.param.b64 [param4], %rd7;
    call.uni __assertfail, (param0, param1, param2, param3, param4);
    }
$L__BB0_2:
    ret;
}"#;
    let kernel = kernel_k(ptx);
    let mut ctx = Context::new();
    let args = Args::new(&kernel);
    let e = launch(&mut ctx, &kernel, &Dims::linear(1, 4), args.bytes(), &LaunchOptions::default()).unwrap_err().to_string();
    assert!(e.starts_with("device assert failed: a.cu:7: k: Assertion `x > 1` failed."), "{e}");
    assert!(e.contains("thread (0,0,0)"), "{e}");
}

// 256-bit vector loads and stores (`.v8.b32`, `.v4.b64`) on an sm_100 target.
#[test]
fn vectors_of_256_bits_move_32_bytes_per_thread() {
    let ptx = ".version 8.8\n.target sm_100\n.address_size 64\n\
        .visible .entry k(.param .u64 in, .param .u64 out)\n{\n    .reg .u64 a, b, x<4>;\n    .reg .b32 s<8>;\n\
        ld.param.u64 a, [in];\n    ld.param.u64 b, [out];\n\
        ld.global.v8.b32 {s0, s1, s2, s3, s4, s5, s6, s7}, [a];\n\
        st.global.v8.b32 [b], {s7, s6, s5, s4, s3, s2, s1, s0};\n\
        ld.global.v4.b64 {x0, x1, x2, x3}, [a+32];\n\
        st.global.v4.b64 [b+32], {x3, x2, x1, x0};\n    ret;\n}";
    let kernel = Module::from_ptx("t.ptx", ptx.to_string()).kernel("k").unwrap_or_else(|e| panic!("{e}"));
    let mut ctx = Context::new();
    let input: Vec<u32> = (1..=16).collect();
    let inp = ctx.alloc("in", 64, None);
    ctx.write(inp, &bytes(&input)).unwrap();
    let out = ctx.alloc("out", 64, None);
    let args = in_out_args(&kernel, inp, out);
    launch(&mut ctx, &kernel, &Dims::linear(1, 1), args.bytes(), &LaunchOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    let got = words(&ctx.read_vec(out, 64, "out").unwrap());
    assert_eq!(got, [8, 7, 6, 5, 4, 3, 2, 1, 15, 16, 13, 14, 11, 12, 9, 10]);
}

// `min|max.relu.s32` (`__vimax_s32_relu`, `__vimin_s32_relu`) and the packed
// `.s16x2`/`.u16x2` forms (`__vmaxs2`, `__vimax_s16x2_relu`): results clamp
// below at 0 per element with `.relu`.
#[test]
fn integer_min_max_relu_and_16x2() {
    let steps = [
        "max.relu.s32 r, x, y;",
        "min.relu.s32 r, x, y;",
        "max.s16x2 r, x, y;",
        "max.relu.s16x2 r, x, y;",
        "min.u16x2 r, x, y;",
        "min.relu.s16x2 r, y, x;",
    ];
    // x = 0x0007_FFFB (s16x2: -5 low, 7 high), y = 0xFFFE_0003 (3 low, -2 high).
    let got = step_results(".reg .b32 x, y, r;", "b32", &[("x", 0x0007_FFFB), ("y", 0xFFFE_0003)], &steps);
    // As s32: x = 0x0007FFFB > 0 > y = 0xFFFE0003 (negative).
    // max.relu = x, min.relu = max(y, 0) = 0.
    // s16x2: low (-5, 3), high (7, -2): max = (3, 7); max.relu the same; min.u16x2:
    // low (0xFFFB, 3) -> 3, high (7, 0xFFFE) -> 7; min.relu.s16x2: (-5 -> 0, -2 -> 0).
    assert_eq!(got, [0x0007_FFFB, 0, 0x0007_0003, 0x0007_0003, 0x0007_0003, 0]);
}

// `min|max.xorsign.abs.f32` (`__fmax_xorsign_abs` style): the magnitude's
// min/max, the sign the XOR of the operands' signs; NaN stays canonical.
#[test]
fn min_max_xorsign_abs() {
    let steps = [
        "max.xorsign.abs.f32 r, x, y;",
        "min.xorsign.abs.f32 r, x, y;",
        "max.xorsign.abs.f32 r, x, x;",
        "mov.b32 y, 0x7FC12345;\n    max.NaN.xorsign.abs.f32 r, x, y;",
        "max.xorsign.abs.f32 r, x, y;",
    ];
    // x = -2.0, y = 1.5: max |.| = 2.0, min = 1.5, sign negative (one negative).
    let got = step_results(".reg .b32 x, y, r;", "b32", &[("x", 0xC000_0000), ("y", 0x3FC0_0000)], &steps);
    assert_eq!(got, [0xC000_0000, 0xBFC0_0000, 0x4000_0000, 0x7FFF_FFFF, 0xC000_0000]);
}

// Three-input `min|max{.NaN}{.abs}.f32 d, a, b, c` (sm_100).
#[test]
fn three_input_min_max() {
    let steps = [
        "min.f32 r, x, y, z;",
        "max.f32 r, x, y, z;",
        "max.abs.f32 r, x, y, z;",
        "mov.b32 z, 0x7FC00000;\n    max.f32 r, x, y, z;",
        "max.NaN.f32 r, x, y, z;",
    ];
    // -4.0, 1.0, 2.0
    let got = step_results(".reg .b32 x, y, z, r;", "b32", &[("x", 0xC080_0000), ("y", 0x3F80_0000), ("z", 0x4000_0000)], &steps);
    assert_eq!(got, [0xC080_0000, 0x4000_0000, 0x4080_0000, 0x3F80_0000, 0x7FFF_FFFF]);
}

// Modifiers that do not apply are refused with the instruction, not dropped.
#[test]
fn misplaced_relu_and_xorsign_are_refused() {
    for (body, what) in [
        ("max.relu.u32 r, x, x;", ".relu"),
        ("max.relu.f32 r, x, x;", ".relu"),
        ("max.xorsign.f32 r, x, x;", ".xorsign"),
        ("min.relu.u16x2 r, x, x;", ".relu"),
    ] {
        let ptx = in_out(".reg .b32 x, r;", &format!("mov.b32 x, 1;\n    {body}\n    st.global.b32 [b], r;"));
        let err = Module::from_ptx("t.ptx", format!("{HEAD}{ptx}")).kernel("k").err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains(what), "{body}: {err}");
    }
}

// `fns.b32` (`__fns`) and `szext` (sm_70+): the n-th set bit and sign/zero
// extension from a bit position.
#[test]
fn fns_and_szext() {
    let steps = [
        "fns.b32 r, x, 0, 2;",
        "fns.b32 r, x, 31, -1;",
        "fns.b32 r, x, 4, 0;",
        "fns.b32 r, x, 0, 9;",
        "szext.wrap.s32 r, x, 4;",
        "szext.clamp.u32 r, x, 40;",
        "szext.wrap.u32 r, x, 36;",
    ];
    // x = 0x8000_001A: bits 1, 3, 4, 31.
    let got = step_results(".reg .b32 x, r;", "b32", &[("x", 0x8000_001A)], &steps);
    // 2nd set bit from 0: 3; 1st downwards from 31: 31; bit 4 is set: 4; no 9th: !0;
    // low 4 bits 0b1010 sign-extended: 0xFFFF_FFFA; clamp 40 -> 32: x; wrap 36 -> 4 zero-extended: 0xA.
    assert_eq!(got, [3, 31, 4, u32::MAX, 0xFFFF_FFFA, 0x8000_001A, 0xA]);
}

// Generic-address tests, cluster-of-one special registers, `mapa` to rank 0,
// `createpolicy` and `griddepcontrol` (no-ops when launches run in order).
#[test]
fn isspacep_cluster_registers_and_launch_control() {
    let ptx = in_out(
        ".reg .b32 r, s; .reg .b64 g, p; .reg .pred q; .shared .b32 sh[4];",
        "
    griddepcontrol.wait;
    createpolicy.fractional.L2::evict_last.b64 p, 1.0;
    ld.global.L2::cache_hint.b32 r, [a], p;
    cvta.shared.u64 g, sh;
    isspacep.shared q, g;
    selp.b32 s, 1, 0, q;
    isspacep.global q, g;
    selp.b32 r, 2, 0, q;
    add.u32 s, s, r;
    isspacep.global q, b;
    selp.b32 r, 4, 0, q;
    add.u32 s, s, r;
    isspacep.local q, b;
    selp.b32 r, 8, 0, q;
    add.u32 s, s, r;
    st.global.b32 [b], s;
    mov.u32 r, %cluster_ctarank;
    st.global.b32 [b+4], r;
    mov.u32 r, %cluster_nctarank;
    st.global.b32 [b+8], r;
    mov.u32 r, %nclusterid.x;
    st.global.b32 [b+12], r;
    mapa.u64 g, b, 0;
    mov.u32 r, 7;
    st.global.b32 [g+16], r;
    griddepcontrol.launch_dependents;",
    );
    let out = run(&ptx, &bytes(&[0]), 20);
    // shared address: shared yes (1), global no; out: global yes (4), local no.
    assert_eq!(words(&out), [5, 0, 1, 1, 7]);
}

// Forms a GPU would run differently are refused: `vote` without `.sync` (ptxas
// refuses it on sm_70+ from PTX 6.4) and clusters of more than one CTA.
#[test]
fn non_sync_vote_and_multi_cta_clusters_are_refused() {
    let k = |src: String| Module::from_ptx("t.ptx", src).kernel("k").err().map(|e| e.to_string()).unwrap_or_default();
    let vote = ".visible .entry k()\n{\n.reg .pred p;\n.reg .b32 r;\nvote.ballot.b32 r, p;\nret;\n}\n";
    assert!(k(format!("{HEAD}{vote}")).contains("without `.sync`"));
    let old = ".version 6.0\n.target sm_60\n.address_size 64\n";
    assert_eq!(k(format!("{old}{vote}")), "");
    let cluster = ".visible .entry k() .reqnctapercluster 2, 1, 1\n{\nret;\n}\n";
    assert!(k(format!("{HEAD}{cluster}")).contains("clusters of more than one CTA"));
}
