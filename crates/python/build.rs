//! Gives the extension a placeholder soname as long as `libcuda.so.1`:
//! `warpsim.numba` loads a copy of it renamed to that soname, so that
//! `cuda.bindings`, which looks the driver up by soname, finds warpsim's
//! driver in the process (see python/warpsim/numba.py).
fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libwsim.so.1");
}
