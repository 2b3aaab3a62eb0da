// Counting sort of keys alone, 1 or 2 bytes wide (src/backend/cuda/counting_sort.rs
// sends them here instead of the radix sort). Equal integer keys are equal bit
// patterns: the sorted keys follow from how many keys hold each value, and no key has
// to move. In place, and stable trivially. Float keys too, but for their NaNs, which
// sort as one value in input order: those few are gathered apart.
//
//   counting_histogram  one read of the keys: how many hold each value (in its
//                       ordered form, common/radix_key.cuh), and whether they are
//                       already in the wanted order (common/ordered_read.cuh). 2-byte
//                       keys have 65,536 values, more u32 counters than a block's
//                       shared memory holds, so SLICES blocks read each share of the
//                       keys and each counts one slice of the values (the later reads
//                       of a share mostly hit L2);
//   counting_plan       one block: where each value's run starts;
//   counting_nans       float keys only: the NaNs, which count as one value but may
//                       differ in sign and payload, copied in input order to a side
//                       array (common/ordered_compact.cuh), when there are any and the
//                       keys are not in order already;
//   counting_fill       the runs written over the keys, unless they were in order (the
//                       NaNs' run from the side array).
//
// Instantiated by key width and float-ness: -DGP_KEY_BYTES=1|2, -DGP_KEY_FLOAT=0|1
// (2-byte keys: f16 and bf16); -DGP_HIST_BLOCK_THREADS, -DGP_FILL_BLOCK_THREADS,
// -DGP_NAN_BLOCK_THREADS, -DGP_NAN_ITEMS, -DGP_LOOKBACK_WINDOW, -DGP_CONTROL_BYTES (the
// size the host allocates).
#include "common/grid_dependency.cuh"
#include "common/types.cuh"
#include "common/radix_key.cuh"
#include "common/digit_histogram.cuh"
#include "common/ordered_read.cuh"
#include "common/warp.cuh"
#include "common/ops.cuh"
#include "common/tile_io.cuh"
#if GP_KEY_FLOAT
#include "common/ordered_compact.cuh"
#endif

typedef gp::BitsOf<GP_KEY_BYTES>::type K;
typedef gp::KeyOrder<K, GP_KEY_FLOAT != 0> Order;

constexpr int HIST_BLOCK = GP_HIST_BLOCK_THREADS;
constexpr int FILL_BLOCK = GP_FILL_BLOCK_THREADS;
constexpr int KEY_BITS = GP_KEY_BYTES * 8;
constexpr u32 VALUES = 1u << KEY_BITS;
constexpr int SLICE_BITS = KEY_BITS == 16 ? 1 : 0;
constexpr u32 SLICES = 1u << SLICE_BITS;
constexpr u32 SLICE_VALUES = VALUES >> SLICE_BITS;

// The sort's control block in device memory; the host zeroes `unsorted` and `counts`
// (the first 8 * (VALUES + 1) bytes) before each sort.
struct Control {
    u32 unsorted;                       // some neighbours out of the wanted order
    u32 unused;
    unsigned long long nan_ticket;      // float keys: counting_nans' tile counter
    unsigned long long counts[VALUES];  // keys per value (ordered form)
    usize starts[VALUES + 1];           // where each value's run starts; starts[VALUES] = n
};
static_assert(sizeof(Control) <= GP_CONTROL_BYTES, "the host allocates GP_CONTROL_BYTES");
static_assert(sizeof(Control) == 16 * (VALUES + 1) + 8, "the host zeroes the first 8 * (VALUES + 2) bytes");

// Float keys: the value every NaN counts as (their one ordered pattern).
__device__ __forceinline__ K nan_value(const Order &order) { return K(~order.flip); }

// ----------------------------------------------------------------------------------
// Histogram and order check
// ----------------------------------------------------------------------------------

// 2-byte keys: one slice of the values, a plain u32 counter each (random keys spread
// over 32,768 counters, so bank conflicts stay few without interleaved copies).
struct SliceCounter {
    u32 *counts;  // SLICE_VALUES, in dynamic shared memory
    u32 slice;

    __device__ __forceinline__ void clear() {
        for (u32 i = threadIdx.x; i < SLICE_VALUES; i += HIST_BLOCK) counts[i] = 0;
        __syncthreads();
    }
    template <int N>
    __device__ __forceinline__ void add(const K (&ordered)[N]) {
#pragma unroll
        for (int k = 0; k < N; ++k)
            if ((u32(ordered[k]) >> (KEY_BITS - SLICE_BITS)) == slice)
                atomicAdd(&counts[u32(ordered[k]) & (SLICE_VALUES - 1)], 1u);
    }
    __device__ __forceinline__ void flush(unsigned long long *global) {
        __syncthreads();
        for (u32 i = threadIdx.x; i < SLICE_VALUES; i += HIST_BLOCK)
            if (counts[i]) atomicAdd(global + slice * SLICE_VALUES + i, (unsigned long long)counts[i]);
    }
};

extern "C" __global__ void __launch_bounds__(HIST_BLOCK)
counting_histogram(const K *keys, usize n, u32 key_order, Control *ctl) {
    gp::wait_for_prior_grids();
    const Order order(key_order);
    // Blocks SLICES * s .. SLICES * s + SLICES - 1 read share s, each counting its
    // slice of the values; slice 0 checks the order.
    const u32 share = blockIdx.x / SLICES, shares = gridDim.x / SLICES;
    gp::OrderSeen seen;
#if GP_KEY_BYTES == 1
    // 256 values: interleaved copies of the counters (common/digit_histogram.cuh).
    typedef gp::BlockDigitHistogram<HIST_BLOCK, 1, KEY_BITS> Hist;
    __shared__ typename Hist::Storage hist;
    Hist::clear(hist);
    typename Hist::Counter counter{hist};
    gp::read_ordered_keys<HIST_BLOCK>(keys, n, order, share, shares, true, counter, seen);
    Hist::flush(ctl->counts, hist);
#else
    extern __shared__ u32 slice_counts[];
    const u32 slice = blockIdx.x % SLICES;
    SliceCounter counter{slice_counts, slice};
    counter.clear();
    gp::read_ordered_keys<HIST_BLOCK>(keys, n, order, share, shares, slice == 0, counter, seen);
    counter.flush(ctl->counts);
#endif
    const int any_unsorted = __syncthreads_or(seen.unsorted);
    if (threadIdx.x == 0 && any_unsorted) ctl->unsorted = 1;
}

// ----------------------------------------------------------------------------------
// Plan: one block; warp w the starts of a span of SPAN consecutive values, read and
// written a round of 32 at a time (coalesced): first the span's total, then, after the
// warps' totals are known, the starts by a scan of each round
// ----------------------------------------------------------------------------------

constexpr int PLAN_BLOCK = VALUES < 1024 ? VALUES : 1024;
constexpr u32 PLAN_WARPS = PLAN_BLOCK / gp::WARP;
constexpr u32 SPAN = VALUES / PLAN_WARPS;
constexpr u32 ROUNDS = SPAN / gp::WARP;
constexpr u32 BATCH = ROUNDS < 8 ? ROUNDS : 8;  // rounds whose loads are in flight at once
static_assert(ROUNDS % BATCH == 0, "whole batches");

extern "C" __global__ void __launch_bounds__(PLAN_BLOCK) counting_plan(usize n, Control *ctl) {
    gp::wait_for_prior_grids();
    __shared__ usize warp_totals[PLAN_WARPS];
    const u32 lane = threadIdx.x % gp::WARP, warp = threadIdx.x / gp::WARP;
    const unsigned long long *counts = ctl->counts + warp * SPAN + lane;
    usize *starts = ctl->starts + warp * SPAN + lane;
    usize mine = 0;
    for (u32 r0 = 0; r0 < ROUNDS; r0 += BATCH) {
        usize c[BATCH];
#pragma unroll
        for (u32 r = 0; r < BATCH; ++r) c[r] = counts[(r0 + r) * gp::WARP];
#pragma unroll
        for (u32 r = 0; r < BATCH; ++r) mine += c[r];
    }
    const usize total = gp::warp_reduce(mine, gp::SumOp<usize>());
    if (lane == 0) warp_totals[warp] = total;
    __syncthreads();
    usize running = gp::warp_reduce(lane < warp ? warp_totals[lane] : usize(0), gp::SumOp<usize>());
    for (u32 r0 = 0; r0 < ROUNDS; r0 += BATCH) {
        usize c[BATCH];
#pragma unroll
        for (u32 r = 0; r < BATCH; ++r) c[r] = counts[(r0 + r) * gp::WARP];
#pragma unroll
        for (u32 r = 0; r < BATCH; ++r) {
            const usize inclusive = gp::warp_inclusive_scan(c[r], gp::SumOp<usize>());
            starts[(r0 + r) * gp::WARP] = running + inclusive - c[r];
            running += gp::shfl(inclusive, gp::WARP - 1);
        }
    }
    if (threadIdx.x == 0) ctl->starts[VALUES] = n;
}

// ----------------------------------------------------------------------------------
// NaNs of float keys: copied in input order to `nans` (the fill writes them back as
// their run). Nothing to do without NaNs, or when the keys are in order already.
// ----------------------------------------------------------------------------------

#if GP_KEY_FLOAT
typedef gp::OrderedCompact<K, GP_NAN_BLOCK_THREADS, GP_NAN_ITEMS, GP_LOOKBACK_WINDOW> NanCompact;

struct NanPick {
    Order order;
    K *out;
    __device__ __forceinline__ u32 kind(K x) const { return order.is_nan_pattern(order.ordered(x)) ? 1 : 0; }
    __device__ __forceinline__ void emit(K x, usize, u32, u64 before) const { out[gp::CountPairSum::low(before)] = x; }
};

extern "C" __global__ void __launch_bounds__(GP_NAN_BLOCK_THREADS)
counting_nans(const K *keys, usize n, u32 key_order, Control *ctl, K *nans, u64 *aggregate, u64 *inclusive, u32 epoch) {
    gp::wait_for_prior_grids();
    const Order order(key_order);
    if (!ctl->unsorted || ctl->counts[nan_value(order)] == 0) return;
    __shared__ typename NanCompact::Storage storage;
    NanPick pick{order, nans};
    NanCompact::run(keys, n, gp::TileState{aggregate, inclusive, &ctl->nan_ticket}, epoch, pick, storage);
}
#endif

// ----------------------------------------------------------------------------------
// Fill: each warp writes a region of REGION consecutive keys, each lane SUB runs of
// RUN keys in it
// ----------------------------------------------------------------------------------

constexpr u32 RUN = 32;  // keys: 32 or 64 bytes, written as 16-byte vectors
constexpr u32 SUB = 4;
constexpr u32 REGION = SUB * gp::WARP * RUN;
constexpr u32 FILL_WARPS = FILL_BLOCK / gp::WARP;

// The value whose run holds position p: the last v in [lo, hi) with starts[v] <= p,
// given starts[lo] <= p < starts[hi] (a value of no keys shares its start with the
// next one, so the search skips it).
__device__ __forceinline__ u32 value_at(const usize *starts, usize p, u32 lo, u32 hi) {
    while (hi - lo > 1) {
        const u32 mid = (lo + hi) / 2;
        if (starts[mid] <= p) lo = mid;
        else hi = mid;
    }
    return lo;
}

// The key at position p of value v's run: the value itself, or (float keys) the NaN
// gathered for that place.
__device__ __forceinline__ K key_at(const Order &order, u32 v, usize p, const usize *starts, const K *nans) {
    if (GP_KEY_FLOAT && K(v) == nan_value(order)) return nans[p - starts[v]];
    return order.raw(K(v));
}

extern "C" __global__ void __launch_bounds__(FILL_BLOCK)
counting_fill(K *keys, usize n, u32 key_order, const Control *ctl, const K *nans) {
    gp::wait_for_prior_grids();
    if (!ctl->unsorted) return;  // already in order: nothing to write
    const Order order(key_order);
    const usize *starts = ctl->starts;  // starts[VALUES] = n
    const bool vectors = gp::aligned16(keys);
    const u32 lane = threadIdx.x % gp::WARP;
    const usize regions = (n + REGION - 1) / REGION;
    for (usize region = (usize)blockIdx.x * FILL_WARPS + threadIdx.x / gp::WARP; region < regions;
         region += (usize)gridDim.x * FILL_WARPS) {
        // The region's values lie in [lo, hi): two searches a warp (same addresses in
        // every lane), then each lane's searches are short.
        const usize base = region * REGION, last = (base + REGION < n ? base + REGION : n) - 1;
        const u32 lo = value_at(starts, base, 0, VALUES);
        const u32 hi = value_at(starts, last, lo, VALUES) + 1;
#pragma unroll 1
        for (u32 sub = 0; sub < SUB; ++sub) {
            const usize first = base + (sub * gp::WARP + lane) * RUN;
            if (first >= n) break;
            u32 v = value_at(starts, first, lo, hi);
            usize run_end = starts[v + 1];
            constexpr u32 PER_WORD = 4 / sizeof(K);
            // Most lanes' keys lie inside one value's run (runs are long wherever the
            // fill has much to write): its pattern in every slot of every word, no
            // work a key (the loop below made the fill compute-bound).
            if (vectors && first + RUN <= run_end && !(GP_KEY_FLOAT && K(v) == nan_value(order))) {
                const u32 word = u32(order.raw(K(v))) * (sizeof(K) == 1 ? 0x01010101u : 0x00010001u);
#pragma unroll
                for (u32 q = 0; q < RUN / PER_WORD / 4; ++q)
                    gp::store_vec16_streaming(keys + first + q * 4 * PER_WORD, gp::Vec16{{word, word, word, word}});
                continue;
            }
            // The run's keys packed into 32-bit words, as they lie in memory.
            u32 words[RUN / PER_WORD];
#pragma unroll
            for (u32 k = 0; k < RUN; ++k) {
                if (first + k >= run_end && first + k < n) {
                    v = value_at(starts, first + k, v + 1, hi);
                    run_end = starts[v + 1];
                }
                const K key = first + k < n ? key_at(order, v, first + k, starts, nans) : K(0);  // past n: unwritten
                const u32 bits = u32(key) << (8 * sizeof(K) * (k % PER_WORD));
                words[k / PER_WORD] = k % PER_WORD == 0 ? bits : words[k / PER_WORD] | bits;
            }
            if (vectors && first + RUN <= n) {
#pragma unroll
                for (u32 q = 0; q < RUN / PER_WORD / 4; ++q)
                    gp::store_vec16_streaming(keys + first + q * 4 * PER_WORD,
                                              gp::Vec16{{words[4 * q], words[4 * q + 1], words[4 * q + 2], words[4 * q + 3]}});
            } else {
#pragma unroll
                for (u32 k = 0; k < RUN; ++k)
                    if (first + k < n) keys[first + k] = K(words[k / PER_WORD] >> (8 * sizeof(K) * (k % PER_WORD)));
            }
        }
    }
}
