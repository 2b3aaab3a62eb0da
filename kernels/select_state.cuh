// What the selection kernels share (kernels/select.cu finds the k-th key, kernels/topk.cu
// gathers and orders the first k): the key type and its order, the tuning constants,
// the flags the host passes, and the state one call keeps in device memory.
// Compiled with the same -D options as both sources (src/backend/cuda/select.rs).
#pragma once
#include "common/types.cuh"
#include "common/radix_key.cuh"

typedef gp::BitsOf<GP_KEY_BYTES>::type U;
typedef gp::KeyOrder<U, GP_KEY_FLOAT != 0> KeyOrder;
constexpr int BLOCK = GP_BLOCK_THREADS;
constexpr int ITEMS = GP_ITEMS;
constexpr int WINDOW = GP_LOOKBACK_WINDOW;
constexpr int RADIX_BITS = 8;
constexpr int RADIX = 1 << RADIX_BITS;
constexpr int TOP_SHIFT = GP_KEY_BYTES * 8 - RADIX_BITS;  // the most significant digit
constexpr int SAMPLE_BLOCK = 1024;
constexpr int SMALL_BLOCK = GP_SMALL_BLOCK;  // select_small: threads, and keys each
constexpr int SMALL_KEYS = GP_SMALL_KEYS;

// Flags from the host, which defines their bits.
constexpr u32 LO_OPEN = GP_LO_OPEN;            // no lower bound: every key below hi is a candidate
constexpr u32 HI_OPEN = GP_HI_OPEN;            // no upper bound
constexpr u32 NO_BAND = GP_NO_BAND;            // no sample and no band: search the input itself
constexpr u32 WRITE_RESULT = GP_WRITE_RESULT;  // select_kth: write the element to `out`
constexpr u32 ORDER_RUNS = GP_ORDER_RUNS;      // top-k: the band's last block places each block's candidates
// select_kth, both bounds closed: the host launches select_band_closed, which, where the
// sample holds each bound once (bounds_unique), copies the keys equal to a bound with
// those between and does not count them apart.
constexpr u32 CLOSED_BAND = GP_CLOSED_BAND;
// select_kth's closed band by warp (select_band_warps): the candidates lie in warps'
// slots, some of them holes, and their top digit is not counted, so the digit passes
// start at it.
constexpr u32 BAND_BY_WARP = GP_BAND_BY_WARP;
// select_kth for the host: `out` is the host's mapped result slot, which gets the
// element as tagged words (common/tagged.cuh) whose tag is the flags from bit
// HOST_TAG_SHIFT.
constexpr u32 RESULT_TO_HOST = GP_RESULT_TO_HOST;
constexpr u32 HOST_TAG_SHIFT = GP_HOST_TAG_SHIFT;
static_assert((LO_OPEN | HI_OPEN | NO_BAND | WRITE_RESULT | RESULT_TO_HOST | ORDER_RUNS | CLOSED_BAND | BAND_BY_WARP) <
                  (1u << HOST_TAG_SHIFT),
              "the tag sits above the flags");

// Where the digit passes look.
constexpr u32 SOURCE_DONE = 0;        // nothing left: the answer is `prefix`
constexpr u32 SOURCE_CANDIDATES = 1;  // the band's copy
constexpr u32 SOURCE_INPUT = 2;       // the whole input

// One call's state, zeroed by the pivots' launch (without a band, by the host).
struct SelectState {
    u64 lo, hi;                      // the band's bounds (ordered patterns)
    u64 below, eq_lo, eq_hi;         // keys < lo, == lo, == hi (hi != lo); a closed band's ties: 0
    u64 between;                     // keys strictly inside: the candidates (may exceed capacity);
                                     // a closed band's: the keys in [lo, hi]; by warp: and the holes
    u64 holes;                       // slots the closed band by warp left unused (filled with hi)
    u64 bounds_unique;               // the sample held lo once and hi once (lo != hi)
    u64 band_ticket, gather_ticket;  // tile tickets of the two ordered passes
    u64 digit_ticket;                // blocks done with the current digit
    u32 source, gather_source;
    u64 rank;    // the answer's rank among the source's keys that match prefix
    u64 less;    // keys of the whole input below every key matching prefix
    u64 prefix, mask;
    u64 counts[RADIX];  // the current digit's histogram
    // select_digits (all digits in one launch): each digit's histogram summed over
    // the grid, one array a digit (so none is cleared while another block reads it),
    // and the grid barrier's arrivals.
    u64 digit_arrived;
    u64 digit_counts[GP_KEY_BYTES][RADIX];
};
// The host reserves STATE_BYTES for it (src/backend/cuda/select.rs).
static_assert(sizeof(SelectState) <= 20480, "SelectState outgrew the host's STATE_BYTES");
