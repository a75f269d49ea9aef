//! cuda.h's parameter structs for pitched copies, `CUDA_MEMCPY2D` and `CUDA_MEMCPY3D`, declared
//! once for the two libraries that take them: warpsim's driver (`cuMemcpy2D/3D`) and its runtime
//! (which fills them for the driver, as NVIDIA's runtime does). Their layouts are checked against
//! the headers in `warpsim-cudart`'s layout tests.
#![forbid(unsafe_code)]

use std::ffi::{c_uint, c_void};

/// A device address (`CUdeviceptr`).
pub type CUdeviceptr = u64;

/// `CUDA_MEMCPY2D` (cuda.h).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Memcpy2D {
    pub src_x_in_bytes: usize,
    pub src_y: usize,
    pub src_memory_type: c_uint,
    pub src_host: *const c_void,
    pub src_device: CUdeviceptr,
    pub src_array: *mut c_void,
    pub src_pitch: usize,
    pub dst_x_in_bytes: usize,
    pub dst_y: usize,
    pub dst_memory_type: c_uint,
    pub dst_host: *mut c_void,
    pub dst_device: CUdeviceptr,
    pub dst_array: *mut c_void,
    pub dst_pitch: usize,
    pub width_in_bytes: usize,
    pub height: usize,
}

/// `CUDA_MEMCPY3D` (cuda.h).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Memcpy3D {
    pub src_x_in_bytes: usize,
    pub src_y: usize,
    pub src_z: usize,
    pub src_lod: usize,
    pub src_memory_type: c_uint,
    pub src_host: *const c_void,
    pub src_device: CUdeviceptr,
    pub src_array: *mut c_void,
    pub reserved0: *mut c_void,
    pub src_pitch: usize,
    pub src_height: usize,
    pub dst_x_in_bytes: usize,
    pub dst_y: usize,
    pub dst_z: usize,
    pub dst_lod: usize,
    pub dst_memory_type: c_uint,
    pub dst_host: *mut c_void,
    pub dst_device: CUdeviceptr,
    pub dst_array: *mut c_void,
    pub reserved1: *mut c_void,
    pub dst_pitch: usize,
    pub dst_height: usize,
    pub width_in_bytes: usize,
    pub height: usize,
    pub depth: usize,
}

impl From<&Memcpy2D> for Memcpy3D {
    fn from(c: &Memcpy2D) -> Memcpy3D {
        Memcpy3D {
            src_x_in_bytes: c.src_x_in_bytes,
            src_y: c.src_y,
            src_z: 0,
            src_lod: 0,
            src_memory_type: c.src_memory_type,
            src_host: c.src_host,
            src_device: c.src_device,
            src_array: c.src_array,
            reserved0: std::ptr::null_mut(),
            src_pitch: c.src_pitch,
            src_height: c.height,
            dst_x_in_bytes: c.dst_x_in_bytes,
            dst_y: c.dst_y,
            dst_z: 0,
            dst_lod: 0,
            dst_memory_type: c.dst_memory_type,
            dst_host: c.dst_host,
            dst_device: c.dst_device,
            dst_array: c.dst_array,
            reserved1: std::ptr::null_mut(),
            dst_pitch: c.dst_pitch,
            dst_height: c.height,
            width_in_bytes: c.width_in_bytes,
            height: c.height,
            depth: 1,
        }
    }
}
