// Vector add with a checksum: the simplest whole CUDA program (issue 12).
// Build: nvcc -arch=sm_90 -cudart shared vector_add.cu -o vector_add
#include <cstdio>
#include <cstdlib>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
  fprintf(stderr, "%s failed: %s (%s)\n", #x, cudaGetErrorName(e), cudaGetErrorString(e)); return 1; } } while (0)

__global__ void vadd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

int main() {
  const int n = 1 << 20;
  size_t bytes = n * sizeof(float);
  float* ha = (float*)malloc(bytes);
  float* hb = (float*)malloc(bytes);
  float* hc = (float*)malloc(bytes);
  for (int i = 0; i < n; i++) { ha[i] = 0.5f * i; hb[i] = 1.0f / (1 + (i % 97)); }
  float *da, *db, *dc;
  CK(cudaMalloc(&da, bytes));
  CK(cudaMalloc(&db, bytes));
  CK(cudaMalloc(&dc, bytes));
  CK(cudaMemcpy(da, ha, bytes, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(db, hb, bytes, cudaMemcpyHostToDevice));
  int threads = 256, blocks = (n + threads - 1) / threads;
  vadd<<<blocks, threads>>>(da, db, dc, n);
  CK(cudaGetLastError());
  CK(cudaMemcpy(hc, dc, bytes, cudaMemcpyDeviceToHost));
  double sum = 0;
  int bad = 0;
  for (int i = 0; i < n; i++) {
    sum += hc[i];
    if (hc[i] != ha[i] + hb[i]) bad++;
  }
  printf("vector_add: n=%d blocks=%d threads=%d\n", n, blocks, threads);
  printf("c[0]=%.6f c[1]=%.6f c[n-1]=%.6f\n", hc[0], hc[1], hc[n - 1]);
  printf("checksum=%.6f mismatches=%d\n", sum, bad);
  CK(cudaFree(da));
  CK(cudaFree(db));
  CK(cudaFree(dc));
  free(ha); free(hb); free(hc);
  printf("%s\n", bad ? "FAILED" : "PASSED");
  return bad ? 1 : 0;
}
