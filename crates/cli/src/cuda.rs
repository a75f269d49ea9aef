//! CUDA source in: `warpsim run kernel.cu` compiles the kernel to PTX with NVIDIA's own
//! compiler when it is there (it installs from the Python package index without a GPU, and
//! compiles the real headers: CUB, cooperative groups, cuda_fp16, ...), else with clang's CUDA
//! front end (clang 19 or newer on PATH) and the device API that warpsim ships
//! (`cuda/warpsim_cuda.h`, built into the binary and written to a temporary folder for each
//! compile). Then the PTX runs like any other.
//!
//! ```text
//! nvcc -ptx -arch=sm_90 -lineinfo -o <out>/kernel.ptx kernel.cu
//! clang-19 --cuda-device-only -nocudainc -nocudalib --cuda-gpu-arch=sm_80 --cuda-feature=+ptx70
//!          -O2 -gline-tables-only -S -I <tmp> -include warpsim_cuda.h -o <out>/kernel.ptx kernel.cu
//! ```
//!
//! nvcc is `$WARPSIM_NVCC` (`none`: use clang), else `nvcc` on PATH, else the
//! `nvidia-cuda-nvcc` wheel in a `.venv` of the current folder or of the checkout the binary
//! was built in. `--clang-arg` or `$WARPSIM_CLANG` ask for clang.
//! `-lineinfo` and `-gline-tables-only` keep `.loc` line info, so per-line reports name CUDA
//! lines. For clang, `<tmp>` also holds empty stand-ins for `cuda_runtime.h`, `cuda.h`
//! and `device_launch_parameters.h`, so kernels written for nvcc that include
//! them compile unchanged, stand-ins of warpsim's own for `cuda_fp16.h`, `cuda_bf16.h` and
//! `cooperative_groups.h` (`cuda/`), and `cuda_pipeline.h` (the primitives are in the
//! header); the header defines the rest of CUDA's math library itself, since
//! clang's wrappers call libdevice, which is not there.

use std::ffi::OsStr;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The device API, as shipped.
pub const HEADER: &str = include_str!("../cuda/warpsim_cuda.h");

/// Stand-ins for toolkit headers that kernels include, written beside [`HEADER`]:
/// (path under the header folder, text).
pub const TOOLKIT_STANDINS: [(&str, &str); 6] = [
    ("cuda_fp16.h", include_str!("../cuda/cuda_fp16.h")),
    ("cuda_bf16.h", include_str!("../cuda/cuda_bf16.h")),
    ("cuda_pipeline.h", "// stand-in: the pipeline primitives are in warpsim_cuda.h\n#include \"warpsim_cuda.h\"\n"),
    ("cuda_pipeline_primitives.h", "// stand-in: the pipeline primitives are in warpsim_cuda.h\n#include \"warpsim_cuda.h\"\n"),
    ("cooperative_groups.h", include_str!("../cuda/cooperative_groups.h")),
    (
        "cooperative_groups/reduce.h",
        "// stand-in: cooperative_groups::reduce is in cooperative_groups.h\n#include \"../cooperative_groups.h\"\n",
    ),
];

/// The oldest clang whose CUDA front end works with the header.
pub const MIN_CLANG: u32 = 19;

/// Versioned names tried first (newest first), then plain `clang`.
const NEWEST_TRIED: u32 = 30;

/// The flags every compile uses, before `-I`, `-include`, `-o` and the file.
pub const CLANG_FLAGS: [&str; 9] = [
    "--cuda-device-only",
    "-nocudainc",
    "-nocudalib",
    "--cuda-gpu-arch=sm_80",
    "--cuda-feature=+ptx70",
    "-O2",
    "-ffp-contract=off",
    "-gline-tables-only",
    "-S",
];

/// Why a `.cu` file could not become PTX.
#[derive(Debug)]
pub enum CudaError {
    /// No clang on PATH (the names tried are listed).
    NoClang {
        file: PathBuf,
    },
    /// Only clangs older than [`MIN_CLANG`].
    OldClang {
        file: PathBuf,
        found: String,
        version: u32,
    },
    /// The compiler (clang or nvcc) ran and failed: its messages.
    Compile {
        file: PathBuf,
        compiler: String,
        stderr: String,
    },
    Io(String),
}

impl fmt::Display for CudaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let help = "warpsim compiles CUDA with NVIDIA's nvcc if it finds one, else with clang's CUDA front end\n\
                    and the device API warpsim ships (threadIdx, __syncthreads, __shfl_*_sync, atomics, ...).\n\
                    Install one of them:\n    \
                    nvcc, no GPU needed:  pip install nvidia-cuda-nvcc nvidia-cuda-runtime nvidia-cuda-crt\n    \
                    \x20                     nvidia-cuda-cccl  (nvcc in ./.venv, on PATH, or named by WARPSIM_NVCC)\n    \
                    clang on Debian, Ubuntu:  sudo apt-get install clang-19\n    \
                    clang elsewhere:  clang 19 or newer from your package manager, on PATH as clang-19 (or newer)\n    \
                    \x20                 or as clang, or named by the WARPSIM_CLANG environment variable.\n\
                    Or compile the kernel to PTX yourself (nvcc -ptx kernel.cu) and run the .ptx:\n\
                    PTX input always works, with or without a compiler.";
        match self {
            CudaError::NoClang { file } => write!(
                f,
                "cannot compile {}: no clang on PATH and no nvcc\n(warpsim looks for nvcc, then clang-{NEWEST_TRIED} down to clang-{MIN_CLANG}, then clang).\n{help}",
                file.display()
            ),
            CudaError::OldClang { file, found, version } => write!(
                f,
                "cannot compile {}: the clang on PATH ({found}) is version {version}; warpsim needs clang {MIN_CLANG} or newer.\n{help}",
                file.display()
            ),
            CudaError::Compile { file, compiler, stderr } => {
                write!(f, "{compiler} could not compile {}:\n{}", file.display(), stderr.trim_end())
            }
            CudaError::Io(e) => f.write_str(e),
        }
    }
}

impl std::error::Error for CudaError {}

/// A clang found on PATH.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Clang {
    pub path: PathBuf,
    pub version: u32,
}

/// The major version in `clang --version` output (`Debian clang version 19.1.7 ...`).
pub fn parse_clang_version(text: &str) -> Option<u32> {
    let i = text.find("clang version ")?;
    let rest = &text[i + "clang version ".len()..];
    rest.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
}

fn executable_in(dirs: &[PathBuf], name: &str) -> Option<PathBuf> {
    dirs.iter().map(|d| d.join(name)).find(|p| {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            p.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        }
        #[cfg(not(unix))]
        {
            p.is_file() || p.with_extension("exe").is_file()
        }
    })
}

fn version_of(path: &Path) -> Option<u32> {
    let out = Command::new(path).arg("--version").output().ok()?;
    parse_clang_version(&String::from_utf8_lossy(&out.stdout))
}

/// Finds clang: `$WARPSIM_CLANG` if set, else the newest `clang-N` (N >=
/// [`MIN_CLANG`]) in `path_var` (a PATH-style list), else `clang` if it is
/// new enough. `file` is only for the error message.
pub fn find_clang(path_var: Option<&OsStr>, explicit: Option<&OsStr>, file: &Path) -> Result<Clang, CudaError> {
    if let Some(c) = explicit.filter(|c| !c.is_empty()) {
        let p = PathBuf::from(c);
        return match version_of(&p) {
            Some(v) if v >= MIN_CLANG => Ok(Clang { path: p, version: v }),
            Some(v) => Err(CudaError::OldClang { file: file.into(), found: p.display().to_string(), version: v }),
            None => Err(CudaError::Io(format!(
                "cannot compile {}: WARPSIM_CLANG is {}, which does not run as clang (`{} --version` failed)",
                file.display(),
                p.display(),
                p.display()
            ))),
        };
    }
    let dirs: Vec<PathBuf> = path_var.map(|p| std::env::split_paths(p).collect()).unwrap_or_default();
    for v in (MIN_CLANG..=NEWEST_TRIED).rev() {
        if let Some(p) = executable_in(&dirs, &format!("clang-{v}")) {
            return Ok(Clang { path: p, version: v });
        }
    }
    if let Some(p) = executable_in(&dirs, "clang") {
        return match version_of(&p) {
            Some(v) if v >= MIN_CLANG => Ok(Clang { path: p, version: v }),
            Some(v) => Err(CudaError::OldClang { file: file.into(), found: p.display().to_string(), version: v }),
            None => Err(CudaError::NoClang { file: file.into() }),
        };
    }
    Err(CudaError::NoClang { file: file.into() })
}

/// The flags every nvcc compile uses, before `-o` and the file.
pub const NVCC_FLAGS: [&str; 3] = ["-ptx", "-arch=sm_90", "-lineinfo"];

/// The nvcc of the `nvidia-cuda-nvcc` wheel in the Python environment `venv`, if it is there.
pub fn nvcc_in_venv(venv: &Path) -> Option<PathBuf> {
    let lib = std::fs::read_dir(venv.join("lib")).ok()?;
    let mut found: Vec<PathBuf> = lib
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("python"))
        .flat_map(|e| ["cu13", "cu12"].map(|cu| e.path().join("site-packages/nvidia").join(cu).join("bin/nvcc")))
        .filter(|p| p.is_file())
        .collect();
    found.sort();
    found.into_iter().next()
}

/// Finds nvcc: `$WARPSIM_NVCC` (`explicit`; `none` means never), else `nvcc` in `path_var`,
/// else the wheel's in `<root>/.venv` for each of `roots`.
pub fn find_nvcc(path_var: Option<&OsStr>, explicit: Option<&OsStr>, roots: &[PathBuf]) -> Option<PathBuf> {
    if let Some(c) = explicit.filter(|c| !c.is_empty()) {
        return (c != "none").then(|| PathBuf::from(c));
    }
    let dirs: Vec<PathBuf> = path_var.map(|p| std::env::split_paths(p).collect()).unwrap_or_default();
    executable_in(&dirs, "nvcc").or_else(|| roots.iter().find_map(|r| nvcc_in_venv(&r.join(".venv"))))
}

/// Where a `.venv` holding nvcc may be: the current folder, and the checkout whose
/// `target/<profile>/` holds this binary.
pub fn venv_roots() -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = std::env::current_dir().into_iter().collect();
    if let Ok(exe) = std::env::current_exe() {
        roots.extend(exe.ancestors().skip(1).take(4).map(Path::to_path_buf));
    }
    roots
}

/// Compiles `cu` to PTX at `out` with nvcc.
pub fn compile_nvcc(nvcc: &Path, cu: &Path, out: &Path) -> Result<String, CudaError> {
    // warpsim_cuda.h on the include path (under nvcc it adds only __laneid), so a kernel written for the clang path builds too.
    let hdr = HeaderDir::header_only()?;
    let o = Command::new(nvcc)
        .args(NVCC_FLAGS)
        .arg("-I")
        .arg(hdr.path())
        .arg("-o")
        .arg(out)
        .arg(cu)
        .output()
        .map_err(|e| CudaError::Io(format!("running {}: {e}", nvcc.display())))?;
    if !o.status.success() {
        let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
        return Err(CudaError::Compile { file: cu.into(), compiler: nvcc.display().to_string(), stderr });
    }
    std::fs::read_to_string(out).map_err(|e| CudaError::Io(format!("reading {}: {e}", out.display())))
}

/// A temporary folder holding the header and the stand-in toolkit headers;
/// removed when dropped.
pub struct HeaderDir(PathBuf);

impl HeaderDir {
    /// A folder holding `warpsim_cuda.h` alone (for nvcc, whose toolkit headers stay in use).
    pub fn header_only() -> Result<Self, CudaError> {
        use std::sync::atomic::{AtomicU32, Ordering};
        static N: AtomicU32 = AtomicU32::new(0);
        let d = std::env::temp_dir().join(format!("warpsim-cuda-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed)));
        let io = |e: std::io::Error| CudaError::Io(format!("writing the CUDA header to {}: {e}", d.display()));
        std::fs::create_dir_all(&d).map_err(io)?;
        std::fs::write(d.join("warpsim_cuda.h"), HEADER).map_err(io)?;
        Ok(HeaderDir(d))
    }

    pub fn new() -> Result<Self, CudaError> {
        let hdr = Self::header_only()?;
        let d = hdr.path().to_path_buf();
        let io = |e: std::io::Error| CudaError::Io(format!("writing the CUDA header to {}: {e}", d.display()));
        for stub in ["cuda_runtime.h", "cuda.h", "device_launch_parameters.h", "cuda_runtime_api.h"] {
            std::fs::write(d.join(stub), "// stand-in: warpsim's device API is in warpsim_cuda.h\n#include \"warpsim_cuda.h\"\n")
                .map_err(io)?;
        }
        std::fs::create_dir_all(d.join("cooperative_groups")).map_err(io)?;
        for (name, text) in TOOLKIT_STANDINS {
            std::fs::write(d.join(name), text).map_err(io)?;
        }
        Ok(hdr)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for HeaderDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Compiles `cu` to PTX at `out` with `clang`; `extra` flags go after the
/// defaults (so `-O0` or `-ffp-contract=fast` override them).
pub fn compile(clang: &Clang, cu: &Path, out: &Path, extra: &[String]) -> Result<String, CudaError> {
    let hdr = HeaderDir::new()?;
    let o = Command::new(&clang.path)
        .args(CLANG_FLAGS)
        .args(extra)
        .arg("-I")
        .arg(hdr.path())
        .args(["-include", "warpsim_cuda.h", "-o"])
        .arg(out)
        .arg(cu)
        .output()
        .map_err(|e| CudaError::Io(format!("running {}: {e}", clang.path.display())))?;
    if !o.status.success() {
        let stderr = String::from_utf8_lossy(&o.stderr).replace(&hdr.path().display().to_string(), "<warpsim>");
        return Err(CudaError::Compile { file: cu.into(), compiler: clang.path.display().to_string(), stderr });
    }
    std::fs::read_to_string(out).map_err(|e| CudaError::Io(format!("reading {}: {e}", out.display())))
}

/// Whether `path` is CUDA source (`.cu`, `.cuh` is not a kernel file).
pub fn is_cuda(path: &Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("cu"))
}

/// A file's text, or an error naming the byte offset, line and column of its first byte that is not UTF-8.
pub fn utf8(path: &Path, bytes: Vec<u8>) -> anyhow::Result<String> {
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let good = &e.as_bytes()[..at];
        let line = good.iter().filter(|&&b| b == b'\n').count() + 1;
        let col = at - good.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1) + 1;
        anyhow::anyhow!(
            "{}: not UTF-8 text: byte offset {at} (line {line}, column {col}) is 0x{:02x}; PTX and CUDA source must be UTF-8 (or ASCII)",
            path.display(),
            e.as_bytes()[at]
        )
    })
}

/// Why a file given as PTX is C, C++ or CUDA source instead, if it looks like it.
pub fn not_ptx(path: &Path, src: &str) -> Option<String> {
    let ext = path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    let rename = "warpsim compiles CUDA source named .cu, with nvcc if it finds one (on PATH or in a .venv), else with clang \
                  (rename or copy it to a .cu file)";
    if ["cpp", "cc", "cxx", "c", "h", "hpp", "cuh", "hip"].contains(&ext.as_str()) {
        return Some(format!("a .{ext} file is C/C++ source; {rename}"));
    }
    let first = src.lines().map(str::trim).find(|l| !l.is_empty() && !l.starts_with("//"))?;
    let has_ptx = src.contains(".version") || src.contains(".entry") || src.contains(".func");
    if !has_ptx && (first.starts_with('#') || src.contains("__global__")) {
        return Some(format!("it starts like C/C++ source (`{}`); {rename}", first.chars().take(60).collect::<String>()));
    }
    None
}

/// The PTX of a kernel file: read as it is for `.ptx` (or anything else
/// that is not `.cu`), compiled for `.cu` with nvcc if one is found, else with
/// clang, the PTX written to `out_dir/<stem>.ptx`. Returns (name for messages, PTX text).
/// On a terminal, says which compiler compiled it.
pub fn load_kernel_file(path: &Path, out_dir: &Path, extra: &[String]) -> anyhow::Result<(String, String)> {
    let (name, ptx, compiler) = kernel_file_ptx(path, out_dir, extra)?;
    if let (Some(compiler), true) = (compiler, std::io::IsTerminal::is_terminal(&std::io::stderr())) {
        eprintln!("compiled {} with {} to {name}", path.display(), compiler.display());
    }
    Ok((name, ptx))
}

/// [`load_kernel_file`] without a word on stderr: (name for messages, PTX text, the
/// compiler that compiled it, None for PTX read as it is). The Python package's
/// `Module` says nothing unless asked to (`verbose=True`).
pub fn kernel_file_ptx(path: &Path, out_dir: &Path, extra: &[String]) -> anyhow::Result<(String, String, Option<PathBuf>)> {
    if !is_cuda(path) {
        let bytes = std::fs::read(path).map_err(|e| anyhow::anyhow!("reading {}: {e}", path.display()))?;
        let src = utf8(path, bytes)?;
        if let Some(why) = not_ptx(path, &src) {
            anyhow::bail!("{} is not PTX: {why}", path.display());
        }
        return Ok((path.display().to_string(), src, None));
    }
    if !path.is_file() {
        anyhow::bail!("reading {}: no such file", path.display());
    }
    std::fs::create_dir_all(out_dir).map_err(|e| anyhow::anyhow!("creating {}: {e}", out_dir.display()))?;
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "kernel".into());
    let out = out_dir.join(format!("{stem}.ptx"));
    let path_var = std::env::var_os("PATH");
    let clang_env = std::env::var_os("WARPSIM_CLANG");
    let wants_clang = !extra.is_empty() || clang_env.as_ref().is_some_and(|c| !c.is_empty());
    let nvcc = (!wants_clang).then(|| find_nvcc(path_var.as_deref(), std::env::var_os("WARPSIM_NVCC").as_deref(), &venv_roots()));
    let (ptx, compiler) = match nvcc.flatten() {
        Some(nvcc) => (compile_nvcc(&nvcc, path, &out)?, nvcc),
        None => {
            let clang = find_clang(path_var.as_deref(), clang_env.as_deref(), path)?;
            (compile(&clang, path, &out, extra)?, clang.path)
        }
    };
    Ok((out.display().to_string(), ptx, Some(compiler)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_errors_name_the_byte_offset() {
        let e = utf8(Path::new("k.ptx"), b".version 8.0\nab\xffc".to_vec()).unwrap_err().to_string();
        assert!(e.contains("byte offset 15 (line 2, column 3) is 0xff"), "{e}");
    }

    #[test]
    fn cuda_and_cpp_sources_are_not_taken_for_ptx() {
        assert!(not_ptx(Path::new("k.cpp"), ".version 8.0").unwrap().contains(".cu"));
        assert!(not_ptx(Path::new("k.txt"), "#include <cuda.h>\n__global__ void k() {}").is_some());
        assert_eq!(not_ptx(Path::new("k.ptx"), "//\n.version 8.0\n.target sm_90\n"), None);
    }

    #[test]
    fn versions_parse() {
        assert_eq!(parse_clang_version("Debian clang version 19.1.7 (3~deb12u1)\nTarget: x86_64"), Some(19));
        assert_eq!(parse_clang_version("clang version 21.0.0git"), Some(21));
        assert_eq!(parse_clang_version("Apple clang version 15.0.0"), Some(15));
        assert_eq!(parse_clang_version("gcc"), None);
    }

    #[test]
    fn no_clang_says_how_to_install_it_and_that_ptx_works() {
        let empty = std::env::temp_dir().join(format!("warpsim-noclang-{}", std::process::id()));
        std::fs::create_dir_all(&empty).unwrap();
        let e = find_clang(Some(empty.as_os_str()), None, Path::new("k.cu")).unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, CudaError::NoClang { .. }), "{msg}");
        for needle in ["cannot compile k.cu", "no clang on PATH", "apt-get install clang-19", "PTX input always works", "WARPSIM_CLANG"] {
            assert!(msg.contains(needle), "no {needle:?} in:\n{msg}");
        }
        assert!(msg.lines().all(|l| l.chars().count() <= 100), "{msg}");
        let _ = std::fs::remove_dir_all(&empty);
    }

    #[test]
    fn nvcc_is_found_in_order_and_none_turns_it_off() {
        let d = std::env::temp_dir().join(format!("warpsim-nvcc-{}", std::process::id()));
        let wheel = d.join("root/.venv/lib/python3.12/site-packages/nvidia/cu13/bin");
        std::fs::create_dir_all(&wheel).unwrap();
        std::fs::write(wheel.join("nvcc"), "").unwrap();
        let roots = [d.join("elsewhere"), d.join("root")];
        assert_eq!(find_nvcc(None, None, &roots), Some(wheel.join("nvcc")));
        assert_eq!(find_nvcc(None, Some(OsStr::new("none")), &roots), None);
        assert_eq!(find_nvcc(None, Some(OsStr::new("/opt/nvcc")), &roots), Some(PathBuf::from("/opt/nvcc")));
        assert_eq!(find_nvcc(None, None, &roots[..1]), None);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn an_old_clang_is_named_with_its_version() {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let d = std::env::temp_dir().join(format!("warpsim-oldclang-{}", std::process::id()));
            std::fs::create_dir_all(&d).unwrap();
            let fake = d.join("clang");
            std::fs::write(&fake, "#!/bin/sh\necho 'clang version 14.0.6'\n").unwrap();
            std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
            let e = find_clang(Some(d.as_os_str()), None, Path::new("k.cu")).unwrap_err();
            let msg = e.to_string();
            assert!(msg.contains("version 14") && msg.contains("clang 19 or newer"), "{msg}");
            // A versioned clang-19 wins over an old plain clang.
            let v19 = d.join("clang-19");
            std::fs::write(&v19, "#!/bin/sh\necho 'clang version 19.1.7'\n").unwrap();
            std::fs::set_permissions(&v19, std::fs::Permissions::from_mode(0o755)).unwrap();
            assert_eq!(find_clang(Some(d.as_os_str()), None, Path::new("k.cu")).unwrap(), Clang { path: v19, version: 19 });
            let _ = std::fs::remove_dir_all(&d);
        }
    }
}
