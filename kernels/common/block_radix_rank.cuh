// Block radix rank: the stable position of each of a tile's keys once the tile is
// ordered by one digit, in two phases, so the caller can publish the tile's digit
// counts (for the device-wide look-back) before the keys are ranked ("early counts",
// as in Onesweep).
//
// Items are warp-striped: item j of lane l is element j*32 + l of its warp's span, and
// warp w's span comes before warp w+1's, so input order is (warp, j, lane).
//   count(): each warp counts its digits into a private histogram (shared atomics
//            without a return value, all in flight at once); thread d sums digit d
//            over the warps.
//   rank():  thread d turns the warp counts into where each warp's run of digit d
//            starts in the tile (its digit's offset, a block scan of the totals, plus
//            the counts of earlier warps). Then each warp ranks its items one column
//            j at a time: ballots on the digit's bits find the lanes that share it, the
//            highest of them takes the run's next places with one atomicAdd, and each
//            lane adds its peers below it. A warp's atomics run in issue order, so
//            columns keep their order without a barrier between them.
#pragma once
#include "common/block_scan.cuh"
#include "common/ops.cuh"
#include "common/warp.cuh"

namespace gp {

template <int BLOCK, int ITEMS, int RADIX_BITS>
struct BlockRadixRank {
    static constexpr int RADIX = 1 << RADIX_BITS;
    static constexpr int WARPS = BLOCK / WARP;
    static constexpr u32 NO_DIGIT = RADIX;  // the digit of a missing item (partial tile)
    static_assert(BLOCK >= RADIX, "one thread per digit");
    typedef BlockScan<u32, BLOCK> Scan;

    struct Storage {
        u32 warp_counts[WARPS][RADIX];
        typename Scan::Storage scan;
    };

    // The lanes whose digit is d (a lane without one matches only such lanes): one
    // ballot per digit bit, cheaper than __match_any_sync.
    __device__ __forceinline__ static u32 peers_of(u32 d) {
        u32 peers = __ballot_sync(FULL_MASK, d == NO_DIGIT);
        peers = d == NO_DIGIT ? peers : ~peers;
#pragma unroll
        for (int b = 0; b < RADIX_BITS; ++b) {
            const u32 ones = __ballot_sync(FULL_MASK, (d >> b) & 1);
            peers &= ((d >> b) & 1) ? ones : ~ones;
        }
        return peers;
    }

    // Phase 1. `digits[j]`: item j's digit, or NO_DIGIT. Returns, in thread d < RADIX,
    // how many of the tile's items have digit d.
    __device__ __forceinline__ static u32 count(const u32 (&digits)[ITEMS], Storage &s) {
        const u32 lane = threadIdx.x % WARP, warp = threadIdx.x / WARP;
        u32 *counts = s.warp_counts[warp];
#pragma unroll
        for (int d = lane; d < RADIX; d += WARP) counts[d] = 0;
        __syncwarp();
#pragma unroll
        for (int j = 0; j < ITEMS; ++j)
            if (digits[j] != NO_DIGIT) atomicAdd(&counts[digits[j]], 1u);
        __syncthreads();
        u32 total = 0;
        if (threadIdx.x < RADIX)
#pragma unroll
            for (int w = 0; w < WARPS; ++w) total += s.warp_counts[w][threadIdx.x];
        return total;
    }

    // Phase 2, after count() (`total` as it returned). Leaves in `ranks[j]` item j's
    // position in the tile ordered by digit (stable) and returns, in thread d < RADIX,
    // where digit d's run starts in that order. Ends with a barrier: `s` is free again.
    __device__ __forceinline__ static u32 rank(const u32 (&digits)[ITEMS], u32 (&ranks)[ITEMS], u32 total, Storage &s) {
        u32 offset;
        Scan::exclusive(threadIdx.x < RADIX ? total : 0u, offset, SumOp<u32>(), s.scan, NoPrefix());
        if (threadIdx.x < RADIX) {
            u32 run = offset;
#pragma unroll
            for (int w = 0; w < WARPS; ++w) {
                const u32 c = s.warp_counts[w][threadIdx.x];
                s.warp_counts[w][threadIdx.x] = run;
                run += c;
            }
        }
        __syncthreads();
        const u32 lane = threadIdx.x % WARP;
        u32 *next = s.warp_counts[threadIdx.x / WARP];  // next free place of each digit's run
        const u32 below_me = (1u << lane) - 1;
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) {
            const u32 d = digits[j];
            const u32 peers = peers_of(d);
            const u32 leader = 31 - __clz(peers);
            u32 first = 0;
            if (lane == leader && d != NO_DIGIT) first = atomicAdd(&next[d], u32(__popc(peers)));
            ranks[j] = __shfl_sync(FULL_MASK, first, leader) + __popc(peers & below_me);
        }
        __syncthreads();
        return offset;
    }
};

}  // namespace gp
