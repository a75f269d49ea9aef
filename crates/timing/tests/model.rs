//! Behaviour the timing model must show, on small kernels: latency hiding,
//! full speed from few warps with independent work, divergence issuing both
//! paths, barriers, pipe widths per GPU, 64-lane wavefronts, determinism,
//! the timeline, and preset files.

mod common;
use common::*;
use warpsim_timing::{Reason, SchedulerPolicy, TimingGpu, TimingOptions};

/// `chains` independent FMA chains, `n` FMAs in all, per thread; then a store.
fn fma_kernel(chains: usize, n: usize) -> String {
    let mut s = format!("{HEAD}.visible .entry fmas(.param .u64 out)\n{{\n\t.reg .f32 %f<16>;\n\t.reg .b64 %rd<4>;\n\t.reg .b32 %r<4>;\n");
    s += "\tld.param.u64 %rd1, [out];\n\tcvta.to.global.u64 %rd1, %rd1;\n\tmov.u32 %r1, %tid.x;\n\tcvt.rn.f32.u32 %f1, %r1;\n";
    for c in 2..=chains {
        s += &format!("\tadd.f32 %f{c}, %f1, 0f3F800000;\n");
    }
    for i in 0..n {
        let c = i % chains + 1;
        s += &format!("\tfma.rn.f32 %f{c}, %f{c}, 0f3F800347, 0f3F000000;\n");
    }
    for c in 2..=chains {
        s += &format!("\tadd.f32 %f1, %f1, %f{c};\n");
    }
    s += "\tmul.wide.u32 %rd2, %r1, 4;\n\tadd.s64 %rd3, %rd1, %rd2;\n\tst.global.f32 [%rd3], %f1;\n\tret;\n}\n";
    s
}

/// Global pointers `in` and `out` in %rd1 and %rd2, the thread's global index in %r4.
macro_rules! in_out_prologue {
    () => {
        "\tld.param.u64 %rd1, [in];\n\tcvta.to.global.u64 %rd1, %rd1;\n\tld.param.u64 %rd2, [out];\n\tcvta.to.global.u64 %rd2, %rd2;\n\tmov.u32 %r1, %tid.x;\n\tmov.u32 %r2, %ctaid.x;\n\tmov.u32 %r3, %ntid.x;\n\tmad.lo.s32 %r4, %r2, %r3, %r1;\n"
    };
}

/// Each thread loads a float 128 bytes from its neighbour's (a line per lane), does a little math, stores.
const LOADS: &str = concat!(
    "
.visible .entry loads(.param .u64 in, .param .u64 out)
{
\t.reg .f32 %f<8>;
\t.reg .b64 %rd<8>;
\t.reg .b32 %r<8>;
",
    in_out_prologue!(),
    "\tmul.wide.u32 %rd3, %r4, 128;
\tadd.s64 %rd4, %rd1, %rd3;
\tld.global.f32 %f1, [%rd4];
\tfma.rn.f32 %f2, %f1, 0f3F800347, 0f3F000000;
\tfma.rn.f32 %f2, %f2, 0f3F800347, 0f3F000000;
\tmul.wide.u32 %rd5, %r4, 4;
\tadd.s64 %rd6, %rd2, %rd5;
\tst.global.f32 [%rd6], %f2;
\tret;
}
"
);

fn loads(block: u32, gpu: &TimingGpu) -> u64 {
    let src = format!("{HEAD}{LOADS}");
    let n = block as usize;
    run(&src, "loads", 1, block, &[vec![0; n * 128], vec![0; n * 4]], &[], gpu, &opts()).report.kernel_cycles
}

#[test]
fn more_resident_warps_hide_more_memory_latency() {
    let g = h200();
    let one = loads(32, &g);
    let sixteen = loads(512, &g);
    println!("one warp: {one} cycles; 16 warps (16x the loads): {sixteen} cycles");
    // 16x the work in well under 2x the time: the other warps' loads overlap the first's.
    assert!(sixteen < one * 2, "{sixteen} vs {one}");
}

#[test]
fn one_warp_with_independent_work_runs_at_full_speed() {
    let g = h200();
    // One warp per scheduler (4 warps), 1024 FMAs each.
    let dep = run(&fma_kernel(1, 1024), "fmas", 1, 128, &[vec![0; 512]], &[], &g, &opts()).report;
    let ind = run(&fma_kernel(4, 1024), "fmas", 1, 128, &[vec![0; 512]], &[], &g, &opts()).report;
    println!("dependent chain: {} cycles, 4 independent chains: {} cycles", dep.kernel_cycles, ind.kernel_cycles);
    // A dependent chain waits 4 cycles per FMA; four chains issue every cycle.
    assert!(dep.kernel_cycles > 4000 && dep.kernel_cycles < 4600, "{}", dep.kernel_cycles);
    assert!(ind.kernel_cycles < 1500, "{}", ind.kernel_cycles);
    assert!(dep.stall[Reason::Wait as usize] > 3 * dep.stall[Reason::Selected as usize] / 2);
}

#[test]
fn a_divergent_warp_issues_both_paths() {
    let g = h200();
    let branchy = |cond: &str| {
        format!(
            "{HEAD}.visible .entry split(.param .u64 out)\n{{\n\t.reg .f32 %f<4>;\n\t.reg .b64 %rd<4>;\n\t.reg .b32 %r<4>;\n\t.reg .pred %p<2>;\n\
             \tld.param.u64 %rd1, [out];\n\tcvta.to.global.u64 %rd1, %rd1;\n\tmov.u32 %r1, %tid.x;\n\tcvt.rn.f32.u32 %f1, %r1;\n\
             \t{cond}\n\t@%p1 bra $B;\n{a}\tbra.uni $J;\n$B:\n{b}$J:\n\tmul.wide.u32 %rd2, %r1, 4;\n\tadd.s64 %rd3, %rd1, %rd2;\n\tst.global.f32 [%rd3], %f1;\n\tret;\n}}\n",
            a = "\tfma.rn.f32 %f1, %f1, 0f3F800347, 0f3F000000;\n".repeat(256),
            b = "\tfma.rn.f32 %f1, %f1, 0f3F7FF972, 0fBE800000;\n".repeat(256),
        )
    };
    // 8 warps; split on lane parity, or on warp parity.
    let lanes =
        run(&branchy("and.b32 %r2, %r1, 1;\n\tsetp.eq.u32 %p1, %r2, 0;"), "split", 1, 256, &[vec![0; 1024]], &[], &g, &opts()).report;
    let warps =
        run(&branchy("and.b32 %r2, %r1, 32;\n\tsetp.eq.u32 %p1, %r2, 0;"), "split", 1, 256, &[vec![0; 1024]], &[], &g, &opts()).report;
    let r = lanes.kernel_cycles as f64 / warps.kernel_cycles as f64;
    println!("lane split {} cycles, warp split {} cycles: {r:.2}x", lanes.kernel_cycles, warps.kernel_cycles);
    assert!(lanes.sass_instructions > warps.sass_instructions * 19 / 10);
    assert!((1.6..=2.2).contains(&r), "{r}");
}

#[test]
fn barriers_hold_warps_until_the_slowest_arrives() {
    let g = h200();
    // Warp 0 runs 512 dependent FMAs before the barrier, the others none.
    let src = format!(
        "{HEAD}.visible .entry bar(.param .u64 out)\n{{\n\t.reg .f32 %f<4>;\n\t.reg .b64 %rd<4>;\n\t.reg .b32 %r<4>;\n\t.reg .pred %p<2>;\n\
         \tld.param.u64 %rd1, [out];\n\tcvta.to.global.u64 %rd1, %rd1;\n\tmov.u32 %r1, %tid.x;\n\tcvt.rn.f32.u32 %f1, %r1;\n\
         \tsetp.ge.u32 %p1, %r1, 32;\n\t@%p1 bra $W;\n{}$W:\n\tbar.sync 0;\n\tmul.wide.u32 %rd2, %r1, 4;\n\tadd.s64 %rd3, %rd1, %rd2;\n\tst.global.f32 [%rd3], %f1;\n\tret;\n}}\n",
        "\tfma.rn.f32 %f1, %f1, 0f3F800347, 0f3F000000;\n".repeat(512)
    );
    let r = run(&src, "bar", 1, 256, &[vec![0; 1024]], &[], &g, &opts()).report;
    // Seven warps wait about 2000 cycles each.
    let waited = r.stall[Reason::Barrier as usize];
    println!("barrier stall: {waited} warp-cycles");
    assert!(waited > 7 * 1800 && waited < 7 * 2400, "{waited}");
}

#[test]
fn a_t4_sub_partition_has_half_the_fp32_lanes_of_an_h100() {
    // 32 warps of independent FMAs on one SM: pipe-bound on the T4 (16 lanes), issue-bound on the H100 (32).
    let t4 = TimingGpu::by_name("t4").unwrap();
    let h100 = TimingGpu::by_name("h100").unwrap();
    let k = fma_kernel(4, 512);
    let a = run(&k, "fmas", 1, 1024, &[vec![0; 4096]], &[], &t4, &opts()).report;
    let b = run(&k, "fmas", 1, 1024, &[vec![0; 4096]], &[], &h100, &opts()).report;
    let r = a.kernel_cycles as f64 / b.kernel_cycles as f64;
    println!("T4 {} cycles, H100 {} cycles: {r:.2}x", a.kernel_cycles, b.kernel_cycles);
    assert!((1.7..=2.2).contains(&r), "{r}");
    assert!(a.stall[Reason::MathPipeThrottle as usize] > b.stall[Reason::MathPipeThrottle as usize]);
}

#[test]
fn a_cdna_wavefront_is_64_lanes() {
    let mi = TimingGpu::by_name("mi300x").unwrap();
    assert_eq!(mi.preset.warp_size, 64);
    // 128 threads = 2 wavefronts; splitting on bit 5 of the thread index
    // (a warp boundary on NVIDIA) diverges inside each wavefront.
    let src = format!(
        "{HEAD}.visible .entry split(.param .u64 out)\n{{\n\t.reg .f32 %f<4>;\n\t.reg .b64 %rd<4>;\n\t.reg .b32 %r<4>;\n\t.reg .pred %p<2>;\n\
         \tld.param.u64 %rd1, [out];\n\tcvta.to.global.u64 %rd1, %rd1;\n\tmov.u32 %r1, %tid.x;\n\tcvt.rn.f32.u32 %f1, %r1;\n\
         \tand.b32 %r2, %r1, 32;\n\tsetp.eq.u32 %p1, %r2, 0;\n\t@%p1 bra $B;\n{a}\tbra.uni $J;\n$B:\n{a}$J:\n\tmul.wide.u32 %rd2, %r1, 4;\n\tadd.s64 %rd3, %rd1, %rd2;\n\tst.global.f32 [%rd3], %f1;\n\tret;\n}}\n",
        a = "\tfma.rn.f32 %f1, %f1, 0f3F800347, 0f3F000000;\n".repeat(64),
    );
    let r = run(&src, "split", 1, 128, &[vec![0; 512]], &[], &mi, &opts()).report;
    assert_eq!(r.warps, 2);
    // Both paths issue in each wavefront: 128 FMAs per wave, 2 waves.
    assert!(r.sass_instructions >= 2 * 128, "{}", r.sass_instructions);
    let nv = run(&src, "split", 1, 128, &[vec![0; 512]], &[], &TimingGpu::by_name("h100").unwrap(), &opts()).report;
    assert_eq!(nv.warps, 4);
    assert!(nv.sass_instructions < r.sass_instructions * 3 / 2);
}

#[test]
fn the_same_launch_gives_the_same_report_under_either_policy() {
    let k = format!("{HEAD}{LOADS}");
    for policy in [SchedulerPolicy::Gto, SchedulerPolicy::Lrr] {
        let mut g = h200();
        g.timing.scheduler = policy;
        let a = run(&k, "loads", 8, 256, &[vec![0; 2048 * 128], vec![0; 2048 * 4]], &[], &g, &opts()).report;
        let b = run(&k, "loads", 8, 256, &[vec![0; 2048 * 128], vec![0; 2048 * 4]], &[], &g, &opts()).report;
        assert_eq!(
            (a.cycles, a.stall, a.l2_read_sectors, a.dram_read_bytes),
            (b.cycles, b.stall, b.l2_read_sectors, b.dram_read_bytes),
            "{policy:?}"
        );
    }
}

#[test]
fn the_timeline_covers_every_issue_cycle() {
    let g = h200();
    let o = TimingOptions { timeline: true, ..opts() };
    let r = run(&fma_kernel(2, 256), "fmas", 4, 256, &[vec![0; 4096]], &[], &g, &o).report;
    let spans = r.timeline.as_ref().unwrap();
    let covered: u64 = spans.iter().map(|s| s.end_cycle - s.start_cycle + 1).sum();
    assert_eq!(covered, r.issue_cycles);
    // Instructions issued; a two-slot one (a 64-bit add) counts once.
    let issued: u64 = spans.iter().map(|s| s.instructions as u64).sum();
    assert!(issued <= r.sass_instructions && issued * 11 / 10 >= r.sass_instructions);
    // No two spans of one sub-partition overlap.
    for w in spans.windows(2) {
        if (w[0].sm, w[0].subpartition) == (w[1].sm, w[1].subpartition) {
            assert!(w[0].end_cycle < w[1].start_cycle);
        }
    }
    assert!(spans.iter().all(|s| s.warp == s.block * 8 + s.warp_in_block as u64));
}

#[test]
fn clock64_reads_the_sm_cycle() {
    // Two reads around 100 dependent FMAs differ by the chain's 400 cycles.
    let src = format!(
        "{HEAD}.visible .entry clk(.param .u64 out)\n{{\n\t.reg .f32 %f<4>;\n\t.reg .b64 %rd<8>;\n\
         \tld.param.u64 %rd1, [out];\n\tcvta.to.global.u64 %rd1, %rd1;\n\tmov.f32 %f1, 0f3F800000;\n\tmov.u64 %rd2, %clock64;\n{}\
         \tmov.u64 %rd3, %clock64;\n\tst.global.u64 [%rd1], %rd2;\n\tst.global.u64 [%rd1+8], %rd3;\n\tst.global.f32 [%rd1+16], %f1;\n\tret;\n}}\n",
        "\tfma.rn.f32 %f1, %f1, 0f3F800347, 0f3F000000;\n".repeat(100)
    );
    let r = run(&src, "clk", 1, 1, &[vec![0; 24]], &[], &h200(), &opts());
    let c = u64s(&r.buffers[0][..16]);
    assert!(c[0] >= 100, "the first read comes after the block starts: {}", c[0]);
    assert!((396..=404).contains(&(c[1] - c[0])), "{:?}", c);
}

#[test]
fn a_preset_file_may_carry_a_timing_section() {
    let base: serde_json::Value = serde_json::from_str(include_str!("../../gpu/presets/h200.json")).unwrap();
    let mut v = base.clone();
    v["key"] = "myh200".into();
    v["timing"] = serde_json::json!({ "int_lanes": 32, "scheduler": "lrr" });
    let g = TimingGpu::from_json_str(&v.to_string(), "my.json").unwrap();
    assert_eq!(g.timing.int_lanes, 32.0);
    assert_eq!(g.timing.scheduler, SchedulerPolicy::Lrr);
    // Unset fields: derived from the preset (no built-in section for this key).
    assert_eq!(g.timing.dram_fetch_bytes, 64);
    // The built-in H200 values come with its key.
    v["key"] = "h200".into();
    let g = TimingGpu::from_json_str(&v.to_string(), "my.json").unwrap();
    assert_eq!(g.timing.dram_latency, Some(690));
    assert_eq!(g.timing.int_lanes, 32.0);
    // Unknown fields are errors.
    v["timing"] = serde_json::json!({ "warp_lanes": 3 });
    let e = TimingGpu::from_json_str(&v.to_string(), "my.json").unwrap_err().to_string();
    assert!(e.contains("my.json") && e.contains("warp_lanes"), "{e}");
    // Names resolve to the built-in presets.
    for n in ["t4", "A100", "h100", "H200", "mi300x", "cdna3"] {
        TimingGpu::resolve(n).unwrap();
    }
}

/// Counts what an observer sees of a launch.
#[derive(Default, Clone, Debug, PartialEq, Eq)]
struct Seen {
    blocks: Vec<u64>,
    insts: u64,
    mem: u64,
    barriers: u64,
}

impl warpsim_engine::Observer for Seen {
    const WANTS_MEMORY: bool = true;
    fn block_begin(&mut self, block: u64, _warps: u32) {
        self.blocks.push(block);
    }
    fn instruction(&mut self, _: u32, _: u32, _: u64, _: u64) {
        self.insts += 1;
    }
    fn memory(&mut self, _: u32, _: u32, _: warpsim_ir::Space, _: warpsim_engine::MemAccessKind, _: u32, _: &[u64], _: u64) {
        self.mem += 1;
    }
    fn barrier_complete(&mut self, _: u32) {
        self.barriers += 1;
    }
}

#[test]
fn a_user_observer_sees_in_timing_mode_what_it_sees_functionally() {
    use std::collections::HashMap;
    use warpsim_engine::{launch_observed, GlobalMemory, LaunchConfig};
    let src = format!(
        "{HEAD}.visible .entry k(.param .u64 out)
{{
    .reg .b32 %r<4>; .reg .b64 %rd<4>;
    .shared .align 4 .b8 s[1024];
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    shl.b32 %r2, %r1, 2;
    mov.u32 %r3, s;
    add.s32 %r3, %r3, %r2;
    st.shared.u32 [%r3], %r1;
    bar.sync 0;
    ld.shared.u32 %r1, [%r3];
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r1;
    ret;
}}"
    );
    let program = warpsim_ir::compile_module("t.ptx", &src).unwrap();
    let k = program.kernel("k").unwrap();
    let mut mem = GlobalMemory::new();
    let out = mem.alloc("out", 256 * 4, None);
    let params = out.to_le_bytes();
    let merge = |a: &mut Seen, b: Seen| {
        a.blocks.extend(b.blocks);
        a.insts += b.insts;
        a.mem += b.mem;
        a.barriers += b.barriers;
    };
    let cfg = LaunchConfig { grid: [300, 1, 1], block: [256, 1, 1], ..Default::default() };
    let (_, mut functional) = launch_observed(&program, k, &mem, &HashMap::new(), &params, &cfg, &Seen::default, &merge).unwrap();
    let shape = warpsim_timing::LaunchShape { grid: [300, 1, 1], block: [256, 1, 1], dynamic_shared_bytes: 0 };
    let (gpu, opts) = (h200(), TimingOptions::default());
    let globals = HashMap::new();
    let input = warpsim_engine::LaunchInput { program: &program, kernel: k, mem: &mem, globals: &globals, params: &params };
    let launch = warpsim_timing::TimedLaunch { input, shape: &shape, gpu: &gpu, opts: &opts, decode: None };
    let (r, mut timed) = warpsim_timing::simulate_observed(&launch, &Seen::default, &merge);
    let (_, report) = r.unwrap();
    let plain = warpsim_timing::simulate(&program, k, &mem, &HashMap::new(), &params, &shape, &gpu, &opts).unwrap().1;
    assert_eq!(report.cycles, plain.cycles, "an observer does not change the timing");
    functional.blocks.sort_unstable();
    timed.blocks.sort_unstable();
    assert_eq!(timed, functional);
    assert_eq!((timed.blocks.len(), timed.barriers), (300, 300));
}

/// A loop of shared-memory traffic and barriers between a global load and a
/// global store, so that SMs spend long stretches in local phases.
const SHARED_LOOP: &str = concat!(
    "
.visible .entry sloop(.param .u64 in, .param .u64 out, .param .u32 iters)
{
\t.reg .pred %p<2>;
\t.reg .f32 %f<4>;
\t.reg .b32 %r<12>;
\t.reg .b64 %rd<8>;
\t.shared .align 4 .b8 s[1024];
",
    in_out_prologue!(),
    "\tld.param.u32 %r9, [iters];
\tmul.wide.u32 %rd3, %r4, 4;
\tadd.s64 %rd4, %rd1, %rd3;
\tld.global.f32 %f1, [%rd4];
\tshl.b32 %r5, %r1, 2;
\tmov.u32 %r6, s;
\tadd.s32 %r6, %r6, %r5;
\txor.b32 %r7, %r5, 4;
\tmov.u32 %r8, s;
\tadd.s32 %r8, %r8, %r7;
\tmov.u32 %r10, 0;
$L:
\tst.shared.f32 [%r6], %f1;
\tbar.sync 0;
\tld.shared.f32 %f2, [%r8];
\tfma.rn.f32 %f1, %f2, 0f3F000000, %f1;
\tbar.sync 0;
\tadd.s32 %r10, %r10, 1;
\tsetp.lt.u32 %p1, %r10, %r9;
\t@%p1 bra $L;
\tadd.s64 %rd5, %rd2, %rd3;
\tst.global.f32 [%rd5], %f1;
\tret;
}
"
);

/// Blocks race on global memory: after `n` FMAs and a barrier, each stores
/// its own values into the same 128 words, waits at a fence and a barrier,
/// then reads a word another warp stored (as some block left it) into its
/// own row of `seen`. Local phases run the regions with the stores; the
/// loads see them in the one-thread order only when the writes are deferred.
fn racing_stores_kernel(n: usize) -> String {
    let mut s = format!(
        "{HEAD}.visible .entry race(.param .u64 out, .param .u64 seen)\n{{\n\t.reg .f32 %f<8>;\n\t.reg .b64 %rd<10>;\n\t.reg .b32 %r<8>;\n"
    );
    s += "\tld.param.u64 %rd1, [out];\n\tcvta.to.global.u64 %rd1, %rd1;\n\tld.param.u64 %rd4, [seen];\n\tcvta.to.global.u64 %rd4, %rd4;\n";
    s += "\tmov.u32 %r1, %tid.x;\n\tmov.u32 %r2, %ctaid.x;\n\tcvt.rn.f32.u32 %f1, %r1;\n\tmad.lo.s32 %r3, %r2, 1000, %r1;\n";
    let fmas = |s: &mut String| (0..n).for_each(|_| *s += "\tfma.rn.f32 %f1, %f1, 0f3F800347, 0f3F000000;\n");
    fmas(&mut s);
    s += "\tbar.sync 0;\n\tmul.wide.u32 %rd2, %r1, 4;\n\tadd.s64 %rd3, %rd1, %rd2;\n\tst.global.u32 [%rd3], %r3;\n";
    fmas(&mut s);
    s += "\tst.global.f32 [%rd3+512], %f1;\n\tmembar.gl;\n";
    fmas(&mut s);
    s += "\tbar.sync 0;\n\tadd.s32 %r4, %r1, 37;\n\tand.b32 %r4, %r4, 127;\n\tmul.wide.u32 %rd5, %r4, 4;\n\tadd.s64 %rd6, %rd1, %rd5;\n\tld.global.u32 %r5, [%rd6];\n";
    s += "\tmad.lo.s32 %r6, %r2, 128, %r1;\n\tmul.wide.u32 %rd7, %r6, 4;\n\tadd.s64 %rd8, %rd4, %rd7;\n\tst.global.u32 [%rd8], %r5;\n\tret;\n}\n";
    s
}

/// Block b stores b + 1 into word b, then after `n` FMAs and a barrier
/// reads word b + 1, which the next block (placed on the next SM) stores at
/// about the same cycle: whether it sees it depends on the SMs' order in
/// the quantum, which deferred writes must keep.
fn neighbour_kernel(n: usize) -> String {
    let mut s = format!(
        "{HEAD}.visible .entry next(.param .u64 out, .param .u64 seen)\n{{\n\t.reg .f32 %f<8>;\n\t.reg .b64 %rd<10>;\n\t.reg .b32 %r<8>;\n"
    );
    s += "\tld.param.u64 %rd1, [out];\n\tcvta.to.global.u64 %rd1, %rd1;\n\tld.param.u64 %rd4, [seen];\n\tcvta.to.global.u64 %rd4, %rd4;\n";
    s += "\tmov.u32 %r1, %tid.x;\n\tmov.u32 %r2, %ctaid.x;\n\tcvt.rn.f32.u32 %f1, %r1;\n\tadd.s32 %r3, %r2, 1;\n";
    s += "\tbar.sync 0;\n\tmul.wide.u32 %rd2, %r2, 4;\n\tadd.s64 %rd3, %rd1, %rd2;\n\tst.global.u32 [%rd3], %r3;\n";
    (0..n).for_each(|_| s += "\tfma.rn.f32 %f1, %f1, 0f3F800347, 0f3F000000;\n");
    s += "\tbar.sync 0;\n\tld.global.u32 %r5, [%rd3+4];\n\tcvt.rn.f32.u32 %f2, %r5;\n\tadd.f32 %f1, %f1, %f2;\n";
    s += "\tmad.lo.s32 %r6, %r2, 128, %r1;\n\tmul.wide.u32 %rd7, %r6, 4;\n\tadd.s64 %rd8, %rd4, %rd7;\n\tst.global.f32 [%rd8], %f1;\n\tret;\n}\n";
    s
}

/// Blocks of two warps whose lengths differ by block (1 to 11 times eight
/// loop trips, then a barrier, then a tail for the second warp only):
/// blocks drain at scattered cycles, several in one quantum on one SM.
const UNEVEN: &str = ".visible .entry uneven(.param .u64 out)
{
	.reg .f32 %f<4>;
	.reg .b64 %rd<4>;
	.reg .b32 %r<8>;
	.reg .pred %p<3>;
	ld.param.u64 %rd1, [out];
	cvta.to.global.u64 %rd1, %rd1;
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, %ctaid.x;
	cvt.rn.f32.u32 %f1, %r1;
	mul.lo.u32 %r3, %r2, 7;
	rem.u32 %r3, %r3, 11;
	add.u32 %r3, %r3, 1;
	shl.b32 %r3, %r3, 3;
LOOP:
	fma.rn.f32 %f1, %f1, 0f3F800347, 0f3F000000;
	sub.u32 %r3, %r3, 1;
	setp.ne.u32 %p1, %r3, 0;
	@%p1 bra LOOP;
	bar.sync 0;
	setp.lt.u32 %p2, %r1, 32;
	@%p2 bra DONE;
	mov.u32 %r4, 40;
TAIL:
	fma.rn.f32 %f1, %f1, 0f3F800347, 0f3F000000;
	sub.u32 %r4, %r4, 1;
	setp.ne.u32 %p1, %r4, 0;
	@%p1 bra TAIL;
DONE:
	mad.lo.s32 %r5, %r2, 64, %r1;
	mul.wide.u32 %rd2, %r5, 4;
	add.s64 %rd3, %rd1, %rd2;
	st.global.f32 [%rd3], %f1;
	ret;
}
";

/// A launch of a test, run with the options given.
type Case<'c> = Box<dyn Fn(&TimingOptions) -> Ran + Sync + 'c>;

#[test]
fn local_phases_on_any_thread_count_give_the_in_order_report_and_outputs() {
    let on = |threads: usize, o: &TimingOptions, f: &(dyn Fn(&TimingOptions) -> Ran + Sync)| {
        rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(|| f(o))
    };
    let fmas = fma_kernel(4, 96);
    let long = fma_kernel(4, 1024);
    let sloop = format!("{HEAD}{SHARED_LOOP}");
    let race = racing_stores_kernel(40);
    let next = neighbour_kernel(8);
    let uneven = format!("{HEAD}{UNEVEN}");
    // Only every sixteenth block stores: the others drain inside local
    // phases that run ahead, and keep their successors' slots.
    let quiet = format!(
        "{HEAD}{}",
        UNEVEN.replace(".reg .pred %p<3>;", ".reg .pred %p<4>;").replace(
            "\tst.global.f32 [%rd3], %f1;",
            "\trem.u32 %r6, %r2, 16;\n\tsetp.eq.u32 %p3, %r6, 0;\n\t@%p3 st.global.f32 [%rd3], %f1;"
        )
    );
    let dense_loads = format!("{HEAD}{}", LOADS.replace("%r4, 128;", "%r4, 4;"));
    let input: Vec<u8> = (0..600u32 * 128).flat_map(|i| (i as f32 * 0.25).to_le_bytes()).collect();
    let cases: Vec<Case> = vec![
        // Many short blocks per SM: blocks drain and refill inside quanta.
        Box::new(|o| run(&fmas, "fmas", 700, 128, &[vec![0; 128 * 4]], &[], &h200(), o)),
        // More blocks than slots, long enough that local phases reach
        // drains: refills while blocks are left, then a tail in which
        // drained blocks free their slots in local phases.
        Box::new(|o| run(&long, "fmas", 4500, 128, &[vec![0; 128 * 4]], &[], &h200(), o)),
        Box::new(|o| {
            run(&format!("{HEAD}{LOADS}"), "loads", 300, 256, &[vec![0; 300 * 256 * 128], vec![0; 300 * 256 * 4]], &[], &h200(), o)
        }),
        Box::new(|o| run(&sloop, "sloop", 600, 128, &[input.clone(), vec![0; 600 * 128 * 4]], &[40], &h200(), o)),
        // A block reads what the block on the next SM stored a few cycles before.
        Box::new(|o| run(&next, "next", 264, 128, &[vec![0; 265 * 4], vec![0; 264 * 128 * 4]], &[], &h200(), o)),
        // Blocks that drain at scattered cycles: local phases keep their
        // slots for the pass to start the next blocks in, then the tail.
        Box::new(|o| run(&uneven, "uneven", 6000, 64, &[vec![0; 6000 * 64 * 4]], &[], &h200(), o)),
        // Successors started at the pass's turn in the quantum their
        // predecessors drained in, not at the SM's next turn.
        Box::new(|o| run(&quiet, "uneven", 6000, 64, &[vec![0; 6000 * 64 * 4]], &[], &h200(), o)),
        // Many short blocks that wait on global loads: a local phase that
        // kept slots must not skip past the cycle the next block may issue.
        Box::new(|o| run(&dense_loads, "loads", 4000, 128, &[vec![0; 4000 * 128 * 4], vec![0; 4000 * 128 * 4]], &[], &h200(), o)),
        // Blocks racing on global memory through stores that local phases defer.
        Box::new(|o| run(&race, "race", 3000, 128, &[vec![0; 256 * 4], vec![0; 3000 * 128 * 4]], &[], &h200(), o)),
    ];
    for (i, case) in cases.iter().enumerate() {
        // The reference: every SM quantum by quantum in order, no local phases.
        let in_order = on(1, &TimingOptions { local_phases: false, ..opts() }, case);
        for threads in [1, 2, 3] {
            let many = on(threads, &opts(), case);
            assert_eq!(format!("{:?}", many.report), format!("{:?}", in_order.report), "case {i}, {threads} threads: report");
            assert_eq!(many.buffers, in_order.buffers, "case {i}, {threads} threads: outputs");
        }
    }
}

/// Block `bad` of 2,000 writes past its shared array after a stretch of
/// FMAs: a fault inside a local phase (block 0: in the first wave, block
/// 1999: in the tail).
fn shared_fault_kernel(bad: u32) -> String {
    let mut s = format!(
        "{HEAD}.visible .entry bad(.param .u64 out)\n{{\n\t.reg .f32 %f<4>;\n\t.reg .b32 %r<8>;\n\t.reg .pred %p<2>;\n\t.shared .align 4 .b32 buf[128];\n"
    );
    s += "\tmov.u32 %r1, %tid.x;\n\tmov.u32 %r2, %ctaid.x;\n\tcvt.rn.f32.u32 %f1, %r1;\n";
    (0..200).for_each(|_| s += "\tfma.rn.f32 %f1, %f1, 0f3F800347, 0f3F000000;\n");
    s += &format!("\tshl.b32 %r3, %r1, 2;\n\tsetp.eq.u32 %p1, %r2, {bad};\n\t@%p1 add.u32 %r3, %r3, 65536;\n");
    s += "\tmov.u32 %r4, buf;\n\tadd.u32 %r5, %r4, %r3;\n\tst.shared.f32 [%r5], %f1;\n\tret;\n}\n";
    s
}

#[test]
fn local_phases_on_any_thread_count_report_the_in_order_fault() {
    use std::collections::HashMap;
    use warpsim_engine::GlobalMemory;
    use warpsim_timing::{simulate, LaunchShape};
    for bad in [0, 437, 1999] {
        let src = shared_fault_kernel(bad);
        let program = warpsim_ir::compile_module("test.ptx", &src).unwrap_or_else(|e| panic!("{e}"));
        let k = program.kernel("bad").unwrap();
        let fault = |threads: usize, o: &TimingOptions| {
            rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(|| {
                let mut mem = GlobalMemory::new();
                let base = mem.alloc("out", 64, None);
                let shape = LaunchShape { grid: [2000, 1, 1], block: [128, 1, 1], dynamic_shared_bytes: 0 };
                match simulate(&program, k, &mem, &HashMap::new(), &base.to_le_bytes(), &shape, &h200(), o) {
                    Ok(_) => panic!("block {bad} writes past its shared array, yet the launch ran"),
                    Err(e) => e.to_string(),
                }
            })
        };
        // The reference: every SM in order, no local phases.
        let one = fault(1, &TimingOptions { local_phases: false, ..opts() });
        assert!(one.contains(&format!("in block ({bad},0,0)")), "{one}");
        for threads in [1, 2, 3] {
            assert_eq!(fault(threads, &opts()), one, "block {bad}, {threads} threads");
        }
    }
}
