//! The functional SIMT engine.
pub mod memory;
