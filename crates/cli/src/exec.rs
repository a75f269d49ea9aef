//! `warpsim exec -- PROGRAM [ARGS...]`: runs a whole program with warpsim
//! standing in for the GPU. The program loads warpsim's driver and runtime
//! libraries (links named `libcuda.so.1`, `libcudart.so.13` and `.12` in a temporary
//! folder put first on `LD_LIBRARY_PATH`); its output is untouched. The
//! driver appends one JSON line per launch to a summary file
//! (`WARPSIM_SUMMARY`, the contract in `warpsim-cuda`'s header), from which
//! the per-kernel table (stderr) and `--json` are made at exit.

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use warpsim::timing_cli::Mode;

/// Options of `warpsim exec`.
#[derive(clap::Args, Debug)]
pub struct ExecArgs {
    /// The GPU the program sees: t4, a100, h100, h200, mi300x.
    #[arg(long, default_value = "h200")]
    pub gpu: String,
    /// `functional` (outputs, warp-level metrics) or `timing` (cycles on the `--gpu` model; events read simulated time).
    #[arg(long, value_enum, default_value_t = Mode::Functional)]
    pub mode: Mode,
    /// Run every launch with the checkers (races, barriers, bounds, ...); findings on stderr.
    #[arg(long)]
    pub check: bool,
    /// Fault at an allocation's exact end (by default an access past it but
    /// within its 64 KiB page is served, as a GPU serves it, with a warning).
    #[arg(long)]
    pub strict_bounds: bool,
    /// Write the timing model's timelines of all launches (JSON) here.
    #[arg(long, value_name = "FILE.json")]
    pub trace: Option<PathBuf>,
    /// Write an HTML report of all launches here.
    #[arg(long, value_name = "FILE.html")]
    pub report: Option<PathBuf>,
    /// Pages in the `--report` for the first N launches (the index lists them; at exit
    /// warpsim says how many were left out).
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub report_launches: usize,
    /// Write the per-kernel and per-launch numbers as JSON here.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// The program and its arguments (after `--`).
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true, value_name = "PROGRAM")]
    pub program: Vec<OsString>,
}

/// Where warpsim's libraries are looked for: `WARPSIM_LIB_DIR`, else the warpsim binary's own
/// folder and its `deps/` (where `cargo test` leaves them).
fn lib_dirs() -> Result<Vec<PathBuf>> {
    if let Some(d) = std::env::var_os("WARPSIM_LIB_DIR") {
        return Ok(vec![PathBuf::from(d)]);
    }
    let exe = std::env::current_exe().context("finding the warpsim binary")?;
    let dir = exe.parent().map(Path::to_path_buf).unwrap_or_default();
    Ok(vec![dir.clone(), dir.join("deps")])
}

/// The first of `dirs` holding `name`; else the path it was expected at, for the message.
fn find_library(dirs: &[PathBuf], name: &str) -> std::result::Result<PathBuf, PathBuf> {
    let found = dirs.iter().map(|d| d.join(name)).find(|p| p.is_file());
    found.ok_or_else(|| dirs.first().map(|d| d.join(name)).unwrap_or_else(|| PathBuf::from(name)))
}

/// A temporary folder of links named as the program looks for the libraries; removed on drop.
struct LinkDir(PathBuf);

impl Drop for LinkDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn link_dir(libs: &[PathBuf]) -> Result<LinkDir> {
    let driver = match find_library(libs, "libwarpsim_cuda.so") {
        Ok(p) => p,
        Err(driver) => bail!(
            "warpsim's CUDA driver library is not built ({} is missing); build it with `cargo build --release --workspace` \
             (or point WARPSIM_LIB_DIR at the folder holding libwarpsim_cuda.so and libwarpsim_cudart.so)",
            driver.display()
        ),
    };
    let dir = LinkDir(std::env::temp_dir().join(format!("warpsim-exec-{}", std::process::id())));
    std::fs::create_dir_all(&dir.0).with_context(|| format!("creating {}", dir.0.display()))?;
    let link = |target: &Path, name: &str| {
        let at = dir.0.join(name);
        let _ = std::fs::remove_file(&at);
        std::os::unix::fs::symlink(target, &at).with_context(|| format!("linking {}", at.display()))
    };
    link(&driver, "libcuda.so.1")?;
    link(&driver, "libcuda.so")?;
    match find_library(libs, "libwarpsim_cudart.so") {
        Ok(runtime) => {
            link(&runtime, "libcudart.so.13")?;
            // CUDA 12 programs: the same library defines their `...@libcudart.so.12` symbols.
            link(&runtime, "libcudart.so.12")?;
            link(&runtime, "libcudart.so")?;
        }
        Err(runtime) => {
            eprintln!(
                "warpsim exec: warning: {} is missing: programs built with `nvcc -cudart shared` need it; \
             build it with `cargo build --release --workspace`",
                runtime.display()
            );
        }
    }
    Ok(dir)
}

/// Runs the program; exits with its exit status after the table.
pub fn cmd_exec(a: ExecArgs) -> Result<()> {
    // A built-in name or a preset file (as `run --gpu`); the program may change directory.
    warpsim_timing::TimingGpu::resolve(&a.gpu)?;
    let gpu_setting = match Path::new(&a.gpu) {
        p if p.is_file() => p.canonicalize()?.into_os_string(),
        _ => OsString::from(&a.gpu),
    };
    let dir = link_dir(&lib_dirs()?)?;
    let summary = dir.0.join("launches.jsonl");
    let mut ld = OsString::from(&dir.0);
    if let Some(old) = std::env::var_os("LD_LIBRARY_PATH").filter(|v| !v.is_empty()) {
        ld.push(":");
        ld.push(old);
    }
    let (program, args) = a.program.split_first().context("no program given")?;
    let mut cmd = std::process::Command::new(program);
    cmd.args(args)
        .env("LD_LIBRARY_PATH", ld)
        .env("NUMBA_CUDA_DRIVER", dir.0.join("libcuda.so.1"))
        .env("NUMBA_CUDA_ENABLE_PYNVJITLINK", "0")
        .env("WARPSIM_GPU", &gpu_setting)
        .env("WARPSIM_MODE", if a.mode == Mode::Timing { "timing" } else { "functional" })
        .env("WARPSIM_SUMMARY", &summary);
    if a.check {
        cmd.env("WARPSIM_CHECK", "1");
    }
    if a.strict_bounds {
        cmd.env("WARPSIM_STRICT_BOUNDS", "1");
    }
    for (var, path) in [("WARPSIM_TRACE", &a.trace), ("WARPSIM_REPORT", &a.report)] {
        if let Some(p) = path {
            cmd.env(var, std::path::absolute(p).unwrap_or_else(|_| p.clone()));
        }
    }
    cmd.env("WARPSIM_REPORT_LAUNCHES", a.report_launches.to_string());
    let status = cmd.status().with_context(|| format!("running {}", program.to_string_lossy()))?;
    let launches = read_launches(&summary);
    let kernels = per_kernel(&launches);
    if !launches.is_empty() {
        eprint!("{}", render_table(&kernels, &a.gpu, a.mode == Mode::Timing));
    }
    if let (Some(r), true) = (&a.report, launches.len() > a.report_launches) {
        eprintln!(
            "warpsim exec: {} has pages for the first {} of {} launches; {} were left out (rerun with --report-launches {} for all)",
            r.display(),
            a.report_launches,
            launches.len(),
            launches.len() - a.report_launches,
            launches.len()
        );
    }
    if let Some(p) = &a.json {
        let j = json!({"gpu": a.gpu, "mode": if a.mode == Mode::Timing { "timing" } else { "functional" },
            "exit_code": status.code(), "kernels": kernels, "launches": launches});
        std::fs::write(p, serde_json::to_string_pretty(&j)? + "\n").with_context(|| format!("writing {}", p.display()))?;
    }
    drop(dir);
    use std::os::unix::process::ExitStatusExt;
    std::process::exit(status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(0)))
}

/// The driver's summary lines (a missing file: no launches).
fn read_launches(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
}

fn num(v: &Value, k: &str) -> f64 {
    v.get(k).and_then(Value::as_f64).unwrap_or(0.0)
}

/// Totals per kernel, in order of first launch.
pub fn per_kernel(launches: &[Value]) -> Vec<Value> {
    let mut order: Vec<String> = Vec::new();
    let mut by: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    for l in launches {
        let k = l.get("kernel").and_then(Value::as_str).unwrap_or("?").to_string();
        if !by.contains_key(&k) {
            order.push(k.clone());
        }
        by.entry(k).or_default().push(l);
    }
    order
        .iter()
        .map(|k| {
            let ls = &by[k];
            let sum = |f: &str| ls.iter().map(|l| num(l, f)).sum::<f64>();
            let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
            let cycles: Vec<u64> = ls.iter().filter_map(|l| l.get("cycles").and_then(Value::as_u64)).collect();
            json!({
                "kernel": k,
                "launches": ls.len(),
                "warp_instructions": sum("warp_instructions") as u64,
                "thread_instructions": sum("thread_instructions") as u64,
                "threads_per_instruction": ratio(sum("thread_instructions"), sum("warp_instructions")),
                "divergent_branches": sum("divergent_branches") as u64,
                "global_requests": sum("global_requests") as u64,
                "global_sectors": sum("global_sectors") as u64,
                "sectors_per_request": ratio(sum("global_sectors"), sum("global_requests")),
                "bank_conflicts": sum("bank_conflicts") as u64,
                "cycles": (!cycles.is_empty()).then(|| cycles.iter().sum::<u64>()),
                "diagnostics": sum("diagnostics") as u64,
                "faults": ls.iter().filter(|l| l.get("fault").is_some_and(|f| !f.is_null())).count(),
            })
        })
        .collect()
}

/// A mangled C++ or Numba kernel name as its qualified name with template
/// arguments, without the signature (`_Z4vaddPKfS0_Pfi` -> `vadd`,
/// `_Z4axpyIfEvT_PKS0_PS0_i` -> `axpy<float>`, `_ZN8__main__4vaddB2v1...` ->
/// `__main__::vadd`); other names as they are.
pub fn short_name(name: &str) -> String {
    if let Some(d) = warpsim_ir::entry_names::display_name(name) {
        return d;
    }
    let (mut rest, nested) = match name.strip_prefix("_ZN") {
        Some(r) => (r, true),
        None => match name.strip_prefix("_Z") {
            Some(r) => (r, false),
            None => return name.to_string(),
        },
    };
    let mut parts = Vec::new();
    loop {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let Some(len) = rest[..digits].parse::<usize>().ok().filter(|&n| n > 0 && digits + n <= rest.len()) else { break };
        parts.push(&rest[digits..digits + len]);
        rest = &rest[digits + len..];
        if !nested {
            break;
        }
    }
    if parts.is_empty() {
        name.to_string()
    } else {
        parts.join("::")
    }
}

/// The table printed at exit.
pub fn render_table(kernels: &[Value], gpu: &str, timing: bool) -> String {
    let n: u64 = kernels.iter().map(|k| num(k, "launches") as u64).sum();
    let mut s = format!(
        "\nwarpsim exec: {n} launch{} of {} kernel{} on {gpu} ({})\n",
        if n == 1 { "" } else { "es" },
        kernels.len(),
        if kernels.len() == 1 { "" } else { "s" },
        if timing { "timing" } else { "functional" }
    );
    if kernels.is_empty() {
        return s;
    }
    let names: Vec<String> = kernels.iter().map(|k| short_name(k["kernel"].as_str().unwrap_or("?"))).collect();
    let w = names.iter().map(String::len).max().unwrap_or(6).clamp(6, 60);
    let cyc = if timing { format!(" {:>12}", "cycles") } else { String::new() };
    s += &format!(
        "  {:<w$} {:>8} {:>14} {:>12} {:>10} {:>12} {:>14}{cyc} {:>11}\n",
        "kernel", "launches", "warp insts", "threads/inst", "divergent", "sectors/req", "bank conflicts", "diagnostics"
    );
    for (k, name) in kernels.iter().zip(&names) {
        let name = if name.len() > w { format!("{}...", name.chars().take(w - 3).collect::<String>()) } else { name.clone() };
        let cyc =
            if timing { format!(" {:>12}", k["cycles"].as_u64().map(|c| c.to_string()).unwrap_or("-".into())) } else { String::new() };
        let faults = num(k, "faults") as u64;
        s += &format!(
            "  {name:<w$} {:>8} {:>14} {:>12.2} {:>10} {:>12.2} {:>14}{cyc} {:>11}{}\n",
            num(k, "launches"),
            num(k, "warp_instructions"),
            num(k, "threads_per_instruction"),
            num(k, "divergent_branches"),
            num(k, "sectors_per_request"),
            num(k, "bank_conflicts"),
            num(k, "diagnostics"),
            if faults > 0 { format!("  ({faults} faulted)") } else { String::new() }
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launches_add_up_per_kernel_in_launch_order() {
        let l = |k: &str, w: u64, t: u64, req: u64, sec: u64| {
            json!({"kernel": k, "warp_instructions": w, "thread_instructions": t, "global_requests": req, "global_sectors": sec,
                   "divergent_branches": 1, "bank_conflicts": 2, "cycles": null, "diagnostics": null, "fault": null})
        };
        let ks = per_kernel(&[l("b", 10, 320, 4, 16), l("a", 5, 80, 1, 1), l("b", 30, 640, 4, 8)]);
        assert_eq!(ks.len(), 2);
        assert_eq!(ks[0]["kernel"], "b");
        assert_eq!(ks[0]["launches"], 2);
        assert_eq!(ks[0]["warp_instructions"], 40);
        assert_eq!(ks[0]["threads_per_instruction"], 24.0);
        assert_eq!(ks[0]["sectors_per_request"], 3.0);
        assert_eq!(ks[0]["divergent_branches"], 2);
        assert!(ks[0]["cycles"].is_null());
        let t = render_table(&ks, "h200", false);
        assert!(t.contains("3 launches of 2 kernels on h200"), "{t}");
        assert!(t.lines().nth(3).unwrap().trim_start().starts_with("b "), "{t}");
    }

    #[test]
    fn mangled_names_read_as_their_qualified_names() {
        assert_eq!(short_name("_Z4vaddPKfS0_Pfi"), "vadd");
        assert_eq!(short_name("_ZN8__main__4vaddB2v1B92cw51cXTLSUwv1sDUaKthqaNgoKmjgOR3W"), "__main__::vadd");
        assert_eq!(short_name("plain_c_kernel"), "plain_c_kernel");
        assert_eq!(short_name("b"), "b");
        assert_eq!(short_name("_Z99x"), "_Z99x");
        // Template instances stay apart in the table.
        assert_eq!(short_name("_Z4axpyIfEvT_PKS0_PS0_i"), "axpy<float>");
        assert_eq!(short_name("_Z4axpyIdEvT_PKS0_PS0_i"), "axpy<double>");
    }
}
