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

}  // namespace gp
