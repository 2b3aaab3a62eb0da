// One read of every key, in its ordered form, for the sorts' first pass: each lane's
// keys go to a counting function, and the neighbours are compared on the way, so the
// sort learns whether the keys are already in the wanted order (and whether they are
// in exactly the opposite order, no two equal) from the same read.
//
// Keys are read in 16-byte vectors where they are 16-byte aligned, UNROLL vectors a
// thread at a time, every load in flight before any counting. Loops run whole warps
// (their bounds are the warp's first lane's), so a lane hears the next lane's first
// key; a lane past the end counts nothing.
//
// With -DGP_ORDER_CHECK_EARLY_OUT=1 a warp stops comparing neighbours once its lanes
// together have seen both an unsorted pair and a not-reversed one: nothing it could
// see later changes the verdict, and random keys settle it on their first vectors.
#pragma once
#ifndef GP_ORDER_CHECK_EARLY_OUT
#define GP_ORDER_CHECK_EARLY_OUT 0
#endif
#include "common/input_order.cuh"
#include "common/tile_io.cuh"
#include "common/warp.cuh"

namespace gp {

// Block `part` of `parts` reads its share of keys[0, n) (grid-strided over the parts,
// BLOCK threads each). `counter.add(x)` takes an array of ordered keys: a whole
// vector's, or one (a member template, not a generic lambda: NVRTC compiles those as
// host code). With `check` false, the neighbours are not compared (a block whose keys
// another block also reads and checks).
template <int BLOCK, class K, class KeyOrder, class Counter>
__device__ __forceinline__ void read_ordered_keys(const K *keys, usize n, const KeyOrder &order, u32 part, u32 parts,
                                                  bool check, Counter &counter, OrderSeen &seen) {
    constexpr int PER_VEC = 16 / sizeof(K);
    constexpr int UNROLL = 4;
    const usize stride = (usize)parts * BLOCK;
    const u32 lane = threadIdx.x % WARP;
    const usize warp_first = (usize)part * BLOCK + (threadIdx.x - lane);
    usize scalar_from = 0;
    if (aligned16(keys)) {
        const usize vecs = n / PER_VEC;
        for (usize w0 = warp_first; w0 < vecs; w0 += UNROLL * stride) {
            // (The loop runs whole warps, so the votes see every lane.)
            if (GP_ORDER_CHECK_EARLY_OUT && check && __any_sync(FULL_MASK, seen.unsorted) &&
                __any_sync(FULL_MASK, seen.not_reversed))
                check = false;
            Vec16 raw[UNROLL];
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) {
                const usize v = w0 + lane + u * stride;
                if (v < vecs) raw[u] = load_vec16_streaming(keys + v * PER_VEC);
            }
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) {
                const usize v = w0 + lane + u * stride;
                K x[PER_VEC];
                memcpy(x, &raw[u], sizeof(x));
#pragma unroll
                for (int k = 0; k < PER_VEC; ++k) x[k] = order.ordered(x[k]);
                // The key after this vector is the next lane's first, except past the
                // warp's last lane or the last whole vector.
                const K after = __shfl_down_sync(FULL_MASK, x[0], 1);
                if (v < vecs) {
                    counter.add(x);
                    if (check) {
#pragma unroll
                        for (int k = 0; k + 1 < PER_VEC; ++k) seen.neighbours(x[k], x[k + 1]);
                        const usize next = (v + 1) * PER_VEC;
                        if (lane + 1 < WARP && v + 1 < vecs) seen.neighbours(x[PER_VEC - 1], after);
                        else if (next < n) seen.neighbours(x[PER_VEC - 1], order.ordered(keys[next]));
                    }
                }
            }
        }
        scalar_from = vecs * PER_VEC;
    }
    // The tail after the last whole vector, or everything when the keys are not
    // 16-byte aligned (a wrapped pointer).
    for (usize i = scalar_from + (usize)part * BLOCK + threadIdx.x; i < n; i += stride) {
        const K m[1] = {order.ordered(keys[i])};
        counter.add(m);
        if (check && i + 1 < n) seen.neighbours(m[0], order.ordered(keys[i + 1]));
    }
}

}  // namespace gp
