// What `warpsim exec` keeps of a launch that ends in a failing assert (its printf output, its
// warp instructions, a report page, a trace event), template instances kept apart in the table,
// and more launches than the report's default page limit (20).
// Build: nvcc -arch=sm_90 -cudart shared exec_faults.cu -o exec_faults
#include <cassert>
#include <cstdio>

template <typename T>
__global__ void axpy(T a, const T* x, T* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
__global__ void tick(int* c) { atomicAdd(c, 1); }
__global__ void speak_then_fail(int limit) {
  printf("before the assert: thread %d\n", threadIdx.x);
  assert(threadIdx.x < limit);
}

int main() {
  float* xf;
  double* xd;
  int* c;
  cudaMalloc(&xf, 64 * sizeof(float));
  cudaMalloc(&xd, 64 * sizeof(double));
  cudaMalloc(&c, sizeof(int));
  cudaMemset(xf, 0, 64 * sizeof(float));
  cudaMemset(xd, 0, 64 * sizeof(double));
  cudaMemset(c, 0, sizeof(int));
  axpy<float><<<1, 64>>>(2.0f, xf, xf, 64);
  axpy<double><<<1, 64>>>(2.0, xd, xd, 64);
  for (int k = 0; k < 22; k++) tick<<<1, 32>>>(c);
  int h = 0;
  cudaMemcpy(&h, c, sizeof h, cudaMemcpyDeviceToHost);
  printf("ticks: %d\n", h);
  speak_then_fail<<<1, 32>>>(30);  // threads 30 and 31 fail
  cudaError_t e = cudaDeviceSynchronize();
  printf("sync: %s\n", cudaGetErrorName(e));
  return 0;
}
