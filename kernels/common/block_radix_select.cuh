// One block finds the elements of given ranks among BLOCK * ITEMS ordered keys held in
// registers (common/radix_key.cuh patterns), most significant digit first: count the
// digit of the keys that still match each rank's chosen prefix, keep the bucket
// holding the rank, repeat. No key moves; each digit costs one shared-memory
// histogram per rank (the top digit one for all: every rank's prefix is still empty
// there), and several ranks share the passes over the keys.
#pragma once
#include "common/radix_bucket.cuh"

namespace gp {

template <class U, int BLOCK, int ITEMS, int RANKS = 1, int RADIX_BITS = 8>
struct BlockRadixSelect {
    static constexpr int RADIX = 1 << RADIX_BITS;
    static constexpr int BITS = sizeof(U) * 8;
    static_assert(BITS % RADIX_BITS == 0, "whole digits");
    struct Storage {
        u32 counts[RANKS][RADIX];
        Bucket<u32> found[RANKS];
    };

    // found[r]: the key of rank ranks[r] (0-based, ascending) among all keys of the block.
    // Only keys[j] for j < live (the same for the whole block) are read: a block holding
    // fewer keys than it could skips its empty registers.
    __device__ __forceinline__ static void select(const U (&keys)[ITEMS], const u32 (&ranks)[RANKS], U (&found)[RANKS],
                                                  Storage &s, int live = ITEMS) {
        u32 rank[RANKS];
        U mask = 0;
#pragma unroll
        for (int r = 0; r < RANKS; ++r) {
            rank[r] = ranks[r];
            found[r] = 0;
        }
        for (int shift = BITS - RADIX_BITS; shift >= 0; shift -= RADIX_BITS) {
            // The top digit has no prefix to match: every rank's histogram would be the
            // same, so one is counted (counts[0]) and all ranks read it.
            const bool one_histogram = shift == BITS - RADIX_BITS;
            for (int d = threadIdx.x; d < RADIX * RANKS; d += BLOCK) s.counts[d / RADIX][d % RADIX] = 0;
            __syncthreads();
#pragma unroll
            for (int j = 0; j < ITEMS; ++j) {
                if (j >= live) break;
                const u32 digit = u32(keys[j] >> shift) & (RADIX - 1);
                if (one_histogram) {
                    warp_count_digit(s.counts[0], digit, true);
                    continue;
                }
#pragma unroll
                for (int r = 0; r < RANKS; ++r) warp_count_digit(s.counts[r], digit, ((keys[j] ^ found[r]) & mask) == 0);
            }
            __syncthreads();
            if (threadIdx.x < WARP)
#pragma unroll
                for (int r = 0; r < RANKS; ++r) {
                    const Bucket<u32> b = find_bucket<u32, RADIX>(s.counts[one_histogram ? 0 : r], rank[r]);
                    if (threadIdx.x == 0) s.found[r] = b;
                }
            __syncthreads();
#pragma unroll
            for (int r = 0; r < RANKS; ++r) {
                found[r] |= U(U(s.found[r].digit) << shift);
                rank[r] -= s.found[r].before;
            }
            mask |= U(U(RADIX - 1) << shift);
        }
    }

    // The key of rank `rank` (< n) among n <= BLOCK * ITEMS keys src[0..n), as
    // order.ordered() patterns: read into registers (the rest padded with the largest
    // pattern, which cannot move a rank below n) and searched over the registers that
    // hold keys. Every thread receives it.
    template <class Order>
    __device__ __forceinline__ static U select_from(const U *src, u64 n, u32 rank, const Order &order, Storage &s) {
        static_assert(RANKS == 1, "one rank");
        U keys[ITEMS];
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) {
            const u64 at = (u64)j * BLOCK + threadIdx.x;
            keys[j] = at < n ? order.ordered(src[at]) : U(~U(0));
        }
        const u32 ranks[1] = {rank};
        U found[1];
        select(keys, ranks, found, s, (int)((n + BLOCK - 1) / BLOCK));
        return found[0];
    }
};

}  // namespace gp
