//! Test support shared by the test files that compile CUDA with clang.

use std::path::Path;
use std::process::Command;

pub const CLANG: &str = "clang-19";

/// How each kernel file is compiled: the optimised build, which the
/// `assert_has` checks describe, and an unoptimised one with debug info
/// (stack frames in local memory, generic loads and stores, `.loc` and DWARF
/// sections), which must give the same results.
pub const BUILDS: [(&str, &[&str]); 2] = [("O2", &["-O2"]), ("O0-g", &["-O0", "-g"])];

/// Compiles `src` to PTX at `out` with `flags` (sm_80, no CUDA headers, no
/// fma contraction) and returns the PTX text; panics with clang's message.
pub fn clang_ptx(src: &Path, out: &Path, flags: &[&str]) -> String {
    let o = Command::new(CLANG)
        .args(["--cuda-device-only", "-nocudainc", "-nocudalib", "--cuda-gpu-arch=sm_80", "--cuda-feature=+ptx70", "-ffp-contract=off"])
        .args(flags)
        .arg("-S")
        .arg("-o")
        .arg(out)
        .arg(src)
        .output()
        .unwrap_or_else(|e| panic!("running {CLANG}: {e}"));
    assert!(o.status.success(), "{CLANG} {} failed on {}:\n{}", flags.join(" "), src.display(), String::from_utf8_lossy(&o.stderr));
    std::fs::read_to_string(out).unwrap_or_else(|e| panic!("reading {}: {e}", out.display()))
}
