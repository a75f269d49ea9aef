//! The driver API as a client calls it, in-process: one test, in order,
//! because the driver's state is one per process and a fault is sticky.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::ptr::{null, null_mut};
use warpsim_cuda::api_core::*;
use warpsim_cuda::api_mem::*;
use warpsim_cuda::api_module::*;
use warpsim_cuda::api_stream::*;
use warpsim_cuda::errors::*;

const PTX: &str = r#".version 8.0
.target sm_90
.address_size 64
.global .align 4 .u32 counter;
.visible .entry scale(.param .u64 p, .param .f32 k, .param .u32 n)
{
  .reg .pred %p;
  .reg .b32 %r<4>;
  .reg .f32 %f<3>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p];
  ld.param.f32 %f1, [k];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %tid.x;
  setp.ge.u32 %p, %r2, %r1;
  @%p bra DONE;
  mul.wide.u32 %rd2, %r2, 4;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.f32 %f2, [%rd3];
  mul.f32 %f2, %f2, %f1;
  st.global.f32 [%rd3], %f2;
  atom.global.add.u32 %r3, [counter], 1;
DONE:
  ret;
}
.visible .entry poke(.param .u64 p)
{
  .reg .b64 %rd<2>;
  .reg .b32 %r<2>;
  ld.param.u64 %rd1, [p];
  mov.u32 %r1, 7;
  st.global.u32 [%rd1], %r1;
  ret;
}
"#;

/// Two units for the linker: `LINK_MAIN` uses a function and a variable of `LINK_LIB`'s.
const LINK_LIB: &str = r#".version 8.0
.target sm_90
.address_size 64
.visible .global .align 4 .u32 uses = 9;
.visible .func (.param .b32 r) seven()
{
  .reg .b32 %r<2>;
  mov.u32 %r1, 7;
  st.param.b32 [r], %r1;
  ret;
}
.visible .entry count_up()
{
  .reg .b32 %r<2>;
  atom.global.add.u32 %r1, [uses], 1;
  ret;
}
"#;

const LINK_MAIN: &str = r#".version 8.0
.target sm_90
.address_size 64
.extern .func (.param .b32 r) seven();
.extern .global .align 4 .u32 uses;
.visible .entry use_seven(.param .u64 p)
{
  .reg .b32 %r<3>;
  .reg .b64 %rd<2>;
  {
  .param .b32 r;
  call.uni (r), seven, ();
  ld.param.b32 %r1, [r];
  }
  ld.param.u64 %rd1, [p];
  st.global.u32 [%rd1], %r1;
  atom.global.add.u32 %r2, [uses], 1;
  ret;
}
"#;

fn ok(r: CUresult) {
    assert_eq!(r, CUDA_SUCCESS, "{}", name(r));
}

fn name(r: CUresult) -> String {
    let mut p: *const c_char = null();
    // SAFETY: a valid out-pointer; the result is a static C string.
    unsafe {
        cuGetErrorName(r, &mut p);
        if p.is_null() {
            return format!("code {r}");
        }
        CStr::from_ptr(p).to_string_lossy().into_owned()
    }
}

#[test]
fn a_program_s_calls_in_order() {
    // SAFETY: every pointer below is a live local of the right type, as cuda.h asks.
    unsafe {
        let mut v = 0;
        ok(cuDriverGetVersion(&mut v));
        assert!(v >= 13000);
        assert_eq!(cuDeviceGetCount(&mut v), CUDA_ERROR_NOT_INITIALIZED);
        ok(cuInit(0));
        ok(cuDeviceGetCount(&mut v));
        assert_eq!(v, 1);
        let mut buf = [0 as c_char; 64];
        ok(cuDeviceGetName(buf.as_mut_ptr(), 64, 0));
        assert!(CStr::from_ptr(buf.as_ptr()).to_str().unwrap().contains("H200"));
        ok(cuDeviceGetAttribute(&mut v, 16, 0));
        assert_eq!(v, 132);
        assert_eq!(cuDeviceGetAttribute(&mut v, 16, 1), CUDA_ERROR_INVALID_DEVICE);
        let mut ctx = null_mut();
        ok(cuDevicePrimaryCtxRetain(&mut ctx, 0));
        ok(cuCtxSetCurrent(ctx));
        let mut cur = null_mut();
        ok(cuCtxGetCurrent(&mut cur));
        assert_eq!(cur, ctx);

        // Every function is reachable by name, the ABI variant by version; the rest is NOT_FOUND.
        let mut f: *mut c_void = null_mut();
        let mut status = -1;
        ok(cuGetProcAddress_v2(c"cuMemAlloc".as_ptr(), &mut f, 13000, 0, &mut status));
        assert_eq!((f, status), (cuMemAlloc_v2 as *const () as *mut c_void, 0));
        assert_eq!(cuGetProcAddress_v2(c"cuGraphLaunch".as_ptr(), &mut f, 13000, 0, &mut status), CUDA_ERROR_NOT_FOUND);
        assert!(f.is_null());

        // Device memory: copies both ways, sets, device-to-device.
        let mut d = 0u64;
        ok(cuMemAlloc_v2(&mut d, 64 * 4));
        let host: Vec<f32> = (0..64).map(|i| i as f32).collect();
        ok(cuMemcpyHtoD_v2(d, host.as_ptr() as *const c_void, 256));
        let mut e = 0u64;
        ok(cuMemAlloc_v2(&mut e, 256));
        ok(cuMemcpyDtoD_v2(e, d, 256));
        let mut back = vec![0f32; 64];
        ok(cuMemcpyDtoH_v2(back.as_mut_ptr() as *mut c_void, e, 256));
        assert_eq!(back, host);
        ok(cuMemsetD32_v2(e, 0x3f80_0000, 64));
        ok(cuMemcpy(back.as_mut_ptr() as u64, e, 256));
        assert!(back.iter().all(|&x| x == 1.0));
        let mut mt = 0u32;
        ok(cuPointerGetAttribute(&mut mt as *mut u32 as *mut c_void, 2, d + 8));
        assert_eq!(mt, 2, "device memory");
        assert_eq!(cuPointerGetAttribute(&mut mt as *mut u32 as *mut c_void, 2, back.as_ptr() as u64), CUDA_ERROR_INVALID_VALUE);
        let mut attrs = [2 as c_int];
        let mut outs = [&mut mt as *mut u32 as *mut c_void];
        ok(cuPointerGetAttributes(1, attrs.as_mut_ptr(), outs.as_mut_ptr(), back.as_ptr() as u64));
        assert_eq!(mt, 0, "unregistered host memory has no memory type");
        // Device addresses never fall among the host's mappings.
        assert!(d >= 0x7f00_0000_0000 && cuMemcpyHtoD_v2(d + (1 << 30), host.as_ptr() as *const c_void, 4) != CUDA_SUCCESS);

        // A module from PTX text: lazily compiled, launched, its variable shared by its kernels.
        let mut src = PTX.as_bytes().to_vec();
        src.push(0);
        let mut m = null_mut();
        ok(cuModuleLoadData(&mut m, src.as_ptr() as *const c_void));
        let mut k = null_mut();
        ok(cuModuleGetFunction(&mut k, m, c"scale".as_ptr()));
        assert_eq!(cuModuleGetFunction(&mut k, m, c"nope".as_ptr()), CUDA_ERROR_NOT_FOUND);
        ok(cuModuleGetFunction(&mut k, m, c"scale".as_ptr()));
        let (mut g, mut gsize) = (0u64, 0usize);
        ok(cuModuleGetGlobal_v2(&mut g, &mut gsize, m, c"counter".as_ptr()));
        assert_eq!(gsize, 4);
        let (mut p, mut kk, mut n) = (d, 2.0f32, 48u32);
        let mut params = [&mut p as *mut u64 as *mut c_void, &mut kk as *mut f32 as *mut c_void, &mut n as *mut u32 as *mut c_void];
        ok(cuLaunchKernel(k, 1, 1, 1, 64, 1, 1, 0, null_mut(), params.as_mut_ptr(), null_mut()));
        ok(cuLaunchKernel(k, 1, 1, 1, 64, 1, 1, 0, null_mut(), params.as_mut_ptr(), null_mut()));
        ok(cuCtxSynchronize());
        ok(cuMemcpyDtoH_v2(back.as_mut_ptr() as *mut c_void, d, 256));
        assert_eq!(back[5], 20.0);
        assert_eq!(back[50], 50.0, "past n: untouched");
        let mut count = 0u32;
        ok(cuMemcpyDtoH_v2(&mut count as *mut u32 as *mut c_void, g, 4));
        assert_eq!(count, 96, "both launches counted in the one module variable");
        ok(cuFuncGetAttribute(&mut v, 1, k));
        assert_eq!(v, 0, "no static shared memory");
        ok(cuOccupancyMaxActiveBlocksPerMultiprocessor(&mut v, k, 256, 0));
        assert!(v >= 1);

        // Libraries: a CUkernel is accepted as the CUfunction; the linker's blob loads back.
        let mut lib = null_mut();
        ok(cuLibraryLoadData(&mut lib, src.as_ptr() as *const c_void, null_mut(), null_mut(), 0, null_mut(), null_mut(), 0));
        let mut kern = null_mut();
        ok(cuLibraryGetKernel(&mut kern, lib, c"poke".as_ptr()));
        let mut link = null_mut();
        ok(cuLinkCreate_v2(0, null_mut(), null_mut(), &mut link));
        ok(cuLinkAddData_v2(link, 1, src.as_ptr() as *mut c_void, src.len(), c"k.ptx".as_ptr(), 0, null_mut(), null_mut()));
        let (mut blob, mut blob_len) = (null_mut(), 0usize);
        ok(cuLinkComplete(link, &mut blob, &mut blob_len));
        let mut lm = null_mut();
        ok(cuModuleLoadData(&mut lm, blob));
        ok(cuLinkDestroy(link));
        let mut lf = null_mut();
        ok(cuModuleGetFunction(&mut lf, lm, c"poke".as_ptr()));

        // Two PTX inputs: one's `.extern` function and variable are the other's; the variable is
        // one object for the kernels of both; a link that leaves an `.extern` undefined fails,
        // naming it in the error log.
        let (lib_ptx, main_ptx) = (format!("{LINK_LIB}\0"), format!("{LINK_MAIN}\0"));
        let add = |link: *mut c_void, src: &str, name: &CStr| {
            cuLinkAddData_v2(link, 1, src.as_ptr() as *mut c_void, src.len(), name.as_ptr(), 0, null_mut(), null_mut())
        };
        ok(cuLinkCreate_v2(0, null_mut(), null_mut(), &mut link));
        ok(add(link, &main_ptx, c"main.ptx"));
        ok(add(link, &lib_ptx, c"lib.ptx"));
        ok(cuLinkComplete(link, &mut blob, &mut blob_len));
        let mut two = null_mut();
        ok(cuModuleLoadData(&mut two, blob));
        ok(cuLinkDestroy(link));
        let (mut use_seven, mut count_up) = (null_mut(), null_mut());
        ok(cuModuleGetFunction(&mut use_seven, two, c"use_seven".as_ptr()));
        ok(cuModuleGetFunction(&mut count_up, two, c"count_up".as_ptr()));
        let mut out = 0u64;
        ok(cuMemAlloc_v2(&mut out, 4));
        let mut kparams = [&mut out as *mut u64 as *mut c_void];
        ok(cuLaunchKernel(use_seven, 1, 1, 1, 1, 1, 1, 0, null_mut(), kparams.as_mut_ptr(), null_mut()));
        ok(cuLaunchKernel(count_up, 1, 1, 1, 1, 1, 1, 0, null_mut(), null_mut(), null_mut()));
        let (mut got, mut count) = (0u32, 0u32);
        ok(cuMemcpyDtoH_v2(&mut got as *mut u32 as *mut c_void, out, 4));
        let (mut gp, mut gsize) = (0u64, 0usize);
        ok(cuModuleGetGlobal_v2(&mut gp, &mut gsize, two, c"uses".as_ptr()));
        ok(cuMemcpyDtoH_v2(&mut count as *mut u32 as *mut c_void, gp, 4));
        assert_eq!((got, count, gsize), (7, 11, 4), "seven() from lib.ptx; `uses` counted by a kernel of each input");
        let mut log = [0u8; 256];
        let mut opts = [5 as c_int, 6];
        let mut vals = [log.as_mut_ptr() as *mut c_void, log.len() as *mut c_void];
        ok(cuLinkCreate_v2(2, opts.as_mut_ptr(), vals.as_mut_ptr(), &mut link));
        ok(add(link, &main_ptx, c"main.ptx"));
        assert_eq!(cuLinkComplete(link, &mut blob, &mut blob_len), CUDA_ERROR_INVALID_PTX);
        ok(cuLinkDestroy(link));
        let log = CStr::from_bytes_until_nul(&log).unwrap().to_string_lossy().into_owned();
        assert!(log.contains("unresolved symbol `seven`: main.ptx (kernel use_seven) uses this function"), "{log}");

        // Managed memory: the host writes it, the kernel reads and writes it, the host sees it.
        let mut mp = 0u64;
        ok(cuMemAllocManaged(&mut mp, 16, 1));
        *(mp as *mut u32) = 1;
        let mut arg = mp;
        let mut kparams = [&mut arg as *mut u64 as *mut c_void];
        ok(cuLaunchKernel(kern, 1, 1, 1, 1, 1, 1, 0, null_mut(), kparams.as_mut_ptr(), null_mut()));
        ok(cuCtxSynchronize());
        assert_eq!(*(mp as *const u32), 7);

        // Events: never a zero elapsed time; streams in issue order.
        let (mut a, mut b, mut s) = (null_mut(), null_mut(), null_mut());
        ok(cuEventCreate(&mut a, 0));
        ok(cuEventCreate(&mut b, 0));
        ok(cuStreamCreate(&mut s, 0));
        ok(cuEventRecord(a, s));
        ok(cuEventRecord(b, s));
        ok(cuStreamSynchronize(s));
        let mut ms = 0f32;
        ok(cuEventElapsedTime_v2(&mut ms, a, b));
        assert!(ms > 0.0);

        // Bad handles are errors, not crashes.
        assert_eq!(
            cuLaunchKernel(0x1234 as *mut c_void, 1, 1, 1, 1, 1, 1, 0, null_mut(), null_mut(), null_mut()),
            CUDA_ERROR_INVALID_HANDLE
        );
        assert_eq!(cuStreamSynchronize(0x999 as *mut c_void), CUDA_ERROR_INVALID_HANDLE);
        assert_eq!(cuEventDestroy_v2(s), CUDA_ERROR_INVALID_HANDLE);
        assert_eq!(cuModuleGetFunction(&mut k, 0x77 as *mut c_void, c"scale".as_ptr()), CUDA_ERROR_INVALID_HANDLE);
        let mut other = null_mut();
        assert_eq!(
            cuModuleLoadData(&mut other, [0x7fu8, b'E', b'L', b'F', 0, 0, 0, 0].as_ptr() as *const c_void),
            CUDA_ERROR_NO_BINARY_FOR_GPU
        );

        // A fault: the launch returns, the next synchronising call and every later one report it.
        let mut far = d + (1 << 34);
        let mut fparams = [&mut far as *mut u64 as *mut c_void];
        ok(cuLaunchKernel(kern, 1, 1, 1, 1, 1, 1, 0, null_mut(), fparams.as_mut_ptr(), null_mut()));
        assert_eq!(cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
        assert_eq!(cuMemcpyDtoH_v2(back.as_mut_ptr() as *mut c_void, d, 4), CUDA_ERROR_ILLEGAL_ADDRESS);
        assert_eq!(cuMemFree_v2(d), CUDA_ERROR_ILLEGAL_ADDRESS);
        let mut s2: *const c_char = null();
        ok(cuGetErrorString(CUDA_ERROR_ILLEGAL_ADDRESS, &mut s2));
        assert_eq!(CStr::from_ptr(s2).to_str().unwrap(), "an illegal memory access was encountered");
    }
}
