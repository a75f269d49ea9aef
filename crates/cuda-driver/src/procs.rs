//! `cuGetProcAddress`: each driver function by the name and CUDA version a
//! client asks for. The versions are those of the `PFN_<name>_v<version>`
//! typedefs in cudaTypedefs.h (CUDA 13); the i-th ABI variant of a name
//! (`cuX`, `cuX_v2`, ...) is its i-th version. `None`: a variant warpsim does
//! not implement, answered `CUDA_ERROR_NOT_FOUND`. Generated; regenerate when
//! functions are added.

use crate::api_core::*;
use crate::api_mem::*;
use crate::api_module::*;
use crate::api_pool::*;
use crate::api_stream::*;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::OnceLock;

type Row = (i32, Option<usize>);

fn table() -> &'static HashMap<&'static str, Vec<Row>> {
    static T: OnceLock<HashMap<&'static str, Vec<Row>>> = OnceLock::new();
    T.get_or_init(|| {
        let rows: Vec<(&str, Vec<Row>)> = vec![
            (
                "cuCtxCreate",
                vec![
                    (2000, None),
                    (3020, Some(cuCtxCreate_v2 as *const () as usize)),
                    (11040, None),
                    (12050, Some(cuCtxCreate_v4 as *const () as usize)),
                ],
            ),
            ("cuCtxDestroy", vec![(2000, None), (4000, Some(cuCtxDestroy_v2 as *const () as usize))]),
            ("cuCtxGetApiVersion", vec![(3020, Some(cuCtxGetApiVersion as *const () as usize))]),
            ("cuCtxGetCacheConfig", vec![(3020, Some(cuCtxGetCacheConfig as *const () as usize))]),
            ("cuCtxGetCurrent", vec![(4000, Some(cuCtxGetCurrent as *const () as usize))]),
            (
                "cuCtxGetDevice",
                vec![(2000, Some(cuCtxGetDevice as *const () as usize)), (13000, Some(cuCtxGetDevice_v2 as *const () as usize))],
            ),
            ("cuCtxGetFlags", vec![(7000, Some(cuCtxGetFlags as *const () as usize))]),
            ("cuCtxGetId", vec![(12000, Some(cuCtxGetId as *const () as usize))]),
            ("cuCtxGetLimit", vec![(3010, Some(cuCtxGetLimit as *const () as usize))]),
            ("cuCtxGetStreamPriorityRange", vec![(5050, Some(cuCtxGetStreamPriorityRange as *const () as usize))]),
            ("cuCtxPopCurrent", vec![(2000, None), (4000, Some(cuCtxPopCurrent_v2 as *const () as usize))]),
            ("cuCtxPushCurrent", vec![(2000, None), (4000, Some(cuCtxPushCurrent_v2 as *const () as usize))]),
            ("cuCtxResetPersistingL2Cache", vec![(11000, Some(cuCtxResetPersistingL2Cache as *const () as usize))]),
            ("cuCtxSetCacheConfig", vec![(3020, Some(cuCtxSetCacheConfig as *const () as usize))]),
            ("cuCtxSetCurrent", vec![(4000, Some(cuCtxSetCurrent as *const () as usize))]),
            ("cuCtxSetFlags", vec![(12010, Some(cuCtxSetFlags as *const () as usize))]),
            ("cuCtxSetLimit", vec![(3010, Some(cuCtxSetLimit as *const () as usize))]),
            (
                "cuCtxSynchronize",
                vec![(2000, Some(cuCtxSynchronize as *const () as usize)), (13000, Some(cuCtxSynchronize_v2 as *const () as usize))],
            ),
            ("cuDeviceCanAccessPeer", vec![(4000, Some(cuDeviceCanAccessPeer as *const () as usize))]),
            ("cuDeviceComputeCapability", vec![(2000, Some(cuDeviceComputeCapability as *const () as usize))]),
            ("cuDeviceGet", vec![(2000, Some(cuDeviceGet as *const () as usize))]),
            ("cuDeviceGetAttribute", vec![(2000, Some(cuDeviceGetAttribute as *const () as usize))]),
            ("cuDeviceGetByPCIBusId", vec![(4010, Some(cuDeviceGetByPCIBusId as *const () as usize))]),
            ("cuDeviceGetCount", vec![(2000, Some(cuDeviceGetCount as *const () as usize))]),
            ("cuDeviceGetDefaultMemPool", vec![(11020, Some(cuDeviceGetDefaultMemPool as *const () as usize))]),
            ("cuDeviceGetLuid", vec![(10000, Some(cuDeviceGetLuid as *const () as usize))]),
            ("cuDeviceGetMemPool", vec![(11020, Some(cuDeviceGetMemPool as *const () as usize))]),
            ("cuDeviceGetName", vec![(2000, Some(cuDeviceGetName as *const () as usize))]),
            ("cuDeviceGetPCIBusId", vec![(4010, Some(cuDeviceGetPCIBusId as *const () as usize))]),
            (
                "cuDeviceGetUuid",
                vec![(9020, Some(cuDeviceGetUuid as *const () as usize)), (11040, Some(cuDeviceGetUuid_v2 as *const () as usize))],
            ),
            ("cuDevicePrimaryCtxGetState", vec![(7000, Some(cuDevicePrimaryCtxGetState as *const () as usize))]),
            (
                "cuDevicePrimaryCtxRelease",
                vec![
                    (7000, Some(cuDevicePrimaryCtxRelease as *const () as usize)),
                    (11000, Some(cuDevicePrimaryCtxRelease_v2 as *const () as usize)),
                ],
            ),
            (
                "cuDevicePrimaryCtxReset",
                vec![
                    (7000, Some(cuDevicePrimaryCtxReset as *const () as usize)),
                    (11000, Some(cuDevicePrimaryCtxReset_v2 as *const () as usize)),
                ],
            ),
            ("cuDevicePrimaryCtxRetain", vec![(7000, Some(cuDevicePrimaryCtxRetain as *const () as usize))]),
            (
                "cuDevicePrimaryCtxSetFlags",
                vec![
                    (7000, Some(cuDevicePrimaryCtxSetFlags as *const () as usize)),
                    (11000, Some(cuDevicePrimaryCtxSetFlags_v2 as *const () as usize)),
                ],
            ),
            ("cuDeviceSetMemPool", vec![(11020, Some(cuDeviceSetMemPool as *const () as usize))]),
            ("cuDeviceTotalMem", vec![(2000, None), (3020, Some(cuDeviceTotalMem_v2 as *const () as usize))]),
            ("cuDriverGetVersion", vec![(2020, Some(cuDriverGetVersion as *const () as usize))]),
            ("cuEventCreate", vec![(2000, Some(cuEventCreate as *const () as usize))]),
            ("cuEventDestroy", vec![(2000, None), (4000, Some(cuEventDestroy_v2 as *const () as usize))]),
            (
                "cuEventElapsedTime",
                vec![(2000, Some(cuEventElapsedTime as *const () as usize)), (12080, Some(cuEventElapsedTime_v2 as *const () as usize))],
            ),
            ("cuEventQuery", vec![(2000, Some(cuEventQuery as *const () as usize))]),
            ("cuEventRecord", vec![(2000, Some(cuEventRecord as *const () as usize))]),
            ("cuEventRecordWithFlags", vec![(11010, Some(cuEventRecordWithFlags as *const () as usize))]),
            ("cuEventSynchronize", vec![(2000, Some(cuEventSynchronize as *const () as usize))]),
            ("cuFuncGetAttribute", vec![(2020, Some(cuFuncGetAttribute as *const () as usize))]),
            ("cuFuncGetModule", vec![(11000, Some(cuFuncGetModule as *const () as usize))]),
            ("cuFuncGetName", vec![(12030, Some(cuFuncGetName as *const () as usize))]),
            ("cuFuncIsLoaded", vec![(12040, Some(cuFuncIsLoaded as *const () as usize))]),
            ("cuFuncLoad", vec![(12040, Some(cuFuncLoad as *const () as usize))]),
            ("cuFuncSetAttribute", vec![(9000, Some(cuFuncSetAttribute as *const () as usize))]),
            ("cuFuncSetCacheConfig", vec![(3000, Some(cuFuncSetCacheConfig as *const () as usize))]),
            ("cuFuncSetSharedMemConfig", vec![(4020, Some(cuFuncSetSharedMemConfig as *const () as usize))]),
            ("cuGetErrorName", vec![(6000, Some(cuGetErrorName as *const () as usize))]),
            ("cuGetErrorString", vec![(6000, Some(cuGetErrorString as *const () as usize))]),
            ("cuGetExportTable", vec![(3000, Some(cuGetExportTable as *const () as usize))]),
            (
                "cuGetProcAddress",
                vec![(11030, Some(cuGetProcAddress as *const () as usize)), (12000, Some(cuGetProcAddress_v2 as *const () as usize))],
            ),
            ("cuInit", vec![(2000, Some(cuInit as *const () as usize))]),
            ("cuKernelGetAttribute", vec![(12000, Some(cuKernelGetAttribute as *const () as usize))]),
            ("cuKernelGetFunction", vec![(12000, Some(cuKernelGetFunction as *const () as usize))]),
            ("cuKernelGetName", vec![(12030, Some(cuKernelGetName as *const () as usize))]),
            ("cuKernelSetAttribute", vec![(12000, Some(cuKernelSetAttribute as *const () as usize))]),
            ("cuKernelSetCacheConfig", vec![(12000, Some(cuKernelSetCacheConfig as *const () as usize))]),
            ("cuLaunchCooperativeKernel", vec![(9000, Some(cuLaunchCooperativeKernel as *const () as usize))]),
            ("cuLaunchHostFunc", vec![(10000, Some(cuLaunchHostFunc as *const () as usize)), (13010, None)]),
            ("cuLaunchKernel", vec![(4000, Some(cuLaunchKernel as *const () as usize))]),
            ("cuLaunchKernelEx", vec![(11060, Some(cuLaunchKernelEx as *const () as usize))]),
            ("cuLibraryGetGlobal", vec![(12000, Some(cuLibraryGetGlobal as *const () as usize))]),
            ("cuLibraryGetKernel", vec![(12000, Some(cuLibraryGetKernel as *const () as usize))]),
            ("cuLibraryGetKernelCount", vec![(12040, Some(cuLibraryGetKernelCount as *const () as usize))]),
            ("cuLibraryGetModule", vec![(12000, Some(cuLibraryGetModule as *const () as usize))]),
            ("cuLibraryLoadData", vec![(12000, Some(cuLibraryLoadData as *const () as usize))]),
            ("cuLibraryLoadFromFile", vec![(12000, Some(cuLibraryLoadFromFile as *const () as usize))]),
            ("cuLibraryUnload", vec![(12000, Some(cuLibraryUnload as *const () as usize))]),
            ("cuLinkAddData", vec![(5050, None), (6050, Some(cuLinkAddData_v2 as *const () as usize))]),
            ("cuLinkAddFile", vec![(5050, None), (6050, Some(cuLinkAddFile_v2 as *const () as usize))]),
            ("cuLinkComplete", vec![(5050, Some(cuLinkComplete as *const () as usize))]),
            ("cuLinkCreate", vec![(5050, None), (6050, Some(cuLinkCreate_v2 as *const () as usize))]),
            ("cuLinkDestroy", vec![(5050, Some(cuLinkDestroy as *const () as usize))]),
            ("cuMemAdvise", vec![(8000, Some(cuMemAdvise as *const () as usize)), (12020, Some(cuMemAdvise_v2 as *const () as usize))]),
            ("cuMemAlloc", vec![(2000, None), (3020, Some(cuMemAlloc_v2 as *const () as usize))]),
            ("cuMemAllocAsync", vec![(11020, Some(cuMemAllocAsync as *const () as usize))]),
            ("cuMemAllocFromPoolAsync", vec![(11020, Some(cuMemAllocFromPoolAsync as *const () as usize))]),
            ("cuMemAllocHost", vec![(2000, None), (3020, Some(cuMemAllocHost_v2 as *const () as usize))]),
            ("cuMemAllocManaged", vec![(6000, Some(cuMemAllocManaged as *const () as usize))]),
            ("cuMemAllocPitch", vec![(2000, None), (3020, Some(cuMemAllocPitch_v2 as *const () as usize))]),
            ("cuMemFree", vec![(2000, None), (3020, Some(cuMemFree_v2 as *const () as usize))]),
            ("cuMemFreeAsync", vec![(11020, Some(cuMemFreeAsync as *const () as usize))]),
            ("cuMemFreeHost", vec![(2000, Some(cuMemFreeHost as *const () as usize))]),
            ("cuMemGetAddressRange", vec![(2000, None), (3020, Some(cuMemGetAddressRange_v2 as *const () as usize))]),
            ("cuMemGetInfo", vec![(2000, None), (3020, Some(cuMemGetInfo_v2 as *const () as usize))]),
            ("cuMemHostAlloc", vec![(2020, Some(cuMemHostAlloc as *const () as usize))]),
            ("cuMemHostGetDevicePointer", vec![(2020, None), (3020, Some(cuMemHostGetDevicePointer_v2 as *const () as usize))]),
            ("cuMemHostGetFlags", vec![(2030, Some(cuMemHostGetFlags as *const () as usize))]),
            ("cuMemHostRegister", vec![(4000, None), (6050, Some(cuMemHostRegister_v2 as *const () as usize))]),
            ("cuMemHostUnregister", vec![(4000, Some(cuMemHostUnregister as *const () as usize))]),
            (
                "cuMemPrefetchAsync",
                vec![(8000, Some(cuMemPrefetchAsync as *const () as usize)), (12020, Some(cuMemPrefetchAsync_v2 as *const () as usize))],
            ),
            ("cuMemPoolCreate", vec![(11020, Some(cuMemPoolCreate as *const () as usize))]),
            ("cuMemPoolDestroy", vec![(11020, Some(cuMemPoolDestroy as *const () as usize))]),
            ("cuMemPoolGetAccess", vec![(11020, Some(cuMemPoolGetAccess as *const () as usize))]),
            ("cuMemPoolGetAttribute", vec![(11020, Some(cuMemPoolGetAttribute as *const () as usize))]),
            ("cuMemPoolSetAccess", vec![(11020, Some(cuMemPoolSetAccess as *const () as usize))]),
            ("cuMemPoolSetAttribute", vec![(11020, Some(cuMemPoolSetAttribute as *const () as usize))]),
            ("cuMemPoolTrimTo", vec![(11020, Some(cuMemPoolTrimTo as *const () as usize))]),
            ("cuMemcpy", vec![(4000, Some(cuMemcpy as *const () as usize))]),
            ("cuMemcpyAsync", vec![(4000, Some(cuMemcpyAsync as *const () as usize))]),
            ("cuMemcpyDtoD", vec![(2000, None), (3020, Some(cuMemcpyDtoD_v2 as *const () as usize))]),
            ("cuMemcpyDtoDAsync", vec![(3000, None), (3020, Some(cuMemcpyDtoDAsync_v2 as *const () as usize))]),
            ("cuMemcpyDtoH", vec![(2000, None), (3020, Some(cuMemcpyDtoH_v2 as *const () as usize))]),
            ("cuMemcpyDtoHAsync", vec![(2000, None), (3020, Some(cuMemcpyDtoHAsync_v2 as *const () as usize))]),
            ("cuMemcpyHtoD", vec![(2000, None), (3020, Some(cuMemcpyHtoD_v2 as *const () as usize))]),
            ("cuMemcpyHtoDAsync", vec![(2000, None), (3020, Some(cuMemcpyHtoDAsync_v2 as *const () as usize))]),
            ("cuMemsetD16", vec![(2000, None), (3020, Some(cuMemsetD16_v2 as *const () as usize))]),
            ("cuMemsetD16Async", vec![(3020, Some(cuMemsetD16Async as *const () as usize))]),
            ("cuMemsetD32", vec![(2000, None), (3020, Some(cuMemsetD32_v2 as *const () as usize))]),
            ("cuMemsetD32Async", vec![(3020, Some(cuMemsetD32Async as *const () as usize))]),
            ("cuMemsetD8", vec![(2000, None), (3020, Some(cuMemsetD8_v2 as *const () as usize))]),
            ("cuMemsetD8Async", vec![(3020, Some(cuMemsetD8Async as *const () as usize))]),
            ("cuModuleGetFunction", vec![(2000, Some(cuModuleGetFunction as *const () as usize))]),
            ("cuModuleGetFunctionCount", vec![(12040, Some(cuModuleGetFunctionCount as *const () as usize))]),
            ("cuModuleGetGlobal", vec![(2000, None), (3020, Some(cuModuleGetGlobal_v2 as *const () as usize))]),
            ("cuModuleGetLoadingMode", vec![(11070, Some(cuModuleGetLoadingMode as *const () as usize))]),
            ("cuModuleLoad", vec![(2000, Some(cuModuleLoad as *const () as usize))]),
            ("cuModuleLoadData", vec![(2000, Some(cuModuleLoadData as *const () as usize))]),
            ("cuModuleLoadDataEx", vec![(2010, Some(cuModuleLoadDataEx as *const () as usize))]),
            ("cuModuleLoadFatBinary", vec![(2000, Some(cuModuleLoadFatBinary as *const () as usize))]),
            ("cuModuleUnload", vec![(2000, Some(cuModuleUnload as *const () as usize))]),
            ("cuOccupancyAvailableDynamicSMemPerBlock", vec![(10020, Some(cuOccupancyAvailableDynamicSMemPerBlock as *const () as usize))]),
            (
                "cuOccupancyMaxActiveBlocksPerMultiprocessor",
                vec![(6050, Some(cuOccupancyMaxActiveBlocksPerMultiprocessor as *const () as usize))],
            ),
            (
                "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
                vec![(7000, Some(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags as *const () as usize))],
            ),
            ("cuOccupancyMaxPotentialBlockSize", vec![(6050, Some(cuOccupancyMaxPotentialBlockSize as *const () as usize))]),
            ("cuPointerGetAttribute", vec![(4000, Some(cuPointerGetAttribute as *const () as usize))]),
            ("cuPointerGetAttributes", vec![(7000, Some(cuPointerGetAttributes as *const () as usize))]),
            ("cuPointerSetAttribute", vec![(6000, Some(cuPointerSetAttribute as *const () as usize))]),
            ("cuProfilerStart", vec![(0, Some(cuProfilerStart as *const () as usize))]),
            ("cuProfilerStop", vec![(0, Some(cuProfilerStop as *const () as usize))]),
            ("cuStreamAddCallback", vec![(5000, Some(cuStreamAddCallback as *const () as usize))]),
            ("cuStreamCreate", vec![(2000, Some(cuStreamCreate as *const () as usize))]),
            ("cuStreamCreateWithPriority", vec![(5050, Some(cuStreamCreateWithPriority as *const () as usize))]),
            ("cuStreamDestroy", vec![(2000, None), (4000, Some(cuStreamDestroy_v2 as *const () as usize))]),
            ("cuStreamGetCtx", vec![(9020, Some(cuStreamGetCtx as *const () as usize)), (12050, None)]),
            ("cuStreamGetFlags", vec![(5050, Some(cuStreamGetFlags as *const () as usize))]),
            ("cuStreamGetId", vec![(12000, Some(cuStreamGetId as *const () as usize))]),
            ("cuStreamGetPriority", vec![(5050, Some(cuStreamGetPriority as *const () as usize))]),
            ("cuStreamIsCapturing", vec![(10000, Some(cuStreamIsCapturing as *const () as usize))]),
            ("cuStreamQuery", vec![(2000, Some(cuStreamQuery as *const () as usize))]),
            ("cuStreamSynchronize", vec![(2000, Some(cuStreamSynchronize as *const () as usize))]),
            ("cuStreamWaitEvent", vec![(3020, Some(cuStreamWaitEvent as *const () as usize))]),
        ];
        rows.into_iter().collect()
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
