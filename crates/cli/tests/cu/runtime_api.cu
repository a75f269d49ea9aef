// The runtime API beyond tests/programs, each call checked against another way to the same
// answer (so a struct field read at the wrong offset, or an error code that is not the
// header's, shows as a FAIL line). Build: nvcc -arch=sm_90 -cudart shared runtime_api.cu
#include <cstdio>
#include <cstring>

static int failures = 0;
#define CHECK(what, cond) do { bool ok_ = (cond); printf("%s %s\n", ok_ ? "ok  " : "FAIL", what); failures += !ok_; } while (0)
// An error code that must be `want`: on failure, the one that came back.
#define CHECK_ERR(what, call, want)                                                                        \
  do {                                                                                                     \
    cudaError_t e_ = (call);                                                                               \
    if (e_ == (want)) printf("ok   %s\n", what);                                                           \
    else printf("FAIL %s (got %s)\n", what, cudaGetErrorName(e_));                                        \
    failures += e_ != (want);                                                                              \
  } while (0)

__device__ int table[64];
__constant__ float weights[8];

__global__ void fill(int* p, int v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = v + table[i % 64];
}

__global__ void heavy(float* out) {
  __shared__ float s[1024];
  s[threadIdx.x] = threadIdx.x * weights[threadIdx.x % 8];
  __syncthreads();
  out[threadIdx.x] = s[1023 - threadIdx.x];
}

int main() {
  int count = -1;
  CHECK("cudaGetDeviceCount is 1", cudaGetDeviceCount(&count) == cudaSuccess && count == 1);
  int dev = -1;
  CHECK("cudaGetDevice is 0", cudaGetDevice(&dev) == cudaSuccess && dev == 0);
  CHECK("cudaSetDevice(0)", cudaSetDevice(0) == cudaSuccess);
  CHECK("cudaSetDevice(7) is cudaErrorInvalidDevice", cudaSetDevice(7) == cudaErrorInvalidDevice);
  CHECK("... and is the last error", cudaGetLastError() == cudaErrorInvalidDevice && cudaGetLastError() == cudaSuccess);

  cudaDeviceProp p;
  memset(&p, 0xff, sizeof p);
  CHECK("cudaGetDeviceProperties", cudaGetDeviceProperties(&p, 0) == cudaSuccess);
  struct { const char* name; long long field; cudaDeviceAttr attr; } fields[] = {
      {"maxThreadsPerBlock", p.maxThreadsPerBlock, cudaDevAttrMaxThreadsPerBlock},
      {"maxThreadsDim[2]", p.maxThreadsDim[2], cudaDevAttrMaxBlockDimZ},
      {"maxGridSize[0]", p.maxGridSize[0], cudaDevAttrMaxGridDimX},
      {"sharedMemPerBlock", (long long)p.sharedMemPerBlock, cudaDevAttrMaxSharedMemoryPerBlock},
      {"totalConstMem", (long long)p.totalConstMem, cudaDevAttrTotalConstantMemory},
      {"warpSize", p.warpSize, cudaDevAttrWarpSize},
      {"regsPerBlock", p.regsPerBlock, cudaDevAttrMaxRegistersPerBlock},
      {"major", p.major, cudaDevAttrComputeCapabilityMajor},
      {"minor", p.minor, cudaDevAttrComputeCapabilityMinor},
      {"multiProcessorCount", p.multiProcessorCount, cudaDevAttrMultiProcessorCount},
      {"l2CacheSize", p.l2CacheSize, cudaDevAttrL2CacheSize},
      {"maxThreadsPerMultiProcessor", p.maxThreadsPerMultiProcessor, cudaDevAttrMaxThreadsPerMultiProcessor},
      {"sharedMemPerMultiprocessor", (long long)p.sharedMemPerMultiprocessor, cudaDevAttrMaxSharedMemoryPerMultiprocessor},
      {"regsPerMultiprocessor", p.regsPerMultiprocessor, cudaDevAttrMaxRegistersPerMultiprocessor},
      {"managedMemory", p.managedMemory, cudaDevAttrManagedMemory},
      {"sharedMemPerBlockOptin", (long long)p.sharedMemPerBlockOptin, cudaDevAttrMaxSharedMemoryPerBlockOptin},
      {"maxBlocksPerMultiProcessor", p.maxBlocksPerMultiProcessor, cudaDevAttrMaxBlocksPerMultiprocessor},
      {"unifiedAddressing", p.unifiedAddressing, cudaDevAttrUnifiedAddressing},
      {"memoryBusWidth", p.memoryBusWidth, cudaDevAttrGlobalMemoryBusWidth},
      {"clusterLaunch", p.clusterLaunch, cudaDevAttrClusterLaunch},
  };
  for (auto& f : fields) {
    int v = -12345;
    cudaError_t e = cudaDeviceGetAttribute(&v, f.attr, 0);
    char what[128];
    snprintf(what, sizeof what, "prop.%s == cudaDeviceGetAttribute (%lld)", f.name, f.field);
    CHECK(what, e == cudaSuccess && v == f.field);
  }
  CHECK("prop.name is set", p.name[0] != 0 && memchr(p.name, 0, sizeof p.name) != nullptr);
  CHECK("prop.totalGlobalMem > 1 GiB", p.totalGlobalMem > (1ull << 30));
  CHECK("warpSize is 32 and cc is 9.0", p.warpSize == 32 && p.major == 9 && p.minor == 0);

  int rt = 0, drv = 0;
  CHECK("cudaRuntimeGetVersion is 13.x", cudaRuntimeGetVersion(&rt) == cudaSuccess && rt / 1000 == 13);
  CHECK("cudaDriverGetVersion >= runtime", cudaDriverGetVersion(&drv) == cudaSuccess && drv >= rt);

  // Symbols: address, size, copy in, kernel reads them, copy out.
  int* table_addr = nullptr;
  size_t table_size = 0;
  CHECK("cudaGetSymbolAddress", cudaGetSymbolAddress((void**)&table_addr, table) == cudaSuccess && table_addr != nullptr);
  CHECK("cudaGetSymbolSize is 256", cudaGetSymbolSize(&table_size, table) == cudaSuccess && table_size == 256);
  int h[64];
  for (int i = 0; i < 64; i++) h[i] = i * i;
  CHECK("cudaMemcpyToSymbol at an offset", cudaMemcpyToSymbol(table, h + 8, 56 * sizeof(int), 8 * sizeof(int)) == cudaSuccess &&
                                               cudaMemcpyToSymbol(table, h, 8 * sizeof(int)) == cudaSuccess);
  CHECK("a copy past the symbol is cudaErrorInvalidValue", cudaMemcpyToSymbol(table, h, 8, 252) == cudaErrorInvalidValue);
  cudaGetLastError();
  int* d = nullptr;
  CHECK("cudaMalloc", cudaMalloc(&d, 1000 * sizeof(int)) == cudaSuccess);
  CHECK("cudaMemset", cudaMemset(d, 0, 1000 * sizeof(int)) == cudaSuccess);
  fill<<<4, 256>>>(d, 5, 1000);
  CHECK("launch", cudaGetLastError() == cudaSuccess && cudaDeviceSynchronize() == cudaSuccess);
  int out[1000];
  CHECK("cudaMemcpy back", cudaMemcpy(out, d, sizeof out, cudaMemcpyDeviceToHost) == cudaSuccess);
  bool good = true;
  for (int i = 0; i < 1000; i++) good &= out[i] == 5 + (i % 64) * (i % 64);
  CHECK("the kernel read the symbol", good);
  int back[64];
  CHECK("cudaMemcpyFromSymbol", cudaMemcpyFromSymbol(back, table, sizeof back) == cudaSuccess && !memcmp(back, h, sizeof h));
  CHECK("the symbol address is the symbol", cudaMemcpy(back, table_addr, sizeof back, cudaMemcpyDefault) == cudaSuccess && !memcmp(back, h, sizeof h));

  // Launch configuration errors are reported at the launch, and are not sticky.
  fill<<<1, 2048>>>(d, 0, 1);
  CHECK_ERR("2048 threads is cudaErrorInvalidValue", cudaGetLastError(), cudaErrorInvalidValue);
  fill<<<0, 32>>>(d, 0, 1);
  CHECK_ERR("an empty grid is cudaErrorInvalidValue", cudaGetLastError(), cudaErrorInvalidValue);
  CHECK("and the device still works", cudaDeviceSynchronize() == cudaSuccess);

  // Function attributes and occupancy.
  cudaFuncAttributes fa;
  memset(&fa, 0xff, sizeof fa);
  CHECK("cudaFuncGetAttributes", cudaFuncGetAttributes(&fa, heavy) == cudaSuccess);
  CHECK("heavy uses 4 KiB of static shared memory", fa.sharedSizeBytes == 4096);
  CHECK("maxThreadsPerBlock is the device's", fa.maxThreadsPerBlock > 0 && fa.maxThreadsPerBlock <= p.maxThreadsPerBlock);
  CHECK("numRegs is plausible", fa.numRegs > 0 && fa.numRegs <= 255);
  CHECK("ptxVersion is set", fa.ptxVersion >= 80);
  int blocks = -1;
  CHECK("occupancy of 1024-thread blocks", cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, heavy, 1024, 0) == cudaSuccess &&
                                               blocks >= 1 && blocks * 1024 <= p.maxThreadsPerMultiProcessor);
  int min_grid = 0, block = 0;
  CHECK("cudaOccupancyMaxPotentialBlockSize", cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, fill) == cudaSuccess && block > 0 &&
                                                  block <= 1024 && block % 32 == 0);
  CHECK_ERR("a host function is cudaErrorInvalidResourceHandle", cudaFuncGetAttributes(&fa, (const void*)main), cudaErrorInvalidResourceHandle);
  cudaGetLastError();

  // Pointer attributes of each kind of memory.
  int *pinned = nullptr, *managed = nullptr, host_var = 0;
  CHECK("cudaMallocHost", cudaMallocHost(&pinned, 64) == cudaSuccess);
  CHECK("cudaMallocManaged", cudaMallocManaged(&managed, 64) == cudaSuccess);
  cudaPointerAttributes a;
  CHECK("device memory is cudaMemoryTypeDevice", cudaPointerGetAttributes(&a, d) == cudaSuccess && a.type == cudaMemoryTypeDevice &&
                                                      a.devicePointer == d && a.device == 0);
  CHECK("pinned memory is cudaMemoryTypeHost", cudaPointerGetAttributes(&a, pinned) == cudaSuccess && a.type == cudaMemoryTypeHost &&
                                                    a.hostPointer == pinned);
  CHECK("managed memory is cudaMemoryTypeManaged", cudaPointerGetAttributes(&a, managed) == cudaSuccess && a.type == cudaMemoryTypeManaged);
  CHECK("a stack variable is cudaMemoryTypeUnregistered", cudaPointerGetAttributes(&a, &host_var) == cudaSuccess &&
                                                               a.type == cudaMemoryTypeUnregistered);
  int* mapped_dev = nullptr;
  CHECK("cudaHostGetDevicePointer", cudaHostGetDevicePointer((void**)&mapped_dev, pinned, 0) == cudaSuccess && mapped_dev != nullptr);

  // Streams, events and host callbacks in issue order.
  cudaStream_t s;
  CHECK("cudaStreamCreateWithFlags", cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
  CHECK("cudaMemsetAsync", cudaMemsetAsync(d, 0xff, 4 * sizeof(int), s) == cudaSuccess);
  CHECK("cudaMemcpyAsync to pinned", cudaMemcpyAsync(pinned, d, 4 * sizeof(int), cudaMemcpyDeviceToHost, s) == cudaSuccess);
  CHECK("cudaStreamSynchronize", cudaStreamSynchronize(s) == cudaSuccess && pinned[0] == -1 && pinned[3] == -1);
  CHECK("cudaStreamQuery of an idle stream", cudaStreamQuery(s) == cudaSuccess);
  cudaEvent_t e;
  CHECK("cudaEventCreateWithFlags", cudaEventCreateWithFlags(&e, cudaEventDisableTiming) == cudaSuccess);
  CHECK("cudaEventRecord + Synchronize", cudaEventRecord(e, s) == cudaSuccess && cudaEventSynchronize(e) == cudaSuccess);
  CHECK("cudaEventDestroy", cudaEventDestroy(e) == cudaSuccess);
  CHECK("cudaStreamDestroy", cudaStreamDestroy(s) == cudaSuccess);

  // Errors by name and message.
  CHECK("cudaGetErrorName(cudaErrorInvalidValue)", !strcmp(cudaGetErrorName(cudaErrorInvalidValue), "cudaErrorInvalidValue"));
  CHECK("cudaGetErrorString(cudaErrorMemoryAllocation)", !strcmp(cudaGetErrorString(cudaErrorMemoryAllocation), "out of memory"));
  CHECK("an unknown code", !strcmp(cudaGetErrorName((cudaError_t)12345), "unrecognized error code"));
  CHECK("cudaPeekAtLastError keeps it", cudaMemcpy(d, d, 4, (cudaMemcpyKind)9) == cudaErrorInvalidMemcpyDirection &&
                                            cudaPeekAtLastError() == cudaErrorInvalidMemcpyDirection &&
                                            cudaGetLastError() == cudaErrorInvalidMemcpyDirection && cudaPeekAtLastError() == cudaSuccess);
  CHECK("cudaFree(nullptr)", cudaFree(nullptr) == cudaSuccess);
  CHECK("frees", cudaFree(d) == cudaSuccess && cudaFree(managed) == cudaSuccess && cudaFreeHost(pinned) == cudaSuccess);
  CHECK("cudaDeviceReset", cudaDeviceReset() == cudaSuccess);
  fill<<<1, 32>>>(nullptr, 0, 0);
  CHECK("a launch after the reset", cudaGetLastError() == cudaSuccess && cudaDeviceSynchronize() == cudaSuccess);
  printf("%d failed\n", failures);
  return failures != 0;
}
