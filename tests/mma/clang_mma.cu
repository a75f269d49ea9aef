// Tensor-core kernels compiled by clang-19 (crates/cli/tests/mma.rs runs
// them in warpsim and checks them against float64 references): wmma through
// clang's builtins, mma.sync / ldmatrix / cp.async / mbarrier through inline
// PTX, as CUTLASS writes them.
#include "../cuda/warpsim_cuda.h"

// D = A (16x16 row-major) * B (16x16 column-major) + C (row-major), one warp.
extern "C" __global__ void wmma_f16(const unsigned short* a, const unsigned short* b, const float* c, float* d) {
    int fa[8], fb[8];
    float fc[8], fd[8];
    __hmma_m16n16k16_ld_a(fa, (const int*)a, 16, 0);
    __hmma_m16n16k16_ld_b(fb, (const int*)b, 16, 1);
    __hmma_m16n16k16_ld_c_f32(fc, c, 16, 0);
    __hmma_m16n16k16_mma_f32f32(fd, fa, fb, fc, 1, 0);
    __hmma_m16n16k16_st_c_f32(d, fd, 16, 0);
}

// The same with bf16 inputs, A column-major and D stored column-major.
extern "C" __global__ void wmma_bf16(const unsigned short* a, const unsigned short* b, const float* c, float* d) {
    int fa[4], fb[4];
    float fc[8], fd[8];
    __mma_bf16_m16n16k16_ld_a(fa, (const int*)a, 16, 1);
    __mma_bf16_m16n16k16_ld_b(fb, (const int*)b, 16, 1);
    __hmma_m16n16k16_ld_c_f32(fc, c, 16, 1);
    __mma_bf16_m16n16k16_mma_f32(fd, fa, fb, fc, 3, 0);
    __hmma_m16n16k16_st_c_f32(d, fd, 16, 1);
}

// tf32: D = A (16x8 row-major) * B (8x16 row-major) + C.
extern "C" __global__ void wmma_tf32(const float* a, const float* b, const float* c, float* d) {
    int fa[4], fb[4];
    float fc[8], fd[8];
    __mma_tf32_m16n16k8_ld_a(fa, (const int*)a, 8, 0);
    __mma_tf32_m16n16k8_ld_b(fb, (const int*)b, 16, 0);
    __mma_tf32_m16n16k8_ld_c(fc, c, 16, 0);
    __mma_tf32_m16n16k8_mma_f32(fd, fa, fb, fc, 0, 0);
    __mma_m16n16k8_st_c_f32(d, fd, 16, 0);
}

__device__ static unsigned smem(const void* p) {
    unsigned long long g = (unsigned long long)p, s;
    asm("cvta.to.shared.u64 %0, %1;" : "=l"(s) : "l"(g));
    return (unsigned)s;
}

// A (16x16 f16, row-major) and B^T (8x16 f16: B column-major) are copied to
// shared memory with cp.async (16 bytes per thread, completion tracked by an
// mbarrier through cp.async.mbarrier.arrive.noinc), loaded into fragments
// with ldmatrix and multiplied with mma.sync.m16n8k16: D = A * B + C.
extern "C" __global__ void mma_pipeline(const unsigned short* a, const unsigned short* bt, const float* c, float* d) {
    __shared__ __attribute__((aligned(16))) unsigned short sa[256];
    __shared__ __attribute__((aligned(16))) unsigned short sb[128];
    __shared__ __attribute__((aligned(8))) unsigned long long bar;
    int lane = threadIdx.x;
    if (lane == 0) asm volatile("mbarrier.init.shared.b64 [%0], 32;" ::"r"(smem(&bar)));
    __syncwarp();
    // 512 + 256 bytes: 48 copies of 16 bytes; lanes 0..31 copy A, lanes 0..15 copy B.
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem(sa + lane * 8)), "l"(a + lane * 8));
    if (lane < 16) asm volatile("cp.async.ca.shared.global [%0], [%1], 16;" ::"r"(smem(sb + lane * 8)), "l"(bt + lane * 8));
    asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];" ::"r"(smem(&bar)));
    unsigned done = 0;
    while (!done) {
        asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared.b64 p, [%1], 0;\nselp.u32 %0, 1, 0, p;\n}" : "=r"(done) : "r"(smem(&bar)));
    }
    unsigned fa[4], fb[2];
    // x4: matrices (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7, k 8-15), (rows 8-15, k 8-15).
    int r = lane % 16, kh = lane / 16;
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(fa[0]), "=r"(fa[1]), "=r"(fa[2]), "=r"(fa[3])
                 : "r"(smem(sa + r * 16 + kh * 8)));
    // x2 over B^T: matrices (n 0-7, k 0-7), (n 0-7, k 8-15).
    int n = lane % 8, kb = (lane / 8) % 2;
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];" : "=r"(fb[0]), "=r"(fb[1]) : "r"(smem(sb + n * 16 + kb * 8)));
    int g = lane / 4, t = lane % 4;
    float acc[4];
    for (int i = 0; i < 4; i++) acc[i] = c[(g + 8 * (i / 2)) * 8 + 2 * t + i % 2];
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
                 : "r"(fa[0]), "r"(fa[1]), "r"(fa[2]), "r"(fa[3]), "r"(fb[0]), "r"(fb[1]));
    for (int i = 0; i < 4; i++) d[(g + 8 * (i / 2)) * 8 + 2 * t + i % 2] = acc[i];
}
