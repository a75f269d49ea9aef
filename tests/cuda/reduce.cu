// Reductions, scans, votes and matches: shared-memory tree reduction, warp
// shuffles (down, up, xor, idx, with sub-warp widths), ballot/any/all/popc,
// and match.any.
#include "warpsim_cuda.h"

#define FULL 0xffffffffu

// Each block of 256 threads sums 512 floats: two loads per thread, then a
// shared-memory tree (s[t] += s[t + stride], stride 128, 64, ..., 1).
extern "C" __global__ void block_reduce(const float *in, float *out, unsigned n) {
    __shared__ float s[256];
    unsigned t = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x * 2 + t;
    float v = 0.0f;
    if (i < n)
        v = in[i];
    if (i + blockDim.x < n)
        v += in[i + blockDim.x];
    s[t] = v;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (t < stride)
            s[t] += s[t + stride];
        __syncthreads();
    }
    if (t == 0)
        out[blockIdx.x] = s[0];
}

// v += shfl.down(v, 16, 8, 4, 2, 1); every lane writes its final v (lanes
// whose source is past lane 31 add their own value).
extern "C" __global__ void warp_reduce(const float *in, float *out) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = in[i];
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_down_sync(FULL, v, off);
    out[i] = v;
}

// Butterfly all-reduce of integers: every lane ends with the warp's sum.
extern "C" __global__ void warp_allreduce_xor(const int *in, int *out) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[i];
    for (int m = 1; m < 32; m <<= 1)
        v += __shfl_xor_sync(FULL, v, m);
    out[i] = v;
}

// Inclusive scan over the warp (Hillis-Steele with shfl.up).
extern "C" __global__ void warp_scan(const int *in, int *out) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned lane = threadIdx.x & 31;
    int v = in[i];
    for (unsigned off = 1; off < 32; off <<= 1) {
        int y = __shfl_up_sync(FULL, v, off);
        if (lane >= off)
            v += y;
    }
    out[i] = v;
}

// Inclusive scan within segments of 8 lanes (shfl width 8), then every lane
// reads its segment's total from the segment's last lane (shfl.idx, width 8).
extern "C" __global__ void segmented_scan8(const int *in, int *scan, int *total) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned seg_lane = threadIdx.x & 7;
    int v = in[i];
    for (unsigned off = 1; off < 8; off <<= 1) {
        int y = __shfl_up_sync(FULL, v, off, 8);
        if (seg_lane >= off)
            v += y;
    }
    scan[i] = v;
    total[i] = __shfl_sync(FULL, v, 7, 8);
}

// Per thread: ballot(x > 0), any(x < -1000), all(x != 0), popc(ballot).
extern "C" __global__ void votes(const int *in, unsigned *out) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    int x = in[i];
    unsigned b = __ballot_sync(FULL, x > 0);
    out[4 * i + 0] = b;
    out[4 * i + 1] = __any_sync(FULL, x < -1000);
    out[4 * i + 2] = __all_sync(FULL, x != 0);
    out[4 * i + 3] = __popc(b);
}

// Votes inside a divergent branch: lanes with lane % 3 != 0 take it and vote
// with the mask of the lanes that are there; the others write markers.
extern "C" __global__ void votes_divergent(const int *in, unsigned *out) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned lane = threadIdx.x & 31;
    int x = in[i];
    if (lane % 3 != 0) {
        unsigned m = __activemask();
        out[2 * i + 0] = m;
        out[2 * i + 1] = __ballot_sync(m, x & 1);
    } else {
        out[2 * i + 0] = 0xdead;
        out[2 * i + 1] = 0xbeef;
    }
}

extern "C" __global__ void match_any(const unsigned *keys, unsigned *out) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = __match_any_sync(FULL, keys[i]);
}
