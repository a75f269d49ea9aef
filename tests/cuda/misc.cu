// Code shapes clang emits for common CUDA: vector (float4) loads and stores,
// read-only loads through const __restrict__, 8- and 16-bit data, a switch,
// a struct passed by value, __constant__ and __device__
// variables with initialisers, and 64-bit, float and double atomics.
#include "warpsim_cuda.h"

struct Params {
    float scale;
    int offset;
    unsigned char shift;
    double bias;
};

__constant__ int lut[8] = {3, 1, 4, 1, 5, 9, 2, 6};
__constant__ float coeffs[4] = {0.5f, -1.25f, 2.0f, 0.125f};
__device__ unsigned long long g_sum = 0;
__device__ int g_table[4] = {10, 20, 30, 40};

extern "C" __global__ void float4_copy_scale(const float4 *__restrict__ in, float4 *__restrict__ out, float s) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    float4 v = in[i];
    v.x *= s;
    v.y += s;
    v.z -= s;
    v.w = v.w * v.x;
    out[i] = v;
}

extern "C" __global__ void bytes_and_shorts(const unsigned char *b, const short *h, short *out16, unsigned char *out8, int *out32) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned char x = b[i];
    short y = h[i];
    out16[i] = (short)(y * 3 - x);
    out8[i] = (unsigned char)(x * 7 + (y >> 2));
    out32[i] = (int)(signed char)x + (int)y;
}

extern "C" __global__ void switch_table(const int *in, int *out) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    int x = in[i];
    int r;
    switch (x & 7) {
    case 0: r = x * 2; break;
    case 1: r = x + 100; break;
    case 2: r = x ^ 0x55; break;
    case 3: r = -x; break;
    case 4: r = x >> 1; break;
    case 5: r = x * x; break;
    case 6: r = 7; break;
    default: r = lut[x & 7] + g_table[x & 3]; break;
    }
    out[i] = r;
}

extern "C" __global__ void struct_param(Params p, const float *in, double *out) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = in[i] * p.scale + coeffs[i & 3];
    int k = ((int)i + p.offset) >> p.shift;
    out[i] = (double)v + (double)k + p.bias;
}

// 64-bit integer, float and double atomic adds, atomicMin/atomicMax/atomicExch
// on ints, and a __device__ variable as the 64-bit accumulator.
extern "C" __global__ void atomics_wide(const unsigned *in, float *fsum, double *dsum, int *minmax, int *last) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned v = in[i];
    atomicAdd(&g_sum, (unsigned long long)v << 20);
    atomicAdd(fsum, 0.25f);
    atomicAdd(dsum, (double)(v & 0xffff));
    atomicMin(&minmax[0], (int)v);
    atomicMax(&minmax[1], (int)v);
    atomicExch(&last[v & 3], (int)i);
}
