// Kernels of the kinds issue 11 names, written for this repository: cooperative-groups tiles,
// partial-mask collectives (labeled partitions, coalesced groups), IEEE division and square
// root, vector loads and stores, constant-memory loads. Run on the H200 from exactly this PTX
// (run_kinds11.sh); cases.json holds its output bytes and Nsight Compute counts.
// Build: nvcc -ptx -lineinfo -O3 -arch=sm_90 kernels.cu -o kernels.ptx
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

// 1. Per-tile sums and votes over tiled_partition<8> and <16> of each warp.
extern "C" __global__ void k_tile_reduce(const float* in, float* sums8, unsigned* ballots16, int n) {
  cg::thread_block block = cg::this_thread_block();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? in[i] : 0.f;
  cg::thread_block_tile<8> t8 = cg::tiled_partition<8>(block);
  float s = v;
  for (int o = t8.size() / 2; o > 0; o >>= 1) s += t8.shfl_down(s, o);
  if (t8.thread_rank() == 0 && i < n) sums8[i / 8] = s;
  cg::thread_block_tile<16> t16 = cg::tiled_partition<16>(block);
  unsigned b = t16.ballot(v > 0.5f);
  int anyv = t16.any(v > 0.9f);
  if (t16.thread_rank() == 0 && i < n) ballots16[i / 16] = b | (anyv << 31);
}

// 2. cg::reduce over labeled partitions: lanes grouped by a data-dependent label (a partial
// mask of a converged warp), each group's sum and maximum written by its leader.
extern "C" __global__ void k_labeled_reduce(const unsigned* keys, const int* vals, int* sums, int* maxs, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  cg::coalesced_group active = cg::coalesced_threads();
  unsigned label = keys[i] & 3;
  cg::coalesced_group g = cg::labeled_partition(active, label);
  int v = vals[i] & 0xffff;
  int s = cg::reduce(g, v, cg::plus<int>());
  int m = cg::reduce(g, v, cg::greater<int>());
  if (g.thread_rank() == 0) {
    int w = i / 32;
    sums[w * 4 + label] = s;
    maxs[w * 4 + label] = m;
  }
}

// 3. Warp-aggregated atomics under divergence: a coalesced group of the lanes whose key passes.
extern "C" __global__ void k_coalesced_count(const unsigned* keys, unsigned* counts, unsigned* slot_of, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned k = keys[i];
  if ((k & 7) < 3) {
    cg::coalesced_group g = cg::coalesced_threads();
    unsigned base = 0;
    if (g.thread_rank() == 0) base = atomicAdd(&counts[k & 1], g.size());
    base = g.shfl(base, 0);
    slot_of[i] = g.thread_rank() + (g.size() << 16);
    (void)base;
  } else {
    slot_of[i] = 0xffffffffu;
  }
}

// 4. IEEE single and double division and square root (no fast math): x / y, sqrt(x), 1 / y.
extern "C" __global__ void k_ieee_div_sqrt(const float* x, const float* y, float* q, float* r, float* inv,
                                            double* qd, double* rd, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float a = x[i] * 64.f - 32.f, b = y[i] * 8.f - 4.f;
  q[i] = a / b;
  r[i] = sqrtf(fabsf(a));
  inv[i] = 1.f / b;
  double ad = (double)a * 1.000001, bd = (double)b;
  qd[i] = ad / bd;
  rd[i] = sqrt(fabs(ad));
}

// 5. Vector loads and stores: float4 and float2 through reinterpret_cast, as vectorised copies do.
extern "C" __global__ void k_vector_axpy(const float* x, const float* y, float* out4, float* out2, float a, int n4) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n4) return;
  float4 u = reinterpret_cast<const float4*>(x)[i];
  float4 v = reinterpret_cast<const float4*>(y)[i];
  reinterpret_cast<float4*>(out4)[i] = make_float4(a * u.x + v.x, a * u.y + v.y, a * u.z + v.z, a * u.w + v.w);
  float2 p = reinterpret_cast<const float2*>(x)[i];
  reinterpret_cast<float2*>(out2)[i] = make_float2(p.y, p.x);
}

// 6. A 1D convolution with its 9 taps in __constant__ memory (uniform index: the constant cache).
__constant__ float c_taps[9] = {0.05f, 0.1f, 0.15f, 0.2f, 0.0f, -0.2f, -0.15f, -0.1f, -0.05f};
extern "C" __global__ void k_conv_const(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float s = 0.f;
#pragma unroll
  for (int k = 0; k < 9; k++) {
    int j = min(max(i + k - 4, 0), n - 1);
    s += c_taps[k] * in[j];
  }
  out[i] = s;
}

// 7. A lookup in __constant__ memory with a per-lane (divergent) index.
__constant__ unsigned c_table[64] = {
    0x9e3779b1u, 0x85ebca6bu, 0xc2b2ae35u, 0x27d4eb2fu, 0x165667b1u, 0xd3a2646cu, 0xfd7046c5u, 0xb55a4f09u,
    1u, 2u, 3u, 5u, 8u, 13u, 21u, 34u, 55u, 89u, 144u, 233u, 377u, 610u, 987u, 1597u,
    2584u, 4181u, 6765u, 10946u, 17711u, 28657u, 46368u, 75025u, 121393u, 196418u, 317811u, 514229u,
    7u, 11u, 13u, 17u, 19u, 23u, 29u, 31u, 37u, 41u, 43u, 47u, 53u, 59u, 61u, 67u,
    71u, 73u, 79u, 83u, 89u, 97u, 101u, 103u};
extern "C" __global__ void k_const_lookup(const unsigned* keys, unsigned* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned k = keys[i];
  out[i] = c_table[k & 63] ^ c_table[(k >> 8) & 7];
}

// 8. Block reduction through shared memory with cooperative groups (tile sums, then warp 0).
extern "C" __global__ void k_cg_block_sum(const float* in, float* partial, int n) {
  __shared__ float warp_sums[32];
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? in[i] : 0.f;
  v = cg::reduce(warp, v, cg::plus<float>());
  if (warp.thread_rank() == 0) warp_sums[warp.meta_group_rank()] = v;
  block.sync();
  if (warp.meta_group_rank() == 0) {
    float w = warp.thread_rank() < warp.meta_group_size() ? warp_sums[warp.thread_rank()] : 0.f;
    w = cg::reduce(warp, w, cg::plus<float>());
    if (warp.thread_rank() == 0) partial[blockIdx.x] = w;
  }
}
