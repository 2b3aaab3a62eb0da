// The binary operators of reduce and scan, with their identities.
// MIN/MAX on floats: NaN wins (once a NaN is in, the result is NaN), otherwise the
// total order -inf < ... < -0.0 < +0.0 < ... < +inf. Integer SUM wraps.
#pragma once
#include "common/types.cuh"

namespace gp {

template <class T>
struct SumOp {
    __device__ __forceinline__ static T identity() { return T(0); }
    __device__ __forceinline__ T operator()(T a, T b) const {
        if constexpr (IsFloat<T>::value) {
            return a + b;
        } else {
            typedef typename UnsignedOf<T>::type U;
            return T(U(U(a) + U(b)));
        }
    }
};

template <class T>
struct MinOp {
    __device__ __forceinline__ static T identity() { return Limits<T>::highest(); }
    __device__ __forceinline__ T operator()(T a, T b) const {
        if constexpr (IsFloat<T>::value) {
            if (a != a) return a;
            if (b != b) return b;
            if (a == b) return sign_bit(a) ? a : b;  // -0.0 < +0.0
            return b < a ? b : a;
        } else {
            return b < a ? b : a;
        }
    }
};

template <class T>
struct MaxOp {
    __device__ __forceinline__ static T identity() { return Limits<T>::lowest(); }
    __device__ __forceinline__ T operator()(T a, T b) const {
        if constexpr (IsFloat<T>::value) {
            if (a != a) return a;
            if (b != b) return b;
            if (a == b) return sign_bit(a) ? b : a;  // +0.0 > -0.0
            return b > a ? b : a;
        } else {
            return b > a ? b : a;
        }
    }
};

// Two counts in one 64-bit word (low and high halves), each summed with saturation at
// 2^32 - 1: a pair a look-back can carry in one tagged value. Saturating addition of
// non-negative counts is still associative, so the fixed-order look-back stays exact
// wherever a count stays below the cap.
struct CountPairSum {
    static constexpr u64 CAP = 0xffffffffull;
    __device__ __forceinline__ static u64 identity() { return 0; }
    __device__ __forceinline__ static u64 pack(u64 low, u64 high) { return (low < CAP ? low : CAP) | (high < CAP ? high : CAP) << 32; }
    __device__ __forceinline__ static u64 low(u64 p) { return p & CAP; }
    __device__ __forceinline__ static u64 high(u64 p) { return p >> 32; }
    __device__ __forceinline__ u64 operator()(u64 a, u64 b) const { return pack(low(a) + low(b), high(a) + high(b)); }
};

}  // namespace gp
