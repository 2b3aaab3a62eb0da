// Moving a tile between global memory and registers. "Blocked": thread t holds the
// ITEMS consecutive elements starting at t * ITEMS, loaded as 16-byte vectors when
// the tile is full and aligned; a partial tile falls back to guarded scalar accesses
// and pads with a fill value.
#pragma once
#include "common/types.cuh"

namespace gp {

struct alignas(16) Vec16 {
    u32 w[4];
};

// Global loads that bypass L1 (data is read once) and read through L2.
__device__ __forceinline__ Vec16 load_vec16_streaming(const void *p) {
    uint4 v = __ldcs(reinterpret_cast<const uint4 *>(p));
    return Vec16{{v.x, v.y, v.z, v.w}};
}

__device__ __forceinline__ void store_vec16_streaming(void *p, const Vec16 &v) {
    __stcs(reinterpret_cast<uint4 *>(p), make_uint4(v.w[0], v.w[1], v.w[2], v.w[3]));
}

// True when p is 16-byte aligned.
__device__ __forceinline__ bool aligned16(const void *p) {
    return (reinterpret_cast<usize>(p) & 15) == 0;
}

template <class T, int ITEMS>
__device__ __forceinline__ void load_blocked(const T *tile, usize valid, T (&x)[ITEMS], T fill, bool vectorize) {
    static_assert((ITEMS * sizeof(T)) % 16 == 0, "a thread's items must be whole 16-byte vectors");
    constexpr int VECS = ITEMS * sizeof(T) / 16;
    const T *mine = tile + (usize)threadIdx.x * ITEMS;
    if (vectorize) {
        Vec16 v[VECS];
#pragma unroll
        for (int j = 0; j < VECS; ++j) v[j] = load_vec16_streaming(mine + j * (16 / sizeof(T)));
        memcpy(x, v, sizeof(x));
    } else {
        const usize first = (usize)threadIdx.x * ITEMS;
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) x[j] = first + j < valid ? mine[j] : fill;
    }
}

template <class T, int ITEMS>
__device__ __forceinline__ void store_blocked(T *tile, usize valid, const T (&x)[ITEMS], bool vectorize) {
    constexpr int VECS = ITEMS * sizeof(T) / 16;
    T *mine = tile + (usize)threadIdx.x * ITEMS;
    if (vectorize) {
        Vec16 v[VECS];
        memcpy(v, x, sizeof(x));
#pragma unroll
        for (int j = 0; j < VECS; ++j) store_vec16_streaming(mine + j * (16 / sizeof(T)), v[j]);
    } else {
        const usize first = (usize)threadIdx.x * ITEMS;
#pragma unroll
        for (int j = 0; j < ITEMS; ++j)
            if (first + j < valid) mine[j] = x[j];
    }
}

}  // namespace gp
