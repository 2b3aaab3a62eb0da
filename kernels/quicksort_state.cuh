// What the quicksort's modules share (kernels/quicksort.cu, the partition;
// quicksort_splitters.cu; quicksort_small.cu and quicksort_large.cu, the block sorts): tuning constants,
// and the records they pass through device memory. See quicksort.cu for the algorithm
// and the -D options all four are compiled with; the key and value types come from
// common/sort_types.cuh.
#pragma once
#include "common/types.cuh"
#include "common/radix_key.cuh"
#include "common/block_radix_sort.cuh"
#include "common/sort_types.cuh"


constexpr int BLOCK = GP_BLOCK_THREADS;
constexpr int ITEMS = GP_ITEMS;
constexpr u32 TILE = (u32)BLOCK * ITEMS;
// Small segments are sorted by one block of one of two sizes: the smaller at higher
// occupancy, the larger for those that overflow it.
constexpr int SMALL_BLOCK = GP_SMALL_BLOCK_THREADS;
constexpr int SMALL_ITEMS = GP_SMALL_ITEMS;
constexpr u32 SMALL_TILE = (u32)SMALL_BLOCK * SMALL_ITEMS;
constexpr int LARGE_BLOCK = GP_LARGE_BLOCK_THREADS;
static_assert(LARGE_BLOCK > SMALL_BLOCK, "the large sort takes what overflows the small one");
constexpr u32 LARGE_TILE = (u32)LARGE_BLOCK * SMALL_ITEMS;
// The large sort also takes segments of up to two tiles: two blocks split one by
// rank and sort a side each (quicksort_large.cu).
constexpr u32 LARGE_SPAN = 2 * LARGE_TILE;
// A segment splits into about len / BUCKET_TARGET buckets (2 to 256), so its
// children mostly fit the smaller sort.
constexpr u32 BUCKET_TARGET = GP_BUCKET_TARGET;
constexpr int BUCKETS = 256;
// The count pass finds a key's bucket through a table of cells: a segment's key range
// cut into 2^CELL_BITS equal cells, each holding how many splitters lie below it and
// how many inside it (qs_splitters builds it). Most cells hold no splitter, so most
// keys take one look-up and no comparison.
constexpr int CELL_BITS = 11;
constexpr u32 CELLS = 1u << CELL_BITS;
constexpr u32 COPY_CHUNK = GP_COPY_CHUNK;
constexpr int KEY_BITS = sizeof(K) * 8;
constexpr K ALL_ONES = K(~K(0));
static_assert(LARGE_TILE <= 65536, "small sorts carry 16-bit positions");
static_assert(BLOCK >= BUCKETS, "a thread per bucket");

// How a segment splits. Its parent sets SAMPLE or VALUE; qs_splitters turns SAMPLE
// into PLAIN or EQUAL.
constexpr u32 KIND_SAMPLE = 0;  // splitters to be drawn from a sample
constexpr u32 KIND_PLAIN = 1;   // B - 1 distinct splitters: bucket b holds (s[b-1], s[b]]
constexpr u32 KIND_EQUAL = 2;   // m distinct splitters: bucket 2r holds (s[r-1], s[r]), 2r+1 keys equal to s[r]
constexpr u32 KIND_VALUE = 3;   // bucket b holds keys lo + [b, b + 1) * 2^shift

// A segment of a level, in the layout src/backend/cuda/quicksort.rs allocates.
struct Segment {
    usize start, len;
    u64 lo, hi;             // every key of the segment lies in [lo, hi] (ordered patterns)
    u32 tile_first, tiles;  // its tiles in the level's tile list
    u32 kind;
    u32 param;              // PLAIN: the buckets; EQUAL: the distinct splitters; VALUE: the shift
};
static_assert(sizeof(Segment) == 48, "the host's SEGMENT_BYTES");

// A stretch of keys for one block: a small segment to sort or a chunk to copy home.
struct Span {
    usize start;
    u32 len;
    u32 bits;      // small segments: the bits of hi - lo (the sort orders keys by k - lo)
    u64 lo;        // small segments: their lowest possible (ordered) key
    u32 half;      // large segments: WHOLE, or which half of a pair of spans
    u32 arrivals;  // a pair's first span: how many of its two blocks have sorted (in the spare buffer)
};
static_assert(sizeof(Span) == 32, "the host's SPAN_BYTES");
constexpr u32 WHOLE = 0, FIRST_HALF = 1, SECOND_HALF = 2;

// The large list's places a large segment of `len` keys takes: one span, or two
// halves when it is longer than one tile.
__device__ __forceinline__ u32 large_places(usize len) { return len > LARGE_TILE ? 2 : 1; }

// Lists a large segment at large[at] (large_places of them). Returns the places taken.
__device__ __forceinline__ u32 list_large(Span *large, u32 at, const Span &whole) {
    if (large_places(whole.len) == 1) {
        large[at] = whole;
        return 1;
    }
    const u32 half = whole.len / 2;
    large[at] = Span{whole.start, half, whole.bits, whole.lo, FIRST_HALF, 0};
    large[at + 1] = Span{whole.start + half, whole.len - half, whole.bits, whole.lo, SECOND_HALF, 0};
    return 2;
}

// What a level leaves for the host to read back (to size the next launches).
struct LevelCounts {
    u32 next_segments, next_tiles, small, large, copies;
    u32 blocks_done;  // qs_children's blocks, for the last one's report
    // The first level only (qs_count): some neighbours out of the wanted order; some
    // not strictly in the opposite order.
    u32 unsorted, not_reversed;
};
static_assert(sizeof(LevelCounts) == 32, "the host's LEVEL_BYTES");

__device__ __forceinline__ int bit_length(u64 x) { return x == 0 ? 0 : 64 - __clzll((long long)x); }

// first + how many of the sorted splitters[first .. first + n) lie below x.
__device__ __forceinline__ u32 splitters_below(const K *splitters, u32 first, u32 n, K x) {
    while (n) {
        const u32 half = n / 2;
        if (splitters[first + half] < x) {
            first += half + 1;
            n -= half + 1;
        } else {
            n = half;
        }
    }
    return first;
}

// The shift that takes a key's offset in [lo, hi] to its cell (below CELLS).
__device__ __forceinline__ u32 cell_shift(u64 lo, u64 hi) {
    const int bits = bit_length(u64(K(K(hi) - K(lo))));
    return bits > CELL_BITS ? u32(bits - CELL_BITS) : 0u;
}

