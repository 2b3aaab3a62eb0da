// Device-wide quicksort, done as sample sort: each level splits every unfinished
// segment into up to 256 buckets at once, by splitters drawn from a sample of the
// segment, and every segment of a level is worked on by the same launches.
//
//   qs_init       a short input's only sort (one large sort, or a pair of halves);
//   qs_splitters  (kernels/quicksort_splitters.cu) one block a segment: SAMPLES (4096,
//                 or 8192 for short inputs) evenly spaced keys, sorted
//                 (common/block_radix_sort.cuh), give up to 255 splitters (about one
//                 per BUCKET_TARGET keys of the segment); when some repeat,
//                 up to 127 distinct ones, each with a bucket of its own for the keys
//                 equal to it (three-way partitioning, generalised), so runs of equal
//                 keys are finished at once; and the table of cells that finds a key's
//                 bucket. A segment its parent failed to shrink is
//                 split by value instead (its key range cut in 256 equal parts), which
//                 bounds the levels whatever the input: each such level cuts the range
//                 of possible keys 256-fold. Also notes which segment each tile is of;
//                 at the first level it also writes the input's one segment and zeroes
//                 the per-level counters (no setup launch);
//   qs_count      one block a tile: each key's bucket (through the segment's table
//                 of cells), and the tile's count of each bucket
//                 (common/block_radix_rank.cuh's count phase);
//   (the library's exclusive scan of those counts, laid out segment by segment,
//    bucket by bucket, tile by tile, gives every tile the place of its run of each
//    bucket)
//   qs_scatter    one block a tile: ranks its keys by bucket and writes each bucket's
//                 run to its place, through shared memory (values the same way);
//   qs_children   one block a segment, a thread a bucket: what becomes of each
//                 bucket: nothing (empty), finished (one key, or a single value: copied
//                 home if it lies in the alternate buffer), a small or large segment
//                 (sorted by one block), or a segment of the next level;
//   qs_small, qs_large  (kernels/quicksort_small.cu) one block a segment of up to
//                 SMALL_TILE or LARGE_TILE keys: sorted in shared memory on the bits in
//                 which its keys can differ, written home (a segment of up to
//                 LARGE_SPAN: two blocks sort a half each, the second to finish merges);
//   qs_copy       finished segments brought home from the alternate buffer.
//
// The kernels that sort in a block (the sample's, the small and large segments') are
// modules of their own, so the three modules compile side by side on the first call.
//
// Levels alternate between the keys and the alternate buffer; the host reads back
// a level's counts (segments and tiles of the next level, small and large segments,
// chunks to copy) to size the next level. The sorts and copies a level leaves are
// launched on grids that cannot be too small and read their counts on the device, so
// they run while the host waits for the read-back. Positions and counts are 32-bit within a level
// (arithmetic modulo 2^32 is exact below 2^32 keys).
//
// Instantiated by key and value width and float keys or not: -DGP_KEY_BYTES=1|2|4|8
// -DGP_VALUE_BYTES=0|1|2|4|8 -DGP_KEY_FLOAT=0|1; tuning -DGP_BLOCK_THREADS -DGP_ITEMS
// -DGP_RANK_GROUP (partition), -DGP_SORT_RANK_GROUP (the block sorts),
// -DGP_SMALL_BLOCK_THREADS -DGP_LARGE_BLOCK_THREADS -DGP_SMALL_ITEMS
// -DGP_SMALL_MIN_BLOCKS -DGP_LARGE_MIN_BLOCKS (blocks an SM of each sort)
// -DGP_BUCKET_TARGET, and the dynamic shared memory the host gives the small sorts at
// most, -DGP_SMALL_SMEM_BYTES; -DGP_COPY_CHUNK (src/backend/cuda/quicksort.rs). The
// splitters' module takes the sample's options too (quicksort_splitters.cu).
#include "common/grid_dependency.cuh"
#include "quicksort_state.cuh"
#include "common/block_radix_rank.cuh"
#include "common/block_scan.cuh"
#include "common/tile_io.cuh"

// The bucket of an ordered key within its segment.
struct Buckets {
    u32 kind, param, shift;
    K lo;
    const K *table;    // KIND_PLAIN, KIND_EQUAL: the splitters, padded to 256 with ALL_ONES
    const u16 *cells;  // and their cells (quicksort_state.cuh: CELLS)

    __device__ __forceinline__ u32 of(K k) const {
        if (kind == KIND_VALUE) return u32(K(k - lo) >> param);
        // How many splitters lie below k: those below its cell, then a binary search
        // of those inside it (mostly none, so no comparison at all).
        const u32 cell = cells[u32(K(k - lo) >> shift)];
        const u32 r = splitters_below(table, cell & 0xff, cell >> 8, k);
        if (kind == KIND_EQUAL) return 2 * r + (r < param && table[r] == k);
        return r;
    }
};

// The key range [lo, hi] of bucket b of a segment (for a bucket that holds a key).
__device__ __forceinline__ void bucket_range(const Segment &seg, const K *table, u32 b, K &lo, K &hi) {
    const K seg_lo = K(seg.lo), seg_hi = K(seg.hi);
    if (seg.kind == KIND_VALUE) {
        lo = K(seg_lo + (K(b) << seg.param));
        const K width = K((K(1) << seg.param) - 1);
        hi = K(seg_hi - lo) <= width ? seg_hi : K(lo + width);
    } else if (seg.kind == KIND_PLAIN) {
        lo = b == 0 ? seg_lo : K(table[b - 1] + 1);
        hi = b == seg.param - 1 ? seg_hi : table[b];
    } else {
        const u32 r = b / 2;
        if (b & 1) {
            lo = hi = table[r];
        } else {
            lo = r == 0 ? seg_lo : K(table[r - 1] + 1);
            hi = r == seg.param ? seg_hi : K(table[r] - 1);
        }
    }
}

// ----------------------------------------------------------------------------------
// Setup
// ----------------------------------------------------------------------------------

// An input that fits one large sort: its span and count (a longer input's first
// segment and zeroed level counts are qs_splitters' first work).
extern "C" __global__ void qs_init(Span *small, LevelCounts *levels, usize n) {
    gp::wait_for_prior_grids();
    if (threadIdx.x == 0) {
        levels[0] = LevelCounts{};
        levels[0].large = list_large(small, 0, Span{0, u32(n), KEY_BITS, 0, WHOLE, 0});
    }
}

// ----------------------------------------------------------------------------------
// Count and scatter: one block per tile of a level
// ----------------------------------------------------------------------------------

typedef gp::BlockRadixRank<BLOCK, ITEMS, 8, GP_RANK_GROUP> Rank;

// The tile a block works on: its segment, its place in it, and the segment's
// splitters in shared memory.
struct TileJob {
    Segment seg;
    u32 seg_index, local;  // the tile is tile `local` of segment `seg_index`
    usize first;           // its first key
    u32 valid;             // its keys (TILE but in the segment's last tile)
    u32 shift;  // a key's offset from the segment's lo to its cell
    K table[BUCKETS];
    u16 cells[CELLS];
};

__device__ __forceinline__ void begin_tile(const Segment *segs, const u32 *tile_owner, const K *splitters,
                                           const u16 *cells, TileJob &job, bool with_splitters) {
    if (threadIdx.x == 0) {
        const u32 index = tile_owner[blockIdx.x];
        job.seg = segs[index];
        job.seg_index = index;
        job.local = blockIdx.x - job.seg.tile_first;
        job.first = job.seg.start + (usize)job.local * TILE;
        const usize left = job.seg.start + job.seg.len - job.first;
        job.valid = left < TILE ? u32(left) : TILE;
        job.shift = cell_shift(job.seg.lo, job.seg.hi);
    }
    __syncthreads();
    if (with_splitters && job.seg.kind != KIND_VALUE) {
        for (u32 i = threadIdx.x; i < BUCKETS; i += BLOCK) job.table[i] = splitters[(usize)job.seg_index * BUCKETS + i];
        const u32 *from = reinterpret_cast<const u32 *>(cells + (usize)job.seg_index * CELLS);
        for (u32 i = threadIdx.x; i < CELLS / 2; i += BLOCK) reinterpret_cast<u32 *>(job.cells)[i] = from[i];
    }
    __syncthreads();
}

// The tile's keys, warp-striped as BlockRadixRank wants them, and their buckets;
// missing keys (past the segment) go last, in the last bucket.
__device__ __forceinline__ void load_tile(const K *src, const TileJob &job, const Order &order, K (&key)[ITEMS],
                                          u32 (&bucket)[ITEMS]) {
    const u32 lane = threadIdx.x % gp::WARP, span = threadIdx.x / gp::WARP * gp::WARP * ITEMS;
    const Buckets buckets{job.seg.kind, job.seg.param, job.shift, K(job.seg.lo), job.table, job.cells};
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
        const u32 i = span + j * gp::WARP + lane;
        key[j] = i < job.valid ? src[job.first + i] : K(0);
    }
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
        const u32 i = span + j * gp::WARP + lane;
        bucket[j] = i < job.valid ? buckets.of(order.ordered(key[j])) : BUCKETS - 1;
    }
}

extern "C" __global__ void __launch_bounds__(BLOCK)
qs_count(const K *src, const Segment *segs, const u32 *tile_owner, const K *splitters, const u16 *cells, u32 *counts,
         u8 *buckets_of, u32 level_tiles, u32 key_order) {
    gp::wait_for_prior_grids();
    __shared__ typename Rank::Storage rank;
    __shared__ TileJob job;
    begin_tile(segs, tile_owner, splitters, cells, job, true);
    K key[ITEMS];
    u32 bucket[ITEMS];
    load_tile(src, job, Order(key_order), key, bucket);
    // Each key's bucket, for the scatter (a byte written and read back costs less than
    // a second search).
    {
        const u32 lane = threadIdx.x % gp::WARP, span = threadIdx.x / gp::WARP * gp::WARP * ITEMS;
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) {
            const u32 i = span + j * gp::WARP + lane;
            if (i < job.valid) buckets_of[job.first + i] = u8(bucket[j]);
        }
    }
    const u32 total = Rank::count(bucket, TILE - job.valid, rank);
    // Segment by segment, bucket by bucket, tile by tile; one more word (0) past the
    // end, so every run's end is the scan's next value.
    if (threadIdx.x < BUCKETS)
        counts[(usize)BUCKETS * job.seg.tile_first + threadIdx.x * job.seg.tiles + job.local] = total;
    if (blockIdx.x == 0 && threadIdx.x == 0) counts[(usize)BUCKETS * level_tiles] = 0;
}

// Three blocks an SM: registers capped at 85 (at 256 threads).
extern "C" __global__ void __launch_bounds__(BLOCK, 3)
qs_scatter(const K *src, K *dst, const V *vsrc, V *vdst, const Segment *segs, const u32 *tile_owner, const K *splitters,
           const u32 *starts, const u8 *buckets_of) {
    gp::wait_for_prior_grids();
    __shared__ union {
        typename Rank::Storage rank;
        K keys[TILE];
        V values[HAS_VALUES ? TILE : 1];
    } s;
    __shared__ u8 staged_bucket[TILE];
    __shared__ usize dest[BUCKETS];  // + place in the tile's bucket order = output index
    __shared__ TileJob job;
    begin_tile(segs, tile_owner, splitters, nullptr, job, false);  // the count pass left each key's bucket
    const u32 valid = job.valid;
    K key[ITEMS];
    u32 bucket[ITEMS], rank[ITEMS];
    {
        const u32 lane = threadIdx.x % gp::WARP, span = threadIdx.x / gp::WARP * gp::WARP * ITEMS;
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) {
            const u32 i = span + j * gp::WARP + lane;
            key[j] = i < valid ? src[job.first + i] : K(0);
            bucket[j] = i < valid ? buckets_of[job.first + i] : BUCKETS - 1;
            rank[j] = bucket[j];
        }
    }
    const u32 total = Rank::count(rank, TILE - valid, s.rank);
    const u32 offset = Rank::rank(rank, total, s.rank);
    if (threadIdx.x < BUCKETS) {
        const u32 *region = starts + (usize)BUCKETS * job.seg.tile_first;
        const u32 before = region[threadIdx.x * job.seg.tiles + job.local] - region[0];
        dest[threadIdx.x] = job.seg.start + before - offset;  // wraps back when a place is added
    }
    const u32 first = threadIdx.x / gp::WARP * gp::WARP * ITEMS + threadIdx.x % gp::WARP;  // item 0's element
    gp::to_rank_order(s.keys, key, rank, first, valid);
    {
        u8 bucket_byte[ITEMS];
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) bucket_byte[j] = u8(bucket[j]);
        gp::to_rank_order(staged_bucket, bucket_byte, rank, first, valid);
    }
    __syncthreads();
    u32 out_bucket[ITEMS];
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        const u32 i = k * BLOCK + threadIdx.x;
        if (i < valid) {
            out_bucket[k] = staged_bucket[i];
            dst[dest[out_bucket[k]] + i] = s.keys[i];
        }
    }
    if constexpr (HAS_VALUES) {
        V value[ITEMS];
        const u32 lane = threadIdx.x % gp::WARP, span = threadIdx.x / gp::WARP * gp::WARP * ITEMS;
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) {
            const u32 i = span + j * gp::WARP + lane;
            if (i < valid) value[j] = vsrc[job.first + i];
        }
        __syncthreads();  // every key has left s.keys
        gp::to_rank_order(s.values, value, rank, first, valid);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            const u32 i = k * BLOCK + threadIdx.x;
            if (i < valid) vdst[dest[out_bucket[k]] + i] = s.values[i];
        }
    }
}

// ----------------------------------------------------------------------------------
// Children: one block of BUCKETS threads per segment of the level
// ----------------------------------------------------------------------------------

extern "C" __global__ void __launch_bounds__(BUCKETS)
qs_children(const Segment *segs, const K *splitters, const u32 *starts, Segment *next, Span *small, Span *large,
            Span *copies, LevelCounts *level, LevelCounts *report, u32 in_alternate) {
    gp::wait_for_prior_grids();
    typedef gp::BlockScan<u32, BUCKETS> Scan;
    __shared__ typename Scan::Storage scan;
    __shared__ u32 base[5];  // where this block's next segments, tiles, small and large segments, copies go
    const Segment seg = segs[blockIdx.x];
    const u32 b = threadIdx.x;
    const u32 *region = starts + (usize)BUCKETS * seg.tile_first;
    const u32 c0 = region[b * seg.tiles], c1 = region[(b + 1) * seg.tiles];
    const usize len = u32(c1 - c0);
    const usize start = seg.start + u32(c0 - region[0]);
    K lo = 0, hi = 0;
    if (len) bucket_range(seg, splitters + (usize)blockIdx.x * BUCKETS, b, lo, hi);
    const bool finished = len == 1 || (len > 1 && lo == hi);
    const bool is_small = !finished && len > 1 && len <= SMALL_TILE;
    // Up to two tiles go to the large sort as a pair of halves where such a bucket is
    // the sample's error, not its plan: a plain split that aimed at buckets of more
    // than half a tile (the first level of 2^21 to 2^22 keys) leaves them to the next
    // level, as pairs there measured slower than that level (BENCHMARKS.md).
    const bool aimed_past_half = seg.kind == KIND_PLAIN && seg.len > usize(seg.param) * (LARGE_TILE / 2);
    const u32 most_large = aimed_past_half ? LARGE_TILE : LARGE_SPAN;
    const bool is_large = !finished && len > SMALL_TILE && len <= most_large;
    const bool is_next = !finished && len > most_large;
    const u32 places = is_large ? large_places(len) : 0;
    const u32 chunks = finished && in_alternate ? u32((len + COPY_CHUNK - 1) / COPY_CHUNK) : 0;
    const u32 tiles = is_next ? u32((len + TILE - 1) / TILE) : 0;

    // Counts of three kinds of child in 10-bit fields (a block has 256 children, which
    // take at most 512 large list places).
    const u32 flags = u32(is_small) | places << 10 | u32(is_next) << 20;
    u32 flags_at, chunk_at, tile_at;
    Scan::exclusive(flags, flags_at, gp::SumOp<u32>(), scan, gp::NoPrefix());
    __syncthreads();
    Scan::exclusive(chunks, chunk_at, gp::SumOp<u32>(), scan, gp::NoPrefix());
    __syncthreads();
    Scan::exclusive(tiles, tile_at, gp::SumOp<u32>(), scan, gp::NoPrefix());
    constexpr u32 FIELD = (1u << 10) - 1;
    if (b == BUCKETS - 1) {
        const u32 total = flags_at + flags;
        base[0] = atomicAdd(&level->next_segments, total >> 20);
        base[1] = atomicAdd(&level->next_tiles, tile_at + tiles);
        base[2] = atomicAdd(&level->small, total & FIELD);
        base[3] = atomicAdd(&level->large, (total >> 10) & FIELD);
        base[4] = atomicAdd(&level->copies, chunk_at + chunks);
    }
    __syncthreads();
    if (is_next) {
        // A child that kept more than a quarter of its parent is split by value next:
        // its parent's sample failed it.
        const u32 kind = len * 4 > seg.len ? KIND_VALUE : KIND_SAMPLE;
        next[base[0] + (flags_at >> 20)] = Segment{start, len, u64(lo), u64(hi), base[1] + tile_at, tiles, kind, 0};
    }
    const Span sorted_span{start, u32(len), u32(bit_length(u64(K(hi - lo)))), u64(lo), WHOLE, 0};
    if (is_small) small[base[2] + (flags_at & FIELD)] = sorted_span;
    if (is_large) list_large(large, base[3] + ((flags_at >> 10) & FIELD), sorted_span);
    for (u32 c = 0; c < chunks; ++c) {
        const usize from = (usize)c * COPY_CHUNK;
        copies[base[4] + chunk_at + c] =
            Span{start + from, u32(len - from < COPY_CHUNK ? len - from : COPY_CHUNK), 0, 0, WHOLE, 0};
    }
    // The last block to finish copies the level's counts to the host's mapped slot,
    // which the host reads once the stream has passed this launch (no copy launch in
    // the way of the sorts that follow).
    if (b == BUCKETS - 1) {
        __threadfence();
        if (atomicAdd(&level->blocks_done, 1u) == gridDim.x - 1) {
            __threadfence();
            const volatile LevelCounts *final_counts = level;
            report->next_segments = final_counts->next_segments;
            report->next_tiles = final_counts->next_tiles;
            report->small = final_counts->small;
            report->large = final_counts->large;
            report->copies = final_counts->copies;
        }
    }
}

// ----------------------------------------------------------------------------------
// Copies home
// ----------------------------------------------------------------------------------

extern "C" __global__ void __launch_bounds__(256)
qs_copy(K *keys, const K *alt, V *values, const V *alt_values, const Span *spans, const u32 *count) {
    gp::wait_for_prior_grids();
    if (blockIdx.x >= *count) return;
    const Span span = spans[blockIdx.x];
    gp::copy_elements(keys + span.start, alt + span.start, span.len, threadIdx.x, 256);
    if constexpr (HAS_VALUES) gp::copy_elements(values + span.start, alt_values + span.start, span.len, threadIdx.x, 256);
}
