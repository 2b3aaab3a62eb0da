// Per-row selection over ragged rows (gpuprims_segmented_select): for each row
// [offsets[r], offsets[r + 1]) of `values`, its key of rank ks[r] (or the lower median).
//
//   segsel_bucket   one thread a row: checks the row (offsets decreasing, past the end
//                   of the buffer, an empty row, a rank past the row), keeps the first
//                   bad row (the lowest index), and files the row id under its length
//                   class (one shared atomic a warp and class, one global atomic a
//                   block and class). The last block to finish writes the class counts
//                   and the fault to the host's mapped report and leaves the counters
//                   zeroed for the next call. The host reads the report, launches
//                   nothing when a row is bad, and otherwise each class below exactly
//                   sized from its count:
//   segsel_warp     rows up to WARP * WARP_ITEMS keys: one warp a row, several rows a
//                   block, keys in registers (common/warp_radix_select.cuh);
//   segsel_mid, segsel_wide, segsel_wider
//                   rows up to MID_BLOCK * MID_ITEMS, WIDE_BLOCK * WIDE_ITEMS and
//                   WIDER_BLOCK * WIDER_ITEMS keys: one block a row, keys in registers
//                   (common/block_radix_select.cuh);
//   segsel_long     longer rows, any length: one block a row, one read of the row per
//                   digit from global memory (a histogram of the digit among the keys
//                   matching the prefix so far, one copy per warp, the bucket of the
//                   rank kept).
//
// Keys are compared as ordered patterns (common/radix_key.cuh), so one module serves
// every dtype of a width; the answer is the pattern turned back into the key (every NaN
// comes back as the canonical quiet NaN). The offsets (u32 or u64) and ranks (u32, u64
// or none) are read through run-time flags; the selection kernels clamp each row to the
// buffer, so they never read outside it whatever the offsets say.
//
// Instantiated per key width and float-ness: -DGP_KEY_BYTES -DGP_KEY_FLOAT and the
// tuning defines below (src/backend/cuda/segmented_select.rs).
#include "common/types.cuh"
#include "common/radix_key.cuh"
#include "common/warp_radix_select.cuh"
#include "common/block_radix_select.cuh"

typedef gp::BitsOf<GP_KEY_BYTES>::type U;
typedef gp::KeyOrder<U, GP_KEY_FLOAT != 0> KeyOrder;
constexpr int RADIX_BITS = 8;
constexpr int RADIX = 1 << RADIX_BITS;
constexpr int BUCKET_BLOCK = GP_BUCKET_BLOCK;
constexpr int WARP_BLOCK = GP_WARP_BLOCK;
constexpr int WARP_ITEMS = GP_WARP_ITEMS;
constexpr int MID_BLOCK = GP_MID_BLOCK;
constexpr int MID_ITEMS = GP_MID_ITEMS;
constexpr int WIDE_BLOCK = GP_WIDE_BLOCK;
constexpr int WIDE_ITEMS = GP_WIDE_ITEMS;
constexpr int WIDER_BLOCK = GP_WIDER_BLOCK;
constexpr int WIDER_ITEMS = GP_WIDER_ITEMS;
constexpr int LONG_BLOCK = GP_LONG_BLOCK;
// Short rows are many and each is a few dependent steps: keys up to 4 bytes fit 32
// registers, so a full SM's worth of warps can be resident (wider keys would spill).
constexpr int WARP_MIN_BLOCKS = GP_KEY_BYTES <= 4 ? 2048 / WARP_BLOCK : 1;

// Length classes, in the order of the report's counts.
constexpr u32 CLASS_WARP = 0, CLASS_MID = 1, CLASS_WIDE = 2, CLASS_WIDER = 3, CLASS_LONG = 4, CLASSES = 5;
constexpr u64 WARP_MAX = (u64)gp::WARP * WARP_ITEMS;
constexpr u64 MID_MAX = (u64)MID_BLOCK * MID_ITEMS;
constexpr u64 WIDE_MAX = (u64)WIDE_BLOCK * WIDE_ITEMS;
constexpr u64 WIDER_MAX = (u64)WIDER_BLOCK * WIDER_ITEMS;

// Flags from the host.
constexpr u32 OFFSETS_U64 = 1;
constexpr u32 RANKS_GIVEN = 2;
constexpr u32 RANKS_U64 = 4;

// What is wrong with a row (the report's `fault`; 0: nothing). The order is the order
// in which a row is checked.
constexpr u32 FAULT_DECREASING = 1;
constexpr u32 FAULT_PAST_END = 2;
constexpr u32 FAULT_EMPTY = 3;
constexpr u32 FAULT_RANK = 4;

// Device counters, zero before a bucketing launch and left zero after it.
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

struct Rows {
    const void *offsets;
    const void *ranks;
    u32 flags;

    __device__ __forceinline__ u64 offset(u64 i) const {
        return (flags & OFFSETS_U64) ? ((const u64 *)offsets)[i] : ((const u32 *)offsets)[i];
    }
    // The wanted rank of a row of n (> 0) keys.
    __device__ __forceinline__ u64 rank(u64 row, u64 n) const {
        if (!(flags & RANKS_GIVEN)) return (n - 1) / 2;
        return (flags & RANKS_U64) ? ((const u64 *)ranks)[row] : ((const u32 *)ranks)[row];
    }
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

// row_ids holds CLASSES lists of `nrows` entries; class c's rows go to list c.
extern "C" __global__ void __launch_bounds__(BUCKET_BLOCK)
segsel_bucket(const void *offsets, const void *ranks, u32 flags, u64 nrows, u64 len, Counters *ctr, u32 *row_ids, Report *report, u32 seq) {
    __shared__ u32 block_counts[CLASSES], block_base[CLASSES];
    __shared__ bool last;
    const Rows rows{offsets, ranks, flags};
    const int lane = threadIdx.x % gp::WARP;
    const u64 row = (u64)blockIdx.x * BUCKET_BLOCK + threadIdx.x;
    if (threadIdx.x < CLASSES) block_counts[threadIdx.x] = 0;
    __syncthreads();
    u32 cls = CLASSES;  // none
    if (row < nrows) {
        const u64 begin = rows.offset(row), end = rows.offset(row + 1);
        u32 fault = 0;
        if (end < begin) fault = FAULT_DECREASING;
        else if (end > len) fault = FAULT_PAST_END;
        else if (end == begin) fault = FAULT_EMPTY;
        else if (rows.rank(row, end - begin) >= end - begin) fault = FAULT_RANK;
        else cls = length_class(end - begin);
        if (fault) atomicMax((unsigned long long *)&ctr->fault, ~(row << 3 | fault));
    }
    // Each row's place in its list: its rank among the warp's rows of its class, after
    // the warp's share of the block's, after the block's share of the grid's.
    u32 in_warp = 0, warp_base = 0;
    for (u32 k = 0; k < CLASSES; ++k) {
        const u32 peers = __ballot_sync(gp::FULL_MASK, cls == k);
        u32 base = 0;
        if (peers && lane == __ffs(peers) - 1) base = atomicAdd(&block_counts[k], __popc(peers));
        base = __shfl_sync(gp::FULL_MASK, base, peers ? __ffs(peers) - 1 : 0);
        if (cls == k) {
            in_warp = __popc(peers & ((1u << lane) - 1));
            warp_base = base;
        }
    }
    __syncthreads();
    if (threadIdx.x < CLASSES && block_counts[threadIdx.x])
        block_base[threadIdx.x] = atomicAdd(&ctr->counts[threadIdx.x], block_counts[threadIdx.x]);
    __syncthreads();
    if (cls < CLASSES) row_ids[cls * nrows + block_base[cls] + warp_base + in_warp] = (u32)row;
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) last = atomicAdd(&ctr->ticket, 1u) == gridDim.x - 1;
    __syncthreads();
    if (!last || threadIdx.x != 0) return;
    __threadfence();
    publish(rows, ctr, report, seq);
}

// A selected row: its keys [begin, end) clamped to the buffer, and its rank.
struct Row {
    u64 begin, end, rank;
};

__device__ __forceinline__ Row row_at(const Rows &rows, u64 row, u64 len) {
    u64 end = rows.offset(row + 1), begin = rows.offset(row);
    end = end < len ? end : len;
    begin = begin < end ? begin : end;
    return Row{begin, end, rows.rank(row, end - begin)};
}

extern "C" __global__ void __launch_bounds__(WARP_BLOCK, WARP_MIN_BLOCKS)
segsel_warp(const U *values, u64 len, const void *offsets, const void *ranks, u32 flags, const u32 *ids, u32 count,
            U *out, u32 key_order) {
    const Rows rows{offsets, ranks, flags};
    typedef gp::WarpRadixSelect<U, WARP_ITEMS, RADIX_BITS> Select;
    __shared__ typename Select::Storage storage[WARP_BLOCK / gp::WARP];
    const u32 warp = threadIdx.x / gp::WARP, lane = threadIdx.x % gp::WARP;
    const u64 i = (u64)blockIdx.x * (WARP_BLOCK / gp::WARP) + warp;
    if (i >= count) return;  // the whole warp
    const u32 id = ids[i];
    const Row r = row_at(rows, id, len);
    const u32 n = (u32)min(r.end - r.begin, WARP_MAX);
    const KeyOrder order(key_order);
    U keys[WARP_ITEMS];
#pragma unroll
    for (int j = 0; j < WARP_ITEMS; ++j) {
        const u32 at = j * gp::WARP + lane;
        keys[j] = at < n ? order.ordered(values[r.begin + at]) : U(0);
    }
    const U found = Select::select(keys, n, (u32)min(r.rank, (u64)n - 1), storage[warp]);
    if (lane == 0) out[id] = order.raw(found);
}

// One block a row of at most BLOCK_T * ITEMS_T keys, held in registers; the missing
// keys are the largest pattern, which cannot move a rank below the row's length.
template <int BLOCK_T, int ITEMS_T>
__device__ __forceinline__ void select_in_block(const U *values, u64 len, const Rows &rows, const u32 *ids, U *out,
                                                u32 key_order) {
    typedef gp::BlockRadixSelect<U, BLOCK_T, ITEMS_T, 1, RADIX_BITS> Select;
    __shared__ typename Select::Storage storage;
    const u32 id = ids[blockIdx.x];
    const Row r = row_at(rows, id, len);
    const u64 n = min(r.end - r.begin, (u64)BLOCK_T * ITEMS_T);
    const KeyOrder order(key_order);
    U keys[ITEMS_T];
#pragma unroll
    for (int j = 0; j < ITEMS_T; ++j) {
        const u64 at = (u64)j * BLOCK_T + threadIdx.x;
        keys[j] = at < n ? order.ordered(values[r.begin + at]) : U(~U(0));
    }
    const u32 ranks[1] = {(u32)min(r.rank, n - 1)};
    U found[1];
    Select::select(keys, ranks, found, storage);
    if (threadIdx.x == 0) out[id] = order.raw(found[0]);
}

extern "C" __global__ void __launch_bounds__(MID_BLOCK)
segsel_mid(const U *values, u64 len, const void *offsets, const void *ranks, u32 flags, const u32 *ids, U *out,
           u32 key_order) {
    const Rows rows{offsets, ranks, flags};
    select_in_block<MID_BLOCK, MID_ITEMS>(values, len, rows, ids, out, key_order);
}

extern "C" __global__ void __launch_bounds__(WIDE_BLOCK)
segsel_wide(const U *values, u64 len, const void *offsets, const void *ranks, u32 flags, const u32 *ids, U *out,
            u32 key_order) {
    const Rows rows{offsets, ranks, flags};
    select_in_block<WIDE_BLOCK, WIDE_ITEMS>(values, len, rows, ids, out, key_order);
}

extern "C" __global__ void __launch_bounds__(WIDER_BLOCK)
segsel_wider(const U *values, u64 len, const void *offsets, const void *ranks, u32 flags, const u32 *ids, U *out,
             u32 key_order) {
    const Rows rows{offsets, ranks, flags};
    select_in_block<WIDER_BLOCK, WIDER_ITEMS>(values, len, rows, ids, out, key_order);
}

// Rows of any length: one read of the row per digit, LOADS keys a thread in flight.
// Each warp counts into its own histogram (u32: a warp sees at most a 32nd of a row,
// and no buffer holds 2^37 keys), so the first digit, which every key has, does not
// pile all the block's atomics onto 256 counters.
extern "C" __global__ void __launch_bounds__(LONG_BLOCK)
segsel_long(const U *values, u64 len, const void *offsets, const void *ranks, u32 flags, const u32 *ids, U *out,
            u32 key_order) {
    constexpr int LOADS = 8, WARPS = LONG_BLOCK / gp::WARP;
    __shared__ u32 counts[WARPS][RADIX];
    __shared__ u64 totals[RADIX];
    __shared__ gp::Bucket<u64> chosen;
    const Rows rows{offsets, ranks, flags};
    const u32 id = ids[blockIdx.x];
    const Row r = row_at(rows, id, len);
    const u64 n = r.end - r.begin;
    const U *row = values + r.begin;
    const KeyOrder order(key_order);
    u32 *mine = counts[threadIdx.x / gp::WARP];
    u64 rank = min(r.rank, n - 1);
    U prefix = 0, mask = 0;
    for (int shift = (int)sizeof(U) * 8 - RADIX_BITS; shift >= 0; shift -= RADIX_BITS) {
        for (int d = threadIdx.x; d < WARPS * RADIX; d += LONG_BLOCK) (&counts[0][0])[d] = 0;
        __syncthreads();
        for (u64 first = threadIdx.x; first < n; first += (u64)LOADS * LONG_BLOCK) {
            U x[LOADS];
#pragma unroll
            for (int u = 0; u < LOADS; ++u) {
                const u64 at = first + (u64)u * LONG_BLOCK;
                x[u] = at < n ? row[at] : U(0);
            }
#pragma unroll
            for (int u = 0; u < LOADS; ++u) {
                const U k = order.ordered(x[u]);
                if (first + (u64)u * LONG_BLOCK < n && ((k ^ prefix) & mask) == 0)
                    atomicAdd(&mine[u32(k >> shift) & (RADIX - 1)], 1u);
            }
        }
        __syncthreads();
        for (int d = threadIdx.x; d < RADIX; d += LONG_BLOCK) {
            u64 t = 0;
            for (int w = 0; w < WARPS; ++w) t += counts[w][d];
            totals[d] = t;
        }
        __syncthreads();
        if (threadIdx.x < gp::WARP) {
            const gp::Bucket<u64> b = gp::find_bucket<u64, RADIX>(totals, rank);
            if (threadIdx.x == 0) chosen = b;
        }
        __syncthreads();
        prefix |= U(U(chosen.digit) << shift);
        mask |= U(U(RADIX - 1) << shift);
        rank -= chosen.before;
        __syncthreads();  // `chosen` and the counts are reused
    }
    if (threadIdx.x == 0) out[id] = order.raw(prefix);
}
