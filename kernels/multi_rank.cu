// Pieces of the multi-rank operations (src/multi, src/backend/cuda/multi_rank.rs):
//   multi_count_before  a thread a probe: binary search of sorted keys, within a range
//                       the host knows holds the answer, for how many have a rank key
//                       below the probe (the sort's splitters);
//   multi_sample        every (len / count)-th key (the selection's sample);
//   multi_band          one pass: keys below a bracket counted, keys inside it
//                       counted and appended (any order) up to a capacity, and
//                       their digit where the digit rounds start counted;
//   multi_band_warps    the same without the digit, each warp appending to slots
//                       reserved a chunk at a time (common/warp_slots.cuh; the slots
//                       left unused hold hi and are counted);
//   multi_digit_counts  counts of one 8-bit digit of the keys under a prefix;
//   multi_add_u64, multi_gather_u64  index arithmetic of the top-k.
// Rank keys are KeyOrder::ordered patterns (common/radix_key.cuh) widened to u64, the
// same mapping the host plans with (src/multi/keys.rs). Instantiated per key width:
// -DGP_KEY_BYTES=1|2|4|8 -DGP_KEY_FLOAT=0|1; kind and direction arrive at run time.
#include "common/grid_dependency.cuh"
#include "common/types.cuh"
#include "common/radix_key.cuh"
#include "common/warp.cuh"
#include "common/ops.cuh"
#include "common/block_scan.cuh"
#include "common/key_row.cuh"
#include "common/closed_band.cuh"
#include "common/radix_bucket.cuh"
#include "common/warp_slots.cuh"

typedef gp::BitsOf<GP_KEY_BYTES>::type K;
typedef gp::KeyOrder<K, GP_KEY_FLOAT> KeyOrder;

// Probes come in groups of `per_group`; group g's answers lie in [within[2g], within[2g+1]]
// (the previous digit round's counts), so its searches start there.
extern "C" __global__ void multi_count_before(const K *keys, u32 key_order, const u64 *probes, usize nprobes,
                                              const u64 *within, usize per_group, u64 *counts) {
    gp::wait_for_prior_grids();
    const usize i = (usize)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nprobes) return;
    const KeyOrder order(key_order);
    const u64 probe = probes[i];
    const usize g = i / per_group;
    usize lo = within[2 * g], hi = within[2 * g + 1];
    while (lo < hi) {
        const usize mid = lo + (hi - lo) / 2;
        if ((u64)order.ordered(keys[mid]) < probe) lo = mid + 1;
        else hi = mid;
    }
    counts[i] = lo;
}

// i * len / count without a 128-bit product: i * (len % count) < count^2 fits 64 bits
// (the host asks for far fewer than 2^32 samples).
extern "C" __global__ void multi_sample(const K *keys, usize len, usize count, K *out) {
    gp::wait_for_prior_grids();
    const usize i = (usize)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count) out[i] = keys[i * (len / count) + i * (len % count) / count];
}

// multi_band: a thread reads 64 bytes of a tile (common/key_row.cuh) and tests each
// key by common/closed_band.cuh (a count and a range test a key, floats mapped in three
// instructions where the row holds no negative NaN), as the selection's closed band
// does. The first version read a key a load, strided over the block, compared rank
// keys widened to 64 bits and took a barrier after each tile: 1.9-2.0 TB/s on an H200
// (2^31 f32 keys a rank in 4.3-4.5 ms); the second, with these rows but lo and hi
// tested apart and every key mapped in full, 2.5 TB/s (3.43-3.46 ms).
constexpr int BAND_BLOCK = 256, BAND_VECS = 4;
typedef gp::KeyRow<K, BAND_VECS> BandRow;
constexpr usize BAND_TILE = (usize)BAND_BLOCK * BandRow::ITEMS;

// The place of a tile's kept keys in `out`: one atomic for the whole tile (a warp or a
// thread each would serialise on the one counter when the bracket keeps a few percent),
// its result left in shared memory for the block.
struct AppendAt {
    unsigned long long *counter;
    u64 *base;  // shared
    template <class Op>
    __device__ __forceinline__ gp::BlockPrefix<u32> operator()(u32 total, Op) const {
        if (threadIdx.x == 0) *base = total ? atomicAdd(counter, (unsigned long long)total) : 0;
        return {0, false};
    }
};

// The bits of a row's keys inside [lo, hi], adding those below lo to `below`.
__device__ __forceinline__ u64 band_row(const K *keys, usize len, usize first, bool aligned, const KeyOrder &order, K lo,
                                        K hi, u32 &below) {
    if (BandRow::whole(len, first, aligned)) {
        gp::Vec16 v[BAND_VECS];
        BandRow::load(keys, first, v);
        if (lo < hi && !gp::any_negative_nan(v, order))
            return BandRow::pick_each(v, [&](K x) { return gp::in_closed_band<true>(order, x, lo, hi, below); });
        return BandRow::pick_each(v, [&](K x) { return gp::in_closed_band<false>(order, x, lo, hi, below); });
    }
    u64 inside = 0;
    for (int e = 0; e < BandRow::ITEMS && first + e < len; ++e)
        inside |= (u64)gp::in_closed_band<false>(order, keys[first + e], lo, hi, below) << e;
    return inside;
}

// multi_band's digit_shift when no digit is counted (src/backend/cuda/multi_rank.rs).
constexpr u32 NO_DIGIT = 64;

// counts[0] += keys below lo, counts[1] += keys in [lo, hi]; the latter appended to
// out (in any order) while fewer than cap are there, and (digit_shift < NO_DIGIT) the
// 8-bit digit at digit_shift of each counted in counts[2 + digit]: the select's first
// digit round, in this pass instead of one more over the kept keys. Block b takes the
// b-th of gridDim.x runs of whole tiles.
extern "C" __global__ void __launch_bounds__(BAND_BLOCK)
multi_band(const K *keys, usize len, u32 key_order, u64 lo, u64 hi, u32 digit_shift, K *out, usize cap,
           unsigned long long *counts) {
    gp::wait_for_prior_grids();
    typedef gp::BlockScan<u32, BAND_BLOCK> Scan;
    // No barrier after a tile: the scan's two barriers order a tile's reads of the
    // storage and base before the next tile's writes (the storage alternates between
    // tiles all the same, as in the selection's band).
    __shared__ typename Scan::Storage scan[2];
    __shared__ u64 base[2];
    __shared__ u32 digits[256];  // zeroed before the first tile's scan barriers
    for (int d = threadIdx.x; d < 256; d += BAND_BLOCK) digits[d] = 0;
    const bool count_digit = digit_shift < NO_DIGIT;
    const KeyOrder order(key_order);
    const K klo = (K)lo, khi = (K)hi;  // rank keys of this width (the host's, widened)
    const bool aligned = gp::aligned16(keys);
    const usize tiles = (len + BAND_TILE - 1) / BAND_TILE;
    const usize begin = tiles * blockIdx.x / gridDim.x, end = tiles * (blockIdx.x + 1) / gridDim.x;
    u64 below = 0;
    for (usize tile = begin; tile < end; ++tile) {
        const int buf = tile & 1;
        const usize first = tile * BAND_TILE + (usize)threadIdx.x * BandRow::ITEMS;
        u32 under = 0;  // at most 64 a tile
        const u64 inside = band_row(keys, len, first, aligned, order, klo, khi, under);
        below += under;
        u32 before;
        Scan::exclusive((u32)__popcll(inside), before, gp::SumOp<u32>(), scan[buf], AppendAt{counts + 1, &base[buf]});
        u64 to = base[buf] + before;
        for (u64 left = inside; left; left &= left - 1, ++to) {
            const K x = keys[first + __ffsll((long long)left) - 1];
            if (to < cap) out[to] = x;
            if (count_digit) atomicAdd(&digits[u32((u64)order.ordered(x) >> digit_shift) & 0xff], 1u);
        }
        __syncwarp();  // each lane copies its own keys: the warp reconverges before the next tile
    }
    below = gp::warp_reduce(below, gp::SumOp<u64>());
    if (threadIdx.x % gp::WARP == 0 && below) atomicAdd(counts, (unsigned long long)below);
    if (!count_digit) return;
    __syncthreads();
    for (int d = threadIdx.x; d < 256; d += BAND_BLOCK)
        if (digits[d]) atomicAdd(counts + 2 + d, (unsigned long long)digits[d]);
}

// multi_band without the digit count, placing each warp's kept keys in its slots: no
// block scan or tile atomic (as the single-GPU select_band_warps, which on an H200 read
// 2^30 f32 keys 12% faster than the band with a block scan and a digit count).
// counts[0] += keys below lo; counts[1]: the slots reserved (kept keys and holes);
// counts[2]: the holes, each holding hi's key, which the digit rounds take off hi's digit.
extern "C" __global__ void __launch_bounds__(BAND_BLOCK)
multi_band_warps(const K *keys, usize len, u32 key_order, u64 lo, u64 hi, K *out, usize cap, u32 chunk,
                 unsigned long long *counts) {
    gp::wait_for_prior_grids();
    const KeyOrder order(key_order);
    const K klo = (K)lo, khi = (K)hi;
    const bool aligned = gp::aligned16(keys);
    const usize tiles = (len + BAND_TILE - 1) / BAND_TILE;
    const usize begin = tiles * blockIdx.x / gridDim.x, end = tiles * (blockIdx.x + 1) / gridDim.x;
    gp::WarpSlots slots;
    u64 below = 0;
    for (usize tile = begin; tile < end; ++tile) {
        const usize first = tile * BAND_TILE + (usize)threadIdx.x * BandRow::ITEMS;
        u32 under = 0;
        const u64 inside = band_row(keys, len, first, aligned, order, klo, khi, under);
        below += under;
        const gp::WarpSlots::Step step = slots.take((u32)__popcll(inside), counts + 1, chunk);
        gp::copy_picks_to_slots(step, keys, first, inside, out, cap);
        __syncwarp();  // each lane copies its own keys: the warp reconverges before the next tile
    }
    slots.fill_holes(order.raw_no_nan(khi), out, cap, counts + 2);
    below = gp::warp_reduce(below, gp::SumOp<u64>());
    if (threadIdx.x % gp::WARP == 0 && below) atomicAdd(counts, (unsigned long long)below);
}

// A thread reads a row of 64 bytes a step (common/key_row.cuh), all of it in flight
// at once: with one key a load, a round over a bracket's 2^26 kept keys read them at
// about 1.4 TB/s on an H200 (0.19 ms a round). Lanes holding the same digit add once
// (gp::warp_count_digit: the kept keys of a bracket share few digits at the top, where
// one atomic a lane would serialise), and a warp none of whose keys lies under the
// prefix (most of them, past the first round) skips the add.
constexpr int COUNT_VECS = 4;
typedef gp::KeyRow<K, COUNT_VECS> CountRow;

extern "C" __global__ void __launch_bounds__(256)
multi_digit_counts(const K *keys, usize len, u32 key_order, u64 prefix, u32 shift, unsigned long long *counts) {
    gp::wait_for_prior_grids();
    __shared__ u32 local[256];
    local[threadIdx.x] = 0;
    __syncthreads();
    const KeyOrder order(key_order);
    const u32 above = shift + 8;
    const bool aligned = gp::aligned16(keys);
    const usize rows = (len + CountRow::ITEMS - 1) / CountRow::ITEMS;
    const usize stride = (usize)gridDim.x * blockDim.x;
    const usize whole = (rows + gp::WARP - 1) / gp::WARP * gp::WARP;  // every lane of a warp iterates alike
    for (usize row = (usize)blockIdx.x * blockDim.x + threadIdx.x; row < whole; row += stride) {
        const usize first = row * CountRow::ITEMS;
        K x[CountRow::ITEMS];
        u64 present = 0;  // bit e: key e of the row lies inside the keys
        if (CountRow::whole(len, first, aligned)) {
            gp::Vec16 v[COUNT_VECS];
            CountRow::load(keys, first, v);
            memcpy(x, v, sizeof(x));
            present = ~0ull;
        } else {
            for (int e = 0; e < CountRow::ITEMS; ++e) {
                x[e] = first + e < len ? keys[first + e] : K(0);
                present |= u64(first + e < len) << e;
            }
        }
#pragma unroll
        for (int e = 0; e < CountRow::ITEMS; ++e) {
            const u64 r = order.ordered(x[e]);
            const bool under = (present >> e & 1) && (above >= 64 || (r >> above) == (prefix >> above));
            gp::warp_count_digit(local, u32(r >> shift) & 0xff, under);
        }
    }
    __syncthreads();
    if (local[threadIdx.x]) atomicAdd(counts + threadIdx.x, (unsigned long long)local[threadIdx.x]);
}

extern "C" __global__ void multi_add_u64(u64 *x, usize len, u64 value) {
    gp::wait_for_prior_grids();
    const usize i = (usize)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < len) x[i] += value;
}

extern "C" __global__ void multi_gather_u64(const u64 *src, const u64 *positions, usize len, u64 *dst) {
    gp::wait_for_prior_grids();
    const usize i = (usize)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < len) dst[i] = src[positions[i]];
}
