//! Launch manifests: how a launch is described independently of the engine.
//!
//! The engine runs a kernel over memory it is handed; it knows nothing about
//! where the inputs come from or what the outputs should be. This crate is the
//! other half: the *launch manifest* (the format of the ground-truth corpus in
//! `shared/corpus/cases.json`, and what `warpsim run` builds from its command
//! line) says which PTX entry to launch, with which grid, block and parameters,
//! how every buffer is initialised and what each output buffer must hold. Keeping
//! it apart from the engine means a case can be written, validated, filled and
//! checked by anyone (the CLI, the corpus runner, tests) with the same rules the
//! real-GPU harness used, and the engine stays a pure function of its inputs.
//!
//! * [`manifest`]: the serde types for the manifest file and [`load_manifest`],
//!   which validates every case and reports errors as
//!   `case "warp_sum": params[1].dtype: unknown dtype "f128"`.
//! * [`init`]: the buffer initialisers (`zeros`, `iota`, `hash_u32`, `unit_f32`,
//!   `sym_f16`, `unit_f64`, inline values, files) as a lazy
//!   [`warpsim_engine::memory::Filler`], so a 4 GiB input is never materialised.
//! * [`check`]: compares output buffers with their expectation (sha256, file,
//!   relative tolerance, the warp-uniform clock property), whole or streamed.
//! * [`npy`]: reads and writes NumPy `.npy` files.
//! * [`parse_param_arg`]: the `warpsim run` command-line form of a parameter.
//!
//! Nothing in this crate panics on any input: every malformed manifest, file or
//! argument comes back as a [`LaunchError`].
#![forbid(unsafe_code)]

pub mod check;
mod cli;
mod error;
pub mod init;
pub mod manifest;
pub mod npy;
pub mod value;

pub use check::{
    check_bytes, check_case_output, check_reader, check_with, sha256_hex, sha256_hex_reader, sha256_hex_with, CheckMethod, CheckResult,
    Checker,
};
pub use cli::parse_param_arg;
pub use error::LaunchError;
pub use init::{fmix32, hash_u32, sym_f16, unit_f32, unit_f64, BufferInit, Init, NamedInit};
pub use manifest::{
    bad_buffer_name, load_manifest, BufferSpec, Case, Expectation, Manifest, ParamSpec, Property, Role, ScalarParam, StructParam,
};
pub use value::Value;

use std::fmt;

/// Element type of a buffer, or type of a scalar parameter.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dtype {
    F16,
    Bf16,
    F32,
    F64,
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
}

impl Dtype {
    /// Every dtype, in the order the corpus README lists them.
    pub const ALL: [Dtype; 12] = [
        Dtype::F16,
        Dtype::Bf16,
        Dtype::F32,
        Dtype::F64,
        Dtype::I8,
        Dtype::U8,
        Dtype::I16,
        Dtype::U16,
        Dtype::I32,
        Dtype::U32,
        Dtype::I64,
        Dtype::U64,
    ];

    /// The types a scalar parameter may have.
    pub const SCALAR: [Dtype; 6] = [Dtype::I32, Dtype::U32, Dtype::I64, Dtype::U64, Dtype::F32, Dtype::F64];

    /// Bytes per element.
    pub const fn size_bytes(self) -> usize {
        match self {
            Dtype::I8 | Dtype::U8 => 1,
            Dtype::F16 | Dtype::Bf16 | Dtype::I16 | Dtype::U16 => 2,
            Dtype::F32 | Dtype::I32 | Dtype::U32 => 4,
            Dtype::F64 | Dtype::I64 | Dtype::U64 => 8,
        }
    }

    /// Bits per element.
    pub const fn bits(self) -> u32 {
        self.size_bytes() as u32 * 8
    }

    /// The manifest spelling (`"f32"`, `"bf16"`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            Dtype::F16 => "f16",
            Dtype::Bf16 => "bf16",
            Dtype::F32 => "f32",
            Dtype::F64 => "f64",
            Dtype::I8 => "i8",
            Dtype::U8 => "u8",
            Dtype::I16 => "i16",
            Dtype::U16 => "u16",
            Dtype::I32 => "i32",
            Dtype::U32 => "u32",
            Dtype::I64 => "i64",
            Dtype::U64 => "u64",
        }
    }

    /// Parses the manifest spelling; exact and case-sensitive.
    pub fn parse(s: &str) -> Option<Dtype> {
        Dtype::ALL.into_iter().find(|d| d.name() == s)
    }

    pub const fn is_float(self) -> bool {
        matches!(self, Dtype::F16 | Dtype::Bf16 | Dtype::F32 | Dtype::F64)
    }

    pub const fn is_signed_int(self) -> bool {
        matches!(self, Dtype::I8 | Dtype::I16 | Dtype::I32 | Dtype::I64)
    }

    /// Whether a scalar parameter may have this type (`i32 u32 i64 u64 f32 f64`).
    pub const fn is_scalar_type(self) -> bool {
        matches!(self, Dtype::I32 | Dtype::U32 | Dtype::I64 | Dtype::U64 | Dtype::F32 | Dtype::F64)
    }

    /// Mask of the low `bits()` bits.
    pub const fn mask(self) -> u64 {
        if self.size_bytes() == 8 {
            u64::MAX
        } else {
            (1u64 << self.bits()) - 1
        }
    }
}

impl fmt::Display for Dtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Dtype {
    type Err = LaunchError;
    fn from_str(s: &str) -> Result<Dtype, LaunchError> {
        Dtype::parse(s).ok_or_else(|| LaunchError::Other(format!("unknown dtype {s:?}")))
    }
}

impl serde::Serialize for Dtype {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for Dtype {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Dtype, D::Error> {
        let s = String::deserialize(d)?;
        Dtype::parse(&s).ok_or_else(|| serde::de::Error::custom(format!("unknown dtype {s:?}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dtype_roundtrip() {
        for d in Dtype::ALL {
            assert_eq!(Dtype::parse(d.name()), Some(d));
            assert_eq!(d.name().parse::<Dtype>().unwrap(), d);
            assert_eq!(d.bits() as usize, 8 * d.size_bytes());
        }
        assert_eq!(Dtype::parse("f128"), None);
        assert_eq!(Dtype::parse("F32"), None);
        assert_eq!(Dtype::Bf16.size_bytes(), 2);
        assert_eq!(Dtype::U8.mask(), 0xff);
        assert_eq!(Dtype::U64.mask(), u64::MAX);
        assert!(Dtype::SCALAR.iter().all(|d| d.is_scalar_type()));
        assert!(!Dtype::F16.is_scalar_type());
    }
}
