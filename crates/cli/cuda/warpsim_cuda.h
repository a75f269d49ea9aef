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

// Under nvcc (which warpsim prefers when it finds one) the toolkit's own headers
// define all of this, so only warpsim's one extra (__laneid) is defined there
// (at the end): one kernel file builds with either compiler.
#if !defined(__NVCC__)

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
// The body of a function that is the one PTX instruction INSN on three 32-bit
// register operands, returning its 32-bit result as a T (for instructions no C
// builtin produces reliably: shf, bfe, dp4a, dp2a).
#define WS_ASM_R3(T, INSN, A, B, C)                                         \
    {                                                                       \
        T r;                                                                \
        asm(INSN " %0, %1, %2, %3;" : "=r"(r) : "r"(A), "r"(B), "r"(C));    \
        return r;                                                           \
    }
WS_INLINE unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned s) WS_ASM_R3(unsigned, "shf.l.wrap.b32", lo, hi, s)
// bfe.u32 / bfi.b32 (no C builtin produces them reliably).
WS_INLINE unsigned __bfe(unsigned x, unsigned pos, unsigned len) WS_ASM_R3(unsigned, "bfe.u32", x, pos, len)
WS_INLINE int __bfe_s(int x, unsigned pos, unsigned len) WS_ASM_R3(int, "bfe.s32", x, pos, len)
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
WS_INLINE unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned s) WS_ASM_R3(unsigned, "shf.r.wrap.b32", lo, hi, s)
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

// ---- added last, so that the lines above keep their numbers in committed PTX --------
//
// __host__ and __launch_bounds__ (`.maxntid`, `.minnctapersm` in the PTX, as
// with nvcc); the rest of CUDA's math library (erff, lgammaf, atan2f, cbrtf,
// hypotf, ... and the double functions exp, log, sin, pow, erf, ...). The
// stand-ins for cuda_fp16.h and cooperative_groups.h are files of their own
// that warpsim writes beside this one.

#define __host__ __attribute__((host))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))

// ---- math: the rest of CUDA's library, evaluated in double precision ---------------
//
// No libdevice: each function is computed from its definition in double
// precision (argument reduction, then a series or continued fraction with
// enough terms for double), so that the float functions are within about
// one ulp of the exact value; the double ones are good to ~1e-15 relative
// (not correctly rounded). Arguments of sin/cos beyond ~1e9 lose accuracy.

#define WS_MATH static __device__ __attribute__((noinline))

WS_INLINE double __ws_pow2(int k) { return __builtin_bit_cast(double, (unsigned long long)(k + 1023) << 52); }
// x * 2^k for any int k (two steps keep each factor a normal double).
WS_INLINE double __ws_ldexp(double x, int k) {
    if (k > 2046) k = 2046;
    if (k < -2100) k = -2100;
    int a = k / 2, b = k - a;
    if (a < -1022) { x *= __ws_pow2(-1022); a += 1022; }
    if (b < -1022) { x *= __ws_pow2(-1022); b += 1022; }
    return x * __ws_pow2(a) * __ws_pow2(b);
}
WS_INLINE int __ws_isnan(double x) { return x != x; }
WS_INLINE int __ws_isinf(double x) { return __builtin_fabs(x) == __builtin_inf(); }

// ln 2 and pi/2 in parts (Cody-Waite): each hi part has trailing zero bits.
#define WS_LN2_HI 6.93147180369123816490e-01
#define WS_LN2_LO 1.90821492927058770002e-10
#define WS_PI 3.14159265358979323846
#define WS_SQRT_PI 1.77245385090551602730

WS_MATH double __ws_exp(double x) {
    if (__ws_isnan(x)) return x;
    if (x > 709.79) return __builtin_inf();
    if (x < -745.2) return 0.0;
    double k = __builtin_rint(x * 1.4426950408889634);
    double r = (x - k * WS_LN2_HI) - k * WS_LN2_LO;
    // e^r for |r| <= 0.35: Taylor series to r^14.
    double p = 1.0 / 87178291200.0;
    const double inv[14] = {1.0 / 6227020800.0, 1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0, 1.0 / 362880.0,
                            1.0 / 40320.0, 1.0 / 5040.0, 1.0 / 720.0, 1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 0.5, 1.0, 1.0};
    for (int i = 0; i < 14; i++) p = p * r + inv[i];
    return __ws_ldexp(p, (int)k);
}

// e^x - 1 without cancellation near 0.
WS_MATH double __ws_expm1(double x) {
    if (__builtin_fabs(x) >= 0.5) return __ws_exp(x) - 1.0;
    double term = x, sum = x;
    for (int n = 2; n <= 20; n++) { term *= x / n; sum += term; }
    return sum;
}

// log(1 + s') as 2 atanh(s) for |s| <= 0.1716, s = (m - 1) / (m + 1).
WS_INLINE double __ws_log_kernel(double s) {
    double s2 = s * s, p = 0.0;
    for (int k = 25; k >= 3; k -= 2) p = p * s2 + 1.0 / k;
    return 2.0 * (s + s * s2 * p);
}

WS_MATH double __ws_log(double x) {
    if (__ws_isnan(x) || x < 0.0) return __builtin_nan("");
    if (x == 0.0) return -__builtin_inf();
    if (__ws_isinf(x)) return x;
    int e = 0;
    if (x < 2.2250738585072014e-308) { x *= 18014398509481984.0; e = -54; } // 2^54
    unsigned long long b = __builtin_bit_cast(unsigned long long, x);
    e += (int)((b >> 52) & 0x7ff) - 1023;
    double m = __builtin_bit_cast(double, (b & 0x000fffffffffffffull) | 0x3ff0000000000000ull);
    if (m > 1.4142135623730951) { m *= 0.5; e += 1; }
    return e * WS_LN2_HI + (__ws_log_kernel((m - 1.0) / (m + 1.0)) + e * WS_LN2_LO);
}

WS_MATH double __ws_log1p(double x) {
    if (__builtin_fabs(x) >= 0.5 || __ws_isnan(x)) return __ws_log(1.0 + x);
    return __ws_log_kernel(x / (2.0 + x));
}

// sin and cos of |r| <= pi/4 (Taylor series).
WS_INLINE double __ws_sin_kernel(double r) {
    double r2 = r * r, p = 0.0;
    for (int n = 19; n >= 3; n -= 2) p = (p + 1.0) * (-r2 / (n * (n - 1)));
    return r + r * p;
}
WS_INLINE double __ws_cos_kernel(double r) {
    double r2 = r * r, p = 0.0;
    for (int n = 20; n >= 2; n -= 2) p = (p + 1.0) * (-r2 / (n * (n - 1)));
    return 1.0 + p;
}
// x = k pi/2 + r: the quadrant k mod 4 and r (three-part pi/2).
WS_INLINE double __ws_reduce(double x, int *q) {
    double k = __builtin_rint(x * 0.63661977236758134308);
    *q = (int)((long long)k & 3);
    return ((x - k * 1.57079632673412561417e+00) - k * 6.07710050630396597660e-11) - k * 2.02226624871116645580e-21;
}
WS_MATH double __ws_sin(double x) {
    if (__ws_isnan(x) || __ws_isinf(x)) return __builtin_nan("");
    int q;
    double r = __ws_reduce(x, &q);
    double v = (q & 1) ? __ws_cos_kernel(r) : __ws_sin_kernel(r);
    return (q & 2) ? -v : v;
}
WS_MATH double __ws_cos(double x) {
    if (__ws_isnan(x) || __ws_isinf(x)) return __builtin_nan("");
    int q;
    double r = __ws_reduce(x, &q);
    double v = (q & 1) ? __ws_sin_kernel(r) : __ws_cos_kernel(r);
    return ((q + 1) & 2) ? -v : v;
}
// sin(pi x), cos(pi x) with the reduction exact (x - n/2 is exact).
WS_MATH double __ws_sinpi(double x) {
    if (__ws_isnan(x) || __ws_isinf(x)) return __builtin_nan("");
    double n = __builtin_rint(2.0 * x);
    double r = (x - 0.5 * n) * WS_PI;
    int q = (int)((long long)n & 3);
    double v = (q & 1) ? __ws_cos_kernel(r) : __ws_sin_kernel(r);
    return (q & 2) ? -v : v;
}
WS_MATH double __ws_cospi(double x) { return __ws_sinpi(x + 0.5 - 2.0 * __builtin_rint((x + 0.5) * 0.5) + 0.0); }

// atan of |x| <= 1: two halvings (atan x = 2 atan(x / (1 + sqrt(1 + x^2)))), then the series.
WS_MATH double __ws_atan(double x) {
    if (__ws_isnan(x)) return x;
    double a = __builtin_fabs(x), base = 0.0, sign = x < 0 ? -1.0 : 1.0;
    if (a > 1.0) { base = WS_PI / 2; a = 1.0 / a; sign = -sign; }
    for (int i = 0; i < 2; i++) a = a / (1.0 + __builtin_sqrt(1.0 + a * a));
    double a2 = a * a, p = 0.0;
    for (int k = 31; k >= 3; k -= 2) p = p * (-a2) + 1.0 / k;
    double t = 4.0 * (a - a * a2 * p);
    // x > 1: atan x = pi/2 - atan(1/x).
    return base != 0.0 ? (x < 0 ? -(base - t) : base - t) : sign * t;
}
WS_MATH double __ws_atan2(double y, double x) {
    if (__ws_isnan(x) || __ws_isnan(y)) return x + y;
    if (x == 0.0 && y == 0.0) return __builtin_signbit(x) ? __builtin_copysign(WS_PI, y) : y;
    if (__ws_isinf(x) && __ws_isinf(y)) return __builtin_copysign(x > 0 ? WS_PI / 4 : 3 * WS_PI / 4, y);
    if (x == 0.0 || __ws_isinf(y)) return __builtin_copysign(WS_PI / 2, y);
    if (__ws_isinf(x)) return x > 0 ? __builtin_copysign(0.0, y) : __builtin_copysign(WS_PI, y);
    double t = __ws_atan(__builtin_fabs(y / x));
    if (__builtin_fabs(y) / __builtin_fabs(x) < 1e-300) t = __builtin_fabs(y) / __builtin_fabs(x);
    if (x < 0) t = WS_PI - t;
    return __builtin_copysign(t, y);
}
WS_MATH double __ws_asin(double x) {
    if (!(__builtin_fabs(x) <= 1.0)) return __builtin_nan("");
    return __ws_atan2(x, __builtin_sqrt((1.0 - x) * (1.0 + x)));
}
WS_MATH double __ws_acos(double x) {
    if (!(__builtin_fabs(x) <= 1.0)) return __builtin_nan("");
    return __ws_atan2(__builtin_sqrt((1.0 - x) * (1.0 + x)), x);
}
WS_MATH double __ws_sinh(double x) {
    double a = __builtin_fabs(x);
    if (a < 0.5) {
        double x2 = x * x, p = 0.0;
        for (int n = 21; n >= 3; n -= 2) p = (p + 1.0) * (x2 / (n * (n - 1)));
        return x + x * p;
    }
    if (a > 710.0) return __builtin_copysign(__builtin_inf(), x);
    double e = __ws_exp(a * 0.5);
    double v = 0.5 * e * e - 0.5 / (e * e);
    return __builtin_copysign(a > 700.0 ? 0.5 * e * e : v, x);
}
WS_MATH double __ws_cosh(double x) {
    double a = __builtin_fabs(x);
    if (a > 710.0) return __builtin_inf();
    double e = __ws_exp(a * 0.5);
    return 0.5 * e * e + 0.5 / (e * e);
}
WS_MATH double __ws_tanh(double x) {
    double a = __builtin_fabs(x);
    if (a > 20.0) return __builtin_copysign(1.0, x);
    double m = __ws_expm1(2.0 * a);
    return __builtin_copysign(m / (m + 2.0), x);
}
WS_MATH double __ws_asinh(double x) {
    double a = __builtin_fabs(x);
    if (a > 1e150) return __builtin_copysign(__ws_log(a) + (WS_LN2_HI + WS_LN2_LO), x);
    return __builtin_copysign(__ws_log1p(a + a * a / (1.0 + __builtin_sqrt(1.0 + a * a))), x);
}
WS_MATH double __ws_acosh(double x) {
    if (!(x >= 1.0)) return __builtin_nan("");
    if (x > 1e150) return __ws_log(x) + (WS_LN2_HI + WS_LN2_LO);
    double t = x - 1.0;
    return __ws_log1p(t + __builtin_sqrt(2.0 * t + t * t));
}
WS_MATH double __ws_atanh(double x) {
    double a = __builtin_fabs(x);
    if (!(a <= 1.0)) return __builtin_nan("");
    return __builtin_copysign(0.5 * __ws_log1p(2.0 * a / (1.0 - a)), x);
}
WS_MATH double __ws_cbrt(double x) {
    if (x == 0.0 || __ws_isnan(x) || __ws_isinf(x)) return x;
    double a = __builtin_fabs(x);
    double y = __ws_exp(__ws_log(a) / 3.0);
    for (int i = 0; i < 2; i++) y = y - (y * y * y - a) / (3.0 * y * y);
    return __builtin_copysign(y, x);
}
WS_MATH double __ws_hypot(double x, double y) {
    double a = __builtin_fabs(x), b = __builtin_fabs(y);
    if (__ws_isinf(a) || __ws_isinf(b)) return __builtin_inf();
    if (a < b) { double t = a; a = b; b = t; }
    if (a == 0.0 || __ws_isnan(b)) return a + b;
    double r = b / a;
    return a * __builtin_sqrt(1.0 + r * r);
}
WS_MATH double __ws_pow(double x, double y) {
    if (y == 0.0 || x == 1.0) return 1.0;
    if (__ws_isnan(x) || __ws_isnan(y)) return x + y;
    double yi = __builtin_rint(y);
    int odd = yi == y && __builtin_fabs(y) < 9007199254740992.0 && __builtin_fmod(yi, 2.0) != 0.0;
    if (x == 0.0) return y < 0 ? (odd ? __builtin_copysign(__builtin_inf(), x) : __builtin_inf()) : (odd ? x : 0.0);
    if (x < 0.0 && yi != y) return __builtin_nan("");
    double v = __ws_exp(y * __ws_log(__builtin_fabs(x)));
    return (x < 0.0 && odd) ? -v : v;
}
// erf by its Taylor series (|x| <= 2), erfc by its continued fraction beyond.
WS_MATH double __ws_erfc_cf(double a) {
    double t = a;
    for (int k = 80; k >= 1; k--) t = a + (k * 0.5) / t;
    return __ws_exp(-a * a) / (WS_SQRT_PI * t);
}
WS_MATH double __ws_erf(double x) {
    double a = __builtin_fabs(x);
    if (__ws_isnan(x)) return x;
    if (a > 2.0) return __builtin_copysign(1.0 - __ws_erfc_cf(a), x);
    double x2 = x * x, term = x, sum = x;
    for (int n = 1; n < 60; n++) {
        term *= -x2 / n;
        sum += term / (2 * n + 1);
    }
    return sum * (2.0 / WS_SQRT_PI);
}
WS_MATH double __ws_erfc(double x) {
    if (__ws_isnan(x)) return x;
    if (x > 2.0) return x > 27.3 ? 0.0 : __ws_erfc_cf(x);
    if (x < -6.0) return 2.0;
    return 1.0 - __ws_erf(x);
}
// erf^-1 by Newton's method from a logarithmic first guess.
WS_MATH double __ws_erfinv(double y) {
    if (!(__builtin_fabs(y) <= 1.0)) return __builtin_nan("");
    if (__builtin_fabs(y) == 1.0) return __builtin_copysign(__builtin_inf(), y);
    double w = -__ws_log((1.0 - y) * (1.0 + y));
    double x = __builtin_copysign(__builtin_sqrt(w) * (1.0 - 0.1 / (1.0 + w)), y);
    if (__builtin_fabs(y) < 0.7) x = y * WS_SQRT_PI * 0.5;
    for (int i = 0; i < 60; i++) {
        double d = (__ws_erf(x) - y) / (2.0 / WS_SQRT_PI * __ws_exp(-x * x));
        x -= d;
        if (__builtin_fabs(d) <= 1e-17 * __builtin_fabs(x)) break;
    }
    return x;
}
// log |Gamma(x)|: Stirling's series at x + 10 and the recurrence, the reflection formula below 0.
WS_MATH double __ws_lgamma_pos(double x) {
    double shift = 0.0;
    if (x < 10.0) {
        double p = 1.0;
        while (x < 10.0) { p *= x; x += 1.0; }
        shift = -__ws_log(p);
    }
    double z = 1.0 / x, z2 = z * z;
    double s = z * (1.0 / 12 + z2 * (-1.0 / 360 + z2 * (1.0 / 1260 + z2 * (-1.0 / 1680 + z2 * (1.0 / 1188 + z2 * (-691.0 / 360360 + z2 * (1.0 / 156)))))));
    return (x - 0.5) * __ws_log(x) - x + 0.91893853320467274178 + s + shift;
}
WS_MATH double __ws_lgamma(double x) {
    if (__ws_isnan(x)) return x;
    if (__ws_isinf(x)) return __builtin_inf();
    if (x <= 0.0 && __builtin_rint(x) == x) return __builtin_inf();
    if (x == 1.0 || x == 2.0) return 0.0;
    if (x < 0.5) return __ws_log(WS_PI / __builtin_fabs(__ws_sinpi(x))) - __ws_lgamma_pos(1.0 - x);
    return __ws_lgamma_pos(x);
}
WS_MATH double __ws_tgamma(double x) {
    if (__ws_isnan(x)) return x;
    if (x == 0.0) return __builtin_copysign(__builtin_inf(), x);
    if (x < 0.0 && (__builtin_rint(x) == x || __ws_isinf(x))) return __builtin_nan("");
    if (x > 171.7) return __builtin_inf();
    if (x == __builtin_rint(x) && x <= 23.0) {
        double f = 1.0;
        for (double k = 2.0; k < x; k += 1.0) f *= k;
        return f;
    }
    if (x < 0.5) return WS_PI / (__ws_sinpi(x) * __ws_exp(__ws_lgamma_pos(1.0 - x)));
    return __ws_exp(__ws_lgamma_pos(x));
}
// The exact remainder of x / y (repeated exact subtraction of y 2^k).
WS_MATH double __ws_fmod(double x, double y) {
    if (__ws_isnan(x) || __ws_isnan(y) || __ws_isinf(x) || y == 0.0) return __builtin_nan("");
    double a = __builtin_fabs(x), b = __builtin_fabs(y);
    if (__ws_isinf(y) || a < b) return x;
    while (a >= b) {
        int ea = (int)((__builtin_bit_cast(unsigned long long, a) >> 52) & 0x7ff);
        int eb = (int)((__builtin_bit_cast(unsigned long long, b) >> 52) & 0x7ff);
        double t = eb == 0 || ea == 0 ? b : __ws_ldexp(b, ea - eb);
        if (t > a) t *= 0.5;
        if (t < b) t = b;
        a -= t;
    }
    return __builtin_copysign(a, x);
}

// Single precision: the double results, rounded.
#define WS_F1(name, impl) WS_INLINE float name(float x) { return (float)impl((double)x); }
#define WS_D1(name, impl) WS_INLINE double name(double x) { return impl(x); }
WS_F1(erff, __ws_erf)
WS_F1(erfcf, __ws_erfc)
WS_F1(erfinvf, __ws_erfinv)
WS_F1(lgammaf, __ws_lgamma)
WS_F1(tgammaf, __ws_tgamma)
WS_F1(expm1f, __ws_expm1)
WS_F1(log1pf, __ws_log1p)
WS_F1(sinhf, __ws_sinh)
WS_F1(coshf, __ws_cosh)
WS_F1(asinhf, __ws_asinh)
WS_F1(acoshf, __ws_acosh)
WS_F1(atanhf, __ws_atanh)
WS_F1(atanf, __ws_atan)
WS_F1(asinf, __ws_asin)
WS_F1(acosf, __ws_acos)
WS_F1(cbrtf, __ws_cbrt)
WS_F1(sinpif, __ws_sinpi)
WS_F1(cospif, __ws_cospi)
WS_INLINE float rcbrtf(float x) { return (float)(1.0 / __ws_cbrt((double)x)); }
WS_INLINE float atan2f(float y, float x) { return (float)__ws_atan2((double)y, (double)x); }
WS_INLINE float hypotf(float x, float y) { return (float)__builtin_sqrt((double)x * x + (double)y * y); }
WS_INLINE float norm3df(float a, float b, float c) { return (float)__builtin_sqrt((double)a * a + (double)b * b + (double)c * c); }
WS_INLINE float rhypotf(float x, float y) { return (float)(1.0 / __builtin_sqrt((double)x * x + (double)y * y)); }
WS_INLINE float fmodf(float x, float y) { return (float)__ws_fmod((double)x, (double)y); }
WS_INLINE float normcdff(float x) { return (float)(0.5 * __ws_erfc(-(double)x * 0.70710678118654752440)); }
WS_INLINE float normcdfinvf(float p) { return (float)(-1.41421356237309504880 * __ws_erfinv(1.0 - 2.0 * (double)p)); }
WS_INLINE float erfcinvf(float y) { return (float)__ws_erfinv(1.0 - (double)y); }
WS_INLINE float ldexpf(float x, int k) { return (float)__ws_ldexp((double)x, k); }
WS_INLINE float scalbnf(float x, int k) { return ldexpf(x, k); }
WS_INLINE float fdimf(float a, float b) { return a > b ? a - b : (a != a || b != b ? a + b : 0.0f); }
WS_INLINE float nearbyintf(float x) { return __builtin_rintf(x); }
WS_INLINE long lrintf(float x) { return (long)__builtin_rintf(x); }
WS_INLINE long lroundf(float x) { return (long)__builtin_roundf(x); }
WS_INLINE float modff(float x, float *ip) { float t = __builtin_truncf(x); *ip = t; return __builtin_copysignf(x == t ? 0.0f : x - t, x); }
WS_INLINE float frexpf(float x, int *e) {
    if (x == 0.0f || x != x || __builtin_fabsf(x) == __builtin_inff()) { *e = 0; return x; }
    double d = (double)x;
    unsigned long long b = __builtin_bit_cast(unsigned long long, d);
    *e = (int)((b >> 52) & 0x7ff) - 1022;
    return (float)__builtin_bit_cast(double, (b & 0x800fffffffffffffull) | 0x3fe0000000000000ull);
}
WS_INLINE int ilogbf(float x) { int e; frexpf(x, &e); return e - 1; }
WS_INLINE float logbf(float x) { return (float)ilogbf(x); }
// Double precision.
WS_D1(exp, __ws_exp)
WS_D1(expm1, __ws_expm1)
WS_D1(log, __ws_log)
WS_D1(log1p, __ws_log1p)
WS_D1(sin, __ws_sin)
WS_D1(cos, __ws_cos)
WS_D1(sinpi, __ws_sinpi)
WS_D1(cospi, __ws_cospi)
WS_D1(atan, __ws_atan)
WS_D1(asin, __ws_asin)
WS_D1(acos, __ws_acos)
WS_D1(sinh, __ws_sinh)
WS_D1(cosh, __ws_cosh)
WS_D1(tanh, __ws_tanh)
WS_D1(asinh, __ws_asinh)
WS_D1(acosh, __ws_acosh)
WS_D1(atanh, __ws_atanh)
WS_D1(cbrt, __ws_cbrt)
WS_D1(erf, __ws_erf)
WS_D1(erfc, __ws_erfc)
WS_D1(erfinv, __ws_erfinv)
WS_D1(lgamma, __ws_lgamma)
WS_D1(tgamma, __ws_tgamma)
WS_INLINE double exp2(double x) { return __ws_exp(x * 0.69314718055994530942); }
WS_INLINE double exp10(double x) { return __ws_exp(x * 2.30258509299404568402); }
WS_INLINE double log2(double x) { return __ws_log(x) * 1.44269504088896340736; }
WS_INLINE double log10(double x) { return __ws_log(x) * 0.43429448190325182765; }
WS_INLINE double tan(double x) { return __ws_sin(x) / __ws_cos(x); }
WS_INLINE void sincos(double x, double *s, double *c) { *s = __ws_sin(x); *c = __ws_cos(x); }
WS_INLINE double atan2(double y, double x) { return __ws_atan2(y, x); }
WS_INLINE double hypot(double x, double y) { return __ws_hypot(x, y); }
WS_INLINE double pow(double x, double y) { return __ws_pow(x, y); }
WS_INLINE double fmod(double x, double y) { return __ws_fmod(x, y); }
WS_INLINE double ldexp(double x, int k) { return __ws_ldexp(x, k); }
WS_INLINE double normcdf(double x) { return 0.5 * __ws_erfc(-x * 0.70710678118654752440); }
WS_INLINE double round(double x) { return __builtin_round(x); }
WS_INLINE double rint(double x) { return __builtin_rint(x); }
#undef WS_F1
#undef WS_D1

// ---- added for issue 16: dot products, __fns, rounding variants, vector types, cp.async --
//
// __dp4a, __dp2a_lo/_hi (dp4a / dp2a PTX); __fns (computed here: warpsim has no
// fns instruction); every rounding (_rn, _rz, _rd, _ru) of CUDA's float/double/
// integer conversions and of __fadd, __fsub, __fmul, __fdiv, __fmaf, __frcp,
// __fsqrt and their double forms (__dadd, ...); __float2half_rz/_rd/_ru; the
// vector types CUDA has (char1..4 to double1..4) with their alignments and
// make_* functions; __pipeline_memcpy_async, __pipeline_commit and
// __pipeline_wait_prior (cp.async). cuda_bf16.h is a stand-in of its own.

WS_INLINE int __dp4a(int a, int b, int c) WS_ASM_R3(int, "dp4a.s32.s32", a, b, c)
WS_INLINE unsigned __dp4a(unsigned a, unsigned b, unsigned c) WS_ASM_R3(unsigned, "dp4a.u32.u32", a, b, c)
// a: two 16-bit halves; b: four bytes, of which _lo uses bytes 0-1 and _hi bytes 2-3.
#define WS_DP2A(HALF)                                                                                        \
    WS_INLINE int __dp2a_##HALF(int a, int b, int c) WS_ASM_R3(int, "dp2a." #HALF ".s32.s32", a, b, c)       \
    WS_INLINE unsigned __dp2a_##HALF(unsigned a, unsigned b, unsigned c)                                     \
        WS_ASM_R3(unsigned, "dp2a." #HALF ".u32.u32", a, b, c)
WS_DP2A(lo)
WS_DP2A(hi)
#undef WS_DP2A
#undef WS_ASM_R3

// The bit position of the offset-th set bit of mask counting from base (up for
// offset > 0, down for offset < 0; offset 0: base itself if set), else
// 0xffffffff: PTX's fns.b32 pseudocode.
WS_INLINE unsigned __fns(unsigned mask, unsigned base, int offset) {
    if (base > 31) return 0xffffffffu;
    if (offset == 0) return (mask >> base & 1) ? base : 0xffffffffu;
    int count = (offset > 0 ? offset : -offset) - 1, inc = offset > 0 ? 1 : -1;
    for (int pos = (int)base; pos >= 0 && pos < 32; pos += inc) {
        if (mask >> pos & 1) {
            if (count == 0) return (unsigned)pos;
            count--;
        }
    }
    return 0xffffffffu;
}

// Conversions in every rounding: NAME_rn/_rz/_rd/_ru from __nvvm_BUILTIN_rn/_rz/_rm/_rp.
#define WS_ROUND4(NAME, BUILTIN, R, A)                                          \
    WS_INLINE R NAME##_rz(A x) { return __nvvm_##BUILTIN##_rz(x); }             \
    WS_INLINE R NAME##_rd(A x) { return __nvvm_##BUILTIN##_rm(x); }             \
    WS_INLINE R NAME##_ru(A x) { return __nvvm_##BUILTIN##_rp(x); }
#define WS_ROUND_ALL(NAME, BUILTIN, R, A)                                       \
    WS_INLINE R NAME##_rn(A x) { return __nvvm_##BUILTIN##_rn(x); }             \
    WS_ROUND4(NAME, BUILTIN, R, A)
WS_ROUND4(__double2float, d2f, float, double)
WS_ROUND4(__double2int, d2i, int, double)
WS_ROUND_ALL(__double2uint, d2ui, unsigned, double)
WS_ROUND_ALL(__double2ll, d2ll, long long, double)
WS_ROUND_ALL(__double2ull, d2ull, unsigned long long, double)
WS_INLINE unsigned __float2uint_rd(float x) { return __nvvm_f2ui_rm(x); }
WS_INLINE unsigned __float2uint_ru(float x) { return __nvvm_f2ui_rp(x); }
WS_ROUND_ALL(__float2ll, f2ll, long long, float)
WS_ROUND_ALL(__float2ull, f2ull, unsigned long long, float)
WS_ROUND4(__int2float, i2f, float, int)
WS_ROUND4(__uint2float, ui2f, float, unsigned)
WS_ROUND_ALL(__ll2float, ll2f, float, long long)
WS_ROUND_ALL(__ull2float, ull2f, float, unsigned long long)
WS_ROUND_ALL(__ll2double, ll2d, double, long long)
WS_ROUND_ALL(__ull2double, ull2d, double, unsigned long long)
#undef WS_ROUND_ALL
#undef WS_ROUND4
WS_INLINE double __int2double_rn(int x) { return (double)x; }
WS_INLINE double __uint2double_rn(unsigned x) { return (double)x; }
WS_INLINE float __ll2float(long long x) { return (float)x; }

// Arithmetic in every rounding (the _rn forms of float add, mul, fma, rcp, sqrt, div are above).
#define WS_ARITH(R, SUF, T, TS)                                                                            \
    WS_INLINE T __##TS##add_##R(T a, T b) { return __nvvm_add_##SUF(a, b); }                              \
    WS_INLINE T __##TS##sub_##R(T a, T b) { return __nvvm_add_##SUF(a, -b); }                             \
    WS_INLINE T __##TS##mul_##R(T a, T b) { return __nvvm_mul_##SUF(a, b); }                              \
    WS_INLINE T __##TS##div_##R(T a, T b) { return __nvvm_div_##SUF(a, b); }                              \
    WS_INLINE T __##TS##rcp_##R(T a) { return __nvvm_rcp_##SUF(a); }                                      \
    WS_INLINE T __##TS##sqrt_##R(T a) { return __nvvm_sqrt_##SUF(a); }
WS_ARITH(rz, rz_f, float, f)
WS_ARITH(rd, rm_f, float, f)
WS_ARITH(ru, rp_f, float, f)
WS_ARITH(rn, rn_d, double, d)
WS_ARITH(rz, rz_d, double, d)
WS_ARITH(rd, rm_d, double, d)
WS_ARITH(ru, rp_d, double, d)
#undef WS_ARITH
WS_INLINE float __fsub_rn(float a, float b) { return __nvvm_add_rn_f(a, -b); }
WS_INLINE float __fmaf_rz(float a, float b, float c) { return __nvvm_fma_rz_f(a, b, c); }
WS_INLINE float __fmaf_rd(float a, float b, float c) { return __nvvm_fma_rm_f(a, b, c); }
WS_INLINE float __fmaf_ru(float a, float b, float c) { return __nvvm_fma_rp_f(a, b, c); }
WS_INLINE double __fma_rn(double a, double b, double c) { return __nvvm_fma_rn_d(a, b, c); }
WS_INLINE double __fma_rz(double a, double b, double c) { return __nvvm_fma_rz_d(a, b, c); }
WS_INLINE double __fma_rd(double a, double b, double c) { return __nvvm_fma_rm_d(a, b, c); }
WS_INLINE double __fma_ru(double a, double b, double c) { return __nvvm_fma_rp_d(a, b, c); }

// Half precision in the other roundings, as raw binary16 bits (cuda_fp16.h's take and give __half).
#define WS_F2H(SUF, RND)                                                        \
    WS_INLINE unsigned short __float2half_##SUF(float x) {                      \
        unsigned short h;                                                       \
        asm("cvt." #RND ".f16.f32 %0, %1;" : "=h"(h) : "f"(x));                 \
        return h;                                                               \
    }
WS_F2H(rz, rz)
WS_F2H(rd, rm)
WS_F2H(ru, rp)
#undef WS_F2H

// The vector types CUDA defines that are not above, aligned as CUDA's are, and make_* for all.
#define WS_VEC1(T, E, A) struct __attribute__((aligned(A))) T##1 { E x; };
#define WS_VEC2(T, E, A) struct __attribute__((aligned(A))) T##2 { E x, y; };
#define WS_VEC3(T, E, A) struct __attribute__((aligned(A))) T##3 { E x, y, z; };
#define WS_VEC4(T, E, A) struct __attribute__((aligned(A))) T##4 { E x, y, z, w; };
#define WS_MAKE(T, E)                                                                                    \
    WS_INLINE T##1 make_##T##1(E x) { T##1 v; v.x = x; return v; }                                     \
    WS_INLINE T##2 make_##T##2(E x, E y) { T##2 v; v.x = x; v.y = y; return v; }                       \
    WS_INLINE T##3 make_##T##3(E x, E y, E z) { T##3 v; v.x = x; v.y = y; v.z = z; return v; }         \
    WS_INLINE T##4 make_##T##4(E x, E y, E z, E w) { T##4 v; v.x = x; v.y = y; v.z = z; v.w = w; return v; }
#define WS_VECS(T, E, A1, A2, A4) WS_VEC1(T, E, A1) WS_VEC2(T, E, A2) WS_VEC3(T, E, A1) WS_VEC4(T, E, A4) WS_MAKE(T, E)
WS_VECS(char, signed char, 1, 2, 4)
WS_VECS(uchar, unsigned char, 1, 2, 4)
WS_VECS(short, short, 2, 4, 8)
WS_VECS(ushort, unsigned short, 2, 4, 8)
WS_VEC1(int, int, 4) WS_VEC3(int, int, 4) WS_MAKE(int, int)
WS_VECS(uint, unsigned int, 4, 8, 16)
WS_VECS(long, long, 8, 16, 16)
WS_VECS(ulong, unsigned long, 8, 16, 16)
WS_VECS(longlong, long long, 8, 16, 16)
WS_VECS(ulonglong, unsigned long long, 8, 16, 16)
WS_VEC1(float, float, 4) WS_VEC3(float, float, 4) WS_MAKE(float, float)
WS_VEC1(double, double, 8) WS_VEC3(double, double, 8) WS_VEC4(double, double, 16) WS_MAKE(double, double)
#undef WS_VECS
#undef WS_MAKE
#undef WS_VEC1
#undef WS_VEC2
#undef WS_VEC3
#undef WS_VEC4
struct dim3 {
    unsigned int x, y, z;
    __device__ constexpr dim3(unsigned int x = 1, unsigned int y = 1, unsigned int z = 1) : x(x), y(y), z(z) {}
};
// threadIdx, blockIdx, blockDim and gridDim convert to uint3 and dim3 (clang declares the operators).
#define WS_BUILTIN_VEC(V)                                                                                   \
    __device__ inline __cuda_builtin_##V##_t::operator dim3() const { return dim3(x, y, z); }               \
    __device__ inline __cuda_builtin_##V##_t::operator uint3() const { return make_uint3(x, y, z); }
WS_BUILTIN_VEC(threadIdx)
WS_BUILTIN_VEC(blockIdx)
WS_BUILTIN_VEC(blockDim)
WS_BUILTIN_VEC(gridDim)
#undef WS_BUILTIN_VEC

// cp.async through CUDA's pipeline primitives (cuda_pipeline_primitives.h):
// copy 4, 8 or 16 bytes from global to shared memory, the last zfill of them
// zeros; __pipeline_commit ends a batch; __pipeline_wait_prior(n) waits until
// at most n batches are in flight.
WS_INLINE unsigned __ws_shared_addr(const void *p) {
    unsigned a;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
    return a;
}
WS_INLINE void __pipeline_memcpy_async(void *dst_shared, const void *src_global, size_t size_and_align, size_t zfill = 0) {
    unsigned d = __ws_shared_addr(dst_shared), n = (unsigned)(size_and_align - zfill);
    switch (size_and_align) {
    case 4: asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(d), "l"(src_global), "r"(n) : "memory"); break;
    case 8: asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;" ::"r"(d), "l"(src_global), "r"(n) : "memory"); break;
    default: asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(d), "l"(src_global), "r"(n) : "memory"); break;
    }
}
WS_INLINE void __pipeline_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
#define __pipeline_wait_prior(n) asm volatile("cp.async.wait_group %0;" ::"n"(n) : "memory")

#else // __NVCC__

static __device__ __forceinline__ unsigned __laneid() {
    unsigned l;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(l));
    return l;
}

#endif // __NVCC__

#endif
