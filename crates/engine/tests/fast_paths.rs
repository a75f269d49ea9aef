//! The engine's fast paths (plain 32/64-bit arithmetic with default
//! modifiers) must compute exactly what `warpsim-numerics` computes for the
//! same PTX operation, which is the tested reference.

use proptest::prelude::*;
use warpsim_engine::exec::{bin32_lane, bin64_lane, fma_f32_lane, fma_f64_lane};
use warpsim_ir::{Bin32, Bin64};
use warpsim_numerics::float::{eval_float, FloatOp};
use warpsim_numerics::int::{eval_int, IntOp};
use warpsim_numerics::{FMode, ScalarType as T};

fn reference32(f: Bin32, a: u32, b: u32) -> u32 {
    let (a64, b64) = (a as u64, b as u64);
    let i = |op, ty| eval_int(op, ty, [a64, b64, 0, 0]) as u32;
    let fl = |op| eval_float(op, T::F32, FMode::RN, [a64, b64, 0]) as u32;
    match f {
        Bin32::Add => i(IntOp::Add, T::S32),
        Bin32::Sub => i(IntOp::Sub, T::S32),
        Bin32::MulLo => i(IntOp::MulLo, T::S32),
        Bin32::And => i(IntOp::And, T::B32),
        Bin32::Or => i(IntOp::Or, T::B32),
        Bin32::Xor => i(IntOp::Xor, T::B32),
        Bin32::Shl => i(IntOp::Shl, T::B32),
        Bin32::ShrU => i(IntOp::Shr, T::U32),
        Bin32::ShrS => i(IntOp::Shr, T::S32),
        Bin32::MinS => i(IntOp::Min, T::S32),
        Bin32::MinU => i(IntOp::Min, T::U32),
        Bin32::MaxS => i(IntOp::Max, T::S32),
        Bin32::MaxU => i(IntOp::Max, T::U32),
        Bin32::AddF => fl(FloatOp::Add),
        Bin32::SubF => fl(FloatOp::Sub),
        Bin32::MulF => fl(FloatOp::Mul),
        Bin32::MinF => fl(FloatOp::Min),
        Bin32::MaxF => fl(FloatOp::Max),
    }
}

fn reference64(f: Bin64, a: u64, b: u64) -> u64 {
    let i = |op, ty| eval_int(op, ty, [a, b, 0, 0]);
    let fl = |op| eval_float(op, T::F64, FMode::RN, [a, b, 0]);
    match f {
        Bin64::Add => i(IntOp::Add, T::S64),
        Bin64::Sub => i(IntOp::Sub, T::S64),
        Bin64::MulLo => i(IntOp::MulLo, T::S64),
        Bin64::And => i(IntOp::And, T::B64),
        Bin64::Or => i(IntOp::Or, T::B64),
        Bin64::Xor => i(IntOp::Xor, T::B64),
        Bin64::AddF => fl(FloatOp::Add),
        Bin64::SubF => fl(FloatOp::Sub),
        Bin64::MulF => fl(FloatOp::Mul),
    }
}

const B32: [Bin32; 18] = [
    Bin32::Add,
    Bin32::Sub,
    Bin32::MulLo,
    Bin32::And,
    Bin32::Or,
    Bin32::Xor,
    Bin32::Shl,
    Bin32::ShrU,
    Bin32::ShrS,
    Bin32::MinS,
    Bin32::MinU,
    Bin32::MaxS,
    Bin32::MaxU,
    Bin32::AddF,
    Bin32::SubF,
    Bin32::MulF,
    Bin32::MinF,
    Bin32::MaxF,
];
const B64: [Bin64; 9] = [Bin64::Add, Bin64::Sub, Bin64::MulLo, Bin64::And, Bin64::Or, Bin64::Xor, Bin64::AddF, Bin64::SubF, Bin64::MulF];

/// Interesting f32 bit patterns: zeros, subnormals, infinities, NaNs with payloads.
fn special32() -> impl Strategy<Value = u32> {
    prop_oneof![
        Just(0u32),
        Just(0x8000_0000),
        Just(1),
        Just(0x807F_FFFF),
        Just(0x7F80_0000),
        Just(0xFF80_0000),
        Just(0x7FC0_0000),
        Just(0xFFC1_2345),
        Just(0x7F80_0001),
        Just(0x3F80_0000),
        Just(32),
        Just(31),
        Just(33),
        any::<u32>(),
    ]
}

fn special64() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0u64),
        Just(1 << 63),
        Just(1),
        Just(0x7FF0_0000_0000_0000),
        Just(0xFFF0_0000_0000_0000),
        Just(0x7FF8_0000_0000_0000),
        Just(0xFFF4_0000_0000_1234),
        Just(0x7FF0_0000_0000_0001),
        Just(0x3FF0_0000_0000_0000),
        any::<u64>(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn bin32_fast_paths_match_numerics(a in special32(), b in special32()) {
        for f in B32 {
            prop_assert_eq!(bin32_lane(f, a, b), reference32(f, a, b), "{:?} {:#x} {:#x}", f, a, b);
        }
    }

    #[test]
    fn bin64_fast_paths_match_numerics(a in special64(), b in special64()) {
        for f in B64 {
            prop_assert_eq!(bin64_lane(f, a, b), reference64(f, a, b), "{:?} {:#x} {:#x}", f, a, b);
        }
    }

    #[test]
    fn fma_fast_paths_match_numerics(a in special32(), b in special32(), c in special32(), x in special64(), y in special64(), z in special64()) {
        let r32 = eval_float(FloatOp::Fma, T::F32, FMode::RN, [a as u64, b as u64, c as u64]) as u32;
        prop_assert_eq!(fma_f32_lane(a, b, c), r32);
        let r64 = eval_float(FloatOp::Fma, T::F64, FMode::RN, [x, y, z]);
        prop_assert_eq!(fma_f64_lane(x, y, z), r64);
    }
}
