// Warp-level API: ballot, popc, match_any, reduce, shfl_xor on 64-bit and
// double values, syncthreads_count, activemask, atomics friends.
extern "C" __global__ void warp_api(const unsigned *in, unsigned *out, unsigned long long *wide, double *d, int *counts) {
    unsigned t = threadIdx.x;
    unsigned v = in[t];
    unsigned ballot = __ballot_sync(0xffffffffu, v & 1);
    unsigned same = __match_any_sync(0xffffffffu, v & 3);
    unsigned sum = __reduce_add_sync(0xffffffffu, v & 255);
    unsigned long long w = ((unsigned long long)v << 32) | t;
    unsigned long long partner = __shfl_xor_sync(0xffffffffu, w, 1);
    double x = (double)t * 0.5;
    double y = __shfl_down_sync(0xffffffffu, x, 1);
    int odd = __syncthreads_count(v & 1);
    out[4 * t + 0] = __popc(ballot);
    out[4 * t + 1] = same;
    out[4 * t + 2] = sum;
    out[4 * t + 3] = __activemask();
    wide[t] = partner;
    d[t] = y;
    if (t == 0) counts[0] = odd;
    atomicMax(&counts[1], (int)(v & 1023));
    atomicOr((unsigned *)&counts[2], 1u << (t & 31));
    atomicSub(&counts[3], 1);
}
