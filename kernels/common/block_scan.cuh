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

// Block-wide exclusive scans of several independent runs at once: thread t holds an
// element of run t / GROUP (threads past the last whole run form a run of their own).
// The same two barriers as one BlockScan: the radix plan scans the digit counts of
// several passes in one go.
template <class T, int BLOCK, int GROUP>
struct BlockGroupScan {
    static_assert(BLOCK % WARP == 0 && BLOCK <= WARP * WARP, "BLOCK must be a multiple of 32, at most 1024");
    static constexpr int WARPS = BLOCK / WARP, GROUP_WARPS = GROUP / WARP;
    static_assert(GROUP % WARP == 0 && (GROUP_WARPS & (GROUP_WARPS - 1)) == 0, "GROUP: a power-of-two number of warps");
    struct Storage {
        T warp_totals[WARPS];
        T warp_prefix[WARPS];
    };

    // `exclusive` receives op over the values of the threads before this one in its run
    // (the identity for a run's first). No trailing barrier: a caller that reuses `s`
    // synchronises first.
    template <class Op>
    __device__ __forceinline__ static void exclusive(T v, T &exclusive, Op op, Storage &s) {
        const int lane = threadIdx.x % WARP, warp = threadIdx.x / WARP;
        const T inclusive = warp_inclusive_scan(v, op);
        if (lane == WARP - 1) s.warp_totals[warp] = inclusive;
        __syncthreads();
        if (warp == 0) {
            // Lane w scans warp w's total within its run of GROUP_WARPS warps.
            const int at = lane % GROUP_WARPS;
            T w = lane < WARPS ? s.warp_totals[lane] : Op::identity();
#pragma unroll
            for (int d = 1; d < GROUP_WARPS; d <<= 1) {
                const T up = shfl_up(w, d);
                if (at >= d) w = op(up, w);
            }
            const T before = shfl_up(w, 1);  // the run's warps before this one; garbage at a run's start
            if (lane < WARPS) s.warp_prefix[lane] = at == 0 ? Op::identity() : before;
        }
        __syncthreads();
        const T lane_before = shfl_up(inclusive, 1);
        const T warp_prefix = s.warp_prefix[warp];
        exclusive = lane == 0 ? warp_prefix : op(warp_prefix, lane_before);
    }
};

}  // namespace gp
