// warpsim's stand-in for the CUDA toolkit's cuda_fp16.h, for compiling with
// clang alone: __half and __half2 as binary16 values with CUDA's
// conversions, arithmetic (clang's _Float16, so add.f16, mul.f16, fma.rn.f16
// in the PTX), comparisons and operators. The raw-bits functions of
// warpsim_cuda.h (__float2half_rn returning unsigned short) are replaced by
// CUDA's own signatures once this header is included.
#ifndef WARPSIM_CUDA_FP16_H
#define WARPSIM_CUDA_FP16_H

struct __half {
    unsigned short __x;
    __half() = default;
    __device__ __half(_Float16 f) : __x(__builtin_bit_cast(unsigned short, f)) {}
    __device__ __half(float f) : __half((_Float16)f) {}
    __device__ __half(double f) : __half((_Float16)f) {}
    __device__ __half(int i) : __half((_Float16)i) {}
    __device__ operator _Float16() const { return __builtin_bit_cast(_Float16, __x); }
    __device__ operator float() const { return (float)__builtin_bit_cast(_Float16, __x); }
    __device__ __half &operator+=(__half o) { return *this = (_Float16)*this + (_Float16)o; }
    __device__ __half &operator-=(__half o) { return *this = (_Float16)*this - (_Float16)o; }
    __device__ __half &operator*=(__half o) { return *this = (_Float16)*this * (_Float16)o; }
    __device__ __half &operator/=(__half o) { return *this = (_Float16)*this / (_Float16)o; }
};
struct __attribute__((aligned(4))) __half2 {
    __half x, y;
    __half2() = default;
    __device__ __half2(__half a, __half b) : x(a), y(b) {}
};
typedef __half half;
typedef __half2 half2;

#define WS_H static __device__ __forceinline__
WS_H _Float16 __ws_f16(__half h) { return (_Float16)h; }

WS_H __half __float2half(float f) { return __half(f); }
#define __float2half_rn __float2half
// The other roundings: warpsim_cuda.h's raw-bits forms, as __half.
WS_H __half __ws_half_bits(unsigned short b) {
    __half h;
    h.__x = b;
    return h;
}
WS_H __half __ws_float2half_rz(float f) { return __ws_half_bits(__float2half_rz(f)); }
WS_H __half __ws_float2half_rd(float f) { return __ws_half_bits(__float2half_rd(f)); }
WS_H __half __ws_float2half_ru(float f) { return __ws_half_bits(__float2half_ru(f)); }
#define __float2half_rz __ws_float2half_rz
#define __float2half_rd __ws_float2half_rd
#define __float2half_ru __ws_float2half_ru
WS_H float __half2float(__half h) { return (float)__ws_f16(h); }
WS_H __half __double2half(double d) { return __half(d); }
WS_H __half __int2half_rn(int i) { return __half(i); }
WS_H int __half2int_rz(__half h) { return (int)__ws_f16(h); }
WS_H unsigned short __half_as_ushort(__half h) { return h.__x; }
WS_H __half __ushort_as_half(unsigned short u) { __half h; h.__x = u; return h; }
WS_H short __half_as_short(__half h) { return (short)h.__x; }
WS_H __half __short_as_half(short s) { return __ushort_as_half((unsigned short)s); }

WS_H __half __hadd(__half a, __half b) { return __ws_f16(a) + __ws_f16(b); }
WS_H __half __hsub(__half a, __half b) { return __ws_f16(a) - __ws_f16(b); }
WS_H __half __hmul(__half a, __half b) { return __ws_f16(a) * __ws_f16(b); }
WS_H __half __hdiv(__half a, __half b) { return __ws_f16(a) / __ws_f16(b); }
WS_H __half __hfma(__half a, __half b, __half c) { return __builtin_fmaf16(__ws_f16(a), __ws_f16(b), __ws_f16(c)); }
WS_H __half __hneg(__half a) { return -__ws_f16(a); }
WS_H __half __habs(__half a) { return __ushort_as_half(a.__x & 0x7fff); }
WS_H __half __hmax(__half a, __half b) { return __ws_f16(a) > __ws_f16(b) || __ws_f16(b) != __ws_f16(b) ? a : b; }
WS_H __half __hmin(__half a, __half b) { return __ws_f16(a) < __ws_f16(b) || __ws_f16(b) != __ws_f16(b) ? a : b; }
WS_H bool __heq(__half a, __half b) { return __ws_f16(a) == __ws_f16(b); }
WS_H bool __hne(__half a, __half b) { return __ws_f16(a) != __ws_f16(b); }
WS_H bool __hlt(__half a, __half b) { return __ws_f16(a) < __ws_f16(b); }
WS_H bool __hle(__half a, __half b) { return __ws_f16(a) <= __ws_f16(b); }
WS_H bool __hgt(__half a, __half b) { return __ws_f16(a) > __ws_f16(b); }
WS_H bool __hge(__half a, __half b) { return __ws_f16(a) >= __ws_f16(b); }
WS_H bool __hisnan(__half a) { return __ws_f16(a) != __ws_f16(a); }
WS_H __half hsqrt(__half a) { return __half(__builtin_sqrtf(__half2float(a))); }

WS_H __half operator+(__half a, __half b) { return __hadd(a, b); }
WS_H __half operator-(__half a, __half b) { return __hsub(a, b); }
WS_H __half operator*(__half a, __half b) { return __hmul(a, b); }
WS_H __half operator/(__half a, __half b) { return __hdiv(a, b); }
WS_H __half operator-(__half a) { return __hneg(a); }
WS_H bool operator==(__half a, __half b) { return __heq(a, b); }
WS_H bool operator!=(__half a, __half b) { return __hne(a, b); }
WS_H bool operator<(__half a, __half b) { return __hlt(a, b); }
WS_H bool operator<=(__half a, __half b) { return __hle(a, b); }
WS_H bool operator>(__half a, __half b) { return __hgt(a, b); }
WS_H bool operator>=(__half a, __half b) { return __hge(a, b); }

WS_H __half2 __halves2half2(__half a, __half b) { return __half2(a, b); }
WS_H __half2 __floats2half2_rn(float a, float b) { return __half2(__half(a), __half(b)); }
WS_H __half2 __float2half2_rn(float a) { return __half2(__half(a), __half(a)); }
WS_H __half2 __half2half2(__half a) { return __half2(a, a); }
WS_H __half __low2half(__half2 v) { return v.x; }
WS_H __half __high2half(__half2 v) { return v.y; }
WS_H float __low2float(__half2 v) { return __half2float(v.x); }
WS_H float __high2float(__half2 v) { return __half2float(v.y); }
WS_H __half2 __hadd2(__half2 a, __half2 b) { return __half2(__hadd(a.x, b.x), __hadd(a.y, b.y)); }
WS_H __half2 __hsub2(__half2 a, __half2 b) { return __half2(__hsub(a.x, b.x), __hsub(a.y, b.y)); }
WS_H __half2 __hmul2(__half2 a, __half2 b) { return __half2(__hmul(a.x, b.x), __hmul(a.y, b.y)); }
WS_H __half2 __h2div(__half2 a, __half2 b) { return __half2(__hdiv(a.x, b.x), __hdiv(a.y, b.y)); }
WS_H __half2 __hfma2(__half2 a, __half2 b, __half2 c) { return __half2(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)); }
WS_H __half2 __hneg2(__half2 a) { return __half2(__hneg(a.x), __hneg(a.y)); }
WS_H __half2 operator+(__half2 a, __half2 b) { return __hadd2(a, b); }
WS_H __half2 operator-(__half2 a, __half2 b) { return __hsub2(a, b); }
WS_H __half2 operator*(__half2 a, __half2 b) { return __hmul2(a, b); }
WS_H __half2 operator/(__half2 a, __half2 b) { return __h2div(a, b); }

WS_H __half __shfl_sync(unsigned m, __half v, int l, int w = 32) { return __ushort_as_half((unsigned short)__shfl_sync(m, (int)v.__x, l, w)); }
WS_H __half __shfl_xor_sync(unsigned m, __half v, int l, int w = 32) { return __ushort_as_half((unsigned short)__shfl_xor_sync(m, (int)v.__x, l, w)); }
WS_H __half __shfl_down_sync(unsigned m, __half v, unsigned d, int w = 32) { return __ushort_as_half((unsigned short)__shfl_down_sync(m, (int)v.__x, d, w)); }
WS_H __half __shfl_up_sync(unsigned m, __half v, unsigned d, int w = 32) { return __ushort_as_half((unsigned short)__shfl_up_sync(m, (int)v.__x, d, w)); }
#undef WS_H

#endif
