//! Small hand-written PTX kernels run through whole launches: warps and
//! partial warps, divergence and reconvergence, barriers, faults, budgets.

use super::*;
use crate::exec::testkit::{per_thread, run_src, run_src_edited, HEAD};
use crate::fault::FaultKind;
use proptest::strategy::Strategy as _;

#[test]
fn divergent_if_else_reconverges() {
    // out[t] = (t odd) ? t*3 : t+100; then every lane adds 1 after reconvergence.
    let src = per_thread(
        "",
        "    and.b32 %r2, %r1, 1;
    setp.eq.s32 %p1, %r2, 0;
    @%p1 bra EVEN;
    mul.lo.s32 %r3, %r1, 3;
    bra.uni JOIN;
EVEN:
    add.s32 %r3, %r1, 100;
JOIN:
    add.s32 %r3, %r3, 1;",
        "%r3",
    );
    let r = run_src(&src, 40, &[160], &[]);
    let stats = r.result.as_ref().unwrap();
    let out = r.u32s(0, 40);
    for t in 0..40u32 {
        let want = if t % 2 == 1 { t * 3 + 1 } else { t + 101 };
        assert_eq!(out[t as usize], want, "thread {t}");
    }
    assert_eq!(stats.warps, 2);
    // The second warp has 8 lanes: every instruction it issues counts 8 or fewer threads.
    assert!(stats.threads_per_instruction() < 32.0);
}

#[test]
fn barrier_and_shared_memory_reverse() {
    let src = per_thread(
        "",
        "    .shared .align 4 .b8 s[256];
    shl.b32 %r2, %r1, 2;
    mov.u32 %r3, s;
    add.s32 %r4, %r3, %r2;
    st.shared.u32 [%r4], %r1;
    bar.sync 0;
    sub.s32 %r5, 63, %r1;
    shl.b32 %r5, %r5, 2;
    add.s32 %r5, %r3, %r5;
    ld.shared.u32 %r6, [%r5];",
        "%r6",
    );
    let r = run_src(&src, 64, &[256], &[]);
    r.result.as_ref().unwrap();
    let out = r.u32s(0, 64);
    for (t, &v) in out.iter().enumerate() {
        assert_eq!(v, 63 - t as u32);
    }
}

#[test]
fn one_past_the_end_store_faults_with_its_place() {
    let src = format!(
        "{HEAD}.visible .entry k(.param .u64 out)
{{
    .reg .b32 %r<4>; .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    add.s32 %r2, %r1, 1;
    mul.wide.u32 %rd2, %r2, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r1;
    ret;
}}"
    );
    let r = run_src(&src, 32, &[128], &[]);
    let Err(LaunchError::Fault(f)) = r.result else { panic!("expected a fault") };
    assert!(matches!(f.kind, FaultKind::OutOfBounds { size: 4, .. }), "{f}");
    assert_eq!(f.thread, Some([31, 0, 0]));
    assert_eq!(f.lane, Some(31));
    assert_eq!(f.ptx_line, 12);
    assert_eq!(f.address(), Some(r.bufs[0] + 128));
    let msg = f.to_string();
    assert!(msg.contains("out-of-bounds global store of 4 bytes"), "{msg}");
    assert!(msg.contains("thread (31,0,0)"), "{msg}");
}

#[test]
fn runaway_loop_hits_the_budget() {
    let src = format!("{HEAD}.visible .entry k()\n{{\nL: bra.uni L;\n}}");
    let prog = warpsim_ir::compile_kernel("t.ptx", &src, "k").unwrap();
    let mem = GlobalMemory::new();
    let cfg = LaunchConfig { max_warp_instructions_per_block: 10_000, ..Default::default() };
    let e = launch_no_params(&prog, &mem, &cfg).unwrap_err();
    assert!(e.to_string().contains("instruction budget exceeded"), "{e}");
}

/// The budget counts every warp instruction: a block that runs exactly the
/// budget finishes, one instruction less faults, in straight-line code, a
/// loop and a divergent branch (the run loop settles its counters per run of
/// straight-line instructions, not per instruction).
#[test]
fn the_budget_is_exact_to_the_instruction() {
    let src = format!(
        "{HEAD}.visible .entry k()\n{{\n.reg .b32 %r<4>;\n.reg .pred %p<3>;\n\
         mov.u32 %r1, %tid.x;\nmov.u32 %r2, 0;\nand.b32 %r3, %r1, 1;\nsetp.eq.u32 %p2, %r3, 0;\n\
         @%p2 bra EVEN;\nadd.u32 %r2, %r2, 7;\nEVEN:\n\
         L: add.u32 %r2, %r2, 1;\nsetp.lt.u32 %p1, %r2, 9;\n@%p1 bra L;\nret;\n}}"
    );
    let prog = warpsim_ir::compile_kernel("t.ptx", &src, "k").unwrap();
    let mem = GlobalMemory::new();
    let run = |budget: u64| {
        let cfg = LaunchConfig { block: [64, 1, 1], max_warp_instructions_per_block: budget, ..Default::default() };
        launch_no_params(&prog, &mem, &cfg)
    };
    let used = run(u64::MAX).unwrap().warp_instructions;
    assert!(used > 40, "{used}");
    assert_eq!(run(used).unwrap().warp_instructions, used);
    for short in [used - 1, used / 2, 1] {
        let e = run(short).unwrap_err();
        assert!(e.to_string().contains("instruction budget exceeded"), "budget {short}: {e}");
    }
}

#[test]
fn a_stop_request_ends_a_runaway_launch() {
    let src = format!("{HEAD}.visible .entry k()\n{{\nL: bra.uni L;\n}}");
    let prog = warpsim_ir::compile_kernel("t.ptx", &src, "k").unwrap();
    let mem = GlobalMemory::new();
    let progress = Arc::new(Progress::default());
    let cfg = LaunchConfig {
        grid: [64, 1, 1],
        max_warp_instructions_per_block: u64::MAX,
        progress: Some(progress.clone()),
        ..Default::default()
    };
    let stopper = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(50));
        progress.stop.store(true, Ordering::Relaxed);
    });
    let e = launch_no_params(&prog, &mem, &cfg).unwrap_err();
    stopper.join().unwrap();
    assert!(matches!(e, LaunchError::Stopped), "{e}");
}

#[test]
fn barrier_reached_by_part_of_the_block_is_a_deadlock() {
    let src = format!(
        "{HEAD}.visible .entry k()
{{
    .reg .pred %p<2>; .reg .b32 %r<2>;
    mov.u32 %r1, %tid.x;
    setp.ge.u32 %p1, %r1, 48;
    @%p1 bra SKIP;
    bar.sync 0;
SKIP:
    ret;
}}"
    );
    let prog = warpsim_ir::compile_kernel("t.ptx", &src, "k").unwrap();
    let mem = GlobalMemory::new();
    let cfg = LaunchConfig { block: [64, 1, 1], ..Default::default() };
    let e = launch_no_params(&prog, &mem, &cfg).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("barrier can never complete"), "{msg}");
    assert!(msg.contains("48 arrived"), "{msg}");
}

/// Launches kernel `k` of `prog`, which takes no parameters and names no globals.
fn launch_no_params(prog: &Program, mem: &GlobalMemory, cfg: &LaunchConfig) -> Result<LaunchStats, LaunchError> {
    let globals = HashMap::new();
    launch(&LaunchArgs {
        input: LaunchInput { program: prog, kernel: prog.kernel("k").unwrap(), mem, globals: &globals, params: &[] },
        cfg,
    })
}

/// The engine runs a kernel whose registers share columns where their
/// values are never live together (`warpsim_ir::pack`): a value live across
/// a divergent branch, temporaries on either side of it, a guarded write
/// (which does not end the old value's life), a register read before any
/// write on some paths, a loop, 64-bit registers and a shuffle all give what
/// the unpacked kernel gives, lane for lane, in full and partial warps.
#[test]
fn packed_registers_compute_what_the_ptx_numbering_computes() {
    let src = format!(
        "{HEAD}.visible .entry k(.param .u64 p0)
{{
    .reg .pred %p<8>; .reg .b32 %r<40>; .reg .b64 %rd<16>;
    ld.param.u64 %rd1, [p0];
    mov.u32 %r1, %tid.x;
    and.b32 %r2, %r1, 1;
    setp.eq.u32 %p1, %r2, 0;
    setp.lt.u32 %p2, %r1, 20;
    mul.lo.u32 %r3, %r1, 7;
    @%p2 mov.u32 %r30, 9;
    cvt.u64.u32 %rd2, %r1;
    mul.lo.u64 %rd3, %rd2, 1000003;
    @%p1 bra EVEN;
    add.u32 %r4, %r1, 100;
    mul.lo.u32 %r5, %r4, 3;
    xor.b32 %r6, %r5, %r4;
    add.u32 %r7, %r6, 1;
    mul.wide.u32 %rd4, %r7, %r7;
    cvt.u32.u64 %r8, %rd4;
    mov.u32 %r20, %r8;
    bra.uni JOIN;
EVEN:
    add.u32 %r9, %r1, 200;
    shl.b32 %r10, %r9, 2;
    or.b32 %r11, %r10, %r9;
    @%p2 add.u32 %r11, %r11, 5;
    mul.wide.u32 %rd5, %r11, 3;
    cvt.u32.u64 %r12, %rd5;
    mov.u32 %r20, %r12;
JOIN:
    rem.u32 %r13, %r1, 5;
    mov.u32 %r14, 0;
    mov.u32 %r15, 0;
LOOP:
    setp.ge.u32 %p3, %r15, %r13;
    @%p3 bra DONE;
    mul.lo.u32 %r16, %r15, %r15;
    add.u32 %r14, %r14, %r16;
    add.u32 %r15, %r15, 1;
    bra.uni LOOP;
DONE:
    add.u32 %r21, %r20, %r3;
    add.u32 %r22, %r21, %r14;
    add.u32 %r23, %r22, %r30;
    shfl.sync.bfly.b32 %r24, %r23, 1, 31, -1;
    add.u32 %r25, %r24, %r23;
    cvt.u64.u32 %rd6, %r25;
    add.u64 %rd7, %rd6, %rd3;
    shl.b64 %rd8, %rd2, 3;
    add.s64 %rd9, %rd1, %rd8;
    st.global.u64 [%rd9], %rd7;
    ret;
}}
"
    );
    for threads in [64, 45] {
        let packed = run_src(&src, threads, &[64 * 8], &[]);
        let plain = run_src_edited(&src, threads, &[64 * 8], &[], |k| {
            let p = k.packed.take().expect("the kernel packs");
            assert!(p.n32 < k.n32 && p.n64 < k.n64, "r32 {} -> {}, r64 {} -> {}", k.n32, p.n32, k.n64, p.n64);
        });
        packed.result.as_ref().unwrap();
        plain.result.as_ref().unwrap();
        assert_eq!(packed.u32s(0, 128), plain.u32s(0, 128), "{threads} threads");
    }
}

/// One statement of a generated kernel body (see `generated_kernels_...`).
#[derive(Clone, Debug)]
enum Stmt {
    /// `op %r<d>, %r<a>, %r<b>` (an immediate `b` when `imm`), guarded by `%p1` when `guarded`.
    Alu { op: u8, d: u8, a: u8, b: u8, imm: bool, guarded: bool },
    /// Lanes whose `%r<a>` is below `limit` skip `body` (a divergent forward branch).
    Skip { a: u8, limit: u32, body: Vec<Stmt> },
    /// `body` runs `%tid.x % 3` times.
    Loop { body: Vec<Stmt> },
    /// `%r<d>` = lane `^ 1`'s `%r<a>` (only outside divergent code).
    Shfl { d: u8, a: u8 },
}

const GEN_REGS: u8 = 12;

fn stmt_strategy() -> impl proptest::strategy::Strategy<Value = Stmt> {
    use proptest::prelude::*;
    let alu = (0u8..5, 1..GEN_REGS, 1..GEN_REGS, 1..GEN_REGS, any::<bool>(), proptest::bool::weighted(0.2))
        .prop_map(|(op, d, a, b, imm, guarded)| Stmt::Alu { op, d, a, b, imm, guarded });
    alu.prop_recursive(3, 48, 6, |inner| {
        prop_oneof![
            (1..GEN_REGS, 0u32..64, proptest::collection::vec(inner.clone(), 1..6)).prop_map(|(a, limit, body)| Stmt::Skip {
                a,
                limit,
                body
            }),
            proptest::collection::vec(inner, 1..5).prop_map(|body| Stmt::Loop { body }),
        ]
    })
}

/// PTX for `stmts`; `depth` > 0 inside divergent code, where shuffles are left out.
fn emit(stmts: &[Stmt], depth: usize, labels: &mut usize, out: &mut String) {
    use std::fmt::Write;
    for s in stmts {
        match s {
            Stmt::Alu { op, d, a, b, imm, guarded } => {
                let g = if *guarded { "@%p1 " } else { "" };
                let name = ["add.u32", "mul.lo.u32", "xor.b32", "sub.u32", "shr.u32"][*op as usize % 5];
                let b = if *imm { format!("{}", *b as u32 * 7 + 1) } else { format!("%r{b}") };
                let _ = writeln!(out, "    {g}{name} %r{d}, %r{a}, {b};");
            }
            Stmt::Skip { a, limit, body } => {
                *labels += 1;
                let l = *labels;
                let _ = writeln!(out, "    and.b32 %r20, %r{a}, 63;\n    setp.lt.u32 %p2, %r20, {limit};\n    @%p2 bra SKIP{l};");
                emit(body, depth + 1, labels, out);
                let _ = writeln!(out, "SKIP{l}:");
            }
            Stmt::Loop { body } => {
                *labels += 1;
                let l = *labels;
                let c = 20 + l;
                let _ = writeln!(out, "    mov.u32 %r{c}, 0;\nLOOP{l}:\n    setp.ge.u32 %p3, %r{c}, %r19;\n    @%p3 bra END{l};");
                emit(body, depth + 1, labels, out);
                let _ = writeln!(out, "    add.u32 %r{c}, %r{c}, 1;\n    bra.uni LOOP{l};\nEND{l}:");
            }
            Stmt::Shfl { d, a } if depth == 0 => {
                let _ = writeln!(out, "    activemask.b32 %r16;\n    shfl.sync.bfly.b32 %r{d}, %r{a}, 1, 31, %r16;");
            }
            Stmt::Shfl { .. } => {}
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// Random kernels of guarded arithmetic, divergent skips, loops of
    /// per-lane trip counts and shuffles, with registers read before any
    /// write: the packed kernel stores what the PTX numbering stores, in a
    /// full and a partial warp.
    #[test]
    fn generated_kernels_compute_the_same_packed_and_not(
        body in proptest::collection::vec(
            proptest::prop_oneof![4 => stmt_strategy(), 1 => (1..GEN_REGS, 1..GEN_REGS).prop_map(|(d, a)| Stmt::Shfl { d, a })],
            1..24,
        ),
        outs in proptest::collection::vec(1..GEN_REGS, 1..4),
    ) {
        let mut text = String::new();
        emit(&body, 0, &mut 0, &mut text);
        let stores: String = outs
            .iter()
            .enumerate()
            .map(|(i, r)| format!("    st.global.u32 [%rd3+{}], %r{r};\n", i * 4))
            .collect();
        let src = format!(
            "{HEAD}.visible .entry k(.param .u64 p0)
{{
    .reg .pred %p<4>; .reg .b32 %r<80>; .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [p0];
    mov.u32 %r1, %tid.x;
    mov.u32 %r17, %r1;
    mul.lo.u32 %r2, %r1, 2654435761;
    and.b32 %r18, %r1, 5;
    setp.ne.u32 %p1, %r18, 0;
    rem.u32 %r19, %r1, 3;
{text}    mul.wide.u32 %rd2, %r17, 16;
    add.s64 %rd3, %rd1, %rd2;
{stores}    ret;
}}
"
        );
        for threads in [64u32, 45] {
            let packed = run_src(&src, threads, &[64 * 16], &[]);
            let plain = run_src_edited(&src, threads, &[64 * 16], &[], |k| assert!(k.packed.take().is_some(), "the kernel packs"));
            proptest::prop_assert!(packed.result.is_ok() && plain.result.is_ok(), "{:?} {:?}", packed.result, plain.result);
            proptest::prop_assert_eq!(packed.u32s(0, 256), plain.u32s(0, 256), "{} threads\n{}", threads, src);
        }
    }
}
