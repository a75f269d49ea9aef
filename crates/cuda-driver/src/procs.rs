//! `cuGetProcAddress`: each driver function by the name and CUDA version a
//! client asks for. The versions are those of the `PFN_<name>_v<version>`
//! typedefs in cudaTypedefs.h (CUDA 13); the i-th ABI variant of a name
//! (`cuX`, `cuX_v2`, ...) is its i-th version. `None`: a variant warpsim does
//! not implement, answered `CUDA_ERROR_NOT_FOUND`. One row a name:
//! `name: version function, ...;` with `-` for such a variant.

use crate::api_core::*;
use crate::api_mem::*;
use crate::api_module::*;
use crate::api_pool::*;
use crate::api_stream::*;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::OnceLock;

type Row = (i32, Option<usize>);

/// The table from its rows: each function as its address, each `-` as `None`.
macro_rules! procs {
    ($($name:ident: $($version:literal $f:tt),+;)*) => {
        [$((stringify!($name), vec![$(($version, procs!(@fn $f))),+])),*].into_iter().collect()
    };
    (@fn -) => { None };
    (@fn $f:ident) => { Some($f as *const () as usize) };
}

fn table() -> &'static HashMap<&'static str, Vec<Row>> {
    static T: OnceLock<HashMap<&'static str, Vec<Row>>> = OnceLock::new();
    T.get_or_init(|| {
        procs! {
            cuCtxCreate: 2000 -, 3020 cuCtxCreate_v2, 11040 -, 12050 cuCtxCreate_v4;
            cuCtxDestroy: 2000 -, 4000 cuCtxDestroy_v2;
            cuCtxGetApiVersion: 3020 cuCtxGetApiVersion;
            cuCtxGetCacheConfig: 3020 cuCtxGetCacheConfig;
            cuCtxGetCurrent: 4000 cuCtxGetCurrent;
            cuCtxGetDevice: 2000 cuCtxGetDevice, 13000 cuCtxGetDevice_v2;
            cuCtxGetFlags: 7000 cuCtxGetFlags;
            cuCtxGetId: 12000 cuCtxGetId;
            cuCtxGetLimit: 3010 cuCtxGetLimit;
            cuCtxGetStreamPriorityRange: 5050 cuCtxGetStreamPriorityRange;
            cuCtxPopCurrent: 2000 -, 4000 cuCtxPopCurrent_v2;
            cuCtxPushCurrent: 2000 -, 4000 cuCtxPushCurrent_v2;
            cuCtxResetPersistingL2Cache: 11000 cuCtxResetPersistingL2Cache;
            cuCtxSetCacheConfig: 3020 cuCtxSetCacheConfig;
            cuCtxSetCurrent: 4000 cuCtxSetCurrent;
            cuCtxSetFlags: 12010 cuCtxSetFlags;
            cuCtxSetLimit: 3010 cuCtxSetLimit;
            cuCtxSynchronize: 2000 cuCtxSynchronize, 13000 cuCtxSynchronize_v2;
            cuDeviceCanAccessPeer: 4000 cuDeviceCanAccessPeer;
            cuDeviceComputeCapability: 2000 cuDeviceComputeCapability;
            cuDeviceGet: 2000 cuDeviceGet;
            cuDeviceGetAttribute: 2000 cuDeviceGetAttribute;
            cuDeviceGetByPCIBusId: 4010 cuDeviceGetByPCIBusId;
            cuDeviceGetCount: 2000 cuDeviceGetCount;
            cuDeviceGetDefaultMemPool: 11020 cuDeviceGetDefaultMemPool;
            cuDeviceGetLuid: 10000 cuDeviceGetLuid;
            cuDeviceGetMemPool: 11020 cuDeviceGetMemPool;
            cuDeviceGetName: 2000 cuDeviceGetName;
            cuDeviceGetPCIBusId: 4010 cuDeviceGetPCIBusId;
            cuDeviceGetUuid: 9020 cuDeviceGetUuid, 11040 cuDeviceGetUuid_v2;
            cuDevicePrimaryCtxGetState: 7000 cuDevicePrimaryCtxGetState;
            cuDevicePrimaryCtxRelease: 7000 cuDevicePrimaryCtxRelease, 11000 cuDevicePrimaryCtxRelease_v2;
            cuDevicePrimaryCtxReset: 7000 cuDevicePrimaryCtxReset, 11000 cuDevicePrimaryCtxReset_v2;
            cuDevicePrimaryCtxRetain: 7000 cuDevicePrimaryCtxRetain;
            cuDevicePrimaryCtxSetFlags: 7000 cuDevicePrimaryCtxSetFlags, 11000 cuDevicePrimaryCtxSetFlags_v2;
            cuDeviceSetMemPool: 11020 cuDeviceSetMemPool;
            cuDeviceTotalMem: 2000 -, 3020 cuDeviceTotalMem_v2;
            cuDriverGetVersion: 2020 cuDriverGetVersion;
            cuEventCreate: 2000 cuEventCreate;
            cuEventDestroy: 2000 -, 4000 cuEventDestroy_v2;
            cuEventElapsedTime: 2000 cuEventElapsedTime, 12080 cuEventElapsedTime_v2;
            cuEventQuery: 2000 cuEventQuery;
            cuEventRecord: 2000 cuEventRecord;
            cuEventRecordWithFlags: 11010 cuEventRecordWithFlags;
            cuEventSynchronize: 2000 cuEventSynchronize;
            cuFuncGetAttribute: 2020 cuFuncGetAttribute;
            cuFuncGetModule: 11000 cuFuncGetModule;
            cuFuncGetParamInfo: 12040 cuFuncGetParamInfo;
            cuFuncGetName: 12030 cuFuncGetName;
            cuFuncIsLoaded: 12040 cuFuncIsLoaded;
            cuFuncLoad: 12040 cuFuncLoad;
            cuFuncSetAttribute: 9000 cuFuncSetAttribute;
            cuFuncSetCacheConfig: 3000 cuFuncSetCacheConfig;
            cuFuncSetSharedMemConfig: 4020 cuFuncSetSharedMemConfig;
            cuGetErrorName: 6000 cuGetErrorName;
            cuGetErrorString: 6000 cuGetErrorString;
            cuGetExportTable: 3000 cuGetExportTable;
            cuGetProcAddress: 11030 cuGetProcAddress, 12000 cuGetProcAddress_v2;
            cuInit: 2000 cuInit;
            cuKernelGetAttribute: 12000 cuKernelGetAttribute;
            cuKernelGetFunction: 12000 cuKernelGetFunction;
            cuKernelGetName: 12030 cuKernelGetName;
            cuKernelGetParamInfo: 12040 cuKernelGetParamInfo;
            cuKernelSetAttribute: 12000 cuKernelSetAttribute;
            cuKernelSetCacheConfig: 12000 cuKernelSetCacheConfig;
            cuLaunchCooperativeKernel: 9000 cuLaunchCooperativeKernel;
            cuLaunchHostFunc: 10000 cuLaunchHostFunc, 13010 -;
            cuLaunchKernel: 4000 cuLaunchKernel;
            cuLaunchKernelEx: 11060 cuLaunchKernelEx;
            cuLibraryGetGlobal: 12000 cuLibraryGetGlobal;
            cuLibraryGetKernel: 12000 cuLibraryGetKernel;
            cuLibraryGetKernelCount: 12040 cuLibraryGetKernelCount;
            cuLibraryGetModule: 12000 cuLibraryGetModule;
            cuLibraryLoadData: 12000 cuLibraryLoadData;
            cuLibraryLoadFromFile: 12000 cuLibraryLoadFromFile;
            cuLibraryUnload: 12000 cuLibraryUnload;
            cuLinkAddData: 5050 -, 6050 cuLinkAddData_v2;
            cuLinkAddFile: 5050 -, 6050 cuLinkAddFile_v2;
            cuLinkComplete: 5050 cuLinkComplete;
            cuLinkCreate: 5050 -, 6050 cuLinkCreate_v2;
            cuLinkDestroy: 5050 cuLinkDestroy;
            cuMemAdvise: 8000 cuMemAdvise, 12020 cuMemAdvise_v2;
            cuMemAlloc: 2000 -, 3020 cuMemAlloc_v2;
            cuMemAllocAsync: 11020 cuMemAllocAsync;
            cuMemAllocFromPoolAsync: 11020 cuMemAllocFromPoolAsync;
            cuMemAllocHost: 2000 -, 3020 cuMemAllocHost_v2;
            cuMemAllocManaged: 6000 cuMemAllocManaged;
            cuMemAllocPitch: 2000 -, 3020 cuMemAllocPitch_v2;
            cuMemFree: 2000 -, 3020 cuMemFree_v2;
            cuMemFreeAsync: 11020 cuMemFreeAsync;
            cuMemFreeHost: 2000 cuMemFreeHost;
            cuMemGetAddressRange: 2000 -, 3020 cuMemGetAddressRange_v2;
            cuMemGetInfo: 2000 -, 3020 cuMemGetInfo_v2;
            cuMemHostAlloc: 2020 cuMemHostAlloc;
            cuMemHostGetDevicePointer: 2020 -, 3020 cuMemHostGetDevicePointer_v2;
            cuMemHostGetFlags: 2030 cuMemHostGetFlags;
            cuMemHostRegister: 4000 -, 6050 cuMemHostRegister_v2;
            cuMemHostUnregister: 4000 cuMemHostUnregister;
            cuMemPrefetchAsync: 8000 cuMemPrefetchAsync, 12020 cuMemPrefetchAsync_v2;
            cuMemPoolCreate: 11020 cuMemPoolCreate;
            cuMemPoolDestroy: 11020 cuMemPoolDestroy;
            cuMemPoolGetAccess: 11020 cuMemPoolGetAccess;
            cuMemPoolGetAttribute: 11020 cuMemPoolGetAttribute;
            cuMemPoolSetAccess: 11020 cuMemPoolSetAccess;
            cuMemPoolSetAttribute: 11020 cuMemPoolSetAttribute;
            cuMemPoolTrimTo: 11020 cuMemPoolTrimTo;
            cuMemcpy: 4000 cuMemcpy;
            cuMemcpyAsync: 4000 cuMemcpyAsync;
            cuMemcpy2D: 2000 -, 3020 cuMemcpy2D_v2;
            cuMemcpy2DAsync: 2000 -, 3020 cuMemcpy2DAsync_v2;
            cuMemcpy2DUnaligned: 2000 -, 3020 cuMemcpy2DUnaligned_v2;
            cuMemcpy3D: 2000 -, 3020 cuMemcpy3D_v2;
            cuMemcpy3DAsync: 2000 -, 3020 cuMemcpy3DAsync_v2;
            cuMemcpyDtoD: 2000 -, 3020 cuMemcpyDtoD_v2;
            cuMemcpyDtoDAsync: 3000 -, 3020 cuMemcpyDtoDAsync_v2;
            cuMemcpyDtoH: 2000 -, 3020 cuMemcpyDtoH_v2;
            cuMemcpyDtoHAsync: 2000 -, 3020 cuMemcpyDtoHAsync_v2;
            cuMemcpyHtoD: 2000 -, 3020 cuMemcpyHtoD_v2;
            cuMemcpyHtoDAsync: 2000 -, 3020 cuMemcpyHtoDAsync_v2;
            cuMemsetD16: 2000 -, 3020 cuMemsetD16_v2;
            cuMemsetD2D16: 2000 -, 3020 cuMemsetD2D16_v2;
            cuMemsetD2D16Async: 3020 cuMemsetD2D16Async;
            cuMemsetD2D32: 2000 -, 3020 cuMemsetD2D32_v2;
            cuMemsetD2D32Async: 3020 cuMemsetD2D32Async;
            cuMemsetD2D8: 2000 -, 3020 cuMemsetD2D8_v2;
            cuMemsetD2D8Async: 3020 cuMemsetD2D8Async;
            cuMemsetD16Async: 3020 cuMemsetD16Async;
            cuMemsetD32: 2000 -, 3020 cuMemsetD32_v2;
            cuMemsetD32Async: 3020 cuMemsetD32Async;
            cuMemsetD8: 2000 -, 3020 cuMemsetD8_v2;
            cuMemsetD8Async: 3020 cuMemsetD8Async;
            cuModuleGetFunction: 2000 cuModuleGetFunction;
            cuModuleGetFunctionCount: 12040 cuModuleGetFunctionCount;
            cuModuleGetGlobal: 2000 -, 3020 cuModuleGetGlobal_v2;
            cuModuleGetLoadingMode: 11070 cuModuleGetLoadingMode;
            cuModuleLoad: 2000 cuModuleLoad;
            cuModuleLoadData: 2000 cuModuleLoadData;
            cuModuleLoadDataEx: 2010 cuModuleLoadDataEx;
            cuModuleLoadFatBinary: 2000 cuModuleLoadFatBinary;
            cuModuleUnload: 2000 cuModuleUnload;
            cuOccupancyAvailableDynamicSMemPerBlock: 10020 cuOccupancyAvailableDynamicSMemPerBlock;
            cuOccupancyMaxActiveBlocksPerMultiprocessor: 6050 cuOccupancyMaxActiveBlocksPerMultiprocessor;
            cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags: 7000 cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags;
            cuOccupancyMaxPotentialBlockSize: 6050 cuOccupancyMaxPotentialBlockSize;
            cuPointerGetAttribute: 4000 cuPointerGetAttribute;
            cuPointerGetAttributes: 7000 cuPointerGetAttributes;
            cuPointerSetAttribute: 6000 cuPointerSetAttribute;
            cuProfilerStart: 0 cuProfilerStart;
            cuProfilerStop: 0 cuProfilerStop;
            cuStreamAddCallback: 5000 cuStreamAddCallback;
            cuStreamCreate: 2000 cuStreamCreate;
            cuStreamCreateWithPriority: 5050 cuStreamCreateWithPriority;
            cuStreamDestroy: 2000 -, 4000 cuStreamDestroy_v2;
            cuStreamGetCtx: 9020 cuStreamGetCtx, 12050 -;
            cuStreamGetFlags: 5050 cuStreamGetFlags;
            cuStreamGetId: 12000 cuStreamGetId;
            cuStreamGetPriority: 5050 cuStreamGetPriority;
            cuStreamIsCapturing: 10000 cuStreamIsCapturing;
            cuStreamQuery: 2000 cuStreamQuery;
            cuStreamSynchronize: 2000 cuStreamSynchronize;
            cuStreamWaitEvent: 3020 cuStreamWaitEvent;
        }
    })
}

/// The function `name` resolves to for a client built for CUDA `version`.
pub fn lookup(name: &str, version: i32) -> Option<*mut c_void> {
    let rows = table().get(name)?;
    let row = rows.iter().filter(|r| r.0 <= version).max_by_key(|r| r.0).or_else(|| rows.iter().find(|r| r.0 == 0))?;
    row.1.map(|f| f as *mut c_void)
}

/// Whether warpsim implements some variant of `name`.
pub fn known(name: &str) -> bool {
    table().contains_key(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_pick_the_abi_variant() {
        let alloc = lookup("cuMemAlloc", 13000).unwrap();
        assert_eq!(alloc, cuMemAlloc_v2 as *mut c_void);
        assert_eq!(lookup("cuMemAlloc", 2000), None, "the 32-bit cuMemAlloc of CUDA 2.0 is not implemented");
        assert_eq!(lookup("cuEventElapsedTime", 12000), Some(cuEventElapsedTime as *const () as *mut c_void));
        assert_eq!(lookup("cuEventElapsedTime", 13000), Some(cuEventElapsedTime_v2 as *const () as *mut c_void));
        assert_eq!(lookup("cuGetProcAddress", 12000), Some(cuGetProcAddress_v2 as *const () as *mut c_void));
        assert_eq!(lookup("cuGraphLaunch", 13000), None);
        assert_eq!(lookup("", 13000), None);
    }
}
