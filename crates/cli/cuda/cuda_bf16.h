// warpsim's minimal stand-in for the CUDA toolkit's cuda_bf16.h, for compiling
// with clang alone: __nv_bfloat16 and __nv_bfloat162 as raw bfloat16 bits
// (the top half of a binary32), CUDA's conversions (to bfloat16 rounding to
// nearest even or toward zero: cvt.{rn,rz}.bf16.f32; down and up computed here;
// from bfloat16 exactly), and arithmetic as CUDA does it on sm_80: __hadd, __hsub,
// __hmul, __hfma as one fma.rn.bf16 (a single rounding of the exact result).
#ifndef WARPSIM_CUDA_BF16_H
#define WARPSIM_CUDA_BF16_H

struct __nv_bfloat16;
#define WS_B static __device__ __forceinline__
WS_B unsigned short __ws_f2bf(float f) {
    unsigned short h;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
}

struct __attribute__((aligned(2))) __nv_bfloat16 {
    unsigned short __x;
    __nv_bfloat16() = default;
    __device__ __nv_bfloat16(float f) : __x(__ws_f2bf(f)) {}
    __device__ __nv_bfloat16(double f) : __x(__ws_f2bf((float)f)) {}
    __device__ __nv_bfloat16(int i) : __x(__ws_f2bf((float)i)) {}
    __device__ operator float() const { return __builtin_bit_cast(float, (unsigned)__x << 16); }
};
struct __attribute__((aligned(4))) __nv_bfloat162 {
    __nv_bfloat16 x, y;
    __nv_bfloat162() = default;
    __device__ __nv_bfloat162(__nv_bfloat16 a, __nv_bfloat16 b) : x(a), y(b) {}
};
typedef __nv_bfloat16 nv_bfloat16;
typedef __nv_bfloat162 nv_bfloat162;

WS_B __nv_bfloat16 __ws_bf(unsigned short bits) {
    __nv_bfloat16 r;
    r.__x = bits;
    return r;
}
#define WS_F2BF(SUF, RND)                                                       \
    WS_B __nv_bfloat16 __float2bfloat16_##SUF(float f) {                        \
        unsigned short h;                                                       \
        asm("cvt." #RND ".bf16.f32 %0, %1;" : "=h"(h) : "f"(f));                \
        return __ws_bf(h);                                                      \
    }
WS_F2BF(rn, rn)
WS_F2BF(rz, rz)
#undef WS_F2BF
// Down and up (cvt.rm/.rp.bf16 need sm_90): the truncation, one step away from zero
// when bits were dropped and the direction is away from zero.
WS_B __nv_bfloat16 __ws_f2bf_dir(float f, bool up) {
    unsigned u = __builtin_bit_cast(unsigned, f);
    if (f != f) return __ws_bf((unsigned short)(u >> 16 | 0x40));
    unsigned short t = (unsigned short)(u >> 16);
    bool negative = u >> 31;
    return __ws_bf((u & 0xffff) != 0 && negative != up ? t + 1 : t);
}
WS_B __nv_bfloat16 __float2bfloat16_rd(float f) { return __ws_f2bf_dir(f, false); }
WS_B __nv_bfloat16 __float2bfloat16_ru(float f) { return __ws_f2bf_dir(f, true); }
WS_B __nv_bfloat16 __float2bfloat16(float f) { return __float2bfloat16_rn(f); }
WS_B __nv_bfloat16 __double2bfloat16(double d) { return __float2bfloat16_rn((float)d); }
WS_B float __bfloat162float(__nv_bfloat16 h) { return (float)h; }
WS_B __nv_bfloat16 __int2bfloat16_rn(int i) { return __float2bfloat16_rn((float)i); }
WS_B int __bfloat162int_rz(__nv_bfloat16 h) { return (int)(float)h; }
WS_B unsigned short __bfloat16_as_ushort(__nv_bfloat16 h) { return h.__x; }
WS_B __nv_bfloat16 __ushort_as_bfloat16(unsigned short u) { return __ws_bf(u); }
WS_B short __bfloat16_as_short(__nv_bfloat16 h) { return (short)h.__x; }
WS_B __nv_bfloat16 __short_as_bfloat16(short s) { return __ws_bf((unsigned short)s); }
WS_B __nv_bfloat162 __float2bfloat162_rn(float a) { return __nv_bfloat162(__float2bfloat16_rn(a), __float2bfloat16_rn(a)); }
WS_B __nv_bfloat162 __floats2bfloat162_rn(float a, float b) { return __nv_bfloat162(__float2bfloat16_rn(a), __float2bfloat16_rn(b)); }
WS_B float __low2float(__nv_bfloat162 h) { return (float)h.x; }
WS_B float __high2float(__nv_bfloat162 h) { return (float)h.y; }
WS_B __nv_bfloat16 __low2bfloat16(__nv_bfloat162 h) { return h.x; }
WS_B __nv_bfloat16 __high2bfloat16(__nv_bfloat162 h) { return h.y; }

// One fma.rn.bf16: a * b + c rounded once.
WS_B __nv_bfloat16 __hfma(__nv_bfloat16 a, __nv_bfloat16 b, __nv_bfloat16 c) {
    unsigned short r;
    asm("fma.rn.bf16 %0, %1, %2, %3;" : "=h"(r) : "h"(a.__x), "h"(b.__x), "h"(c.__x));
    return __ws_bf(r);
}
WS_B __nv_bfloat16 __hadd(__nv_bfloat16 a, __nv_bfloat16 b) { return __hfma(a, __ws_bf(0x3f80), b); }
WS_B __nv_bfloat16 __hsub(__nv_bfloat16 a, __nv_bfloat16 b) { return __hfma(b, __ws_bf(0xbf80), a); }
WS_B __nv_bfloat16 __hmul(__nv_bfloat16 a, __nv_bfloat16 b) { return __hfma(a, b, __ws_bf(0x8000)); }
WS_B __nv_bfloat16 __hneg(__nv_bfloat16 a) { return __ws_bf(a.__x ^ 0x8000); }
WS_B __nv_bfloat16 operator+(__nv_bfloat16 a, __nv_bfloat16 b) { return __hadd(a, b); }
WS_B __nv_bfloat16 operator-(__nv_bfloat16 a, __nv_bfloat16 b) { return __hsub(a, b); }
WS_B __nv_bfloat16 operator*(__nv_bfloat16 a, __nv_bfloat16 b) { return __hmul(a, b); }
WS_B __nv_bfloat16 operator-(__nv_bfloat16 a) { return __hneg(a); }
WS_B bool operator==(__nv_bfloat16 a, __nv_bfloat16 b) { return (float)a == (float)b; }
WS_B bool operator<(__nv_bfloat16 a, __nv_bfloat16 b) { return (float)a < (float)b; }
WS_B bool operator>(__nv_bfloat16 a, __nv_bfloat16 b) { return (float)a > (float)b; }
#undef WS_B

#endif
