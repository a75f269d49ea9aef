//! The clang path's intrinsics added for issue 16 (`tests/cu/clang_intrinsics.cu`):
//! `__dp4a`, `__dp2a_lo/_hi`, `__fns`, `__float2half_{rz,rd,ru}`,
//! `__double2float_{rz,rd,ru}` and other rounding variants, `uint4`/`make_uint4`
//! and the other vector types, `cuda_bf16.h` and the `__pipeline_*` primitives
//! (cp.async). Each word of the output is checked against a value worked out by
//! hand from CUDA's documented semantics (the working is in the comments).
//!
//! Skipped (saying so) without clang-19 on PATH, except under CI.

use std::process::Command;

mod common;
use common::{have_clang19, npy_values, repo, scratch};

#[test]
fn dot_products_fns_roundings_vectors_bf16_and_pipelines_on_the_clang_path() {
    if !have_clang19() {
        return;
    }
    let d = scratch("clang-intrinsics", "all");
    let input = "in:u32[16]=values:0x01FF0203,0x0402FF05,10,0x4000026A,0x3EAAAAAB,0x55555555,0x3FD55555,0xFFFFFFFB,\
                 0x11111111,0x22222222,0x33333333,0x44444444,0x55555555,0x66666666,0x77777777,0x88888888:in";
    let o = Command::new(env!("CARGO_BIN_EXE_warpsim"))
        .current_dir(repo())
        .env_remove("WARPSIM_CLANG")
        .env("WARPSIM_NVCC", "none")
        .args(["run", "crates/cli/tests/cu/clang_intrinsics.cu", "--kernel", "intrinsics", "--block", "1"])
        .args(["--param", input, "--param", "out:u32[48]=zeros:out", "--out"])
        .arg(&d)
        .output()
        .expect("running warpsim");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out: Vec<u32> = npy_values(&d.join("out.npy"), u32::from_le_bytes);
    let want: [(usize, u32, &str); 48] = [
        (0, 0x11111111, "cp.async 16 bytes: first word"),
        (1, 0x44444444, "cp.async 16 bytes: last word"),
        (2, 0x55555555, "cp.async with zfill: copied word"),
        (3, 0x66666666, "cp.async with zfill: copied word"),
        (4, 0, "cp.async with zfill: zero-filled word"),
        (5, 0, "cp.async with zfill: zero-filled word"),
        // a = bytes 3, 2, -1, 1 (halves 515, 511); b = bytes 5, -1, 2, 4; c = 10.
        (6, 25, "__dp4a signed: 15 - 2 - 2 + 4 + 10"),
        (7, 1049, "__dp4a unsigned: 15 + 510 + 510 + 4 + 10"),
        (8, 2074, "__dp2a_lo signed: 515*5 + 511*-1 + 10"),
        (9, 3084, "__dp2a_hi signed: 515*2 + 511*4 + 10"),
        (10, 132890, "__dp2a_lo unsigned: 515*5 + 511*255 + 10"),
        (11, 3084, "__dp2a_hi unsigned"),
        // m has bits 1, 3, 5, 6, 9, 30 set.
        (12, 6, "__fns(m, 4, 2): second set bit from 4 up"),
        (13, 1, "__fns(m, 4, -2): second set bit from 4 down"),
        (14, u32::MAX, "__fns(m, 4, 0): bit 4 is clear"),
        (15, 5, "__fns(m, 5, 0): bit 5 is set"),
        (16, u32::MAX, "__fns(m, 20, 3): only one set bit above 20"),
        // 1/3 in binary16 is 0x3555 and a third of an ulp more.
        (17, 0xB555, "__float2half_rn(-1/3)"),
        (18, 0xB555, "__float2half_rz(-1/3)"),
        (19, 0xB556, "__float2half_rd(-1/3)"),
        (20, 0x3556, "__float2half_ru(1/3)"),
        // double 1/3 to float: 0x3EAAAAAA and two thirds of an ulp more.
        (21, 0x3EAAAAAB, "__double2float_rn(1/3)"),
        (22, 0x3EAAAAAA, "__double2float_rz(1/3)"),
        (23, 0x3EAAAAAB, "__double2float_ru(1/3)"),
        (24, 0xBEAAAAAB, "__double2float_rd(-1/3)"),
        (25, -3i32 as u32, "__double2int_rd(-2.5)"),
        (26, -2i32 as u32, "__double2int_ru(-2.5)"),
        (27, -2i32 as u32, "__float2ll_ru(-2.5f)"),
        (28, 0x4B800000, "__ll2float_rz(2^24 + 1) = 2^24"),
        (29, 0x4B800001, "__ll2float_ru(2^24 + 1) = 2^24 + 2"),
        // tiny = 0.75 ulp of 1.
        (30, 0x3F800001, "__fadd_rn(1, 0.75 ulp)"),
        (31, 0x3F800000, "__fadd_rz(1, 0.75 ulp)"),
        (32, 0x3F800001, "__fmul_ru(0x3EAAAAAB, 3) = 1 + 2^-25 up"),
        (33, 0x3F800000, "__fmul_rz(0x3EAAAAAB, 3)"),
        (34, 0x3F7FFFFE, "__fsub_rd(1, 1.5 * 2^-24) = 1 - 2^-23"),
        (35, 0x3EAB, "__float2bfloat16(0x3EAAAAAB): low half 0xAAAB rounds up"),
        (36, 0x3EAA, "__float2bfloat16_rz(0x3EAAAAAB)"),
        (37, 0x3EAB0000, "__bfloat162float: the bits in the top half"),
        (38, 0x3F2B, "__hadd(h, h) = 2h"),
        (39, 0x3DE4, "__hmul(h, h): (171/512)^2 = 1.7847 * 2^-4, mantissa 100.45 rounds to 100"),
        (40, 0x01FF0203, "make_uint4 .x stored as one uint4"),
        (41, 0x0402FF05, "make_uint4 .y"),
        (42, 10, "make_uint4 .z"),
        (43, 0x4000026A, "make_uint4 .w"),
        (44, 3 | 8 << 8 | 16 << 16 | 24 << 24, "sizeof(char3), alignof(short4), alignof(uint4), sizeof(double3)"),
        (45, 16 | 2 << 8 | 4 << 16 | 32 << 24, "alignof(longlong2), sizeof(uchar2), alignof(float3), sizeof(ulong4)"),
        (46, 410, "uint3 = threadIdx, dim3 = gridDim, make_int2"),
        (47, 0xBEAB | 0x3EAB << 16, "__float2bfloat16_rd(-1/3) and _ru(1/3): away from zero"),
    ];
    let bad: Vec<String> = want
        .iter()
        .filter(|&&(i, w, _)| out[i] != w)
        .map(|&(i, w, what)| format!("out[{i}] = {:#x}, want {w:#x}: {what}", out[i]))
        .collect();
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn the_readmes_check_example_prints_what_the_readme_shows() {
    if !have_clang19() {
        return;
    }
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let shown = readme
        .split("The first prints the launch's summary, then:\n\n```\n")
        .nth(1)
        .and_then(|r| r.split("\n```").next())
        .expect("the README's check output block");
    let d = scratch("clang-intrinsics", "readme");
    let o = Command::new(env!("CARGO_BIN_EXE_warpsim"))
        .current_dir(repo())
        .env_remove("WARPSIM_CLANG")
        .env("WARPSIM_NVCC", "none")
        .args(["check", "tests/cuda/check/buggy.cu", "--kernel", "race_warp_reduce", "--grid", "2", "--block", "32"])
        .args(["--param", "in:i32[64]=hash_u32:in", "--param", "out:i32[2]=zeros:out", "--out"])
        .arg(&d)
        .output()
        .expect("running warpsim");
    let stdout = String::from_utf8_lossy(&o.stdout);
    // The terminal shows stdout, then the error line on stderr.
    let got = format!("{}{}", &stdout[stdout.find("race at").expect("no race found")..], String::from_utf8_lossy(&o.stderr));
    assert_eq!(got.trim_end(), shown.trim_end());
    assert!(shown.lines().count() < 30, "the example is short");
}
