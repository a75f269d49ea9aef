// What the clang path (warpsim_cuda.h and its stand-ins) must compile and
// compute when nvcc is absent: __launch_bounds__, CUDA's math library
// beyond single PTX instructions, cuda_fp16.h and cooperative_groups.h.
#include <cuda_fp16.h>
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

namespace cg = cooperative_groups;

// x[i] = i (iota); v runs over [-4, 4) in steps of 1/16.
extern "C" __global__ void __launch_bounds__(128, 4) math(const float* x, float* out, double* dout) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = (x[i] - 64.0f) / 16.0f;
    float* o = out + 16 * i;
    o[0] = erff(v);
    o[1] = erfcf(v);
    o[2] = lgammaf(v);
    o[3] = tgammaf(v);
    o[4] = atan2f(v, -1.5f);
    o[5] = cbrtf(v);
    o[6] = hypotf(v, 3.0f);
    o[7] = expm1f(v);
    o[8] = log1pf(fabsf(v));
    o[9] = sinhf(v);
    o[10] = coshf(v);
    o[11] = asinhf(v);
    o[12] = atanf(v);
    o[13] = acosf(v / 4.0f);
    o[14] = fmodf(v * 7.25f, 1.75f);
    o[15] = normcdff(v);
    double d = v;
    dout[4 * i + 0] = exp(d);
    dout[4 * i + 1] = log(fabs(d) + 0.125);
    dout[4 * i + 2] = sin(d * 10.0) + cos(d * 3.0);
    dout[4 * i + 3] = pow(fabs(d) + 0.5, 2.5) + erf(d);
}

extern "C" __global__ void halves(const float* x, float* out) {
    int i = threadIdx.x;
    __half a = __float2half(x[i] / 8.0f);
    __half b = a * a + __float2half(0.5f);
    __half2 p = __floats2half2_rn(x[i], 1.0f);
    __half2 q = __hmul2(p, p);
    out[2 * i] = __half2float(__hfma(b, a, __hneg(a)));
    out[2 * i + 1] = __low2float(q) + __high2float(q);
}

extern "C" __global__ void groups(const int* in, int* out) {
    cg::thread_block b = cg::this_thread_block();
    cg::thread_block_tile<16> t = cg::tiled_partition<16>(b);
    int v = in[b.thread_rank()];
    int s = cg::reduce(t, v, cg::plus<int>());
    int m = cg::reduce(t, v, cg::greater<int>());
    unsigned odd = t.ballot(v & 1);
    b.sync();
    if (t.thread_rank() == 0) {
        out[2 * t.meta_group_rank()] = s;
        out[2 * t.meta_group_rank() + 1] = m + (int)odd;
    }
}
