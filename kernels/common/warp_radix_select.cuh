// One warp finds the key of a given rank among up to WARP * ITEMS ordered keys held in
// its lanes' registers (common/radix_key.cuh patterns), most significant digit first:
// a shared-memory histogram of the digit among the keys that still match the chosen
// prefix, the bucket holding the rank kept (common/radix_bucket.cuh), repeat. No key
// moves and no block barrier is needed, so several warps of a block each work on their
// own set (the short rows of a segmented select, one warp a row).
#pragma once
#include "common/radix_bucket.cuh"

namespace gp {

template <class U, int ITEMS, int RADIX_BITS = 8>
struct WarpRadixSelect {
    static constexpr int RADIX = 1 << RADIX_BITS;
    static constexpr int BITS = sizeof(U) * 8;
    static_assert(BITS % RADIX_BITS == 0, "whole digits");
    struct Storage {
        u32 counts[RADIX];
    };

    // Called by a whole warp. keys[j] of lane l is one of the `count` keys when
    // j * WARP + l < count (others are ignored); rank < count. Every lane receives the
    // ordered key of that rank (0-based, ascending).
    __device__ __forceinline__ static U select(const U (&keys)[ITEMS], u32 count, u32 rank, Storage &s) {
        const int lane = threadIdx.x % WARP;
        U found = 0, mask = 0;
        for (int shift = BITS - RADIX_BITS; shift >= 0; shift -= RADIX_BITS) {
            for (int d = lane; d < RADIX; d += WARP) s.counts[d] = 0;
            __syncwarp();
#pragma unroll
            for (int j = 0; j < ITEMS; ++j) {
                if (j * WARP >= (int)count) break;  // the same for the whole warp
                const bool match = j * WARP + lane < (int)count && ((keys[j] ^ found) & mask) == 0;
                warp_count_digit(s.counts, u32(keys[j] >> shift) & (RADIX - 1), match);
            }
            __syncwarp();
            const Bucket<u32> b = find_bucket<u32, RADIX>(s.counts, rank);
            const u32 left = s.counts[b.digit];
            __syncwarp();  // every lane has read the counts before the next pass clears them
            found |= U(U(b.digit) << shift);
            mask |= U(U(RADIX - 1) << shift);
            rank -= b.before;
            // One key left with this prefix: it is the answer, whatever its lower digits
            // (random wide keys mostly end here after a digit or two).
            if (left == 1 && shift > 0) return unique_match(keys, count, found, mask);
        }
        return found;
    }

    // The one key of the warp matching `prefix` under `mask`.
    __device__ __forceinline__ static U unique_match(const U (&keys)[ITEMS], u32 count, U prefix, U mask) {
        const int lane = threadIdx.x % WARP;
        U mine = 0;
        bool has = false;
#pragma unroll
        for (int j = 0; j < ITEMS; ++j)
            if (j * WARP + lane < (int)count && ((keys[j] ^ prefix) & mask) == 0) {
                mine = keys[j];
                has = true;
            }
        return shfl(mine, __ffs(__ballot_sync(FULL_MASK, has)) - 1);
    }
};

}  // namespace gp
