// Built with `nvcc --default-stream per-thread`, which renames the stream-ordered calls to
// their per-thread entry points (cudaMemcpy_ptds, cudaMemcpyAsync_ptsz, cudaEventRecord_ptsz,
// ...); two host threads each work on their own default stream. Each result is checked
// against the host's. Build: nvcc -arch=sm_90 -cudart shared --default-stream per-thread per_thread.cu
#include <cstdio>
#include <cstring>
#include <thread>

static int failures = 0;
#define CHECK(what, cond) do { bool ok_ = (cond); printf("%s %s\n", ok_ ? "ok  " : "FAIL", what); failures += !ok_; } while (0)

__device__ int offset;

__global__ void iota(int* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = i + offset;
}

static void host_fn(void* flag) { *(int*)flag = 1; }

// One thread's work on its default stream; returns whether every result held.
static bool work(int base, int n) {
  int* d = nullptr;
  bool ok = cudaMalloc(&d, n * sizeof(int)) == cudaSuccess;
  ok &= cudaMemsetAsync(d, 0, n * sizeof(int), 0) == cudaSuccess;
  iota<<<(n + 127) / 128, 128>>>(d, n);
  ok &= cudaGetLastError() == cudaSuccess;
  int* h = new int[n];
  ok &= cudaMemcpyAsync(h, d, n * sizeof(int), cudaMemcpyDeviceToHost, 0) == cudaSuccess;
  ok &= cudaStreamSynchronize(0) == cudaSuccess;
  for (int i = 0; i < n; i++) ok &= h[i] == i + base;
  delete[] h;
  ok &= cudaFree(d) == cudaSuccess;
  return ok;
}

int main() {
  int base = 5;
  CHECK("cudaMemcpyToSymbol (cudaMemcpyToSymbol_ptds)", cudaMemcpyToSymbol(offset, &base, sizeof base) == cudaSuccess);
  int back = 0;
  CHECK("cudaMemcpyFromSymbolAsync (_ptsz)", cudaMemcpyFromSymbolAsync(&back, offset, sizeof back, 0, cudaMemcpyDeviceToHost, 0) == cudaSuccess &&
                                                 cudaStreamSynchronize(0) == cudaSuccess && back == 5);

  const int N = 1000;
  int* d = nullptr;
  CHECK("cudaMalloc", cudaMalloc(&d, N * sizeof(int)) == cudaSuccess);
  CHECK("cudaMemset (cudaMemset_ptds)", cudaMemset(d, 0xff, N * sizeof(int)) == cudaSuccess);
  cudaEvent_t start, stop;
  CHECK("cudaEventCreate", cudaEventCreate(&start) == cudaSuccess && cudaEventCreate(&stop) == cudaSuccess);
  CHECK("cudaEventRecord (_ptsz)", cudaEventRecord(start, 0) == cudaSuccess);
  iota<<<(N + 255) / 256, 256>>>(d, N);
  CHECK("the launch (__cudaLaunchKernel_ptsz)", cudaGetLastError() == cudaSuccess);
  CHECK("cudaEventRecord after it", cudaEventRecord(stop, 0) == cudaSuccess && cudaEventSynchronize(stop) == cudaSuccess);
  float ms = -1;
  CHECK("cudaEventElapsedTime is positive", cudaEventElapsedTime(&ms, start, stop) == cudaSuccess && ms > 0);
  CHECK("cudaStreamQuery (_ptsz)", cudaStreamQuery(0) == cudaSuccess);
  static int h[N];
  CHECK("cudaMemcpy (cudaMemcpy_ptds)", cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost) == cudaSuccess);
  bool same = true;
  for (int i = 0; i < N; i++) same &= h[i] == i + 5;
  CHECK("the kernel's values", same);

  cudaStream_t s;
  CHECK("cudaStreamCreate", cudaStreamCreate(&s) == cudaSuccess);
  CHECK("cudaStreamWaitEvent (_ptsz)", cudaStreamWaitEvent(s, stop, 0) == cudaSuccess);
  static int rows[4][10];
  CHECK("cudaMemcpy2DAsync (_ptsz)", cudaMemcpy2DAsync(rows, sizeof rows[0], d, 40 * sizeof(int), sizeof rows[0], 4, cudaMemcpyDeviceToHost, s) == cudaSuccess);
  int flag = 0;
  CHECK("cudaLaunchHostFunc (_ptsz)", cudaLaunchHostFunc(s, host_fn, &flag) == cudaSuccess);
  CHECK("cudaStreamSynchronize (_ptsz)", cudaStreamSynchronize(s) == cudaSuccess && flag == 1);
  same = true;
  for (int y = 0; y < 4; y++)
    for (int x = 0; x < 10; x++) same &= rows[y][x] == 40 * y + x + 5;
  CHECK("the rows, 40 elements apart", same);
  CHECK("cudaMemset2D (_ptds)", cudaMemset2D(d, 40 * sizeof(int), 0, 8, 4) == cudaSuccess &&
                                    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost) == cudaSuccess && h[0] == 0 && h[1] == 0 && h[2] == 7 && h[40] == 0 && h[42] == 47);

  bool a = false, b = false;
  std::thread t1([&] { a = work(5, 3000); }), t2([&] { b = work(5, 700); });
  t1.join();
  t2.join();
  CHECK("two host threads, each on its default stream", a && b);
  CHECK("cudaDeviceSynchronize", cudaDeviceSynchronize() == cudaSuccess);
  printf("%d failed\n", failures);
  return failures != 0;
}
