//! The host library under every front end of warpsim (the CLI, the driver and
//! runtime stand-ins, the Python package): what a CUDA host program does,
//! against the simulated GPU.
//!
//! * [`Module`]: PTX text or a file; its kernels compile on first use
//!   ([`ProgramCache`] keeps modules by path for manifests).
//! * [`Context`]: device memory: allocate, free, write and read buffers, with
//!   the lazy initialisers of `warpsim-launch` so a 4 GiB input is never built.
//! * [`Args`]: kernel parameter bytes laid out from the PTX parameter list.
//! * [`launch`]: one launch, functional or on the timing model, with the
//!   observers [`LaunchOptions`] switches on; it returns a [`LaunchSummary`].
//! * [`link_ptx`]: PTX units linked as the driver's JIT linker does (`-rdc`, `cuLinkAddData`).
//! * [`Prepared`]: a context, a kernel and its arguments built from
//!   manifest-style [`ParamSpec`](warpsim_launch::ParamSpec)s; [`corpus`] runs
//!   and checks manifest cases with it.
#![forbid(unsafe_code)]

pub mod corpus;
mod device;
mod error;
mod launch;
pub mod link;
mod module;
mod params;
mod prepared;

pub use device::{Context, DevicePtr};
pub use error::HostError;
pub use launch::{launch, launch_keeping_partial, launch_observed, Dims, LaunchOptions, LaunchSummary, TimingMode};
pub use link::{link_ptx, LinkError, LinkInput};
pub use module::{Kernel, Module, ProgramCache};
pub use params::Args;
pub use prepared::{prepare, BoundBuffer, Prepared};
