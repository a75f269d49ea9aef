//! The built `libwarpsim_cudart.so` as a program sees it: loaded with `dlopen`, its
//! entry points found by their `libcudart.so.13` names. (Having a test here also makes
//! `cargo test` build the library, which the whole-program tests link against.)

use std::ffi::{c_char, c_int, CStr, CString};
use std::path::PathBuf;

/// The library beside this test's executable (`target/<profile>/deps/`), or one folder up.
fn library() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    let name = "libwarpsim_cudart.so";
    [deps.join(name), deps.parent().unwrap().join(name)]
        .into_iter()
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("no {name} near {}", deps.display()))
}

#[test]
fn a_program_finds_the_runtime_entry_points_by_name() {
    let path = CString::new(library().to_str().unwrap()).unwrap();
    // SAFETY: dlopen/dlsym with valid C strings; the symbols are called with the C signatures
    // driver_types.h gives them.
    unsafe {
        let handle = libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL);
        assert!(!handle.is_null(), "dlopen failed: {:?}", CStr::from_ptr(libc::dlerror()));
        let sym = |name: &str| {
            let c = CString::new(name).unwrap();
            let p = libc::dlsym(handle, c.as_ptr());
            assert!(!p.is_null(), "{name} is not exported");
            p
        };
        let error_name: extern "C" fn(c_int) -> *const c_char = std::mem::transmute(sym("cudaGetErrorName"));
        let error_string: extern "C" fn(c_int) -> *const c_char = std::mem::transmute(sym("cudaGetErrorString"));
        assert_eq!(CStr::from_ptr(error_name(2)).to_str().unwrap(), "cudaErrorMemoryAllocation");
        assert_eq!(CStr::from_ptr(error_string(0)).to_str().unwrap(), "no error");
        let version: extern "C" fn(*mut c_int) -> c_int = std::mem::transmute(sym("cudaRuntimeGetVersion"));
        let mut v = 0;
        assert_eq!(version(&mut v), 0);
        assert!(v >= 13000, "runtime version {v}");
        for name in ["cudaMalloc", "cudaMemcpy", "cudaLaunchKernel", "__cudaRegisterFatBinary", "__cudaRegisterFunction"] {
            sym(name);
        }
    }
}
