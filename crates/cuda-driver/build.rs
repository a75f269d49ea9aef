//! The cdylib is loaded as `libcuda.so.1`: give it that soname, and keep it
//! loaded once loaded (`-z nodelete`), so that what it registers with
//! `atexit` runs at the program's exit even when a client `dlclose`s it.
//! `rustc-link-arg-cdylib` applies to this package's own cdylib only (the
//! older `rustc-cdylib-link-arg` also reached every cdylib linking this crate).
fn main() {
    println!("cargo:rustc-link-arg-cdylib=-Wl,-soname,libcuda.so.1");
    println!("cargo:rustc-link-arg-cdylib=-Wl,-z,nodelete");
}
