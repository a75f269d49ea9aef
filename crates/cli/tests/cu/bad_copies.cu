// Copies a GPU refuses: each returns cudaErrorInvalidValue and the program goes on (before,
// a bogus device pointer was read as host memory and the program crashed). Prints "ok ..."
// per check and "N failed" at the end.
#include <cstdio>

static int failed = 0;
static void check(bool ok, const char* what) {
  printf("%s %s\n", ok ? "ok" : "FAIL", what);
  failed += !ok;
}

int main() {
  int h[4] = {1, 2, 3, 4};
  int* d = nullptr;
  check(cudaMalloc(&d, 16) == cudaSuccess, "cudaMalloc of 16 bytes");
  check(cudaMemcpy(h, (void*)0x1234, 16, cudaMemcpyDeviceToHost) == cudaErrorInvalidValue,
        "device-to-host from a pointer that is not device memory");
  check(cudaMemcpy((void*)0x12340, h, 16, cudaMemcpyHostToDevice) == cudaErrorInvalidValue,
        "host-to-device into a pointer that is not device memory");
  check(cudaMemcpy(d, h, 1 << 20, cudaMemcpyHostToDevice) == cudaErrorInvalidValue,
        "host-to-device of 1 MB into a 16-byte allocation");
  check(cudaMemcpy(h, d, 1 << 20, cudaMemcpyDeviceToHost) == cudaErrorInvalidValue,
        "device-to-host of 1 MB from a 16-byte allocation");
  cudaGetLastError();
  check(cudaMemcpy(d, h, 16, cudaMemcpyHostToDevice) == cudaSuccess, "a good copy still works after them");
  int back[4] = {0, 0, 0, 0};
  check(cudaMemcpy(back, d, 16, cudaMemcpyDeviceToHost) == cudaSuccess && back[3] == 4, "and brings the bytes back");
  printf("%d failed\n", failed);
  return failed != 0;
}
