// Moving a tile between global memory and registers. "Blocked": thread t holds the
// ITEMS consecutive elements starting at t * ITEMS. A full, aligned tile moves as
// coalesced 16-byte vectors (lane l of a warp takes vectors l, l+32, ... of the
// warp's span) and is turned blocked through shared memory (WarpTranspose); a
// partial tile uses guarded scalar accesses and pads with a fill value.
#pragma once
#include "common/types.cuh"
#include "common/warp.cuh"

namespace gp {

struct alignas(16) Vec16 {
    u32 w[4];
};

// Global accesses for data touched once: evict-first, coalesced by the callers.
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

// Striped <-> blocked within one warp. Each lane's row is padded by one vector, so
// the 16-byte accesses of a quarter warp fall in distinct banks.
template <class T, int ITEMS>
struct WarpTranspose {
    static_assert((ITEMS * sizeof(T)) % 16 == 0, "a thread's items must be whole 16-byte vectors");
    static constexpr int VECS = ITEMS * sizeof(T) / 16;  // vectors per lane
    static constexpr int ROW = VECS + 1;                 // padded row, in vectors
    struct Storage {
        Vec16 rows[WARP * ROW];
    };

    __device__ __forceinline__ static int slot(int v) { return v / VECS * ROW + v % VECS; }

    // `warp_tile`: the WARP * ITEMS elements of this warp, 16-byte aligned.
    __device__ __forceinline__ static void load(const T *warp_tile, T (&x)[ITEMS], Storage &s) {
        const int lane = threadIdx.x % WARP;
        const char *src = reinterpret_cast<const char *>(warp_tile);
        Vec16 v[VECS];
#pragma unroll
        for (int j = 0; j < VECS; ++j) v[j] = load_vec16_streaming(src + (usize)(j * WARP + lane) * 16);
#pragma unroll
        for (int j = 0; j < VECS; ++j) s.rows[slot(j * WARP + lane)] = v[j];
        __syncwarp();
#pragma unroll
        for (int j = 0; j < VECS; ++j) v[j] = s.rows[lane * ROW + j];
        memcpy(x, v, sizeof(x));
        __syncwarp();
    }

    __device__ __forceinline__ static void store(T *warp_tile, const T (&x)[ITEMS], Storage &s) {
        const int lane = threadIdx.x % WARP;
        char *dst = reinterpret_cast<char *>(warp_tile);
        Vec16 v[VECS];
        memcpy(v, x, sizeof(x));
#pragma unroll
        for (int j = 0; j < VECS; ++j) s.rows[lane * ROW + j] = v[j];
        __syncwarp();
#pragma unroll
        for (int j = 0; j < VECS; ++j) v[j] = s.rows[slot(j * WARP + lane)];
#pragma unroll
        for (int j = 0; j < VECS; ++j) store_vec16_streaming(dst + (usize)(j * WARP + lane) * 16, v[j]);
        __syncwarp();
    }
};

// Loads this thread's ITEMS elements of `tile` (of which `valid` exist).
template <class T, int ITEMS>
__device__ __forceinline__ void load_blocked(const T *tile, usize valid, T (&x)[ITEMS], T fill, bool vectorize,
                                             typename WarpTranspose<T, ITEMS>::Storage &warp_storage) {
    if (vectorize) {
        WarpTranspose<T, ITEMS>::load(tile + (usize)(threadIdx.x / WARP) * WARP * ITEMS, x, warp_storage);
    } else {
        const usize first = (usize)threadIdx.x * ITEMS;
        const T *mine = tile + first;
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) x[j] = first + j < valid ? mine[j] : fill;
    }
}

// Stores this thread's ITEMS elements into `tile` (of which `valid` exist).
template <class T, int ITEMS>
__device__ __forceinline__ void store_blocked(T *tile, usize valid, const T (&x)[ITEMS], bool vectorize,
                                              typename WarpTranspose<T, ITEMS>::Storage &warp_storage) {
    if (vectorize) {
        WarpTranspose<T, ITEMS>::store(tile + (usize)(threadIdx.x / WARP) * WARP * ITEMS, x, warp_storage);
    } else {
        const usize first = (usize)threadIdx.x * ITEMS;
        T *mine = tile + first;
#pragma unroll
        for (int j = 0; j < ITEMS; ++j)
            if (first + j < valid) mine[j] = x[j];
    }
}

}  // namespace gp
