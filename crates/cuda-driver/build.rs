//! The cdylib is loaded as `libcuda.so.1`: give it that soname.
fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libcuda.so.1");
}
