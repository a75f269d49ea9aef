// Where do the H200's "bank conflicts" on conflict-free shared-memory code come from?
// Each kernel does the same conflict-free shared traffic (lane i reads and writes word i
// of its warp's row, 32 consecutive words: one wavefront per instruction); they differ in
// what else the SM does meanwhile. Built and profiled by run_bankprobe.sh.
#include <cstdio>
#include <cuda_runtime.h>

#define ITERS 256

// Shared memory only.
__global__ void smem_only(float* out) {
  __shared__ float s_[1024];
  volatile float* s = s_;  // every access goes to shared memory
  int t = threadIdx.x;
  s[t] = t;
  __syncthreads();
  float acc = 0.f;
  for (int i = 0; i < ITERS; i++) {
    acc += s[t];
    s[t] = acc;
  }
  out[blockIdx.x * blockDim.x + t] = acc;
}

// The same, with a coalesced global load per iteration through L1 (ld.global.ca).
__global__ void smem_with_l1_loads(const float* __restrict__ in, float* out, int n) {
  __shared__ float s_[1024];
  volatile float* s = s_;  // every access goes to shared memory
  int t = threadIdx.x;
  s[t] = t;
  __syncthreads();
  float acc = 0.f;
  int g = blockIdx.x * blockDim.x + t;
  for (int i = 0; i < ITERS; i++) {
    acc += s[t] + __ldca(&in[(g + i * 4096) % n]);
    s[t] = acc;
  }
  out[g] = acc;
}

// The same global loads, but cached at L2 only (ld.global.cg): no L1 data-bank use.
__global__ void smem_with_l2_loads(const float* __restrict__ in, float* out, int n) {
  __shared__ float s_[1024];
  volatile float* s = s_;  // every access goes to shared memory
  int t = threadIdx.x;
  s[t] = t;
  __syncthreads();
  float acc = 0.f;
  int g = blockIdx.x * blockDim.x + t;
  for (int i = 0; i < ITERS; i++) {
    acc += s[t] + __ldcg(&in[(g + i * 4096) % n]);
    s[t] = acc;
  }
  out[g] = acc;
}

// Global loads and shared traffic in separate phases, split by a barrier.
__global__ void smem_then_loads(const float* __restrict__ in, float* out, int n) {
  __shared__ float s_[1024];
  volatile float* s = s_;  // every access goes to shared memory
  int t = threadIdx.x;
  s[t] = t;
  __syncthreads();
  float acc = 0.f;
  for (int i = 0; i < ITERS; i++) {
    acc += s[t];
    s[t] = acc;
  }
  __syncthreads();
  int g = blockIdx.x * blockDim.x + t;
  float b = 0.f;
  for (int i = 0; i < ITERS; i++) b += __ldca(&in[(g + i * 4096) % n]);
  out[g] = acc + b;
}

int main(int argc, char** argv) {
  int n = 1 << 22;
  float *in, *out;
  cudaMalloc(&in, n * sizeof(float));
  cudaMalloc(&out, n * sizeof(float));
  cudaMemset(in, 0, n * sizeof(float));
  for (int threads : {32, 256, 1024}) {
    int blocks = 132 * 8;
    smem_only<<<blocks, threads>>>(out);
    smem_with_l1_loads<<<blocks, threads>>>(in, out, n);
    smem_with_l2_loads<<<blocks, threads>>>(in, out, n);
    smem_then_loads<<<blocks, threads>>>(in, out, n);
  }
  cudaError_t e = cudaDeviceSynchronize();
  printf("%s\n", cudaGetErrorName(e));
  return e != cudaSuccess;
}
