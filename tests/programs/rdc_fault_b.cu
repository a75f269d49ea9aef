// The second unit of rdc_fault_a.cu: the device function whose store is out of bounds.
__device__ int calls;

__device__ void poke(int *p, int i) {
    atomicAdd(&calls, 1);
    p[i + threadIdx.x] = 1;  // FAULT: i is past the end
}
