// Streams, events, managed memory, cudaMemcpyToSymbol, device printf and (with --assert) a failing
// device assert, in one program (issue 12). Output is deterministic except where a line says
// otherwise. Build: nvcc -arch=sm_90 -cudart shared runtime_features.cu -o runtime_features
#include <cassert>
#include <cstdio>
#include <cstring>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
  printf("%s failed: %s (%s)\n", #x, cudaGetErrorName(e), cudaGetErrorString(e)); return 2; } } while (0)

__constant__ float coef[4];
__device__ int dev_counter;

__global__ void scale(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * coef[0] + coef[1];
}
__global__ void count(int* m, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    m[i] = i * 3;
    atomicAdd(&dev_counter, 1);
  }
}
__global__ void hello(int tag) {
  // one block of 4 threads: lines from one warp come out in lane order
  printf("hello from block %d thread %d tag %d coef %.2f\n", blockIdx.x, threadIdx.x, tag, coef[threadIdx.x]);
}
__global__ void checker(int limit) {
  int v = threadIdx.x;
  assert(v < limit);
}

int main(int argc, char** argv) {
  bool do_assert = argc > 1 && !strcmp(argv[1], "--assert");
  const int n = 1 << 16;
  float h_coef[4] = {2.0f, 1.0f, 0.25f, 0.125f};
  CK(cudaMemcpyToSymbol(coef, h_coef, sizeof h_coef));
  int zero = 0;
  CK(cudaMemcpyToSymbol(dev_counter, &zero, sizeof zero));

  // two streams, each copies its half in, scales it and copies it out
  float *hin, *hout, *din, *dout;
  CK(cudaMallocHost(&hin, n * sizeof(float)));
  CK(cudaMallocHost(&hout, n * sizeof(float)));
  for (int i = 0; i < n; i++) hin[i] = (float)(i % 1000);
  CK(cudaMalloc(&din, n * sizeof(float)));
  CK(cudaMalloc(&dout, n * sizeof(float)));
  cudaStream_t s[2];
  cudaEvent_t start, stop;
  CK(cudaStreamCreate(&s[0]));
  CK(cudaStreamCreate(&s[1]));
  CK(cudaEventCreate(&start));
  CK(cudaEventCreate(&stop));
  CK(cudaEventRecord(start, s[0]));
  int half = n / 2;
  for (int k = 0; k < 2; k++) {
    size_t off = k * half;
    CK(cudaMemcpyAsync(din + off, hin + off, half * sizeof(float), cudaMemcpyHostToDevice, s[k]));
    scale<<<half / 256, 256, 0, s[k]>>>(din + off, dout + off, half);
    CK(cudaGetLastError());
    CK(cudaMemcpyAsync(hout + off, dout + off, half * sizeof(float), cudaMemcpyDeviceToHost, s[k]));
  }
  CK(cudaStreamWaitEvent(s[0], start, 0));
  CK(cudaStreamSynchronize(s[1]));
  CK(cudaEventRecord(stop, s[0]));
  CK(cudaEventSynchronize(stop));
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, start, stop));
  double sum = 0;
  for (int i = 0; i < n; i++) sum += hout[i];
  printf("streams: sum=%.1f out[1]=%.1f out[n-1]=%.1f\n", sum, hout[1], hout[n - 1]);
  printf("events: elapsed > 0: %s\n", ms > 0 ? "yes" : "no");
  printf("event query after sync: %s\n", cudaGetErrorName(cudaEventQuery(stop)));

  // managed memory touched by host and device
  int* m;
  CK(cudaMallocManaged(&m, 1024 * sizeof(int)));
  for (int i = 0; i < 1024; i++) m[i] = -1;
  count<<<4, 256>>>(m, 1000);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  int counter = 0;
  CK(cudaMemcpyFromSymbol(&counter, dev_counter, sizeof counter));
  long long msum = 0;
  for (int i = 0; i < 1024; i++) msum += m[i];
  printf("managed: m[0]=%d m[999]=%d m[1000]=%d sum=%lld counter=%d\n", m[0], m[999], m[1000], msum, counter);

  // device printf
  hello<<<1, 4>>>(7);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  printf("printf kernel done\n");

  if (do_assert) {
    checker<<<1, 32>>>(5);  // threads 5..31 fail the assert
    cudaError_t e1 = cudaGetLastError();
    cudaError_t e2 = cudaDeviceSynchronize();
    printf("assert launch: %s\n", cudaGetErrorName(e1));
    printf("assert sync: %s: %s\n", cudaGetErrorName(e2), cudaGetErrorString(e2));
    cudaError_t e3 = cudaMalloc(&din, 16);
    printf("next call: %s\n", cudaGetErrorName(e3));
    return e2 == cudaSuccess ? 0 : 3;
  }
  CK(cudaFree(m));
  CK(cudaFree(din));
  CK(cudaFree(dout));
  CK(cudaFreeHost(hin));
  CK(cudaFreeHost(hout));
  CK(cudaStreamDestroy(s[0]));
  CK(cudaStreamDestroy(s[1]));
  printf("done\n");
  return 0;
}
