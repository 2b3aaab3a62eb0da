// The long rows of a segmented select (gpuprims_segmented_select), the classes that
// segsel_short (segmented_select.cu) filed, each launched over its list of row ids once
// the host has read the class counts (no bad row: the call failed before otherwise).
// A module of its own so that the first call compiles it beside the short-row module.
//
//   segsel_mid, segsel_wide, segsel_wider
//                   rows up to MID_BLOCK * MID_ITEMS, WIDE_BLOCK * WIDE_ITEMS and
//                   WIDER_BLOCK * WIDER_ITEMS keys: one block a row, keys in registers
//                   (common/block_radix_select.cuh);
//   segsel_long     longer rows, any length: one block a row, one read of the row per
//                   digit from global memory (a histogram of the digit among the keys
//                   matching the prefix so far, one copy per warp, the bucket of the
//                   rank kept).
//
// Each row is clamped to the buffer, so no read leaves it whatever the offsets say.
// Instantiated like segmented_select.cu (the same defines).
#include "common/grid_dependency.cuh"
#include "segmented_select_rows.cuh"
#include "common/block_radix_select.cuh"
#include "common/block_digit_bucket.cuh"

// One block a row of at most BLOCK_T * ITEMS_T keys, held in registers.
template <int BLOCK_T, int ITEMS_T>
__device__ __forceinline__ void select_in_block(const U *values, u64 len, const Rows &rows, const u32 *ids, U *out,
                                                u32 key_order) {
    typedef gp::BlockRadixSelect<U, BLOCK_T, ITEMS_T, 1, RADIX_BITS> Select;
    __shared__ typename Select::Storage storage;
    const u32 id = ids[blockIdx.x];
    const Row r = row_at(rows, id, len);
    const u64 n = min(r.end - r.begin, (u64)BLOCK_T * ITEMS_T);
    const KeyOrder order(key_order);
    const U found = Select::select_from(values + r.begin, n, (u32)min(r.rank, n - 1), order, storage);
    if (threadIdx.x == 0) out[id] = order.raw(found);
}

// The entry point of one class of rows held in registers: BLOCK_T threads, ITEMS_T keys
// each.
#define GP_SEGSEL_BLOCK_KERNEL(NAME, BLOCK_T, ITEMS_T)                                                      \
    extern "C" __global__ void __launch_bounds__(BLOCK_T)                                                   \
    NAME(const U *values, u64 len, const void *offsets, const void *ranks, u32 flags, const u32 *ids, U *out, \
         u32 key_order) {                                                                                   \
        gp::wait_for_prior_grids();                                                                         \
        const Rows rows{offsets, ranks, flags};                                                             \
        select_in_block<BLOCK_T, ITEMS_T>(values, len, rows, ids, out, key_order);                          \
    }

GP_SEGSEL_BLOCK_KERNEL(segsel_mid, MID_BLOCK, MID_ITEMS)
GP_SEGSEL_BLOCK_KERNEL(segsel_wide, WIDE_BLOCK, WIDE_ITEMS)
GP_SEGSEL_BLOCK_KERNEL(segsel_wider, WIDER_BLOCK, WIDER_ITEMS)

// Rows of any length: one read of the row per digit, LOADS keys a thread in flight.
// Each warp counts into its own copy of the histogram (common/block_digit_bucket.cuh;
// u32: a warp sees at most a 32nd of a row, and no buffer holds 2^37 keys), so the
// first digit, which every key has, does not pile all the block's atomics onto 256
// counters.
extern "C" __global__ void __launch_bounds__(LONG_BLOCK)
segsel_long(const U *values, u64 len, const void *offsets, const void *ranks, u32 flags, const u32 *ids, U *out,
            u32 key_order) {
    gp::wait_for_prior_grids();
    constexpr int LOADS = 8, WARPS = LONG_BLOCK / gp::WARP;
    typedef gp::BlockDigitBucket<u64, LONG_BLOCK, WARPS, RADIX> Digit;
    __shared__ Digit::Counts counts;
    __shared__ Digit::Found found;
    const Rows rows{offsets, ranks, flags};
    const u32 id = ids[blockIdx.x];
    const Row r = row_at(rows, id, len);
    const u64 n = r.end - r.begin;
    const U *row = values + r.begin;
    const KeyOrder order(key_order);
    u32 *mine = Digit::copy(counts);
    u64 rank = min(r.rank, n - 1);
    U prefix = 0, mask = 0;
    for (int shift = (int)sizeof(U) * 8 - RADIX_BITS; shift >= 0; shift -= RADIX_BITS) {
        Digit::begin(counts);
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
        u64 bucket_count;
        const gp::Bucket<u64> b = Digit::finish(counts, found, rank, bucket_count);
        prefix |= U(U(b.digit) << shift);
        mask |= U(U(RADIX - 1) << shift);
        rank -= b.before;
    }
    if (threadIdx.x == 0) out[id] = order.raw(prefix);
}
