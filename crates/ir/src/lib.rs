//! Decoded kernels: PTX lowered once into typed instructions over register
//! slots, with labels resolved and reconvergence points computed, so the
//! engine's hot loop never sees text.

#![forbid(unsafe_code)]

pub mod cfg;
mod dataflow;
pub mod entry_names;
pub mod entry_reads;
pub mod error;
pub mod inst;
pub mod kernel;
pub mod lower;
pub mod mma;
pub mod op_table;
pub mod pack;
pub mod regs;
pub mod window;

pub use error::{FrontEndError, LowerError};
pub use inst::*;
pub use kernel::*;

/// Parses `src` and lowers every kernel in it.
pub fn compile_module(file: &str, src: &str) -> Result<Program, FrontEndError> {
    let m = warpsim_ptx::parse_module(file, src)?;
    Ok(lower::lower_program(&m, file, src)?)
}

/// Parses `src` and lowers only the kernel `name` (other kernels may use
/// instructions warpsim does not support). `name` may be the mangled entry name
/// or its C++ name, as [`entry_names::resolve`] accepts it.
pub fn compile_kernel(file: &str, src: &str, name: &str) -> Result<Program, FrontEndError> {
    compile_kernel_resolved(file, src, name).map(|(p, _)| p)
}

/// [`compile_kernel`], also returning the entry's mangled name.
pub fn compile_kernel_resolved(file: &str, src: &str, name: &str) -> Result<(Program, String), FrontEndError> {
    let m = warpsim_ptx::parse_module(file, src)?;
    let entries: Vec<&str> = m.entries().map(|f| f.name.as_str()).collect();
    let mangled = entry_names::resolve(&entries, name).map_err(|e| match e {
        entry_names::Unresolved::Missing => FrontEndError::NoSuchKernel {
            name: name.to_string(),
            file: file.to_string(),
            available: if entries.is_empty() { "none".into() } else { entry_names::describe(&entries) },
        },
        entry_names::Unresolved::Ambiguous(candidates) => FrontEndError::AmbiguousKernel {
            name: name.to_string(),
            file: file.to_string(),
            candidates: entry_names::describe(&candidates),
        },
    })?;
    match lower::lower_program_kernel(&m, file, src, &mangled)? {
        Some(p) => Ok((p, mangled)),
        None => {
            Err(FrontEndError::NoSuchKernel { name: name.to_string(), file: file.to_string(), available: entry_names::describe(&entries) })
        }
    }
}

/// Iterates over the bits set in `mask` (lanes, threads, set members), lowest first.
#[inline(always)]
pub fn set_bits(mut mask: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if mask == 0 {
            return None;
        }
        let l = mask.trailing_zeros() as usize;
        mask &= mask - 1;
        Some(l)
    })
}
