// For warp size 64: lane ids, warp ids and a ballot per thread.
#include "warpsim_cuda.h"

extern "C" __global__ void lane_info(unsigned *lane, unsigned *warp, unsigned *ballot) {
    unsigned t = threadIdx.x;
    unsigned l = __laneid();
    unsigned w;
    asm volatile("mov.u32 %0, %%warpid;" : "=r"(w));
    lane[t] = l;
    warp[t] = w;
    ballot[t] = __ballot_sync(0xffffffffu, l < 40);
}
