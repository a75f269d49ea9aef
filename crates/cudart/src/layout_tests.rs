//! The runtime's C structs against NVIDIA's headers: `offsetof` of every field of
//! `cudaDeviceProp`, `cudaFuncAttributes`, `cudaPointerAttributes`, `cudaPitchedPtr`,
//! `cudaExtent`, `cudaPos`, `cudaMemcpy3DParms` (driver_types.h) and `CUDA_MEMCPY2D`,
//! `CUDA_MEMCPY3D` (cuda.h), compiled with the C compiler from the headers the nvcc wheel
//! ships, equals the Rust struct's, field by field in declaration order, and so do the sizes. The header is found as the whole-program tests find
//! nvcc (`$WARPSIM_NVCC`, the `.venv` at the repository root, `/tmp/nvenv`); without it the
//! test says it skipped, except under CI.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::device::DeviceProp;
use crate::launch::FuncAttributes;
use crate::memory::PointerAttributes;
use crate::pitched::{Extent, Memcpy2D, Memcpy3D, Memcpy3DParms, PitchedPtr, Pos};

macro_rules! offsets {
    ($t:ty; $($f:ident),* $(,)?) => {
        vec![$(std::mem::offset_of!($t, $f)),*]
    };
}

fn include_dir() -> Option<PathBuf> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut candidates: Vec<PathBuf> =
        std::env::var_os("WARPSIM_NVCC").filter(|v| !v.is_empty()).map(|n| PathBuf::from(n).join("../../include")).into_iter().collect();
    for venv in [repo.join(".venv"), PathBuf::from("/tmp/nvenv")] {
        if let Ok(lib) = std::fs::read_dir(venv.join("lib")) {
            candidates.extend(lib.flatten().map(|e| e.path().join("site-packages/nvidia/cu13/include")));
        }
    }
    candidates.into_iter().find(|d| d.join("driver_types.h").is_file())
}

/// CUDA 12's runtime and compiler wheels (`nvidia/cuda_runtime`, `nvidia/cuda_nvcc`, as
/// `pip install nvidia-cuda-runtime-cu12 nvidia-cuda-nvcc-cu12` lays them out): the folder
/// `$WARPSIM_CUDA12` names, else a venv's site-packages; their include folders.
fn cuda12_includes() -> Option<[PathBuf; 2]> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut candidates: Vec<PathBuf> =
        std::env::var_os("WARPSIM_CUDA12").filter(|v| !v.is_empty()).map(PathBuf::from).into_iter().collect();
    for venv in [repo.join(".venv"), PathBuf::from("/tmp/nvenv")] {
        if let Ok(lib) = std::fs::read_dir(venv.join("lib")) {
            candidates.extend(lib.flatten().map(|e| e.path().join("site-packages")));
        }
    }
    let dir = candidates.into_iter().find(|d| d.join("nvidia/cuda_runtime/include/driver_types.h").is_file())?;
    Some([dir.join("nvidia/cuda_runtime/include"), dir.join("nvidia/cuda_nvcc/include")])
}

/// The header folder; without one, a line saying the test skipped (CI must have it).
fn include_or_skip() -> Option<PathBuf> {
    let d = include_dir();
    if d.is_none() {
        assert!(std::env::var_os("CI").is_none(), "CI must have the nvcc wheel's headers (.ci/run installs them)");
        eprintln!("SKIPPED: no driver_types.h (pip install nvidia-cuda-runtime into .venv)");
    }
    d
}

/// The field names of `struct NAME` in driver_types.h, in order (declarations `TYPE name[N];`).
fn header_fields(header: &str, name: &str) -> Vec<String> {
    fields_after(header, &format!("struct __device_builtin__ {name}\n{{"))
}

/// The field names of the struct whose definition starts with `start`.
fn fields_after(header: &str, start_text: &str) -> Vec<String> {
    let start = header.find(start_text).unwrap_or_else(|| panic!("no `{start_text}`"));
    let body = &header[start..];
    let body = &body[body.find('{').unwrap() + 1..body.find("\n}").unwrap()];
    let mut text = String::new();
    let mut rest = body;
    // Drop comments.
    while let Some(i) = rest.find("/*") {
        text.push_str(&rest[..i]);
        rest = rest[i..].find("*/").map_or("", |j| &rest[i + j + 2..]);
    }
    text.push_str(rest);
    let text: String = text.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n");
    text.split(';')
        .map(|d| d.split('[').next().unwrap_or("").trim())
        .filter(|d| !d.is_empty())
        .map(|d| d.rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).next().unwrap_or("").to_string())
        .collect()
}

/// `sizeof` and the offsets of `fields` of `struct NAME` (of driver_types.h, or cuda.h for a
/// `CUDA_` name), as the C compiler lays them out.
fn c_layout(include: &[&Path], name: &str, fields: &[String]) -> Vec<usize> {
    let dir = std::env::temp_dir().join(format!("warpsim-cudart-layout-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let h = if name.starts_with("CUDA_") { "cuda.h" } else { "driver_types.h" };
    let mut c = format!("#include <stddef.h>\n#include <stdio.h>\n#include <{h}>\nint main(void) {{\n");
    c += &format!("  printf(\"%zu\\n\", sizeof(struct {name}));\n");
    for f in fields {
        c += &format!("  printf(\"%zu\\n\", offsetof(struct {name}, {f}));\n");
    }
    c += "  return 0;\n}\n";
    std::fs::write(dir.join("layout.c"), c).unwrap();
    let exe = dir.join("layout");
    let mut cc = Command::new("cc");
    for i in include {
        cc.arg("-I").arg(i);
    }
    let o = cc.arg(dir.join("layout.c")).arg("-o").arg(&exe).output().expect("running cc");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = Command::new(&exe).output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    String::from_utf8_lossy(&out.stdout).lines().map(|l| l.parse().unwrap()).collect()
}

fn check(include: &Path, name: &str, c_fields: Vec<String>, size: usize, rust: Vec<usize>) {
    check_in(&[include], name, c_fields, size, rust)
}

fn check_in(include: &[&Path], name: &str, c_fields: Vec<String>, size: usize, rust: Vec<usize>) {
    assert_eq!(c_fields.len(), rust.len(), "{name}: the header has fields {c_fields:?}");
    let c = c_layout(include, name, &c_fields);
    assert_eq!(c[0], size, "sizeof(struct {name})");
    for ((f, want), got) in c_fields.iter().zip(&c[1..]).zip(&rust) {
        assert_eq!(got, want, "offsetof(struct {name}, {f})");
    }
}

#[test]
fn the_structs_are_laid_out_as_the_header_says() {
    let Some(include) = include_or_skip() else { return };
    let header = std::fs::read_to_string(include.join("driver_types.h")).unwrap();
    let dp = offsets!(DeviceProp;
            name, uuid, luid, luid_device_node_mask, total_global_mem, shared_mem_per_block, regs_per_block,
            warp_size, mem_pitch, max_threads_per_block, max_threads_dim, max_grid_size, total_const_mem,
            major, minor, texture_alignment, texture_pitch_alignment, multi_processor_count, integrated,
            can_map_host_memory, max_texture_1d, max_texture_1d_mipmap, max_texture_2d,
            max_texture_2d_mipmap, max_texture_2d_linear, max_texture_2d_gather, max_texture_3d,
            max_texture_3d_alt, max_texture_cubemap, max_texture_1d_layered, max_texture_2d_layered,
            max_texture_cubemap_layered, max_surface_1d, max_surface_2d, max_surface_3d,
            max_surface_1d_layered, max_surface_2d_layered, max_surface_cubemap, max_surface_cubemap_layered,
            surface_alignment, concurrent_kernels, ecc_enabled, pci_bus_id, pci_device_id, pci_domain_id,
            tcc_driver, async_engine_count, unified_addressing, memory_bus_width, l2_cache_size,
            persisting_l2_cache_max_size, max_threads_per_multi_processor, stream_priorities_supported,
            global_l1_cache_supported, local_l1_cache_supported, shared_mem_per_multiprocessor,
            regs_per_multiprocessor, managed_memory, is_multi_gpu_board, multi_gpu_board_group_id,
            host_native_atomic_supported, pageable_memory_access, concurrent_managed_access,
            compute_preemption_supported, can_use_host_pointer_for_registered_mem, cooperative_launch,
            shared_mem_per_block_optin, pageable_memory_access_uses_host_page_tables,
            direct_managed_mem_access_from_host, max_blocks_per_multi_processor,
            access_policy_max_window_size, reserved_shared_mem_per_block, host_register_supported,
            sparse_cuda_array_supported, host_register_read_only_supported,
            timeline_semaphore_interop_supported, memory_pools_supported, gpu_direct_rdma_supported,
            gpu_direct_rdma_flush_writes_options, gpu_direct_rdma_writes_ordering,
            memory_pool_supported_handle_types, deferred_mapping_cuda_array_supported, ipc_event_supported,
            cluster_launch, unified_function_pointers, device_numa_config, device_numa_id, mps_enabled,
            host_numa_id, gpu_pci_device_id, gpu_pci_subsystem_id, host_numa_multinode_ipc_supported,
            reserved
    );
    check(&include, "cudaDeviceProp", header_fields(&header, "cudaDeviceProp"), size_of::<DeviceProp>(), dp);
    let fa = offsets!(FuncAttributes;
            shared_size_bytes, const_size_bytes, local_size_bytes, max_threads_per_block, num_regs,
            ptx_version, binary_version, cache_mode_ca, max_dynamic_shared_size_bytes,
            preferred_shmem_carveout, cluster_dim_must_be_set, required_cluster_width,
            required_cluster_height, required_cluster_depth, cluster_scheduling_policy_preference,
            non_portable_cluster_size_allowed, device_node_update_status, shared_memory_mode, reserved
    );
    check(&include, "cudaFuncAttributes", header_fields(&header, "cudaFuncAttributes"), size_of::<FuncAttributes>(), fa);
    // The anonymous union is named by its first member.
    let pa_fields = ["type", "device", "devicePointer", "hostPointer", "localityDomainOrdinal", "reserved"].map(String::from).to_vec();
    let pa = offsets!(PointerAttributes;
            kind, device, device_pointer, host_pointer, locality_domain_ordinal, reserved
    );
    check(&include, "cudaPointerAttributes", pa_fields, size_of::<PointerAttributes>(), pa);
}

#[test]
fn the_pitched_memory_structs_are_laid_out_as_the_headers_say() {
    let Some(include) = include_or_skip() else { return };
    let types = std::fs::read_to_string(include.join("driver_types.h")).unwrap();
    let pp = offsets!(PitchedPtr; ptr, pitch, xsize, ysize);
    check(&include, "cudaPitchedPtr", header_fields(&types, "cudaPitchedPtr"), size_of::<PitchedPtr>(), pp);
    let e = offsets!(Extent; width, height, depth);
    check(&include, "cudaExtent", header_fields(&types, "cudaExtent"), size_of::<Extent>(), e);
    let p = offsets!(Pos; x, y, z);
    check(&include, "cudaPos", header_fields(&types, "cudaPos"), size_of::<Pos>(), p);
    let m = offsets!(Memcpy3DParms; src_array, src_pos, src_ptr, dst_array, dst_pos, dst_ptr, extent, kind);
    check(&include, "cudaMemcpy3DParms", header_fields(&types, "cudaMemcpy3DParms"), size_of::<Memcpy3DParms>(), m);
    let cuda = std::fs::read_to_string(include.join("cuda.h")).unwrap();
    let m2 = offsets!(Memcpy2D;
            src_x_in_bytes, src_y, src_memory_type, src_host, src_device, src_array, src_pitch,
            dst_x_in_bytes, dst_y, dst_memory_type, dst_host, dst_device, dst_array, dst_pitch, width_in_bytes, height
    );
    check(&include, "CUDA_MEMCPY2D_st", fields_after(&cuda, "typedef struct CUDA_MEMCPY2D_st {"), size_of::<Memcpy2D>(), m2);
    let m3 = offsets!(Memcpy3D;
            src_x_in_bytes, src_y, src_z, src_lod, src_memory_type, src_host, src_device, src_array, reserved0, src_pitch, src_height,
            dst_x_in_bytes, dst_y, dst_z, dst_lod, dst_memory_type, dst_host, dst_device, dst_array, reserved1, dst_pitch, dst_height,
            width_in_bytes, height, depth
    );
    check(&include, "CUDA_MEMCPY3D_st", fields_after(&cuda, "typedef struct CUDA_MEMCPY3D_st {"), size_of::<Memcpy3D>(), m3);
}

/// CUDA 12's `cudaDeviceProp` (what `cudaGetDeviceProperties_v2@libcudart.so.12` fills)
/// against CUDA 12's header, when its wheel is installed.
#[test]
fn the_cuda_12_device_prop_is_laid_out_as_its_header_says() {
    let Some([rt, nvcc]) = cuda12_includes() else {
        eprintln!("SKIPPED: no CUDA 12 headers (pip install nvidia-cuda-runtime-cu12 nvidia-cuda-nvcc-cu12, or set WARPSIM_CUDA12)");
        return;
    };
    let header = std::fs::read_to_string(rt.join("driver_types.h")).unwrap();
    let dp = offsets!(crate::device::DeviceProp12;
            name, uuid, luid, luid_device_node_mask, total_global_mem, shared_mem_per_block, regs_per_block,
            warp_size, mem_pitch, max_threads_per_block, max_threads_dim, max_grid_size, clock_rate, total_const_mem,
            major, minor, texture_alignment, texture_pitch_alignment, device_overlap, multi_processor_count,
            kernel_exec_timeout_enabled, integrated, can_map_host_memory, compute_mode, max_texture_1d,
            max_texture_1d_mipmap, max_texture_1d_linear, max_texture_2d, max_texture_2d_mipmap, max_texture_2d_linear,
            max_texture_2d_gather, max_texture_3d, max_texture_3d_alt, max_texture_cubemap, max_texture_1d_layered,
            max_texture_2d_layered, max_texture_cubemap_layered, max_surface_1d, max_surface_2d, max_surface_3d,
            max_surface_1d_layered, max_surface_2d_layered, max_surface_cubemap, max_surface_cubemap_layered,
            surface_alignment, concurrent_kernels, ecc_enabled, pci_bus_id, pci_device_id, pci_domain_id,
            tcc_driver, async_engine_count, unified_addressing, memory_clock_rate, memory_bus_width, l2_cache_size,
            persisting_l2_cache_max_size, max_threads_per_multi_processor, stream_priorities_supported,
            global_l1_cache_supported, local_l1_cache_supported, shared_mem_per_multiprocessor,
            regs_per_multiprocessor, managed_memory, is_multi_gpu_board, multi_gpu_board_group_id,
            host_native_atomic_supported, single_to_double_precision_perf_ratio, pageable_memory_access,
            concurrent_managed_access, compute_preemption_supported, can_use_host_pointer_for_registered_mem,
            cooperative_launch, cooperative_multi_device_launch, shared_mem_per_block_optin,
            pageable_memory_access_uses_host_page_tables, direct_managed_mem_access_from_host,
            max_blocks_per_multi_processor, access_policy_max_window_size, reserved_shared_mem_per_block,
            host_register_supported, sparse_cuda_array_supported, host_register_read_only_supported,
            timeline_semaphore_interop_supported, memory_pools_supported, gpu_direct_rdma_supported,
            gpu_direct_rdma_flush_writes_options, gpu_direct_rdma_writes_ordering,
            memory_pool_supported_handle_types, deferred_mapping_cuda_array_supported, ipc_event_supported,
            cluster_launch, unified_function_pointers, reserved
    );
    let size = size_of::<crate::device::DeviceProp12>();
    check_in(&[&rt, &nvcc], "cudaDeviceProp", header_fields(&header, "cudaDeviceProp"), size, dp);
}

/// The error table has exactly the header's `cudaError` enumerators, by name and number.
#[test]
fn the_error_table_is_the_headers_enum() {
    let Some(include) = include_or_skip() else { return };
    let header = std::fs::read_to_string(include.join("driver_types.h")).unwrap();
    let body = &header[header.find("enum __device_builtin__ cudaError\n").unwrap()..];
    let body = &body[..body.find("};").unwrap()];
    let mut enumerators: Vec<(i32, String)> = body
        .lines()
        .filter_map(|l| {
            let (name, value) = l.split_once('=')?;
            let name = name.trim().trim_start_matches(',').trim();
            let value: String = value.trim().chars().take_while(char::is_ascii_digit).collect();
            if !name.starts_with("cuda") {
                return None;
            }
            Some((value.parse().ok()?, name.to_string()))
        })
        .collect();
    enumerators.sort();
    let ours: Vec<(i32, String)> = crate::codes::ERRORS.iter().map(|&(c, n, _)| (c, n.to_string_lossy().into_owned())).collect();
    assert_eq!(ours, enumerators);
}
