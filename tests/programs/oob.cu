// An out-of-bounds kernel: the program prints what cudaGetLastError and cudaDeviceSynchronize
// return, their strings, and that the error is sticky (issue 12).
// Build: nvcc -arch=sm_90 -cudart shared oob.cu -o oob
#include <cstdio>

__global__ void oob_store(float* p, long long far) {
  if (threadIdx.x == 0 && blockIdx.x == 0) p[far] = 1.0f;  // far past the allocation: unmapped
}

int main() {
  float* p;
  cudaError_t e = cudaMalloc(&p, 64 * sizeof(float));
  printf("cudaMalloc: %s\n", cudaGetErrorName(e));
  oob_store<<<1, 32>>>(p, 1ll << 36);
  e = cudaGetLastError();
  printf("after launch, cudaGetLastError: %s (%s)\n", cudaGetErrorName(e), cudaGetErrorString(e));
  e = cudaDeviceSynchronize();
  printf("cudaDeviceSynchronize: %s (%d): %s\n", cudaGetErrorName(e), (int)e, cudaGetErrorString(e));
  e = cudaGetLastError();
  printf("then cudaGetLastError: %s\n", cudaGetErrorName(e));
  e = cudaGetLastError();
  printf("and again: %s\n", cudaGetErrorName(e));
  float h = 0;
  e = cudaMemcpy(&h, p, sizeof h, cudaMemcpyDeviceToHost);
  printf("cudaMemcpy after the fault: %s\n", cudaGetErrorName(e));
  e = cudaFree(p);
  printf("cudaFree: %s\n", cudaGetErrorName(e));
  return 1;
}
