// Ground truth for warpsim's tensor-core, warpgroup and asynchronous-copy
// instructions, recorded on an NVIDIA H200.
//
// Build and run (on the GPU machine):
//   nvcc -O2 -std=c++17 -arch=sm_90a -o mma_gpu mma_gpu.cu -lcuda && ./mma_gpu OUTDIR
//   nvcc -O2 -std=c++17 -arch=sm_90a -ptx -o mma_gpu.sm_90a.ptx mma_gpu.cu
//   nvcc -O2 -std=c++17 -arch=sm_80  -ptx -o mma_gpu.sm_80.ptx  mma_gpu.cu
//
// Every input is a deterministic function of its index (`mix` below, which
// crates/cli/tests/mma.rs reproduces), every output is written raw
// (little-endian) to OUTDIR/<name>.bin, and the same PTX runs in warpsim in
// crates/cli/tests/mma.rs, which compares its outputs with these files.
//
// The host also checks each result against a float64 reference and prints
// the largest error, so a run on the GPU validates the kernels themselves
// (fragment layouts, shared-memory descriptor layouts, swizzles).

#include <cuda.h>
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <mma.h>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

using namespace nvcuda;

#define CK(x)                                                                                  \
    do {                                                                                       \
        cudaError_t e_ = (x);                                                                  \
        if (e_ != cudaSuccess) {                                                               \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

// ---- deterministic inputs -------------------------------------------------------------

__host__ __device__ inline uint32_t mix(uint32_t i, uint32_t seed) {
    uint32_t x = (i * 0x9E3779B1u) ^ (seed * 0x85EBCA77u + 0x165667B1u);
    x ^= x >> 16;
    x *= 0x7FEB352Du;
    x ^= x >> 15;
    x *= 0x846CA68Bu;
    x ^= x >> 16;
    return x;
}
// Multiples of 2^-10 in [-1, 1): exact in f16.
static float gen_f16(uint32_t i, uint32_t s) { return (float)((int)(mix(i, s) & 2047) - 1024) / 1024.0f; }
// Multiples of 2^-7 in [-1, 1): exact in bf16.
static float gen_bf16(uint32_t i, uint32_t s) { return (float)((int)(mix(i, s) & 255) - 128) / 128.0f; }
// Multiples of 2^-23 in [-1, 1): full f32 mantissas (tf32 keeps 10 bits of them).
static float gen_f32(uint32_t i, uint32_t s) { return (float)((int)(mix(i, s) & 0xFFFFFF) - 0x800000) / 8388608.0f; }
static double gen_f64(uint32_t i, uint32_t s) {
    return ((double)mix(i, s) - 2147483648.0) / 2147483648.0 + (double)mix(i, s ^ 0x5555u) / 9007199254740992.0;
}
static uint16_t f16_bits(float v) {
    __half h = __float2half_rn(v);
    uint16_t b;
    memcpy(&b, &h, 2);
    return b;
}
static uint16_t bf16_bits(float v) {
    uint32_t b;
    memcpy(&b, &v, 4);
    return (uint16_t)(b >> 16);  // exact for gen_bf16 values
}
static float f16_val(uint16_t b) {
    __half h;
    memcpy(&h, &b, 2);
    return __half2float(h);
}
static float bf16_val(uint16_t b) {
    uint32_t x = (uint32_t)b << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

static std::vector<uint16_t> vec_f16(int n, uint32_t s) {
    std::vector<uint16_t> v(n);
    for (int i = 0; i < n; i++) v[i] = f16_bits(gen_f16(i, s));
    return v;
}
static std::vector<uint16_t> vec_bf16(int n, uint32_t s) {
    std::vector<uint16_t> v(n);
    for (int i = 0; i < n; i++) v[i] = bf16_bits(gen_bf16(i, s));
    return v;
}
static std::vector<float> vec_f32(int n, uint32_t s) {
    std::vector<float> v(n);
    for (int i = 0; i < n; i++) v[i] = gen_f32(i, s);
    return v;
}
static std::vector<double> vec_f64(int n, uint32_t s) {
    std::vector<double> v(n);
    for (int i = 0; i < n; i++) v[i] = gen_f64(i, s);
    return v;
}
static std::vector<uint8_t> vec_u8(int n, uint32_t s) {
    std::vector<uint8_t> v(n);
    for (int i = 0; i < n; i++) v[i] = (uint8_t)(mix(i, s) & 255);
    return v;
}
static std::vector<int32_t> vec_i32(int n, uint32_t s) {
    std::vector<int32_t> v(n);
    for (int i = 0; i < n; i++) v[i] = (int32_t)mix(i, s);
    return v;
}

// ---- device helpers ----------------------------------------------------------------------

__device__ inline uint32_t smem_u32(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }
__device__ inline uint32_t pk16(const uint16_t* p, int i0, int i1) { return (uint32_t)p[i0] | ((uint32_t)p[i1] << 16); }
__device__ inline uint32_t pk8(const uint8_t* p, int i) {
    return (uint32_t)p[i] | ((uint32_t)p[i + 1] << 8) | ((uint32_t)p[i + 2] << 16) | ((uint32_t)p[i + 3] << 24);
}

// ---- mma.sync ----------------------------------------------------------------------------
// A is M x K row-major, B is stored N x K (each column of B contiguous: the
// `.col` layout), C and D are M x N row-major. One warp.

// m16n8k16, f16 or bf16 inputs, f32 accumulators.
template <int BF>
__global__ void k_mma_16816(const uint16_t* A, const uint16_t* B, const float* C, float* D) {
    int lane = threadIdx.x, g = lane >> 2, t = lane & 3;
    uint32_t a[4], b[2];
    float c[4], d[4];
    for (int r = 0; r < 4; r++) {
        int row = g + 8 * (r & 1), col = 2 * t + 8 * (r >> 1);
        a[r] = pk16(A, row * 16 + col, row * 16 + col + 1);
    }
    for (int r = 0; r < 2; r++) {
        int k = 2 * t + 8 * r;
        b[r] = pk16(B, g * 16 + k, g * 16 + k + 1);
    }
    for (int i = 0; i < 4; i++) c[i] = C[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)];
    if (BF)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};\n"
                     : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
    else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};\n"
                     : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
    for (int i = 0; i < 4; i++) D[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = d[i];
}

// m16n8k16 f16 with f16 accumulators (C, D raw f16 bits).
__global__ void k_mma_16816_f16acc(const uint16_t* A, const uint16_t* B, const uint16_t* C, uint16_t* D) {
    int lane = threadIdx.x, g = lane >> 2, t = lane & 3;
    uint32_t a[4], b[2], c[2], d[2];
    for (int r = 0; r < 4; r++) {
        int row = g + 8 * (r & 1), col = 2 * t + 8 * (r >> 1);
        a[r] = pk16(A, row * 16 + col, row * 16 + col + 1);
    }
    for (int r = 0; r < 2; r++) {
        int k = 2 * t + 8 * r;
        b[r] = pk16(B, g * 16 + k, g * 16 + k + 1);
    }
    for (int r = 0; r < 2; r++) c[r] = pk16(C, (g + 8 * r) * 8 + 2 * t, (g + 8 * r) * 8 + 2 * t + 1);
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%8,%9};\n"
                 : "=r"(d[0]), "=r"(d[1])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]));
    for (int r = 0; r < 2; r++) {
        D[(g + 8 * r) * 8 + 2 * t] = (uint16_t)d[r];
        D[(g + 8 * r) * 8 + 2 * t + 1] = (uint16_t)(d[r] >> 16);
    }
}

// m16n8k8 f16 -> f32.
__global__ void k_mma_1688_f16(const uint16_t* A, const uint16_t* B, const float* C, float* D) {
    int lane = threadIdx.x, g = lane >> 2, t = lane & 3;
    uint32_t a[2], b;
    float c[4], d[4];
    for (int r = 0; r < 2; r++) a[r] = pk16(A, (g + 8 * r) * 8 + 2 * t, (g + 8 * r) * 8 + 2 * t + 1);
    b = pk16(B, g * 8 + 2 * t, g * 8 + 2 * t + 1);
    for (int i = 0; i < 4; i++) c[i] = C[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)];
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};\n"
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(b), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
    for (int i = 0; i < 4; i++) D[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = d[i];
}

// m16n8k8 tf32 -> f32 (inputs are full f32 values: shows how the tensor core reads them).
__global__ void k_mma_1688_tf32(const uint32_t* A, const uint32_t* B, const float* C, float* D) {
    int lane = threadIdx.x, g = lane >> 2, t = lane & 3;
    uint32_t a[4], b[2];
    float c[4], d[4];
    for (int r = 0; r < 4; r++) a[r] = A[(g + 8 * (r & 1)) * 8 + t + 4 * (r >> 1)];
    for (int r = 0; r < 2; r++) b[r] = B[g * 8 + t + 4 * r];
    for (int i = 0; i < 4; i++) c[i] = C[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)];
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};\n"
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
    for (int i = 0; i < 4; i++) D[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = d[i];
}

// m16n8k4 tf32 -> f32.
__global__ void k_mma_1684_tf32(const uint32_t* A, const uint32_t* B, const float* C, float* D) {
    int lane = threadIdx.x, g = lane >> 2, t = lane & 3;
    uint32_t a[2], b;
    float c[4], d[4];
    for (int r = 0; r < 2; r++) a[r] = A[(g + 8 * r) * 4 + t];
    b = B[g * 4 + t];
    for (int i = 0; i < 4; i++) c[i] = C[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)];
    asm volatile("mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};\n"
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(b), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
    for (int i = 0; i < 4; i++) D[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = d[i];
}

// m16n8k32 s8 x s8 -> s32, wrapping (SAT = 0) or .satfinite (SAT = 1).
template <int SAT>
__global__ void k_mma_16832_s8(const uint8_t* A, const uint8_t* B, const int32_t* C, int32_t* D) {
    int lane = threadIdx.x, g = lane >> 2, t = lane & 3;
    uint32_t a[4], b[2];
    int32_t c[4], d[4];
    for (int r = 0; r < 4; r++) a[r] = pk8(A, (g + 8 * (r & 1)) * 32 + 4 * t + 16 * (r >> 1));
    for (int r = 0; r < 2; r++) b[r] = pk8(B, g * 32 + 4 * t + 16 * r);
    for (int i = 0; i < 4; i++) c[i] = C[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)];
    if (SAT)
        asm volatile("mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};\n"
                     : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));
    else
        asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};\n"
                     : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));
    for (int i = 0; i < 4; i++) D[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = d[i];
}

// m16n8k16 u8 x s8 -> s32.
__global__ void k_mma_16816_u8s8(const uint8_t* A, const uint8_t* B, const int32_t* C, int32_t* D) {
    int lane = threadIdx.x, g = lane >> 2, t = lane & 3;
    uint32_t a[2], b;
    int32_t c[4], d[4];
    for (int r = 0; r < 2; r++) a[r] = pk8(A, (g + 8 * r) * 16 + 4 * t);
    b = pk8(B, g * 16 + 4 * t);
    for (int i = 0; i < 4; i++) c[i] = C[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)];
    asm volatile("mma.sync.aligned.m16n8k16.row.col.s32.u8.s8.s32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};\n"
                 : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(b), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));
    for (int i = 0; i < 4; i++) D[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = d[i];
}

// m8n8k16 s8 x u8 -> s32.
__global__ void k_mma_8816_s8u8(const uint8_t* A, const uint8_t* B, const int32_t* C, int32_t* D) {
    int lane = threadIdx.x, g = lane >> 2, t = lane & 3;
    uint32_t a = pk8(A, g * 16 + 4 * t), b = pk8(B, g * 16 + 4 * t);
    int32_t c[2], d[2];
    for (int i = 0; i < 2; i++) c[i] = C[g * 8 + 2 * t + i];
    asm volatile("mma.sync.aligned.m8n8k16.row.col.s32.s8.u8.s32 {%0,%1}, {%2}, {%3}, {%4,%5};\n"
                 : "=r"(d[0]), "=r"(d[1])
                 : "r"(a), "r"(b), "r"(c[0]), "r"(c[1]));
    for (int i = 0; i < 2; i++) D[g * 8 + 2 * t + i] = d[i];
}

// m8n8k4 f64.
__global__ void k_mma_884_f64(const double* A, const double* B, const double* C, double* D) {
    int lane = threadIdx.x, g = lane >> 2, t = lane & 3;
    double a = A[g * 4 + t], b = B[g * 4 + t], c[2], d[2];
    for (int i = 0; i < 2; i++) c[i] = C[g * 8 + 2 * t + i];
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%4,%5};\n"
                 : "=d"(d[0]), "=d"(d[1])
                 : "d"(a), "d"(b), "d"(c[0]), "d"(c[1]));
    for (int i = 0; i < 2; i++) D[g * 8 + 2 * t + i] = d[i];
}

// ---- ldmatrix, stmatrix, movmatrix ------------------------------------------------------------

// Row r of matrix m is supplied by lane 8m + q where r = (3q) % 8 (rows permuted).
__global__ void k_ldmatrix(const uint16_t* in, uint32_t* out) {
    __shared__ alignas(16) uint16_t s[256];
    int lane = threadIdx.x;
    for (int i = lane; i < 256; i += 32) s[i] = in[i];
    __syncwarp();
    uint32_t addr = smem_u32(&s[(lane / 8) * 64 + ((lane % 8) * 3 % 8) * 8]);
    uint32_t r[4];
    for (int v = 0; v < 6; v++) {
        r[0] = r[1] = r[2] = r[3] = 0;
        switch (v) {
            case 0: asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];\n" : "=r"(r[0]) : "r"(addr)); break;
            case 1: asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];\n" : "=r"(r[0]), "=r"(r[1]) : "r"(addr)); break;
            case 2:
                asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                             : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                             : "r"(addr));
                break;
            case 3: asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];\n" : "=r"(r[0]) : "r"(addr)); break;
            case 4: asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];\n" : "=r"(r[0]), "=r"(r[1]) : "r"(addr)); break;
            default:
                asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                             : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                             : "r"(addr));
                break;
        }
        for (int j = 0; j < 4; j++) out[(v * 32 + lane) * 4 + j] = r[j];
    }
}

// stmatrix x1/x2/x4 (plain and .trans) into zeroed shared memory, then movmatrix.
__global__ void k_stmatrix(uint16_t* out, uint32_t* mov_out) {
#if __CUDA_ARCH__ >= 900
    __shared__ alignas(16) uint16_t s[256];
    int lane = threadIdx.x;
    uint32_t r[4];
    for (int j = 0; j < 4; j++) r[j] = ((uint32_t)(lane * 8 + j * 2 + 1) << 16) | (uint32_t)(lane * 8 + j * 2);
    uint32_t addr = smem_u32(&s[(lane / 8) * 64 + ((lane % 8) * 5 % 8) * 8]);
    for (int v = 0; v < 6; v++) {
        for (int i = lane; i < 256; i += 32) s[i] = 0xFFFF;
        __syncwarp();
        switch (v) {
            case 0: asm volatile("stmatrix.sync.aligned.m8n8.x1.shared.b16 [%0], {%1};\n" ::"r"(addr), "r"(r[0]) : "memory"); break;
            case 1: asm volatile("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1,%2};\n" ::"r"(addr), "r"(r[0]), "r"(r[1]) : "memory"); break;
            case 2:
                asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1,%2,%3,%4};\n" ::"r"(addr), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3])
                             : "memory");
                break;
            case 3: asm volatile("stmatrix.sync.aligned.m8n8.x1.trans.shared.b16 [%0], {%1};\n" ::"r"(addr), "r"(r[0]) : "memory"); break;
            case 4:
                asm volatile("stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%0], {%1,%2};\n" ::"r"(addr), "r"(r[0]), "r"(r[1]) : "memory");
                break;
            default:
                asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1,%2,%3,%4};\n" ::"r"(addr), "r"(r[0]), "r"(r[1]), "r"(r[2]),
                             "r"(r[3])
                             : "memory");
                break;
        }
        __syncwarp();
        for (int i = lane; i < 256; i += 32) out[v * 256 + i] = s[i];
        __syncwarp();
    }
    uint32_t m;
    asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;\n" : "=r"(m) : "r"(r[1]));
    mov_out[lane] = m;
#endif
}

// ---- wmma: a tiled GEMM per type and shape -----------------------------------------------------
// D = A * B + C for an MM x NN x KK problem, 4 warps sharing the output tiles.
// A is row-major (lda = KK) or column-major (lda = MM); B row-major (ldb = NN)
// or column-major (ldb = KK); C and D row-major (ld = NN) unless CCOL.

// The pointer type wmma::load_matrix_sync takes for a fragment element type.
template <typename T>
struct SrcOf {
    using type = T;
};
template <>
struct SrcOf<wmma::precision::tf32> {
    using type = float;
};

template <typename TIn, typename TFrag, typename TAcc, int M, int N, int K, typename LA, typename LB, bool CCOL, bool TF32CVT>
__global__ void k_wmma_gemm(const TIn* A, const TIn* B, const TAcc* C, TAcc* D, int MM, int NN, int KK) {
    int warp = threadIdx.x / 32;
    bool acol = std::is_same<LA, wmma::col_major>::value, bcol = std::is_same<LB, wmma::col_major>::value;
    int tiles_n = NN / N, tiles = (MM / M) * tiles_n;
    wmma::layout_t cl = CCOL ? wmma::mem_col_major : wmma::mem_row_major;
    int ldc = CCOL ? MM : NN;
    for (int tile = warp; tile < tiles; tile += 4) {
        int tm = tile / tiles_n * M, tn = tile % tiles_n * N;
        wmma::fragment<wmma::accumulator, M, N, K, TAcc> acc;
        const TAcc* cp = CCOL ? C + tn * MM + tm : C + tm * NN + tn;
        wmma::load_matrix_sync(acc, cp, ldc, cl);
        for (int k = 0; k < KK; k += K) {
            wmma::fragment<wmma::matrix_a, M, N, K, TFrag, LA> a;
            wmma::fragment<wmma::matrix_b, M, N, K, TFrag, LB> b;
            using S = const typename SrcOf<TFrag>::type*;
            wmma::load_matrix_sync(a, (S)(acol ? A + k * MM + tm : A + tm * KK + k), acol ? MM : KK);
            wmma::load_matrix_sync(b, (S)(bcol ? B + tn * KK + k : B + k * NN + tn), bcol ? KK : NN);
            if (TF32CVT) {
                for (int i = 0; i < a.num_elements; i++) a.x[i] = wmma::__float_to_tf32(a.x[i]);
                for (int i = 0; i < b.num_elements; i++) b.x[i] = wmma::__float_to_tf32(b.x[i]);
            }
            wmma::mma_sync(acc, a, b, acc);
        }
        TAcc* dp = CCOL ? D + tn * MM + tm : D + tm * NN + tn;
        wmma::store_matrix_sync(dp, acc, ldc, cl);
    }
}

// Fragment probes: load a matrix whose memory cells hold their own index and
// dump the fragment's raw storage, lane by lane: out = [bytes per lane (u32),
// num_elements (u32), lane 0 bytes, lane 1 bytes, ...].
template <typename Use, int M, int N, int K, typename T, typename L, typename Src>
__global__ void k_probe(const Src* src, unsigned ld, unsigned char* out) {
    wmma::fragment<Use, M, N, K, T, L> f;
    wmma::load_matrix_sync(f, src, ld);
    int lane = threadIdx.x;
    memcpy(out + 8 + lane * sizeof(f.x), &f.x[0], sizeof(f.x));
    if (lane == 0) {
        ((uint32_t*)out)[0] = sizeof(f.x);
        ((uint32_t*)out)[1] = f.num_elements;
    }
}
template <int M, int N, int K, typename T, bool COL>
__global__ void k_probe_acc(const T* src, unsigned ld, unsigned char* out) {
    wmma::fragment<wmma::accumulator, M, N, K, T> f;
    wmma::load_matrix_sync(f, src, ld, COL ? wmma::mem_col_major : wmma::mem_row_major);
    int lane = threadIdx.x;
    memcpy(out + 8 + lane * sizeof(f.x), &f.x[0], sizeof(f.x));
    if (lane == 0) {
        ((uint32_t*)out)[0] = sizeof(f.x);
        ((uint32_t*)out)[1] = f.num_elements;
    }
}

// ---- cp.async (Ampere) ---------------------------------------------------------------------------
// 128 threads: a 16-byte .cg copy with src-size tid % 17, an 8-byte .ca copy
// with src-size tid % 9 and a plain 4-byte .ca copy, into shared memory
// prefilled with 0xAB; then the shared bytes are written out.
__global__ void k_cp_async(const uint8_t* g16, const uint8_t* g8, const uint8_t* g4, uint8_t* out) {
    __shared__ alignas(16) uint8_t s[128 * 28];
    int tid = threadIdx.x;
    for (int i = tid; i < 128 * 28; i += 128) s[i] = 0xAB;
    __syncthreads();
    uint32_t s16 = smem_u32(s + tid * 16), s8 = smem_u32(s + 128 * 16 + tid * 8), s4 = smem_u32(s + 128 * 24 + tid * 4);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s16), "l"(g16 + tid * 16), "r"(tid % 17) : "memory");
    asm volatile("cp.async.commit_group;\n" ::: "memory");
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(s8), "l"(g8 + tid * 8), "r"(tid % 9) : "memory");
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(s4), "l"(g4 + tid * 4) : "memory");
    asm volatile("cp.async.commit_group;\n" ::: "memory");
    asm volatile("cp.async.wait_group 1;\n" ::: "memory");
    asm volatile("cp.async.wait_all;\n" ::: "memory");
    __syncthreads();
    for (int i = tid; i < 128 * 28; i += 128) out[i] = s[i];
}

// ---- mbarrier ---------------------------------------------------------------------------------

__device__ inline void mbar_init(uint64_t* b, uint32_t n) { asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(b)), "r"(n) : "memory"); }
__device__ inline void mbar_arrive(uint64_t* b) {
    asm volatile("{\n.reg .b64 state;\nmbarrier.arrive.shared::cta.b64 state, [%0];\n}\n" ::"r"(smem_u32(b)) : "memory");
}
__device__ inline void mbar_arrive_drop(uint64_t* b) {
    asm volatile("{\n.reg .b64 state;\nmbarrier.arrive_drop.shared::cta.b64 state, [%0];\n}\n" ::"r"(smem_u32(b)) : "memory");
}
__device__ inline uint32_t mbar_try(uint64_t* b, uint32_t parity) {
    uint32_t ok;
    asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(ok)
                 : "r"(smem_u32(b)), "r"(parity)
                 : "memory");
    return ok;
}
__device__ inline void mbar_wait(uint64_t* b, uint32_t parity, int* fail) {
    for (int i = 0; i < (1 << 20); i++)
        if (mbar_try(b, parity)) return;
    *fail = 1;
}

// Warp 0 produces 8 rows of 32 floats through a two-stage buffer; warps 1-3
// consume them. Warp 3 leaves after four rows, dropping out of the `empty`
// barriers with arrive_drop. Finally all 128 threads meet at a barrier
// through the token form (arrive, then test_wait on the state).
__global__ void k_mbar_pipeline(const float* in, float* out, int* fail) {
    __shared__ alignas(8) uint64_t full[2], empty[2], done;
    __shared__ float buf[2][32];
    int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    if (tid == 0) {
        mbar_init(&full[0], 32);
        mbar_init(&full[1], 32);
        mbar_init(&empty[0], 96);
        mbar_init(&empty[1], 96);
        mbar_init(&done, 128);
    }
    __syncthreads();
    const int ITERS = 8;
    if (warp == 0) {
        for (int it = 0; it < ITERS; it++) {
            int s = it & 1;
            uint32_t ph = (it >> 1) & 1;
            if (it >= 2) mbar_wait(&empty[s], ph ^ 1, fail);
            buf[s][lane] = in[it * 32 + lane];
            mbar_arrive(&full[s]);
        }
        out[96 + lane] = 0.0f;
    } else {
        float acc = 0.0f;
        for (int it = 0; it < ITERS; it++) {
            int s = it & 1;
            uint32_t ph = (it >> 1) & 1;
            if (warp == 3 && it >= 4) break;
            mbar_wait(&full[s], ph, fail);
            acc += buf[s][(lane + warp) % 32] * (float)(it + 1);
            if (warp == 3 && it >= 2)
                mbar_arrive_drop(&empty[s]);
            else
                mbar_arrive(&empty[s]);
        }
        out[tid - 32] = acc;
    }
    uint32_t ok = 0;
    asm volatile(
        "{\n.reg .b64 tok;\n.reg .pred p;\nmbarrier.arrive.shared::cta.b64 tok, [%1];\n"
        "WAIT_%=:\nmbarrier.test_wait.shared::cta.b64 p, [%1], tok;\n@!p bra WAIT_%=;\nselp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(ok)
        : "r"(smem_u32(&done))
        : "memory");
    if (!ok) *fail = 2;
}

// ---- Hopper: wgmma with shared-memory matrix descriptors ------------------------------------------

// Byte offset of element (mn, k) of a 64 x 64 f16 operand in shared memory,
// before the swizzle, and the start address (relative to the tile) of the
// 64 x 16 slice for k-step s. `kmajor`: K contiguous (the non-transposed form).
// swz: 0 none (interleaved core matrices), 1 128B, 2 64B, 3 32B.
struct SmemLayout {
    int swz;
    bool kmajor;
    __host__ __device__ uint32_t off(int mn, int k) const {
        if (kmajor) {
            switch (swz) {
                case 0: return (mn / 8) * 1024 + (mn % 8) * 16 + (k / 8) * 128 + (k % 8) * 2;
                case 3: return (k / 16) * 2048 + (mn / 8) * 256 + (mn % 8) * 32 + (k % 16) * 2;
                case 2: return (k / 32) * 4096 + (mn / 8) * 512 + (mn % 8) * 64 + (k % 32) * 2;
                default: return (mn / 8) * 1024 + (mn % 8) * 128 + k * 2;
            }
        }
        switch (swz) {
            case 0: return (k / 8) * 1024 + (mn / 8) * 128 + (k % 8) * 16 + (mn % 8) * 2;
            case 3: return (k / 8) * 1024 + (mn / 16) * 256 + (k % 8) * 32 + (mn % 16) * 2;
            case 2: return (k / 8) * 1024 + (mn / 32) * 512 + (k % 8) * 64 + (mn % 32) * 2;
            default: return (k / 8) * 1024 + (k % 8) * 128 + mn * 2;
        }
    }
    __host__ __device__ uint32_t step(int s) const {
        if (kmajor) {
            switch (swz) {
                case 0: return s * 256;
                case 3: return s * 2048;
                case 2: return (s / 2) * 4096 + (s % 2) * 32;
                default: return s * 32;
            }
        }
        return s * 2048;
    }
    // (LBO, SBO) in bytes.
    __host__ __device__ void strides(uint32_t& lbo, uint32_t& sbo) const {
        if (kmajor) {
            lbo = swz == 0 ? 128 : 16;
            sbo = swz == 0 ? 1024 : swz == 3 ? 256 : swz == 2 ? 512 : 1024;
        } else {
            lbo = swz == 0 ? 1024 : swz == 3 ? 256 : swz == 2 ? 512 : 8192;
            sbo = swz == 0 ? 128 : 1024;
        }
    }
    __host__ __device__ uint32_t swizzle(uint32_t addr) const {
        uint32_t mask = swz == 1 ? 7 : swz == 2 ? 3 : swz == 3 ? 1 : 0;
        return addr ^ (((addr >> 7) & mask) << 4);
    }
    __device__ uint64_t desc(uint32_t start) const {
        uint32_t lbo, sbo;
        strides(lbo, sbo);
        uint64_t d = (uint64_t)((start & 0x3FFFF) >> 4) | ((uint64_t)((lbo & 0x3FFFF) >> 4) << 16) | ((uint64_t)((sbo & 0x3FFFF) >> 4) << 32);
        uint64_t mode = swz == 1 ? 1 : swz == 2 ? 2 : swz == 3 ? 3 : 0;
        return d | (mode << 62);
    }
};

#define D32(i) "+f"(d[i])
#define DREGS                                                                                                                              \
    "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}"
#define DOUTS                                                                                                                              \
    D32(0), D32(1), D32(2), D32(3), D32(4), D32(5), D32(6), D32(7), D32(8), D32(9), D32(10), D32(11), D32(12), D32(13), D32(14), D32(15), \
        D32(16), D32(17), D32(18), D32(19), D32(20), D32(21), D32(22), D32(23), D32(24), D32(25), D32(26), D32(27), D32(28), D32(29),     \
        D32(30), D32(31)

// D (64 x 64 f32) = A (64 x 64) * B (64 x 64) + C with four m64n64k16 steps.
// A row-major M x K and B stored N x K (K-major), or B stored K x N when
// TRANSB; A stored K x M when TRANSA. AREG: A from registers. NEGA: imm-scale-a = -1.
template <int SWZ, int TRANSA, int TRANSB, int AREG, int BF, int NEGA>
__global__ void k_wgmma(const uint16_t* A, const uint16_t* B, const float* C, float* D) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    __shared__ alignas(1024) uint16_t sa[64 * 64];
    __shared__ alignas(1024) uint16_t sb[64 * 64];
    int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane >> 2, t = lane & 3;
    SmemLayout la{SWZ, !TRANSA}, lb{SWZ, !TRANSB};
    uint32_t abase = smem_u32(sa), bbase = smem_u32(sb);
    for (int i = tid; i < 64 * 64; i += 128) {
        // A: element (m, k) = A[m][k]; B: element (n, k) = B^T[n][k].
        int m = i / 64, k = i % 64;
        uint32_t pa = la.swizzle(abase + la.off(m, k)) - abase;
        sa[pa / 2] = TRANSA ? A[k * 64 + m] : A[m * 64 + k];
        int n = i / 64;
        uint32_t pb = lb.swizzle(bbase + lb.off(n, k)) - bbase;
        sb[pb / 2] = TRANSB ? B[k * 64 + n] : B[n * 64 + k];
    }
    __syncthreads();
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads();
    float d[32];
    for (int i = 0; i < 32; i++) d[i] = C[(16 * warp + g + 8 * ((i >> 1) & 1)) * 64 + 8 * (i / 4) + 2 * t + (i & 1)];
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
    for (int s = 0; s < 4; s++) {
        uint64_t db = lb.desc(bbase + lb.step(s));
        if (AREG) {
            uint32_t a[4];
            for (int r = 0; r < 4; r++) {
                int row = 16 * warp + g + 8 * (r & 1), col = 16 * s + 2 * t + 8 * (r >> 1);
                const uint16_t* src = TRANSA ? A : A;
                a[r] = (uint32_t)src[row * 64 + col] | ((uint32_t)src[row * 64 + col + 1] << 16);
            }
            if (BF)
                asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\nwgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 " DREGS
                             ", {%32,%33,%34,%35}, %36, p, 1, 1, %38;\n}\n"
                             : DOUTS
                             : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1), "n"(TRANSB));
            else
                asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\nwgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 " DREGS
                             ", {%32,%33,%34,%35}, %36, p, 1, 1, %38;\n}\n"
                             : DOUTS
                             : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1), "n"(TRANSB));
        } else {
            uint64_t da = la.desc(abase + la.step(s));
            if (BF)
                asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\nwgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 " DREGS
                             ", %32, %33, p, %35, 1, %36, %37;\n}\n"
                             : DOUTS
                             : "l"(da), "l"(db), "r"(1), "n"(NEGA ? -1 : 1), "n"(TRANSA), "n"(TRANSB));
            else
                asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\nwgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 " DREGS
                             ", %32, %33, p, %35, 1, %36, %37;\n}\n"
                             : DOUTS
                             : "l"(da), "l"(db), "r"(1), "n"(NEGA ? -1 : 1), "n"(TRANSA), "n"(TRANSB));
        }
    }
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    for (int i = 0; i < 32; i++) D[(16 * warp + g + 8 * ((i >> 1) & 1)) * 64 + 8 * (i / 4) + 2 * t + (i & 1)] = d[i];
#endif
}

// TMA (cp.async.bulk.tensor) loads of 64 x 64 f16 tiles with the 128B swizzle,
// completing on an mbarrier, feeding wgmma. A is MT x 64 and B is NT x 64
// (K contiguous); D = A * B^T is MT x NT; tiles past the edge are filled with
// zeros by the copy engine. Grid: (ceil(NT/64), ceil(MT/64)).
__global__ void k_tma_wgmma(const __grid_constant__ CUtensorMap ta, const __grid_constant__ CUtensorMap tb, float* D, int MT, int NT, int* fail) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    __shared__ alignas(1024) uint16_t sa[64 * 64];
    __shared__ alignas(1024) uint16_t sb[64 * 64];
    __shared__ alignas(8) uint64_t bar;
    int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane >> 2, t = lane & 3;
    int m0 = blockIdx.y * 64, n0 = blockIdx.x * 64;
    if (tid == 0) {
        mbar_init(&bar, 1);
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
    if (warp == 0) {
        uint32_t leader;
        asm volatile("{\n.reg .pred P;\nelect.sync _|P, 0xffffffff;\nselp.u32 %0, 1, 0, P;\n}\n" : "=r"(leader));
        if (leader) {
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(&bar)), "r"(2 * 64 * 64 * 2) : "memory");
            asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(
                             smem_u32(sa)),
                         "l"(&ta), "r"(0), "r"(m0), "r"(smem_u32(&bar))
                         : "memory");
            asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(
                             smem_u32(sb)),
                         "l"(&tb), "r"(0), "r"(n0), "r"(smem_u32(&bar))
                         : "memory");
        }
    }
    mbar_wait(&bar, 0, fail);
    SmemLayout l{1, true};
    float d[32];
    for (int i = 0; i < 32; i++) d[i] = 0.0f;
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
    for (int s = 0; s < 4; s++) {
        uint64_t da = l.desc(smem_u32(sa) + l.step(s)), db = l.desc(smem_u32(sb) + l.step(s));
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\nwgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 " DREGS
                     ", %32, %33, p, 1, 1, 0, 0;\n}\n"
                     : DOUTS
                     : "l"(da), "l"(db), "r"(s));
    }
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    for (int i = 0; i < 32; i++) {
        int row = m0 + 16 * warp + g + 8 * ((i >> 1) & 1), col = n0 + 8 * (i / 4) + 2 * t + (i & 1);
        if (row < MT && col < NT) D[row * NT + col] = d[i];
    }
#endif
}

// cp.async.bulk global -> shared (completing on an mbarrier), every thread
// doubles its floats in shared memory, then cp.async.bulk shared -> global
// through a bulk async-group.
__global__ void k_bulk(const float* in, float* out, int* fail) {
#if __CUDA_ARCH__ >= 900
    __shared__ alignas(128) float s[1024];
    __shared__ alignas(8) uint64_t bar;
    int tid = threadIdx.x;
    if (tid == 0) {
        mbar_init(&bar, 1);
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
    if (tid == 0) {
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 4096;\n" ::"r"(smem_u32(&bar)) : "memory");
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], 4096, [%2];\n" ::"r"(smem_u32(s)), "l"(in),
                     "r"(smem_u32(&bar))
                     : "memory");
    }
    mbar_wait(&bar, 0, fail);
    for (int i = tid; i < 1024; i += 128) s[i] = s[i] * 2.0f + (float)i;
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads();
    if (tid == 0) {
        asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], 4096;\n" ::"l"(out), "r"(smem_u32(s)) : "memory");
        asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
        asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
    }
#endif
}

// ---- host ---------------------------------------------------------------------------------------

static std::string g_out;
static void save(const char* name, const void* p, size_t n) {
    std::string path = g_out + "/" + name + ".bin";
    FILE* f = fopen(path.c_str(), "wb");
    if (!f) {
        perror(path.c_str());
        exit(1);
    }
    fwrite(p, 1, n, f);
    fclose(f);
}
template <typename T>
static T* up(const std::vector<T>& v) {
    T* d;
    CK(cudaMalloc(&d, v.size() * sizeof(T) + 16));
    CK(cudaMemcpy(d, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
    return d;
}
template <typename T>
static T* zeros(size_t n) {
    T* d;
    CK(cudaMalloc(&d, n * sizeof(T) + 16));
    CK(cudaMemset(d, 0, n * sizeof(T) + 16));
    return d;
}
template <typename T>
static std::vector<T> down(const T* d, size_t n) {
    CK(cudaDeviceSynchronize());
    std::vector<T> v(n);
    CK(cudaMemcpy(v.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
    return v;
}
static void report(const char* name, double max_rel) { printf("%-28s max |err|/(|ref|+1e-3): %.3g %s\n", name, max_rel, max_rel < 1e-2 ? "ok" : "BAD"); }

// Reference for row-major A (M x K), B given by bget(k, n), C row-major.
template <typename FA, typename FB, typename FC, typename FD>
static double check(int M, int N, int K, FA a, FB b, FC c, FD d) {
    double worst = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double r = c(i, j);
            for (int k = 0; k < K; k++) r += a(i, k) * b(k, j);
            double e = fabs(d(i, j) - r) / (fabs(r) + 1e-3);
            if (e > worst) worst = e;
        }
    return worst;
}

static void run_mma() {
    {  // f16 and bf16 m16n8k16
        for (int bf = 0; bf < 2; bf++) {
            auto A = bf ? vec_bf16(256, 1) : vec_f16(256, 1);
            auto B = bf ? vec_bf16(128, 2) : vec_f16(128, 2);
            auto C = vec_f32(128, 3);
            uint16_t *dA = up(A), *dB = up(B);
            float *dC = up(C), *dD = zeros<float>(128);
            if (bf)
                k_mma_16816<1><<<1, 32>>>(dA, dB, dC, dD);
            else
                k_mma_16816<0><<<1, 32>>>(dA, dB, dC, dD);
            auto Dv = down(dD, 128);
            auto val = [&](uint16_t x) { return bf ? bf16_val(x) : f16_val(x); };
            report(bf ? "mma_m16n8k16_bf16" : "mma_m16n8k16_f16",
                   check(16, 8, 16, [&](int i, int k) { return (double)val(A[i * 16 + k]); }, [&](int k, int n) { return (double)val(B[n * 16 + k]); },
                         [&](int i, int j) { return (double)C[i * 8 + j]; }, [&](int i, int j) { return (double)Dv[i * 8 + j]; }));
            save(bf ? "mma_m16n8k16_bf16" : "mma_m16n8k16_f16", Dv.data(), 512);
        }
    }
    {  // f16 accumulators
        auto A = vec_f16(256, 4), B = vec_f16(128, 5), C = vec_f16(128, 6);
        uint16_t *dA = up(A), *dB = up(B), *dC = up(C), *dD = zeros<uint16_t>(128);
        k_mma_16816_f16acc<<<1, 32>>>(dA, dB, dC, dD);
        auto Dv = down(dD, 128);
        report("mma_m16n8k16_f16acc",
               check(16, 8, 16, [&](int i, int k) { return (double)f16_val(A[i * 16 + k]); }, [&](int k, int n) { return (double)f16_val(B[n * 16 + k]); },
                     [&](int i, int j) { return (double)f16_val(C[i * 8 + j]); }, [&](int i, int j) { return (double)f16_val(Dv[i * 8 + j]); }));
        save("mma_m16n8k16_f16acc", Dv.data(), 256);
    }
    {  // m16n8k8 f16
        auto A = vec_f16(128, 7), B = vec_f16(64, 8);
        auto C = vec_f32(128, 9);
        uint16_t *dA = up(A), *dB = up(B);
        float *dC = up(C), *dD = zeros<float>(128);
        k_mma_1688_f16<<<1, 32>>>(dA, dB, dC, dD);
        auto Dv = down(dD, 128);
        report("mma_m16n8k8_f16",
               check(16, 8, 8, [&](int i, int k) { return (double)f16_val(A[i * 8 + k]); }, [&](int k, int n) { return (double)f16_val(B[n * 8 + k]); },
                     [&](int i, int j) { return (double)C[i * 8 + j]; }, [&](int i, int j) { return (double)Dv[i * 8 + j]; }));
        save("mma_m16n8k8_f16", Dv.data(), 512);
    }
    {  // tf32 k8 and k4
        auto A = vec_f32(128, 10), B = vec_f32(64, 11), C = vec_f32(128, 12);
        float *dA = up(A), *dB = up(B), *dC = up(C), *dD = zeros<float>(128);
        k_mma_1688_tf32<<<1, 32>>>((const uint32_t*)dA, (const uint32_t*)dB, dC, dD);
        auto Dv = down(dD, 128);
        report("mma_m16n8k8_tf32", check(16, 8, 8, [&](int i, int k) { return (double)A[i * 8 + k]; }, [&](int k, int n) { return (double)B[n * 8 + k]; },
                                         [&](int i, int j) { return (double)C[i * 8 + j]; }, [&](int i, int j) { return (double)Dv[i * 8 + j]; }));
        save("mma_m16n8k8_tf32", Dv.data(), 512);
        k_mma_1684_tf32<<<1, 32>>>((const uint32_t*)dA, (const uint32_t*)dB, dC, dD);
        Dv = down(dD, 128);
        report("mma_m16n8k4_tf32", check(16, 8, 4, [&](int i, int k) { return (double)A[i * 4 + k]; }, [&](int k, int n) { return (double)B[n * 4 + k]; },
                                         [&](int i, int j) { return (double)C[i * 8 + j]; }, [&](int i, int j) { return (double)Dv[i * 8 + j]; }));
        save("mma_m16n8k4_tf32", Dv.data(), 512);
    }
    {  // integers
        auto A = vec_u8(512, 13), B = vec_u8(256, 14);
        auto C = vec_i32(128, 15);
        uint8_t *dA = up(A), *dB = up(B);
        int32_t *dC = up(C), *dD = zeros<int32_t>(128);
        k_mma_16832_s8<0><<<1, 32>>>(dA, dB, dC, dD);
        save("mma_m16n8k32_s8", down(dD, 128).data(), 512);
        k_mma_16832_s8<1><<<1, 32>>>(dA, dB, dC, dD);
        save("mma_m16n8k32_s8_sat", down(dD, 128).data(), 512);
        auto C2 = vec_i32(128, 16);
        for (auto& x : C2) x >>= 8;
        int32_t* dC2 = up(C2);
        k_mma_16816_u8s8<<<1, 32>>>(dA, dB, dC2, dD);
        save("mma_m16n8k16_u8s8", down(dD, 128).data(), 512);
        k_mma_8816_s8u8<<<1, 32>>>(dA, dB, dC2, dD);
        save("mma_m8n8k16_s8u8", down(dD, 64).data(), 256);
    }
    {  // f64
        auto A = vec_f64(32, 17), B = vec_f64(32, 18), C = vec_f64(64, 19);
        double *dA = up(A), *dB = up(B), *dC = up(C), *dD = zeros<double>(64);
        k_mma_884_f64<<<1, 32>>>(dA, dB, dC, dD);
        auto Dv = down(dD, 64);
        report("mma_m8n8k4_f64", check(8, 8, 4, [&](int i, int k) { return A[i * 4 + k]; }, [&](int k, int n) { return B[n * 4 + k]; },
                                       [&](int i, int j) { return C[i * 8 + j]; }, [&](int i, int j) { return Dv[i * 8 + j]; }));
        save("mma_m8n8k4_f64", Dv.data(), 512);
    }
    {  // ldmatrix / stmatrix / movmatrix
        std::vector<uint16_t> in(256);
        for (int i = 0; i < 256; i++) in[i] = (uint16_t)(i * 0x0101 ^ 0x5A00);
        uint16_t* dIn = up(in);
        uint32_t* dOut = zeros<uint32_t>(6 * 32 * 4);
        k_ldmatrix<<<1, 32>>>(dIn, dOut);
        save("ldmatrix", down(dOut, 6 * 32 * 4).data(), 6 * 32 * 4 * 4);
        uint16_t* dS = zeros<uint16_t>(6 * 256);
        uint32_t* dM = zeros<uint32_t>(32);
        k_stmatrix<<<1, 32>>>(dS, dM);
        save("stmatrix", down(dS, 6 * 256).data(), 6 * 256 * 2);
        save("movmatrix", down(dM, 32).data(), 128);
    }
}

template <typename TIn, typename TFrag, typename TAcc, int M, int N, int K, typename LA, typename LB, bool CCOL, bool TF32CVT, typename FV, typename FA>
static void wmma_case(const char* name, const std::vector<TIn>& A, const std::vector<TIn>& B, const std::vector<TAcc>& C, FV val, FA accval) {
    const int MM = 64, NN = 64, KK = 64;
    TIn *dA = up(A), *dB = up(B);
    TAcc *dC = up(C), *dD = zeros<TAcc>(MM * NN);
    k_wmma_gemm<TIn, TFrag, TAcc, M, N, K, LA, LB, CCOL, TF32CVT><<<1, 128>>>(dA, dB, dC, dD, MM, NN, KK);
    auto Dv = down(dD, MM * NN);
    bool acol = std::is_same<LA, wmma::col_major>::value, bcol = std::is_same<LB, wmma::col_major>::value;
    report(name, check(MM, NN, KK, [&](int i, int k) { return (double)val(acol ? A[k * MM + i] : A[i * KK + k]); },
                       [&](int k, int n) { return (double)val(bcol ? B[n * KK + k] : B[k * NN + n]); },
                       [&](int i, int j) { return (double)accval(CCOL ? C[j * MM + i] : C[i * NN + j]); },
                       [&](int i, int j) { return (double)accval(CCOL ? Dv[j * MM + i] : Dv[i * NN + j]); }));
    save(name, Dv.data(), Dv.size() * sizeof(TAcc));
}

template <typename Use, int M, int N, int K, typename T, typename L, typename Src>
static void probe(const char* name, const Src* src, unsigned ld) {
    unsigned char* d = zeros<unsigned char>(8 + 32 * 512);
    k_probe<Use, M, N, K, T, L, Src><<<1, 32>>>(src, ld, d);
    auto h = down(d, 8 + 32 * 512);
    uint32_t per_lane;
    memcpy(&per_lane, h.data(), 4);
    save(name, h.data(), 8 + 32 * per_lane);
}
template <int M, int N, int K, typename T, bool COL>
static void probe_acc(const char* name, const T* src, unsigned ld) {
    unsigned char* d = zeros<unsigned char>(8 + 32 * 512);
    k_probe_acc<M, N, K, T, COL><<<1, 32>>>(src, ld, d);
    auto h = down(d, 8 + 32 * 512);
    uint32_t per_lane;
    memcpy(&per_lane, h.data(), 4);
    save(name, h.data(), 8 + 32 * per_lane);
}

static void run_wmma() {
    auto h = [](uint16_t x) { return f16_val(x); };
    auto b = [](uint16_t x) { return bf16_val(x); };
    auto f = [](float x) { return x; };
    auto dd = [](double x) { return x; };
    auto s8 = [](uint8_t x) { return (double)(int8_t)x; };
    auto i32 = [](int32_t x) { return (double)x; };
    using R = wmma::row_major;
    using Cm = wmma::col_major;
    wmma_case<uint16_t, half, float, 16, 16, 16, R, Cm, false, false>("wmma_f16_m16n16k16_rc", vec_f16(4096, 20), vec_f16(4096, 21), vec_f32(4096, 22), h, f);
    wmma_case<uint16_t, half, float, 16, 16, 16, Cm, R, true, false>("wmma_f16_m16n16k16_cr_ccol", vec_f16(4096, 23), vec_f16(4096, 24), vec_f32(4096, 25), h,
                                                                     f);
    std::vector<uint16_t> c16 = vec_f16(4096, 28);
    wmma_case<uint16_t, half, half, 32, 8, 16, R, R, false, false>(
        "wmma_f16_m32n8k16_rr_f16acc", vec_f16(4096, 26), vec_f16(4096, 27), std::vector<half>((const half*)c16.data(), (const half*)c16.data() + 4096), h,
        [](half x) { return __half2float(x); });
    wmma_case<uint16_t, half, float, 8, 32, 16, Cm, Cm, false, false>("wmma_f16_m8n32k16_cc", vec_f16(4096, 29), vec_f16(4096, 30), vec_f32(4096, 31), h, f);
    wmma_case<uint16_t, __nv_bfloat16, float, 16, 16, 16, R, Cm, false, false>("wmma_bf16_m16n16k16_rc", vec_bf16(4096, 32), vec_bf16(4096, 33),
                                                                               vec_f32(4096, 34), b, f);
    wmma_case<uint16_t, __nv_bfloat16, float, 32, 8, 16, R, R, false, false>("wmma_bf16_m32n8k16_rr", vec_bf16(4096, 35), vec_bf16(4096, 36),
                                                                             vec_f32(4096, 37), b, f);
    wmma_case<float, wmma::precision::tf32, float, 16, 16, 8, R, Cm, false, true>("wmma_tf32_m16n16k8_rc", vec_f32(4096, 38), vec_f32(4096, 39),
                                                                                 vec_f32(4096, 40), f, f);
    {
        auto C = vec_i32(4096, 43);
        for (auto& x : C) x >>= 12;
        wmma_case<uint8_t, signed char, int, 16, 16, 16, R, Cm, false, false>("wmma_s8_m16n16k16_rc", vec_u8(4096, 41), vec_u8(4096, 42), C, s8, i32);
    }
    wmma_case<double, double, double, 8, 8, 4, R, Cm, false, false>("wmma_f64_m8n8k4_rc", vec_f64(4096, 44), vec_f64(4096, 45), vec_f64(4096, 46), dd, dd);

    // Fragment probes.
    std::vector<uint16_t> i16(1024);
    std::vector<float> i32f(1024);
    std::vector<uint8_t> i8(1024);
    std::vector<double> i64f(1024);
    std::vector<int> i32i(1024);
    for (int i = 0; i < 1024; i++) {
        i16[i] = (uint16_t)i;
        uint32_t bits = 0x3f800000u + i;
        memcpy(&i32f[i], &bits, 4);
        i8[i] = (uint8_t)i;
        i64f[i] = i;
        i32i[i] = i;
    }
    const half* ph = (const half*)up(i16);
    const __nv_bfloat16* pb = (const __nv_bfloat16*)ph;
    const float* pf = up(i32f);
    const signed char* ps = (const signed char*)up(i8);
    const double* pd = up(i64f);
    const int* pi = up(i32i);
    using A = wmma::matrix_a;
    using B = wmma::matrix_b;
    probe<A, 16, 16, 16, half, R>("probe_f16_m16n16k16_a_row", ph, 16);
    probe<A, 16, 16, 16, half, Cm>("probe_f16_m16n16k16_a_col", ph, 16);
    probe<B, 16, 16, 16, half, R>("probe_f16_m16n16k16_b_row", ph, 16);
    probe<B, 16, 16, 16, half, Cm>("probe_f16_m16n16k16_b_col", ph, 16);
    probe<A, 32, 8, 16, half, R>("probe_f16_m32n8k16_a_row", ph, 16);
    probe<B, 32, 8, 16, half, R>("probe_f16_m32n8k16_b_row", ph, 8);
    probe<A, 8, 32, 16, half, R>("probe_f16_m8n32k16_a_row", ph, 16);
    probe<B, 8, 32, 16, half, Cm>("probe_f16_m8n32k16_b_col", ph, 16);
    probe_acc<16, 16, 16, float, false>("probe_f32_m16n16k16_c_row", pf, 16);
    probe_acc<16, 16, 16, float, true>("probe_f32_m16n16k16_c_col", pf, 16);
    probe_acc<16, 16, 16, half, false>("probe_f16_m16n16k16_c_row", ph, 16);
    probe_acc<32, 8, 16, float, false>("probe_f32_m32n8k16_c_row", pf, 8);
    probe_acc<8, 32, 16, float, false>("probe_f32_m8n32k16_c_row", pf, 32);
    probe<A, 16, 16, 16, __nv_bfloat16, R>("probe_bf16_m16n16k16_a_row", pb, 16);
    probe<B, 16, 16, 16, __nv_bfloat16, Cm>("probe_bf16_m16n16k16_b_col", pb, 16);
    probe<A, 32, 8, 16, __nv_bfloat16, R>("probe_bf16_m32n8k16_a_row", pb, 16);
    probe<B, 8, 32, 16, __nv_bfloat16, R>("probe_bf16_m8n32k16_b_row", pb, 32);
    probe<A, 16, 16, 8, wmma::precision::tf32, R>("probe_tf32_m16n16k8_a_row", pf, 8);
    probe<A, 16, 16, 8, wmma::precision::tf32, Cm>("probe_tf32_m16n16k8_a_col", pf, 16);
    probe<B, 16, 16, 8, wmma::precision::tf32, R>("probe_tf32_m16n16k8_b_row", pf, 16);
    probe<B, 16, 16, 8, wmma::precision::tf32, Cm>("probe_tf32_m16n16k8_b_col", pf, 8);
    probe<A, 16, 16, 16, signed char, R>("probe_s8_m16n16k16_a_row", ps, 16);
    probe<B, 16, 16, 16, signed char, Cm>("probe_s8_m16n16k16_b_col", ps, 16);
    probe_acc<16, 16, 16, int, false>("probe_s32_m16n16k16_c_row", pi, 16);
    probe<A, 8, 8, 4, double, R>("probe_f64_m8n8k4_a_row", pd, 4);
    probe<B, 8, 8, 4, double, Cm>("probe_f64_m8n8k4_b_col", pd, 4);
    probe_acc<8, 8, 4, double, false>("probe_f64_m8n8k4_c_row", pd, 8);
}

static void run_async() {
    {
        auto g16 = vec_u8(128 * 16, 50), g8 = vec_u8(128 * 8, 51), g4 = vec_u8(128 * 4, 52);
        uint8_t *d16 = up(g16), *d8 = up(g8), *d4 = up(g4), *dO = zeros<uint8_t>(128 * 28);
        k_cp_async<<<1, 128>>>(d16, d8, d4, dO);
        save("cp_async", down(dO, 128 * 28).data(), 128 * 28);
    }
    {
        auto in = vec_f32(256, 53);
        float *dIn = up(in), *dO = zeros<float>(128);
        int* fail = zeros<int>(1);
        k_mbar_pipeline<<<1, 128>>>(dIn, dO, fail);
        auto o = down(dO, 128);
        auto fl = down(fail, 1);
        printf("mbar_pipeline fail flag %d\n", fl[0]);
        save("mbar_pipeline", o.data(), 128 * 4);
    }
    {
        auto in = vec_f32(1024, 54);
        float *dIn = up(in), *dO = zeros<float>(1024);
        int* fail = zeros<int>(1);
        k_bulk<<<1, 128>>>(dIn, dO, fail);
        auto o = down(dO, 1024);
        double worst = 0;
        for (int i = 0; i < 1024; i++) worst = fmax(worst, fabs(o[i] - (in[i] * 2.0 + i)));
        printf("bulk fail %d err %g\n", down(fail, 1)[0], worst);
        save("bulk", o.data(), 4096);
    }
}

template <int SWZ, int TA, int TB, int AREG, int BF, int NEGA>
static void wgmma_case(const char* name) {
    auto A = BF ? vec_bf16(4096, 60) : vec_f16(4096, 60);
    auto B = BF ? vec_bf16(4096, 61) : vec_f16(4096, 61);
    auto C = vec_f32(4096, 62);
    uint16_t *dA = up(A), *dB = up(B);
    float *dC = up(C), *dD = zeros<float>(4096);
    k_wgmma<SWZ, TA, TB, AREG, BF, NEGA><<<1, 128>>>(dA, dB, dC, dD);
    auto Dv = down(dD, 4096);
    auto val = [&](uint16_t x) { return BF ? bf16_val(x) : f16_val(x); };
    // A is stored K x M when TA (and not AREG); B is stored K x N when TB.
    report(name, check(64, 64, 64, [&](int i, int k) { return (double)val((TA && !AREG) ? A[k * 64 + i] : A[i * 64 + k]) * (NEGA ? -1.0 : 1.0); },
                       [&](int k, int n) { return (double)val(TB ? B[k * 64 + n] : B[n * 64 + k]); }, [&](int i, int j) { return (double)C[i * 64 + j]; },
                       [&](int i, int j) { return (double)Dv[i * 64 + j]; }));
    save(name, Dv.data(), 4096 * 4);
}

static void run_hopper() {
    wgmma_case<1, 0, 0, 0, 0, 0>("wgmma_sw128");
    wgmma_case<2, 0, 0, 0, 0, 0>("wgmma_sw64");
    wgmma_case<3, 0, 0, 0, 0, 0>("wgmma_sw32");
    wgmma_case<0, 0, 0, 0, 0, 0>("wgmma_interleave");
    wgmma_case<1, 0, 1, 0, 0, 0>("wgmma_sw128_tb");
    wgmma_case<2, 0, 1, 0, 0, 0>("wgmma_sw64_tb");
    wgmma_case<3, 0, 1, 0, 0, 0>("wgmma_sw32_tb");
    wgmma_case<0, 0, 1, 0, 0, 0>("wgmma_interleave_tb");
    wgmma_case<1, 1, 0, 0, 0, 0>("wgmma_sw128_ta");
    wgmma_case<1, 0, 0, 1, 0, 0>("wgmma_sw128_areg");
    wgmma_case<1, 0, 0, 0, 1, 0>("wgmma_sw128_bf16");
    wgmma_case<1, 0, 0, 0, 0, 1>("wgmma_sw128_nega");
    {  // TMA
        const int MT = 120, NT = 112;
        auto A = vec_f16(MT * 64, 70), B = vec_f16(NT * 64, 71);
        uint16_t *dA = up(A), *dB = up(B);
        float* dD = zeros<float>(MT * NT);
        int* fail = zeros<int>(1);
        CUtensorMap ta, tb;
        cuuint64_t dimA[2] = {64, (cuuint64_t)MT}, dimB[2] = {64, (cuuint64_t)NT};
        cuuint64_t stride[1] = {64 * 2};
        cuuint32_t box[2] = {64, 64}, es[2] = {1, 1};
        CUresult r1 = cuTensorMapEncodeTiled(&ta, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, dA, dimA, stride, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                             CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
        CUresult r2 = cuTensorMapEncodeTiled(&tb, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, dB, dimB, stride, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                             CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
        printf("tensor map encode: %d %d\n", (int)r1, (int)r2);
        save("tensormap_a_raw", &ta, 128);
        k_tma_wgmma<<<dim3((NT + 63) / 64, (MT + 63) / 64), 128>>>(ta, tb, dD, MT, NT, fail);
        auto Dv = down(dD, MT * NT);
        printf("tma fail %d\n", down(fail, 1)[0]);
        report("tma_wgmma", check(MT, NT, 64, [&](int i, int k) { return (double)f16_val(A[i * 64 + k]); },
                                  [&](int k, int n) { return (double)f16_val(B[n * 64 + k]); }, [&](int, int) { return 0.0; },
                                  [&](int i, int j) { return (double)Dv[i * NT + j]; }));
        save("tma_wgmma", Dv.data(), MT * NT * 4);
    }
}

int main(int argc, char** argv) {
    g_out = argc > 1 ? argv[1] : ".";
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    printf("device %s sm_%d%d\n", p.name, p.major, p.minor);
    run_mma();
    run_wmma();
    run_async();
    run_hopper();
    CK(cudaDeviceSynchronize());
    printf("done\n");
    return 0;
}
