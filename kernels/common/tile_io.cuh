// Moving a tile between global memory and shared memory, where each thread finds its
// ITEMS consecutive elements ("blocked" order) in a row of its own.
#pragma once
#include "common/types.cuh"
#include "common/warp.cuh"

namespace gp {

struct alignas(16) Vec16 {
    u32 w[4];
};

// Global accesses for data touched once: evict-first (unless built with
// -DGP_STREAMING_IO=0, for comparison), coalesced by the callers.
#ifndef GP_STREAMING_IO
#define GP_STREAMING_IO 1
#endif
__device__ __forceinline__ Vec16 load_vec16_streaming(const void *p) {
#if GP_STREAMING_IO
    uint4 v = __ldcs(reinterpret_cast<const uint4 *>(p));
#else
    uint4 v = *reinterpret_cast<const uint4 *>(p);
#endif
    return Vec16{{v.x, v.y, v.z, v.w}};
}

__device__ __forceinline__ void store_vec16_streaming(void *p, const Vec16 &v) {
#if GP_STREAMING_IO
    __stcs(reinterpret_cast<uint4 *>(p), make_uint4(v.w[0], v.w[1], v.w[2], v.w[3]));
#else
    *reinterpret_cast<uint4 *>(p) = make_uint4(v.w[0], v.w[1], v.w[2], v.w[3]);
#endif
}

// True when p is 16-byte aligned.
__device__ __forceinline__ bool aligned16(const void *p) {
    return (reinterpret_cast<usize>(p) & 15) == 0;
}

// Copies n elements, thread `first` of `stride` taking every stride-th, with 16-byte
// vectors where both sides lie equally far from a 16-byte word (the few elements
// before the first whole word go one by one), UNROLL vectors a thread in flight: a
// bucket of a sort starts anywhere, and one load at a time per thread left a copy
// of 2^18 keys by one block at ~5 GB/s (quicksort, H100).
template <class T>
__device__ __forceinline__ void copy_elements(T *dst, const T *src, usize n, usize first, usize stride) {
    constexpr int PER_VEC = 16 / sizeof(T);
    constexpr int UNROLL = 4;
    const usize dst_off = reinterpret_cast<usize>(dst) & 15, src_off = reinterpret_cast<usize>(src) & 15;
    usize head = n, vecs = 0;  // elements before the first whole word, whole vectors after them
    if (dst_off == src_off && dst_off % sizeof(T) == 0) {
        head = dst_off ? (16 - dst_off) / sizeof(T) : 0;
        head = head < n ? head : n;
        vecs = (n - head) / PER_VEC;
    }
    for (usize i = first; i < head; i += stride) dst[i] = src[i];
    T *vdst = dst + head;
    const T *vsrc = src + head;
    usize v = first;
    for (; v + (UNROLL - 1) * stride < vecs; v += UNROLL * stride) {
        Vec16 x[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) x[u] = load_vec16_streaming(vsrc + (v + u * stride) * PER_VEC);
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) store_vec16_streaming(vdst + (v + u * stride) * PER_VEC, x[u]);
    }
    for (; v < vecs; v += stride) store_vec16_streaming(vdst + v * PER_VEC, load_vec16_streaming(vsrc + v * PER_VEC));
    for (usize i = head + vecs * PER_VEC + first; i < n; i += stride) dst[i] = src[i];
}

// A warp's share of a tile (WARP * ITEMS elements) staged in shared memory in
// blocked order: lane l's row holds elements l*ITEMS .. l*ITEMS+ITEMS-1 of the
// warp's span. A full, aligned span moves between global memory and the rows as
// coalesced 16-byte vectors (lane l takes vectors l, l+32, ...); a partial one by
// guarded scalar accesses, padded with a fill value. Keeping the tile here rather
// than in registers leaves the registers free while a block waits (the look-back).
// Rows are padded by one vector, so a quarter warp's 16-byte accesses fall in
// distinct banks.
template <class T, int ITEMS>
struct WarpTile {
    static_assert((ITEMS * sizeof(T)) % 16 == 0, "a thread's items must be whole 16-byte vectors");
    static constexpr int VECS = ITEMS * sizeof(T) / 16;  // vectors per lane
    static constexpr int ROW = VECS + 1;                 // padded row, in vectors
    struct Storage {
        Vec16 rows[WARP * ROW];
    };

    __device__ __forceinline__ static int slot(int v) { return v / VECS * ROW + v % VECS; }
    // This thread's row: its ITEMS elements, VECS vectors.
    __device__ __forceinline__ static Vec16 *row(Storage &s) { return s.rows + (threadIdx.x % WARP) * ROW; }

    // `span`: this warp's first element; `valid`: how many of its WARP * ITEMS exist.
    __device__ __forceinline__ static void stage(const T *span, usize valid, T fill, bool vectorize, Storage &s) {
        const int lane = threadIdx.x % WARP;
        if (vectorize) {
            const char *src = reinterpret_cast<const char *>(span);
            Vec16 v[VECS];
#pragma unroll
            for (int j = 0; j < VECS; ++j) v[j] = load_vec16_streaming(src + (usize)(j * WARP + lane) * 16);
#pragma unroll
            for (int j = 0; j < VECS; ++j) s.rows[slot(j * WARP + lane)] = v[j];
        } else {
            const usize first = (usize)lane * ITEMS;
            T x[ITEMS];
#pragma unroll
            for (int j = 0; j < ITEMS; ++j) x[j] = first + j < valid ? span[first + j] : fill;
            memcpy(row(s), x, sizeof(x));
        }
        __syncwarp();
    }

    // Stores the staged span (after every lane has updated its row).
    __device__ __forceinline__ static void unstage(T *span, usize valid, bool vectorize, Storage &s) {
        const int lane = threadIdx.x % WARP;
        __syncwarp();
        if (vectorize) {
            char *dst = reinterpret_cast<char *>(span);
#pragma unroll
            for (int j = 0; j < VECS; ++j) store_vec16_streaming(dst + (usize)(j * WARP + lane) * 16, s.rows[slot(j * WARP + lane)]);
        } else {
            const usize first = (usize)lane * ITEMS;
            T x[ITEMS];
            memcpy(x, row(s), sizeof(x));
#pragma unroll
            for (int j = 0; j < ITEMS; ++j)
                if (first + j < valid) span[first + j] = x[j];
        }
    }
};

}  // namespace gp
