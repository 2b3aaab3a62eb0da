// One warp finds the key of a given rank among up to WARP * ITEMS ordered keys held in
// its lanes' registers (common/radix_key.cuh patterns) by settling the answer's bits
// from the top, two at a time: the answer is the largest pattern t with at most `rank`
// keys below it, so for each candidate next digit d the warp counts the keys below
// (answer so far | d << shift) and keeps the largest d whose count is <= rank. The
// three candidates' counts travel packed in one u32 through one warp reduction a step:
// no shared memory, no barrier, a short dependent chain (8 steps for u16 keys), which
// suits short rows of narrow keys (a segmented select's).
#pragma once
#include "common/types.cuh"
#include "common/warp.cuh"

namespace gp {

template <class U, int ITEMS>
struct WarpBitwiseSelect {
    static constexpr int BITS = sizeof(U) * 8;
    static constexpr int STEP_BITS = 2;
    // Keys are held widened to a full register: no unpacking or masking before each
    // compare (narrow keys would otherwise share registers).
    typedef typename BitsOf<(sizeof(U) <= 4 ? 4 : 8)>::type Held;
    // The largest pattern of U: below no candidate, so it pads a row.
    static constexpr Held MISSING = Held(U(~U(0)));
    // Three counts of up to WARP * ITEMS keys share a u32: 10 bits each.
    static constexpr int FIELD = 10;
    static constexpr u32 MASK = (1u << FIELD) - 1;
    static_assert(WARP * ITEMS < (1 << FIELD), "a count fits its field");

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
    __device__ __forceinline__ static U only_key(const Held (&keys)[ITEMS], u32 count, Held found, int shift) {
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
    // j * WARP + l < count; the others must be MISSING. rank < count. Every lane
    // receives the ordered key of that rank (0-based, ascending).
    //
    // The warp also tracks the keys below the answer so far (lo) and below its next
    // value (hi), which the counts give anyway: once one key is left between them, the
    // answer is that key, found by one warp minimum instead of the remaining steps
    // (for short rows of spread keys, after a few bits).
    __device__ __forceinline__ static U select(const Held (&keys)[ITEMS], u32 count, u32 rank) {
        constexpr bool EARLY_EXIT = sizeof(U) <= 4;
        Held found = 0;
        u32 lo = 0, hi = count;
#pragma unroll 1
        for (int shift = BITS - STEP_BITS; shift >= 0; shift -= STEP_BITS) {
            const Held step = Held(1) << shift;
            const Held t1 = found | step, t2 = t1 + step, t3 = t2 + step;
            u32 below = 0;
#pragma unroll
            for (int j = 0; j < ITEMS; ++j) {
                if (j * WARP >= (int)count) break;  // the same for the whole warp
                below += (keys[j] < t1 ? 1u : 0u) + (keys[j] < t2 ? 1u << FIELD : 0u) + (keys[j] < t3 ? 1u << (2 * FIELD) : 0u);
            }
            below = warp_sum(below);
            // The counts rise with the candidate: the digit is how many are <= rank,
            // lo the last of those (or lo), hi the first past it (or hi).
            const u32 c1 = below & MASK, c2 = (below >> FIELD) & MASK, c3 = below >> (2 * FIELD);
            const u32 digit = (c1 <= rank) + (c2 <= rank) + (c3 <= rank);
            found |= Held(digit) << shift;
            lo = c3 <= rank ? c3 : c2 <= rank ? c2 : c1 <= rank ? c1 : lo;
            hi = c1 > rank ? c1 : c2 > rank ? c2 : c3 > rank ? c3 : hi;
            if (EARLY_EXIT && hi - lo == 1 && shift > 0) return only_key(keys, count, found, shift);
        }
        return U(found);
    }
};

}  // namespace gp
