//! Scalar semantics of PTX instructions, one lane at a time.
//!
//! The engine executes a warp instruction as a loop over lanes; every lane's
//! arithmetic comes from this crate, so the PTX ISA's rules (rounding modes,
//! `.ftz`, `.sat`, NaN handling, shift clamping, division by zero) live in one
//! place and are tested here, apart from the engine. Values travel as raw bit
//! patterns in a `u64` (low bits significant) tagged with a [`ScalarType`], so
//! one entry point serves every register width.
//!
//! Semantics follow the PTX ISA; where the ISA leaves a result unspecified
//! (division by zero, NaN payloads, `abs`/`neg` of NaN, `cvt.f32.bf16` of
//! NaN, ...) they follow an NVIDIA H200 (sm_90): `tests/hw_golden.rs` replays
//! about 60,000 results of 850 instruction forms recorded on one by
//! `tools/ptx_probe.py`, and each module's docs list the rules this implies.
//!
//! * [`int`]: integer, bit and logic instructions, carry chains, `setp` on
//!   integers.
//! * [`float`]: f16/bf16/f32/f64 (and x2) arithmetic, `.approx` functions,
//!   `min`/`max`, `setp`, `testp`.
//! * [`cvt`]: conversions between every pair of scalar types ([`fp8`]: the
//!   packed 8-bit float forms).
//! * [`tensor`]: tensor-core operand reading and accumulation rounding.
//! * [`fp`]: the shared float machinery (formats, NaN policy, flush-to-zero,
//!   correctly rounded soft-float in every rounding mode).

#![forbid(unsafe_code)]

/// Declares an enum whose field-less variants come first, and `UNIT`, the
/// list of those variants: one list, so that the property tests that pick
/// an operation see every new one.
macro_rules! enum_with_units {
    ($(#[$m:meta])* pub enum $name:ident { $($(#[$vm:meta])* $unit:ident,)* $(; $($rest:tt)*)? }) => {
        $(#[$m])*
        pub enum $name {
            $($(#[$vm])* $unit,)*
            $($($rest)*)?
        }

        impl $name {
            /// The variants without fields, in declaration order.
            pub const UNIT: &'static [$name] = &[$($name::$unit),*];
        }
    };
}

pub mod cvt;
pub mod float;
pub mod fp;
pub mod fp8;
pub mod int;
pub mod tensor;
pub mod types;

#[cfg(test)]
mod testkit;

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
