//! `warpsim exec -- python tests/programs/numba_kernels.py`: Numba's
//! `@cuda.jit` kernels run on warpsim through its driver library, and the
//! script prints what it printed on an H200 (`h200/numba_kernels_nolto.stdout`,
//! the recording made with Numba handing the driver PTX).
//!
//! Python: `WARPSIM_PYTHON`, else `.venv/bin/python` at the repository root,
//! else `/tmp/nvenv/bin/python`; it needs numba-cuda and cuda-bindings.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("WARPSIM_PYTHON") {
        return PathBuf::from(p);
    }
    let venv = repo().join(".venv/bin/python");
    if venv.exists() {
        return venv;
    }
    PathBuf::from("/tmp/nvenv/bin/python")
}

fn warpsim() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_warpsim"))
}

#[test]
fn numba_kernels_print_what_the_h200_printed() {
    let py = python();
    let probe = Command::new(&py).args(["-c", "import numba.cuda, cuda.bindings"]).output();
    match probe {
        Ok(o) if o.status.success() => {}
        _ => panic!(
            "{} cannot import numba.cuda and cuda.bindings: install them (`python -m venv .venv && .venv/bin/pip install \
             numba-cuda cuda-bindings nvidia-cuda-nvrtc nvidia-cuda-nvcc`) or set WARPSIM_PYTHON to a python that has them",
            py.display()
        ),
    }
    let dir = std::env::temp_dir().join(format!("warpsim-exec-numba-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("exec.json");
    let out = Command::new(warpsim())
        .arg("exec")
        .arg("--json")
        .arg(&json)
        .arg("--")
        .arg(&py)
        .arg(repo().join("tests/programs/numba_kernels.py"))
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "stderr:\n{stderr}");
    let want = std::fs::read_to_string(repo().join("tests/programs/h200/numba_kernels_nolto.stdout")).unwrap();
    assert_eq!(stdout, want, "stderr:\n{stderr}");
    assert!(stderr.contains("warpsim exec: 3 launches of 3 kernels on h200"), "{stderr}");
    let j: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let kernels = j["kernels"].as_array().unwrap();
    let names: Vec<&str> = kernels.iter().map(|k| k["kernel"].as_str().unwrap()).collect();
    for (k, want) in names.iter().zip(["vadd", "block_sum", "hist"]) {
        assert!(k.contains(want), "{names:?}");
    }
    // vadd: 65536 threads in full warps, one load of each input and one store each.
    let vadd = &kernels[0];
    assert_eq!(vadd["launches"], 1);
    assert_eq!(vadd["threads_per_instruction"], 32.0, "{vadd}");
    assert_eq!(vadd["divergent_branches"], 0, "{vadd}");
    assert_eq!(vadd["sectors_per_request"], 4.0, "{vadd}");
    // block_sum's tree reduction diverges once the step is under a warp.
    assert!(kernels[1]["divergent_branches"].as_u64().unwrap() > 0, "{}", kernels[1]);
    assert_eq!(j["launches"].as_array().unwrap().len(), 3);
    let _ = std::fs::remove_dir_all(&dir);
}
