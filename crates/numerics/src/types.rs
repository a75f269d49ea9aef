//! The vocabulary shared by the front end, the lowering and the engine:
//! PTX scalar types, rounding modes and comparison operators.

enum_with_units! {
    /// A PTX fundamental type as written in an instruction (`.u32`, `.f16x2`, ...).
    #[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
    pub enum ScalarType {
        Pred,
        B8,
        B16,
        B32,
        B64,
        B128,
        U8,
        U16,
        U32,
        U64,
        S8,
        S16,
        S32,
        S64,
        F16,
        F16x2,
        BF16,
        BF16x2,
        TF32,
        F32,
        F64,
    }
}

impl ScalarType {
    /// Parses the type suffix without its dot: `"u32"` -> `U32`.
    pub fn from_ptx(s: &str) -> Option<Self> {
        use ScalarType::*;
        Some(match s {
            "pred" => Pred,
            "b8" => B8,
            "b16" => B16,
            "b32" => B32,
            "b64" => B64,
            "b128" => B128,
            "u8" => U8,
            "u16" => U16,
            "u32" => U32,
            "u64" => U64,
            "s8" => S8,
            "s16" => S16,
            "s32" => S32,
            "s64" => S64,
            "f16" => F16,
            "f16x2" => F16x2,
            "bf16" => BF16,
            "bf16x2" => BF16x2,
            "tf32" => TF32,
            "f32" => F32,
            "f64" => F64,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        use ScalarType::*;
        match self {
            Pred => "pred",
            B8 => "b8",
            B16 => "b16",
            B32 => "b32",
            B64 => "b64",
            B128 => "b128",
            U8 => "u8",
            U16 => "u16",
            U32 => "u32",
            U64 => "u64",
            S8 => "s8",
            S16 => "s16",
            S32 => "s32",
            S64 => "s64",
            F16 => "f16",
            F16x2 => "f16x2",
            BF16 => "bf16",
            BF16x2 => "bf16x2",
            TF32 => "tf32",
            F32 => "f32",
            F64 => "f64",
        }
    }

    /// Width in bits (`Pred` counts as 1).
    pub fn bits(self) -> u32 {
        use ScalarType::*;
        match self {
            Pred => 1,
            B8 | U8 | S8 => 8,
            B16 | U16 | S16 | F16 | BF16 => 16,
            B32 | U32 | S32 | F16x2 | BF16x2 | TF32 | F32 => 32,
            B64 | U64 | S64 | F64 => 64,
            B128 => 128,
        }
    }

    pub fn bytes(self) -> u32 {
        self.bits().div_ceil(8)
    }

    pub fn is_signed(self) -> bool {
        matches!(self, ScalarType::S8 | ScalarType::S16 | ScalarType::S32 | ScalarType::S64)
    }

    pub fn is_float(self) -> bool {
        use ScalarType::*;
        matches!(self, F16 | F16x2 | BF16 | BF16x2 | TF32 | F32 | F64)
    }

    pub fn is_int(self) -> bool {
        !self.is_float() && self != ScalarType::Pred
    }
}

enum_with_units! {
    /// Rounding modifiers. `Rn`..`Rna` round to a float; `Rni`..`Rpi` round a
    /// float to an integral value (in `cvt` and float-to-int conversions).
    #[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
    pub enum Rounding {
        Rn,
        Rz,
        Rm,
        Rp,
        Rna,
        Rni,
        Rzi,
        Rmi,
        Rpi,
    }
}

impl Rounding {
    pub fn from_ptx(s: &str) -> Option<Self> {
        use Rounding::*;
        Some(match s {
            "rn" => Rn,
            "rz" => Rz,
            "rm" => Rm,
            "rp" => Rp,
            "rna" => Rna,
            "rni" => Rni,
            "rzi" => Rzi,
            "rmi" => Rmi,
            "rpi" => Rpi,
            _ => return None,
        })
    }
}

/// Floating-point modifiers of one instruction.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct FMode {
    /// `None` means the instruction's default (round to nearest even).
    pub rnd: Option<Rounding>,
    /// `.ftz`: subnormal inputs and results are flushed to sign-preserving zero.
    pub ftz: bool,
    /// `.sat`: results clamped to [0.0, 1.0], NaN becomes +0.0.
    pub sat: bool,
}

impl FMode {
    pub const RN: FMode = FMode { rnd: None, ftz: false, sat: false };
}

/// `setp`/`set` comparison operators.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Lo,
    Ls,
    Hi,
    Hs,
    Equ,
    Neu,
    Ltu,
    Leu,
    Gtu,
    Geu,
    Num,
    Nan,
}

impl CmpOp {
    pub fn from_ptx(s: &str) -> Option<Self> {
        use CmpOp::*;
        Some(match s {
            "eq" => Eq,
            "ne" => Ne,
            "lt" => Lt,
            "le" => Le,
            "gt" => Gt,
            "ge" => Ge,
            "lo" => Lo,
            "ls" => Ls,
            "hi" => Hi,
            "hs" => Hs,
            "equ" => Equ,
            "neu" => Neu,
            "ltu" => Ltu,
            "leu" => Leu,
            "gtu" => Gtu,
            "geu" => Geu,
            "num" => Num,
            "nan" => Nan,
            _ => return None,
        })
    }
}

/// Boolean combine of `setp`/`set` (`.and`, `.or`, `.xor`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum BoolOp {
    And,
    Or,
    Xor,
}

impl BoolOp {
    pub fn from_ptx(s: &str) -> Option<Self> {
        Some(match s {
            "and" => BoolOp::And,
            "or" => BoolOp::Or,
            "xor" => BoolOp::Xor,
            _ => return None,
        })
    }

    #[inline]
    pub fn apply(self, a: bool, b: bool) -> bool {
        match self {
            BoolOp::And => a & b,
            BoolOp::Or => a | b,
            BoolOp::Xor => a ^ b,
        }
    }
}

/// Normalises `v` to `bits`: sign-extended when `signed`, else zero-extended.
#[inline]
pub fn norm(v: u64, bits: u32, signed: bool) -> u64 {
    if signed {
        sext(v, bits)
    } else {
        zext(v, bits)
    }
}

/// Sign-extends the low `bits` of `v` to 64 bits.
#[inline]
pub fn sext(v: u64, bits: u32) -> u64 {
    if bits >= 64 {
        v
    } else {
        let s = 64 - bits;
        (((v << s) as i64) >> s) as u64
    }
}

/// Keeps the low `bits` of `v`.
#[inline]
pub fn zext(v: u64, bits: u32) -> u64 {
    if bits >= 64 {
        v
    } else {
        v & ((1u64 << bits) - 1)
    }
}
