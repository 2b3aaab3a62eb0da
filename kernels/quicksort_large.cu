// The quicksort's large sorts (see kernels/quicksort.cu): one block sorts one large
// segment (up to LARGE_TILE keys) in shared memory and writes it home; a segment of up
// to two tiles is listed as two halves: each block sorts its half, and the second to
// finish merges both. A module of its own, beside the small sorts' (quicksort_small.cu)
// and the partition's, so they compile side by side on the first call (together they
// took 2 s of NVRTC, the longest of the quicksort's first call).
#include "common/grid_dependency.cuh"
#include "quicksort_block_sort.cuh"
#include "common/block_merge.cuh"
#include "common/last_to_arrive.cuh"

typedef SpanSort<LARGE_BLOCK> LargeSort;
static_assert(sizeof(typename LargeSort::Storage) <= GP_LARGE_SMEM_BYTES, "the host's large-sort shared memory");

// One half of a large segment of two tiles: sorted into `spare` (which may be src,
// never dst); the second of the pair's blocks to get there merges both halves into
// dst. For a bucket the sample gave too many keys (about one input of 2^20 keys in
// seven has one), a bucket of a split by value, and a short input of up to two tiles:
// far cheaper than one more level, which would cost every launch of a level.
__device__ __noinline__ void sort_half(const K *src, K *dst, const V *vsrc, V *vdst, K *spare, V *vspare, Span *spans,
                                       const Order &order, typename LargeSort::Storage &s) {
    LargeSort::run(src, spare, vsrc, vspare, spans[blockIdx.x], order, s);  // (ends with a barrier)
    Span &first = spans[blockIdx.x - (spans[blockIdx.x].half == SECOND_HALF)];
    if (!gp::last_to_arrive(&first.arrivals, 2u)) return;
    const Span a = first, b = (&first)[1];
    // (Each half fits the sort's keys, which stage the half searched.)
    gp::block_merge<LARGE_BLOCK, HAS_VALUES>(spare + a.start, vspare + a.start, a.len, spare + b.start, vspare + b.start,
                                             b.len, dst + a.start, vdst + a.start, s.keys,
                                             [o = order](K k) { return o.ordered(k); });
}

// Block blockIdx.x sorts span blockIdx.x of the list (a whole span or a half), if
// there is one.
extern "C" __global__ void __launch_bounds__(LARGE_BLOCK, GP_LARGE_MIN_BLOCKS)
qs_large(const K *src, K *dst, const V *vsrc, V *vdst, K *spare, V *vspare, Span *spans, const u32 *count,
         u32 key_order) {
    gp::wait_for_prior_grids();
    if (blockIdx.x >= *count) return;
    extern __shared__ __align__(16) unsigned char dynamic_smem[];
    auto &s = *reinterpret_cast<typename LargeSort::Storage *>(dynamic_smem);
    const Order order(key_order);
    if (spans[blockIdx.x].half != WHOLE) sort_half(src, dst, vsrc, vdst, spare, vspare, spans, order, s);
    else LargeSort::run(src, dst, vsrc, vdst, spans[blockIdx.x], order, s);
}
