// Pitched linear memory: cudaMallocPitch, cudaMemcpy2D(Async), cudaMemset2D(Async),
// cudaMalloc3D, cudaMemcpy3D(Async), cudaMemset3D(Async), with kernels that walk the pitched
// rows; each result checked against the same work done on the host (a row offset or a pitch
// taken wrongly shows as a FAIL line). Build: nvcc -arch=sm_90 -cudart shared pitched.cu
#include <cstdio>
#include <cstring>

static int failures = 0;
#define CHECK(what, cond) do { bool ok_ = (cond); printf("%s %s\n", ok_ ? "ok  " : "FAIL", what); failures += !ok_; } while (0)

__global__ void add_row_index(float* p, size_t pitch, int width, int height) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x < width && y < height) ((float*)((char*)p + y * pitch))[x] += 1000.0f * y;
}

__global__ void scale3d(cudaPitchedPtr p, int w, int h, int d, float s) {
  int x = threadIdx.x, y = blockIdx.y, z = blockIdx.z;
  if (x < w && y < h && z < d) ((float*)((char*)p.ptr + (z * p.ysize + y) * p.pitch))[x] *= s;
}

int main() {
  const int W = 100, H = 7;
  static float host[H][W], back[H][W];
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) host[y][x] = x + 0.5f;

  // 2D: host rows in, a kernel over the pitched rows, rows back out.
  float* d = nullptr;
  size_t pitch = 0;
  CHECK("cudaMallocPitch", cudaMallocPitch((void**)&d, &pitch, W * sizeof(float), H) == cudaSuccess);
  CHECK("the pitch holds a row and is aligned", pitch >= W * sizeof(float) && pitch % 128 == 0);
  CHECK("cudaMemcpy2D host to device", cudaMemcpy2D(d, pitch, host, W * sizeof(float), W * sizeof(float), H, cudaMemcpyHostToDevice) == cudaSuccess);
  add_row_index<<<dim3(1, H), 128>>>(d, pitch, W, H);
  CHECK("the kernel over pitched rows", cudaGetLastError() == cudaSuccess);
  CHECK("cudaMemcpy2D device to host", cudaMemcpy2D(back, W * sizeof(float), d, pitch, W * sizeof(float), H, cudaMemcpyDeviceToHost) == cudaSuccess);
  bool same = true;
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) same &= back[y][x] == x + 0.5f + 1000.0f * y;
  CHECK("every element moved by its row's index", same);

  // A window: columns 10..29 of rows 2..4, copied out of the pitched rows.
  static float window[3][20];
  CHECK("cudaMemcpy2D of a window", cudaMemcpy2D(window, sizeof window[0], (char*)d + 2 * pitch + 10 * sizeof(float), pitch, sizeof window[0], 3, cudaMemcpyDeviceToHost) == cudaSuccess);
  same = true;
  for (int y = 0; y < 3; y++)
    for (int x = 0; x < 20; x++) same &= window[y][x] == back[y + 2][x + 10];
  CHECK("the window is those elements", same);

  // cudaMemset2D sets the width of each row and leaves the rest of the pitch.
  CHECK("cudaMemset2D", cudaMemset2D(d, pitch, 0, 16 * sizeof(float), H) == cudaSuccess);
  CHECK("cudaMemcpy2D back", cudaMemcpy2D(back, W * sizeof(float), d, pitch, W * sizeof(float), H, cudaMemcpyDeviceToHost) == cudaSuccess);
  same = true;
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) same &= back[y][x] == (x < 16 ? 0.0f : x + 0.5f + 1000.0f * y);
  CHECK("the first 16 columns of every row are zero, the rest kept", same);

  // The same on a stream, device to device into a second pitched buffer.
  float* d2 = nullptr;
  size_t pitch2 = 0;
  cudaStream_t s;
  CHECK("cudaStreamCreate", cudaStreamCreate(&s) == cudaSuccess);
  CHECK("cudaMallocPitch (narrower rows)", cudaMallocPitch((void**)&d2, &pitch2, 40 * sizeof(float), H) == cudaSuccess);
  CHECK("cudaMemset2DAsync", cudaMemset2DAsync(d2, pitch2, 0xff, 40 * sizeof(float), H, s) == cudaSuccess);
  CHECK("cudaMemcpy2DAsync device to device", cudaMemcpy2DAsync(d2, pitch2, (char*)d + 60 * sizeof(float), pitch, 30 * sizeof(float), H, cudaMemcpyDeviceToDevice, s) == cudaSuccess);
  static unsigned int row2[H][40];
  CHECK("cudaMemcpy2DAsync device to host", cudaMemcpy2DAsync(row2, sizeof row2[0], d2, pitch2, sizeof row2[0], H, cudaMemcpyDeviceToHost, s) == cudaSuccess);
  CHECK("cudaStreamSynchronize", cudaStreamSynchronize(s) == cudaSuccess);
  same = true;
  for (int y = 0; y < H; y++)
    for (int x = 0; x < 40; x++) {
      float want = x + 60 + 0.5f + 1000.0f * y;
      same &= x < 30 ? !memcmp(&row2[y][x], &want, 4) : row2[y][x] == 0xffffffffu;
    }
  CHECK("30 columns copied over the 0xff rows, 10 left", same);
  CHECK("cudaMemcpy2D with a pitch under the width is cudaErrorInvalidPitchValue",
        cudaMemcpy2D(d2, 8, host, W * sizeof(float), W * sizeof(float), 2, cudaMemcpyHostToDevice) == cudaErrorInvalidPitchValue);
  cudaGetLastError();

  // 3D: a box of 5 x 4 x 3 floats.
  const int X = 5, Y = 4, Z = 3;
  static float box[Z][Y][X], boxback[Z][Y][X];
  for (int z = 0; z < Z; z++)
    for (int y = 0; y < Y; y++)
      for (int x = 0; x < X; x++) box[z][y][x] = 100 * z + 10 * y + x;
  cudaExtent extent = make_cudaExtent(X * sizeof(float), Y, Z);
  cudaPitchedPtr p;
  CHECK("cudaMalloc3D", cudaMalloc3D(&p, extent) == cudaSuccess);
  CHECK("its pitched pointer", p.ptr != nullptr && p.pitch >= X * sizeof(float) && p.xsize == X * sizeof(float) && p.ysize == Y);
  cudaMemcpy3DParms in = {};
  in.srcPtr = make_cudaPitchedPtr(box, X * sizeof(float), X, Y);
  in.dstPtr = p;
  in.extent = extent;
  in.kind = cudaMemcpyHostToDevice;
  CHECK("cudaMemcpy3D host to device", cudaMemcpy3D(&in) == cudaSuccess);
  scale3d<<<dim3(1, Y, Z), 32>>>(p, X, Y, Z, 2.0f);
  CHECK("the kernel over the box", cudaGetLastError() == cudaSuccess);
  cudaMemcpy3DParms out = {};
  out.srcPtr = p;
  out.dstPtr = make_cudaPitchedPtr(boxback, X * sizeof(float), X, Y);
  out.extent = extent;
  out.kind = cudaMemcpyDeviceToHost;
  CHECK("cudaMemcpy3DAsync device to host", cudaMemcpy3DAsync(&out, s) == cudaSuccess && cudaStreamSynchronize(s) == cudaSuccess);
  same = true;
  for (int z = 0; z < Z; z++)
    for (int y = 0; y < Y; y++)
      for (int x = 0; x < X; x++) same &= boxback[z][y][x] == 2 * box[z][y][x];
  CHECK("every element of the box doubled", same);

  // A sub-box at an offset: 2 x 2 x 2 elements from (1, 1, 1).
  static float sub[2][2][2];
  cudaMemcpy3DParms part = {};
  part.srcPtr = p;
  part.srcPos = make_cudaPos(1 * sizeof(float), 1, 1);
  part.dstPtr = make_cudaPitchedPtr(sub, 2 * sizeof(float), 2, 2);
  part.extent = make_cudaExtent(2 * sizeof(float), 2, 2);
  part.kind = cudaMemcpyDefault;
  CHECK("cudaMemcpy3D of a sub-box (cudaMemcpyDefault)", cudaMemcpy3D(&part) == cudaSuccess);
  same = true;
  for (int z = 0; z < 2; z++)
    for (int y = 0; y < 2; y++)
      for (int x = 0; x < 2; x++) same &= sub[z][y][x] == boxback[z + 1][y + 1][x + 1];
  CHECK("the sub-box is those elements", same);

  // cudaMemset3D of the first two slices' first 3 rows.
  CHECK("cudaMemset3D", cudaMemset3D(p, 0, make_cudaExtent(X * sizeof(float), 3, 2)) == cudaSuccess);
  CHECK("cudaMemcpy3D back", cudaMemcpy3D(&out) == cudaSuccess);
  same = true;
  for (int z = 0; z < Z; z++)
    for (int y = 0; y < Y; y++)
      for (int x = 0; x < X; x++) same &= boxback[z][y][x] == (z < 2 && y < 3 ? 0.0f : 2 * box[z][y][x]);
  CHECK("those rows are zero, the rest kept", same);
  CHECK("cudaMemset3DAsync of all", cudaMemset3DAsync(p, 0, extent, s) == cudaSuccess && cudaMemcpy3D(&out) == cudaSuccess);
  same = true;
  for (int z = 0; z < Z; z++)
    for (int y = 0; y < Y; y++)
      for (int x = 0; x < X; x++) same &= boxback[z][y][x] == 0.0f;
  CHECK("the box is zero", same);

  CHECK("frees", cudaFree(d) == cudaSuccess && cudaFree(d2) == cudaSuccess && cudaFree(p.ptr) == cudaSuccess && cudaStreamDestroy(s) == cudaSuccess);
  printf("%d failed\n", failures);
  return failures != 0;
}
