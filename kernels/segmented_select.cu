// Per-row selection over ragged rows (gpuprims_segmented_select): for each row
// [offsets[r], offsets[r + 1]) of `values`, its key of rank ks[r] (or the lower median).
//
//   segsel_short    one warp a few consecutive rows (a lane a row): checks them (the
//                   first bad row, the lowest index, kept), selects the short ones (up
//                   to WARP * WARP_ITEMS keys, in registers; common/warp_bitwise_select.cuh
//                   for narrow keys, common/warp_radix_select.cuh for wide ones) into a
//                   staging buffer and files the longer ones under their length class.
//                   Its last block knows the final fault: it copies the staged answers
//                   to `out` when no row is bad (small calls), writes the class counts
//                   and the fault to the host's mapped report and leaves the counters
//                   zeroed for the next call.
//   segsel_commit   larger calls: the staged answers to `out`, when no row is bad.
//
// The host waits once, for the report: a bad row fails the call (`out` never written);
// otherwise each class of long rows is launched, exactly sized from its count
// (segmented_select_long.cu, a module of its own).
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
#include "common/grid_dependency.cuh"
#include "segmented_select_rows.cuh"
#include "common/warp_radix_select.cuh"
#include "common/warp_bitwise_select.cuh"
#include "common/last_to_arrive.cuh"

constexpr int COMMIT_BLOCK = GP_COMMIT_BLOCK;
constexpr int WARP_BLOCK = GP_WARP_BLOCK;
// Short rows are many and each is a chain of dependent steps: as many warps resident as
// the registers of keys up to 4 bytes allow (wider keys would spill).
constexpr int WARP_MIN_BLOCKS = GP_KEY_BYTES <= 4 ? GP_WARP_MIN_BLOCKS : 1;

// What is wrong with a row (the report's `fault`; 0: nothing). The order is the order
// in which a row is checked.
constexpr u32 FAULT_DECREASING = 1;
constexpr u32 FAULT_PAST_END = 2;
constexpr u32 FAULT_EMPTY = 3;
constexpr u32 FAULT_RANK = 4;

// Device counters, zero before a call and left zero after its short-row launch.
struct Counters {
    u32 counts[CLASSES];
    u64 fault;    // max over bad rows of ~(row << 3 | fault): the lowest row wins
    u32 ticket;   // blocks done
    u32 verdict;  // the last call's fault (0: none), for segsel_commit
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
    c->verdict = fault != ~0ull ? (u32)(fault & 7) : 0u;
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

// The keys of lane `owner`'s row (begin, n <= WARP_MAX: every lane passes its own) into
// the warp's registers, ordered.
__device__ __forceinline__ void load_row(U (&keys)[WARP_ITEMS], const U *values, u64 begin, u64 n, int owner,
                                         const KeyOrder &order) {
    const int lane = threadIdx.x % gp::WARP;
    const u64 b = gp::shfl(begin, owner);
    const u32 count = (u32)gp::shfl(n, owner);
#pragma unroll
    for (int j = 0; j < WARP_ITEMS; ++j) {
        const u32 at = j * gp::WARP + lane;
        keys[j] = at < count ? order.ordered(values[b + at]) : MISSING;
    }
}

// Each warp takes `per_warp` (1..32) consecutive rows, lane l the row first + l: the
// lanes check their rows side by side (offsets decreasing, past the end of the buffer,
// an empty row, a rank past the row; the first bad row, the lowest index, is kept),
// file the long ones under their length class (row_ids holds CLASSES lists of `nrows`
// entries; class c's rows go to list c) and the warp selects the short ones (up to
// WARP_MAX keys, in registers) one after another, the next row's keys loading while
// the current one is selected. Answers go to `staged`, not `out`: only once every
// block has checked its rows is it known that no row is bad. The last block to finish
// then copies `staged` to `out` when `commit` is set and no row is bad (small calls;
// larger ones launch segsel_commit after this), writes the class counts and the first
// bad row to the host's mapped report and its verdict to the counters, and leaves the
// counts zeroed for the next call. On a bad row `out` is never written. Only rows that
// passed the check are read, so no read leaves the buffer whatever the offsets say.
extern "C" __global__ void __launch_bounds__(WARP_BLOCK, WARP_MIN_BLOCKS)
segsel_short(const U *values, u64 len, const void *offsets, const void *ranks, u32 flags, u64 nrows, u32 per_warp,
             Counters *ctr, u32 *row_ids, U *staged, u32 commit, Report *report, u32 seq, U *out, u32 key_order) {
    gp::wait_for_prior_grids();
    constexpr int WARPS = WARP_BLOCK / gp::WARP;
    __shared__ ShortStorage storage[WARPS];
    __shared__ u32 block_counts[CLASSES], block_base[CLASSES];
    const Rows rows{offsets, ranks, flags};
    const u32 warp = threadIdx.x / gp::WARP, lane = threadIdx.x % gp::WARP;
    const u64 row = ((u64)blockIdx.x * WARPS + warp) * per_warp + lane;
    if (threadIdx.x < CLASSES) block_counts[threadIdx.x] = 0;
    __syncthreads();
    u64 begin = 0, n = 0, rank = 0;
    u32 cls = CLASSES;  // none: no row, or a bad one
    if (lane < per_warp && row < nrows) {
        const u64 b = rows.offset(row), e = rows.offset(row + 1);
        u32 fault = 0;
        if (e < b) fault = FAULT_DECREASING;
        else if (e > len) fault = FAULT_PAST_END;
        else if (e == b) fault = FAULT_EMPTY;
        else if ((rank = rows.rank(row, e - b)) >= e - b) fault = FAULT_RANK;
        if (fault) atomicMax((unsigned long long *)&ctr->fault, ~(row << 3 | fault));
        else {
            begin = b;
            n = e - b;
            cls = length_class(n);
        }
    }
    // A long row's place in its list: its rank among the warp's rows of its class, after
    // the warp's share of the block's, after the block's share of the grid's.
    u32 place = 0;
    for (u32 k = CLASS_WARP + 1; k < CLASSES; ++k) {
        const u32 peers = __ballot_sync(gp::FULL_MASK, cls == k);
        if (!peers) continue;  // the same for the whole warp
        const int leader = __ffs(peers) - 1;
        u32 base = 0;
        if (lane == leader) base = atomicAdd(&block_counts[k], __popc(peers));
        base = __shfl_sync(gp::FULL_MASK, base, leader);
        if (cls == k) place = base + __popc(peers & ((1u << lane) - 1));
    }
    const KeyOrder order(key_order);
    u32 todo = __ballot_sync(gp::FULL_MASK, cls == CLASS_WARP);
    U found = 0, keys[WARP_ITEMS], next[WARP_ITEMS];
    int at = todo ? __ffs(todo) - 1 : 0;
    if (todo) load_row(keys, values, begin, n, at, order);
    while (todo) {  // the same for the whole warp
        todo &= todo - 1;
        const int following = todo ? __ffs(todo) - 1 : 0;
        if (todo) load_row(next, values, begin, n, following, order);
        const U f = short_select(keys, (u32)gp::shfl(n, at), (u32)gp::shfl(rank, at), storage[warp]);
        if ((int)lane == at) found = f;
#pragma unroll
        for (int j = 0; j < WARP_ITEMS; ++j) keys[j] = next[j];
        at = following;
    }
    if (cls == CLASS_WARP) staged[row] = order.raw(found);
    __syncthreads();
    if (threadIdx.x < CLASSES && block_counts[threadIdx.x])
        block_base[threadIdx.x] = atomicAdd(&ctr->counts[threadIdx.x], block_counts[threadIdx.x]);
    __syncthreads();
    if (cls != CLASS_WARP && cls < CLASSES) row_ids[cls * nrows + block_base[cls] + place] = (u32)row;
    if (!gp::last_to_arrive(&ctr->ticket, gridDim.x)) return;
    // Every block has checked its rows: the fault is final.
    const bool clean = *(volatile u64 *)&ctr->fault == 0;
    __syncthreads();  // every thread has read the fault before publish() clears it
    if (commit && clean) {
        // COPY loads in flight a thread (out and staged never overlap): a few L2 round
        // trips for the small calls this serves.
        constexpr int COPY = 16;
        for (u64 first = threadIdx.x; first < nrows; first += (u64)COPY * WARP_BLOCK) {
            U v[COPY];
#pragma unroll
            for (int u = 0; u < COPY; ++u) {
                const u64 i = first + (u64)u * WARP_BLOCK;
                v[u] = i < nrows ? __ldcg(staged + i) : U(0);
            }
#pragma unroll
            for (int u = 0; u < COPY; ++u) {
                const u64 i = first + (u64)u * WARP_BLOCK;
                if (i < nrows) out[i] = v[u];
            }
        }
    }
    if (threadIdx.x == 0) publish(rows, ctr, report, seq);
}

// Larger calls: `staged` to `out` once segsel_short has found no bad row (its verdict,
// final at this launch). Entries of long rows are overwritten by their class's launch.
extern "C" __global__ void __launch_bounds__(COMMIT_BLOCK)
segsel_commit(const U *staged, u64 nrows, const Counters *ctr, U *out) {
    gp::wait_for_prior_grids();
    if (*(const volatile u32 *)&ctr->verdict != 0) return;
    for (u64 i = (u64)blockIdx.x * COMMIT_BLOCK + threadIdx.x; i < nrows; i += (u64)gridDim.x * COMMIT_BLOCK)
        out[i] = staged[i];
}

