// Half precision with clang's native types: f16x2 vector arithmetic
// (mul/add.rn.f16x2), scalar f16 arithmetic on unpacked halves, f16 <-> f32
// conversions, and f32 -> bf16 rounding.
#include "warpsim_cuda.h"

typedef _Float16 half2v __attribute__((ext_vector_type(2)));

// c = a * b + a (two roundings: no contraction); d = a.x * b.y - 1.5;
// e = (float)a.y * (float)b.x; bf = bf16(f).
extern "C" __global__ void half_math(const half2v *a, const half2v *b, half2v *c, _Float16 *d, float *e, const float *f, unsigned short *bf) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    half2v x = a[i], y = b[i];
    c[i] = x * y + x;
    d[i] = x.x * y.y - (_Float16)1.5f;
    e[i] = (float)x.y * (float)y.x;
    bf[i] = __builtin_bit_cast(unsigned short, (__bf16)f[i]);
}
