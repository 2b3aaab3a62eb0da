// Warp-level building blocks on shuffles: any element type (1 to 8 bytes), a
// butterfly reduction (every lane gets the same, order-fixed result) and an inclusive
// Kogge-Stone scan.
#pragma once
#include "common/types.cuh"

namespace gp {

constexpr int WARP = 32;
constexpr unsigned FULL_MASK = 0xffffffffu;

template <class T>
__device__ __forceinline__ T shfl_xor(T v, int mask) {
    if constexpr (sizeof(T) == 8) {
        return bit_cast<T>(__shfl_xor_sync(FULL_MASK, bit_cast<u64>(v), mask));
    } else if constexpr (sizeof(T) == 4) {
        return bit_cast<T>(__shfl_xor_sync(FULL_MASK, bit_cast<u32>(v), mask));
    } else {
        typedef typename UnsignedOf<T>::type U;  // 1- and 2-byte integers
        return T(__shfl_xor_sync(FULL_MASK, u32(U(v)), mask));
    }
}

template <class T>
__device__ __forceinline__ T shfl_up(T v, int delta) {
    if constexpr (sizeof(T) == 8) {
        return bit_cast<T>(__shfl_up_sync(FULL_MASK, bit_cast<u64>(v), delta));
    } else if constexpr (sizeof(T) == 4) {
        return bit_cast<T>(__shfl_up_sync(FULL_MASK, bit_cast<u32>(v), delta));
    } else {
        typedef typename UnsignedOf<T>::type U;
        return T(__shfl_up_sync(FULL_MASK, u32(U(v)), delta));
    }
}

template <class T>
__device__ __forceinline__ T shfl_idx(T v, int lane) {
    if constexpr (sizeof(T) == 8) {
        return bit_cast<T>(__shfl_sync(FULL_MASK, bit_cast<u64>(v), lane));
    } else if constexpr (sizeof(T) == 4) {
        return bit_cast<T>(__shfl_sync(FULL_MASK, bit_cast<u32>(v), lane));
    } else {
        typedef typename UnsignedOf<T>::type U;
        return T(__shfl_sync(FULL_MASK, u32(U(v)), lane));
    }
}

// Every lane receives op over the 32 lanes' values, combined in a fixed tree.
template <class T, class Op>
__device__ __forceinline__ T warp_reduce(T v, Op op) {
#pragma unroll
    for (int m = 16; m >= 1; m >>= 1) v = op(v, shfl_xor(v, m));
    return v;
}

// Lane i receives op over lanes 0..i.
template <class T, class Op>
__device__ __forceinline__ T warp_inclusive_scan(T v, Op op) {
    const int lane = threadIdx.x % WARP;
#pragma unroll
    for (int d = 1; d < WARP; d <<= 1) {
        T up = shfl_up(v, d);
        if (lane >= d) v = op(up, v);
    }
    return v;
}

}  // namespace gp
