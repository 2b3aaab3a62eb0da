// One digit of a block's radix select over keys the block reads itself (a row of a
// segmented select or top-k, from global memory, the whole row each digit): which
// bucket of the digit holds a wanted rank among the keys that match the prefix chosen
// so far, and how many keys that bucket holds.
//
//   begin(c)        zeroes the histogram;
//   copy(c)         the calling warp's copy of it: the caller counts each of its
//                   matching keys' digit there (warp_count_digit, or atomicAdd);
//   finish(c, f, rank, bucket_count)
//                   adds the copies up and finds the bucket holding `rank`.
//
// Each warp counts into copy (warp % COPIES): more copies, fewer warps contending on a
// counter (the first digit, which every key has, would pile all of a block's atomics
// onto RADIX counters). A copy's counters are u32: the caller keeps what one copy
// counts below 2^32 (a row shorter than that, or a copy a warp that sees a share of
// it). The totals and ranks are C: u32 where a row has fewer than 2^32 keys, else u64.
//
// Shared memory: Counts, COPIES * RADIX u32, in use from begin() until finish()
// returns (a caller may overlay it with memory of its own other steps); Found, RADIX
// totals of C and the bucket, in use from finish()'s start until it returns (and
// search()'s until every thread has read the bucket).
//
// Barriers: begin, finish and search are called by every thread of the block (each
// has __syncthreads). begin ends with one, so every counter is zero before any thread
// counts; finish has four: every count is in before the totals are added, the totals
// before warp 0 searches them, the bucket published before every thread reads it, and
// every thread has read the totals and bucket before the caller's next step may
// reuse them (or the copies: the next begin).
#pragma once
#include "common/radix_bucket.cuh"

namespace gp {

template <class C, int BLOCK, int COPIES, int RADIX>
struct BlockDigitBucket {
    static_assert(BLOCK % WARP == 0, "whole warps");
    static_assert(COPIES >= 1 && COPIES <= BLOCK / WARP, "a copy for one warp or more");

    struct Counts {
        u32 hist[COPIES][RADIX];
    };
    struct Found {
        C totals[RADIX];
        Bucket<C> chosen;
    };

    // The whole block: every copy zeroed; ends with a barrier.
    __device__ __forceinline__ static void begin(Counts &c) {
        for (int d = threadIdx.x; d < COPIES * RADIX; d += BLOCK) (&c.hist[0][0])[d] = 0;
        __syncthreads();
    }

    // The copy the calling thread's warp counts into.
    __device__ __forceinline__ static u32 *copy(Counts &c) { return c.hist[(threadIdx.x / WARP) % COPIES]; }

    // The whole block, once every thread has counted: the bucket holding `rank` (among
    // every copy's counts, which hold at least rank + 1 keys in all) and, in
    // `bucket_count`, the keys it holds. Every thread receives both.
    __device__ __forceinline__ static Bucket<C> finish(Counts &c, Found &f, C rank, C &bucket_count) {
        __syncthreads();  // every count is in
        for (int d = threadIdx.x; d < RADIX; d += BLOCK) {
            C t = 0;
            for (int w = 0; w < COPIES; ++w) t += c.hist[w][d];
            f.totals[d] = t;
        }
        __syncthreads();
        const Bucket<C> b = search(f.totals, rank, f);
        bucket_count = f.totals[b.digit];
        __syncthreads();  // the totals, the bucket and the copies may be reused
        return b;
    }

    // The whole block: warp 0 finds the bucket of `totals` (RADIX counts, complete and
    // visible to warp 0: written before a barrier) holding `rank`, and every thread
    // receives it. Ends with the barrier that publishes it: f.chosen must not be
    // written again until every thread has read it (the caller's next barrier).
    __device__ __forceinline__ static Bucket<C> search(const C *totals, C rank, Found &f) {
        if (threadIdx.x < WARP) {
            const Bucket<C> b = find_bucket<C, RADIX>(totals, rank);
            if (threadIdx.x == 0) f.chosen = b;
        }
        __syncthreads();
        return f.chosen;
    }
};

}  // namespace gp
