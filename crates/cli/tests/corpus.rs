//! Corpus-wide: every non-bug case gives the H200's output bytes; the bug
//! cases run to a result or a clear error, never a panic.

mod common;
use common::manifest;
use warpsim_host::corpus::{run_case, CaseStatus};
use warpsim_host::{LaunchOptions as RunOptions, ProgramCache};

#[test]
fn every_non_bug_case_matches_the_h200() {
    let m = manifest();
    let mut cache = ProgramCache::default();
    let mut failures = Vec::new();
    let mut passed = 0;
    for case in m.cases.iter().filter(|c| !c.name.starts_with("bug_")) {
        let o = run_case(case, &RunOptions::default(), &mut cache);
        if o.status == CaseStatus::Pass {
            passed += 1;
        } else {
            failures.push(format!("{}: {:?} {:?} {:?}", o.name, o.status, o.error, o.checks));
        }
    }
    assert!(failures.is_empty(), "{} passed; failures:\n{}", passed, failures.join("\n"));
    assert!(passed >= 37, "only {passed} non-bug cases in the corpus?");
}

#[test]
fn bug_cases_end_in_a_result_or_a_clear_error() {
    let m = manifest();
    let mut cache = ProgramCache::default();
    for case in m.cases.iter().filter(|c| c.name.starts_with("bug_")) {
        let o = run_case(case, &RunOptions::default(), &mut cache);
        if let Some(e) = &o.error {
            assert!(e.contains("PTX line"), "{}: error without a place: {e}", o.name);
        }
        match case.name.as_str() {
            "bug_oob" => {
                // One past the end: served as the H200 serves it, with the place kept for a warning.
                assert_eq!(o.status, CaseStatus::Pass, "{:?}", o.error);
                assert_eq!(o.stats.past_end_count, 1);
                let w = o.stats.past_end[0].to_string();
                assert!(w.contains("out-of-bounds global store"), "{w}");
                assert!(w.contains("thread (63,0,0)"), "{w}");
                // With exact bounds it faults there.
                let strict = RunOptions { serve_past_end: false, ..Default::default() };
                let o = run_case(case, &strict, &mut cache);
                let e = o.error.as_deref().expect("bug_oob must fault with exact bounds");
                assert!(e.contains("out-of-bounds global store"), "{e}");
                assert!(e.contains("thread (63,0,0)"), "{e}");
            }
            "bug_divergent_barrier" => {
                let e = o.error.as_deref().expect("bug_divergent_barrier must not complete");
                assert!(e.contains("barrier can never complete"), "{e}");
            }
            _ => assert_eq!(o.status, CaseStatus::Pass, "{}: {:?}", o.name, o.error),
        }
    }
}

#[test]
fn serial_and_parallel_runs_agree() {
    let m = manifest();
    let mut cache = ProgramCache::default();
    for name in ["votes", "block_sum_smem", "branch_short"] {
        let case = m.case(name).unwrap();
        let serial = RunOptions { serial: true, ..Default::default() };
        let a = run_case(case, &serial, &mut cache);
        let b = run_case(case, &RunOptions::default(), &mut cache);
        assert_eq!(a.status, CaseStatus::Pass, "{name}");
        assert_eq!(b.status, CaseStatus::Pass, "{name}");
        assert_eq!(a.stats, b.stats, "{name}");
    }
}

/// Global requests and sectors (loads and stores) and shared wavefronts and
/// bank conflicts equal the H200's Nsight Compute values exactly; threads per
/// warp instruction is within 10% (the GPU counts SASS, warpsim PTX).
#[test]
fn metrics_match_nsight_compute_on_the_h200() {
    let m = manifest();
    let mut cache = ProgramCache::default();
    let exact = [
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
        "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    ];
    let opts = RunOptions { metrics: true, ..Default::default() };
    let mut problems = Vec::new();
    let mut compared = 0;
    for case in m.cases.iter().filter(|c| !c.name.starts_with("bug_")) {
        let o = run_case(case, &opts, &mut cache);
        let ours = o.metrics.as_ref().expect("metrics were asked for").totals.to_ncu_json();
        let h200 = case.h200_ncu();
        for k in exact {
            let want = h200.get(k).copied().unwrap_or_else(|| panic!("{}: no {k} in the corpus", case.name));
            let got = ours[k].as_f64().unwrap();
            compared += 1;
            if got != want {
                problems.push(format!("{} {k}: warpsim {got}, H200 {want}", case.name));
            }
        }
        let k = "smsp__thread_inst_executed_per_inst_executed.ratio";
        let (got, want) = (ours[k].as_f64().unwrap(), h200[k]);
        if (got - want).abs() > 0.1 * want {
            problems.push(format!("{} {k}: warpsim {got}, H200 {want}", case.name));
        }
    }
    assert!(problems.is_empty(), "{} of {compared} exact comparisons differ:\n{}", problems.len(), problems.join("\n"));
}
