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
//            the counts of earlier warps). Then each warp ranks its items by column j:
//            ballots on the digit's bits find the lanes that share it, the highest of
//            them takes the run's next places with one atomicAdd, and each lane adds
//            its peers below it. A warp's atomics run in issue order, so columns keep
//            their order without a barrier between them; the work is laid out in three
//            sweeps (all ballots, all atomics, all shuffles) so the atomics' latencies
//            overlap instead of adding up column after column.
//
// With -DGP_RANK_LEAN=1 the one-column ranking asks for fewer instructions a column:
// the lanes up to this one from the lane-mask register instead of a mask rebuilt
// from the lane (the compiler rebuilds it each column to save a register), and the
// leader's test made inside the atomic's own predicate.
#pragma once
#ifndef GP_RANK_LEAN
#define GP_RANK_LEAN 0
#endif
#include "common/block_scan.cuh"
#include "common/ops.cuh"
#include "common/warp.cuh"

namespace gp {

// RANK_GROUP: key columns ranked together in three sweeps (see rank()); 0: one
// column at a time.
template <int BLOCK, int ITEMS, int RADIX_BITS, int RANK_GROUP = 4>
struct BlockRadixRank {
    static constexpr int RADIX = 1 << RADIX_BITS;
    static constexpr int WARPS = BLOCK / WARP;
    static_assert(BLOCK >= RADIX, "one thread per digit");
    typedef BlockScan<u32, BLOCK> Scan;

    struct Storage {
        u32 warp_counts[WARPS][RADIX];
        typename Scan::Storage scan;
    };

    // The lanes whose digit is d: one ballot per digit bit (cheaper than
    // __match_any_sync), each a bit test, a vote and a masked AND.
    __device__ __forceinline__ static u32 peers_of(u32 d) {
        u32 peers = FULL_MASK;
#pragma unroll
        for (int b = 0; b < RADIX_BITS; ++b)
            asm("{ .reg .pred p; .reg .b32 t;\n"
                "  and.b32 t, %1, %2;\n"
                "  setp.ne.u32 p, t, 0;\n"
                "  vote.sync.ballot.b32 t, p, 0xffffffff;\n"
                "  @!p not.b32 t, t;\n"
                "  and.b32 %0, %0, t; }"
                : "+r"(peers)
                : "r"(d), "r"(1u << b));
        return peers;
    }

    // The counters are addressed by their shared-window address (32 bits), so no
    // generic pointer (and the registers of its window base) is held while ranking.
    __device__ __forceinline__ static u32 shared_address(const u32 *counter) {
        return u32(__cvta_generic_to_shared(counter));
    }

    // The old value of the counter at shared address `counter`, adding `add`, when
    // add != 0; else returns 0 untouched. Predicated rather than branched, so a
    // column's atomic issues without waiting.
    __device__ __forceinline__ static u32 fetch_add_if_nonzero(u32 counter, u32 add) {
        u32 old = 0;
        asm volatile(
            "{ .reg .pred p; setp.ne.u32 p, %2, 0; @p atom.shared.add.u32 %0, [%1], %2; }"
            : "+r"(old)
            : "r"(counter), "r"(add)
            : "memory");
        return old;
    }

    // The old value of the counter at shared address `counter`, adding `add`, in lane
    // `leader` only; 0 elsewhere.
    __device__ __forceinline__ static u32 fetch_add_in_leader(u32 counter, u32 add, u32 lane, u32 leader) {
        u32 old = 0;
        asm volatile(
            "{ .reg .pred p; setp.eq.u32 p, %3, %4; @p atom.shared.add.u32 %0, [%1], %2; }"
            : "+r"(old)
            : "r"(counter), "r"(add), "r"(lane), "r"(leader)
            : "memory");
        return old;
    }

    // The lanes up to and including this one.
    __device__ __forceinline__ static u32 lanes_up_to_me() {
        u32 mask;
        asm("mov.u32 %0, %%lanemask_le;" : "=r"(mask));
        return mask;
    }

    // Phase 1. `digits[j]`: item j's digit. The tile's last `missing` items (in input
    // order) are not keys: they carry digit RADIX - 1, so they rank after every key,
    // and are left out of the count. Returns, in thread d < RADIX, how many of the
    // tile's keys have digit d.
    __device__ __forceinline__ static u32 count(const u32 (&digits)[ITEMS], u32 missing, Storage &s) {
        const u32 lane = threadIdx.x % WARP, warp = threadIdx.x / WARP;
        u32 *counts = s.warp_counts[warp];
#pragma unroll
        for (int d = lane; d < RADIX; d += WARP) counts[d] = 0;
        __syncwarp();
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) atomicAdd(&counts[digits[j]], 1u);
        __syncthreads();
        u32 total = 0;
        if (threadIdx.x < RADIX)
#pragma unroll
            for (int w = 0; w < WARPS; ++w) total += s.warp_counts[w][threadIdx.x];
        return threadIdx.x == RADIX - 1 ? total - missing : total;
    }

    // Phase 2, after count() (`total` as it returned). `items[j]` holds item j's digit
    // on entry and its position in the tile ordered by digit (stable) on return (one
    // array for both keeps the registers down). Returns, in thread d < RADIX, where
    // digit d's run starts in that order. Ends with a barrier: `s` is free again.
    __device__ __forceinline__ static u32 rank(u32 (&items)[ITEMS], u32 total, Storage &s) {
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
        // The next free place of each digit's run, at next + 4 * digit.
        const u32 next = shared_address(s.warp_counts[threadIdx.x / WARP]);
        const u32 below_me = (1u << lane) - 1;
        if constexpr (RANK_GROUP == 0) {
            // One column at a time, one popcount for both the lane's place among its
            // peers and (in the leader, the highest peer) the run's length.
            const u32 upto_me = below_me | (1u << lane);
#pragma unroll
            for (int j = 0; j < ITEMS; ++j) {
                const u32 d = items[j];
                const u32 peers = peers_of(d);
                const u32 leader = 31 - __clz(peers);
                const u32 place = __popc(peers & (GP_RANK_LEAN ? lanes_up_to_me() : upto_me));  // 1 for the lowest peer
                const u32 first = GP_RANK_LEAN ? fetch_add_in_leader(next + 4 * d, place, lane, leader)
                                               : fetch_add_if_nonzero(next + 4 * d, lane == leader ? place : 0u);
                items[j] = __shfl_sync(FULL_MASK, first, leader) + place - 1;
            }
        } else {
            // Sweep 1: per column, packed into items[j]: the digit, the leader lane and
            // the peers below this lane; and what this lane adds to the run (0 unless
            // leader).
            // (Missing items rank past the tile's keys: the warp counts hold them.)
            constexpr int LEADER_SHIFT = RADIX_BITS, BELOW_SHIFT = LEADER_SHIFT + 5;
            constexpr u32 DIGIT_MASK = (1u << LEADER_SHIFT) - 1;
            // Columns go in groups of RANK_GROUP (enough atomics in flight to hide
            // their latency, few enough registers to keep MIN_BLOCKS resident).
#pragma unroll
            for (int g = 0; g < ITEMS; g += RANK_GROUP) {
                u32 first[RANK_GROUP];
#pragma unroll
                for (int j = 0; j < RANK_GROUP && g + j < ITEMS; ++j) {
                    const u32 d = items[g + j];
                    const u32 peers = peers_of(d);
                    const u32 leader = 31 - __clz(peers);
                    items[g + j] =
                        d | (leader << LEADER_SHIFT) | (u32(__popc(peers & below_me)) << BELOW_SHIFT);
                    first[j] = lane == leader ? u32(__popc(peers)) : 0u;
                }
                // Sweep 2: the leaders take their places, in column order.
#pragma unroll
                for (int j = 0; j < RANK_GROUP && g + j < ITEMS; ++j)
                    first[j] = fetch_add_if_nonzero(next + 4 * (items[g + j] & DIGIT_MASK), first[j]);
                // Sweep 3: each lane hears its leader's first place.
#pragma unroll
                for (int j = 0; j < RANK_GROUP && g + j < ITEMS; ++j) {
                    const u32 packed = items[g + j];
                    items[g + j] =
                        __shfl_sync(FULL_MASK, first[j], (packed >> LEADER_SHIFT) & 31) + (packed >> BELOW_SHIFT);
                }
            }
        }
        __syncthreads();
        return offset;
    }
};

// After rank(): a thread's items (warp-striped: item j is element first + j*32 of
// the tile) into their places in shared memory, for those that exist (element < valid;
// WHOLE: the caller knows every element exists, and nothing is tested).
template <bool WHOLE = false, int ITEMS, class T>
__device__ __forceinline__ void to_rank_order(T *staging, const T (&items)[ITEMS], const u32 (&rank)[ITEMS], u32 first,
                                              u32 valid) {
#pragma unroll
    for (int j = 0; j < ITEMS; ++j)
        if (WHOLE || first + j * WARP < valid) staging[rank[j]] = items[j];
}

}  // namespace gp
