// Decoupled look-back (Merrill & Garland) with a fixed combination order.
//
// Every tile publishes its aggregate as soon as it has it; every WINDOW-th tile is an
// anchor and also publishes its inclusive prefix. The exclusive prefix of tile i > 0 is
//     inclusive(a) op agg(a+1) op ... op agg(i-1),   a = the last anchor before i,
// folded in a tree fixed by i alone, so float scans repeat bit for bit (a look-back
// that stops at whichever predecessor happens to be ready would not). Anchors chain,
// but WINDOW tiles apart: each link has a window's worth of time to land, so latency
// does not pile up along the input.
//
// One warp looks back: lane l reads predecessors l*PER .. l*PER+PER-1 of the window,
// all loads in flight at once, so a tile waits about one round trip.
//
// Published values travel as epoch-tagged words (common/tagged.cuh): no fence, one
// round trip per read, and no clearing between runs.
//
// Tiles take their index from a ticket counter (index = ticket - base), so every tile
// a block waits on belongs to a block that is already running.
#pragma once
#include "common/block_scan.cuh"
#include "common/tagged.cuh"
#include "common/warp.cuh"

namespace gp {

// Where the tiles of one run publish, in the zeroed, epoch-tagged sync memory.
struct TileState {
    u64 *aggregate;  // Tagged words, one value per tile
    u64 *inclusive;  // Tagged words, one value per anchor
    u64 *ticket;     // monotone counter shared by all runs
};

template <class T, int WINDOW>
struct LookBack {
    static_assert(WINDOW % WARP == 0, "a window is whole warps of tiles");
    static constexpr int PER = WINDOW / WARP;  // predecessors per lane
    static constexpr int WORDS = Tagged<T>::WORDS;

    // One thread: the tile's aggregate; tile 0 is also anchor 0, complete with it.
    __device__ __forceinline__ static void publish_aggregate(const TileState &st, u32 tile, T aggregate, u32 epoch) {
        Tagged<T>::publish(st.aggregate + (usize)tile * WORDS, aggregate, epoch);
        if (tile == 0) Tagged<T>::publish(st.inclusive, aggregate, epoch);
    }

    // One whole warp, for tile > 0: every lane receives the exclusive prefix. An
    // anchor also publishes its inclusive prefix.
    template <class Op>
    __device__ __forceinline__ static T exclusive_prefix(const TileState &st, u32 tile, T aggregate, u32 epoch, Op op) {
        const u32 lane = threadIdx.x % WARP;
        const u32 anchor = (tile - 1) / WINDOW * WINDOW;
        const u32 first = anchor + 1, count = tile - first;  // predecessors after the anchor
        const u64 *base_slot = st.inclusive + (usize)(anchor / WINDOW) * WORDS;
        const u64 *pred_slot = st.aggregate + ((usize)first + lane * PER) * WORDS;

        Tagged<T> base, pred[PER];
        base.issue(base_slot);
#pragma unroll
        for (int k = 0; k < PER; ++k)
            if (lane * PER + k < count) pred[k].issue(pred_slot + k * WORDS);
        for (;;) {
            bool ok = base.ready(epoch);
#pragma unroll
            for (int k = 0; k < PER; ++k) ok = ok && (lane * PER + k >= count || pred[k].ready(epoch));
            if (ok) break;
            __nanosleep(32);
            if (!base.ready(epoch)) base.issue(base_slot);
#pragma unroll
            for (int k = 0; k < PER; ++k)
                if (lane * PER + k < count && !pred[k].ready(epoch)) pred[k].issue(pred_slot + k * WORDS);
        }

        T mine = Op::identity();
#pragma unroll
        for (int k = 0; k < PER; ++k)
            if (lane * PER + k < count) mine = op(mine, pred[k].value());
        const T between = warp_reduce(mine, op);
        const T prefix = count == 0 ? base.value() : op(base.value(), between);
        if (tile % WINDOW == 0 && lane == 0)
            Tagged<T>::publish(st.inclusive + (usize)(tile / WINDOW) * WORDS, op(prefix, aggregate), epoch);
        return prefix;
    }
};

// A tile's prefix source for BlockScan::exclusive (common/block_scan.cuh): publishes
// the tile's total, then looks back; tile 0 has no prefix.
template <class T, int WINDOW>
struct TilePrefix {
    TileState st;
    u32 tile, epoch;
    template <class Op>
    __device__ __forceinline__ BlockPrefix<T> operator()(T total, Op op) const {
        if (threadIdx.x == 0) LookBack<T, WINDOW>::publish_aggregate(st, tile, total, epoch);
        if (tile == 0) return {Op::identity(), false};
        return {LookBack<T, WINDOW>::exclusive_prefix(st, tile, total, epoch, op), true};
    }
};

}  // namespace gp
