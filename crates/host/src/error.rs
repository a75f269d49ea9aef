//! The host library's errors: one enum, each variant naming what failed.

use std::path::PathBuf;
use warpsim_check::Diagnostic;

#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    /// The PTX does not parse.
    #[error(transparent)]
    Parse(Box<warpsim_ptx::ParseError>),
    /// The PTX parses but does not compile (or has no such kernel).
    #[error(transparent)]
    Compile(Box<warpsim_ir::FrontEndError>),
    /// The program has no `.entry` of this name.
    #[error("no kernel `{0}`")]
    NoKernel(String),
    /// The launch gives a different number of parameters than the kernel declares.
    #[error("kernel `{kernel}` takes {expected} parameters, {given} given")]
    ParamCount { kernel: String, expected: usize, given: usize },
    /// A buffer passed where the kernel's parameter is not 64 bits wide.
    #[error("parameter {index} (`{name}`) is {size} bytes, but a buffer is passed as a 64-bit address")]
    NotAnAddress { index: usize, name: String, size: u32 },
    /// A struct whose C layout is not the parameter's size.
    #[error(
        "parameter {index} (`{name}`) is {size} bytes in the PTX, but the struct given lays out as {given} bytes \
         (fields at their natural alignment, padded to the largest); check the fields' types and order"
    )]
    StructSize { index: usize, name: String, size: u32, given: usize },
    /// A scalar whose value the parameter's PTX type cannot hold exactly.
    #[error("parameter {index} (`{name}`) is .{param} in the PTX, but {given} was given: {why}; pass it as {param_hint}", param_hint = hint(param))]
    ParamType { index: usize, name: String, param: &'static str, given: &'static str, why: String },
    /// A buffer name that cannot be an output file's name.
    #[error("buffer `{name}`: {why}")]
    BufferName { name: String, why: &'static str },
    /// Two buffer parameters with one name (their output files would overwrite each other).
    #[error(
        "parameters {first} and {second} are both buffers named `{name}`; each buffer needs its own name (outputs are written as NAME.npy)"
    )]
    DuplicateBuffer { name: String, first: usize, second: usize },
    /// A parameter index past the kernel's parameter list.
    #[error("kernel `{kernel}` has no parameter {index}")]
    NoParam { kernel: String, index: usize },
    /// A device-memory access outside every allocation, or misaligned.
    #[error("{what}: {fault:?}")]
    Memory { what: String, fault: warpsim_engine::memory::MemFault },
    /// No buffer of this name or address in the context.
    #[error("no buffer {0}")]
    NoBuffer(String),
    /// A buffer initialiser, manifest or output check failed.
    #[error(transparent)]
    Launch(Box<warpsim_launch::LaunchError>),
    /// The GPU preset for timing mode could not be loaded.
    #[error(transparent)]
    Preset(Box<warpsim_gpu::PresetError>),
    /// The GPU's driver would refuse the launch (before any block runs).
    #[error("launch refused, as the driver would: {0}")]
    Refused(Box<warpsim_gpu::LaunchRefused>),
    /// The engine refused the launch or the kernel faulted.
    #[error(transparent)]
    Engine(#[from] warpsim_engine::LaunchError),
    /// A checked launch faulted; `diagnostics` holds what the checkers found,
    /// the fault among them.
    #[error("{error}")]
    CheckedFault { error: warpsim_engine::LaunchError, diagnostics: Vec<Diagnostic> },
}

/// The `--param` type that matches a PTX parameter type.
fn hint(ptx: &str) -> String {
    let t = match ptx {
        "s8" | "s16" | "s32" | "b8" | "b16" | "b32" => "i32",
        "u8" | "u16" | "u32" => "u32",
        "s64" | "b64" => "i64",
        "u64" => "u64",
        "f32" => "f32",
        _ => "f64",
    };
    format!("{t}=VALUE")
}

impl HostError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        HostError::Io { path: path.into(), source }
    }
}

/// The large errors are boxed, so a `Result` of the host library stays small.
macro_rules! boxed_from {
    ($($t:ty => $v:ident),*) => {$(
        impl From<$t> for HostError {
            fn from(e: $t) -> Self {
                HostError::$v(Box::new(e))
            }
        }
    )*};
}
boxed_from!(warpsim_ptx::ParseError => Parse, warpsim_ir::FrontEndError => Compile, warpsim_launch::LaunchError => Launch, warpsim_gpu::PresetError => Preset);
