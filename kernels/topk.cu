// Top-k after kernels/select.cu has found the k-th key (its launches: pivots, band,
// settle, digit passes; the band notes each tile's run of candidates and its last block
// where each band block's candidates start in input order):
//   select_move_runs    the candidates moved to their places, with their indices;
//   select_topk_gather  one ordered pass over the candidates (or the input, when the
//                       band did not hold the k-th): the keys below the k-th and its
//                       first ties (lowest indices), written in input order
//                       (common/ordered_compact.cuh);
//   select_sort_small   up to BLOCK * 8 of them sorted stably by one block
//                       (common/block_radix_sort.cuh); more go to the radix sort;
//   select_sort_rank    up to BLOCK of them, the same by counting;
//   select_topk_iota    the indices 0 .. n-1 (u32), for a top-k that sorts the whole
//   select_topk_widen   input instead, and the first k of them sorted, as u64
//                       (src/backend/cuda/topk_by_sort.rs).
// A module of its own, so select_kth's first call compiles only what it runs.
#include "common/grid_dependency.cuh"
#include "select_state.cuh"
#include "common/block_radix_sort.cuh"
#include "common/ordered_compact.cuh"
#include "common/stable_rank.cuh"

typedef gp::OrderedCompact<U, BLOCK, ITEMS, WINDOW> Compact;

// Top-k needs the candidates in input order (ties go by index). The band noted each
// tile's run (where it was reserved low, the band block's candidates before it high)
// and, in runs[tiles + b], where band block b's candidates start in input order; its
// blocks took contiguous shares of the tiles, so tile t was band block b's for the
// largest b with b tiles / blocks <= t.
__device__ __forceinline__ u64 ordered_start(const u64 *runs, usize tiles, u32 band_blocks, usize t) {
    const usize b = ((t + 1) * band_blocks - 1) / tiles;
    return runs[tiles + b] + (runs[t] >> 32);
}

// Moves each tile's run from where it was reserved to its place in input order. A warp
// takes `group` (1 to 32) tiles at once, a lane a tile: each lane works out its tile's
// run (where it was reserved, where it goes; its count is the gap to the next run's
// place, or the total), then the warp copies the runs as one span, lane i the elements
// i, i + 32, ... of it, each finding its run by a search over the lanes' prefix. Where
// runs are short (a few candidates a tile: top-k of a large input, small k) the host
// groups several tiles (select/rank.rs: move_group), so a tile's index reads are shared
// with the group's others and every round of copies has 32 loads in flight (with a warp
// a tile, the index reads came one after another, most of them for an empty or
// one-element run); where they are long, one, so that the copies are spread over more
// warps.
extern "C" __global__ void __launch_bounds__(BLOCK)
select_move_runs(const SelectState *st, const u64 *runs, usize tiles, u32 band_blocks, usize capacity, const U *cand,
                 const u64 *cand_index, U *ordered, u64 *ordered_index, u32 group) {
    gp::wait_for_prior_grids();
    const u64 total = st->between;
    if (total > capacity) return;  // settle falls back to the input
    const u32 lane = threadIdx.x % gp::WARP;
    group = group < 1 ? 1 : group > gp::WARP ? gp::WARP : group;
    const usize warps = (usize)gridDim.x * (BLOCK / gp::WARP);
    for (usize t0 = ((usize)blockIdx.x * (BLOCK / gp::WARP) + threadIdx.x / gp::WARP) * group; t0 < tiles;
         t0 += warps * group) {
        const usize t = t0 + lane;
        u64 from = 0, to = 0, count = 0;
        if (lane < group && t < tiles) {
            from = runs[t] & 0xffffffffull;
            to = ordered_start(runs, tiles, band_blocks, t);
            count = (t + 1 < tiles ? ordered_start(runs, tiles, band_blocks, t + 1) : total) - to;
        }
        const u64 end = gp::warp_inclusive_scan(count, gp::SumOp<u64>());  // the span's end of lane's run
        const u64 span = gp::shfl(end, gp::WARP - 1);
        for (u64 base = 0; base < span; base += gp::WARP) {  // every lane in every round: the shuffles
            const u64 i = base + lane;
            // The run holding element i of the span: the first lane whose end exceeds i
            // (lane 0's where the warp takes one tile: no search).
            int r = 0;
            if (group > 1) {
#pragma unroll
                for (int step = gp::WARP / 2; step > 0; step /= 2)
                    if (gp::shfl(end, r + step - 1) <= i) r += step;
            }
            const u64 within = i - (gp::shfl(end, r) - gp::shfl(count, r));
            const u64 src = gp::shfl(from, r) + within, dst = gp::shfl(to, r) + within;
            if (i < span) {
                ordered[dst] = cand[src];
                if (ordered_index) ordered_index[dst] = cand_index[src];
            }
        }
    }
}

// The gather's pick: keys below the k-th are kind 1, its ties kind 2; a tie is kept
// while fewer than `need` ties came before it.
struct GatherPick {
    KeyOrder order;
    U kth;
    u64 need;
    const u64 *index;  // the candidates' input indices; NULL: the source is the input
    U *out;
    u64 *out_index;

    __device__ __forceinline__ u32 kind(U x) const {
        const U u = order.ordered(x);
        return u < kth ? 1 : u == kth ? 2 : 0;
    }
    __device__ __forceinline__ void emit(U x, usize i, u32 kind, u64 before) const {
        const u64 lt = gp::CountPairSum::low(before), eq = gp::CountPairSum::high(before);
        if (kind == 2 && eq >= need) return;
        const u64 at = lt + (eq < need ? eq : need);
        out[at] = x;
        if (out_index) out_index[at] = index ? index[i] : i;
    }
};

extern "C" __global__ void __launch_bounds__(BLOCK)
select_topk_gather(const U *in, usize n, SelectState *st, const U *cand, const u64 *cand_index, u64 k, U *out,
                   u64 *out_index, u32 key_order, u64 *aggregate, u64 *inclusive, u32 epoch) {
    gp::wait_for_prior_grids();
    __shared__ typename Compact::Storage storage;
    const bool from_candidates = st->gather_source == SOURCE_CANDIDATES;
    GatherPick pick{KeyOrder(key_order), U(st->prefix), k - st->less, from_candidates ? cand_index : nullptr, out, out_index};
    Compact::run(from_candidates ? cand : in, from_candidates ? st->between : n,
                 gp::TileState{aggregate, inclusive, &st->gather_ticket}, epoch, pick, storage);
}

// select_sort_small's work for n <= BLOCK keys, by counting (common/stable_rank.cuh):
// each thread takes one key and counts the keys that go before it (smaller, or equal at
// a lower position, so ties keep index order as the stable sort's do). At most BLOCK
// reads of shared memory a thread and one barrier, where the block radix sort runs its
// digit passes with a dozen barriers: top-k k = 100 of 2^28 spent 11 us under ncu in
// that sort. Each element is read before any is written.
extern "C" __global__ void __launch_bounds__(BLOCK)
select_sort_rank(const U *src, const u64 *src_index, u32 n, U *values, u64 *indices, u32 k, u32 key_order) {
    gp::wait_for_prior_grids();
    __shared__ U keys[BLOCK];
    const KeyOrder order(key_order);
    const u32 i = threadIdx.x;
    U x = U(0), key = U(~U(0));
    u64 ix = 0;
    if (i < n) {
        x = src[i];
        key = order.ordered(x);
        if (indices) ix = src_index ? src_index[i] : i;
    }
    keys[i] = key;
    __syncthreads();  // every element read, every key shared
    const u32 rank = gp::stable_rank(keys, n, key, i);
    if (i < n && rank < k) {
        values[rank] = x;
        if (indices) indices[rank] = ix;
    }
}

// One block sorts the first n (<= BLOCK * SMALL_ITEMS) keys of `src` stably (ties keep
// index order) and writes the first k with their indices: `src_index`'s entries, or
// (NULL) their positions in `src`. Top-k's last step when k is small (the k gathered
// keys, sorted in place), and the whole of top-k when the input is that small. Each
// element is read before any is written.
constexpr int SMALL_ITEMS = 8;  // src/backend/cuda/select.rs: SMALL_ITEMS

extern "C" __global__ void __launch_bounds__(BLOCK)
select_sort_small(const U *src, const u64 *src_index, u32 n, U *values, u64 *indices, u32 k, u32 key_order) {
    gp::wait_for_prior_grids();
    typedef gp::BlockRadixSort<U, BLOCK, SMALL_ITEMS> Sort;
    __shared__ typename Sort::Storage storage;
    const KeyOrder order(key_order);
    U keys[SMALL_ITEMS];
#pragma unroll
    for (int j = 0; j < SMALL_ITEMS; ++j) {
        const u32 e = Sort::element(j);
        keys[j] = e < n ? order.ordered(src[e]) : U(~U(0));
    }
    Sort::sort(keys, n, storage);
    U v[SMALL_ITEMS];
    u64 ix[SMALL_ITEMS];
#pragma unroll
    for (int j = 0; j < SMALL_ITEMS; ++j) {
        const u32 i = threadIdx.x + j * BLOCK;
        if (i < k) {
            const u32 e = storage.from[i];
            v[j] = src[e];
            if (indices) ix[j] = src_index ? src_index[e] : e;
        }
    }
    __syncthreads();  // every element read before any is overwritten
#pragma unroll
    for (int j = 0; j < SMALL_ITEMS; ++j) {
        const u32 i = threadIdx.x + j * BLOCK;
        if (i < k) {
            values[i] = v[j];
            if (indices) indices[i] = ix[j];
        }
    }
}

// The indices 0 .. n-1 (n < 2^32), for a top-k that sorts a copy of the whole input
// with them: 4 bytes each, so that 4-byte keys sort with them as packed pairs.
// (It waits for the grids ahead: its memory was just allocated in stream order, and may
// have been theirs.)
extern "C" __global__ void __launch_bounds__(BLOCK) select_topk_iota(u32 *index, usize n) {
    gp::wait_for_prior_grids();
    gp::let_next_grid_start();
    for (usize i = (usize)blockIdx.x * BLOCK + threadIdx.x; i < n; i += (usize)gridDim.x * BLOCK) index[i] = (u32)i;
}

// The first k of those indices, once sorted, widened into the caller's u64 indices.
extern "C" __global__ void __launch_bounds__(BLOCK) select_topk_widen(const u32 *index, usize k, u64 *out) {
    gp::wait_for_prior_grids();
    gp::let_next_grid_start();
    for (usize i = (usize)blockIdx.x * BLOCK + threadIdx.x; i < k; i += (usize)gridDim.x * BLOCK) out[i] = index[i];
}
