// A thread's row of a band pass's tile: ITEMS consecutive keys read straight into
// registers as VECS 16-byte vectors, every load in flight at once (no staging, nothing
// to wait for), and a bit per key: whether a predicate picks it. The few picked keys
// are read again where they are copied. Used by the selection's band
// (select_band.cuh) and the multi-rank band (multi_rank.cu).
#pragma once
#include "common/tile_io.cuh"
#include "common/types.cuh"

namespace gp {

template <class K, int VECS>
struct KeyRow {
    static constexpr int PER_VEC = 16 / (int)sizeof(K);
    static constexpr int ITEMS = VECS * PER_VEC;
    static_assert(ITEMS <= 64, "a bit per key in a u64");

    // Whether the row from `first` lies whole inside n keys that start on a 16-byte word.
    __device__ __forceinline__ static bool whole(usize n, usize first, bool aligned) {
        return aligned && first + ITEMS <= n;
    }

    __device__ __forceinline__ static void load(const K *in, usize first, Vec16 (&v)[VECS]) {
#pragma unroll
        for (int j = 0; j < VECS; ++j) v[j] = *reinterpret_cast<const Vec16 *>(in + first + j * PER_VEC);
    }

    // The loaded vectors as 32-bit words, in order (for per-lane minima and maxima).
    __device__ __forceinline__ static void words(const Vec16 (&v)[VECS], u32 (&w)[VECS * 4]) {
#pragma unroll
        for (int j = 0; j < VECS * 4; ++j) w[j] = v[j / 4].w[j % 4];
    }

    // The bits of the loaded keys `pick_one` takes (bit e: the row's key e).
    template <class F>
    __device__ __forceinline__ static u64 pick_each(const Vec16 (&v)[VECS], F pick_one) {
        u64 picked = 0;
#pragma unroll
        for (int j = 0; j < VECS; ++j) {
            K x[PER_VEC];
            memcpy(x, &v[j], sizeof(x));
#pragma unroll
            for (int e = 0; e < PER_VEC; ++e) picked |= (u64)pick_one(x[e]) << (j * PER_VEC + e);
        }
        return picked;
    }
};

}  // namespace gp
