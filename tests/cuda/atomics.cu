// Atomics: a histogram of hash values (shared-memory atomics merged with
// global ones), tickets from a global counter, and a lock-free float max
// built on atomicCAS.
#include "warpsim_cuda.h"

__device__ __forceinline__ unsigned hash32(unsigned x) {
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

#define NBINS 64
// bins[h % 64] for h = hash32(k), k in [0, n); grid-stride; ticket[t] is the
// value a global counter had when thread t added 1 to it.
extern "C" __global__ void histogram(unsigned n, unsigned *bins, unsigned *counter, unsigned *ticket) {
    __shared__ unsigned local_bins[NBINS];
    for (unsigned b = threadIdx.x; b < NBINS; b += blockDim.x)
        local_bins[b] = 0;
    __syncthreads();
    unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
    for (unsigned k = tid; k < n; k += blockDim.x * gridDim.x)
        atomicAdd(&local_bins[hash32(k) % NBINS], 1u);
    __syncthreads();
    for (unsigned b = threadIdx.x; b < NBINS; b += blockDim.x)
        atomicAdd(&bins[b], local_bins[b]);
    ticket[tid] = atomicAdd(counter, 1u);
}

__device__ __noinline__ float atomic_max_float(float *addr, float val) {
    int *p = (int *)addr;
    int old = *(volatile int *)p;
    int assumed;
    do {
        assumed = old;
        if (__int_as_float(assumed) >= val)
            break;
        old = atomicCAS(p, assumed, __float_as_int(val));
    } while (assumed != old);
    return __int_as_float(old);
}

// result[0] = max over all inputs, result[1 + block] = max over the block's.
extern "C" __global__ void cas_max(const float *in, float *result) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = in[i];
    atomic_max_float(&result[0], v);
    atomic_max_float(&result[1 + blockIdx.x], v);
}
