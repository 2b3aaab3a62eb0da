// Device-wide quicksort, done as sample sort: each level splits every unfinished
// segment into up to 256 buckets at once, by splitters drawn from a sample of the
// segment, and every segment of a level is worked on by the same launches.
//
//   qs_init       a short input's only sort (one large sort, or a pair of halves);
//   qs_splitters  (kernels/quicksort_splitters.cu) one block a segment: SAMPLES (4096)
//                 evenly spaced keys, sorted
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
//                 (common/block_radix_rank.cuh's count phase); at the first level also
//                 whether the input is sorted already, or exactly reversed, after
//                 which the first level's scatter and children only reverse it or
//                 stop (first_level_order: such an input costs about one level's
//                 launches, no sort);
//   (the library's exclusive scan of those counts, laid out segment by segment,
//    bucket by bucket, tile by tile, gives every tile the place of its run of each
//    bucket)
//   qs_scatter    one block a tile: ranks its keys by bucket and writes each bucket's
//                 run to its place, through shared memory (values the same way);
//   qs_children   one block a segment, a thread a bucket: what becomes of each
//                 bucket: nothing (empty), finished (one key, or a single value: copied
//                 home if it lies in the alternate buffer), a small or large segment
//                 (sorted by one block), or a segment of the next level;
//   qs_small, qs_large  (kernels/quicksort_small.cu, quicksort_large.cu) one block a segment of up to
//                 SMALL_TILE or LARGE_TILE keys: sorted in shared memory on the bits in
//                 which its keys can differ, written home (a segment of up to
//                 LARGE_SPAN: two blocks split it by rank and sort a side each);
//   qs_copy       finished segments brought home from the alternate buffer.
//
// The kernels that sort in a block (the sample's, the small and large segments') are
// modules of their own, so the four modules compile side by side on the first call.
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
// -DGP_BUCKET_TARGET, and the dynamic shared memory the host gives the small and large
// sorts, -DGP_SMALL_SMEM_BYTES and -DGP_LARGE_SMEM_BYTES; -DGP_COPY_CHUNK
// (src/backend/cuda/quicksort.rs). The splitters' module takes the sample's options too
// (quicksort_splitters.cu).
#include "common/grid_dependency.cuh"
#include "quicksort_state.cuh"
#include "common/block_radix_rank.cuh"
#include "common/block_scan.cuh"
#include "common/tile_io.cuh"
#include "common/ordered_read.cuh"

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

// The tile's keys, warp-striped as BlockRadixRank wants them: key j of lane l of warp w
// is element w * WARP * ITEMS + j * WARP + l of the tile.
__device__ __forceinline__ void load_tile(const K *src, const TileJob &job, K (&key)[ITEMS]) {
    const u32 lane = threadIdx.x % gp::WARP, span = threadIdx.x / gp::WARP * gp::WARP * ITEMS;
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
        const u32 i = span + j * gp::WARP + lane;
        key[j] = i < job.valid ? src[job.first + i] : K(0);
    }
}

// Their buckets; missing keys (past the segment) go last, in the last bucket.
__device__ __forceinline__ void tile_buckets(const TileJob &job, const Order &order, const K (&key)[ITEMS],
                                             u32 (&bucket)[ITEMS]) {
    const u32 lane = threadIdx.x % gp::WARP, span = threadIdx.x / gp::WARP * gp::WARP * ITEMS;
    const Buckets buckets{job.seg.kind, job.seg.param, job.shift, K(job.seg.lo), job.table, job.cells};
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
        const u32 i = span + j * gp::WARP + lane;
        bucket[j] = i < job.valid ? buckets.of(order.ordered(key[j])) : BUCKETS - 1;
    }
}

// The first level's order check, from the tile's keys as load_tile left them: each key
// against the next one (the next lane's key j; lane 31's, lane 0's key j + 1; for the
// warp's last key, lane 31's key ITEMS - 1, `warp_after`: the key after the warp's,
// read with the tile), so an input already sorted, or reversed, costs the count pass
// and not a sort (first_level_order).
__device__ __forceinline__ void check_tile_order(const TileJob &job, const Order &order, const K (&key)[ITEMS],
                                                 K warp_after, LevelCounts *first_level) {
    const u32 lane = threadIdx.x % gp::WARP, span = threadIdx.x / gp::WARP * gp::WARP * ITEMS;
    const usize end = job.seg.start + job.seg.len;
    gp::OrderSeen seen;
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
        const K next_lane = __shfl_down_sync(gp::FULL_MASK, key[j], 1);
        const K next_row = __shfl_sync(gp::FULL_MASK, key[j + 1 < ITEMS ? j + 1 : j], 0);
        const u32 i = span + j * gp::WARP + lane;
        const bool last_of_warp = lane == gp::WARP - 1 && j + 1 == ITEMS;
        // (Only a segment's last tile is short, so a key past it has none after it.)
        if (i + 1 < job.valid || (last_of_warp && job.first + i + 1 < end)) {
            const K next = last_of_warp ? warp_after : lane == gp::WARP - 1 ? next_row : next_lane;
            seen.neighbours(order.ordered(key[j]), order.ordered(next));
        }
    }
    const int any_unsorted = __syncthreads_or(seen.unsorted), any_not_reversed = __syncthreads_or(seen.not_reversed);
    if (threadIdx.x == 0) {  // a store only where it changes the word: every block writes the same one
        volatile LevelCounts *c = first_level;
        if (any_unsorted && !c->unsorted) c->unsorted = 1;
        if (any_not_reversed && !c->not_reversed) c->not_reversed = 1;
    }
}

// Whether the input's order is settled (some neighbours out of order both ways): the
// blocks after that skip the check (for random keys, all but the first wave's).
__device__ __forceinline__ bool order_settled(const LevelCounts *first_level) {
    const volatile LevelCounts *c = first_level;
    return c->unsorted && c->not_reversed;
}

extern "C" __global__ void __launch_bounds__(BLOCK)
qs_count(const K *src, const Segment *segs, const u32 *tile_owner, const K *splitters, const u16 *cells, u32 *counts,
         u8 *buckets_of, u32 level_tiles, u32 key_order, LevelCounts *first_level, u32 check_order) {
    gp::wait_for_prior_grids();
    __shared__ typename Rank::Storage rank;
    __shared__ TileJob job;
    __shared__ u32 check_here;
    if (threadIdx.x == 0) check_here = check_order && !order_settled(first_level);
    begin_tile(segs, tile_owner, splitters, cells, job, true);  // (its barrier publishes check_here)
    K key[ITEMS];
    u32 bucket[ITEMS];
    load_tile(src, job, key);
    // Before the buckets, so the keys and the buckets are not both live through it (at
    // 68 registers it cost a block an SM: random 2^24 648 -> 700 µs, H100).
    if (check_here) {
        const u32 lane = threadIdx.x % gp::WARP, span = threadIdx.x / gp::WARP * gp::WARP * ITEMS;
        const usize after = job.first + span + gp::WARP * ITEMS;
        const K warp_after = lane == gp::WARP - 1 && after < job.seg.start + job.seg.len ? src[after] : K(0);
        check_tile_order(job, Order(key_order), key, warp_after, first_level);
    }
    tile_buckets(job, Order(key_order), key, bucket);
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

// What the first level found of the input's order, once qs_count has run (gp::INPUT_*):
// sort it, it is sorted already (nothing to do), or it is in exactly the opposite order
// with no two keys equal (the scatter writes it mirrored, the copy home brings it back).
__device__ __forceinline__ u32 first_level_order(const LevelCounts *first) {
    const volatile LevelCounts *c = first;
    return gp::input_order(c->unsorted, c->not_reversed);
}

// The tile's items of a segment [start, last] written to their mirrored places: every
// load in flight before the first store.
template <class T>
__device__ __forceinline__ void mirror_tile(const T *src, T *dst, usize first, usize start, usize last) {
    T item[ITEMS];
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
        const usize from = first + j * BLOCK + threadIdx.x;
        if (from <= last) item[j] = src[from];
    }
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
        const usize from = first + j * BLOCK + threadIdx.x;
        if (from <= last) dst[last - (from - start)] = item[j];
    }
}

// An input in exactly the opposite order: the tile's keys (and values) written
// mirrored into the alternate buffers; qs_children lists the whole for the copy home.
__device__ __forceinline__ void reverse_tile(const K *src, K *dst, const V *vsrc, V *vdst, const Segment *segs,
                                             const u32 *tile_owner) {
    const Segment seg = segs[tile_owner[blockIdx.x]];
    const usize first = seg.start + (usize)(blockIdx.x - seg.tile_first) * TILE;
    const usize last = seg.start + seg.len - 1;  // where the segment's first key goes
    mirror_tile(src, dst, first, seg.start, last);
    if constexpr (HAS_VALUES) mirror_tile(vsrc, vdst, first, seg.start, last);
}

// Three blocks an SM: registers capped at 85 (at 256 threads).
extern "C" __global__ void __launch_bounds__(BLOCK, 3)
qs_scatter(const K *src, K *dst, const V *vsrc, V *vdst, const Segment *segs, const u32 *tile_owner, const K *splitters,
           const u32 *starts, const u8 *buckets_of, const LevelCounts *first_level, u32 checked_order) {
    gp::wait_for_prior_grids();
    const u32 found = checked_order ? first_level_order(first_level) : gp::INPUT_UNSORTED;
    if (found == gp::INPUT_SORTED) return;
    if (found == gp::INPUT_REVERSED) {
        reverse_tile(src, dst, vsrc, vdst, segs, tile_owner);
        return;
    }
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

// The chunks of COPY_CHUNK keys in which a block's finished buckets come home: bucket
// `threadIdx.x` has `chunks` of them from `chunk_at` on. The whole block writes the
// list, a chunk a thread, so one bucket holding a whole level (all keys equal) does not
// leave one thread writing thousands of entries.
__device__ __forceinline__ void list_copies(Span *copies, u32 chunk_at, u32 chunks, usize start, u32 len) {
    __shared__ u32 first_chunk[BUCKETS + 1];
    __shared__ usize bucket_start[BUCKETS];
    __shared__ u32 bucket_len[BUCKETS];
    const u32 b = threadIdx.x;
    first_chunk[b] = chunk_at;
    bucket_start[b] = start;
    bucket_len[b] = len;
    if (b == BUCKETS - 1) first_chunk[BUCKETS] = chunk_at + chunks;
    __syncthreads();
    const u32 total = first_chunk[BUCKETS];
    for (u32 i = b; i < total; i += BUCKETS) {
        // The bucket whose chunks hold i: the last whose first chunk is at or before it
        // (buckets without chunks share their first with the next one).
        u32 lo = 0, hi = BUCKETS - 1;
        while (lo < hi) {
            const u32 mid = (lo + hi + 1) / 2;
            if (first_chunk[mid] <= i) lo = mid;
            else hi = mid - 1;
        }
        const usize from = (usize)(i - first_chunk[lo]) * COPY_CHUNK;
        const u32 left = u32(bucket_len[lo] - from);
        copies[i] = Span{bucket_start[lo] + from, left < COPY_CHUNK ? left : COPY_CHUNK, 0, 0, WHOLE, 0};
    }
}

extern "C" __global__ void __launch_bounds__(BUCKETS)
qs_children(const Segment *segs, const K *splitters, const u32 *starts, Segment *next, Span *small, Span *large,
            Span *copies, LevelCounts *level, LevelCounts *report, u32 in_alternate, const LevelCounts *first_level,
            u32 checked_order) {
    gp::wait_for_prior_grids();
    typedef gp::BlockScan<u32, BUCKETS> Scan;
    __shared__ typename Scan::Storage scan;
    __shared__ u32 base[5];  // where this block's next segments, tiles, small and large segments, copies go
    const Segment seg = segs[blockIdx.x];
    const u32 b = threadIdx.x;
    const u32 *region = starts + (usize)BUCKETS * seg.tile_first;
    const u32 c0 = region[b * seg.tiles], c1 = region[(b + 1) * seg.tiles];
    usize len = u32(c1 - c0);
    usize start = seg.start + u32(c0 - region[0]);
    // An input found in order was not scattered: nothing is left of it, or (reversed)
    // the whole of it comes home as one finished bucket.
    const u32 found = checked_order ? first_level_order(first_level) : gp::INPUT_UNSORTED;
    if (found != gp::INPUT_UNSORTED) {
        len = found == gp::INPUT_REVERSED && b == 0 ? seg.len : 0;
        start = seg.start;
    }
    K lo = 0, hi = 0;
    if (len && found == gp::INPUT_UNSORTED) bucket_range(seg, splitters + (usize)blockIdx.x * BUCKETS, b, lo, hi);
    const bool finished = found != gp::INPUT_UNSORTED ? len > 0 : len == 1 || (len > 1 && lo == hi);
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
    list_copies(copies + base[4], chunk_at, chunks, start, u32(len));
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
    // Chunk after chunk, grid-strided: the grid is at most 8 blocks an SM, and sized
    // before the count is known where the host does not wait for it.
    const u32 chunks = *count;
    for (u32 c = blockIdx.x; c < chunks; c += gridDim.x) {
        const Span span = spans[c];
        gp::copy_elements(keys + span.start, alt + span.start, span.len, threadIdx.x, 256);
        if constexpr (HAS_VALUES)
            gp::copy_elements(values + span.start, alt_values + span.start, span.len, threadIdx.x, 256);
    }
}
