// The band's pieces (kernels/select.cu's select_band, select_band_closed and
// select_band_warps, which include this after defining U, KeyOrder, BLOCK, ITEMS and the
// select state): what a key is to the band (BandPick), a thread's keys read and picked
// (screened first where the band is open below), the picks copied to the candidates (or
// to a warp's slots), the counts flushed, a tile's run reserved, and the last block's
// placing of every block's candidates in input order.
#pragma once
#include "common/closed_band.cuh"
#include "common/warp_slots.cuh"

// The band's pick: keys strictly between lo and hi are kind 1 (copied to the
// candidates); keys below lo, equal to lo and equal to hi are counted. A closed band's
// (kind_closed) copies every key in [lo, hi] and counts those below.
struct BandPick {
    KeyOrder order;
    U lo, hi;
    bool lo_open, hi_open;
    u32 below, eq_lo, eq_hi;  // this thread's counts: at most n / (grid * BLOCK)

    __device__ __forceinline__ bool kind(U x) {
        const U u = order.ordered(x);
        const bool above_lo = lo_open || u > lo, below_hi = hi_open || u < hi;
        below += !above_lo && u < lo;
        eq_lo += !lo_open && u == lo;
        eq_hi += !hi_open && u == hi && (lo_open || u != lo);
        return above_lo && below_hi;
    }

    // A closed band's kind(): one count and one range test a key, where kind() has
    // three counts and two tests (lo < hi: the sample's bounds differ, bounds_unique;
    // NAN_FREE as common/closed_band.cuh says).
    template <bool NAN_FREE>
    __device__ __forceinline__ bool kind_closed(U x) {
        return gp::in_closed_band<NAN_FREE>(order, x, lo, hi, below);
    }

    // kind() where the band is open below and closed above (the screened band's).
    __device__ __forceinline__ bool kind_open_below(U x) {
        const U u = order.ordered(x);
        eq_hi += u == hi;
        return u < hi;
    }
};

// Adds each thread's count into *total, one atomic per warp.
__device__ __forceinline__ void add_counts(u64 v, u64 *total) {
    v = gp::warp_reduce(v, gp::SumOp<u64>());
    if (threadIdx.x % gp::WARP == 0 && v) atomicAdd((unsigned long long *)total, (unsigned long long)v);
}

constexpr usize TILE = (usize)BLOCK * ITEMS;
constexpr int VECS = ITEMS * sizeof(U) / 16;  // 16-byte loads a thread a tile

// Each thread's ITEMS consecutive keys of a tile, picked a bit a key (common/key_row.cuh).
typedef gp::KeyRow<U, VECS> Row;
static_assert(Row::ITEMS == ITEMS, "a row is a thread's keys of a tile");

__device__ __forceinline__ u64 pick_vectors(const gp::Vec16 (&v)[VECS], BandPick &pick) {
    return Row::pick_each(v, [&](U x) { return pick.kind(x); });
}

// (-DGP_BAND_SCREEN=1, knob select.band_screen; keys of 2 and 4 bytes) A band open
// below picks the keys up to hi, few for a small k (a few in ten thousand for the top
// 100 of 2^28; 1 in 256 for the top 2^20): a thread's loaded words are
// screened first, a few instructions for all its keys (common/ordered_screen.cuh),
// and only the keys the screen passes are picked exactly. A key it does not pass is
// above hi, which the exact pick neither copies nor counts.
constexpr bool SCREEN_KEYS = GP_BAND_SCREEN != 0 && (sizeof(U) == 2 || sizeof(U) == 4);
typedef gp::OrderedScreen<U, GP_KEY_FLOAT != 0> Screen;

template <class S>  // Screen (a template, so modules of other widths never instantiate it)
__device__ __forceinline__ u64 pick_screened(const gp::Vec16 (&v)[VECS], BandPick &pick, const S &screen) {
    u32 w[VECS * 4];
    Row::words(v, w);
    if (!screen.any_passes(w)) return 0;
    return Row::pick_each(v, [&](U x) { return screen.passes(x) && pick.kind_open_below(x); });
}

// How a band block picks: every key exactly (kind), raw words screened first (a band
// open below: pick_screened), or a closed band's (kind_closed).
enum class BandMode { EXACT, SCREENED, CLOSED };

// The picks of keys loaded whole (CLOSED: select_band_closed's modes, CLOSED and
// EXACT; else SCREENED and EXACT).
template <bool CLOSED, class S>
__device__ __forceinline__ u64 pick_loaded(const gp::Vec16 (&v)[VECS], BandPick &pick, const S &screen, BandMode mode) {
    if constexpr (CLOSED) {
        if (mode == BandMode::CLOSED) {
            if (!gp::any_negative_nan(v, pick.order)) return Row::pick_each(v, [&](U x) { return pick.template kind_closed<true>(x); });
            return Row::pick_each(v, [&](U x) { return pick.template kind_closed<false>(x); });
        }
    } else if constexpr (SCREEN_KEYS) {
        if (mode == BandMode::SCREENED) return pick_screened(v, pick, screen);
    }
    return pick_vectors(v, pick);
}

template <bool CLOSED>
__device__ __forceinline__ u64 pick_keys(const U *in, usize n, usize first, bool aligned, BandPick &pick, const Screen &screen,
                                         BandMode mode) {
    if (Row::whole(n, first, aligned)) {
        gp::Vec16 v[VECS];
        Row::load(in, first, v);
        return pick_loaded<CLOSED>(v, pick, screen, mode);
    }
    u64 picked = 0;
    for (int at = 0; at < ITEMS && first + at < n; ++at) {
        const U x = in[first + at];
        picked |= (u64)(CLOSED && mode == BandMode::CLOSED ? pick.template kind_closed<false>(x) : pick.kind(x)) << at;
    }
    return picked;
}

// Copies the keys picked from `first` on to the candidates from `to` on, and counts
// their top digit.
__device__ __forceinline__ void copy_picks(const U *in, usize first, u64 picked, u64 to, U *cand, u64 *cand_index,
                                           usize capacity, const KeyOrder &order, u32 *top) {
    for (u64 left = picked; left; left &= left - 1, ++to) {
        const int at = __ffsll((long long)left) - 1;
        const U x = in[first + at];
        if (to < capacity) {
            cand[to] = x;
            if (cand_index) cand_index[to] = first + at;
        }
        atomicAdd(&top[u32(order.ordered(x) >> TOP_SHIFT) & (RADIX - 1)], 1u);
    }
}

// The end of a band launch: the block's top-digit counts (where it counted them:
// TOP_COUNTED) and side counts go out.
template <bool TOP_COUNTED>
__device__ __forceinline__ void flush_band_counts(const BandPick &pick, const u32 *top, SelectState *st) {
    __syncthreads();
    if (TOP_COUNTED)
        for (int d = threadIdx.x; d < RADIX; d += BLOCK)
            if (top[d]) atomicAdd((unsigned long long *)&st->counts[d], (unsigned long long)top[d]);
    add_counts(pick.below, &st->below);
    add_counts(pick.eq_lo, &st->eq_lo);
    add_counts(pick.eq_hi, &st->eq_hi);
}

__device__ __forceinline__ u64 clamp32(u64 v) { return v < 0xffffffffull ? v : 0xffffffffull; }

// Reserves a tile's run of candidates once its count is known (run by the first warp
// inside the block scan): one atomic on the running total, and the run noted by tile
// (where it was reserved low, the block's candidates before it high) so top-k can put
// the runs back in input order. Past 2^32 - 1 the numbers are clamped: the candidates
// then overflow the scratch and top-k reads the input instead.
struct ReserveRun {
    u64 *total, *run;
    u64 *base;   // shared: where this tile's run starts
    u64 *taken;  // shared, thread 0's: the block's candidates before this tile
    template <class Op>
    __device__ __forceinline__ gp::BlockPrefix<u32> operator()(u32 count, Op) const {
        if (threadIdx.x == 0) {
            const u64 at = count ? atomicAdd((unsigned long long *)total, (unsigned long long)count) : 0;
            *run = clamp32(at) | clamp32(*taken) << 32;
            *taken += count;
            *base = at;
        }
        return {0, false};
    }
};

// A block scan's prefix that runs on from one chunk to the next (called by the first
// warp; `carry` is shared).
struct RunningPrefix {
    u64 *carry;
    template <class Op>
    __device__ __forceinline__ gp::BlockPrefix<u64> operator()(u64 total, Op) const {
        const u64 before = *carry;
        __syncwarp();  // every lane has read it before lane 0 moves it on
        if (threadIdx.x == 0) *carry = before + total;
        return {before, true};
    }
};

// Top-k, in the band's last block: each block's count of candidates (`starts`, one a
// block) replaced by where its candidates start in input order (the tiles are dealt
// out in contiguous shares, in block order).
template <class Scan>
__device__ __forceinline__ void place_blocks(u64 *starts, u32 blocks, typename Scan::Storage &storage, u64 &carry) {
    if (threadIdx.x == 0) carry = 0;
    for (u32 first = 0; first < blocks; first += BLOCK) {
        const u32 b = first + threadIdx.x;
        const u64 count = b < blocks ? __ldcg(&starts[b]) : 0;
        u64 at;
        Scan::exclusive(count, at, gp::SumOp<u64>(), storage, RunningPrefix{&carry});
        if (b < blocks) starts[b] = at;
        __syncthreads();  // the storage and carry are reused
    }
}
