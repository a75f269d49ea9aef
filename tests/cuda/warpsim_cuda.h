// Minimal CUDA device-side definitions for compiling warpsim's test kernels
// with clang alone, without the CUDA toolkit's headers or libdevice:
//
//   clang-19 --cuda-device-only -nocudainc -nocudalib --cuda-gpu-arch=sm_80 \
//       --cuda-feature=+ptx70 -ffp-contract=off -O2 -S -o k.ptx k.cu
//
// (crates/cli/tests/cuda_kernels.rs does this for every .cu file here, with
// -O2 and with -O0 -g.)
//
// `--cuda-feature=+ptx70` is needed because without a CUDA installation clang
// does not know which PTX ISA it may target, and the `*_sync` builtins need
// PTX 6.0 or later. `-ffp-contract=off` stops clang from fusing `a * b + c`
// into an fma on its own (CUDA's default is `fast`), so that the tests' Rust
// references can reproduce float results exactly; fmas are written as fmaf.
//
// Everything here maps to a clang builtin (which the NVPTX back end turns into
// one PTX instruction) or to inline PTX; nothing needs libdevice.

#ifndef WARPSIM_CUDA_H
#define WARPSIM_CUDA_H

// threadIdx, blockIdx, blockDim, gridDim and warpSize (= 32): clang's own
// definitions, found in clang's resource directory even with -nocudainc.
#include <__clang_cuda_builtin_vars.h>

#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __noinline__ __attribute__((noinline))
#define __forceinline__ __inline__ __attribute__((always_inline))

#define WS_INLINE static __device__ __forceinline__

// Vector types, aligned as CUDA's are (so loads become ld.v2/ld.v4).
struct __attribute__((aligned(8))) float2 { float x, y; };
struct __attribute__((aligned(16))) float4 { float x, y, z, w; };
struct __attribute__((aligned(8))) int2 { int x, y; };
struct __attribute__((aligned(16))) int4 { int x, y, z, w; };
struct __attribute__((aligned(16))) double2 { double x, y; };

// __syncthreads() is itself a clang builtin (bar.sync 0).

// ---- warp-level primitives ------------------------------------------------

WS_INLINE void __syncwarp(unsigned mask = 0xffffffffu) { __nvvm_bar_warp_sync(mask); }

WS_INLINE unsigned __activemask() {
    unsigned m;
    asm volatile("activemask.b32 %0;" : "=r"(m));
    return m;
}

WS_INLINE unsigned __laneid() {
    unsigned l;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(l));
    return l;
}

// The shuffle's c operand packs the segment mask ((32 - width) << 8) with the
// clamp: lane 31 (0x1f) for idx/down/bfly, lane 0 for up.
#define WS_SHFL_C(width, clamp) ((((unsigned)(32 - (width))) << 8) | (clamp))

WS_INLINE int __shfl_sync(unsigned mask, int v, int lane, int width = 32) {
    return __nvvm_shfl_sync_idx_i32(mask, v, lane, WS_SHFL_C(width, 0x1f));
}
WS_INLINE unsigned __shfl_sync(unsigned mask, unsigned v, int lane, int width = 32) {
    return (unsigned)__nvvm_shfl_sync_idx_i32(mask, (int)v, lane, WS_SHFL_C(width, 0x1f));
}
WS_INLINE float __shfl_sync(unsigned mask, float v, int lane, int width = 32) {
    return __nvvm_shfl_sync_idx_f32(mask, v, lane, WS_SHFL_C(width, 0x1f));
}
WS_INLINE int __shfl_up_sync(unsigned mask, int v, unsigned delta, int width = 32) {
    return __nvvm_shfl_sync_up_i32(mask, v, delta, WS_SHFL_C(width, 0));
}
WS_INLINE unsigned __shfl_up_sync(unsigned mask, unsigned v, unsigned delta, int width = 32) {
    return (unsigned)__nvvm_shfl_sync_up_i32(mask, (int)v, delta, WS_SHFL_C(width, 0));
}
WS_INLINE float __shfl_up_sync(unsigned mask, float v, unsigned delta, int width = 32) {
    return __nvvm_shfl_sync_up_f32(mask, v, delta, WS_SHFL_C(width, 0));
}
WS_INLINE int __shfl_down_sync(unsigned mask, int v, unsigned delta, int width = 32) {
    return __nvvm_shfl_sync_down_i32(mask, v, delta, WS_SHFL_C(width, 0x1f));
}
WS_INLINE unsigned __shfl_down_sync(unsigned mask, unsigned v, unsigned delta, int width = 32) {
    return (unsigned)__nvvm_shfl_sync_down_i32(mask, (int)v, delta, WS_SHFL_C(width, 0x1f));
}
WS_INLINE float __shfl_down_sync(unsigned mask, float v, unsigned delta, int width = 32) {
    return __nvvm_shfl_sync_down_f32(mask, v, delta, WS_SHFL_C(width, 0x1f));
}
WS_INLINE int __shfl_xor_sync(unsigned mask, int v, int lane_mask, int width = 32) {
    return __nvvm_shfl_sync_bfly_i32(mask, v, lane_mask, WS_SHFL_C(width, 0x1f));
}
WS_INLINE unsigned __shfl_xor_sync(unsigned mask, unsigned v, int lane_mask, int width = 32) {
    return (unsigned)__nvvm_shfl_sync_bfly_i32(mask, (int)v, lane_mask, WS_SHFL_C(width, 0x1f));
}
WS_INLINE float __shfl_xor_sync(unsigned mask, float v, int lane_mask, int width = 32) {
    return __nvvm_shfl_sync_bfly_f32(mask, v, lane_mask, WS_SHFL_C(width, 0x1f));
}

WS_INLINE unsigned __ballot_sync(unsigned mask, int pred) { return __nvvm_vote_ballot_sync(mask, pred != 0); }
WS_INLINE int __any_sync(unsigned mask, int pred) { return __nvvm_vote_any_sync(mask, pred != 0); }
WS_INLINE int __all_sync(unsigned mask, int pred) { return __nvvm_vote_all_sync(mask, pred != 0); }
WS_INLINE int __uni_sync(unsigned mask, int pred) { return __nvvm_vote_uni_sync(mask, pred != 0); }
WS_INLINE unsigned __match_any_sync(unsigned mask, unsigned v) { return __nvvm_match_any_sync_i32(mask, v); }

// ---- integer intrinsics -----------------------------------------------------

WS_INLINE int __popc(unsigned x) { return __builtin_popcount(x); }
WS_INLINE int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
WS_INLINE int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
WS_INLINE int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
WS_INLINE int __ffs(int x) { return x == 0 ? 0 : __builtin_ctz((unsigned)x) + 1; }
WS_INLINE unsigned __brev(unsigned x) { return __builtin_bitreverse32(x); }
WS_INLINE unsigned long long __brevll(unsigned long long x) { return __builtin_bitreverse64(x); }
WS_INLINE unsigned __byte_perm(unsigned a, unsigned b, unsigned s) { return __nvvm_prmt(a, b, s); }
WS_INLINE unsigned __umulhi(unsigned a, unsigned b) { return __nvvm_mulhi_ui(a, b); }
WS_INLINE int __mulhi(int a, int b) { return __nvvm_mulhi_i(a, b); }
WS_INLINE unsigned long long __umul64hi(unsigned long long a, unsigned long long b) { return __nvvm_mulhi_ull(a, b); }
WS_INLINE int min(int a, int b) { return a < b ? a : b; }
WS_INLINE unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
WS_INLINE int max(int a, int b) { return a > b ? a : b; }
WS_INLINE unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
WS_INLINE int abs(int a) { return __builtin_abs(a); }
WS_INLINE unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned s) {
    unsigned r;
    asm("shf.l.wrap.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(lo), "r"(hi), "r"(s));
    return r;
}
// bfe.u32 / bfi.b32 (no C builtin produces them reliably).
WS_INLINE unsigned __bfe(unsigned x, unsigned pos, unsigned len) {
    unsigned r;
    asm("bfe.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(pos), "r"(len));
    return r;
}
WS_INLINE int __bfe_s(int x, unsigned pos, unsigned len) {
    int r;
    asm("bfe.s32 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(pos), "r"(len));
    return r;
}
WS_INLINE unsigned __bfi(unsigned ins, unsigned base, unsigned pos, unsigned len) {
    unsigned r;
    asm("bfi.b32 %0, %1, %2, %3, %4;" : "=r"(r) : "r"(ins), "r"(base), "r"(pos), "r"(len));
    return r;
}

// ---- atomics (generic addresses; clang emits atom.global when it can tell) ---

WS_INLINE int atomicAdd(int *p, int v) { return __nvvm_atom_add_gen_i(p, v); }
WS_INLINE unsigned atomicAdd(unsigned *p, unsigned v) { return (unsigned)__nvvm_atom_add_gen_i((int *)p, (int)v); }
WS_INLINE unsigned long long atomicAdd(unsigned long long *p, unsigned long long v) {
    return __nvvm_atom_add_gen_ll((long long *)p, (long long)v);
}
WS_INLINE float atomicAdd(float *p, float v) { return __nvvm_atom_add_gen_f(p, v); }
WS_INLINE double atomicAdd(double *p, double v) { return __nvvm_atom_add_gen_d(p, v); }
WS_INLINE int atomicCAS(int *p, int cmp, int v) { return __nvvm_atom_cas_gen_i(p, cmp, v); }
WS_INLINE unsigned atomicCAS(unsigned *p, unsigned cmp, unsigned v) {
    return (unsigned)__nvvm_atom_cas_gen_i((int *)p, (int)cmp, (int)v);
}
WS_INLINE int atomicExch(int *p, int v) { return __nvvm_atom_xchg_gen_i(p, v); }
WS_INLINE int atomicMax(int *p, int v) { return __nvvm_atom_max_gen_i(p, v); }
WS_INLINE int atomicMin(int *p, int v) { return __nvvm_atom_min_gen_i(p, v); }

WS_INLINE long long clock64() { return __nvvm_read_ptx_sreg_clock64(); }

// ---- conversions --------------------------------------------------------------

WS_INLINE int __float2int_rn(float x) { return __nvvm_f2i_rn(x); }
WS_INLINE int __float2int_rz(float x) { return __nvvm_f2i_rz(x); }
WS_INLINE int __float2int_rd(float x) { return __nvvm_f2i_rm(x); }
WS_INLINE int __float2int_ru(float x) { return __nvvm_f2i_rp(x); }
WS_INLINE unsigned __float2uint_rn(float x) { return __nvvm_f2ui_rn(x); }
WS_INLINE float __int2float_rn(int x) { return __nvvm_i2f_rn(x); }
WS_INLINE float __uint2float_rn(unsigned x) { return __nvvm_ui2f_rn(x); }
WS_INLINE int __double2int_rn(double x) { return __nvvm_d2i_rn(x); }
WS_INLINE float __double2float_rn(double x) { return __nvvm_d2f_rn(x); }
WS_INLINE float __int_as_float(int x) { return __builtin_bit_cast(float, x); }
WS_INLINE int __float_as_int(float x) { return __builtin_bit_cast(int, x); }
WS_INLINE unsigned __float_as_uint(float x) { return __builtin_bit_cast(unsigned, x); }
WS_INLINE long long __double_as_longlong(double x) { return __builtin_bit_cast(long long, x); }

// Half precision, as raw binary16 bits in an unsigned short.
WS_INLINE unsigned short __float2half_rn(float x) { return __nvvm_f2h_rn(x); }
WS_INLINE float __half2float(unsigned short h) { return (float)__builtin_bit_cast(_Float16, h); }

// ---- math (IEEE, single instructions) -------------------------------------------

WS_INLINE float sqrtf(float x) { return __builtin_sqrtf(x); } // sqrt.rn.f32
WS_INLINE double sqrt(double x) { return __builtin_sqrt(x); } // sqrt.rn.f64
WS_INLINE float fmaf(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
WS_INLINE double fma(double a, double b, double c) { return __builtin_fma(a, b, c); }
WS_INLINE float fabsf(float x) { return __builtin_fabsf(x); }
WS_INLINE double fabs(double x) { return __builtin_fabs(x); }
WS_INLINE float fminf(float a, float b) { return __builtin_fminf(a, b); }
WS_INLINE float fmaxf(float a, float b) { return __builtin_fmaxf(a, b); }
WS_INLINE double fmin(double a, double b) { return __builtin_fmin(a, b); }
WS_INLINE double fmax(double a, double b) { return __builtin_fmax(a, b); }
WS_INLINE float copysignf(float a, float b) { return __builtin_copysignf(a, b); }
WS_INLINE double copysign(double a, double b) { return __builtin_copysign(a, b); }
WS_INLINE float floorf(float x) { return __builtin_floorf(x); }
WS_INLINE float ceilf(float x) { return __builtin_ceilf(x); }
WS_INLINE float truncf(float x) { return __builtin_truncf(x); }
WS_INLINE float rintf(float x) { return __builtin_rintf(x); }

#endif
