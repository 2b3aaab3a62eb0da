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
// into shared memory whole, each thread merges ITEMS outputs from there (a merge path of
// its own within the tile), and the outputs go back out through shared memory in order.
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

constexpr int BLOCK = 256;
constexpr int ITEMS = 8;
constexpr int TILE = BLOCK * ITEMS;

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

// Moves the tile's values: output x takes the value at its key's source.
template <class V>
__device__ __forceinline__ void move_values(const void *values, void *out_values, usize a_from, usize b_from, u32 na_tile,
                                            const u32 (&src)[ITEMS], u32 first, u32 count, usize out_at, V *stage) {
    const V *in = (const V *)values;
#pragma unroll
    for (int j = 0; j < ITEMS; ++j)
        if (first + j < count) stage[first + j] = src[j] < na_tile ? in[a_from + src[j]] : in[b_from + src[j] - na_tile];
    __syncthreads();
    for (u32 x = threadIdx.x; x < count; x += BLOCK) ((V *)out_values)[out_at + x] = stage[x];
}

// Where each tile of the output starts in A: a thread a tile boundary, all at once (a
// search inside the merge's blocks would keep each block's threads idle through some
// thirty dependent reads).
extern "C" __global__ void multi_merge_bounds(const K *keys, usize a_at, usize na, usize b_at, usize nb, u32 key_order,
                                              usize tiles, usize *bounds) {
    gp::wait_for_prior_grids();
    const usize t = (usize)blockIdx.x * blockDim.x + threadIdx.x;
    if (t > tiles) return;
    const KeyOrder order(key_order);
    const usize total = na + nb, diag = t * TILE < total ? t * TILE : total;
    bounds[t] = merge_path(
        diag, na, nb, [&](usize i) { return order.ordered(keys[a_at + i]); },
        [&](usize j) { return order.ordered(keys[b_at + j]); });
}

extern "C" __global__ void __launch_bounds__(BLOCK)
multi_merge(const K *keys, usize a_at, usize na, usize b_at, usize nb, u32 key_order, const void *values, u32 value_bytes,
            K *out, void *out_values, const usize *bounds, usize out_at) {
    gp::wait_for_prior_grids();
    __shared__ K tile_keys[TILE];
    __shared__ u64 stage[TILE];  // the outputs' values on their way out (any width)
    const KeyOrder order(key_order);
    const usize d0 = (usize)blockIdx.x * TILE, total = na + nb;
    const usize d1 = d0 + TILE < total ? d0 + TILE : total;
    const usize i0 = bounds[blockIdx.x], i1 = bounds[blockIdx.x + 1], j0 = d0 - i0, j1 = d1 - i1;
    const u32 na_tile = u32(i1 - i0), count = u32(d1 - d0);
    for (u32 x = threadIdx.x; x < count; x += BLOCK) tile_keys[x] = x < na_tile ? keys[a_at + i0 + x] : keys[b_at + j0 + x - na_tile];
    __syncthreads();

    // This thread's outputs first..first + ITEMS of the tile, and where each came from.
    const u32 first = threadIdx.x * ITEMS;
    const u32 nb_tile = u32(j1 - j0);
    K got[ITEMS];
    u32 src[ITEMS];
    if (first < count) {
        u32 ia = (u32)merge_path(
            first, na_tile, nb_tile, [&](usize i) { return order.ordered(tile_keys[i]); },
            [&](usize j) { return order.ordered(tile_keys[na_tile + j]); });
        u32 ib = first - ia;
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) {
            const bool take_a =
                ia < na_tile && (ib >= nb_tile || order.ordered(tile_keys[ia]) <= order.ordered(tile_keys[na_tile + ib]));
            src[j] = take_a ? ia : na_tile + ib;
            got[j] = tile_keys[src[j]];
            take_a ? ++ia : ++ib;
        }
    }
    __syncthreads();  // every thread has read the tile's keys
#pragma unroll
    for (int j = 0; j < ITEMS; ++j)
        if (first + j < count) tile_keys[first + j] = got[j];
    __syncthreads();
    for (u32 x = threadIdx.x; x < count; x += BLOCK) out[out_at + d0 + x] = tile_keys[x];

    const usize a_from = a_at + i0, b_from = b_at + j0, to = out_at + d0;
    switch (value_bytes) {
        case 1: move_values(values, out_values, a_from, b_from, na_tile, src, first, count, to, (u8 *)stage); break;
        case 2: move_values(values, out_values, a_from, b_from, na_tile, src, first, count, to, (u16 *)stage); break;
        case 4: move_values(values, out_values, a_from, b_from, na_tile, src, first, count, to, (u32 *)stage); break;
        case 8: move_values(values, out_values, a_from, b_from, na_tile, src, first, count, to, (u64 *)stage); break;
        default: break;
    }
}
