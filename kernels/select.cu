// Device-wide selection: the element of rank k (select_kth), and the first steps of
// top-k, without sorting the input.
//
//   select_pivots      one block zeroes the call's state, samples 16384 keys
//                      (select_pivots_small: 4096) at spread, hashed positions and picks
//                      two of them, lo and hi, that bracket rank k with high probability
//                      (common/block_radix_select.cuh);
//   select_band        one read of the input, each block a contiguous share of the
//                      tiles (a band open below, of 2- or 4-byte keys: raw words
//                      screened first, common/ordered_screen.cuh): counts the keys
//                      below lo, equal to lo and equal to hi, copies the keys strictly
//                      between them (with their indices, for top-k) to scratch (one
//                      atomic a tile reserves the tile's run, noted with its place
//                      among the block's, so top-k can restore input order), and
//                      counts the copies' top digit; select_kth's band closed both
//                      ends, where the sample held each bound once, counts the keys
//                      below lo and copies those in [lo, hi] (a count and a range
//                      test a key); its last block to finish settles (below) and, for
//                      top-k, places each block's candidates in input order (a scan
//                      of the blocks' counts); its pieces in select_band.cuh;
//   select_band_warps  select_kth's closed band from 2^27 f32 or 2^28 4-byte integer
//                      keys: each warp places its picks in slots reserved a chunk at
//                      a time (common/warp_slots.cuh; unused slots hold hi and are
//                      counted), no block scan, and the top digit is left to the digit
//                      passes (flag BAND_BY_WARP);
//   select_settle      (the same settling alone, when there is no band) one warp: where
//                      rank k fell. Equal to lo or hi (a band that counted them): done. Between:
//                      the candidates hold it, and the top digit's bucket is taken from
//                      the band's count. Outside (the sample misled us) or more
//                      candidates than scratch holds: the whole input is searched;
//   select_digit_pass  one launch per digit, most significant first, over that source:
//                      a histogram of the digit among keys matching the prefix chosen
//                      so far; the last block to finish keeps the bucket holding the
//                      rank (common/radix_bucket.cuh);
//   select_digits      (select.fused_digits=1, in place of the digit passes) every
//                      digit in one cooperative launch, grid barriers between them;
//   select_small       select_kth of inputs up to SMALL_BLOCK * SMALL_KEYS keys, alone:
//                      one block holds them all in registers and settles the rank digit
//                      by digit (common/block_radix_select.cuh), in one launch with no
//                      state to clear.
// Top-k goes on in kernels/topk.cu.
//
// Keys are compared as ordered patterns (common/radix_key.cuh), so one module serves
// every dtype of a width; top-k DESCENDING complements the patterns and takes the
// smallest. The host issues the same launches whatever the data; what each does is
// decided on the device from SelectState, so nothing waits but the final read.
//
// Compiled in four parts, side by side on a first call (a module of every kernel took
// 1.8 s of NVRTC on the development VM; each part 0.9-1.0 s): -DGP_SELECT_PART=0 (the
// pivots, settle, digit passes and the small select), 1 (select_band), 2
// (select_band_closed), 3 (select_band_warps).
//
// Instantiated per key width and float-ness: -DGP_KEY_BYTES -DGP_KEY_FLOAT
// -DGP_BLOCK_THREADS -DGP_ITEMS -DGP_LOOKBACK_WINDOW -DGP_KEEP_BYTES -DGP_DIGITS_MIN_BLOCKS
// -DGP_BAND_PREFETCH -DGP_BAND_SCREEN -DGP_SMALL_BLOCK -DGP_SMALL_KEYS and the flags
// (src/backend/cuda/select.rs).
#if !defined(GP_SELECT_PART) || GP_SELECT_PART < 0 || GP_SELECT_PART > 3
#error "GP_SELECT_PART: 0 (pivots, settle, digits, small), 1 (select_band), 2 (select_band_closed) or 3 (select_band_warps)"
#endif
#include "common/grid_dependency.cuh"
#include "select_state.cuh"
#include "common/block_radix_select.cuh"
#include "common/block_scan.cuh"
#include "common/tile_io.cuh"
#include "common/key_row.cuh"
#include "common/last_to_arrive.cuh"
#include "common/grid_barrier.cuh"
#include "common/ordered_read.cuh"
#include "common/tagged.cuh"
#include "common/ordered_screen.cuh"

// The k-th element (an ordered pattern) where the flags say: the host's mapped slot as
// tagged words, element 0 of `out`, or nowhere (top-k).
__device__ __forceinline__ void write_result(U answer, u32 flags, u32 key_order, U *out) {
    const U key = KeyOrder(key_order).raw(answer);
    if (flags & RESULT_TO_HOST) gp::Tagged<U>::publish_to_host(reinterpret_cast<u64 *>(out), key, flags >> HOST_TAG_SHIFT);
    else if (flags & WRITE_RESULT) *out = key;
}

__device__ __forceinline__ void finish(SelectState *st, U answer, u32 flags, u32 key_order, U *out) {
    st->source = SOURCE_DONE;
    st->prefix = answer;
    st->mask = ~0ull;
    write_result(answer, flags, key_order, out);
}

// A cheap integer hash: picks a position inside each sample's stratum.
__device__ __forceinline__ u64 mix(u64 x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

// A position in [0, span) from a hash: its top 32 bits scaled by span, no division,
// while span fits 32 bits (every stratum of an input below 2^46 keys with 16,384
// samples, 2^44 with 4,096); past that the remainder.
__device__ __forceinline__ u64 scale_hash(u64 hash, u64 span) {
    return span <= 0xffffffffull ? (hash >> 32) * span >> 32 : hash % span;
}

// One block, ITEMS samples a thread, n >= 1024 * ITEMS. Sample s is drawn from
// [s n / S, (s + 1) n / S), so sorted or periodic inputs are sampled evenly.
template <int ITEMS>
__device__ __forceinline__ void pick_pivots(const U *in, usize n, SelectState *st, u32 rank_lo, u32 rank_hi, u32 key_order) {
    typedef gp::BlockRadixSelect<U, SAMPLE_BLOCK, ITEMS, 2, RADIX_BITS> Select;
    constexpr u32 S = SAMPLE_BLOCK * ITEMS;
    __shared__ typename Select::Storage storage;
    __shared__ u32 tie_count;  // sample keys equal to a bound
    if (threadIdx.x == 0) tie_count = 0;  // before the select's barriers
    // The call's state starts zeroed here rather than by a memset of its own (one
    // stream operation less); thread 0 writes the bounds after the select's barriers.
    for (u32 i = threadIdx.x; i < sizeof(SelectState) / sizeof(u64); i += SAMPLE_BLOCK) reinterpret_cast<u64 *>(st)[i] = 0;
    const KeyOrder order(key_order);
    const usize whole = n / S, part = n % S;
    U keys[ITEMS];
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
        const u64 s = (u64)j * SAMPLE_BLOCK + threadIdx.x;
        const usize from = s * whole + s * part / S;
        const usize to = (s + 1) * whole + (s + 1) * part / S;
        keys[j] = order.ordered(in[from + scale_hash(mix(s), to - from)]);
    }
    const u32 ranks[2] = {rank_lo, rank_hi};
    U bounds[2];
    Select::select(keys, ranks, bounds, storage);
    // Whether the sample holds each bound once: then ties of a bound are rare enough
    // for a closed band to copy them (CLOSED_BAND).
    u32 ties = 0;
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) ties += (keys[j] == bounds[0]) + (keys[j] == bounds[1]);
    if (ties) atomicAdd(&tie_count, ties);
    __syncthreads();
    if (threadIdx.x == 0) {
        st->lo = bounds[0];
        st->hi = bounds[1];
        st->bounds_unique = bounds[0] != bounds[1] && tie_count == 2;
    }
}

// 16384 samples (large inputs: a narrow band) or 4096 (smaller ones: a cheaper sample).
#if GP_SELECT_PART == 0
extern "C" __global__ void __launch_bounds__(SAMPLE_BLOCK)
select_pivots(const U *in, usize n, SelectState *st, u32 rank_lo, u32 rank_hi, u32 key_order) {
    gp::wait_for_prior_grids();
    gp::let_next_grid_start();
    pick_pivots<16>(in, n, st, rank_lo, rank_hi, key_order);
}
#endif

#if GP_SELECT_PART == 0
extern "C" __global__ void __launch_bounds__(SAMPLE_BLOCK)
select_pivots_small(const U *in, usize n, SelectState *st, u32 rank_lo, u32 rank_hi, u32 key_order) {
    gp::wait_for_prior_grids();
    gp::let_next_grid_start();
    pick_pivots<4>(in, n, st, rank_lo, rank_hi, key_order);
}
#endif

#include "select_band.cuh"

// Where rank k fell, from the band's counts (one thread). The counts are read from L2:
// in the band's last block, this SM's L1 may hold the line of lo and hi (read by the
// block) with the counts as they were then.
__device__ __forceinline__ void settle_rank(SelectState *st, u64 k, usize capacity, u32 flags, u32 key_order, U *out) {
    u64 r = k;
    st->source = st->gather_source = SOURCE_INPUT;  // unless the band holds rank k
    st->rank = k;
    if (flags & NO_BAND) return;
    // The band's slots (`between`) hold the candidates and (select_kth's closed band by
    // warp) holes, which sort at or above every candidate.
    const u64 below = __ldcg(&st->below), eq_lo = __ldcg(&st->eq_lo), slots = __ldcg(&st->between),
              between = slots - __ldcg(&st->holes), eq_hi = __ldcg(&st->eq_hi);
    if (r < below) return;
    r -= below;
    if (r < eq_lo) {
        st->less = below;
        return finish(st, U(st->lo), flags, key_order, out);
    }
    r -= eq_lo;
    if (r < between) {
        if (slots <= capacity) {
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

// One warp, once the band's counts have all landed: settles where rank k fell; when
// the candidates hold it and the band counted their top digit (TOP_COUNTED: all but
// the band by warp), also takes that digit's bucket from the histogram (copied to
// `totals`, shared memory). The histogram is cleared for the digit passes either way.
// TOP_COUNTED is a template parameter: tested as a flag, it cost the band by warp 10
// registers (48 instead of 38).
template <bool TOP_COUNTED>
__device__ __forceinline__ void settle(SelectState *st, u64 k, usize capacity, u32 flags, u32 key_order, U *out,
                                       u64 (&totals)[RADIX]) {
    if (threadIdx.x == 0) settle_rank(st, k, capacity, flags, key_order, out);
    for (int d = threadIdx.x; d < RADIX; d += gp::WARP) {
        totals[d] = __ldcg(&st->counts[d]);
        st->counts[d] = 0;
    }
    __syncwarp();
    if (TOP_COUNTED && st->source == SOURCE_CANDIDATES) {
        const gp::Bucket<u64> b = gp::find_bucket<u64, RADIX>(totals, st->rank);
        if (threadIdx.x == 0) {
            st->prefix = (u64)b.digit << TOP_SHIFT;
            st->mask = (u64)(RADIX - 1) << TOP_SHIFT;
            st->rank -= b.before;
            st->less += b.before;
        }
    }
}

// The settling alone, when there is no band (a band's last block settles).
#if GP_SELECT_PART == 0
extern "C" __global__ void __launch_bounds__(gp::WARP)
select_settle(SelectState *st, u64 k, usize capacity, u32 flags, u32 key_order, U *out) {
    gp::wait_for_prior_grids();
    gp::let_next_grid_start();
    __shared__ u64 totals[RADIX];
    settle<true>(st, k, capacity, flags, key_order, out, totals);
}
#endif

// One read of the input (launched only when there is a band). Block b reads tiles
// [b tiles / grid, (b + 1) tiles / grid) in order (no ticket, no look-back): the runs
// land wherever the atomic puts them, in input order within a tile, each noted with
// its place among the block's candidates; the block's count goes to runs[tiles + b].
// CLOSED: select_band_closed, for a band closed both ends (CLOSED_BAND): a kernel of
// its own, so that top-k's band holds only its screened and exact picks. With the
// closed picks in the same kernel the top-k band took 552 us at 2^28 instead of 394
// (ncu, H100); that build also lacked the reconvergence below, so which of the two
// cost it was not separated.
// BY_WARP: select_band_warps, the closed band placing its picks by warp (BAND_BY_WARP),
// without the tile's block scan and atomic (ncu, H200, f32 2^28: 71 and 116 µs of the
// closed band's 457, the pick alone reading at 83% of the DRAM's peak) and without
// counting the top digit. Warps reserve slots a chunk at a time, so with small chunks
// (small inputs) their atomics cost more than the scans they replace.
template <bool CLOSED, bool BY_WARP>
__device__ __forceinline__ void band(const U *in, usize n, SelectState *st, U *cand, u64 *cand_index, u64 *runs,
                                     usize capacity, u32 warp_chunk, u32 flags, u32 key_order, u64 k, U *out) {
    typedef gp::BlockScan<u32, BLOCK> Scan;
    typedef gp::BlockScan<u64, BLOCK> PlaceScan;
    __shared__ union {
        // Tiles alternate: between a tile's reads of its storage and the writes of the
        // tile after next lie the next tile's scan barriers, so no barrier of its own.
        typename Scan::Storage scan[2];
        typename PlaceScan::Storage place;  // the last block's (after the last tile)
        u64 totals[RADIX];                  // the settling's (after that)
    } s;
    __shared__ u64 base[2], taken, carry;  // carry: the last block's, placing the blocks
    __shared__ u32 top[RADIX];  // the candidates' top digit, so no digit pass reads them for it
    if (!BY_WARP)               // (by warp the digit passes count it)
        for (int d = threadIdx.x; d < RADIX; d += BLOCK) top[d] = 0;
    if (threadIdx.x == 0) taken = 0;
    const KeyOrder order(key_order);
    BandPick pick{order, U(st->lo), U(st->hi), (flags & LO_OPEN) != 0, (flags & HI_OPEN) != 0, 0, 0, 0};
    // Ties of a closed band's bounds are copied only where the sample found them rare.
    const BandMode mode = CLOSED ? (__ldcg(&st->bounds_unique) ? BandMode::CLOSED : BandMode::EXACT)
                                 : (flags & (LO_OPEN | HI_OPEN)) == LO_OPEN ? BandMode::SCREENED : BandMode::EXACT;
    const Screen screen(order, pick.hi);  // the keys up to hi: the picks and the ties of hi
    const usize tiles = (n + TILE - 1) / TILE;
    const usize begin = tiles * blockIdx.x / gridDim.x, end = tiles * (blockIdx.x + 1) / gridDim.x;
    const bool aligned = gp::aligned16(in);
    // (-DGP_BAND_PREFETCH=1, knob select.band_prefetch) The next tile's keys are
    // loaded before this tile's run is reserved and copied, so they are on their way
    // while the block waits for its scan and its atomic.
    gp::Vec16 next[VECS];
    bool next_loaded = false;
    static_assert(CLOSED || !BY_WARP, "only select_kth's closed band places its picks by warp");
    gp::WarpSlots slots;
    for (usize tile = begin; tile < end; ++tile) {
        const int buf = tile & 1;
        const usize first = tile * TILE + (usize)threadIdx.x * ITEMS;
        const u64 picked = next_loaded ? pick_loaded<CLOSED>(next, pick, screen, mode)
                                       : pick_keys<CLOSED>(in, n, first, aligned, pick, screen, mode);
        if (GP_BAND_PREFETCH) {
            next_loaded = tile + 1 < end && Row::whole(n, first + TILE, aligned);
            if (next_loaded) Row::load(in, first + TILE, next);
        }
        if (BY_WARP) {
            const gp::WarpSlots::Step step = slots.take((u32)__popcll(picked), &st->between, warp_chunk);
            // (No top-digit count: the digit passes start at it. On the H200 the band's
            // time follows the instructions it issues, and without the count it holds
            // 38 registers instead of 48.)
            gp::copy_picks_to_slots(step, in, first, picked, cand, capacity);
            __syncwarp();  // reconverged for the next tile's pick, as below
            continue;
        }
        u32 before;
        Scan::exclusive((u32)__popcll(picked), before, gp::SumOp<u32>(), s.scan[buf],
                        ReserveRun{&st->between, runs + tile, &base[buf], &taken});
        copy_picks(in, first, picked, base[buf] + before, cand, cand_index, capacity, pick.order, top);
        // Each lane copies its own picks: the warp reconverges here, so that the next
        // tile's pick runs once for all lanes, not once for each group that finished
        // copying together (select_band_closed without it: 12 of 32 lanes active an
        // instruction on average, 3x the pick's instructions, 1,031 us at 2^28 under
        // ncu; with it 461 us, where the exact band takes 600).
        __syncwarp();
    }
    if (BY_WARP) slots.fill_holes(order.raw_no_nan(pick.hi), cand, capacity, &st->holes);  // (hi: at or above every pick)
    if (!BY_WARP && threadIdx.x == 0) runs[tiles + blockIdx.x] = taken;  // (by warp no block takes runs)
    flush_band_counts<!BY_WARP>(pick, top, st);
    // The last block to finish settles (no launch of its own between band and digits).
    if (!gp::last_to_arrive(&st->band_ticket, u64(gridDim.x))) return;
    if ((flags & ORDER_RUNS) && __ldcg(&st->between) <= capacity) place_blocks<PlaceScan>(runs + tiles, gridDim.x, s.place, carry);
    if (threadIdx.x >= gp::WARP) return;
    settle<!BY_WARP>(st, k, capacity, flags, key_order, out, s.totals);
}

#define GP_BAND_KERNEL(NAME, CLOSED, BY_WARP)                                                               \
    extern "C" __global__ void __launch_bounds__(BLOCK)                                                     \
    NAME(const U *in, usize n, SelectState *st, U *cand, u64 *cand_index, u64 *runs, usize capacity,         \
         u32 warp_chunk, u32 flags, u32 key_order, u64 k, U *out) {                                         \
        gp::wait_for_prior_grids();                                                                         \
        gp::let_next_grid_start();                                                                          \
        band<CLOSED, BY_WARP>(in, n, st, cand, cand_index, runs, capacity, warp_chunk, flags, key_order, k, out); \
    }
#if GP_SELECT_PART == 1
GP_BAND_KERNEL(select_band, false, false)
#endif
#if GP_SELECT_PART == 2
GP_BAND_KERNEL(select_band_closed, true, false)
#endif
#if GP_SELECT_PART == 3
GP_BAND_KERNEL(select_band_warps, true, true)  // alone: beside select_band_closed, a first call took 0.1-0.25 s longer
#endif

// Visits src[0, count) a 16-byte vector at a time where it can, UNROLL vectors a
// thread in flight at once (one at a time left each thread waiting out an L2 round
// trip per vector: the digit passes over the candidates were latency-bound). The
// candidates are read by every digit pass, so they are loaded to stay in L2; the whole
// input (the rare fallback) is streamed.
template <class Visit>
__device__ __forceinline__ void for_each_key(const U *src, usize count, bool streaming, Visit &visit) {
    constexpr int PER_VEC = 16 / sizeof(U);
    constexpr int UNROLL = 4;
    const usize stride = (usize)gridDim.x * BLOCK;
    usize done = 0;
    if (gp::aligned16(src)) {
        const usize vecs = count / PER_VEC;
        for (usize v0 = (usize)blockIdx.x * BLOCK + threadIdx.x; v0 < vecs; v0 += UNROLL * stride) {
            gp::Vec16 w[UNROLL];
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) {
                const usize v = v0 + u * stride;
                if (v < vecs) {
                    const U *at = src + v * PER_VEC;
                    w[u] = streaming ? gp::load_vec16_streaming(at) : *reinterpret_cast<const gp::Vec16 *>(at);
                }
            }
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) {
                if (v0 + u * stride >= vecs) break;
                U x[PER_VEC];
                memcpy(x, &w[u], sizeof(x));
#pragma unroll
                for (int j = 0; j < PER_VEC; ++j) visit(x[j]);
            }
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

#if GP_SELECT_PART == 0
extern "C" __global__ void __launch_bounds__(BLOCK)
select_digit_pass(const U *in, usize n, SelectState *st, const U *cand, u32 shift, u32 flags, u32 key_order, U *out) {
    gp::wait_for_prior_grids();
    gp::let_next_grid_start();
    __shared__ u32 counts[RADIX];
    __shared__ u64 totals[RADIX];
    const u32 source = st->source;
    if (source == SOURCE_DONE) return;
    // Settle took the candidates' top digit from the band's count (all but the band by warp).
    if (source == SOURCE_CANDIDATES && shift == TOP_SHIFT && !(flags & BAND_BY_WARP)) return;
    for (int d = threadIdx.x; d < RADIX; d += BLOCK) counts[d] = 0;
    __syncthreads();
    DigitCount visit{KeyOrder(key_order), U(st->prefix), U(st->mask), (int)shift, counts};
    if (source == SOURCE_CANDIDATES) for_each_key(cand, st->between, false, visit);
    else for_each_key(in, n, true, visit);
    __syncthreads();
    for (int d = threadIdx.x; d < RADIX; d += BLOCK)
        if (counts[d]) atomicAdd((unsigned long long *)&st->counts[d], (unsigned long long)counts[d]);
    if (!gp::last_to_arrive(&st->digit_ticket, u64(gridDim.x))) return;

    // The last block: every count has landed.
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
#endif

// ----------------------------------------------------------------------------------
// Every digit in one launch (select.fused_digits): the digit passes above, with the
// launches replaced by grid barriers, and the keys that matter kept on chip.
// ----------------------------------------------------------------------------------

// Keys (as ordered patterns) a block keeps in shared memory: those of its share of
// the source that matched the prefix at the last step that read global memory.
constexpr int KEEP = GP_KEEP_BYTES / sizeof(U);
#if GP_SELECT_PART == 0
constexpr int DIGITS_MIN_BLOCKS = GP_DIGITS_MIN_BLOCKS;  // resident blocks an SM the registers must allow
#endif

// What a block of select_digits knows: the prefix and rank chosen so far (every block
// takes the same bucket from the same totals), and the keys it keeps.
struct DigitsShared {
    U kept[KEEP];
    u32 counts[RADIX];  // this block's histogram of the current digit
    u64 totals[RADIX];  // the grid's
    u32 kept_count;     // matches seen by the last step that read global memory (more than KEEP: not all kept)
    U prefix, mask;
    u64 rank, less;
};

// What a step counts: keys matching the prefix add to this block's histogram of the
// digit at `shift`, and, when `keep`, are kept (in no particular order; the compiler
// aggregates the warp's increments of kept_count). Takes ordered keys, as
// common/ordered_read.cuh hands them over.
struct StepCounter {
    DigitsShared &s;
    U prefix, mask;
    int shift;
    bool keep;
    template <int N>
    __device__ __forceinline__ void add(const U (&u)[N]) {
#pragma unroll
        for (int k = 0; k < N; ++k) {
            if (((u[k] ^ prefix) & mask) != 0) continue;
            atomicAdd(&s.counts[u32(u[k] >> shift) & (RADIX - 1)], 1u);
            if (keep) {
                const u32 at = atomicAdd(&s.kept_count, 1u);
                if (at < KEEP) s.kept[at] = u[k];
            }
        }
    }
};

// The whole search after the band (or of the input, without one) in one cooperative
// launch: per digit, each block counts its share, adds its histogram into the grid's
// for that digit, waits at a grid barrier, and takes the bucket holding the rank from
// the totals, as every other block does. A step that reads the share from global
// memory also keeps its matches in shared memory when a later digit would read them;
// once they all fit, later steps read only those. The state ends as the last digit
// pass would leave it.
static_assert(BLOCK % gp::WARP == 0, "whole warps (find_bucket)");
#if GP_SELECT_PART == 0
extern "C" __global__ void __launch_bounds__(BLOCK, DIGITS_MIN_BLOCKS)
select_digits(const U *in, usize n, SelectState *st, const U *cand, u32 flags, u32 key_order, U *out) {
    gp::wait_for_prior_grids();
    __shared__ DigitsShared s;
    const u32 source = st->source;
    if (source == SOURCE_DONE) return;  // the same in every block: nothing is written before the end
    const KeyOrder order(key_order);
    const bool from_cand = source == SOURCE_CANDIDATES;
    const U *src = from_cand ? cand : in;
    const usize count = from_cand ? st->between : n;
    // Shares of whole vectors, so each starts aligned when the source does.
    constexpr usize PER_VEC = 16 / sizeof(U);
    const usize share = ((count + gridDim.x - 1) / gridDim.x + PER_VEC - 1) & ~(PER_VEC - 1);
    const usize begin = min(count, (usize)blockIdx.x * share), end = min(count, begin + share);
    if (threadIdx.x == 0) {
        s.prefix = U(st->prefix);
        s.mask = U(st->mask);
        s.rank = st->rank;
        s.less = st->less;
    }
    bool kept = false;  // (the same in the whole block) s.kept holds every key of the share matching the prefix
    // The band counted the candidates' top digit and settle took its bucket (all but
    // the band by warp).
    const bool top_taken = from_cand && !(flags & BAND_BY_WARP);
    u32 step = 0;
    for (int shift = top_taken ? TOP_SHIFT - RADIX_BITS : TOP_SHIFT; shift >= 0; shift -= RADIX_BITS, ++step) {
        for (int d = threadIdx.x; d < RADIX; d += BLOCK) s.counts[d] = 0;
        if (!kept && threadIdx.x == 0) s.kept_count = 0;
        __syncthreads();  // also publishes thread 0's prefix and rank
        if (kept) {
            StepCounter counter{s, s.prefix, s.mask, shift, false};
            for (u32 i = threadIdx.x; i < s.kept_count; i += BLOCK) {
                const U u[1] = {s.kept[i]};
                counter.add(u);
            }
        } else {
            // Keep when a later digit would read them and they may fit (with no prefix
            // yet, every key matches: only a share that fits whole).
            const bool keep = shift > 0 && (s.mask != 0 || end - begin <= KEEP) && end - begin <= 0xffffffffull;
            StepCounter counter{s, s.prefix, s.mask, shift, keep};
            gp::OrderSeen unchecked;  // (the order is not checked: check = false)
            gp::read_ordered_keys<BLOCK>(src + begin, end - begin, order, 0, 1, false, counter, unchecked);
            __syncthreads();
            kept = keep && s.kept_count <= KEEP;
        }
        __syncthreads();
        u64 *totals = st->digit_counts[step];
        for (int d = threadIdx.x; d < RADIX; d += BLOCK)
            if (s.counts[d]) atomicAdd((unsigned long long *)&totals[d], (unsigned long long)s.counts[d]);
        gp::grid_barrier(&st->digit_arrived, step + 1);
        if (threadIdx.x < gp::WARP) {
            for (int d = threadIdx.x; d < RADIX; d += gp::WARP) s.totals[d] = __ldcg(&totals[d]);
            __syncwarp();
            const gp::Bucket<u64> b = gp::find_bucket<u64, RADIX>(s.totals, s.rank);
            __syncwarp();  // every lane has read s.rank before lane 0 moves it on
            if (threadIdx.x == 0) {
                s.prefix |= U(b.digit) << shift;
                s.mask |= U(RADIX - 1) << shift;
                s.rank -= b.before;
                s.less += b.before;
            }
        }
        // The next step's first barrier orders these before they are read.
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {  // thread 0 wrote s.* itself
        st->rank = s.rank;
        st->less = s.less;
        finish(st, s.prefix, flags, key_order, out);
    }
}
#endif

// Inputs of up to SMALL_BLOCK * SMALL_KEYS keys (k < n): one block holds them all and
// settles the rank digit by digit.
#if GP_SELECT_PART == 0
extern "C" __global__ void __launch_bounds__(SMALL_BLOCK)
select_small(const U *in, usize n, u64 k, u32 flags, u32 key_order, U *out) {
    gp::wait_for_prior_grids();
    typedef gp::BlockRadixSelect<U, SMALL_BLOCK, SMALL_KEYS, 1, RADIX_BITS> Select;
    __shared__ typename Select::Storage storage;
    const U found = Select::select_from(in, n, (u32)k, KeyOrder(key_order), storage);
    if (threadIdx.x == 0) write_result(found, flags, key_order, out);
}
#endif
