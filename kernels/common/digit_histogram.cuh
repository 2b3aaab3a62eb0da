// Block-level histograms of every digit of a key at once (one per pass of an LSD
// radix sort), counted in shared memory and added to device-wide u64 counters at the
// end.
//
// Each histogram is kept in PARTS copies, interleaved ([pass][digit][part]), and lane
// l counts into part l % PARTS: lanes of a warp with different digits then mostly hit
// different banks, and lanes with the same digit and part hit one address, which the
// hardware merges within an increment. So random keys cost about one bank wavefront
// per atomic instead of three or four, and runs of equal digits (sorted input, few
// distinct values) do not serialise.
#pragma once
#include "common/radix_key.cuh"
#include "common/warp.cuh"

namespace gp {

template <int BLOCK, int PASSES, int RADIX_BITS>
struct BlockDigitHistogram {
    static constexpr int RADIX = 1 << RADIX_BITS;
    static constexpr int PARTS = PASSES >= 32 ? 1 : 32 / PASSES;  // 32 KiB of counters for 8-bit digits
    struct Storage {
        u32 counts[PASSES][RADIX][PARTS];
    };

    // The whole block; ends with a barrier.
    __device__ __forceinline__ static void clear(Storage &s) {
        for (int i = threadIdx.x; i < PASSES * RADIX * PARTS; i += BLOCK) (&s.counts[0][0][0])[i] = 0;
        __syncthreads();
    }

    // Counts a lane's N ordered keys in every pass's histogram. When all N share a
    // digit (the high digits of sorted or clustered keys), one atomic adds N.
    template <class U, int N>
    __device__ __forceinline__ static void add(const U (&ordered)[N], Storage &s) {
        const u32 part = threadIdx.x % PARTS;
        // The bits on which the N keys differ, once for every pass's digit.
        U differ = 0;
#pragma unroll
        for (int k = 1; k < N; ++k) differ |= U(ordered[k] ^ ordered[0]);
#pragma unroll
        for (int p = 0; p < PASSES; ++p) {
            const bool same = N > 1 && digit_of<RADIX_BITS>(differ, p) == 0;
            atomicAdd(&s.counts[p][digit_of<RADIX_BITS>(ordered[0], p)][part], same ? u32(N) : 1u);
            if (!same) {
#pragma unroll
                for (int k = 1; k < N; ++k) atomicAdd(&s.counts[p][digit_of<RADIX_BITS>(ordered[k], p)][part], 1u);
            }
        }
    }

    // add() bound to one block's storage, for common/ordered_read.cuh.
    struct Counter {
        Storage &s;
        template <class U, int N>
        __device__ __forceinline__ void add(const U (&ordered)[N]) {
            BlockDigitHistogram::add(ordered, s);
        }
    };

    // The whole block, after every add: adds the block's counts to `global`
    // ([PASSES][RADIX] u64 counters).
    __device__ __forceinline__ static void flush(unsigned long long *global, Storage &s) {
        __syncthreads();
        for (int i = threadIdx.x; i < PASSES * RADIX; i += BLOCK) {
            const u32 *parts = &s.counts[0][0][0] + (usize)i * PARTS;
            u32 c = 0;
#pragma unroll
            for (int q = 0; q < PARTS; ++q) c += parts[(q + threadIdx.x) % PARTS];  // rotated: fewer bank conflicts
            if (c) atomicAdd(global + i, (unsigned long long)c);
        }
    }
};

}  // namespace gp
