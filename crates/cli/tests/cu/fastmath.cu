// The fast math functions the header maps to .approx instructions.
extern "C" __global__ void fastmath(const float *x, float *y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = x[i];
    y[4 * i + 0] = expf(v);
    y[4 * i + 1] = logf(v + 1.0f);
    y[4 * i + 2] = sinf(v) + cosf(v);
    y[4 * i + 3] = sqrtf(v) * rsqrtf(v + 1.0f);
}
