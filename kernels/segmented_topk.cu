// Top-k of every row (gpuprims_segmented_topk): for each row of `values`, its k best
// keys in order (ties by lower index), with their indices within the row.
//
//   topk_check   rows given by offsets, or one k a row: a thread a row checks it
//                (offsets decreasing, past the end: the first bad row kept), files it
//                under its class (below) and adds its k to the total; the last block
//                copies the counts into the host's mapped slot, on which the host
//                spins before anything is written.
//   topk_warp    rows of up to WARP_MAX keys wanting up to WARP_K of them: a warp a
//                row (segmented_topk_warp.cuh): short rows at once from registers,
//                the few candidates ranked against each other; longer ones streamed,
//                the warp's best so far kept in shared memory and a step's few keys
//                that beat them merged in by ranking.
//   topk_block   rows wanting up to CAP keys: a block a row (segmented_topk_block.cuh):
//                a threshold from a sample, one read of the row gathering the keys at
//                or below it in index order (digit passes instead when the sample
//                misjudged), a stable block sort of those candidates.
//   topk_long    the same for rows longer than LONG_ROW_MIN wanting up to LONG_CAP:
//                LONG_BLOCK threads, more of the row in flight.
// Rows wanting more than CAP keys, and rows too long for one block, go row by row
// through the device-wide top-k (src/backend/cuda/segmented_topk.rs). A few long
// uniform rows are split: their parts' top-ks first (a block or a warp a part), then the top-k
// of each row's parts' results, then topk_split_indices (segmented_topk/split.rs).
//
// Keys are compared as ordered patterns (common/radix_key.cuh; descending order
// complements them), so "best" is always the smallest pattern and one module serves
// every dtype of a width. Values are written from the row as they are (bit for bit).
// A row with fewer keys than its k fills its remaining slots with zero bits and the
// index NO_INDEX. Every write is bounded by the output's length, whatever the ks say.
//
// Instantiated per key width and float-ness: -DGP_KEY_BYTES -DGP_KEY_FLOAT and the
// tuning defines below (src/backend/cuda/segmented_topk.rs); and in three parts,
// -DGP_SEGTOPK_PART=0 (topk_check, topk_warp, topk_split_indices, topk_widen), 1
// (topk_block) and 2 (topk_long), which a first call compiles side by side: one module
// of all took ~1.9 s of NVRTC, over the one-second rule for a first call.
#include "common/grid_dependency.cuh"
#include "common/types.cuh"
#include "common/radix_key.cuh"
#include "common/warp.cuh"
#include "common/radix_bucket.cuh"
#include "common/block_scan.cuh"
#include "common/block_radix_sort.cuh"
#include "common/block_radix_select.cuh"
#include "common/last_to_arrive.cuh"
#include "common/tagged.cuh"

#if !defined(GP_SEGTOPK_PART) || GP_SEGTOPK_PART < 0 || GP_SEGTOPK_PART > 2
#error "GP_SEGTOPK_PART: 0 (rows: check, warp, split, widen), 1 (block) or 2 (long)"
#endif

typedef gp::BitsOf<GP_KEY_BYTES>::type U;
typedef gp::KeyOrder<U, GP_KEY_FLOAT != 0> KeyOrder;
constexpr int WARP_ITEMS = GP_WARP_ITEMS;
constexpr u32 WARP_K = GP_WARP_K;
constexpr int BLOCK = GP_BLOCK;
constexpr int SORT_ITEMS = GP_SORT_ITEMS;
constexpr u32 CAP = BLOCK * SORT_ITEMS;
constexpr int LONG_BLOCK = GP_LONG_BLOCK;
constexpr int LONG_SORT_ITEMS = GP_LONG_SORT_ITEMS;
constexpr u32 LONG_CAP = LONG_BLOCK * LONG_SORT_ITEMS;
constexpr u64 LONG_ROW_MIN = GP_LONG_MIN;
#if GP_SEGTOPK_PART == 0
constexpr int WARP_BLOCK = GP_WARP_BLOCK;
constexpr int STREAM_ITEMS = GP_STREAM_ITEMS;
#else  // the block classes
constexpr int RADIX_BITS = 8;
constexpr int RADIX = 1 << RADIX_BITS;
constexpr int BITS = GP_KEY_BYTES * 8;
constexpr int SMALL_ITEMS = 2;
// At least one 16-byte load a thread a step.
constexpr int LOADS = GP_LOADS * (int)sizeof(U) < 16 ? 16 / (int)sizeof(U) : GP_LOADS;
constexpr int LONG_LOADS = GP_LONG_LOADS * (int)sizeof(U) < 16 ? 16 / (int)sizeof(U) : GP_LONG_LOADS;
// Rows longer than this stop refining at CAP candidates (a pass over the row costs
// more than sorting them); shorter ones refine down to the small sort's.
constexpr u64 REFINE_LEN = GP_REFINE_LEN;
// Keys a block (a long block) samples to guess a threshold: whole rows up to this many
// are the sample.
constexpr u32 SAMPLE = GP_SAMPLE;
constexpr u32 LONG_SAMPLE = GP_LONG_SAMPLE;
#endif
// Rows up to WARP_AT_ONCE keys are read at once; up to WARP_MAX (at least as many, the
// host sees to it), wanting at most WARP_K keys, they take a warp.
constexpr u64 WARP_AT_ONCE = (u64)gp::WARP * WARP_ITEMS;
constexpr u64 WARP_MAX = GP_WARP_MAX_LEN;
static_assert(WARP_MAX >= WARP_AT_ONCE, "a warp takes every row it can read at once");
constexpr u64 NO_INDEX = ~0ull;
static_assert(WARP_K <= gp::WARP, "a lane holds one result");

// Layout flags from the host (segmented_topk.rs: the same bits). Above SPLIT_SHIFT: the
// parts each uniform row is split into, a row of the launch being one part (0: none).
constexpr u32 RAGGED = 1, OFFSETS_U64 = 2, KS_GIVEN = 4, KS_U64 = 8, SPLIT_SHIFT = 8;
// Classes, in the check's counts.
constexpr u32 CLASS_WARP = 0, CLASS_BLOCK = 1, CLASS_LONG = 2, CLASS_HUGE = 3, CLASSES = 4;
#if GP_SEGTOPK_PART == 0
// Row faults (src/backend/mod.rs: TopkRowFault).
constexpr u32 FAULT_DECREASING = 1, FAULT_PAST_END = 2;
#endif

// Where part `part` of `parts` begins in a split row of row_len keys (the parts of
// nearly equal length, segmented_topk/split.rs).
__device__ __forceinline__ u64 part_begin(u64 part, u64 parts, u64 row_len) { return part * row_len / parts; }

// A row as the kernels see it: keys [begin, begin + n), its k, where its results go.
struct Row {
    u64 begin, n, k, base;
};

struct Rows {
    const void *offsets;
    const void *ks;
    const u64 *bases;  // with KS_GIVEN: where each row's results start
    u64 row_len;       // uniform rows
    u64 k;             // without KS_GIVEN
    u32 flags;

    __device__ __forceinline__ u64 offset(u64 i) const {
        return (flags & OFFSETS_U64) ? ((const u64 *)offsets)[i] : ((const u32 *)offsets)[i];
    }
    __device__ __forceinline__ u64 k_of(u64 row) const {
        if (!(flags & KS_GIVEN)) return k;
        return (flags & KS_U64) ? ((const u64 *)ks)[row] : ((const u32 *)ks)[row];
    }
    // Row `row`, clamped to the buffer of `len` keys (no read leaves it whatever the
    // offsets say; bad rows never get this far).
    __device__ __forceinline__ Row at(u64 row, u64 len) const {
        u64 begin, end;
        if (flags & RAGGED) {
            end = offset(row + 1);
            begin = offset(row);
            end = end < len ? end : len;
            begin = begin < end ? begin : end;
        } else if (flags >> SPLIT_SHIFT) {  // part `row % parts` of uniform row `row / parts`
            const u64 parts = flags >> SPLIT_SHIFT, whole = row / parts * row_len, part = row % parts;
            begin = whole + part_begin(part, parts, row_len);
            end = whole + part_begin(part + 1, parts, row_len);
        } else {
            begin = row * row_len;
            end = begin + row_len;
        }
        const u64 kk = k_of(row);
        return Row{begin, end - begin, kk, (flags & KS_GIVEN) ? bases[row] : row * k};
    }
};

// The class of a row of n keys wanting k: by how many it gives, m = min(k, n).
__device__ __forceinline__ u32 row_class(u64 n, u64 k, u64 block_max_len) {
    const u64 m = k < n ? k : n;
    if (n <= WARP_MAX && m <= WARP_K) return CLASS_WARP;
    if (n > LONG_ROW_MIN && m <= LONG_CAP && n <= block_max_len) return CLASS_LONG;
    if (m <= CAP && n <= block_max_len) return CLASS_BLOCK;
    return CLASS_HUGE;
}

// Zeroed by the host before topk_check.
struct Counters {
    u32 counts[CLASSES];
    u64 fault;     // max over bad rows of ~(row << 2 | fault): the lowest row wins
    u64 k_low;     // the ks' low 32 bits, summed
    u64 k_high;    // their high 32 bits, summed (the total is exact past 2^64)
    u32 arrived;   // the check's blocks done
};

// What the check's last block copies into the host's mapped result slot
// (segmented_topk.rs: struct Report): `status` (the host's tag in its high half)
// last, once the rest has reached host memory; the host spins on it.
struct Report {
    u64 status;
    u32 counts[CLASSES];
    u64 fault, k_low, k_high;
};

__device__ __forceinline__ void report_counters(const Counters *ctr, Report *report, u32 tag) {
    volatile Report *r = report;
    for (u32 c = 0; c < CLASSES; ++c) r->counts[c] = __ldcg(&ctr->counts[c]);
    r->fault = __ldcg((const unsigned long long *)&ctr->fault);
    r->k_low = __ldcg((const unsigned long long *)&ctr->k_low);
    r->k_high = __ldcg((const unsigned long long *)&ctr->k_high);
    __threadfence_system();
    gp::store_relaxed_system(&report->status, (u64)tag << 32 | 1u);
}

#if GP_SEGTOPK_PART == 0
// Rows given by offsets or with one k each: checked and filed, a thread a row.
// `lists` holds CLASSES lists of nrows ids. The last block to finish reports the
// counters to the host (`report`: the mapped slot, tagged `tag`).
extern "C" __global__ void __launch_bounds__(256)
topk_check(const void *offsets, const void *ks, u32 flags, u64 row_len, u64 k, u64 len, u64 nrows,
           u64 block_max_len, Counters *ctr, u32 *lists, Report *report, u32 tag) {
    gp::wait_for_prior_grids();
    const Rows rows{offsets, ks, nullptr, row_len, k, flags};
    const u64 row = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    u32 cls = CLASSES;  // none: past the rows, a bad row, or nothing to write
    if (row < nrows) {
        u64 begin = row * row_len, end = begin + row_len;
        if (flags & RAGGED) {
            begin = rows.offset(row);
            end = rows.offset(row + 1);
        }
        const u32 bad = end < begin ? FAULT_DECREASING : end > len ? FAULT_PAST_END : 0u;
        const u64 kk = rows.k_of(row);
        if (bad) atomicMax((unsigned long long *)&ctr->fault, ~(row << 2 | bad));
        else if (kk != 0) cls = row_class(end - begin, kk, block_max_len);
        if (flags & KS_GIVEN) {
            if ((u32)kk) atomicAdd((unsigned long long *)&ctr->k_low, (u64)(u32)kk);
            if (kk >> 32) atomicAdd((unsigned long long *)&ctr->k_high, kk >> 32);
        }
    }
    const u32 lane = threadIdx.x % gp::WARP;
    for (u32 c = 0; c < CLASSES; ++c) {
        const u32 peers = __ballot_sync(gp::FULL_MASK, cls == c);
        if (!peers) continue;
        const int leader = __ffs(peers) - 1;
        u32 at = 0;
        if ((int)lane == leader) at = atomicAdd(&ctr->counts[c], __popc(peers));
        at = __shfl_sync(gp::FULL_MASK, at, leader);
        if (cls == c) lists[c * nrows + at + __popc(peers & ((1u << lane) - 1))] = (u32)row;
    }
    if (gp::last_to_arrive(&ctr->arrived, gridDim.x) && threadIdx.x == 0) report_counters(ctr, report, tag);
}

#endif  // GP_SEGTOPK_PART == 0

// Slots [from, k) of a row shorter than its k: zero bits and NO_INDEX, `step` apart
// from `first`.
__device__ __forceinline__ void write_pads(const Row &r, u64 from, u64 first, u64 step, U *out_values,
                                           u64 *out_indices, u64 out_len) {
    for (u64 j = from + first; j < r.k; j += step) {
        const u64 at = r.base + j;
        if (at >= out_len) break;
        out_values[at] = U(0);
        if (out_indices) out_indices[at] = NO_INDEX;
    }
}

#if GP_SEGTOPK_PART == 0
#include "segmented_topk_warp.cuh"

extern "C" __global__ void __launch_bounds__(WARP_BLOCK)
topk_warp(const U *values, u64 len, const void *offsets, const void *ks, const u64 *bases, u32 flags, u64 row_len,
          u64 k, const u32 *ids, u64 count, U *out_values, u64 *out_indices, u64 out_len, u32 key_order) {
    gp::wait_for_prior_grids();
    __shared__ U slot_key[WARPS_A_BLOCK][SLOTS];
    __shared__ u32 slot_index[WARPS_A_BLOCK][SLOTS];
    const u64 w = ((u64)blockIdx.x * WARP_BLOCK + threadIdx.x) / gp::WARP;
    if (w >= count) return;  // the same for the whole warp
    const Rows rows{offsets, ks, bases, row_len, k, flags};
    const Row r = rows.at(ids ? ids[w] : w, len);
    const u32 m = (u32)(r.k < r.n ? r.k : r.n), in_block = threadIdx.x / gp::WARP;
    const U *row = values + r.begin;
    const KeyOrder order(key_order);
    const Slots slots{slot_key[in_block], slot_index[in_block]};
    const Out out{out_values, out_indices, out_len};
    if (m != 0 && !(r.n <= WARP_AT_ONCE && warp_row_at_once(row, r, m, order, slots, out)))
        warp_row_streamed(row, r, m, order, slots, out);
    write_pads(r, m, threadIdx.x % gp::WARP, gp::WARP, out_values, out_indices, out_len);
}

#endif  // GP_SEGTOPK_PART == 0

#if GP_SEGTOPK_PART != 0
#include "segmented_topk_block.cuh"

// A block a row (n < 2^32): topk_block (BLOCK threads, up to CAP results) for rows of
// up to LONG_ROW_MIN keys and long rows wanting more than LONG_CAP, topk_long (LONG_BLOCK
// threads, up to LONG_CAP results) for the other long rows.
typedef RowTopk<BLOCK, SORT_ITEMS, SMALL_ITEMS, LOADS, SAMPLE> BlockRow;
typedef RowTopk<LONG_BLOCK, LONG_SORT_ITEMS, LONG_SORT_ITEMS, LONG_LOADS, LONG_SAMPLE> LongRow;

#define GP_SEGTOPK_ROW_KERNEL(NAME, ROW, BLOCK_T, MIN_BLOCKS)                                                                \
    extern "C" __global__ void __launch_bounds__(BLOCK_T, MIN_BLOCKS)                                              \
    NAME(const U *values, u64 len, const void *offsets, const void *ks, const u64 *bases, u32 flags, u64 row_len, \
         u64 k, const u32 *ids, U *out_values, u64 *out_indices, u64 out_len, u32 key_order) {                     \
        gp::wait_for_prior_grids();                                                                                \
        __shared__ ROW::Storage s;                                                                                 \
        const Rows rows{offsets, ks, bases, row_len, k, flags};                                                    \
        const Row r = rows.at(ids ? ids[blockIdx.x] : blockIdx.x, len);                                            \
        ROW::run(values + r.begin, r, out_values, out_indices, out_len, KeyOrder(key_order), s);                   \
        write_pads(r, r.k < r.n ? r.k : r.n, threadIdx.x, BLOCK_T, out_values, out_indices, out_len);             \
    }

#if GP_SEGTOPK_PART == 1
static_assert(BlockRow::CAP == CAP, "the class bound is the block's capacity");
GP_SEGTOPK_ROW_KERNEL(topk_block, BlockRow, BLOCK, GP_BLOCK_MIN_BLOCKS)
#else
static_assert(LongRow::CAP == LONG_CAP, "the class bound is the long block's capacity");
GP_SEGTOPK_ROW_KERNEL(topk_long, LongRow, LONG_BLOCK, 1)
#endif
#endif  // GP_SEGTOPK_PART != 0

#if GP_SEGTOPK_PART == 0

// Split rows, after the merge (segmented_topk/split.rs): each of the `count` results
// indexes its row's parts' results (parts * k a row, part by part) and becomes the
// index within the whole row: where its part begins plus its index within the part.
extern "C" __global__ void __launch_bounds__(256)
topk_split_indices(u64 *indices, const u64 *part_indices, u64 count, u64 k, u32 parts, u64 row_len) {
    gp::wait_for_prior_grids();
    const u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= count) return;
    const u64 row = t / k, j = indices[t], part = j / k;
    indices[t] = part_begin(part, parts, row_len) + part_indices[row * parts * k + j];
}

// U32 ks widened to u64, for the scan of the rows' first slots.
extern "C" __global__ void __launch_bounds__(256) topk_widen(const u32 *ks, u64 *wide, u64 n) {
    gp::wait_for_prior_grids();
    const u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) wide[i] = ks[i];
}
#endif  // GP_SEGTOPK_PART == 0
