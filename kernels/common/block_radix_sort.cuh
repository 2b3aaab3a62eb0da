// One block sorts up to BLOCK * ITEMS ordered keys (common/radix_key.cuh patterns),
// stably, with a payload each (an element's position, say): least significant digit
// first, each pass ranked by BlockRadixRank and exchanged through shared memory.
//
// Items are warp-striped, as BlockRadixRank wants them: item j of lane l in warp w is
// element w * 32 * ITEMS + j * 32 + l. Elements from `count` on are padding: they rank
// after every key, so they end up last. Only the low `bits` bits are sorted on (keys
// that agree above them, such as a quicksort segment's, need no more passes).
#pragma once
#include "common/block_radix_rank.cuh"

namespace gp {

// RANK_GROUP: as BlockRadixRank's (0: one column at a time, the fewest registers).
template <class U, int BLOCK, int ITEMS, int RADIX_BITS = 8, class P = u32, int RANK_GROUP = 4>
struct BlockRadixSort {
    static constexpr int TILE = BLOCK * ITEMS;
    static constexpr int BITS = sizeof(U) * 8;
    typedef BlockRadixRank<BLOCK, ITEMS, RADIX_BITS, RANK_GROUP> Rank;
    struct Storage {
        typename Rank::Storage rank;
        U keys[TILE];
        P payload[TILE];
    };

    // The element item j of this thread stands for.
    __device__ __forceinline__ static u32 element(int j) {
        return (threadIdx.x / WARP) * WARP * ITEMS + j * WARP + threadIdx.x % WARP;
    }

    // On return s.keys[i] and s.payload[i] hold the i-th smallest key (stable) and its
    // payload, for i < TILE; the registers are spent. At least one pass runs, so
    // s holds the keys even when `bits` is 0.
    __device__ __forceinline__ static void sort(U (&keys)[ITEMS], P (&payload)[ITEMS], u32 count, Storage &s,
                                                int bits = BITS) {
        const u32 missing = TILE - count;
        for (int shift = 0;; shift += RADIX_BITS) {
            u32 at[ITEMS];
#pragma unroll
            for (int j = 0; j < ITEMS; ++j)
                at[j] = element(j) < count ? u32(keys[j] >> shift) & ((1u << RADIX_BITS) - 1) : (1u << RADIX_BITS) - 1;
            const u32 total = Rank::count(at, missing, s.rank);
            Rank::rank(at, total, s.rank);
#pragma unroll
            for (int j = 0; j < ITEMS; ++j) {
                s.keys[at[j]] = keys[j];
                s.payload[at[j]] = payload[j];
            }
            __syncthreads();
            if (shift + RADIX_BITS >= bits) break;
#pragma unroll
            for (int j = 0; j < ITEMS; ++j) {
                keys[j] = s.keys[element(j)];
                payload[j] = s.payload[element(j)];
            }
            __syncthreads();
        }
    }
};

}  // namespace gp
