//! Small hand-written PTX kernels run through whole launches: warps and
//! partial warps, divergence and reconvergence, barriers, faults, budgets.

use super::*;
use crate::exec::testkit::{per_thread, run_src, HEAD};
use crate::fault::FaultKind;

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
