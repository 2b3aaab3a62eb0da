// The population of a bit-packed Life grid: a popcount of every word (bits past the
// width are always 0), summed per warp with shuffles and added to *out with one
// atomic per warp. *out is zeroed before the launch; a grid-stride loop over a
// resident grid keeps the atomics few.
#include "common/grid_dependency.cuh"
#include "common/types.cuh"

extern "C" __global__ void life_population(const u64 *__restrict__ words, usize n, u64 *out) {
    gp::wait_for_prior_grids();
    u64 count = 0;
    const usize stride = (usize)gridDim.x * blockDim.x;
    for (usize i = (usize)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) count += __popcll(words[i]);
#pragma unroll
    for (int d = 16; d >= 1; d /= 2) count += __shfl_down_sync(0xffffffffu, count, d);
    if ((threadIdx.x & 31) == 0 && count) atomicAdd(out, count);
}
