// The second translation unit of the -rdc program in rdc_a.cu (which says how it is built):
// device functions and variables that rdc_a.cu uses, and a kernel that rdc_a.cu launches.
#include <cstdio>

__device__ int hits;            // counted by rdc_a.cu's kernel through bump()
__constant__ float coeffs[4];   // set by rdc_a.cu's host code
__managed__ int calls;          // read and written by rdc_a.cu's host code directly
extern __device__ int scale;    // defined in rdc_a.cu

// Defined the same in both units: a weak function in each unit's PTX.
template <class T> __device__ __noinline__ T twice(T x) { return x + x; }

// Internal to each unit, same name in both.
static __device__ __noinline__ int unit_id(int v) { return 2 + v / 100000; }

__device__ float poly(float x) { return coeffs[0] + x * (coeffs[1] + x * (coeffs[2] + x * coeffs[3])); }

__device__ __noinline__ int bump(int v) {
    atomicAdd(&hits, 1);
    return v * scale;
}

__global__ void tally(int *out) {
    if (threadIdx.x == 0) {
        out[0] = hits;
        out[1] = twice(scale);
        out[2] = unit_id(threadIdx.x);
        calls += 1;
        printf("tally in unit %d: hits=%d scale=%d\n", unit_id(threadIdx.x), hits, scale);
    }
}
