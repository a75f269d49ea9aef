//! warpsim as a library: running launches described by manifests (the corpus
//! runner) and by command-line arguments, shared by the binary and the
//! corpus-wide integration tests.

pub mod checking;
pub mod cuda;
pub mod demo;
pub mod reporting;
pub mod runner;
pub mod timing_cli;
