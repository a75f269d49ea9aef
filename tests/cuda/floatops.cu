// Floating point: conversions (float to int with each rounding, int to
// float, float to half and back, float <-> double), IEEE double arithmetic,
// and single-precision min/max/fabs/copysign/sqrt/division/rounding.
#include "warpsim_cuda.h"

#define NCONV 16
extern "C" __global__ void float_conv(const float *f_in, const int *i_in, unsigned *out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float f = f_in[i];
    int k = i_in[i];
    unsigned *o = out + NCONV * i;
    o[0] = (unsigned)__float2int_rn(f);
    o[1] = (unsigned)__float2int_rz(f);
    o[2] = (unsigned)__float2int_rd(f);
    o[3] = (unsigned)__float2int_ru(f);
    o[4] = __float2uint_rn(f);
    o[5] = (unsigned)(int)f;   // cvt.rzi.s32.f32
    o[6] = (unsigned)f;        // cvt.rzi.u32.f32
    o[7] = __float_as_uint((float)k);            // cvt.rn.f32.s32
    o[8] = __float_as_uint((float)(unsigned)k);  // cvt.rn.f32.u32
    unsigned short h = __float2half_rn(f);       // cvt.rn.f16.f32
    o[9] = h;
    o[10] = __float_as_uint(__half2float(h));    // cvt.f32.f16
    double d = (double)f;                        // cvt.f64.f32
    unsigned long long db = (unsigned long long)__double_as_longlong(d);
    o[11] = (unsigned)db;
    o[12] = (unsigned)(db >> 32);
    o[13] = __float_as_uint(__double2float_rn(d * 1.000000001)); // cvt.rn.f32.f64
    o[14] = __float_as_uint(rintf(f));           // cvt.rni.f32.f32
    o[15] = __float_as_uint(floorf(f) + ceilf(f) * 2.0f + truncf(f) * 4.0f);
}

#define NDBL 10
extern "C" __global__ void double_arith(const double *a_in, const double *b_in, const double *c_in, double *out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    double a = a_in[i], b = b_in[i], c = c_in[i];
    double *o = out + NDBL * i;
    o[0] = a + b;
    o[1] = a - b;
    o[2] = a * b;
    o[3] = a / b;
    o[4] = sqrt(fabs(a));
    o[5] = fma(a, b, c);
    o[6] = fmin(a, b);
    o[7] = fmax(a, c);
    o[8] = (a * b + c) * (a - c);
    o[9] = copysign(b, a) / 3.0;
}

#define NFLT 12
extern "C" __global__ void float_math(const float *a_in, const float *b_in, float *out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float a = a_in[i], b = b_in[i];
    float *o = out + NFLT * i;
    o[0] = fminf(a, b);
    o[1] = fmaxf(a, b);
    o[2] = fabsf(a);
    o[3] = copysignf(a, b);
    o[4] = sqrtf(fabsf(a));
    o[5] = a / b;
    o[6] = a * b - a;
    o[7] = fmaf(a, b, -a);
    o[8] = sqrtf(a);
    o[9] = (a + b) * (a - b);
    o[10] = 1.0f / b;
    o[11] = -a;
}

// The .approx instructions (what -use_fast_math and __fdividef, __expf...
// compile to); the test allows the PTX ISA's stated error bounds.
#define NAPX 8
extern "C" __global__ void float_approx(const float *a_in, const float *b_in, float *out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float a = a_in[i], b = b_in[i];
    float *o = out + NAPX * i;
    o[0] = __nvvm_div_approx_f(a, b);
    o[1] = __nvvm_ex2_approx_f(a);
    o[2] = __nvvm_lg2_approx_f(b);
    o[3] = __nvvm_sin_approx_f(a);
    o[4] = __nvvm_cos_approx_f(a);
    o[5] = __nvvm_rsqrt_approx_f(b);
    o[6] = __nvvm_sqrt_approx_f(b);
    o[7] = __nvvm_rcp_approx_ftz_f(b);
}
