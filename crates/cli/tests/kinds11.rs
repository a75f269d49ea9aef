//! Kernels of the kinds issue 11 names (`calibration/kinds11`: cooperative-groups tiles,
//! labeled partitions and coalesced groups, IEEE division and square root, vector loads and
//! stores, constant-memory loads), recorded on the H200: warpsim gives the GPU's output bytes
//! and its memory counts.

use std::path::PathBuf;
use warpsim_host::corpus::{run_case, CaseStatus};
use warpsim_host::{LaunchOptions, ProgramCache};

const EXACT: [&str; 14] = [
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "smsp__sass_inst_executed_op_global_ld.sum",
    "smsp__sass_inst_executed_op_global_st.sum",
    "smsp__sass_inst_executed_op_shared_ld.sum",
    "smsp__sass_inst_executed_op_shared_st.sum",
];

#[test]
fn issue_11_kinds_give_the_h200s_bytes_and_memory_counts() {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../calibration/kinds11/cases.json");
    let m = warpsim_launch::load_manifest(&p).unwrap_or_else(|e| panic!("loading {}: {e}", p.display()));
    assert_eq!(m.cases.len(), 8);
    let opts = LaunchOptions { metrics: true, ..Default::default() };
    let mut cache = ProgramCache::default();
    let (mut problems, mut compared) = (Vec::new(), 0);
    for case in &m.cases {
        let o = run_case(case, &opts, &mut cache);
        if o.status != CaseStatus::Pass {
            problems.push(format!("{}: {:?} {:?} {:?}", case.name, o.status, o.error, o.checks));
            continue;
        }
        let ours = o.metrics.as_ref().expect("metrics were asked for").totals.to_ncu_json();
        let h200 = case.h200_ncu();
        for k in EXACT {
            let want = h200.get(k).copied().unwrap_or_else(|| panic!("{}: no {k}", case.name));
            let got = ours[k].as_f64().unwrap_or_else(|| panic!("warpsim reports no {k}"));
            compared += 1;
            if got != want {
                problems.push(format!("{} {k}: warpsim {got}, H200 {want}", case.name));
            }
        }
    }
    assert_eq!(compared, 8 * EXACT.len());
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}
