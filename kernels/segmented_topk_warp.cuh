// A warp a row (segmented_topk.cu's topk_warp includes this after defining U,
// KeyOrder, Row and the tuning constants): rows wanting at most WARP_K keys.
//
// A row of up to WARP * WARP_ITEMS keys is read at once into registers (key j of a
// lane is element j * WARP + lane): the keys at or below the m-th smallest of the
// lanes' minima (those minima are m keys at or below it) are its candidates, and for
// most rows they are a few; when they are at most one a lane, they are laid out in
// index order and each ranked against the others (warp_row_at_once).
//
// Longer rows, and rows with more candidates than lanes (many ties), are streamed
// (warp_row_streamed): WARP * STREAM_ITEMS keys a step, the warp's best m so far kept
// in its shared-memory slots, sorted by key, then index. A step's candidates are the
// keys that beat the m-th best so far (all of them until the warp has m), cut to those
// at or below the step's m-th smallest lane minimum when they are too many for the
// slots; they go into the slots after the best, in index order, and every slot is
// ranked against the others; the first m stay. After the first steps few keys beat
// the m-th best, so a step costs little more than its read.
//
// In both, the slots' order among equal keys is their order by index (in a stream the
// best come first and hold lower indices; the new ones follow in index order), so
// ranking by (key, slot) ranks by (key, index): ties go to the lower index.
#pragma once
#include "common/stable_rank.cuh"

constexpr int WARPS_A_BLOCK = WARP_BLOCK / gp::WARP;
constexpr u32 SLOTS = 2 * gp::WARP;  // the best m (m <= WARP), then up to a lane's worth each
static_assert(WARP_K <= gp::WARP, "the best m and a ballot's candidates fit the slots");

// A warp's slots in shared memory: SLOTS keys (ordered patterns) and their indices.
struct Slots {
    U *key;
    u32 *index;
};

// Where a call's results go: values, indices (or null), and their length.
struct Out {
    U *values;
    u64 *indices;
    u64 len;
};

// The m-th smallest (from 1) of the lanes' patterns: rounds of a warp minimum, each
// setting aside the lanes that hold it.
__device__ __forceinline__ U mth_smallest(U v, u32 m) {
    for (;;) {
        const U least = gp::warp_min(v);
        const u32 holders = __popc(__ballot_sync(gp::FULL_MASK, v == least));
        if (holders >= m) return least;  // (all lanes hold the largest pattern at worst)
        m -= holders;
        if (v == least) v = U(~U(0));
    }
}

// A step of the row, keys [first, first + WARP * ITEMS) below `end`, into registers
// (key j of a lane is element first + j * WARP + lane) as ordered patterns; a missing
// key is the largest pattern, and marked, so it is never a candidate.
template <int ITEMS>
__device__ __forceinline__ void load_step(const U *row, u32 first, u32 end, const KeyOrder &order, u32 lane,
                                          U (&keys)[ITEMS], u32 &missing, U &lane_min) {
    lane_min = U(~U(0));
    missing = 0;
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
        const u32 at = first + j * gp::WARP + lane;
        keys[j] = at < end ? order.ordered(row[at]) : U(~U(0));
        if (at >= end) missing |= 1u << j;
        lane_min = keys[j] < lane_min ? keys[j] : lane_min;
    }
}

// Result `rank` of the row: the element at `at`, bit for bit, and its index.
__device__ __forceinline__ void write_result(const Row &r, u32 rank, u32 at, const U *row, const Out &out) {
    if (r.base + rank < out.len) {
        out.values[r.base + rank] = row[at];
        if (out.indices) out.indices[r.base + rank] = at;
    }
}

// Slots [0, total): each lane ranks slots lane and lane + WARP among them, and those
// ranked below m move to their rank. Returns how many the warp keeps.
// (One copy of it, not one a call site: the kernel stays small enough for its cache.)
__device__ __noinline__ u32 merge_slots(U *key, u32 *index, u32 total, u32 m, u32 lane) {
    __syncwarp();
    const u32 a = lane, b = lane + gp::WARP;
    const U ka = a < total ? key[a] : U(0), kb = b < total ? key[b] : U(0);
    const u32 ia = a < total ? index[a] : 0u, ib = b < total ? index[b] : 0u;
    u32 ra = 0, rb = 0;  // as gp::stable_rank, both slots in one pass over the slots
    for (u32 s = 0; s < total; ++s) {
        const U other = key[s];
        ra += other < ka || (other == ka && s < a);
        rb += other < kb || (other == kb && s < b);
    }
    __syncwarp();  // every slot read before any moves
    if (a < total && ra < m) key[ra] = ka, index[ra] = ia;
    if (b < total && rb < m) key[rb] = kb, index[rb] = ib;
    __syncwarp();
    return total < m ? total : m;
}

// The lanes of `lanes` append their key x (element at_index) in lane order from slot `at`.
__device__ __forceinline__ void append_slots(const Slots &slots, U x, u32 at_index, u32 lanes, u32 at, u32 lane) {
    if (lanes >> lane & 1) {
        const u32 slot = at + __popc(lanes & ((1u << lane) - 1));
        slots.key[slot] = x;
        slots.index[slot] = at_index;
    }
}

// One step: keys [first, first + WARP * ITEMS) below `end` merged into the warp's best
// `have`. Returns the new count.
template <int ITEMS>
__device__ __forceinline__ u32 warp_step(const U *row, u32 first, u32 end, u32 m, u32 have, const KeyOrder &order,
                                         const Slots &slots, u32 lane) {
    U *key = slots.key;
    u32 *index = slots.index;
    U keys[ITEMS], lane_min;
    u32 missing;
    load_step(row, first, end, order, lane, keys, missing, lane_min);
    // Once the warp has m, a key must beat the m-th: equal ones come after it.
    const bool full = have == m;
    const U worst = full ? key[m - 1] : U(0);
    u32 picked[ITEMS], total = 0;
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
        picked[j] = __ballot_sync(gp::FULL_MASK, !(missing >> j & 1) && (!full || keys[j] < worst));
        total += __popc(picked[j]);
    }
    if (have + total > SLOTS) {
        const U bound = mth_smallest(lane_min, m);
        total = 0;
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) {
            picked[j] &= __ballot_sync(gp::FULL_MASK, keys[j] <= bound);
            total += __popc(picked[j]);
        }
    }
    if (total == 0) return have;
    const bool at_once = have + total <= SLOTS;  // else many ties: a ballot at a time
    u32 at = have;
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
        append_slots(slots, keys[j], first + j * gp::WARP + lane, picked[j], at, lane);
        at += __popc(picked[j]);
        if (!at_once && picked[j]) at = merge_slots(key, index, at, m, lane);
    }
    return at_once ? merge_slots(key, index, at, m, lane) : at;
}

// Up to WARP candidates (picked[j]: the lanes whose key j is one) laid out in index
// order in the slots; each lane ranks the candidate of its slot against all of them
// and writes it if it is among the first m.
__device__ __forceinline__ void rank_candidates(const U (&keys)[WARP_ITEMS], const u32 (&picked)[WARP_ITEMS],
                                                u32 total, const Row &r, u32 m, const U *row, const Slots &slots,
                                                const Out &out) {
    const u32 lane = threadIdx.x % gp::WARP;
    u32 base = 0;
#pragma unroll
    for (int j = 0; j < WARP_ITEMS; ++j) {
        append_slots(slots, keys[j], j * gp::WARP + lane, picked[j], base, lane);
        base += __popc(picked[j]);
    }
    __syncwarp();
    if (lane >= total) return;
    const u32 rank = gp::stable_rank(slots.key, total, slots.key[lane], lane);
    if (rank < m) write_result(r, rank, slots.index[lane], row, out);
}

// A row of up to WARP * WARP_ITEMS keys at once, when its candidates are at most a
// lane's worth; false (nothing written) when they are more.
__device__ __forceinline__ bool warp_row_at_once(const U *row, const Row &r, u32 m, const KeyOrder &order,
                                                 const Slots &slots, const Out &out) {
    const u32 lane = threadIdx.x % gp::WARP;
    U keys[WARP_ITEMS], lane_min;
    u32 missing;
    load_step(row, 0, (u32)r.n, order, lane, keys, missing, lane_min);
    const U bound = mth_smallest(lane_min, m);
    u32 picked[WARP_ITEMS], total = 0;
#pragma unroll
    for (int j = 0; j < WARP_ITEMS; ++j) {
        picked[j] = __ballot_sync(gp::FULL_MASK, !(missing >> j & 1) && keys[j] <= bound);
        total += __popc(picked[j]);
    }
    if (total > gp::WARP) return false;
    rank_candidates(keys, picked, total, r, m, row, slots, out);
    return true;
}

// Any row, streamed through the warp's slots; its best m written from out[r.base] on.
__device__ __forceinline__ void warp_row_streamed(const U *row, const Row &r, u32 m, const KeyOrder &order,
                                                  const Slots &slots, const Out &out) {
    const u32 n = (u32)r.n, lane = threadIdx.x % gp::WARP;
    u32 have = 0;
    for (u32 first = 0; first < n; first += gp::WARP * STREAM_ITEMS)
        have = warp_step<STREAM_ITEMS>(row, first, n, m, have, order, slots, lane);
    if (lane < m) write_result(r, lane, slots.index[lane], row, out);
}
