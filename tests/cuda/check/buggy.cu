// Kernels with one bug each, for `warpsim check` (crates/cli/tests/check.rs
// says which diagnostic each must give). Compiled with clang-19 like the
// other test kernels.
#include "../warpsim_cuda.h"

// ---- races ------------------------------------------------------------------

// The pre-Volta warp reduction: relies on lockstep, no __syncwarp.
extern "C" __global__ void race_warp_reduce(const int *in, int *out) {
  __shared__ volatile int s[64];
  int t = threadIdx.x;
  s[t] = in[blockIdx.x * 32 + t];
  if (t < 16) {
    s[t] += s[t + 16];
    s[t] += s[t + 8];
    s[t] += s[t + 4];
    s[t] += s[t + 2];
    s[t] += s[t + 1];
  }
  if (t == 0) out[blockIdx.x] = s[0];
}

// A block reduction missing the __syncthreads() after the first store.
extern "C" __global__ void race_missing_syncthreads(const float *in, float *out) {
  __shared__ float s[128];
  int t = threadIdx.x;
  s[t] = in[blockIdx.x * 128 + t];
  for (int w = 64; w > 0; w >>= 1) {
    if (t < w) s[t] += s[t + w];  // reads another warp's store, unordered
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = s[0];
}

// Every block increments one global counter without an atomic.
extern "C" __global__ void race_global_counter(int *counter) {
  if (threadIdx.x == 0) *counter = *counter + 1;
}

// Lanes of a warp exchange values through global memory without __syncwarp.
extern "C" __global__ void race_global_exchange(int *buf, int *out) {
  int t = threadIdx.x;
  buf[t] = t * 3;
  out[t] = buf[t ^ 1];
}

// ---- barriers -------------------------------------------------------------------

// __syncthreads() inside a branch that splits a warp.
extern "C" __global__ void barrier_in_branch(float *data) {
  int t = threadIdx.x;
  if (t < 40) {
    data[t] += 1.0f;
    __syncthreads();
  }
  data[t] *= 2.0f;
}

// A named barrier waiting for 64 threads that only 32 ever reach.
extern "C" __global__ void barrier_never_completes(int *out) {
  int t = threadIdx.x;
  if (t < 32) {
    asm volatile("bar.sync 1, 64;" ::: "memory");
  }
  out[t] = t;
}

// Two warps meet at different __syncthreads() instructions.
extern "C" __global__ void barrier_different_instructions(int *out) {
  __shared__ int s[64];
  int t = threadIdx.x;
  if (t < 32) {
    s[t] = t;
    __syncthreads();
    out[t] = s[63 - t];
  } else {
    s[t] = 2 * t;
    __syncthreads();
    out[t] = s[63 - t] + 1;
  }
}

// ---- sync masks -------------------------------------------------------------------

// A full-warp shuffle inside a branch that only half the warp takes.
extern "C" __global__ void shfl_in_branch(const float *in, float *out) {
  int t = threadIdx.x;
  float v = in[t];
  if ((t & 31) < 16) v = __shfl_down_sync(0xffffffffu, v, 1);
  out[t] = v;
}

// __syncwarp(0x0000ffff) executed by lanes 16..31 too.
extern "C" __global__ void syncwarp_lane_not_in_mask(int *out) {
  int t = threadIdx.x;
  out[t] = t;
  __syncwarp(0x0000ffffu);
  out[t] += 1;
}

// Each half of the warp gives its own mask to the same shuffle.
extern "C" __global__ void shfl_mismatched_masks(const int *in, int *out) {
  int t = threadIdx.x;
  unsigned lane = t & 31;
  unsigned mask = lane < 16 ? 0x0000ffffu : 0xffffffffu;
  out[t] = __shfl_sync(mask, in[t], 0);
}

// Lanes 0..15 shuffle among themselves, but lanes 8..15 read lanes 16..23.
extern "C" __global__ void shfl_reads_outside_mask(const int *in, int *out) {
  int t = threadIdx.x;
  int v = in[t];
  if ((t & 31) < 16) v += __shfl_down_sync(0x0000ffffu, v, 8);
  out[t] = v;
}

// A full-mask shuffle in a block of 48 threads: warp 1 has only 16 lanes.
extern "C" __global__ void shfl_full_mask_partial_warp(const int *in, int *out) {
  int t = threadIdx.x;
  out[t] = __shfl_xor_sync(0xffffffffu, in[t], 1);
}

// ---- memory -------------------------------------------------------------------------

// Reads one element past the end of `in`.
extern "C" __global__ void oob_read(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] + in[i + 1];
}

// Indexes a shared array past the block's shared memory.
extern "C" __global__ void oob_shared(const int *idx, int *out) {
  __shared__ int s[64];
  int t = threadIdx.x;
  s[t] = t;
  __syncthreads();
  out[t] = s[idx[t]];
}

// Reads an int through a pointer one byte off.
extern "C" __global__ void misaligned_read(const char *bytes, int *out) {
  int t = threadIdx.x;
  out[t] = *(const int *)(bytes + 4 * t + 1);
}

// Only even threads fill the shared array; every thread reads its neighbour.
extern "C" __global__ void uninit_shared(float *out) {
  __shared__ float s[64];
  int t = threadIdx.x;
  if ((t & 1) == 0) s[t] = (float)t;
  __syncthreads();
  out[t] = s[t ^ 1];
}

// A local array filled up to n, read at an index the caller chose.
extern "C" __global__ void uninit_local(const int *in, const int *pick, int *out, int n) {
  int a[16];
  for (int i = 0; i < n; i++) a[i] = in[i] * 2;
  int t = threadIdx.x;
  out[t] = a[pick[t] & 15];
}

// The last-block reduction without __threadfence(): the last block may read
// partial results that are not yet visible.
extern "C" __global__ void last_block_no_fence(const float *in, float *partial, unsigned *ticket, float *total) {
  __shared__ bool last;
  int t = threadIdx.x;
  if (t == 0) {
    partial[blockIdx.x] = in[blockIdx.x];
    unsigned k = atomicInc(ticket, gridDim.x);
    last = (k == gridDim.x - 1);
  }
  __syncthreads();
  if (last && t == 0) {
    float sum = 0.0f;
    for (unsigned b = 0; b < gridDim.x; b++) sum += partial[b];
    *total = sum;
  }
}
