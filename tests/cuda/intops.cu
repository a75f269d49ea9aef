// Integer operations: high multiplies, bit reversal, leading zeros, find
// first set, popcount, byte permute, bit-field extract/insert, funnel shift,
// shifts, min/max/abs, 64-bit arithmetic, and division and remainder by
// runtime divisors (signed ones negative too).
#include "warpsim_cuda.h"

#define NOUT 40

// in: a[i], b[i] (u32); d[i] a nonzero divisor (i32, may be negative);
// out: NOUT u32 results per element (64-bit results as lo, hi).
extern "C" __global__ void int_ops(const unsigned *a_in, const unsigned *b_in, const int *d_in, unsigned *out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    unsigned a = a_in[i], b = b_in[i];
    int d = d_in[i];
    unsigned *o = out + NOUT * i;
    o[0] = __umulhi(a, b);
    o[1] = (unsigned)__mulhi((int)a, (int)b);
    o[2] = __brev(a);
    o[3] = (unsigned)__clz((int)a);
    o[4] = (unsigned)__ffs((int)a);
    o[5] = (unsigned)__popc(a);
    o[6] = __byte_perm(a, b, b & 0x7777u);
    o[7] = __bfe(a, b & 31, (b >> 5) & 63);
    o[8] = (unsigned)__bfe_s((int)a, (b >> 11) & 31, (b >> 16) & 31);
    o[9] = __bfi(a, b, (b >> 21) & 31, (b >> 26) & 31);
    o[10] = __funnelshift_l(a, b, b >> 24);
    o[11] = a << (b & 31);
    o[12] = a >> (b & 31);
    o[13] = (unsigned)((int)a >> (b & 31));
    o[14] = (unsigned)max((int)a, (int)b);
    o[15] = min(a, b);
    o[16] = (unsigned)abs((int)a);
    // 32-bit division and remainder by runtime divisors.
    unsigned ud = (unsigned)d;
    o[17] = a / ud;
    o[18] = a % ud;
    int sa = (int)a;
    if (sa == (int)0x80000000 && d == -1)
        sa = 0; // INT_MIN / -1 is undefined in C
    o[19] = (unsigned)(sa / d);
    o[20] = (unsigned)(sa % d);
    // 64-bit arithmetic.
    unsigned long long x = ((unsigned long long)a << 32) | b;
    unsigned long long y = (unsigned long long)(long long)d;
    unsigned long long m = x * 0x9e3779b97f4a7c15ull + y;
    o[21] = (unsigned)m;
    o[22] = (unsigned)(m >> 32);
    unsigned long long q = x / (y | 1);
    o[23] = (unsigned)q;
    o[24] = (unsigned)(q >> 32);
    unsigned long long r = x % (y | 1);
    o[25] = (unsigned)r;
    o[26] = (unsigned)(r >> 32);
    long long sx = (long long)x;
    long long sd = (long long)d * 0x10001; // nonzero, may be negative
    long long sq = sx / sd, sr = sx % sd;
    o[27] = (unsigned)sq;
    o[28] = (unsigned)((unsigned long long)sq >> 32);
    o[29] = (unsigned)sr;
    o[30] = (unsigned)((unsigned long long)sr >> 32);
    unsigned long long w = (unsigned long long)a * b; // mul.wide.u32
    o[31] = (unsigned)w;
    o[32] = (unsigned)(w >> 32);
    unsigned long long h = __umul64hi(x, m);
    o[33] = (unsigned)h;
    o[34] = (unsigned)(h >> 32);
    o[35] = (unsigned)__clzll((long long)x);
    o[36] = (unsigned)__popcll(m);
    unsigned long long br = __brevll(x);
    o[37] = (unsigned)br;
    o[38] = (unsigned)((long long)sx >> (b & 63));
    o[39] = (unsigned)(x >> (a & 63) >> 7);
}
