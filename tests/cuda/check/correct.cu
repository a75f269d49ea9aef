// Correct kernels that use warp-synchronous programming, atomics, fences and
// named barriers: `warpsim check` must find nothing in them (a false
// positive is a bug too).
#include "../warpsim_cuda.h"

// The Volta-safe warp reduction through shared memory: __syncwarp between
// every read and write.
extern "C" __global__ void warp_reduce_syncwarp(const int *in, int *out) {
  __shared__ int s[32];
  int t = threadIdx.x;
  int v = in[blockIdx.x * 32 + t];
  s[t] = v;
  __syncwarp();
  for (int off = 16; off > 0; off >>= 1) {
    if (t < off) v += s[t + off];
    __syncwarp();
    if (t < off) s[t] = v;
    __syncwarp();
  }
  if (t == 0) out[blockIdx.x] = s[0];
}

// Lanes exchange through shared memory, ordered by __syncwarp (two warps).
extern "C" __global__ void syncwarp_exchange(const int *in, int *out) {
  __shared__ int s[64];
  int t = threadIdx.x;
  s[t] = in[t];
  __syncwarp();
  int x = s[t ^ 1];
  __syncwarp();
  s[t] = x + 1;
  __syncwarp();
  out[t] = s[t ^ 3];
}

// A shuffle reduction by half a warp with a half-warp mask.
extern "C" __global__ void half_warp_shuffle(const int *in, int *out) {
  int t = threadIdx.x;
  int v = in[t];
  if ((t & 31) < 16) {
    for (int m = 8; m > 0; m >>= 1) v += __shfl_xor_sync(0x0000ffffu, v, m);
  }
  out[t] = v;
}

// Votes and shuffles with __activemask() inside divergent code.
extern "C" __global__ void activemask_votes(const int *in, unsigned *out) {
  int t = threadIdx.x;
  unsigned r = 0;
  if (in[t] & 1) {
    unsigned m = __activemask();
    r = __ballot_sync(m, in[t] > 10) ^ (unsigned)__shfl_sync(m, in[t], 31 - __clz((int)m) - 0);
  }
  out[t] = r;
}

// A histogram: shared atomics, a barrier, global atomics.
extern "C" __global__ void histogram_atomics(const int *in, int *hist, int n) {
  __shared__ int h[16];
  int t = threadIdx.x;
  if (t < 16) h[t] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + t; i < n; i += blockDim.x * gridDim.x) atomicAdd(&h[in[i] & 15], 1);
  __syncthreads();
  if (t < 16) atomicAdd(&hist[t], h[t]);
}

// A block reduction with __syncthreads and a final warp shuffle.
extern "C" __global__ void block_reduce(const float *in, float *out) {
  __shared__ float s[256];
  int t = threadIdx.x;
  s[t] = in[blockIdx.x * 256 + t];
  __syncthreads();
  for (int w = 128; w >= 32; w >>= 1) {
    if (t < w) s[t] += s[t + w];
    __syncthreads();
  }
  if (t < 32) {
    float v = s[t];
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    if (t == 0) out[blockIdx.x] = v;
  }
}

// Producer and consumer warps on named barrier 1 (bar.arrive / bar.sync),
// then a block barrier before the roles swap.
extern "C" __global__ void named_barriers(const int *in, int *out) {
  __shared__ int s[64];
  int t = threadIdx.x;
  if (t < 32) {
    s[t] = in[t] * 2;
    asm volatile("bar.arrive 1, 64;" ::: "memory");
  } else {
    asm volatile("bar.sync 1, 64;" ::: "memory");
    out[t] = s[t - 32] + 1;
  }
  __syncthreads();
  if (t >= 32) s[t] = out[t];
  __syncthreads();
  if (t < 32) out[t] = s[t + 32];
}

// The last block (found with a fenced atomic ticket) sums every block's partial result.
extern "C" __global__ void last_block_sum(const float *in, float *partial, unsigned *ticket, float *total) {
  __shared__ float s[64];
  __shared__ bool last;
  int t = threadIdx.x;
  s[t] = in[blockIdx.x * 64 + t];
  __syncthreads();
  for (int w = 32; w > 0; w >>= 1) {
    if (t < w) s[t] += s[t + w];
    __syncthreads();
  }
  if (t == 0) {
    partial[blockIdx.x] = s[0];
    __threadfence();
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

// Each thread owns its output; neighbours are read after a block barrier.
extern "C" __global__ void stencil_global(const float *in, float *tmp, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) tmp[i] = in[i] * 2.0f;
  __syncthreads();
  int lo = blockIdx.x * blockDim.x;
  int hi = lo + blockDim.x - 1;
  if (i < n) {
    float l = i > lo ? tmp[i - 1] : 0.0f;
    float r = (i < hi && i + 1 < n) ? tmp[i + 1] : 0.0f;
    out[i] = l + tmp[i] + r;
  }
}

// Early exit before any barrier, then shuffles among the remaining lanes.
extern "C" __global__ void early_exit_shuffle(const int *in, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned m = __activemask();
  int v = in[i];
  int u = __shfl_sync(m, v, __ffs((int)m) - 1);
  out[i] = v + u;
}

// A local array filled and read by each thread (local memory at -O0).
extern "C" __global__ void local_array(const int *in, int *out) {
  int a[8];
  int t = threadIdx.x;
  for (int k = 0; k < 8; k++) a[k] = in[(t + k) & 63];
  int s = 0;
  for (int k = 0; k < 8; k++) s += a[(k * 3 + t) & 7];
  out[t] = s;
}

// A spin-free flag handoff: the writer fences and sets a flag atomically;
// the reader, in a later barrier phase, acquires it atomically.
extern "C" __global__ void fence_flag(int *data, int *flag, int *out) {
  int t = threadIdx.x;
  if (t == 0) {
    data[0] = 42;
    __threadfence();
    atomicExch(flag, 1);
  }
  __syncthreads();
  if (t == 33) {
    int f = atomicAdd(flag, 0);
    out[0] = f ? data[0] : -1;
  }
}
