//! Strategies the modules' property tests share.

use proptest::prelude::*;

use crate::types::{Rounding, ScalarType};

/// Every scalar type, indexed by the tests' `0..21` ranges.
pub const ALL_TYPES: &[ScalarType] = ScalarType::UNIT;

/// No rounding modifier, or any one.
pub fn rnd() -> impl Strategy<Value = Option<Rounding>> {
    let all = std::iter::once(None).chain(Rounding::UNIT.iter().copied().map(Some));
    prop::sample::select(all.collect::<Vec<_>>())
}
