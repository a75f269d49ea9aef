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

/// CUDA 12's entry points where its ABI differs from 13's (`__warpsim12_NAME`).
const PREFIX12: &str = "__warpsim12_";

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
    let mut names12 = Vec::new();
    for f in files.iter().filter(|p| p.extension().is_some_and(|e| e == "rs")) {
        let text = std::fs::read_to_string(f).expect("a source file");
        for line in text.lines() {
            // `extern "C" fn __warpsim_NAME`, or `fn __warpsim_NAME` in an `entry_points!` table.
            for (prefix, list) in [(PREFIX, &mut names), (PREFIX12, &mut names12)] {
                let Some(at) = line.find(&format!("fn {prefix}")) else { continue };
                let rest = &line[at + "fn ".len() + prefix.len()..];
                let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                if !name.is_empty() {
                    list.push(name);
                }
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
    // CUDA 12: the same entry points at version `libcudart.so.12` too (a program linked by
    // nvcc 12 asks for `cudaMalloc@libcudart.so.12`; warpsim exec names this file
    // libcudart.so.12 as well), each a jump to its CUDA 13 twin or to its own
    // `__warpsim12_NAME` where CUDA 12's ABI differs. A symbol has one version per name, so
    // the second versions are `.symver` aliases of small trampolines.
    let mut asm = String::from(".text\n");
    let mut all: Vec<(String, String)> = names.iter().map(|n| (n.clone(), format!("{PREFIX}{n}"))).collect();
    all.extend(aliases.iter().map(|(a, of)| (a.clone(), format!("{PREFIX}{of}"))));
    for n in &names12 {
        match all.iter_mut().find(|(a, _)| a == n) {
            Some(e) => e.1 = format!("{PREFIX12}{n}"),
            None => all.push((n.clone(), format!("{PREFIX12}{n}"))),
        }
    }
    for (n, target) in &all {
        let t = format!("__warpsim_v12_{n}");
        let _ = writeln!(asm, ".globl {t}\n.type {t}, @function\n{t}:\n  jmp {target}\n.symver {t}, {n}@libcudart.so.12");
    }
    script = format!("libcudart.so.12 {{\n}};\n{script}");
    let s = Path::new(&out).join("cudart12.s");
    let o = Path::new(&out).join("cudart12.o");
    std::fs::write(&s, asm).expect("writing the CUDA 12 trampolines");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let st = std::process::Command::new(&cc).arg("-c").arg(&s).arg("-o").arg(&o).status().expect("running the C compiler (cc)");
    assert!(st.success(), "assembling {}", s.display());
    println!("cargo:rustc-link-arg-cdylib={}", o.display());
    std::fs::write(&map, script).expect("writing the version script");
    println!("cargo:rustc-link-arg-cdylib=-Wl,--version-script={}", map.display());
    println!("cargo:rustc-link-arg-cdylib=-Wl,-soname,libcudart.so.13");
}
