// Elementwise and indexing kernels: vector add, saxpy, a grid-stride loop,
// 2-D and 3-D indexing, a tiled transpose through padded shared memory, and
// dynamic shared memory placed after a static array.
#include "warpsim_cuda.h"

extern "C" __global__ void vector_add(const float *a, const float *b, float *c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}

extern "C" __global__ void saxpy(float a, const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = fmaf(a, x[i], y[i]);
}

extern "C" __global__ void grid_stride(const unsigned *in, unsigned *out, unsigned n) {
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        out[i] = in[i] * 3u + (i ^ 0x55u);
}

// Every thread of a 3-D grid of 3-D blocks writes its coordinates, packed,
// at its linear global index.
extern "C" __global__ void index3d(unsigned *out) {
    unsigned bx = blockIdx.x, by = blockIdx.y, bz = blockIdx.z;
    unsigned tx = threadIdx.x, ty = threadIdx.y, tz = threadIdx.z;
    unsigned block = (bz * gridDim.y + by) * gridDim.x + bx;
    unsigned thread = (tz * blockDim.y + ty) * blockDim.x + tx;
    unsigned g = block * (blockDim.x * blockDim.y * blockDim.z) + thread;
    out[g] = (bx << 20) | (by << 16) | (bz << 12) | (tx << 8) | (ty << 4) | tz;
}

#define TILE 16
// out (height x width... transposed: width rows of height) = in^T, for any
// width and height; blocks of TILE x TILE threads.
extern "C" __global__ void transpose(const unsigned *in, unsigned *out, int width, int height) {
    __shared__ unsigned tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    if (x < width && y < height)
        tile[threadIdx.y][threadIdx.x] = in[y * width + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    if (x < height && y < width)
        out[y * height + x] = tile[threadIdx.x][threadIdx.y];
}

// Reverses each block's slice through dynamic shared memory, adding a
// per-block value kept in a static shared variable (so the dynamic array
// must start after the static layout).
extern "C" __global__ void dyn_shared_reverse(const float *in, float *out) {
    extern __shared__ float s[];
    __shared__ float bias;
    unsigned t = threadIdx.x, n = blockDim.x;
    unsigned base = blockIdx.x * n;
    if (t == 0)
        bias = in[base] * 0.5f;
    s[t] = in[base + t];
    __syncthreads();
    out[base + t] = s[n - 1 - t] + bias;
}
