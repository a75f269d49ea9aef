// A sum reduction for any power-of-two block size from 32 to 1024: each block
// adds two elements per thread into shared memory (dynamic: blockDim.x floats),
// halves the active threads down to one warp, and finishes with shuffles.
extern "C" __global__ void reduce_sum(const float *in, float *out, unsigned n) {
    extern __shared__ float s[];
    unsigned t = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x * 2 + t;
    float v = 0.0f;
    if (i < n) v = in[i];
    if (i + blockDim.x < n) v += in[i + blockDim.x];
    s[t] = v;
    __syncthreads();
    for (unsigned step = blockDim.x / 2; step >= 32; step >>= 1) {
        if (t < step) s[t] += s[t + step];
        __syncthreads();
    }
    if (t < 32) {
        v = s[t];
        for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
        if (t == 0) out[blockIdx.x] = v;
    }
}
