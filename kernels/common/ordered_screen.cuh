// A cheap first look at raw keys against an ordered bound: which keys may have
// KeyOrder::ordered(x) <= bound. It never misses such a key (it may pass a few others,
// negative NaNs among them), so the keys it passes are then tested exactly and the
// rest skipped. Made for scans where almost nothing passes (top-k's band):
// it tests raw bits, one XOR and compare a key, never mapping a key to its order, and
// a thread's whole words at once through per-lane minima and maxima (Hopper's DPX
// VIMNMX3: three words an instruction, two 16-bit keys a word).
// Keys of 2 and 4 bytes. scripts/ordered-screen-check.cpp checks it on the host (every
// 16-bit bound against every 16-bit key).
#pragma once
#include "common/types.cuh"
#include "common/radix_key.cuh"

namespace gp {

// Per-lane unsigned minima and maxima of 32-bit words holding keys of type U.
template <class U> struct KeyLanes;
template <> struct KeyLanes<u16> {
    __device__ __forceinline__ static u32 splat(u16 v) { return u32(v) * 0x10001u; }
    __device__ __forceinline__ static u32 min3(u32 a, u32 b, u32 c) { return __vimin3_u16x2(a, b, c); }
    __device__ __forceinline__ static u32 max3(u32 a, u32 b, u32 c) { return __vimax3_u16x2(a, b, c); }
    __device__ __forceinline__ static u16 min_lane(u32 w) { return u16(min(w & 0xffffu, w >> 16)); }
    __device__ __forceinline__ static u16 max_lane(u32 w) { return u16(max(w & 0xffffu, w >> 16)); }
};
template <> struct KeyLanes<u32> {
    __device__ __forceinline__ static u32 splat(u32 v) { return v; }
    __device__ __forceinline__ static u32 min3(u32 a, u32 b, u32 c) { return __vimin3_u32(a, b, c); }
    __device__ __forceinline__ static u32 max3(u32 a, u32 b, u32 c) { return __vimax3_u32(a, b, c); }
    __device__ __forceinline__ static u32 min_lane(u32 w) { return w; }
    __device__ __forceinline__ static u32 max_lane(u32 w) { return w; }
};

// The per-lane maximum of N words (N even), three words an instruction: w[0], then
// pairs, then the last word alone.
template <class L, int N>
__device__ __forceinline__ u32 lanes_max(const u32 (&w)[N]) {
    static_assert(N % 2 == 0, "words in pairs");
    u32 hi = w[0];
#pragma unroll
    for (int i = 1; i + 1 < N; i += 2) hi = L::max3(hi, w[i], w[i + 1]);
    return L::max3(hi, w[N - 1], w[N - 1]);
}

// x passes when (x ^ mask) <= bound, unsigned, or (floats, descending) x is a negative
// NaN. For integers that is ordered(x) <= bound exactly (ordered is x ^ flip). For
// floats (-inf < ... < -0.0 < +0.0 < ... < +inf < NaN) the keys wanted are an initial
// run of that order (ascending) or a final one, NaNs included (descending); on raw
// bits each is one unsigned (mask 0 or ~0) or signed (mask SIGN or ~SIGN) range, give
// or take the NaNs of one sign, which the second test catches where they are wanted.
template <class U, bool FLOAT>
struct OrderedScreen {
    static constexpr U SIGN = KeyOrder<U, FLOAT>::SIGN;
    U mask, bound;
    U nan_from;  // floats, descending: the lowest negative NaN (~0 and no test otherwise)
    bool nans;   // whether nan_from is tested

    __device__ __forceinline__ OrderedScreen(const KeyOrder<U, FLOAT> &order, U at_most) {
        mask = order.flip;
        bound = at_most;
        nan_from = U(~U(0));
        nans = false;
        if constexpr (FLOAT) {
            if (order.flip == 0) {
                // Ascending: at most a positive value (or NaN): every negative and the
                // positives up to it (signed); at most a negative one: the negatives from
                // its bits up (unsigned, the bits of ~ordered).
                mask = (at_most & SIGN) ? SIGN : U(~U(0));
            } else {
                // Descending: at least the value v whose ascending pattern is ~at_most.
                const U asc = U(~at_most);
                if (asc & SIGN) {
                    // v >= +0.0: the positives with bits from v's (signed); when v is NaN,
                    // from the lowest positive NaN.
                    const U v = U(asc ^ SIGN), first_nan = U(order.inf + 1);
                    const U from = v < first_nan ? v : first_nan;
                    mask = U(~SIGN);
                    bound = U(~U(from ^ SIGN));
                } else {
                    // v <= -0.0: every positive and the negatives with bits up to v's.
                    mask = 0;
                }
                nan_from = U(SIGN | U(order.inf + 1));
                nans = true;
            }
        }
    }

    __device__ __forceinline__ bool passes(U x) const {
        return U(x ^ mask) <= bound || (FLOAT && nans && x >= nan_from);
    }

    // Whether any key of N whole words may pass (N even: three words a DPX).
    template <int N>
    __device__ __forceinline__ bool any_passes(const u32 (&w)[N]) const {
        static_assert(N % 2 == 0, "words in pairs");
        typedef KeyLanes<U> L;
        const u32 m = L::splat(mask);
        // Minima and maxima in one loop: written apart (the maxima as lanes_max), the
        // band kernels compile to other SASS than the one measured.
        u32 lo = w[0] ^ m, hi = w[0];
#pragma unroll
        for (int i = 1; i + 1 < N; i += 2) {
            lo = L::min3(lo, w[i] ^ m, w[i + 1] ^ m);
            if (FLOAT) hi = L::max3(hi, w[i], w[i + 1]);
        }
        lo = L::min3(lo, w[N - 1] ^ m, w[N - 1] ^ m);
        if (FLOAT) hi = L::max3(hi, w[N - 1], w[N - 1]);
        return L::min_lane(lo) <= bound || (FLOAT && nans && L::max_lane(hi) >= nan_from);
    }
};

}  // namespace gp
