//! Tensor-core, matrix-movement, asynchronous-copy and mbarrier
//! instructions: their decoded forms ([`MmaOp`], carried by
//! [`Op::Mma`](crate::Op::Mma)) and the fragment layouts that say which
//! lane and register hold which matrix element.
//!
//! Fragment layouts come from the PTX ISA where it pins them down (`mma`,
//! `ldmatrix`, `wgmma` register fragments). `wmma` fragments are officially
//! opaque; warpsim uses the layout an H200 gives them, recorded with
//! fragment probes (`tests/mma/gpu/mma_gpu.cu`, `tests/mma/golden/probe_*`):
//! m16n16k16 and m32n8k16 fragments are stacks of `mma.m16n8k16` fragments,
//! m8n32k16 is the transpose of m32n8k16 (A and B swap roles), and `.f16` A/B
//! fragments, which have 16 slots for fewer distinct elements, repeat them.
//! The layout does not depend on the `.row`/`.col` memory layout.

//!
//! By role: [`ops`] (the decoded forms), [`fragment`] (element types,
//! shapes and the fragment layouts), [`desc`] (wgmma matrix descriptors and
//! tensor maps). Pictures of the layouts are in `warpsim_report::explain`.

pub mod desc;
pub mod fragment;
pub mod ops;

pub use desc::*;
pub use fragment::*;
pub use ops::*;
