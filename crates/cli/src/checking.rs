//! Command-line pieces of `warpsim check` and `--check`: the flags, and how
//! diagnostics are shown.

use warpsim_check::Diagnostic;
use warpsim_engine::Schedule;
use warpsim_host::LaunchOptions;

/// Checking and scheduling flags (shared by `run`, `check`, `corpus` and `bench`).
#[derive(clap::Args, Clone, Debug, Default)]
pub struct CheckArgs {
    /// Run the checkers: data races, barrier divergence and deadlock,
    /// sync-mask errors, out-of-bounds, misaligned and uninitialised
    /// accesses (blocks run one after another).
    #[arg(long)]
    pub check: bool,
    /// With --check: check as on pre-Volta GPUs, where the lanes of a warp
    /// run in lockstep (shows which races independent thread scheduling adds).
    #[arg(long)]
    pub lockstep: bool,
    /// Order in which the lane groups of a warp run: `simt` (the SIMT
    /// stack, deterministic) or `random` (independent thread scheduling:
    /// paths and groups of lanes interleave, from --seed).
    #[arg(long, default_value = "simt", value_parser = ["simt", "random"])]
    pub schedule: String,
    /// Seed for --schedule random.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Show every diagnostic (by default they are grouped by source line and kind, with a few examples).
    #[arg(long)]
    pub verbose: bool,
}

impl CheckArgs {
    /// Sets the checking and scheduling fields of `o`.
    pub fn apply(&self, o: &mut LaunchOptions) {
        o.check = self.check;
        o.lockstep = self.lockstep;
        o.schedule = if self.schedule == "random" { Schedule::Random { seed: self.seed } } else { Schedule::Simt };
    }
}

/// The corpus table's lines for a case's diagnostics: one per source line and
/// kind (its places, times and first message), or one per place with `verbose`.
pub fn summary_lines(diags: &[Diagnostic], verbose: bool) -> Vec<String> {
    if verbose {
        return diags
            .iter()
            .map(|d| {
                let place = match d.source_line() {
                    Some(s) => format!("{s} (PTX line {})", d.ptx_line()),
                    None => format!("PTX line {}", d.ptx_line()),
                };
                let times = if d.count > 1 { format!(" [{}x]", d.count) } else { String::new() };
                format!("{} at {place}{times}: {}", d.kind.name(), d.message)
            })
            .collect();
    }
    let (groups, _) = warpsim_check::group_diagnostics(diags);
    groups.iter().map(warpsim_check::DiagGroup::summary_line).collect()
}

/// The terminal rendering of a checked run's findings: the corpus's lines
/// (one per source line and kind), where each was first found, and one
/// paragraph of advice per kind; `verbose`, every place in full.
pub fn render(diags: &[Diagnostic], verbose: bool) -> String {
    warpsim_check::render_grouped(diags, verbose)
}

/// Shows a checked run's findings when its launch faulted (the fault among
/// them), as JSON or text.
pub fn show_fault(error: &warpsim_engine::LaunchError, diags: &[Diagnostic], json: bool, verbose: bool) -> anyhow::Result<()> {
    if json {
        let j = serde_json::json!({"error": error.to_string(), "diagnostics": diags.iter().map(Diagnostic::to_json).collect::<Vec<_>>()});
        println!("{}", serde_json::to_string_pretty(&j)?);
    } else if diags.is_empty() {
        // Not "no problems found": the launch did not finish, so the checkers saw only part of it.
        println!(
            "warpsim check: the launch stopped before it finished, so it was not checked to the end; the part that ran showed no problems"
        );
    } else {
        print!("{}", render(diags, verbose));
    }
    Ok(())
}

/// A checked run fails (exit status 1) when the checkers found anything.
pub fn verdict(diags: Option<&[Diagnostic]>) -> anyhow::Result<()> {
    match diags {
        Some(d) if !d.is_empty() => anyhow::bail!("warpsim check found {} problem place(s)", d.len()),
        _ => Ok(()),
    }
}
