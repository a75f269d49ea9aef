//! warpsim's CUDA runtime: `libcudart.so.13` for programs built with `nvcc -cudart shared`,
//! written on the CUDA driver API as NVIDIA's runtime is, so it runs on whichever
//! `libcuda.so.1` is loaded (warpsim's, under `warpsim exec`).
//!
//! Every C entry point is `__warpsim_NAME` here and exported as `NAME@libcudart.so.13`, and
//! as `NAME@libcudart.so.12` for CUDA 12 programs (`__warpsim12_NAME` where CUDA 12's ABI
//! differs; see build.rs); each catches panics and reports errors the runtime's way (error.rs).

mod codes;
mod context;
mod device;
mod driver;
mod error;
mod graph;
mod launch;
#[cfg(test)]
mod layout_tests;
mod memory;
mod pitched;
mod register;
mod stream;

pub use error::{message, name, Error};
