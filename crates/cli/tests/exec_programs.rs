//! Whole CUDA programs under `warpsim exec`: each of `tests/programs/*.cu` is built with
//! NVIDIA's nvcc exactly as tests/programs/README.md says (`-arch=sm_90 -cudart shared`,
//! linked against warpsim's `libcudart.so`), run with warpsim standing in for the GPU, and
//! compared with what it printed and returned on an H200 (`tests/programs/h200/`).
//!
//! nvcc is `$WARPSIM_NVCC`, else the wheel in `.venv` at the repository root (`.ci/run`
//! installs it), else in `/tmp/nvenv`; without one the tests fail saying how to install it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

fn programs() -> PathBuf {
    repo().join("tests/programs")
}

fn tmp() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("warpsim-exec-programs-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    })
}

fn nvcc() -> PathBuf {
    if let Some(p) = std::env::var_os("WARPSIM_NVCC").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    [repo().join(".venv"), PathBuf::from("/tmp/nvenv")].iter().find_map(|v| warpsim::cuda::nvcc_in_venv(v)).unwrap_or_else(|| {
        panic!(
            "these tests build real CUDA programs with NVIDIA's nvcc, which installs without a GPU:\n    \
             python3 -m venv .venv && .venv/bin/pip install nvidia-cuda-nvcc nvidia-cuda-runtime nvidia-cuda-crt nvidia-cuda-cccl\n\
             (at the repository root; or name an nvcc in WARPSIM_NVCC)"
        )
    })
}

/// One of warpsim's libraries, built beside the binary (or among its dependencies).
fn library(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_BIN_EXE_warpsim")).parent().unwrap();
    // The newer of the two: `cargo build` leaves one beside the binary that `cargo test`
    // (which builds only the one in deps/) does not refresh.
    let modified = |p: &PathBuf| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let found = [dir.join(name), dir.join("deps").join(name)].into_iter().filter(|p| p.is_file()).max_by_key(modified);
    found.unwrap_or_else(|| panic!("no {name} in {} (cargo build --workspace builds it)", dir.display()))
}

/// A folder holding warpsim's two libraries for `warpsim exec` (`WARPSIM_LIB_DIR`), and
/// `libcudart.so` for `-cudart shared` links (the wheel ships only `libcudart.so.13`) and
/// `libcuda.so` for `-lcuda` (warpsim's driver, whose soname is `libcuda.so.1`).
fn lib_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = tmp().join("lib");
        std::fs::create_dir_all(&d).unwrap();
        for (target, name) in [
            ("libwarpsim_cuda.so", "libwarpsim_cuda.so"),
            ("libwarpsim_cudart.so", "libwarpsim_cudart.so"),
            ("libwarpsim_cudart.so", "libcudart.so"),
            ("libwarpsim_cuda.so", "libcuda.so"),
        ] {
            let link = d.join(name);
            let _ = std::fs::remove_file(&link);
            std::os::unix::fs::symlink(library(target), &link).unwrap();
        }
        d
    })
}

/// Builds `tests/programs/NAME.cu` into the temporary folder as `out`; `shared` links
/// warpsim's runtime, else nvcc's default (NVIDIA's runtime, static).
fn build(name: &str, out: &str, shared: bool) -> PathBuf {
    build_file(&programs().join(format!("{name}.cu")), out, shared, &[])
}

/// Builds `cu` as `out` with nvcc's `flags` added.
fn build_file(cu: &Path, out: &str, shared: bool, flags: &[&str]) -> PathBuf {
    let exe = tmp().join(out);
    let mut c = Command::new(nvcc());
    c.arg("-arch=sm_90").args(flags);
    if shared {
        c.args(["-cudart", "shared"]).arg("-L").arg(lib_dir());
    }
    let o = c.arg(cu).arg("-o").arg(&exe).output().expect("running nvcc");
    assert!(o.status.success(), "nvcc {}:\n{}", cu.display(), String::from_utf8_lossy(&o.stderr));
    exe
}

/// Runs `exe ARGS` under `warpsim exec`.
fn exec(exe: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_warpsim"))
        .env("WARPSIM_LIB_DIR", lib_dir())
        .arg("exec")
        .arg("--")
        .arg(exe)
        .args(args)
        .output()
        .expect("running warpsim exec")
}

fn h200(recording: &str, what: &str) -> String {
    let p = programs().join("h200").join(format!("{recording}.{what}"));
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn h200_exit(recording: &str) -> i32 {
    h200(recording, "exit_code").trim().parse().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The program's stdout and exit code are the H200's.
fn same_as_h200(recording: &str, o: &Output) {
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert_eq!(out, h200(recording, "stdout"), "{recording}: stdout differs from the H200's; stderr:\n{err}");
    assert_eq!(o.status.code(), Some(h200_exit(recording)), "{recording}: exit code; stderr:\n{err}");
}

#[test]
fn vector_add_prints_the_h200s_checksum() {
    let exe = build("vector_add", "vector_add", true);
    same_as_h200("vector_add", &exec(&exe, &[]));
}

/// `--report` writes an index and a page per launch in every mode; under `--check` (the
/// functional engine) the page says it has no cycles.
#[test]
fn a_checked_exec_writes_its_report() {
    let exe = build("vector_add", "vector_add", true);
    let html = tmp().join("checked-report.html");
    let o = Command::new(env!("CARGO_BIN_EXE_warpsim"))
        .env("WARPSIM_LIB_DIR", lib_dir())
        .args(["exec", "--check", "--report"])
        .arg(&html)
        .arg("--")
        .arg(&exe)
        .output()
        .expect("running warpsim exec");
    same_as_h200("vector_add", &o);
    let index = std::fs::read_to_string(&html).unwrap_or_else(|e| panic!("{}: {e}\n{}", html.display(), text(&o.stderr)));
    assert!(index.contains("checked-report-1.html"), "{index}");
    let page = std::fs::read_to_string(tmp().join("checked-report-1.html")).unwrap();
    assert!(page.contains("A functional run (no cycles"), "the page says where its numbers come from");
}

/// The seed 001 table. Every column is the H200's except how many distinct `clock64()` values
/// the 8 warps of the 256-thread block read: that depends on which warps the four schedulers
/// of an SM issue in the same cycle (5 on the H200, 8 on the T4 of the seed), so it is only
/// held to what any schedule gives: between 2 (four warps a cycle) and 8 (one a cycle).
#[test]
fn seed001_prints_the_warp_table() {
    let o = exec(seed001(), &[]);
    let (out, want) = (text(&o.stdout), h200("seed001_warps", "stdout"));
    assert_eq!(o.status.code(), Some(h200_exit("seed001_warps")), "stderr:\n{}", text(&o.stderr));
    let (got, want): (Vec<&str>, Vec<&str>) = (out.lines().collect(), want.lines().collect());
    assert_eq!(got.len(), want.len(), "{out}");
    assert_eq!(got[0], want[0], "the header");
    for (g, w) in got.iter().zip(&want).skip(1) {
        let (gc, wc): (Vec<&str>, Vec<&str>) = (g.split_whitespace().collect(), w.split_whitespace().collect());
        assert_eq!(gc.len(), 6, "{g}");
        if wc[0] == "256" {
            assert_eq!([gc[..4].to_vec(), gc[5..].to_vec()], [wc[..4].to_vec(), wc[5..].to_vec()], "{g}");
            let distinct: u32 = gc[4].parse().unwrap();
            assert!((2..=8).contains(&distinct), "{g}");
        } else {
            assert_eq!(g, w);
        }
    }
}

/// In timing mode the whole table is the H200's, the distinct clock64() values too: a
/// block's warps start 2 cycles apart per sub-partition (`calibration/warp_launch`).
#[test]
fn seed001_in_timing_mode_prints_the_h200s_table() {
    same_as_h200("seed001_warps", &exec_with(&["--mode", "timing"], seed001()));
}

/// The seed 001 program, built once for the tests that run it.
fn seed001() -> &'static Path {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| build("seed001_warps", "seed001_warps", true))
}

fn runtime_features() -> &'static Path {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| build("runtime_features", "runtime_features", true))
}

#[test]
fn runtime_features_streams_events_managed_symbols_printf() {
    same_as_h200("runtime_features", &exec(runtime_features(), &[]));
}

/// A failing device assert: the H200's stdout and exit code (`cudaErrorAssert`, sticky), and
/// on stderr the GPU's assert message (with this checkout's path to the source).
#[test]
fn runtime_features_assert_is_cuda_error_assert_with_the_message() {
    let o = exec(runtime_features(), &["--assert"]);
    same_as_h200("runtime_features_assert", &o);
    let err = text(&o.stderr);
    let gpu = h200("runtime_features_assert", "stderr");
    let src = programs().join("runtime_features.cu").display().to_string();
    let gpu: Vec<String> = gpu.lines().map(|l| l.replace("/work/main/.devwork/programs/runtime_features.cu", &src)).collect();
    let ours: Vec<&str> = err.lines().filter(|l| l.contains("Assertion `")).filter(|l| l.contains("block: [")).collect();
    // One line per failing thread (5..31), in thread order, as the H200 prints them.
    assert_eq!(gpu.len(), 27);
    assert_eq!(ours, gpu, "stderr:\n{err}");
}

fn exec_faults() -> &'static Path {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| build_file(&repo().join("crates/cli/tests/cu/exec_faults.cu"), "exec_faults", true, &[]))
}

/// `warpsim exec ARGS -- exec_faults`.
fn exec_with(args: &[&str], exe: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_warpsim"))
        .env("WARPSIM_LIB_DIR", lib_dir())
        .arg("exec")
        .args(args)
        .arg("--")
        .arg(exe)
        .output()
        .expect("running warpsim exec")
}

/// The table's row of a kernel: (launches, warp instructions).
fn table_row(table: &str, kernel: &str) -> (u64, u64) {
    let row = table.lines().find(|l| l.split_whitespace().next() == Some(kernel)).unwrap_or_else(|| panic!("no {kernel} row in:\n{table}"));
    let cols: Vec<&str> = row.split_whitespace().collect();
    (cols[1].parse().unwrap(), cols[2].parse().unwrap())
}

/// A launch that ends in a failing assert keeps its device printf output (every thread printed
/// before the assert), prints the GPU's message once per failing thread in thread order, and
/// counts the warp instructions that ran in the table.
#[test]
fn a_failing_assert_keeps_the_launchs_printf_and_counts() {
    let o = exec_with(&[], exec_faults());
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    let printed: Vec<String> = out.lines().filter(|l| l.starts_with("before the assert")).map(String::from).collect();
    let want: Vec<String> = (0..32).map(|t| format!("before the assert: thread {t}")).collect();
    assert_eq!(printed, want, "stdout:\n{out}\nstderr:\n{err}");
    assert!(out.contains("ticks: 704\n") && out.ends_with("sync: cudaErrorAssert\n"), "{out}");
    let src = repo().join("crates/cli/tests/cu/exec_faults.cu").display().to_string();
    let asserts: Vec<&str> = err.lines().filter(|l| l.contains("Assertion `")).filter(|l| l.contains("block: [")).collect();
    let want: Vec<String> = [30, 31]
        .iter()
        .map(|t| format!("{src}:16: void speak_then_fail(int): block: [0,0,0], thread: [{t},0,0] Assertion `threadIdx.x < limit` failed."))
        .collect();
    assert_eq!(asserts, want, "{err}");
    let (launches, insts) = table_row(&err, "speak_then_fail");
    assert_eq!(launches, 1, "{err}");
    assert!(insts > 0, "the faulted launch's warp instructions up to the fault:\n{err}");
    // A plain run does not mention reports.
    assert!(!err.contains("--report-launches"), "{err}");
}

/// Template instances are two rows named with their template arguments.
#[test]
fn template_instances_are_apart_in_the_exec_table() {
    let o = exec_with(&[], exec_faults());
    let err = text(&o.stderr);
    assert_eq!(table_row(&err, "axpy<float>").0, 1, "{err}");
    assert_eq!(table_row(&err, "axpy<double>").0, 1, "{err}");
    assert_eq!(table_row(&err, "tick").0, 22, "{err}");
}

/// `--report` past its page limit says at exit how many launches it left out and how to get
/// them; with the limit raised the faulted launch has a page with its fault, and `--trace`
/// holds the launches before the fault and the fault.
#[test]
fn reports_say_what_they_left_out_and_keep_the_faulted_launch() {
    let exe = exec_faults();
    let html = tmp().join("faults-report.html");
    let o = exec_with(&["--report", html.to_str().unwrap()], exe);
    let err = text(&o.stderr);
    assert!(err.contains("has pages for the first 20 of 25 launches; 5 were left out (rerun with --report-launches 25"), "{err}");
    assert!(!tmp().join("faults-report-21.html").exists());
    let html = tmp().join("faults-all.html");
    let trace = tmp().join("faults-trace.json");
    let o = exec_with(&["--report", html.to_str().unwrap(), "--report-launches", "25", "--trace", trace.to_str().unwrap()], exe);
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert!(out.contains("before the assert: thread 31\n"), "timing mode keeps the printf output too:\n{out}");
    assert!(!err.contains("left out"), "{err}");
    let index = std::fs::read_to_string(&html).unwrap();
    assert!(index.contains("faults-all-25.html") && index.contains("speak_then_fail (faulted)"), "{index}");
    assert!(index.contains("axpy&lt;float&gt;"), "{index}");
    let page = std::fs::read_to_string(tmp().join("faults-all-25.html")).unwrap();
    assert!(page.contains("device assert failed"), "the page shows the fault");
    let t: serde_json::Value = serde_json::from_slice(&std::fs::read(&trace).unwrap()).unwrap();
    let ev = t["traceEvents"].as_array().unwrap();
    assert!(ev.iter().any(|e| e["name"].as_str().is_some_and(|n| n.contains("speak_then_fail") && n.contains("faulted"))), "{t}");
    assert!(ev.len() > 24, "the launches before the fault are in the trace: {} events", ev.len());
}

/// An out-of-bounds store: the program sees `cudaErrorIllegalAddress` at the synchronise and
/// after (sticky), as on the H200; warpsim says on stderr where the fault was.
#[test]
fn oob_sees_the_illegal_address_and_warpsim_names_the_thread() {
    let exe = build("oob", "oob", true);
    let o = exec(&exe, &[]);
    same_as_h200("oob", &o);
    let err = text(&o.stderr);
    assert!(err.contains("block (0,0,0), thread (0,0,0)"), "{err}");
}

/// nvcc's default links NVIDIA's runtime into the program, which asks the driver for
/// undocumented tables: the program gets one clear message to rebuild (the H200 ran it).
#[test]
fn a_static_cudart_build_gets_one_rebuild_message() {
    let exe = build("vector_add", "vector_add_static", false);
    let o = exec(&exe, &[]);
    let err = text(&o.stderr);
    assert_eq!(err.matches("nvcc -cudart shared").count(), 1, "{err}");
    assert!(!text(&o.stdout).contains("PASSED"), "{}", text(&o.stdout));
    assert!(h200("vector_add_static", "stdout").contains("PASSED"));
}

/// The runtime API beyond the recorded programs (device properties against attributes,
/// symbols, launch errors, function attributes, occupancy, pointer kinds, streams, events,
/// error names, reset): the program checks each answer against another way to it.
#[test]
fn the_runtime_api_answers_agree_with_each_other() {
    self_checking_more_than("runtime_api", 70);
}

/// Copies a GPU refuses (a pointer that is not device memory on a device side, a range longer
/// than its allocation) return `cudaErrorInvalidValue`; the program does not crash.
#[test]
fn bad_copies_are_errors_not_crashes() {
    self_checking_more_than("bad_copies", 6);
}

/// `__managed__` variables live in memory the host code touches directly, both ways.
#[test]
fn managed_variables_are_shared_with_the_host() {
    self_checking("managed_vars");
}

/// Pitched memory: cudaMallocPitch, cudaMemcpy2D(Async), cudaMemset2D(Async), cudaMalloc3D,
/// cudaMemcpy3D(Async), cudaMemset3D(Async), with kernels over the pitched rows.
#[test]
fn pitched_copies_and_sets_move_what_the_host_would() {
    self_checking_more_than("pitched", 30);
}

/// `--default-stream per-thread` renames the stream-ordered calls (`cudaMemcpy_ptds`,
/// `cudaMemcpyAsync_ptsz`, `cudaEventRecord_ptsz`, ...): such a build loads and runs, two host
/// threads each on its default stream.
#[test]
fn a_per_thread_default_stream_build_runs() {
    let out = self_checking_with("per_thread", &["--default-stream", "per-thread"]);
    assert!(out.contains("cudaMemcpy (cudaMemcpy_ptds)"), "{out}");
}

/// Stream capture: launches, a set and a copy captured from a stream replay in order each time
/// the instantiated graph is launched, and nothing runs while capturing.
#[test]
fn a_captured_graph_replays_its_work_in_order() {
    self_checking("graph");
}

/// CUDA 12's runtime wheels (`nvidia/cuda_runtime`, `nvidia/cuda_nvcc` under the folder
/// `$WARPSIM_CUDA12` names, or a venv's site-packages), when installed.
fn cuda12() -> Option<PathBuf> {
    let mut candidates: Vec<PathBuf> =
        std::env::var_os("WARPSIM_CUDA12").filter(|v| !v.is_empty()).map(PathBuf::from).into_iter().collect();
    for venv in [repo().join(".venv"), PathBuf::from("/tmp/nvenv")] {
        if let Ok(lib) = std::fs::read_dir(venv.join("lib")) {
            candidates.extend(lib.flatten().map(|e| e.path().join("site-packages")));
        }
    }
    candidates.into_iter().find(|d| d.join("nvidia/cuda_runtime/lib/libcudart.so.12").is_file())
}

/// A CUDA 12 program, linked against CUDA 12's `libcudart.so.12` as nvcc 12 links one (its
/// symbols at version `libcudart.so.12`), runs on warpsim's runtime loaded under that name,
/// which fills CUDA 12's `cudaDeviceProp` and says it is CUDA 12.
#[test]
fn a_cuda_12_program_runs_on_libcudart_so_12() {
    let Some(dir) = cuda12() else {
        eprintln!("SKIPPED: no CUDA 12 runtime (pip install nvidia-cuda-runtime-cu12 nvidia-cuda-nvcc-cu12, or set WARPSIM_CUDA12)");
        return;
    };
    let exe = tmp().join("cuda12");
    let o = Command::new("cc")
        .arg("-I")
        .arg(dir.join("nvidia/cuda_runtime/include"))
        .arg("-I")
        .arg(dir.join("nvidia/cuda_nvcc/include"))
        .arg(repo().join("crates/cli/tests/cu/cuda12.c"))
        .arg("-L")
        .arg(dir.join("nvidia/cuda_runtime/lib"))
        .args(["-l:libcudart.so.12", "-o"])
        .arg(&exe)
        .output()
        .expect("running cc");
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = exec(&exe, &[]);
    let out = text(&o.stdout);
    let fails: Vec<&str> = out.lines().filter(|l| !l.starts_with("ok ")).collect();
    assert_eq!(fails, ["0 failed"], "stdout:\n{out}\nstderr:\n{}", text(&o.stderr));
    assert!(out.lines().count() > 10, "{out}");
}

/// `--check` names the host call site of the launch whose checkers found something: the
/// function and, with `-g`, the file and line; without debug info, the function alone.
#[test]
fn check_names_the_host_call_site_of_the_launch() {
    let cu = repo().join("crates/cli/tests/cu/check_site.cu");
    let src = std::fs::read_to_string(&cu).unwrap();
    let line = src.lines().position(|l| l.contains("// SITE")).unwrap() + 1;
    for (out, flags, want) in [
        ("check_site_g", &["-g"][..], "from launch_racy(int*) (".to_string()),
        ("check_site", &[][..], "from launch_racy(int*)):".to_string()),
    ] {
        let exe = build_file(&cu, out, true, flags);
        let o = Command::new(env!("CARGO_BIN_EXE_warpsim"))
            .env("WARPSIM_LIB_DIR", lib_dir())
            .args(["exec", "--check", "--"])
            .arg(&exe)
            .output()
            .unwrap();
        let err = text(&o.stderr);
        assert_eq!(text(&o.stdout), "cudaSuccess\n", "{err}");
        let head = err.lines().find(|l| l.starts_with("warpsim check: kernel `_Z4racyPi`")).unwrap_or_else(|| panic!("no report:\n{err}"));
        assert!(head.contains(&want), "{flags:?}: {head}");
        if flags.is_empty() {
            assert!(!head.contains(".cu:"), "no line without debug info: {head}");
        } else {
            assert!(head.ends_with(&format!("check_site.cu:{line})):")), "the line marked SITE ({line}): {head}");
        }
        // Without --check nothing is captured and nothing said.
        let plain = exec(&exe, &[]);
        assert!(!text(&plain.stderr).contains("launch_racy"), "{}", text(&plain.stderr));
    }
}

/// Builds and runs `tests/cu/NAME.cu`, a program that prints `ok ...` for each check that
/// holds and `0 failed` at the end; asserts that nothing else is printed and it exits 0.
/// Returns its stdout.
fn self_checking(name: &str) -> String {
    self_checking_with(name, &[])
}

/// [`self_checking`], asserting that the program printed more than `lines` lines (its checks
/// all ran).
fn self_checking_more_than(name: &str, lines: usize) {
    let out = self_checking(name);
    assert!(out.lines().count() > lines, "{out}");
}

/// [`self_checking`] with nvcc's `flags` added.
fn self_checking_with(name: &str, flags: &[&str]) -> String {
    let exe = build_file(&repo().join(format!("crates/cli/tests/cu/{name}.cu")), name, true, flags);
    let o = exec(&exe, &[]);
    let out = text(&o.stdout);
    let fails: Vec<&str> = out.lines().filter(|l| !l.starts_with("ok ")).collect();
    assert_eq!(fails, ["0 failed"], "stdout:\n{out}\nstderr:\n{}", text(&o.stderr));
    assert_eq!(o.status.code(), Some(0));
    // The same lines as on the H200, where it was recorded (calibration/run_rdc_h200.sh).
    let recording = if flags.contains(&"-g") { format!("{name}_g") } else { name.to_string() };
    if programs().join("h200").join(format!("{recording}.stdout")).exists() {
        same_as_h200(&recording, &o);
    }
    out
}

/// `warpsim run --json` of one launch of `kernel` from `ptx`.
fn run_json(ptx: &Path, kernel: &str, grid: &str, block: &str, params: &[&str]) -> serde_json::Value {
    let out = tmp().join(format!("run-{kernel}"));
    let mut c = Command::new(env!("CARGO_BIN_EXE_warpsim"));
    c.arg("run").arg(ptx).args(["--kernel", kernel, "--grid", grid, "--block", block, "--json", "--out"]).arg(&out);
    for p in params {
        c.args(["--param", p]);
    }
    let o = c.output().unwrap();
    assert!(o.status.success(), "warpsim run {kernel}: {}", text(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn metric(run: &serde_json::Value, names: &[&str]) -> u64 {
    names.iter().map(|n| run["metrics"][*n].as_u64().unwrap_or_else(|| panic!("no metric {n}"))).sum()
}

/// The per-kernel totals `warpsim exec` reports for runtime_features (`scale` twice, one
/// launch per stream; `count` once, whose last warp diverges) are what `warpsim run` gives for
/// the same launches of the same PTX (nvcc's, as the program carries it).
#[test]
fn the_exec_table_agrees_with_warpsim_run_on_the_same_launches() {
    let json = tmp().join("runtime_features.json");
    let o = Command::new(env!("CARGO_BIN_EXE_warpsim"))
        .env("WARPSIM_LIB_DIR", lib_dir())
        .arg("exec")
        .arg("--json")
        .arg(&json)
        .arg("--")
        .arg(runtime_features())
        .output()
        .unwrap();
    same_as_h200("runtime_features", &o);
    let table = text(&o.stderr);
    let exec: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let ptx = tmp().join("runtime_features.ptx");
    let c = Command::new(nvcc())
        .args(["-ptx", "-arch=sm_90"])
        .arg(programs().join("runtime_features.cu"))
        .arg("-o")
        .arg(&ptx)
        .output()
        .unwrap();
    assert!(c.status.success(), "{}", text(&c.stderr));
    let half = "32768";
    let scale =
        run_json(&ptx, "_Z5scalePKfPfi", "128", "256", &["in:f32[32768]=unit_f32:in", "out:f32[32768]=zeros:out", &format!("i32={half}")]);
    let count = run_json(&ptx, "_Z5countPii", "4", "256", &["m:i32[1024]=zeros:out", "i32=1000"]);
    for (kernel, short, run, launches) in [("_Z5scalePKfPfi", "scale", &scale, 2u64), ("_Z5countPii", "count", &count, 1)] {
        let k =
            exec["kernels"].as_array().unwrap().iter().find(|k| k["kernel"] == kernel).unwrap_or_else(|| panic!("{kernel} not in {exec}"));
        let n = |v: &serde_json::Value| v.as_u64().unwrap();
        assert_eq!(n(&k["launches"]), launches, "{kernel}");
        assert_eq!(n(&k["warp_instructions"]), launches * n(&run["warp_instructions"]), "{kernel}");
        assert_eq!(n(&k["thread_instructions"]), launches * n(&run["thread_instructions"]), "{kernel}");
        let divergent = metric(run, &["smsp__sass_branch_targets_threads_divergent.sum"]);
        assert_eq!(n(&k["divergent_branches"]), launches * divergent, "{kernel}");
        let requests = metric(run, &["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"]);
        let sectors = metric(run, &["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"]);
        assert_eq!((n(&k["global_requests"]), n(&k["global_sectors"])), (launches * requests, launches * sectors), "{kernel}");
        let row =
            table.lines().find(|l| l.split_whitespace().next() == Some(short)).unwrap_or_else(|| panic!("no {short} row in:\n{table}"));
        let cols: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cols[1..3], [launches.to_string(), n(&k["warp_instructions"]).to_string()], "{row}");
    }
    assert_eq!(metric(&count, &["smsp__sass_branch_targets_threads_divergent.sum"]), 1, "count's last warp splits at i = 1000");
}

/// `warpsim run kernel.cu` compiles with nvcc when it finds one: the PTX kept in the output
/// folder is NVVM's (with line info), and the kernel computes the right answer from it.
#[test]
fn warpsim_run_compiles_cu_with_nvcc() {
    let out = tmp().join("run-saxpy");
    let mut c = Command::new(env!("CARGO_BIN_EXE_warpsim"));
    c.env("WARPSIM_NVCC", nvcc()).env_remove("WARPSIM_CLANG").arg("run").arg(repo().join("crates/cli/tests/cu/saxpy.cu"));
    c.args(["--grid", "4", "--block", "256", "--out"]).arg(&out);
    for p in ["i32=1000", "f32=2.5", "x:f32[1024]=unit_f32:in", "y:f32[1024]=iota"] {
        c.args(["--param", p]);
    }
    let o = c.output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let ptx = std::fs::read_to_string(out.join("saxpy.ptx")).unwrap();
    assert!(ptx.contains("Generated by NVIDIA NVVM Compiler") && ptx.contains(".loc"), "{}", &ptx[..ptx.len().min(300)]);
    let y = std::fs::read(out.join("y.npy")).unwrap();
    let y: Vec<f32> = y[y.len() - 4096..].chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().unwrap())).collect();
    for (i, &v) in y.iter().enumerate() {
        // nvcc contracts a * x + y into one fma (-fmad=true, its default and the GPU's answer).
        let want = if i < 1000 { 2.5f32.mul_add(warpsim_launch::unit_f32(i as u64), i as f32) } else { i as f32 };
        assert_eq!(v, want, "y[{i}]");
    }
}

/// Runs nvcc with `args` (in the temporary folder), asserting it succeeds.
fn nvcc_run(args: &[&std::ffi::OsStr]) {
    let o = Command::new(nvcc()).current_dir(tmp()).args(args).output().expect("running nvcc");
    assert!(o.status.success(), "nvcc {args:?}:\n{}", String::from_utf8_lossy(&o.stderr));
}

/// The output of an `-rdc` program: the H200's when `tests/programs/h200/NAME.stdout` is
/// recorded (calibration/run_rdc_h200.sh), else the program's own checks against the host's
/// arithmetic (`ok ...` lines, `0 failed`, exit code 0) and the device's `printf` lines.
fn rdc_output(recording: &str, o: &Output, device_lines: &[&str]) {
    if programs().join("h200").join(format!("{recording}.stdout")).is_file() {
        return same_as_h200(recording, o);
    }
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert!(!out.contains("FAILED") && out.ends_with("\n0 failed\n"), "{recording}: stdout:\n{out}\nstderr:\n{err}");
    assert!(out.lines().filter(|l| l.starts_with("ok ")).count() >= 4, "{out}");
    for l in device_lines {
        assert!(out.lines().any(|o| o == *l), "{recording}: no `{l}` from the device in:\n{out}");
    }
    assert_eq!(o.status.code(), Some(0), "{recording}: stderr:\n{err}");
}

/// What rdc_a.cu's kernels print (one from each unit).
const RDC_PRINTF: [&str; 2] = ["evaluate in unit 1: scale=3", "tally in unit 2: hits=100 scale=4"];

fn rdc_sources() -> [PathBuf; 2] {
    [programs().join("rdc_a.cu"), programs().join("rdc_b.cu")]
}

/// Separate compilation in one nvcc command (`-rdc=true`): kernels in both units, device
/// functions and `__device__`, `__constant__` and `__managed__` variables defined in one unit
/// and used from the other, weak and internal functions of one name in both. nvcc's link stub
/// registers one version-2 fatbin wrapper listing both units' relocatable fatbins; the runtime
/// links their PTX with the driver's linker.
#[test]
fn an_rdc_program_built_in_one_step_runs() {
    let [a, b] = rdc_sources();
    let exe = rdc_build("rdc", &a, &b, &[]);
    rdc_output("rdc", &exec(&exe, &[]), &RDC_PRINTF);
}

/// `nvcc -arch=sm_90 [extra] -rdc=true -cudart shared a b -o tmp/NAME`, linked against warpsim's libraries.
fn rdc_build(name: &str, a: &Path, b: &Path, extra: &[&str]) -> PathBuf {
    let mut flags: Vec<&std::ffi::OsStr> = extra.iter().map(std::ffi::OsStr::new).collect();
    flags.extend::<[&std::ffi::OsStr; 3]>(["-rdc=true".as_ref(), a.as_os_str(), b.as_os_str()]);
    nvcc_shared(name, &flags)
}

/// `nvcc -arch=sm_90 -cudart shared -L <warpsim's libraries> inputs... -o tmp/NAME`.
fn nvcc_shared(name: &str, inputs: &[&std::ffi::OsStr]) -> PathBuf {
    let exe = tmp().join(name);
    let mut args: Vec<&std::ffi::OsStr> = vec!["-arch=sm_90".as_ref(), "-cudart".as_ref(), "shared".as_ref(), "-L".as_ref()];
    args.push(lib_dir().as_os_str());
    args.extend_from_slice(inputs);
    args.extend::<[&std::ffi::OsStr; 2]>(["-o".as_ref(), exe.as_os_str()]);
    nvcc_run(&args);
    exe
}

/// The same program compiled unit by unit (`nvcc -dc`, with line info) and linked by nvcc;
/// with the device link made apart (`nvcc -dlink`) and the host link by g++; and with one
/// unit in a static library (`nvcc -lib`).
#[test]
fn an_rdc_program_built_in_steps_runs() {
    let [a, b] = rdc_sources();
    let lib = lib_dir();
    for (src, obj) in [(&a, "rdc_a.o"), (&b, "rdc_b.o")] {
        nvcc_run(&["-arch=sm_90".as_ref(), "-lineinfo".as_ref(), "-dc".as_ref(), src.as_os_str(), "-o".as_ref(), obj.as_ref()]);
    }
    let two_step = nvcc_shared("rdc_two_step", &["rdc_a.o".as_ref(), "rdc_b.o".as_ref()]);
    rdc_output("rdc_two_step", &exec(&two_step, &[]), &RDC_PRINTF);

    nvcc_run(&["-arch=sm_90".as_ref(), "-dlink".as_ref(), "rdc_a.o".as_ref(), "rdc_b.o".as_ref(), "-o".as_ref(), "rdc_dlink.o".as_ref()]);
    let gxx = tmp().join("rdc_dlink");
    let o = Command::new("g++")
        .current_dir(tmp())
        .args(["rdc_a.o", "rdc_b.o", "rdc_dlink.o", "-L"])
        .arg(lib)
        .args(["-lcudart", "-o"])
        .arg(&gxx)
        .output()
        .expect("running g++");
    assert!(o.status.success(), "g++: {}", text(&o.stderr));
    rdc_output("rdc_dlink", &exec(&gxx, &[]), &RDC_PRINTF);

    // rdc_b.o in a static library of device code (`nvcc -lib`), linked with rdc_a.o.
    nvcc_run(&["-arch=sm_90".as_ref(), "-lib".as_ref(), "rdc_b.o".as_ref(), "-o".as_ref(), "librdc_b.a".as_ref()]);
    let from_lib = nvcc_shared("rdc_lib", &["rdc_a.o".as_ref(), "-L".as_ref(), tmp().as_os_str(), "-lrdc_b".as_ref()]);
    rdc_output("rdc_lib", &exec(&from_lib, &[]), &RDC_PRINTF);
}

/// The driver's linker with several PTX inputs (the two units' PTX, through `cuLinkAddData`),
/// and the links that must fail: a unit alone (undefined functions), a unit twice (symbols
/// defined twice), each with its error log naming a symbol.
#[test]
fn the_driver_links_several_ptx_inputs() {
    let [a, b] = rdc_sources();
    nvcc_run(&["-arch=sm_90".as_ref(), "-rdc=true".as_ref(), "-ptx".as_ref(), a.as_os_str(), b.as_os_str()]);
    let exe = tmp().join("rdc_driver_link");
    let lib = lib_dir();
    let src = programs().join("rdc_driver_link.cu");
    nvcc_run(&["-arch=sm_90".as_ref(), src.as_os_str(), "-L".as_ref(), lib.as_os_str(), "-lcuda".as_ref(), "-o".as_ref(), exe.as_os_str()]);
    let (pa, pb) = (tmp().join("rdc_a.ptx"), tmp().join("rdc_b.ptx"));
    let o = exec(&exe, &[pa.to_str().unwrap(), pb.to_str().unwrap()]);
    rdc_output("rdc_driver_link", &o, &["evaluate in unit 1: scale=3", "tally in unit 2: hits=64 scale=3"]);
    let err = text(&o.stderr);
    assert!(err.contains("unresolved symbol `_Z4polyf`") || err.contains("unresolved symbol `_Z4bumpi`"), "{err}");
    assert!(err.contains("duplicate symbol `") && err.contains("defined in rdc_b.ptx (kernel _Z5tallyPi) and in rdc_b_again.ptx"), "{err}");
}

/// A fault in a device function of the other unit (`-lineinfo`): the program sees
/// `cudaErrorIllegalAddress` as on the GPU, and warpsim's message names the line of that unit's
/// source (each unit's `.file` indices are renumbered when the units are linked).
#[test]
fn an_rdc_fault_names_the_line_in_the_other_unit() {
    let (a, b) = (programs().join("rdc_fault_a.cu"), programs().join("rdc_fault_b.cu"));
    let exe = rdc_build("rdc_fault", &a, &b, &["-lineinfo"]);
    let o = exec(&exe, &[]);
    if programs().join("h200/rdc_fault.stdout").is_file() {
        same_as_h200("rdc_fault", &o);
    } else {
        assert_eq!(text(&o.stdout), "cudaErrorIllegalAddress\n", "{}", text(&o.stderr));
    }
    let line = std::fs::read_to_string(&b).unwrap().lines().position(|l| l.contains("// FAULT")).unwrap() + 1;
    let err = text(&o.stderr);
    assert!(err.contains(&format!("rdc_fault_b.cu:{line}")), "no rdc_fault_b.cu:{line} in:\n{err}");
}

/// `exec --gpu` takes a preset file as `run --gpu` does: the program's output is the same and
/// its timing section is the one the launches run on (a DRAM latency 20x the H200's).
#[test]
fn exec_runs_on_a_preset_file() {
    let exe = build("vector_add", "vector_add_preset", true);
    let mut preset: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(repo().join("crates/gpu/presets/h200.json")).unwrap()).unwrap();
    preset["timing"] = serde_json::json!({ "dram_latency": 13800 });
    let file = tmp().join("slow_dram.json");
    std::fs::write(&file, preset.to_string()).unwrap();
    let cycles = |gpu: &Path| {
        let json = tmp().join(format!("preset_{}.json", gpu.file_stem().unwrap().to_string_lossy()));
        let o = Command::new(env!("CARGO_BIN_EXE_warpsim"))
            .env("WARPSIM_LIB_DIR", lib_dir())
            .args(["exec", "--mode", "timing", "--gpu"])
            .arg(gpu)
            .arg("--json")
            .arg(&json)
            .arg("--")
            .arg(&exe)
            .output()
            .unwrap();
        same_as_h200("vector_add", &o);
        let j: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        j["launches"].as_array().unwrap().iter().map(|l| l["cycles"].as_u64().unwrap()).sum::<u64>()
    };
    let (builtin, slow) = (cycles(Path::new("h200")), cycles(&file));
    assert!(slow > builtin + 10_000, "the file's DRAM latency was not used: {slow} vs {builtin} cycles");
}
