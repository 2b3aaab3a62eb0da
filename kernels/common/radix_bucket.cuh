// Which bucket of a digit histogram holds a given rank: the step every radix select
// takes after counting a digit (the one-block select over samples, and the one that
// finishes each device-wide digit pass). One warp, no barrier: each lane sums
// RADIX / 32 neighbouring buckets, a warp scan finds the lane whose buckets span the
// rank, and that lane walks its own.
#pragma once
#include "common/ops.cuh"
#include "common/warp.cuh"

namespace gp {

template <class C>
struct Bucket {
    u32 digit;
    C before;  // elements in the buckets below it
};

// Called by a whole warp; `counts` (RADIX entries, memory the warp can read) hold at
// least rank + 1 elements in all. Every lane receives the bucket.
template <class C, int RADIX>
__device__ __forceinline__ Bucket<C> find_bucket(const C *counts, C rank) {
    static_assert(RADIX % WARP == 0, "whole buckets a lane");
    constexpr int PER = RADIX / WARP;
    const int lane = threadIdx.x % WARP;
    C c[PER], sum = 0;
#pragma unroll
    for (int j = 0; j < PER; ++j) {
        c[j] = counts[lane * PER + j];
        sum += c[j];
    }
    const C through = warp_inclusive_scan(sum, SumOp<C>());
    C before = through - sum;
    const int holder = __ffs(__ballot_sync(FULL_MASK, before <= rank && rank < through)) - 1;
    u32 digit = 0;
#pragma unroll
    for (int j = 0; j < PER; ++j) {
        if (digit == 0 && rank < before + c[j]) digit = lane * PER + j + 1;  // + 1: found
        else if (digit == 0) before += c[j];
    }
    return Bucket<C>{shfl(digit, holder) - 1, shfl(before, holder)};
}

// Called by a whole warp: adds 1 to counts[digit] for every lane whose `match` is set.
// Lanes holding the same digit add it once (ranks of sorted, clustered or equal keys
// share leading digits), so a crowded bucket costs one shared atomic a warp, not one a
// key. A warp with no match skips the match (slow to issue): past the first digit,
// most keys no longer match the prefix.
__device__ __forceinline__ void warp_count_digit(u32 *counts, u32 digit, bool match) {
    if (!__any_sync(FULL_MASK, match)) return;
    const u32 peers = __match_any_sync(FULL_MASK, match ? digit : ~0u);
    if (match && (threadIdx.x % WARP) == __ffs(peers) - 1) atomicAdd(&counts[digit], __popc(peers));
}

}  // namespace gp
