// The quicksort's small sorts (see kernels/quicksort.cu): one block sorts one small
// segment (up to SMALL_TILE keys) in shared memory, on the bits in which its keys can
// differ, and writes it home. A module of its own, beside the large sorts'
// (quicksort_large.cu) and the partition's, so they compile side by side on the first
// call.
#include "common/grid_dependency.cuh"
#include "quicksort_block_sort.cuh"

typedef SpanSort<SMALL_BLOCK> SmallSort;
static_assert(sizeof(typename SmallSort::Storage) <= GP_SMALL_SMEM_BYTES, "the host's small-sort shared memory");

// Block blockIdx.x sorts span blockIdx.x of the list, if there is one. (The arguments
// are the large sort's: the small sort never needs the spare buffers.)
extern "C" __global__ void __launch_bounds__(SMALL_BLOCK, GP_SMALL_MIN_BLOCKS)
qs_small(const K *src, K *dst, const V *vsrc, V *vdst, K *spare, V *vspare, Span *spans, const u32 *count,
         u32 key_order) {
    gp::wait_for_prior_grids();
    if (blockIdx.x >= *count) return;
    extern __shared__ __align__(16) unsigned char dynamic_smem[];
    SmallSort::run(src, dst, vsrc, vdst, spans[blockIdx.x], Order(key_order),
                   *reinterpret_cast<typename SmallSort::Storage *>(dynamic_smem));
}
