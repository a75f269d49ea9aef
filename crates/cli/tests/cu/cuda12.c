/* A CUDA 12 program's runtime calls, as linked against CUDA 12's libcudart.so.12 (its
 * versioned symbols, `cudaMalloc@libcudart.so.12`), and CUDA 12's cudaDeviceProp: under
 * warpsim exec it loads warpsim's runtime as libcudart.so.12. Each answer is checked against
 * another way to it. Build: cc -I CUDA12/include cuda12.c -L CUDA12/lib -l:libcudart.so.12 */
#include <stdio.h>
#include <string.h>
#include <cuda_runtime_api.h>

static int failures = 0;
#define CHECK(what, cond) do { int ok_ = (cond); printf("%s %s\n", ok_ ? "ok  " : "FAIL", what); failures += !ok_; } while (0)

int main(void) {
  int v = 0;
  CHECK("cudaRuntimeGetVersion is CUDA 12's", cudaRuntimeGetVersion(&v) == cudaSuccess && v / 1000 == 12);
  struct cudaDeviceProp p;
  memset(&p, 0xff, sizeof p);
  CHECK("cudaGetDeviceProperties (_v2)", cudaGetDeviceProperties(&p, 0) == cudaSuccess);
  int a = -1;
  CHECK("warpSize", cudaDeviceGetAttribute(&a, cudaDevAttrWarpSize, 0) == cudaSuccess && p.warpSize == a);
  CHECK("multiProcessorCount", cudaDeviceGetAttribute(&a, cudaDevAttrMultiProcessorCount, 0) == cudaSuccess && p.multiProcessorCount == a);
  CHECK("clockRate (CUDA 12's field)", cudaDeviceGetAttribute(&a, cudaDevAttrClockRate, 0) == cudaSuccess && p.clockRate == a);
  CHECK("maxBlocksPerMultiProcessor (after the 12-only fields)",
        cudaDeviceGetAttribute(&a, cudaDevAttrMaxBlocksPerMultiprocessor, 0) == cudaSuccess && p.maxBlocksPerMultiProcessor == a);
  CHECK("clusterLaunch (the last field but one)",
        cudaDeviceGetAttribute(&a, cudaDevAttrClusterLaunch, 0) == cudaSuccess && p.clusterLaunch == a);
  CHECK("the reserved words are zero", p.reserved[0] == 0 && p.reserved[62] == 0);
  size_t free_b = 0, total_b = 0;
  CHECK("cudaMemGetInfo", cudaMemGetInfo(&free_b, &total_b) == cudaSuccess && total_b == p.totalGlobalMem);
  int *d = NULL, h[64], back[64];
  for (int i = 0; i < 64; i++) h[i] = i * i;
  CHECK("cudaMalloc", cudaMalloc((void**)&d, sizeof h) == cudaSuccess);
  CHECK("cudaMemcpy both ways", cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice) == cudaSuccess &&
                                    cudaMemcpy(back, d, sizeof back, cudaMemcpyDeviceToHost) == cudaSuccess && !memcmp(h, back, sizeof h));
  CHECK("cudaMemset", cudaMemset(d, 0, sizeof h) == cudaSuccess && cudaMemcpy(back, d, sizeof back, cudaMemcpyDeviceToHost) == cudaSuccess && back[63] == 0);
  CHECK("cudaFree", cudaFree(d) == cudaSuccess);
  CHECK("cudaGetErrorName", !strcmp(cudaGetErrorName(cudaErrorInvalidValue), "cudaErrorInvalidValue"));
  printf("%d failed\n", failures);
  return failures != 0;
}
