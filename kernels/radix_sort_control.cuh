// The radix sort's control block and the constants its two modules share:
// radix_histogram.cu (histogram and plan, instantiated by key width) and radix_sort.cu
// (passes and finish, by key and value width). -DGP_KEY_BYTES, -DGP_KEY_FLOAT,
// -DGP_VALUE_BYTES (see common/sort_types.cuh); and from the host's own constants
// (src/backend/cuda/radix_sort.rs), so each is written once: -DGP_RADIX_BITS,
// -DGP_MAX_PORTIONS and -DGP_CONTROL_BYTES (the size the host allocates for Control).
#pragma once
#include "common/types.cuh"
#include "common/sort_types.cuh"
#include "common/input_order.cuh"

constexpr int RADIX_BITS = GP_RADIX_BITS;
constexpr int RADIX = 1 << RADIX_BITS;
constexpr int PASSES = sizeof(K) * 8 / RADIX_BITS;
constexpr int MAX_PASSES = 8;
constexpr int MAX_PORTIONS = GP_MAX_PORTIONS;  // pass launches per digit (of PORTION keys each)

// What the plan decided (gp::input_order's verdicts).
constexpr u32 MODE_DIGITS = gp::INPUT_UNSORTED;    // sort digit by digit
constexpr u32 MODE_SORTED = gp::INPUT_SORTED;      // already in order: nothing to do
constexpr u32 MODE_REVERSE = gp::INPUT_REVERSED;  // in exactly the opposite order, no two equal: reverse

// The sort's control block in device memory; the host zeroes it before each sort.
struct Control {
    unsigned long long hist[MAX_PASSES][RADIX];  // keys per digit value, per pass
    u32 unsorted;                                // some neighbours out of the wanted order
    u32 not_reversed;                            // some neighbours not strictly the other way
    u32 any_nan;                                 // float keys: some key is a NaN
    u32 hist_blocks_done;                        // histogram blocks finished (the last plans)
    u32 tickets[MAX_PASSES][MAX_PORTIONS];       // tiles handed out, per pass launch
    // Written by the plan (the histogram's last block):
    u32 mode;
    u32 copy_back;                // the last active pass wrote the alternate buffer
    u32 active[MAX_PASSES];       // the pass has work (its digit is not the same everywhere)
    u32 from_alt[MAX_PASSES];     // the pass reads the alternate buffer
    u32 ran_before[MAX_PASSES];   // an active pass runs before this one
    u32 runs_after[MAX_PASSES];   // an active pass runs after this one
    usize bins[MAX_PASSES][RADIX];  // where each digit's run starts, per pass
    usize chain[2][RADIX];          // digit starts handed from one portion to the next
};
static_assert(sizeof(Control) <= GP_CONTROL_BYTES, "the host allocates GP_CONTROL_BYTES");
