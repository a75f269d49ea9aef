//! The cdylib is loaded as `libcuda.so.1`: give it that soname, and keep it
//! loaded once loaded (`-z nodelete`), so that what it registers with
//! `atexit` runs at the program's exit even when a client `dlclose`s it.
fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libcuda.so.1");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-z,nodelete");
}
