// The CUDA device API for compiling kernels with clang alone, without the
// CUDA toolkit's headers or libdevice. warpsim ships this file (it is built
// into the binary and written beside the PTX when `warpsim run kernel.cu`
// compiles a kernel), so a kernel needs no #include of its own:
//
//   clang-19 --cuda-device-only -nocudainc -nocudalib --cuda-gpu-arch=sm_80 \
//       --cuda-feature=+ptx70 -ffp-contract=off -O2 -S \
//       -include warpsim_cuda.h -o k.ptx k.cu
//
// (crates/cli/tests/cuda_kernels.rs does this for every .cu file in
// tests/cuda, with -O2 and with -O0 -g; demo/regen.sh for the demo kernels.)
//
// What it defines: threadIdx, blockIdx, blockDim, gridDim, warpSize;
// __syncthreads (and _count/_and/_or), __syncwarp, __threadfence*;
// __shfl_sync, __shfl_up_sync, __shfl_down_sync, __shfl_xor_sync (int,
// unsigned, float, long long, unsigned long long, double); __ballot_sync,
// __any_sync, __all_sync, __uni_sync, __activemask, __match_any_sync,
// __match_all_sync, __reduce_{add,min,max,and,or,xor}_sync; atomicAdd, Sub,
// Exch, Min, Max, Inc, Dec, And, Or, Xor, CAS; clock, clock64; __ldg, __ldcg,
// __ldca, __ldcs, __ldcv, __ldlu, __stcg, __stcs, __stwb; integer intrinsics
// (__popc, __clz, __ffs, __brev, __byte_perm, __umulhi, __mul24, ...);
// conversions; and math functions: the IEEE ones that are one PTX
// instruction (sqrtf, fmaf, fabsf, fminf, floorf, ...) and the
// transcendentals in their fast form (expf, logf, sinf, powf, ... are
// __expf, __logf, __sinf, __powf: .approx instructions, as with nvcc
// -use_fast_math, since libdevice is not available).
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

typedef __SIZE_TYPE__ size_t;
typedef __PTRDIFF_TYPE__ ptrdiff_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;

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

// One shuffle kind for every element type: 32-bit ones through the builtin,
// 64-bit ones as two 32-bit halves.
#define WS_SHFL(NAME, KIND, T, CLAMP)                                                                  \
    WS_INLINE int NAME(unsigned mask, int v, T x, int width = 32) {                                    \
        return __nvvm_shfl_sync_##KIND##_i32(mask, v, x, WS_SHFL_C(width, CLAMP));                     \
    }                                                                                                  \
    WS_INLINE unsigned NAME(unsigned mask, unsigned v, T x, int width = 32) {                          \
        return (unsigned)__nvvm_shfl_sync_##KIND##_i32(mask, (int)v, x, WS_SHFL_C(width, CLAMP));      \
    }                                                                                                  \
    WS_INLINE float NAME(unsigned mask, float v, T x, int width = 32) {                                \
        return __nvvm_shfl_sync_##KIND##_f32(mask, v, x, WS_SHFL_C(width, CLAMP));                     \
    }                                                                                                  \
    WS_INLINE long long NAME(unsigned mask, long long v, T x, int width = 32) {                        \
        int lo = NAME(mask, (int)v, x, width), hi = NAME(mask, (int)(v >> 32), x, width);              \
        return (long long)(((unsigned long long)(unsigned)hi << 32) | (unsigned)lo);                   \
    }                                                                                                  \
    WS_INLINE unsigned long long NAME(unsigned mask, unsigned long long v, T x, int width = 32) {      \
        return (unsigned long long)NAME(mask, (long long)v, x, width);                                 \
    }                                                                                                  \
    WS_INLINE double NAME(unsigned mask, double v, T x, int width = 32) {                              \
        return __builtin_bit_cast(double, NAME(mask, __builtin_bit_cast(long long, v), x, width));     \
    }

WS_SHFL(__shfl_sync, idx, int, 0x1f)
WS_SHFL(__shfl_up_sync, up, unsigned, 0)
WS_SHFL(__shfl_down_sync, down, unsigned, 0x1f)
WS_SHFL(__shfl_xor_sync, bfly, int, 0x1f)

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

// ---- more warp-level primitives -------------------------------------------------

WS_INLINE unsigned __match_all_sync(unsigned mask, unsigned v, int *pred) {
    return __nvvm_match_all_sync_i32p(mask, v, pred);
}
WS_INLINE unsigned __reduce_add_sync(unsigned mask, unsigned v) { return (unsigned)__nvvm_redux_sync_add((int)v, mask); }
WS_INLINE int __reduce_add_sync(unsigned mask, int v) { return __nvvm_redux_sync_add(v, mask); }
WS_INLINE unsigned __reduce_min_sync(unsigned mask, unsigned v) { return __nvvm_redux_sync_umin(v, mask); }
WS_INLINE int __reduce_min_sync(unsigned mask, int v) { return __nvvm_redux_sync_min(v, mask); }
WS_INLINE unsigned __reduce_max_sync(unsigned mask, unsigned v) { return __nvvm_redux_sync_umax(v, mask); }
WS_INLINE int __reduce_max_sync(unsigned mask, int v) { return __nvvm_redux_sync_max(v, mask); }
WS_INLINE unsigned __reduce_and_sync(unsigned mask, unsigned v) { return (unsigned)__nvvm_redux_sync_and((int)v, mask); }
WS_INLINE unsigned __reduce_or_sync(unsigned mask, unsigned v) { return (unsigned)__nvvm_redux_sync_or((int)v, mask); }
WS_INLINE unsigned __reduce_xor_sync(unsigned mask, unsigned v) { return (unsigned)__nvvm_redux_sync_xor((int)v, mask); }

// ---- block-level synchronisation ----------------------------------------------------

WS_INLINE int __syncthreads_count(int pred) { return __nvvm_bar0_popc(pred); }
WS_INLINE int __syncthreads_and(int pred) { return __nvvm_bar0_and(pred); }
WS_INLINE int __syncthreads_or(int pred) { return __nvvm_bar0_or(pred); }
WS_INLINE void __threadfence() { __nvvm_membar_gl(); }
WS_INLINE void __threadfence_block() { __nvvm_membar_cta(); }
WS_INLINE void __threadfence_system() { __nvvm_membar_sys(); }

WS_INLINE long long clock() { return __nvvm_read_ptx_sreg_clock(); }

// ---- more atomics -----------------------------------------------------------------

WS_INLINE int atomicSub(int *p, int v) { return __nvvm_atom_add_gen_i(p, -v); }
WS_INLINE unsigned atomicSub(unsigned *p, unsigned v) { return (unsigned)__nvvm_atom_add_gen_i((int *)p, -(int)v); }
WS_INLINE unsigned atomicExch(unsigned *p, unsigned v) { return (unsigned)__nvvm_atom_xchg_gen_i((int *)p, (int)v); }
WS_INLINE unsigned long long atomicExch(unsigned long long *p, unsigned long long v) {
    return (unsigned long long)__nvvm_atom_xchg_gen_ll((long long *)p, (long long)v);
}
WS_INLINE float atomicExch(float *p, float v) {
    return __builtin_bit_cast(float, __nvvm_atom_xchg_gen_i((int *)p, __builtin_bit_cast(int, v)));
}
WS_INLINE unsigned long long atomicCAS(unsigned long long *p, unsigned long long cmp, unsigned long long v) {
    return (unsigned long long)__nvvm_atom_cas_gen_ll((long long *)p, (long long)cmp, (long long)v);
}
WS_INLINE unsigned atomicMax(unsigned *p, unsigned v) { return __nvvm_atom_max_gen_ui(p, v); }
WS_INLINE unsigned atomicMin(unsigned *p, unsigned v) { return __nvvm_atom_min_gen_ui(p, v); }
WS_INLINE long long atomicMax(long long *p, long long v) { return __nvvm_atom_max_gen_ll(p, v); }
WS_INLINE long long atomicMin(long long *p, long long v) { return __nvvm_atom_min_gen_ll(p, v); }
WS_INLINE unsigned long long atomicMax(unsigned long long *p, unsigned long long v) { return __nvvm_atom_max_gen_ull(p, v); }
WS_INLINE unsigned long long atomicMin(unsigned long long *p, unsigned long long v) { return __nvvm_atom_min_gen_ull(p, v); }
WS_INLINE unsigned atomicInc(unsigned *p, unsigned limit) { return __nvvm_atom_inc_gen_ui(p, limit); }
WS_INLINE unsigned atomicDec(unsigned *p, unsigned limit) { return __nvvm_atom_dec_gen_ui(p, limit); }
WS_INLINE int atomicAnd(int *p, int v) { return __nvvm_atom_and_gen_i(p, v); }
WS_INLINE unsigned atomicAnd(unsigned *p, unsigned v) { return (unsigned)__nvvm_atom_and_gen_i((int *)p, (int)v); }
WS_INLINE int atomicOr(int *p, int v) { return __nvvm_atom_or_gen_i(p, v); }
WS_INLINE unsigned atomicOr(unsigned *p, unsigned v) { return (unsigned)__nvvm_atom_or_gen_i((int *)p, (int)v); }
WS_INLINE int atomicXor(int *p, int v) { return __nvvm_atom_xor_gen_i(p, v); }
WS_INLINE unsigned atomicXor(unsigned *p, unsigned v) { return (unsigned)__nvvm_atom_xor_gen_i((int *)p, (int)v); }

// ---- cache-hinted loads and stores (ld.global.nc / .cg / .ca / .cs / .cv / .lu) ------

#define WS_LD(name, hint, T, ptxt, con)                                             \
    WS_INLINE T name(const T *p) {                                                  \
        T r;                                                                        \
        asm("ld.global." hint "." ptxt " %0, [%1];" : "=" con(r) : "l"(p));         \
        return r;                                                                   \
    }
#define WS_LD_ALL(name, hint)                                                       \
    WS_LD(name, hint, float, "f32", "f")                                            \
    WS_LD(name, hint, double, "f64", "d")                                           \
    WS_LD(name, hint, int, "s32", "r")                                              \
    WS_LD(name, hint, unsigned, "u32", "r")                                         \
    WS_LD(name, hint, long long, "s64", "l")                                        \
    WS_LD(name, hint, unsigned long long, "u64", "l")
WS_LD_ALL(__ldg, "nc")
WS_LD_ALL(__ldcg, "cg")
WS_LD_ALL(__ldca, "ca")
WS_LD_ALL(__ldcs, "cs")
WS_LD_ALL(__ldcv, "cv")
WS_LD_ALL(__ldlu, "lu")
WS_INLINE float4 __ldg(const float4 *p) {
    float4 r;
    asm("ld.global.nc.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(r.x), "=f"(r.y), "=f"(r.z), "=f"(r.w) : "l"(p));
    return r;
}
WS_INLINE float2 __ldg(const float2 *p) {
    float2 r;
    asm("ld.global.nc.v2.f32 {%0, %1}, [%2];" : "=f"(r.x), "=f"(r.y) : "l"(p));
    return r;
}
#define WS_ST(name, hint, T, ptxt, con)                                             \
    WS_INLINE void name(T *p, T v) { asm volatile("st.global." hint "." ptxt " [%0], %1;" ::"l"(p), con(v) : "memory"); }
#define WS_ST_ALL(name, hint)                                                       \
    WS_ST(name, hint, float, "f32", "f")                                            \
    WS_ST(name, hint, double, "f64", "d")                                           \
    WS_ST(name, hint, int, "s32", "r")                                              \
    WS_ST(name, hint, unsigned, "u32", "r")
WS_ST_ALL(__stcg, "cg")
WS_ST_ALL(__stcs, "cs")
WS_ST_ALL(__stwb, "wb")

// ---- more integer intrinsics ----------------------------------------------------------

WS_INLINE int __mul24(int a, int b) { return __nvvm_mul24_i(a, b); }
WS_INLINE unsigned __umul24(unsigned a, unsigned b) { return __nvvm_mul24_ui(a, b); }
WS_INLINE long long __mul64hi(long long a, long long b) { return __nvvm_mulhi_ll(a, b); }
WS_INLINE int __ffsll(long long x) { return x == 0 ? 0 : __builtin_ctzll((unsigned long long)x) + 1; }
WS_INLINE unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned s) {
    unsigned r;
    asm("shf.r.wrap.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(lo), "r"(hi), "r"(s));
    return r;
}
WS_INLINE long long min(long long a, long long b) { return a < b ? a : b; }
WS_INLINE long long max(long long a, long long b) { return a > b ? a : b; }
WS_INLINE unsigned long long min(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
WS_INLINE unsigned long long max(unsigned long long a, unsigned long long b) { return a > b ? a : b; }
WS_INLINE float min(float a, float b) { return __builtin_fminf(a, b); }
WS_INLINE float max(float a, float b) { return __builtin_fmaxf(a, b); }
WS_INLINE long long llabs(long long a) { return __builtin_llabs(a); }

// ---- more conversions --------------------------------------------------------------------

WS_INLINE unsigned __float2uint_rz(float x) { return __nvvm_f2ui_rz(x); }
WS_INLINE float __uint_as_float(unsigned x) { return __builtin_bit_cast(float, x); }
WS_INLINE double __longlong_as_double(long long x) { return __builtin_bit_cast(double, x); }
WS_INLINE float __saturatef(float x) { return __nvvm_saturate_f(x); }

// ---- math: IEEE single instructions ------------------------------------------------------

WS_INLINE float roundf(float x) { return __builtin_roundf(x); }
WS_INLINE float fdividef(float a, float b) { return a / b; }
WS_INLINE double floor(double x) { return __builtin_floor(x); }
WS_INLINE double ceil(double x) { return __builtin_ceil(x); }
WS_INLINE double trunc(double x) { return __builtin_trunc(x); }
WS_INLINE float __fadd_rn(float a, float b) { return __nvvm_add_rn_f(a, b); }
WS_INLINE float __fmul_rn(float a, float b) { return __nvvm_mul_rn_f(a, b); }
WS_INLINE float __fmaf_rn(float a, float b, float c) { return __nvvm_fma_rn_f(a, b, c); }
WS_INLINE float __frcp_rn(float x) { return __nvvm_rcp_rn_f(x); }
WS_INLINE float __fsqrt_rn(float x) { return __nvvm_sqrt_rn_f(x); }
WS_INLINE float __fdiv_rn(float a, float b) { return __nvvm_div_rn_f(a, b); }

// ---- math: fast transcendentals (.approx instructions, as nvcc -use_fast_math) ---------

WS_INLINE float __fdividef(float a, float b) { return __nvvm_div_approx_f(a, b); }
WS_INLINE float __exp2f(float x) { return __nvvm_ex2_approx_f(x); }
WS_INLINE float __expf(float x) { return __nvvm_ex2_approx_f(x * 1.4426950408889634f); }
WS_INLINE float __exp10f(float x) { return __nvvm_ex2_approx_f(x * 3.3219280948873622f); }
WS_INLINE float __log2f(float x) { return __nvvm_lg2_approx_f(x); }
WS_INLINE float __logf(float x) { return __nvvm_lg2_approx_f(x) * 0.6931471805599453f; }
WS_INLINE float __log10f(float x) { return __nvvm_lg2_approx_f(x) * 0.3010299956639812f; }
WS_INLINE float __sinf(float x) { return __nvvm_sin_approx_f(x); }
WS_INLINE float __cosf(float x) { return __nvvm_cos_approx_f(x); }
WS_INLINE float __tanf(float x) { return __nvvm_div_approx_f(__nvvm_sin_approx_f(x), __nvvm_cos_approx_f(x)); }
WS_INLINE void __sincosf(float x, float *s, float *c) { *s = __sinf(x); *c = __cosf(x); }
WS_INLINE float __powf(float a, float b) { return __nvvm_ex2_approx_f(b * __nvvm_lg2_approx_f(a)); }
WS_INLINE float rsqrtf(float x) { return __nvvm_rsqrt_approx_f(x); }
WS_INLINE float __tanhf(float x) {
    float r;
    asm("tanh.approx.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}
// The standard names are the fast forms: NAMEf(x) is __NAMEf(x).
#define WS_FAST(NAME) WS_INLINE float NAME##f(float x) { return __##NAME##f(x); }
WS_FAST(exp) WS_FAST(exp2) WS_FAST(exp10) WS_FAST(log) WS_FAST(log2) WS_FAST(log10) WS_FAST(sin) WS_FAST(cos) WS_FAST(tan)
WS_INLINE void sincosf(float x, float *s, float *c) { __sincosf(x, s, c); }
WS_INLINE float powf(float a, float b) { return __powf(a, b); }
WS_FAST(tanh)

#endif
