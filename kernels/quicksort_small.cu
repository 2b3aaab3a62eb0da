// The quicksort's block sorts (see kernels/quicksort.cu): one block sorts one small
// segment (up to SMALL_TILE keys) or large one (up to LARGE_TILE) in shared memory, on
// the bits in which its keys can differ, and writes it home. A large segment of up to
// two tiles is listed as two halves: each block sorts its half, and the second to
// finish merges both. A module of its own, so its sort instantiations compile beside
// the partition's on the first call.
#include "common/grid_dependency.cuh"
#include "quicksort_state.cuh"
#include "common/block_merge.cuh"
#include "common/last_to_arrive.cuh"

template <int SORT_BLOCK>
struct SpanSort {
    typedef gp::BlockRadixSort<K, SORT_BLOCK, SMALL_ITEMS, 8, u16, GP_SORT_RANK_GROUP> Sort;
    static constexpr u32 TILE = (u32)SORT_BLOCK * SMALL_ITEMS;
    union Storage {
        typename Sort::Storage sort;
        K keys[TILE];
        V values[HAS_VALUES ? TILE : 1];
    };

    // Puts dst[i] = src[from[i]] for the span's elements, through shared memory, so
    // dst may be src.
    template <class T>
    __device__ __forceinline__ static void permute(const T *src, T *dst, const u16 (&from)[SMALL_ITEMS], u32 len,
                                                   T *staging) {
#pragma unroll
        for (int k = 0; k < SMALL_ITEMS; ++k) {
            const u32 i = k * SORT_BLOCK + threadIdx.x;
            if (i < len) staging[i] = src[i];
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < SMALL_ITEMS; ++k) {
            const u32 i = k * SORT_BLOCK + threadIdx.x;
            if (i < len) dst[i] = staging[from[k]];
        }
        __syncthreads();
    }

    // Sorts the span of src (ordered by `order`) into the same span of dst.
    __device__ __forceinline__ static void run(const K *src, K *dst, const V *vsrc, V *vdst, const Span span,
                                               const Order &order, Storage &s) {
        K keys[SMALL_ITEMS];
#pragma unroll
        for (int j = 0; j < SMALL_ITEMS; ++j) {
            const u32 e = Sort::element(j);
            keys[j] = e < span.len ? K(order.ordered(src[span.start + e]) - K(span.lo)) : K(0);
        }
        Sort::sort(keys, span.len, s.sort, int(span.bits));
        // Keys move unchanged (NaN payloads survive): each sorted place takes the key
        // from the position the sort carried there.
        u16 from[SMALL_ITEMS];
#pragma unroll
        for (int k = 0; k < SMALL_ITEMS; ++k) {
            const u32 i = k * SORT_BLOCK + threadIdx.x;
            from[k] = i < span.len ? s.sort.from[i] : u16(0);
        }
        __syncthreads();
        permute(src + span.start, dst + span.start, from, span.len, s.keys);
        if constexpr (HAS_VALUES) permute(vsrc + span.start, vdst + span.start, from, span.len, s.values);
    }
};
static_assert(sizeof(typename SpanSort<LARGE_BLOCK>::Storage) <= GP_SMALL_SMEM_BYTES, "the host's small-sort shared memory");

// One half of a large segment of two tiles: sorted into `spare` (which may be src,
// never dst); the second of the pair's blocks to get there merges both halves into
// dst. For a bucket the sample gave too many keys (about one input of 2^20 keys in
// seven has one), a bucket of a split by value, and a short input of up to two tiles:
// far cheaper than one more level, which would cost every launch of a level.
__device__ __noinline__ void sort_half(const K *src, K *dst, const V *vsrc, V *vdst, K *spare, V *vspare, Span *spans,
                                       const Order &order, typename SpanSort<LARGE_BLOCK>::Storage &s) {
    SpanSort<LARGE_BLOCK>::run(src, spare, vsrc, vspare, spans[blockIdx.x], order, s);  // (ends with a barrier)
    Span &first = spans[blockIdx.x - (spans[blockIdx.x].half == SECOND_HALF)];
    if (!gp::last_to_arrive(&first.arrivals, 2u)) return;
    const Span a = first, b = (&first)[1];
    // (Each half fits the sort's keys, which stage the half searched.)
    gp::block_merge<LARGE_BLOCK, HAS_VALUES>(spare + a.start, vspare + a.start, a.len, spare + b.start, vspare + b.start,
                                             b.len, dst + a.start, vdst + a.start, s.keys,
                                             [o = order](K k) { return o.ordered(k); });
}

// Block blockIdx.x sorts span blockIdx.x of the list, if there is one. Only the large
// sort's list holds halves.
template <int SORT_BLOCK>
__device__ __forceinline__ void sort_listed_span(const K *src, K *dst, const V *vsrc, V *vdst, K *spare, V *vspare,
                                                 Span *spans, const u32 *count, u32 key_order) {
    if (blockIdx.x >= *count) return;
    extern __shared__ __align__(16) unsigned char dynamic_smem[];
    typedef SpanSort<SORT_BLOCK> S;
    auto &s = *reinterpret_cast<typename S::Storage *>(dynamic_smem);
    const Order order(key_order);
    if constexpr (SORT_BLOCK == LARGE_BLOCK) {
        if (spans[blockIdx.x].half != WHOLE) {
            sort_half(src, dst, vsrc, vdst, spare, vspare, spans, order, s);
            return;
        }
    }
    S::run(src, dst, vsrc, vdst, spans[blockIdx.x], order, s);
}

// Both take the same arguments (the small sort never needs the spare buffers).
extern "C" __global__ void __launch_bounds__(SMALL_BLOCK, GP_SMALL_MIN_BLOCKS)
qs_small(const K *src, K *dst, const V *vsrc, V *vdst, K *spare, V *vspare, Span *spans, const u32 *count,
         u32 key_order) {
    gp::wait_for_prior_grids();
    sort_listed_span<SMALL_BLOCK>(src, dst, vsrc, vdst, spare, vspare, spans, count, key_order);
}

extern "C" __global__ void __launch_bounds__(LARGE_BLOCK, GP_LARGE_MIN_BLOCKS)
qs_large(const K *src, K *dst, const V *vsrc, V *vdst, K *spare, V *vspare, Span *spans, const u32 *count,
         u32 key_order) {
    gp::wait_for_prior_grids();
    sort_listed_span<LARGE_BLOCK>(src, dst, vsrc, vdst, spare, vspare, spans, count, key_order);
}
