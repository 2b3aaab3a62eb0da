// Device-wide selection: the element of rank k (select_kth) and the k smallest with
// their indices (top-k), without sorting the input.
//
//   select_pivots      one block samples 16384 (or 4096) keys at spread, hashed positions and
//                      picks two of them, lo and hi, that bracket rank k with high
//                      probability (common/block_radix_select.cuh);
//   select_band        one read of the input: counts the keys below lo, equal to lo and
//                      equal to hi, and copies the keys strictly between them (with
//                      their indices, for top-k) to scratch, in input order
//                      (common/ordered_compact.cuh);
//   select_settle      one thread: where rank k fell. Equal to lo or hi: done. Between:
//                      the candidates hold it. Outside (the sample misled us) or more
//                      candidates than scratch holds: the whole input is searched;
//   select_digit_pass  one launch per digit, most significant first, over that source:
//                      a histogram of the digit among keys matching the prefix chosen
//                      so far; the last block to finish keeps the bucket holding the
//                      rank (common/radix_bucket.cuh);
//   select_topk_gather one read of the source: the keys below the k-th and the first
//                      ties (lowest indices), written in input order; the host then
//                      sorts those k stably, so ties stay in index order.
//
// Keys are compared as ordered patterns (common/radix_key.cuh), so one module serves
// every dtype of a width; top-k DESCENDING complements the patterns and takes the
// smallest. The host issues the same launches whatever the data; what each does is
// decided on the device from SelectState, so nothing waits but the final read.
//
// Instantiated per key width and float-ness: -DGP_KEY_BYTES -DGP_KEY_FLOAT
// -DGP_BLOCK_THREADS -DGP_ITEMS -DGP_LOOKBACK_WINDOW (src/backend/cuda/select.rs).
#include "common/types.cuh"
#include "common/radix_key.cuh"
#include "common/block_radix_select.cuh"
#include "common/ordered_compact.cuh"
#include "common/block_radix_sort.cuh"

typedef gp::BitsOf<GP_KEY_BYTES>::type U;
typedef gp::KeyOrder<U, GP_KEY_FLOAT != 0> KeyOrder;
constexpr int BLOCK = GP_BLOCK_THREADS;
constexpr int ITEMS = GP_ITEMS;
constexpr int WINDOW = GP_LOOKBACK_WINDOW;
constexpr int RADIX_BITS = 8;
constexpr int RADIX = 1 << RADIX_BITS;
constexpr int TOP_SHIFT = GP_KEY_BYTES * 8 - RADIX_BITS;  // the most significant digit
constexpr int SAMPLE_BLOCK = 1024;

// Band flags, from the host.
constexpr u32 LO_OPEN = 1;   // no lower bound: every key below hi is a candidate
constexpr u32 HI_OPEN = 2;   // no upper bound
constexpr u32 NO_BAND = 4;   // no sample and no band: search the input itself
constexpr u32 WRITE_RESULT = 8;  // select_kth: write the element to `out`

// Where the digit passes look.
constexpr u32 SOURCE_DONE = 0;        // nothing left: the answer is `prefix`
constexpr u32 SOURCE_CANDIDATES = 1;  // the band's copy
constexpr u32 SOURCE_INPUT = 2;       // the whole input

// One call's state, zeroed by the host before the first launch.
struct SelectState {
    u64 lo, hi;                      // the band's bounds (ordered patterns)
    u64 below, eq_lo, eq_hi;         // keys < lo, == lo, == hi (hi != lo)
    u64 between;                     // keys strictly inside: the candidates (may exceed capacity)
    u64 band_ticket, gather_ticket;  // tile tickets of the two ordered passes
    u64 digit_ticket;                // blocks done with the current digit
    u32 source, gather_source;
    u64 rank;    // the answer's rank among the source's keys that match prefix
    u64 less;    // keys of the whole input below every key matching prefix
    u64 prefix, mask;
    u64 counts[RADIX];  // the current digit's histogram
};

__device__ __forceinline__ void finish(SelectState *st, U answer, u32 flags, u32 key_order, U *out) {
    st->source = SOURCE_DONE;
    st->prefix = answer;
    st->mask = ~0ull;
    if (flags & WRITE_RESULT) *out = KeyOrder(key_order).raw(answer);
}

// A cheap integer hash: picks a position inside each sample's stratum.
__device__ __forceinline__ u64 mix(u64 x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

// One block, ITEMS samples a thread, n >= 1024 * ITEMS. Sample s is drawn from
// [s n / S, (s + 1) n / S), so sorted or periodic inputs are sampled evenly.
template <int ITEMS>
__device__ __forceinline__ void pick_pivots(const U *in, usize n, SelectState *st, u32 rank_lo, u32 rank_hi, u32 key_order) {
    typedef gp::BlockRadixSelect<U, SAMPLE_BLOCK, ITEMS, 2, RADIX_BITS> Select;
    constexpr u32 S = SAMPLE_BLOCK * ITEMS;
    __shared__ typename Select::Storage storage;
    const KeyOrder order(key_order);
    const usize whole = n / S, part = n % S;
    U keys[ITEMS];
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
        const u64 s = (u64)j * SAMPLE_BLOCK + threadIdx.x;
        const usize from = s * whole + s * part / S;
        const usize to = (s + 1) * whole + (s + 1) * part / S;
        keys[j] = order.ordered(in[from + mix(s) % (to - from)]);
    }
    const u32 ranks[2] = {rank_lo, rank_hi};
    U bounds[2];
    Select::select(keys, ranks, bounds, storage);
    if (threadIdx.x == 0) {
        st->lo = bounds[0];
        st->hi = bounds[1];
    }
}

// 16384 samples (large inputs: a narrow band) or 4096 (smaller ones: a cheaper sample).
extern "C" __global__ void __launch_bounds__(SAMPLE_BLOCK)
select_pivots(const U *in, usize n, SelectState *st, u32 rank_lo, u32 rank_hi, u32 key_order) {
    pick_pivots<16>(in, n, st, rank_lo, rank_hi, key_order);
}

extern "C" __global__ void __launch_bounds__(SAMPLE_BLOCK)
select_pivots_small(const U *in, usize n, SelectState *st, u32 rank_lo, u32 rank_hi, u32 key_order) {
    pick_pivots<4>(in, n, st, rank_lo, rank_hi, key_order);
}

typedef gp::OrderedCompact<U, BLOCK, ITEMS, WINDOW> Compact;

// The band's pick: keys strictly between lo and hi are kind 1 (copied to the
// candidates); keys below lo, equal to lo and equal to hi are counted.
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
};

// Adds each thread's count into *total, one atomic per warp.
__device__ __forceinline__ void add_counts(u64 v, u64 *total) {
    v = gp::warp_reduce(v, gp::SumOp<u64>());
    if (threadIdx.x % gp::WARP == 0 && v) atomicAdd((unsigned long long *)total, (unsigned long long)v);
}

constexpr usize TILE = (usize)BLOCK * ITEMS;
constexpr int VECS = ITEMS * sizeof(U) / 16;  // 16-byte loads a thread a tile

// Each thread reads its own ITEMS consecutive keys from `first` straight into
// registers, all loads in flight at once (no staging, nothing to wait for), and keeps
// only a bit per key: picked or not. The few picked keys are read again to be copied.
__device__ __forceinline__ u64 pick_keys(const U *in, usize n, usize first, bool aligned, BandPick &pick) {
    constexpr int PER_VEC = 16 / sizeof(U);
    u64 picked = 0;
    if (aligned && first + ITEMS <= n) {
        gp::Vec16 v[VECS];
#pragma unroll
        for (int j = 0; j < VECS; ++j) v[j] = *reinterpret_cast<const gp::Vec16 *>(in + first + j * PER_VEC);
#pragma unroll
        for (int j = 0; j < VECS; ++j) {
            U x[PER_VEC];
            memcpy(x, &v[j], sizeof(x));
#pragma unroll
            for (int e = 0; e < PER_VEC; ++e) picked |= (u64)pick.kind(x[e]) << (j * PER_VEC + e);
        }
    } else {
        for (int at = 0; at < ITEMS && first + at < n; ++at) picked |= (u64)pick.kind(in[first + at]) << at;
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

// The end of a band launch: the block's top-digit counts and side counts go out.
__device__ __forceinline__ void flush_band_counts(const BandPick &pick, const u32 *top, SelectState *st) {
    __syncthreads();
    for (int d = threadIdx.x; d < RADIX; d += BLOCK)
        if (top[d]) atomicAdd((unsigned long long *)&st->counts[d], (unsigned long long)top[d]);
    add_counts(pick.below, &st->below);
    add_counts(pick.eq_lo, &st->eq_lo);
    add_counts(pick.eq_hi, &st->eq_hi);
}

// Reserves a tile's run of candidates once its count is known (run by the first warp
// inside the block scan): one atomic on the running total, and the run noted by tile
// (offset low, count high) so top-k can put the runs back in input order.
struct ReserveRun {
    u64 *total, *run;
    u64 *base;  // shared: where this tile's run starts
    template <class Op>
    __device__ __forceinline__ gp::BlockPrefix<u32> operator()(u32 count, Op) const {
        if (threadIdx.x == 0) {
            const u64 at = count ? atomicAdd((unsigned long long *)total, (unsigned long long)count) : 0;
            *run = (at < 0xffffffffull ? at : 0xffffffffull) | (u64)count << 32;
            *base = at;
        }
        return {0, false};
    }
};

// One read of the input. Tiles are dealt out statically (no ticket, no look-back):
// the runs land wherever the atomic puts them, in input order within a tile.
extern "C" __global__ void __launch_bounds__(BLOCK)
select_band(const U *in, usize n, SelectState *st, U *cand, u64 *cand_index, u64 *runs, usize capacity, u32 flags,
            u32 key_order) {
    typedef gp::BlockScan<u32, BLOCK> Scan;
    __shared__ typename Scan::Storage scan;
    __shared__ u64 base;
    __shared__ u32 top[RADIX];  // the candidates' top digit, so no digit pass reads them for it
    if (flags & NO_BAND) return;
    for (int d = threadIdx.x; d < RADIX; d += BLOCK) top[d] = 0;
    BandPick pick{KeyOrder(key_order), U(st->lo), U(st->hi), (flags & LO_OPEN) != 0, (flags & HI_OPEN) != 0, 0, 0, 0};
    const usize tiles = (n + TILE - 1) / TILE;
    const bool aligned = gp::aligned16(in);
    for (usize tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        const usize first = tile * TILE + (usize)threadIdx.x * ITEMS;
        const u64 picked = pick_keys(in, n, first, aligned, pick);
        u32 before;
        Scan::exclusive((u32)__popcll(picked), before, gp::SumOp<u32>(), scan, ReserveRun{&st->between, runs + tile, &base});
        copy_picks(in, first, picked, base + before, cand, cand_index, capacity, pick.order, top);
        __syncthreads();  // `base` and the scan storage are reused
    }
    flush_band_counts(pick, top, st);
}

// Top-k needs the candidates in input order (ties go by index). One block: each
// tile's place in input order, by a scan of the run counts in tile order, a chunk of
// 1024 * PER runs at a time (each thread's PER loaded at once).
extern "C" __global__ void __launch_bounds__(1024)
select_order_runs(const SelectState *st, u64 *runs, usize tiles, usize capacity) {
    constexpr int PER = 8;
    typedef gp::BlockScan<u64, 1024> Scan;
    __shared__ typename Scan::Storage scan;
    __shared__ u64 chunk_end;
    if (st->between > capacity) return;  // settle falls back to the input
    u64 carry = 0;
    for (usize chunk = 0; chunk < tiles; chunk += 1024 * PER) {
        const usize first = chunk + (usize)threadIdx.x * PER;
        u64 run[PER], mine = 0;
#pragma unroll
        for (int j = 0; j < PER; ++j) {
            run[j] = first + j < tiles ? runs[first + j] : 0;
            mine += run[j] >> 32;
        }
        u64 at;
        Scan::exclusive(mine, at, gp::SumOp<u64>(), scan, gp::NoPrefix());
        at += carry;
#pragma unroll
        for (int j = 0; j < PER; ++j) {
            if (first + j < tiles) runs[first + j] = (run[j] & 0xffffffffull) | at << 32;  // reserved low, ordered high
            at += run[j] >> 32;
        }
        if (threadIdx.x == 1023) chunk_end = at;
        __syncthreads();
        carry = chunk_end;
        __syncthreads();
    }
}

// Moves each tile's run from where it was reserved to its place in input order; a
// warp a run. Its count is the gap to the next run's ordered offset (or the total).
extern "C" __global__ void __launch_bounds__(BLOCK)
select_move_runs(const SelectState *st, const u64 *runs, usize tiles, usize capacity, const U *cand, const u64 *cand_index,
                 U *ordered, u64 *ordered_index) {
    const u64 total = st->between;
    if (total > capacity) return;
    const usize warps = (usize)gridDim.x * (BLOCK / gp::WARP);
    for (usize t = (usize)blockIdx.x * (BLOCK / gp::WARP) + threadIdx.x / gp::WARP; t < tiles; t += warps) {
        const u64 from = runs[t] & 0xffffffffull, to = runs[t] >> 32;
        const u64 end = t + 1 < tiles ? runs[t + 1] >> 32 : total;
        for (u64 i = threadIdx.x % gp::WARP; i < end - to; i += gp::WARP) {
            ordered[to + i] = cand[from + i];
            if (ordered_index) ordered_index[to + i] = cand_index[from + i];
        }
    }
}

// Where rank k fell, from the band's counts (one thread).
__device__ __forceinline__ void settle_rank(SelectState *st, u64 k, usize capacity, u32 flags, u32 key_order, U *out) {
    u64 r = k;
    const u64 below = st->below, eq_lo = st->eq_lo, between = st->between, eq_hi = st->eq_hi;
    st->source = st->gather_source = SOURCE_INPUT;  // unless the band holds rank k
    st->rank = k;
    if (flags & NO_BAND) return;
    if (r < below) return;
    r -= below;
    if (r < eq_lo) {
        st->less = below;
        return finish(st, U(st->lo), flags, key_order, out);
    }
    r -= eq_lo;
    if (r < between) {
        if (between <= capacity) {
            st->source = st->gather_source = SOURCE_CANDIDATES;
            st->rank = r;
            st->less = below + eq_lo;
        }
        return;
    }
    r -= between;
    if (r < eq_hi) {
        st->less = below + eq_lo + between;
        return finish(st, U(st->hi), flags, key_order, out);  // ties of hi are not candidates: gather reads the input
    }
}

// One warp: settles where rank k fell; when the candidates hold it, also takes the
// top digit's bucket from the histogram the band counted. The histogram is cleared
// for the digit passes either way.
extern "C" __global__ void __launch_bounds__(gp::WARP)
select_settle(SelectState *st, u64 k, usize capacity, u32 flags, u32 key_order, U *out) {
    if (threadIdx.x == 0) settle_rank(st, k, capacity, flags, key_order, out);
    __syncwarp();
    if (st->source == SOURCE_CANDIDATES) {
        const gp::Bucket<u64> b = gp::find_bucket<u64, RADIX>(st->counts, st->rank);
        if (threadIdx.x == 0) {
            st->prefix = (u64)b.digit << TOP_SHIFT;
            st->mask = (u64)(RADIX - 1) << TOP_SHIFT;
            st->rank -= b.before;
            st->less += b.before;
        }
    }
    __syncwarp();
    for (int d = threadIdx.x; d < RADIX; d += gp::WARP) st->counts[d] = 0;
}

// Visits src[0, count) a 16-byte vector at a time where it can.
template <class Visit>
__device__ __forceinline__ void for_each_key(const U *src, usize count, Visit &visit) {
    constexpr int PER_VEC = 16 / sizeof(U);
    const usize stride = (usize)gridDim.x * BLOCK;
    usize done = 0;
    if (gp::aligned16(src)) {
        const usize vecs = count / PER_VEC;
        for (usize v = (usize)blockIdx.x * BLOCK + threadIdx.x; v < vecs; v += stride) {
            const gp::Vec16 w = gp::load_vec16_streaming(src + v * PER_VEC);
            U x[PER_VEC];
            memcpy(x, &w, sizeof(x));
#pragma unroll
            for (int j = 0; j < PER_VEC; ++j) visit(x[j]);
        }
        done = vecs * PER_VEC;
    }
    for (usize i = done + (usize)blockIdx.x * BLOCK + threadIdx.x; i < count; i += stride) visit(src[i]);
}

struct DigitCount {
    KeyOrder order;
    U prefix, mask;
    int shift;
    u32 *counts;
    __device__ __forceinline__ void operator()(U x) const {
        const U u = order.ordered(x);
        if (((u ^ prefix) & mask) == 0) atomicAdd(&counts[u32(u >> shift) & (RADIX - 1)], 1u);
    }
};

extern "C" __global__ void __launch_bounds__(BLOCK)
select_digit_pass(const U *in, usize n, SelectState *st, const U *cand, u32 shift, u32 flags, u32 key_order, U *out) {
    __shared__ u32 counts[RADIX];
    __shared__ u64 totals[RADIX];
    __shared__ bool last;
    const u32 source = st->source;
    if (source == SOURCE_DONE) return;
    if (source == SOURCE_CANDIDATES && shift == TOP_SHIFT) return;  // settle took it from the band's count
    for (int d = threadIdx.x; d < RADIX; d += BLOCK) counts[d] = 0;
    __syncthreads();
    DigitCount visit{KeyOrder(key_order), U(st->prefix), U(st->mask), (int)shift, counts};
    if (source == SOURCE_CANDIDATES) for_each_key(cand, st->between, visit);
    else for_each_key(in, n, visit);
    __syncthreads();
    for (int d = threadIdx.x; d < RADIX; d += BLOCK)
        if (counts[d]) atomicAdd((unsigned long long *)&st->counts[d], (unsigned long long)counts[d]);
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) last = atomicAdd((unsigned long long *)&st->digit_ticket, 1ull) == gridDim.x - 1;
    __syncthreads();
    if (!last) return;

    // The last block: every count has landed.
    __threadfence();
    for (int d = threadIdx.x; d < RADIX; d += BLOCK) {
        totals[d] = __ldcg(&st->counts[d]);
        st->counts[d] = 0;  // ready for the next digit
    }
    __syncthreads();
    if (threadIdx.x >= gp::WARP) return;
    const u64 rank = st->rank;
    const gp::Bucket<u64> b = gp::find_bucket<u64, RADIX>(totals, rank);
    if (threadIdx.x == 0) {
        const U prefix = U(st->prefix | (u64)b.digit << shift);
        st->rank = rank - b.before;
        st->less += b.before;
        st->digit_ticket = 0;
        if (shift == 0) {
            finish(st, prefix, flags, key_order, out);
        } else {
            st->prefix = prefix;
            st->mask |= (u64)(RADIX - 1) << shift;
        }
    }
}

// The gather's pick: keys below the k-th are kind 1, its ties kind 2; a tie is kept
// while fewer than `need` ties came before it.
struct GatherPick {
    KeyOrder order;
    U kth;
    u64 need;
    const u64 *index;  // the candidates' input indices; NULL: the source is the input
    U *out;
    u64 *out_index;

    __device__ __forceinline__ u32 kind(U x) const {
        const U u = order.ordered(x);
        return u < kth ? 1 : u == kth ? 2 : 0;
    }
    __device__ __forceinline__ void emit(U x, usize i, u32 kind, u64 before) const {
        const u64 lt = gp::CountPairSum::low(before), eq = gp::CountPairSum::high(before);
        if (kind == 2 && eq >= need) return;
        const u64 at = lt + (eq < need ? eq : need);
        out[at] = x;
        if (out_index) out_index[at] = index ? index[i] : i;
    }
};

extern "C" __global__ void __launch_bounds__(BLOCK)
select_topk_gather(const U *in, usize n, SelectState *st, const U *cand, const u64 *cand_index, u64 k, U *out,
                   u64 *out_index, u32 key_order, u64 *aggregate, u64 *inclusive, u32 epoch) {
    __shared__ typename Compact::Storage storage;
    const bool from_candidates = st->gather_source == SOURCE_CANDIDATES;
    GatherPick pick{KeyOrder(key_order), U(st->prefix), k - st->less, from_candidates ? cand_index : nullptr, out, out_index};
    Compact::run(from_candidates ? cand : in, from_candidates ? st->between : n,
                 gp::TileState{aggregate, inclusive, &st->gather_ticket}, epoch, pick, storage);
}

// Top-k's last step when k is small: one block sorts the k gathered keys (stably, so
// ties keep index order) with their indices, in place. Each element is read from the
// outputs before any is written.
constexpr int SMALL_ITEMS = 8;  // so k <= BLOCK * 8 (src/backend/cuda/select.rs: SMALL_ITEMS)

extern "C" __global__ void __launch_bounds__(BLOCK)
select_sort_small(U *values, u64 *indices, u32 k, u32 key_order) {
    typedef gp::BlockRadixSort<U, BLOCK, SMALL_ITEMS> Sort;
    __shared__ typename Sort::Storage storage;
    const KeyOrder order(key_order);
    U keys[SMALL_ITEMS];
    u32 from[SMALL_ITEMS];
#pragma unroll
    for (int j = 0; j < SMALL_ITEMS; ++j) {
        const u32 e = Sort::element(j);
        keys[j] = e < k ? order.ordered(values[e]) : U(~U(0));
        from[j] = e;
    }
    Sort::sort(keys, from, k, storage);
    U v[SMALL_ITEMS];
    u64 ix[SMALL_ITEMS];
#pragma unroll
    for (int j = 0; j < SMALL_ITEMS; ++j) {
        const u32 i = threadIdx.x + j * BLOCK;
        if (i < k) {
            const u32 e = storage.payload[i];
            v[j] = values[e];
            if (indices) ix[j] = indices[e];
        }
    }
    __syncthreads();  // every element read before any is overwritten
#pragma unroll
    for (int j = 0; j < SMALL_ITEMS; ++j) {
        const u32 i = threadIdx.x + j * BLOCK;
        if (i < k) {
            values[i] = v[j];
            if (indices) indices[i] = ix[j];
        }
    }
}
