//! Hand-written PTX for each happens-before edge and each checker, small
//! enough to read: the edge present is silent, the edge missing is found.

use warpsim_check::{check_launch, CheckOptions, DiagKind, Diagnostic, Site};
use warpsim_engine::{GlobalMemory, LaunchArgs, LaunchConfig, LaunchInput};

const HEADER: &str = ".version 8.0\n.target sm_90\n.address_size 64\n";

/// Runs `body` as kernel `k(.param .u64 buf)` over `block` threads with a
/// zeroed buffer of 4 KiB; returns what the checkers found.
fn check(body: &str, block: u32, lockstep: bool) -> Vec<Diagnostic> {
    let src = format!("{HEADER}.visible .entry k(.param .u64 buf)\n{{\n.shared .align 4 .b8 s[1024];\n.reg .pred %p<8>; .reg .b32 %r<32>; .reg .b64 %rd<16>;\n{body}\n}}\n");
    let prog = warpsim_ir::compile_kernel("t.ptx", &src, "k").unwrap_or_else(|e| panic!("{e}\n{src}"));
    let k = prog.kernel("k").unwrap();
    let mut mem = GlobalMemory::new();
    let globals = warpsim_engine::alloc_module_globals(&prog, &mut mem);
    let buf = mem.alloc("buf", 4096, None);
    let cfg = LaunchConfig { block: [block, 1, 1], ..Default::default() };
    let params = buf.to_le_bytes();
    let args = LaunchArgs { input: LaunchInput { program: &prog, kernel: k, mem: &mem, globals: &globals, params: &params }, cfg: &cfg };
    check_launch(&args, &CheckOptions { lockstep }).diagnostics
}

fn kinds(d: &[Diagnostic]) -> Vec<DiagKind> {
    let mut k: Vec<_> = d.iter().map(|x| x.kind).collect();
    k.sort();
    k.dedup();
    k
}

/// Every lane stores its id to s[lane], then (after `sync`) reads s[lane ^ 1].
fn exchange(sync: &str) -> String {
    format!(
        "mov.u32 %r1, %tid.x; shl.b32 %r2, %r1, 2; mov.u32 %r3, s; add.u32 %r4, %r3, %r2;
         st.shared.u32 [%r4], %r1;
         {sync}
         xor.b32 %r5, %r1, 1; shl.b32 %r6, %r5, 2; add.u32 %r7, %r3, %r6;
         ld.shared.u32 %r8, [%r7];
         ld.param.u64 %rd1, [buf]; mul.wide.u32 %rd2, %r1, 4; add.s64 %rd3, %rd1, %rd2;
         st.global.u32 [%rd3], %r8;
         ret;"
    )
}

#[test]
fn lanes_of_a_warp_need_a_warp_barrier() {
    let d = check(&exchange(""), 32, false);
    assert_eq!(kinds(&d), [DiagKind::Race], "{d:#?}");
    assert_eq!(d[0].space, Some("shared"));
    assert!(check(&exchange("bar.warp.sync -1;"), 32, false).is_empty());
    assert!(check(&exchange(""), 32, true).is_empty(), "lockstep orders one warp's instructions");
    // Between warps, a warp barrier is not enough; a block barrier is.
    let shifted = exchange("").replace("xor.b32 %r5, %r1, 1;", "xor.b32 %r5, %r1, 32;");
    let d = check(&shifted.replace("st.shared.u32 [%r4], %r1;", "st.shared.u32 [%r4], %r1; bar.warp.sync -1;"), 64, false);
    assert!(kinds(&d).contains(&DiagKind::Race), "{d:#?}"); // (and warp 1's slots are read before it writes them)
    assert!(check(&shifted.replace("st.shared.u32 [%r4], %r1;", "st.shared.u32 [%r4], %r1; bar.sync 0;"), 64, true).is_empty());
    assert!(check(&shifted.replace("st.shared.u32 [%r4], %r1;", "st.shared.u32 [%r4], %r1; bar.sync 0;"), 64, false).is_empty());
}

#[test]
fn a_warp_barrier_orders_only_the_lanes_of_its_mask() {
    // Lanes 0-15 and 16-31 each sync among themselves; lane 15 reads lane 14 (ordered)...
    let ok = exchange("bar.warp.sync %r9;")
        .replace("mov.u32 %r1, %tid.x;", "mov.u32 %r1, %tid.x; setp.lt.u32 %p1, %r1, 16; selp.b32 %r9, 0xffff, 0xffff0000, %p1;");
    // ...which takes both halves executing separately: diverge first.
    let ok = ok.replace("bar.warp.sync %r9;", "@%p1 bra A; bar.warp.sync %r9; bra.uni B; A: bar.warp.sync %r9; B:");
    let d = check(&ok, 32, false);
    assert!(d.is_empty(), "{d:#?}");
    // Reading across the halves is not ordered by either barrier.
    let bad = ok.replace("xor.b32 %r5, %r1, 1;", "xor.b32 %r5, %r1, 16;");
    assert_eq!(kinds(&check(&bad, 32, false)), [DiagKind::Race]);
}

#[test]
fn atomics_do_not_race_and_fences_release() {
    // Every thread adds to one word: no race. A plain store to it races.
    let body = "ld.param.u64 %rd1, [buf]; atom.global.add.u32 %r1, [%rd1], 1; ret;";
    assert!(check(body, 64, false).is_empty());
    let body = "ld.param.u64 %rd1, [buf]; mov.u32 %r2, %tid.x; setp.eq.u32 %p1, %r2, 40; @%p1 st.global.u32 [%rd1], 7; atom.global.add.u32 %r1, [%rd1], 1; ret;";
    assert_eq!(kinds(&check(body, 64, false)), [DiagKind::Race]);
    // Thread 0 writes data, fences, sets a flag; thread 32 (another warp),
    // later in the run, takes the flag with an atomic and reads the data.
    let handoff = |fence: &str| {
        format!(
            "ld.param.u64 %rd1, [buf]; mov.u32 %r1, %tid.x; setp.ne.u32 %p1, %r1, 0; @%p1 bra W;
             st.global.u32 [%rd1+4], 42; {fence} atom.global.exch.b32 %r2, [%rd1], 1; bra.uni E;
             W: setp.ne.u32 %p2, %r1, 32; @%p2 bra E;
             L: atom.global.add.u32 %r3, [%rd1], 0; setp.eq.u32 %p3, %r3, 0; @%p3 bra L;
             ld.global.u32 %r4, [%rd1+4]; st.global.u32 [%rd1+8], %r4;
             E: ret;"
        )
    };
    let d = check(&handoff("fence.acq_rel.gpu;"), 64, false);
    assert!(d.is_empty(), "{d:#?}");
    let d = check(&handoff(""), 64, false);
    assert_eq!(kinds(&d), [DiagKind::Race], "without the fence the data is not released: {d:#?}");
}

#[test]
fn sync_mask_errors() {
    // shfl with a full mask by half a warp.
    let body = "mov.u32 %r1, %tid.x; setp.lt.u32 %p1, %r1, 16; @!%p1 bra E; shfl.sync.idx.b32 %r2, %r1, 0, 31, -1; E: ret;";
    let d = check(body, 32, false);
    assert_eq!(kinds(&d), [DiagKind::SyncMask]);
    assert!(d[0].message.contains("lanes 16-31"), "{}", d[0].message);
    // The same shuffle with the half's own mask is fine.
    assert!(check(&body.replace(", -1;", ", 0xffff;"), 32, false).is_empty());
    // A lane outside its own mask.
    let d = check("bar.warp.sync 0xffff; ret;", 32, false);
    assert_eq!(kinds(&d), [DiagKind::SyncMask]);
    assert!(d[0].message.contains("does not name"), "{}", d[0].message);
    // Two halves converged at one warp barrier, each naming only itself: legal.
    let two = "mov.u32 %r1, %tid.x; setp.lt.u32 %p1, %r1, 16; selp.b32 %r9, 0xffff, 0xffff0000, %p1; bar.warp.sync %r9; ret;";
    assert!(check(two, 32, false).is_empty());
    // One half naming the other, which gives another mask: not.
    let d = check(&two.replace("0xffff0000", "0xffffffff"), 32, false);
    assert_eq!(kinds(&d), [DiagKind::SyncMask]);
    assert!(d[0].message.contains("different member masks"), "{}", d[0].message);
    // vote without .sync: refused on sm_90 from PTX 6.4 on, as ptxas refuses it.
    let src = format!("{HEADER}.visible .entry k()\n{{\n.reg .pred %p<3>;\nvote.any.pred %p2, %p1;\nret;\n}}\n");
    let e = warpsim_ir::compile_kernel("t.ptx", &src, "k").err().map(|e| e.to_string()).unwrap_or_default();
    assert!(e.contains("without `.sync`"), "{e}");
}

#[test]
fn barriers_and_uninitialised_shared_memory() {
    // bar.sync by half of warp 0.
    let d = check("mov.u32 %r1, %tid.x; setp.lt.u32 %p1, %r1, 16; @!%p1 bra E; bar.sync 0; E: ret;", 64, false);
    assert!(kinds(&d).contains(&DiagKind::BarrierDivergence), "{d:#?}");
    // barrier.sync (not aligned) may be reached by lanes one at a time... as long as all do.
    let d = check(
        "mov.u32 %r1, %tid.x; setp.lt.u32 %p1, %r1, 16; @%p1 bra A; barrier.sync 0; bra.uni E; A: barrier.sync 0; E: ret;",
        32,
        false,
    );
    assert!(!kinds(&d).contains(&DiagKind::BarrierDivergence), "{d:#?}");
    // Reading shared memory nobody wrote.
    let d = check("mov.u32 %r3, s; ld.shared.u32 %r1, [%r3+8]; ret;", 32, false);
    assert_eq!(kinds(&d), [DiagKind::Uninitialized]);
    assert_eq!(d[0].count, 32, "one place, counted per lane");
}

#[test]
fn findings_are_grouped_by_line_with_one_paragraph_of_advice() {
    use warpsim_check::{render, render_grouped};
    let d = check(&exchange(""), 64, false);
    let (all, grouped) = (render(&d), render_grouped(&d, false));
    assert!(grouped.contains("race at PTX line 12"), "{grouped}");
    assert_eq!(grouped.matches("data race: Two threads").count(), 1, "{grouped}");
    // Many places on one line: one line, where it was first found, and a count of the rest.
    let many: Vec<_> = (0..10).map(|i| Diagnostic { site: Site { lane: Some(i), ..d[0].site.clone() }, ..d[0].clone() }).collect();
    let g = render_grouped(&many, false);
    assert!(
        g.contains("[10 places, ")
            && g.contains("--verbose lists them]")
            && g.contains(&format!("first at PTX line {}", d[0].site.ptx_line)),
        "{g}"
    );
    assert_eq!(g.matches(&d[0].message).count(), 1, "the message once for the line: {g}");
    assert!(g.lines().count() < render(&many).lines().count() / 2, "{g}");
    assert_eq!(render_grouped(&d, true), all);
    // out[0] += 1 by every thread: atomics, not a barrier.
    let rmw = "ld.param.u64 %rd1, [buf]; ld.global.u32 %r1, [%rd1]; add.u32 %r1, %r1, 1; st.global.u32 [%rd1], %r1; ret;";
    let d = check(rmw, 64, false);
    assert!(render_grouped(&d, false).contains("use an atomic"), "{}", render_grouped(&d, false));
}
