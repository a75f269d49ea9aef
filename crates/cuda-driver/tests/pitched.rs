//! The driver's pitched-memory calls as a client makes them (`cuMemAllocPitch_v2`,
//! `cuMemcpy2D(Async)_v2`, `cuMemcpy3D_v2`, `cuMemsetD2D8/16/32`), checked against the same
//! copies done on host arrays; CUDA arrays refused. In-process, one test: the driver's state
//! is one per process.

use std::ffi::c_void;
use std::ptr::{null, null_mut};
use warpsim_cuda::api_core::*;
use warpsim_cuda::api_mem::*;
use warpsim_cuda::errors::*;

fn ok(r: CUresult) {
    assert_eq!(r, CUDA_SUCCESS);
}

#[allow(clippy::too_many_arguments)]
fn copy2d(src_type: u32, src: u64, spitch: usize, dst_type: u32, dst: u64, dpitch: usize, w: usize, h: usize) -> Memcpy2D {
    Memcpy2D {
        src_x_in_bytes: 0,
        src_y: 0,
        src_memory_type: src_type,
        src_host: src as *const c_void,
        src_device: src,
        src_array: null_mut(),
        src_pitch: spitch,
        dst_x_in_bytes: 0,
        dst_y: 0,
        dst_memory_type: dst_type,
        dst_host: dst as *mut c_void,
        dst_device: dst,
        dst_array: null_mut(),
        dst_pitch: dpitch,
        width_in_bytes: w,
        height: h,
    }
}

const HOST: u32 = 1;
const DEVICE: u32 = 2;

#[test]
fn pitched_copies_and_sets_move_the_rows_a_host_loop_would() {
    // SAFETY: every pointer below is a live local of the right size, as cuda.h asks.
    unsafe {
        ok(cuInit(0));
        let mut ctx = null_mut();
        ok(cuDevicePrimaryCtxRetain(&mut ctx, 0));
        ok(cuCtxSetCurrent(ctx));
        for name in [c"cuMemcpy2D", c"cuMemcpy2DAsync", c"cuMemcpy3D", c"cuMemsetD2D8", c"cuMemsetD2D32Async"] {
            let mut f: *mut c_void = null_mut();
            ok(cuGetProcAddress_v2(name.as_ptr(), &mut f, 13000, 0, null_mut()));
            assert!(!f.is_null(), "{name:?}");
        }

        let (w, h) = (37usize, 5usize);
        let (mut d, mut pitch) = (0u64, 0usize);
        assert_eq!(cuMemAllocPitch_v2(&mut d, &mut pitch, w, h, 3), CUDA_ERROR_INVALID_VALUE, "element sizes are 4, 8 or 16");
        ok(cuMemAllocPitch_v2(&mut d, &mut pitch, w, h, 4));
        assert!(pitch >= w && pitch % 512 == 0, "pitch {pitch}");
        let host: Vec<u8> = (0..w * h).map(|i| (i * 7 % 251) as u8).collect();
        let c = copy2d(HOST, host.as_ptr() as u64, w, DEVICE, d, pitch, w, h);
        ok(cuMemcpy2D_v2(&c));
        // Rows land `pitch` apart: read the whole allocation back linearly.
        let mut all = vec![0u8; pitch * h];
        ok(cuMemcpyDtoH_v2(all.as_mut_ptr() as *mut c_void, d, pitch * h));
        for y in 0..h {
            assert_eq!(&all[y * pitch..y * pitch + w], &host[y * w..(y + 1) * w], "row {y}");
            assert!(all[y * pitch + w..(y + 1) * pitch].iter().all(|&b| b == 0), "row {y}'s padding untouched");
        }

        // A window at (x 3, y 1) of 10 x 3 bytes, out to a host buffer with a pitch of 16.
        let mut win = vec![0xaau8; 16 * 3];
        let mut c = copy2d(DEVICE, d, pitch, HOST, win.as_mut_ptr() as u64, 16, 10, 3);
        (c.src_x_in_bytes, c.src_y) = (3, 1);
        ok(cuMemcpy2DAsync_v2(&c, null_mut()));
        for y in 0..3 {
            assert_eq!(&win[y * 16..y * 16 + 10], &host[(y + 1) * w + 3..(y + 1) * w + 13]);
            assert!(win[y * 16 + 10..(y + 1) * 16].iter().all(|&b| b == 0xaa));
        }

        // Sets of 8-, 16- and 32-bit elements, each `width` elements of each row.
        ok(cuMemsetD2D32_v2(d, pitch, 0x0403_0201, 4, h));
        ok(cuMemsetD2D16_v2(d + 16, pitch, 0x0605, 2, h));
        ok(cuMemsetD2D8Async(d + 20, pitch, 0x07, 3, h, null_mut()));
        ok(cuMemcpyDtoH_v2(all.as_mut_ptr() as *mut c_void, d, pitch * h));
        for y in 0..h {
            let row = &all[y * pitch..y * pitch + w];
            assert_eq!(&row[..23], &[1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4, 5, 6, 5, 6, 7, 7, 7], "row {y}");
            assert_eq!(&row[23..], &host[y * w + 23..(y + 1) * w]);
        }
        assert_eq!(cuMemsetD2D32_v2(d, 8, 0, 4, 2), CUDA_ERROR_INVALID_VALUE, "a pitch under the row");

        // 3D: slices of `h` rows; copy 2 slices x 2 rows x 4 bytes from (1, 1, 1) of a host box.
        let (bx, by, bz) = (6usize, 3usize, 3usize);
        let boxed: Vec<u8> = (0..bx * by * bz).map(|i| i as u8).collect();
        let mut c3 = Memcpy3D::from(&copy2d(HOST, boxed.as_ptr() as u64, bx, DEVICE, d, pitch, 4, 2));
        (c3.src_height, c3.dst_height, c3.depth) = (by, h / 2, 2);
        (c3.src_x_in_bytes, c3.src_y, c3.src_z) = (1, 1, 1);
        ok(cuMemcpy3D_v2(&c3));
        ok(cuMemcpyDtoH_v2(all.as_mut_ptr() as *mut c_void, d, pitch * h));
        for z in 0..2 {
            for y in 0..2 {
                let at = (z * (h / 2) + y) * pitch;
                let from = ((z + 1) * by + y + 1) * bx + 1;
                assert_eq!(&all[at..at + 4], &boxed[from..from + 4], "slice {z} row {y}");
            }
        }

        // Arrays are refused; a null parameter struct is invalid.
        let mut arr = copy2d(HOST, host.as_ptr() as u64, w, 3, 0, w, w, 1);
        arr.dst_array = 16 as *mut c_void;
        assert_eq!(cuMemcpy2D_v2(&arr), CUDA_ERROR_NOT_SUPPORTED);
        assert_eq!(cuMemcpy3D_v2(null()), CUDA_ERROR_INVALID_VALUE);
        ok(cuMemFree_v2(d));
    }
}
