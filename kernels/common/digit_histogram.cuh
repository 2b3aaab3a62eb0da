// Block-level histograms of every digit of a key at once (one per pass of an LSD
// radix sort), counted in shared memory and added to device-wide u64 counters at the
// end. When a whole warp adds to the same counter (sorted runs, all-equal or
// few-distinct keys) one lane adds for all: same-address shared atomics would
// otherwise serialise 32-fold.
#pragma once
#include "common/radix_key.cuh"
#include "common/warp.cuh"

namespace gp {

template <int BLOCK, int PASSES, int RADIX_BITS>
struct BlockDigitHistogram {
    static constexpr int RADIX = 1 << RADIX_BITS;
    struct Storage {
        u32 counts[PASSES][RADIX];
    };

    // The whole block; ends with a barrier.
    __device__ __forceinline__ static void clear(Storage &s) {
        for (int i = threadIdx.x; i < PASSES * RADIX; i += BLOCK) (&s.counts[0][0])[i] = 0;
        __syncthreads();
    }

    // Counts a lane's N ordered keys in every pass's histogram, when `valid`. Called
    // by all 32 lanes of a warp together (a lane past the end passes valid = false).
    // The same-digit test costs one shuffle and one vote per pass for all N keys.
    template <class U, int N>
    __device__ __forceinline__ static void add(const U (&ordered)[N], bool valid, Storage &s) {
        const u32 holders = __ballot_sync(FULL_MASK, valid);
        if (holders == 0) return;
        const int first = __ffs(holders) - 1;
#pragma unroll
        for (int p = 0; p < PASSES; ++p) {
            u32 d[N];
            bool same = true;
#pragma unroll
            for (int k = 0; k < N; ++k) {
                d[k] = digit_of<RADIX_BITS>(ordered[k], p);
                same = same && d[k] == d[0];
            }
            const u32 first_digit = __shfl_sync(FULL_MASK, d[0], first);
            if (__all_sync(FULL_MASK, !valid || (same && d[0] == first_digit))) {
                if (int(threadIdx.x % WARP) == first) atomicAdd(&s.counts[p][first_digit], u32(__popc(holders) * N));
            } else if (valid) {
#pragma unroll
                for (int k = 0; k < N; ++k) atomicAdd(&s.counts[p][d[k]], 1u);
            }
        }
    }

    // The whole block, after every add: adds the block's counts to `global`
    // ([PASSES][RADIX] u64 counters).
    __device__ __forceinline__ static void flush(unsigned long long *global, Storage &s) {
        __syncthreads();
        for (int i = threadIdx.x; i < PASSES * RADIX; i += BLOCK) {
            const u32 c = (&s.counts[0][0])[i];
            if (c) atomicAdd(global + i, (unsigned long long)c);
        }
    }
};

}  // namespace gp
