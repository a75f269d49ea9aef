//! The CUDA driver under the runtime, found as NVIDIA's runtime finds it: `dlopen("libcuda.so.1")`
//! at first use, then `dlsym` of the documented `cuda.h` entry points (the versioned names the
//! header's macros give, e.g. `cuMemAlloc_v2`). Whichever driver is first on the library path
//! serves: warpsim's under `warpsim exec`.

use std::ffi::{c_char, c_int, c_uint, c_void};
use std::sync::OnceLock;

use crate::error::{Error, INSUFFICIENT_DRIVER};

pub type CUresult = c_int;
pub type CUdevice = c_int;
pub type CUdeviceptr = u64;
pub type Handle = *mut c_void;

macro_rules! driver_api {
    ($($name:ident ( $($arg:ty),* );)*) => {
        /// The driver's entry points; `None` where the driver lacks one.
        #[allow(non_snake_case)]
        pub struct Driver {
            $(pub $name: Option<unsafe extern "C" fn($($arg),*) -> CUresult>,)*
        }

        impl Driver {
            /// # Safety
            /// `lib` is a handle `dlopen` returned for a library implementing `cuda.h`.
            unsafe fn load(lib: *mut c_void) -> Driver {
                Driver {
                    $($name: {
                        // SAFETY: the name is NUL-terminated; a symbol of that name in a CUDA
                        // driver has the `cuda.h` signature written here.
                        unsafe { symbol(lib, concat!(stringify!($name), "\0")) }
                    },)*
                }
            }
        }
    };
}

driver_api! {
    cuInit(c_uint);
    cuDriverGetVersion(*mut c_int);
    cuDeviceGetCount(*mut c_int);
    cuDeviceGet(*mut CUdevice, c_int);
    cuDeviceGetName(*mut c_char, c_int, CUdevice);
    cuDeviceGetUuid_v2(*mut [u8; 16], CUdevice);
    cuDeviceTotalMem_v2(*mut usize, CUdevice);
    cuDeviceGetAttribute(*mut c_int, c_int, CUdevice);
    cuDevicePrimaryCtxRetain(*mut Handle, CUdevice);
    cuDevicePrimaryCtxRelease_v2(CUdevice);
    cuDevicePrimaryCtxReset_v2(CUdevice);
    cuCtxSetCurrent(Handle);
    cuCtxSynchronize();
    cuCtxGetLimit(*mut usize, c_int);
    cuCtxSetLimit(c_int, usize);
    cuMemAlloc_v2(*mut CUdeviceptr, usize);
    cuMemFree_v2(CUdeviceptr);
    cuMemGetInfo_v2(*mut usize, *mut usize);
    cuMemAllocManaged(*mut CUdeviceptr, usize, c_uint);
    cuMemHostAlloc(*mut *mut c_void, usize, c_uint);
    cuMemFreeHost(*mut c_void);
    cuMemHostGetDevicePointer_v2(*mut CUdeviceptr, *mut c_void, c_uint);
    cuMemcpy(CUdeviceptr, CUdeviceptr, usize);
    cuMemcpyAsync(CUdeviceptr, CUdeviceptr, usize, Handle);
    cuMemcpyHtoD_v2(CUdeviceptr, *const c_void, usize);
    cuMemcpyDtoH_v2(*mut c_void, CUdeviceptr, usize);
    cuMemcpyDtoD_v2(CUdeviceptr, CUdeviceptr, usize);
    cuMemcpyHtoDAsync_v2(CUdeviceptr, *const c_void, usize, Handle);
    cuMemcpyDtoHAsync_v2(*mut c_void, CUdeviceptr, usize, Handle);
    cuMemcpyDtoDAsync_v2(CUdeviceptr, CUdeviceptr, usize, Handle);
    cuMemsetD8_v2(CUdeviceptr, u8, usize);
    cuMemsetD8Async(CUdeviceptr, u8, usize, Handle);
    cuPointerGetAttribute(*mut c_void, c_int, CUdeviceptr);
    cuMemAllocPitch_v2(*mut CUdeviceptr, *mut usize, usize, usize, c_uint);
    cuMemcpy2D_v2(*const crate::pitched::Memcpy2D);
    cuMemcpy2DAsync_v2(*const crate::pitched::Memcpy2D, Handle);
    cuMemcpy3D_v2(*const crate::pitched::Memcpy3D);
    cuMemcpy3DAsync_v2(*const crate::pitched::Memcpy3D, Handle);
    cuMemsetD2D8_v2(CUdeviceptr, usize, u8, usize, usize);
    cuMemsetD2D8Async(CUdeviceptr, usize, u8, usize, usize, Handle);
    cuModuleLoadData(*mut Handle, *const c_void);
    cuLinkCreate_v2(c_uint, *mut c_int, *mut *mut c_void, *mut Handle);
    cuLinkAddData_v2(Handle, c_int, *mut c_void, usize, *const c_char, c_uint, *mut c_int, *mut *mut c_void);
    cuLinkComplete(Handle, *mut *mut c_void, *mut usize);
    cuLinkDestroy(Handle);
    cuModuleGetFunction(*mut Handle, Handle, *const c_char);
    cuModuleGetGlobal_v2(*mut CUdeviceptr, *mut usize, Handle, *const c_char);
    cuLaunchKernel(Handle, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, Handle, *mut *mut c_void, *mut *mut c_void);
    cuFuncGetAttribute(*mut c_int, c_int, Handle);
    cuFuncGetParamInfo(Handle, usize, *mut usize, *mut usize);
    cuFuncSetAttribute(Handle, c_int, c_int);
    cuFuncSetCacheConfig(Handle, c_int);
    cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(*mut c_int, Handle, c_int, usize, c_uint);
    cuStreamCreate(*mut Handle, c_uint);
    cuStreamCreateWithPriority(*mut Handle, c_uint, c_int);
    cuStreamDestroy_v2(Handle);
    cuStreamSynchronize(Handle);
    cuStreamQuery(Handle);
    cuStreamIsCapturing(Handle, *mut c_int);
    cuStreamWaitEvent(Handle, Handle, c_uint);
    cuEventCreate(*mut Handle, c_uint);
    cuEventRecord(Handle, Handle);
    cuEventQuery(Handle);
    cuEventSynchronize(Handle);
    cuEventElapsedTime_v2(*mut f32, Handle, Handle);
    cuEventElapsedTime(*mut f32, Handle, Handle);
    cuEventDestroy_v2(Handle);
    cuLaunchHostFunc(Handle, Option<unsafe extern "C" fn(*mut c_void)>, *mut c_void);
}

/// # Safety
/// `lib` is a live `dlopen` handle, `name` ends in NUL, and `F` is the `unsafe extern "C" fn`
/// type of the symbol of that name.
unsafe fn symbol<F: Copy>(lib: *mut c_void, name: &str) -> Option<F> {
    // SAFETY: as the caller promises; dlsym reads the NUL-terminated name.
    let p = unsafe { libc::dlsym(lib, name.as_ptr().cast()) };
    if p.is_null() {
        return None;
    }
    debug_assert_eq!(std::mem::size_of::<F>(), std::mem::size_of::<*mut c_void>());
    // SAFETY: F is a function pointer type (pointer-sized) and p the address of that function.
    Some(unsafe { std::mem::transmute_copy::<*mut c_void, F>(&p) })
}

/// The driver, loaded once; an error if there is none or it is older than CUDA 13.
pub fn driver() -> Result<&'static Driver, Error> {
    static DRIVER: OnceLock<Result<Driver, Error>> = OnceLock::new();
    DRIVER
        .get_or_init(|| {
            // SAFETY: dlopen reads the NUL-terminated name; the handle is kept for the process.
            let lib = unsafe { libc::dlopen(c"libcuda.so.1".as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
            if lib.is_null() {
                return Err(Error(INSUFFICIENT_DRIVER));
            }
            // SAFETY: lib is a library that calls itself the CUDA driver (its soname).
            let d = unsafe { Driver::load(lib) };
            let mut version = 0;
            match d.cuDriverGetVersion {
                // SAFETY: the driver writes one int.
                Some(f) if unsafe { f(&mut version) } == 0 && version >= 13000 => Ok(d),
                _ => Err(Error(INSUFFICIENT_DRIVER)),
            }
        })
        .as_ref()
        .map_err(|e| *e)
}

/// Calls the driver function `name` with the arguments, mapping its `CUresult`:
/// `cu!(cuMemAlloc_v2(&mut p, n))?`. A function the driver lacks is `cudaErrorNotSupported`.
macro_rules! cu {
    ($name:ident ( $($arg:expr),* $(,)? )) => {{
        match $crate::driver::driver() {
            Err(e) => Err(e),
            Ok(d) => match d.$name {
                None => Err($crate::error::Error($crate::error::NOT_SUPPORTED)),
                // SAFETY: the arguments follow the `cuda.h` declaration of this function; the
                // callers' own SAFETY comments say why the pointers are valid.
                #[allow(unused_unsafe)]
                Some(f) => $crate::error::from_driver(unsafe { f($($arg),*) }),
            },
        }
    }};
}
pub(crate) use cu;
