//! Pitched linear memory: `cudaMallocPitch` / `cudaMalloc3D`, the 2D and 3D copies and sets
//! between pitched host and device memory, each the driver's call of the same meaning
//! (`cuMemAllocPitch_v2`, `cuMemcpy2D(Async)_v2`, `cuMemcpy3D(Async)_v2`, `cuMemsetD2D8(Async)`)
//! with cuda.h's parameter structs. CUDA arrays (and so textures and surfaces) are out of
//! scope: a copy naming one, and the array calls themselves, are refused with one line on
//! stderr naming the call (`cudaErrorNotSupported`).

use std::ffi::{c_int, c_uint, c_void};

use crate::context;
use crate::driver::{cu, CUdeviceptr, Handle};
use crate::error::{entry_points, refuse, refused, Error, INVALID_MEMCPY_DIRECTION, INVALID_VALUE};

/// `cudaErrorInvalidPitchValue`.
const INVALID_PITCH_VALUE: i32 = 12;

/// `CUmemorytype`.
const MEMORY_HOST: c_uint = 1;
const MEMORY_DEVICE: c_uint = 2;
const MEMORY_UNIFIED: c_uint = 4;

pub use warpsim_cuda_abi::{Memcpy2D, Memcpy3D};

/// `struct cudaPitchedPtr` (driver_types.h).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PitchedPtr {
    pub ptr: *mut c_void,
    pub pitch: usize,
    pub xsize: usize,
    pub ysize: usize,
}

/// `struct cudaExtent`: the width in bytes for linear memory.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Extent {
    pub width: usize,
    pub height: usize,
    pub depth: usize,
}

/// `struct cudaPos`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Pos {
    pub x: usize,
    pub y: usize,
    pub z: usize,
}

/// `struct cudaMemcpy3DParms`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Memcpy3DParms {
    pub src_array: *mut c_void,
    pub src_pos: Pos,
    pub src_ptr: PitchedPtr,
    pub dst_array: *mut c_void,
    pub dst_pos: Pos,
    pub dst_ptr: PitchedPtr,
    pub extent: Extent,
    pub kind: c_int,
}

/// The driver's memory types of (source, destination) for a `cudaMemcpyKind`.
fn memory_types(kind: c_int) -> Result<(c_uint, c_uint), Error> {
    Ok(match kind {
        0 => (MEMORY_HOST, MEMORY_HOST),
        1 => (MEMORY_HOST, MEMORY_DEVICE),
        2 => (MEMORY_DEVICE, MEMORY_HOST),
        3 => (MEMORY_DEVICE, MEMORY_DEVICE),
        4 => (MEMORY_UNIFIED, MEMORY_UNIFIED),
        _ => return Err(Error(INVALID_MEMCPY_DIRECTION)),
    })
}

/// Why array calls are refused.
const ARRAYS: &str = "CUDA arrays are not supported (warpsim runs linear device memory only)";
/// Why texture object calls are refused.
const TEXTURES: &str = "textures are not supported (warpsim runs linear device memory only)";
/// Why surface object calls are refused.
const SURFACES: &str = "surfaces are not supported (warpsim runs linear device memory only)";

/// The 3D copy of a `cudaMemcpy3DParms` over pitched linear memory (no arrays).
fn copy_3d(call: &str, p: *const Memcpy3DParms, stream: Option<Handle>) -> Result<(), Error> {
    if p.is_null() {
        return Err(Error(INVALID_VALUE));
    }
    // SAFETY: the caller's parameter struct, read once.
    let p = unsafe { p.read_unaligned() };
    if !p.src_array.is_null() || !p.dst_array.is_null() {
        return Err(refuse(call, ARRAYS));
    }
    context::ensure()?;
    let (src_type, dst_type) = memory_types(p.kind)?;
    let e = p.extent;
    if e.width == 0 || e.height == 0 || e.depth == 0 {
        return Ok(());
    }
    let c = Memcpy3D {
        src_x_in_bytes: p.src_pos.x,
        src_y: p.src_pos.y,
        src_z: p.src_pos.z,
        src_lod: 0,
        src_memory_type: src_type,
        src_host: p.src_ptr.ptr,
        src_device: p.src_ptr.ptr as usize as CUdeviceptr,
        src_array: std::ptr::null_mut(),
        reserved0: std::ptr::null_mut(),
        src_pitch: p.src_ptr.pitch,
        src_height: p.src_ptr.ysize,
        dst_x_in_bytes: p.dst_pos.x,
        dst_y: p.dst_pos.y,
        dst_z: p.dst_pos.z,
        dst_lod: 0,
        dst_memory_type: dst_type,
        dst_host: p.dst_ptr.ptr,
        dst_device: p.dst_ptr.ptr as usize as CUdeviceptr,
        dst_array: std::ptr::null_mut(),
        reserved1: std::ptr::null_mut(),
        dst_pitch: p.dst_ptr.pitch,
        dst_height: p.dst_ptr.ysize,
        width_in_bytes: e.width,
        height: e.height,
        depth: e.depth,
    };
    if c.src_pitch < e.width || c.dst_pitch < e.width || (e.depth > 1 && (c.src_height < e.height || c.dst_height < e.height)) {
        return Err(Error(INVALID_PITCH_VALUE));
    }
    if let Some(s) = stream {
        crate::graph::refuse_if_capturing(call, s)?;
    }
    match stream {
        None => cu!(cuMemcpy3D_v2(&c)),
        Some(s) => cu!(cuMemcpy3DAsync_v2(&c, s)),
    }
}

/// A 2D copy of `height` rows of `width` bytes.
#[allow(clippy::too_many_arguments)]
fn copy_2d(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: c_int,
    stream: Option<Handle>,
) -> Result<(), Error> {
    context::ensure()?;
    let (src_type, dst_type) = memory_types(kind)?;
    if width == 0 || height == 0 {
        return Ok(());
    }
    if dpitch < width || spitch < width {
        return Err(Error(INVALID_PITCH_VALUE));
    }
    let c = Memcpy2D {
        src_x_in_bytes: 0,
        src_y: 0,
        src_memory_type: src_type,
        src_host: src,
        src_device: src as usize as CUdeviceptr,
        src_array: std::ptr::null_mut(),
        src_pitch: spitch,
        dst_x_in_bytes: 0,
        dst_y: 0,
        dst_memory_type: dst_type,
        dst_host: dst,
        dst_device: dst as usize as CUdeviceptr,
        dst_array: std::ptr::null_mut(),
        dst_pitch: dpitch,
        width_in_bytes: width,
        height,
    };
    if let Some(s) = stream {
        crate::graph::refuse_if_capturing("cudaMemcpy2DAsync", s)?;
    }
    match stream {
        None => cu!(cuMemcpy2D_v2(&c)),
        Some(s) => cu!(cuMemcpy2DAsync_v2(&c, s)),
    }
}

/// A 2D set of `height` rows of `width` bytes to `value`.
fn set_2d(p: *mut c_void, pitch: usize, value: c_int, width: usize, height: usize, stream: Option<Handle>) -> Result<(), Error> {
    context::ensure()?;
    if width == 0 || height == 0 {
        return Ok(());
    }
    if pitch < width {
        return Err(Error(INVALID_PITCH_VALUE));
    }
    let d = p as usize as CUdeviceptr;
    if let Some(s) = stream {
        crate::graph::refuse_if_capturing("cudaMemset2DAsync", s)?;
    }
    match stream {
        None => cu!(cuMemsetD2D8_v2(d, pitch, value as u8, width, height)),
        Some(s) => cu!(cuMemsetD2D8Async(d, pitch, value as u8, width, height, s)),
    }
}

/// A 3D set: each of `extent.depth` slices of `ptr.ysize` rows, `extent.height` of them set.
fn set_3d(ptr: PitchedPtr, value: c_int, extent: Extent, stream: Option<Handle>) -> Result<(), Error> {
    if extent.depth > 1 && ptr.ysize < extent.height {
        return Err(Error(INVALID_PITCH_VALUE));
    }
    if extent.height == ptr.ysize || extent.depth <= 1 {
        // The slices' rows follow one another: one 2D set.
        return set_2d(ptr.ptr, ptr.pitch, value, extent.width, extent.height * extent.depth, stream);
    }
    for z in 0..extent.depth {
        let slice = (ptr.ptr as usize + z * ptr.pitch * ptr.ysize) as *mut c_void;
        set_2d(slice, ptr.pitch, value, extent.width, extent.height, stream)?;
    }
    Ok(())
}

entry_points! {
    /// # Safety
    /// The pointers are null or writable.
    fn __warpsim_cudaMallocPitch(p: *mut *mut c_void, pitch: *mut usize, width: usize, height: usize) {
        let (p, pitch) = (crate::error::non_null(p)?, crate::error::non_null(pitch)?);
        context::ensure()?;
        let (mut d, mut row) = (0, 0);
        cu!(cuMemAllocPitch_v2(&mut d, &mut row, width, height, 16))?;
        // SAFETY: checked non-null; writable as the caller promises.
        unsafe {
            p.write(d as usize as *mut c_void);
            pitch.write(row);
        }
        Ok(())
    }

    /// # Safety
    /// `p` is null or writable.
    fn __warpsim_cudaMalloc3D(p: *mut PitchedPtr, extent: Extent) -> p {
        context::ensure()?;
        let (mut d, mut row) = (0, 0);
        let rows = extent.height.checked_mul(extent.depth).ok_or(Error(INVALID_VALUE))?;
        cu!(cuMemAllocPitch_v2(&mut d, &mut row, extent.width, rows, 16))?;
        Ok(PitchedPtr { ptr: d as usize as *mut c_void, pitch: row, xsize: extent.width, ysize: extent.height })
    }

    /// # Safety
    /// `dst` and `src` hold `height` rows of their pitches in the spaces `kind` names.
    fn __warpsim_cudaMemcpy2D(dst: *mut c_void, dpitch: usize, src: *const c_void, spitch: usize, width: usize, height: usize, kind: c_int) {
        copy_2d(dst, dpitch, src, spitch, width, height, kind, None)
    }

    /// # Safety
    /// As [`__warpsim_cudaMemcpy2D`].
    fn __warpsim_cudaMemcpy2DAsync(
        dst: *mut c_void, dpitch: usize, src: *const c_void, spitch: usize, width: usize, height: usize, kind: c_int, stream: Handle,
    ) {
        copy_2d(dst, dpitch, src, spitch, width, height, kind, Some(stream))
    }

    /// # Safety
    /// `p` is null or a `cudaMemcpy3DParms` whose pointers hold what it describes.
    fn __warpsim_cudaMemcpy3D(p: *const Memcpy3DParms) { copy_3d("cudaMemcpy3D", p, None) }

    /// # Safety
    /// As [`__warpsim_cudaMemcpy3D`].
    fn __warpsim_cudaMemcpy3DAsync(p: *const Memcpy3DParms, stream: Handle) { copy_3d("cudaMemcpy3DAsync", p, Some(stream)) }

    /// # Safety
    /// `p` holds `height` rows of `pitch` bytes of device memory.
    fn __warpsim_cudaMemset2D(p: *mut c_void, pitch: usize, value: c_int, width: usize, height: usize) {
        set_2d(p, pitch, value, width, height, None)
    }

    /// # Safety
    /// As [`__warpsim_cudaMemset2D`].
    fn __warpsim_cudaMemset2DAsync(p: *mut c_void, pitch: usize, value: c_int, width: usize, height: usize, stream: Handle) {
        set_2d(p, pitch, value, width, height, Some(stream))
    }

    /// # Safety
    /// `ptr` describes device memory holding `extent`.
    fn __warpsim_cudaMemset3D(ptr: PitchedPtr, value: c_int, extent: Extent) { set_3d(ptr, value, extent, None) }

    /// # Safety
    /// As [`__warpsim_cudaMemset3D`].
    fn __warpsim_cudaMemset3DAsync(ptr: PitchedPtr, value: c_int, extent: Extent, stream: Handle) {
        set_3d(ptr, value, extent, Some(stream))
    }
}

refused! {
    fn __warpsim_cudaMallocArray: ARRAYS;
    fn __warpsim_cudaMalloc3DArray: ARRAYS;
    fn __warpsim_cudaMallocMipmappedArray: ARRAYS;
    fn __warpsim_cudaFreeArray: ARRAYS;
    fn __warpsim_cudaFreeMipmappedArray: ARRAYS;
    fn __warpsim_cudaArrayGetInfo: ARRAYS;
    fn __warpsim_cudaMemcpyToArray: ARRAYS;
    fn __warpsim_cudaMemcpyToArrayAsync: ARRAYS;
    fn __warpsim_cudaMemcpyFromArray: ARRAYS;
    fn __warpsim_cudaMemcpyFromArrayAsync: ARRAYS;
    fn __warpsim_cudaMemcpy2DToArray: ARRAYS;
    fn __warpsim_cudaMemcpy2DToArrayAsync: ARRAYS;
    fn __warpsim_cudaMemcpy2DFromArray: ARRAYS;
    fn __warpsim_cudaMemcpy2DFromArrayAsync: ARRAYS;
    fn __warpsim_cudaMemcpyArrayToArray: ARRAYS;
    fn __warpsim_cudaMemcpy2DArrayToArray: ARRAYS;
    fn __warpsim_cudaCreateTextureObject: TEXTURES;
    fn __warpsim_cudaDestroyTextureObject: TEXTURES;
    fn __warpsim_cudaCreateSurfaceObject: SURFACES;
    fn __warpsim_cudaDestroySurfaceObject: SURFACES;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_kinds_name_the_drivers_memory_types() {
        assert_eq!(memory_types(1), Ok((MEMORY_HOST, MEMORY_DEVICE)));
        assert_eq!(memory_types(2), Ok((MEMORY_DEVICE, MEMORY_HOST)));
        assert_eq!(memory_types(4), Ok((MEMORY_UNIFIED, MEMORY_UNIFIED)));
        assert_eq!(memory_types(5), Err(Error(INVALID_MEMCPY_DIRECTION)));
    }

    #[test]
    fn a_copy_naming_an_array_is_refused_before_the_driver_is_asked() {
        // SAFETY: all-zero bytes are a valid `cudaMemcpy3DParms` (null pointers, zero sizes).
        let mut p: Memcpy3DParms = unsafe { std::mem::zeroed() };
        p.dst_array = 16 as *mut c_void;
        p.extent = Extent { width: 4, height: 1, depth: 1 };
        assert_eq!(copy_3d("cudaMemcpy3D", &p, None), Err(Error(crate::error::NOT_SUPPORTED)));
        assert_eq!(__warpsim_cudaMallocArray(), crate::error::NOT_SUPPORTED);
    }
}
