// Control flow and memories: a called (not inlined) device function, a
// while loop whose trip count depends on the lane, a per-thread array that
// stays in local memory; clock64.
#include "warpsim_cuda.h"

__device__ __noinline__ unsigned mix(unsigned a, unsigned b) {
    unsigned h = a * 0x9e3779b1u ^ b;
    if (h & 1)
        h = (h >> 3) * 5u;
    else
        h = h + (b << 7);
    return h ^ (h >> 13);
}

__device__ __noinline__ float axpb(float a, float x, float b) {
    return fmaf(a, x, b);
}

extern "C" __global__ void call_device_fn(const unsigned *in, unsigned *out, float *fout) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned v = in[i];
    unsigned r = mix(v, i);
    if (v & 2)
        r = mix(r, 7); // called from divergent code
    out[i] = r;
    fout[i] = axpb((float)(v & 0xff), 0.5f, (float)i);
}

// Collatz: steps to reach 1 and the largest value seen, per lane; also the
// sum over iterations of how many lanes of the warp were still in the loop,
// and the mask after the loop (the warp has reconverged).
extern "C" __global__ void divergent_loop(const unsigned *in, unsigned *steps, unsigned *peak, unsigned *active_sum, unsigned *after) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned x = in[i];
    unsigned n = 0, m = x, act = 0;
    while (x != 1) {
        act += __popc(__activemask());
        x = (x & 1) ? 3 * x + 1 : x / 2;
        n++;
        m = max(m, x);
    }
    __syncwarp();
    steps[i] = n;
    peak[i] = m;
    active_sum[i] = act;
    after[i] = __activemask();
}

// A per-thread array indexed with runtime values, so it lives in .local.
extern "C" __global__ void local_array(const unsigned *in, unsigned *out) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned v = in[i];
    unsigned buf[16];
    for (int k = 0; k < 16; k++)
        buf[k] = (v * (k + 1)) ^ k;
    unsigned idx = v % 16, acc = 0;
    for (int k = 0; k < 8; k++) {
        acc += buf[(idx + k * 5) % 16];
        buf[(idx * 3 + k) % 16] ^= acc;
    }
    out[i] = acc ^ buf[idx] ^ buf[(v >> 4) % 16];
}

// clock64() before and after a store.
extern "C" __global__ void clock_advances(unsigned long long *t) {
    unsigned i = threadIdx.x;
    long long t0 = clock64();
    t[2 * i] = (unsigned long long)t0;
    long long t1 = clock64();
    t[2 * i + 1] = (unsigned long long)t1;
}
