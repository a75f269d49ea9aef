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
        assert!(!o.status.success() && text(&o).contains("cudaErrorInvalidConfiguration"), "{mode:?}: {}", text(&o));
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
    let o = d.warpsim(&["run", &k, "--param", "out:u32[32]=zeros:out", "--block", "64"]);
    assert!(!o.status.success() && text(&o).contains("element 32 of `out` (32 elements of u32)"), "{}", text(&o));
    let dynamic = ".visible .entry k()\n{\n.extern .shared .align 4 .b8 s[];\n.reg .b32 %r<4>;\n\
        mov.u32 %r1, %tid.x; shl.b32 %r2, %r1, 2; mov.u32 %r3, s; add.u32 %r3, %r3, %r2; st.shared.u32 [%r3], %r1;\nret;\n}\n";
    let k = d.ptx(dynamic);
    let o = d.warpsim(&["run", &k]);
    assert!(!o.status.success() && text(&o).contains("--shared BYTES"), "{}", text(&o));
    assert!(d.warpsim(&["run", &k, "--shared", "128"]).status.success());
}

#[test]
fn corpus_prints_a_checked_fault_once() {
    let d = Dir::new("corpus-once");
    d.ptx(STORE);
    let m = d.0.join("m.json");
    let case = r#"{"cases":[{"name":"c1","ptx":"k.ptx","kernel":"k","grid":1,"block":64,
        "params":[{"kind":"buffer","name":"out","dtype":"u32","count":32,"init":"zeros","role":"out"}]}]}"#;
    std::fs::write(&m, case).unwrap();
    let o = d.warpsim(&["corpus", m.to_str().unwrap(), "--check"]);
    assert_eq!(text(&o).matches("PTX line 8").count(), 1, "{}", text(&o));
}

#[test]
fn the_mi300x_has_compute_units() {
    let d = Dir::new("cus");
    let k = d.ptx(STORE);
    let o = d.warpsim(&["run", &k, "--param", "out:u32[64]=zeros:out", "--block", "64", "--mode", "timing", "--gpu", "mi300x"]);
    assert!(o.status.success() && text(&o).contains("304 CUs") && !text(&o).contains("SMs"), "{}", text(&o));
}
