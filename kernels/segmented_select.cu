// Per-row selection over ragged rows (gpuprims_segmented_select): for each row
// [offsets[r], offsets[r + 1]) of `values`, its key of rank ks[r] (or the lower median).
//
//   segsel_check    one thread a row: checks the row (offsets decreasing, past the end
//                   of the buffer, an empty row, a rank past the row) and keeps the
//                   first bad row (the lowest index) in the device counters.
//   segsel_short    one warp a row, every row, launched right behind the check (no
//                   wait between): with no bad row, it selects the rows up to WARP *
//                   WARP_ITEMS keys (keys in registers; common/warp_bitwise_select.cuh
//                   for narrow keys, common/warp_radix_select.cuh for wide ones) and
//                   files the longer ones under their length class (one shared atomic
//                   a row, one global atomic a block and class); with a bad row it
//                   touches nothing. The last block to finish writes the class counts
//                   and the fault to the host's mapped report and leaves the counters
//                   zeroed for the next call. The host reads the report (the call's
//                   one wait), fails the call on a bad row, and otherwise launches
//                   each class of long rows, exactly sized from its count
//                   (segmented_select_long.cu, a module of its own).
//
// Keys are compared as ordered patterns (common/radix_key.cuh), so one module serves
// every dtype of a width; the answer is the pattern turned back into the key (every NaN
// comes back as the canonical quiet NaN). The offsets (u32 or u64) and ranks (u32, u64
// or none) are read through run-time flags (segmented_select_rows.cuh); the selection
// kernels clamp each row to the buffer, so they never read outside it whatever the
// offsets say.
//
// Instantiated per key width and float-ness: -DGP_KEY_BYTES -DGP_KEY_FLOAT and the
// tuning defines below (src/backend/cuda/segmented_select.rs).
#include "segmented_select_rows.cuh"
#include "common/warp_radix_select.cuh"
#include "common/warp_bitwise_select.cuh"

constexpr int CHECK_BLOCK = GP_CHECK_BLOCK;
constexpr int WARP_BLOCK = GP_WARP_BLOCK;
// Short rows are many and each is a few dependent steps: keys up to 4 bytes fit 32
// registers, so a full SM's worth of warps can be resident (wider keys would spill).
constexpr int WARP_MIN_BLOCKS = GP_KEY_BYTES <= 4 ? 2048 / WARP_BLOCK : 1;

// What is wrong with a row (the report's `fault`; 0: nothing). The order is the order
// in which a row is checked.
constexpr u32 FAULT_DECREASING = 1;
constexpr u32 FAULT_PAST_END = 2;
constexpr u32 FAULT_EMPTY = 3;
constexpr u32 FAULT_RANK = 4;

// Device counters, zero before a call and left zero after its short-row launch.
struct Counters {
    u32 counts[CLASSES];
    u64 fault;   // max over bad rows of ~(row << 3 | fault): the lowest row wins
    u32 ticket;  // blocks done
};

// What the last block writes to the host's mapped memory, numbered by the call, which
// src/backend/cuda/segmented_select.rs checks after the stream has finished (it reads
// the same layout).
struct Report {
    u32 counts[CLASSES];
    u64 row;               // the first bad row
    u64 begin, end, rank;  // its offsets and rank
    u32 fault;
    u32 seq;
};

__device__ __forceinline__ u32 length_class(u64 n) {
    return n <= WARP_MAX ? CLASS_WARP
           : n <= MID_MAX ? CLASS_MID
           : n <= WIDE_MAX ? CLASS_WIDE
           : n <= WIDER_MAX ? CLASS_WIDER
                            : CLASS_LONG;
}

// The last block: publishes the counts and the first fault, then zeroes the counters.
__device__ __forceinline__ void publish(const Rows &rows, Counters *ctr, Report *report, u32 seq) {
    volatile Counters *c = ctr;
    volatile Report *r = report;
    const u64 fault = ~c->fault;  // all ones: no fault
    for (u32 k = 0; k < CLASSES; ++k) {
        r->counts[k] = c->counts[k];
        c->counts[k] = 0;
    }
    c->fault = 0;
    c->ticket = 0;
    if (fault != ~0ull) {
        const u64 row = fault >> 3, begin = rows.offset(row), end = rows.offset(row + 1);
        r->row = row;
        r->begin = begin;
        r->end = end;
        r->rank = (u32)(fault & 7) == FAULT_RANK ? rows.rank(row, end - begin) : 0;
        r->fault = (u32)(fault & 7);
    } else {
        r->fault = 0;
    }
    // No system fence: the host reads the report once the stream has finished, which
    // orders every write of the launch before it.
    r->seq = seq;
}

// One thread a row: checks it (offsets decreasing, past the end of the buffer, an empty
// row, a rank past the row) and keeps the first bad row (the lowest index) in the
// counters, for segsel_short to read before it touches anything.
extern "C" __global__ void __launch_bounds__(CHECK_BLOCK)
segsel_check(const void *offsets, const void *ranks, u32 flags, u64 nrows, u64 len, Counters *ctr) {
    const Rows rows{offsets, ranks, flags};
    const u64 row = (u64)blockIdx.x * CHECK_BLOCK + threadIdx.x;
    if (row >= nrows) return;
    const u64 begin = rows.offset(row), end = rows.offset(row + 1);
    u32 fault = 0;
    if (end < begin) fault = FAULT_DECREASING;
    else if (end > len) fault = FAULT_PAST_END;
    else if (end == begin) fault = FAULT_EMPTY;
    else if (rows.rank(row, end - begin) >= end - begin) fault = FAULT_RANK;
    if (fault) atomicMax((unsigned long long *)&ctr->fault, ~(row << 3 | fault));
}

// The short rows' selection: bit by bit through warp sums (narrow keys: a few steps,
// no shared memory) or digit by digit through a shared histogram (wide keys, which
// mostly stop after a digit or two).
#if GP_WARP_BITWISE
typedef gp::WarpBitwiseSelect<U, WARP_ITEMS, GP_STEP_BITS> ShortSelect;
struct ShortStorage {};
constexpr U MISSING = U(~U(0));  // the largest pattern, below no candidate
__device__ __forceinline__ U short_select(const U (&keys)[WARP_ITEMS], u32 n, u32 rank, ShortStorage &) {
    return ShortSelect::select(keys, n, rank);
}
#else
typedef gp::WarpRadixSelect<U, WARP_ITEMS, RADIX_BITS> ShortSelect;
typedef ShortSelect::Storage ShortStorage;
constexpr U MISSING = U(0);  // ignored: past the count
__device__ __forceinline__ U short_select(const U (&keys)[WARP_ITEMS], u32 n, u32 rank, ShortStorage &s) {
    return ShortSelect::select(keys, n, rank, s);
}
#endif

// One warp a row, every row of the call, after segsel_check on the stream. When the
// check found no bad row, a warp selects its row if it is short (up to WARP_MAX keys,
// held in registers) and otherwise files it under its length class (row_ids holds
// CLASSES lists of `nrows` entries; class c's rows go to list c). When it found one,
// nothing is read but the offsets' check result and nothing written but the counters
// and the report, so `out` stays untouched. The last block to finish writes the class
// counts and the first bad row to the host's mapped report and leaves the counters
// zeroed for the next call.
extern "C" __global__ void __launch_bounds__(WARP_BLOCK, WARP_MIN_BLOCKS)
segsel_short(const U *values, u64 len, const void *offsets, const void *ranks, u32 flags, u64 nrows, Counters *ctr,
             u32 *row_ids, Report *report, u32 seq, U *out, u32 key_order) {
    constexpr int WARPS = WARP_BLOCK / gp::WARP;
    __shared__ ShortStorage storage[WARPS];
    __shared__ u32 block_counts[CLASSES], block_base[CLASSES];
    __shared__ bool last;
    const Rows rows{offsets, ranks, flags};
    const u32 warp = threadIdx.x / gp::WARP, lane = threadIdx.x % gp::WARP;
    const u64 row = (u64)blockIdx.x * WARPS + warp;
    // The check's verdict is final: it ran to its end before this launch.
    const bool clean = *(volatile u64 *)&ctr->fault == 0;
    if (threadIdx.x < CLASSES) block_counts[threadIdx.x] = 0;
    __syncthreads();
    u32 cls = CLASSES, place = 0;  // none
    if (clean && row < nrows) {
        const Row r = row_at(rows, row, len);
        const u64 n = r.end - r.begin;  // > 0, with r.rank < n, after a clean check
        if (n <= WARP_MAX) {
            const KeyOrder order(key_order);
            U keys[WARP_ITEMS];
#pragma unroll
            for (int j = 0; j < WARP_ITEMS; ++j) {
                const u32 at = j * gp::WARP + lane;
                keys[j] = at < n ? order.ordered(values[r.begin + at]) : MISSING;
            }
            const u32 count = n ? (u32)n : 1u;  // the clamps only keep a bad row in bounds
            const U found = short_select(keys, count, (u32)min(r.rank, (u64)count - 1), storage[warp]);
            if (lane == 0) out[row] = order.raw(found);
        } else {
            cls = length_class(n);
            if (lane == 0) place = atomicAdd(&block_counts[cls], 1u);
        }
    }
    __syncthreads();
    if (threadIdx.x < CLASSES && block_counts[threadIdx.x])
        block_base[threadIdx.x] = atomicAdd(&ctr->counts[threadIdx.x], block_counts[threadIdx.x]);
    __syncthreads();
    if (cls < CLASSES && lane == 0) row_ids[cls * nrows + block_base[cls] + place] = (u32)row;
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) last = atomicAdd(&ctr->ticket, 1u) == gridDim.x - 1;
    __syncthreads();
    if (!last || threadIdx.x != 0) return;
    __threadfence();
    publish(rows, ctr, report, seq);
}

