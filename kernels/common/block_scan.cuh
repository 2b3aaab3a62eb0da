// Block-wide exclusive scan of one value per thread, with the block total: warp
// scans, then a scan of the warp totals by the first warp.
#pragma once
#include "common/warp.cuh"

namespace gp {

template <class T, int BLOCK>
struct BlockScan {
    static_assert(BLOCK % WARP == 0 && BLOCK <= WARP * WARP, "BLOCK must be a multiple of 32, at most 1024");
    static constexpr int WARPS = BLOCK / WARP;
    struct Storage {
        T warp_totals[WARPS];
        T warp_prefix[WARPS];
        T total;
    };

    // `exclusive` receives op over the values of threads 0..tid-1 (the identity for
    // thread 0); `total` op over all of them. Ends with a barrier.
    template <class Op>
    __device__ __forceinline__ static void exclusive(T v, T &exclusive, T &total, Op op, Storage &s) {
        const int lane = threadIdx.x % WARP, warp = threadIdx.x / WARP;
        T inclusive = warp_inclusive_scan(v, op);
        if (lane == WARP - 1) s.warp_totals[warp] = inclusive;
        __syncthreads();
        if (warp == 0) {
            T w = lane < WARPS ? s.warp_totals[lane] : Op::identity();
            T wi = warp_inclusive_scan(w, op);
            T we = shfl_up(wi, 1);
            if (lane < WARPS) s.warp_prefix[lane] = lane == 0 ? Op::identity() : we;
            if (lane == WARPS - 1) s.total = wi;
        }
        __syncthreads();
        T lane_exclusive = shfl_up(inclusive, 1);
        T warp_prefix = s.warp_prefix[warp];
        exclusive = lane == 0 ? warp_prefix : (warp == 0 ? lane_exclusive : op(warp_prefix, lane_exclusive));
        total = s.total;
        __syncthreads();
    }
};

}  // namespace gp
