// Chained scan of per-tile digit counts with decoupled look-back (Merrill & Garland;
// Onesweep, Adinets & Merrill 2022): every tile publishes, for each digit, its own
// count as soon as it has it, then its inclusive prefix once it knows it; a tile finds
// its exclusive prefix by walking back over its predecessors, adding their counts,
// until it meets an inclusive prefix. Thread d does digit d, independently.
//
// A published count travels in one 64-bit word: the high half holds the run's epoch
// and a flag (inclusive or not), the low half the count. The flag and the value land
// together, so no fence orders them, and words of earlier runs carry other epochs, so
// nothing is cleared between runs (the host keeps epochs below 2^31).
#pragma once
#include "common/tagged.cuh"

namespace gp {

template <int RADIX>
struct DigitLookBack {
    // state[tile * RADIX + digit]
    __device__ __forceinline__ static void publish(u64 *state, u32 tile, u32 digit, u32 value, bool inclusive, u32 epoch) {
        const u64 tag = u64(epoch * 2u + (inclusive ? 1u : 0u)) << 32;
        store_relaxed(state + (usize)tile * RADIX + digit, tag | value);
    }

    // Digit `digit`'s count over tiles 0 .. tile-1 (tile > 0; tile 0 publishes an
    // inclusive prefix, so the walk ends there at the latest).
    __device__ __forceinline__ static u32 exclusive_prefix(const u64 *state, u32 tile, u32 digit, u32 epoch) {
        u32 sum = 0;
        u32 t = tile - 1;
        for (;;) {
            const u64 w = load_relaxed(state + (usize)t * RADIX + digit);
            const u32 tag = u32(w >> 32);
            if ((tag >> 1) != epoch) {
                __nanosleep(20);
                continue;
            }
            sum += u32(w);
            if (tag & 1) return sum;
            --t;
        }
    }
};

}  // namespace gp
