// The quicksort's one-block sort of a listed span (kernels/quicksort_small.cu and
// quicksort_large.cu, each its own module so the two compile side by side on a first
// call): the span's keys sorted in shared memory on the bits in which they can differ
// (common/block_radix_sort.cuh), then keys and values moved to their places.
#pragma once
#include "quicksort_state.cuh"

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
