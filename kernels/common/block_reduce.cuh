// Block-wide reduction: warp butterflies, then one warp over the warp totals.
// The combination order is fixed, so float results repeat bit for bit.
#pragma once
#include "common/warp.cuh"

namespace gp {

template <class T, int BLOCK>
struct BlockReduce {
    static_assert(BLOCK % WARP == 0 && BLOCK <= WARP * WARP, "BLOCK must be a multiple of 32, at most 1024");
    static constexpr int WARPS = BLOCK / WARP;
    struct Storage {
        T warp_totals[WARPS];
        T total;
    };

    // Every thread receives op over all BLOCK values. Ends with a barrier, so the
    // storage can be reused right away.
    template <class Op>
    __device__ __forceinline__ static T all(T v, Op op, Storage &s) {
        const int lane = threadIdx.x % WARP, warp = threadIdx.x / WARP;
        v = warp_reduce(v, op);
        if (lane == 0) s.warp_totals[warp] = v;
        __syncthreads();
        if (warp == 0) {
            T w = lane < WARPS ? s.warp_totals[lane] : Op::identity();
            w = warp_reduce(w, op);
            if (lane == 0) s.total = w;
        }
        __syncthreads();
        T total = s.total;
        __syncthreads();
        return total;
    }
};

}  // namespace gp
