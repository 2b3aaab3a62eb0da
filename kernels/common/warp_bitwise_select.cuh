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
    static_assert(WARP * ITEMS < (1 << FIELD), "a count fits its field");

    __device__ __forceinline__ static u32 warp_sum(u32 v) {
#if __CUDA_ARCH__ >= 800
        return __reduce_add_sync(FULL_MASK, v);
#else
        for (int m = WARP / 2; m > 0; m /= 2) v += __shfl_xor_sync(FULL_MASK, v, m);
        return v;
#endif
    }

    // Called by a whole warp. keys[j] of lane l is one of the `count` keys when
    // j * WARP + l < count; the others must be the largest pattern (~0), which is below
    // no candidate. rank < count. Every lane receives the ordered key of that rank
    // (0-based, ascending).
    __device__ __forceinline__ static U select(const U (&keys)[ITEMS], u32 count, u32 rank) {
        U found = 0;
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
                if (warp_sum(below) <= rank) found = t;
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
            }
        }
        return found;
    }
};

}  // namespace gp
