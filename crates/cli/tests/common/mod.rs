//! Helpers the integration tests share (`mod common;`): the repository root,
//! the corpus, a scratch folder per test process, whether clang-19 is there
//! (it must be under CI), `warpsim` run with a chosen nvcc, and `.npy` payloads (as bytes or values).
#![allow(dead_code)] // each test binary uses its own subset

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// The corpus manifest: `$WARPSIM_CORPUS`, else `../shared/corpus/cases.json`
/// beside the repository.
pub fn manifest_path() -> PathBuf {
    std::env::var_os("WARPSIM_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/cases.json"))
}

/// The folder of the corpus manifest (its README, kernels).
pub fn corpus_dir() -> PathBuf {
    manifest_path().parent().unwrap().to_path_buf()
}

pub fn manifest() -> warpsim_launch::Manifest {
    let p = manifest_path();
    warpsim_launch::load_manifest(&p).unwrap_or_else(|e| panic!("loading {}: {e}", p.display()))
}

/// `$TMP/warpsim-SUITE-PID/NAME`, created.
pub fn scratch(suite: &str, name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("warpsim-{suite}-{}", std::process::id())).join(name);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `warpsim ARGS --out OUT` run from the repository root, with
/// `$WARPSIM_NVCC` set to `nvcc` (`none`: compile with clang).
pub fn warpsim_with_nvcc(args: &[&str], out: &Path, nvcc: impl AsRef<OsStr>) -> Output {
    Command::new(env!("CARGO_BIN_EXE_warpsim"))
        .current_dir(repo())
        .env_remove("WARPSIM_CLANG")
        .env("WARPSIM_NVCC", nvcc)
        .args(args)
        .arg("--out")
        .arg(out)
        .output()
        .expect("running warpsim")
}

pub fn have_clang19() -> bool {
    let ok = Command::new("clang-19").arg("--version").output().is_ok_and(|o| o.status.success());
    if !ok {
        assert!(std::env::var_os("CI").is_none(), "CI must have clang-19 (.ci/run installs it)");
        eprintln!("SKIPPED: clang-19 is not on PATH (apt-get install clang-19)");
    }
    ok
}

/// The data bytes of a little-endian `.npy` file.
pub fn npy(path: &Path) -> Vec<u8> {
    let b = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(b.starts_with(b"\x93NUMPY"));
    let (hlen, start) = if b[6] == 1 {
        (u16::from_le_bytes([b[8], b[9]]) as usize, 10)
    } else {
        (u32::from_le_bytes(b[8..12].try_into().unwrap()) as usize, 12)
    };
    b[start + hlen..].to_vec()
}

/// The values of a little-endian `.npy` file, `N` bytes each, made by `from`
/// (`f32::from_le_bytes`, ...).
pub fn npy_values<const N: usize, T>(path: &Path, from: fn([u8; N]) -> T) -> Vec<T> {
    npy(path).chunks_exact(N).map(|c| from(c.try_into().unwrap())).collect()
}
