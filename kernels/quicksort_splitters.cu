// The quicksort's splitters (see kernels/quicksort.cu): one block a segment samples and
// sorts SAMPLES keys and writes the segment's splitters and their table of cells
// (quicksort_state.cuh: CELLS), or its shift when it is split by value. A module of its
// own, so its sort compiles beside the partition's kernels on the first call.
//
// -DGP_SAMPLE_BLOCK_THREADS and -DGP_SAMPLE_ITEMS (sampled keys a thread) and
// -DGP_SAMPLE_SMEM_BYTES (the dynamic shared memory
// of the sample's sort), on top of the quicksort's options.
#include "common/grid_dependency.cuh"
#include "quicksort_state.cuh"
#include "common/block_scan.cuh"

// ----------------------------------------------------------------------------------
// Splitters: one block of SAMPLE_BLOCK threads per segment

constexpr int SAMPLE_BLOCK = GP_SAMPLE_BLOCK_THREADS;
constexpr int SAMPLE_ITEMS = GP_SAMPLE_ITEMS;
static_assert(SAMPLE_BLOCK >= BUCKETS, "a thread per bucket");
constexpr u32 SAMPLES = (u32)SAMPLE_BLOCK * SAMPLE_ITEMS;
typedef gp::BlockRadixSort<K, SAMPLE_BLOCK, SAMPLE_ITEMS, 8, u16> SampleSort;
static_assert(sizeof(typename SampleSort::Storage) <= GP_SAMPLE_SMEM_BYTES, "the host's sample shared memory");

// Cell c of a segment holds the keys lo + [c, c + 1) * 2^shift; its entry is how many
// of the n splitters lie below it, and how many inside it (<< 8). Cells past hi hold
// nothing and are never looked up.
__device__ __forceinline__ void write_cells(const K *splitters, u32 n, K lo, K hi, u16 *cells) {
    const u32 shift = cell_shift(lo, hi);
    const K span = K(hi - lo);
    for (u32 c = threadIdx.x; c < CELLS; c += SAMPLE_BLOCK) {
        u32 below = n, inside = 0;
        if (u64(c) <= u64(span >> shift)) {
            const K first = K(K(c) << shift);  // the cell's offsets: first ..= last
            const K last = K(first + K((K(1) << shift) - 1));
            below = splitters_below(splitters, 0, n, K(lo + first));
            // Every splitter is <= hi, and lo + last + 1 may wrap past the last cell.
            const u32 through = last >= span ? n : splitters_below(splitters, 0, n, K(lo + last + 1));
            inside = through - below;
        }
        cells[c] = u16(below | inside << 8);
    }
}

extern "C" __global__ void __launch_bounds__(SAMPLE_BLOCK)
qs_splitters(const K *src, Segment *segs, u32 *tile_owner, K *splitters, u16 *cells, u32 key_order, u32 first_level,
             usize n, u32 tiles, LevelCounts *levels, u32 max_levels) {
    gp::wait_for_prior_grids();
    extern __shared__ __align__(16) unsigned char dynamic_smem[];
    auto &s = *reinterpret_cast<typename SampleSort::Storage *>(dynamic_smem);
    __shared__ typename gp::BlockScan<u32, SAMPLE_BLOCK>::Storage scan;
    __shared__ K chosen[BUCKETS];  // the splitters, for the cells
    if (first_level) {  // one block: the input's one segment, and zeroed level counts
        if (threadIdx.x == 0) segs[0] = Segment{0, n, 0, u64(ALL_ONES), 0, tiles, KIND_SAMPLE, 0};
        for (u32 i = threadIdx.x; i < max_levels; i += SAMPLE_BLOCK) levels[i] = LevelCounts{};
        __syncthreads();
    }
    Segment &seg = segs[blockIdx.x];
    const usize start = seg.start, len = seg.len;
    for (u32 t = threadIdx.x; t < seg.tiles; t += SAMPLE_BLOCK) tile_owner[seg.tile_first + t] = blockIdx.x;
    if (seg.kind == KIND_VALUE) {
        const int range_bits = bit_length(u64(K(K(seg.hi) - K(seg.lo))));
        if (threadIdx.x == 0) seg.param = range_bits > 8 ? range_bits - 8 : 0;
        return;
    }

    // Evenly spaced sample positions: no two blocks' choices depend on each other, and
    // a pattern that defeats them only costs a value-split level (see the top).
    // Sorted as k - lo on the bits of hi - lo (every key of the segment lies in
    // [lo, hi]), as the small sorts do: a digit pass fewer than lo ^ hi often needs.
    const Order order(key_order);
    const K lo = K(seg.lo);
    K keys[SAMPLE_ITEMS];
#pragma unroll
    for (int j = 0; j < SAMPLE_ITEMS; ++j) {
        const usize e = SampleSort::element(j);
        keys[j] = K(order.ordered(src[start + (2 * e + 1) * len / (2 * SAMPLES)]) - lo);
    }
    SampleSort::sort<false>(keys, SAMPLES, s, bit_length(u64(K(K(seg.hi) - lo))));  // the keys alone
    for (u32 e = threadIdx.x; e < SAMPLES; e += SAMPLE_BLOCK) s.keys[e] = K(s.keys[e] + lo);
    __syncthreads();

    K *table = splitters + (usize)blockIdx.x * BUCKETS;
    const u32 i = threadIdx.x;
    const usize wanted = len / BUCKET_TARGET;
    const u32 buckets = wanted < 2 ? 2 : wanted > BUCKETS ? BUCKETS : u32(wanted);
    const u32 step = SAMPLES / buckets;
    const K candidate = i < buckets - 1 ? s.keys[(i + 1) * step - 1] : ALL_ONES;
    const bool repeats = i + 2 < buckets && candidate == s.keys[(i + 2) * step - 1];
    u16 *seg_cells = cells + (usize)blockIdx.x * CELLS;
    if (!__syncthreads_or(repeats)) {
        if (i < BUCKETS) table[i] = chosen[i] = candidate;
        if (i == 0) {
            seg.kind = KIND_PLAIN;
            seg.param = buckets;
        }
        __syncthreads();
        write_cells(chosen, buckets - 1, K(seg.lo), K(seg.hi), seg_cells);
        return;
    }
    // Some splitters repeat: every 32nd sampled key, each distinct one kept once.
    constexpr u32 HALF = BUCKETS / 2 - 1;
    constexpr u32 WIDE_STEP = SAMPLES / (HALF + 1);
    const K c = i < HALF ? s.keys[(i + 1) * WIDE_STEP - 1] : ALL_ONES;
    const u32 first = i < HALF && (i == 0 || c != s.keys[i * WIDE_STEP - 1]);
    u32 at;
    gp::BlockScan<u32, SAMPLE_BLOCK>::exclusive(first, at, gp::SumOp<u32>(), scan, gp::NoPrefix());
    const u32 distinct = __syncthreads_count(first);
    if (first) table[at] = chosen[at] = c;
    if (i >= distinct && i < BUCKETS) table[i] = ALL_ONES;
    if (i == 0) {
        seg.kind = KIND_EQUAL;
        seg.param = distinct;
    }
    __syncthreads();
    write_cells(chosen, distinct, K(seg.lo), K(seg.hi), seg_cells);
}
