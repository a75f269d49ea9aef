//! Devices: count, choice, `cudaDeviceProp` (filled from the driver's attributes, in the
//! layout of CUDA 13's driver_types.h, and of CUDA 12's for the `libcudart.so.12` entry
//! points), attributes, synchronisation, reset, limits and versions.

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
    fn __warpsim_cudaGetDeviceProperties(prop: *mut DeviceProp, device: c_int) -> prop { DeviceProp::of_device(device) }
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

/// A `cudaDeviceProp` struct with `fill`, which sets each field that has an attribute from it,
/// and `of_device`, which fills one for a device.
macro_rules! device_prop {
    ($(#[$m:meta])* $name:ident |$a:ident, $z:ident| $($field:ident: $ty:ty $(= $value:expr)?,)*) => {
        $(#[$m])*
        #[repr(C)]
        #[derive(Clone, Copy)]
        pub struct $name {
            $(pub $field: $ty,)*
        }

        impl $name {
            fn fill(&mut self, $a: impl Fn(c_int) -> c_int, $z: impl Fn(c_int) -> usize) {
                $($(self.$field = $value;)?)*
            }

            fn of_device(device: c_int) -> Result<$name, Error> {
                let dev = context::device_handle(device)?;
                // SAFETY: the struct is plain data (integers and arrays of them): all zeros is a value.
                let mut p: $name = unsafe { std::mem::zeroed() };
                cu!(cuDeviceGetName(p.name.as_mut_ptr(), 255, dev))?;
                let _ = cu!(cuDeviceGetUuid_v2(&mut p.uuid, dev));
                cu!(cuDeviceTotalMem_v2(&mut p.total_global_mem, dev))?;
                // An attribute the driver does not know reads as 0, as NVIDIA's runtime leaves it on an
                // older driver.
                let a = |attr: c_int| context::attribute(device, attr).unwrap_or(0);
                p.fill(a, |attr| a(attr).max(0) as usize);
                Ok(p)
            }
        }
    };
}

/// CUDA 13's `cudaDeviceProp` ([`DeviceProp`]) and CUDA 12's ([`DeviceProp12`]) from one
/// list of fields: a field marked `12:` is CUDA 12's only, one marked `13:` CUDA 13's only.
macro_rules! device_props {
    (|$a:ident, $z:ident| $($fields:tt)*) => {
        device_props!(@split |$a, $z| [] [] $($fields)*);
    };
    (@split |$a:ident, $z:ident| [$($f12:tt)*] [$($f13:tt)*]) => {
        device_prop! {
            /// `struct cudaDeviceProp` (driver_types.h, CUDA 13).
            DeviceProp |$a, $z| $($f13)*
        }
        device_prop! {
            /// `struct cudaDeviceProp` (driver_types.h, CUDA 12).
            DeviceProp12 |$a, $z| $($f12)*
        }
    };
    (@split |$a:ident, $z:ident| [$($f12:tt)*] [$($f13:tt)*] 12: $field:ident: $ty:ty $(= $value:expr)?, $($rest:tt)*) => {
        device_props!(@split |$a, $z| [$($f12)* $field: $ty $(= $value)?,] [$($f13)*] $($rest)*);
    };
    (@split |$a:ident, $z:ident| [$($f12:tt)*] [$($f13:tt)*] 13: $field:ident: $ty:ty $(= $value:expr)?, $($rest:tt)*) => {
        device_props!(@split |$a, $z| [$($f12)*] [$($f13)* $field: $ty $(= $value)?,] $($rest)*);
    };
    (@split |$a:ident, $z:ident| [$($f12:tt)*] [$($f13:tt)*] $field:ident: $ty:ty $(= $value:expr)?, $($rest:tt)*) => {
        device_props!(@split |$a, $z| [$($f12)* $field: $ty $(= $value)?,] [$($f13)* $field: $ty $(= $value)?,] $($rest)*);
    };
}

// `struct cudaDeviceProp` (driver_types.h), one field a row in the header's order, with the
// driver attribute (`CUdevice_attribute`) it is filled from: `a(n)`, or `z(n)` for a size, or
// nothing for the fields `of_device` fills itself. CUDA 12's (what
// `cudaGetDeviceProperties_v2@libcudart.so.12` fills) has the fields 13 removed (clock rates,
// compute mode, ...) and not the NUMA fields 13 added.
device_props! {
    |a, z|
    name: [c_char; 256],
    uuid: [u8; 16],
    luid: [c_char; 8],
    luid_device_node_mask: c_uint,
    total_global_mem: usize,
    shared_mem_per_block: usize = z(8),
    regs_per_block: c_int = a(12),
    warp_size: c_int = a(10),
    mem_pitch: usize = z(11),
    max_threads_per_block: c_int = a(1),
    max_threads_dim: [c_int; 3] = [a(2), a(3), a(4)],
    max_grid_size: [c_int; 3] = [a(5), a(6), a(7)],
    12: clock_rate: c_int = a(13),
    total_const_mem: usize = z(9),
    major: c_int = a(75),
    minor: c_int = a(76),
    texture_alignment: usize = z(14),
    texture_pitch_alignment: usize = z(51),
    12: device_overlap: c_int = a(15),
    multi_processor_count: c_int = a(16),
    12: kernel_exec_timeout_enabled: c_int = a(17),
    integrated: c_int = a(18),
    can_map_host_memory: c_int = a(19),
    12: compute_mode: c_int = a(20),
    max_texture_1d: c_int = a(21),
    max_texture_1d_mipmap: c_int = a(77),
    12: max_texture_1d_linear: c_int = a(69),
    max_texture_2d: [c_int; 2] = [a(22), a(23)],
    max_texture_2d_mipmap: [c_int; 2] = [a(73), a(74)],
    max_texture_2d_linear: [c_int; 3] = [a(70), a(71), a(72)],
    max_texture_2d_gather: [c_int; 2] = [a(45), a(46)],
    max_texture_3d: [c_int; 3] = [a(24), a(25), a(26)],
    max_texture_3d_alt: [c_int; 3] = [a(47), a(48), a(49)],
    max_texture_cubemap: c_int = a(52),
    max_texture_1d_layered: [c_int; 2] = [a(42), a(43)],
    max_texture_2d_layered: [c_int; 3] = [a(27), a(28), a(29)],
    max_texture_cubemap_layered: [c_int; 2] = [a(53), a(54)],
    max_surface_1d: c_int = a(55),
    max_surface_2d: [c_int; 2] = [a(56), a(57)],
    max_surface_3d: [c_int; 3] = [a(58), a(59), a(60)],
    max_surface_1d_layered: [c_int; 2] = [a(61), a(62)],
    max_surface_2d_layered: [c_int; 3] = [a(63), a(64), a(65)],
    max_surface_cubemap: c_int = a(66),
    max_surface_cubemap_layered: [c_int; 2] = [a(67), a(68)],
    surface_alignment: usize = z(30),
    concurrent_kernels: c_int = a(31),
    ecc_enabled: c_int = a(32),
    pci_bus_id: c_int = a(33),
    pci_device_id: c_int = a(34),
    pci_domain_id: c_int = a(50),
    tcc_driver: c_int = a(35),
    async_engine_count: c_int = a(40),
    unified_addressing: c_int = a(41),
    12: memory_clock_rate: c_int = a(36),
    memory_bus_width: c_int = a(37),
    l2_cache_size: c_int = a(38),
    persisting_l2_cache_max_size: c_int = a(108),
    max_threads_per_multi_processor: c_int = a(39),
    stream_priorities_supported: c_int = a(78),
    global_l1_cache_supported: c_int = a(79),
    local_l1_cache_supported: c_int = a(80),
    shared_mem_per_multiprocessor: usize = z(81),
    regs_per_multiprocessor: c_int = a(82),
    managed_memory: c_int = a(83),
    is_multi_gpu_board: c_int = a(84),
    multi_gpu_board_group_id: c_int = a(85),
    host_native_atomic_supported: c_int = a(86),
    12: single_to_double_precision_perf_ratio: c_int = a(87),
    pageable_memory_access: c_int = a(88),
    concurrent_managed_access: c_int = a(89),
    compute_preemption_supported: c_int = a(90),
    can_use_host_pointer_for_registered_mem: c_int = a(91),
    cooperative_launch: c_int = a(95),
    12: cooperative_multi_device_launch: c_int = a(96),
    shared_mem_per_block_optin: usize = z(97),
    pageable_memory_access_uses_host_page_tables: c_int = a(100),
    direct_managed_mem_access_from_host: c_int = a(101),
    max_blocks_per_multi_processor: c_int = a(106),
    access_policy_max_window_size: c_int = a(109),
    reserved_shared_mem_per_block: usize = z(111),
    host_register_supported: c_int = a(99),
    sparse_cuda_array_supported: c_int = a(112),
    host_register_read_only_supported: c_int = a(113),
    timeline_semaphore_interop_supported: c_int = a(114),
    memory_pools_supported: c_int = a(115),
    gpu_direct_rdma_supported: c_int = a(116),
    gpu_direct_rdma_flush_writes_options: c_uint = a(117) as c_uint,
    gpu_direct_rdma_writes_ordering: c_int = a(118),
    memory_pool_supported_handle_types: c_uint = a(119) as c_uint,
    deferred_mapping_cuda_array_supported: c_int = a(121),
    ipc_event_supported: c_int = a(125),
    cluster_launch: c_int = a(120),
    unified_function_pointers: c_int = a(129),
    13: device_numa_config: c_int = a(130),
    13: device_numa_id: c_int = a(131),
    13: mps_enabled: c_int = a(133),
    13: host_numa_id: c_int = a(134),
    13: gpu_pci_device_id: c_uint = a(139) as c_uint,
    13: gpu_pci_subsystem_id: c_uint = a(140) as c_uint,
    13: host_numa_multinode_ipc_supported: c_int = a(143),
    13: reserved: [c_int; 56],
    12: reserved: [c_int; 63],
}

/// The runtime version of the CUDA 12 entry points (`...@libcudart.so.12`).
pub const RUNTIME_VERSION_12: c_int = 12080;

entry_points! {
    /// CUDA 12's `cudaGetDeviceProperties` (its header names it `_v2`), in CUDA 12's layout.
    ///
    /// # Safety
    /// `prop` is null or points at a writable CUDA 12 `cudaDeviceProp`.
    fn __warpsim12_cudaGetDeviceProperties_v2(prop: *mut DeviceProp12, device: c_int) -> prop { DeviceProp12::of_device(device) }

    /// # Safety
    /// `version` is null or writable.
    fn __warpsim12_cudaRuntimeGetVersion(version: *mut c_int) -> version { Ok(RUNTIME_VERSION_12) }
}
