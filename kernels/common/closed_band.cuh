// A closed band of ordered patterns, [lo, hi]: which keys lie inside it, with a count
// of those below, in one count and one range test a key (`u - lo <= hi - lo`). Shared
// by the selection's band (select_band.cuh's kind_closed) and the multi-rank band
// (multi_rank.cu), where testing lo and hi apart, with counts of the ties of each,
// cost twice the instructions a key and read below the memory's rate.
//
// NAN_FREE: no key is a float NaN with its sign bit set (any_negative_nan, checked a
// row at a time), so ordered_no_nan() serves, in three instructions instead of six. A
// positive NaN then lands among the patterns above +inf's (descending: below it),
// where no ordered() pattern but the NaN one lies, on the same side of lo and hi as
// that NaN pattern, provided lo < hi (which keeps the NaN pattern from being lo
// ascending, or hi descending). With lo == hi, map with ordered() (NAN_FREE false).
// The bounds are ordered() patterns of keys, or (the multi-rank bracket's open ends)
// 0, below every key's pattern, and the highest pattern, the ascending NaN's; both
// keep the argument (scripts/closed-band-check.cpp tests them with the rest).
#pragma once
#include "common/key_row.cuh"
#include "common/ordered_screen.cuh"
#include "common/radix_key.cuh"

namespace gp {

template <bool NAN_FREE, class U, bool FLOAT>
__device__ __forceinline__ bool in_closed_band(const KeyOrder<U, FLOAT> &order, U x, U lo, U hi, u32 &below) {
    const U u = NAN_FREE ? order.ordered_no_nan(x) : order.ordered(x);
    below += u < lo;
    return U(u - lo) <= U(hi - lo);
}

// Whether a row's loaded keys hold a float NaN with its sign bit set (raw bits above
// SIGN | inf): per-lane maxima of the words, three words an instruction.
template <class U, bool FLOAT, int VECS>
__device__ __forceinline__ bool any_negative_nan(const Vec16 (&v)[VECS], const KeyOrder<U, FLOAT> &order) {
    const U above = U(KeyOrder<U, FLOAT>::SIGN | order.inf);
    if constexpr (!FLOAT) {
        return false;
    } else if constexpr (sizeof(U) == 2 || sizeof(U) == 4) {
        u32 w[VECS * 4];
        KeyRow<U, VECS>::words(v, w);
        typedef KeyLanes<U> L;
        return L::max_lane(lanes_max<L>(w)) > above;
    } else {
        bool any = false;
#pragma unroll
        for (int j = 0; j < VECS; ++j) {
            U x[16 / sizeof(U)];
            memcpy(x, &v[j], sizeof(x));
#pragma unroll
            for (int e = 0; e < int(16 / sizeof(U)); ++e) any |= x[e] > above;
        }
        return any;
    }
}

}  // namespace gp
