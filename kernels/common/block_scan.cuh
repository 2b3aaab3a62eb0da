// Block-wide exclusive scan of one value per thread: warp scans, then a scan of the
// warp totals by the first warp, which may also fetch a prefix for the whole block
// (a tile's look-back) before the result is handed out.
#pragma once
#include "common/warp.cuh"

namespace gp {

// What a block's prefix source returns: the value to put before the block, if any.
template <class T>
struct BlockPrefix {
    T value;
    bool present;
};

// The prefix source of a block scan that stands alone (no tile before it).
struct NoPrefix {
    template <class T, class Op>
    __device__ __forceinline__ BlockPrefix<T> operator()(T, Op) const { return {Op::identity(), false}; }
};

// The prefix source of a block scan that stands alone and also wants the block's
// total: thread 0 leaves it in *total (shared), readable once the scan returns.
template <class T>
struct KeepTotal {
    T *total;
    template <class Op>
    __device__ __forceinline__ BlockPrefix<T> operator()(T all, Op) const {
        if (threadIdx.x == 0) *total = all;
        return {Op::identity(), false};
    }
};

template <class T, int BLOCK>
struct BlockScan {
    static_assert(BLOCK % WARP == 0 && BLOCK <= WARP * WARP, "BLOCK must be a multiple of 32, at most 1024");
    static constexpr int WARPS = BLOCK / WARP;
    struct Storage {
        T warp_totals[WARPS];
        T warp_prefix[WARPS];
    };

    // `exclusive` receives prefix op (values of threads 0..tid-1); thread 0 receives
    // the prefix, or the identity when there is none. `prefix_of` is called by the
    // whole first warp with the block total and the operator, and returns the same
    // BlockPrefix<T> in every lane. No trailing barrier: a caller that reuses
    // `s` synchronises first.
    template <class Op, class PrefixSource>
    __device__ __forceinline__ static void exclusive(T v, T &exclusive, Op op, Storage &s, PrefixSource prefix_of) {
        const int lane = threadIdx.x % WARP, warp = threadIdx.x / WARP;
        const T inclusive = warp_inclusive_scan(v, op);
        if (lane == WARP - 1) s.warp_totals[warp] = inclusive;
        __syncthreads();
        if (warp == 0) {
            const T w = lane < WARPS ? s.warp_totals[lane] : Op::identity();
            const T wi = warp_inclusive_scan(w, op);
            const T before = shfl_up(wi, 1);  // warps 0..lane-1; garbage in lane 0
            const BlockPrefix<T> p = prefix_of(shfl(wi, WARPS - 1), op);
            const T head = p.present ? p.value : Op::identity();
            if (lane < WARPS) s.warp_prefix[lane] = lane == 0 ? head : (p.present ? op(head, before) : before);
        }
        __syncthreads();
        const T lane_before = shfl_up(inclusive, 1);
        const T warp_prefix = s.warp_prefix[warp];
        exclusive = lane == 0 ? warp_prefix : op(warp_prefix, lane_before);
    }
};

}  // namespace gp
