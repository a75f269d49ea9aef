// Separate compilation (-rdc): this unit's kernel calls device functions and uses variables
// defined in rdc_b.cu, and launches a kernel defined there; each unit has a weak function
// (the template twice), an internal one of the same name (unit_id) and a printf string.
//
//   nvcc -arch=sm_90 -rdc=true -cudart shared rdc_a.cu rdc_b.cu -o rdc
// or in two steps:
//   nvcc -arch=sm_90 -dc rdc_a.cu -o a.o && nvcc -arch=sm_90 -dc rdc_b.cu -o b.o
//   nvcc -arch=sm_90 -cudart shared a.o b.o -o rdc
//
// It prints what it computed and checks it against the host's arithmetic: "ok ..." for each
// check that holds, "N failed" at the end (exit code 1 when N > 0).
#include <cstdio>

extern __device__ int hits;
extern __constant__ float coeffs[4];
extern __managed__ int calls;
extern __device__ float poly(float x);
extern __device__ int bump(int v);
__global__ void tally(int *out);

__device__ int scale = 3;

template <class T> __device__ __noinline__ T twice(T x) { return x + x; }
static __device__ __noinline__ int unit_id(int v) { return 1 + v / 100000; }

__global__ void evaluate(float *y, int *z, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = poly(i * 0.25f);
        z[i] = bump(i) + twice(unit_id(i));
    }
    if (i == 0) printf("evaluate in unit %d: scale=%d\n", unit_id(i), scale);
}

static int failed = 0;

static void check(bool ok, const char *what) {
    if (ok) {
        printf("ok %s\n", what);
    } else {
        printf("FAILED %s\n", what);
        failed++;
    }
}

static void check_call(cudaError_t e, const char *what) {
    if (e != cudaSuccess) {
        printf("FAILED %s: %s\n", what, cudaGetErrorName(e));
        failed++;
    }
}

int main() {
    const int n = 100;
    const float c[4] = {1.0f, -2.0f, 0.5f, 0.25f};
    check_call(cudaMemcpyToSymbol(coeffs, c, sizeof c), "cudaMemcpyToSymbol(coeffs)");
    float *y;
    int *z, *out;
    check_call(cudaMalloc(&y, n * sizeof(float)), "cudaMalloc");
    check_call(cudaMalloc(&z, n * sizeof(int)), "cudaMalloc");
    check_call(cudaMalloc(&out, 3 * sizeof(int)), "cudaMalloc");
    calls = 10;

    evaluate<<<2, 64>>>(y, z, n);
    check_call(cudaGetLastError(), "evaluate<<<2, 64>>>");
    check_call(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    float hy[n];
    int hz[n];
    check_call(cudaMemcpy(hy, y, sizeof hy, cudaMemcpyDeviceToHost), "cudaMemcpy(y)");
    check_call(cudaMemcpy(hz, z, sizeof hz, cudaMemcpyDeviceToHost), "cudaMemcpy(z)");
    int bad_y = 0, bad_z = 0;
    double sum = 0;
    for (int i = 0; i < n; i++) {
        float x = i * 0.25f;  // every value below is exact in float: no rounding to differ in
        float want = c[0] + x * (c[1] + x * (c[2] + x * c[3]));
        bad_y += hy[i] != want;
        bad_z += hz[i] != i * 3 + 2;
        sum += hy[i] + hz[i];
    }
    printf("sum of y and z: %.4f\n", sum);
    check(bad_y == 0, "poly (rdc_b.cu) with coeffs set from this unit's host code");
    check(bad_z == 0, "bump (rdc_b.cu) reads scale (this unit), twice and unit_id of this unit");

    int h = -1;
    check_call(cudaMemcpyFromSymbol(&h, hits, sizeof h), "cudaMemcpyFromSymbol(hits)");
    printf("hits after evaluate: %d\n", h);
    check(h == n, "hits (rdc_b.cu) counted once per element");

    const int new_scale = 4;
    check_call(cudaMemcpyToSymbol(scale, &new_scale, sizeof new_scale), "cudaMemcpyToSymbol(scale)");
    tally<<<1, 32>>>(out);
    check_call(cudaGetLastError(), "tally<<<1, 32>>>");
    int t[3] = {0, 0, 0};
    check_call(cudaMemcpy(t, out, sizeof t, cudaMemcpyDeviceToHost), "cudaMemcpy(out)");
    printf("tally: hits=%d twice(scale)=%d unit=%d calls=%d\n", t[0], t[1], t[2], calls);
    check(t[0] == n, "the kernel of rdc_b.cu sees the same hits");
    check(t[1] == 2 * new_scale, "and the scale this unit's host code set");
    check(t[2] == 2, "and its own unit_id");
    check(calls == 11, "a __managed__ variable of rdc_b.cu, from this unit's host code");

    void *p_hits = nullptr, *p_scale = nullptr;
    check_call(cudaGetSymbolAddress(&p_hits, hits), "cudaGetSymbolAddress(hits)");
    check_call(cudaGetSymbolAddress(&p_scale, scale), "cudaGetSymbolAddress(scale)");
    check(p_hits != nullptr && p_scale != nullptr && p_hits != p_scale, "the two units' variables have distinct addresses");

    cudaFree(y);
    cudaFree(z);
    cudaFree(out);
    printf("%d failed\n", failed);
    return failed ? 1 : 0;
}
