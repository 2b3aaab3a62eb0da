// Chained scan of per-tile digit counts with decoupled look-back (Merrill & Garland;
// Onesweep, Adinets & Merrill 2022): every tile publishes, for each digit, its own
// count as soon as it has it, then its inclusive prefix once it knows it; a tile finds
// its exclusive prefix by walking back over its predecessors, adding their counts,
// until it meets an inclusive prefix. Thread d does digit d, independently.
//
// A published count travels in one tagged word (common/tagged.cuh): the run owns two
// tags, the first for a tile's own count, the second for its inclusive prefix. The
// kind and the value land together, so no fence orders them, and words of earlier
// runs carry earlier tags, so nothing is cleared between runs.
#pragma once
#include "common/tagged.cuh"

namespace gp {

template <int RADIX>
struct DigitLookBack {
    // Tags a run takes (the host's DIGIT_LOOKBACK_TAGS): a count, an inclusive prefix.
    static constexpr u32 TAGS = 2;

    // state[tile * RADIX + digit]
    __device__ __forceinline__ static void publish(u64 *state, u32 tile, u32 digit, u32 value, bool inclusive, u32 epoch) {
        store_relaxed(state + (usize)tile * RADIX + digit, RunTags{epoch}.word(value, inclusive ? 1u : 0u));
    }

    // Digit `digit`'s count over tiles 0 .. tile-1 (tile > 0; tile 0 publishes an
    // inclusive prefix, so the walk ends there at the latest). The words of WINDOW
    // predecessors are read at once, so a walk over tiles that have only published
    // their counts costs one round trip per WINDOW tiles, not per tile.
    template <int WINDOW>
    __device__ __forceinline__ static u32 exclusive_prefix(const u64 *state, u32 tile, u32 digit, u32 epoch) {
        u32 sum = 0;
        u32 next = tile;  // tiles next-1, next-2, ... are still to be added
        for (;;) {
            // (Defined past `next` too: a word only sometimes written would be live, to
            // the compiler, from the kernel's start, holding registers through the
            // caller's ranking.)
            u64 w[WINDOW];
#pragma unroll
            for (int k = 0; k < WINDOW; ++k)
                w[k] = k < next ? load_relaxed(state + (usize)(next - 1 - k) * RADIX + digit) : u64(0);
            u32 taken = 0;
#pragma unroll
            for (int k = 0; k < WINDOW; ++k) {
                if (k >= next) break;
                const u32 kind = RunTags{epoch}.index_of(w[k]);
                if (kind >= TAGS) break;  // not published yet: read it again
                sum += u32(w[k]);
                if (kind == 1) return sum;
                taken = k + 1;
            }
            if (taken == 0) __nanosleep(20);
            next -= taken;
        }
    }
};

}  // namespace gp
