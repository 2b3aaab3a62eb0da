// One warp finds the key of a given rank among up to WARP * ITEMS ordered keys held in
// its lanes' registers (common/radix_key.cuh patterns) by settling the answer's bits
// from the top, STEP_BITS at a time: the answer is the largest pattern t with at most
// `rank` keys below it, so for each candidate next digit d the warp counts the keys
// below (answer so far | d << shift) and keeps the largest d whose count is <= rank.
// The candidates' counts travel packed in one u32 through one warp reduction a step:
// no shared memory, no barrier, a short dependent chain (8 steps for u16 keys two bits
// at a time), which suits short rows of narrow keys (a segmented select's).
#pragma once
#include "common/warp.cuh"

namespace gp {

template <class U, int ITEMS, int STEP_BITS = 2>
struct WarpBitwiseSelect {
    static constexpr int BITS = sizeof(U) * 8;
    static_assert(STEP_BITS == 1 || STEP_BITS == 2, "one or three candidates a step");
    static_assert(BITS % STEP_BITS == 0, "whole steps");
    // Three counts of up to WARP * ITEMS keys share a u32: 10 bits each.
    static constexpr int FIELD = 10;
    static_assert(WARP * ITEMS < (1 << FIELD), "a count fits its field (and half a u32)");

    __device__ __forceinline__ static u32 warp_sum(u32 v) {
#if __CUDA_ARCH__ >= 800
        return __reduce_add_sync(FULL_MASK, v);
#else
        for (int m = WARP / 2; m > 0; m /= 2) v += __shfl_xor_sync(FULL_MASK, v, m);
        return v;
#endif
    }

    // The smallest key whose bits from `shift` up equal found's: with exactly one real
    // key there, that key (a padding key, the largest pattern, can only tie with it).
    __device__ __forceinline__ static U only_key(const U (&keys)[ITEMS], u32 count, U found, int shift) {
        u32 least = ~0u;
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) {
            if (j * WARP >= (int)count) break;
            if ((u32(keys[j]) >> shift) == (u32(found) >> shift) && u32(keys[j]) < least) least = u32(keys[j]);
        }
#if __CUDA_ARCH__ >= 800
        return U(__reduce_min_sync(FULL_MASK, least));
#else
        for (int m = WARP / 2; m > 0; m /= 2) least = min(least, __shfl_xor_sync(FULL_MASK, least, m));
        return U(least);
#endif
    }

    // Called by a whole warp. keys[j] of lane l is one of the `count` keys when
    // j * WARP + l < count; the others must be the largest pattern (~0), which is below
    // no candidate. rank < count. Every lane receives the ordered key of that rank
    // (0-based, ascending).
    //
    // The warp also tracks how many keys share the prefix settled so far (from
    // the same counts): once that is one key, the answer is that key, found by one
    // warp minimum instead of the remaining steps (for short rows of spread keys,
    // after a few bits).
    __device__ __forceinline__ static U select(const U (&keys)[ITEMS], u32 count, u32 rank) {
        constexpr bool EARLY_EXIT = sizeof(U) <= 4;
        U found = 0;
        int settled = 0;  // the lowest bit settled, when a single key is left
        // Keys below found (low half) and keys with found's prefix (high half): one
        // register, as the short-row kernel has none to spare.
        u32 bucket = count << 16;
#pragma unroll 1
        for (int shift = BITS - STEP_BITS; shift >= 0; shift -= STEP_BITS) {
            if constexpr (STEP_BITS == 1) {
                const U t = U(found | U(U(1) << shift));
                u32 below = 0;
#pragma unroll
                for (int j = 0; j < ITEMS; ++j) {
                    if (j * WARP >= (int)count) break;  // the same for the whole warp
                    below += keys[j] < t;
                }
                below = warp_sum(below);
                const u32 lo = bucket & 0xffff, span = bucket >> 16;
                if (below <= rank) {
                    found = t;
                    bucket = below | (span - (below - lo)) << 16;
                } else {
                    bucket = lo | (below - lo) << 16;
                }
            } else {
                const U t1 = U(found | U(U(1) << shift)), t2 = U(found | U(U(2) << shift)),
                        t3 = U(found | U(U(3) << shift));
                u32 below = 0;
#pragma unroll
                for (int j = 0; j < ITEMS; ++j) {
                    if (j * WARP >= (int)count) break;
                    below += (keys[j] < t1 ? 1u : 0u) + (keys[j] < t2 ? 1u << FIELD : 0u) +
                             (keys[j] < t3 ? 1u << (2 * FIELD) : 0u);
                }
                below = warp_sum(below);
                constexpr u32 MASK = (1u << FIELD) - 1;
                const u32 digit = ((below & MASK) <= rank) + (((below >> FIELD) & MASK) <= rank) +
                                  ((below >> (2 * FIELD)) <= rank);
                found = U(found | U(U(digit) << shift));
                // The digit's bucket: from count[digit] to count[digit + 1], where count 0
                // is lo, counts 1..3 the fields, count 4 lo + span.
                const u32 lo = bucket & 0xffff;
                const u32 to = digit == 3 ? lo + (bucket >> 16) : (below >> (FIELD * digit)) & MASK;
                const u32 from = digit ? (below >> (FIELD * (digit - 1))) & MASK : lo;
                bucket = from | (to - from) << 16;
            }
            if constexpr (EARLY_EXIT)
                if ((bucket >> 16) == 1 && shift > 0) {  // the same for the whole warp
                    settled = shift;
                    break;
                }
        }
        return settled ? only_key(keys, count, found, settled) : found;
    }
};

}  // namespace gp
