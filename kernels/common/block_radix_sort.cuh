// One block sorts up to BLOCK * ITEMS ordered keys (common/radix_key.cuh patterns),
// stably, and tells where each sorted key came from: least significant digit first,
// each pass ranked by BlockRadixRank and exchanged through shared memory.
//
// Items are warp-striped, as BlockRadixRank wants them: item j of lane l in warp w is
// element w * 32 * ITEMS + j * 32 + l. Elements from `count` on are padding: they rank
// after every key, so they end up last. Only the low `bits` bits are sorted on (keys
// that agree above them, such as a quicksort segment's, need no more passes).
//
// The positions live in shared memory only: a pass moves them after its keys, once
// the ranking is done, so the ranking holds no more registers than the keys and their
// digits (the quicksort's block sorts spilled with a position per key held through it).
#pragma once
#include "common/block_radix_rank.cuh"

namespace gp {

// RANK_GROUP: as BlockRadixRank's (0: one column at a time, the fewest registers).
// P: the positions' type (u16 when BLOCK * ITEMS <= 65536).
template <class U, int BLOCK, int ITEMS, int RADIX_BITS = 8, class P = u32, int RANK_GROUP = 4>
struct BlockRadixSort {
    static constexpr int TILE = BLOCK * ITEMS;
    static constexpr int BITS = sizeof(U) * 8;
    static_assert(TILE - 1 <= P(~P(0)), "a position fits P");
    typedef BlockRadixRank<BLOCK, ITEMS, RADIX_BITS, RANK_GROUP> Rank;
    struct Storage {
        typename Rank::Storage rank;
        U keys[TILE];
        P from[TILE];
    };

    // The element item j of this thread stands for.
    __device__ __forceinline__ static u32 element(int j) {
        return (threadIdx.x / WARP) * WARP * ITEMS + j * WARP + threadIdx.x % WARP;
    }

    // keys[j]: element(j)'s key. On return s.keys[i] holds the i-th smallest key
    // (stable) and, with FROM, s.from[i] the element it was, for i < TILE (a caller
    // that wants only the keys saves a move a pass); the registers are spent. At least
    // one pass runs, so s holds the keys even when `bits` is 0.
    template <bool FROM = true>
    __device__ __forceinline__ static void sort(U (&keys)[ITEMS], u32 count, Storage &s, int bits = BITS) {
        const u32 missing = TILE - count;
        for (int shift = 0;; shift += RADIX_BITS) {
            u32 at[ITEMS];
#pragma unroll
            for (int j = 0; j < ITEMS; ++j)
                at[j] = element(j) < count ? u32(keys[j] >> shift) & ((1u << RADIX_BITS) - 1) : (1u << RADIX_BITS) - 1;
            const u32 total = Rank::count(at, missing, s.rank);
            Rank::rank(at, total, s.rank);
            // Keys first (every thread read its keys before the last barrier), then
            // the positions: read where this pass found them, a barrier, and moved.
#pragma unroll
            for (int j = 0; j < ITEMS; ++j) s.keys[at[j]] = keys[j];
            if constexpr (FROM) {
                P from[ITEMS];
#pragma unroll
                for (int j = 0; j < ITEMS; ++j) from[j] = shift == 0 ? P(element(j)) : s.from[element(j)];
                if (shift != 0) __syncthreads();
#pragma unroll
                for (int j = 0; j < ITEMS; ++j) s.from[at[j]] = from[j];
            }
            __syncthreads();
            if (shift + RADIX_BITS >= bits) break;
#pragma unroll
            for (int j = 0; j < ITEMS; ++j) keys[j] = s.keys[element(j)];
            __syncthreads();
        }
    }
};

}  // namespace gp
