"""Numba @cuda.jit kernels printing results (issue 12): vector add, a shared-memory block sum
and an atomic histogram. Output is deterministic."""
import numpy as np

# numba-cuda 0.30.4 on the H200 image (numpy 2.5) fails at import: numpy 2.5 removed np.row_stack,
# which numba-cuda's array support still registers. Restore the alias (row_stack was vstack).
if not hasattr(np, "row_stack"):
    np.row_stack = np.vstack

from numba import cuda, float32, int32


@cuda.jit
def vadd(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]


@cuda.jit
def block_sum(x, out):
    s = cuda.shared.array(256, dtype=float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = x[i] if i < x.size else float32(0)
    cuda.syncthreads()
    step = 128
    while step > 0:
        if t < step:
            s[t] += s[t + step]
        cuda.syncthreads()
        step //= 2
    if t == 0:
        out[cuda.blockIdx.x] = s[0]


@cuda.jit
def hist(data, bins):
    i = cuda.grid(1)
    if i < data.size:
        cuda.atomic.add(bins, data[i] % 16, int32(1))


n = 1 << 16
a = (np.arange(n, dtype=np.float32) * 0.5).astype(np.float32)
b = (1.0 / (1 + np.arange(n) % 97)).astype(np.float32)
c = cuda.device_array(n, dtype=np.float32)
vadd[n // 256, 256](cuda.to_device(a), cuda.to_device(b), c)
hc = c.copy_to_host()
print("vadd: c[0]=%.6f c[1]=%.6f c[n-1]=%.6f sum=%.6f match=%s" % (hc[0], hc[1], hc[-1], hc.astype(np.float64).sum(), bool((hc == a + b).all())))

x = ((np.arange(n) % 13) * 0.25).astype(np.float32)
parts = cuda.device_array(n // 256, dtype=np.float32)
block_sum[n // 256, 256](cuda.to_device(x), parts)
hp = parts.copy_to_host()
print("block_sum: blocks=%d parts[0]=%.2f parts[-1]=%.2f total=%.2f" % (hp.size, hp[0], hp[-1], hp.astype(np.float64).sum()))

data = (np.arange(10000, dtype=np.int32) * 7919) % 1000
bins = cuda.to_device(np.zeros(16, dtype=np.int32))
hist[(data.size + 127) // 128, 128](cuda.to_device(data), bins)
print("hist:", " ".join(str(v) for v in bins.copy_to_host()))
print("done")
