//! The extension module carries warpsim's CUDA driver (see `lib.rs`) and says so
//! with the driver's soname, `libcuda.so.1`: that is how `cuda.bindings` finds
//! an already-loaded driver. `-z nodelete` as for the driver library itself,
//! so that what the driver registers with `atexit` runs at exit.
fn main() {
    println!("cargo:rustc-link-arg-cdylib=-Wl,-soname,libcuda.so.1");
    println!("cargo:rustc-link-arg-cdylib=-Wl,-z,nodelete");
}
