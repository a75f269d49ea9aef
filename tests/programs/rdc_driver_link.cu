// The driver's JIT linker with several PTX inputs: the PTX of rdc_a.cu and rdc_b.cu (made with
// `nvcc -arch=sm_90 -rdc=true -ptx rdc_a.cu rdc_b.cu`), linked with cuLinkCreate,
// cuLinkAddData, cuLinkComplete and loaded with cuModuleLoadData; then links that must fail (a
// unit alone: its externs are undefined; a unit twice: its symbols are defined twice).
//
//   nvcc -arch=sm_90 rdc_driver_link.cu -lcuda -o rdc_driver_link
//   ./rdc_driver_link rdc_a.ptx rdc_b.ptx
//
// Prints "ok ..." for each check that holds and "N failed" at the end.
#include <cuda.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

static int failed = 0;

static void check(bool ok, const char *what) {
    printf("%s %s\n", ok ? "ok" : "FAILED", what);
    failed += !ok;
}

static bool call(CUresult r, const char *what) {
    if (r != CUDA_SUCCESS) {
        const char *name = "?";
        cuGetErrorName(r, &name);
        printf("FAILED %s: %s\n", what, name);
        failed++;
    }
    return r == CUDA_SUCCESS;
}

static std::string slurp(const char *path) {
    std::string s;
    FILE *f = fopen(path, "rb");
    if (!f) return s;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
    fclose(f);
    return s;
}

struct Link {
    CUlinkState state = nullptr;
    char log[8192] = {0};
    CUresult result = CUDA_SUCCESS;
    void *cubin = nullptr;
    size_t size = 0;
};

// Links the named PTX texts; `l.result` is the first failing call's result.
static void link(Link &l, const std::string *ptx, const char *const *names, int n) {
    CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *vals[] = {l.log, (void *)(size_t)sizeof l.log};
    l.result = cuLinkCreate(2, opts, vals, &l.state);
    for (int i = 0; i < n && l.result == CUDA_SUCCESS; i++) {
        l.result = cuLinkAddData(l.state, CU_JIT_INPUT_PTX, (void *)ptx[i].c_str(), ptx[i].size() + 1, names[i], 0, nullptr, nullptr);
    }
    if (l.result == CUDA_SUCCESS) l.result = cuLinkComplete(l.state, &l.cubin, &l.size);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s rdc_a.ptx rdc_b.ptx\n", argv[0]);
        return 2;
    }
    std::string ptx[3] = {slurp(argv[1]), slurp(argv[2]), slurp(argv[2])};
    if (ptx[0].empty() || ptx[1].empty()) {
        fprintf(stderr, "cannot read %s or %s\n", argv[1], argv[2]);
        return 2;
    }
    const char *names[3] = {"rdc_a.ptx", "rdc_b.ptx", "rdc_b_again.ptx"};
    CUdevice dev;
    CUcontext ctx;
    if (!call(cuInit(0), "cuInit") || !call(cuDeviceGet(&dev, 0), "cuDeviceGet") ||
        !call(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain") || !call(cuCtxSetCurrent(ctx), "cuCtxSetCurrent")) {
        printf("%d failed\n", failed);
        return 1;
    }

    Link l;
    link(l, ptx, names, 2);
    check(l.result == CUDA_SUCCESS && l.cubin != nullptr && l.size > 0, "cuLinkComplete of rdc_a.ptx and rdc_b.ptx");
    CUmodule mod = nullptr;
    if (l.result == CUDA_SUCCESS) call(cuModuleLoadData(&mod, l.cubin), "cuModuleLoadData(linked)");
    if (l.state) cuLinkDestroy(l.state);
    if (mod) {
        CUfunction evaluate, tally;
        CUdeviceptr coeffs, hits;
        size_t coeffs_size = 0, hits_size = 0;
        call(cuModuleGetFunction(&evaluate, mod, "_Z8evaluatePfPii"), "cuModuleGetFunction(evaluate)");
        call(cuModuleGetFunction(&tally, mod, "_Z5tallyPi"), "cuModuleGetFunction(tally)");
        call(cuModuleGetGlobal(&coeffs, &coeffs_size, mod, "coeffs"), "cuModuleGetGlobal(coeffs)");
        call(cuModuleGetGlobal(&hits, &hits_size, mod, "hits"), "cuModuleGetGlobal(hits)");
        check(coeffs_size == 16 && hits_size == 4, "the sizes of coeffs (rdc_b.ptx) and hits");
        const float c[4] = {2.0f, 1.0f, -0.5f, 0.125f};
        call(cuMemcpyHtoD(coeffs, c, sizeof c), "cuMemcpyHtoD(coeffs)");
        const int n = 64;
        CUdeviceptr y, z, out;
        call(cuMemAlloc(&y, n * sizeof(float)), "cuMemAlloc");
        call(cuMemAlloc(&z, n * sizeof(int)), "cuMemAlloc");
        call(cuMemAlloc(&out, 3 * sizeof(int)), "cuMemAlloc");
        int count = n;
        void *args[] = {&y, &z, &count};
        call(cuLaunchKernel(evaluate, 1, 1, 1, n, 1, 1, 0, nullptr, args, nullptr), "cuLaunchKernel(evaluate)");
        void *targs[] = {&out};
        call(cuLaunchKernel(tally, 1, 1, 1, 32, 1, 1, 0, nullptr, targs, nullptr), "cuLaunchKernel(tally)");
        call(cuCtxSynchronize(), "cuCtxSynchronize");
        float hy[n];
        int hz[n], t[3], h = 0;
        call(cuMemcpyDtoH(hy, y, sizeof hy), "cuMemcpyDtoH(y)");
        call(cuMemcpyDtoH(hz, z, sizeof hz), "cuMemcpyDtoH(z)");
        call(cuMemcpyDtoH(t, out, sizeof t), "cuMemcpyDtoH(out)");
        call(cuMemcpyDtoH(&h, hits, sizeof h), "cuMemcpyDtoH(hits)");
        int bad = 0;
        for (int i = 0; i < n; i++) {
            float x = i * 0.25f;
            bad += hy[i] != c[0] + x * (c[1] + x * (c[2] + x * c[3]));
            bad += hz[i] != i * 3 + 2;
        }
        printf("hits=%d tally: hits=%d twice(scale)=%d unit=%d\n", h, t[0], t[1], t[2]);
        check(bad == 0, "evaluate (rdc_a.ptx) calls poly and bump (rdc_b.ptx)");
        check(h == n && t[0] == n && t[1] == 6 && t[2] == 2, "tally (rdc_b.ptx) sees the hits and scale the other unit used");
        cuMemFree(y);
        cuMemFree(z);
        cuMemFree(out);
        cuModuleUnload(mod);
    }

    // rdc_a.ptx alone: poly and bump are undefined.
    Link alone;
    link(alone, ptx, names, 1);
    check(alone.result != CUDA_SUCCESS, "linking rdc_a.ptx alone fails");
    check(strstr(alone.log, "_Z4polyf") || strstr(alone.log, "_Z4bumpi"), "and its error log names an undefined function");
    if (alone.state) cuLinkDestroy(alone.state);

    // rdc_b.ptx twice: its visible symbols are defined twice.
    Link twice;
    link(twice, ptx + 1, names + 1, 2);
    check(twice.result != CUDA_SUCCESS, "linking rdc_b.ptx twice fails");
    const char *dup[] = {"hits", "coeffs", "calls", "_Z4polyf", "_Z4bumpi", "_Z5tallyPi"};
    bool named = false;
    for (const char *d : dup) named = named || strstr(twice.log, d);
    check(named, "and its error log names a symbol defined twice");
    if (twice.state) cuLinkDestroy(twice.state);

    printf("%d failed\n", failed);
    return failed ? 1 : 0;
}
