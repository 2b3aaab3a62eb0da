// What both segmented-select modules (segmented_select.cu, segmented_select_long.cu)
// share: the key type of the instance, the tuning defines, the length classes and the
// rows as the host passes them (src/backend/cuda/segmented_select.rs).
#pragma once
#include "common/types.cuh"
#include "common/radix_key.cuh"
#include "common/warp.cuh"

typedef gp::BitsOf<GP_KEY_BYTES>::type U;
typedef gp::KeyOrder<U, GP_KEY_FLOAT != 0> KeyOrder;
constexpr int RADIX_BITS = 8;
constexpr int RADIX = 1 << RADIX_BITS;
constexpr int WARP_ITEMS = GP_WARP_ITEMS;
constexpr int MID_BLOCK = GP_MID_BLOCK;
constexpr int MID_ITEMS = GP_MID_ITEMS;
constexpr int WIDE_BLOCK = GP_WIDE_BLOCK;
constexpr int WIDE_ITEMS = GP_WIDE_ITEMS;
constexpr int WIDER_BLOCK = GP_WIDER_BLOCK;
constexpr int WIDER_ITEMS = GP_WIDER_ITEMS;
constexpr int LONG_BLOCK = GP_LONG_BLOCK;

// Length classes, in the order of the report's counts.
constexpr u32 CLASS_WARP = 0, CLASS_MID = 1, CLASS_WIDE = 2, CLASS_WIDER = 3, CLASS_LONG = 4, CLASSES = 5;
constexpr u64 WARP_MAX = (u64)gp::WARP * WARP_ITEMS;
constexpr u64 MID_MAX = (u64)MID_BLOCK * MID_ITEMS;
constexpr u64 WIDE_MAX = (u64)WIDE_BLOCK * WIDE_ITEMS;
constexpr u64 WIDER_MAX = (u64)WIDER_BLOCK * WIDER_ITEMS;

// Flags from the host, which defines their bits: the layout of offsets and ranks, and
// (segsel_short's checking blocks) from bit CHECK_RUN_SHIFT the rows each checking
// lane checks.
constexpr u32 OFFSETS_U64 = GP_OFFSETS_U64;
constexpr u32 RANKS_GIVEN = GP_RANKS_GIVEN;
constexpr u32 RANKS_U64 = GP_RANKS_U64;
constexpr u32 CHECK_RUN_SHIFT = GP_CHECK_RUN_SHIFT;
static_assert((OFFSETS_U64 | RANKS_GIVEN | RANKS_U64) < (1u << CHECK_RUN_SHIFT), "the run sits above the layout flags");

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

