//! Manifest cases (the ground-truth corpus): run one, check every expected
//! output, and say how it went.

use crate::{prepare, Dims, HostError, LaunchOptions, ProgramCache};
use std::time::Instant;
use warpsim_check::Diagnostic;
use warpsim_engine::LaunchStats;
use warpsim_launch::{check::Checker, Case, CheckResult, Role};
use warpsim_metrics::LaunchMetrics;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CaseStatus {
    Pass,
    Fail,
    Error,
}

impl CaseStatus {
    pub fn name(self) -> &'static str {
        match self {
            CaseStatus::Pass => "pass",
            CaseStatus::Fail => "fail",
            CaseStatus::Error => "error",
        }
    }
}

/// What happened to one case.
#[derive(Clone, Debug)]
pub struct CaseOutcome {
    pub name: String,
    pub status: CaseStatus,
    pub outputs_match: bool,
    pub error: Option<String>,
    pub stats: LaunchStats,
    pub sim_seconds: f64,
    pub checks: Vec<CheckResult>,
    pub metrics: Option<LaunchMetrics>,
    /// What the checkers found (`--check`).
    pub diagnostics: Option<Vec<Diagnostic>>,
    /// Timing mode: cycles, occupancy, stalls, traffic.
    pub timing: Option<warpsim_timing::TimingReport>,
}

impl CaseOutcome {
    /// The JSON object `warpsim corpus --json` prints for this case.
    pub fn to_json(&self) -> serde_json::Value {
        let mut j = serde_json::json!({
            "name": self.name,
            "status": self.status.name(),
            "outputs_match": self.outputs_match,
            "error": self.error,
            "warp_instructions": self.stats.warp_instructions,
            "thread_instructions": self.stats.thread_instructions,
            "sim_seconds": self.sim_seconds,
            "checks": self.checks.iter().map(|c| serde_json::json!({
                "buffer": c.buffer, "method": c.method.name(), "matched": c.matched, "message": c.message,
            })).collect::<Vec<_>>(),
            "metrics": match &self.metrics {
                Some(m) => serde_json::Value::Object(m.totals.to_ncu_json()),
                None => serde_json::json!({
                    "smsp__inst_executed.sum": self.stats.warp_instructions,
                    "smsp__thread_inst_executed.sum": self.stats.thread_instructions,
                    "smsp__thread_inst_executed_per_inst_executed.ratio": self.stats.threads_per_instruction(),
                }),
            },
        });
        if self.stats.past_end_count > 0 {
            // Served as a GPU serves them; each kept one with its place.
            j["past_end"] = serde_json::json!({
                "count": self.stats.past_end_count,
                "first": self.stats.past_end.iter().map(|f| f.to_string()).collect::<Vec<_>>(),
            });
        }
        if let (Some(d), Some(o)) = (&self.diagnostics, j.as_object_mut()) {
            o.insert("diagnostics".into(), d.iter().map(Diagnostic::to_json).collect());
        }
        if let Some(t) = &self.timing {
            // `cycles` compares with the H200's `sm__cycles_elapsed.max`; the timing metrics join the others.
            j["cycles"] = serde_json::json!(t.cycles);
            if let Some(m) = j["metrics"].as_object_mut() {
                m.extend(t.to_ncu_json());
            }
            j["timing"] = t.to_json();
        }
        j
    }

    /// With `--check`, a case passes when it has diagnostics exactly when it
    /// declares a bug (`expect_diagnostic`).
    pub fn check_ok(&self, expects_bug: bool) -> bool {
        match &self.diagnostics {
            None => true,
            Some(d) => d.is_empty() != expects_bug,
        }
    }
}

/// Runs one corpus case and checks every expected output.
pub fn run_case(case: &Case, opts: &LaunchOptions, cache: &mut ProgramCache) -> CaseOutcome {
    let mut out = CaseOutcome {
        name: case.name.clone(),
        status: CaseStatus::Error,
        outputs_match: false,
        error: None,
        stats: LaunchStats::default(),
        sim_seconds: 0.0,
        checks: Vec::new(),
        metrics: None,
        diagnostics: None,
        timing: None,
    };
    if let Err(e) = run_and_check(case, opts, cache, &mut out) {
        out.error = Some(e.to_string());
    }
    out
}

fn run_and_check(case: &Case, opts: &LaunchOptions, cache: &mut ProgramCache, out: &mut CaseOutcome) -> Result<(), HostError> {
    // ptxas' register count, where the manifest records it (the corpus: `h200.num_regs`).
    let regs = case.h200.as_ref().and_then(|h| h.get("num_regs")).and_then(|v| v.as_u64()).map(|v| v as u32);
    let kernel = cache.get(&case.ptx, &case.kernel)?.with_regs_per_thread(regs);
    let mut prepared = prepare(&kernel, &case.params)?;
    let t0 = Instant::now();
    let r = prepared.launch(&Dims::new(case.grid, case.block, case.dynamic_shared_bytes), opts);
    out.sim_seconds = t0.elapsed().as_secs_f64();
    let s = match r {
        Ok(s) => s,
        Err(HostError::CheckedFault { error, diagnostics }) => {
            out.diagnostics = Some(diagnostics);
            return Err(error.into());
        }
        Err(e) => return Err(e),
    };
    out.stats = s.stats;
    out.metrics = s.metrics;
    out.diagnostics = s.diagnostics;
    out.timing = s.timing;
    let mut all = true;
    for b in prepared.buffers.iter().filter(|b| b.spec.role != Role::In) {
        let Some(exp) = case.expect.get(&b.spec.name) else { continue };
        let mut c = Checker::new(&b.spec.name, exp, b.spec.dtype, b.len, case.block_threads())?;
        prepared.ctx.read_chunks(b.ptr, b.len, |chunk| c.update(chunk).map_err(HostError::from))?;
        let r = c.finish()?;
        all &= r.matched;
        out.checks.push(r);
    }
    out.outputs_match = all;
    out.status = if all { CaseStatus::Pass } else { CaseStatus::Fail };
    Ok(())
}
