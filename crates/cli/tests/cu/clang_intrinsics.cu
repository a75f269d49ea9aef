// Intrinsics of warpsim_cuda.h and its stand-ins added for issue 16, one
// thread, each result a 32-bit word of `out` (crates/cli/tests/clang_intrinsics.rs
// checks them against values worked out by hand). `in` holds the operands,
// so nothing folds at compile time.
#include <cuda_bf16.h>
#include <cuda_pipeline.h>

extern "C" __global__ void intrinsics(const unsigned *in, unsigned *out) {
    __shared__ uint4 stage[2];
    // cp.async: 16 bytes, then 16 of which the last 8 are zero-filled.
    __pipeline_memcpy_async(&stage[0], &in[8], 16);
    __pipeline_memcpy_async(&stage[1], &in[12], 16, 8);
    __pipeline_commit();
    __pipeline_wait_prior(0);
    out[0] = stage[0].x, out[1] = stage[0].w, out[2] = stage[1].x, out[3] = stage[1].y, out[4] = stage[1].z, out[5] = stage[1].w;

    unsigned a = in[0], b = in[1], c = in[2];
    out[6] = __dp4a((int)a, (int)b, (int)c);
    out[7] = __dp4a(a, b, c);
    out[8] = __dp2a_lo((int)a, (int)b, (int)c);
    out[9] = __dp2a_hi((int)a, (int)b, (int)c);
    out[10] = __dp2a_lo(a, b, c);
    out[11] = __dp2a_hi(a, b, c);

    unsigned m = in[3];
    out[12] = __fns(m, 4, 2);
    out[13] = __fns(m, 4, -2);
    out[14] = __fns(m, 4, 0);
    out[15] = __fns(m, 5, 0);
    out[16] = __fns(m, 20, 3);

    float third = __uint_as_float(in[4]), neg = -third;
    out[17] = __float2half_rn(neg);
    out[18] = __float2half_rz(neg);
    out[19] = __float2half_rd(neg);
    out[20] = __float2half_ru(third);
    double d = __longlong_as_double((long long)((unsigned long long)in[6] << 32 | in[5]));
    out[21] = __float_as_uint(__double2float_rn(d));
    out[22] = __float_as_uint(__double2float_rz(d));
    out[23] = __float_as_uint(__double2float_ru(d));
    out[24] = __float_as_uint(__double2float_rd(-d));
    double half = (double)(int)in[7] / 2.0; // -2.5
    out[25] = (unsigned)__double2int_rd(half);
    out[26] = (unsigned)__double2int_ru(half);
    out[27] = (unsigned)__float2ll_ru((float)half);
    long long big = (long long)in[2] + 16777207; // 2^24 + 1
    out[28] = __float_as_uint(__ll2float_rz(big));
    out[29] = __float_as_uint(__ll2float_ru(big));
    float one = __uint_as_float(in[9] & 0) + 1.0f, tiny = 1.5f / 16777216.0f;
    out[30] = __float_as_uint(__fadd_rn(one, tiny));
    out[31] = __float_as_uint(__fadd_rz(one, tiny));
    out[32] = __float_as_uint(__fmul_ru(third, 3.0f));
    out[33] = __float_as_uint(__fmul_rz(third, 3.0f));
    out[34] = __float_as_uint(__fsub_rd(one, tiny));

    __nv_bfloat16 h = __float2bfloat16(third);
    out[35] = __bfloat16_as_ushort(h);
    out[36] = __bfloat16_as_ushort(__float2bfloat16_rz(third));
    out[37] = __float_as_uint(__bfloat162float(h));
    out[38] = __bfloat16_as_ushort(__hadd(h, h));
    out[39] = __bfloat16_as_ushort(__hmul(h, h));

    uint4 v = make_uint4(a, b, c, m);
    reinterpret_cast<uint4 *>(out)[10] = v; // out[40..44]
    out[44] = sizeof(char3) | alignof(short4) << 8 | alignof(uint4) << 16 | sizeof(double3) << 24;
    out[45] = alignof(longlong2) | sizeof(uchar2) << 8 | alignof(float3) << 16 | sizeof(ulong4) << 24;
    uint3 t = threadIdx;
    dim3 g = gridDim;
    out[46] = t.x + 10 * g.x + 100 * make_int2(3, 4).y;
    out[47] = __bfloat16_as_ushort(__float2bfloat16_rd(-third)) | (unsigned)__bfloat16_as_ushort(__float2bfloat16_ru(third)) << 16;
}
