//! Devices: count, choice, `cudaDeviceProp` (filled from the driver's attributes, in the
//! layout of CUDA 13's driver_types.h), attributes, synchronisation, reset, limits and versions.

use std::ffi::{c_char, c_int, c_uint};

use crate::context;
use crate::driver::cu;
use crate::error::{api, entry_points, non_null, CudaErrorT, Error, NO_DEVICE};

/// The runtime version this library implements (CUDA 13.0).
pub const RUNTIME_VERSION: c_int = 13000;

entry_points! {
    /// # Safety
    /// `count` is null or writable.
    fn __warpsim_cudaGetDeviceCount(count: *mut c_int) {
        let out = non_null(count)?;
        let n = context::device_count()?;
        // SAFETY: checked non-null.
        unsafe { out.write(n) };
        if n == 0 {
            return Err(Error(NO_DEVICE));
        }
        Ok(())
    }

    /// # Safety
    /// `device` is null or writable.
    fn __warpsim_cudaGetDevice(device: *mut c_int) -> device { Ok(context::current_device()) }

    /// # Safety
    /// `value` is null or writable.
    fn __warpsim_cudaDeviceGetAttribute(value: *mut c_int, attr: c_int, device: c_int) -> value {
        // cudaDeviceAttr carries the numbers of CUdevice_attribute.
        context::attribute(device, attr)
    }

    /// # Safety
    /// `value` is null or writable.
    fn __warpsim_cudaDeviceGetLimit(value: *mut usize, limit: c_int) -> value {
        context::ensure()?;
        let mut v = 0;
        // cudaLimit carries the numbers of CUlimit.
        cu!(cuCtxGetLimit(&mut v, limit))?;
        Ok(v)
    }

    /// # Safety
    /// `version` is null or writable.
    fn __warpsim_cudaDriverGetVersion(version: *mut c_int) -> version {
        let mut v = 0;
        // No driver is version 0, as the header says.
        if crate::driver::driver().is_ok() {
            cu!(cuDriverGetVersion(&mut v))?;
        }
        Ok(v)
    }

    /// # Safety
    /// `version` is null or writable.
    fn __warpsim_cudaRuntimeGetVersion(version: *mut c_int) -> version { Ok(RUNTIME_VERSION) }

    /// # Safety
    /// `prop` is null or points at a writable `cudaDeviceProp`.
    fn __warpsim_cudaGetDeviceProperties(prop: *mut DeviceProp, device: c_int) -> prop { properties(device) }
}

#[no_mangle]
pub extern "C" fn __warpsim_cudaSetDevice(device: c_int) -> CudaErrorT {
    api(|| {
        context::set_device(device)?;
        context::ensure().map(drop)
    })
}

#[no_mangle]
pub extern "C" fn __warpsim_cudaDeviceSynchronize() -> CudaErrorT {
    api(|| {
        context::ensure()?;
        cu!(cuCtxSynchronize())
    })
}

#[no_mangle]
pub extern "C" fn __warpsim_cudaDeviceReset() -> CudaErrorT {
    api(|| {
        crate::register::forget_modules();
        context::reset()
    })
}

#[no_mangle]
pub extern "C" fn __warpsim_cudaSetDeviceFlags(_flags: c_uint) -> CudaErrorT {
    api(|| context::ensure().map(drop))
}

#[no_mangle]
pub extern "C" fn __warpsim_cudaDeviceSetLimit(limit: c_int, value: usize) -> CudaErrorT {
    api(|| {
        context::ensure()?;
        cu!(cuCtxSetLimit(limit, value))
    })
}

/// `struct cudaDeviceProp` (driver_types.h, CUDA 13).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct DeviceProp {
    pub name: [c_char; 256],
    pub uuid: [u8; 16],
    pub luid: [c_char; 8],
    pub luid_device_node_mask: c_uint,
    pub total_global_mem: usize,
    pub shared_mem_per_block: usize,
    pub regs_per_block: c_int,
    pub warp_size: c_int,
    pub mem_pitch: usize,
    pub max_threads_per_block: c_int,
    pub max_threads_dim: [c_int; 3],
    pub max_grid_size: [c_int; 3],
    pub total_const_mem: usize,
    pub major: c_int,
    pub minor: c_int,
    pub texture_alignment: usize,
    pub texture_pitch_alignment: usize,
    pub multi_processor_count: c_int,
    pub integrated: c_int,
    pub can_map_host_memory: c_int,
    pub max_texture_1d: c_int,
    pub max_texture_1d_mipmap: c_int,
    pub max_texture_2d: [c_int; 2],
    pub max_texture_2d_mipmap: [c_int; 2],
    pub max_texture_2d_linear: [c_int; 3],
    pub max_texture_2d_gather: [c_int; 2],
    pub max_texture_3d: [c_int; 3],
    pub max_texture_3d_alt: [c_int; 3],
    pub max_texture_cubemap: c_int,
    pub max_texture_1d_layered: [c_int; 2],
    pub max_texture_2d_layered: [c_int; 3],
    pub max_texture_cubemap_layered: [c_int; 2],
    pub max_surface_1d: c_int,
    pub max_surface_2d: [c_int; 2],
    pub max_surface_3d: [c_int; 3],
    pub max_surface_1d_layered: [c_int; 2],
    pub max_surface_2d_layered: [c_int; 3],
    pub max_surface_cubemap: c_int,
    pub max_surface_cubemap_layered: [c_int; 2],
    pub surface_alignment: usize,
    pub concurrent_kernels: c_int,
    pub ecc_enabled: c_int,
    pub pci_bus_id: c_int,
    pub pci_device_id: c_int,
    pub pci_domain_id: c_int,
    pub tcc_driver: c_int,
    pub async_engine_count: c_int,
    pub unified_addressing: c_int,
    pub memory_bus_width: c_int,
    pub l2_cache_size: c_int,
    pub persisting_l2_cache_max_size: c_int,
    pub max_threads_per_multi_processor: c_int,
    pub stream_priorities_supported: c_int,
    pub global_l1_cache_supported: c_int,
    pub local_l1_cache_supported: c_int,
    pub shared_mem_per_multiprocessor: usize,
    pub regs_per_multiprocessor: c_int,
    pub managed_memory: c_int,
    pub is_multi_gpu_board: c_int,
    pub multi_gpu_board_group_id: c_int,
    pub host_native_atomic_supported: c_int,
    pub pageable_memory_access: c_int,
    pub concurrent_managed_access: c_int,
    pub compute_preemption_supported: c_int,
    pub can_use_host_pointer_for_registered_mem: c_int,
    pub cooperative_launch: c_int,
    pub shared_mem_per_block_optin: usize,
    pub pageable_memory_access_uses_host_page_tables: c_int,
    pub direct_managed_mem_access_from_host: c_int,
    pub max_blocks_per_multi_processor: c_int,
    pub access_policy_max_window_size: c_int,
    pub reserved_shared_mem_per_block: usize,
    pub host_register_supported: c_int,
    pub sparse_cuda_array_supported: c_int,
    pub host_register_read_only_supported: c_int,
    pub timeline_semaphore_interop_supported: c_int,
    pub memory_pools_supported: c_int,
    pub gpu_direct_rdma_supported: c_int,
    pub gpu_direct_rdma_flush_writes_options: c_uint,
    pub gpu_direct_rdma_writes_ordering: c_int,
    pub memory_pool_supported_handle_types: c_uint,
    pub deferred_mapping_cuda_array_supported: c_int,
    pub ipc_event_supported: c_int,
    pub cluster_launch: c_int,
    pub unified_function_pointers: c_int,
    pub device_numa_config: c_int,
    pub device_numa_id: c_int,
    pub mps_enabled: c_int,
    pub host_numa_id: c_int,
    pub gpu_pci_device_id: c_uint,
    pub gpu_pci_subsystem_id: c_uint,
    pub host_numa_multinode_ipc_supported: c_int,
    pub reserved: [c_int; 56],
}

fn properties(device: c_int) -> Result<DeviceProp, Error> {
    let dev = context::device_handle(device)?;
    // SAFETY: DeviceProp is plain data (integers and arrays of them): all zeros is a value.
    let mut p: DeviceProp = unsafe { std::mem::zeroed() };
    cu!(cuDeviceGetName(p.name.as_mut_ptr(), 255, dev))?;
    let _ = cu!(cuDeviceGetUuid_v2(&mut p.uuid, dev));
    cu!(cuDeviceTotalMem_v2(&mut p.total_global_mem, dev))?;
    // An attribute the driver does not know reads as 0, as NVIDIA's runtime leaves it on an
    // older driver.
    let a = |attr: c_int| context::attribute(device, attr).unwrap_or(0);
    let z = |attr: c_int| a(attr).max(0) as usize;
    p.shared_mem_per_block = z(8);
    p.regs_per_block = a(12);
    p.warp_size = a(10);
    p.mem_pitch = z(11);
    p.max_threads_per_block = a(1);
    p.max_threads_dim = [a(2), a(3), a(4)];
    p.max_grid_size = [a(5), a(6), a(7)];
    p.total_const_mem = z(9);
    p.major = a(75);
    p.minor = a(76);
    p.texture_alignment = z(14);
    p.texture_pitch_alignment = z(51);
    p.multi_processor_count = a(16);
    p.integrated = a(18);
    p.can_map_host_memory = a(19);
    p.max_texture_1d = a(21);
    p.max_texture_1d_mipmap = a(77);
    p.max_texture_2d = [a(22), a(23)];
    p.max_texture_2d_mipmap = [a(73), a(74)];
    p.max_texture_2d_linear = [a(70), a(71), a(72)];
    p.max_texture_2d_gather = [a(45), a(46)];
    p.max_texture_3d = [a(24), a(25), a(26)];
    p.max_texture_3d_alt = [a(47), a(48), a(49)];
    p.max_texture_cubemap = a(52);
    p.max_texture_1d_layered = [a(42), a(43)];
    p.max_texture_2d_layered = [a(27), a(28), a(29)];
    p.max_texture_cubemap_layered = [a(53), a(54)];
    p.max_surface_1d = a(55);
    p.max_surface_2d = [a(56), a(57)];
    p.max_surface_3d = [a(58), a(59), a(60)];
    p.max_surface_1d_layered = [a(61), a(62)];
    p.max_surface_2d_layered = [a(63), a(64), a(65)];
    p.max_surface_cubemap = a(66);
    p.max_surface_cubemap_layered = [a(67), a(68)];
    p.surface_alignment = z(30);
    p.concurrent_kernels = a(31);
    p.ecc_enabled = a(32);
    p.pci_bus_id = a(33);
    p.pci_device_id = a(34);
    p.pci_domain_id = a(50);
    p.tcc_driver = a(35);
    p.async_engine_count = a(40);
    p.unified_addressing = a(41);
    p.memory_bus_width = a(37);
    p.l2_cache_size = a(38);
    p.persisting_l2_cache_max_size = a(108);
    p.max_threads_per_multi_processor = a(39);
    p.stream_priorities_supported = a(78);
    p.global_l1_cache_supported = a(79);
    p.local_l1_cache_supported = a(80);
    p.shared_mem_per_multiprocessor = z(81);
    p.regs_per_multiprocessor = a(82);
    p.managed_memory = a(83);
    p.is_multi_gpu_board = a(84);
    p.multi_gpu_board_group_id = a(85);
    p.host_native_atomic_supported = a(86);
    p.pageable_memory_access = a(88);
    p.concurrent_managed_access = a(89);
    p.compute_preemption_supported = a(90);
    p.can_use_host_pointer_for_registered_mem = a(91);
    p.cooperative_launch = a(95);
    p.shared_mem_per_block_optin = z(97);
    p.pageable_memory_access_uses_host_page_tables = a(100);
    p.direct_managed_mem_access_from_host = a(101);
    p.max_blocks_per_multi_processor = a(106);
    p.access_policy_max_window_size = a(109);
    p.reserved_shared_mem_per_block = z(111);
    p.host_register_supported = a(99);
    p.sparse_cuda_array_supported = a(112);
    p.host_register_read_only_supported = a(113);
    p.timeline_semaphore_interop_supported = a(114);
    p.memory_pools_supported = a(115);
    p.gpu_direct_rdma_supported = a(116);
    p.gpu_direct_rdma_flush_writes_options = a(117) as c_uint;
    p.gpu_direct_rdma_writes_ordering = a(118);
    p.memory_pool_supported_handle_types = a(119) as c_uint;
    p.deferred_mapping_cuda_array_supported = a(121);
    p.ipc_event_supported = a(125);
    p.cluster_launch = a(120);
    p.unified_function_pointers = a(129);
    p.device_numa_config = a(130);
    p.device_numa_id = a(131);
    p.mps_enabled = a(133);
    p.host_numa_id = a(134);
    p.gpu_pci_device_id = a(139) as c_uint;
    p.gpu_pci_subsystem_id = a(140) as c_uint;
    p.host_numa_multinode_ipc_supported = a(143);
    Ok(p)
}
