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
                const u32 tag = u32(w[k] >> 32);
                if ((tag >> 1) != epoch) break;  // not published yet: read it again
                sum += u32(w[k]);
                if (tag & 1) return sum;
                taken = k + 1;
            }
            if (taken == 0) __nanosleep(20);
            next -= taken;
        }
    }
};

}  // namespace gp
