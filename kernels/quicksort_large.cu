// The quicksort's large sorts (see kernels/quicksort.cu): one block sorts one large
// segment (up to LARGE_TILE keys) in shared memory and writes it home; a segment of up
// to two tiles is listed as two halves, and the pair's blocks split it by rank: each
// finds the same cut (a rank near the middle that leaves each side at most a tile),
// takes its side of it (the first block the smaller keys, the second the rest) to the
// side's place and sorts it there, neither waiting for the other. A module of its own, beside
// the small sorts' (quicksort_small.cu) and the partition's, so they compile side by
// side on the first call (together they took 2 s of NVRTC, the longest of the
// quicksort's first call).
#include "common/grid_dependency.cuh"
#include "quicksort_block_sort.cuh"
#include "common/block_radix_select.cuh"
#include "common/block_scan.cuh"
#include "common/last_to_arrive.cuh"
#include "common/tile_io.cuh"

typedef SpanSort<LARGE_BLOCK> LargeSort;
static_assert(sizeof(typename LargeSort::Storage) <= GP_LARGE_SMEM_BYTES, "the host's large-sort shared memory");

// A pair's split: the whole segment's keys in registers, a thread's columns strided
// by the block as in a tile; its candidate, the median of one key a thread.
constexpr int PAIR_ITEMS = LARGE_SPAN / LARGE_BLOCK;
typedef gp::BlockRadixSelect<K, LARGE_BLOCK, PAIR_ITEMS> PairSelect;
typedef gp::BlockRadixSelect<K, LARGE_BLOCK, 1> SampleSelect;
typedef gp::BlockScan<u32, LARGE_BLOCK> PairScan;
union PairStorage {
    typename PairSelect::Storage select;
    typename SampleSelect::Storage sample;
    struct {
        typename PairScan::Storage scan;
        u32 total;
    } counts;
};
static_assert(sizeof(PairStorage) <= sizeof(typename LargeSort::Storage), "the pair's split reuses the sort's memory");
static_assert(LARGE_SPAN < 65536, "a pair's counts fit 16 bits each");

// Elements of a segment of `len` held by the threads before thread t (thread-major
// order: thread by thread, each its columns in turn).
__device__ __forceinline__ u32 held_before(u32 t, u32 len) {
    const u32 whole = len / LARGE_BLOCK, rest = len % LARGE_BLOCK;
    return t * whole + (t < rest ? t : rest);
}

// Keys below `value` and equal to it in the threads before this one, packed as
// (below << 16) | equal; the block's totals so packed in s.counts.total.
__device__ __forceinline__ u32 count_before(const K (&keys)[PAIR_ITEMS], u32 len, K value, PairStorage &s) {
    u32 less = 0, equal = 0;
#pragma unroll
    for (int j = 0; j < PAIR_ITEMS; ++j)
        if (j * LARGE_BLOCK + threadIdx.x < len) {
            less += keys[j] < value;
            equal += keys[j] == value;
        }
    __syncthreads();  // the storage may hold a select's counts
    u32 before;
    PairScan::exclusive(less << 16 | equal, before, gp::SumOp<u32>(), s.counts.scan, gp::KeepTotal<u32>{&s.counts.total});
    return before;
}

// Where a pair's segment is split: the first `cut` keys in order go to the first
// block, the rest to the second, both at most a tile. The median of a sample of one
// key a thread nearly always gives such a cut, the keys equal to it counted to either
// side as needed; otherwise the exact median does.
struct PairCut {
    K value;
    u32 cut, below, before;  // before: count_before of `value`
};

__device__ __forceinline__ PairCut pair_cut(const K *src, usize start, u32 len, const K (&keys)[PAIR_ITEMS], const Span &mine,
                                            const Order &order, PairStorage &s) {
    K sample[1] = {K(order.ordered(src[start + (2 * threadIdx.x + 1) * len / (2 * LARGE_BLOCK)]) - K(mine.lo))};
    const u32 middle[1] = {LARGE_BLOCK / 2};
    K value[1];
    SampleSelect::select(sample, middle, value, s.sample);
    u32 before = count_before(keys, len, value[0], s);
    u32 below = s.counts.total >> 16, equal = s.counts.total & 0xffff;
    const u32 half = len / 2;
    u32 cut = half < below ? below : half > below + equal ? below + equal : half;
    if (cut <= LARGE_TILE && len - cut <= LARGE_TILE) return PairCut{value[0], cut, below, before};
    const u32 exact[1] = {half};
    __syncthreads();  // the counts are read
    PairSelect::select(keys, exact, value, s.select, int((len + LARGE_BLOCK - 1) / LARGE_BLOCK));
    before = count_before(keys, len, value[0], s);
    return PairCut{value[0], half, s.counts.total >> 16, before};
}

// This block's side of its pair's segment, in any order, into staging at the side's
// place; returns the side's span. Keys equal to the split value go to the first side
// in thread-major order until it holds `cut`; both blocks count them alike, so each
// key lands on exactly one side.
__device__ __noinline__ Span gather_side(const K *src, K *staging, const V *vsrc, V *vstaging, const Span *spans,
                                         const Order &order, PairStorage &s) {
    const Span mine = spans[blockIdx.x];
    const bool second = mine.half == SECOND_HALF;
    const Span first = spans[blockIdx.x - second];
    const usize start = first.start;
    const u32 len = first.len + spans[blockIdx.x - second + 1].len;
    K keys[PAIR_ITEMS];
#pragma unroll
    for (int j = 0; j < PAIR_ITEMS; ++j) {
        const u32 e = j * LARGE_BLOCK + threadIdx.x;
        keys[j] = e < len ? K(order.ordered(src[start + e]) - K(mine.lo)) : K(~K(0));
    }
    const PairCut c = pair_cut(src, start, len, keys, mine, order, s);
    const u32 ties_first = c.cut - c.below;
    u32 less_before = c.before >> 16, equal_before = c.before & 0xffff;
    u32 more_before = held_before(threadIdx.x, len) - less_before - equal_before;
    const usize side = second ? start + c.cut : start;
#pragma unroll
    for (int j = 0; j < PAIR_ITEMS; ++j) {
        const u32 e = j * LARGE_BLOCK + threadIdx.x;
        if (e >= len) break;
        // Where the key goes within its side: the side's keys before it.
        bool mine_side;
        u32 at;
        if (keys[j] < c.value) {
            mine_side = !second;
            at = less_before++ + min(equal_before, ties_first);
        } else if (keys[j] == c.value) {
            mine_side = second == (equal_before >= ties_first);
            at = second ? more_before + equal_before - ties_first : less_before + equal_before;
            ++equal_before;
        } else {
            mine_side = second;
            at = more_before++ + (equal_before > ties_first ? equal_before - ties_first : 0);
        }
        if (!mine_side) continue;
        staging[side + at] = src[start + e];  // the key as it was (NaN payloads)
        if constexpr (HAS_VALUES) vstaging[side + at] = vsrc[start + e];
    }
    return Span{side, second ? len - c.cut : c.cut, mine.bits, mine.lo, mine.half, 0};
}

// Where the source is also the destination, the pair sorted in the spare buffer: the
// second block to finish brings both sides home, once neither reads the source. (Its
// L1 holds no line of the other side's place: this block never read it, and the
// fence of last_to_arrive invalidates L1 on sm_70 and later.)
__device__ __noinline__ void pair_home(const K *spare, K *dst, const V *vspare, V *vdst, Span *spans) {
    Span &first = spans[blockIdx.x - (spans[blockIdx.x].half == SECOND_HALF)];
    if (!gp::last_to_arrive(&first.arrivals, 2u)) return;
    const usize start = first.start, len = usize(first.len) + (&first)[1].len;
    gp::copy_elements(dst + start, spare + start, len, threadIdx.x, LARGE_BLOCK);
    if constexpr (HAS_VALUES) gp::copy_elements(vdst + start, vspare + start, len, threadIdx.x, LARGE_BLOCK);
}

// The block sort of a whole span or of a pair's side: one copy of its code in the
// module. Inlined at both places, every quicksort_large module took NVRTC half as long
// again (the cold first call's longest compile).
__device__ __noinline__ void sort_span(const K *src, K *dst, const V *vsrc, V *vdst, const Span span, const Order &order,
                                       unsigned char *smem) {
    LargeSort::run(src, dst, vsrc, vdst, span, order, *reinterpret_cast<typename LargeSort::Storage *>(smem));
}

// A pair's half: staged where the other block does not read (dst, unless it is the
// source; then the spare buffer, never dst) and sorted there in place. Not inlined, so
// that its registers do not weigh on the whole spans' sort.
__device__ __noinline__ void sort_side(const K *src, K *dst, const V *vsrc, V *vdst, K *spare, V *vspare, Span *spans,
                                       const Order &order, unsigned char *smem) {
    K *staging = src == dst ? spare : dst;
    V *vstaging = src == dst ? vspare : vdst;
    const Span side = gather_side(src, staging, vsrc, vstaging, spans, order, *reinterpret_cast<PairStorage *>(smem));
    __syncthreads();
    sort_span(staging, staging, vstaging, vstaging, side, order, smem);
    if (staging != dst) pair_home(staging, dst, vstaging, vdst, spans);
}

// Block blockIdx.x sorts span blockIdx.x of the list (a whole span or a pair's half),
// if there is one.
extern "C" __global__ void __launch_bounds__(LARGE_BLOCK, GP_LARGE_MIN_BLOCKS)
qs_large(const K *src, K *dst, const V *vsrc, V *vdst, K *spare, V *vspare, Span *spans, const u32 *count,
         u32 key_order) {
    gp::wait_for_prior_grids();
    if (blockIdx.x >= *count) return;
    extern __shared__ __align__(16) unsigned char dynamic_smem[];
    const Order order(key_order);
    const Span span = spans[blockIdx.x];
    if (span.half != WHOLE) return sort_side(src, dst, vsrc, vdst, spare, vspare, spans, order, dynamic_smem);
    sort_span(src, dst, vsrc, vdst, span, order, dynamic_smem);
}
