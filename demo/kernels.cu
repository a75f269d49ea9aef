// The kernels `warpsim demo` runs. Each one shows one claim of the seed
// documents; most are the corpus's ground-truth kernels (../shared/corpus/
// kernels.cu, measured on a real H200), here compiled by clang with the
// device API warpsim ships. regen.sh turns this file into kernels.ptx, which
// is committed beside it and built into the warpsim binary.
#include "warpsim_cuda.h"

// --- warps: every thread writes clock64, activemask and laneid into its slot --
extern "C" __global__ void warp_probe(unsigned long long *clk, unsigned *mask, unsigned *lane) {
    unsigned t = threadIdx.x;
    unsigned long long c = clock64();
    unsigned m = __activemask();
    unsigned l = __laneid();
    clk[t] = c;
    mask[t] = m;
    lane[t] = l;
}

// --- divergence: the same arithmetic, split on lane parity or on a warp boundary
#define PATH_A(x) asm volatile("fma.rn.f32 %0, %0, 0f3F800347, 0f3F000000;" : "+f"(x))
#define PATH_B(x) asm volatile("fma.rn.f32 %0, %0, 0f3F7FF972, 0fBE800000;" : "+f"(x))
#define PATH_C(x) asm volatile("fma.rn.f32 %0, %0, 0f3F800001, 0f3E800000;" : "+f"(x))
#define PATH_D(x) asm volatile("fma.rn.f32 %0, %0, 0f3F7FFFFE, 0fBE000000;" : "+f"(x))

extern "C" __global__ void div_lane_parity(float *out, int iters) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = (float)(i & 1023) * 1e-3f;
    if (threadIdx.x & 1) {
        for (int k = 0; k < iters; k++) PATH_A(x);
    } else {
        for (int k = 0; k < iters; k++) PATH_B(x);
    }
    out[i] = x;
}

extern "C" __global__ void div_warp_split(float *out, int iters) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = (float)(i & 1023) * 1e-3f;
    if ((threadIdx.x >> 5) & 1) {
        for (int k = 0; k < iters; k++) PATH_A(x);
    } else {
        for (int k = 0; k < iters; k++) PATH_B(x);
    }
    out[i] = x;
}

// four paths inside every warp (lane & 3), against four paths split per warp
extern "C" __global__ void div_4way_lanes(float *out, int iters) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = (float)(i & 1023) * 1e-3f;
    int p = threadIdx.x & 3;
    if (p == 0) {
        for (int k = 0; k < iters; k++) PATH_A(x);
    } else if (p == 1) {
        for (int k = 0; k < iters; k++) PATH_B(x);
    } else if (p == 2) {
        for (int k = 0; k < iters; k++) PATH_C(x);
    } else {
        for (int k = 0; k < iters; k++) PATH_D(x);
    }
    out[i] = x;
}

extern "C" __global__ void div_4way_warps(float *out, int iters) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = (float)(i & 1023) * 1e-3f;
    int p = (threadIdx.x >> 5) & 3;
    if (p == 0) {
        for (int k = 0; k < iters; k++) PATH_A(x);
    } else if (p == 1) {
        for (int k = 0; k < iters; k++) PATH_B(x);
    } else if (p == 2) {
        for (int k = 0; k < iters; k++) PATH_C(x);
    } else {
        for (int k = 0; k < iters; k++) PATH_D(x);
    }
    out[i] = x;
}

// the seed's plain if/else: short bodies, which the compiler predicates
extern "C" __global__ void branch_short(float *data, int n) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= n) return;
    if (data[idx] > 0.5f) data[idx] = data[idx] * 4.0f;
    else                  data[idx] = data[idx] + 2.0f;
}

// --- coalescing: lane i reads in[i * stride] -----------------------------------
extern "C" __global__ void strided_read(const float *in, float *out, int stride, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[(size_t)i * stride];
}

// --- shared-memory banks: lane reads s[(lane * stride + k) % 1024] ----------------
extern "C" __global__ void smem_stride(float *out, int stride, int iters) {
    __shared__ float s[1024];
    for (int j = threadIdx.x; j < 1024; j += blockDim.x) s[j] = (float)j;
    __syncthreads();
    int lane = threadIdx.x & 31;
    float acc = 0.f;
    for (int k = 0; k < iters; k++) acc += s[(lane * stride + k) & 1023];
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

// --- the seed's warp_sum (five shuffles) against a shared-memory block sum --------
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xFFFFFFFFu, v, offset);
    return v; // lane 0 now holds the total
}

extern "C" __global__ void warp_sum_kernel(const float *in, float *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = warp_sum(in[i]);
    if ((threadIdx.x & 31) == 0) out[i >> 5] = v;
}

extern "C" __global__ void block_sum_smem(const float *in, float *out) {
    __shared__ float s[256];
    int t = threadIdx.x;
    s[t] = in[blockIdx.x * 256 + t];
    __syncthreads();
    for (int w = 128; w > 0; w >>= 1) {
        if (t < w) s[t] += s[t + w];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0];
}

// --- a bit of everything in one kernel, for `warpsim run --report` ------------------
// A strided global read, a shared-memory tile written by rows and read by columns
// (8-way bank conflicts in blocks of 256), and a data-dependent branch.
extern "C" __global__ void tour(const float *in, float *out, int stride) {
    __shared__ float tile[8][32];
    int t = threadIdx.x, lane = t & 31, warp = t >> 5;
    int i = blockIdx.x * blockDim.x + t;
    float x = in[(size_t)i * stride];
    tile[warp & 7][lane] = x;
    __syncthreads();
    float y = tile[lane & 7][warp & 7];
    if (x > 0.5f) {
        for (int k = 0; k < 16; k++) PATH_A(y);
    }
    out[i] = x + y;
}
