// Golden vectors for PTX floating-point numerics (issue 11), recorded on the H200.
// Usage: numerics OUTDIR   -> OUTDIR/in_f32_unary.bin, in_f32_binary.bin, in_f64_unary.bin, in_f64_binary.bin,
//                            OUTDIR/<op>.bin (one result per input, raw little-endian bits), OUTDIR/index.json
// Build: nvcc -O3 -arch=sm_90 numerics.cu -o numerics   (default precision flags: no fast math)
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CK(x)                                                                                                  \
  do {                                                                                                         \
    cudaError_t e_ = (x);                                                                                      \
    if (e_ != cudaSuccess) {                                                                                   \
      fprintf(stderr, "CUDA error %s at %s:%d: %s\n", #x, __FILE__, __LINE__, cudaGetErrorString(e_));         \
      exit(1);                                                                                                 \
    }                                                                                                          \
  } while (0)

#define UN32(NAME, BODY)                                                                   \
  __global__ void k_##NAME(const float* in, float* out, int n) {                           \
    int i = blockIdx.x * blockDim.x + threadIdx.x;                                         \
    if (i < n) { float x = in[i]; float y; BODY; out[i] = y; }                             \
  }
#define BIN32(NAME, BODY)                                                                  \
  __global__ void k_##NAME(const float* in, float* out, int n) {                           \
    int i = blockIdx.x * blockDim.x + threadIdx.x;                                         \
    if (i < n) { float a = in[2 * i], b = in[2 * i + 1]; float y; BODY; out[i] = y; }      \
  }
#define UN64(NAME, BODY)                                                                   \
  __global__ void k_##NAME(const double* in, double* out, int n) {                         \
    int i = blockIdx.x * blockDim.x + threadIdx.x;                                         \
    if (i < n) { double x = in[i]; double y; BODY; out[i] = y; }                           \
  }
#define BIN64(NAME, BODY)                                                                  \
  __global__ void k_##NAME(const double* in, double* out, int n) {                         \
    int i = blockIdx.x * blockDim.x + threadIdx.x;                                         \
    if (i < n) { double a = in[2 * i], b = in[2 * i + 1]; double y; BODY; out[i] = y; }    \
  }

// IEEE-rounded f32
BIN32(div_rn_f32, asm("div.rn.f32 %0, %1, %2;" : "=f"(y) : "f"(a), "f"(b)))
BIN32(div_rn_ftz_f32, asm("div.rn.ftz.f32 %0, %1, %2;" : "=f"(y) : "f"(a), "f"(b)))
BIN32(div_rz_f32, asm("div.rz.f32 %0, %1, %2;" : "=f"(y) : "f"(a), "f"(b)))
BIN32(div_rm_f32, asm("div.rm.f32 %0, %1, %2;" : "=f"(y) : "f"(a), "f"(b)))
BIN32(div_rp_f32, asm("div.rp.f32 %0, %1, %2;" : "=f"(y) : "f"(a), "f"(b)))
BIN32(div_full_f32, asm("div.full.f32 %0, %1, %2;" : "=f"(y) : "f"(a), "f"(b)))
BIN32(div_full_ftz_f32, asm("div.full.ftz.f32 %0, %1, %2;" : "=f"(y) : "f"(a), "f"(b)))
BIN32(div_approx_f32, asm("div.approx.f32 %0, %1, %2;" : "=f"(y) : "f"(a), "f"(b)))
BIN32(div_operator_f32, y = a / b)            // what nvcc emits for '/' by default
BIN32(fdividef_f32, y = __fdividef(a, b))     // the intrinsic
BIN32(fma_rn_f32, asm("fma.rn.f32 %0, %1, %2, %1;" : "=f"(y) : "f"(a), "f"(b)))
UN32(rcp_rn_f32, asm("rcp.rn.f32 %0, %1;" : "=f"(y) : "f"(x)))
UN32(rcp_rn_ftz_f32, asm("rcp.rn.ftz.f32 %0, %1;" : "=f"(y) : "f"(x)))
UN32(rcp_approx_f32, asm("rcp.approx.f32 %0, %1;" : "=f"(y) : "f"(x)))
UN32(rcp_approx_ftz_f32, asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x)))
UN32(sqrt_rn_f32, asm("sqrt.rn.f32 %0, %1;" : "=f"(y) : "f"(x)))
UN32(sqrt_rn_ftz_f32, asm("sqrt.rn.ftz.f32 %0, %1;" : "=f"(y) : "f"(x)))
UN32(sqrt_approx_f32, asm("sqrt.approx.f32 %0, %1;" : "=f"(y) : "f"(x)))
UN32(sqrtf_default, y = sqrtf(x))             // what nvcc emits for sqrtf by default
UN32(rsqrt_approx_f32, asm("rsqrt.approx.f32 %0, %1;" : "=f"(y) : "f"(x)))
UN32(rsqrt_approx_ftz_f32, asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x)))
UN32(ex2_approx_f32, asm("ex2.approx.f32 %0, %1;" : "=f"(y) : "f"(x)))
UN32(ex2_approx_ftz_f32, asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x)))
UN32(lg2_approx_f32, asm("lg2.approx.f32 %0, %1;" : "=f"(y) : "f"(x)))
UN32(lg2_approx_ftz_f32, asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x)))
UN32(sin_approx_f32, asm("sin.approx.f32 %0, %1;" : "=f"(y) : "f"(x)))
UN32(cos_approx_f32, asm("cos.approx.f32 %0, %1;" : "=f"(y) : "f"(x)))
UN32(tanh_approx_f32, asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x)))
UN32(expf_default, y = expf(x))
UN32(logf_default, y = logf(x))
UN32(sinf_default, y = sinf(x))
UN32(expf_intrinsic, y = __expf(x))
UN32(cvt_rni_f32, asm("cvt.rni.f32.f32 %0, %1;" : "=f"(y) : "f"(x)))
UN32(cvt_rn_f16_roundtrip, { unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x)); asm("cvt.f32.f16 %0, %1;" : "=f"(y) : "h"(h)); })
// add, mul, fma in every rounding mode, with and without ftz (fma_*: a * b + a)
BIN32(add_rn_f32, asm("add.rn.f32 %0, %1, %2;" : "=f"(y) : "f"(a), "f"(b)))
BIN32(add_rn_ftz_f32, asm("add.rn.ftz.f32 %0, %1, %2;" : "=f"(y) : "f"(a), "f"(b)))
BIN32(add_rz_f32, asm("add.rz.f32 %0, %1, %2;" : "=f"(y) : "f"(a), "f"(b)))
BIN32(add_rm_f32, asm("add.rm.f32 %0, %1, %2;" : "=f"(y) : "f"(a), "f"(b)))
BIN32(add_rp_f32, asm("add.rp.f32 %0, %1, %2;" : "=f"(y) : "f"(a), "f"(b)))
BIN32(mul_rn_f32, asm("mul.rn.f32 %0, %1, %2;" : "=f"(y) : "f"(a), "f"(b)))
BIN32(mul_rn_ftz_f32, asm("mul.rn.ftz.f32 %0, %1, %2;" : "=f"(y) : "f"(a), "f"(b)))
BIN32(mul_rz_f32, asm("mul.rz.f32 %0, %1, %2;" : "=f"(y) : "f"(a), "f"(b)))
BIN32(mul_rm_f32, asm("mul.rm.f32 %0, %1, %2;" : "=f"(y) : "f"(a), "f"(b)))
BIN32(mul_rp_f32, asm("mul.rp.f32 %0, %1, %2;" : "=f"(y) : "f"(a), "f"(b)))
BIN32(fma_rn_ftz_f32, asm("fma.rn.ftz.f32 %0, %1, %2, %1;" : "=f"(y) : "f"(a), "f"(b)))
BIN32(fma_rz_f32, asm("fma.rz.f32 %0, %1, %2, %1;" : "=f"(y) : "f"(a), "f"(b)))
BIN32(fma_rm_f32, asm("fma.rm.f32 %0, %1, %2, %1;" : "=f"(y) : "f"(a), "f"(b)))
BIN32(fma_rp_f32, asm("fma.rp.f32 %0, %1, %2, %1;" : "=f"(y) : "f"(a), "f"(b)))
// f64
BIN64(add_rn_f64, asm("add.rn.f64 %0, %1, %2;" : "=d"(y) : "d"(a), "d"(b)))
BIN64(add_rz_f64, asm("add.rz.f64 %0, %1, %2;" : "=d"(y) : "d"(a), "d"(b)))
BIN64(add_rm_f64, asm("add.rm.f64 %0, %1, %2;" : "=d"(y) : "d"(a), "d"(b)))
BIN64(add_rp_f64, asm("add.rp.f64 %0, %1, %2;" : "=d"(y) : "d"(a), "d"(b)))
BIN64(mul_rn_f64, asm("mul.rn.f64 %0, %1, %2;" : "=d"(y) : "d"(a), "d"(b)))
BIN64(mul_rz_f64, asm("mul.rz.f64 %0, %1, %2;" : "=d"(y) : "d"(a), "d"(b)))
BIN64(mul_rm_f64, asm("mul.rm.f64 %0, %1, %2;" : "=d"(y) : "d"(a), "d"(b)))
BIN64(mul_rp_f64, asm("mul.rp.f64 %0, %1, %2;" : "=d"(y) : "d"(a), "d"(b)))
BIN64(fma_rn_f64, asm("fma.rn.f64 %0, %1, %2, %1;" : "=d"(y) : "d"(a), "d"(b)))
BIN64(fma_rz_f64, asm("fma.rz.f64 %0, %1, %2, %1;" : "=d"(y) : "d"(a), "d"(b)))
BIN64(fma_rm_f64, asm("fma.rm.f64 %0, %1, %2, %1;" : "=d"(y) : "d"(a), "d"(b)))
BIN64(fma_rp_f64, asm("fma.rp.f64 %0, %1, %2, %1;" : "=d"(y) : "d"(a), "d"(b)))
BIN64(div_rn_f64, asm("div.rn.f64 %0, %1, %2;" : "=d"(y) : "d"(a), "d"(b)))
BIN64(div_operator_f64, y = a / b)
UN64(rcp_rn_f64, asm("rcp.rn.f64 %0, %1;" : "=d"(y) : "d"(x)))
UN64(rcp_approx_ftz_f64, asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(x)))
UN64(sqrt_rn_f64, asm("sqrt.rn.f64 %0, %1;" : "=d"(y) : "d"(x)))
UN64(rsqrt_approx_f64, asm("rsqrt.approx.f64 %0, %1;" : "=d"(y) : "d"(x)))
UN64(sqrt_default_f64, y = sqrt(x))

// ------------------------------------------------------------------ inputs (deterministic)
static uint64_t rs = 0x243F6A8885A308D3ull;
static uint32_t r32() {
  rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17;
  return (uint32_t)(rs >> 16);
}
static uint64_t r64() { return ((uint64_t)r32() << 32) | r32(); }
static float bf(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static uint32_t fb(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static double bd(uint64_t u) { double f; memcpy(&f, &u, 8); return f; }
static float uni(float lo, float hi) { return lo + (hi - lo) * (r32() >> 8) * (1.0f / 16777216.0f); }
static const uint32_t SPEC32[] = {0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0x7fa00001, 0xffc12345, 0x3f800000, 0xbf800000, 0x7f7fffff, 0xff7fffff,
                                  0x00800000, 0x80800000, 0x00000001, 0x80000001, 0x007fffff, 0x807fffff, 0x40000000, 0x40400000, 0x3f000000, 0x34000000, 0x4b800000};

static std::vector<float> unary32() {
  std::vector<float> v;
  for (uint32_t s : SPEC32) v.push_back(bf(s));
  for (int i = 0; i < 2048; i++) v.push_back(bf(r32()));                                   // random bit patterns
  for (int i = 0; i < 1024; i++) v.push_back(bf((r32() & 0x807fffff)));                    // subnormals (and zeros)
  for (int i = 0; i < 512; i++) v.push_back(bf((r32() & 0x80ffffff) | 0x7e000000));        // near overflow (exp 252..253)
  for (int i = 0; i < 512; i++) v.push_back(bf((r32() & 0x81ffffff)));                     // smallest normals
  for (int i = 0; i < 1024; i++) v.push_back(uni(-4.f, 4.f));
  for (int i = 0; i < 1024; i++) v.push_back(uni(-100.f, 100.f));
  for (int i = 0; i < 512; i++) v.push_back(uni(-130.f, 130.f));
  for (int i = 0; i < 256; i++) v.push_back((float)(i * i));                               // perfect squares
  for (int i = 0; i < 1024; i++) {                                                        // near-halfway sqrt: x ~ (odd 25-bit)^2
    uint64_t m = ((uint64_t)(r32() & 0xffffff) | 0x1000000) | 1;                           // 25-bit odd
    double sq = (double)m * (double)m;                                                    // exact in double (50 bits)
    int e = (int)(r32() % 200) - 100;
    v.push_back((float)ldexp(sq, e - 48));
  }
  while (v.size() % 256) v.push_back(bf(r32()));
  return v;
}
static std::vector<float> binary32() {
  std::vector<float> v;
  auto push = [&](float a, float b) { v.push_back(a); v.push_back(b); };
  for (uint32_t a : SPEC32)
    for (uint32_t b : SPEC32) push(bf(a), bf(b));
  for (int i = 0; i < 2048; i++) push(bf(r32()), bf(r32()));
  for (int i = 0; i < 512; i++) push(bf(r32()), bf(r32() & 0x807fffff));                   // subnormal divisor
  for (int i = 0; i < 512; i++) push(bf(r32() & 0x807fffff), bf((r32() & 0x80ffffff) | 0x3f000000));  // subnormal dividend
  for (int i = 0; i < 512; i++) push(bf((r32() & 0x80ffffff) | 0x7e800000), bf((r32() & 0x80ffffff) | 0x3e000000));  // near overflow
  for (int i = 0; i < 512; i++) push(bf((r32() & 0x80ffffff) | 0x01000000), bf((r32() & 0x80ffffff) | 0x41000000));  // near underflow
  for (int i = 0; i < 512; i++) push(bf((r32() & 0x807fffff) | 0x3f800000), bf((r32() & 0x807fffff) | 0x7e800000));  // result subnormal
  for (int i = 0; i < 2048; i++) {                                                        // near-halfway quotients: a ~ b * (odd 25-bit q)
    float b = bf((r32() & 0x007fffff) | 0x3f800000);
    uint64_t q = ((uint64_t)(r32() & 0xffffff) | 0x1000000) | 1;
    double a = (double)b * ldexp((double)q, -24);
    int e = (int)(r32() % 160) - 80;
    push((float)ldexp(a, e), (float)ldexp((double)b, e / 2));
  }
  for (int i = 0; i < 1024; i++) push(uni(1.f, 2.f), uni(1.f, 2.f));
  while ((v.size() / 2) % 256) push(bf(r32()), bf(r32()));
  return v;
}
static std::vector<double> unary64() {
  std::vector<double> v;
  const uint64_t S[] = {0, 0x8000000000000000ull, 0x7ff0000000000000ull, 0xfff0000000000000ull, 0x7ff8000000000000ull, 0x3ff0000000000000ull,
                        0x0000000000000001ull, 0x000fffffffffffffull, 0x0010000000000000ull, 0x7fefffffffffffffull};
  for (uint64_t s : S) v.push_back(bd(s));
  for (int i = 0; i < 2048; i++) v.push_back(bd(r64()));
  for (int i = 0; i < 512; i++) v.push_back(bd(r64() & 0x800fffffffffffffull));
  for (int i = 0; i < 1024; i++) v.push_back((double)uni(-4.f, 4.f) + bd(r64() & 0x000fffffffffffffull | 0x3cb0000000000000ull));
  while (v.size() % 256) v.push_back(bd(r64()));
  return v;
}
static std::vector<double> binary64() {
  std::vector<double> v;
  for (int i = 0; i < 2048; i++) { v.push_back(bd(r64())); v.push_back(bd(r64())); }
  for (int i = 0; i < 512; i++) { v.push_back(bd(r64())); v.push_back(bd(r64() & 0x800fffffffffffffull)); }
  for (int i = 0; i < 1024; i++) { v.push_back(1.0 + (r64() >> 12) * 0x1p-52); v.push_back(1.0 + (r64() >> 12) * 0x1p-52); }
  while ((v.size() / 2) % 256) { v.push_back(bd(r64())); v.push_back(bd(r64())); }
  return v;
}

template <typename T>
static void save(const std::string& path, const std::vector<T>& v) {
  FILE* f = fopen(path.c_str(), "wb");
  fwrite(v.data(), sizeof(T), v.size(), f);
  fclose(f);
}

typedef void (*K32)(const float*, float*, int);
typedef void (*K64)(const double*, double*, int);

int main(int argc, char** argv) {
  std::string od = argc > 1 ? argv[1] : ".";
  auto u32 = unary32();
  auto b32 = binary32();
  auto u64 = unary64();
  auto b64 = binary64();
  save(od + "/in_f32_unary.bin", u32);
  save(od + "/in_f32_binary.bin", b32);
  save(od + "/in_f64_unary.bin", u64);
  save(od + "/in_f64_binary.bin", b64);
  FILE* idx = fopen((od + "/index.json").c_str(), "w");
  fprintf(idx, "{\"inputs\":{\"in_f32_unary.bin\":{\"dtype\":\"f32\",\"count\":%zu},\"in_f32_binary.bin\":{\"dtype\":\"f32\",\"pairs\":%zu,\"layout\":\"a0 b0 a1 b1 ...\"},"
               "\"in_f64_unary.bin\":{\"dtype\":\"f64\",\"count\":%zu},\"in_f64_binary.bin\":{\"dtype\":\"f64\",\"pairs\":%zu}},\"ops\":[\n",
          u32.size(), b32.size() / 2, u64.size(), b64.size() / 2);
  float *din, *dout;
  CK(cudaMalloc(&din, 1 << 20));
  CK(cudaMalloc(&dout, 1 << 20));
  bool first = true;
  auto run32 = [&](const char* name, K32 k, bool binary, const char* ptx) {
    auto& in = binary ? b32 : u32;
    int n = binary ? in.size() / 2 : in.size();
    CK(cudaMemcpy(din, in.data(), in.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemset(dout, 0xff, n * 4));
    k<<<(n + 255) / 256, 256>>>(din, dout, n);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<float> out(n);
    CK(cudaMemcpy(out.data(), dout, n * 4, cudaMemcpyDeviceToHost));
    save(od + "/" + name + ".bin", out);
    fprintf(idx, "%s{\"op\":\"%s\",\"ptx\":\"%s\",\"input\":\"%s\",\"output\":\"%s.bin\",\"dtype\":\"f32\"}", first ? "" : ",\n", name, ptx,
            binary ? "in_f32_binary.bin" : "in_f32_unary.bin", name);
    first = false;
  };
  auto run64 = [&](const char* name, K64 k, bool binary, const char* ptx) {
    auto& in = binary ? b64 : u64;
    int n = binary ? in.size() / 2 : in.size();
    CK(cudaMemcpy(din, in.data(), in.size() * 8, cudaMemcpyHostToDevice));
    CK(cudaMemset(dout, 0xff, n * 8));
    k<<<(n + 255) / 256, 256>>>((const double*)din, (double*)dout, n);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<double> out(n);
    CK(cudaMemcpy(out.data(), dout, n * 8, cudaMemcpyDeviceToHost));
    save(od + "/" + name + ".bin", out);
    fprintf(idx, ",\n{\"op\":\"%s\",\"ptx\":\"%s\",\"input\":\"%s\",\"output\":\"%s.bin\",\"dtype\":\"f64\"}", name, ptx,
            binary ? "in_f64_binary.bin" : "in_f64_unary.bin", name);
  };
#define R32(N, B, P) run32(#N, k_##N, B, P);
#define R64(N, B, P) run64(#N, k_##N, B, P);
  R32(div_rn_f32, true, "div.rn.f32 a, b")
  R32(div_rn_ftz_f32, true, "div.rn.ftz.f32 a, b")
  R32(div_rz_f32, true, "div.rz.f32 a, b")
  R32(div_rm_f32, true, "div.rm.f32 a, b")
  R32(div_rp_f32, true, "div.rp.f32 a, b")
  R32(div_full_f32, true, "div.full.f32 a, b")
  R32(div_full_ftz_f32, true, "div.full.ftz.f32 a, b")
  R32(div_approx_f32, true, "div.approx.f32 a, b")
  R32(div_operator_f32, true, "CUDA a / b, nvcc -O3 default flags (see numerics.ptx)")
  R32(fdividef_f32, true, "CUDA __fdividef(a, b) (see numerics.ptx)")
  R32(fma_rn_f32, true, "fma.rn.f32 a, b, a")
  R32(rcp_rn_f32, false, "rcp.rn.f32 x")
  R32(rcp_rn_ftz_f32, false, "rcp.rn.ftz.f32 x")
  R32(rcp_approx_f32, false, "rcp.approx.f32 x")
  R32(rcp_approx_ftz_f32, false, "rcp.approx.ftz.f32 x")
  R32(sqrt_rn_f32, false, "sqrt.rn.f32 x")
  R32(sqrt_rn_ftz_f32, false, "sqrt.rn.ftz.f32 x")
  R32(sqrt_approx_f32, false, "sqrt.approx.f32 x")
  R32(sqrtf_default, false, "CUDA sqrtf(x), default flags (see numerics.ptx)")
  R32(rsqrt_approx_f32, false, "rsqrt.approx.f32 x")
  R32(rsqrt_approx_ftz_f32, false, "rsqrt.approx.ftz.f32 x")
  R32(ex2_approx_f32, false, "ex2.approx.f32 x")
  R32(ex2_approx_ftz_f32, false, "ex2.approx.ftz.f32 x")
  R32(lg2_approx_f32, false, "lg2.approx.f32 x")
  R32(lg2_approx_ftz_f32, false, "lg2.approx.ftz.f32 x")
  R32(sin_approx_f32, false, "sin.approx.f32 x")
  R32(cos_approx_f32, false, "cos.approx.f32 x")
  R32(tanh_approx_f32, false, "tanh.approx.f32 x")
  R32(expf_default, false, "CUDA expf(x), default flags")
  R32(logf_default, false, "CUDA logf(x), default flags")
  R32(sinf_default, false, "CUDA sinf(x), default flags")
  R32(expf_intrinsic, false, "CUDA __expf(x)")
  R32(cvt_rni_f32, false, "cvt.rni.f32.f32 x")
  R32(cvt_rn_f16_roundtrip, false, "cvt.rn.f16.f32 then cvt.f32.f16")
  R32(add_rn_f32, true, "add.rn.f32 a, b")
  R32(add_rn_ftz_f32, true, "add.rn.ftz.f32 a, b")
  R32(add_rz_f32, true, "add.rz.f32 a, b")
  R32(add_rm_f32, true, "add.rm.f32 a, b")
  R32(add_rp_f32, true, "add.rp.f32 a, b")
  R32(mul_rn_f32, true, "mul.rn.f32 a, b")
  R32(mul_rn_ftz_f32, true, "mul.rn.ftz.f32 a, b")
  R32(mul_rz_f32, true, "mul.rz.f32 a, b")
  R32(mul_rm_f32, true, "mul.rm.f32 a, b")
  R32(mul_rp_f32, true, "mul.rp.f32 a, b")
  R32(fma_rn_ftz_f32, true, "fma.rn.ftz.f32 a, b, a")
  R32(fma_rz_f32, true, "fma.rz.f32 a, b, a")
  R32(fma_rm_f32, true, "fma.rm.f32 a, b, a")
  R32(fma_rp_f32, true, "fma.rp.f32 a, b, a")
  R64(div_rn_f64, true, "div.rn.f64 a, b")
  R64(add_rn_f64, true, "add.rn.f64 a, b")
  R64(add_rz_f64, true, "add.rz.f64 a, b")
  R64(add_rm_f64, true, "add.rm.f64 a, b")
  R64(add_rp_f64, true, "add.rp.f64 a, b")
  R64(mul_rn_f64, true, "mul.rn.f64 a, b")
  R64(mul_rz_f64, true, "mul.rz.f64 a, b")
  R64(mul_rm_f64, true, "mul.rm.f64 a, b")
  R64(mul_rp_f64, true, "mul.rp.f64 a, b")
  R64(fma_rn_f64, true, "fma.rn.f64 a, b, a")
  R64(fma_rz_f64, true, "fma.rz.f64 a, b, a")
  R64(fma_rm_f64, true, "fma.rm.f64 a, b, a")
  R64(fma_rp_f64, true, "fma.rp.f64 a, b, a")
  R64(div_operator_f64, true, "CUDA a / b (double)")
  R64(rcp_rn_f64, false, "rcp.rn.f64 x")
  R64(rcp_approx_ftz_f64, false, "rcp.approx.ftz.f64 x")
  R64(sqrt_rn_f64, false, "sqrt.rn.f64 x")
  R64(rsqrt_approx_f64, false, "rsqrt.approx.f64 x")
  R64(sqrt_default_f64, false, "CUDA sqrt(x) (double)")
  fprintf(idx, "\n]}\n");
  fclose(idx);
  printf("numerics: %zu unary f32, %zu binary f32, %zu unary f64, %zu binary f64 inputs\n", u32.size(), b32.size() / 2, u64.size(), b64.size() / 2);
  return 0;
}
