// The seed 001 experiment as a host program (issue 12): one block of T threads per launch; every
// thread writes clock64() and __activemask() into its own slot; the host prints, per block size,
// the warps, the lanes in the last warp, its active mask and the distinct clock64() values.
// Build: nvcc -arch=sm_90 -cudart shared seed001_warps.cu -o seed001_warps
#include <cstdio>
#include <set>
#include <vector>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
  fprintf(stderr, "%s failed: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)

__global__ void probe(long long* clk, unsigned* mask) {
  unsigned t = threadIdx.x;
  long long c = clock64();
  unsigned m = __activemask();
  clk[t] = c;
  mask[t] = m;
}

int main() {
  const int sizes[] = {32, 33, 48, 64, 256};
  long long* dclk;
  unsigned* dmask;
  CK(cudaMalloc(&dclk, 1024 * sizeof(long long)));
  CK(cudaMalloc(&dmask, 1024 * sizeof(unsigned)));
  printf("%-20s %6s %24s %16s %24s %28s\n", "Threads in the block", "Warps", "Lanes in the last warp", "Its active mask",
         "Distinct clock64 values", "Lanes agreeing within warps");
  for (int t : sizes) {
    probe<<<1, t>>>(dclk, dmask);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<long long> clk(t);
    std::vector<unsigned> mask(t);
    CK(cudaMemcpy(clk.data(), dclk, t * sizeof(long long), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(mask.data(), dmask, t * sizeof(unsigned), cudaMemcpyDeviceToHost));
    int warps = (t + 31) / 32;
    int last = t - (warps - 1) * 32;
    std::set<long long> distinct(clk.begin(), clk.end());
    bool agree = true;
    for (int i = 0; i < t; i++) agree &= clk[i] == clk[i & ~31];
    printf("%-20d %6d %24d %#16.8x %24zu %28s\n", t, warps, last, mask[(warps - 1) * 32], distinct.size(), agree ? "yes" : "no");
  }
  CK(cudaFree(dclk));
  CK(cudaFree(dmask));
  return 0;
}
