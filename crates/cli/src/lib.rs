//! The command line's pieces beside `main.rs`: flags and rendering for
//! checking, timing and reports, `.cu` compilation and the demo. Launching
//! itself is the host library's (`warpsim-host`).
#![forbid(unsafe_code)]

pub mod checking;
pub mod cuda;
pub mod demo;
pub mod progress;
pub mod reporting;
pub mod timing_cli;
