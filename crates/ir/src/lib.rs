//! Decoded kernels: PTX lowered once into typed instructions over register
//! slots, with labels resolved and reconvergence points computed, so the
//! engine's hot loop never sees text.

#![forbid(unsafe_code)]

pub mod cfg;
pub mod error;
pub mod inst;
pub mod kernel;
pub mod lower;
pub mod mma;
pub mod op_table;
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
/// instructions warpsim does not support).
pub fn compile_kernel(file: &str, src: &str, name: &str) -> Result<Program, FrontEndError> {
    let m = warpsim_ptx::parse_module(file, src)?;
    match lower::lower_program_kernel(&m, file, src, name)? {
        Some(p) => Ok(p),
        None => {
            let available: Vec<_> = m.entries().map(|f| f.name.as_str()).collect();
            Err(FrontEndError::NoSuchKernel {
                name: name.to_string(),
                file: file.to_string(),
                available: if available.is_empty() { "none".into() } else { available.join(", ") },
            })
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
