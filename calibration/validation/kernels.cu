// warpsim validation set (issue 13): realistic kernels written for this repository, in the
// way common CUDA projects write them. Never used for fitting the timing model.
// Build: nvcc -ptx -lineinfo -O3 -arch=sm_90 kernels.cu -o kernels.ptx
#include <cuda_fp16.h>

#define FULL 0xffffffffu

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(FULL, v, o);
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(FULL, v, o));
  return v;
}

// 1. Shared-memory tree reduction, two loads per thread, one partial per block (blockDim 256).
extern "C" __global__ void v_reduce_tree(const float* in, float* partial, int n) {
  __shared__ float s[256];
  unsigned t = threadIdx.x;
  unsigned i = blockIdx.x * blockDim.x * 2 + t;
  float v = 0.f;
  if (i < n) v = in[i];
  if (i + blockDim.x < n) v += in[i + blockDim.x];
  s[t] = v;
  __syncthreads();
  for (unsigned st = blockDim.x / 2; st > 0; st >>= 1) {
    if (t < st) s[t] += s[t + st];
    __syncthreads();
  }
  if (t == 0) partial[blockIdx.x] = s[0];
}

// 2. Grid-stride warp-shuffle reduction: warps reduce by shuffles, warp sums through shared memory.
extern "C" __global__ void v_reduce_shfl(const float* in, float* partial, int n) {
  __shared__ float ws[32];
  float v = 0.f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) v += in[i];
  v = warp_sum(v);
  int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  if (lane == 0) ws[w] = v;
  __syncthreads();
  if (w == 0) {
    v = lane < (blockDim.x >> 5) ? ws[lane] : 0.f;
    v = warp_sum(v);
    if (lane == 0) partial[blockIdx.x] = v;
  }
}

// 3. Block-wide inclusive scan of ints (blockDim 512): warp scans by shuffle, then a scan of warp totals.
extern "C" __global__ void v_scan_block(const int* in, int* out, int n) {
  __shared__ int wsum[32];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  int v = i < n ? in[i] : 0;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    int y = __shfl_up_sync(FULL, v, o);
    if (lane >= o) v += y;
  }
  if (lane == 31) wsum[w] = v;
  __syncthreads();
  if (w == 0) {
    int nw = blockDim.x >> 5;
    int s = lane < nw ? wsum[lane] : 0;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      int y = __shfl_up_sync(FULL, s, o);
      if (lane >= o) s += y;
    }
    if (lane < nw) wsum[lane] = s;
  }
  __syncthreads();
  if (w > 0) v += wsum[w - 1];
  if (i < n) out[i] = v;
}

// 4. Tiled SGEMM C = A*B, row-major, TILE 16, one output per thread (dims multiples of 16).
#define TILE 16
extern "C" __global__ void v_sgemm_tiled(const float* A, const float* B, float* C, int M, int N, int K) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
  float acc = 0.f;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    As[threadIdx.y][threadIdx.x] = A[row * K + k0 + threadIdx.x];
    Bs[threadIdx.y][threadIdx.x] = B[(k0 + threadIdx.y) * N + col];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TILE; k++) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  C[row * N + col] = acc;
}

// 4b. Register-blocked SGEMM: 64x64 block tile, 4x4 outputs per thread (256 threads), K tile 16.
extern "C" __global__ void v_sgemm_reg4x4(const float* A, const float* B, float* C, int M, int N, int K) {
  __shared__ float As[16][64 + 4];
  __shared__ float Bs[16][64];
  int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  int bm = blockIdx.y * 64, bn = blockIdx.x * 64;
  float acc[4][4] = {};
  for (int k0 = 0; k0 < K; k0 += 16) {
    for (int l = threadIdx.x; l < 64 * 16; l += 256) {
      int r = l / 16, c = l % 16;
      As[c][r] = A[(bm + r) * K + k0 + c];
      int rb = l / 64, cb = l % 64;
      Bs[rb][cb] = B[(k0 + rb) * N + bn + cb];
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < 16; k++) {
      float a[4], b[4];
#pragma unroll
      for (int i = 0; i < 4; i++) a[i] = As[k][ty * 4 + i];
#pragma unroll
      for (int j = 0; j < 4; j++) b[j] = Bs[k][tx * 4 + j];
#pragma unroll
      for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 4; i++)
#pragma unroll
    for (int j = 0; j < 4; j++) C[(bm + ty * 4 + i) * N + bn + tx * 4 + j] = acc[i][j];
}

// 5. 5-point Jacobi stencil on an nx*ny grid, boundary copied (block 32x8).
extern "C" __global__ void v_stencil5(const float* in, float* out, int nx, int ny) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= nx || y >= ny) return;
  int i = y * nx + x;
  if (x == 0 || y == 0 || x == nx - 1 || y == ny - 1) {
    out[i] = in[i];
    return;
  }
  out[i] = 0.2f * (in[i] + in[i - 1] + in[i + 1] + in[i - nx] + in[i + nx]);
}

// 6. Bitonic sort of 1024 keys per block in shared memory (blockDim 512, two keys per thread).
extern "C" __global__ void v_bitonic_smem(const unsigned* in, unsigned* out) {
  __shared__ unsigned s[1024];
  unsigned base = blockIdx.x * 1024, t = threadIdx.x;
  s[t] = in[base + t];
  s[t + 512] = in[base + t + 512];
  __syncthreads();
  for (unsigned k = 2; k <= 1024; k <<= 1) {
    for (unsigned j = k >> 1; j > 0; j >>= 1) {
      unsigned i = 2 * t - (t & (j - 1));
      unsigned p = i + j;
      bool up = (i & k) == 0;
      unsigned a = s[i], b = s[p];
      if ((a > b) == up) {
        s[i] = b;
        s[p] = a;
      }
      __syncthreads();
    }
  }
  out[base + t] = s[t];
  out[base + t + 512] = s[t + 512];
}

// 7. Naive transpose: coalesced reads, strided writes (block 32x8, each thread 4 rows).
extern "C" __global__ void v_transpose_naive(const float* in, float* out, int w, int h) {
  int x = blockIdx.x * 32 + threadIdx.x, y0 = blockIdx.y * 32 + threadIdx.y;
  for (int y = y0; y < y0 + 32; y += 8)
    if (x < w && y < h) out[x * h + y] = in[y * w + x];
}

// 8. Tiled transpose through a padded shared tile (block 32x8).
extern "C" __global__ void v_transpose_tiled(const float* in, float* out, int w, int h) {
  __shared__ float tile[32][33];
  int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8)
    if (x < w && y + j < h) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * w + x];
  __syncthreads();
  x = blockIdx.y * 32 + threadIdx.x;
  y = blockIdx.x * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8)
    if (x < h && y + j < w) out[(y + j) * h + x] = tile[threadIdx.x][threadIdx.y + j];
}

// 9. Row softmax, one block of 256 threads per row: max, sum of exp, normalise.
extern "C" __global__ void v_softmax_rows(const float* in, float* out, int cols) {
  __shared__ float red[32];
  const float* r = in + (size_t)blockIdx.x * cols;
  float* o = out + (size_t)blockIdx.x * cols;
  int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = blockDim.x >> 5;
  float m = -INFINITY;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, r[c]);
  m = warp_max(m);
  if (lane == 0) red[w] = m;
  __syncthreads();
  m = lane < nw ? red[lane] : -INFINITY;
  m = warp_max(m);
  __syncthreads();
  float s = 0.f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) s += expf(r[c] - m);
  s = warp_sum(s);
  if (lane == 0) red[w] = s;
  __syncthreads();
  s = lane < nw ? red[lane] : 0.f;
  s = warp_sum(s);
  float inv = 1.f / s;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) o[c] = expf(r[c] - m) * inv;
}

// 10. Layer norm, one warp per row, weight and bias per column.
extern "C" __global__ void v_layernorm_rows(const float* x, const float* gamma, const float* beta, float* y, int rows, int cols) {
  int row = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5), lane = threadIdx.x & 31;
  if (row >= rows) return;
  const float* xr = x + (size_t)row * cols;
  float s = 0.f;
  for (int c = lane; c < cols; c += 32) s += xr[c];
  float mean = warp_sum(s) / cols;
  float v = 0.f;
  for (int c = lane; c < cols; c += 32) {
    float d = xr[c] - mean;
    v += d * d;
  }
  float rstd = rsqrtf(warp_sum(v) / cols + 1e-5f);
  for (int c = lane; c < cols; c += 32) y[(size_t)row * cols + c] = (xr[c] - mean) * rstd * gamma[c] + beta[c];
}

// 11. Small attention, one block (128 threads) per head: S = Q K^T / sqrt(d), row softmax, O = S V.
//     seq = 64, d = 64, f16 inputs (one fused QKV buffer), f32 accumulation and output.
#define ASEQ 64
#define AD 64
extern "C" __global__ void v_attention_small(const __half* QKV, float* O, int heads) {
  // fused QKV layout: Q for all heads, then K, then V, each [heads][ASEQ][AD]
  const __half* Q = QKV;
  const __half* K = QKV + (size_t)heads * ASEQ * AD;
  const __half* V = QKV + (size_t)2 * heads * ASEQ * AD;
  __shared__ float Ks[ASEQ][AD + 1];
  __shared__ __half Vs[ASEQ][AD + 2];
  __shared__ float S[ASEQ][ASEQ + 1];
  size_t off = (size_t)blockIdx.x * ASEQ * AD;
  for (int l = threadIdx.x; l < ASEQ * AD; l += blockDim.x) {
    Ks[l / AD][l % AD] = __half2float(K[off + l]);
    Vs[l / AD][l % AD] = V[off + l];
  }
  __syncthreads();
  const float scale = rsqrtf((float)AD);
  for (int l = threadIdx.x; l < ASEQ * ASEQ; l += blockDim.x) {
    int i = l / ASEQ, j = l % ASEQ;
    float acc = 0.f;
    for (int k = 0; k < AD; k++) acc = fmaf(__half2float(Q[off + i * AD + k]), Ks[j][k], acc);
    S[i][j] = acc * scale;
  }
  __syncthreads();
  int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  for (int i = w; i < ASEQ; i += blockDim.x >> 5) {
    float a = S[i][lane], b = S[i][lane + 32];
    float m = warp_max(fmaxf(a, b));
    a = __expf(a - m);
    b = __expf(b - m);
    float inv = 1.f / warp_sum(a + b);
    S[i][lane] = a * inv;
    S[i][lane + 32] = b * inv;
  }
  __syncthreads();
  for (int l = threadIdx.x; l < ASEQ * AD; l += blockDim.x) {
    int i = l / AD, k = l % AD;
    float acc = 0.f;
    for (int j = 0; j < ASEQ; j++) acc = fmaf(S[i][j], __half2float(Vs[j][k]), acc);
    O[off + l] = acc;
  }
}

// 12. 256-bin byte histogram with per-block shared-memory bins, merged by global atomics.
extern "C" __global__ void v_histogram_smem(const unsigned* data, unsigned* bins, int n) {
  __shared__ unsigned h[256];
  h[threadIdx.x] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    unsigned v = data[i];
    atomicAdd(&h[v & 255], 1u);
    atomicAdd(&h[(v >> 8) & 255], 1u);
    atomicAdd(&h[(v >> 16) & 255], 1u);
    atomicAdd(&h[v >> 24], 1u);
  }
  __syncthreads();
  if (h[threadIdx.x]) atomicAdd(&bins[threadIdx.x], h[threadIdx.x]);
}

// 13. SpMV CSR, one thread per row (scalar kernel).
extern "C" __global__ void v_spmv_csr_scalar(const int* rowptr, const int* cols, const float* vals, const float* x, float* y, int rows) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  float s = 0.f;
  for (int k = rowptr[r]; k < rowptr[r + 1]; k++) s += vals[k] * x[cols[k]];
  y[r] = s;
}

// 14. SpMV CSR, one warp per row (vector kernel).
extern "C" __global__ void v_spmv_csr_vector(const int* rowptr, const int* cols, const float* vals, const float* x, float* y, int rows) {
  int r = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
  if (r >= rows) return;
  float s = 0.f;
  for (int k = rowptr[r] + lane; k < rowptr[r + 1]; k += 32) s += vals[k] * x[cols[k]];
  s = warp_sum(s);
  if (lane == 0) y[r] = s;
}

// 15. f64 dot product partials (grid-stride, shuffle reduction in double).
extern "C" __global__ void v_dot_f64(const double* a, const double* b, double* partial, int n) {
  __shared__ double ws[32];
  double v = 0.0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) v = fma(a[i], b[i], v);
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(FULL, v, o);
  int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  if (lane == 0) ws[w] = v;
  __syncthreads();
  if (w == 0) {
    v = lane < (blockDim.x >> 5) ? ws[lane] : 0.0;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(FULL, v, o);
    if (lane == 0) partial[blockIdx.x] = v;
  }
}

// 16. Triangular-style wavefront: each block of 16 threads walks an anti-diagonal DP (Needleman-Wunsch-like
//     scoring over a 16x16 tile per block), half the threads idle on short diagonals.
extern "C" __global__ void v_nw_tile16(const int* seqa, const int* seqb, int* score) {
  __shared__ int H[17][17];
  int t = threadIdx.x;
  const int* a = seqa + blockIdx.x * 16;
  const int* b = seqb + blockIdx.x * 16;
  H[0][t + 1] = -(t + 1);
  H[t + 1][0] = -(t + 1);
  if (t == 0) H[0][0] = 0;
  __syncthreads();
  for (int d = 0; d < 31; d++) {
    int i = t + 1, j = d - t + 1;
    if (j >= 1 && j <= 16) {
      int m = H[i - 1][j - 1] + ((a[i - 1] & 3) == (b[j - 1] & 3) ? 1 : -1);
      int del = H[i - 1][j] - 1, ins = H[i][j - 1] - 1;
      H[i][j] = max(m, max(del, ins));
    }
    __syncthreads();
  }
  for (int j = 0; j < 16; j++) score[blockIdx.x * 256 + t * 16 + j] = H[t + 1][j + 1];
}
