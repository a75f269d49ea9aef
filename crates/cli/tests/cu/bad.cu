extern "C" __global__ void bad(float *x) {
    x[threadIdx.x] = undefined_thing;
}
