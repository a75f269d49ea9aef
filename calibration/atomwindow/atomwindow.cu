// Hot sets of L 128-byte lines, every warp adding into one whole line per request
// (32 consecutive words: 4 sectors), lines taken in turn over the grid, L from 4
// (512 B) to 8192 (1 MB). The L2's atomic units bound the rate; how it grows with
// the span tests the model's rule for spreading addresses over them (512-byte
// chunks, each 32 KB window on 32 of 80 units). Not used for fitting.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void hot_lines(int* p, const int* zero, int lines, int iters) {
  unsigned warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
  int z = zero[blockIdx.x * blockDim.x + threadIdx.x];  // zero: keeps ptxas from proving anything
  for (int i = 0; i < iters; i++) {
    unsigned line = (warp + 7u * i) % (unsigned)lines;
    atomicAdd(p + line * 32 + lane + z, 1);
  }
}

int main() {
  const int blocks = 528, threads = 256, iters = 16;
  int *p, *zero;
  cudaMalloc(&p, 1 << 20);
  cudaMalloc(&zero, blocks * threads * sizeof(int));
  cudaMemset(zero, 0, blocks * threads * sizeof(int));
  for (int lines = 4; lines <= 8192; lines *= 2) {
    cudaMemset(p, 0, 1 << 20);
    hot_lines<<<blocks, threads>>>(p, zero, lines, iters);
    cudaDeviceSynchronize();
    int first = 0;
    cudaMemcpy(&first, p, sizeof(int), cudaMemcpyDeviceToHost);
    long long adds = (long long)blocks * threads * iters;
    printf("lines %5d (%7d bytes): word 0 got %d of %lld adds\n", lines, lines * 128, first, adds);
  }
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) { printf("error %s\n", cudaGetErrorString(e)); return 1; }
  return 0;
}
