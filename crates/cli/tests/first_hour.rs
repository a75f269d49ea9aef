//! What a new user hits in the first hour (issue 16), on the command line:
//! launches a GPU would refuse, runaway loops, checks that stopped early,
//! parameters of the wrong type and output names that are paths.

use std::path::PathBuf;
use std::process::{Command, Output};

const HEADER: &str = ".version 7.0\n.target sm_80\n.address_size 64\n";

/// `out[tid] = tid`.
const STORE: &str = ".visible .entry k(.param .u64 out)\n{\n.reg .b32 %r<4>; .reg .b64 %rd<4>;\n\
    mov.u32 %r1, %tid.x; ld.param.u64 %rd1, [out]; mul.wide.u32 %rd2, %r1, 4; add.s64 %rd3, %rd1, %rd2;\n\
    st.global.u32 [%rd3], %r1;\nret;\n}\n";

/// A loop that runs 2^32 times.
const SPIN: &str = ".visible .entry k(.param .u64 out)\n{\n.reg .pred %p<2>; .reg .b32 %r<4>; .reg .b64 %rd<4>;\n\
    mov.u32 %r1, 0;\nL: add.u32 %r1, %r1, 1; setp.ne.u32 %p1, %r1, 0; @%p1 bra L;\n\
    ld.param.u64 %rd1, [out]; st.global.u32 [%rd1], %r1;\nret;\n}\n";

/// `out[0] = n` for an `.s32 n`.
const SCALAR: &str = ".visible .entry k(.param .u64 out, .param .s32 n)\n{\n.reg .b32 %r<4>; .reg .b64 %rd<4>;\n\
    ld.param.u64 %rd1, [out]; ld.param.s32 %r1, [n]; st.global.u32 [%rd1], %r1;\nret;\n}\n";

struct Dir(PathBuf);

impl Dir {
    fn new(tag: &str) -> Dir {
        let d = std::env::temp_dir().join(format!("warpsim-first-hour-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }

    fn ptx(&self, body: &str) -> String {
        let p = self.0.join("k.ptx");
        std::fs::write(&p, format!("{HEADER}{body}")).unwrap();
        p.display().to_string()
    }

    fn warpsim(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_warpsim")).current_dir(&self.0).args(args).output().expect("running warpsim")
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

#[test]
fn launches_a_gpu_refuses_are_refused_with_the_drivers_error() {
    let d = Dir::new("refuse");
    let k = d.ptx(STORE);
    for mode in [&["run"][..], &["check"], &["run", "--mode", "timing"]] {
        let o = d.warpsim(&[mode, &[k.as_str(), "--param", "out:u32[32]=zeros:out", "--shared", "1000000"]].concat());
        assert!(!o.status.success() && text(&o).contains("cudaErrorInvalidValue"), "{mode:?}: {}", text(&o));
        let o = d.warpsim(&[mode, &[k.as_str(), "--param", "out:u32[32]=zeros:out", "--block", "2048"]].concat());
        assert!(!o.status.success() && text(&o).contains("cudaErrorInvalidValue"), "{mode:?}: {}", text(&o));
    }
    let o = d.warpsim(&["run", &k, "--param", "out:u32[32]=zeros:out", "--shared", "100000"]);
    assert!(!o.status.success() && text(&o).contains("--opt-in"), "{}", text(&o));
    let o = d.warpsim(&["run", &k, "--param", "out:u32[32]=zeros:out", "--shared", "100000", "--opt-in"]);
    assert!(o.status.success(), "{}", text(&o));
}

#[test]
fn a_runaway_loop_stops_in_seconds_and_says_how_to_raise_the_budget() {
    let d = Dir::new("spin");
    let k = d.ptx(SPIN);
    let t0 = std::time::Instant::now();
    let o = d.warpsim(&["run", &k, "--param", "out:u32[1]=zeros:out"]);
    assert!(!o.status.success() && text(&o).contains("--max-instructions N"), "{}", text(&o));
    assert!(t0.elapsed().as_secs() < 60, "the default budget took {:?}", t0.elapsed());
    let o = d.warpsim(&["run", &k, "--param", "out:u32[1]=zeros:out", "--max-instructions", "100000000000", "--timeout", "1"]);
    assert_eq!(o.status.code(), Some(124), "{}", text(&o));
    assert!(text(&o).contains("--timeout 1 s"), "{}", text(&o));
}

#[test]
fn check_does_not_call_a_launch_it_stopped_clean() {
    let d = Dir::new("check-stopped");
    let k = d.ptx(SPIN);
    let o = d.warpsim(&["check", &k, "--param", "out:u32[1]=zeros:out", "--max-instructions", "10000"]);
    assert!(!o.status.success(), "{}", text(&o));
    assert!(!text(&o).contains("no problems found") && text(&o).contains("stopped before it finished"), "{}", text(&o));
}

#[test]
fn scalars_of_the_wrong_type_are_converted_exactly_or_refused() {
    let d = Dir::new("scalar");
    let k = d.ptx(SCALAR);
    let o = d.warpsim(&["run", &k, "--param", "out:i32[1]=zeros:out", "--param", "f64=1000", "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(std::fs::read(d.0.join("warpsim-out/out.npy")).unwrap().ends_with(&1000i32.to_le_bytes()));
    let o = d.warpsim(&["run", &k, "--param", "out:i32[1]=zeros:out", "--param", "i64=5000000000"]);
    assert!(!o.status.success() && text(&o).contains("`n`") && text(&o).contains(".s32") && text(&o).contains("i64"), "{}", text(&o));
}

#[test]
fn a_negative_int_reaches_a_u32_parameter() {
    // nvcc and clang declare a C++ `int` parameter as `.u32`.
    let d = Dir::new("negative-int");
    let k = d.ptx(&SCALAR.replace(".param .s32 n", ".param .u32 n").replace("ld.param.s32", "ld.param.u32"));
    for given in ["i32=-3", "f64=-3", "i64=-3"] {
        let o = d.warpsim(&["run", &k, "--param", "out:i32[1]=zeros:out", "--param", given]);
        assert!(o.status.success(), "{given}: {}", text(&o));
        assert!(std::fs::read(d.0.join("warpsim-out/out.npy")).unwrap().ends_with(&(-3i32).to_le_bytes()), "{given}");
    }
}

#[test]
fn output_names_may_not_leave_the_output_folder() {
    let d = Dir::new("names");
    let k = d.ptx(STORE);
    let o = d.warpsim(&["run", &k, "--param", "../../evil:u32[32]=zeros:out"]);
    assert!(!o.status.success() && text(&o).contains("file name"), "{}", text(&o));
}

#[test]
fn flags_that_would_be_ignored_are_refused() {
    let d = Dir::new("flags");
    let k = d.ptx(STORE);
    let p = ["--param", "out:u32[32]=zeros:out"];
    for (flags, says) in [
        (&["--timeline"][..], "--mode timing"),
        (&["--lockstep"], "needs --check"),
        (&["--mode", "timing", "--gpu", "h200", "--warp-size", "64"], "--warp-size 64 does not match"),
    ] {
        let o = d.warpsim(&[&["run", k.as_str()][..], &p, flags].concat());
        assert!(!o.status.success() && text(&o).contains(says), "{flags:?}: {}", text(&o));
    }
    let o = d.warpsim(&[&["run", k.as_str(), "--check", "--lockstep"][..], &p].concat());
    assert!(o.status.success(), "{}", text(&o));
}

#[test]
fn cpp_files_are_not_parsed_as_ptx() {
    let d = Dir::new("cpp");
    let f = d.0.join("k.cpp");
    std::fs::write(&f, "#include <cstdio>\nint main() {}\n").unwrap();
    let o = d.warpsim(&["run", f.to_str().unwrap()]);
    assert!(!o.status.success() && text(&o).contains("is not PTX") && !text(&o).contains("unexpected character"), "{}", text(&o));
}

#[test]
fn faults_name_the_buffer_and_element_and_suggest_shared() {
    let d = Dir::new("fault");
    let k = d.ptx(STORE);
    // One past the end faults with exact bounds (by default it is served, as a GPU serves it, with a warning).
    let o = d.warpsim(&["run", &k, "--param", "out:u32[32]=zeros:out", "--block", "64", "--strict-bounds"]);
    assert!(!o.status.success() && text(&o).contains("element 32 of `out` (32 elements of u32)"), "{}", text(&o));
    let o = d.warpsim(&["run", &k, "--param", "out:u32[32]=zeros:out", "--block", "64"]);
    assert!(o.status.success() && text(&o).contains("warning: out-of-bounds global store") && text(&o).contains("served"), "{}", text(&o));
    let dynamic = ".visible .entry k()\n{\n.extern .shared .align 4 .b8 s[];\n.reg .b32 %r<4>;\n\
        mov.u32 %r1, %tid.x; shl.b32 %r2, %r1, 2; mov.u32 %r3, s; add.u32 %r3, %r3, %r2; st.shared.u32 [%r3], %r1;\nret;\n}\n";
    let k = d.ptx(dynamic);
    let o = d.warpsim(&["run", &k]);
    assert!(!o.status.success() && text(&o).contains("--shared BYTES"), "{}", text(&o));
    assert!(d.warpsim(&["run", &k, "--shared", "128"]).status.success());
}

/// A manifest of one case: [`STORE`] by 64 threads into 32 elements, so the second warp's
/// stores are past the end.
fn past_end_manifest(d: &Dir) -> String {
    d.ptx(STORE);
    let m = d.0.join("m.json");
    let case = r#"{"cases":[{"name":"c1","ptx":"k.ptx","kernel":"k","grid":1,"block":64,
        "params":[{"kind":"buffer","name":"out","dtype":"u32","count":32,"init":"zeros","role":"out"}]}]}"#;
    std::fs::write(&m, case).unwrap();
    m.display().to_string()
}

#[test]
fn corpus_prints_a_checked_fault_once() {
    let d = Dir::new("corpus-once");
    let m = past_end_manifest(&d);
    let o = d.warpsim(&["corpus", &m, "--check", "--strict-bounds"]);
    assert_eq!(text(&o).matches("PTX line 8").count(), 1, "{}", text(&o));
}

#[test]
fn corpus_groups_a_cases_diagnostics_by_line_and_kind() {
    let d = Dir::new("corpus-grouped");
    // Served past the end: one out_of_bounds place per lane of the second warp.
    let m = past_end_manifest(&d);
    let grouped = text(&d.warpsim(&["corpus", &m, "--check"]));
    let verbose = text(&d.warpsim(&["corpus", &m, "--check", "--verbose"]));
    let places = verbose.matches("out_of_bounds at PTX line 8").count();
    assert!(places > 1, "{verbose}");
    assert_eq!(grouped.matches("out_of_bounds at PTX line 8").count(), 1, "{grouped}");
    assert!(grouped.contains(&format!("[{places} places, ")), "{grouped}");
}

#[test]
fn the_mi300x_has_compute_units() {
    let d = Dir::new("cus");
    let k = d.ptx(STORE);
    let o = d.warpsim(&["run", &k, "--param", "out:u32[64]=zeros:out", "--block", "64", "--mode", "timing", "--gpu", "mi300x"]);
    assert!(o.status.success() && text(&o).contains("304 CUs") && !text(&o).contains("SMs"), "{}", text(&o));
}

/// `out[0] += tid`: a read-modify-write race among every thread.
const RACE: &str = ".visible .entry k(.param .u64 out)\n{\n.reg .b32 %r<4>; .reg .b64 %rd<4>;\n\
    mov.u32 %r1, %tid.x; ld.param.u64 %rd1, [out]; ld.global.u32 %r2, [%rd1]; add.u32 %r2, %r2, %r1;\n\
    st.global.u32 [%rd1], %r2;\nret;\n}\n";

#[test]
fn a_report_is_written_when_the_launch_faults_and_shows_the_fault_and_the_findings() {
    let d = Dir::new("report-fault");
    let k = d.ptx(STORE);
    for check in [false, true] {
        let html = d.0.join(format!("r{check}.html"));
        let mut args =
            vec!["run", &k, "--param", "out:u32[32]=zeros:out", "--block", "64", "--strict-bounds", "--report", html.to_str().unwrap()];
        if check {
            args.push("--check");
        }
        let o = d.warpsim(&args);
        assert!(!o.status.success() && text(&o).contains("up to the fault"), "{}", text(&o));
        let page = std::fs::read_to_string(&html).unwrap_or_else(|e| panic!("no report after a fault ({e}): {}", text(&o)));
        assert!(page.contains("<section id=\"fault\"") && page.contains("element 32 of `out`"), "the fault is not in the report");
        assert!(page.contains("<section id=\"lines\""), "the report lost the part that ran");
        assert_eq!(page.contains("<section id=\"diagnostics\""), check, "findings section only for a checked launch");
    }
    // A checked launch that finishes: its findings, grouped by line, with advice, in the report.
    let k = d.ptx(RACE);
    let html = d.0.join("race.html");
    let o = d.warpsim(&["run", &k, "--param", "out:u32[1]=zeros:out", "--block", "64", "--check", "--report", html.to_str().unwrap()]);
    assert!(!o.status.success(), "the race was not found: {}", text(&o));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<section id=\"diagnostics\"") && page.contains("data race at"), "no findings in the report");
    assert!(page.contains("atomic"), "the advice for a read-modify-write race is missing");
}

#[test]
fn the_terminal_and_the_report_say_the_same_numbers_in_the_same_words() {
    let d = Dir::new("vocabulary");
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let html = d.0.join("tour.html");
    let o = d.warpsim(&[
        "run",
        root.join("demo/kernels.ptx").to_str().unwrap(),
        "--kernel",
        "tour",
        "--grid",
        "8",
        "--block",
        "256",
        "--param",
        "in:f32[8192]=unit_f32:in",
        "--param",
        "out:f32[2048]=zeros:out",
        "--param",
        "i32=4",
        "--report",
        html.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let page = std::fs::read_to_string(&html).unwrap().replace("&#39;", "'").replace("&amp;", "&");
    let mut rows = 0;
    for label in ["threads per warp instruction", "branches", "global loads", "global stores", "shared loads", "other warp instructions"] {
        let line = out.lines().find(|l| l.trim_start().starts_with(label)).unwrap_or_else(|| panic!("no {label:?} row:\n{out}"));
        // `  label   value  (detail)`: the value and the detail, word for word, in the report.
        let rest = line.trim_start()[label.len()..].trim();
        let (value, detail) = rest.split_once("  (").unwrap_or_else(|| panic!("row {line:?} has no detail"));
        let detail = detail.strip_suffix(')').unwrap_or(detail);
        assert!(page.contains(&format!("<td>{label}</td><td>{value}</td>")), "the report does not show {label} = {value:?}");
        assert!(page.contains(detail), "the report does not explain {label} as the terminal does: {detail:?}");
        rows += 1;
    }
    assert_eq!(rows, 6);
    assert!(!out.contains("% used") && !out.contains("warp-level"), "the old words are back:\n{out}");
}

#[test]
fn template_kernels_run_by_their_cpp_name() {
    let d = Dir::new("demangled");
    let k = d.ptx(&STORE.replace("entry k(", "entry _Z4fillIjEvPT_("));
    let o = d.warpsim(&["run", &k, "--kernel", "fill<unsigned int>", "--param", "out:u32[32]=zeros:out"]);
    assert!(o.status.success(), "{}", text(&o));
    let o = d.warpsim(&["run", &k, "--kernel", "fil", "--param", "out:u32[32]=zeros:out"]);
    assert!(o.status.success(), "a unique prefix: {}", text(&o));
    let o = d.warpsim(&["run", &k, "--kernel", "fill<float>", "--param", "out:u32[32]=zeros:out"]);
    assert!(!o.status.success() && text(&o).contains("_Z4fillIjEvPT_ (fill<unsigned int>(unsigned int*))"), "{}", text(&o));
}

#[test]
fn struct_parameters_pass_by_value() {
    // struct { float scale; unsigned n; double bias; }: out = {bits(scale), n, high word of bias}.
    let d = Dir::new("struct");
    let k = d.ptx(
        ".visible .entry k(.param .u64 out, .param .align 8 .b8 cfg[16])\n{\n.reg .b32 %r<4>; .reg .b64 %rd<4>;\n\
         ld.param.u64 %rd1, [out]; ld.param.u32 %r1, [cfg]; ld.param.u32 %r2, [cfg+4]; ld.param.u32 %r3, [cfg+12];\n\
         st.global.u32 [%rd1], %r1; st.global.u32 [%rd1+4], %r2; st.global.u32 [%rd1+8], %r3;\nret;\n}\n",
    );
    let o = d.warpsim(&["run", &k, "--param", "out:u32[3]=zeros:out", "--param", "cfg:{f32=1.5,u32=7,f64=2}"]);
    assert!(o.status.success(), "{}", text(&o));
    let npy = std::fs::read(d.0.join("warpsim-out/out.npy")).unwrap();
    let words: Vec<u32> = npy[npy.len() - 12..].chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
    assert_eq!(words, [1.5f32.to_bits(), 7, (2.0f64.to_bits() >> 32) as u32]);
    // A struct that lays out to another size is refused, naming both sizes.
    let o = d.warpsim(&["run", &k, "--param", "out:u32[3]=zeros:out", "--param", "{f32=1.5,u32=7}"]);
    assert!(!o.status.success() && text(&o).contains("16 bytes in the PTX") && text(&o).contains("8 bytes"), "{}", text(&o));
}

/// `s[tid] = tid; out[tid] = s[tid + 1]` with no barrier: a race between different addresses per thread.
const NEIGHBOUR: &str = ".visible .entry k(.param .u64 out)\n{\n.reg .b32 %r<6>; .reg .b64 %rd<8>;\n.shared .align 4 .b8 s[260];\n\
    mov.u32 %r1, %tid.x; mov.u64 %rd4, s; mul.wide.u32 %rd5, %r1, 4; add.s64 %rd6, %rd4, %rd5;\n\
    st.shared.u32 [%rd6], %r1;\nld.shared.u32 %r4, [%rd6+4];\n\
    ld.param.u64 %rd1, [out]; add.s64 %rd3, %rd1, %rd5; st.global.u32 [%rd3], %r4;\nret;\n}\n";

#[test]
fn each_place_of_a_one_address_update_race_advises_atomics_and_other_races_a_barrier() {
    let d = Dir::new("rmw-advice");
    let k = d.ptx(RACE);
    let o = d.warpsim(&["check", &k, "--param", "out:u32[1]=zeros:out", "--block", "64", "--verbose"]);
    let t = text(&o);
    let places: Vec<&str> = t.split("\n\n").filter(|p| p.starts_with("data race")).collect();
    assert!(places.len() >= 2, "expected the read and the write racing: {t}");
    for p in &places {
        let first = p.lines().next().unwrap();
        assert!(first.contains("atomicAdd") && !first.contains("__sync"), "a place of `out[0] += x` advises no atomic: {first}");
    }
    let k = d.ptx(NEIGHBOUR);
    let o = d.warpsim(&["check", &k, "--param", "out:u32[64]=zeros:out", "--block", "64", "--verbose"]);
    let t = text(&o);
    let places: Vec<&str> = t.split("\n\n").filter(|p| p.starts_with("data race")).collect();
    assert!(!places.is_empty(), "the neighbour race was not found: {t}");
    for p in &places {
        let first = p.lines().next().unwrap();
        assert!(first.contains("__sync") && !first.contains("atomicAdd"), "a neighbour race lost its barrier advice: {first}");
    }
}

#[test]
fn a_block_over_the_kernels_maxntid_is_refused_with_the_drivers_error() {
    let d = Dir::new("maxntid");
    let k = d.ptx(&STORE.replacen("(.param .u64 out)", "(.param .u64 out) .maxntid 32, 1, 1", 1));
    let o = d.warpsim(&["run", &k, "--param", "out:u32[64]=zeros:out", "--block", "32"]);
    assert!(o.status.success(), "a block within .maxntid was refused: {}", text(&o));
    for mode in [&["run"][..], &["check"], &["run", "--mode", "timing"]] {
        let o = d.warpsim(&[mode, &[k.as_str(), "--param", "out:u32[64]=zeros:out", "--block", "64"]].concat());
        let t = text(&o);
        assert!(!o.status.success() && t.contains("cudaErrorInvalidValue") && t.contains(".maxntid"), "{mode:?}: {t}");
    }
}

#[test]
fn help_and_the_cpp_error_say_nvcc_comes_first_and_clang_is_the_fallback() {
    let d = Dir::new("nvcc-first");
    let help = text(&d.warpsim(&["run", "--help"]));
    let (nvcc, clang) = (help.find("nvcc").expect("run --help names no nvcc"), help.find("clang").expect("run --help names no clang"));
    assert!(nvcc < clang && help.contains("else with clang"), "{help}");
    let f = d.0.join("k.cpp");
    std::fs::write(&f, "#include <cstdio>\nint main() {}\n").unwrap();
    let t = text(&d.warpsim(&["run", f.to_str().unwrap()]));
    assert!(t.contains("with nvcc if it finds one") && t.contains("else with clang"), "{t}");
}

/// The paths in the checkout that the README names, from the top folders a path may start with.
fn readme_paths(readme: &str) -> Vec<String> {
    const TOPS: [&str; 8] = ["crates/", "tests/", "docs/", "demo/", "calibration/", "examples/", "python/", "../shared/"];
    let b = readme.as_bytes();
    let mut out = Vec::new();
    for (i, _) in readme.char_indices() {
        let boundary = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b"/._-".contains(&b[i - 1]));
        if !boundary || !TOPS.iter().any(|t| readme[i..].starts_with(t)) {
            continue;
        }
        let end = readme[i..].find(|c: char| !(c.is_ascii_alphanumeric() || "/._-".contains(c))).map_or(readme.len(), |e| i + e);
        out.push(readme[i..end].trim_end_matches('.').to_string());
    }
    out
}

#[test]
fn every_path_the_readme_names_exists() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let paths = readme_paths(&readme);
    assert!(paths.iter().any(|p| p == "crates/cli/tests/cu/check_site.cu"), "the README's call-site example is gone: {paths:?}");
    assert_eq!(readme_paths("see tests/cu/x.cu and crates/a/tests/b.rs."), ["tests/cu/x.cu", "crates/a/tests/b.rs"]);
    let shared = root.join("../shared").exists();
    let missing: Vec<&String> =
        paths.iter().filter(|p| (shared || !p.starts_with("../shared/")) && !root.join(p.as_str()).exists()).collect();
    assert!(missing.is_empty(), "README paths that do not exist: {missing:?}");
}
