//! `cvt`: conversions between every pair of PTX scalar types, with rounding
//! (`.rn .rz .rm .rp .rna` to floats, `.rni .rzi .rmi .rpi` to integral
//! values), `.ftz` and `.sat`, as the PTX ISA's cvt section defines them.

use crate::types::{FMode, ScalarType};

/// Converts `bits` of type `src` to type `dst`. Integer results come back
/// sign-extended to 64 bits for signed `dst`, zero-extended otherwise; float
/// results as their raw bit pattern. Float-to-integer conversions saturate
/// to the destination range and map NaN to 0, as the PTX ISA specifies.
pub fn cvt(dst: ScalarType, src: ScalarType, m: FMode, bits: u64) -> u64 {
    let _ = (dst, src, m, bits);
    unimplemented!("cvt")
}

/// `cvt.rn[.relu][.satfinite].f16x2.f32 d, a, b` and the bf16x2 form: packs
/// two f32 values, `a` into the upper half and `b` into the lower half.
pub fn cvt_pack_x2(dst: ScalarType, m: FMode, a: f32, b: f32) -> u32 {
    let _ = (dst, m, a, b);
    unimplemented!("cvt_pack_x2")
}
