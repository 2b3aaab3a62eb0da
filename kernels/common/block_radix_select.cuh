// One block finds the element of a given rank among BLOCK * ITEMS ordered keys held in
// registers (common/radix_key.cuh patterns), most significant digit first: count the
// digit of the keys that still match the chosen prefix, keep the bucket holding the
// rank, repeat. No key moves; each digit costs one shared-memory histogram.
#pragma once
#include "common/radix_bucket.cuh"

namespace gp {

template <class U, int BLOCK, int ITEMS, int RADIX_BITS = 8>
struct BlockRadixSelect {
    static constexpr int RADIX = 1 << RADIX_BITS;
    static constexpr int BITS = sizeof(U) * 8;
    static_assert(BITS % RADIX_BITS == 0, "whole digits");
    typedef RadixBucket<u32, RADIX, BLOCK> Find;
    struct Storage {
        u32 counts[RADIX];
        typename Find::Storage find;
    };

    // The key of rank `rank` (0-based, ascending) among all keys of the block.
    __device__ __forceinline__ static U select(const U (&keys)[ITEMS], u32 rank, Storage &s) {
        U prefix = 0, mask = 0;
        for (int shift = BITS - RADIX_BITS; shift >= 0; shift -= RADIX_BITS) {
            for (int d = threadIdx.x; d < RADIX; d += BLOCK) s.counts[d] = 0;
            __syncthreads();
            // Samples often share their leading digits: lanes holding the same digit add
            // it once, so a crowded bucket costs one atomic a warp, not one a key.
#pragma unroll
            for (int j = 0; j < ITEMS; ++j) {
                const bool match = ((keys[j] ^ prefix) & mask) == 0;
                const u32 digit = match ? u32(keys[j] >> shift) & (RADIX - 1) : RADIX;
                const u32 peers = __match_any_sync(FULL_MASK, digit);
                if (match && (threadIdx.x % WARP) == __ffs(peers) - 1) atomicAdd(&s.counts[digit], __popc(peers));
            }
            __syncthreads();
            const Bucket<u32> b = Find::find(s.counts, rank, s.find);
            prefix |= U(U(b.digit) << shift);
            mask |= U(U(RADIX - 1) << shift);
            rank -= b.before;
        }
        return prefix;
    }
};

}  // namespace gp
