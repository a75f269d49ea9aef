// Stream capture: a memset, two launches and a copy back captured from a stream into a graph,
// which is instantiated and launched three times; nothing runs while capturing. Each result
// is checked against the host's. Build: nvcc -arch=sm_90 -cudart shared graph.cu
#include <cstdio>
#include <cstring>

static int failures = 0;
#define CHECK(what, cond) do { bool ok_ = (cond); printf("%s %s\n", ok_ ? "ok  " : "FAIL", what); failures += !ok_; } while (0)

__global__ void add(int* p, int v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += v + i;
}

__global__ void accumulate(int* acc, const int* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) acc[i] += p[i];
}

int main() {
  const int N = 300;
  int *p = nullptr, *acc = nullptr;
  static int h[N], a[N];
  CHECK("cudaMalloc", cudaMalloc(&p, N * sizeof(int)) == cudaSuccess && cudaMalloc(&acc, N * sizeof(int)) == cudaSuccess);
  CHECK("cudaMemset", cudaMemset(acc, 0, N * sizeof(int)) == cudaSuccess && cudaMemset(p, 0x7f, N * sizeof(int)) == cudaSuccess);
  cudaStream_t s;
  CHECK("cudaStreamCreate", cudaStreamCreate(&s) == cudaSuccess);
  cudaStreamCaptureStatus st = cudaStreamCaptureStatusActive;
  CHECK("not capturing before", cudaStreamIsCapturing(s, &st) == cudaSuccess && st == cudaStreamCaptureStatusNone);
  CHECK("cudaStreamBeginCapture", cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess);
  CHECK("capturing", cudaStreamIsCapturing(s, &st) == cudaSuccess && st == cudaStreamCaptureStatusActive);
  memset(h, 0, sizeof h);
  CHECK("cudaMemsetAsync captured", cudaMemsetAsync(p, 0, N * sizeof(int), s) == cudaSuccess);
  int v = 1;
  add<<<(N + 127) / 128, 128, 0, s>>>(p, v, N);
  v = 1000;  // the launch kept the value it was given
  add<<<(N + 127) / 128, 128, 0, s>>>(p, 2, N);
  accumulate<<<(N + 127) / 128, 128, 0, s>>>(acc, p, N);
  CHECK("launches captured", cudaGetLastError() == cudaSuccess);
  CHECK("cudaMemcpyAsync captured", cudaMemcpyAsync(h, p, sizeof h, cudaMemcpyDeviceToHost, s) == cudaSuccess);
  cudaGraph_t g;
  CHECK("cudaStreamEndCapture", cudaStreamEndCapture(s, &g) == cudaSuccess);
  CHECK("not capturing after", cudaStreamIsCapturing(s, &st) == cudaSuccess && st == cudaStreamCaptureStatusNone);
  CHECK("nothing ran while capturing", h[5] == 0 && cudaMemcpy(a, p, sizeof a, cudaMemcpyDeviceToHost) == cudaSuccess && a[5] == 0x7f7f7f7f);
  cudaGraphExec_t e;
  CHECK("cudaGraphInstantiate", cudaGraphInstantiate(&e, g, 0) == cudaSuccess);
  for (int round = 1; round <= 3; round++) {
    CHECK("cudaGraphLaunch", cudaGraphLaunch(e, s) == cudaSuccess && cudaStreamSynchronize(s) == cudaSuccess);
    bool same = true;
    for (int i = 0; i < N; i++) same &= h[i] == 2 * i + 3;
    CHECK("the copy back holds both launches' work (memset first)", same);
    CHECK("cudaMemcpy acc", cudaMemcpy(a, acc, sizeof a, cudaMemcpyDeviceToHost) == cudaSuccess);
    same = true;
    for (int i = 0; i < N; i++) same &= a[i] == round * (2 * i + 3);
    CHECK("the accumulator grew by one round", same);
  }
  CHECK("cudaGraphExecDestroy", cudaGraphExecDestroy(e) == cudaSuccess);
  CHECK("cudaGraphDestroy", cudaGraphDestroy(g) == cudaSuccess);
  printf("%d failed\n", failures);
  return failures != 0;
}
