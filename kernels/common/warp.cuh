// Warp-level building blocks on shuffles: any element type (1 to 8 bytes), a
// butterfly reduction (every lane gets the same, order-fixed result), the u32 sum,
// least and greatest in one instruction where the hardware has it, and an inclusive
// Kogge-Stone scan.
#pragma once
#include "common/types.cuh"

namespace gp {

constexpr int WARP = 32;
constexpr unsigned FULL_MASK = 0xffffffffu;

// Moves any element type (1 to 8 bytes) through a 32- or 64-bit shuffle `shuffle`
// (a functor taking and returning u32 or u64): the one place that knows the widths.
template <class T, class Shuffle>
__device__ __forceinline__ T shuffle_bits(T v, Shuffle shuffle) {
    if constexpr (sizeof(T) == 8) {
        return bit_cast<T>(shuffle(bit_cast<u64>(v)));
    } else if constexpr (sizeof(T) == 4) {
        return bit_cast<T>(shuffle(bit_cast<u32>(v)));
    } else {
        typedef typename UnsignedOf<T>::type U;  // 1- and 2-byte integers
        return T(U(shuffle(u32(U(v)))));
    }
}

struct XorShuffle {
    int mask;
    template <class B>
    __device__ __forceinline__ B operator()(B bits) const { return __shfl_xor_sync(FULL_MASK, bits, mask); }
};

struct UpShuffle {
    int delta;
    template <class B>
    __device__ __forceinline__ B operator()(B bits) const { return __shfl_up_sync(FULL_MASK, bits, delta); }
};

struct IdxShuffle {
    int src;
    template <class B>
    __device__ __forceinline__ B operator()(B bits) const { return __shfl_sync(FULL_MASK, bits, src); }
};

// Every lane receives lane `src`'s value.
template <class T>
__device__ __forceinline__ T shfl(T v, int src) {
    return shuffle_bits(v, IdxShuffle{src});
}

template <class T>
__device__ __forceinline__ T shfl_xor(T v, int mask) {
    return shuffle_bits(v, XorShuffle{mask});
}

template <class T>
__device__ __forceinline__ T shfl_up(T v, int delta) {
    return shuffle_bits(v, UpShuffle{delta});
}

// Every lane receives op over the 32 lanes' values, combined in a fixed tree.
template <class T, class Op>
__device__ __forceinline__ T warp_reduce(T v, Op op) {
#pragma unroll
    for (int m = 16; m >= 1; m >>= 1) v = op(v, shfl_xor(v, m));
    return v;
}

// Every lane receives the sum, the least or the greatest of the lanes' u32s: one
// REDUX instruction on sm_80 and later, the butterfly before.
__device__ __forceinline__ u32 warp_sum_u32(u32 v) {
#if __CUDA_ARCH__ >= 800
    return __reduce_add_sync(FULL_MASK, v);
#else
    return warp_reduce(v, [](u32 a, u32 b) { return a + b; });
#endif
}

__device__ __forceinline__ u32 warp_min_u32(u32 v) {
#if __CUDA_ARCH__ >= 800
    return __reduce_min_sync(FULL_MASK, v);
#else
    return warp_reduce(v, [](u32 a, u32 b) { return min(a, b); });
#endif
}

__device__ __forceinline__ u32 warp_max_u32(u32 v) {
#if __CUDA_ARCH__ >= 800
    return __reduce_max_sync(FULL_MASK, v);
#else
    return warp_reduce(v, [](u32 a, u32 b) { return max(a, b); });
#endif
}

// Every lane receives the least of the lanes' unsigned patterns (up to 32 bits: one
// REDUX; wider: the butterfly).
template <class U>
__device__ __forceinline__ U warp_min(U v) {
    if constexpr (sizeof(U) <= 4) {
        return U(warp_min_u32(u32(v)));
    } else {
        return warp_reduce(v, [](U a, U b) { return a < b ? a : b; });
    }
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
