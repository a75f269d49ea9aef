//! Scalar semantics of PTX instructions, one lane at a time.
//!
//! The engine executes a warp instruction as a loop over lanes; every lane's
//! arithmetic comes from this crate, so the PTX ISA's rules (rounding modes,
//! `.ftz`, `.sat`, NaN handling, shift clamping, division by zero) live in one
//! place and are tested here, apart from the engine. Values travel as raw bit
//! patterns in a `u64` (low bits significant) tagged with a [`ScalarType`], so
//! one entry point serves every register width.

pub mod cvt;
pub mod float;
pub mod int;
pub mod types;

pub use types::*;

/// Comparison for `setp`/`set`/`slct`, float or integer by `ty`.
#[inline]
pub fn compare(op: CmpOp, ty: ScalarType, ftz: bool, a: u64, b: u64) -> bool {
    if ty.is_float() {
        float::compare_float(op, ty, ftz, a, b)
    } else {
        int::compare_int(op, ty, a, b)
    }
}
