// A kernel with a shared-memory race, launched from a named host function: `warpsim exec
// --check` reports the race with the launch's host call site (the line below marked SITE when
// built with -g). Build: nvcc -g -arch=sm_90 -cudart shared check_site.cu
#include <cstdio>

__global__ void racy(int* out) {
  __shared__ int s[64];
  s[threadIdx.x] = threadIdx.x;
  out[threadIdx.x] = s[63 - threadIdx.x];  // the other warp's store, with no __syncthreads
}

void launch_racy(int* out) {
  racy<<<1, 64>>>(out);  // SITE
}

int main() {
  int* out = nullptr;
  cudaMalloc(&out, 64 * sizeof(int));
  launch_racy(out);
  printf("%s\n", cudaGetErrorName(cudaDeviceSynchronize()));
  return 0;
}
