// One warp finds the key of a given rank among up to WARP * ITEMS ordered keys held in
// its lanes' registers (common/radix_key.cuh patterns) by settling the answer's bits
// from the top, two at a time: the answer is the largest pattern t with at most `rank`
// keys below it, so for each candidate next digit d the warp counts the keys below
// (answer so far | d << shift) and keeps the largest d whose count is <= rank. The
// three candidates' counts travel packed in one u32 through one warp reduction a step:
// no shared memory, no barrier, a short dependent chain (8 steps for u16 keys), which
// suits short rows of narrow keys (a segmented select's).
//
// Each step is as few instructions as the warp can issue it in, since short rows are
// many and a step is most of a row's work: the search is compiled once per number of
// registers a lane holds (a row of 40 keys steps over 2, not ITEMS), a key costs a
// compare and an add a candidate (for narrow keys, the sign of a difference), and the
// digit is read off the packed counts at once (guard bits: every field compared with
// the rank in one addition and a popcount).
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
    // The three counts of up to WARP * ITEMS keys share a u32, 10 bits each, whose top
    // bit stays clear (a guard bit for comparing every field with the rank at once).
    static constexpr int FIELD = 10;
    static constexpr u32 MASK = (1u << FIELD) - 1;
    static constexpr u32 ONES = 1u | 1u << FIELD | 1u << 2 * FIELD;  // 1 in each field
    static constexpr u32 GUARDS = ONES << (FIELD - 1);
    static_assert(WARP * ITEMS < (1 << (FIELD - 1)), "a count fits its field below the guard bit");

    // The key of rank `r` among the `size` (1..3) real keys in [found, found + step)
    // (keys of up to 4 bytes), read off their distances from found: the least (keys
    // below found wrap around to larger distances than any in the bucket, those above
    // it are farther; padding, the largest pattern, can only tie with the answer), the
    // greatest, or the one between them (their sum less both). Padding lanes (only in
    // register N - 1) are left out of the greatest and the sum.
    template <int N>
    __device__ __forceinline__ static U finish(const Held (&keys)[ITEMS], u32 count, Held found, Held step, u32 r,
                                               u32 size) {
        const u32 base = u32(found);
        u32 least = ~0u;
#pragma unroll
        for (int j = 0; j < N; ++j) least = min(least, u32(keys[j]) - base);
        least = warp_min_u32(least);
        if (r == 0) return U(base + least);  // the same for the whole warp
        const int lane = threadIdx.x % WARP;
        u32 most = 0, sum = 0;
#pragma unroll
        for (int j = 0; j < N; ++j) {
            const u32 d = u32(keys[j]) - base;
            const bool in = d < u32(step) && (j < N - 1 || (N - 1) * WARP + lane < (int)count);
            most = in ? max(most, d) : most;
            sum += in ? d : 0u;
        }
        most = warp_max_u32(most);
        if (r == size - 1) return U(base + most);
        return U(base + warp_sum_u32(sum) - least - most);
    }

    // The search over rows of up to WARP * N keys: keys[j] for j >= N is never read.
    //
    // Besides the answer so far, the warp tracks the keys below it (lo) and below its
    // next value (hi), which the counts give anyway: once three keys or fewer are left
    // between them, the answer is one of those, found by a warp reduction or three
    // instead of the remaining steps (for short rows of spread keys, after a few bits:
    // u16 rows of 1..100, 2.5 steps a row against 3.6 when waiting for one key).
    //
    // A step's decision runs once a warp but is a chain of dependent instructions, so
    // it is kept short: the counts are packed highest candidate first, and the number
    // of candidates past the rank (one popcount) gives both the next answer (t3 less
    // that many steps) and, as a shift, the new hi and lo. (Unrolling the steps of
    // narrow keys took more instructions out but doubled the code, and the short-row
    // kernel then ran no faster.)
    template <int N>
    __device__ __forceinline__ static U select_items(const Held (&keys)[ITEMS], u32 count, u32 rank) {
        constexpr bool EARLY_EXIT = sizeof(U) <= 4;
        // Added to a field (its guard bit clear: a count is below it), this leaves the
        // guard bit set exactly when the count is past the rank.
        const u32 past_rank = GUARDS - (rank + 1) * ONES;
        Held found = 0;
        u32 lo = 0, hi = count;
        // The step halves twice a round, down to 1 (the last bits); a bucket of one value
        // that ends the search early is finished like any other.
#pragma unroll 1
        for (Held step = Held(1) << (BITS - STEP_BITS); step != 0; step >>= STEP_BITS) {
            // Each candidate straight from `found` (not one from the other): the
            // search is a chain of dependent steps, and this keeps it two adds shorter.
            const Held t1 = found + step, t2 = found + 2 * step, t3 = found + 3 * step;
            u32 below1 = 0, below2 = 0, below3 = 0;
#pragma unroll
            for (int j = 0; j < N; ++j) {
                if constexpr (sizeof(U) <= 2) {
                    // Keys and candidates below 2^31: the difference's sign bit is the
                    // compare, added in one instruction.
                    below1 += u32(keys[j] - t1) >> 31;
                    below2 += u32(keys[j] - t2) >> 31;
                    below3 += u32(keys[j] - t3) >> 31;
                } else {
                    below1 += keys[j] < t1;
                    below2 += keys[j] < t2;
                    below3 += keys[j] < t3;
                }
            }
            // Fields from the lowest: keys below t3, t2, t1.
            const u32 below = warp_sum_u32(below3 | below2 << FIELD | below1 << 2 * FIELD);
            // The counts rise with the candidate: the digit is 3 less those past the rank.
            const u32 past = __popc((below + past_rank) & GUARDS);
            found = t3 - Held(past) * step;
            // hi, the three counts, lo: the new hi and lo are fields `past` and
            // `past` + 1.
            const u64 bounds = u64(hi) | u64(below) << FIELD | u64(lo) << 4 * FIELD;
            const u32 from = u32(bounds >> (past * FIELD));
            hi = from & MASK;
            lo = (from >> FIELD) & MASK;
            if (EARLY_EXIT && hi - lo <= 3) return finish<N>(keys, count, found, step, rank - lo, hi - lo);
        }
        return U(found);
    }

    // Called by a whole warp. keys[j] of lane l is one of the `count` keys when
    // j * WARP + l < count; the others of the first ceil(count / WARP) registers must
    // be MISSING (later ones are not read). 0 < count <= WARP * ITEMS, rank < count.
    // Every lane receives the ordered key of that rank (0-based, ascending).
    template <int N = 1>
    __device__ __forceinline__ static U select(const Held (&keys)[ITEMS], u32 count, u32 rank) {
        if constexpr (N < ITEMS) {
            if (count > u32(N * WARP)) return select<N + 1>(keys, count, rank);  // the same for the whole warp
        }
        return select_items<N>(keys, count, rank);
    }
};

}  // namespace gp
