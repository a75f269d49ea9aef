//! The extension module carries warpsim's CUDA driver (see `lib.rs`) and says so
//! with the driver's soname, `libcuda.so.1`: that is how `cuda.bindings` finds
//! an already-loaded driver. `-z nodelete` as for the driver library itself,
//! so that what the driver registers with `atexit` runs at exit.
//!
//! `warpsim_extension` tells the CLI's `main.rs`, compiled in here as a module,
//! that it is not the `warpsim` binary: the binary's allocator stays out of
//! Python's process.
fn main() {
    println!("cargo:rustc-link-arg-cdylib=-Wl,-soname,libcuda.so.1");
    println!("cargo:rustc-link-arg-cdylib=-Wl,-z,nodelete");
    println!("cargo:rustc-cfg=warpsim_extension");
}
