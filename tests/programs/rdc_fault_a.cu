// An out-of-bounds store in a device function of another translation unit (rdc_fault_b.cu),
// built with line info: the program sees cudaErrorIllegalAddress, and warpsim's fault message
// names the line in rdc_fault_b.cu (each unit's `.file` numbers stay its own once linked).
//
//   nvcc -arch=sm_90 -lineinfo -rdc=true -cudart shared rdc_fault_a.cu rdc_fault_b.cu -o rdc_fault
#include <cstdio>

extern __device__ void poke(int *p, int i);

__global__ void reach(int *p, int n) { poke(p, n); }

int main() {
    int *p;
    cudaMalloc(&p, 16 * sizeof(int));
    reach<<<1, 32>>>(p, 1 << 28);
    printf("%s\n", cudaGetErrorName(cudaDeviceSynchronize()));
    return 0;
}
