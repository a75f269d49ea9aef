//! `warpsim check`: the corpus's bug cases are each reported with the right
//! kind, every other corpus case is silent; kernels of our own
//! (`tests/cuda/check/*.cu`, compiled with clang-19) give the diagnostics
//! their comments promise, and correct warp-synchronous code (`__syncwarp`,
//! atomics, fences, named barriers) gives none; the random schedule shows
//! the lockstep race as a wrong answer.

mod common;
use common::{BUILDS, CLANG};
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, OnceLock};

use warpsim_check::{DiagKind, Diagnostic};
use warpsim_engine::Schedule;
use warpsim_host::corpus::{run_case, CaseStatus};
use warpsim_host::{prepare, Dims, HostError, Kernel, LaunchOptions as RunOptions, Prepared, ProgramCache};
use warpsim_launch::{BufferSpec, Dtype, Init, NamedInit, ParamSpec, Role, ScalarParam, Value};

fn manifest() -> warpsim_launch::Manifest {
    let p = std::env::var_os("WARPSIM_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/cases.json"));
    warpsim_launch::load_manifest(&p).unwrap_or_else(|e| panic!("loading {}: {e}", p.display()))
}

fn checking() -> RunOptions {
    RunOptions { check: true, ..Default::default() }
}

fn kinds(d: &[Diagnostic]) -> Vec<DiagKind> {
    let mut k: Vec<DiagKind> = d.iter().map(|x| x.kind).collect();
    k.sort();
    k.dedup();
    k
}

fn show(d: &[Diagnostic]) -> String {
    d.iter().map(|x| format!("{x}\n")).collect()
}

// ---- the corpus ------------------------------------------------------------------

#[test]
fn corpus_bug_cases_are_reported_with_their_kind() {
    let m = manifest();
    let mut cache = ProgramCache::default();
    let want = [
        ("bug_implicit_warp_sync", DiagKind::Race),
        ("bug_divergent_barrier", DiagKind::BarrierDivergence),
        ("bug_shfl_bad_mask", DiagKind::SyncMask),
        ("bug_oob", DiagKind::OutOfBounds),
    ];
    for (name, kind) in want {
        let case = m.case(name).unwrap_or_else(|| panic!("no case {name}"));
        assert!(case.expect_diagnostic.is_some(), "{name} declares no bug");
        let o = run_case(case, &checking(), &mut cache);
        let d = o.diagnostics.as_deref().expect("diagnostics were asked for");
        assert!(d.iter().any(|x| x.kind == kind), "{name}: want {kind:?}, got:\n{}", show(d));
        for x in d {
            assert!(x.ptx_line() > 0, "{name}: no PTX line: {x}");
            assert!(x.source_line().is_some_and(|s| s.starts_with("kernels.cu:")), "{name}: no CUDA source line: {x}");
        }
    }
}

#[test]
fn corpus_bug_details() {
    let m = manifest();
    let mut cache = ProgramCache::default();
    let run = |cache: &mut ProgramCache, name: &str, opts: &RunOptions| {
        let o = run_case(m.case(name).unwrap(), opts, cache);
        o.diagnostics.unwrap()
    };
    // The implicit warp-synchronous reduction: shared-memory races between lanes
    // of one warp, at kernels.cu:221, with both accesses.
    let d = run(&mut cache, "bug_implicit_warp_sync", &checking());
    assert_eq!(kinds(&d), [DiagKind::Race], "{}", show(&d));
    let r = &d[0];
    assert_eq!(r.space, Some("shared"));
    assert_eq!(r.source_line(), Some("kernels.cu:221"));
    let other = r.other.as_ref().expect("a race names both accesses");
    assert_ne!(other.thread, r.site.thread);
    assert_eq!(other.warp, r.site.warp, "lanes of one warp");
    assert!(d.iter().all(|x| x.count >= 1));
    assert!(d.iter().map(|x| x.count).sum::<u64>() > d.len() as u64, "repeated places are counted, not repeated");
    let j = r.to_json();
    for k in ["kind", "message", "ptx_line", "source_line", "block", "thread", "lane", "count", "other"] {
        assert!(j.get(k).is_some(), "JSON lacks {k}: {j}");
    }
    assert_eq!(j["kind"], "race");
    // Pre-Volta (lockstep) the same code is race-free.
    let lockstep = RunOptions { lockstep: true, ..checking() };
    let d = run(&mut cache, "bug_implicit_warp_sync", &lockstep);
    assert!(d.is_empty(), "lockstep:\n{}", show(&d));

    // The divergent barrier: part of warp 1 reaches it; it can never complete.
    let d = run(&mut cache, "bug_divergent_barrier", &checking());
    assert_eq!(kinds(&d), [DiagKind::BarrierDivergence, DiagKind::Deadlock], "{}", show(&d));
    let b = d.iter().find(|x| x.kind == DiagKind::BarrierDivergence).unwrap();
    assert_eq!(b.site.warp, Some(1));
    assert!(b.message.contains("lanes 0-15") && b.message.contains("lanes 16-31"), "{}", b.message);
    let dl = d.iter().find(|x| x.kind == DiagKind::Deadlock).unwrap();
    assert!(dl.message.contains("arrived") && dl.message.contains("not arrived"), "{}", dl.message);

    // The bad shuffle mask names lanes 16-31, which took the other path.
    let d = run(&mut cache, "bug_shfl_bad_mask", &checking());
    assert_eq!(kinds(&d), [DiagKind::SyncMask], "{}", show(&d));
    assert!(d[0].message.contains("lanes 16-31"), "{}", d[0].message);
    assert_eq!(d[0].source_line(), Some("kernels.cu:235"), "the user's line, not the header's");

    // One past the end: thread 63's store, named with the buffer.
    let d = run(&mut cache, "bug_oob", &checking());
    assert_eq!(kinds(&d), [DiagKind::OutOfBounds], "{}", show(&d));
    assert_eq!(d[0].site.thread, Some([63, 0, 0]));
    assert!(d[0].message.contains("past the end of `out`"), "{}", d[0].message);
}

#[test]
fn corpus_correct_cases_are_silent() {
    let m = manifest();
    let mut cache = ProgramCache::default();
    let mut noisy = Vec::new();
    let mut n = 0;
    for case in m.cases.iter().filter(|c| c.expect_diagnostic.is_none()) {
        let o = run_case(case, &checking(), &mut cache);
        assert_eq!(o.status, CaseStatus::Pass, "{}: {:?} {:?}", o.name, o.error, o.checks);
        let d = o.diagnostics.unwrap();
        if !d.is_empty() {
            noisy.push(format!("{}:\n{}", case.name, show(&d)));
        }
        n += 1;
    }
    assert!(n >= 37, "only {n} correct cases?");
    assert!(noisy.is_empty(), "false positives:\n{}", noisy.join("\n"));
}

/// With `--schedule random`, some seed makes the implicit warp-synchronous
/// reduction give a different sum than the SIMT stack's lockstep order (which
/// is what the H200 happened to compute); correct kernels give the same
/// output under every seed.
#[test]
fn random_schedule_shows_the_lockstep_race_as_a_wrong_answer() {
    let m = manifest();
    let case = m.case("bug_implicit_warp_sync").unwrap();
    let program = ProgramCache::default().get(&case.ptx, &case.kernel).unwrap();
    let output = |schedule: Schedule| -> Vec<u8> {
        let mut p = prepare(&program, &case.params).unwrap();
        let opts = RunOptions { schedule, metrics: false, ..Default::default() };
        p.launch(&Dims::new(case.grid, case.block, case.dynamic_shared_bytes), &opts).unwrap();
        read_buffer(&p, "out")
    };
    let lockstep = output(Schedule::Simt);
    assert_eq!(lockstep, output(Schedule::Simt), "the default schedule is deterministic");
    let differing: Vec<u64> = (0..64).filter(|&seed| output(Schedule::Random { seed }) != lockstep).collect();
    assert!(!differing.is_empty(), "no seed in 0..64 changed the result");
    let seed = differing[0];
    assert_eq!(output(Schedule::Random { seed }), output(Schedule::Random { seed }), "a seed gives the same run");
    eprintln!("seeds giving a different sum: {} of 64 (first: {seed})", differing.len());

    // Race-free kernels do not care about the schedule.
    let mut cache = ProgramCache::default();
    for name in ["block_sum_smem", "warp_sum", "warp_scan", "votes", "div_4way_lanes", "branch_short"] {
        let c = m.case(name).unwrap();
        for seed in [1, 7, 42] {
            let o = run_case(c, &RunOptions { schedule: Schedule::Random { seed }, ..Default::default() }, &mut cache);
            assert_eq!(o.status, CaseStatus::Pass, "{name} seed {seed}: {:?} {:?}", o.error, o.checks);
        }
    }
    // And checking under a random schedule still finds the race and nothing else.
    let o = run_case(case, &RunOptions { schedule: Schedule::Random { seed }, ..checking() }, &mut cache);
    assert_eq!(kinds(o.diagnostics.as_deref().unwrap()), [DiagKind::Race]);
}

fn read_buffer(p: &Prepared, name: &str) -> Vec<u8> {
    p.read(name).unwrap()
}

// ---- our own kernels -----------------------------------------------------------------

/// `tests/cuda/check/<file>` compiled to PTX in each build; `None` without clang-19.
fn cuda(file: &str) -> Option<Vec<(&'static str, Arc<String>)>> {
    static HAVE: OnceLock<bool> = OnceLock::new();
    let have = *HAVE.get_or_init(|| Command::new(CLANG).arg("--version").output().is_ok());
    if !have {
        eprintln!("SKIPPED: {CLANG} is not on PATH (apt-get install clang-19)");
        return None;
    }
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/cuda/check").join(file);
    let dir = std::env::temp_dir().join(format!("warpsim-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut out = Vec::new();
    for (build, flags) in BUILDS {
        let ptx = dir.join(format!("{}.{build}.ptx", file.trim_end_matches(".cu")));
        out.push((build, Arc::new(common::clang_ptx(&src, &ptx, flags))));
    }
    Some(out)
}

fn buf_i32(name: &str, data: &[i32]) -> ParamSpec {
    ParamSpec::Buffer(BufferSpec {
        name: name.into(),
        dtype: Dtype::I32,
        count: data.len() as u64,
        init: Init::Values(data.iter().map(|&x| Value::Bits(x as u32 as u64)).collect()),
        role: Role::Inout,
    })
}

fn buf(name: &str, dtype: Dtype, count: u64, init: NamedInit) -> ParamSpec {
    ParamSpec::Buffer(BufferSpec { name: name.into(), dtype, count, init: Init::Named(init), role: Role::Inout })
}

fn int(v: i32) -> ParamSpec {
    ParamSpec::Scalar(ScalarParam { name: None, ty: Dtype::I32, bits: v as u32 as u64 })
}

fn check(ptx: &str, build: &str, kernel: &str, params: &[ParamSpec], grid: u32, block: u32, opts: &RunOptions) -> Vec<Diagnostic> {
    let prog = warpsim_ir::compile_kernel(&format!("{kernel}.{build}.ptx"), ptx, kernel).unwrap_or_else(|e| panic!("{kernel}: {e}"));
    let k = Kernel::from_program(Arc::new(prog), kernel).unwrap();
    let mut p = prepare(&k, params).unwrap_or_else(|e| panic!("{kernel}: {e}"));
    let (r, d) = match p.launch(&Dims::linear(grid, block), &RunOptions { check: true, ..opts.clone() }) {
        Ok(s) => (Ok(()), s.diagnostics.unwrap()),
        Err(HostError::CheckedFault { error, diagnostics }) => (Err(error), diagnostics),
        Err(e) => panic!("{kernel} ({build}): {e}"),
    };
    if let Err(e) = &r {
        // Faults end a checked run only for the bugs they stand for.
        assert!(
            d.iter().any(|x| matches!(x.kind, DiagKind::OutOfBounds | DiagKind::Misaligned | DiagKind::Deadlock)),
            "{kernel} ({build}): launch failed without a diagnostic: {e}"
        );
    }
    d
}

fn iota(n: usize) -> Vec<i32> {
    (0..n as i32).collect()
}

#[test]
fn buggy_kernels_are_reported() {
    let Some(builds) = cuda("buggy.cu") else { return };
    use DiagKind::*;
    use NamedInit::{HashU32, Iota, UnitF32, Zeros};
    let f32s = |name: &str, n: u64, init| buf(name, Dtype::F32, n, init);
    let i32s = |name: &str, n: u64, init| buf(name, Dtype::I32, n, init);
    let mut idx: Vec<i32> = iota(64);
    idx[5] = 5000;
    // (kernel, parameters, grid, block, the diagnostic it must give, text its message has)
    type Case<'a> = (&'a str, Vec<ParamSpec>, u32, u32, DiagKind, &'a str);
    let cases: Vec<Case> = vec![
        ("race_warp_reduce", vec![i32s("in", 64, HashU32), i32s("out", 2, Zeros)], 2, 32, Race, "shared"),
        ("race_missing_syncthreads", vec![f32s("in", 256, UnitF32), f32s("out", 2, Zeros)], 2, 128, Race, "shared"),
        ("race_global_counter", vec![i32s("counter", 1, Zeros)], 4, 32, Race, "global"),
        ("race_global_exchange", vec![i32s("buf", 64, Zeros), i32s("out", 64, Zeros)], 1, 64, Race, "global"),
        (
            "last_block_no_fence",
            vec![f32s("in", 8, UnitF32), f32s("partial", 8, Zeros), buf("ticket", Dtype::U32, 1, Zeros), f32s("total", 1, Zeros)],
            8,
            32,
            Race,
            "different blocks",
        ),
        ("barrier_in_branch", vec![f32s("data", 64, UnitF32)], 1, 64, BarrierDivergence, ""),
        ("barrier_never_completes", vec![i32s("out", 64, Zeros)], 1, 64, Deadlock, ""),
        ("barrier_different_instructions", vec![i32s("out", 64, Zeros)], 1, 64, BarrierDivergence, ""),
        ("shfl_in_branch", vec![f32s("in", 64, UnitF32), f32s("out", 64, Zeros)], 1, 64, SyncMask, "another path"),
        ("syncwarp_lane_not_in_mask", vec![i32s("out", 32, Zeros)], 1, 32, SyncMask, "does not name"),
        ("shfl_mismatched_masks", vec![i32s("in", 32, Iota), i32s("out", 32, Zeros)], 1, 32, SyncMask, "different member masks"),
        ("shfl_reads_outside_mask", vec![i32s("in", 32, Iota), i32s("out", 32, Zeros)], 1, 32, SyncMask, "outside the mask"),
        ("shfl_full_mask_partial_warp", vec![i32s("in", 48, Iota), i32s("out", 48, Zeros)], 1, 48, SyncMask, "do not exist"),
        ("oob_read", vec![f32s("in", 64, UnitF32), f32s("out", 64, Zeros), int(64)], 1, 64, OutOfBounds, "past the end of `in`"),
        ("oob_shared", vec![buf_i32("idx", &idx), i32s("out", 64, Zeros)], 1, 64, OutOfBounds, "shared"),
        ("misaligned_read", vec![buf("bytes", Dtype::U8, 160, Iota), i32s("out", 32, Zeros)], 1, 32, Misaligned, ""),
        ("uninit_shared", vec![f32s("out", 64, Zeros)], 1, 64, Uninitialized, "shared memory"),
        (
            "uninit_local",
            vec![i32s("in", 16, Iota), buf_i32("pick", &iota(32)), i32s("out", 32, Zeros), int(4)],
            1,
            32,
            Uninitialized,
            "local memory",
        ),
    ];
    for (build, ptx) in &builds {
        for (kernel, params, grid, block, kind, text) in &cases {
            let d = check(ptx, build, kernel, params, *grid, *block, &checking());
            let hit = d.iter().find(|x| x.kind == *kind);
            assert!(hit.is_some(), "{kernel} ({build}): want {kind:?}, got:\n{}", show(&d));
            let hit = hit.unwrap();
            assert!(hit.message.contains(text) || hit.space == Some(*text), "{kernel} ({build}): message lacks {text:?}: {hit}");
            assert!(hit.ptx_line() > 0, "{kernel}: no PTX line");
            if *build == "O0-g" {
                assert!(hit.source_line().is_some_and(|s| s.starts_with("buggy.cu:")), "{kernel} ({build}): no source line: {hit}");
            }
            // Nothing unrelated is reported either (the barrier in a branch also
            // deadlocks; the missing __syncthreads also lets warp 0 read words
            // warp 2 has not written yet).
            let also = |k: DiagKind| match *kernel {
                "barrier_in_branch" => k == Deadlock,
                "race_missing_syncthreads" => k == Uninitialized,
                _ => false,
            };
            let extra: Vec<_> = d.iter().filter(|x| x.kind != *kind && !also(x.kind)).collect();
            assert!(extra.is_empty(), "{kernel} ({build}): unexpected:\n{}", extra.iter().map(|x| format!("{x}\n")).collect::<String>());
        }
    }
}

#[test]
fn lockstep_hides_only_the_warp_synchronous_races() {
    let Some(builds) = cuda("buggy.cu") else { return };
    use NamedInit::{HashU32, UnitF32, Zeros};
    let lockstep = RunOptions { lockstep: true, ..checking() };
    for (build, ptx) in &builds {
        let p = [buf("in", Dtype::I32, 64, HashU32), buf("out", Dtype::I32, 2, Zeros)];
        let d = check(ptx, build, "race_warp_reduce", &p, 2, 32, &lockstep);
        assert!(d.is_empty(), "race_warp_reduce ({build}) lockstep:\n{}", show(&d));
        let p = [buf("buf", Dtype::I32, 64, Zeros), buf("out", Dtype::I32, 64, Zeros)];
        let d = check(ptx, build, "race_global_exchange", &p, 1, 64, &lockstep);
        assert!(d.is_empty(), "race_global_exchange ({build}) lockstep:\n{}", show(&d));
        // Races between warps are races on every GPU.
        let p = [buf("in", Dtype::F32, 256, UnitF32), buf("out", Dtype::F32, 2, Zeros)];
        let d = check(ptx, build, "race_missing_syncthreads", &p, 2, 128, &lockstep);
        assert!(kinds(&d).contains(&DiagKind::Race), "race_missing_syncthreads ({build}) lockstep:\n{}", show(&d));
    }
}

#[test]
fn correct_kernels_are_silent() {
    let Some(builds) = cuda("correct.cu") else { return };
    use NamedInit::{HashU32, Iota, UnitF32, Zeros};
    let f32s = |name: &str, n: u64, init| buf(name, Dtype::F32, n, init);
    let i32s = |name: &str, n: u64, init| buf(name, Dtype::I32, n, init);
    let cases: Vec<(&str, Vec<ParamSpec>, u32, u32)> = vec![
        ("warp_reduce_syncwarp", vec![i32s("in", 64, HashU32), i32s("out", 2, Zeros)], 2, 32),
        ("syncwarp_exchange", vec![i32s("in", 64, Iota), i32s("out", 64, Zeros)], 1, 64),
        ("half_warp_shuffle", vec![i32s("in", 64, Iota), i32s("out", 64, Zeros)], 1, 64),
        ("activemask_votes", vec![i32s("in", 64, HashU32), buf("out", Dtype::U32, 64, Zeros)], 1, 64),
        ("histogram_atomics", vec![i32s("in", 1000, HashU32), i32s("hist", 16, Zeros), int(1000)], 4, 64),
        ("block_reduce", vec![f32s("in", 512, UnitF32), f32s("out", 2, Zeros)], 2, 256),
        ("named_barriers", vec![i32s("in", 64, Iota), i32s("out", 64, Zeros)], 1, 64),
        (
            "last_block_sum",
            vec![f32s("in", 512, UnitF32), f32s("partial", 8, Zeros), buf("ticket", Dtype::U32, 1, Zeros), f32s("total", 1, Zeros)],
            8,
            64,
        ),
        ("stencil_global", vec![f32s("in", 250, UnitF32), f32s("tmp", 250, Zeros), f32s("out", 250, Zeros), int(250)], 4, 64),
        ("early_exit_shuffle", vec![i32s("in", 100, Iota), i32s("out", 100, Zeros), int(100)], 2, 64),
        ("local_array", vec![i32s("in", 64, Iota), i32s("out", 64, Zeros)], 1, 64),
        ("fence_flag", vec![i32s("data", 1, Zeros), i32s("flag", 1, Zeros), i32s("out", 1, Zeros)], 1, 64),
    ];
    let mut noisy = Vec::new();
    for (build, ptx) in &builds {
        for (kernel, params, grid, block) in &cases {
            for opts in [checking(), RunOptions { schedule: Schedule::Random { seed: 3 }, ..checking() }] {
                let d = check(ptx, build, kernel, params, *grid, *block, &opts);
                if !d.is_empty() {
                    noisy.push(format!("{kernel} ({build}, {:?}):\n{}", opts.schedule, show(&d)));
                }
            }
        }
    }
    assert!(noisy.is_empty(), "false positives:\n{}", noisy.join("\n"));
}
