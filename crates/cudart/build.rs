//! Gives the library the soname and symbol versions a program linked by nvcc 13 with
//! `-cudart shared` asks for (`cudaMalloc@libcudart.so.13`, ...).
//!
//! rustc hands the linker its own, unversioned export list first, and linkers keep the first
//! version a symbol gets; so every C entry point is written as `__warpsim_NAME` in the source
//! (an `extern "C" fn` or a row of an `entry_points!` table),
//! and here each `NAME` is defined as an alias (`--defsym`) that the `libcudart.so.13` version
//! node below exports. The names are read from the sources, so the list cannot drift.

use std::fmt::Write as _;
use std::path::Path;

const PREFIX: &str = "__warpsim_";

/// Entry points that are another one under a second name (the same C signature and meaning).
const ALIASES: &[(&str, &str)] = &[
    ("__cudaLaunchKernel", "cudaLaunchKernel"),
    ("cudaLaunchKernel_ptsz", "__cudaLaunchKernel_ptsz"),
    ("cudaGetKernel", "__cudaGetKernel"),
];

/// The calls `cuda_runtime_api.h` renames under `--default-stream per-thread`
/// (`__CUDART_API_PTDS`: `NAME_ptds`; `__CUDART_API_PTSZ`: `NAME_ptsz`), as CUDA 13.5 lists
/// them. Each that is implemented is exported under its per-thread name too: every stream runs
/// in issue order and every call is complete when it returns, so the per-thread default stream
/// and the legacy one are the same schedule.
const PER_THREAD_DS: &[&str] = &[
    "cudaMemcpy",
    "cudaMemcpyToSymbol",
    "cudaMemcpyFromSymbol",
    "cudaMemcpy2D",
    "cudaMemcpyToArray",
    "cudaMemcpy2DToArray",
    "cudaMemcpyFromArray",
    "cudaMemcpy2DFromArray",
    "cudaMemcpyArrayToArray",
    "cudaMemcpy2DArrayToArray",
    "cudaMemcpy3D",
    "cudaMemcpy3DPeer",
    "cudaMemset",
    "cudaMemset2D",
    "cudaMemset3D",
];
const PER_THREAD_SZ: &[&str] = &[
    "cudaGraphInstantiateWithParams",
    "cudaGraphUpload",
    "cudaGraphLaunch",
    "cudaStreamBeginCapture",
    "cudaStreamBeginRecaptureToGraph",
    "cudaStreamBeginCaptureToGraph",
    "cudaStreamEndCapture",
    "cudaStreamGetCaptureInfo",
    "cudaStreamUpdateCaptureDependencies",
    "cudaStreamIsCapturing",
    "cudaMemcpyAsync",
    "cudaMemcpyToSymbolAsync",
    "cudaMemcpyFromSymbolAsync",
    "cudaMemcpy2DAsync",
    "cudaMemcpyToArrayAsync",
    "cudaMemcpy2DToArrayAsync",
    "cudaMemcpyFromArrayAsync",
    "cudaMemcpy2DFromArrayAsync",
    "cudaMemcpy3DAsync",
    "cudaMemcpy3DPeerAsync",
    "cudaMemcpyBatchAsync",
    "cudaMemcpy3DBatchAsync",
    "cudaMemcpyWithAttributesAsync",
    "cudaMemcpy3DWithAttributesAsync",
    "cudaMemsetAsync",
    "cudaMemset2DAsync",
    "cudaMemset3DAsync",
    "cudaStreamQuery",
    "cudaStreamGetDevice",
    "cudaStreamGetDevResource",
    "cudaStreamGetFlags",
    "cudaStreamGetId",
    "cudaStreamGetPriority",
    "cudaEventRecord",
    "cudaEventRecordWithFlags",
    "cudaStreamWaitEvent",
    "cudaStreamAddCallback",
    "cudaStreamAttachMemAsync",
    "cudaStreamSynchronize",
    "cudaSignalExternalSemaphoresAsync",
    "cudaWaitExternalSemaphoresAsync",
    "cudaLaunchKernelExC",
    "cudaLaunchHostFunc",
    "cudaLaunchHostFunc_v2",
    "cudaMemPrefetchAsync",
    "cudaMemPrefetchBatchAsync",
    "cudaMemDiscardBatchAsync",
    "cudaMemDiscardAndPrefetchBatchAsync",
    "cudaLaunchCooperativeKernel",
    "cudaStreamCopyAttributes",
    "cudaStreamGetAttribute",
    "cudaStreamSetAttribute",
    "cudaMallocAsync",
    "cudaFreeAsync",
    "cudaMallocFromPoolAsync",
    "cudaGetDriverEntryPoint",
    "cudaGetDriverEntryPointByVersion",
];

fn main() {
    let src = Path::new("src");
    println!("cargo:rerun-if-changed=src");
    let mut names = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(src).expect("src/").flatten().map(|e| e.path()).collect();
    files.sort();
    for f in files.iter().filter(|p| p.extension().is_some_and(|e| e == "rs")) {
        let text = std::fs::read_to_string(f).expect("a source file");
        for line in text.lines() {
            // `extern "C" fn __warpsim_NAME`, or `fn __warpsim_NAME` in an `entry_points!` table.
            let Some(at) = line.find(&format!("fn {PREFIX}")) else { continue };
            let rest = &line[at + "fn ".len() + PREFIX.len()..];
            let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            if !name.is_empty() {
                names.push(name);
            }
        }
    }
    for (alias, of) in ALIASES {
        assert!(names.iter().any(|n| n == of), "{alias} aliases {of}, which is not defined");
    }
    names.sort();
    names.dedup();
    let mut aliases: Vec<(String, String)> = ALIASES.iter().map(|(a, o)| (a.to_string(), o.to_string())).collect();
    for (list, suffix) in [(PER_THREAD_DS, "_ptds"), (PER_THREAD_SZ, "_ptsz")] {
        for &n in list.iter().filter(|n| names.iter().any(|m| m == *n)) {
            aliases.push((format!("{n}{suffix}"), n.to_string()));
        }
    }
    let out = std::env::var("OUT_DIR").expect("OUT_DIR");
    let map = Path::new(&out).join("libcudart.map");
    let mut script = String::from("libcudart.so.13 {\n  global:\n");
    for n in &names {
        let _ = writeln!(script, "    {n};");
        println!("cargo:rustc-link-arg-cdylib=-Wl,--defsym={n}={PREFIX}{n}");
    }
    for (alias, of) in &aliases {
        let _ = writeln!(script, "    {alias};");
        println!("cargo:rustc-link-arg-cdylib=-Wl,--defsym={alias}={PREFIX}{of}");
    }
    script.push_str("  local:\n    *;\n};\n");
    std::fs::write(&map, script).expect("writing the version script");
    println!("cargo:rustc-link-arg-cdylib=-Wl,--version-script={}", map.display());
    println!("cargo:rustc-link-arg-cdylib=-Wl,-soname,libcudart.so.13");
}
