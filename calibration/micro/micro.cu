// warpsim calibration microbenchmarks (issue 13) and memory-metric probes (issue 11).
// One binary, many kernels. Usage: micro MODE GROUP MANIFEST
//   MODE  time : every config: 3 warm-up launches, 15 timed launches (CUDA events), median
//         ncu  : every config launched exactly once (for Nsight Compute)
//   GROUP all or a group name (atom, local, call, bw, lat, bar, issue, smem, mma, mem11)
// Each config is written to MANIFEST as one JSON object per line, in launch order, so
// that the i-th profiled kernel in an ncu run is the i-th line of the ncu manifest.
#include <cooperative_groups.h>
#include <cuda_fp16.h>
#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>
namespace cg = cooperative_groups;

#define CK(x)                                                                                   \
  do {                                                                                          \
    cudaError_t e_ = (x);                                                                       \
    if (e_ != cudaSuccess) {                                                                    \
      fprintf(stderr, "CUDA error %s at %s:%d: %s\n", #x, __FILE__, __LINE__, cudaGetErrorString(e_)); \
      exit(1);                                                                                  \
    }                                                                                           \
  } while (0)

__device__ __forceinline__ unsigned gtid() { return blockIdx.x * blockDim.x + threadIdx.x; }

// ------------------------------------------------------------------ atomics, global
// MODE 0: one address for the whole grid; 1: one per warp; 2: one per block;
//      3: one per thread, consecutive (a warp covers 128 B); 4: one per thread, 32 B apart
template <int MODE>
__device__ __forceinline__ unsigned atom_index() {
  unsigned t = gtid();
  if (MODE == 0) return 0;
  if (MODE == 1) return t >> 5;
  if (MODE == 2) return blockIdx.x;
  if (MODE == 3) return t;
  return t * 8;
}
// OP 0: atomicAdd int; 1: atomicAdd float; 2: atomicMax int. RET: the return value is used (atom), else red.
template <int MODE, int OP, bool RET>
__global__ void atom_global(int* p, int* out, int iters) {
  unsigned a = atom_index<MODE>();
  int s = 0;
  float fs = 0.f;
  for (int i = 0; i < iters; i++) {
    if (OP == 0) {
      if (RET) s += atomicAdd(p + a, 1); else atomicAdd(p + a, 1);
    } else if (OP == 1) {
      if (RET) fs += atomicAdd((float*)p + a, 1.0f); else atomicAdd((float*)p + a, 1.0f);
    } else {
      if (RET) s += atomicMax(p + a, (int)(gtid() + i)); else atomicMax(p + a, (int)(gtid() + i));
    }
  }
  if (RET && (s == 0x7fffffff || fs == -1.0f)) out[0] = s;
}

// The same, with the address offset loaded from memory (all zeros at run time), so ptxas cannot
// prove the address warp-uniform and does not turn the atomic into a warp-aggregated one
// (for uniform addresses it emits VOTEU.ANY + UFLO + POPC and one REDG per warp).
template <int MODE, int OP, bool RET>
__global__ void atom_global_dyn(int* p, const int* zero, int* out, int iters) {
  unsigned a = atom_index<MODE>() + zero[gtid()];
  int s = 0;
  float fs = 0.f;
  for (int i = 0; i < iters; i++) {
    if (OP == 0) {
      if (RET) s += atomicAdd(p + a, 1); else atomicAdd(p + a, 1);
    } else if (OP == 1) {
      if (RET) fs += atomicAdd((float*)p + a, 1.0f); else atomicAdd((float*)p + a, 1.0f);
    } else {
      if (RET) s += atomicMax(p + a, (int)(gtid() + i)); else atomicMax(p + a, (int)(gtid() + i));
    }
  }
  if (RET && (s == 0x7fffffff || fs == -1.0f)) out[0] = s;
}
template <int MODE, bool RET>
__global__ void atom_shared_dyn(const int* zero, int* out, int iters) {
  __shared__ int s[32 * 33 + 256];
  for (int i = threadIdx.x; i < 32 * 33 + 256; i += blockDim.x) s[i] = 0;
  __syncthreads();
  unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  unsigned a = (MODE == 0 ? 0 : MODE == 1 ? warp : MODE == 2 ? threadIdx.x : lane * 32 + warp) + zero[gtid()];
  int acc = 0;
  for (int i = 0; i < iters; i++) {
    if (RET) acc += atomicAdd(s + a, 1); else atomicAdd(s + a, 1);
  }
  __syncthreads();
  if (threadIdx.x == 0) out[blockIdx.x] = s[0];
  if (RET && acc == 0x7fffffff) out[0] = acc;
}

// ------------------------------------------------------------------ atomics, shared
// MODE 0: one address per block; 1: one per warp; 2: one per thread (no conflict);
//      3: one per thread, lane*32 words apart (32-way bank conflict)
template <int MODE, bool FLT, bool RET>
__global__ void atom_shared(int* out, int iters) {
  __shared__ int s[32 * 33 + 256];
  for (int i = threadIdx.x; i < 32 * 33 + 256; i += blockDim.x) s[i] = 0;
  __syncthreads();
  unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  unsigned a = MODE == 0 ? 0 : MODE == 1 ? warp : MODE == 2 ? threadIdx.x : lane * 32 + warp;
  int acc = 0;
  float facc = 0.f;
  for (int i = 0; i < iters; i++) {
    if (FLT) {
      if (RET) facc += atomicAdd((float*)s + a, 1.0f); else atomicAdd((float*)s + a, 1.0f);
    } else {
      if (RET) acc += atomicAdd(s + a, 1); else atomicAdd(s + a, 1);
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) out[blockIdx.x] = s[0];
  if (RET && (acc == 0x7fffffff || facc == -1.0f)) out[0] = acc;
}

// ------------------------------------------------------------------ local memory
template <int N>
__global__ void local_dyn(const int* in, int* out, int iters) {
  int a[N];
  unsigned t = gtid();
#pragma unroll
  for (int i = 0; i < N; i++) a[i] = in[(t + i) & 1023];
  int s = 0;
  unsigned idx = t;
  for (int i = 0; i < iters; i++) {
    idx = idx * 1664525u + 1013904223u;
    unsigned j = (idx >> 8) & (N - 1);
    s += a[j];
    a[(j + 1) & (N - 1)] = s;
  }
  out[t] = s;
}
// the same arithmetic with the array kept in registers (index resolved by unrolled selects)
__global__ void local_reg16(const int* in, int* out, int iters) {
  int a[16];
  unsigned t = gtid();
#pragma unroll
  for (int i = 0; i < 16; i++) a[i] = in[(t + i) & 1023];
  int s = 0;
  unsigned idx = t;
  for (int i = 0; i < iters; i++) {
    idx = idx * 1664525u + 1013904223u;
    unsigned j = (idx >> 8) & 15;
    int v = 0;
#pragma unroll
    for (int k = 0; k < 16; k++) v = (k == j) ? a[k] : v;
    s += v;
#pragma unroll
    for (int k = 0; k < 16; k++) a[k] = (k == ((j + 1) & 15)) ? s : a[k];
  }
  out[t] = s;
}
// insertion sort of 32 keys in a per-thread local array
__global__ void local_sort32(const unsigned* in, unsigned* out) {
  unsigned a[32];
  unsigned t = gtid();
  for (int i = 0; i < 32; i++) a[i] = in[(t * 32 + i) & ((1 << 20) - 1)];
  for (int i = 1; i < 32; i++) {
    unsigned k = a[i];
    int j = i - 1;
    while (j >= 0 && a[j] > k) { a[j + 1] = a[j]; j--; }
    a[j + 1] = k;
  }
  unsigned h = 0;
  for (int i = 0; i < 32; i++) h = h * 31 + a[i];
  out[t] = h;
}
// register pressure: 48 live accumulators; capped at 32 registers by launch bounds (spills) or not
#define SPILL_BODY                                                   \
  float acc[48];                                                     \
  unsigned t = gtid();                                               \
  _Pragma("unroll") for (int k = 0; k < 48; k++) acc[k] = in[(t + k) & 4095]; \
  for (int i = 0; i < iters; i++) {                                  \
    _Pragma("unroll") for (int k = 0; k < 48; k++) acc[k] = fmaf(acc[k], acc[(k + 7) % 48], 0.5f); \
  }                                                                  \
  float s = 0.f;                                                     \
  _Pragma("unroll") for (int k = 0; k < 48; k++) s += acc[k];        \
  out[t] = s;
__global__ void __launch_bounds__(1024, 2) spill_capped(const float* in, float* out, int iters) { SPILL_BODY }
__global__ void __launch_bounds__(256, 1) spill_free(const float* in, float* out, int iters) { SPILL_BODY }

// ------------------------------------------------------------------ call / ret
__device__ __noinline__ float f_noinline(float x, float y) { return fmaf(x, y, 1.0f); }
__device__ __forceinline__ float f_inline(float x, float y) { return fmaf(x, y, 1.0f); }
__device__ __noinline__ float f_noinline8(float x, float y) {
#pragma unroll
  for (int k = 0; k < 8; k++) x = fmaf(x, y, 1.0f);
  return x;
}
template <int KIND>  // 0 inline 1 fma; 1 noinline 1 fma; 2 noinline 8 fma; 3 inline 8 fma
__global__ void call_k(float* out, float a, int iters) {
  float x = threadIdx.x;
  for (int i = 0; i < iters; i++) {
    if (KIND == 0) x = f_inline(x, a);
    else if (KIND == 1) x = f_noinline(x, a);
    else if (KIND == 2) x = f_noinline8(x, a);
    else {
#pragma unroll
      for (int k = 0; k < 8; k++) x = f_inline(x, a);
    }
  }
  out[gtid()] = x;
}

// ------------------------------------------------------------------ atomics spread over a small array
// Every block adds into the same n = blockDim.x words, word threadIdx.x * STRIDE (a histogram's
// merge step): how the L2 spreads a small, hot array over its atomic units. The offset is loaded
// (zero at run time) so ptxas cannot aggregate; the old value is not used (RED).
template <int STRIDE>
__global__ void atom_spread(int* p, const int* zero, int iters) {
  unsigned a = threadIdx.x * STRIDE + zero[gtid()];
  for (int i = 0; i < iters; i++) atomicAdd(p + a, 1);
}
// ------------------------------------------------------------------ streaming reads at low occupancy
// A grid-stride f64 dot product without unrolling (step is a run-time value): bytes in flight are
// set by blocks per SM, so bandwidth against blocks gives the loaded DRAM latency.
__global__ void stream_dot(const double* a, const double* b, double* out, long long n) {
  double v = 0.0;
  long long step = (long long)gridDim.x * blockDim.x;
  for (long long i = gtid(); i < n; i += step) v = fma(a[i], b[i], v);
  if (v == -1.0) out[0] = v;
}

// ------------------------------------------------------------------ bandwidth
// virtual element v in [0, total) touches element (v*stride) & mask
__global__ void bw_read(const float* __restrict__ in, float* out, long long total, int stride, long long mask) {
  float acc = 0.f;
  long long step = (long long)gridDim.x * blockDim.x;
  for (long long v = gtid(); v < total; v += step) acc += in[(v * stride) & mask];
  if (acc == -1.0f) out[0] = acc;
}
__global__ void bw_write(float* out, long long total, int stride, long long mask) {
  long long step = (long long)gridDim.x * blockDim.x;
  for (long long v = gtid(); v < total; v += step) out[(v * stride) & mask] = (float)v;
}
__global__ void bw_copy(const float* __restrict__ in, float* out, long long total, int stride, long long mask) {
  long long step = (long long)gridDim.x * blockDim.x;
  for (long long v = gtid(); v < total; v += step) out[v] = in[(v * stride) & mask];
}
__global__ void fill_f32(float* p, long long n) {
  long long step = (long long)gridDim.x * blockDim.x;
  for (long long i = gtid(); i < n; i += step) p[i] = (float)(i & 1023) * 0.25f + 1.0f;
}

// ------------------------------------------------------------------ latency (one thread)
__global__ void chase_init(unsigned* next, long long n, long long step) {
  long long s = (long long)gridDim.x * blockDim.x;
  for (long long i = gtid(); i < n; i += s) next[i] = (unsigned)((i + step) & (n - 1));
}
template <int CG>
__global__ void chase(const unsigned* next, long long* out, int steps) {
  unsigned i = 0;
  // warm the TLB / caches with a few hops first
  for (int s = 0; s < 16; s++) i = CG ? __ldcg(next + i) : next[i];
  long long t0 = clock64();
  for (int s = 0; s < steps; s++) i = CG ? __ldcg(next + i) : next[i];
  long long t1 = clock64();
  out[0] = t1 - t0;
  out[1] = i;
}

// ------------------------------------------------------------------ barriers
__global__ void barrier_k(int* out, int iters) {
  int x = threadIdx.x;
  for (int i = 0; i < iters; i++) {
    __syncthreads();
    x ^= i;
  }
  if (x == -12345) out[0] = x;
}

// ------------------------------------------------------------------ issue throughput
template <int CH>
__global__ void fma_f32(float* out, float a, float b, int iters) {
  float x[CH];
#pragma unroll
  for (int k = 0; k < CH; k++) x[k] = threadIdx.x + k;
  for (int i = 0; i < iters; i++) {
#pragma unroll
    for (int k = 0; k < CH; k++) x[k] = fmaf(x[k], a, b);
  }
  float s = 0.f;
#pragma unroll
  for (int k = 0; k < CH; k++) s += x[k];
  if (s == 0.123f) out[gtid()] = s;
}
template <int CH>
__global__ void fma_f64(double* out, double a, double b, int iters) {
  double x[CH];
#pragma unroll
  for (int k = 0; k < CH; k++) x[k] = threadIdx.x + k;
  for (int i = 0; i < iters; i++) {
#pragma unroll
    for (int k = 0; k < CH; k++) x[k] = fma(x[k], a, b);
  }
  double s = 0.;
#pragma unroll
  for (int k = 0; k < CH; k++) s += x[k];
  if (s == 0.123) out[gtid()] = s;
}
// OP 0 sin.approx, 1 ex2.approx, 2 rsqrt.approx
template <int OP, int CH>
__global__ void mufu_k(float* out, int iters) {
  float x[CH];
#pragma unroll
  for (int k = 0; k < CH; k++) x[k] = 0.5f + 0.001f * (threadIdx.x + k);
  for (int i = 0; i < iters; i++) {
#pragma unroll
    for (int k = 0; k < CH; k++) {
      float y;
      if (OP == 0) asm("sin.approx.f32 %0, %1;" : "=f"(y) : "f"(x[k]));
      else if (OP == 1) asm("ex2.approx.f32 %0, %1;" : "=f"(y) : "f"(x[k]));
      else asm("rsqrt.approx.f32 %0, %1;" : "=f"(y) : "f"(x[k]));
      x[k] = y;
    }
  }
  float s = 0.f;
#pragma unroll
  for (int k = 0; k < CH; k++) s += x[k];
  if (s == 0.123f) out[gtid()] = s;
}

// ------------------------------------------------------------------ shared memory by width
template <typename T>
__device__ __forceinline__ float sum_of(T v);
template <> __device__ __forceinline__ float sum_of<float>(float v) { return v; }
template <> __device__ __forceinline__ float sum_of<float2>(float2 v) { return v.x + v.y; }
template <> __device__ __forceinline__ float sum_of<float4>(float4 v) { return v.x + v.y + v.z + v.w; }
template <typename T>
__global__ void smem_width(float* out, int stride, int iters) {
  constexpr int N = 2048;
  __shared__ T s[N];
  float* sf = (float*)s;
  for (int i = threadIdx.x; i < N * (int)(sizeof(T) / 4); i += blockDim.x) sf[i] = (float)(i & 7);
  __syncthreads();
  unsigned lane = threadIdx.x & 31;
  volatile T* vs = s;
  float acc = 0.f;
  for (int i = 0; i < iters; i++) {
    T v;
    if (sizeof(T) == 4) { float f = ((volatile float*)vs)[(lane * stride + i) & (N - 1)]; memcpy(&v, &f, 4); }
    else v = *(T*)&((T*)s)[(lane * stride + i) & (N - 1)];
    acc += sum_of(v);
    if (sizeof(T) != 4) __syncwarp();
  }
  if (acc == -1.0f) out[gtid()] = acc;
}

// ------------------------------------------------------------------ tensor cores
template <int CH>
__global__ void mma_f16(float* out, int iters) {
  unsigned a[4], b[2];
  for (int k = 0; k < 4; k++) a[k] = 0x3c003c00u ^ (threadIdx.x * 7 + k);
  for (int k = 0; k < 2; k++) b[k] = 0x38003800u ^ (threadIdx.x * 3 + k);
  float c[CH][4];
#pragma unroll
  for (int j = 0; j < CH; j++)
    for (int k = 0; k < 4; k++) c[j][k] = 0.f;
  for (int i = 0; i < iters; i++) {
#pragma unroll
    for (int j = 0; j < CH; j++)
      asm volatile(
          "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
          : "+f"(c[j][0]), "+f"(c[j][1]), "+f"(c[j][2]), "+f"(c[j][3])
          : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
  float s = 0.f;
#pragma unroll
  for (int j = 0; j < CH; j++) s += c[j][0] + c[j][1] + c[j][2] + c[j][3];
  if (s == 0.123f) out[gtid()] = s;
}

// ------------------------------------------------------------------ issue 11 memory-metric probes
template <typename T>
__global__ void gvec_ld(const T* __restrict__ in, T* out, int stride) {
  unsigned t = gtid();
  out[t] = in[t * stride];
}
template <typename T>
__global__ void svec_ld(T* out, int stride) {
  constexpr int N = 2048;
  __shared__ T s[N];
  float* sf = (float*)s;
  for (int i = threadIdx.x; i < N * (int)(sizeof(T) / 4); i += blockDim.x) sf[i] = (float)i;
  __syncthreads();
  unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  out[gtid()] = s[(lane * stride + warp) & (N - 1)];
}
template <typename T>
__global__ void svec_st(T* out, int stride) {
  constexpr int N = 2048;
  __shared__ T s[N];
  unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  T v;
  memset(&v, 0, sizeof(T));
  *(float*)&v = (float)threadIdx.x;
  s[(lane * stride + warp) & (N - 1)] = v;
  __syncthreads();
  out[gtid()] = s[threadIdx.x & (N - 1)];
}
__constant__ float c_tab[1024];
// MODE 0: uniform index (same for the warp); 1: index = lane (32 distinct); 2: index = lane & 3 (4 distinct);
//      3: index from a loaded value (data-dependent, divergent)
template <int MODE>
__global__ void const_ld(const int* idx, float* out, int iters) {
  unsigned lane = threadIdx.x & 31;
  float acc = 0.f;
  int d = idx[gtid() & 1023] & 1023;
  for (int i = 0; i < iters; i++) {
    int j = MODE == 0 ? (i * 7) & 1023 : MODE == 1 ? (lane + i * 32) & 1023 : MODE == 2 ? ((lane & 3) + i * 4) & 1023 : (d + i) & 1023;
    acc += c_tab[j];
  }
  out[gtid()] = acc;
}
// warp-aggregated atomic (stream compaction): leader adds the popcount, others get offsets by shuffle
__global__ void wagg_atomic(const unsigned* in, unsigned* out, int* counter) {
  unsigned t = gtid();
  unsigned v = in[t];
  if (v & 1) {
    unsigned m = __activemask();
    int leader = __ffs(m) - 1;
    unsigned lane = threadIdx.x & 31;
    int base = 0;
    if (lane == (unsigned)leader) base = atomicAdd(counter, __popc(m));
    base = __shfl_sync(m, base, leader);
    int pos = base + __popc(m & ((1u << lane) - 1));
    out[pos] = v;
  }
}
__global__ void wagg_atomic_cg(const unsigned* in, unsigned* out, int* counter) {
  unsigned t = gtid();
  unsigned v = in[t];
  if (v & 1) {
    cg::coalesced_group g = cg::coalesced_threads();
    int base = 0;
    if (g.thread_rank() == 0) base = atomicAdd(counter, (int)g.size());
    base = g.shfl(base, 0);
    out[base + g.thread_rank()] = v;
  }
}
__global__ void naive_atomic_compact(const unsigned* in, unsigned* out, int* counter) {
  unsigned t = gtid();
  unsigned v = in[t];
  if (v & 1) out[atomicAdd(counter, 1)] = v;
}
__global__ void hash_fill(unsigned* p, int n) {
  unsigned i = gtid();
  if (i < (unsigned)n) {
    unsigned x = i * 0x9E3779B1u;
    x ^= x >> 16; x *= 0x85EBCA6Bu; x ^= x >> 13; x *= 0xC2B2AE35u; x ^= x >> 16;
    p[i] = x;
  }
}

// ------------------------------------------------------------------ fixed costs
__global__ void empty_k() {}
__global__ void store_only(float* out) { out[gtid()] = 1.0f; }

// ------------------------------------------------------------------ host side
struct Cfg {
  std::string group, name, kernel, params;  // params: JSON object text
  dim3 grid, block;
  const void* func;
  std::function<void()> launch;
  std::function<std::string()> result;  // optional: JSON value read back after the launch
};
static std::vector<Cfg> cfgs;
static void add(const char* group, std::string name, std::string kernel, const void* func, dim3 g, dim3 b, std::string params,
                std::function<void()> l, std::function<std::string()> r = nullptr) {
  cfgs.push_back(Cfg{group, name, kernel, params, g, b, func, l, r});
}
static std::string P(const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return buf;
}
#define L(K, G, B, ...) [=] { K<<<G, B>>>(__VA_ARGS__); }

int main(int argc, char** argv) {
  if (argc < 4) { fprintf(stderr, "usage: micro time|ncu GROUP MANIFEST\n"); return 2; }
  bool ncu = !strcmp(argv[1], "ncu");
  std::string want = argv[2];
  FILE* mf = fopen(argv[3], "w");
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));

  // buffers
  int *ip, *iout;
  CK(cudaMalloc(&ip, 64 << 20));
  CK(cudaMalloc(&iout, 64 << 20));
  CK(cudaMemset(ip, 0, 64 << 20));
  CK(cudaMemset(iout, 0, 64 << 20));
  // the 2 GiB buffers only where the bandwidth group runs (smaller state for Nsight Compute to save and restore)
  const bool bwg = want == "all" || want == "bw" || want == "stream";
  const long long BIG = bwg ? 1ll << 29 : 1ll << 24;  // floats: 2 GiB or 64 MiB
  float *big, *fout;
  CK(cudaMalloc(&big, BIG * 4));
  CK(cudaMalloc(&fout, BIG * 4));
  fill_f32<<<sms * 8, 256>>>(big, BIG);
  CK(cudaMemset(fout, 0, BIG * 4));
  unsigned* chain;
  CK(cudaMalloc(&chain, (want == "all" || want == "lat" ? 1ll << 28 : 1ll << 10) * 4));
  long long* lat;
  CK(cudaMalloc(&lat, 64));
  unsigned *hin, *hout;
  CK(cudaMalloc(&hin, (1 << 22) * 4));
  CK(cudaMalloc(&hout, (1 << 22) * 4));
  hash_fill<<<(1 << 22) / 256, 256>>>(hin, 1 << 22);
  {
    float h[1024];
    for (int i = 0; i < 1024; i++) h[i] = i * 0.5f;
    CK(cudaMemcpyToSymbol(c_tab, h, sizeof h));
  }
  CK(cudaDeviceSynchronize());

  // ---- atomics, global
  {
    dim3 g(sms * 4), b(256);
    int it = 4;
    const char* mn[] = {"same", "warp", "block", "lane", "lane32B"};
    const char* on[] = {"add_i32", "add_f32", "max_i32"};
#define AG(M, O, R)                                                                                                      \
  add("atom", P("atom_g_%s_%s_%s", mn[M], on[O], R ? "ret" : "red"), "atom_global", (const void*)atom_global<M, O, R>, g, b, \
      P("{\"mode\":\"%s\",\"op\":\"%s\",\"ret\":%s,\"iters\":%d}", mn[M], on[O], R ? "true" : "false", it),                  \
      [=] { CK(cudaMemsetAsync(ip, 0, 64 << 20)); atom_global<M, O, R><<<g, b>>>(ip, iout, it); });
#define AGO(M) AG(M, 0, false) AG(M, 0, true) AG(M, 1, false) AG(M, 1, true) AG(M, 2, false) AG(M, 2, true)
    AGO(0) AGO(1) AGO(2) AGO(3) AGO(4)
    // same-address at smaller grids (contention scaling)
    for (int nb : {1, 8, 33, 132}) {
      dim3 g2(nb);
      add("atom", P("atom_g_same_add_i32_red_grid%d", nb), "atom_global", (const void*)atom_global<0, 0, false>, g2, b,
          P("{\"mode\":\"same\",\"op\":\"add_i32\",\"ret\":false,\"iters\":%d}", it),
          [=] { atom_global<0, 0, false><<<g2, b>>>(ip, iout, it); });
      add("atom", P("atom_g_same_add_i32_ret_grid%d", nb), "atom_global", (const void*)atom_global<0, 0, true>, g2, b,
          P("{\"mode\":\"same\",\"op\":\"add_i32\",\"ret\":true,\"iters\":%d}", it),
          [=] { atom_global<0, 0, true><<<g2, b>>>(ip, iout, it); });
    }
  }
  // ---- atomics, shared
  {
    dim3 g(sms * 4), b(256);
    int it = 64;
    const char* mn[] = {"block", "warp", "lane", "lane_conflict32"};
#define AS(M, F, R)                                                                                                        \
  add("atom", P("atom_s_%s_%s_%s", mn[M], F ? "add_f32" : "add_i32", R ? "ret" : "red"), "atom_shared",                       \
      (const void*)atom_shared<M, F, R>, g, b,                                                                               \
      P("{\"mode\":\"%s\",\"op\":\"%s\",\"ret\":%s,\"iters\":%d}", mn[M], F ? "add_f32" : "add_i32", R ? "true" : "false", it), \
      [=] { atom_shared<M, F, R><<<g, b>>>(iout, it); });
#define ASO(M) AS(M, false, false) AS(M, false, true) AS(M, true, false) AS(M, true, true)
    ASO(0) ASO(1) ASO(2) ASO(3)
  }
  // ---- local memory, spills
  {
    dim3 g(sms * 4), b(256);
    int it = 256;
    add("local", "local_dyn16", "local_dyn<16>", (const void*)local_dyn<16>, g, b, P("{\"N\":16,\"iters\":%d}", it), L(local_dyn<16>, g, b, ip, iout, it));
    add("local", "local_dyn64", "local_dyn<64>", (const void*)local_dyn<64>, g, b, P("{\"N\":64,\"iters\":%d}", it), L(local_dyn<64>, g, b, ip, iout, it));
    add("local", "local_dyn256", "local_dyn<256>", (const void*)local_dyn<256>, g, b, P("{\"N\":256,\"iters\":%d}", it), L(local_dyn<256>, g, b, ip, iout, it));
    add("local", "local_reg16", "local_reg16", (const void*)local_reg16, g, b, P("{\"N\":16,\"iters\":%d}", it), L(local_reg16, g, b, ip, iout, it));
    add("local", "local_sort32", "local_sort32", (const void*)local_sort32, g, b, "{\"keys\":32}", L(local_sort32, g, b, hin, hout));
    add("local", "spill_capped", "spill_capped", (const void*)spill_capped, g, b, "{\"iters\":64,\"live\":48}", L(spill_capped, g, b, big, fout, 64));
    add("local", "spill_free", "spill_free", (const void*)spill_free, g, b, "{\"iters\":64,\"live\":48}", L(spill_free, g, b, big, fout, 64));
  }
  // ---- call/ret
  {
    dim3 g(sms * 4), b(256);
    int it = 1024;
    add("call", "call_inline1", "call_k<0>", (const void*)call_k<0>, g, b, P("{\"fma_per_call\":1,\"iters\":%d}", it), L(call_k<0>, g, b, fout, 0.999f, it));
    add("call", "call_noinline1", "call_k<1>", (const void*)call_k<1>, g, b, P("{\"fma_per_call\":1,\"iters\":%d}", it), L(call_k<1>, g, b, fout, 0.999f, it));
    add("call", "call_noinline8", "call_k<2>", (const void*)call_k<2>, g, b, P("{\"fma_per_call\":8,\"iters\":%d}", it), L(call_k<2>, g, b, fout, 0.999f, it));
    add("call", "call_inline8", "call_k<3>", (const void*)call_k<3>, g, b, P("{\"fma_per_call\":8,\"iters\":%d}", it), L(call_k<3>, g, b, fout, 0.999f, it));
    dim3 g1(sms), b1(32);
    add("call", "call_noinline1_1warp", "call_k<1>", (const void*)call_k<1>, g1, b1, P("{\"fma_per_call\":1,\"iters\":%d}", it), L(call_k<1>, g1, b1, fout, 0.999f, it));
    add("call", "call_inline1_1warp", "call_k<0>", (const void*)call_k<0>, g1, b1, P("{\"fma_per_call\":1,\"iters\":%d}", it), L(call_k<0>, g1, b1, fout, 0.999f, it));
  }
  // ---- bandwidth
  {
    dim3 g(sms * 16), b(256);
    long long total = 1ll << 24;
    for (int where = 0; where < 2; where++) {
      long long mask = where == 0 ? BIG - 1 : (1ll << 21) - 1;  // 2 GiB span (DRAM) or 8 MiB (L2-resident)
      const char* wn = where == 0 ? "dram" : "l2";
      for (int s : {1, 2, 4, 8, 16, 32}) {
        std::string pj = P("{\"total\":%lld,\"stride\":%d,\"span_bytes\":%lld}", total, s, (mask + 1) * 4);
        add("bw", P("bw_read_%s_s%d", wn, s), "bw_read", (const void*)bw_read, g, b, pj, L(bw_read, g, b, big, fout, total, s, mask));
        add("bw", P("bw_write_%s_s%d", wn, s), "bw_write", (const void*)bw_write, g, b, pj, L(bw_write, g, b, fout, total, s, mask));
        add("bw", P("bw_copy_%s_s%d", wn, s), "bw_copy", (const void*)bw_copy, g, b, pj, L(bw_copy, g, b, big, fout, total, s, mask));
      }
    }
    // the reference table's shape: 32M lanes, out[i] = in[i*stride]
    long long t32 = 1ll << 25;
    for (int s : {1, 4, 32}) {
      std::string pj = P("{\"total\":%lld,\"stride\":%d,\"span_bytes\":%lld}", t32, s, BIG * 4);
      dim3 g2((unsigned)(t32 / 256));
      add("bw", P("bw_copy_ref32M_s%d", s), "bw_copy", (const void*)bw_copy, g2, b, pj, L(bw_copy, g2, b, big, fout, t32, s, BIG - 1));
    }
  }
  // ---- atomics spread over a small hot array, and streaming reads by blocks per SM
  {
    dim3 b(256);
    for (int nb : {2, 4}) {
      dim3 g(sms * nb);
      for (int it : {1, 16}) {
#define ASP(S)                                                                                                             \
  add("atomspread", P("atomspread_s%d_b%d_it%d", S, nb, it), P("atom_spread<%d>", S), (const void*)atom_spread<S>, g, b,       \
      P("{\"stride_words\":%d,\"blocks_per_sm\":%d,\"iters\":%d}", S, nb, it),                                             \
      [=] { CK(cudaMemsetAsync(ip, 0, 64 << 20)); atom_spread<S><<<g, b>>>(ip, iout, it); });
        ASP(1) ASP(2) ASP(8) ASP(32) ASP(64) ASP(256)
      }
    }
    // a, b: two 8 MiB halves of `big` as doubles (1M each), the dot_f64 validation case's size, and 8x that
    for (long long n : {1ll << 20, 1ll << 23}) {
      for (int nb : {1, 2, 4, 8}) {
        dim3 g(sms * nb);
        const double* a = (const double*)big;
        const double* bb = (const double*)big + n;
        add("stream", P("stream_dot_n%lld_b%d", n, nb), "stream_dot", (const void*)stream_dot, g, b,
            P("{\"n\":%lld,\"blocks_per_sm\":%d}", n, nb), L(stream_dot, g, b, a, bb, (double*)fout, n));
      }
    }
  }
  // ---- latency
  {
    dim3 g(1), b(1);
    int steps = 2048;
    struct { const char* n; long long elems; int cg; } L_[] = {
        {"lat_l1_16KB", 4096, 0}, {"lat_l2_4MB_cg", 1 << 20, 1}, {"lat_l2_16MB_cg", 1 << 22, 1}, {"lat_dram_1GB", 1 << 28, 0}, {"lat_dram_1GB_cg", 1 << 28, 1}};
    for (auto& x : L_) {
      long long n = x.elems;
      int cgm = x.cg;
      long long stepv = n <= 4096 ? 33 : 4099 * 8 + 1;  // 4-byte words: far hops beyond the L1 case
      add("lat", x.n, cgm ? "chase<1>" : "chase<0>", cgm ? (const void*)chase<1> : (const void*)chase<0>, g, b,
          P("{\"footprint_bytes\":%lld,\"steps\":%d,\"hop_words\":%lld,\"ld\":\"%s\"}", n * 4, steps, stepv, cgm ? "cg" : "ca"),
          [=] {
            chase_init<<<1024, 256>>>(chain, n, stepv);
            if (cgm) chase<1><<<1, 1>>>(chain, lat, steps); else chase<0><<<1, 1>>>(chain, lat, steps);
          },
          [=] {
            long long h[2];
            CK(cudaMemcpy(h, lat, 16, cudaMemcpyDeviceToHost));
            return P("{\"cycles\":%lld,\"cycles_per_hop\":%.2f}", h[0], (double)h[0] / steps);
          });
    }
  }
  // ---- barriers
  for (int w : {1, 2, 4, 8, 16, 32}) {
    dim3 g(sms), b(w * 32);
    add("bar", P("barrier_w%d", w), "barrier_k", (const void*)barrier_k, g, b, P("{\"warps_per_block\":%d,\"iters\":4096}", w), L(barrier_k, g, b, iout, 4096));
  }
  for (int w : {4, 16}) {  // two blocks per SM
    dim3 g(sms * 2), b(w * 32);
    add("bar", P("barrier_w%d_2blk", w), "barrier_k", (const void*)barrier_k, g, b, P("{\"warps_per_block\":%d,\"blocks_per_sm\":2,\"iters\":4096}", w), L(barrier_k, g, b, iout, 4096));
  }
  // ---- issue throughput
  for (int w : {1, 2, 4, 8, 16, 32, 48, 64}) {
    int wb = w > 32 ? w / 2 : w;
    dim3 g(sms * (w / wb)), b(wb * 32);
    int it = 2048;
    std::string pj = P("{\"warps_per_sm\":%d,\"iters\":%d", w, it);
    add("issue", P("fma_dep_w%d", w), "fma_f32<1>", (const void*)fma_f32<1>, g, b, pj + ",\"chains\":1}", L(fma_f32<1>, g, b, fout, 0.999f, 0.5f, it));
    add("issue", P("fma_ind8_w%d", w), "fma_f32<8>", (const void*)fma_f32<8>, g, b, pj + ",\"chains\":8}", L(fma_f32<8>, g, b, fout, 0.999f, 0.5f, it));
    if (w == 1 || w == 4 || w == 16 || w == 32 || w == 64) {
      int it2 = 512;
      std::string pj2 = P("{\"warps_per_sm\":%d,\"iters\":%d", w, it2);
      add("issue", P("dfma_dep_w%d", w), "fma_f64<1>", (const void*)fma_f64<1>, g, b, pj2 + ",\"chains\":1}", L(fma_f64<1>, g, b, (double*)fout, 0.999, 0.5, it2));
      add("issue", P("dfma_ind8_w%d", w), "fma_f64<8>", (const void*)fma_f64<8>, g, b, pj2 + ",\"chains\":8}", L(fma_f64<8>, g, b, (double*)fout, 0.999, 0.5, it2));
      add("issue", P("mufu_sin_dep_w%d", w), "mufu_k<0,1>", (const void*)mufu_k<0, 1>, g, b, pj2 + ",\"chains\":1}", [=] { mufu_k<0, 1><<<g, b>>>(fout, it2); });
      add("issue", P("mufu_sin_ind8_w%d", w), "mufu_k<0,8>", (const void*)mufu_k<0, 8>, g, b, pj2 + ",\"chains\":8}", [=] { mufu_k<0, 8><<<g, b>>>(fout, it2); });
      add("issue", P("mufu_ex2_ind8_w%d", w), "mufu_k<1,8>", (const void*)mufu_k<1, 8>, g, b, pj2 + ",\"chains\":8}", [=] { mufu_k<1, 8><<<g, b>>>(fout, it2); });
      add("issue", P("mufu_rsqrt_ind8_w%d", w), "mufu_k<2,8>", (const void*)mufu_k<2, 8>, g, b, pj2 + ",\"chains\":8}", [=] { mufu_k<2, 8><<<g, b>>>(fout, it2); });
      add("mma", P("mma_f16_dep_w%d", w), "mma_f16<1>", (const void*)mma_f16<1>, g, b, pj2 + ",\"chains\":1}", L(mma_f16<1>, g, b, fout, it2));
      add("mma", P("mma_f16_ind4_w%d", w), "mma_f16<4>", (const void*)mma_f16<4>, g, b, pj2 + ",\"chains\":4}", L(mma_f16<4>, g, b, fout, it2));
    }
  }
  // ---- shared memory by width and stride
  {
    dim3 g(sms * 2), b(256);
    int it = 1024;
    for (int s : {0, 1, 2, 4, 8, 32}) {
      std::string pj = P("{\"stride_elems\":%d,\"iters\":%d", s, it);
      add("smem", P("smem_b32_s%d", s), "smem_width<float>", (const void*)smem_width<float>, g, b, pj + ",\"bytes\":4}", L(smem_width<float>, g, b, fout, s, it));
      add("smem", P("smem_b64_s%d", s), "smem_width<float2>", (const void*)smem_width<float2>, g, b, pj + ",\"bytes\":8}", L(smem_width<float2>, g, b, fout, s, it));
      add("smem", P("smem_b128_s%d", s), "smem_width<float4>", (const void*)smem_width<float4>, g, b, pj + ",\"bytes\":16}", L(smem_width<float4>, g, b, fout, s, it));
    }
  }
  // ---- issue 11 probes: vector loads, shared vectors, constant memory, warp-aggregated atomics
  {
    dim3 g(64), b(128);
    for (int s : {1, 2, 4}) {
      std::string pj = P("{\"stride_elems\":%d", s);
      add("mem11", P("gld_b32_s%d", s), "gvec_ld<float>", (const void*)gvec_ld<float>, g, b, pj + ",\"bytes\":4}", L(gvec_ld<float>, g, b, big, fout, s));
      add("mem11", P("gld_v2_s%d", s), "gvec_ld<float2>", (const void*)gvec_ld<float2>, g, b, pj + ",\"bytes\":8}", L(gvec_ld<float2>, g, b, (float2*)big, (float2*)fout, s));
      add("mem11", P("gld_v4_s%d", s), "gvec_ld<float4>", (const void*)gvec_ld<float4>, g, b, pj + ",\"bytes\":16}", L(gvec_ld<float4>, g, b, (float4*)big, (float4*)fout, s));
    }
    for (int s : {0, 1, 2, 4, 8, 32}) {
      std::string pj = P("{\"stride_elems\":%d", s);
      add("mem11", P("sld_b32_s%d", s), "svec_ld<float>", (const void*)svec_ld<float>, g, b, pj + ",\"bytes\":4}", L(svec_ld<float>, g, b, fout, s));
      add("mem11", P("sld_v2_s%d", s), "svec_ld<float2>", (const void*)svec_ld<float2>, g, b, pj + ",\"bytes\":8}", L(svec_ld<float2>, g, b, (float2*)fout, s));
      add("mem11", P("sld_v4_s%d", s), "svec_ld<float4>", (const void*)svec_ld<float4>, g, b, pj + ",\"bytes\":16}", L(svec_ld<float4>, g, b, (float4*)fout, s));
      add("mem11", P("sst_b32_s%d", s), "svec_st<float>", (const void*)svec_st<float>, g, b, pj + ",\"bytes\":4}", L(svec_st<float>, g, b, fout, s));
      add("mem11", P("sst_v2_s%d", s), "svec_st<float2>", (const void*)svec_st<float2>, g, b, pj + ",\"bytes\":8}", L(svec_st<float2>, g, b, (float2*)fout, s));
      add("mem11", P("sst_v4_s%d", s), "svec_st<float4>", (const void*)svec_st<float4>, g, b, pj + ",\"bytes\":16}", L(svec_st<float4>, g, b, (float4*)fout, s));
    }
    const char* cn[] = {"uniform", "lane", "lane_and_3", "data"};
#define CL(M) add("mem11", P("const_%s", cn[M]), P("const_ld<%d>", M), (const void*)const_ld<M>, g, b, P("{\"mode\":\"%s\",\"iters\":8}", cn[M]), L(const_ld<M>, g, b, (const int*)hin, fout, 8));
    CL(0) CL(1) CL(2) CL(3)
    dim3 g2(256), b2(256);
    add("mem11", "wagg_atomic", "wagg_atomic", (const void*)wagg_atomic, g2, b2, "{\"n\":65536,\"pred\":\"hash_u32(i)&1\"}",
        [=] { CK(cudaMemsetAsync(ip, 0, 4)); wagg_atomic<<<g2, b2>>>(hin, hout, ip); });
    add("mem11", "wagg_atomic_cg", "wagg_atomic_cg", (const void*)wagg_atomic_cg, g2, b2, "{\"n\":65536,\"pred\":\"hash_u32(i)&1\"}",
        [=] { CK(cudaMemsetAsync(ip, 0, 4)); wagg_atomic_cg<<<g2, b2>>>(hin, hout, ip); });
    add("mem11", "naive_atomic_compact", "naive_atomic_compact", (const void*)naive_atomic_compact, g2, b2, "{\"n\":65536,\"pred\":\"hash_u32(i)&1\"}",
        [=] { CK(cudaMemsetAsync(ip, 0, 4)); naive_atomic_compact<<<g2, b2>>>(hin, hout, ip); });
  }

  // ---- atomics whose address ptxas cannot prove uniform (no compiler warp aggregation)
  {
    dim3 g(sms * 4), b(256);
    int it = 4;
    int* zero = iout + (8 << 20);  // 32 MiB of zeros (iout is zeroed; atomics write only its first word)
    const char* mn[] = {"same", "warp", "block", "lane", "lane32B"};
    const char* on[] = {"add_i32", "add_f32", "max_i32"};
#define AD(M, O, R)                                                                                                      \
  add("atomdyn", P("atomdyn_g_%s_%s_%s", mn[M], on[O], R ? "ret" : "red"), "atom_global_dyn", (const void*)atom_global_dyn<M, O, R>, g, b, \
      P("{\"mode\":\"%s\",\"op\":\"%s\",\"ret\":%s,\"iters\":%d,\"address\":\"not provably uniform\"}", mn[M], on[O], R ? "true" : "false", it), \
      [=] { CK(cudaMemsetAsync(ip, 0, 64 << 20)); atom_global_dyn<M, O, R><<<g, b>>>(ip, zero, iout, it); });
    AD(0, 0, false) AD(0, 0, true) AD(0, 2, false) AD(0, 2, true) AD(0, 1, false)
    AD(1, 0, false) AD(1, 0, true) AD(1, 2, false)
    AD(2, 0, false) AD(2, 0, true) AD(2, 2, false)
    AD(3, 0, false) AD(3, 0, true)
    for (int nb : {1, 8, 33, 132}) {
      dim3 g2(nb);
      add("atomdyn", P("atomdyn_g_same_add_i32_red_grid%d", nb), "atom_global_dyn", (const void*)atom_global_dyn<0, 0, false>, g2, b,
          P("{\"mode\":\"same\",\"op\":\"add_i32\",\"ret\":false,\"iters\":%d,\"address\":\"not provably uniform\"}", it),
          [=] { atom_global_dyn<0, 0, false><<<g2, b>>>(ip, zero, iout, it); });
      add("atomdyn", P("atomdyn_g_same_add_i32_ret_grid%d", nb), "atom_global_dyn", (const void*)atom_global_dyn<0, 0, true>, g2, b,
          P("{\"mode\":\"same\",\"op\":\"add_i32\",\"ret\":true,\"iters\":%d,\"address\":\"not provably uniform\"}", it),
          [=] { atom_global_dyn<0, 0, true><<<g2, b>>>(ip, zero, iout, it); });
    }
    int its = 64;
    const char* sn[] = {"block", "warp", "lane", "lane_conflict32"};
#define ASD(M, R)                                                                                                        \
  add("atomdyn", P("atomdyn_s_%s_add_i32_%s", sn[M], R ? "ret" : "red"), "atom_shared_dyn", (const void*)atom_shared_dyn<M, R>, g, b, \
      P("{\"mode\":\"%s\",\"op\":\"add_i32\",\"ret\":%s,\"iters\":%d,\"address\":\"not provably uniform\"}", sn[M], R ? "true" : "false", its), \
      [=] { atom_shared_dyn<M, R><<<g, b>>>(zero, iout, its); });
    ASD(0, false) ASD(0, true) ASD(1, false) ASD(1, true) ASD(2, false) ASD(3, false)
  }

  // ---- fixed costs and loop-length scaling (separates launch/drain overhead from per-iteration cost)
  for (int w : {1, 4, 32, 64}) {
    int wb = w > 32 ? w / 2 : w;
    dim3 g(sms * (w / wb)), b(wb * 32);
    add("base", P("empty_w%d", w), "empty_k", (const void*)empty_k, g, b, P("{\"warps_per_sm\":%d}", w), L(empty_k, g, b));
    add("base", P("store_only_w%d", w), "store_only", (const void*)store_only, g, b, P("{\"warps_per_sm\":%d}", w), L(store_only, g, b, fout));
    for (int it : {512, 8192}) {
      std::string pj = P("{\"warps_per_sm\":%d,\"iters\":%d", w, it);
      add("base", P("fma_dep_w%d_it%d", w, it), "fma_f32<1>", (const void*)fma_f32<1>, g, b, pj + ",\"chains\":1}", L(fma_f32<1>, g, b, fout, 0.999f, 0.5f, it));
      add("base", P("fma_ind8_w%d_it%d", w, it), "fma_f32<8>", (const void*)fma_f32<8>, g, b, pj + ",\"chains\":8}", L(fma_f32<8>, g, b, fout, 0.999f, 0.5f, it));
    }
  }
  for (int w : {1, 8, 32}) {
    dim3 g(sms), b(w * 32);
    add("base", P("barrier_w%d_it512", w), "barrier_k", (const void*)barrier_k, g, b, P("{\"warps_per_block\":%d,\"iters\":512}", w), L(barrier_k, g, b, iout, 512));
  }
  {
    dim3 g(sms * 4), b(256);
    add("base", "atom_g_same_add_f32_red_it1", "atom_global", (const void*)atom_global<0, 1, false>, g, b,
        "{\"mode\":\"same\",\"op\":\"add_f32\",\"ret\":false,\"iters\":1}", [=] { atom_global<0, 1, false><<<g, b>>>(ip, iout, 1); });
    add("base", "atom_g_same_add_i32_red_it16", "atom_global", (const void*)atom_global<0, 0, false>, g, b,
        "{\"mode\":\"same\",\"op\":\"add_i32\",\"ret\":false,\"iters\":16}", [=] { atom_global<0, 0, false><<<g, b>>>(ip, iout, 16); });
    add("base", "call_noinline1_it4096", "call_k<1>", (const void*)call_k<1>, g, b, "{\"fma_per_call\":1,\"iters\":4096}", L(call_k<1>, g, b, fout, 0.999f, 4096));
    add("base", "call_inline1_it4096", "call_k<0>", (const void*)call_k<0>, g, b, "{\"fma_per_call\":1,\"iters\":4096}", L(call_k<0>, g, b, fout, 0.999f, 4096));
  }

  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  int idx = 0;
  for (auto& c : cfgs) {
    if (want != "all" && want != c.group) continue;
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, c.func));
    std::string timing = "null";
    if (!ncu) {
      for (int i = 0; i < 3; i++) c.launch();
      CK(cudaDeviceSynchronize());
      std::vector<float> ts;
      for (int i = 0; i < 15; i++) {
        CK(cudaEventRecord(e0));
        c.launch();
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        ts.push_back(ms * 1000.f);
      }
      std::sort(ts.begin(), ts.end());
      timing = P("{\"median_us\":%.3f,\"min_us\":%.3f,\"max_us\":%.3f,\"n\":15}", ts[7], ts[0], ts[14]);
    } else {
      c.launch();
    }
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::string res = c.result ? c.result() : "null";
    fprintf(mf,
            "{\"index\":%d,\"group\":\"%s\",\"name\":\"%s\",\"kernel\":\"%s\",\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u],"
            "\"params\":%s,\"num_regs\":%d,\"local_bytes\":%zu,\"static_shared_bytes\":%zu,\"event_time\":%s,\"result\":%s}\n",
            idx, c.group.c_str(), c.name.c_str(), c.kernel.c_str(), c.grid.x, c.grid.y, c.grid.z, c.block.x, c.block.y, c.block.z,
            c.params.c_str(), fa.numRegs, fa.localSizeBytes, fa.sharedSizeBytes, timing.c_str(), res.c_str());
    fflush(mf);
    idx++;
  }
  fclose(mf);
  fprintf(stderr, "%s: %d configs\n", argv[1], idx);
  return 0;
}
