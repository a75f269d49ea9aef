// Written as for nvcc: includes the toolkit's header (warpsim supplies a
// stand-in), a C++ kernel name, size_t, __ldg.
#include <cuda_runtime.h>

__global__ void saxpy(int n, float a, const float *__restrict__ x, float *__restrict__ y) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * __ldg(&x[i]) + y[i];
}
