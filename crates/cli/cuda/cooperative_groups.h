// warpsim's stand-in for the CUDA toolkit's cooperative_groups.h, for
// compiling with clang alone: the block group, static tiles of a warp
// (tiled_partition<N>, N a power of two up to 32) with their shuffles,
// votes and sync, coalesced_threads(), and cooperative_groups::reduce with
// plus/less/greater/bit_and/bit_or/bit_xor (cooperative_groups/reduce.h).
// Grid-wide groups (this_grid) need a cooperative launch and are not here.
#ifndef WARPSIM_COOPERATIVE_GROUPS_H
#define WARPSIM_COOPERATIVE_GROUPS_H

namespace cooperative_groups {

#define WS_CG __device__ __forceinline__

struct thread_block {
    WS_CG void sync() const { __syncthreads(); }
    WS_CG unsigned thread_rank() const { return (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x; }
    WS_CG unsigned size() const { return blockDim.x * blockDim.y * blockDim.z; }
    WS_CG unsigned num_threads() const { return size(); }
};
WS_CG thread_block this_thread_block() { return thread_block(); }
WS_CG void sync(const thread_block &g) { g.sync(); }

// N consecutive lanes of a warp (by thread rank in the block).
template <unsigned N> struct thread_block_tile {
    static_assert(N >= 1 && N <= 32 && (N & (N - 1)) == 0, "tiles are powers of two up to 32");
    WS_CG unsigned base() const { return __laneid() & ~(N - 1); }
    WS_CG unsigned mask() const { return N == 32 ? 0xffffffffu : ((1u << N) - 1) << base(); }
    WS_CG void sync() const { __syncwarp(mask()); }
    WS_CG unsigned thread_rank() const { return __laneid() & (N - 1); }
    WS_CG unsigned size() const { return N; }
    WS_CG unsigned num_threads() const { return N; }
    WS_CG unsigned meta_group_rank() const { return this_thread_block().thread_rank() / N; }
    WS_CG unsigned meta_group_size() const { return (this_thread_block().size() + N - 1) / N; }
    template <class T> WS_CG T shfl(T v, int src) const { return __shfl_sync(mask(), v, src, N); }
    template <class T> WS_CG T shfl_down(T v, unsigned d) const { return __shfl_down_sync(mask(), v, d, N); }
    template <class T> WS_CG T shfl_up(T v, unsigned d) const { return __shfl_up_sync(mask(), v, d, N); }
    template <class T> WS_CG T shfl_xor(T v, int m) const { return __shfl_xor_sync(mask(), v, m, N); }
    // Votes over the tile's own lanes (the ballot masked to them).
    WS_CG unsigned ballot(int p) const { return (__ballot_sync(mask(), p) & mask()) >> base(); }
    WS_CG int any(int p) const { return ballot(p) != 0; }
    WS_CG int all(int p) const { return ballot(p) == (mask() >> base()); }
};
template <unsigned N> WS_CG thread_block_tile<N> tiled_partition(const thread_block &) { return thread_block_tile<N>(); }
template <unsigned N> WS_CG void sync(const thread_block_tile<N> &g) { g.sync(); }

// The lanes of the warp active here.
struct coalesced_group {
    unsigned m;
    WS_CG void sync() const { __syncwarp(m); }
    WS_CG unsigned size() const { return __popc(m); }
    WS_CG unsigned num_threads() const { return size(); }
    WS_CG unsigned thread_rank() const { return __popc(m & ((1u << __laneid()) - 1)); }
    WS_CG int any(int p) const { return __any_sync(m, p); }
    WS_CG int all(int p) const { return __all_sync(m, p); }
    WS_CG unsigned ballot(int p) const {
        // Bit k: the k-th active lane's predicate.
        unsigned b = __ballot_sync(m, p), out = 0, k = 0;
        for (unsigned l = 0; l < 32; l++)
            if (m >> l & 1) out |= (b >> l & 1) << k++;
        return out;
    }
};
WS_CG coalesced_group coalesced_threads() { return coalesced_group{__activemask()}; }

template <class T> struct plus { WS_CG T operator()(T a, T b) const { return a + b; } };
template <class T> struct less { WS_CG T operator()(T a, T b) const { return a < b ? a : b; } };
template <class T> struct greater { WS_CG T operator()(T a, T b) const { return a > b ? a : b; } };
template <class T> struct bit_and { WS_CG T operator()(T a, T b) const { return a & b; } };
template <class T> struct bit_or { WS_CG T operator()(T a, T b) const { return a | b; } };
template <class T> struct bit_xor { WS_CG T operator()(T a, T b) const { return a ^ b; } };

// Every lane of the tile gets op over the tile's values (a butterfly).
template <unsigned N, class T, class Op> WS_CG T reduce(const thread_block_tile<N> &g, T v, Op op) {
    for (unsigned d = N / 2; d > 0; d /= 2) v = op(v, g.shfl_xor(v, (int)d));
    return v;
}

#undef WS_CG
} // namespace cooperative_groups

#endif
