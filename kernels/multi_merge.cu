// Stable merge of two sorted runs, for the multi-rank sort: after the exchange a rank
// holds one sorted run from each rank, in rank order, and merging them (pairwise, log2
// of the rank count passes) costs one read and one write of each key where sorting them
// again would cost a whole radix sort.
//
// multi_merge: run A (keys[a_at .. a_at + na)) before run B (keys[b_at .. b_at + nb)) on
// equal keys, into out[out_at .. out_at + na + nb) (the runs as received may lie apart:
// each starts where its sender's part lay in a 16-byte word). A block takes
// a tile of the output: multi_merge_bounds has found where each tile starts in A and B
// by merge path (a binary search along the tile's diagonal), the block loads those keys
// into shared memory whole (ITEMS loads a thread in flight), each thread finds where
// ITEMS outputs come from (a merge path of its own within the tile) and notes it in
// shared memory, and the block writes the outputs in order from there.
// Values (0, 1, 2, 4 or 8 bytes, a run-time choice) follow their keys: each output reads
// its value from where its key came from.
//
// Instantiated per key width: -DGP_KEY_BYTES=1|2|4|8 -DGP_KEY_FLOAT=0|1; kind and
// direction arrive at run time (common/radix_key.cuh).
#include "common/grid_dependency.cuh"
#include "common/types.cuh"
#include "common/radix_key.cuh"

typedef gp::BitsOf<GP_KEY_BYTES>::type K;
typedef gp::KeyOrder<K, GP_KEY_FLOAT> KeyOrder;

// Threads a block and outputs a thread, from src/backend/cuda/multi_merge.rs, which
// launches by the same (scripts/probes/merge-rate.cu builds other shapes to compare):
// multi_merge (with values) -DGP_MERGE_BLOCK x -DGP_MERGE_ITEMS, multi_merge_keys (keys
// alone) -DGP_MERGE_KEYS_BLOCK x -DGP_MERGE_KEYS_ITEMS, built for
// -DGP_MERGE_KEYS_MIN_BLOCKS blocks an SM, which caps its registers. Keys alone merge
// fastest in longer rows a thread, pairs in shorter (H200, 2 x 2^28 u32: keys 2.24 ms at
// 256 x 8, 1.60 at 128 x 24 in 64 registers, 1.68 in 72, 2.30 in 124; pairs 3.00 at
// 256 x 8, 4.12 at 128 x 24).
#ifndef GP_MERGE_KEYS_BLOCK
#define GP_MERGE_KEYS_BLOCK GP_MERGE_BLOCK
#define GP_MERGE_KEYS_ITEMS GP_MERGE_ITEMS
#endif
#ifndef GP_MERGE_KEYS_MIN_BLOCKS
#define GP_MERGE_KEYS_MIN_BLOCKS 1
#endif

// How many of the first `diag` outputs come from A: A's element goes first when it is
// not greater than B's (A before B on ties).
template <class KeyA, class KeyB>
__device__ __forceinline__ usize merge_path(usize diag, usize na, usize nb, KeyA a, KeyB b) {
    usize lo = diag > nb ? diag - nb : 0, hi = diag < na ? diag : na;
    while (lo < hi) {
        const usize mid = lo + (hi - lo) / 2;
        if (a(mid) <= b(diag - 1 - mid)) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

// The tile's keys into shared memory, A's part then B's: ITEMS loads a thread in
// flight (a loop of one load at a time left the merge near 40% of the copy rate).
template <int BLOCK, int ITEMS>
__device__ __forceinline__ void load_tile(K *tile, const K *a, u32 na_tile, const K *b, u32 count) {
    K v[ITEMS];
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
        const u32 x = threadIdx.x + j * BLOCK;
        if (x < count) v[j] = x < na_tile ? a[x] : b[x - na_tile];
    }
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
        const u32 x = threadIdx.x + j * BLOCK;
        if (x < count) tile[x] = v[j];
    }
}

// Where each of this thread's outputs first .. first + ITEMS of the tile comes from (a
// tile position: A's part, then B's), by a merge path of its own within the tile. The
// keys at the two fronts stay in registers, one shared read an output.
template <int ITEMS>
__device__ __forceinline__ void merge_sources(const K *tile, u32 na_tile, u32 nb_tile, u32 first, const KeyOrder &order,
                                              u32 (&src)[ITEMS]) {
    u32 ia = (u32)merge_path(
        first, na_tile, nb_tile, [&](usize i) { return order.ordered(tile[i]); },
        [&](usize j) { return order.ordered(tile[na_tile + j]); });
    u32 ib = first - ia;
    K ka = ia < na_tile ? order.ordered(tile[ia]) : K(0), kb = ib < nb_tile ? order.ordered(tile[na_tile + ib]) : K(0);
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
        const bool take_a = ia < na_tile && (ib >= nb_tile || ka <= kb);
        src[j] = take_a ? ia : na_tile + ib;
        if (take_a) {
            if (++ia < na_tile) ka = order.ordered(tile[ia]);
        } else if (++ib < nb_tile) {
            kb = order.ordered(tile[na_tile + ib]);
        }
    }
}

// The tile's outputs in order (thread x, x + BLOCK, ...: coalesced), each key from the
// tile and its value (V, when HAS_VALUES) from where the key came from: A's values
// start at `a_values`, B's at `b_values`.
template <int BLOCK, int ITEMS, class V, bool HAS_VALUES = true>
__device__ __forceinline__ void write_tile(const K *tile, const u32 *from, u32 count, u32 na_tile, K *out,
                                           const void *a_values, const void *b_values, void *out_values) {
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
        const u32 x = threadIdx.x + j * BLOCK;
        if (x < count) {
            const u32 s = from[x];
            out[x] = tile[s];
            if constexpr (HAS_VALUES)
                ((V *)out_values)[x] = s < na_tile ? ((const V *)a_values)[s] : ((const V *)b_values)[s - na_tile];
        }
    }
}

// Where each tile of the output starts in A: a thread a tile boundary, all at once (a
// search inside the merge's blocks would keep each block's threads idle through some
// thirty dependent reads).
extern "C" __global__ void multi_merge_bounds(const K *keys, usize a_at, usize na, usize b_at, usize nb, u32 key_order,
                                              usize tiles, usize *bounds, u32 tile) {
    gp::wait_for_prior_grids();
    const usize t = (usize)blockIdx.x * blockDim.x + threadIdx.x;
    if (t > tiles) return;
    const KeyOrder order(key_order);
    const usize total = na + nb, diag = t * tile < total ? t * tile : total;
    bounds[t] = merge_path(
        diag, na, nb, [&](usize i) { return order.ordered(keys[a_at + i]); },
        [&](usize j) { return order.ordered(keys[b_at + j]); });
}

// One tile of the output (see the top of the file); the kernels below give the shape.
template <int BLOCK, int ITEMS>
__device__ __forceinline__ void merge_tile(const K *keys, usize a_at, usize na, usize b_at, usize nb, u32 key_order,
                                           const void *values, u32 value_bytes, K *out, void *out_values,
                                           const usize *bounds, usize out_at) {
    constexpr int TILE = BLOCK * ITEMS;
    __shared__ K tile[TILE];
    __shared__ __align__(16) u32 from[TILE];  // output x of the tile comes from tile[from[x]]
    const KeyOrder order(key_order);
    const usize d0 = (usize)blockIdx.x * TILE, total = na + nb;
    const usize d1 = d0 + TILE < total ? d0 + TILE : total;
    const usize i0 = bounds[blockIdx.x], i1 = bounds[blockIdx.x + 1], j0 = d0 - i0, j1 = d1 - i1;
    const u32 na_tile = u32(i1 - i0), nb_tile = u32(j1 - j0), count = u32(d1 - d0);
    load_tile<BLOCK, ITEMS>(tile, keys + a_at + i0, na_tile, keys + b_at + j0, count);
    __syncthreads();

    const u32 first = threadIdx.x * ITEMS;
    if (first < count) {
        u32 src[ITEMS];
        merge_sources(tile, na_tile, nb_tile, first, order, src);
        static_assert(ITEMS % 4 == 0, "sources leave as 16-byte vectors");
#pragma unroll
        for (int j = 0; j < ITEMS; j += 4)  // (past `count` within the tile: never read)
            *reinterpret_cast<uint4 *>(from + first + j) = make_uint4(src[j], src[j + 1], src[j + 2], src[j + 3]);
    }
    __syncthreads();

    // Values: the byte addresses of A's, B's and the output's first of the tile.
    const auto at = [&](const void *base, usize i) { return (const char *)base + i * value_bytes; };
    const void *a_values = at(values, a_at + i0), *b_values = at(values, b_at + j0);
    void *to_values = (void *)at(out_values, out_at + d0);
    K *to = out + out_at + d0;
    switch (value_bytes) {
        case 1: write_tile<BLOCK, ITEMS, u8>(tile, from, count, na_tile, to, a_values, b_values, to_values); break;
        case 2: write_tile<BLOCK, ITEMS, u16>(tile, from, count, na_tile, to, a_values, b_values, to_values); break;
        case 4: write_tile<BLOCK, ITEMS, u32>(tile, from, count, na_tile, to, a_values, b_values, to_values); break;
        case 8: write_tile<BLOCK, ITEMS, u64>(tile, from, count, na_tile, to, a_values, b_values, to_values); break;
        default: write_tile<BLOCK, ITEMS, u8, false>(tile, from, count, na_tile, to, a_values, b_values, to_values); break;
    }
}

extern "C" __global__ void __launch_bounds__(GP_MERGE_BLOCK)
multi_merge(const K *keys, usize a_at, usize na, usize b_at, usize nb, u32 key_order, const void *values, u32 value_bytes,
            K *out, void *out_values, const usize *bounds, usize out_at) {
    gp::wait_for_prior_grids();
    merge_tile<GP_MERGE_BLOCK, GP_MERGE_ITEMS>(keys, a_at, na, b_at, nb, key_order, values, value_bytes, out, out_values,
                                               bounds, out_at);
}

// Keys alone (value_bytes 0), in the keys' own shape: 4-byte keys only, the width
// measured (src/backend/cuda/multi_merge.rs launches it for them alone).
#if GP_KEY_BYTES == 4
extern "C" __global__ void __launch_bounds__(GP_MERGE_KEYS_BLOCK, GP_MERGE_KEYS_MIN_BLOCKS)
multi_merge_keys(const K *keys, usize a_at, usize na, usize b_at, usize nb, u32 key_order, const void *values,
                 u32 value_bytes, K *out, void *out_values, const usize *bounds, usize out_at) {
    gp::wait_for_prior_grids();
    merge_tile<GP_MERGE_KEYS_BLOCK, GP_MERGE_KEYS_ITEMS>(keys, a_at, na, b_at, nb, key_order, nullptr, 0, out, nullptr,
                                                         bounds, out_at);
}
#endif
