// `__managed__` variables: the host reads and writes them directly, kernels see the host's
// writes and the host sees the kernels'. Prints "ok ..." per check and "N failed" at the end.
#include <cstdio>

__managed__ int counter = 5;
__managed__ float table[4] = {1, 2, 3, 4};
__device__ int plain = 7;

__global__ void bump() {
  atomicAdd(&counter, 1);
  // Block 0 alone: a second block doing the same would race with it (on the H200 too).
  if (blockIdx.x == 0 && threadIdx.x < 4) table[threadIdx.x] *= 2;
  if (blockIdx.x == 0 && threadIdx.x == 0) plain += counter > 0;
}

static int failed = 0;
static void check(bool ok, const char* what) {
  printf("%s %s\n", ok ? "ok" : "FAIL", what);
  failed += !ok;
}

int main() {
  check(counter == 5 && table[3] == 4.0f, "initialisers are visible to the host before any launch");
  bump<<<1, 64>>>();
  check(cudaDeviceSynchronize() == cudaSuccess, "launch");
  check(counter == 69, "the kernel's atomics reach the host");
  check(table[0] == 2.0f && table[3] == 8.0f, "the kernel's stores reach the host");
  counter = 100;
  table[1] = -1.0f;
  bump<<<2, 32>>>();
  check(cudaDeviceSynchronize() == cudaSuccess, "second launch");
  check(counter == 164, "the host's store reaches the kernel");
  check(table[1] == -2.0f, "the host's array store reaches the kernel");
  int p = 0;
  check(cudaMemcpyFromSymbol(&p, plain, sizeof p) == cudaSuccess && p == 9, "a __device__ variable beside them");
  printf("%d failed\n", failed);
  return failed != 0;
}
