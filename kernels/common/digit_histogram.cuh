// Block-level histograms of every digit of a key at once (one per pass of an LSD
// radix sort), counted in shared memory and added to device-wide u64 counters at the
// end.
//
// Each histogram is kept in PARTS copies, interleaved ([pass][digit][part]), and lane
// l counts into part l % PARTS: lanes of a warp with different digits then mostly hit
// different banks (with 32 parts each lane has its own bank), and lanes with the same
// digit and part hit one address, which the hardware merges within an increment. So
// an atomic of random keys costs one or two bank wavefronts instead of three or four,
// and runs of equal digits (sorted input, few distinct values) do not serialise.
//
// With -DGP_HIST_WARP_VOTE=1, a warp takes the one-atomic-for-N path only when one of
// its lanes has a digit its N keys agree on (one vote a vector); otherwise, as for
// random keys, every key's digits are counted without the per-digit tests.
#pragma once
#include "common/radix_key.cuh"
#include "common/warp.cuh"
#ifndef GP_HIST_WARP_VOTE
#define GP_HIST_WARP_VOTE 0
#endif

namespace gp {

// PARTS_: copies of each histogram (a power of two up to 32; 0: 32 / PASSES, which
// keeps 8-bit digits' counters in 32 KiB). With 32, every lane counts into its own
// bank, and an atomic of random digits is one bank wavefront.
template <int BLOCK, int PASSES, int RADIX_BITS, int PARTS_ = 0>
struct BlockDigitHistogram {
    static constexpr int RADIX = 1 << RADIX_BITS;
    static constexpr int PARTS = PARTS_ > 0 ? PARTS_ : PASSES >= 32 ? 1 : 32 / PASSES;
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
        if (GP_HIST_WARP_VOTE && !__any_sync(__activemask(), N > 1 && some_digit_zero(differ))) {
            // From the shared-memory address of the lane's own part's first counter,
            // so each address is one multiply-add of the digit (ptxas: PRMT + IMAD).
            const u32 mine = (u32)__cvta_generic_to_shared(&s.counts[0][0][part]);
#pragma unroll
            for (int p = 0; p < PASSES; ++p) {
#pragma unroll
                for (int k = 0; k < N; ++k)
                    shared_add_one(mine + (lean_digit(ordered[k], p) << LOG_PART_BYTES) + p * RADIX * PARTS * 4);
            }
            return;
        }
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

    // log2 of a digit's bytes of counters (PARTS u32 of them; PARTS is a power of two)
    __host__ __device__ static constexpr int log2_of(int x) { return x <= 1 ? 0 : 1 + log2_of(x / 2); }
    static constexpr int LOG_PART_BYTES = 2 + log2_of(PARTS);
    static_assert((1 << LOG_PART_BYTES) == PARTS * 4, "PARTS is a power of two");

    // One more to the counter at a shared-memory address (nothing returned).
    __device__ __forceinline__ static void shared_add_one(u32 address) {
        asm volatile("red.shared.add.u32 [%0], 1;" ::"r"(address) : "memory");
    }

    // digit_of() for the lean path: a byte digit as one byte permute (PRMT).
    template <class U>
    __device__ __forceinline__ static u32 lean_digit(U x, int p) {
        if constexpr (RADIX_BITS == 8 && sizeof(U) >= 4) {
            const u32 word = sizeof(U) == 8 ? u32(u64(x) >> (p / 4 * 32)) : u32(x);
            return __byte_perm(word, 0, 0x4440 + p % 4);
        } else {
            return digit_of<RADIX_BITS>(x, p);
        }
    }

    // Whether some RADIX_BITS-wide digit of x is zero (the bit trick for a zero byte,
    // widened to the digit).
    template <class U>
    __device__ __forceinline__ static bool some_digit_zero(U x) {
        typedef typename BitsOf<(sizeof(U) < 4 ? 4 : sizeof(U))>::type W;  // no promotion surprises
        constexpr int BITS = sizeof(U) * 8;
        constexpr W ALL = BITS == sizeof(W) * 8 ? W(~W(0)) : W((W(1) << (BITS % (sizeof(W) * 8))) - 1);
        constexpr W LOW = ALL / W((W(1) << RADIX_BITS) - 1);  // the lowest bit of every digit
        constexpr W HIGH = LOW << (RADIX_BITS - 1);           // the highest bit of every digit
        const W w = W(x);
        return (((w - LOW) & ~w) & HIGH) != 0;
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
