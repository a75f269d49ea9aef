// Per-warp clock64() at kernel entry for one block of T threads, repeated:
// shows how a block's warps start on an SM (the stagger between warps).
#include <cstdio>
#include <vector>
#include <algorithm>
__global__ void probe(long long* clk, unsigned* wid) {
  long long c = clock64();
  unsigned w; asm volatile("mov.u32 %0, %%warpid;" : "=r"(w));
  clk[threadIdx.x] = c; wid[threadIdx.x] = w;
}
__global__ void probe2(long long* clk, unsigned* wid) {
  // same, but after a block-wide barrier: all warps resident and released together
  __syncthreads();
  long long c = clock64();
  unsigned w; asm volatile("mov.u32 %0, %%warpid;" : "=r"(w));
  clk[threadIdx.x] = c; wid[threadIdx.x] = w;
}
int main() {
  long long* d; unsigned* dw; cudaMalloc(&d, 1024*8); cudaMalloc(&dw, 1024*4);
  int sizes[] = {32, 33, 48, 64, 96, 128, 160, 256, 512, 1024};
  for (int k = 0; k < 2; k++)
  for (int t : sizes) for (int rep = 0; rep < 4; rep++) {
    if (k == 0) probe<<<1, t>>>(d, dw); else probe2<<<1, t>>>(d, dw);
    cudaDeviceSynchronize();
    std::vector<long long> c(t); std::vector<unsigned> w(t);
    cudaMemcpy(c.data(), d, t*8, cudaMemcpyDeviceToHost);
    cudaMemcpy(w.data(), dw, t*4, cudaMemcpyDeviceToHost);
    long long m = *std::min_element(c.begin(), c.end());
    printf("%s T=%d rep=%d:", k ? "after_sync" : "entry", t, rep);
    for (int i = 0; i < t; i += 32) printf(" w%u:+%lld", w[i], c[i] - m);
    std::vector<long long> s(c); std::sort(s.begin(), s.end());
    printf("  distinct=%ld\n", std::unique(s.begin(), s.end()) - s.begin());
  }
  return 0;
}
